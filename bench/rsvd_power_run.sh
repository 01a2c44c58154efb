#!/usr/bin/env bash
# The randomized SVD's power iterations in SHGEMM_FP16 (the defaults' choice
# where FP16 does not suffice) on a GPU machine: build, the GPU tests of the
# randomized SVD (build/run_gpu_tests gpu_rsvd: the defaults, deferral, the
# small SVD paths and gpu_rsvd_power_shgemm_deep_decay) and of SHGEMM /
# TCEC products with op(A) = A^T (gpu_tails_transposes, gpu_sm90_tails,
# gpu_every_method), `tcnla rsvd --json` (the power iterations as
# reported), then bench_rsvd at 16384^2, rank 256, q = 2 on five spectra:
# cuSOLVER gesvdr, the defaults, and the power iterations in TCEC_FP16,
# SHGEMM_FP16 and FP16. Logs and CSV under OUTDIR
# (OUTDIR/rsvd_power_shgemm.csv). Exit status: 1 when the build failed,
# else that of the GPU tests (0 without the step).
#   bench/rsvd_power_run.sh OUTDIR [steps, default build,test,cli,bench]
set -u
OUT="${1:?usage: rsvd_power_run.sh OUTDIR [steps]}"
STEPS=",${2:-build,test,cli,bench},"
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
if has build; then
  echo "== build"
  make -j16 CUDA=1 all build/run_gpu_tests build/bench_rsvd >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
  grep -i "warning" "$OUT/build.log" | head
fi
trc=0
if has test; then
  echo "== GPU tests"
  timeout 400 ./build/run_gpu_tests gpu_rsvd gpu_deferred gpu_tails_transposes gpu_sm90_tails \
    gpu_every_method >"$OUT/tests.log" 2>&1
  trc=$?
  grep -E "^FAIL|^ok|^    |passed" "$OUT/tests.log" | head -80
  echo "tests rc=$trc"
fi
if has cli; then
  echo "== tcnla rsvd (the power iterations as reported)"
  for sp in exp poly; do
    timeout 120 ./build/tcnla rsvd --m 8192 --n 8192 --rank 128 --spectrum $sp --json \
      2>&1 | tee -a "$OUT/tcnla_rsvd.json"
  done
fi
if has bench; then
  echo "== bench_rsvd"
  rm -f "$OUT/rsvd_power_shgemm.csv"
  for S in exp deep_decay low_rank gap_noise poly_slow; do
    timeout 300 ./build/bench_rsvd --spectrum "$S" --reps 3 --csv "$OUT/rsvd_power_shgemm.csv" \
      --variants cusolver_gesvdr,shgemm_fp16+tcec_fp16_chol1,shgemm_fp16+tcec_fp16_chol1_tcecpower,shgemm_fp16+tcec_fp16_chol1_shpower,shgemm_fp16+tcec_fp16_chol1_fp16power \
      2>&1 | tee -a "$OUT/bench_rsvd.log"
  done
fi
ls -la "$OUT"
exit $trc
