#!/usr/bin/env bash
# The CPU checks of libtcnla_cublas.so (`make test` runs them through
# tests/test_interpose.c; no GPU needed):
#  - its dynamic exports are exactly the hooked cuBLAS / cuBLASLt entry
#    points and the tcnla_cublas_* API (include/tcnla_cublas.h);
#  - it needs none of cuBLAS, libcudart.so, libtcnla, BLAS / LAPACK,
#    libgomp, libstdc++ (nothing that would enter a preloaded program's
#    global scope beside libc);
#  - under the preload, libtcnla's own table of cuBLAS functions is still
#    cuBLAS's definitions (build/run_tests cuda_libs_table), so tcnla's
#    calls never reach the hooks;
#  - interpose/tests/cpu_check.c, built here against the CUDA headers:
#    the policy from the environment (defaults, every variable, values that
#    do not parse, TCNLA_CUBLAS_DISABLE), the API's bad input, and the
#    hooks' statuses = cuBLAS's own for NULL handles and invalid sizes.
#   interpose/check_exports.sh [BUILD]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
so=$build/libtcnla_cublas.so
cuda=${CUDA_HOME:-/usr/local/cuda}
fail() { echo "check_exports: $*" >&2; exit 1; }
[ -f "$so" ] || fail "$so missing (make CUDA=1 first)"

want="cublasDgemmStridedBatched cublasDgemmStridedBatched_64 cublasDgemm_v2 cublasDgemm_v2_64
cublasGemmEx cublasGemmEx_64 cublasGemmStridedBatchedEx cublasGemmStridedBatchedEx_64
cublasLtMatmul cublasSgemmBatched cublasSgemmBatched_64 cublasSgemmStridedBatched
cublasSgemmStridedBatched_64 cublasSgemm_v2 cublasSgemm_v2_64 tcnla_cublas_get_policy
tcnla_cublas_get_stats tcnla_cublas_path_name tcnla_cublas_reset_stats tcnla_cublas_set_policy"
have=$(nm -D --defined-only "$so" | awk '$3 != "" {print $3}' | sort | tr '\n' ' ')
want=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$have" = "$want" ] || fail "exports differ:
  have: $have
  want: $want"
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if echo "$needed" | grep -Eq 'cublas|cudart|tcnla|blas|lapack|gomp|stdc\+\+|gfortran'; then
    fail "needs: $needed"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcnla_ip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$root/include" -I"$cuda/include" \
   -o "$tmp/cpu_check" "$root/interpose/tests/cpu_check.c" -ldl -lm \
   || fail "cpu_check.c does not build"
export LD_LIBRARY_PATH="$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset TCNLA_CUBLAS_FP32 TCNLA_CUBLAS_FP64 TCNLA_CUBLAS_MIN_DIM TCNLA_CUBLAS_MIN_FLOPS \
      TCNLA_CUBLAS_FP64_MIN_DIM TCNLA_CUBLAS_FP64_MIN_FLOPS TCNLA_CUBLAS_DISABLE TCNLA_CUBLAS_LOG
"$tmp/cpu_check" "$so" default || fail "cpu_check default"
TCNLA_CUBLAS_FP32=TCEC_TF32 TCNLA_CUBLAS_FP64=ozaki_fp16 TCNLA_CUBLAS_MIN_DIM=7 \
  TCNLA_CUBLAS_MIN_FLOPS=1e6 TCNLA_CUBLAS_FP64_MIN_DIM=9 TCNLA_CUBLAS_FP64_MIN_FLOPS=5 \
  "$tmp/cpu_check" "$so" env || fail "cpu_check env"
TCNLA_CUBLAS_FP32=bogus TCNLA_CUBLAS_FP64=fast TCNLA_CUBLAS_MIN_DIM=-3 TCNLA_CUBLAS_MIN_FLOPS=nan \
  TCNLA_CUBLAS_FP64_MIN_DIM=12x TCNLA_CUBLAS_FP64_MIN_FLOPS=inf \
  "$tmp/cpu_check" "$so" badenv 2>"$tmp/bad.err" || { cat "$tmp/bad.err" >&2; fail "cpu_check badenv"; }
[ "$(grep -c 'not understood' "$tmp/bad.err")" = 6 ] || { cat "$tmp/bad.err" >&2; fail "badenv: not every bad value reported"; }
TCNLA_CUBLAS_DISABLE=1 "$tmp/cpu_check" "$so" disable || fail "cpu_check disable"
# ozaki_dp: OZAKI_INT8 in DP mode (no AUTO model), thresholds at their defaults, no complaint
TCNLA_CUBLAS_FP64=ozaki_dp "$tmp/cpu_check" "$so" default 2>"$tmp/dp.err" || fail "cpu_check ozaki_dp"
[ ! -s "$tmp/dp.err" ] || { cat "$tmp/dp.err" >&2; fail "ozaki_dp reported"; }
# the exit log: every call counted under its entry point
TCNLA_CUBLAS_LOG="$tmp/log.txt" "$tmp/cpu_check" "$so" default >/dev/null || fail "cpu_check log"
# no recursion: under the preload, libtcnla's table of cuBLAS functions
# (src/backend/cuda/cuda_libs.c, dlsym on its own dlopen handles) still
# holds cuBLAS's own definitions, not the hooks (the white-box test
# cuda_libs_table checks each entry's library with dladdr)
if [ -x "$build/run_tests" ]; then
    LD_PRELOAD="$so" "$build/run_tests" cuda_libs_table >"$tmp/table.log" 2>&1 \
      || { cat "$tmp/table.log" >&2; fail "under the preload, libtcnla's cuBLAS table is not cuBLAS's"; }
    grep -Eq '^[01] passed, 0 failed, [01] skipped' "$tmp/table.log" \
      || { cat "$tmp/table.log" >&2; fail "cuda_libs_table did not run under the preload"; }
fi
if "$tmp/cpu_check" "$so" default | grep -q 'statuses not compared'; then
    note=", no libcublas here: statuses not compared"
else
    note=""
    grep -q 'cublasLtMatmul' "$tmp/log.txt" && grep -q '29 hooked calls' "$tmp/log.txt" \
      || { cat "$tmp/log.txt" >&2; fail "the exit log lacks the calls"; }
fi
echo "check_exports: ok ($(echo $have | wc -w) exports$note)"
