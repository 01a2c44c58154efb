#!/usr/bin/env bash
# One run on a Hopper GPU machine for scheme II's fused products
# (src/backend/cuda/kernels/ozaki2_sm90.cu): build, the fused kernel's ptxas
# report and SASS summary, the GPU tests that compare it with the cuBLASLt
# path and with the CPU reference, then build/bench_oz2_fused at 4096, 8192
# and 16384 with 15 moduli. Everything goes under OUT (default
# bench/results/fused_run); the CSV is also copied to
# bench/results/ozaki_fused.csv. Each step runs whatever the previous ones
# gave; the exit status is the first failure's (build, tests, bench).
#   bash bench/ozaki/fused_run.sh                 (OUT from the environment)
#   bash bench/ozaki/fused_run.sh OUTDIR [bench args...]
set -u
OUT="${OUT:-${1:-bench/results/fused_run}}"
[ $# -gt 0 ] && [ "$1" = "$OUT" ] && shift
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
set -x
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit \
  --format=csv || true

# ---------------------------------------------------------------- build
make -j16 CUDA=1 lib build/run_gpu_tests build/bench_oz2_fused >"$OUT/build.log" 2>&1
brc=$?
grep -i -E "warning|error" "$OUT/build.log" | head -20
tail -3 "$OUT/build.log"

# ------------------------------------------- ptxas report and SASS summary
nvcc -std=c++17 -O3 -lineinfo -gencode arch=compute_90a,code=sm_90a -Xcompiler -fPIC \
  -DTCNLA_BUILDING -Iinclude -Isrc -Xptxas -v -c src/backend/cuda/kernels/ozaki2_sm90.cu \
  -o /tmp/oz2_fused_ptxas.o >"$OUT/ptxas.txt" 2>&1
grep -E "registers|spill|stack" "$OUT/ptxas.txt"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass -arch sm_90a build/obj/src/backend/cuda/kernels/ozaki2_sm90.o >/tmp/oz2_fused.sass 2>&1
  {
    echo "SASS of the two fused kernels (sm_90a), instruction counts:"
    grep -o -E "(HGMMA|IGMMA|IMMA|UTMALDG|UTMA[A-Z]*|SYNCS[A-Z.]*|WARPGROUP[A-Z.]*|LDL|STL)[A-Z0-9_.]*" \
      /tmp/oz2_fused.sass | sort | uniq -c
    grep -m 2 -E "GMMA" /tmp/oz2_fused.sass
  } | tee "$OUT/sass_summary.txt"
fi

# ---------------------------------------------------------------- tests
trc=1
if [ $brc -eq 0 ]; then
  timeout "${TN_TEST_TIMEOUT:-900}" ./build/run_gpu_tests gpu_oz2_fused gpu_ozaki2 >"$OUT/test.log" 2>&1
  trc=$?
  grep -E "^FAIL|^    |passed|CHECK" "$OUT/test.log" | head -60
fi
echo "tests rc=$trc"

# ---------------------------------------------------------------- bench
xrc=1
if [ $brc -eq 0 ]; then
  rm -f "$OUT/ozaki_fused.csv"
  # the SM clock, power and temperature every 0.5 s while it runs
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 \
    >"$OUT/smi.csv" 2>&1 &
  smi=$!
  timeout "${TN_BENCH_TIMEOUT:-1200}" ./build/bench_oz2_fused --sizes "${TN_SIZES:-4096,8192,16384}" \
    --moduli 15 --reps "${TN_REPS:-5}" --out "$OUT/ozaki_fused.csv" "$@" 2>&1 | tee "$OUT/bench.log"
  xrc=${PIPESTATUS[0]}
  kill "$smi" 2>/dev/null
  [ -s "$OUT/ozaki_fused.csv" ] && cp "$OUT/ozaki_fused.csv" bench/results/ozaki_fused.csv
fi
echo "bench rc=$xrc"
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv || true
set +x
echo "fused_run: build $brc, tests $trc, bench $xrc"
for rc in $brc $trc $xrc; do [ "$rc" -ne 0 ] && exit "$rc"; done
exit 0
