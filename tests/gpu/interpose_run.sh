#!/usr/bin/env bash
# libtcnla_cublas.so on a GPU machine: builds the library and its test
# programs, then runs interpose/tests/gpu_check.c (every hooked entry point
# against FP64 references, pass-through cases, threads):
#   1. plain cuBLAS (no preload): the baseline;
#   2. LD_PRELOAD=build/libtcnla_cublas.so, cuBLAS linked by the program
#      (the global scope: the real functions by dlsym(RTLD_NEXT));
#   3. the same test as a library opened RTLD_LOCAL (cuBLAS in a local scope,
#      as in PyTorch and CuPy: the real functions by dlopen(RTLD_NOLOAD)), with
#      TCNLA_CUBLAS_FP64=ozaki_dp (the test's small FP64 products, which the
#      default AUTO mode gives to cuBLAS DGEMM, through the Ozaki scheme);
#   4. run 2 under compute-sanitizer (memcheck), unless IP_SAN=0;
# plus the CPU checks (interpose/check_exports.sh). Logs and the hooks' exit
# summaries (TCNLA_CUBLAS_LOG) go to OUTDIR (default $OUT).
#   tests/gpu/interpose_run.sh [OUTDIR]
# Exit status: 1 when the build failed, else the first failing step's.
set -u
OUT="${1:-${OUT:?usage: interpose_run.sh OUTDIR}}"
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/interpose_gpu.txt" 2>&1
echo "== build"
make -j16 CUDA=1 lib interpose >"$OUT/interpose_build.log" 2>&1
brc=$?
grep -i -E "warning|error" "$OUT/interpose_build.log" | head -20
echo "build rc=$brc"
[ $brc -eq 0 ] || { tail -30 "$OUT/interpose_build.log"; exit 1; }
SO=$PWD/build/libtcnla_cublas.so
status=0
step() { # name, command...
    local name=$1
    shift
    echo "== $name"
    timeout "${IP_TIMEOUT:-600}" "$@" >"$OUT/interpose_$name.log" 2>&1
    local rc=$?
    grep -E "^FAIL|gpu_check:|check_exports|ERROR SUMMARY|cpu_check" "$OUT/interpose_$name.log" | tail -40
    echo "$name rc=$rc"
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
}
step cpu bash interpose/check_exports.sh build
step plain ./build/interpose_gpu_check
step preload env LD_PRELOAD="$SO" TCNLA_CUBLAS_LOG="$OUT/interpose_stats_preload.txt" \
    ./build/interpose_gpu_check
step local env LD_PRELOAD="$SO" TCNLA_CUBLAS_FP64=ozaki_dp TCNLA_CUBLAS_LOG="$OUT/interpose_stats_local.txt" \
    ./build/interpose_local_loader "$PWD/build/libinterpose_gpu_check.so"
if [ "${IP_SAN:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    step sanitize env LD_PRELOAD="$SO" compute-sanitizer --tool memcheck --error-exitcode 9 \
        --target-processes all ./build/interpose_gpu_check
fi
cat "$OUT/interpose_stats_preload.txt" 2>/dev/null | tail -30
cat "$OUT/interpose_gpu.txt"
[ $status -eq 0 ] && echo "interpose_run: all steps passed" || echo "interpose_run: FAILED ($status)"
exit $status
