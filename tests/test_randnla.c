/* Random matrices, orthonormalization and randomized SVD on the CPU. */
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tcnla_handle_t cpu(void) {
    tcnla_handle_t h = NULL;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    return h;
}

TEST(random_fill_is_counter_based_and_rounded) {
    tcnla_handle_t h = cpu();
    enum { R = 37, C = 11, LD = 40 };
    float a[LD * C], b[R * C], c[R * C];
    uint16_t d[R * C];
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 5, 0, R, C, a, LD) == 0);
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 5, 0, R, C, b, R) == 0);
    for (int j = 0; j < C; j++)
        for (int i = 0; i < R; i++) CHECK(a[i + j * LD] == b[i + j * R]);
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 6, 0, R, C, c, R) == 0);
    CHECK(memcmp(b, c, sizeof b) != 0);
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP16, 5, 0, R, C, c, R) == 0);
    CHECK(tcnla_random_fill_f16(h, TCNLA_RAND_GAUSSIAN, 5, 0, R, C, d, R) == 0);
    for (int i = 0; i < R * C; i++) {
        CHECK(c[i] == tcnla_f16_to_f32(tcnla_f32_to_f16(b[i], TCNLA_ROUND_RN)));
        CHECK(tcnla_f16_to_f32(d[i]) == c[i]);
    }
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_E4M3, 5, 0, R, C, c, R) == 0);
    for (int i = 0; i < R * C; i++) CHECK(tcnla_e4m3_to_f32(tcnla_f32_to_e4m3(c[i], TCNLA_ROUND_RN, 1)) == c[i]);
    CHECK_EQ_INT(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 5, 0, R, C, a, R - 1), -9);
    CHECK_EQ_INT(tcnla_random_fill(h, (tcnla_rand_dist_t)9, TCNLA_FMT_FP32, 5, 0, R, C, a, R), -2);
    CHECK_EQ_INT(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, (tcnla_format_t)9, 5, 0, R, C, a, R), -3);
    CHECK_EQ_INT(tcnla_random_fill_f16(h, TCNLA_RAND_GAUSSIAN, 5, 0, -1, C, d, R), -5);
    tcnla_destroy(h);
}

/* The host random numbers are the sequences tcnla_random_fill draws
 * (element i + j * rows), the uniforms the documented function of the
 * Philox words, and the arguments are checked. */
TEST(host_random_numbers_are_the_random_fill_sequences) {
    tcnla_handle_t h = cpu();
    enum { R = 37, C = 11 };
    float a[R * C], b[R * C];
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 5, 3, R, C, a, R) == 0);
    CHECK(tcnla_rand_normal(5, 3, 0.0f, 1.0f, R * C, b) == 0);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(tcnla_random_fill(h, TCNLA_RAND_UNIFORM, TCNLA_FMT_FP32, 6, 4, R, C, a, R) == 0);
    CHECK(tcnla_rand_uniform(6, 4, -1.0f, 1.0f, R * C, b) == 0);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(tcnla_rand_uniform(7, 9, 2.0f, 5.0f, R * C, b) == 0);
    int bad = 0;
    for (int i = 0; i < R * C; i++) {
        uint32_t w[4];
        CHECK(tcnla_philox4x32(7, 9, (uint64_t)(i / 4), w) == 0);
        const double u = ((double)(w[i % 4] >> 8) + 0.5) * 0x1p-24;
        bad += b[i] != (float)(2.0 + 3.0 * u) || !(b[i] > 2.0f && b[i] <= 5.0f);
    }
    CHECK_EQ_INT(bad, 0);
    /* mean + sd z, in double, rounded once */
    CHECK(tcnla_rand_normal(5, 3, 0.0f, 1.0f, R * C, a) == 0);
    CHECK(tcnla_rand_normal(5, 3, 1.5f, 3.0f, R * C, b) == 0);
    for (int i = 0; i < R * C; i++) bad += b[i] != (float)(1.5 + 3.0 * (double)a[i]);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(tcnla_philox4x32(1, 2, 3, NULL), -4);
    CHECK_EQ_INT(tcnla_rand_uniform(1, 2, NAN, 1.0f, 4, b), -3);
    CHECK_EQ_INT(tcnla_rand_uniform(1, 2, 0.0f, INFINITY, 4, b), -4);
    CHECK_EQ_INT(tcnla_rand_uniform(1, 2, 0.0f, 1.0f, -1, b), -5);
    CHECK_EQ_INT(tcnla_rand_uniform(1, 2, 0.0f, 1.0f, 4, NULL), -6);
    CHECK_EQ_INT(tcnla_rand_uniform(1, 2, 0.0f, 1.0f, 0, NULL), 0);
    CHECK_EQ_INT(tcnla_rand_normal(1, 2, -INFINITY, 1.0f, 4, b), -3);
    CHECK_EQ_INT(tcnla_rand_normal(1, 2, 0.0f, -1.0f, 4, b), -4);
    CHECK_EQ_INT(tcnla_rand_normal(1, 2, 0.0f, NAN, 4, b), -4);
    CHECK_EQ_INT(tcnla_rand_normal(1, 2, 0.0f, 1.0f, -3, b), -5);
    CHECK_EQ_INT(tcnla_rand_normal(1, 2, 0.0f, 1.0f, 4, NULL), -6);
    CHECK_EQ_INT(tcnla_rand_normal(1, 2, 0.0f, 1.0f, 0, NULL), 0);
    tcnla_destroy(h);
}

/* tcnla_round_matrix is tcnla_random_fill's rounding, inside the view only. */
TEST(round_matrix_is_the_random_fill_rounding) {
    tcnla_handle_t h = cpu();
    enum { R = 23, C = 7, LD = 25 };
    float x[LD * C], r[R * C];
    for (int f = TCNLA_FMT_FP32; f <= TCNLA_FMT_E5M2; f++) {
        CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 8, 1, LD, C, x, LD) == 0);
        for (int j = 0; j < C; j++) x[R + 1 + j * LD] = 1e30f; /* outside the view */
        CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, (tcnla_format_t)f, 8, 1, R, C, r, R) == 0);
        /* the same values: the fills with ld = LD and ld = R differ in the linear index */
        float y[R * C];
        CHECK(tcnla_rand_normal(8, 1, 0.0f, 1.0f, R * C, y) == 0);
        for (int j = 0; j < C; j++)
            for (int i = 0; i < R; i++) x[i + j * LD] = y[i + j * R];
        CHECK_EQ_INT(tcnla_round_matrix(h, (tcnla_format_t)f, R, C, x, LD), 0);
        int bad = 0;
        for (int j = 0; j < C; j++) {
            for (int i = 0; i < R; i++) bad += x[i + j * LD] != r[i + j * R];
            bad += x[R + 1 + j * LD] != 1e30f;
        }
        CHECK_MSG(bad == 0, "format %d: %d elements differ", f, bad);
    }
    CHECK_EQ_INT(tcnla_round_matrix(NULL, TCNLA_FMT_FP16, R, C, x, LD), -1);
    CHECK_EQ_INT(tcnla_round_matrix(h, (tcnla_format_t)9, R, C, x, LD), -2);
    CHECK_EQ_INT(tcnla_round_matrix(h, TCNLA_FMT_FP16, -1, C, x, LD), -3);
    CHECK_EQ_INT(tcnla_round_matrix(h, TCNLA_FMT_FP16, R, -1, x, LD), -4);
    CHECK_EQ_INT(tcnla_round_matrix(h, TCNLA_FMT_FP16, R, C, NULL, LD), -5);
    CHECK_EQ_INT(tcnla_round_matrix(h, TCNLA_FMT_FP16, R, C, x, R - 1), -6);
    CHECK_EQ_INT(tcnla_round_matrix(h, TCNLA_FMT_FP16, 0, C, NULL, 1), 0);
    tcnla_destroy(h);
}

TEST(random_fill_distributions_have_their_moments) {
    tcnla_handle_t h = cpu();
    const int n = 200000;
    float *x = malloc(sizeof(float) * n);
    double s = 0, s2 = 0;
    CHECK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 1, 3, n, 1, x, n) == 0);
    for (int i = 0; i < n; i++) s += x[i], s2 += (double)x[i] * x[i];
    CHECK_MSG(fabs(s / n) < 0.01 && fabs(s2 / n - 1) < 0.02, "mean %g var %g", s / n, s2 / n);
    int cnt[3] = {0, 0, 0};
    CHECK(tcnla_random_fill(h, TCNLA_RAND_SPARSE3, TCNLA_FMT_FP32, 1, 4, n, 1, x, n) == 0);
    for (int i = 0; i < n; i++) cnt[(int)x[i] + 1]++;
    CHECK_MSG(fabs(cnt[0] / (double)n - 1.0 / 6) < 0.005 && fabs(cnt[2] / (double)n - 1.0 / 6) < 0.005,
              "sparse3: %d %d %d", cnt[0], cnt[1], cnt[2]);
    cnt[0] = cnt[1] = cnt[2] = 0;
    /* very sparse, s = sqrt(rows) = 100 for 10000 rows */
    CHECK(tcnla_random_fill(h, TCNLA_RAND_SPARSE_SQRT, TCNLA_FMT_FP32, 1, 5, 10000, 20, x, 10000) == 0);
    for (int i = 0; i < n; i++) cnt[(int)x[i] + 1]++;
    CHECK_MSG(fabs(cnt[2] / (double)n - 0.005) < 0.001, "very sparse: %d %d %d", cnt[0], cnt[1], cnt[2]);
    free(x);
    tcnla_destroy(h);
}

TEST(orth_all_methods_orthonormal_and_qr_equals_y) {
    tcnla_handle_t h = cpu();
    enum { M = 300, N = 24 };
    float *Y0 = malloc(sizeof(float) * M * N), *Y = malloc(sizeof(float) * M * N);
    float R[N * N];
    tcnla_rand_normal(3, 1, 0, 1, M * N, Y0);
    for (int meth = 0; meth <= TCNLA_ORTH_CHOLQR2_FP64; meth++) {
        memcpy(Y, Y0, sizeof(float) * M * N);
        tcnla_orth_t used;
        int st = tcnla_orthonormalize(h, (tcnla_orth_t)meth, TCNLA_BREAKDOWN_ERROR, M, N, Y, M, R, N, &used);
        REQUIRE(st == 0);
        CHECK(used == (tcnla_orth_t)meth);
        double d = tu_orth_defect(Y, M, N);
        CHECK_MSG(d < (meth == TCNLA_ORTH_CHOLQR_FP32 ? 1e-4 : 2e-6), "method %d: |Q^TQ - I| = %.2e", meth, d);
        double worst = 0, nrm = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                double s = 0;
                for (int p = 0; p <= j; p++) s += (double)Y[i + p * M] * R[p + j * N];
                worst = fmax(worst, fabs(s - Y0[i + j * M]));
                nrm = fmax(nrm, fabs(Y0[i + j * M]));
            }
        CHECK_MSG(worst <= 1e-5 * nrm, "method %d: |QR - Y| = %.2e", meth, worst);
    }
    free(Y0), free(Y);
    tcnla_destroy(h);
}

TEST(orth_breakdown_reported_or_retried_never_nan) {
    tcnla_handle_t h = cpu();
    enum { M = 200, N = 12 };
    float *Y = malloc(sizeof(float) * M * N), *Y0 = malloc(sizeof(float) * M * N);
    tcnla_rand_normal(4, 1, 0, 1, M * N, Y0);
    for (int i = 0; i < M; i++) Y0[i + 5 * M] = Y0[i + 2 * M]; /* rank deficient */
    const tcnla_orth_t chol[3] = {TCNLA_ORTH_CHOLQR_FP32, TCNLA_ORTH_CHOLQR_FP64, TCNLA_ORTH_CHOLQR2_FP64};
    for (int c = 0; c < 3; c++) {
        memcpy(Y, Y0, sizeof(float) * M * N);
        int st = tcnla_orthonormalize(h, chol[c], TCNLA_BREAKDOWN_ERROR, M, N, Y, M, NULL, 0, NULL);
        CHECK_MSG(st == TCNLA_ERR_NUMERICAL, "method %d: status %d", chol[c], st);
        CHECK(memcmp(Y, Y0, sizeof(float) * M * N) == 0); /* untouched */
        tcnla_orth_t used;
        st = tcnla_orthonormalize(h, chol[c], TCNLA_BREAKDOWN_RETRY, M, N, Y, M, NULL, 0, &used);
        CHECK(st == 0 && used == TCNLA_ORTH_HOUSEHOLDER);
        for (int i = 0; i < M * N; i++) CHECK(isfinite(Y[i]));
    }
    Y[7] = NAN;
    CHECK_EQ_INT(tcnla_orthonormalize(h, TCNLA_ORTH_HOUSEHOLDER, TCNLA_BREAKDOWN_RETRY, M, N, Y, M, NULL, 0, NULL),
                 TCNLA_ERR_NUMERICAL);
    CHECK_EQ_INT(tcnla_orthonormalize(h, TCNLA_ORTH_HOUSEHOLDER, TCNLA_BREAKDOWN_RETRY, 5, 6, Y, 5, NULL, 0, NULL), -5);
    CHECK_EQ_INT(tcnla_orthonormalize(h, (tcnla_orth_t)7, TCNLA_BREAKDOWN_RETRY, M, N, Y, M, NULL, 0, NULL), -2);
    free(Y), free(Y0);
    tcnla_destroy(h);
}

/* ||A - U diag(S) VT||_F / ||A||_F */
static double lowrank_residual(const float *A, int m, int n, const float *U, const float *S,
                               const float *VT, int k) {
    double num = 0, den = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += (double)U[i + p * m] * S[p] * VT[p + j * k];
            double a = A[i + j * m];
            num += (a - s) * (a - s);
            den += a * a;
        }
    return sqrt(num / den);
}

typedef struct {
    double res, opt, bound;
    int status;
} rsvd_run;

/* the power iterations' method of run_rsvd (0: gemm_method, NATIVE_FP32) */
static tcnla_gemm_method_t rsvd_power = TCNLA_GEMM_DEFAULT;

/* RSVD of a slatms matrix with the given spectrum; residual against the
 * Eckart-Young optimum and [Ootomo & Yokota 2023] eq. (4)'s bound (all relative). */
static rsvd_run run_rsvd(tn_spectrum_t spec, int N, int k, int p, int q, uint64_t seed,
                         tcnla_gemm_method_t proj, tcnla_format_t fmt) {
    rsvd_run r = {0, 0, 0, 0};
    tcnla_handle_t h = cpu();
    double *sig = malloc(sizeof(double) * N);
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k);
    float *VT = malloc(sizeof(float) * k * N), *S = malloc(sizeof(float) * k);
    tn_spectrum(spec, N, k, 1e-3, 20, 3.0, 1e6, sig);
    tn_testmat_latms(N, N, sig, 1000 + seed, A, N);
    double tail = 0, all = 0;
    for (int i = 0; i < N; i++) {
        all += sig[i] * sig[i];
        if (i >= k) tail += sig[i] * sig[i];
    }
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k;
    o.oversampling = p;
    o.power_iters = q;
    o.proj_method = proj;
    o.random_format = fmt;
    o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
    o.power_method = rsvd_power;
    o.seed = seed;
    r.status = tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k);
    if (r.status == 0) r.res = lowrank_residual(A, N, N, U, S, VT, k);
    r.opt = sqrt(tail / all);
    r.bound = sqrt(1.0 + (double)k / (p - 1)) * r.opt;
    free(sig), free(A), free(U), free(VT), free(S);
    tcnla_destroy(h);
    return r;
}

TEST(rsvd_residual_within_expected_bound) {
    const tn_spectrum_t specs[2] = {TN_SPEC_LINEAR, TN_SPEC_EXP};
    for (int s = 0; s < 2; s++) {
        for (int q = 0; q <= 1; q++) {
            double mean = 0, opt = 0, bound = 0;
            for (int seed = 1; seed <= 3; seed++) {
                rsvd_run r = run_rsvd(specs[s], 192, 16, 10, q, (uint64_t)seed, TCNLA_GEMM_SHGEMM_FP16, TCNLA_FMT_FP16);
                REQUIRE(r.status == 0);
                mean += r.res / 3, opt = r.opt, bound = r.bound;
            }
            printf("    %s q=%d: residual %.4e, optimal %.4e, eq.(4) bound %.4e, excess over optimal %.3e\n",
                   s ? "exp" : "linear", q, mean, opt, bound, mean / opt - 1);
            CHECK_MSG(mean <= bound, "spectrum %d q=%d: %.4e > bound %.4e", s, q, mean, bound);
            /* one power iteration reaches the optimum to FP32's rounding of A
             * and the factors (|excess| 5.6e-8 linear, 1.4e-7 exp), where
             * q = 0 stays 0.58 (linear) and 1.6e-3 (exp) above it */
            if (q == 1)
                CHECK_MSG(fabs(mean / opt - 1) <= 1e-6,
                          "spectrum %d q=1: residual %.6e exceeds the optimum %.6e by %.3e", s,
                          mean, opt, mean / opt - 1);
        }
    }
}

TEST(rsvd_fp16_random_matrix_same_residual_as_fp32) {
    /* [Ootomo & Yokota 2023] Fig. 3: rounding the Gaussian matrix to FP16 does not change
     * the projection's accuracy (within 5% averaged over seeds) */
    double r16 = 0, r32 = 0;
    for (int seed = 1; seed <= 4; seed++) {
        rsvd_run a = run_rsvd(TN_SPEC_LINEAR, 160, 12, 10, 0, (uint64_t)seed, TCNLA_GEMM_NATIVE_FP32, TCNLA_FMT_FP16);
        rsvd_run b = run_rsvd(TN_SPEC_LINEAR, 160, 12, 10, 0, (uint64_t)seed, TCNLA_GEMM_NATIVE_FP32, TCNLA_FMT_FP32);
        REQUIRE(a.status == 0 && b.status == 0);
        r16 += a.res, r32 += b.res;
    }
    printf("    mean residual: FP16 Omega %.5e, FP32 Omega %.5e (ratio %.4f)\n", r16 / 4, r32 / 4, r16 / r32);
    CHECK_MSG(fabs(r16 / r32 - 1) <= 0.05, "FP16 / FP32 residual = %.4f", r16 / r32);
}

TEST(rsvd_fp16_power_iterations_same_residual) {
    /* the power iterations only shape the subspace: with A and the basis
     * rounded to FP16 in their products (TCNLA_GEMM_FP16) the residual is
     * that of FP32 products within 2% (averaged over seeds), on both
     * spectra, with two iterations */
    const tn_spectrum_t specs[2] = {TN_SPEC_LINEAR, TN_SPEC_EXP};
    for (int s = 0; s < 2; s++) {
        double r16 = 0, r32 = 0, bound = 0;
        for (int seed = 1; seed <= 3; seed++) {
            rsvd_power = TCNLA_GEMM_FP16;
            rsvd_run a = run_rsvd(specs[s], 192, 16, 10, 2, (uint64_t)seed,
                                  TCNLA_GEMM_SHGEMM_FP16, TCNLA_FMT_FP16);
            rsvd_power = TCNLA_GEMM_DEFAULT;
            rsvd_run b = run_rsvd(specs[s], 192, 16, 10, 2, (uint64_t)seed,
                                  TCNLA_GEMM_SHGEMM_FP16, TCNLA_FMT_FP16);
            REQUIRE(a.status == 0 && b.status == 0);
            r16 += a.res / 3, r32 += b.res / 3, bound = a.bound;
        }
        printf("    %s: residual with FP16 power iterations %.5e, FP32 %.5e (ratio %.4f)\n",
               s ? "exp" : "linear", r16, r32, r16 / r32);
        CHECK_MSG(fabs(r16 / r32 - 1) <= 0.02, "FP16 / FP32 power iterations: %.4f", r16 / r32);
        CHECK(r16 <= bound);
    }
}

TEST(rsvd_cauchy_shgemm_fp16_range_tf32_ok) {
    /* [Ootomo & Yokota 2023] 5.1.1: the Cauchy matrix after one orthogonal iteration
     * exceeds FP16's range: a product with SHGEMM_FP16 says so; tcnla_rsvd
     * never fails on finite input: its projection runs SHGEMM_TF32 instead,
     * says so in opts.info, and gives SHGEMM_TF32's result bit for bit */
    tcnla_handle_t h = cpu();
    const int N = 128, k = 8;
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k);
    float *VT = malloc(sizeof(float) * k * N), S[8];
    REQUIRE(tn_testmat_cauchy(N, N, 3, A, N) == 0);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k;
    o.power_iters = 1;
    o.gemm_method = TCNLA_GEMM_TCEC_TF32;
    uint16_t *Om = malloc(sizeof(uint16_t) * N * 18);
    float *Y = malloc(sizeof(float) * N * 18);
    REQUIRE(tcnla_random_fill_f16(h, TCNLA_RAND_GAUSSIAN, 1, 0, N, 18, Om, N) == 0);
    /* (a product on its own scales the rows of A exactly; with that off, the
     * range error) */
    tcnla_info_t info;
    CHECK_EQ_INT(tcnla_shgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, N, 18, N, 1.0f,
                                 A, N, Om, N, 0.0f, Y, N, &info),
                 0);
    CHECK(info.scaled == 1);
    tcnla_tuning_t tu;
    tcnla_get_tuning(h, &tu);
    tu.exact_scaling = 0;
    REQUIRE(tcnla_set_tuning(h, &tu) == 0);
    CHECK_EQ_INT(tcnla_shgemm(h, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, N, 18, N, 1.0f,
                              A, N, Om, N, 0.0f, Y, N),
                 TCNLA_ERR_RANGE);
    tu.exact_scaling = 1;
    REQUIRE(tcnla_set_tuning(h, &tu) == 0);
    free(Om), free(Y);
    o.info = &info;
    /* the default projection (FP16 here: a power iteration follows) on the
     * same data: its products' range policy gives an accurate result */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k), 0);
    CHECK(info.proj_method == TCNLA_GEMM_FP16);
    const double r0 = lowrank_residual(A, N, N, U, S, VT, k);
    printf("    Cauchy rank-%d residual with the defaults: %.3e\n", k, r0);
    CHECK(r0 < 1e-3);
    o.proj_method = TCNLA_GEMM_SHGEMM_FP16; /* its range fallback: SHGEMM_TF32 */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k), 0);
    CHECK(info.fallbacks == 1 && (info.methods & (1u << TCNLA_GEMM_SHGEMM_TF32)) &&
          !(info.methods & (1u << TCNLA_GEMM_SHGEMM_FP16)));
    float *U2 = malloc(sizeof(float) * N * k), *VT2 = malloc(sizeof(float) * k * N), S2[8];
    o.proj_method = TCNLA_GEMM_SHGEMM_TF32;
    CHECK(tcnla_rsvd(h, &o, N, N, A, N, U2, N, S2, VT2, k) == 0);
    CHECK(info.fallbacks == 0);
    CHECK(memcmp(U, U2, sizeof(float) * N * k) == 0 && memcmp(S, S2, sizeof S) == 0 &&
          memcmp(VT, VT2, sizeof(float) * k * N) == 0);
    free(U2), free(VT2);
    double r = lowrank_residual(A, N, N, U, S, VT, k);
    printf("    Cauchy rank-%d residual with SHGEMM_TF32: %.3e\n", k, r);
    CHECK(r < 1e-3);
    for (int i = 1; i < k; i++) CHECK(S[i] <= S[i - 1]);
    free(A), free(U), free(VT);
    tcnla_destroy(h);
}

TEST(rsvd_invalid_arguments) {
    tcnla_handle_t h = cpu();
    float A[64 * 64], U[64 * 8], VT[8 * 64], S[8];
    memset(A, 0, sizeof A);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2); /* rank 0 */
    o.rank = 60;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2); /* k + p > n */
    o.rank = 8;
    CHECK_EQ_INT(tcnla_rsvd(NULL, &o, 64, 64, A, 64, U, 64, S, VT, 8), -1);
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 63, U, 64, S, VT, 8), -6);
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 7), -11);
    o.random_format = TCNLA_FMT_FP32; /* SHGEMM needs an FP16 Omega */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.random_format = TCNLA_FMT_FP16;
    o.power_method = TCNLA_GEMM_SHGEMM_TF32; /* the power iterations take SHGEMM_FP16 only */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.power_method = TCNLA_GEMM_METHOD_COUNT;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.power_method = (tcnla_gemm_method_t)-1;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.power_method = TCNLA_GEMM_DEFAULT;
    o.gemm_method = TCNLA_GEMM_SHGEMM_FP16; /* W = A^T Q in FP32: no FP16 operand */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.gemm_method = TCNLA_GEMM_TCEC_FP16;
    o.power_method = TCNLA_GEMM_SHGEMM_FP16; /* taken: the basis rounded to FP16 */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), 0);
    o.power_method = TCNLA_GEMM_DEFAULT;
    o.pass_efficient = 1; /* 2q + 1 passes: q >= 1 */
    o.power_iters = 0;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.power_iters = 2;
    o.pass_efficient = 2;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.pass_efficient = -1;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.pass_efficient = 1;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), 0);
    o.pass_efficient = 0;
    /* rank + oversampling beyond int64: the options are wrong (-2), found
     * without a signed overflow */
    o = tcnla_rsvd_opts_default();
    o.rank = INT64_MAX;
    o.oversampling = 10;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.rank = 8;
    o.oversampling = INT64_MAX;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    tcnla_destroy(h);
}

/* The power iterations' precision from the data (defaults: power_method 0,
 * gemm_method TCEC_FP16): FP16 where the tail of the spectrum is far above
 * FP16's resolution (here singular values flattening at 1e-2 of the
 * largest), SHGEMM_FP16 where it is below (a flat tail at 1e-6): each with
 * the residual of TCEC power iterations within 1 %. A wrong rule (FP16 on
 * the second matrix) loses FP16's 1e-4 .. 1e-3 in the residual. */
TEST(rsvd_power_precision_from_the_data) {
    tcnla_handle_t h = cpu();
    const int N = 256, k = 16;
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k);
    float *VT = malloc(sizeof(float) * k * N), S[16];
    double sig[256];
    for (int c = 0; c < 2; c++) {
        const double floor = c == 0 ? 1e-2 : 1e-6;
        for (int i = 0; i < N; i++) sig[i] = fmax(pow(0.5, i), floor);
        REQUIRE(tn_testmat_latms(N, N, sig, 4242 + c, A, N) == 0);
        double res[2];
        tcnla_gemm_method_t pw[2];
        for (int v = 0; v < 2; v++) {
            tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
            o.rank = k;
            o.oversampling = 8;
            if (v) o.power_method = TCNLA_GEMM_TCEC_FP16;
            tcnla_info_t info;
            o.info = &info;
            REQUIRE(tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k) == 0);
            res[v] = lowrank_residual(A, N, N, U, S, VT, k);
            pw[v] = info.power_method;
            CHECK(info.proj_method == TCNLA_GEMM_FP16); /* (power iterations follow) */
        }
        const int f16 = pw[0] == TCNLA_GEMM_FP16;
        printf("    tail %.0e: residual %.6e (defaults, %s power iterations), %.6e (TCEC)\n", floor,
               res[0], f16 ? "FP16" : "SHGEMM", res[1]);
        CHECK_MSG(f16 == (c == 0), "tail %.0e: FP16 power iterations %d", floor, f16);
        CHECK_MSG(f16 || pw[0] == TCNLA_GEMM_SHGEMM_FP16, "tail %.0e: power iterations in %s",
                  floor, tcnla_gemm_method_name(pw[0]));
        CHECK(pw[1] == TCNLA_GEMM_TCEC_FP16);
        CHECK_MSG(res[0] <= 1.01 * res[1], "tail %.0e: %.6e vs %.6e", floor, res[0], res[1]);
    }
    free(A), free(U), free(VT);
    tcnla_destroy(h);
}

/* The power iterations in SHGEMM_FP16 (A split as by TCEC, only the
 * orthonormal basis rounded to FP16): A^T (Q + E) = A^T Q + A^T E, whose
 * component along v_j is s_j (u_j^T E), so the basis's rounding does not
 * pollute a tail below FP16's resolution, as rounding A does (FP16 power
 * iterations: noise ~ u16 ||A|| in every direction). 1024 x 512, rank 32,
 * p = 10, q = 2, A = U diag(s) V^T with r = 192 (bench/rsvd.c's spectra):
 *   easy (s_i = 10^(-2 i / k)): the defaults choose FP16 (bit for bit the
 *     run with power_method FP16), residual 1.000013e-2 against TCEC's
 *     9.999999e-3;
 *   deep decay (s_i = 10^(-8 i / k), s_k = 1e-8) and low rank (rank k / 2,
 *     s_i = 10^(-2 i / (k / 2))): the defaults choose SHGEMM_FP16 (their
 *     first power product in FP16: rsvd_first_power_product_fp16), residual
 *     2.482e-7 and 2.310e-7, SHGEMM_FP16 throughout 2.495e-7 and 2.413e-7,
 *     against TCEC's 2.263e-7 and 2.354e-7 (FP32's floor; FP16 power
 *     iterations 4.1e-5). Over six matrices of each (seeds 1 + 10 c +
 *     1000 s): residual / TCEC's 0.996 .. 1.097 for the defaults and 0.962 ..
 *     1.102 for SHGEMM_FP16 (deep), 0.952 .. 1.075 and 0.958 .. 1.025 (low
 *     rank), FP16's 154 .. 192; the largest relative error of the singular
 *     values FP32 resolves (s_i >= 1e-5 s_1) against TCEC's 0.37 .. 1.64 and
 *     0.58 .. 4.4 (deep, 7e-6 .. 6e-5), 0.98 .. 1.47 and 0.96 .. 1.00 (low
 *     rank, 2e-7), FP16's on the deep decay 1.7e4 .. 9.3e4 times.
 * Bounds, for both the defaults and SHGEMM_FP16 throughout: residual <=
 * 1.3 x TCEC's, values' error <= 4 x TCEC's (floored at 2^-24: the ratio of
 * two errors that small scatters); the FP16 run on the deep decay breaks
 * both (the bounds have teeth), and so would defaults that chose FP16
 * there. */
static double sv_resolved_err(const float *S, const double *sig, int k) {
    double e = 0;
    for (int i = 0; i < k; i++)
        if (sig[i] > 0 && sig[i] >= 1e-5 * sig[0]) e = fmax(e, fabs(S[i] - sig[i]) / sig[i]);
    return e;
}

/* s_i of bench/rsvd.c's spectra (rank k; with r = 4k + 64 nonzero values in
 * tn_testmat_svd_fast), and an easy one, s_k = 1e-2 */
enum { SP_EASY, SP_EXP, SP_GAP_NOISE, SP_DEEP_DECAY, SP_LOW_RANK };
static double spectrum_value(int sp, int i, int k) {
    const double x = i;
    switch (sp) {
    case SP_EASY: return pow(10.0, -2.0 * x / k);
    case SP_EXP: return pow(10.0, -3.0 * x / k);
    case SP_GAP_NOISE: return (i < k / 2 ? 1.0 : 1e-2) + 1e-4;
    case SP_DEEP_DECAY: return pow(10.0, -8.0 * x / k);
    default: return i < k / 2 ? pow(10.0, -2.0 * x / (k / 2)) : 0.0;
    }
}

/* U (m x k), S (k) and VT (k x n) of one run, for tests comparing runs */
typedef struct {
    float *U, *S, *VT;
} rsvd_out;

static rsvd_out *rsvd_outs(int count, int m, int n, int k) {
    rsvd_out *r = calloc((size_t)count, sizeof *r);
    for (int v = 0; r && v < count; v++) {
        r[v].U = malloc(sizeof(float) * m * k), r[v].VT = malloc(sizeof(float) * k * n);
        r[v].S = malloc(sizeof(float) * k);
    }
    return r;
}

static void rsvd_outs_free(rsvd_out *r, int count) {
    for (int v = 0; r && v < count; v++) free(r[v].U), free(r[v].VT), free(r[v].S);
    free(r);
}

TEST(rsvd_power_shgemm_as_accurate_as_tcec) {
    tcnla_handle_t h = cpu();
    const int m = 1024, n = 512, k = 32, p = 10, r = 4 * k + 64;
    double *sig = calloc(n, sizeof(double));
    float *A = malloc(sizeof(float) * m * n);
    rsvd_out *R = rsvd_outs(4, m, n, k);
    REQUIRE(sig && A && R);
    static const char *names[3] = {"easy (s_k = 1e-2)", "deep decay (s_k = 1e-8)",
                                   "low rank (k / 2)"};
    static const int sp[3] = {SP_EASY, SP_DEEP_DECAY, SP_LOW_RANK};
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < r; i++) sig[i] = spectrum_value(sp[c], i, k);
        REQUIRE(tn_testmat_svd_fast(m, n, r, sig, 1 + 10 * c, A, m) == 0);
        /* v: 0 the defaults, 1 what they should choose, 2 TCEC, 3 FP16 */
        const tcnla_gemm_method_t pms[4] = {TCNLA_GEMM_DEFAULT,
                                            c == 0 ? TCNLA_GEMM_FP16 : TCNLA_GEMM_SHGEMM_FP16,
                                            TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_FP16};
        double res[4] = {0, 0, 0, 0}, sv[4] = {0, 0, 0, 0};
        tcnla_gemm_method_t pw[4] = {0, 0, 0, 0};
        const int nv = c == 1 ? 4 : 3;
        for (int v = 0; v < nv; v++) {
            tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
            o.rank = k, o.oversampling = p, o.power_method = pms[v];
            tcnla_info_t info;
            o.info = &info;
            REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, R[v].U, m, R[v].S, R[v].VT, k) == 0);
            res[v] = lowrank_residual(A, m, n, R[v].U, R[v].S, R[v].VT, k);
            sv[v] = sv_resolved_err(R[v].S, sig, k);
            pw[v] = info.power_method;
        }
        printf("    %s: residual defaults %.6e (power iterations %s), %s %.6e, TCEC %.6e",
               names[c], res[0], tcnla_gemm_method_name(pw[0]), tcnla_gemm_method_name(pms[1]),
               res[1], res[2]);
        if (nv == 4) printf(", FP16 %.6e", res[3]);
        printf("; values' error %.3e, %.3e, %.3e%s", sv[0], sv[1], sv[2], nv == 4 ? ", " : "\n");
        if (nv == 4) printf("%.3e\n", sv[3]);
        CHECK_MSG(pw[0] == pms[1], "%s: power iterations %s", names[c],
                  tcnla_gemm_method_name(pw[0]));
        if (c == 0) { /* FP16 where it suffices: the run with power_method FP16, bit for bit
                       * (the projection's first l columns do not depend on the probe
                       * columns drawn beside them), TCEC's residual within 1 % */
            CHECK_MSG(memcmp(R[0].S, R[1].S, sizeof(float) * k) == 0 &&
                          memcmp(R[0].U, R[1].U, sizeof(float) * m * k) == 0 &&
                          memcmp(R[0].VT, R[1].VT, sizeof(float) * k * n) == 0,
                      "%s: the defaults differ from power_method fp16", names[c]);
            CHECK_MSG(res[0] <= 1.01 * res[2], "%s: %.6e vs %.6e", names[c], res[0], res[2]);
            continue;
        }
        /* SHGEMM_FP16 (every power product, v 1; the defaults, v 0, run the
         * first in FP16: rsvd_first_power_product_fp16) against TCEC */
        const double svb = 4 * fmax(sv[2], 0x1p-24);
        for (int v = 0; v < 2; v++) {
            CHECK_MSG(res[v] <= 1.3 * res[2], "%s, run %d: residual %.6e > 1.3 x TCEC's %.6e",
                      names[c], v, res[v], res[2]);
            CHECK_MSG(sv[v] <= svb, "%s, run %d: values' error %.3e > 4 x TCEC's %.3e", names[c],
                      v, sv[v], sv[2]);
        }
        if (nv == 4) { /* FP16 there: outside both bounds */
            CHECK_MSG(res[3] > 1.3 * res[2], "%s: FP16 residual %.6e within the bound", names[c],
                      res[3]);
            CHECK_MSG(sv[3] > svb, "%s: FP16 values' error %.3e within the bound", names[c],
                      sv[3]);
        }
    }
    rsvd_outs_free(R, 4);
    free(sig), free(A);
    tcnla_destroy(h);
}

/* tcnla_rsvd on A (m x n) at rank k, oversampling p, q power iterations,
 * with power_method v = 0 the default, 1 SHGEMM_FP16, 2 TCEC_FP16 for v <
 * nv, into R[v]: res[v] the residual, sv[v] (sv not NULL) the values' error
 * against sig (sv_resolved_err), *pw the method the defaults chose; *ok 1
 * where every call succeeded. */
static void power_variants(tcnla_handle_t h, int m, int n, int k, int p, int q, const float *A,
                           const double *sig, int nv, rsvd_out *R, double *res, double *sv,
                           tcnla_gemm_method_t *pw, int *ok) {
    const tcnla_gemm_method_t pms[3] = {TCNLA_GEMM_DEFAULT, TCNLA_GEMM_SHGEMM_FP16,
                                        TCNLA_GEMM_TCEC_FP16};
    *ok = 0;
    for (int v = 0; v < nv; v++) {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = p, o.power_iters = q, o.power_method = pms[v];
        tcnla_info_t info;
        o.info = &info;
        REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, R[v].U, m, R[v].S, R[v].VT, k) == 0);
        res[v] = lowrank_residual(A, m, n, R[v].U, R[v].S, R[v].VT, k);
        if (sv) sv[v] = sv_resolved_err(R[v].S, sig, k);
        if (!v) *pw = info.power_method;
    }
    *ok = 1;
}

/* The defaults' first power product W = A^T Q in FP16 where they run the
 * accurate method (SHGEMM_FP16) and another iteration follows: its noise
 * E^T Q (E = fl16(A) - A) reaches Y = A W through A, scaled by s_i along
 * u_i, and a whole accurate iteration filters it after that. 1024 x 512,
 * rank 32, p = 10, q = 2, on two full-rank spectra whose residual lies far
 * above FP32's floor, so that a worse subspace shows in it: the deep decay
 * over a floor (s_i = max(10^(-8 i / k), 1e-6)) and a slower decay over a
 * lower floor (max(10^(-5 i / k), 1e-7)). Measured over three matrices of
 * each: residual within 1.0008x of TCEC's (SHGEMM_FP16 throughout 1.0000x),
 * the values' error (s_i >= 1e-5 s_1) 0.7 .. 1.4x TCEC's. With the whole
 * first iteration in FP16 (Y = fl16(A) W too: its noise unscaled) the
 * residual went 1.0026-1.0042x and the values' error 5 .. 9x TCEC's
 * (3e-4 .. 5e-4 on the first spectrum): outside the bounds below, residual
 * <= 1.002x and values' error <= 4x TCEC's. The defaults differ from the
 * run with power_method SHGEMM_FP16 (that FP16 product ran), and with q = 1
 * (no accurate iteration after it) equal it bit for bit. Where it costs
 * accuracy: a tail below FP16's resolution that decays slowly, so that the
 * accurate iteration after it filters its noise weakly. Three more
 * full-rank spectra, q = 2, s_i (i from 0): (a) 1 for i < 16, then 1e-5
 * (i - 15)^-0.3; (b) 10^(-i / 32) for i < 16, then 1e-4 (i - 15)^-0.5;
 * (c) 1 for i < 16, 1e-5 up to i = 36, then 0.7e-5. The rule takes
 * SHGEMM_FP16 on all three. Measured: the
 * defaults' residual 1.00755x, 1.00329x and 1.00259x TCEC power
 * iterations' (docs/results.md: up to 1.0104x on other matrices of (a)),
 * SHGEMM_FP16 throughout (the remedy docs/results.md names) 1.00000x.
 * Bounds 1.02x and 1.002x. The whole first iteration in FP16 (Y = fl16(A)
 * W too) gave 1.02321x, 1.00698x, 1.00495x: past the bound on (a). */
TEST(rsvd_first_power_product_fp16) {
    tcnla_handle_t h = cpu();
    const int m = 1024, n = 512, k = 32, p = 10;
    double *sig = malloc(sizeof(double) * n);
    float *A = malloc(sizeof(float) * m * n);
    rsvd_out *R = rsvd_outs(3, m, n, k);
    REQUIRE(sig && A && R);
    static const char *names[2] = {"deep decay over 1e-6", "decay over 1e-7"};
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < n; i++)
            sig[i] = c == 0 ? fmax(pow(10.0, -8.0 * i / k), 1e-6) : fmax(pow(10.0, -5.0 * i / k), 1e-7);
        REQUIRE(tn_testmat_svd_fast(m, n, n, sig, 140 + 10 * c, A, m) == 0);
        for (int q = 2; q >= 1; q--) {
            /* v: 0 the defaults, 1 SHGEMM_FP16, 2 TCEC */
            double res[3], sv[3];
            tcnla_gemm_method_t pw = TCNLA_GEMM_DEFAULT;
            int ok = 0;
            power_variants(h, m, n, k, p, q, A, sig, q == 2 ? 3 : 2, R, res, sv, &pw, &ok);
            REQUIRE(ok);
            const int same = memcmp(R[0].S, R[1].S, sizeof(float) * k) == 0 &&
                             memcmp(R[0].U, R[1].U, sizeof(float) * m * k) == 0 &&
                             memcmp(R[0].VT, R[1].VT, sizeof(float) * k * n) == 0;
            CHECK_MSG(pw == TCNLA_GEMM_SHGEMM_FP16, "%s: power iterations %s", names[c],
                      tcnla_gemm_method_name(pw));
            if (q == 1) {
                printf("    %s, q = 1: the defaults %s SHGEMM_FP16's run\n", names[c],
                       same ? "equal" : "differ from");
                CHECK_MSG(same, "%s, q = 1: the defaults differ from SHGEMM_FP16's run", names[c]);
                continue;
            }
            printf("    %s: residual defaults %.6e, SHGEMM_FP16 %.6e, TCEC %.6e (%.5f, %.5f); "
                   "values' error %.2e, %.2e, %.2e\n",
                   names[c], res[0], res[1], res[2], res[0] / res[2], res[1] / res[2], sv[0],
                   sv[1], sv[2]);
            CHECK_MSG(!same, "%s: the defaults equal SHGEMM_FP16's run bit for bit", names[c]);
            CHECK_MSG(res[0] <= 1.002 * res[2], "%s: residual %.6e > 1.002 x TCEC's %.6e",
                      names[c], res[0], res[2]);
            CHECK_MSG(sv[0] <= 4 * fmax(sv[2], 0x1p-24), "%s: values' error %.3e > 4 x TCEC's %.3e",
                      names[c], sv[0], sv[2]);
        }
    }
    /* the slow tails (above) */
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < n; i++)
            sig[i] = c == 0   ? (i < 16 ? 1.0 : 1e-5 * pow(i - 15, -0.3))
                     : c == 1 ? (i < 16 ? pow(10.0, -i / 32.0) : 1e-4 * pow(i - 15, -0.5))
                              : (i < 16 ? 1.0 : i <= 36 ? 1e-5 : 0.7e-5);
        REQUIRE(tn_testmat_svd_fast(m, n, n, sig, 170 + 10 * c, A, m) == 0);
        /* v: 0 the defaults, 1 SHGEMM_FP16, 2 TCEC */
        double res[3];
        tcnla_gemm_method_t pw = TCNLA_GEMM_DEFAULT;
        int ok = 0;
        power_variants(h, m, n, k, p, 2, A, NULL, 3, R, res, NULL, &pw, &ok);
        REQUIRE(ok);
        printf("    spectrum %c: residual defaults %.6e, SHGEMM_FP16 %.6e, TCEC %.6e (%.5f, "
               "%.5f)\n",
               'a' + c, res[0], res[1], res[2], res[0] / res[2], res[1] / res[2]);
        CHECK_MSG(pw == TCNLA_GEMM_SHGEMM_FP16, "spectrum %c: power iterations %s", 'a' + c,
                  tcnla_gemm_method_name(pw));
        CHECK_MSG(res[0] <= 1.02 * res[2], "spectrum %c: residual %.6e > 1.02 x TCEC's %.6e",
                  'a' + c, res[0], res[2]);
        CHECK_MSG(res[1] <= 1.002 * res[2], "spectrum %c: SHGEMM_FP16 %.6e > 1.002 x TCEC's %.6e",
                  'a' + c, res[1], res[2]);
    }
    rsvd_outs_free(R, 3);
    free(sig), free(A);
    tcnla_destroy(h);
}

/* The default projection (proj_method 0): FP16 where power iterations follow
 * (they filter its rounding of A, noise of about u16 ||A||_F in every
 * direction, as they filter Omega's randomness), SHGEMM_FP16 without them.
 * 1024 x 512, rank 32, p = 10, A = U diag(s) V^T with r = 192 (bench/rsvd.c's
 * spectra), q = 2: residual of the defaults against the same run with the
 * projection in SHGEMM_FP16 exp 1.0000, gap_noise 1.0000, deep decay 1.0125,
 * low rank 0.9956 (measured, each with the power iterations' precision the
 * rule chose; on the last two the first power product in FP16, then
 * SHGEMM_FP16). Bound 1.05. q = 0: the defaults project in SHGEMM_FP16 (bit
 * for bit); an FP16 projection there leaves FP16's noise in the basis (deep
 * decay: residual 1.7e-4 against 3.5e-7), outside the bound. */
/* The rule for the power iterations' precision after an FP16 projection:
 * its probes see fl16(A) = A + E, E's rounding adding up to u16^2 ||A||_F^2
 * to the first basis's squared residual, which the rule subtracts. 2048^2,
 * rank 4, p = 4, q = 1, four values 1 and a flat tail t (r = 80): with the
 * projection in SHGEMM_FP16 (no such noise) the rule takes FP16 from t
 * about 5.3e-5 up, the defaults from about 8.3e-5 up (measured, steps of
 * 12 %); without the subtraction the defaults took FP16 at every t from
 * 3e-5 (the noise alone, about 0.18 u16^2 ||A||_F^2 here, is beyond the
 * threshold 100 u16^2 (l / n) ||A||_F^2 at l / n = 8 / 2048). Here: t =
 * 3.4e-5 and 4.2e-5 (both rules: SHGEMM_FP16) and 1.3e-4 (both: FP16). */
TEST(rsvd_power_rule_discounts_fp16_projection_noise) {
    tcnla_handle_t h = cpu();
    const int N = 2048, k = 4, r = 80;
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k);
    float *VT = malloc(sizeof(float) * k * N), S[4];
    double sig[80];
    const double ts[3] = {3.4e-5, 4.2e-5, 1.3e-4};
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < r; i++) sig[i] = i < 4 ? 1.0 : ts[c];
        REQUIRE(tn_testmat_svd_fast(N, N, r, sig, 5, A, N) == 0);
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = 4, o.power_iters = 1;
        tcnla_info_t info;
        o.info = &info;
        REQUIRE(tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k) == 0);
        const tcnla_gemm_method_t want = c < 2 ? TCNLA_GEMM_SHGEMM_FP16 : TCNLA_GEMM_FP16;
        printf("    tail %.1e: projection %s, power iterations %s\n", ts[c],
               tcnla_gemm_method_name(info.proj_method), tcnla_gemm_method_name(info.power_method));
        CHECK(info.proj_method == TCNLA_GEMM_FP16);
        CHECK_MSG(info.power_method == want, "tail %.1e: power iterations %s, not %s", ts[c],
                  tcnla_gemm_method_name(info.power_method), tcnla_gemm_method_name(want));
    }
    free(A), free(U), free(VT);
    tcnla_destroy(h);
}

TEST(rsvd_default_projection_fp16_as_accurate) {
    tcnla_handle_t h = cpu();
    const int m = 1024, n = 512, k = 32, p = 10, r = 4 * k + 64;
    double *sig = calloc(n, sizeof(double));
    float *A = malloc(sizeof(float) * m * n);
    rsvd_out *R = rsvd_outs(2, m, n, k);
    REQUIRE(sig && A && R);
    static const char *names[4] = {"exp", "gap_noise", "deep_decay", "low_rank"};
    static const int sp[4] = {SP_EXP, SP_GAP_NOISE, SP_DEEP_DECAY, SP_LOW_RANK};
    for (int c = 0; c < 4; c++) {
        for (int i = 0; i < r; i++) sig[i] = spectrum_value(sp[c], i, k);
        REQUIRE(tn_testmat_svd_fast(m, n, r, sig, 77 + c, A, m) == 0);
        for (int q = 2; q >= 0; q -= 2) {
            if (q == 0 && c != 2) continue; /* (q = 0: the deep decay) */
            double res[2];
            tcnla_gemm_method_t pj[2];
            for (int v = 0; v < 2; v++) { /* the defaults; their projection in SHGEMM_FP16 */
                tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
                o.rank = k, o.oversampling = p, o.power_iters = q;
                if (v) o.proj_method = TCNLA_GEMM_SHGEMM_FP16;
                tcnla_info_t info;
                o.info = &info;
                REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, R[v].U, m, R[v].S, R[v].VT, k) == 0);
                res[v] = lowrank_residual(A, m, n, R[v].U, R[v].S, R[v].VT, k);
                pj[v] = info.proj_method;
            }
            printf("    %s, q = %d: residual %.6e (projection %s), %.6e (SHGEMM_FP16): %.4f\n",
                   names[c], q, res[0], tcnla_gemm_method_name(pj[0]), res[1], res[0] / res[1]);
            CHECK(pj[0] == (q ? TCNLA_GEMM_FP16 : TCNLA_GEMM_SHGEMM_FP16));
            CHECK(pj[1] == TCNLA_GEMM_SHGEMM_FP16);
            CHECK_MSG(res[0] <= 1.05 * res[1], "%s, q = %d: %.6e > 1.05 x %.6e", names[c], q,
                      res[0], res[1]);
            if (q == 0) { /* bit for bit; an FP16 projection there: outside the bound */
                CHECK(memcmp(R[0].S, R[1].S, sizeof(float) * k) == 0 &&
                      memcmp(R[0].U, R[1].U, sizeof(float) * m * k) == 0);
                tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
                o.rank = k, o.oversampling = p, o.power_iters = 0;
                o.proj_method = TCNLA_GEMM_FP16;
                REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, R[0].U, m, R[0].S, R[0].VT, k) == 0);
                const double r16 = lowrank_residual(A, m, n, R[0].U, R[0].S, R[0].VT, k);
                printf("    %s, q = 0, FP16 projection: residual %.6e\n", names[c], r16);
                CHECK_MSG(r16 > 1.05 * res[1], "FP16 projection, q = 0: %.6e within the bound",
                          r16);
            }
        }
    }
    rsvd_outs_free(R, 2);
    free(sig), free(A);
    tcnla_destroy(h);
}


/* pass_efficient ([Bjarkason 2019]): the last power iteration stops at
 * Y = A Z (Z = orth(A^T Q)) and A ~ Y Z^T, 2q + 1 passes over A. With the
 * same Omega, in exact arithmetic, the rank-k residuals are ordered
 * standard(q) <= pass-efficient(q) <= standard(q - 1): Y spans the
 * standard's last basis Q, whose truncation is the best rank-k
 * approximation with columns in that span, and Z spans W = A^T Q of the
 * standard run with q - 1, the pass-efficient truncation being the best
 * one with rows in that span. Tall and wide A, a slow polynomial decay
 * (where each step of the order is strict) and an exponential one; every
 * product in FP32, so that the order holds to FP32's rounding. One product
 * fewer than the standard run's; U, V orthonormal, S descending. The
 * defaults (the power iterations' precision from the data) keep the order
 * to 1e-3. */
TEST(rsvd_pass_efficient_between_q_and_q_minus_1) {
    tcnla_handle_t h = cpu();
    const int k = 16, p = 4;
    for (int c = 0; c < 3; c++) {
        const int m = c == 1 ? 384 : 512, n = c == 1 ? 512 : 384, mn = m < n ? m : n;
        const int r = c == 2 ? 4 * k + 64 : mn;
        double *sig = calloc((size_t)mn, sizeof(double));
        float *A = malloc(sizeof(float) * m * n);
        rsvd_out *R = rsvd_outs(1, m, n, k);
        REQUIRE(sig && A && R);
        for (int i = 0; i < r; i++)
            sig[i] = c == 2 ? spectrum_value(SP_EXP, i, k) : 1.0 / sqrt(i + 1.0);
        REQUIRE(tn_testmat_svd_fast(m, n, r, sig, 91 + c, A, m) == 0);
        for (int dflt = 0; dflt < 2; dflt++) {
            if (dflt && c != 0) continue;
            for (int q = 1; q <= 2; q++) {
                double res[3];
                int prods[3];
                for (int v = 0; v < 3; v++) { /* standard q - 1, pass-efficient q, standard q */
                    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
                    o.rank = k, o.oversampling = p, o.seed = 5;
                    o.power_iters = v == 0 ? q - 1 : q;
                    o.pass_efficient = v == 1;
                    if (!dflt) {
                        o.proj_method = o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
                        o.random_format = TCNLA_FMT_FP32;
                    }
                    tcnla_info_t info;
                    o.info = &info;
                    REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, R->U, m, R->S, R->VT, k) == 0);
                    res[v] = lowrank_residual(A, m, n, R->U, R->S, R->VT, k);
                    prods[v] = info.products;
                    if (v != 1) continue;
                    double ou = 0, ov = 0;
                    for (int a = 0; a < k; a++)
                        for (int b = 0; b <= a; b++) {
                            double su = 0, sv = 0;
                            for (int i = 0; i < m; i++) su += (double)R->U[i + a * m] * R->U[i + b * m];
                            for (int j = 0; j < n; j++) sv += (double)R->VT[a + j * k] * R->VT[b + j * k];
                            ou = fmax(ou, fabs(su - (a == b))), ov = fmax(ov, fabs(sv - (a == b)));
                        }
                    CHECK_MSG(ou < 1e-5 && ov < 1e-5, "U^T U - I %.1e, V^T V - I %.1e", ou, ov);
                    for (int i = 1; i < k; i++) CHECK(R->S[i] <= R->S[i - 1]);
                }
                printf("    %s %dx%d%s, q = %d: standard q-1 %.6e, pass-efficient %.6e, standard q "
                       "%.6e (products %d, %d, %d)\n",
                       c == 2 ? "exp" : "poly", m, n, dflt ? " defaults" : "", q, res[0], res[1],
                       res[2], prods[0], prods[1], prods[2]);
                const double tol = dflt ? 1e-3 : 1e-6;
                CHECK_MSG(res[1] <= res[0] * (1 + tol), "pass-efficient %.6e > q-1's %.6e",
                          res[1], res[0]);
                CHECK_MSG(res[1] >= res[2] * (1 - tol), "pass-efficient %.6e < q's %.6e", res[1],
                          res[2]);
                CHECK_EQ_INT(prods[1], prods[2] - 1);
                if (c < 2 && !dflt) /* strict on the slow decay */
                    CHECK_MSG(res[1] < res[0] * (1 - 1e-3) && res[1] > res[2] * (1 + 1e-4),
                              "%.6e not strictly between %.6e and %.6e", res[1], res[0], res[2]);
            }
        }
        rsvd_outs_free(R, 1);
        free(sig), free(A);
    }
    tcnla_destroy(h);
}
