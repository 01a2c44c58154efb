#!/usr/bin/env bash
# tcnla's own cuBLAS / cuBLASLt / cuSOLVER calls never reach a library
# preloaded into the process that exports those names (an interposition
# library): a preloaded stub whose cublas* / cusolver* entry points abort()
# must leave `tcnla gemm` (cuBLAS SGEMM and DGEMM baselines inside, INT8
# products through cuBLASLt) and `tcnla rsvd` (cuSOLVER) running. Needs a
# GPU and the build's tcnla (build/tcnla).
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tn_preload.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/stub.c" <<'C'
#include <stdlib.h>
#define STUB(f) int f(void) { abort(); }
STUB(cublasCreate_v2) STUB(cublasSgemm_v2) STUB(cublasGemmEx) STUB(cublasDgemm_v2)
STUB(cublasGemmStridedBatchedEx) STUB(cublasLtMatmul) STUB(cublasLtCreate)
STUB(cusolverDnCreate) STUB(cusolverDnDsyevd) STUB(cusolverDnSgeqrf)
C
cc -shared -fPIC -o "$tmp/libstub.so" "$tmp/stub.c" || exit 1
status=0
run() {
  if LD_PRELOAD="$tmp/libstub.so" "$@" >"$tmp/out" 2>&1; then
    echo "ok   $*"
  else
    echo "FAIL $* (status $?)"; tail -5 "$tmp/out"; status=1
  fi
}
run build/tcnla gemm --backend cuda --method tcec_fp16 --m 512 --n 512 --k 512
run build/tcnla gemm --backend cuda --method native_fp32 --m 512 --n 512 --k 512
run build/tcnla gemm --backend cuda --precision double --method ozaki_int8 --m 512 --n 512 --k 512
run build/tcnla gemm --backend cuda --precision double --method native_fp64 --m 512 --n 512 --k 512
run build/tcnla rsvd --backend cuda --m 2048 --n 2048 --rank 32
exit $status
