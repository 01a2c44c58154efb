#!/usr/bin/env bash
# One session on a GPU machine: build, `make test-gpu`, the sanitizer run,
# the SASS check and the GEMM benchmark, everything logged under OUTDIR.
#   tests/gpu/device_run.sh OUTDIR [bench args...]
# Libraries the link needs (LAPACK, BLAS, tmglib, gfortran) are taken from
# .carry/*.deb (Debian packages, unpacked into /tmp) when present.
set -u
OUT="${1:?usage: device_run.sh OUTDIR [bench args]}"
shift
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$OUT/gpu.txt" 2>&1
echo "== build"
make -j16 CUDA=1 lib build/run_gpu_tests bench >"$OUT/build.log" 2>&1
brc=$?
grep -i -E "warning|error" "$OUT/build.log" | head -20
echo "build rc=$brc"
[ $brc -eq 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
echo "== sass"
cuobjdump -sass build/obj/src/backend/cuda/kernels/tc_gemm.o >/tmp/tn_sass.txt 2>&1
echo "HMMA: $(grep -c HMMA /tmp/tn_sass.txt)  LDL/STL: $(grep -c -E 'LDL|STL' /tmp/tn_sass.txt)"
echo "== make test-gpu"
timeout "${TN_TEST_TIMEOUT:-200}" make CUDA=1 test-gpu >"$OUT/test-gpu.log" 2>&1
echo "test-gpu rc=$?"
grep -E "^FAIL|^    |passed" "$OUT/test-gpu.log" | head -60
echo "== sanitizer"
timeout "${TN_SAN_TIMEOUT:-150}" tests/gpu/sanitize.sh >"$OUT/sanitize.log" 2>&1
echo "sanitize rc=$?"
grep -E "ERROR SUMMARY|passed|sanitize:" "$OUT/sanitize.log" | head -10
echo "== sm_80 configuration through the compute_80 PTX (CUDA_FORCE_PTX_JIT=1)"
CUDA_FORCE_PTX_JIT=1 timeout "${TN_JIT_TIMEOUT:-150}" ./build/run_gpu_tests gpu_tc_kernels_vs_cpu \
  >"$OUT/extra.log" 2>&1
echo "jit rc=$?"
tail -3 "$OUT/extra.log"
if [ -n "${TN_NCU:-}" ] && command -v ncu >/dev/null; then
  echo "== ncu (tcec_fp16 kernel, $TN_NCU)"
  timeout "${TN_NCU_TIMEOUT:-100}" ncu --kernel-name regex:tn_tc_gemm --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
    ./build/bench_gemm --shapes "$TN_NCU" --methods tcec_fp16 --reps 1 --warmup 0 \
    --out /tmp/ncu_bench.csv >>"$OUT/extra.log" 2>&1
  echo "ncu rc=$?"
  grep -E "Throughput|Duration|Pipe|Stall|Issued|Eligible|Active Warps|Bank" "$OUT/extra.log" | head -40
fi
echo "== bench"
timeout "${TN_BENCH_TIMEOUT:-200}" ./build/bench_gemm --out "$OUT/gemm.csv" "$@" >"$OUT/bench.log" 2>&1
echo "bench rc=$?"
cat "$OUT/bench.log" | tail -120
python3 bench/plot_gemm.py --csv "$OUT/gemm.csv" --out "$OUT/gemm.png" 2>&1 | tail -2
cat "$OUT/gpu.txt"
