/* The BLAS-shaped GEMM entry points: argument checking, method resolution,
 * quick returns, then the backend (src/backend/cpu/cpu_gemm.c or the CUDA one). */
#include "core/internal.h"

#include <limits.h>
#include <stdlib.h>

int tn_check_gemm_args(tcnla_handle_t h, tcnla_op_t transa, tcnla_op_t transb, int64_t m,
                       int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                       int64_t ldb, const void *C, int64_t ldc) {
    if (!h) return -1;
    if (transa != TCNLA_OP_N && transa != TCNLA_OP_T) return -3;
    if (transb != TCNLA_OP_N && transb != TCNLA_OP_T) return -4;
    if (m < 0) return -5;
    if (n < 0) return -6;
    if (k < 0) return -7;
    int64_t arows = transa == TCNLA_OP_N ? m : k, acols = transa == TCNLA_OP_N ? k : m;
    int64_t brows = transb == TCNLA_OP_N ? k : n, bcols = transb == TCNLA_OP_N ? n : k;
    if (!A && arows > 0 && acols > 0) return -9;
    if (lda < TN_MAX(1, arows)) return -10;
    if (!B && brows > 0 && bcols > 0) return -11;
    if (ldb < TN_MAX(1, brows)) return -12;
    if (!C && m > 0 && n > 0) return -14;
    if (ldc < TN_MAX(1, m)) return -15;
    return 0;
}

static int resolve(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_gemm_method_t *out) {
    if ((int)method < 0 || (int)method >= (int)TCNLA_GEMM_METHOD_COUNT) return -2;
    *out = method == TCNLA_GEMM_DEFAULT ? h->method : method;
    return 0;
}

/* SGEMM by the Ozaki scheme on the CPU: the FP32 data widened to FP64
 * (exactly), the scheme run for FP32 accuracy, the result rounded once. */
static int ozaki_sgemm_cpu(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t ta,
                           tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                           const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                           float *C, int64_t ldc) {
    int64_t acols = ta == TCNLA_OP_N ? k : m, bcols = tb == TCNLA_OP_N ? n : k;
    size_t na = (size_t)lda * (size_t)acols, nb = (size_t)ldb * (size_t)bcols;
    size_t nc = (size_t)m * (size_t)n;
    double *Ad = malloc(sizeof(double) * (na + nb + nc + 1));
    if (!Ad) return TCNLA_ERR_ALLOC;
    double *Bd = Ad + na, *Cd = Bd + nb;
    for (size_t i = 0; i < na; i++) Ad[i] = A[i];
    for (size_t i = 0; i < nb; i++) Bd[i] = B[i];
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) Cd[i + j * m] = beta == 0.0f ? 0.0 : C[i + j * ldc];
    h->last_method = method; /* tn_cpu_ozaki changes it when it falls back to FP64 */
    int st = tn_cpu_ozaki(h, method, ta, tb, m, n, k, alpha, Ad, lda, Bd, ldb, beta, Cd, m, 32);
    if (st == TCNLA_SUCCESS) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) C[i + j * ldc] = (float)Cd[i + j * m];
    }
    free(Ad);
    return st;
}

static int gemm_common(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                       tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *A, int64_t lda, const float *B, const uint16_t *B16,
                       int64_t ldb, float beta, float *C, int64_t ldc) {
    if (m == 0 || n == 0) {
        h->last_method = method;
        return TCNLA_SUCCESS;
    }
    if (method == TCNLA_GEMM_OZAKI_FP16 || method == TCNLA_GEMM_OZAKI_INT8) {
        if (B16) return TCNLA_ERR_NOT_SUPPORTED;
#ifdef TCNLA_HAVE_CUDA
        if (h->backend == TCNLA_BACKEND_CUDA) {
            h->last_method = method; /* changed when it falls back to FP64 */
            return tn_cuda_ozaki(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                                 C, ldc, 32);
        }
#endif
        if (h->backend != TCNLA_BACKEND_CPU) return TCNLA_ERR_NOT_SUPPORTED;
        return ozaki_sgemm_cpu(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                               ldc);
    }
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA)
        return tn_cuda_gemm(h, method, transa, transb, m, n, k, alpha, A, lda, B, B16, ldb, beta,
                            C, ldc);
#endif
    return tn_cpu_gemm(h, method, transa, transb, m, n, k, alpha, A, lda, B, B16, ldb, beta, C,
                       ldc);
}

int tn_gemm_f16(tcnla_handle_t h, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                float alpha, const uint16_t *A, int64_t lda, const uint16_t *B, int64_t ldb,
                float beta, float *C, int64_t ldc) {
    h->last_method = TCNLA_GEMM_FP16;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA)
        return tn_cuda_gemm_f16(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
    /* CPU: the operands widened (exactly) and the FP16 method, whose
     * conversion then changes nothing */
    const int64_t ar = ta == TCNLA_OP_N ? m : k, ac = ta == TCNLA_OP_N ? k : m;
    const int64_t br = tb == TCNLA_OP_N ? k : n, bc = tb == TCNLA_OP_N ? n : k;
    float *Aw = malloc(sizeof(float) * (size_t)(ar * ac)), *Bw = malloc(sizeof(float) * (size_t)(br * bc));
    int st = TCNLA_ERR_ALLOC;
    if (Aw && Bw) {
        for (int64_t j = 0; j < ac; j++)
            for (int64_t i = 0; i < ar; i++) Aw[i + j * ar] = tcnla_f16_to_f32(A[i + j * lda]);
        for (int64_t j = 0; j < bc; j++)
            for (int64_t i = 0; i < br; i++) Bw[i + j * br] = tcnla_f16_to_f32(B[i + j * ldb]);
        st = tn_cpu_gemm(h, TCNLA_GEMM_FP16, ta, tb, m, n, k, alpha, Aw, ar, Bw, NULL, br, beta, C,
                         ldc);
    }
    free(Aw), free(Bw);
    return st;
}

int tcnla_sgemm(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
    if (st) return st;
    tcnla_gemm_method_t mth;
    if ((st = resolve(h, method, &mth))) return st;
    return gemm_common(h, mth, transa, transb, m, n, k, alpha, A, lda, B, NULL, ldb, beta, C,
                       ldc);
}

int tcnla_shgemm(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                 tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                 int64_t lda, const uint16_t *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
    if (st) return st;
    tcnla_gemm_method_t mth;
    if ((st = resolve(h, method, &mth))) return st;
    if (method == TCNLA_GEMM_DEFAULT) mth = TCNLA_GEMM_SHGEMM_FP16;
    if (mth != TCNLA_GEMM_SHGEMM_FP16 && mth != TCNLA_GEMM_SHGEMM_TF32 &&
        mth != TCNLA_GEMM_NATIVE_FP32 && mth != TCNLA_GEMM_NATIVE_FP64)
        return -2;
    return gemm_common(h, mth, transa, transb, m, n, k, alpha, A, lda, NULL, B, ldb, beta, C,
                       ldc);
}

int tn_trust(tcnla_handle_t h, const float *A, int64_t ld, int64_t rows, int64_t cols,
             const tcnla_gemm_method_t *meths, int nm) {
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA)
        return tn_cuda_trust(h, A, ld, rows, cols, meths, nm);
#endif
    (void)h, (void)A, (void)ld, (void)rows, (void)cols, (void)meths, (void)nm;
    return TCNLA_SUCCESS;
}

int tn_gemm_trusting(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t ta, int64_t m,
                     int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                     const uint16_t *B16, int64_t ldb, float *C, int64_t ldc,
                     const tcnla_gemm_method_t *meths, int nm, int *done) {
    *done = 0;
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA)
        return tn_cuda_gemm_trusting(h, method, ta, m, n, k, A, lda, B, B16, ldb, C, ldc, meths,
                                     nm, done);
#endif
    (void)h, (void)method, (void)ta, (void)m, (void)n, (void)k, (void)A, (void)lda, (void)B;
    (void)B16, (void)ldb, (void)C, (void)ldc, (void)meths, (void)nm;
    return TCNLA_SUCCESS;
}

void tn_untrust(tcnla_handle_t h) {
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA) tn_cuda_untrust(h);
#endif
    (void)h;
}

void tn_trust_f16(tcnla_handle_t h, const uint16_t *X, size_t count) {
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA) tn_cuda_trust_f16(h, X, count);
#endif
    (void)h, (void)X, (void)count;
}

void tn_bounded_begin(tcnla_handle_t h) {
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA) tn_cuda_bounded(h, 1);
#endif
    (void)h;
}

void tn_bounded_end(tcnla_handle_t h) {
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA) tn_cuda_bounded(h, -1);
#endif
    (void)h;
}

/* Strided batches (internal; declared in src/core/internal.h). */
int tn_sgemm_batched(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                     tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *A, int64_t lda, int64_t sa, const float *B, const uint16_t *B16,
                     int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                     int64_t batch, int reduce) {
    if (B && B16) return -13;
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda,
                                B16 ? (const void *)B16 : (const void *)B, ldb, C, ldc);
    if (st) return st;
    if (batch < 0) return -20;
    if (sa < 0) return -11;
    if (sb < 0) return -15;
    if (sc < 0) return -19;
    tcnla_gemm_method_t mth;
    if ((st = resolve(h, method, &mth))) return st;
    if (B16) { /* the rules of tcnla_shgemm */
        if (method == TCNLA_GEMM_DEFAULT) mth = TCNLA_GEMM_SHGEMM_FP16;
        if (mth != TCNLA_GEMM_SHGEMM_FP16 && mth != TCNLA_GEMM_SHGEMM_TF32 &&
            mth != TCNLA_GEMM_NATIVE_FP32 && mth != TCNLA_GEMM_NATIVE_FP64)
            return -2;
    }
    if (batch == 0 || m == 0 || n == 0) {
        h->last_method = mth;
        return TCNLA_SUCCESS;
    }
    if (batch == 1) reduce = 0;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA && batch > 1) {
        st = tn_cuda_gemm_batched(h, mth, transa, transb, m, n, k, alpha, A, lda, sa, B, B16, ldb,
                                  sb, beta, C, ldc, sc, batch, reduce);
        if (st != TN_BATCH_LOOP) return st;
    }
#endif
    /* product by product: the CPU backend, and whatever the CUDA one left */
    for (int64_t t = 0; t < batch; t++) {
        st = gemm_common(h, mth, transa, transb, m, n, k, alpha, A + t * sa, lda,
                         B ? B + t * sb : NULL, B16 ? B16 + t * sb : NULL, ldb,
                         (reduce && t) ? 1.0f : beta, C + (reduce ? 0 : t * sc), ldc);
        if (st) return st;
    }
    return TCNLA_SUCCESS;
}

int tcnla_sgemm_strided_batched(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                                tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                                const float *A, int64_t lda, int64_t strideA, const float *B,
                                int64_t ldb, int64_t strideB, float beta, float *C, int64_t ldc,
                                int64_t strideC, int64_t batch) {
    /* the argument positions here: tcnla_sgemm's, with a stride after each
     * leading dimension and batch last */
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
    if (st == -11 || st == -12) return st - 1; /* B, ldb */
    if (st == -14 || st == -15) return st - 2; /* C, ldc */
    if (st) return st;
    if (strideA < 0) return -11;
    if (strideB < 0) return -14;
    if (strideC < 0) return -18;
    if (batch < 0) return -19;
    return tn_sgemm_batched(h, method, transa, transb, m, n, k, alpha, A, lda, strideA, B, NULL,
                            ldb, strideB, beta, C, ldc, strideC, batch, 0);
}

int tcnla_dgemm(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                tcnla_op_t transb, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
    if (st) return st;
    if (method == TCNLA_GEMM_DEFAULT) method = TCNLA_GEMM_NATIVE_FP64;
    if (method != TCNLA_GEMM_NATIVE_FP64 && method != TCNLA_GEMM_OZAKI_FP16 &&
        method != TCNLA_GEMM_OZAKI_INT8)
        return -2;
    if (m == 0 || n == 0) return TCNLA_SUCCESS;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA) { /* Ozaki kernels or cuBLAS DGEMM */
        h->last_method = method;
        return tn_cuda_ozaki(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                             ldc, 64);
    }
#endif
    if (h->backend != TCNLA_BACKEND_CPU) return TCNLA_ERR_NOT_SUPPORTED;
    if (k == 0 || alpha == 0.0) { /* C = beta * C; C not read when beta == 0 */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
        h->last_method = method;
        return TCNLA_SUCCESS;
    }
    h->last_method = method;
    if (method != TCNLA_GEMM_NATIVE_FP64)
        return tn_cpu_ozaki(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                            ldc, 64);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return TCNLA_ERR_NOT_SUPPORTED;
    const int im = (int)m, in = (int)n, ik = (int)k, ia = (int)lda, ib = (int)ldb, ic = (int)ldc;
    dgemm_(transa == TCNLA_OP_N ? "N" : "T", transb == TCNLA_OP_N ? "N" : "T", &im, &in, &ik,
           &alpha, A, &ia, B, &ib, &beta, C, &ic);
    return TCNLA_SUCCESS;
}
