/* GPU tests of the strided-batched GEMM (tn_sgemm_batched) on the CUDA
 * backend: the one-launch batch (src/backend/cuda/gemm_cuda.c,
 * tn_cu_tc_gemm_batched, cuBLAS strided batches for NATIVE_FP32, TF32 and
 * FP16) against the same products as separate tcnla_sgemm / tcnla_shgemm
 * calls on the same GPU (which on Hopper run the wgmma kernels, or the
 * mma.sync ones with the tuning's sm90 = 0), and RP-HOSVD built on it.
 *
 * Tolerance: both results are compared with an FP64 reference of the same
 * products; the batch may add its products in another order (one k loop
 * through all slabs, other split-K slices), so its relative error must stay
 * within a factor 2 of the separate calls' error plus sqrt(k) 2^-24 (the size
 * of an FP32 GEMM's error: cuBLAS picks other algorithms for strided
 * batches, 4.5x the separate SGEMM's error was measured on an H200):
 *     err(batched) <= 2 err(separate) + sqrt(k) 2^-24,
 * reported as the ratio err(batched) / (2 err(separate) + sqrt(k) 2^-24) <= 1.
 * Where the batch runs product by product (NaN, a range check failing,
 * misaligned strides, MARKIDIS reduces) the results are the separate
 * calls' bits. */
#include "test.h"
#include "core/internal.h"
#include "gpu/gpu_util.h"
#include "tcnla.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEED_GPU(h)                                                                           \
    do {                                                                                      \
        if (!(h)) SKIP("no CUDA device (or CUDA not compiled in)");                          \
    } while (0)

static void *dev_copy(tcnla_handle_t g, const void *x, size_t bytes) {
    void *d = NULL;
    if (tcnla_malloc(g, &d, bytes) != 0) return NULL;
    if (x) tcnla_memcpy(g, d, x, bytes, TCNLA_MEMCPY_HOST_TO_HANDLE);
    return d;
}
static void mma_only(tcnla_handle_t g, int on) { GT_TUNE(g, sm90, !on); }

typedef struct {
    int64_t m, n, k, batch;
    tcnla_op_t ta, tb;
    int reduce;
    int64_t pad;  /* extra rows of every leading dimension (then rounded up to 8) */
    int64_t gap;  /* extra elements between the matrices (0: packed) */
    int odd;      /* leading dimensions rows + 1 and gaps of 3: misaligned */
    int shared_b; /* one B for all products (stride 0) */
    int rows_b;   /* B_t = rows t k .. of one tall matrix (the projection layout) */
} bshape;

/* Runs one batch both ways on g; returns the ratio err(batched) / bound. */
static double run_batch(tcnla_handle_t g, tcnla_gemm_method_t meth, const bshape *s, int via16,
                        uint64_t seed, int *status_ok) {
    const int64_t arows = s->ta == TCNLA_OP_N ? s->m : s->k, acols = s->ta == TCNLA_OP_N ? s->k : s->m;
    const int64_t brows = s->tb == TCNLA_OP_N ? s->k : s->n, bcols = s->tb == TCNLA_OP_N ? s->n : s->k;
#define LD(r) (s->odd ? (r) + 1 : s->pad ? ((r) + s->pad + 7) / 8 * 8 : (r))
    const int64_t gap = s->odd ? 3 : s->gap;
    const int64_t lda = LD(arows), ldc = LD(s->m);
    int64_t ldb = LD(brows), sb = ldb * bcols + gap;
    if (s->rows_b) ldb = LD(s->k * s->batch), sb = s->k; /* needs tb == N */
    if (s->shared_b) sb = 0;
    const int64_t sa = lda * acols + gap, sc = ldc * s->n + gap;
#undef LD
    const int64_t na = sa * s->batch;
    const int64_t nb = s->rows_b ? ldb * bcols : (s->shared_b ? ldb * bcols : sb * s->batch);
    const int64_t nc = s->reduce ? sc : sc * s->batch;
    float *A = malloc(sizeof(float) * (size_t)na), *B = malloc(sizeof(float) * (size_t)nb);
    uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)nb);
    float *C0 = malloc(sizeof(float) * (size_t)nc), *C1 = malloc(sizeof(float) * (size_t)nc),
          *C2 = malloc(sizeof(float) * (size_t)nc);
    const int64_t nr = s->m * s->n * (s->reduce ? 1 : s->batch);
    double *R = calloc((size_t)nr, sizeof(double));
    gt_uniform(seed, -1, 1, na, A);
    gt_uniform(seed + 1, -1, 1, nb, B);
    for (int64_t i = 0; i < nb; i++) {
        B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
        if (via16) B[i] = tcnla_f16_to_f32(B16[i]); /* the reference sees the FP16 values */
    }
    gt_uniform(seed + 2, -1, 1, nc, C0);
    const float alpha = 1.0f, beta = 0.0f;
    /* FP64 reference of every product (or of their sum) */
    double *Rt = malloc(sizeof(double) * (size_t)(s->m * s->n));
    for (int64_t t = 0; t < s->batch; t++) {
        gt_ref(s->ta, s->tb, s->m, s->n, s->k, A + t * sa, lda, B + t * sb, ldb, Rt);
        double *Rd = R + (s->reduce ? 0 : t * s->m * s->n);
        for (int64_t i = 0; i < s->m * s->n; i++) Rd[i] += Rt[i];
    }
    float *dA = dev_copy(g, A, sizeof(float) * (size_t)na);
    void *dB = via16 ? dev_copy(g, B16, sizeof(uint16_t) * (size_t)nb)
                     : dev_copy(g, B, sizeof(float) * (size_t)nb);
    float *dC1 = dev_copy(g, C0, sizeof(float) * (size_t)nc);
    float *dC2 = dev_copy(g, C0, sizeof(float) * (size_t)nc);
    int st1 = 0;
    for (int64_t t = 0; t < s->batch && st1 == 0; t++) {
        float *Ct = dC1 + (s->reduce ? 0 : t * sc);
        float bt = (s->reduce && t) ? 1.0f : beta;
        st1 = via16 ? tcnla_shgemm(g, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, dA + t * sa, lda,
                                   (const uint16_t *)dB + t * sb, ldb, bt, Ct, ldc)
                    : tcnla_sgemm(g, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, dA + t * sa, lda,
                                  (const float *)dB + t * sb, ldb, bt, Ct, ldc);
    }
    tn_call_t cl;
    tn_call_init(&cl, g);
    int st2 = tn_sgemm_batched(&cl, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, dA, lda, sa,
                               via16 ? NULL : (const float *)dB,
                               via16 ? (const uint16_t *)dB : NULL, ldb, sb, beta, dC2, ldc, sc,
                               s->batch, s->reduce);
    const tcnla_gemm_method_t used = cl.info.method;
    tcnla_memcpy(g, C1, dC1, sizeof(float) * (size_t)nc, TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_memcpy(g, C2, dC2, sizeof(float) * (size_t)nc, TCNLA_MEMCPY_HANDLE_TO_HOST);
    *status_ok = st1 == 0 && st2 == 0 && used == meth;
    double num1 = 0, num2 = 0, den = 0;
    int gaps_ok = 1;
    for (int64_t t = 0; t < (s->reduce ? 1 : s->batch); t++)
        for (int64_t j = 0; j < s->n; j++)
            for (int64_t i = 0; i < ldc; i++) {
                int64_t e = t * sc + i + j * ldc;
                if (i >= s->m) {
                    gaps_ok &= memcmp(&C2[e], &C0[e], 4) == 0;
                    continue;
                }
                double r = R[t * s->m * s->n + i + j * s->m];
                num1 += (C1[e] - r) * (C1[e] - r);
                num2 += (C2[e] - r) * (C2[e] - r);
                den += r * r;
            }
    for (int64_t t = 0; t < (s->reduce ? 1 : s->batch); t++)
        for (int64_t e = t * sc + ldc * s->n; e < (t + 1) * sc && e < nc; e++)
            gaps_ok &= memcmp(&C2[e], &C0[e], 4) == 0;
    if (!gaps_ok) *status_ok = 0;
    const double e1 = sqrt(num1 / den), e2 = sqrt(num2 / den);
    const double ratio = e2 / (2 * e1 + sqrt((double)s->k) * 0x1p-24);
    if (!*status_ok || !(ratio <= 1))
        printf("    %s m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d reduce=%d b16=%d: status %d %d, "
               "ran as %s, gaps %s, err separate %.3e batched %.3e (ratio %.2f)\n",
               tcnla_gemm_method_name(meth), (long long)s->m, (long long)s->n, (long long)s->k,
               (long long)s->batch, s->ta, s->tb, s->reduce, via16, st1, st2,
               tcnla_gemm_method_name(used), gaps_ok ? "kept" : "WRITTEN", e1, e2, ratio);
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dC1), tcnla_free(g, dC2);
    free(A), free(B), free(B16), free(C0), free(C1), free(C2), free(R), free(Rt);
    return ratio;
}

static const tcnla_gemm_method_t b_methods[] = {
    TCNLA_GEMM_NATIVE_FP32,   TCNLA_GEMM_TF32,        TCNLA_GEMM_FP16,
    TCNLA_GEMM_TCEC_TF32,     TCNLA_GEMM_TCEC_FP16,   TCNLA_GEMM_MARKIDIS_FP16,
    TCNLA_GEMM_SHGEMM_FP16,   TCNLA_GEMM_SHGEMM_TF32};
#define NBM ((int)(sizeof b_methods / sizeof b_methods[0]))

TEST(gpu_batched_matches_separate_calls) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    static const bshape shapes[] = {
        /* RP-HOSVD's middle-mode projection: W = sum_t M_t^T Omega_t (on
         * Hopper one wgmma product through a 3-D map of A when k % 32 == 0;
         * the second with padded leading dimensions and gaps) */
        {256, 64, 256, 40, TCNLA_OP_T, TCNLA_OP_N, 1, 0, 0, 0, 0, 1},
        {96, 40, 64, 5, TCNLA_OP_T, TCNLA_OP_N, 1, 8, 16, 0, 0, 1},
        /* its middle-mode product: Out_t = In_t Q, one Q */
        {64, 32, 256, 48, TCNLA_OP_N, TCNLA_OP_N, 0, 0, 0, 0, 1, 0},
        /* tails: k not a multiple of the k-tile (each slab's tail), m, n
         * partial tiles, padding and gaps (multiples of 8 elements) */
        {130, 70, 45, 5, TCNLA_OP_N, TCNLA_OP_T, 1, 3, 8, 0, 0, 0},
        {130, 70, 45, 5, TCNLA_OP_T, TCNLA_OP_N, 0, 3, 8, 0, 0, 0},
        {33, 129, 100, 7, TCNLA_OP_T, TCNLA_OP_T, 1, 1, 16, 0, 0, 0},
        {33, 129, 100, 7, TCNLA_OP_N, TCNLA_OP_N, 0, 1, 16, 0, 0, 0},
        {40, 24, 96, 6, TCNLA_OP_N, TCNLA_OP_N, 1, 0, 0, 0, 0, 1},
        /* the projection layout with k not a multiple of the k-tile (on
         * Hopper a 3-D map of B whose matrix stride k is below ldb) */
        {40, 24, 72, 6, TCNLA_OP_T, TCNLA_OP_N, 1, 0, 0, 0, 0, 1},
        /* misaligned leading dimensions and strides: product by product */
        {20, 12, 9, 4, TCNLA_OP_N, TCNLA_OP_N, 1, 0, 0, 1, 0, 0},
        {20, 12, 9, 4, TCNLA_OP_N, TCNLA_OP_N, 0, 0, 0, 1, 0, 0},
        /* long k per product, split-K */
        {128, 128, 1024, 3, TCNLA_OP_N, TCNLA_OP_N, 1, 0, 0, 0, 0, 0},
        {96, 64, 2048, 2, TCNLA_OP_T, TCNLA_OP_N, 0, 0, 0, 0, 0, 0},
    };
    const int ns = (int)(sizeof shapes / sizeof shapes[0]);
    int bad = 0, runs = 0;
    double worst = 0;
    for (int path = 0; path < 2; path++) {
        mma_only(g, path);
        for (int mi = 0; mi < NBM; mi++)
            for (int si = 0; si < ns; si++) {
                const tcnla_gemm_method_t m = b_methods[mi];
                const int sh = m == TCNLA_GEMM_SHGEMM_FP16 || m == TCNLA_GEMM_SHGEMM_TF32;
                /* SHGEMM with FP16 B (as RP-HOSVD calls it) and with FP32 B */
                for (int via16 = 0; via16 <= sh; via16++) {
                    int ok = 0;
                    double r = run_batch(g, m, &shapes[si], via16, 900 + si * 16 + mi, &ok);
                    runs++;
                    if (!ok || !(r <= 1)) bad++;
                    if (r > worst) worst = r;
                }
            }
    }
    mma_only(g, 0);
    printf("    %d batches, worst err(batched) / (2 err(separate) + sqrt(k) 2^-24) = %.3f\n", runs,
           worst);
    CHECK_MSG(bad == 0, "%d of %d batches out of bound or failed (printed above)", bad, runs);
    tcnla_destroy(g);
}

TEST(gpu_batched_native_fp32_reduce_in_groups) {
    /* 300 products of 512 x 64: the reduce runs in groups of the 16 MiB
     * partial buffer (128 at a time) */
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const bshape s = {512, 64, 64, 300, TCNLA_OP_T, TCNLA_OP_N, 1, 0, 0, 0, 0, 1};
    int ok = 0;
    double r = run_batch(g, TCNLA_GEMM_NATIVE_FP32, &s, 0, 77, &ok);
    CHECK_MSG(ok && r <= 1, "ratio %.3f", r);
    tcnla_destroy(g);
}

/* A batch whose product 2 holds NaN (or a range-check failure) runs
 * product by product: the same status and the same bits as separate calls. */
static void fallback_case(tcnla_handle_t g, tcnla_gemm_method_t meth, int reduce, int tiny,
                          const char *what) {
    enum { M = 40, N = 24, K = 64, T = 4 };
    const int64_t sa = M * K, sb = K * N, sc = M * N;
    float *A = malloc(sizeof(float) * sa * T), *B = malloc(sizeof(float) * sb * T);
    float *C1 = malloc(sizeof(float) * sc * T), *C2 = malloc(sizeof(float) * sc * T);
    gt_uniform(5, -1, 1, sa * T, A);
    gt_uniform(6, -1, 1, sb * T, B);
    if (tiny) gt_exp_rand(7, -45, -35, sa, A + 2 * sa);
    else A[2 * sa + 17] = NAN;
    for (int i = 0; i < sc * T; i++) C1[i] = C2[i] = 3.0f;
    float *dA = dev_copy(g, A, sizeof(float) * sa * T), *dB = dev_copy(g, B, sizeof(float) * sb * T);
    float *dC1 = dev_copy(g, C1, sizeof(float) * sc * T), *dC2 = dev_copy(g, C2, sizeof(float) * sc * T);
    int st1 = 0;
    tcnla_info_t i1 = {0};
    for (int t = 0; t < T && st1 == 0; t++)
        st1 = tcnla_sgemm_ex(g, meth, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1.0f, dA + t * sa, M,
                             dB + t * sb, K, (reduce && t) ? 1.0f : 0.5f,
                             dC1 + (reduce ? 0 : t * sc), M, &i1);
    tn_call_t cl;
    tn_call_init(&cl, g);
    int st2 = tn_sgemm_batched(&cl, meth, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1.0f, dA, M, sa, dB, NULL,
                               K, sb, 0.5f, dC2, M, sc, T, reduce);
    const tcnla_gemm_method_t u1 = i1.method, u2 = cl.info.method;
    tcnla_memcpy(g, C1, dC1, sizeof(float) * sc * T, TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_memcpy(g, C2, dC2, sizeof(float) * sc * T, TCNLA_MEMCPY_HANDLE_TO_HOST);
    CHECK_MSG(st1 == st2 && u1 == u2 && memcmp(C1, C2, sizeof(float) * sc * T) == 0,
              "%s %s reduce=%d: status %d / %d, last method %s / %s, results %s", what,
              tcnla_gemm_method_name(meth), reduce, st1, st2, tcnla_gemm_method_name(u1),
              tcnla_gemm_method_name(u2),
              memcmp(C1, C2, sizeof(float) * sc * T) ? "differ" : "equal");
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dC1), tcnla_free(g, dC2);
    free(A), free(B), free(C1), free(C2);
}

TEST(gpu_batched_nan_and_range_fall_back_per_product) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    GT_TUNE(g, exact_scaling, 0); /* (on: the range cases compute in FP16, scaled) */
    for (int reduce = 0; reduce < 2; reduce++) {
        fallback_case(g, TCNLA_GEMM_TCEC_TF32, reduce, 0, "NaN");
        fallback_case(g, TCNLA_GEMM_TCEC_FP16, reduce, 0, "NaN");
        CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_ERROR) == 0);
        fallback_case(g, TCNLA_GEMM_TCEC_FP16, reduce, 1, "range error");
        CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_FALLBACK) == 0);
        fallback_case(g, TCNLA_GEMM_TCEC_FP16, reduce, 1, "range fallback");
        CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_ERROR) == 0);
    }
    tcnla_destroy(g);
}

/* RP-HOSVD on the GPU (its middle modes are batches) against the CPU
 * backend's result quality: Tucker recovery at FP32 level. */
TEST(gpu_hosvd_batched_modes_recover_tucker) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    static const int64_t d3[3] = {72, 64, 40}, r3[3] = {10, 9, 8};
    static const int64_t d4[4] = {20, 18, 16, 12}, r4[4] = {6, 5, 5, 4};
    const struct {
        tcnla_gemm_method_t proj, gm;
    } cfg[] = {{TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_NATIVE_FP32},
               {TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_TF32},
               {TCNLA_GEMM_SHGEMM_TF32, TCNLA_GEMM_TCEC_FP16},
               {TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_NATIVE_FP32}};
    for (int ord = 3; ord <= 4; ord++) {
        const int64_t *d = ord == 3 ? d3 : d4, *r = ord == 3 ? r3 : r4;
        int64_t tot = 1, csz = 1;
        for (int i = 0; i < ord; i++) tot *= d[i], csz *= r[i];
        float *T = malloc(sizeof(float) * (size_t)tot);
        float *core = malloc(sizeof(float) * (size_t)csz), *Qh[4], *Qd[4];
        tn_testmat_tucker(ord, d, r, 2, 9, T);
        float *dT = dev_copy(g, T, sizeof(float) * (size_t)tot);
        float *dcore = dev_copy(g, NULL, sizeof(float) * (size_t)csz);
        for (int i = 0; i < ord; i++) {
            Qh[i] = malloc(sizeof(float) * (size_t)(d[i] * r[i]));
            Qd[i] = dev_copy(g, NULL, sizeof(float) * (size_t)(d[i] * r[i]));
        }
        double e32 = -1;
        for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
            tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
            for (int i = 0; i < ord; i++) o.ranks[i] = r[i];
            o.proj_method = cfg[c].proj, o.gemm_method = cfg[c].gm;
            o.random_format = cfg[c].proj == TCNLA_GEMM_NATIVE_FP32 ? TCNLA_FMT_FP32 : TCNLA_FMT_FP16;
            /* TCEC_FP16 mode products: the tensor's small elements are
             * outside the FP16 split's range (TCNLA_ERR_RANGE by default);
             * with the fallback policy the batch's products go to TCEC_TF32 */
            tcnla_set_range_policy(g, cfg[c].gm == TCNLA_GEMM_TCEC_FP16 ? TCNLA_RANGE_FALLBACK
                                                                        : TCNLA_RANGE_ERROR);
            int st = tcnla_hosvd(g, &o, ord, d, dT, dcore, Qd);
            CHECK_MSG(st == 0, "order %d %s + %s: %s", ord, tcnla_gemm_method_name(cfg[c].proj),
                      tcnla_gemm_method_name(cfg[c].gm), tcnla_strerror(st));
            if (st) continue;
            tcnla_memcpy(g, core, dcore, sizeof(float) * (size_t)csz, TCNLA_MEMCPY_HANDLE_TO_HOST);
            for (int i = 0; i < ord; i++)
                tcnla_memcpy(g, Qh[i], Qd[i], sizeof(float) * (size_t)(d[i] * r[i]),
                             TCNLA_MEMCPY_HANDLE_TO_HOST);
            /* expand core x_1 Q_1 ... x_N Q_N in FP64, one mode at a time */
            double *t = malloc(sizeof(double) * (size_t)tot), *u = malloc(sizeof(double) * (size_t)tot);
            int64_t cur[4];
            for (int i = 0; i < ord; i++) cur[i] = r[i];
            for (int64_t i = 0; i < csz; i++) t[i] = core[i];
            for (int i = 0; i < ord; i++) {
                int64_t L = 1, TT = 1;
                for (int a = 0; a < i; a++) L *= cur[a];
                for (int a = i + 1; a < ord; a++) TT *= cur[a];
                for (int64_t tt = 0; tt < TT; tt++)
                    for (int64_t q = 0; q < d[i]; q++)
                        for (int64_t l = 0; l < L; l++) {
                            double sum = 0;
                            for (int64_t j = 0; j < cur[i]; j++)
                                sum += t[l + j * L + tt * L * cur[i]] * Qh[i][q + j * d[i]];
                            u[l + q * L + tt * L * d[i]] = sum;
                        }
                cur[i] = d[i];
                double *x = t;
                t = u, u = x;
            }
            double num = 0, den = 0;
            for (int64_t i = 0; i < tot; i++)
                num += (t[i] - T[i]) * (t[i] - T[i]), den += (double)T[i] * T[i];
            free(t), free(u);
            const double e = sqrt(num / den);
            if (c == 0) e32 = e;
            printf("    order %d, %s + %s: %.3e\n", ord, tcnla_gemm_method_name(cfg[c].proj),
                   tcnla_gemm_method_name(cfg[c].gm), e);
            CHECK_MSG(e < 1e-5 && (e32 < 0 || e < 3 * e32 + 1e-7), "order %d config %zu: %.3e (FP32 %.3e)",
                      ord, c, e, e32);
        }
        tcnla_free(g, dT), tcnla_free(g, dcore);
        for (int i = 0; i < ord; i++) tcnla_free(g, Qd[i]), free(Qh[i]);
        free(T), free(core);
    }
    tcnla_destroy(g);
}
