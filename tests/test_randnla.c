/* Random matrices, orthonormalization and randomized SVD on the CPU. */
#include "random/detmath.h"
#include "random/random.h"
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

/* The FP32 Box-Muller of detmath.h against libm in double on the same
 * uniforms: within a few FP32 ulps of the radius, over a million Philox
 * words and the edge words (u1 at 2^-33 and at 1, every quarter turn and
 * octant boundary of the angle). */
TEST(gaussian_fp32_box_muller_within_ulps_of_libm) {
    const double two_pi = 6.283185307179586476925286766559;
    double worst = 0;
    uint32_t edge1[] = {0u, 1u, 0xffffff00u, 0xffffffffu, 0x80000000u, 0x7fffffffu};
    uint32_t edge2[] = {0u, 0x1fffffffu, 0x20000000u, 0x3fffffffu, 0x40000000u,
                        0x7fffffffu, 0x80000000u, 0xc0000000u, 0xffffffffu};
    for (int64_t b = 0; b < 500000 + 54; b++) {
        uint32_t w[4];
        tn_philox(77, 5, (uint64_t)b, w);
        if (b >= 500000) { /* the 6 x 9 edge pairs */
            w[0] = edge1[(b - 500000) / 9], w[1] = edge2[(b - 500000) % 9];
        }
        for (int p = 0; p < 2; p++) {
            float z0, z1;
            tn_dm_box_muller(w[2 * p], w[2 * p + 1], &z0, &z1);
            const double u1 = (double)fmaf((float)w[2 * p], 0x1p-32f, 0x1p-33f);
            const double u2 = (double)(w[2 * p + 1] >> 8) * 0x1p-24;
            const double rad = sqrt(-2.0 * log(u1));
            const double e0 = fabs(z0 - rad * cos(two_pi * u2)), e1 = fabs(z1 - rad * sin(two_pi * u2));
            CHECK(isfinite(z0) && isfinite(z1) && fabs(z0) <= 6.8 && fabs(z1) <= 6.8);
            if (rad > 0) {
                const double e = fmax(e0, e1) / rad / 0x1p-24;
                if (e > worst) worst = e;
            } else {
                CHECK(z0 == 0 && z1 == 0);
            }
        }
    }
    printf("    FP32 Box-Muller: worst error %.2f ulps (2^-24) of the radius\n", worst);
    CHECK_MSG(worst <= 6.0, "worst error %.2f ulps of the radius", worst);
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
    tn_rand_normal(3, 1, 0, 1, M * N, Y0);
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
    tn_rand_normal(4, 1, 0, 1, M * N, Y0);
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
            printf("    %s q=%d: residual %.4e, optimal %.4e, eq.(4) bound %.4e\n",
                   s ? "exp" : "linear", q, mean, opt, bound);
            CHECK_MSG(mean <= bound, "spectrum %d q=%d: %.4e > bound %.4e", s, q, mean, bound);
            CHECK(mean >= opt * (1 - 1e-4));
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
     * exceeds FP16's range; SHGEMM_FP16 must say so, SHGEMM_TF32 works */
    tcnla_handle_t h = cpu();
    const int N = 128, k = 8;
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * k);
    float *VT = malloc(sizeof(float) * k * N), S[8];
    REQUIRE(tn_testmat_cauchy(N, N, 3, A, N) == 0);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k;
    o.power_iters = 1;
    o.gemm_method = TCNLA_GEMM_TCEC_TF32;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k), TCNLA_ERR_RANGE);
    o.proj_method = TCNLA_GEMM_SHGEMM_TF32;
    CHECK(tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, k) == 0);
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
    o.power_method = TCNLA_GEMM_SHGEMM_FP16; /* the basis is not an FP16 operand */
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    o.power_method = TCNLA_GEMM_METHOD_COUNT;
    CHECK_EQ_INT(tcnla_rsvd(h, &o, 64, 64, A, 64, U, 64, S, VT, 8), -2);
    tcnla_destroy(h);
}
