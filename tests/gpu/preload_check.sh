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
/* Each entry point: abort() when called from outside NVIDIA's libraries
 * (tcnla's code), else forward to the real function: libcusolver calls
 * cuBLAS and libcublas calls cuBLASLt, through the global scope, so they
 * reach the preloaded names too. The arguments of these functions are all
 * pointers, enums or integers (scalars by pointer), so forwarding 16
 * integer-class arguments passes them through on x86-64. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
typedef long (*fn_t)(long, long, long, long, long, long, long, long, long, long, long, long,
                     long, long, long, long);
static int from_nvidia(void *ret) {
    Dl_info di;
    if (!dladdr(ret, &di) || !di.dli_fname) return 0;
    const char *b = strrchr(di.dli_fname, '/');
    b = b ? b + 1 : di.dli_fname;
    return !strncmp(b, "libcublas", 9) || !strncmp(b, "libcusolver", 11);
}
/* the real function: by RTLD_NEXT where the libraries sit in the global
 * scope, else in the already-loaded library (tcnla opens them RTLD_LOCAL) */
static void *real_fn(const char *name) {
    void *p = dlsym(RTLD_NEXT, name);
    static const char *const libs[] = {"libcublas.so.13", "libcublasLt.so.13",
                                       "libcusolver.so.12", "libcublas.so", "libcublasLt.so",
                                       "libcusolver.so"};
    for (int i = 0; !p && i < 6; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
        if (h) p = dlsym(h, name);
    }
    return p;
}
#define STUB(f)                                                                                \
    long f(long a, long b, long c, long d, long e, long g, long h, long i, long j, long k,     \
           long l, long m, long n, long o, long p, long q) {                                   \
        if (!from_nvidia(__builtin_return_address(0))) abort();                                \
        fn_t real = (fn_t)real_fn(#f);                                                         \
        if (!real) abort();                                                                    \
        return real(a, b, c, d, e, g, h, i, j, k, l, m, n, o, p, q);                           \
    }
STUB(cublasCreate_v2) STUB(cublasSgemm_v2) STUB(cublasGemmEx) STUB(cublasDgemm_v2)
STUB(cublasGemmStridedBatchedEx) STUB(cublasLtMatmul) STUB(cublasLtCreate)
STUB(cusolverDnCreate) STUB(cusolverDnDsyevd) STUB(cusolverDnSgeqrf)
C
cc -shared -fPIC -o "$tmp/libstub.so" "$tmp/stub.c" -ldl || exit 1
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
