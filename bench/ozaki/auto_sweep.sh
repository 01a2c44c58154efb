#!/usr/bin/env bash
# The measurements behind the Ozaki AUTO mode's cost model (src/gemm/ozaki_auto.c),
# one command on the GPU machine (about 5 minutes on one H100):
#   bash bench/ozaki/auto_sweep.sh [OUTDIR]        (OUTDIR defaults to $OUT)
# builds the library, bench_ozaki and the GPU tests, runs the AUTO GPU tests,
# then bench_ozaki over square, skinny (one small dimension) and mixed shapes:
# cuBLAS DGEMM, OZAKI_INT8 scheme 2 DP and AUTO (phi = 0.5; the squares from
# 4096 also at phi = 2), and the same for SGEMM on fewer shapes. Writes
#   OUTDIR/auto_sweep.csv   bench_ozaki rows (gpu,method,mode,phi,m,n,k,slices,seconds,...)
#   OUTDIR/fit.txt          bench/ozaki/fit_auto.py's table fitted to the CSV, and the
#                           AUTO rows against cuBLAS (the "never slower" check)
#   OUTDIR/*.log            build, tests and benchmark output
# The table in fit.txt replaces ARCHS[] in src/gemm/ozaki_auto.c (its
# comment says where the numbers come from). NO_BUILD=1: use build/bench_ozaki and
# build/run_gpu_tests as they are.
set -u
OUTDIR="${1:-${OUT:?usage: auto_sweep.sh OUTDIR (or set OUT)}}"
mkdir -p "$OUTDIR"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$OUTDIR/gpu.txt" 2>&1
if [ "${NO_BUILD:-0}" = 1 ]; then # (build/bench_ozaki and build/run_gpu_tests as they are)
  echo "== no build"
else
  echo "== build"
  make -j16 CUDA=1 lib build/bench_ozaki build/run_gpu_tests >"$OUTDIR/build.log" 2>&1 \
    || { tail -30 "$OUTDIR/build.log"; exit 1; }
fi
echo "== GPU tests of the AUTO mode"
timeout 120 ./build/run_gpu_tests gpu_ozaki_auto >"$OUTDIR/test-auto.log" 2>&1
echo "tests rc=$?"; tail -5 "$OUTDIR/test-auto.log"

CSV="$OUTDIR/auto_sweep.csv"
rm -f "$CSV"
cubes="256x256x256,512x512x512,1024x1024x1024,2048x2048x2048,3072x3072x3072,4096x4096x4096"
cubes="$cubes,6144x6144x6144,8192x8192x8192,12288x12288x12288,16384x16384x16384"
skinny=""
for b in 8192 16384; do
  for s in 256 1024 4096; do
    skinny="$skinny,${b}x${b}x${s},${b}x${s}x${b},${s}x${b}x${b}"
  done
done
mixed="2048x2048x16384,4096x4096x16384,16384x16384x8192,8192x8192x16384,16384x8192x8192"
mixed="$mixed,512x512x16384,16384x16384x2048"
B=./build/bench_ozaki
common=(--reps 3 --sample 8 --out "$CSV")
echo "== FP64, phi 0.5"
timeout 300 $B --shapes "$cubes$skinny,$mixed" --phis 0.5 "${common[@]}" \
  --methods cublas_dgemm,ozaki_int8_crt/DP,ozaki_int8_crt/AUTO >"$OUTDIR/bench_f64.log" 2>&1
echo "rc=$?"
echo "== FP64, phi 2 (squares)"
timeout 100 $B --shapes 4096x4096x4096,8192x8192x8192,16384x16384x16384 --phis 2 "${common[@]}" \
  --methods cublas_dgemm,ozaki_int8_crt/DP,ozaki_int8_crt/AUTO >"$OUTDIR/bench_f64_phi2.log" 2>&1
echo "rc=$?"
echo "== FP32, phi 0.5"
timeout 120 $B --precision single --phis 0.5 "${common[@]}" \
  --shapes "256x256x256,1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,16384x16384x16384,16384x16384x256,16384x16384x1024,16384x1024x16384,1024x16384x16384" \
  --methods cublas,ozaki_int8_crt/DP,ozaki_int8_crt/AUTO >"$OUTDIR/bench_f32.log" 2>&1
echo "rc=$?"
echo "== fit"
python3 bench/ozaki/fit_auto.py "$CSV" | tee "$OUTDIR/fit.txt"
