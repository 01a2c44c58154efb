#!/usr/bin/env bash
# One run on an H100 / H200 for scheme II's pipeline (ozaki2_cuda.c: the
# residues and reconstruction of column blocks on a second stream beside the
# INT8 products; the tuning's oz2_pipeline): build, the GPU tests that
# require the same bits with the pipeline on and off (gpu_oz2_pipe_same_bits)
# and the other scheme II tests, build/bench_oz2_fused's whole DGEMMs at 8192
# and 16384 (dgemm_oz2_fused: pipeline on, dgemm_oz2_nopipe: off,
# cublas_dgemm; x_dgemm = cuBLAS DGEMM's time / the row's) with the card's
# power sampled, then build/bench_ozaki's DGEMM rows. Files under OUT
# (default bench/results/pipe_run): run.log, build.log, fused.csv, smi.csv,
# ozaki.csv. Each step has a time cap so that the whole stays within about
# 5 minutes; the exit status is the first failure's.
#   bash bench/ozaki/pipe_run.sh
set -u
OUT="${OUT:-bench/results/pipe_run}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
START=$(date +%s)
left() { echo $((290 - ($(date +%s) - START))); }
cap() { local l; l=$(left); [ "$l" -gt "$1" ] && echo "$1" || echo "$l"; }
rc=0
note() { [ "$rc" -eq 0 ] && rc=$1; }
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit \
  --format=csv || true

# ---------------------------------------------------------------- build
timeout "$(cap 240)" make -j16 CUDA=1 lib build/run_gpu_tests build/bench_oz2_fused \
  build/bench_ozaki >"$OUT/build.log" 2>&1 || note 1
grep -i -E "warning|error" "$OUT/build.log" | head -20
tail -2 "$OUT/build.log"
echo "build done at $(( $(date +%s) - START )) s"

# ---------------------------------------------------------------- tests
t=$(cap 90)
if [ "$t" -gt 10 ]; then
  timeout "$t" ./build/run_gpu_tests gpu_oz2 gpu_ozaki2 || note 2
else echo "tests skipped: no time left"; fi
echo "tests done at $(( $(date +%s) - START )) s"

# ------------------------------------------- pipeline on / off, x cuBLAS
t=$(cap 75)
if [ "$t" -gt 15 ]; then
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv -lms 500 \
    >"$OUT/smi.csv" 2>/dev/null &
  SMI=$!
  timeout "$t" ./build/bench_oz2_fused --sizes 8192,16384 --reps 3 --no-products \
    --out "$OUT/fused.csv" || note 3
  kill "$SMI" 2>/dev/null
  wait "$SMI" 2>/dev/null
else echo "bench_oz2_fused skipped: no time left"; fi
echo "bench_oz2_fused done at $(( $(date +%s) - START )) s"

# ---------------------------------------------------- bench_ozaki's rows
t=$(cap 100)
if [ "$t" -gt 15 ]; then
  timeout "$t" ./build/bench_ozaki --sizes 8192,16384 --phis 0.5,2 --reps 3 \
    --methods cublas_dgemm,ozaki_int8_crt/DP --out "$OUT/ozaki.csv" || note 4
else echo "bench_ozaki skipped: no time left"; fi
echo "all done at $(( $(date +%s) - START )) s, status $rc"
[ -f "$OUT/fused.csv" ] && cat "$OUT/fused.csv"
exit "$rc"
