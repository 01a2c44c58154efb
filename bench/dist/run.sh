#!/usr/bin/env bash
# Multi-GPU randomized SVD with the tcnla command, in one run on a GPU
# machine: build; a check that 2 GPUs give 1 GPU's residual and singular
# values (generated matrix, and a .npy read by rows with U written by rows);
# strong scaling (65536 x 65536, k = 256, p = 10, q = 2, on 1, 2 and, where
# present, 4 GPUs: --gpus G); weak scaling (65536 columns, 30 GiB and 60 GiB
# of A per GPU: 60 GiB on 2 GPUs is 120 GiB, more than one GPU holds); the
# MPI launch (mpirun -np 2) when mpirun exists. Every run is `--reps 3`
# (median; the time of the slowest rank, without the generation).
# Writes OUTDIR/dist_scaling.csv (columns gpu,gpus,m,n,k,p,q,seconds,rel_err,
# opt_err,step_random,step_proj,step_orth,step_power,step_bt,step_svd,
# scaling,launch,gen_seconds), OUTDIR/dist_scaling.png (bench/dist/plot.py,
# when matplotlib is there), and the logs.
#   . tests/gpu/env.sh && bash bench/dist/run.sh OUTDIR [steps: check,strong,weak,mpi]
set -u
OUT="${1:?usage: bench/dist/run.sh OUTDIR [steps]}"
STEPS=",${2:-check,strong,weak,mpi},"
mkdir -p "$OUT"
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
[ -f tests/gpu/env.sh ] && . tests/gpu/env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "== $NG GPU(s): $GPU"
echo "== build"
make -j16 CUDA=1 build/tcnla >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
grep -i "warning" "$OUT/build.log" | head
T=${TCNLA_BIN:-./build/tcnla}
CSV="$OUT/dist_scaling.csv"
echo "gpu,gpus,m,n,k,p,q,seconds,rel_err,opt_err,step_random,step_proj,step_orth,step_power,step_bt,step_svd,scaling,launch,gen_seconds" >"$CSV"
rc=0

# one CSV row from the JSON line of `tcnla rsvd --json` ($1: scaling, $2: the JSON file)
row() {
  python3 - "$1" "$GPU" "$2" >>"$CSV" <<'PY'
import json, sys
scaling, gpu, path = sys.argv[1:4]
j = None
for line in open(path):
    line = line.strip()
    if line.startswith("{"):
        j = json.loads(line)
if j is None:
    sys.exit(1)
s = j.get("steps") or {}
f = lambda v: "" if v is None else ("%.6g" % v if isinstance(v, float) else str(v))
print(",".join([gpu.replace(",", " "), str(j["gpus"] or j["ranks"]), str(j["m"]), str(j["n"]), str(j["rank"]),
                str(j["oversampling"]), str(j["power_iters"]), f(j["seconds"]),
                f(j["rel_residual"]), f(j["optimal"])] +
               [f(s.get(k)) for k in ("random", "proj", "orth", "power", "bt", "svd")] +
               [scaling, j["launch"], f(j.get("gen_seconds"))]))
PY
}

# rsvd on G GPUs: run LABEL G M N [more options]; the JSON in $OUT/LABEL.json
run() {
  local label=$1 g=$2 m=$3 n=$4; shift 4
  echo "-- $label: --gpus $g --m $m --n $n $*"
  timeout 240 $T rsvd --gpus "$g" --m "$m" --n "$n" --rank 256 --oversampling 10 \
      --power-iters 2 --reps 3 --json "$@" >"$OUT/$label.json" 2>"$OUT/$label.err"
  local r=$?
  cat "$OUT/$label.json"; tail -3 "$OUT/$label.err"
  [ $r -eq 0 ] || { echo "   exit $r"; rc=1; return 1; }
}

if has check; then
  echo "== check: 2 GPUs against 1 (residual, singular values)"
  if [ "$NG" -ge 2 ]; then
    run check_g1 1 16384 8192 && run check_g2 2 16384 8192
    python3 - "$OUT/check_g1.json" "$OUT/check_g2.json" <<'PY' || rc=1
import json, sys
a, b = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
d = abs(a["rel_residual"] - b["rel_residual"]) / a["rel_residual"]
print("residual 1 GPU %.6e, 2 GPUs %.6e (optimal %.6e), relative difference %.2e"
      % (a["rel_residual"], b["rel_residual"], a["optimal"], d))
sys.exit(0 if d <= 1e-3 and b["rel_residual"] <= 1.1 * b["optimal"] else 1)
PY
    # a .npy read by rows, U written by rows: against the single-GPU command
    $T gen --kind exp --m 20000 --n 3000 --rank 64 --output "$OUT/in.npy" >/dev/null &&
    $T rsvd --gpus 2 --input "$OUT/in.npy" --rank 64 --output "$OUT/d2" --json >"$OUT/io_g2.json" 2>&1 &&
    $T rsvd --input "$OUT/in.npy" --rank 64 --output "$OUT/d1" --json --no-baseline >"$OUT/io_g1.json" 2>&1 &&
    python3 - "$OUT" <<'PY' || rc=1
import sys, numpy as np
o = sys.argv[1]
A = np.load(o + "/in.npy").astype(np.float64)
out = {}
for t in ("d1", "d2"):
    U, S, VT = (np.load("%s/%s_%s.npy" % (o, t, x)) for x in ("U", "S", "VT"))
    out[t] = (np.linalg.norm(A - (U * S) @ VT) / np.linalg.norm(A), S)
ds = np.max(np.abs(out["d2"][1] - out["d1"][1]) / out["d1"][1])
print(".npy by rows: residual of the files 1 GPU %.6e, 2 GPUs %.6e; singular values differ by %.2e"
      % (out["d1"][0], out["d2"][0], ds))
sys.exit(0 if abs(out["d2"][0] - out["d1"][0]) <= 1e-3 * out["d1"][0] and ds <= 1e-4 else 1)
PY
    rm -f "$OUT"/in.npy "$OUT"/d[12]_*.npy
  else
    echo "one GPU: no check"
  fi
fi

if has strong; then
  echo "== strong scaling: 65536 x 65536"
  for g in 1 2 4; do
    [ "$g" -le "$NG" ] || continue
    run strong_g$g "$g" 65536 65536 && row strong "$OUT/strong_g$g.json"
  done
fi

if has weak; then
  echo "== weak scaling: 65536 columns, 30 GiB and 60 GiB of A per GPU"
  for rows in 122880 245760; do
    for g in 1 2 4; do
      [ "$g" -le "$NG" ] || continue
      run weak_${rows}_g$g "$g" $((rows * g)) 65536 && row weak "$OUT/weak_${rows}_g$g.json"
    done
  done
fi

if has mpi; then
  echo "== MPI launch"
  if command -v mpirun >/dev/null 2>&1 && [ "$NG" -ge 2 ]; then
    EXTRA=""
    if mpirun --version 2>&1 | grep -qi "open mpi"; then
      # Open MPI: root allowed, and env.sh's settings passed on to the ranks
      EXTRA="--allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
      [ -n "${TCNLA_NCCL_LIBRARY:-}" ] && EXTRA="$EXTRA -x TCNLA_NCCL_LIBRARY"
    fi
    timeout 240 mpirun $EXTRA -np 2 $T rsvd --m 65536 --n 65536 --rank 256 --oversampling 10 \
        --power-iters 2 --reps 3 --json >"$OUT/mpi_g2.json" 2>"$OUT/mpi_g2.err"
    r=$?
    cat "$OUT/mpi_g2.json"; tail -5 "$OUT/mpi_g2.err"
    if [ $r -eq 0 ]; then row strong "$OUT/mpi_g2.json"; else echo "mpirun: exit $r"; rc=1; fi
  elif [ "$NG" -lt 2 ]; then
    echo "one GPU: no MPI run"
  else
    echo "no mpirun on this machine: the MPI launch is not tested here"
  fi
fi

echo "== $CSV"
cat "$CSV"
python3 bench/dist/plot.py "$CSV" "$OUT/dist_scaling.png" || echo "no plot (matplotlib?)"
exit $rc
