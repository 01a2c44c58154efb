#!/usr/bin/env bash
# One run on a GPU machine: build, the GPU tests, the compute-sanitizer
# pass (tests/gpu/sanitize.sh: its default set, the range-check / fallback /
# scaling paths), the SASS check and the GEMM benchmark, everything logged
# under OUTDIR. Exit status: 1 when the build failed, else the first non-zero
# status of the GPU tests, the sanitizer pass and the PTX JIT run (the
# benchmark's is reported, not counted).
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
cuobjdump -sass build/obj/src/backend/cuda/kernels/tc_gemm.o >"$OUT/sass.txt" 2>&1
echo "HMMA: $(grep -c HMMA "$OUT/sass.txt")  LDL/STL: $(grep -c -E 'LDL|STL' "$OUT/sass.txt")"
echo "== make test-gpu (the tests; the sanitizer pass follows)"
timeout "${TN_TEST_TIMEOUT:-200}" make CUDA=1 GPU_SAN=0 test-gpu >"$OUT/test-gpu.log" 2>&1
trc=$?
echo "test-gpu rc=$trc"
grep -E "^FAIL|^    |passed" "$OUT/test-gpu.log" | head -60
echo "== sanitizer (make test-gpu-sanitize)"
timeout "${TN_SAN_TIMEOUT:-300}" make CUDA=1 test-gpu-sanitize >"$OUT/sanitize.log" 2>&1
src=$?
echo "sanitize rc=$src"
grep -E "ERROR SUMMARY|passed|sanitize:" "$OUT/sanitize.log" | head -10
echo "== sm_80 configuration through the compute_80 PTX (CUDA_FORCE_PTX_JIT=1)"
CUDA_FORCE_PTX_JIT=1 timeout "${TN_JIT_TIMEOUT:-150}" ./build/run_gpu_tests gpu_tc_kernels_vs_cpu \
  >"$OUT/extra.log" 2>&1
jrc=$?
echo "jit rc=$jrc"
tail -3 "$OUT/extra.log"
if [ -n "${TN_NCU:-}" ] && command -v ncu >/dev/null; then
  echo "== ncu (tcec_fp16 kernel, $TN_NCU)"
  timeout "${TN_NCU_TIMEOUT:-100}" ncu --kernel-name regex:tn_tc_gemm --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
    ./build/bench_gemm --shapes "$TN_NCU" --methods tcec_fp16 --reps 1 --warmup 0 \
    --out "$OUT/ncu_bench.csv" >>"$OUT/extra.log" 2>&1
  echo "ncu rc=$?"
  grep -E "Throughput|Duration|Pipe|Stall|Issued|Eligible|Active Warps|Bank" "$OUT/extra.log" | head -40
fi
echo "== bench"
timeout "${TN_BENCH_TIMEOUT:-200}" ./build/bench_gemm --out "$OUT/gemm.csv" "$@" >"$OUT/bench.log" 2>&1
echo "bench rc=$?"
cat "$OUT/bench.log" | tail -120
python3 bench/plot_gemm.py --csv "$OUT/gemm.csv" --out "$OUT/gemm.png" 2>&1 | tail -2
cat "$OUT/gpu.txt"
for rc in $trc $src $jrc; do [ "$rc" -ne 0 ] && { echo "device_run: FAILED (tests $trc, sanitizer $src, jit $jrc)"; exit "$rc"; }; done
echo "device_run: GPU tests, sanitizer and jit passed"
exit 0
