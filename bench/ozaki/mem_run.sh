#!/usr/bin/env bash
# One run on a GPU machine for scheme II's memory-bound kernels: build, the
# scheme II GPU tests (bitwise against the CPU reference), the kernel
# micro-benchmark (build/bench_ozaki_mem: plan passes, residues,
# reconstruction at N = 4096, 8192, 16384, FP64 and FP32 inputs), Nsight
# Compute's kernel durations at N = 8192 when ncu is there, and the whole
# DGEMM against cuBLAS (build/bench_ozaki). At most 8 files under OUTDIR:
# gpu.txt build.log tests.log mem.log ozaki_mem.csv ncu.log ozaki.log ozaki.csv
#   bench/ozaki/mem_run.sh OUTDIR
# Exit status: 1 when the build failed, else the tests' status (the
# benchmarks' are reported, not counted). ozaki_mem.csv is also appended to
# bench/results/ozaki_mem.csv.
set -u
OUT="${1:?usage: mem_run.sh OUTDIR}"
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$OUT/gpu.txt" 2>&1
echo "== build"
make -j16 CUDA=1 lib build/run_gpu_tests build/bench_ozaki_mem build/bench_ozaki >"$OUT/build.log" 2>&1
brc=$?
grep -i -E "warning|error:" "$OUT/build.log" | head -20
echo "build rc=$brc"
[ $brc -eq 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
echo "== scheme II GPU tests (build/run_gpu_tests gpu_ozaki2 gpu_ozaki_auto gpu_oz2_fused)"
timeout "${TN_TEST_TIMEOUT:-300}" ./build/run_gpu_tests gpu_ozaki2 gpu_ozaki_auto gpu_oz2_fused \
  >"$OUT/tests.log" 2>&1
trc=$?
echo "tests rc=$trc"
grep -E "^FAIL|passed|differ" "$OUT/tests.log" | head -30
echo "== kernels (build/bench_ozaki_mem)"
timeout "${TN_BENCH_TIMEOUT:-300}" ./build/bench_ozaki_mem --sizes 4096,8192,16384 --reps 5 \
  --out "$OUT/ozaki_mem.csv" >"$OUT/mem.log" 2>&1
echo "bench_ozaki_mem rc=$?"
cat "$OUT/mem.log"
[ -s "$OUT/ozaki_mem.csv" ] && mkdir -p bench/results &&
  { [ -s bench/results/ozaki_mem.csv ] && tail -n +2 "$OUT/ozaki_mem.csv" || cat "$OUT/ozaki_mem.csv"; } \
    >>bench/results/ozaki_mem.csv
if command -v ncu >/dev/null; then
  echo "== ncu gpu__time_duration, N = 8192 FP64 (one run of each kernel)"
  timeout "${TN_NCU_TIMEOUT:-200}" ncu --metrics gpu__time_duration.sum \
    -k regex:"k_pass|k_sigma|k_sum_parts|k_residues|k_reconstruct" \
    ./build/bench_ozaki_mem --sizes 8192 --precs f64 --reps 1 --out /dev/null >"$OUT/ncu.log" 2>&1
  echo "ncu rc=$?"
  grep -E "^ +(void )?k_[A-Za-z0-9_<>, ]+\(|gpu__time_duration" "$OUT/ncu.log" | sed -E 's/\(.*//' | head -60
fi
echo "== whole DGEMM (build/bench_ozaki)"
timeout "${TN_OZ_TIMEOUT:-400}" ./build/bench_ozaki --sizes 8192,16384 --phis 0.5,2 --reps 3 \
  --methods cublas_dgemm,ozaki_int8_crt/DP --out "$OUT/ozaki.csv" >"$OUT/ozaki.log" 2>&1
echo "bench_ozaki rc=$?"
tail -30 "$OUT/ozaki.log"
cat "$OUT/gpu.txt"
[ $trc -eq 0 ] && echo "mem_run: scheme II GPU tests passed" || echo "mem_run: GPU tests FAILED ($trc)"
exit $trc
