/* Randomized low-rank approximation [Baboulin et al. 2024]: Algorithm 1 with the
 * tensor-core GEMM variants of Algorithm 4, iterative refinement
 * (Algorithm 5: a rank-2k pass on E = A - X1 Y1^T, output rank 3k), and a
 * recompression of the refined rank-3k result back to rank k (the paper's
 * open perspective): X = Qx Rx, Y = Qy Ry, Rx Ry^T = U S V^T,
 * X <- Qx U_k S_k, Y <- Qy V_k. Written over the public entry points. */
#include "core/internal.h"
#include "dist/dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tcnla_lra_opts_t tcnla_lra_opts_default(void) {
    tcnla_lra_opts_t o;
    memset(&o, 0, sizeof o);
    o.oversampling = 10;
    o.tgemm = TCNLA_TGEMM_16_32;
    o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
    o.orth = TCNLA_ORTH_CHOLQR_FP64;
    o.on_breakdown = TCNLA_BREAKDOWN_RETRY;
    o.refine = 1;
    o.recompress = 0;
    o.seed = 1;
    return o;
}

int64_t tcnla_lra_out_rank(const tcnla_lra_opts_t *o) {
    if (!o) return 0;
    return (o->refine && !o->recompress) ? 3 * o->rank : o->rank;
}

#define TRY(x)                                                                                 \
    do {                                                                                       \
        if ((st = (x)) != TCNLA_SUCCESS) goto out;                                             \
    } while (0)

/* X (m x k) = Q U_k, Y (n x k) = Qw V_k S_k from Q (m x l, orthonormal) and
 * W = A^T Q (n x l): the best rank-k approximation of Q W^T. W is
 * overwritten by Qw (W = Qw Rw, Rw^T = U S V^T). */
static int truncate_svd(tn_call_t *cl, const tcnla_lra_opts_t *o, int64_t k, int64_t l,
                        int64_t m, int64_t n, const float *Q, float *W, float *X, int64_t ldx,
                        float *Y, int64_t ldy) {
    tcnla_handle_t h = cl->h;
    float *R = NULL, *Sm = NULL;
    int st;
    TRY(tn_scratch_malloc(h, (void **)&R, sizeof(float) * (size_t)(l * l)));
    TRY(tn_scratch_malloc(h, (void **)&Sm, sizeof(float) * (size_t)(2 * l * k)));
    TRY(tn_orthonormalize(cl, o->orth, o->on_breakdown, n, l, W, n, R, l, NULL));
    TRY(tn_small_svd_t(h, l, k, R, Sm, Sm + l * k, NULL, 1)); /* U_k, V_k S_k */
    TRY(tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, k, l, 1.0f, Q, m, Sm, NULL, l,
                    0.0f, X, ldx));
    TRY(tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, n, k, l, 1.0f, W, n,
                    Sm + l * k, NULL, l, 0.0f, Y, ldy));
out:
    tn_scratch_free(h, R);
    tn_scratch_free(h, Sm);
    return st;
}

/* One pass of randLRA at rank k: X (m x k), Y (n x k); Om is its Gaussian
 * Omega (n x (k + p), ld n; FP16 bits for 16|16 and 16|32, else FP32), drawn
 * by the caller. A16 is A rounded to
 * FP16 and stored so (16|16 and 16|32; ld m), else NULL: those variants
 * multiply FP16 storage directly (tn_gemm_f16), with Omega drawn in FP16
 * and Q converted once, as Algorithm 4 has it. With p == 0 this is seed
 * 001's Algorithm 1/4 exactly (X, Y = the first k columns of Q and A^T Q).
 * With p > 0, taking the first k columns would throw the oversampling away
 * (QR is column-sequential: Q(:, 1:k) depends on the first k samples only),
 * so the rank-k truncation is done through the SVD of the l x l core
 * instead. */
static int lra_pass(tn_call_t *cl, const tcnla_lra_opts_t *o, const void *Om, int64_t k,
                    int64_t m, int64_t n, const float *A, int64_t lda, const uint16_t *A16,
                    float *X, int64_t ldx, float *Y, int64_t ldy) {
    tcnla_handle_t h = cl->h;
    const int64_t l = k + o->oversampling;
    const tcnla_op_t N = TCNLA_OP_N, T = TCNLA_OP_T;
    const int explicit16 = o->tgemm == TCNLA_TGEMM_16_16 || o->tgemm == TCNLA_TGEMM_16_32;
    const tcnla_gemm_method_t g = o->tgemm == TCNLA_TGEMM_NONE ? o->gemm_method : TCNLA_GEMM_FP16;
    /* with l == k, Q and A^T Q are X and Y themselves (no copies) */
    const int direct = l == k;
    float *B = direct ? X : NULL, *Yf = direct ? Y : NULL;
    const int64_t ldb = direct ? ldx : m, ldf = direct ? ldy : n;
    uint16_t *Q16 = NULL;
    int st;
    if (!direct) {
        TRY(tn_scratch_malloc(h, (void **)&B, sizeof(float) * (size_t)(m * l)));
        TRY(tn_scratch_malloc(h, (void **)&Yf, sizeof(float) * (size_t)(n * l)));
    }
    if (explicit16) {
        /* Omega16, A16 Omega16, Q16 = fp16(Q), A16^T Q16 (lines 1-6) */
        TRY(tn_scratch_malloc(h, (void **)&Q16, 2 * (size_t)(m * l)));
        TRY(tn_gemm_f16(cl, N, N, m, l, n, 1.0f, A16, m, (const uint16_t *)Om, n, 0.0f, B, ldb));
        if (o->tgemm == TCNLA_TGEMM_16_16) TRY(tn_round_inplace(h, TCNLA_FMT_FP16, m, l, B, ldb));
        /* Q16, and its values in B (kept for X) */
        TRY(tn_orthonormalize_dist(cl, o->orth, o->on_breakdown, m, l, B, ldb, NULL, 0, NULL, Q16,
                                   m));
        TRY(tn_gemm_f16(cl, T, N, n, l, m, 1.0f, A16, m, Q16, m, 0.0f, Yf, ldf));
    } else {
        /* Omega in FP32 (for 32|32 the FP16 method rounds it) */
        TRY(tn_sgemm(cl, g, N, N, m, l, n, 1.0f, A, lda, (const float *)Om, NULL, n, 0.0f, B, ldb));
        TRY(tn_orthonormalize_dist(cl, o->orth, o->on_breakdown, m, l, B, ldb, NULL, 0, NULL, NULL,
                                   0));
        TRY(tn_sgemm(cl, g, T, N, n, l, m, 1.0f, A, lda, B, NULL, ldb, 0.0f, Yf, ldf));
    }
    TRY(tn_dist_sum_cols(cl, Yf, n, l, ldf)); /* A^T Q over the ranks' rows */
    if (o->tgemm == TCNLA_TGEMM_16_16) TRY(tn_round_inplace(h, TCNLA_FMT_FP16, n, l, Yf, ldf));
    if (!direct) TRY(truncate_svd(cl, o, k, l, m, n, B, Yf, X, ldx, Y, ldy));
    if (o->tgemm != TCNLA_TGEMM_NONE) {
        /* the factors in FP16 (Algorithm 4 lines 7-8): for 32|32 too, so that
         * the refinement's E = A - X Y^T (whose GEMM rounds X and Y to FP16)
         * is the error of the factors actually returned. (Without the
         * truncation, 16|16 and 16|32 rounded X = Q and 16|16 Y already.) */
        if (!(direct && explicit16)) TRY(tn_round_inplace(h, TCNLA_FMT_FP16, m, k, X, ldx));
        if (!(direct && o->tgemm == TCNLA_TGEMM_16_16))
            TRY(tn_round_inplace(h, TCNLA_FMT_FP16, n, k, Y, ldy));
    }
out:
    if (!direct) {
        tn_scratch_free(h, B);
        tn_scratch_free(h, Yf);
    }
    tn_scratch_free(h, Q16);
    return st;
}

/* Declared in src/core/internal.h: D16 = fp16(ascale A - X Y^T). The
 * backend's fused kernel where it has one (on a GPU: X and Y copied to FP16
 * once, A read once, no FP32 E); else column slabs of about 16 MiB of FP32
 * product, each an FP16 product and an addition: P = -(X Y^T) / ascale
 * (exact: ascale is a power of two), A + P in FP32, then fp16(ascale (A +
 * P)), which is fp16(fl(ascale A - X Y^T)) since scaling by a power of two
 * commutes with the rounding. */
int tn_lowrank_residual16(tn_call_t *cl, int64_t m, int64_t n, int64_t k, const float *A,
                          int64_t lda, const float *X, int64_t ldx, const float *Y, int64_t ldy,
                          uint16_t *D16, int64_t ldd, int64_t slab_cols, float ascale) {
    tcnla_handle_t h = cl->h;
    uint16_t *X16 = NULL, *Y16 = NULL;
    float *P = NULL;
    const int64_t ldx16 = (m + 7) / 8 * 8, ldy16 = (n + 7) / 8 * 8;
    int st;
    if (slab_cols <= 0) {
        st = h->ops->lowrank_residual16(h, m, n, k, A, lda, X, ldx, Y, ldy, D16, ldd, ascale);
        if (st != TN_NOT_TAKEN) return st;
    }
    TRY(tn_scratch_malloc(h, (void **)&X16, 2 * (size_t)(ldx16 * k)));
    TRY(tn_scratch_malloc(h, (void **)&Y16, 2 * (size_t)(ldy16 * k)));
    TRY(tn_to_f16(h, m, k, X, ldx, X16, ldx16));
    TRY(tn_to_f16(h, n, k, Y, ldy, Y16, ldy16));
    int64_t nb = slab_cols > 0 ? slab_cols : ((int64_t)4 << 20) / m;
    if (nb < 1) nb = 1;
    if (nb > n) nb = n;
    TRY(tn_scratch_malloc(h, (void **)&P, sizeof(float) * (size_t)(m * nb)));
    for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t jb = TN_MIN(nb, n - j0);
        TRY(tn_gemm_f16(cl, TCNLA_OP_N, TCNLA_OP_T, m, jb, k, -1.0f / ascale, X16, ldx16, Y16 + j0,
                        ldy16, 0.0f, P, m));
        if (ascale == 1.0f) {
            TRY(tn_add_matrix(h, m, jb, A + j0 * lda, lda, P, m, NULL, D16 + j0 * ldd, ldd));
        } else {
            TRY(tn_add_matrix(h, m, jb, A + j0 * lda, lda, P, m, P, NULL, m));
            TRY(tn_to_f16_scaled(h, m, jb, P, m, ascale, D16 + j0 * ldd, ldd, NULL));
        }
    }
out:
    tn_scratch_free(h, X16);
    tn_scratch_free(h, Y16);
    tn_scratch_free(h, P);
    return st;
}

/* The power of two that the FP16 storage of A is taken at (16|16, 16|32):
 * 1 where max |A| lies in [2^-2, 2^(t+1)), else 2^(t - e) for max |A| in
 * [2^e, 2^(e+1)), so that the scaled maximum lies in [2^t, 2^(t+1)) with
 * 2^(t+1) sqrt(max(m, n)) <= 2^15: A's elements are FP16 numbers down to
 * 2^-14, 2^-(14+t) of the largest, and the products A16^T Q16 (entries up to
 * sqrt(m) max |A|) stay inside FP16's range for 16|16's FP16 C. Scaling by
 * a power of two is exact: the factors are those of A scaled, unscaled at
 * the end, so that the scale of the input never matters. 1 for A holding
 * NaN or Inf, or all zeros. */
static float storage_scale(float amax, int64_t m, int64_t n) {
    if (!(amax > 0.0f) || !isfinite(amax)) return 1.0f;
    int e2 = 0, er = 0;
    frexpf(amax, &e2); /* amax in [2^(e2-1), 2^e2) */
    frexp(sqrt((double)(m > n ? m : n)), &er); /* sqrt(max(m, n)) < 2^er */
    const int t = 14 - er, e = e2 - 1;
    if (e >= -2 && e <= t) return 1.0f;
    return ldexpf(1.0f, t - e);
}

/* Xr (m x r), Yr (n x r) -> rank k: X <- Qx U_k S_k, Y <- Qy V_k. */
static int recompress(tn_call_t *cl, const tcnla_lra_opts_t *o, int64_t r, int64_t k,
                      int64_t m, int64_t n, const float *Xr, const float *Yr, float *X,
                      int64_t ldx, float *Y, int64_t ldy) {
    tcnla_handle_t h = cl->h;
    float *Qx = NULL, *Qy = NULL, *Rx = NULL, *Ry = NULL, *Sm = NULL;
    float *hx = malloc(sizeof(float) * (size_t)(2 * r * r));
    double *M = malloc(sizeof(double) * (size_t)(4 * r * r + r));
    int st = TCNLA_ERR_ALLOC;
    if (!hx || !M) goto out;
    TRY(tn_scratch_malloc(h, (void **)&Qx, sizeof(float) * (size_t)(m * r)));
    TRY(tn_scratch_malloc(h, (void **)&Qy, sizeof(float) * (size_t)(n * r)));
    TRY(tn_scratch_malloc(h, (void **)&Rx, sizeof(float) * (size_t)(r * r)));
    TRY(tn_scratch_malloc(h, (void **)&Ry, sizeof(float) * (size_t)(r * r)));
    TRY(tn_scratch_malloc(h, (void **)&Sm, sizeof(float) * (size_t)(r * r)));
    TRY(tn_copy_matrix(h, m, r, Xr, m, Qx, m));
    TRY(tn_copy_matrix(h, n, r, Yr, n, Qy, n));
    /* Householder: the factors' columns may be (nearly) dependent */
    TRY(tn_orthonormalize(cl, TCNLA_ORTH_HOUSEHOLDER, o->on_breakdown, m, r, Qx, m, Rx, r, NULL));
    TRY(tn_orthonormalize(cl, TCNLA_ORTH_HOUSEHOLDER, o->on_breakdown, n, r, Qy, n, Ry, r, NULL));
    TRY(tcnla_memcpy(h, hx, Rx, sizeof(float) * (size_t)(r * r), TCNLA_MEMCPY_HANDLE_TO_HOST));
    TRY(tcnla_memcpy(h, hx + r * r, Ry, sizeof(float) * (size_t)(r * r), TCNLA_MEMCPY_HANDLE_TO_HOST));
    {
        double *C = M, *U = M + r * r, *VT = U + r * r, *S = VT + r * r;
        for (int64_t j = 0; j < r; j++) /* C = Rx Ry^T (both upper triangular) */
            for (int64_t i = 0; i < r; i++) {
                double s = 0;
                for (int64_t p = TN_MAX(i, j); p < r; p++)
                    s += (double)hx[i + p * r] * (double)hx[r * r + j + p * r];
                C[i + j * r] = s;
            }
        TRY(tn_small_svd((int)r, C, U, S, VT));
        for (int64_t j = 0; j < k; j++) /* U_k S_k (r x k) */
            for (int64_t i = 0; i < r; i++) hx[i + j * r] = (float)(U[i + j * r] * S[j]);
        TRY(tcnla_memcpy(h, Sm, hx, sizeof(float) * (size_t)(r * k), TCNLA_MEMCPY_HOST_TO_HANDLE));
        TRY(tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, k, r, 1.0f, Qx, m, Sm, NULL,
                        r, 0.0f, X, ldx));
        for (int64_t j = 0; j < k; j++) /* V_k = VT(1:k, :)^T (r x k) */
            for (int64_t i = 0; i < r; i++) hx[i + j * r] = (float)VT[j + i * r];
        TRY(tcnla_memcpy(h, Sm, hx, sizeof(float) * (size_t)(r * k), TCNLA_MEMCPY_HOST_TO_HANDLE));
        TRY(tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, n, k, r, 1.0f, Qy, n, Sm, NULL,
                        r, 0.0f, Y, ldy));
    }
out:
    tn_scratch_free(h, Qx);
    tn_scratch_free(h, Qy);
    tn_scratch_free(h, Rx);
    tn_scratch_free(h, Ry);
    tn_scratch_free(h, Sm);
    free(hx);
    free(M);
    return st;
}

int tn_lra_check_opts(const tcnla_lra_opts_t *o, int64_t m, int64_t n) {
    if (!o || o->rank < 1 || o->oversampling < 0 || (int)o->tgemm < 0 ||
        (int)o->tgemm > (int)TCNLA_TGEMM_16_32 || (int)o->gemm_method <= 0 ||
        (int)o->gemm_method >= (int)TCNLA_GEMM_METHOD_COUNT ||
        o->gemm_method == TCNLA_GEMM_SHGEMM_FP16 || o->gemm_method == TCNLA_GEMM_SHGEMM_TF32 ||
        (int)o->orth < 0 || (int)o->orth > (int)TCNLA_ORTH_CHOLQR2_FP64 ||
        (o->refine != 0 && o->refine != 1) || (o->recompress != 0 && o->recompress != 1))
        return -2;
    /* (2k when refining) + p <= min(m, n), found without a signed overflow */
    const int64_t k = o->rank, mn = m < n ? m : n;
    if (o->oversampling > mn || k > (mn - o->oversampling) / (o->refine ? 2 : 1)) return -2;
    return 0;
}

int tcnla_lra(tcnla_handle_t h, const tcnla_lra_opts_t *o, int64_t m, int64_t n, const float *A,
              int64_t lda, float *X, int64_t ldx, float *Y, int64_t ldy) {
    if (!h) return -1;
    if (!o) return -2;
    if (m < 1) return -3;
    if (n < 1) return -4;
    int st = tn_lra_check_opts(o, m, n);
    if (st) return st;
    if (!A) return -5;
    if (lda < m) return -6;
    if (!X) return -7;
    if (ldx < m) return -8;
    if (!Y) return -9;
    if (ldy < n) return -10;
    TN_GUARD(h);
    tn_call_t call;
    tn_call_init(&call, h);
    return tn_lra_run(&call, o, m, m, n, A, lda, X, ldx, Y, ldy);
}

int tn_lra_run(tn_call_t *cl, const tcnla_lra_opts_t *o, int64_t m, int64_t mg, int64_t n,
               const float *A, int64_t lda, float *X, int64_t ldx, float *Y, int64_t ldy) {
    tcnla_handle_t h = cl->h;
    const int64_t k = o->rank;
    cl->range_fallback = 1; /* finite input never fails for want of FP16's range */
    const int explicit16 = o->tgemm == TCNLA_TGEMM_16_16 || o->tgemm == TCNLA_TGEMM_16_32;
    const tcnla_gemm_method_t g = o->tgemm == TCNLA_TGEMM_NONE ? o->gemm_method : TCNLA_GEMM_FP16;
    uint16_t *A16 = NULL;
    float *E = NULL, *Xr = NULL, *Yr = NULL;
    void *Om[2] = {NULL, NULL};
    int st = TCNLA_SUCCESS;
    /* (its products with n = 2k + p >= 512 run 0.6-1.2 ms slower in all on
     * Hopper's pre-split path, on top of its workspace: not taken here) */
    tn_bounded_begin(cl);
    /* refined and recompressed: the rank-3k factors live in a workspace, the
     * caller's X and Y receive k columns */
    float *Xo = X, *Yo = Y;
    int64_t ldxo = ldx, ldyo = ldy;
    if (o->refine && o->recompress) {
        TRY(tn_scratch_malloc(h, (void **)&Xr, sizeof(float) * (size_t)(m * 3 * k)));
        TRY(tn_scratch_malloc(h, (void **)&Yr, sizeof(float) * (size_t)(n * 3 * k)));
        Xo = Xr, Yo = Yr, ldxo = m, ldyo = n;
    }
    /* both passes' Omega (random streams 0 and 1), drawn on a side stream
     * while A is converted (the fills are FP64 arithmetic, the conversion
     * memory traffic: H200, k = 256, 86 us of fills hidden) */
    for (int pass = 0; pass < (o->refine ? 2 : 1); pass++)
        TRY(tn_scratch_malloc(h, &Om[pass], (explicit16 ? 2 : 4) *
                                                (size_t)(n * ((pass + 1) * k + o->oversampling))));
    TRY(tn_side_begin(cl));
    for (int pass = 0; pass < (o->refine ? 2 : 1) && st == TCNLA_SUCCESS; pass++) {
        const int64_t l = (pass + 1) * k + o->oversampling;
        st = tn_random_fill(cl, TCNLA_RAND_GAUSSIAN, explicit16 ? TCNLA_FMT_FP16 : TCNLA_FMT_FP32,
                            explicit16, o->seed, (uint64_t)pass, n, l, Om[pass], n);
    }
    {
        const int st2 = tn_side_end(cl);
        if (st == TCNLA_SUCCESS) st = st2;
        if (st != TCNLA_SUCCESS) goto out;
    }
    float ascale = 1.0f; /* the FP16 storage's power of two (storage_scale) */
    if (explicit16) { /* A16 = fp16(A), converted once and reused (Algorithm 4 line 2) */
        float amax = 0.0f;
        TRY(tn_scratch_malloc(h, (void **)&A16, 2 * (size_t)(m * n)));
        TRY(tn_to_f16_scaled(h, m, n, A, lda, 1.0f, A16, m, &amax));
        if (cl->comm) { /* the largest over the ranks (NaN: any rank's) */
            double v = isnan(amax) ? INFINITY : (double)amax;
            TRY(tn_dist_reduce_host(cl, &v, 1, TN_OP_MAX));
            amax = isinf(v) ? NAN : (float)v;
        }
        ascale = storage_scale(amax, mg, n);
        if (ascale != 1.0f) TRY(tn_to_f16_scaled(h, m, n, A, lda, ascale, A16, m, NULL));
    }
    TRY(tn_side_join(cl));
    TRY(lra_pass(cl, o, Om[0], k, m, n, A, lda, A16, Xo, ldxo, Yo, ldyo));
    if (o->refine) {
        /* E = A - X1 Y1^T in FP32 (Algorithm 5 line 2): the product
         * (exact negation), then one RN addition of A. For 16|16 and 16|32,
         * which read only fp16(E), that goes in column slabs straight where
         * fp16(A) was (tn_lowrank_residual16: no FP32 E, A read once);
         * otherwise into an FP32 E (beta = 0). */
        if (explicit16) {
            TRY(tn_lowrank_residual16(cl, m, n, k, A, lda, Xo, ldxo, Yo, ldyo, A16, m, 0,
                                      ascale));
        } else {
            TRY(tn_scratch_malloc(h, (void **)&E, sizeof(float) * (size_t)(m * n)));
            TRY(tn_sgemm(cl, g, TCNLA_OP_N, TCNLA_OP_T, m, n, k, -1.0f, Xo, ldxo, Yo, NULL, ldyo,
                            0.0f, E, m));
            TRY(tn_add_matrix(h, m, n, A, lda, E, m, E, NULL, m));
        }
        /* (lra_pass reads E only without FP16 storage) */
        TRY(lra_pass(cl, o, Om[1], 2 * k, m, n, E, m, A16, Xo + k * ldxo, ldxo, Yo + k * ldyo,
                     ldyo));
        if (o->recompress) TRY(recompress(cl, o, 3 * k, k, m, n, Xr, Yr, X, ldx, Y, ldy));
    }
    /* the factors of ascale A: Y = (A^T Q) scaled, or, recompressed, X
     * (Qx U_k S_k) */
    if (ascale != 1.0f) {
        const int64_t r = tcnla_lra_out_rank(o);
        if (o->refine && o->recompress) TRY(tn_scale_matrix(h, m, r, 1.0f / ascale, X, ldx));
        else TRY(tn_scale_matrix(h, n, r, 1.0f / ascale, Y, ldy));
    }
out:
    {
        const int st2 = tn_side_join(cl); /* (before Omega's memory goes back) */
        if (st == TCNLA_SUCCESS) st = st2;
    }
    tn_bounded_end(cl);
    tn_scratch_free(h, Om[0]);
    tn_scratch_free(h, Om[1]);
    tn_scratch_free(h, A16);
    tn_scratch_free(h, E);
    tn_scratch_free(h, Xr);
    tn_scratch_free(h, Yr);
    st = tn_dist_end(cl, st); /* (on several ranks: the status they agree on) */
    tn_call_info(cl, o->info);
    return st;
}
