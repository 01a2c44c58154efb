/* tcnla_lowrank_residual: |A - U diag(S) VT|_F^2 and |A|_F^2 without a copy
 * of A, by column slabs: D = A(:, slab) - U (diag(S) VT(:, slab)) in FP32
 * (NATIVE_FP32 products), then the backend's FP64 sum of squares. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

#define RESIDUAL_SLAB 1024 /* columns per slab */

int tcnla_lowrank_residual(tcnla_handle_t h, int64_t m, int64_t n, int64_t k, const float *A,
                           int64_t lda, const float *U, int64_t ldu, const float *S,
                           const float *VT, int64_t ldvt, double *diff2, double *a2) {
    if (!h) return -1;
    if (m < 1) return -2;
    if (n < 1) return -3;
    if (k < 0) return -4;
    if (!A) return -5;
    if (lda < m) return -6;
    if (!U && k > 0) return -7;
    if (ldu < m) return -8;
    if (!S && k > 0) return -9;
    if (!VT && k > 0) return -10;
    if (ldvt < TN_MAX(1, k)) return -11;
    if (!diff2) return -12;
    if (!a2) return -13;
    TN_GUARD(h);
    tn_call_t call, *cl = &call;
    tn_call_init(cl, h);
    const int64_t nb = TN_MIN(n, RESIDUAL_SLAB);
    float *D = NULL, *SV = NULL, *Dg = NULL;
    float *hs = NULL;
    double d2 = 0.0, s2 = 0.0;
    int st = tn_scratch_malloc(h, (void **)&D, sizeof(float) * (size_t)m * (size_t)nb);
    if (!st && k > 0) {
        /* diag(S), k x k, from the host */
        hs = calloc((size_t)k * (size_t)k + (size_t)k, sizeof(float));
        st = hs ? TCNLA_SUCCESS : TCNLA_ERR_ALLOC;
        if (!st) st = tcnla_memcpy(h, hs, S, sizeof(float) * (size_t)k, TCNLA_MEMCPY_HANDLE_TO_HOST);
        if (!st) {
            float *dg = hs + k;
            for (int64_t i = 0; i < k; i++) dg[i + i * k] = hs[i];
            st = tn_scratch_malloc(h, (void **)&Dg, sizeof(float) * (size_t)k * (size_t)k);
            if (!st)
                st = tcnla_memcpy(h, Dg, dg, sizeof(float) * (size_t)k * (size_t)k,
                                  TCNLA_MEMCPY_HOST_TO_HANDLE);
        }
        if (!st) st = tn_scratch_malloc(h, (void **)&SV, sizeof(float) * (size_t)k * (size_t)nb);
    }
    for (int64_t j0 = 0; j0 < n && !st; j0 += nb) {
        const int64_t jb = TN_MIN(nb, n - j0);
        double t = 0.0;
        st = h->ops->sumsq(h, m, jb, A + j0 * lda, lda, &t);
        s2 += t;
        if (!st) st = tn_copy_matrix(h, m, jb, A + j0 * lda, lda, D, m);
        if (!st && k > 0)
            st = tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, k, jb, k, 1.0f, Dg, k,
                          VT + j0 * ldvt, NULL, ldvt, 0.0f, SV, k);
        if (!st && k > 0)
            st = tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, jb, k, -1.0f, U,
                          ldu, SV, NULL, k, 1.0f, D, m);
        if (!st) st = h->ops->sumsq(h, m, jb, D, m, &t);
        d2 += t;
    }
    tn_scratch_free(h, D);
    tn_scratch_free(h, SV);
    tn_scratch_free(h, Dg);
    free(hs);
    if (!st) *diff2 = d2, *a2 = s2;
    return st;
}
