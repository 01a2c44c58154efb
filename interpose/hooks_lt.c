/* cublasLtMatmul: FP32 products (lt_desc.c says which) computed by the
 * policy's FP32 method into D, then the epilogue (bias, ReLU, GELU) by
 * epilogue.cu, all on the call's stream. D != C: C is copied into D first
 * (where beta != 0; C and D must not overlap otherwise). The algorithm and
 * workspace passed are checked as cuBLASLt would (cublasLtMatmulAlgoCheck),
 * not used. */
#include "internal.h"

#include <string.h>

static int overlap(const float *x, const float *y, int64_t m, int64_t n, int64_t ldx,
                   int64_t ldy, int64_t sx, int64_t sy, int64_t batch) {
    const uintptr_t xs = (uintptr_t)x, ys = (uintptr_t)y;
    const uintptr_t xe = xs + 4 * (uintptr_t)((batch - 1) * sx + (n - 1) * ldx + m);
    const uintptr_t ye = ys + 4 * (uintptr_t)((batch - 1) * sy + (n - 1) * ldy + m);
    return xs < ye && ys < xe;
}

/* The path taken (TCNLA / FALLBACK: D computed; else D as it was, or, with
 * *broken set, D == C changed: cuBLASLt cannot run any more). */
typedef cublasStatus_t (*lt_check_t)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                     const cublasLtMatmulAlgo_t *,
                                     cublasLtMatmulHeuristicResult_t *);

/* cuBLASLt would run the call: the handle is not NULL and, where the
 * caller chose an algorithm, cublasLtMatmulAlgoCheck accepts it with the
 * workspace given (else cuBLASLt answers the call, with its status). */
static int lt_would_run(cublasLtHandle_t lh, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Ad,
                        cublasLtMatrixLayout_t Bd, cublasLtMatrixLayout_t Cd,
                        cublasLtMatrixLayout_t Dd, const cublasLtMatmulAlgo_t *algo,
                        size_t ws) {
    if (!lh) return 0;
    if (!algo) return 1;
    static lt_check_t check_;
    lt_check_t check = __atomic_load_n(&check_, __ATOMIC_ACQUIRE);
    if (!check) {
        check = (lt_check_t)tci_real("cublasLtMatmulAlgoCheck", 1, NULL);
        __atomic_store_n(&check_, check, __ATOMIC_RELEASE);
    }
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    return check && check(lh, desc, Ad, Bd, Cd, Dd, algo, &res) == CUBLAS_STATUS_SUCCESS &&
           res.workspaceSize <= ws;
}

static int take(cublasLtHandle_t lh, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                cublasLtMatrixLayout_t Ad, const void *B, cublasLtMatrixLayout_t Bd,
                const void *beta, const void *C, cublasLtMatrixLayout_t Cd, void *D,
                cublasLtMatrixLayout_t Dd, const cublasLtMatmulAlgo_t *algo, size_t ws,
                cudaStream_t s, const void *ret, int *broken) {
    *broken = 0;
    if (tci_inside()) return tci_nested_path(ret);
    const tcnla_cublas_policy_t p = tci_policy();
    if (p.fp32_method == TCNLA_GEMM_NATIVE_FP32) return TCNLA_CUBLAS_PATH_POLICY;
    tci_lt_call_t c;
    int path = tci_lt_read(desc, Ad, Bd, Cd, Dd, &c);
    if (path >= 0) return path;
    if (!alpha || !beta || !A || !B || !C || !D) return TCNLA_CUBLAS_PATH_ARGS;
    if (c.batch > 65535) return TCNLA_CUBLAS_PATH_ARGS; /* (the epilogue's grid) */
    int64_t mn = c.m < c.n ? c.m : c.n;
    mn = mn < c.k ? mn : c.k;
    if (mn == 0 || mn < p.fp32_min_dim ||
        2.0 * (double)c.m * (double)c.n * (double)c.k * (double)c.batch < p.fp32_min_flops)
        return TCNLA_CUBLAS_PATH_SIZE;
    if (tci_from_vendor(ret)) return TCNLA_CUBLAS_PATH_INNER;
    int b = tci_stream_blocked(s);
    if (b >= 0) return b;
    if (!lt_would_run(lh, desc, Ad, Bd, Cd, Dd, algo, ws)) return TCNLA_CUBLAS_PATH_ARGS;
    float al, be;
    if (c.device_scalars) {
        if (tci_read_device(s, alpha, &al, beta, &be, sizeof(float)))
            return TCNLA_CUBLAS_PATH_FAILED;
    } else {
        memcpy(&al, alpha, sizeof al);
        memcpy(&be, beta, sizeof be);
    }
    float *Dp = (float *)D;
    const float *Cp = (const float *)C;
    const int same = (const void *)Dp == C;
    if (same && (c.ldc != c.ldd || c.sC != c.sD)) return TCNLA_CUBLAS_PATH_ARGS;
    if (!same && be != 0.0f &&
        overlap(Cp, Dp, c.m, c.n, c.ldc, c.ldd, c.sC, c.sD, c.batch))
        return TCNLA_CUBLAS_PATH_ARGS;
    tci_enter();
    int st = 0, fb = 0;
    if (!same && be != 0.0f)
        st = tci_copy(Cp, c.ldc, c.sC, Dp, c.ldd, c.sD, c.m, c.n, c.batch, s) ? -1 : 0;
    if (!st)
        st = tci_sgemm(s, p.fp32_method, c.ta, c.tb, c.m, c.n, c.k, al, (const float *)A, c.lda,
                       c.sA, (const float *)B, c.ldb, c.sB, be, Dp, c.ldd, c.sD, c.batch, &fb);
    if (!st && (c.bias || c.relu || c.gelu)) {
        if (tci_epilogue(Dp, c.ldd, c.sD, c.m, c.n, c.batch, c.bias ? c.bias_ptr : NULL,
                         c.bias_stride, c.relu, c.gelu, s)) {
            (void)cudaGetLastError();
            *broken = same;
            st = -1;
        }
    }
    tci_leave();
    if (st) return TCNLA_CUBLAS_PATH_FAILED;
    return fb ? TCNLA_CUBLAS_PATH_FALLBACK : TCNLA_CUBLAS_PATH_TCNLA;
}

typedef cublasStatus_t (*lt_matmul_t)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

TCI_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                                         cublasLtMatmulDesc_t computeDesc, const void *alpha,
                                         const void *A, cublasLtMatrixLayout_t Adesc,
                                         const void *B, cublasLtMatrixLayout_t Bdesc,
                                         const void *beta, const void *C,
                                         cublasLtMatrixLayout_t Cdesc, void *D,
                                         cublasLtMatrixLayout_t Ddesc,
                                         const cublasLtMatmulAlgo_t *algo, void *workspace,
                                         size_t workspaceSizeInBytes, cudaStream_t stream) {
    static lt_matmul_t real_;
    lt_matmul_t real = __atomic_load_n(&real_, __ATOMIC_ACQUIRE);
    if (!real) {
        real = (lt_matmul_t)tci_real("cublasLtMatmul", 1, (const void *)cublasLtMatmul);
        __atomic_store_n(&real_, real, __ATOMIC_RELEASE);
    }
    if (!real) return CUBLAS_STATUS_NOT_INITIALIZED;
    const double t0 = tci_now();
    int broken = 0;
    int path = take(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                     algo, workspaceSizeInBytes, stream, __builtin_return_address(0), &broken);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (broken) {
        st = CUBLAS_STATUS_EXECUTION_FAILED;
    } else if (path != TCNLA_CUBLAS_PATH_TCNLA && path != TCNLA_CUBLAS_PATH_FALLBACK) {
        tci_enter();
        st = real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                  algo, workspace, workspaceSizeInBytes, stream);
        tci_leave();
    }
    tci_count(TCI_E_LT_MATMUL, path, t0);
    return st;
}
