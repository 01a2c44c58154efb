/* GPU tests of the randomized algorithms and their building blocks on the
 * CUDA backend, against the CPU backend on the same inputs. */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "random/random.h"
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"
#include "util.h"
#include "gpu/gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef TCNLA_HAVE_CUDA
#include <cuda_runtime.h>
#endif



TEST(gpu_random_fill_matches_cpu_bits) {
    tcnla_handle_t g = gt_gpu(), c;
    if (!g) SKIP("no GPU");
    tcnla_create(&c, TCNLA_BACKEND_CPU);
    enum { R = 333, C = 17 };
    float *hc = malloc(sizeof(float) * R * C), *hg = malloc(sizeof(float) * R * C);
    float *d = gt_to_dev(g, NULL, R * C);
    for (int dist = 0; dist <= TCNLA_RAND_SPARSE_SQRT; dist++)
        for (int fmt = 0; fmt <= TCNLA_FMT_E5M2; fmt++) {
            CHECK(tcnla_random_fill(c, (tcnla_rand_dist_t)dist, (tcnla_format_t)fmt, 9, 2, R, C, hc, R) == 0);
            CHECK(tcnla_random_fill(g, (tcnla_rand_dist_t)dist, (tcnla_format_t)fmt, 9, 2, R, C, d, R) == 0);
            gt_to_host(g, hg, d, R * C);
            int diff = 0;
            for (int i = 0; i < R * C; i++) diff += memcmp(&hc[i], &hg[i], 4) != 0;
            CHECK_MSG(diff == 0, "dist %d format %d: %d of %d elements differ", dist, fmt, diff, R * C);
        }
    /* FP16 bits, and a leading dimension larger than the rows */
    uint16_t *bc = malloc(2 * (R + 3) * C), *bg = malloc(2 * (R + 3) * C);
    uint16_t *d16 = NULL;
    tcnla_malloc(g, (void **)&d16, 2 * (R + 3) * C);
    memset(bc, 0, 2 * (R + 3) * C);
    tcnla_memcpy(g, d16, bc, 2 * (R + 3) * C, TCNLA_MEMCPY_HOST_TO_HANDLE);
    CHECK(tcnla_random_fill_f16(c, TCNLA_RAND_GAUSSIAN, 4, 1, R, C, bc, R + 3) == 0);
    CHECK(tcnla_random_fill_f16(g, TCNLA_RAND_GAUSSIAN, 4, 1, R, C, d16, R + 3) == 0);
    tcnla_memcpy(g, bg, d16, 2 * (R + 3) * C, TCNLA_MEMCPY_HANDLE_TO_HOST);
    CHECK(memcmp(bc, bg, 2 * (R + 3) * C) == 0);
    /* FP16 with ld == rows (two values per store on the GPU; R * C odd) */
    CHECK(tcnla_random_fill_f16(c, TCNLA_RAND_GAUSSIAN, 5, 3, R, C, bc, R) == 0);
    CHECK(tcnla_random_fill_f16(g, TCNLA_RAND_GAUSSIAN, 5, 3, R, C, d16, R) == 0);
    tcnla_memcpy(g, bg, d16, 2 * R * C, TCNLA_MEMCPY_HANDLE_TO_HOST);
    CHECK(memcmp(bc, bg, 2 * R * C) == 0);
    tcnla_free(g, d16);
    free(bc), free(bg);
    /* FP32 Gaussians with ld > rows (one value per store) */
    float *dl = NULL, *hl = malloc(sizeof(float) * (R + 3) * C), *gl = malloc(sizeof(float) * (R + 3) * C);
    memset(hl, 0, sizeof(float) * (R + 3) * C);
    dl = gt_to_dev(g, hl, (R + 3) * C);
    CHECK(tcnla_random_fill(c, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 6, 0, R, C, hl, R + 3) == 0);
    CHECK(tcnla_random_fill(g, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 6, 0, R, C, dl, R + 3) == 0);
    gt_to_host(g, gl, dl, (R + 3) * C);
    CHECK(memcmp(hl, gl, sizeof(float) * (R + 3) * C) == 0);
    tcnla_free(g, dl);
    free(hl), free(gl);
    tcnla_free(g, d);
    free(hc), free(hg);
    tcnla_destroy(g), tcnla_destroy(c);
}

/* Fills on the side stream (tn_side_begin .. tn_side_join: one block per
 * SM, grid-strided, while other work runs on the handle's stream) give the
 * CPU's bits too; uniform and Gaussian, FP16 and FP32. */
TEST(gpu_random_fill_side_stream_bits) {
    tcnla_handle_t g = gt_gpu(), c;
    if (!g) SKIP("no GPU");
    tn_call_t cl;
    tn_call_init(&cl, g);
    tcnla_create(&c, TCNLA_BACKEND_CPU);
    enum { R = 1001, C = 999 }; /* many counters per thread at one block per SM */
    const size_t n = (size_t)R * C;
    float *hc = malloc(sizeof(float) * n), *hg = malloc(sizeof(float) * n), *d = gt_to_dev(g, NULL, n);
    float *busy = gt_to_dev(g, NULL, n);
    uint16_t *bc = malloc(2 * n), *bg = malloc(2 * n), *d16 = NULL;
    tcnla_malloc(g, (void **)&d16, 2 * n);
    for (int dist = 0; dist < 2; dist++) {
        CHECK(tcnla_random_fill(c, (tcnla_rand_dist_t)dist, TCNLA_FMT_FP32, 3, 7, R, C, hc, R) == 0);
        CHECK(tcnla_random_fill_f16(c, (tcnla_rand_dist_t)dist, 3, 8, R, C, bc, R) == 0);
        CHECK_EQ_INT(tn_side_begin(&cl), 0);
        CHECK(tn_random_fill(&cl, (tcnla_rand_dist_t)dist, TCNLA_FMT_FP32, 0, 3, 7, R, C, d, R) == 0);
        CHECK(tn_random_fill(&cl, (tcnla_rand_dist_t)dist, TCNLA_FMT_FP16, 1, 3, 8, R, C, d16, R) == 0);
        CHECK_EQ_INT(tn_side_end(&cl), 0);
        /* meanwhile on the handle's stream */
        CHECK(tn_random_fill(&cl, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 0, 1, 1, R, C, busy, R) == 0);
        CHECK_EQ_INT(tn_side_join(&cl), 0);
        gt_to_host(g, hg, d, n);
        tcnla_memcpy(g, bg, d16, 2 * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
        CHECK_MSG(memcmp(hc, hg, sizeof(float) * n) == 0, "dist %d FP32", dist);
        CHECK_MSG(memcmp(bc, bg, 2 * n) == 0, "dist %d FP16", dist);
    }
    CHECK_EQ_INT(tn_side_join(&cl), 0); /* nothing pending: a no-op */
    tcnla_free(g, d16), tcnla_free(g, d), tcnla_free(g, busy);
    free(hc), free(hg), free(bc), free(bg);
    tcnla_destroy(g), tcnla_destroy(c);
}

/* CholeskyQR in FP64 at column counts around the solve's 128-column
 * blocks (their inverses: a warp per column, 32 rows per lane), against
 * the CPU; and tn_orthonormalize_f16 (randLRA's Q16): the same Q rounded to
 * FP16, in FP32 and FP16 bits, for CholeskyQR (written in its last pass)
 * and Householder (rounded after). */
TEST(gpu_cholqr64_solve_blocks_and_f16) {
    tcnla_handle_t g = gt_gpu(), c;
    if (!g) SKIP("no GPU");
    tn_call_t cl;
    tn_call_init(&cl, g);
    tcnla_create(&c, TCNLA_BACKEND_CPU);
    enum { M = 700, LD = 703, NMAX = 257 };
    const int ns[] = {1, 63, 64, 65, 127, 128, 129, 200, 257};
    float *Y0 = malloc(sizeof(float) * LD * NMAX), *Y = malloc(sizeof(float) * LD * NMAX);
    float *Yc = malloc(sizeof(float) * LD * NMAX), *Yr = malloc(sizeof(float) * LD * NMAX);
    uint16_t *Y16 = malloc(2 * (size_t)M * NMAX), *d16 = NULL;
    tn_rand_normal(12, 0, 0, 1, (int64_t)LD * NMAX, Y0);
    float *dY = gt_to_dev(g, NULL, (size_t)LD * NMAX);
    tcnla_malloc(g, (void **)&d16, 2 * (size_t)M * NMAX);
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        const int N = ns[t];
        tcnla_memcpy(g, dY, Y0, sizeof(float) * LD * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        memcpy(Yc, Y0, sizeof(float) * LD * N);
        CHECK_EQ_INT(tn_orthonormalize(&cl, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_ERROR, M, N, dY, LD, NULL, 0, NULL), 0);
        CHECK_EQ_INT(tcnla_orthonormalize(c, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_ERROR, M, N, Yc, LD, NULL, 0, NULL), 0);
        gt_to_host(g, Yr, dY, (size_t)LD * N);
        double dq = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) dq = fmax(dq, fabs((double)Yr[i + j * LD] - Yc[i + j * LD]));
        CHECK_MSG(dq < 1e-5, "n %d: |Q_gpu - Q_cpu| = %.2e", N, dq);
        for (int meth = 0; meth < 2; meth++) {
            const tcnla_orth_t om = meth ? TCNLA_ORTH_HOUSEHOLDER : TCNLA_ORTH_CHOLQR_FP64;
            float *ref = Yr;
            if (meth) { /* Householder's own Q as the reference */
                tcnla_memcpy(g, dY, Y0, sizeof(float) * LD * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
                CHECK_EQ_INT(tn_orthonormalize(&cl, om, TCNLA_BREAKDOWN_ERROR, M, N, dY, LD, NULL, 0, NULL), 0);
                gt_to_host(g, Yc, dY, (size_t)LD * N);
                ref = Yc;
            }
            tcnla_memcpy(g, dY, Y0, sizeof(float) * LD * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
            CHECK_EQ_INT(tn_orthonormalize_f16(&cl, om, TCNLA_BREAKDOWN_ERROR, M, N, dY, LD, d16, M), 0);
            gt_to_host(g, Y, dY, (size_t)LD * N);
            tcnla_memcpy(g, Y16, d16, 2 * (size_t)M * N, TCNLA_MEMCPY_HANDLE_TO_HOST);
            int bad = 0;
            for (int j = 0; j < N; j++) {
                for (int i = 0; i < M; i++) {
                    const uint16_t hb = tcnla_f32_to_f16(ref[i + j * LD], TCNLA_ROUND_RN);
                    const float hv = tcnla_f16_to_f32(hb);
                    bad += memcmp(&hv, &Y[i + j * LD], 4) != 0 || Y16[i + j * M] != hb;
                }
                for (int i = M; i < LD; i++) bad += Y[i + j * LD] != Y0[i + j * LD];
            }
            CHECK_MSG(bad == 0, "n %d method %d: %d elements differ", N, meth, bad);
        }
    }
    tcnla_free(g, dY), tcnla_free(g, d16);
    free(Y0), free(Y), free(Yc), free(Yr), free(Y16);
    tcnla_destroy(g), tcnla_destroy(c);
}

TEST(gpu_orth_methods_and_breakdown) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    enum { M = 2000, N = 40 };
    float *Y0 = malloc(sizeof(float) * M * N), *Y = malloc(sizeof(float) * M * N), R[N * N], Rh[N * N];
    tn_rand_normal(5, 1, 0, 1, M * N, Y0);
    float *dY = gt_to_dev(g, Y0, M * N), *dR = gt_to_dev(g, NULL, N * N);
    for (int meth = 0; meth <= TCNLA_ORTH_CHOLQR2_FP64; meth++) {
        tcnla_memcpy(g, dY, Y0, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        tcnla_orth_t used;
        int st = tcnla_orthonormalize(g, (tcnla_orth_t)meth, TCNLA_BREAKDOWN_ERROR, M, N, dY, M, dR, N, &used);
        CHECK_MSG(st == 0, "method %d: %s", meth, tcnla_strerror(st));
        gt_to_host(g, Y, dY, M * N);
        gt_to_host(g, Rh, dR, N * N);
        double d = tu_orth_defect(Y, M, N);
        CHECK_MSG(d < (meth == TCNLA_ORTH_CHOLQR_FP32 ? 1e-4 : 2e-6), "method %d: |Q^TQ - I| = %.2e", meth, d);
        double worst = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                double s = 0;
                for (int p = 0; p <= j; p++) s += (double)Y[i + p * M] * Rh[p + j * N];
                worst = fmax(worst, fabs(s - Y0[i + j * M]));
            }
        CHECK_MSG(worst < 1e-4, "method %d: |QR - Y| = %.2e", meth, worst);
    }
    /* rank deficient: breakdown reported, Y untouched; retried to Householder */
    for (int i = 0; i < M; i++) Y0[i + 7 * M] = Y0[i + 3 * M];
    tcnla_memcpy(g, dY, Y0, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
    CHECK_EQ_INT(tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR2_FP64, TCNLA_BREAKDOWN_ERROR, M, N, dY, M, NULL, 0, NULL),
                 TCNLA_ERR_NUMERICAL);
    gt_to_host(g, Y, dY, M * N);
    CHECK(memcmp(Y, Y0, sizeof(float) * M * N) == 0);
    tcnla_orth_t used;
    CHECK(tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR_FP32, TCNLA_BREAKDOWN_RETRY, M, N, dY, M, NULL, 0, &used) == 0);
    CHECK(used == TCNLA_ORTH_HOUSEHOLDER);
    gt_to_host(g, Y, dY, M * N);
    for (int i = 0; i < M * N; i++) CHECK(isfinite(Y[i]));
    (void)R;
    tcnla_free(g, dY), tcnla_free(g, dR);
    free(Y0), free(Y);
    tcnla_destroy(g);
}

/* CholeskyQR in FP64 (the GPU's own Gram sum, factorization and blocked
 * solve) at sizes with several factorization steps (32 columns), several
 * solve blocks (128) with a short last one, a row count that is not a
 * multiple of the Gram slabs and ld > m; columns scaled over six decades
 * (kappa about 1e6, though Cholesky itself is blind to column scaling); a
 * breakdown far from the first step; NaN input. */
TEST(gpu_cholqr64_blocked_sizes) {
    tcnla_handle_t g = gt_gpu(), c;
    if (!g) SKIP("no GPU");
    tcnla_create(&c, TCNLA_BACKEND_CPU);
    enum { M = 3001, N = 300, LD = 3005 };
    float *Y0 = malloc(sizeof(float) * LD * N), *Y = malloc(sizeof(float) * LD * N);
    float *Yc = malloc(sizeof(float) * LD * N);
    float *Rg = malloc(sizeof(float) * N * N), *Rc = malloc(sizeof(float) * N * N);
    tn_rand_normal(9, 1, 0, 1, (int64_t)LD * N, Y0);
    for (int j = 0; j < N; j++) /* column scales 1 .. 1e-6 */
        for (int i = 0; i < LD; i++) Y0[i + j * LD] *= (float)pow(10.0, -6.0 * j / (N - 1));
    float *dY = gt_to_dev(g, Y0, (size_t)LD * N), *dR = gt_to_dev(g, NULL, (size_t)N * N);
    for (int twice = 0; twice < 2; twice++) {
        const tcnla_orth_t meth = twice ? TCNLA_ORTH_CHOLQR2_FP64 : TCNLA_ORTH_CHOLQR_FP64;
        tcnla_memcpy(g, dY, Y0, sizeof(float) * LD * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        memcpy(Yc, Y0, sizeof(float) * LD * N);
        CHECK_EQ_INT(tcnla_orthonormalize(g, meth, TCNLA_BREAKDOWN_ERROR, M, N, dY, LD, dR, N, NULL), 0);
        CHECK_EQ_INT(tcnla_orthonormalize(c, meth, TCNLA_BREAKDOWN_ERROR, M, N, Yc, LD, Rc, N, NULL), 0);
        gt_to_host(g, Y, dY, (size_t)LD * N);
        gt_to_host(g, Rg, dR, (size_t)N * N);
        double dq = 0, dr = 0, nr = 0;
        for (int j = 0; j < N; j++) {
            for (int i = 0; i < M; i++) dq = fmax(dq, fabs((double)Y[i + j * LD] - Yc[i + j * LD]));
            for (int i = M; i < LD; i++) CHECK(Y[i + j * LD] == Y0[i + j * LD]); /* past m: untouched */
            for (int i = 0; i < N; i++) {
                dr = fmax(dr, fabs((double)Rg[i + j * N] - Rc[i + j * N]));
                nr = fmax(nr, fabs((double)Rc[i + j * N]));
                if (i > j) CHECK(Rg[i + j * N] == 0.0f);
            }
        }
        /* FP64 inside, FP32 out: both round the same FP64-accurate factor */
        CHECK_MSG(dq < 1e-5, "twice %d: |Q_gpu - Q_cpu| = %.2e", twice, dq);
        CHECK_MSG(dr < 1e-6 * nr, "twice %d: |R_gpu - R_cpu| = %.2e of %.2e", twice, dr, nr);
        double d = 0;
        for (int j = 0; j < N; j++) /* Q^T Q - I over the first m rows */
            for (int k = 0; k <= j; k++) {
                double s = 0;
                for (int i = 0; i < M; i++) s += (double)Y[i + j * LD] * Y[i + k * LD];
                d = fmax(d, fabs(s - (j == k)));
            }
        CHECK_MSG(d < (twice ? 1e-5 : 1e-3), "twice %d: |Q^TQ - I| = %.2e", twice, d);
    }
    /* column 200 a copy of column 100: the factorization stops at step 7 */
    for (int i = 0; i < LD; i++) Y0[i + 200 * LD] = Y0[i + 100 * LD];
    tcnla_memcpy(g, dY, Y0, sizeof(float) * LD * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
    CHECK_EQ_INT(tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_ERROR, M, N, dY, LD, NULL, 0, NULL),
                 TCNLA_ERR_NUMERICAL);
    gt_to_host(g, Y, dY, (size_t)LD * N);
    CHECK(memcmp(Y, Y0, sizeof(float) * LD * N) == 0);
    /* NaN: reported, no retry, Y untouched */
    Y0[17 + 250 * LD] = NAN;
    tcnla_memcpy(g, dY, Y0, sizeof(float) * LD * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
    tcnla_orth_t used = TCNLA_ORTH_HOUSEHOLDER;
    CHECK_EQ_INT(tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_RETRY, M, N, dY, LD, NULL, 0, &used),
                 TCNLA_ERR_NUMERICAL);
    CHECK(used == TCNLA_ORTH_CHOLQR_FP64);
    gt_to_host(g, Y, dY, (size_t)LD * N);
    CHECK(memcmp(Y, Y0, sizeof(float) * LD * N) == 0);
    tcnla_free(g, dY), tcnla_free(g, dR);
    free(Y0), free(Y), free(Yc), free(Rg), free(Rc);
    tcnla_destroy(g), tcnla_destroy(c);
}

#ifdef TCNLA_HAVE_CUDA
/* tn_cu_potrf_upper (look-ahead of the diagonal blocks by block 0, the
 * other tiles over the other blocks) on the Gram matrix of a uniform
 * 2n x n Y: the same info, R and diag bit for bit whatever the grid (1, 2,
 * 3, 8 blocks and the SM count: one block doing every tile, and the
 * look-ahead beside the others), R's strictly lower part untouched; R
 * within 16 n u max|R| of a right-looking Cholesky in FP64 on the host
 * (cond(G) is about 34 here); a pivot made negative (G_pp = -1) stops it
 * at column p + 1 (info), at the first step (p = 5), at the start of a
 * later one (p = 128) and inside one (p = 150). */
TEST(gpu_potrf_upper_same_bits_any_grid) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    struct tn_cuda_ctx *c = g->cuda;
    const int ns[] = {33, 100, 266, 300}, grids[5] = {1, 2, 3, 8, c->sm_count};
    const int bad_p[4] = {-1, 5, 128, 150};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        const int n = ns[t], m = 2 * n;
        const size_t nn = (size_t)n * n;
        float *Yf = malloc(sizeof(float) * (size_t)m * n);
        double *G0 = malloc(sizeof(double) * nn), *G = malloc(sizeof(double) * nn);
        double *Rc = malloc(sizeof(double) * nn), *R0 = malloc(sizeof(double) * nn);
        double *R1 = malloc(sizeof(double) * nn), *d0 = malloc(sizeof(double) * n);
        double *d1 = malloc(sizeof(double) * n);
        tn_rand_uniform(31, (uint64_t)n, -1.0f, 1.0f, (int64_t)m * n, Yf);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double a = 0.0;
                if (i <= j)
                    for (int p = 0; p < m; p++) a += (double)Yf[p + (size_t)i * m] * Yf[p + (size_t)j * m];
                G0[i + (size_t)j * n] = a;
            }
        /* the host's factor: right-looking, upper */
        memcpy(Rc, G0, sizeof(double) * nn);
        for (int k = 0; k < n; k++) {
            const double rkk = sqrt(Rc[k + (size_t)k * n]);
            Rc[k + (size_t)k * n] = rkk;
            for (int j = k + 1; j < n; j++) Rc[k + (size_t)j * n] /= rkk;
            for (int j = k + 1; j < n; j++)
                for (int i = k + 1; i <= j; i++)
                    Rc[i + (size_t)j * n] -= Rc[k + (size_t)i * n] * Rc[k + (size_t)j * n];
        }
        double *dG, *dR, *ddg;
        int *dinfo;
        unsigned *dbar;
        CHECK(tcnla_malloc(g, (void **)&dG, sizeof(double) * nn) == 0);
        CHECK(tcnla_malloc(g, (void **)&dR, sizeof(double) * nn) == 0);
        CHECK(tcnla_malloc(g, (void **)&ddg, sizeof(double) * n) == 0);
        CHECK(tcnla_malloc(g, (void **)&dinfo, sizeof(int)) == 0);
        CHECK(tcnla_malloc(g, (void **)&dbar, sizeof(unsigned)) == 0);
        for (int b = 0; b < 4; b++) {
            const int p = bad_p[b];
            if (p >= n) continue;
            memcpy(G, G0, sizeof(double) * nn);
            if (p >= 0) G[p + (size_t)p * n] = -1.0;
            int info0 = 0, same = 1, lower = 1;
            for (int q = 0; q < 5; q++) {
                int info = -7;
                CHECK(cudaMemcpyAsync(dG, G, sizeof(double) * nn, cudaMemcpyHostToDevice,
                                      c->stream) == cudaSuccess);
                CHECK(cudaMemsetAsync(dR, 0xff, sizeof(double) * nn, c->stream) == cudaSuccess);
                CHECK(cudaMemsetAsync(ddg, 0xff, sizeof(double) * n, c->stream) == cudaSuccess);
                CHECK(tn_cu_potrf_upper(n, dG, n, dR, ddg, dinfo, dbar, grids[q], c->stream) == 0);
                CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
                CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
                CHECK(cudaMemcpy(q ? R1 : R0, dR, sizeof(double) * nn, cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                CHECK(cudaMemcpy(q ? d1 : d0, ddg, sizeof(double) * n, cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                if (q == 0) {
                    info0 = info;
                    for (int j = 0; j < n; j++)
                        for (int i = j + 1; i < n; i++) lower &= isnan(R0[i + (size_t)j * n]);
                    continue;
                }
                same &= info == info0;
                for (int j = 0; j < n && info == 0; j++) {
                    same &= memcmp(&d0[j], &d1[j], 8) == 0;
                    for (int i = 0; i <= j; i++)
                        same &= memcmp(&R0[i + (size_t)j * n], &R1[i + (size_t)j * n], 8) == 0;
                }
            }
            CHECK_MSG(same, "n %d, pivot %d: the grids differ", n, p);
            CHECK_MSG(lower, "n %d, pivot %d: R's lower part written", n, p);
            CHECK_MSG(info0 == (p >= 0 ? p + 1 : 0), "n %d, pivot %d: info %d", n, p, info0);
            if (p < 0) {
                double err = 0, mx = 0;
                for (int j = 0; j < n; j++) {
                    CHECK(d0[j] == R0[j + (size_t)j * n]);
                    for (int i = 0; i <= j; i++) {
                        err = fmax(err, fabs(R0[i + (size_t)j * n] - Rc[i + (size_t)j * n]));
                        mx = fmax(mx, fabs(Rc[i + (size_t)j * n]));
                    }
                }
                CHECK_MSG(err <= 16.0 * n * 0x1p-53 * mx, "n %d: |R - R_host| = %.2e of %.2e", n,
                          err, mx);
            }
        }
        tcnla_free(g, dG), tcnla_free(g, dR), tcnla_free(g, ddg), tcnla_free(g, dinfo);
        tcnla_free(g, dbar);
        free(Yf), free(G0), free(G), free(Rc), free(R0), free(R1), free(d0), free(d1);
    }
    tcnla_destroy(g);
}

/* Backward error of an upper R for G (upper triangle, ld n): the largest
 * |R^T R - G|_ij / (u (|R|^T |R|)_ij) over i <= j. */
static double potrf_backward(int n, const double *G, const double *R, int ldr) {
    double worst = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i <= j; i++) {
            double r = -G[i + (size_t)j * n], a = 0.0;
            for (int k = 0; k <= i; k++) {
                r += R[k + (size_t)i * ldr] * R[k + (size_t)j * ldr];
                a += fabs(R[k + (size_t)i * ldr] * R[k + (size_t)j * ldr]);
            }
            worst = fmax(worst, fabs(r) / (0x1p-53 * a));
        }
    return worst;
}

/* |R Inv - I|_ij / (u (|R| |Inv|)_ij), the largest over i <= j (Inv ld n) */
static double trinv_residual(int n, const double *R, int ldr, const double *Inv) {
    double worst = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i <= j; i++) {
            double r = i == j ? -1.0 : 0.0, a = 0.0;
            for (int k = i; k <= j; k++) {
                r += R[i + (size_t)k * ldr] * Inv[k + (size_t)j * n];
                a += fabs(R[i + (size_t)k * ldr] * Inv[k + (size_t)j * n]);
            }
            worst = fmax(worst, fabs(r) / (0x1p-53 * a));
        }
    return worst;
}

/* tn_cu_potrf_inv_cluster (R and R^-1 in one cluster launch) on Gram
 * matrices of a uniform 2n x n Y (cond(G) about 34) and of that Y with
 * columns graded by 10^(-3 j / n) (cond(G) about 1e7): sizes around the
 * 32-column blocks up to TN_POTRF_CLUSTER_MAX, one with ld, ldr > n. The
 * same bits on a second run; R's strictly lower part untouched; diag R's
 * diagonal; R's backward error |R^T R - G| and Inv's residual |R Inv - I|
 * (elementwise, in units of u |R^T||R| and u |R||Inv|) at most 2 be0 + 1
 * and 3 re0 + 2, be0 and re0 those of tn_cu_potrf_upper and
 * tn_cu_trinv_full on the same G, measured here (the substitutions by
 * blocks of the inverse's row recursion give it up to 2.6 times
 * trinv_full's residual); a pivot made negative (G_pp = -1, or NaN) gives
 * info = p + 1 and an Inv of NaN. */
TEST(gpu_potrf_inv_cluster) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    struct tn_cuda_ctx *c = g->cuda;
    if (!tn_cu_potrf_inv_ok(TN_POTRF_CLUSTER_MAX, tn_cuda_cc(c), c->smem_optin)) {
        tcnla_destroy(g);
        SKIP("the cluster factorization needs compute capability 9.0");
    }
    const int ns[] = {1, 2, 31, 32, 33, 100, 137, 266, TN_POTRF_CLUSTER_MAX, 266};
    const int nt = (int)(sizeof ns / sizeof ns[0]);
    for (int t = 0; t < nt; t++)
        for (int graded = 0; graded < 2; graded++) {
            const int n = ns[t], m = 2 * n, ld = t == nt - 1 ? n + 3 : n;
            const size_t nn = (size_t)n * n, nl = (size_t)ld * n;
            float *Yf = malloc(sizeof(float) * (size_t)m * n);
            double *G = calloc(nn, sizeof(double)), *Gl = malloc(sizeof(double) * nl);
            double *R0 = malloc(sizeof(double) * nl), *R1 = malloc(sizeof(double) * nl);
            double *I0 = malloc(sizeof(double) * nn), *I1 = malloc(sizeof(double) * nn);
            double *d0 = malloc(sizeof(double) * n), *d1 = malloc(sizeof(double) * n);
            tn_rand_uniform(41, (uint64_t)n, -1.0f, 1.0f, (int64_t)m * n, Yf);
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++) {
                    double a = 0.0;
                    for (int p = 0; p < m; p++)
                        a += (double)Yf[p + (size_t)i * m] * Yf[p + (size_t)j * m];
                    if (graded) a *= pow(10.0, -3.0 * (i + j) / (2.0 * n));
                    G[i + (size_t)j * n] = a;
                }
            for (size_t e = 0; e < nl; e++) Gl[e] = NAN;
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++) Gl[i + (size_t)j * ld] = G[i + (size_t)j * n];
            double *dG, *dR, *dI, *ddg;
            int *dinfo, info = -7;
            unsigned *dbar;
            CHECK(tcnla_malloc(g, (void **)&dG, sizeof(double) * nl) == 0);
            CHECK(tcnla_malloc(g, (void **)&dR, sizeof(double) * nl) == 0);
            CHECK(tcnla_malloc(g, (void **)&dI, sizeof(double) * nn) == 0);
            CHECK(tcnla_malloc(g, (void **)&ddg, sizeof(double) * n) == 0);
            CHECK(tcnla_malloc(g, (void **)&dinfo, sizeof(int)) == 0);
            CHECK(tcnla_malloc(g, (void **)&dbar, sizeof(unsigned)) == 0);
            /* the two launches' factor and inverse, for the bounds */
            CHECK(cudaMemcpyAsync(dG, G, sizeof(double) * nn, cudaMemcpyHostToDevice,
                                  c->stream) == cudaSuccess);
            CHECK(tn_cu_potrf_upper(n, dG, n, dR, ddg, dinfo, dbar, c->sm_count, c->stream) == 0);
            CHECK(tn_cu_trinv_full(n, dR, n, dI, c->stream) == 0);
            CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
            CHECK(cudaMemcpy(R0, dR, sizeof(double) * nn, cudaMemcpyDeviceToHost) == cudaSuccess);
            CHECK(cudaMemcpy(I0, dI, sizeof(double) * nn, cudaMemcpyDeviceToHost) == cudaSuccess);
            const double be0 = potrf_backward(n, G, R0, n), re0 = trinv_residual(n, R0, n, I0);
            for (int run = 0; run < 2; run++) {
                CHECK(cudaMemcpyAsync(dG, Gl, sizeof(double) * nl, cudaMemcpyHostToDevice,
                                      c->stream) == cudaSuccess);
                CHECK(cudaMemsetAsync(dR, 0xff, sizeof(double) * nl, c->stream) == cudaSuccess);
                CHECK(cudaMemsetAsync(dI, 0xff, sizeof(double) * nn, c->stream) == cudaSuccess);
                CHECK(tn_cu_potrf_inv_cluster(n, dG, ld, dR, ld, ddg, dinfo, dI, c->stream) == 0);
                CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
                CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                CHECK(cudaMemcpy(run ? R1 : R0, dR, sizeof(double) * nl,
                                 cudaMemcpyDeviceToHost) == cudaSuccess);
                CHECK(cudaMemcpy(run ? I1 : I0, dI, sizeof(double) * nn,
                                 cudaMemcpyDeviceToHost) == cudaSuccess);
                CHECK(cudaMemcpy(run ? d1 : d0, ddg, sizeof(double) * n,
                                 cudaMemcpyDeviceToHost) == cudaSuccess);
                CHECK_MSG(info == 0, "n %d: info %d", n, info);
            }
            int same = memcmp(I0, I1, sizeof(double) * nn) == 0 &&
                       memcmp(d0, d1, sizeof(double) * n) == 0, lower = 1, dg = 1;
            for (int j = 0; j < n; j++) {
                dg &= d0[j] == R0[j + (size_t)j * ld];
                for (int i = 0; i < ld; i++) {
                    if (i <= j && i < n)
                        same &= memcmp(&R0[i + (size_t)j * ld], &R1[i + (size_t)j * ld], 8) == 0;
                    else lower &= isnan(R0[i + (size_t)j * ld]);
                }
            }
            CHECK_MSG(same, "n %d: two runs differ", n);
            CHECK_MSG(lower, "n %d: R's lower part written", n);
            CHECK_MSG(dg, "n %d: diag is not R's diagonal", n);
            int zeros = 1;
            for (int j = 0; j < n; j++)
                for (int i = j + 1; i < n; i++) zeros &= I0[i + (size_t)j * n] == 0.0;
            CHECK_MSG(zeros, "n %d: Inv not zero below its diagonal", n);
            const double be = potrf_backward(n, G, R0, ld), re = trinv_residual(n, R0, ld, I0);
            printf("    n %d%s: backward %.2f (two launches %.2f), inverse %.2f (%.2f) u\n", n,
                   graded ? " graded" : "", be, be0, re, re0);
            /* (measured on an H100: be up to 1.7 be0; re up to 2.6 re0, and 1 where re0 = 0) */
            CHECK_MSG(be <= 2.0 * be0 + 1.0, "n %d: backward error %.2f u against %.2f", n, be,
                      be0);
            CHECK_MSG(re <= 3.0 * re0 + 2.0, "n %d: inverse residual %.2f u against %.2f", n, re,
                      re0);
            /* breakdowns: a pivot made negative or NaN */
            const int bad[4] = {0, 5, 40, n - 1};
            for (int q = 0; q < 4 && !graded; q++) {
                const int p = bad[q];
                if (p >= n || (q > 0 && p == bad[q - 1])) continue;
                Gl[p + (size_t)p * ld] = q == 2 ? NAN : -1.0;
                CHECK(cudaMemcpyAsync(dG, Gl, sizeof(double) * nl, cudaMemcpyHostToDevice,
                                      c->stream) == cudaSuccess);
                CHECK(tn_cu_potrf_inv_cluster(n, dG, ld, dR, ld, ddg, dinfo, dI, c->stream) == 0);
                CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
                CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                CHECK(cudaMemcpy(I1, dI, sizeof(double) * nn, cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                int allnan = 1;
                for (size_t e = 0; e < nn; e++) allnan &= isnan(I1[e]);
                CHECK_MSG(info == p + 1, "n %d, pivot %d: info %d", n, p, info);
                CHECK_MSG(allnan, "n %d, pivot %d: Inv not NaN", n, p);
                Gl[p + (size_t)p * ld] = G[p + (size_t)p * n];
            }
            tcnla_free(g, dG), tcnla_free(g, dR), tcnla_free(g, dI), tcnla_free(g, ddg);
            tcnla_free(g, dinfo), tcnla_free(g, dbar);
            free(Yf), free(G), free(Gl), free(R0), free(R1), free(I0), free(I1), free(d0);
            free(d1);
        }
    CHECK(tn_cu_potrf_inv_cluster(TN_POTRF_CLUSTER_MAX + 1, NULL, 1, NULL, 1, NULL, NULL, NULL,
                                  c->stream) != 0);
    tcnla_destroy(g);
}

/* tn_cu_trinv_full (the whole inverse of an upper triangular R, for
 * CholeskyQR's solve as one DTRMM): bit for bit the host's back
 * substitution in the same order (column j: s = e_j; for p = j down to 0,
 * x_p = s_p (1 / R_pp), s_i = fma(-R_ip, x_p, s_i) for i < p), zeros below
 * the diagonal, the entries below R's diagonal never read (NaN there).
 * Sizes across the 32-column chunks, both copy paths (16-byte: n and ld
 * even; 8-byte: odd n, or odd ld) and the largest n; and R Inv - I within
 * n u |R| |Inv| elementwise. */
TEST(gpu_trinv_full_same_bits_as_host) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    struct tn_cuda_ctx *c = g->cuda;
    const int ns[] = {1, 2, 31, 33, 129, 201, 266, 300, 383, TN_TRINV_FULL_MAX, 266};
    const int nt = (int)(sizeof ns / sizeof ns[0]);
    for (int t = 0; t < nt; t++) {
        const int n = ns[t], ld = t == nt - 1 ? n + 1 : n; /* the last: an odd ld */
        const size_t nr = (size_t)ld * n, nn = (size_t)n * n;
        double *R = malloc(sizeof(double) * nr), *I0 = malloc(sizeof(double) * nn);
        double *I1 = malloc(sizeof(double) * nn), *s = malloc(sizeof(double) * n);
        float *u = malloc(sizeof(float) * nr);
        tn_rand_uniform(77, (uint64_t)n, -1.0f, 1.0f, (int64_t)nr, u);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < ld; i++)
                R[i + (size_t)j * ld] = i < j ? u[i + (size_t)j * ld]
                                      : i == j ? 1.5 + 0.5 * u[i + (size_t)j * ld]
                                               : NAN;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < n; i++) s[i] = i == j ? 1.0 : 0.0;
            for (int p = j; p >= 0; p--) {
                const double x = s[p] * (1.0 / R[p + (size_t)p * ld]);
                s[p] = x;
                for (int i = 0; i < p; i++) s[i] = fma(-R[i + (size_t)p * ld], x, s[i]);
            }
            for (int i = 0; i < n; i++) I0[i + (size_t)j * n] = i <= j ? s[i] : 0.0;
        }
        double *dR, *dI;
        CHECK(tcnla_malloc(g, (void **)&dR, sizeof(double) * nr) == 0);
        CHECK(tcnla_malloc(g, (void **)&dI, sizeof(double) * nn) == 0);
        CHECK(cudaMemcpy(dR, R, sizeof(double) * nr, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(cudaMemset(dI, 0xff, sizeof(double) * nn) == cudaSuccess);
        CHECK(tn_cu_trinv_full(n, dR, ld, dI, c->stream) == 0);
        CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
        CHECK(cudaMemcpy(I1, dI, sizeof(double) * nn, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK_MSG(memcmp(I0, I1, sizeof(double) * nn) == 0, "n %d ld %d: not the host's bits", n,
                  ld);
        double worst = 0.0; /* |R Inv - I| / (n u |R| |Inv|), elementwise */
        for (int j = 0; j < n; j++)
            for (int i = 0; i <= j; i++) {
                double r = i == j ? -1.0 : 0.0, a = 0.0;
                for (int k = i; k <= j; k++) {
                    r += R[i + (size_t)k * ld] * I1[k + (size_t)j * n];
                    a += fabs(R[i + (size_t)k * ld] * I1[k + (size_t)j * n]);
                }
                worst = fmax(worst, fabs(r) / (n * 0x1p-53 * a));
            }
        CHECK_MSG(worst <= 1.0, "n %d: |R Inv - I| at %.2f of n u |R||Inv|", n, worst);
        CHECK(tcnla_free(g, dR) == 0);
        CHECK(tcnla_free(g, dI) == 0);
        free(R), free(I0), free(I1), free(s), free(u);
    }
    CHECK(tn_cu_trinv_full(TN_TRINV_FULL_MAX + 1, NULL, 1, NULL, c->stream) != 0);
    tcnla_destroy(g);
}

/* CholeskyQR's products on the FP64 Tensor Cores (kernels/cholqr_dmma.cu),
 * against long double on the host, Y with graded columns (10^(-3 j / n)),
 * odd m, n and ld. The Gram partials summed by tn_cu_gram_reduce: within
 * (slab + nslab) u64 sum_k |y_ki y_kj| of the exact G, elementwise (each
 * entry is a chain of at most that many roundings), the FP64 input (Y
 * widened) giving the FP32 input's bits. Y <- Y Inv in place: each entry
 * within u32 |q| + 2 n u64 sum_k |y_k inv_kj| of the exact product (one
 * FP32 rounding of an FP64 sum), the rows past m in ld untouched; with the
 * flag set, Y untouched. C^T = (Y B)^T (B full, fewer columns than rows)
 * into its own room within the same bound, its padding untouched; in FP64
 * (C^T and C) within 2 n u64 sum_k |y_k b_kj|, rounding to the FP32
 * result's bits. Where
 * the hardware has no such path, skipped. */
TEST(gpu_cholqr_dmma_products) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    struct tn_cuda_ctx *c = g->cuda;
    if (!tn_cu_dmma_ok(tn_cuda_cc(c))) {
        tcnla_destroy(g);
        SKIP("no FP64 mma path (Hopper)");
    }
    const int cases[][3] = {{1000, 129, 1003}, {16384, 266, 16384}, {777, 266, 779},
                            {130, 300, 131},   {257, 384, 260},     {4100, 1, 4100},
                            {200, 63, 201}};
    for (size_t cs = 0; cs < sizeof cases / sizeof cases[0]; cs++) {
        const int m = cases[cs][0], n = cases[cs][1], ld = cases[cs][2];
        const size_t ny = (size_t)ld * n, nn = (size_t)n * n;
        const int64_t nslab = tn_gram64_nslab(m), slab = m / nslab;
        float *Y = malloc(sizeof(float) * ny), *Q = malloc(sizeof(float) * ny);
        double *Yd = malloc(sizeof(double) * ny), *G = malloc(sizeof(double) * nn);
        double *G2 = malloc(sizeof(double) * nn), *Inv = malloc(sizeof(double) * nn);
        float *u = malloc(sizeof(float) * (ny > nn ? ny : nn));
        tn_rand_uniform(31, (uint64_t)cs, -1.0f, 1.0f, (int64_t)ny, Y);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < ld; i++) {
                float *y = &Y[i + (size_t)j * ld];
                *y = i < m ? (float)(*y * pow(10.0, -3.0 * j / n)) : 7.0f; /* (7: past m) */
                Yd[i + (size_t)j * ld] = *y;
            }
        tn_rand_uniform(32, (uint64_t)cs, -1.0f, 1.0f, (int64_t)nn, u);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                Inv[i + (size_t)j * n] = i < j ? u[i + (size_t)j * n] : i == j ? 1.5 + 0.5 * u[i + (size_t)j * n] : 0.0;
        float *dY;
        double *dYd, *dP, *dG, *dI;
        int *dflag;
        CHECK(tcnla_malloc(g, (void **)&dY, sizeof(float) * ny) == 0);
        CHECK(tcnla_malloc(g, (void **)&dYd, sizeof(double) * ny) == 0);
        CHECK(tcnla_malloc(g, (void **)&dP, sizeof(double) * nn * (size_t)nslab) == 0);
        CHECK(tcnla_malloc(g, (void **)&dG, sizeof(double) * nn) == 0);
        CHECK(tcnla_malloc(g, (void **)&dI, sizeof(double) * nn) == 0);
        CHECK(tcnla_malloc(g, (void **)&dflag, sizeof(int)) == 0);
        CHECK(cudaMemcpy(dY, Y, sizeof(float) * ny, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(cudaMemcpy(dYd, Yd, sizeof(double) * ny, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(cudaMemcpy(dI, Inv, sizeof(double) * nn, cudaMemcpyHostToDevice) == cudaSuccess);
        /* the Gram matrix, from FP32 and from FP64 */
        for (int f64 = 0; f64 < 2; f64++) {
            CHECK(cudaMemset(dP, 0xff, sizeof(double) * nn * (size_t)nslab) == cudaSuccess);
            CHECK(tn_cu_gram_dmma(f64 ? (const void *)dYd : (const void *)dY, f64, ld, m, n, nslab,
                                  dP, c->stream) == 0);
            CHECK(tn_cu_gram_reduce(dP, nslab, n, dG, NULL, NULL, 0, c->stream) == 0);
            CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
            CHECK(cudaMemcpy(f64 ? G2 : G, dG, sizeof(double) * nn, cudaMemcpyDeviceToHost) ==
                  cudaSuccess);
        }
        CHECK_MSG(memcmp(G, G2, sizeof(double) * nn) == 0, "m %d n %d: FP64 input, other bits", m,
                  n);
        double worst = 0.0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i <= j; i++) {
                long double e = 0.0L, a = 0.0L;
                for (int k = 0; k < m; k++) {
                    const long double p = (long double)Y[k + (size_t)i * ld] * Y[k + (size_t)j * ld];
                    e += p, a += fabsl(p);
                }
                const double bound = (double)(slab + nslab) * 0x1p-53 * (double)a;
                const double err = fabs((double)((long double)G[i + (size_t)j * n] - e));
                worst = fmax(worst, bound > 0 ? err / bound : err > 0 ? INFINITY : 0.0);
            }
        CHECK_MSG(worst <= 1.0, "m %d n %d: Gram error at %.3g of (slab + nslab) u64 |Y|^T |Y|", m,
                  n, worst);
        /* Y <- Y Inv, and nothing where the flag is set */
        const int one = 1;
        CHECK(cudaMemcpy(dflag, &one, sizeof one, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(tn_cu_gemm_dmma(dY, ld, m, n, n, dI, n, 1, dY, ld, 0, dflag, c->stream) == 0);
        CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
        CHECK(cudaMemcpy(Q, dY, sizeof(float) * ny, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK_MSG(memcmp(Q, Y, sizeof(float) * ny) == 0, "m %d n %d: Y written under the flag", m, n);
        CHECK(cudaMemset(dflag, 0, sizeof(int)) == cudaSuccess);
        CHECK(tn_cu_gemm_dmma(dY, ld, m, n, n, dI, n, 1, dY, ld, 0, dflag, c->stream) == 0);
        CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
        CHECK(cudaMemcpy(Q, dY, sizeof(float) * ny, cudaMemcpyDeviceToHost) == cudaSuccess);
        worst = 0.0;
        int past = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < ld; i++) {
                if (i >= m) {
                    past += Q[i + (size_t)j * ld] != 7.0f;
                    continue;
                }
                long double e = 0.0L, a = 0.0L;
                for (int k = 0; k <= j; k++) {
                    const long double p = (long double)Y[i + (size_t)k * ld] * Inv[k + (size_t)j * n];
                    e += p, a += fabsl(p);
                }
                const double bound = 0x1p-24 * fabs((double)e) + 2.0 * n * 0x1p-53 * (double)a;
                const double err = fabs((double)((long double)Q[i + (size_t)j * ld] - e));
                worst = fmax(worst, bound > 0 ? err / bound : err > 0 ? INFINITY : 0.0);
            }
        CHECK_MSG(worst <= 1.0, "m %d n %d: Y Inv at %.3g of u32 |q| + 2 n u64 |Y| |Inv|", m, n,
                  worst);
        CHECK_MSG(past == 0, "m %d n %d: %d entries past m written", m, n, past);
        /* C^T = (Y B)^T into its own room (the small SVD's V^T = Xs^T W^T):
         * B full, l = n x kc, ld n + 1; C^T kc x m, ld kc + 2 (its padding
         * untouched) */
        {
            const int kc = n > 10 ? n - 10 : n, ldb = n + 1, ldc = kc + 2;
            const size_t nb = (size_t)ldb * kc, nc = (size_t)ldc * m;
            double *Bf = malloc(sizeof(double) * nb);
            float *Ct = malloc(sizeof(float) * nc), *ub = malloc(sizeof(float) * nb);
            tn_rand_uniform(33, (uint64_t)cs, -1.0f, 1.0f, (int64_t)nb, ub);
            for (size_t e = 0; e < nb; e++) Bf[e] = ub[e];
            double *dB;
            float *dC;
            CHECK(tcnla_malloc(g, (void **)&dB, sizeof(double) * nb) == 0);
            CHECK(tcnla_malloc(g, (void **)&dC, sizeof(float) * nc) == 0);
            CHECK(cudaMemcpy(dB, Bf, sizeof(double) * nb, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK(cudaMemset(dC, 0, sizeof(float) * nc) == cudaSuccess);
            CHECK(cudaMemcpy(dY, Y, sizeof(float) * ny, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK(tn_cu_gemm_dmma(dY, ld, m, n, kc, dB, ldb, 0, dC, ldc, 1, NULL, c->stream) == 0);
            CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
            CHECK(cudaMemcpy(Ct, dC, sizeof(float) * nc, cudaMemcpyDeviceToHost) == cudaSuccess);
            /* the exact products and their sums of magnitudes, kept for the FP64 runs */
            long double *Ex = malloc(sizeof(long double) * (size_t)m * kc);
            long double *Ab = malloc(sizeof(long double) * (size_t)m * kc);
            REQUIRE(Ex && Ab);
            worst = 0.0, past = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < ldc; j++) {
                    const float got = Ct[j + (size_t)i * ldc];
                    if (j >= kc) {
                        past += got != 0.0f;
                        continue;
                    }
                    long double e = 0.0L, a = 0.0L;
                    for (int q = 0; q < n; q++) {
                        const long double p = (long double)Y[i + (size_t)q * ld] * Bf[q + (size_t)j * ldb];
                        e += p, a += fabsl(p);
                    }
                    Ex[i + (size_t)j * m] = e, Ab[i + (size_t)j * m] = a;
                    const double bound = 0x1p-24 * fabs((double)e) + 2.0 * n * 0x1p-53 * (double)a;
                    const double err = fabs((double)((long double)got - e));
                    worst = fmax(worst, bound > 0 ? err / bound : err > 0 ? INFINITY : 0.0);
                }
            CHECK_MSG(worst <= 1.0, "m %d l %d k %d: (Y B)^T at %.3g of the bound", m, n, kc, worst);
            CHECK_MSG(past == 0, "m %d l %d k %d: %d entries of C's padding written", m, n, kc, past);
            /* in FP64 (tn_cu_gemm_dmma64: the deflated path's V^T and Y_b),
             * as C^T (ld kc + 2) and as C (ld m + 3): the sums the FP32
             * result rounds (its bits, rounded), within 2 n u64 sum |y b|,
             * the padding untouched */
            for (int tr = 0; tr < 2; tr++) {
                const int ld64 = tr ? ldc : m + 3;
                const size_t n64 = (size_t)ld64 * (tr ? m : kc);
                double *C64 = malloc(sizeof(double) * n64), *dC64;
                CHECK(tcnla_malloc(g, (void **)&dC64, sizeof(double) * n64) == 0);
                CHECK(cudaMemset(dC64, 0, sizeof(double) * n64) == cudaSuccess);
                CHECK(tn_cu_gemm_dmma64(dY, ld, m, n, kc, dB, ldb, dC64, ld64, tr, c->stream) == 0);
                CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
                CHECK(cudaMemcpy(C64, dC64, sizeof(double) * n64, cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                int other = 0;
                worst = 0.0, past = 0;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < kc; j++) {
                        const double got = C64[tr ? j + (size_t)i * ld64 : i + (size_t)j * ld64];
                        other += (float)got != Ct[j + (size_t)i * ldc];
                        const long double e = Ex[i + (size_t)j * m], a = Ab[i + (size_t)j * m];
                        const double bound = 2.0 * n * 0x1p-53 * (double)a;
                        const double err = fabs((double)((long double)got - e));
                        worst = fmax(worst, bound > 0 ? err / bound : err > 0 ? INFINITY : 0.0);
                    }
                for (size_t e = 0; e < n64; e++) {
                    const size_t i = tr ? e / ld64 : e % ld64, j = tr ? e % ld64 : e / ld64;
                    past += (i >= (size_t)m || j >= (size_t)kc) && C64[e] != 0.0;
                }
                CHECK_MSG(worst <= 1.0, "m %d l %d k %d trans %d: FP64 Y B at %.3g of the bound", m,
                          n, kc, tr, worst);
                CHECK_MSG(other == 0, "m %d l %d k %d trans %d: %d not rounding to the FP32 result",
                          m, n, kc, tr, other);
                CHECK_MSG(past == 0, "m %d l %d k %d trans %d: %d padding entries written", m, n,
                          kc, tr, past);
                tcnla_free(g, dC64);
                free(C64);
            }
            tcnla_free(g, dB), tcnla_free(g, dC);
            free(Bf), free(Ct), free(ub), free(Ex), free(Ab);
        }
        tcnla_free(g, dY), tcnla_free(g, dYd), tcnla_free(g, dP), tcnla_free(g, dG);
        tcnla_free(g, dI), tcnla_free(g, dflag);
        free(Y), free(Q), free(Yd), free(G), free(G2), free(Inv), free(u);
    }
    CHECK(tn_cu_gemm_dmma(NULL, 1, 1, TN_DMMA_GEMM_MAX + 1, 1, NULL, TN_DMMA_GEMM_MAX + 1, 0, NULL,
                          1, 0, NULL, c->stream) != 0);
    CHECK(tn_cu_gemm_dmma64(NULL, 1, 1, TN_DMMA_GEMM_MAX + 1, 1, NULL, TN_DMMA_GEMM_MAX + 1,
                            NULL, 1, 0, c->stream) != 0);
    CHECK(tn_cu_gram_dmma(NULL, 0, 1, 0, 1, 1, NULL, c->stream) != 0);
    tcnla_destroy(g);
}
#endif

/* The FP64 CholeskyQR guard on the CUDA backend (src/linalg/cholguard.h),
 * the cases of tests/test_orth.c (orth_cholqr64_guard_no_silent_loss): Y =
 * U diag(s) V^T with kappa 1e4 .. 1e12 (m x n = 300 x 16, 1000 x 96 and
 * 2000 x 200, two solve blocks), two draws each. Waiting
 * (tcnla_orthonormalize, with and without R, and the FP16 path
 * tn_orthonormalize_f16): success with |Q^T Q - I| within 0.05 n u +
 * min(1.5 kappa^2 2^-53, 2^-7) or TCNLA_ERR_NUMERICAL with Y untouched; at
 * kappa 1e4 success, from 1e8 on a breakdown; the same verdict as the CPU
 * backend (the estimates lie 20x and more from the limit at these kappa);
 * under RETRY success within the bound of the method used (where the loss
 * guard alone failed, CholeskyQR2 continued from the first pass: its bits). Deferred
 * (tn_orthonormalize_deferred, single pass and CholeskyQR2): the flag up
 * exactly where the waiting call reported a breakdown (4, the loss alone,
 * where the pivots passed), then Y untouched, else the waiting call's bits. */
TEST(gpu_cholqr64_guard_no_silent_loss) {
    tcnla_handle_t g = gt_gpu(), c;
    if (!g) SKIP("no GPU");
    tcnla_create(&c, TCNLA_BACKEND_CPU);
    tn_call_t cl;
    tn_call_init(&cl, g);
    const int sizes[3][2] = {{300, 16}, {1000, 96}, {2000, 200}};
    const double kappas[5] = {1e4, 1e6, 1e8, 1e9, 1e12};
    const double u32 = 0x1p-24, u64 = 0x1p-53;
    for (int sz = 0; sz < 3; sz++) {
        const int m = sizes[sz][0], n = sizes[sz][1];
        const size_t mn = (size_t)m * n;
        float *Y0 = malloc(sizeof(float) * mn), *Y = malloc(sizeof(float) * mn),
              *Yw = malloc(sizeof(float) * mn), *Yc = malloc(sizeof(float) * mn);
        double *sig = malloc(sizeof(double) * n);
        uint16_t *d16 = NULL;
        float *dY = gt_to_dev(g, NULL, mn), *dR = gt_to_dev(g, NULL, (size_t)n * n);
        REQUIRE(tcnla_malloc(g, (void **)&d16, sizeof(uint16_t) * mn) == 0);
        for (int kk = 0; kk < 5; kk++)
            for (int seed = 0; seed < 2; seed++) {
                const double kappa = kappas[kk];
                for (int i = 0; i < n; i++) sig[i] = pow(kappa, -(double)i / (n - 1));
                REQUIRE(tn_testmat_latms(m, n, sig, 500 + 10 * kk + seed, Y0, m) == 0);
                const double b64 = 0.05 * n * u32 + fmin(1.5 * kappa * kappa * u64, 0x1p-7);
                memcpy(Yc, Y0, sizeof(float) * mn);
                const int stc = tcnla_orthonormalize(c, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_ERROR,
                                                     m, n, Yc, m, NULL, 0, NULL);
                /* waiting, without and with R, and the FP16 path */
                int stw[3];
                for (int v = 0; v < 3; v++) {
                    tcnla_memcpy(g, dY, Y0, sizeof(float) * mn, TCNLA_MEMCPY_HOST_TO_HANDLE);
                    stw[v] = v == 2 ? tn_orthonormalize_f16(&cl, TCNLA_ORTH_CHOLQR_FP64,
                                                            TCNLA_BREAKDOWN_ERROR, m, n, dY, m, d16, m)
                                    : tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR_FP64,
                                                           TCNLA_BREAKDOWN_ERROR, m, n, dY, m,
                                                           v ? dR : NULL, n, NULL);
                    gt_to_host(g, v ? Y : Yw, dY, mn);
                    if (v) {
                        CHECK_EQ_INT(stw[v], stw[0]);
                        if (stw[v]) CHECK(memcmp(Y, Y0, sizeof(float) * mn) == 0);
                        else if (v == 1) CHECK(memcmp(Y, Yw, sizeof(float) * mn) == 0);
                    }
                }
                CHECK_MSG(stw[0] == stc, "%dx%d kappa %.0e: GPU status %d, CPU %d", m, n, kappa,
                          stw[0], stc);
                if (kappa <= 1e4) CHECK_EQ_INT(stw[0], 0);
                if (kappa >= 1e8) CHECK_EQ_INT(stw[0], TCNLA_ERR_NUMERICAL);
                if (stw[0] == TCNLA_ERR_NUMERICAL) {
                    CHECK(memcmp(Yw, Y0, sizeof(float) * mn) == 0);
                } else if (stw[0] == 0) {
                    const double d = tu_orth_defect(Yw, m, n);
                    CHECK_MSG(d <= b64, "%dx%d kappa %.0e: |Q^T Q - I| = %.2e > %.2e", m, n,
                              kappa, d, b64);
                }
                /* RETRY */
                tcnla_memcpy(g, dY, Y0, sizeof(float) * mn, TCNLA_MEMCPY_HOST_TO_HANDLE);
                tcnla_orth_t used = (tcnla_orth_t)-1;
                const int str = tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_RETRY,
                                                     m, n, dY, m, NULL, 0, &used);
                CHECK_EQ_INT(str, 0);
                CHECK(stw[0] ? used != TCNLA_ORTH_CHOLQR_FP64 : used == TCNLA_ORTH_CHOLQR_FP64);
                if (str == 0) {
                    gt_to_host(g, Y, dY, mn);
                    const double d = tu_orth_defect(Y, m, n);
                    const double b = used == TCNLA_ORTH_CHOLQR_FP64     ? b64
                                     : used == TCNLA_ORTH_CHOLQR2_FP64 ? 0.05 * n * u32
                                                                       : 2.0 * n * u32;
                    CHECK_MSG(d <= b, "%dx%d kappa %.0e retry ran %d: |Q^T Q - I| = %.2e > %.2e",
                              m, n, kappa, (int)used, d, b);
                    if (used == TCNLA_ORTH_CHOLQR2_FP64) { /* CholeskyQR2's bits */
                        tcnla_memcpy(g, dY, Y0, sizeof(float) * mn, TCNLA_MEMCPY_HOST_TO_HANDLE);
                        CHECK_EQ_INT(tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR2_FP64,
                                                          TCNLA_BREAKDOWN_ERROR, m, n, dY, m, NULL,
                                                          0, NULL),
                                     0);
                        gt_to_host(g, Yc, dY, mn);
                        CHECK(memcmp(Y, Yc, sizeof(float) * mn) == 0);
                    }
                }
                /* deferred, both CholeskyQRs, against their waiting calls */
                for (int meth = TCNLA_ORTH_CHOLQR_FP64; meth <= TCNLA_ORTH_CHOLQR2_FP64; meth++) {
                    int st1 = stw[0];
                    if (meth == TCNLA_ORTH_CHOLQR2_FP64) {
                        tcnla_memcpy(g, dY, Y0, sizeof(float) * mn, TCNLA_MEMCPY_HOST_TO_HANDLE);
                        st1 = tcnla_orthonormalize(g, TCNLA_ORTH_CHOLQR2_FP64, TCNLA_BREAKDOWN_ERROR,
                                                   m, n, dY, m, NULL, 0, NULL);
                        gt_to_host(g, Yw, dY, mn);
                        if (st1 == 0)
                            CHECK(tu_orth_defect(Yw, m, n) <= 0.05 * n * u32);
                    }
                    int fl[TN_DEFER_SLOTS];
                    tcnla_memcpy(g, dY, Y0, sizeof(float) * mn, TCNLA_MEMCPY_HOST_TO_HANDLE);
                    REQUIRE(tn_defer_begin(&cl) == 0);
                    const int std = tn_orthonormalize_deferred(&cl, (tcnla_orth_t)meth, m, n, dY, m,
                                                               TN_DEFER_ORTH + 1);
                    REQUIRE(tn_defer_end(&cl, fl) == 0);
                    CHECK_EQ_INT(std, 0);
                    gt_to_host(g, Y, dY, mn);
                    const int f = fl[TN_DEFER_ORTH + 1];
                    CHECK_MSG((f != 0) == (st1 != 0), "%dx%d kappa %.0e method %d: flag %d, status %d",
                              m, n, kappa, meth, f, st1);
                    if (meth == TCNLA_ORTH_CHOLQR_FP64) CHECK(f == 0 || f == 1 || f == 4);
                    if (f) CHECK(memcmp(Y, Y0, sizeof(float) * mn) == 0);
                    else CHECK(memcmp(Y, Yw, sizeof(float) * mn) == 0);
                    if (getenv("TCNLA_TEST_VERBOSE"))
                        printf("  %dx%d kappa %.0e method %d: status %d flag %d\n", m, n, kappa, meth,
                               st1, f);
                }
            }
        tcnla_free(g, dY), tcnla_free(g, dR), tcnla_free(g, d16);
        free(Y0), free(Y), free(Yw), free(Yc), free(sig);
    }
    tcnla_destroy(g), tcnla_destroy(c);
}

/* The randomized SVD on the GPU under TCNLA_BREAKDOWN_ERROR with the default
 * single-pass CholeskyQR in FP64, deferred and waiting (the tuning's defer):
 * on an exponential spectrum (s_k = 1e-3) no false alarm; on a matrix of
 * exact rank 6 < l = 16 (its bases' trailing singular values are the
 * products' rounding errors) a breakdown or U with orthonormal columns, the
 * same both ways, and under RETRY U with orthonormal columns, the same bits
 * both ways. */
TEST(gpu_rsvd_cholqr64_guard) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    enum { N = 512, K = 12 };
    float *A = malloc(sizeof(float) * N * N), *U[2];
    double *sig = malloc(sizeof(double) * N);
    float *dA = gt_to_dev(g, NULL, (size_t)N * N), *dU = gt_to_dev(g, NULL, (size_t)N * K),
          *dVT = gt_to_dev(g, NULL, (size_t)K * N), *dS = gt_to_dev(g, NULL, K);
    for (int j = 0; j < 2; j++) U[j] = malloc(sizeof(float) * N * K);
    for (int cs = 0; cs < 2; cs++) {
        if (cs == 0) {
            tn_spectrum(TN_SPEC_EXP, N, K, 1e-3, 0, 0, 0, sig);
            REQUIRE(tn_testmat_svd_fast(N, N, 2 * K + 16, sig, 9, A, N) == 0);
        } else {
            REQUIRE(tn_testmat_lowrank(N, N, 6, 902, A, N) == 0);
        }
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)N * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        for (int pol = 0; pol < 2; pol++) {
            int st[2];
            for (int j = 0; j < 2; j++) {
                tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
                o.rank = K, o.oversampling = 4, o.power_iters = 2;
                o.orth = TCNLA_ORTH_CHOLQR_FP64;
                o.on_breakdown = pol ? TCNLA_BREAKDOWN_RETRY : TCNLA_BREAKDOWN_ERROR;
                GT_TUNE(g, defer, !j);
                st[j] = tcnla_rsvd(g, &o, N, N, dA, N, dU, N, dS, dVT, K);
                GT_TUNE(g, defer, 1);
                gt_to_host(g, U[j], dU, (size_t)N * K);
            }
            CHECK_EQ_INT(st[0], st[1]);
            printf("    %s, %s: status %d\n", cs ? "rank 6" : "exponential",
                   pol ? "retry" : "error", st[0]);
            if (cs == 1 && !pol && st[0] == TCNLA_ERR_NUMERICAL) continue;
            CHECK_MSG(st[0] == 0, "case %d policy %d: status %d", cs, pol, st[0]);
            if (st[0] == 0 && st[1] == 0) {
                CHECK(memcmp(U[0], U[1], sizeof(float) * N * K) == 0);
                const double d = tu_orth_defect(U[0], N, K);
                CHECK_MSG(d <= 1.0 * K * 0x1p-24 + 0x1p-12, "case %d: |U^T U - I| = %.2e", cs, d);
            }
        }
    }
    for (int j = 0; j < 2; j++) free(U[j]);
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(A), free(sig);
    tcnla_destroy(g);
}

/* ||A - U diag(S) VT||_F / ||A||_F on the host */
static double residual(const float *A, int m, int n, const float *U, const float *S, const float *VT, int k) {
    double num = 0, den = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += (double)U[i + p * m] * S[p] * VT[p + j * k];
            num += (A[i + j * m] - s) * (A[i + j * m] - s);
            den += (double)A[i + j * m] * A[i + j * m];
        }
    return sqrt(num / den);
}

/* pass_efficient on the GPU (2048 x 1536, k = 64, p = 10, q = 2): the
 * CPU test's order standard(q) <= pass-efficient(q) <= standard(q - 1)
 * (tests/test_randnla.c, exact arithmetic) to 1e-5 with every product
 * FP32-accurate (SHGEMM_FP16 projection, TCEC_FP16 after it), strict on
 * a slow decay (s_i = (i + 1)^-1/2); one product fewer; the last step
 * from the eigensolution of Y^T Y (from_w) and, with the tuning's
 * rsvd_gram = 0, from Y's QR: the same residual to 1e-5 and the values to
 * 1e-5 s_1. On the deep decay to 1e-8 with the defaults (the deflated
 * path, on R as the standard run's where the first basis's CholeskyQR
 * failed): the values to 1e-5 s_1 of the known ones, the residual within
 * 1e-3 of the standard q - 1's. U and V orthonormal to 1e-5. */
TEST(gpu_rsvd_pass_efficient) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int m = 2048, n = 1536, k = 64, p = 10, r = 4 * k + 64;
    double *sig = calloc(n, sizeof(double));
    float *A = malloc(sizeof(float) * m * n), *U = malloc(sizeof(float) * m * k),
          *VT = malloc(sizeof(float) * k * n), S[64], Spe[64];
    REQUIRE(sig && A && U && VT);
    float *dA = gt_to_dev(g, NULL, (size_t)m * n), *dU = gt_to_dev(g, NULL, (size_t)m * k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * n), *dS = gt_to_dev(g, NULL, k);
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < (c ? r : n); i++)
            sig[i] = c ? pow(10.0, -8.0 * i / k) : 1.0 / sqrt(i + 1.0);
        REQUIRE(tn_testmat_svd_fast(m, n, c ? r : n, sig, 41 + c, A, m) == 0);
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)m * n, TCNLA_MEMCPY_HOST_TO_HANDLE);
        /* standard q - 1, pass-efficient q, standard q, pass-efficient q by Y's QR */
        double res[4], known = 0, dv = 0;
        int prods[4], ran[4], from_w[4];
        for (int v = 0; v < 4; v++) {
            tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
            o.rank = k, o.oversampling = p, o.power_iters = v == 0 ? 1 : 2;
            o.pass_efficient = v == 1 || v == 3;
            if (c == 0)
                o.proj_method = TCNLA_GEMM_SHGEMM_FP16, o.power_method = TCNLA_GEMM_TCEC_FP16;
            tcnla_info_t info;
            o.info = &info;
            GT_TUNE(g, rsvd_gram, v != 3);
            REQUIRE(tcnla_rsvd(g, &o, m, n, dA, m, dU, m, dS, dVT, k) == 0);
            GT_TUNE(g, rsvd_gram, 1);
            prods[v] = info.products, ran[v] = g->cuda->ssvd.path, from_w[v] = g->cuda->ssvd.from_w;
            gt_to_host(g, U, dU, (size_t)m * k), gt_to_host(g, VT, dVT, (size_t)k * n);
            gt_to_host(g, S, dS, k);
            res[v] = residual(A, m, n, U, S, VT, k);
            if (v == 1) {
                for (int i = 0; i < k; i++) known = fmax(known, fabs(S[i] - sig[i]) / sig[0]);
                memcpy(Spe, S, sizeof S);
            }
            if (v == 3)
                for (int i = 0; i < k; i++) dv = fmax(dv, fabs((double)S[i] - Spe[i]) / Spe[0]);
            if (v != 1 && v != 3) continue;
            double ou = 0, ov = 0;
            for (int a = 0; a < k; a++)
                for (int b = 0; b <= a; b++) {
                    double su = 0, sv = 0;
                    for (int i = 0; i < m; i++) su += (double)U[i + a * m] * U[i + b * m];
                    for (int j = 0; j < n; j++) sv += (double)VT[a + j * k] * VT[b + j * k];
                    ou = fmax(ou, fabs(su - (a == b))), ov = fmax(ov, fabs(sv - (a == b)));
                }
            CHECK_MSG(ou < 1e-5 && ov < 1e-5, "run %d: U^T U - I %.1e, V^T V - I %.1e", v, ou, ov);
        }
        printf("    %s: standard q-1 %.6e, pass-efficient %.6e (ran %d, from Y %d; by Y's QR "
               "%.6e, ran %d, values differ by %.1e s_1), standard q %.6e (from W %d); products %d, %d, %d; "
               "known values %.1e s_1\n",
               c ? "deep decay, defaults" : "slow decay, TCEC", res[0], res[1], ran[1],
               from_w[1], res[3], ran[3], dv, res[2], from_w[2], prods[0], prods[1], prods[2],
               known);
        const double tol = c ? 1e-3 : 1e-5;
        CHECK_MSG(res[1] <= res[0] * (1 + tol) + (c ? 1e-7 : 0.0), "%.6e > q-1's %.6e", res[1],
                  res[0]);
        CHECK_MSG(res[1] >= res[2] * (1 - tol), "%.6e < q's %.6e", res[1], res[2]);
        CHECK_EQ_INT(prods[1], prods[2] - 1);
        /* (on the deep decay the first basis's CholeskyQR fails, and the
         * last step takes the QR path there, as the standard run's does) */
        CHECK_EQ_INT(from_w[1], c ? from_w[2] : 1);
        CHECK_EQ_INT(ran[1], c ? TN_SSVD_RAN_DEFLATE : TN_SSVD_RAN_EIG);
        CHECK_EQ_INT(from_w[3], 0);
        CHECK_MSG(fabs(res[3] / res[1] - 1) <= 1e-5 + (c ? 1e-7 / res[1] : 0.0),
                  "by Y's QR %.6e, from Y^T Y %.6e", res[3], res[1]);
        CHECK_MSG(dv <= 1e-5, "values differ by %.2e s_1", dv);
        if (c == 0)
            CHECK_MSG(res[1] < res[0] * (1 - 1e-3) && res[1] > res[2] * (1 + 1e-4),
                      "%.6e not strictly between %.6e and %.6e", res[1], res[0], res[2]);
        else
            CHECK_MSG(known <= 1e-5, "known values %.2e s_1", known);
    }
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(sig), free(A), free(U), free(VT);
    tcnla_destroy(g);
}

TEST(gpu_rsvd_tensor_core_matches_fp32_and_bound) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int N = 1024, k = 64, p = 10;
    double *sig = malloc(sizeof(double) * N);
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k),
          *VT = malloc(sizeof(float) * k * N), S[64];
    tn_spectrum(TN_SPEC_EXP, N, k, 1e-3, 0, 0, 0, sig);
    REQUIRE(tn_testmat_svd_fast(N, N, 4 * k + 64, sig, 3, A, N) == 0);
    double tail = 0, all = 0;
    for (int i = 0; i < 4 * k + 64; i++) {
        all += sig[i] * sig[i];
        if (i >= k) tail += sig[i] * sig[i];
    }
    const double opt = sqrt(tail / all), bound = sqrt(1.0 + (double)k / (p - 1)) * opt;
    float *dA = gt_to_dev(g, A, (size_t)N * N), *dU = gt_to_dev(g, NULL, (size_t)N * k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * N), *dS = gt_to_dev(g, NULL, k);
    const tcnla_gemm_method_t pm[3] = {TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_SHGEMM_TF32};
    const tcnla_gemm_method_t gm[3] = {TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_TCEC_TF32};
    double res[3];
    for (int v = 0; v < 3; v++) {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = p, o.power_iters = 2;
        o.proj_method = pm[v], o.gemm_method = gm[v];
        o.random_format = TCNLA_FMT_FP16;
        int st = tcnla_rsvd(g, &o, N, N, dA, N, dU, N, dS, dVT, k);
        REQUIRE(st == 0);
        gt_to_host(g, U, dU, (size_t)N * k), gt_to_host(g, VT, dVT, (size_t)k * N), gt_to_host(g, S, dS, k);
        res[v] = residual(A, N, N, U, S, VT, k);
        if (v == 0) { /* the same decomposition on the CPU: singular values agree */
            tcnla_handle_t c;
            tcnla_create(&c, TCNLA_BACKEND_CPU);
            float Sc[64], *Uc = malloc(sizeof(float) * N * k), *VTc = malloc(sizeof(float) * k * N);
            CHECK(tcnla_rsvd(c, &o, N, N, A, N, Uc, N, Sc, VTc, k) == 0);
            double worst = 0;
            for (int i = 0; i < k; i++) worst = fmax(worst, fabs((double)Sc[i] - S[i]) / Sc[0]);
            CHECK_MSG(worst < 1e-5, "singular values GPU vs CPU differ by %.2e", worst);
            for (int i = 1; i < k; i++) CHECK(S[i] <= S[i - 1]);
            free(Uc), free(VTc);
            tcnla_destroy(c);
        }
        printf("    %s + %s: residual %.5e (optimal %.5e, bound %.5e)\n", tcnla_gemm_method_name(pm[v]),
               tcnla_gemm_method_name(gm[v]), res[v], opt, bound);
        CHECK(res[v] <= bound);
        CHECK(res[v] >= opt * (1 - 1e-4));
    }
    CHECK(res[1] <= 1.05 * res[0]); /* Tensor Core pipeline as accurate as FP32 */
    CHECK(res[2] <= 1.05 * res[0]);
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(sig), free(A), free(U), free(VT);
    tcnla_destroy(g);
}

/* tcnla_rsvd keeps its device memory to A plus O((m + n) l): its
 * products never take Hopper's pre-split path, whose workspace holds split
 * copies of the operands, even where a plain product of the same shape
 * would (forced here with the tuning's sm90_presplit = 1): the driver's peak is the
 * same as with the path switched off, while the plain product's peak grows
 * by 2 bytes per element of A or more (the control, on Hopper only). */
TEST(gpu_rsvd_memory_bound_without_presplit) {
    tcnla_handle_t g0 = gt_gpu();
    if (!g0) SKIP("no GPU");
    tcnla_destroy(g0);
    /* l = k + p = 610 >= 512: the product A Omega alone would take the path */
    const int N = 2048, k = 600, p = 10;
    float *A = malloc(sizeof(float) * N * N);
    gt_uniform(91, -1, 1, (int64_t)N * N, A);
    size_t peak_rsvd[2], peak_gemm[2];
    for (int ps = 0; ps < 2; ps++) {
        tcnla_handle_t g = gt_gpu();
        GT_TUNE(g, sm90_presplit, ps);
        float *dA = gt_to_dev(g, A, (size_t)N * N), *dU = gt_to_dev(g, NULL, (size_t)N * k),
              *dVT = gt_to_dev(g, NULL, (size_t)k * N), *dS = gt_to_dev(g, NULL, k),
              *dY = NULL, *dO = NULL;
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = p;
        size_t cur;
        CHECK(tcnla_reset_peak_memory(g) == 0);
        CHECK(tcnla_rsvd(g, &o, N, N, dA, N, dU, N, dS, dVT, k) == 0);
        CHECK(tcnla_memory_stats(g, &cur, &peak_rsvd[ps]) == 0);
        tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
        tcnla_free(g, dY), tcnla_free(g, dO);
        tcnla_destroy(g);
        /* the control: Y = A O with O of 1024 columns (one slice), on a new handle */
        g = gt_gpu();
        GT_TUNE(g, sm90_presplit, ps);
        dA = gt_to_dev(g, A, (size_t)N * N), dY = gt_to_dev(g, NULL, (size_t)N * 1024);
        dO = gt_to_dev(g, NULL, (size_t)N * 1024);
        CHECK(tcnla_random_fill(g, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 3, 0, N, 1024, dO, N) == 0);
        CHECK(tcnla_reset_peak_memory(g) == 0);
        CHECK(tcnla_sgemm(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, N, 1024, N, 1.0f, dA,
                          N, dO, N, 0.0f, dY, N) == 0);
        CHECK(tcnla_memory_stats(g, &cur, &peak_gemm[ps]) == 0);
        tcnla_free(g, dA), tcnla_free(g, dY), tcnla_free(g, dO);
        tcnla_destroy(g);
    }
    printf("    peak MiB: rsvd %.1f / %.1f, plain product %.1f / %.1f (pre-split off / on)\n",
           peak_rsvd[0] / 1048576.0, peak_rsvd[1] / 1048576.0, peak_gemm[0] / 1048576.0,
           peak_gemm[1] / 1048576.0);
    CHECK(peak_rsvd[1] == peak_rsvd[0]);
#ifdef TCNLA_HAVE_CUDA
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (major == 9 && minor == 0) CHECK(peak_gemm[1] >= peak_gemm[0] + (size_t)N * N * 2);
#endif
    free(A);
}

/* The small SVD's GPU paths (src/backend/cuda/small_svd_cuda.c): the
 * eigensolution of W^T W (the default), with the tuning's rsvd_gram = 0
 * W's QR and the eigensolution of R R^T, and, forced by small_svd_jacobi,
 * the one-sided Jacobi path give the same singular values and residual, V
 * orthonormal; a spectrum spanning 1e7 over the
 * kept k (beyond the eigensolution's 1e4) goes to the deflated Gram path
 * (by default; rsvd_gram = 0: after W's QR) or the Jacobi path and still
 * meets the bound (eq. (4) plus FP32's floor) and the CPU's values. */
TEST(gpu_rsvd_small_svd_paths_agree) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int N = 512, k = 32, p = 8;
    double *sig = malloc(sizeof(double) * N);
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k),
          *VT = malloc(sizeof(float) * k * N), S[2][32], Sc[32];
    float *dA = gt_to_dev(g, NULL, (size_t)N * N), *dU = gt_to_dev(g, NULL, (size_t)N * k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * N), *dS = gt_to_dev(g, NULL, k);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k, o.oversampling = p, o.power_iters = 2;
    for (int c = 0; c < 2; c++) {
        const double low = c == 0 ? 1e-3 : 1e-7;
        tn_spectrum(TN_SPEC_EXP, N, k, low, 0, 0, 0, sig);
        REQUIRE(tn_testmat_svd_fast(N, N, 2 * k + 32, sig, 5, A, N) == 0);
        double tail = 0, all = 0;
        for (int i = 0; i < 2 * k + 32; i++) {
            all += sig[i] * sig[i];
            if (i >= k) tail += sig[i] * sig[i];
        }
        /* eq. (4)'s bound, plus FP32's floor (about sqrt(k) u_32 = 3.4e-7) that
         * the 1e-7 spectrum reaches */
        const double bound = sqrt(1.0 + (double)k / (p - 1)) * sqrt(tail / all) + 4e-7;
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)N * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        double res[3];
        float S2[32];
        for (int j = 0; j < 3; j++) { /* j = 2: W's QR, then the eigensolution of R R^T */
            if (j == 1) GT_TUNE(g, small_svd_jacobi, 1);
            if (j == 2) GT_TUNE(g, rsvd_gram, 0);
            REQUIRE(tcnla_rsvd(g, &o, N, N, dA, N, dU, N, dS, dVT, k) == 0);
            GT_TUNE(g, small_svd_jacobi, 0);
            GT_TUNE(g, rsvd_gram, 1);
            gt_to_host(g, U, dU, (size_t)N * k), gt_to_host(g, VT, dVT, (size_t)k * N),
                gt_to_host(g, j < 2 ? S[j] : S2, dS, k);
            res[j] = residual(A, N, N, U, j < 2 ? S[j] : S2, VT, k);
            double orth = 0; /* V's orthogonality, every path */
            for (int a = 0; a < k; a++)
                for (int b = 0; b <= a; b++) {
                    double sv = 0;
                    for (int i = 0; i < N; i++) sv += (double)VT[a + i * k] * VT[b + i * k];
                    orth = fmax(orth, fabs(sv - (a == b)));
                }
            CHECK_MSG(orth < 1e-5, "case %d path %d: V^T V - I %.2e", c, j, orth);
            CHECK_MSG(res[j] <= bound, "case %d path %d: residual %.3e > bound %.3e", c, j,
                      res[j], bound);
        }
        tcnla_handle_t ch;
        tcnla_create(&ch, TCNLA_BACKEND_CPU);
        float *Uc = malloc(sizeof(float) * N * k), *VTc = malloc(sizeof(float) * k * N);
        CHECK(tcnla_rsvd(ch, &o, N, N, A, N, Uc, N, Sc, VTc, k) == 0);
        double dj = 0, dc = 0;
        for (int i = 0; i < k; i++) {
            dj = fmax(dj, fabs((double)S[0][i] - S[1][i]) / S[1][0]);
            dj = fmax(dj, fabs((double)S2[i] - S[1][i]) / S[1][0]);
            dc = fmax(dc, fabs((double)S[0][i] - Sc[i]) / Sc[0]);
        }
        printf("    spectrum to %.0e: residual %.5e (default) %.5e (Jacobi) %.5e (QR + eig), "
               "bound %.5e; values differ by %.1e (paths) %.1e (CPU)\n",
               low, res[0], res[1], res[2], bound, dj, dc);
        CHECK(dj < 1e-6 && dc < 1e-5);
        /* the default (where the first basis' CholeskyQR held: the deflated
         * Gram path on W) no worse than the Jacobi path */
        CHECK(res[0] <= (1 + 1e-3) * res[1]);
        CHECK(fabs(res[2] - res[1]) <= 1e-3 * res[1]);
        free(Uc), free(VTc);
        tcnla_destroy(ch);
    }
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(sig), free(A), free(U), free(VT);
    tcnla_destroy(g);
}

/* The small SVD's symmetric eigensolver (tn_cuda_syev: the solver of
 * src/backend/cuda/kernels/syev_kernels.cu, cuSOLVER's syevd where that refuses) on FP64
 * Gram matrices W^T W of columns scaled from 1 down to `span`, on a
 * diagonal matrix, on ones with an eigenvalue of multiplicity n - 1 and
 * on V diag(lam) V^T with clusters (kind 3: two halves at 1 and 1e-4, each
 * spread by 1e-9 of its value; 4: values 1 .. 1e-8 and a half at 1e-17
 * noise; 5: 1 .. 1e-16 geometric; 6: three values, each n / 3 times; 7:
 * as 4; 8: a flat top, a half at 1 spread by 1e-12, and 1e-4 .. 1e-6
 * below it; 9: gap_noise's Gram matrix as the randomized SVD meets it,
 * 128 values at 1.0002 and 138 at 1.02e-4, spread by 6e-8 and 6e-6 of
 * their values; in 5 and 7 the columns of values below 1e-9 lam_max are
 * asked only to span theirs, xr), where T's twisted vectors are not
 * orthogonal: the clusters near zero (4, 5, 7) repaired (once, no syevd);
 * the groups away from zero (3, 6, 8, 9) from their child representations,
 * with no repair, and (3, 6, 8) without them (the test hook mr_off)
 * repaired (filtered start vectors, shifted Rayleigh-Ritz steps; on one
 * lane and two the same bits) (2, 2 I + u u^T, by the fast solver,
 * repaired or not): the
 * eigenvalues agree with syevd's (the tuning's syev_fast = 0) to 1e-12 lam_max, X
 * is orthonormal and G X = X diag(lam) to 1e-11 (lam_max; kind 5: in the
 * columns above xr lam_max); the fast solver
 * must be the one used where the spectrum spans at most 1e-6 (sizes 1 to
 * 448: each of its kernels, 9, 12 and 14 slots, at the ends of its range). */
TEST(gpu_syev_fast_matches_syevd) {
#ifdef TCNLA_HAVE_CUDA
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    const struct { int n; double span; int kind; } cs[] = {
        {266, 1e-3, 0}, {440, 1e-2, 0}, {1, 1, 0}, {2, 0.5, 0}, {3, 0.5, 0}, {33, 0.1, 0},
        {266, 1e-7, 0}, {100, 0, 1}, {64, 0, 2}, {288, 1e-2, 0}, {289, 1e-2, 0}, {448, 1e-2, 0},
        {266, 0, 2}, {266, 0, 3}, {266, 0, 4}, {266, 0, 5}, {300, 0, 6}, {266, 0, 7},
        {266, 0, 8}, {266, 0, 9}};
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        const int n = cs[ci].n, m = 2 * n + 40;
        double *G = calloc((size_t)n * n, sizeof(double)), *X = malloc(sizeof(double) * n * n),
               *lam = malloc(sizeof(double) * n), *lref = malloc(sizeof(double) * n);
        if (cs[ci].kind == 0) { /* W^T W, W m x n with columns scaled 1 .. span */
            float *W = malloc(sizeof(float) * m * n);
            gt_uniform(400 + ci, -1, 1, (int64_t)m * n, W);
            for (int j = 0; j < n; j++) {
                const double sc = n > 1 ? pow(cs[ci].span, (double)j / (n - 1)) : 1.0;
                for (int i = 0; i < m; i++) W[i + j * m] = (float)(W[i + j * m] * sc);
            }
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++) {
                    double sv = 0;
                    for (int t = 0; t < m; t++) sv += (double)W[t + i * m] * W[t + j * m];
                    G[i + j * n] = G[j + i * n] = sv;
                }
            free(W);
        } else if (cs[ci].kind == 1) { /* diagonal, distinct */
            for (int j = 0; j < n; j++) G[j + j * n] = 1.0 + ((j * 37) % n);
        } else if (cs[ci].kind == 2) { /* 2 I + u u^T */
            float *u = malloc(sizeof(float) * n);
            gt_uniform(77, -1, 1, n, u);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) G[i + j * n] = (double)u[i] * u[j] + 2.0 * (i == j);
            free(u);
        } else { /* V diag(lam) V^T, V a product of three reflectors: clusters */
            double *lv = malloc(sizeof(double) * n);
            float *r = malloc(sizeof(float) * 4 * n);
            gt_uniform(500 + ci, -1, 1, 4 * n, r);
            for (int i = 0; i < n; i++) {
                const double x = (double)i / n;
                lv[i] = cs[ci].kind == 3   ? (i < n / 2 ? 1.0 + 1e-9 * r[i] : 1e-4 + 1e-13 * r[i])
                        : cs[ci].kind == 4 || cs[ci].kind == 7
                            ? (i < n / 2 ? pow(10.0, -8.0 * x) : 1e-17 * r[i])
                        : cs[ci].kind == 5 ? pow(10.0, -16.0 * x)
                        : cs[ci].kind == 8
                            ? (i < n / 2 ? 1.0 + 1e-12 * r[i] : pow(10.0, -4.0 - 2.0 * x))
                        : cs[ci].kind == 9
                            ? (i < 128 ? 1.0002 * (1.0 + 6e-8 * r[i])
                                       : 1.02e-4 * (1.0 + 6e-6 * r[i]))
                            : (i % 3 == 0 ? 1.0 : i % 3 == 1 ? 0.5 : 0.25);
            }
            for (int j = 0; j < n; j++) G[j + j * n] = lv[j];
            for (int h = 1; h <= 3; h++) { /* G <- H G H, H = I - 2 v v^T / v^T v */
                const float *v = r + h * n;
                double vv = 0;
                for (int i = 0; i < n; i++) vv += (double)v[i] * v[i];
                for (int pass = 0; pass < 2; pass++) { /* H G, then H (H G)^T = H G H */
                    for (int j = 0; j < n; j++) {
                        double t = 0;
                        for (int i = 0; i < n; i++) t += (double)v[i] * G[i + j * n];
                        t *= 2.0 / vv;
                        for (int i = 0; i < n; i++) G[i + j * n] -= t * v[i];
                    }
                    for (int j = 0; j < n; j++) /* transposed (pass 1: made symmetric) */
                        for (int i = 0; i < j; i++) {
                            const double a = G[i + j * n], b = G[j + i * n];
                            G[i + j * n] = pass ? 0.5 * (a + b) : b;
                            G[j + i * n] = pass ? 0.5 * (a + b) : a;
                        }
                }
            }
            free(lv), free(r);
        }
        double *dG = NULL, *dX = NULL, *dl = NULL;
        REQUIRE(tcnla_malloc(g, (void **)&dG, sizeof(double) * n * n) == 0);
        REQUIRE(tcnla_malloc(g, (void **)&dX, sizeof(double) * n * n) == 0);
        REQUIRE(tcnla_malloc(g, (void **)&dl, sizeof(double) * n) == 0);
        tcnla_memcpy(g, dG, G, sizeof(double) * n * n, TCNLA_MEMCPY_HOST_TO_HANDLE);
        int fast = -1, fref = -1;
        /* (5, 7: the columns below 1e-9 lam_max asked only to span theirs) */
        const double xr = cs[ci].kind == 5 || cs[ci].kind == 7 ? 1e-9 : 0.0;
        GT_TUNE(g, syev_fast, 0);
        REQUIRE(tn_cuda_syev(g, n, dG, 0.0, dX, dl, &fref) == 0);
        GT_TUNE(g, syev_fast, 1);
        tcnla_memcpy(g, lref, dl, sizeof(double) * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
        /* the groups away from zero (3, 6, 8, 9) also without their children
         * (mr_off): repaired, the same bits on one lane and two */
        const int grp = cs[ci].kind == 3 || cs[ci].kind == 6 || cs[ci].kind == 8 ||
                        cs[ci].kind == 9;
        for (int off = 0; off <= (grp && cs[ci].kind != 9); off++) {
            g->cuda->mr_off = off;
            const int st = tn_cuda_syev(g, n, dG, xr, dX, dl, &fast);
            g->cuda->mr_off = 0;
            REQUIRE(st == 0);
            tcnla_memcpy(g, lam, dl, sizeof(double) * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
            tcnla_memcpy(g, X, dX, sizeof(double) * n * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
            const double lmax = fmax(fabs(lam[0]), fabs(lam[n - 1]));
            double dlam = 0, orth = 0, res = 0;
            for (int j = 0; j < n; j++) dlam = fmax(dlam, fabs(lam[j] - lref[j]) / lmax);
            for (int a = 0; a < n; a++)
                for (int b = 0; b <= a; b++) {
                    double sv = 0;
                    for (int i = 0; i < n; i++) sv += X[i + a * n] * X[i + b * n];
                    orth = fmax(orth, fabs(sv - (a == b)));
                }
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n && !(fabs(lam[j]) < xr * lmax); i++) {
                    double sv = 0;
                    for (int t = 0; t < n; t++) sv += G[i + t * n] * X[t + j * n];
                    res = fmax(res, fabs(sv - lam[j] * X[i + j * n]) / lmax);
                }
            const int repairs = g->cuda->ssvd.syev_repairs;
            printf("    n %3d kind %d span %.0e%s: %s%s, lam vs syevd %.1e, X^T X - I %.1e, "
                   "G X - X lam %.1e\n", n, cs[ci].kind, cs[ci].span,
                   off ? " (no children)" : "", fast ? "fast solver" : "syevd",
                   repairs ? " (clusters repaired)" : "", dlam, orth, res);
            CHECK_EQ_INT(fref, 0);
            CHECK(dlam <= 1e-12 && orth <= 1e-11 && res <= 1e-11);
            if (major >= 9 && (cs[ci].kind == 1 || (cs[ci].kind == 0 && cs[ci].span >= 1e-3)))
                CHECK_EQ_INT(fast, 1);
            const int bottom = cs[ci].kind == 4 || cs[ci].kind == 5 || cs[ci].kind == 7;
            if (major >= 9 && bottom) { /* the cluster near zero: repaired, not syevd */
                CHECK_EQ_INT(fast, 1);
                CHECK_EQ_INT(repairs, 1);
            }
            if (major >= 9 && (grp || cs[ci].kind == 2)) { /* groups: not syevd */
                CHECK_EQ_INT(fast, 1);
                if (grp) CHECK_EQ_INT(repairs, off); /* (with their children: no repair) */
            }
            if (major >= 9 && off) { /* the groups all on the handle's stream: the same bits */
                double *X1 = malloc(sizeof(double) * n * n), *l1 = malloc(sizeof(double) * n);
                g->cuda->lane_off = 1, g->cuda->mr_off = 1;
                REQUIRE(tn_cuda_syev(g, n, dG, xr, dX, dl, &fast) == 0);
                g->cuda->lane_off = 0, g->cuda->mr_off = 0;
                tcnla_memcpy(g, l1, dl, sizeof(double) * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
                tcnla_memcpy(g, X1, dX, sizeof(double) * n * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
                CHECK_MSG(memcmp(X1, X, sizeof(double) * n * n) == 0 &&
                              memcmp(l1, lam, sizeof(double) * n) == 0,
                          "n %d kind %d: one lane and two differ", n, cs[ci].kind);
                CHECK_EQ_INT(g->cuda->ssvd.syev_repairs, 1);
                free(X1), free(l1);
            }
        }
        tcnla_free(g, dG), tcnla_free(g, dX), tcnla_free(g, dl);
        free(G), free(X), free(lam), free(lref);
    }
    tcnla_destroy(g);
#else
    SKIP("built without CUDA");
#endif
}

/* RSVD's last step from the eigensolution of W^T W (tn_cuda_svd_from_gram):
 * with k = l, W^T = Xk diag(S) VT to FP32 accuracy, VT's rows and Xk's
 * columns orthonormal, S descending; columns spanning 1e-6 (beyond the
 * path's s_k >= 1e-4 s_1; with the deflated levels switched off), or a
 * NaN in W, give TN_GRAM_NOT_TAKEN with nothing written. */
TEST(gpu_rsvd_svd_from_gram) {
#ifdef TCNLA_HAVE_CUDA
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int n = 700, l = 40;
    float *W = malloc(sizeof(float) * n * l), *X = malloc(sizeof(float) * l * l),
          *VT = malloc(sizeof(float) * l * n), S[40];
    float *dW = gt_to_dev(g, NULL, (size_t)n * l), *dX = gt_to_dev(g, NULL, (size_t)l * l),
          *dVT = gt_to_dev(g, NULL, (size_t)l * n), *dS = gt_to_dev(g, NULL, l);
    for (int c = 0; c < 3; c++) {
        const double span = c == 1 ? 1e-6 : 1e-3; /* of the column scales */
        gt_uniform(200 + c, -1, 1, (int64_t)n * l, W);
        for (int j = 0; j < l; j++)
            for (int i = 0; i < n; i++) W[i + j * n] *= (float)pow(span, (double)j / (l - 1));
        if (c == 2) W[17 + 5 * n] = NAN;
        tcnla_memcpy(g, dW, W, sizeof(float) * (size_t)n * l, TCNLA_MEMCPY_HOST_TO_HANDLE);
        for (int i = 0; i < l * n; i++) VT[i] = 7.0f;
        tcnla_memcpy(g, dVT, VT, sizeof(float) * (size_t)n * l, TCNLA_MEMCPY_HOST_TO_HANDLE);
        /* (the span of 1e-6 with the deflated levels off: the plain Gram
         * path's refusal; test_gpu_small_svd_defl.c takes it with them on) */
        if (c == 1) GT_TUNE(g, small_svd_deflate, 0);
        const int st = tn_cuda_svd_from_gram(g, n, l, l, dW, n, dX, dS, dVT, l);
        GT_TUNE(g, small_svd_deflate, 1);
        gt_to_host(g, VT, dVT, (size_t)l * n);
        if (c > 0) {
            CHECK_EQ_INT(st, TN_GRAM_NOT_TAKEN);
            int untouched = 1;
            for (int i = 0; i < l * n; i++) untouched &= VT[i] == 7.0f;
            CHECK(untouched);
            continue;
        }
        REQUIRE(st == 0);
        gt_to_host(g, X, dX, (size_t)l * l), gt_to_host(g, S, dS, l);
        double num = 0, den = 0, orth_v = 0, orth_x = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < l; i++) { /* W^T(i, j) = sum_p X(i, p) S(p) VT(p, j) */
                double s = 0;
                for (int p = 0; p < l; p++) s += (double)X[i + p * l] * S[p] * VT[p + j * l];
                num += (s - W[j + i * n]) * (s - W[j + i * n]);
                den += (double)W[j + i * n] * W[j + i * n];
            }
        for (int a = 0; a < l; a++)
            for (int b = 0; b < l; b++) {
                double sv = 0, sx = 0;
                for (int j = 0; j < n; j++) sv += (double)VT[a + j * l] * VT[b + j * l];
                for (int i = 0; i < l; i++) sx += (double)X[i + a * l] * X[i + b * l];
                orth_v = fmax(orth_v, fabs(sv - (a == b)));
                orth_x = fmax(orth_x, fabs(sx - (a == b)));
            }
        printf("    W^T - X S VT: %.2e relative; orthogonality of VT %.2e, X %.2e; s %.3e .. %.3e\n",
               sqrt(num / den), orth_v, orth_x, S[0], S[l - 1]);
        CHECK(sqrt(num / den) < 1e-6);
        CHECK(orth_v < 1e-5 && orth_x < 1e-5);
        for (int i = 1; i < l; i++) CHECK(S[i] <= S[i - 1]);
        CHECK(S[l - 1] > 0);
        /* trans (the pass-efficient SVD's U): VT transposed, bit for bit */
        float *V = malloc(sizeof(float) * n * l);
        REQUIRE(V);
        REQUIRE(tn_cuda_svd_from_gram_rows(g, n, l, l, dW, n, dX, dS, dVT, n, 1, NULL, NULL) == 0);
        gt_to_host(g, V, dVT, (size_t)l * n);
        int same = 1;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < l; i++) same &= V[j + i * n] == VT[i + j * l];
        CHECK(same);
        free(V);
    }
    tcnla_free(g, dW), tcnla_free(g, dX), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(W), free(X), free(VT);
    tcnla_destroy(g);
#else
    SKIP("built without CUDA");
#endif
}

/* tcnla_rsvd defers its CholeskyQRs' and products' verdicts (one wait per
 * call): the same bits as without deferral (the tuning's defer = 0, and A's
 * check by its exact pass: trust_bounded = 0) on a decaying
 * spectrum; on a matrix of rank 5 < l with 5 nonzero rows (Y = A Omega
 * then has exactly rank 5), whose CholeskyQR breaks down, the
 * call is redone deciding as it goes: with on_breakdown = RETRY the same
 * bits as without deferral and an accurate factorization, with ERROR the
 * same status. The check of A once per call by its bounded pass
 * (tn_cuda_trust) against the exact one: the decaying spectrum with row 5
 * scaled by 1e-6 (case 3: the bounded pass does not decide, the exact one
 * refuses that row for the FP16 kinds, and SHGEMM_FP16 reports
 * TCNLA_ERR_RANGE), and every product in TCNLA_GEMM_FP16 (case 4, the F16
 * kind, where the bounded pass decides): the same bits or status. Case 5,
 * both (row 5 small, every product in FP16: no verdict is read before the
 * end of the range finder, and there the products' checks have failed):
 * the same bits. Where deferral lasts to the end of the range finder, the
 * small SVD's Gram matrix is queued ahead of its last read of the
 * verdicts (tn_cuda_gram_ahead): taken where they pass (case 4; at this
 * size the defaults' early read of the first basis ends deferral),
 * dropped where the range finder runs again (case 5). */
TEST(gpu_rsvd_deferred_same_as_waiting) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int N = 384, k = 8, p = 8, rank = 5;
    float *A = malloc(sizeof(float) * N * N), *U[2], *VT[2], S[2][8];
    float *dA = gt_to_dev(g, NULL, (size_t)N * N), *dU = gt_to_dev(g, NULL, (size_t)N * k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * N), *dS = gt_to_dev(g, NULL, k);
    for (int j = 0; j < 2; j++)
        U[j] = malloc(sizeof(float) * N * k), VT[j] = malloc(sizeof(float) * k * N);
    double *sig = malloc(sizeof(double) * N);
    for (int c = 0; c < 6; c++) {
        if (c == 0 || c >= 3) {
            tn_spectrum(TN_SPEC_EXP, N, k, 1e-3, 0, 0, 0, sig);
            REQUIRE(tn_testmat_svd_fast(N, N, 2 * k + 16, sig, 9, A, N) == 0);
            if (c == 3 || c == 5)
                for (int j = 0; j < N; j++) A[5 + j * N] *= 1e-6f;
        } else { /* rank 5: X Y^T, X's rows past the fifth zero (so are A's and Y's) */
            float *X = malloc(sizeof(float) * N * rank), *Y = malloc(sizeof(float) * N * rank);
            gt_uniform(31, -1, 1, (int64_t)N * rank, X), gt_uniform(32, -1, 1, (int64_t)N * rank, Y);
            for (int r = 0; r < rank; r++)
                for (int i = rank; i < N; i++) X[i + r * N] = 0.0f;
            for (int j = 0; j < N; j++)
                for (int i = 0; i < N; i++) {
                    double sum = 0;
                    for (int r = 0; r < rank; r++) sum += (double)X[i + r * N] * Y[j + r * N];
                    A[i + j * N] = (float)sum;
                }
            free(X), free(Y);
        }
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)N * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = p, o.power_iters = 2;
        o.on_breakdown = c == 2 ? TCNLA_BREAKDOWN_ERROR : TCNLA_BREAKDOWN_RETRY;
        if (c >= 4) o.proj_method = o.gemm_method = o.power_method = TCNLA_GEMM_FP16;
        int st[2];
        unsigned ahead[2];
        tcnla_info_t info[2];
        for (int j = 0; j < 2; j++) {
            o.info = &info[j];
            GT_TUNE(g, defer, !j);
            GT_TUNE(g, trust_bounded, !j);
            const unsigned before = g->cuda->gram_ahead.taken;
            st[j] = tcnla_rsvd(g, &o, N, N, dA, N, dU, N, dS, dVT, k);
            ahead[j] = g->cuda->gram_ahead.taken - before;
            GT_TUNE(g, defer, 1);
            GT_TUNE(g, trust_bounded, 1);
            gt_to_host(g, U[j], dU, (size_t)N * k), gt_to_host(g, VT[j], dVT, (size_t)k * N),
                gt_to_host(g, S[j], dS, k);
        }
        CHECK_EQ_INT(st[0], st[1]);
        if (c == 2) {
            CHECK_EQ_INT(st[0], TCNLA_ERR_NUMERICAL);
            continue;
        }
        /* (3: the small row is outside what SHGEMM_FP16's split holds: the
         * projection runs SHGEMM_TF32, with and without deferral alike) */
        CHECK_EQ_INT(st[0], 0);
        CHECK(memcmp(U[0], U[1], sizeof(float) * N * k) == 0);
        CHECK(memcmp(VT[0], VT[1], sizeof(float) * N * k) == 0);
        CHECK(memcmp(S[0], S[1], sizeof(float) * k) == 0);
        for (int j = 0; j < 2; j++)
            CHECK(c == 3 || c == 5 ? info[j].fallbacks >= 1 : info[j].fallbacks == 0);
        const double res = residual(A, N, N, U[0], S[0], VT[0], k);
        static const char *const what[6] = {"exponential", "rank 5", "", "exponential, row 5 small",
                                            "exponential, FP16 products",
                                            "exponential, row 5 small, FP16 products"};
        printf("    %s: residual %.3e, s_1 %.4e s_k %.3e, fallbacks %d, Gram ahead taken %u\n",
               what[c], res, S[0][0], S[0][k - 1], info[0].fallbacks, ahead[0]);
        CHECK_EQ_INT((int)ahead[1], 0); /* (without deferral: no read to go ahead of) */
        if (c == 4) CHECK_EQ_INT((int)ahead[0], 1);
        if (c == 5) CHECK_EQ_INT((int)ahead[0], 0);
        if (c == 1) CHECK(res < 1e-5);
    }
    for (int j = 0; j < 2; j++) free(U[j]), free(VT[j]);
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(A), free(sig);
    tcnla_destroy(g);
}

/* The refinement's fp16(A - X Y^T) on the GPU: the fused kernels (slab 0:
 * on Hopper the wgmma one where m % 8 == 0, and with the tuning's lr_sm90 = 0 the
 * WMMA one; m, n, k not multiples of their tiles, k = 37 inside one k-tile,
 * k = 200 through the ring's refill; lda, ldd > m) and the cuBLAS column
 * slabs of one, 1 and 64 columns: each element the FP16 rounding of the
 * exact value to within the FP32 product's error, rows past m left alone. */
TEST(gpu_lra_residual16_slabs) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    tn_call_t cl;
    tn_call_init(&cl, g);
    enum { MMAX = 1001, N = 300, KMAX = 200, LDA = 1004, LDD = 1008 };
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    float *A = malloc(sizeof(float) * LDA * N), *X = malloc(sizeof(float) * MMAX * KMAX),
          *Y = malloc(sizeof(float) * N * KMAX);
    uint16_t *D = malloc(2 * (size_t)LDD * N);
    for (int i = 0; i < LDA * N; i++) A[i] = (float)((int)(i * 7919LL % 2003) - 1000) / 37.0f;
    for (int i = 0; i < MMAX * KMAX; i++)
        X[i] = tcnla_f16_to_f32(tcnla_f32_to_f16((float)((i * 31 % 97) - 48) / 13.0f, TCNLA_ROUND_RN));
    for (int i = 0; i < N * KMAX; i++)
        Y[i] = tcnla_f16_to_f32(tcnla_f32_to_f16((float)((i * 17 % 89) - 44) / 11.0f, TCNLA_ROUND_RN));
    float *dA = gt_to_dev(g, A, (size_t)LDA * N), *dX = gt_to_dev(g, X, (size_t)MMAX * KMAX),
          *dY = gt_to_dev(g, Y, (size_t)N * KMAX);
    uint16_t *dD = NULL;
    REQUIRE(tcnla_malloc(g, (void **)&dD, 2 * (size_t)LDD * N) == 0);
    const int cm[3] = {MMAX, 1000, 1000}, ck[3] = {37, 37, KMAX};
    const int64_t slabs[5] = {N, 0, 0, 1, 64}; /* the second 0: lr_sm90 = 0 */
    for (int q = 0; q < 3; q++)
        for (int t = 0; t < 5; t++) {
            const int M = cm[q], K = ck[q]; /* X: M x K, ld M */
            if (t == 1) {
                const int on = tn_cu_lowrank_residual16_sm90_ok(M, N, K, dA, LDA, dD, LDD,
                                                                g->cuda->smem_optin);
                printf("    m = %d, k = %d: Hopper kernel %s (cc %d.%d)\n", M, K,
                       on ? "on" : "off", major, minor);
                if (major == 9 && minor == 0) CHECK(on == (M % 8 == 0));
            }
            if (t == 2) GT_TUNE(g, lr_sm90, 0);
            memset(D, 0xff, 2 * (size_t)LDD * N); /* NaN everywhere before each run */
            REQUIRE(tcnla_memcpy(g, dD, D, 2 * (size_t)LDD * N, TCNLA_MEMCPY_HOST_TO_HANDLE) == 0);
            REQUIRE(tn_lowrank_residual16(&cl, M, N, K, dA, LDA, dX, M, dY, N, dD, LDD, slabs[t],
                                          1.0f) == 0);
            GT_TUNE(g, lr_sm90, 1);
            REQUIRE(tcnla_memcpy(g, D, dD, 2 * (size_t)LDD * N, TCNLA_MEMCPY_HANDLE_TO_HOST) == 0);
            int bad = 0, touched = 0;
            for (int j = 0; j < N; j++) {
                for (int i = 0; i < M; i++) {
                    double s = A[i + j * LDA];
                    for (int p = 0; p < K; p++) s -= (double)X[i + p * M] * Y[j + p * N];
                    const double d = tcnla_f16_to_f32(D[i + j * LDD]);
                    if (!(fabs(d - s) <= fabs(s) * 0x1p-11 * 1.01 + 1e-4)) bad++;
                }
                for (int i = M; i < LDD; i++) touched += D[i + j * LDD] != 0xffff;
            }
            CHECK_EQ_INT(bad, 0);
            CHECK_EQ_INT(touched, 0);
        }
    tcnla_free(g, dA), tcnla_free(g, dX), tcnla_free(g, dY), tcnla_free(g, dD);
    free(A), free(X), free(Y), free(D);
    tcnla_destroy(g);
}

TEST(gpu_lra_refinement_and_hosvd) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    enum { M = 768, N = 640, K = 16 };
    float *A = malloc(sizeof(float) * M * N), *X = malloc(sizeof(float) * M * 3 * K),
          *Y = malloc(sizeof(float) * N * 3 * K);
    tn_testmat_lowrank(M, N, K, 4, A, M);
    float *dA = gt_to_dev(g, A, (size_t)M * N), *dX = gt_to_dev(g, NULL, (size_t)M * 3 * K),
          *dY = gt_to_dev(g, NULL, (size_t)N * 3 * K);
    double e[2];
    for (int refine = 0; refine < 2; refine++) {
        tcnla_lra_opts_t o = tcnla_lra_opts_default();
        o.rank = K;
        o.refine = refine;
        int st = tcnla_lra(g, &o, M, N, dA, M, dX, M, dY, N);
        REQUIRE(st == 0);
        int r = (int)tcnla_lra_out_rank(&o);
        gt_to_host(g, X, dX, (size_t)M * r), gt_to_host(g, Y, dY, (size_t)N * r);
        double num = 0, den = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                double s = 0;
                for (int p = 0; p < r; p++) s += (double)X[i + p * M] * Y[j + p * N];
                num += (A[i + j * M] - s) * (A[i + j * M] - s);
                den += (double)A[i + j * M] * A[i + j * M];
            }
        e[refine] = sqrt(num / den);
    }
    printf("    randLRA 16|32, CholeskyQR FP64: %.3e, with refinement %.3e\n", e[0], e[1]);
    CHECK(e[0] / e[1] >= 100);
    tcnla_free(g, dA), tcnla_free(g, dX), tcnla_free(g, dY);
    free(A), free(X), free(Y);

    /* RP-HOSVD of a Tucker tensor */
    const int64_t dims[3] = {96, 80, 64}, ranks[3] = {12, 10, 8};
    const int64_t tot = 96 * 80 * 64;
    float *T = malloc(sizeof(float) * tot), core[12 * 10 * 8], *Qh[3], *Qd[3];
    tn_testmat_tucker(3, dims, ranks, 2, 5, T);
    float *dT = gt_to_dev(g, T, (size_t)tot), *dcore = gt_to_dev(g, NULL, 960);
    for (int i = 0; i < 3; i++) {
        Qh[i] = malloc(sizeof(float) * dims[i] * ranks[i]);
        Qd[i] = gt_to_dev(g, NULL, (size_t)(dims[i] * ranks[i]));
    }
    tcnla_hosvd_opts_t ho = tcnla_hosvd_opts_default();
    for (int i = 0; i < 3; i++) ho.ranks[i] = ranks[i];
    REQUIRE(tcnla_hosvd(g, &ho, 3, dims, dT, dcore, Qd) == 0);
    gt_to_host(g, core, dcore, 960);
    for (int i = 0; i < 3; i++) gt_to_host(g, Qh[i], Qd[i], (size_t)(dims[i] * ranks[i]));
    /* reconstruct element by element */
    double num = 0, den = 0;
    for (int64_t c3 = 0; c3 < 64; c3++)
        for (int64_t b = 0; b < 80; b++)
            for (int64_t a = 0; a < 96; a++) {
                double s = 0;
                for (int z = 0; z < 8; z++)
                    for (int y = 0; y < 10; y++) {
                        double t = Qh[1][b + y * 80] * Qh[2][c3 + z * 64];
                        for (int x = 0; x < 12; x++) s += core[x + 12 * (y + 10 * z)] * Qh[0][a + x * 96] * t;
                    }
                double v = T[a + 96 * (b + 80 * c3)];
                num += (v - s) * (v - s), den += v * v;
            }
    printf("    RP-HOSVD (SHGEMM_FP16 projections): %.3e\n", sqrt(num / den));
    CHECK(sqrt(num / den) < 1e-5);
    tcnla_free(g, dT), tcnla_free(g, dcore);
    for (int i = 0; i < 3; i++) tcnla_free(g, Qd[i]), free(Qh[i]);
    free(T);
    tcnla_destroy(g);
}

/* Deferred verdicts (tn_defer_begin / _end): a deferred CholeskyQR gives the
 * bits of the waiting one where it succeeds, and where it breaks down (a
 * repeated column) or meets NaN it raises its flag and leaves Y untouched;
 * a product's operand checks raise the NaN / range flags instead of
 * waiting, and on clean operands the product is the waiting one's. */
TEST(gpu_deferred_verdicts_flags_and_bits) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    tn_call_t cl;
    tn_call_init(&cl, g);
    enum { M = 700, N = 24 };
    float *Y0 = malloc(sizeof(float) * M * N), *Y = malloc(sizeof(float) * M * N),
          *Yw = malloc(sizeof(float) * M * N);
    tn_rand_normal(11, 1, 0, 1, M * N, Y0);
    float *dY = gt_to_dev(g, Y0, M * N);
    int fl[TN_DEFER_SLOTS];
    for (int meth = TCNLA_ORTH_CHOLQR_FP64; meth <= TCNLA_ORTH_CHOLQR2_FP64; meth++) {
        for (int c = 0; c < 3; c++) { /* clean, a repeated column, NaN */
            float *Yc = malloc(sizeof(float) * M * N);
            memcpy(Yc, Y0, sizeof(float) * M * N);
            if (c == 1)
                for (int i = 0; i < M; i++) Yc[i + 9 * M] = Yc[i + 2 * M];
            if (c == 2) Yc[5 + 4 * M] = NAN;
            tcnla_memcpy(g, dY, Yc, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
            const int stw = tn_orthonormalize(&cl, (tcnla_orth_t)meth, TCNLA_BREAKDOWN_ERROR, M, N,
                                                 dY, M, NULL, 0, NULL);
            gt_to_host(g, Yw, dY, M * N);
            tcnla_memcpy(g, dY, Yc, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
            REQUIRE(tn_defer_begin(&cl) == 0);
            const int std = tn_orthonormalize_deferred(&cl, (tcnla_orth_t)meth, M, N, dY, M,
                                                       TN_DEFER_ORTH + 3);
            REQUIRE(tn_defer_end(&cl, fl) == 0);
            CHECK_EQ_INT(std, 0);
            gt_to_host(g, Y, dY, M * N);
            const int f = fl[TN_DEFER_ORTH + 3];
            for (int s = 0; s < TN_DEFER_SLOTS; s++)
                if (s != TN_DEFER_ORTH + 3) CHECK_EQ_INT(fl[s], 0);
            if (c == 0) {
                CHECK_EQ_INT(stw, 0);
                CHECK_EQ_INT(f, 0);
                CHECK_MSG(memcmp(Y, Yw, sizeof(float) * M * N) == 0, "method %d: not the same bits", meth);
            } else {
                CHECK_EQ_INT(stw, TCNLA_ERR_NUMERICAL);
                CHECK_MSG(c == 1 ? f == 1 : (f & 2) != 0, "method %d case %d: flag %d", meth, c, f);
                CHECK_MSG(memcmp(Y, Yc, sizeof(float) * M * N) == 0, "method %d case %d: Y written", meth, c);
            }
            free(Yc);
        }
    }
    /* outside begin / end, or another method: not taken, nothing done */
    CHECK_EQ_INT(tn_orthonormalize_deferred(&cl, TCNLA_ORTH_CHOLQR2_FP64, M, N, dY, M, TN_DEFER_ORTH),
                 TCNLA_ERR_NOT_SUPPORTED);
    REQUIRE(tn_defer_begin(&cl) == 0);
    CHECK_EQ_INT(tn_orthonormalize_deferred(&cl, TCNLA_ORTH_HOUSEHOLDER, M, N, dY, M, TN_DEFER_ORTH),
                 TCNLA_ERR_NOT_SUPPORTED);
    REQUIRE(tn_defer_end(&cl, fl) == 0);

    /* products: C = A^T B (k = M) with TCEC_FP16 */
    float *B = malloc(sizeof(float) * M * 8), *C = malloc(sizeof(float) * N * 8),
          *Cw = malloc(sizeof(float) * N * 8);
    tn_rand_normal(12, 1, 0, 1, M * 8, B);
    float *dB = gt_to_dev(g, B, M * 8), *dC = gt_to_dev(g, NULL, N * 8);
    for (int c = 0; c < 3; c++) { /* clean, NaN in A, a tiny row */
        float *Ac = malloc(sizeof(float) * M * N);
        memcpy(Ac, Y0, sizeof(float) * M * N);
        if (c == 1) Ac[17 + 3 * M] = NAN;
        if (c == 2) /* a row of op(A) far below FP16's range */
            for (int i = 0; i < M; i++) Ac[i + 3 * M] *= 1e-30f;
        tcnla_memcpy(g, dY, Ac, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_FALLBACK) == 0);
        REQUIRE(tn_sgemm(&cl, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_T, TCNLA_OP_N, N, 8, M, 1.0f, dY, M,
                            dB, NULL, M, 0.0f, dC, N) == 0);
        gt_to_host(g, Cw, dC, N * 8);
        REQUIRE(tn_defer_begin(&cl) == 0);
        const int st = tn_sgemm(&cl, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_T, TCNLA_OP_N, N, 8, M, 1.0f,
                                   dY, M, dB, NULL, M, 0.0f, dC, N);
        REQUIRE(tn_defer_end(&cl, fl) == 0);
        CHECK_EQ_INT(st, 0);
        gt_to_host(g, C, dC, N * 8);
        CHECK_EQ_INT(fl[TN_DEFER_GEMM], 0);
        CHECK_EQ_INT(fl[TN_DEFER_GEMM + 1], c == 1);
        CHECK_EQ_INT(fl[TN_DEFER_GEMM + 2], c == 2);
        if (c == 0) CHECK(memcmp(C, Cw, sizeof(float) * N * 8) == 0);
        free(Ac);
    }
    CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_ERROR) == 0);
    tcnla_free(g, dY), tcnla_free(g, dB), tcnla_free(g, dC);
    free(Y0), free(Y), free(Yw), free(B), free(C), free(Cw);
    tcnla_destroy(g);
}

/* The redo of a deferred CholeskyQR in FP64 whose verdict failed
 * (cl.redo_deferred, as tcnla_rsvd redoes it): on Y of condition 3e7 the
 * single pass factors but fails its loss guard (flag 4), and the waiting
 * RETRY chain goes on as CholeskyQR2; the redo starts from the deferred
 * pass's factor and Q (cq_kept.resumed counts it) and gives the bits, the
 * status and the method of the waiting call on the same Y. On a repeated
 * column (flag 1: Householder next) the same. Where the workspace was asked
 * for in between (another orthonormalization), or the redo is of another
 * matrix, nothing is resumed and the result is still the waiting one. */
TEST(gpu_deferred_cholqr_redo_resumes) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    tn_call_t cl;
    tn_call_init(&cl, g);
    enum { M = 700, N = 24 };
    double sig[N];
    for (int i = 0; i < N; i++) sig[i] = pow(10.0, -7.5 * i / (N - 1));
    float *Y0 = malloc(sizeof(float) * M * N), *Yw = malloc(sizeof(float) * M * N),
          *Y = malloc(sizeof(float) * M * N), *Z = malloc(sizeof(float) * M * N);
    REQUIRE(tn_testmat_svd_fast(M, N, N, sig, 21, Y0, M) == 0);
    tn_rand_normal(22, 1, 0, 1, M * N, Z);
    float *dY = gt_to_dev(g, NULL, M * N), *dZ = gt_to_dev(g, Z, M * N);
    int fl[TN_DEFER_SLOTS];
    float *Yc = malloc(sizeof(float) * M * N);
    for (int c = 0; c < 4; c++) { /* guard only; repeated column; workspace used; other Y */
        memcpy(Yc, Y0, sizeof(float) * M * N);
        if (c == 1)
            for (int i = 0; i < M; i++) Yc[i + 9 * M] = Yc[i + 2 * M];
        tcnla_orth_t uw = TCNLA_ORTH_CHOLQR_FP64, ur = TCNLA_ORTH_CHOLQR_FP64;
        tcnla_memcpy(g, dY, Yc, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        const int stw = tn_orthonormalize(&cl, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_RETRY, M,
                                          N, dY, M, NULL, 0, &uw);
        gt_to_host(g, Yw, dY, M * N);
        tcnla_memcpy(g, dY, Yc, sizeof(float) * M * N, TCNLA_MEMCPY_HOST_TO_HANDLE);
        REQUIRE(tn_defer_begin(&cl) == 0);
        REQUIRE(tn_orthonormalize_deferred(&cl, TCNLA_ORTH_CHOLQR_FP64, M, N, dY, M,
                                           TN_DEFER_ORTH) == 0);
        REQUIRE(tn_defer_end(&cl, fl) == 0);
        CHECK_MSG(fl[TN_DEFER_ORTH] == (c == 1 ? 1 : 4), "case %d: flag %d", c, fl[TN_DEFER_ORTH]);
        if (c == 2) /* another matrix's orthonormalization between: the workspace reused */
            REQUIRE(tn_orthonormalize(&cl, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_RETRY, M, N, dZ,
                                      M, NULL, 0, NULL) == 0);
        if (c == 3) /* the redo of another matrix (the same values at another address) */
            REQUIRE(tcnla_memcpy(g, dZ, Yc, sizeof(float) * M * N,
                                 TCNLA_MEMCPY_HOST_TO_HANDLE) == 0);
        const unsigned before = g->cuda->cq_kept.resumed;
        cl.redo_deferred = 1;
        const int str = tn_orthonormalize(&cl, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_RETRY, M, N,
                                          c == 3 ? dZ : dY, M, NULL, 0, &ur);
        cl.redo_deferred = 0;
        const unsigned resumed = g->cuda->cq_kept.resumed - before;
        gt_to_host(g, Y, c == 3 ? dZ : dY, M * N);
        printf("    case %d: status %d, method %d, resumed %u\n", c, str, (int)ur, resumed);
        CHECK_EQ_INT(str, stw);
        CHECK_EQ_INT((int)ur, (int)uw);
        CHECK_EQ_INT((int)resumed, c < 2);
        CHECK_EQ_INT((int)uw, c == 1 ? TCNLA_ORTH_HOUSEHOLDER : TCNLA_ORTH_CHOLQR2_FP64);
        CHECK_MSG(memcmp(Y, Yw, sizeof(float) * M * N) == 0, "case %d: not the waiting bits", c);
        CHECK(tu_orth_defect(Y, M, N) <= 1e-5);
    }
    tcnla_free(g, dY), tcnla_free(g, dZ);
    free(Y0), free(Yc), free(Yw), free(Y), free(Z);
    tcnla_destroy(g);
}

/* RP-HOSVD with its verdicts deferred against the tuning's defer = 0 (each one
 * waited for): the same status and bits on a Tucker tensor; on a tensor
 * of exact multilinear rank 1 (every CholeskyQR2 breaks down and is
 * retried); with a NaN; with a row of tiny elements under both range
 * policies. */
TEST(gpu_hosvd_deferred_same_as_waiting) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int64_t dims[3] = {72, 64, 40}, ranks[3] = {10, 9, 8};
    const int64_t tot = 72 * 64 * 40, csz = 10 * 9 * 8;
    float *T = malloc(sizeof(float) * tot), *Tc = malloc(sizeof(float) * tot);
    float *out[2][4];
    tn_testmat_tucker(3, dims, ranks, 2, 5, T);
    float *dT = gt_to_dev(g, NULL, (size_t)tot), *dcore = gt_to_dev(g, NULL, csz), *Qd[3];
    for (int i = 0; i < 3; i++) Qd[i] = gt_to_dev(g, NULL, (size_t)(dims[i] * ranks[i]));
    for (int w = 0; w < 2; w++) {
        out[w][3] = malloc(sizeof(float) * csz);
        for (int i = 0; i < 3; i++) out[w][i] = malloc(sizeof(float) * dims[i] * ranks[i]);
    }
    const char *names[] = {"Tucker", "rank 1", "NaN", "tiny, range error", "tiny, fallback"};
    for (int c = 0; c < 5; c++) {
        memcpy(Tc, T, sizeof(float) * tot);
        if (c == 1) /* a_i b_j c_k in small integers and powers of two: exact */
            for (int64_t k = 0; k < 40; k++)
                for (int64_t j = 0; j < 64; j++)
                    for (int64_t i = 0; i < 72; i++)
                        Tc[i + 72 * (j + 64 * k)] =
                            ldexpf(1.0f, (int)(i % 5) - 2) * (float)(j % 7 - 3) * (float)(k % 5 + 1);
        if (c == 2) Tc[1000] = NAN;
        if (c >= 3) /* row 5 of the mode-1 unfolding far below FP16's range */
            for (int64_t q = 0; q < 64 * 40; q++) Tc[5 + 72 * q] *= 1e-30f;
        tcnla_memcpy(g, dT, Tc, sizeof(float) * tot, TCNLA_MEMCPY_HOST_TO_HANDLE);
        tcnla_set_range_policy(g, c == 4 ? TCNLA_RANGE_FALLBACK : TCNLA_RANGE_ERROR);
        int st[2];
        for (int w = 0; w < 2; w++) { /* w = 0: defer = 0 */
            GT_TUNE(g, defer, w);
            tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
            for (int i = 0; i < 3; i++) o.ranks[i] = ranks[i];
            st[w] = tcnla_hosvd(g, &o, 3, dims, dT, dcore, Qd);
            gt_to_host(g, out[w][3], dcore, csz);
            for (int i = 0; i < 3; i++) gt_to_host(g, out[w][i], Qd[i], (size_t)(dims[i] * ranks[i]));
        }
        printf("    %s: status %d / %d\n", names[c], st[0], st[1]);
        CHECK_MSG(st[0] == st[1], "%s: status %d waiting, %d deferred", names[c], st[0], st[1]);
        if (c != 3) CHECK_MSG(c == 2 ? st[0] != 0 : st[0] == 0, "%s: status %d", names[c], st[0]);
        if (st[0] == 0 && st[1] == 0) {
            CHECK_MSG(memcmp(out[0][3], out[1][3], sizeof(float) * csz) == 0, "%s: core differs", names[c]);
            for (int i = 0; i < 3; i++)
                CHECK_MSG(memcmp(out[0][i], out[1][i], sizeof(float) * dims[i] * ranks[i]) == 0,
                          "%s: Q_%d differs", names[c], i + 1);
        }
    }
    GT_TUNE(g, defer, 1);
    tcnla_set_range_policy(g, TCNLA_RANGE_ERROR);
    tcnla_free(g, dT), tcnla_free(g, dcore);
    for (int i = 0; i < 3; i++) tcnla_free(g, Qd[i]);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 4; i++) free(out[w][i]);
    free(T), free(Tc);
    tcnla_destroy(g);
}

/* RP-HOSVD's fused pass (tn_hosvd_fused, Hopper): the core's first mode
 * product and the mode-2 projection from one read of the tensor, bit for
 * bit what tcnla_sgemm (TCEC_FP16) and tn_sgemm_batched (SHGEMM_FP16) give
 * on the same trusted operands: a row tail (I2 = 200), J2 < J1, split-K
 * slices of whole slabs; then a whole tcnla_hosvd call against
 * the tuning's hosvd_fuse = 0. */
TEST(gpu_hosvd_fused_pass_same_bits) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    tn_call_t cl;
    tn_call_init(&cl, g);
    const int64_t I1 = 128, I2 = 200, T = 66, J1 = 64, J2 = 40, rest = I2 * T;
    if (!tn_hosvd_fused_possible(g, I1, J1, J2)) {
        tcnla_destroy(g);
        SKIP("no fused pass on this GPU");
    }
    float *A = malloc(sizeof(float) * I1 * rest), *Qh = malloc(sizeof(float) * I1 * J1);
    tn_rand_normal(21, 1, 0, 1, I1 * rest, A);
    tn_rand_normal(22, 1, 0, 1, I1 * J1, Qh);
    float *dA = gt_to_dev(g, A, (size_t)(I1 * rest)), *dQ = gt_to_dev(g, Qh, (size_t)(I1 * J1));
    float *dO = gt_to_dev(g, NULL, (size_t)(rest * J1)), *dO2 = gt_to_dev(g, NULL, (size_t)(rest * J1));
    float *dW = gt_to_dev(g, NULL, (size_t)(I2 * J2)), *dW2 = gt_to_dev(g, NULL, (size_t)(I2 * J2));
    uint16_t *dOm = NULL;
    REQUIRE(tcnla_malloc(g, (void **)&dOm, sizeof(uint16_t) * (size_t)(I1 * T * J2)) == 0);
    REQUIRE(tn_random_fill(&cl, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP16, 1, 3, 1, I1 * T, J2, dOm, I1 * T) == 0);
    const tcnla_gemm_method_t ms[2] = {TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16};
    REQUIRE(tn_trust(&cl, dA, I1, I1, rest, ms, 2) == 0);
    tn_trust_f16(&cl, dOm, (size_t)(I1 * T * J2));
    int done = 0;
    REQUIRE(tn_hosvd_fused(&cl, I1, I2, T, dA, dQ, J1, dOm, J2, dO, dW, &done) == 0);
    CHECK(done == 1);
    REQUIRE(tn_sgemm(&cl, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_T, TCNLA_OP_N, rest, J1, I1, 1.0f, dA,
                        I1, dQ, NULL, I1, 0.0f, dO2, rest) == 0);
    REQUIRE(tn_sgemm_batched(&cl, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_T, TCNLA_OP_N, I2, J2, I1, 1.0f,
                             dA, I1, I1 * I2, NULL, dOm, I1 * T, I1, 0.0f, dW2, I2, 0, T, 1) == 0);
    tn_untrust(&cl);
    float *o1 = malloc(sizeof(float) * rest * J1), *o2 = malloc(sizeof(float) * rest * J1);
    float *w1 = malloc(sizeof(float) * I2 * J2), *w2 = malloc(sizeof(float) * I2 * J2);
    gt_to_host(g, o1, dO, (size_t)(rest * J1)), gt_to_host(g, o2, dO2, (size_t)(rest * J1));
    gt_to_host(g, w1, dW, (size_t)(I2 * J2)), gt_to_host(g, w2, dW2, (size_t)(I2 * J2));
    int64_t bad_o = 0, bad_w = 0;
    for (int64_t i = 0; i < rest * J1; i++) bad_o += memcmp(&o1[i], &o2[i], 4) != 0;
    for (int64_t i = 0; i < I2 * J2; i++) bad_w += memcmp(&w1[i], &w2[i], 4) != 0;
    CHECK_MSG(bad_o == 0, "core product: %lld of %lld differ", (long long)bad_o, (long long)(rest * J1));
    CHECK_MSG(bad_w == 0, "projection: %lld of %lld differ", (long long)bad_w, (long long)(I2 * J2));
    /* a NaN in Q: not fused without deferral (the unfused product decides) */
    Qh[5] = NAN;
    tcnla_memcpy(g, dQ, Qh, sizeof(float) * I1 * J1, TCNLA_MEMCPY_HOST_TO_HANDLE);
    REQUIRE(tn_trust(&cl, dA, I1, I1, rest, ms, 2) == 0);
    tn_trust_f16(&cl, dOm, (size_t)(I1 * T * J2));
    REQUIRE(tn_hosvd_fused(&cl, I1, I2, T, dA, dQ, J1, dOm, J2, dO, dW, &done) == 0);
    CHECK(done == 0);
    tn_untrust(&cl);
    tcnla_free(g, dA), tcnla_free(g, dQ), tcnla_free(g, dO), tcnla_free(g, dO2);
    tcnla_free(g, dW), tcnla_free(g, dW2), tcnla_free(g, dOm);
    free(A), free(Qh), free(o1), free(o2), free(w1), free(w2);

    /* a whole call, fused against not */
    const int64_t dims[3] = {128, 72, 40}, ranks[3] = {10, 9, 8}, tot = 128 * 72 * 40, csz = 720;
    float *Tt = malloc(sizeof(float) * tot), *out[2][4];
    tn_testmat_tucker(3, dims, ranks, 2, 6, Tt);
    float *dT = gt_to_dev(g, Tt, (size_t)tot), *dcore = gt_to_dev(g, NULL, csz), *Qd[3];
    for (int i = 0; i < 3; i++) Qd[i] = gt_to_dev(g, NULL, (size_t)(dims[i] * ranks[i]));
    for (int w = 0; w < 2; w++) {
        GT_TUNE(g, hosvd_fuse, w);
        tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
        for (int i = 0; i < 3; i++) o.ranks[i] = ranks[i];
        CHECK_EQ_INT(tcnla_hosvd(g, &o, 3, dims, dT, dcore, Qd), 0);
        out[w][3] = malloc(sizeof(float) * csz);
        gt_to_host(g, out[w][3], dcore, csz);
        for (int i = 0; i < 3; i++) {
            out[w][i] = malloc(sizeof(float) * dims[i] * ranks[i]);
            gt_to_host(g, out[w][i], Qd[i], (size_t)(dims[i] * ranks[i]));
        }
    }
    GT_TUNE(g, hosvd_fuse, 1);
    CHECK_MSG(memcmp(out[0][3], out[1][3], sizeof(float) * csz) == 0, "core differs");
    for (int i = 0; i < 3; i++)
        CHECK_MSG(memcmp(out[0][i], out[1][i], sizeof(float) * dims[i] * ranks[i]) == 0,
                  "Q_%d differs", i + 1);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 4; i++) free(out[w][i]);
    tcnla_free(g, dT), tcnla_free(g, dcore);
    for (int i = 0; i < 3; i++) tcnla_free(g, Qd[i]);
    free(Tt);
    tcnla_destroy(g);
}

/* ---- the small SVD's one-sided Jacobi path (kernels/jacobi_svd.cu) */
#include "linalg/jacobi_svd.h"
#include "small_svd_mat.h"

/* max(a, b), NaN where b is NaN (fmax would drop it) */
static double ssvd_max(double a, double b) { return b <= a ? a : b; }

/* R (FP32, l x l, ld l) for M = R^T of ssvd_graded, and M widened back
 * from it (what the GPU paths see) into Mw. */
static void ssvd_r32(int l, const double *M, float *R, double *Mw) {
    for (int j = 0; j < l; j++)
        for (int i = 0; i < l; i++) R[i + (size_t)j * l] = (float)M[j + (size_t)i * l];
    for (int j = 0; j < l; j++)
        for (int i = 0; i < l; i++) Mw[i + (size_t)j * l] = (double)R[j + (size_t)i * l];
}

/* The kernel against the C reference (the same algorithm: TN_SSVD_JACOBI_PLAIN
 * is the reference's X0 = NULL) on column-graded R, s_k / s_1 about 1e-8, l
 * = 64, 266, 512, 1024 (k = l - 10): the sweeps within 1 of the
 * reference's, the values to relative 2^-22 of the reference's (the FP32
 * output's rounding; the reference itself meets 8 l 2^-52 against dgesvj in
 * tests/test_small_svd.c) and to the target 1e-6 of dgesvj's (l <= 512),
 * |u_j -+ u_j,ref|, |v_j -+ v_j,ref| <= 1e-6 (FP32 rounding is 6e-8); then the
 * preconditioned path (TN_SSVD_JACOBI: the eigenvectors of R R^T first)
 * meets the same bounds against the same values; the default path takes
 * the deflated Gram path on such R (values to 1e-6 of dgesvj's).
 * gesvdj's (TN_SSVD_GESVDJ) error is printed, not checked. */
TEST(gpu_small_svd_jacobi_matches_reference) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int ls[] = {64, 266, 512, 1024};
    for (int t = 0; t < 4; t++) {
        const int l = ls[t], k = l - 10;
        const size_t ll = (size_t)l * l;
        double *M = malloc(sizeof(double) * (4 * ll + 2 * (size_t)l + k));
        float *R = malloc(sizeof(float) * (3 * ll + k));
        REQUIRE(M && R);
        double *Mw = M + ll, *Ur = Mw + ll, *Vr = Ur + ll, *sr = Vr + ll, *sx = sr + l;
        float *Ug = R + ll, *Vg = Ug + ll, *Sg = Vg + ll;
        CHECK_EQ_INT(ssvd_graded(l, k, 7.0, l, 31 + t, M), 0);
        ssvd_r32(l, M, R, Mw);
        int swr = 0;
        REQUIRE(tn_jsvd_ref(l, k, Mw, NULL, Ur, sr, Vr, &swr, 0) == TCNLA_SUCCESS);
        const int exact = l <= 512 && ssvd_exact(l, Mw, sx) == 0;
        float *dR = gt_to_dev(g, R, ll), *dU = gt_to_dev(g, NULL, ll), *dV = gt_to_dev(g, NULL, ll),
              *dS = gt_to_dev(g, NULL, k);
        const int paths[4] = {TN_SSVD_JACOBI_PLAIN, TN_SSVD_JACOBI, TN_SSVD_AUTO, TN_SSVD_GESVDJ};
        for (int pi = 0; pi < 4; pi++) {
            const int st = tn_cuda_small_svd_path(g, paths[pi], l, k, dR, dU, dV, dS, 0);
            const int ran = g->cuda->ssvd.path, sw = g->cuda->ssvd.sweeps;
            CHECK_MSG(st == TCNLA_SUCCESS, "l %d path %d: status %d", l, paths[pi], st);
            if (st) continue;
            gt_to_host(g, Ug, dU, (size_t)l * k), gt_to_host(g, Vg, dV, (size_t)l * k);
            gt_to_host(g, Sg, dS, k);
            double dsr = 0, dsx = 0, du = 0, dv = 0;
            for (int j = 0; j < k; j++) {
                dsr = ssvd_max(dsr, fabs(Sg[j] - sr[j]) / sr[j]);
                if (exact) dsx = ssvd_max(dsx, fabs(Sg[j] - sx[j]) / sx[j]);
                double dot = 0, eu = 0, ev = 0;
                for (int i = 0; i < l; i++) dot += Ug[i + (size_t)j * l] * Ur[i + (size_t)j * l];
                const double sg = dot < 0 ? -1.0 : 1.0;
                for (int i = 0; i < l; i++) {
                    const double a = Ug[i + (size_t)j * l] - sg * Ur[i + (size_t)j * l];
                    const double b = Vg[i + (size_t)j * l] - sg * Vr[i + (size_t)j * l];
                    eu += a * a, ev += b * b;
                }
                du = ssvd_max(du, sqrt(eu)), dv = ssvd_max(dv, sqrt(ev));
            }
            printf("    l %4d path %d: ran %d, sweeps %d (reference %d), values vs reference "
                   "%.1e, vs dgesvj %.1e; vectors %.1e %.1e\n",
                   l, paths[pi], ran, sw, swr, dsr, dsx, du, dv);
            if (paths[pi] == TN_SSVD_GESVDJ) {
                CHECK_EQ_INT(ran, TN_SSVD_RAN_GESVDJ);
                continue;
            }
            if (paths[pi] == TN_SSVD_AUTO) {
                /* (the rule: the deflated path where the eigensolution
                 * refuses; test_gpu_small_svd_defl.c tests it) */
                CHECK_EQ_INT(ran, TN_SSVD_RAN_DEFLATE);
                CHECK_MSG(dsx <= 1e-6, "l %d auto: values %.2e", l, dsx);
                continue;
            }
            CHECK_EQ_INT(ran, TN_SSVD_RAN_JACOBI);
            CHECK_EQ_INT(g->cuda->ssvd.jacobi_refused, 0);
            CHECK_EQ_INT(g->cuda->ssvd.refusal, 0);
            if (paths[pi] == TN_SSVD_JACOBI_PLAIN)
                CHECK_MSG(abs(sw - swr) <= 1, "l %d: %d sweeps, the reference %d", l, sw, swr);
            CHECK_MSG(dsr <= 0x1p-22 && dsx <= 1e-6, "l %d path %d: values %.2e %.2e", l,
                      paths[pi], dsr, dsx);
            CHECK_MSG(du <= 1e-6 && dv <= 1e-6, "l %d path %d: vectors %.2e %.2e", l, paths[pi],
                      du, dv);
        }
        tcnla_free(g, dR), tcnla_free(g, dU), tcnla_free(g, dV), tcnla_free(g, dS);
        free(M), free(R);
    }
    tcnla_destroy(g);
}

/* What the Jacobi path refuses goes to gesvdj, reported: NaN in R (every
 * path, the deflated one not tried either: status as gesvdj gives it, nothing crashes), l = 1 (exact), l past
 * TN_JSVD_MAXL (gesvdj without trying), scale_vk. */
TEST(gpu_small_svd_jacobi_refusals) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int l = 40, k = 30;
    double *M = malloc(sizeof(double) * 2 * l * l);
    float *R = malloc(sizeof(float) * l * l), *S = malloc(sizeof(float) * l),
          *V = malloc(sizeof(float) * l * l);
    REQUIRE(M && R && S && V);
    CHECK_EQ_INT(ssvd_graded(l, k, 7.0, l, 2, M), 0);
    ssvd_r32(l, M, R, M + l * l);
    R[5 + 7 * l] = NAN;
    float *dR = gt_to_dev(g, R, l * l), *dU = gt_to_dev(g, NULL, l * l), *dV = gt_to_dev(g, NULL, l * l),
          *dS = gt_to_dev(g, NULL, l);
    for (int p = TN_SSVD_AUTO; p <= TN_SSVD_JACOBI_PLAIN; p++) {
        const int st = tn_cuda_small_svd_path(g, p, l, k, dR, dU, dV, dS, 0);
        printf("    NaN, path %d: status %d, ran %d, Jacobi refused %d\n", p, st,
               g->cuda->ssvd.path, g->cuda->ssvd.jacobi_refused);
        CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_GESVDJ);
        CHECK_EQ_INT(g->cuda->ssvd.jacobi_refused, p != TN_SSVD_AUTO); /* (AUTO: not tried) */
    }
    /* l = 1: s = |r|, u = sign, v = 1 (times s with scale_vk) */
    const float r1 = -2.5f;
    tcnla_memcpy(g, dR, &r1, sizeof r1, TCNLA_MEMCPY_HOST_TO_HANDLE);
    CHECK_EQ_INT(tn_cuda_small_svd_path(g, TN_SSVD_JACOBI_PLAIN, 1, 1, dR, dU, dV, dS, 1), 0);
    CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_JACOBI);
    float u1 = 0, v1 = 0, s1 = 0;
    gt_to_host(g, &u1, dU, 1), gt_to_host(g, &v1, dV, 1), gt_to_host(g, &s1, dS, 1);
    CHECK(s1 == 2.5f && u1 == -1.0f && v1 == 2.5f);
    /* scale_vk on graded R: Vk = V diag(s) */
    R[5 + 7 * l] = (float)M[7 + 5 * l];
    tcnla_memcpy(g, dR, R, sizeof(float) * l * l, TCNLA_MEMCPY_HOST_TO_HANDLE);
    CHECK_EQ_INT(tn_cuda_small_svd_path(g, TN_SSVD_JACOBI_PLAIN, l, k, dR, dU, dV, dS, 1), 0);
    gt_to_host(g, V, dV, l * k), gt_to_host(g, S, dS, k);
    for (int j = 0; j < k; j++) {
        double nv = 0;
        for (int i = 0; i < l; i++) nv += (double)V[i + j * l] * V[i + j * l];
        CHECK_MSG(fabs(sqrt(nv) - S[j]) <= 1e-6 * S[j], "column %d: |v| %.8e s %.8e", j,
                  sqrt(nv), (double)S[j]);
    }
    tcnla_free(g, dR), tcnla_free(g, dU), tcnla_free(g, dV), tcnla_free(g, dS);
    /* past TN_JSVD_MAXL: gesvdj, the Jacobi path not tried */
    const int lb = TN_JSVD_MAXL + 1;
    float *Rb = calloc((size_t)lb * lb, sizeof(float));
    REQUIRE(Rb);
    for (int i = 0; i < lb; i++) Rb[i + (size_t)i * lb] = 1.0f / (1 + i);
    float *dRb = gt_to_dev(g, Rb, (size_t)lb * lb), *dUb = gt_to_dev(g, NULL, (size_t)lb * 4),
          *dVb = gt_to_dev(g, NULL, (size_t)lb * 4);
    CHECK_EQ_INT(tn_cuda_small_svd_path(g, TN_SSVD_JACOBI, lb, 4, dRb, dUb, dVb, NULL, 0), 0);
    CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_GESVDJ);
    CHECK_EQ_INT(g->cuda->ssvd.jacobi_refused, 0);
    tcnla_free(g, dRb), tcnla_free(g, dUb), tcnla_free(g, dVb);
    free(Rb), free(M), free(R), free(S), free(V);
    tcnla_destroy(g);
}

/* The safety nets catch planted faults of the kernel (h->cuda->ssvd.fault,
 * as tests/test_small_svd.c plants them in the reference), l = 64 (four
 * blocks of columns: kept small, since fault 1 runs every sweep there is
 * and tests/gpu/sanitize.sh runs this test under racecheck): every
 * rotation angle negated (no convergence in TN_JSVD_SWEEPS sweeps: refusal
 * 16) and the convergence test skipped (one sweep, claimed converged: the
 * result check finds Y's columns not orthogonal, bit 2); gesvdj then gives
 * the result (values to 1e-6 s_j + 1e-10 s_1 of dgesvj's) and the report
 * says so. */
TEST(gpu_small_svd_jacobi_planted_faults_fall_back) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int l = 64, k = 56;
    const size_t ll = (size_t)l * l;
    double *M = malloc(sizeof(double) * (2 * ll + l)), *sx = M + 2 * ll;
    float *R = malloc(sizeof(float) * ll), S[64];
    REQUIRE(M && R);
    CHECK_EQ_INT(ssvd_graded(l, k, 7.0, l, 3, M), 0);
    ssvd_r32(l, M, R, M + ll);
    CHECK_EQ_INT(ssvd_exact(l, M + ll, sx), 0);
    float *dR = gt_to_dev(g, R, ll), *dU = gt_to_dev(g, NULL, ll), *dV = gt_to_dev(g, NULL, ll),
          *dS = gt_to_dev(g, NULL, l);
    for (int fault = 1; fault <= 2; fault++) {
        g->cuda->ssvd.fault = fault;
        const int st = tn_cuda_small_svd_path(g, TN_SSVD_JACOBI_PLAIN, l, k, dR, dU, dV, dS, 0);
        g->cuda->ssvd.fault = 0;
        printf("    fault %d: status %d, ran %d, refused %d (cause %d), sweeps %d\n", fault, st,
               g->cuda->ssvd.path, g->cuda->ssvd.jacobi_refused, g->cuda->ssvd.refusal,
               g->cuda->ssvd.sweeps);
        CHECK_EQ_INT(st, 0);
        CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_GESVDJ);
        CHECK_EQ_INT(g->cuda->ssvd.jacobi_refused, 1);
        CHECK(g->cuda->ssvd.refusal & (fault == 1 ? 16 : 2));
        gt_to_host(g, S, dS, k);
        double e = 0;
        for (int j = 0; j < k; j++)
            e = ssvd_max(e, fabs(S[j] - sx[j]) / (1e-6 * sx[j] + 1e-10 * sx[0]));
        CHECK_MSG(e <= 1.0, "fault %d: gesvdj's values off by %.2f of the bound", fault, e);
    }
    tcnla_free(g, dR), tcnla_free(g, dU), tcnla_free(g, dV), tcnla_free(g, dS);
    free(M), free(R);
    tcnla_destroy(g);
}

/* tcnla_rsvd on a deep-decay matrix (s_k = 1e-7 s_1, k = 256, l = 266): the
 * eigensolution refuses such a span, so the small SVD runs the deflated
 * Gram path (the default), or, by the tuning, the Jacobi path
 * (small_svd_jacobi) or gesvdj (small_svd_deflate = 0); each result meets eq. (4)'s bound plus FP32's floor (4e-7
 * sqrt(k / 32)), V is
 * orthonormal and the values are within 1e-5 s_1 of the exact ones (the
 * bound the CPU comparison of gpu_rsvd_small_svd_paths_agree uses). */
TEST(gpu_rsvd_deep_decay_small_svd_paths) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int N = 2048, k = 256, p = 10;
    double *sig = malloc(sizeof(double) * N);
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k),
          *VT = malloc(sizeof(float) * k * N), *S = malloc(sizeof(float) * k);
    REQUIRE(sig && A && U && VT && S);
    tn_spectrum(TN_SPEC_EXP, N, k, 1e-7, 0, 0, 0, sig);
    REQUIRE(tn_testmat_svd_fast(N, N, k + 64, sig, 7, A, N) == 0);
    double tail = 0, all = 0;
    for (int i = 0; i < k + 64; i++) {
        all += sig[i] * sig[i];
        if (i >= k) tail += sig[i] * sig[i];
    }
    /* FP32's floor as in gpu_rsvd_small_svd_paths_agree (4e-7 at k = 32),
     * growing like sqrt(k) */
    const double bound =
        sqrt(1.0 + (double)k / (p - 1)) * sqrt(tail / all) + 4e-7 * sqrt(k / 32.0);
    float *dA = gt_to_dev(g, A, (size_t)N * N), *dU = gt_to_dev(g, NULL, (size_t)N * k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * N), *dS = gt_to_dev(g, NULL, k);
    for (int mode = 0; mode < 3; mode++) { /* default, Jacobi forced, deflated path off */
    const int jac = mode == 1;
    GT_TUNE(g, small_svd_jacobi, jac);
    GT_TUNE(g, small_svd_deflate, mode != 2);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k, o.oversampling = p, o.power_iters = 2;
    double t[TCNLA_RSVD_STEPS];
    o.timings = t;
    REQUIRE(tcnla_rsvd(g, &o, N, N, dA, N, dU, N, dS, dVT, k) == 0);
    CHECK_EQ_INT(g->cuda->ssvd.path, mode == 1   ? TN_SSVD_RAN_JACOBI
                                     : mode == 0 ? TN_SSVD_RAN_DEFLATE
                                                 : TN_SSVD_RAN_GESVDJ);
    CHECK_EQ_INT(g->cuda->ssvd.jacobi_refused, 0);
    gt_to_host(g, U, dU, (size_t)N * k), gt_to_host(g, VT, dVT, (size_t)k * N), gt_to_host(g, S, dS, k);
    const double res = residual(A, N, N, U, S, VT, k);
    double orth = 0;
    for (int a = 0; a < k; a++)
        for (int b = 0; b <= a; b++) {
            double sv = 0;
            for (int i = 0; i < N; i++) sv += (double)VT[a + i * k] * VT[b + i * k];
            orth = fmax(orth, fabs(sv - (a == b)));
        }
    double ds = 0;
    for (int i = 0; i < k; i++) ds = ssvd_max(ds, fabs(S[i] - sig[i]) / sig[0]);
    printf("    deep decay, %s: residual %.4e (bound %.4e), V^T V - I %.1e, values vs exact "
           "%.1e s_1, sweeps %d, levels %d, svd step %.3f ms\n",
           mode == 1 ? "Jacobi (forced)" : mode == 0 ? "default (deflated)" : "gesvdj (no deflation)",
           res, bound, orth, ds, g->cuda->ssvd.sweeps, g->cuda->ssvd.levels,
           1e3 * t[TCNLA_RSVD_STEP_SVD]);
    CHECK(res <= bound);
    CHECK(orth < 1e-5);
    CHECK(ds < 1e-5);
    }
    GT_TUNE(g, small_svd_jacobi, 0);
    GT_TUNE(g, small_svd_deflate, 1);
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(sig), free(A), free(U), free(VT), free(S);
    tcnla_destroy(g);
}

/* ||A - U diag(S) VT||_F / ||A||_F, column by column (W = U diag(S)) */
static double residual_cols(const float *A, int64_t m, int64_t n, const float *U, const float *S,
                            const float *VT, int64_t k) {
    double *W = malloc(sizeof(double) * (size_t)(m * k)), *r = malloc(sizeof(double) * (size_t)m);
    double num = 0, den = 0;
    if (!W || !r) {
        free(W), free(r);
        return NAN;
    }
    for (int64_t p = 0; p < k; p++)
        for (int64_t i = 0; i < m; i++) W[i + p * m] = (double)U[i + p * m] * S[p];
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) r[i] = A[i + j * m];
        for (int64_t p = 0; p < k; p++) {
            const double v = VT[p + j * k];
            const double *w = W + p * m;
            for (int64_t i = 0; i < m; i++) r[i] -= w[i] * v;
        }
        for (int64_t i = 0; i < m; i++) {
            num += r[i] * r[i];
            den += (double)A[i + j * m] * A[i + j * m];
        }
    }
    free(W), free(r);
    return sqrt(num / den);
}

/* The power iterations' tests below: A 4096 x 2048 (PW_M x PW_N), rank PW_K
 * = 128, s_i = 10^(-decades i / PW_K) for i < PW_R = 4 PW_K + 64 (else 0),
 * A = U diag(s) V^T from seed, into sig (PW_N) and A; 0 on success. On
 * Hopper the tuning's sm90_f16 = 1 (FP16 in place at this size, which the
 * precision rule's probes need): pw_hopper says whether it set it. */
#define PW_M 4096
#define PW_N 2048
#define PW_K 128
#define PW_R (4 * PW_K + 64)
static int pw_matrix(double decades, int seed, double *sig, float *A) {
    for (int64_t i = 0; i < PW_R; i++) sig[i] = pow(10.0, -decades * (double)i / (double)PW_K);
    return tn_testmat_svd_fast(PW_M, PW_N, PW_R, sig, seed, A, PW_M);
}
static int pw_hopper(tcnla_handle_t g) {
    const int hopper = g->cuda->cc_major == 9 && g->cuda->cc_minor == 0;
    if (hopper) GT_TUNE(g, sm90_f16, 1);
    return hopper;
}

/* The defaults' power iterations on a tail below FP16's resolution:
 * SHGEMM_FP16 (only the basis rounded to FP16), with TCEC's residual
 * (tests/test_randnla.c rsvd_power_shgemm_as_accurate_as_tcec: the same
 * bounds, 1.3 x TCEC's residual, 4 x its error of the singular values
 * FP32 resolves, s_i >= 1e-5 s_1), where FP16 power iterations break both.
 * 4096 x 2048, rank 128, p = 10, deep decay s_i = 10^(-8 i / k) (r = 4k +
 * 64). On Hopper the choice from the data runs (the tuning's sm90_f16 = 1:
 * FP16 in place at this size, which the probes need), and an easy spectrum
 * (s_i = 10^(-2 i / k)) gets FP16; elsewhere the defaults take SHGEMM_FP16
 * without the probes. Which method ran: opts.info's power_method (the
 * defaults project in FP16 here; the choice does not depend on the
 * projection, which a TCEC_FP16 projection shows too). */
TEST(gpu_rsvd_power_shgemm_deep_decay) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int64_t m = PW_M, n = PW_N, k = PW_K, p = 10;
    const int hopper = pw_hopper(g);
    double *sig = calloc((size_t)n, sizeof(double));
    float *A = malloc(sizeof(float) * (size_t)(m * n)), *U = malloc(sizeof(float) * (size_t)(m * k)),
          *VT = malloc(sizeof(float) * (size_t)(k * n)), *S = malloc(sizeof(float) * (size_t)k);
    REQUIRE(sig && A && U && VT && S);
    float *dA = gt_to_dev(g, NULL, (size_t)(m * n)), *dU = gt_to_dev(g, NULL, (size_t)(m * k)),
          *dVT = gt_to_dev(g, NULL, (size_t)(k * n)), *dS = gt_to_dev(g, NULL, (size_t)k);
    REQUIRE(dA && dU && dVT && dS);
    for (int c = 0; c < (hopper ? 2 : 1); c++) { /* 0 deep decay, 1 easy */
        REQUIRE(pw_matrix(c ? 2.0 : 8.0, 11 + c, sig, A) == 0);
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
        /* v: 0 the defaults, 1 SHGEMM_FP16, 2 TCEC_FP16, 3 FP16 power
         * iterations, 4 the defaults with the projection in TCEC_FP16 */
        const tcnla_gemm_method_t pms[5] = {TCNLA_GEMM_DEFAULT, TCNLA_GEMM_SHGEMM_FP16,
                                            TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_FP16,
                                            TCNLA_GEMM_DEFAULT};
        double res[5] = {0}, sv[5] = {0}, tp[5] = {0};
        tcnla_gemm_method_t pw[5] = {0}, pj0 = 0;
        for (int v = 0; v < 5; v++) {
            if (c && (v == 1 || v == 3)) continue;
            tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
            o.rank = k, o.oversampling = p, o.power_iters = 2;
            o.power_method = pms[v];
            if (v == 4) o.proj_method = TCNLA_GEMM_TCEC_FP16;
            tcnla_info_t info;
            double t[TCNLA_RSVD_STEPS];
            REQUIRE(tcnla_rsvd(g, &o, m, n, dA, m, dU, m, dS, dVT, k) == 0); /* (warm-up) */
            o.info = &info;
            o.timings = t;
            REQUIRE(tcnla_rsvd(g, &o, m, n, dA, m, dU, m, dS, dVT, k) == 0);
            pw[v] = info.power_method;
            if (v == 0) pj0 = info.proj_method;
            tp[v] = t[TCNLA_RSVD_STEP_POWER];
            gt_to_host(g, U, dU, (size_t)(m * k)), gt_to_host(g, VT, dVT, (size_t)(k * n));
            gt_to_host(g, S, dS, (size_t)k);
            res[v] = residual_cols(A, m, n, U, S, VT, k);
            for (int64_t i = 0; i < k; i++)
                if (sig[i] >= 1e-5 * sig[0]) sv[v] = fmax(sv[v], fabs(S[i] - sig[i]) / sig[i]);
        }
        printf("    %s: defaults %.4e (values %.2e, projection %s, power iterations %s; with a "
               "TCEC projection %s, %.4e), SHGEMM %.4e (%.2e), TCEC %.4e (%.2e), FP16 %.4e "
               "(%.2e); power step ms: defaults %.3f, SHGEMM %.3f, TCEC %.3f, FP16 %.3f\n",
               c ? "easy (s_k = 1e-2)" : "deep decay (s_k = 1e-8)", res[0], sv[0],
               tcnla_gemm_method_name(pj0), tcnla_gemm_method_name(pw[0]),
               tcnla_gemm_method_name(pw[4]), res[4], res[1], sv[1], res[2], sv[2], res[3], sv[3],
               1e3 * tp[0], 1e3 * tp[1], 1e3 * tp[2], 1e3 * tp[3]);
        if (hopper) CHECK(pj0 == TCNLA_GEMM_FP16); /* (FP16 in place at this size) */
        if (c) { /* easy: FP16, TCEC's residual within 1 % */
            CHECK(pw[0] == TCNLA_GEMM_FP16 && pw[4] == TCNLA_GEMM_FP16);
            CHECK(res[0] <= 1.01 * res[2]);
            continue;
        }
        CHECK_MSG(pw[0] == TCNLA_GEMM_SHGEMM_FP16 && pw[4] == TCNLA_GEMM_SHGEMM_FP16,
                  "deep decay: power iterations %s, with a TCEC projection %s",
                  tcnla_gemm_method_name(pw[0]), tcnla_gemm_method_name(pw[4]));
        const double svb = 4 * fmax(sv[2], 0x1p-24);
        for (int v = 0; v < 5; v++) {
            if (v == 2) continue;
            if (v == 3) { /* FP16 there: outside both bounds */
                CHECK_MSG(res[3] > 1.3 * res[2] && sv[3] > svb, "FP16 power iterations within "
                          "the bounds: %.4e (%.2e)", res[3], sv[3]);
                continue;
            }
            CHECK_MSG(res[v] <= 1.3 * res[2], "variant %d: residual %.4e > 1.3 x TCEC's %.4e", v,
                      res[v], res[2]);
            CHECK_MSG(sv[v] <= svb, "variant %d: values' error %.2e > 4 x TCEC's %.2e", v, sv[v],
                      sv[2]);
        }
    }
    if (hopper) GT_TUNE(g, sm90_f16, TCNLA_TUNING_AUTO);
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(sig), free(A), free(U), free(VT), free(S);
    tcnla_destroy(g);
}

/* The accurate power iterations read their bases' deferred verdicts with
 * the next product already queued (rsvd.c verdicts_behind: the flags copied
 * out behind the CholeskyQR, the product, then the wait for that copy
 * alone). On the deep decay above (SHGEMM_FP16 power iterations, q = 2:
 * three such reads), against the same call waiting for every verdict (the
 * tuning's defer = 0) and against the same call told by the test hook
 * mark_fault that every read found a failed verdict (the path of a
 * failure: the verdicts read again in full, and the queued product, which
 * read the basis, run again): the same bits all three. Where the small
 * SVD's Gram matrix is queued ahead of the last read (rsvd.c), that read
 * is one more such read. */
TEST(gpu_rsvd_verdicts_behind_product) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int64_t m = PW_M, n = PW_N, k = PW_K;
    const int hopper = pw_hopper(g);
    double *sig = calloc((size_t)n, sizeof(double));
    float *A = malloc(sizeof(float) * (size_t)(m * n)), *U[3], *VT[3], *S[3];
    REQUIRE(sig && A);
    for (int j = 0; j < 3; j++) {
        U[j] = malloc(sizeof(float) * (size_t)(m * k)), VT[j] = malloc(sizeof(float) * (size_t)(k * n));
        S[j] = malloc(sizeof(float) * (size_t)k);
        REQUIRE(U[j] && VT[j] && S[j]);
    }
    REQUIRE(pw_matrix(8.0, 11, sig, A) == 0);
    float *dA = gt_to_dev(g, A, (size_t)(m * n)), *dU = gt_to_dev(g, NULL, (size_t)(m * k)),
          *dVT = gt_to_dev(g, NULL, (size_t)(k * n)), *dS = gt_to_dev(g, NULL, (size_t)k);
    REQUIRE(dA && dU && dVT && dS);
    unsigned marks[3] = {0, 0, 0}, ahead[3] = {0, 0, 0};
    tcnla_gemm_method_t pw = TCNLA_GEMM_DEFAULT;
    for (int j = 0; j < 3; j++) { /* 0 as in use, 1 every read told of a failure, 2 waiting */
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = 10, o.power_iters = 2;
        tcnla_info_t info;
        o.info = &info;
        GT_TUNE(g, defer, j != 2);
        g->cuda->mark_fault = j == 1;
        const unsigned before = g->cuda->marks, abefore = g->cuda->gram_ahead.taken;
        CHECK_EQ_INT(tcnla_rsvd(g, &o, m, n, dA, m, dU, m, dS, dVT, k), 0);
        marks[j] = g->cuda->marks - before;
        ahead[j] = g->cuda->gram_ahead.taken - abefore;
        g->cuda->mark_fault = 0;
        GT_TUNE(g, defer, 1);
        if (j == 0) pw = info.power_method;
        gt_to_host(g, U[j], dU, (size_t)(m * k)), gt_to_host(g, VT[j], dVT, (size_t)(k * n));
        gt_to_host(g, S[j], dS, (size_t)k);
    }
    printf("    power iterations %s; verdicts read behind the next product: %u, %u (told of "
           "failures), %u (waiting); the Gram matrix queued ahead and taken: %u, %u, %u\n",
           tcnla_gemm_method_name(pw), marks[0], marks[1], marks[2], ahead[0], ahead[1],
           ahead[2]);
    CHECK(pw == TCNLA_GEMM_SHGEMM_FP16);
    /* after W's basis (iteration 2), Y's (both), and ahead of the Gram */
    CHECK_EQ_INT((int)marks[0], 3 + (int)ahead[0]);
    CHECK_EQ_INT((int)marks[1], 3 + (int)ahead[0]);
    CHECK_EQ_INT((int)ahead[1], (int)ahead[0]); /* (the full read finds them clear) */
    CHECK_EQ_INT((int)marks[2], 0);
    for (int j = 1; j < 3; j++) {
        CHECK_MSG(memcmp(S[0], S[j], sizeof(float) * (size_t)k) == 0, "run %d: S differs", j);
        CHECK_MSG(memcmp(U[0], U[j], sizeof(float) * (size_t)(m * k)) == 0, "run %d: U differs", j);
        CHECK_MSG(memcmp(VT[0], VT[j], sizeof(float) * (size_t)(k * n)) == 0, "run %d: VT differs",
                  j);
    }
    if (hopper) GT_TUNE(g, sm90_f16, TCNLA_TUNING_AUTO);
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    for (int j = 0; j < 3; j++) free(U[j]), free(VT[j]), free(S[j]);
    free(sig), free(A);
    tcnla_destroy(g);
}
