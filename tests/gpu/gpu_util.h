/* Helpers of the GPU tests (tests/gpu, `make test-gpu`): inputs live on
 * the host; gt_gemm() runs a GEMM on either backend, moving the operands
 * to the handle's memory and C back. */
#ifndef TCNLA_GPU_UTIL_H
#define TCNLA_GPU_UTIL_H
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A CUDA handle, or NULL when this build or machine has no GPU. */
static inline tcnla_handle_t gt_gpu(void) {
    int compiled = 0, count = 0;
    tcnla_cuda_available(&compiled, &count);
    if (!compiled || count == 0) return NULL;
    tcnla_handle_t h = NULL;
    if (tcnla_create(&h, TCNLA_BACKEND_CUDA) != TCNLA_SUCCESS) return NULL;
    return h;
}
/* n floats of the handle's memory, holding x (host) where x is not NULL;
 * NULL where the allocation fails. */
static inline float *gt_to_dev(tcnla_handle_t h, const float *x, size_t n) {
    float *d = NULL;
    if (tcnla_malloc(h, (void **)&d, n * sizeof(float))) return NULL;
    if (x) tcnla_memcpy(h, d, x, n * sizeof(float), TCNLA_MEMCPY_HOST_TO_HANDLE);
    return d;
}
/* n floats of the handle's memory d to the host's x. */
static inline void gt_to_host(tcnla_handle_t h, float *x, const float *d, size_t n) {
    tcnla_memcpy(h, x, d, n * sizeof(float), TCNLA_MEMCPY_HANDLE_TO_HOST);
}
/* In a test (test.h's SKIP): skips it where h is NULL (no GPU). */
#define NEED_GPU(h)                                                                           \
    do {                                                                                      \
        if (!(h)) SKIP("no CUDA device (or CUDA not compiled in)");                          \
    } while (0)
/* Sets one field of h's tuning (tcnla_tuning_t), e.g. GT_TUNE(g, sm90, 0)
 * for the mma.sync kernels. */
#define GT_TUNE(h, field, value)                                                              \
    do {                                                                                      \
        tcnla_tuning_t gt_t_;                                                                 \
        tcnla_get_tuning((h), &gt_t_);                                                        \
        gt_t_.field = (value);                                                                \
        tcnla_set_tuning((h), &gt_t_);                                                        \
    } while (0)

static inline tcnla_handle_t gt_cpu(void) {
    tcnla_handle_t h = NULL;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    return h;
}

/* splitmix64 stream -> uniform floats in (lo, hi) */
static inline uint64_t gt_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline void gt_uniform(uint64_t seed, float lo, float hi, int64_t n, float *x) {
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(gt_next(&s) >> 40) / 16777216.0; /* [0, 1) */
        x[i] = (float)(lo + (hi - lo) * u);
    }
}
/* exp_rand(a, b) of [Ootomo & Yokota 2021] section 4.1: exponent uniform in a .. b-1,
 * 23 random fraction bits, random sign. */
static inline void gt_exp_rand(uint64_t seed, int a, int b, int64_t n, float *x) {
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + 7;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = gt_next(&s);
        int e = a + (int)(r % (uint64_t)(b - a));
        float f = 1.0f + (float)((r >> 20) & 0x7fffff) / 8388608.0f;
        x[i] = ldexpf(((r >> 50) & 1) ? -f : f, e);
    }
}
static inline float gt_f16r(float x) {
    return tcnla_f16_to_f32(tcnla_f32_to_f16(x, TCNLA_ROUND_RN));
}

/* C = alpha op(A) op(B) + beta C on handle h with host operands (B16 used
 * instead of B when non-NULL, through tcnla_shgemm). A is arows x acols
 * with lda, etc.; `off` shifts the device copies of A and B by that many
 * elements (misaligned pointers); what ran goes to *info (may be NULL).
 * Returns the status. */
static inline int gt_gemm_info(tcnla_handle_t h, tcnla_gemm_method_t meth, tcnla_op_t ta,
                               tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                               const float *A, int64_t lda, const float *B, const uint16_t *B16,
                               int64_t ldb, float beta, float *C, int64_t ldc, int off,
                               tcnla_info_t *info) {
    tcnla_backend_t be;
    tcnla_get_backend(h, &be);
    int64_t acols = ta == TCNLA_OP_N ? k : m, bcols = tb == TCNLA_OP_N ? n : k;
    size_t abytes = sizeof(float) * (size_t)(lda * acols + off);
    size_t bes = B16 ? 2 : 4;
    size_t bbytes = bes * (size_t)(ldb * bcols + off);
    size_t cbytes = sizeof(float) * (size_t)(ldc * n);
    if (be == TCNLA_BACKEND_CPU) {
        if (B16)
            return tcnla_shgemm_ex(h, meth, ta, tb, m, n, k, alpha, A, lda, B16, ldb, beta, C, ldc,
                                   info);
        return tcnla_sgemm_ex(h, meth, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, info);
    }
    char *dA = NULL, *dB = NULL;
    float *dC = NULL;
    int st = tcnla_malloc(h, (void **)&dA, abytes);
    if (!st) st = tcnla_malloc(h, (void **)&dB, bbytes);
    if (!st) st = tcnla_malloc(h, (void **)&dC, cbytes);
    if (!st && A && lda * acols > 0)
        st = tcnla_memcpy(h, dA + sizeof(float) * (size_t)off, A, abytes - sizeof(float) * (size_t)off,
                          TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st && (B || B16) && ldb * bcols > 0)
        st = tcnla_memcpy(h, dB + bes * (size_t)off, B16 ? (const void *)B16 : (const void *)B,
                          bbytes - bes * (size_t)off, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st && cbytes) st = tcnla_memcpy(h, dC, C, cbytes, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) {
        const float *pA = A ? (const float *)(dA + sizeof(float) * (size_t)off) : NULL;
        if (B16)
            st = tcnla_shgemm_ex(h, meth, ta, tb, m, n, k, alpha, pA, lda,
                                 (const uint16_t *)(dB + bes * (size_t)off), ldb, beta, dC, ldc,
                                 info);
        else
            st = tcnla_sgemm_ex(h, meth, ta, tb, m, n, k, alpha, pA, lda,
                                B ? (const float *)(dB + bes * (size_t)off) : NULL, ldb, beta, dC,
                                ldc, info);
        int st2 = cbytes ? tcnla_memcpy(h, C, dC, cbytes, TCNLA_MEMCPY_HANDLE_TO_HOST) : 0;
        if (!st) st = st2;
    }
    tcnla_free(h, dA);
    tcnla_free(h, dB);
    tcnla_free(h, dC);
    return st;
}
static inline int gt_gemm_off(tcnla_handle_t h, tcnla_gemm_method_t meth, tcnla_op_t ta,
                              tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                              const float *A, int64_t lda, const float *B, const uint16_t *B16,
                              int64_t ldb, float beta, float *C, int64_t ldc, int off) {
    return gt_gemm_info(h, meth, ta, tb, m, n, k, alpha, A, lda, B, B16, ldb, beta, C, ldc, off,
                        NULL);
}
static inline int gt_gemm(tcnla_handle_t h, tcnla_gemm_method_t meth, tcnla_op_t ta,
                          tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float *A, int64_t lda, const float *B, const uint16_t *B16,
                          int64_t ldb, float beta, float *C, int64_t ldc) {
    return gt_gemm_off(h, meth, ta, tb, m, n, k, alpha, A, lda, B, B16, ldb, beta, C, ldc, 0);
}

/* ||X - Y||_F / ||Y||_F over an m x n block (leading dim ld); NaN when
 * either holds NaN. */
static inline double gt_rel_diff(const float *X, const float *Y, int64_t m, int64_t n,
                                 int64_t ld) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double d = (double)X[i + j * ld] - (double)Y[i + j * ld];
            num += d * d;
            den += (double)Y[i + j * ld] * (double)Y[i + j * ld];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* R = op(A) op(B) in FP64 (m x n, ld m). */
static inline void gt_ref(tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                          const float *A, int64_t lda, const float *B, int64_t ldb, double *R) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                double a = ta == TCNLA_OP_N ? A[i + p * lda] : A[p + i * lda];
                double b = tb == TCNLA_OP_N ? B[p + j * ldb] : B[j + p * ldb];
                s += a * b;
            }
            R[i + j * m] = s;
        }
    }
}
/* Relative Frobenius error of C (ld ldc) against R (ld m), [Ootomo & Yokota 2021] eq. 6. */
static inline double gt_rel_err(const float *C, int64_t ldc, const double *R, int64_t m,
                                int64_t n) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double e = (double)C[i + j * ldc] - R[i + j * m];
            num += e * e;
            den += R[i + j * m] * R[i + j * m];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
#endif
