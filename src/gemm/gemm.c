/* The BLAS-shaped GEMM entry points: argument checking, method resolution,
 * quick returns, then the handle's backend through its table (h->ops). */
#include "core/internal.h"
#include "gemm/ozaki.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

/* One product on the backend, after the checks; counted in cl->info. */
static int gemm_common(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t transa,
                       tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *A, int64_t lda, const float *B, const uint16_t *B16,
                       int64_t ldb, float beta, float *C, int64_t ldc) {
    const tn_backend_ops *ops = cl->h->ops;
    int st = TCNLA_SUCCESS;
    cl->info.method = method; /* the backend changes it where it computes otherwise */
    cl->info.path = 0;
    if (m == 0 || n == 0) {
        /* nothing to compute */
    } else if (method == TCNLA_GEMM_OZAKI_FP16 || method == TCNLA_GEMM_OZAKI_INT8) {
        if (B16) return TCNLA_ERR_NOT_SUPPORTED;
        st = tn_ozaki_run(cl, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                          ldc, 32);
    } else {
        st = ops->gemm(cl, method, transa, transb, m, n, k, alpha, A, lda, B, B16, ldb, beta, C,
                       ldc);
        if (st == TN_NEEDS_SCALE) /* operands outside the split's range as given */
            st = tn_gemm_scaled(cl, method, transa, transb, m, n, k, alpha, A, lda, B, B16, ldb,
                                beta, C, ldc);
        if (st == TN_NOT_TAKEN) { /* no scaled copies: the range policy decides */
            cl->scaling = 1;
            st = ops->gemm(cl, method, transa, transb, m, n, k, alpha, A, lda, B, B16, ldb, beta,
                           C, ldc);
            cl->scaling = 0;
        }
    }
    if (st == TCNLA_SUCCESS) tn_call_count(cl, method);
    return st;
}

int tn_gemm_f16(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                float alpha, const uint16_t *A, int64_t lda, const uint16_t *B, int64_t ldb,
                float beta, float *C, int64_t ldc) {
    cl->info.method = TCNLA_GEMM_FP16;
    const int st = cl->h->ops->gemm_f16(cl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (st == TCNLA_SUCCESS) tn_call_count(cl, TCNLA_GEMM_FP16);
    return st;
}

int tn_sgemm(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t transa, tcnla_op_t transb,
             int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
             const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
             int64_t ldc) {
    tcnla_handle_t h = cl->h;
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda,
                                B16 ? (const void *)B16 : (const void *)B, ldb, C, ldc);
    if (st) return st;
    tcnla_gemm_method_t mth;
    if ((st = resolve(h, method, &mth))) return st;
    if (B16) { /* the rules of tcnla_shgemm */
        if (method == TCNLA_GEMM_DEFAULT) mth = TCNLA_GEMM_SHGEMM_FP16;
        if (mth != TCNLA_GEMM_SHGEMM_FP16 && mth != TCNLA_GEMM_SHGEMM_TF32 &&
            mth != TCNLA_GEMM_NATIVE_FP32 && mth != TCNLA_GEMM_NATIVE_FP64)
            return -2;
    }
    return gemm_common(cl, mth, transa, transb, m, n, k, alpha, A, lda, B, B16, ldb, beta, C,
                       ldc);
}

int tcnla_sgemm_ex(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                   tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                   int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
                   tcnla_info_t *info) {
    if (!h) return -1;
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    const int st = tn_sgemm(&cl, method, transa, transb, m, n, k, alpha, A, lda, B, NULL, ldb,
                            beta, C, ldc);
    tn_call_info(&cl, info);
    return st;
}

int tcnla_sgemm(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    return tcnla_sgemm_ex(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                          NULL);
}

int tcnla_shgemm_ex(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                    tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *A, int64_t lda, const uint16_t *B, int64_t ldb, float beta,
                    float *C, int64_t ldc, tcnla_info_t *info) {
    if (!h) return -1;
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    const int st = tn_sgemm(&cl, method, transa, transb, m, n, k, alpha, A, lda, NULL, B, ldb,
                            beta, C, ldc);
    tn_call_info(&cl, info);
    return st;
}

int tcnla_shgemm(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                 tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                 int64_t lda, const uint16_t *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    return tcnla_shgemm_ex(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                           ldc, NULL);
}

int tn_trust(tn_call_t *cl, const float *A, int64_t ld, int64_t rows, int64_t cols,
             const tcnla_gemm_method_t *meths, int nm) {
    return cl->h->ops->trust(cl, A, ld, rows, cols, meths, nm);
}

int tn_gemm_trusting(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, int64_t m,
                     int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                     const uint16_t *B16, int64_t ldb, float *C, int64_t ldc,
                     const tcnla_gemm_method_t *meths, int nm, int *done) {
    *done = 0;
    cl->info.path = 0;
    const int st = cl->h->ops->gemm_trusting(cl, method, ta, m, n, k, A, lda, B, B16, ldb, C, ldc,
                                             meths, nm, done);
    if (st == TCNLA_SUCCESS && *done == 1) {
        cl->info.method = method;
        tn_call_count(cl, method);
    }
    return st;
}

int tn_trust_settle(tn_call_t *cl, int *done) {
    *done = 1;
    if (!cl->late_trust.pending) return TCNLA_SUCCESS;
    const int st = cl->h->ops->trust_settle(cl, done);
    cl->late_trust.pending = 0;
    if (st == TCNLA_SUCCESS && *done) tn_call_count(cl, cl->late_trust.method);
    return st;
}

void tn_untrust(tn_call_t *cl) {
    memset(&cl->trust, 0, sizeof cl->trust);
    cl->f16_lo = cl->f16_hi = 0;
    cl->basis_lo = cl->basis_hi = 0;
}

void tn_trust_f16(tn_call_t *cl, const uint16_t *X, size_t count) {
    cl->f16_lo = (uintptr_t)X;
    cl->f16_hi = X ? (uintptr_t)(X + count) : 0;
}

void tn_trust_basis(tn_call_t *cl, const float *X, size_t count) {
    cl->basis_lo = (uintptr_t)X;
    cl->basis_hi = X ? (uintptr_t)(X + count) : 0;
}

void tn_bounded_begin(tn_call_t *cl) { cl->bounded++; }

void tn_bounded_end(tn_call_t *cl) { cl->bounded--; }

/* Strided batches (internal; declared in src/core/internal.h). */
int tn_sgemm_batched(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t transa,
                     tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *A, int64_t lda, int64_t sa, const float *B, const uint16_t *B16,
                     int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                     int64_t batch, int reduce) {
    tcnla_handle_t h = cl->h;
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
        cl->info.method = mth;
        return TCNLA_SUCCESS;
    }
    if (batch == 1) reduce = 0;
    if (batch > 1) {
        cl->info.method = mth;
        cl->info.path = 0;
        st = h->ops->gemm_batched(cl, mth, transa, transb, m, n, k, alpha, A, lda, sa, B, B16,
                                  ldb, sb, beta, C, ldc, sc, batch, reduce);
        if (st != TN_BATCH_LOOP) {
            if (st == TCNLA_SUCCESS)
                for (int64_t t = 0; t < batch; t++) tn_call_count(cl, mth);
            return st;
        }
    }
    /* product by product: what the backend did not take in one go */
    for (int64_t t = 0; t < batch; t++) {
        st = gemm_common(cl, mth, transa, transb, m, n, k, alpha, A + t * sa, lda,
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
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    return tn_sgemm_batched(&cl, method, transa, transb, m, n, k, alpha, A, lda, strideA, B, NULL,
                            ldb, strideB, beta, C, ldc, strideC, batch, 0);
}

int tcnla_dgemm_ex(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                   tcnla_op_t transb, int64_t m, int64_t n, int64_t k, double alpha,
                   const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                   double *C, int64_t ldc, tcnla_info_t *info) {
    int st = tn_check_gemm_args(h, transa, transb, m, n, k, A, lda, B, ldb, C, ldc);
    if (st) return st;
    if (method == TCNLA_GEMM_DEFAULT) method = TCNLA_GEMM_NATIVE_FP64;
    if (method != TCNLA_GEMM_NATIVE_FP64 && method != TCNLA_GEMM_OZAKI_FP16 &&
        method != TCNLA_GEMM_OZAKI_INT8)
        return -2;
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    cl.info.method = method;
    if (m > 0 && n > 0) {
        st = tn_ozaki_run(&cl, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                          ldc, 64);
        if (st == TCNLA_SUCCESS) tn_call_count(&cl, method);
    }
    tn_call_info(&cl, info);
    return st;
}

int tcnla_dgemm(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t transa,
                tcnla_op_t transb, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    return tcnla_dgemm_ex(h, method, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                          NULL);
}
