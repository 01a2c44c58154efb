/* The Ozaki scheme on the CPU [Mukunoki et al. 2020]: CR mode against MPFR, DP mode
 * against native DGEMM / SGEMM, FIXED mode, reproducibility, edge cases. */
#include "tcnla.h"
#include "test.h"
#include "testmat/testdata.h"
#include "util.h"

#include <math.h>
#include <mpfr.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static tcnla_handle_t cpu(void) {
    tcnla_handle_t h = NULL;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    return h;
}

static int set_opts(tcnla_handle_t h, tcnla_ozaki_mode_t mode, int slices, int fast,
                    size_t cap) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = mode;
    o.slices = slices;
    o.fast = fast;
    o.workspace_cap = cap;
    o.scheme = TCNLA_OZAKI_SCHEME_1; /* scheme 2: tests/test_ozaki2.c */
    return tcnla_set_ozaki_opts(h, &o);
}

static double opa(const double *A, int64_t lda, tcnla_op_t ta, int64_t i, int64_t l) {
    return ta == TCNLA_OP_N ? A[i + l * lda] : A[l + i * lda];
}
static double opb(const double *B, int64_t ldb, tcnla_op_t tb, int64_t l, int64_t j) {
    return tb == TCNLA_OP_N ? B[l + j * ldb] : B[j + l * ldb];
}

/* R (m x n, ld m) = op(A) op(B) correctly rounded to FP64: the dot products
 * summed exactly (4400 bits hold every product of two finite doubles and
 * their sum), then one rounding to nearest with mpfr_get_d (which rounds
 * subnormal results correctly). */
static void mpfr_ref(tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                     const double *A, int64_t lda, const double *B, int64_t ldb, double *R) {
    mpfr_t *p = malloc(sizeof(mpfr_t) * (size_t)k);
    mpfr_ptr *pp = malloc(sizeof(mpfr_ptr) * (size_t)k);
    mpfr_t a, b, s;
    mpfr_inits2(53, a, b, (mpfr_ptr)0);
    mpfr_init2(s, 4400);
    for (int64_t l = 0; l < k; l++) mpfr_init2(p[l], 106), pp[l] = p[l];
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            for (int64_t l = 0; l < k; l++) {
                mpfr_set_d(a, opa(A, lda, ta, i, l), MPFR_RNDN);
                mpfr_set_d(b, opb(B, ldb, tb, l, j), MPFR_RNDN);
                mpfr_mul(p[l], a, b, MPFR_RNDN); /* exact */
            }
            mpfr_sum(s, pp, (unsigned long)k, MPFR_RNDN); /* exact */
            R[i + j * m] = mpfr_get_d(s, MPFR_RNDN);
        }
    for (int64_t l = 0; l < k; l++) mpfr_clear(p[l]);
    mpfr_clears(a, b, s, (mpfr_ptr)0);
    free(p);
    free(pp);
}

static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }

/* Number of elements of C (ld ldc) not equal to R (ld m); +0 and -0 equal. */
static int64_t count_diff(const double *C, int64_t ldc, const double *R, int64_t m, int64_t n) {
    int64_t bad = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            if (!(C[i + j * ldc] == R[i + j * m])) bad++;
    return bad;
}

static double max_rel(const double *C, const double *R, int64_t len) {
    double e = 0;
    for (int64_t i = 0; i < len; i++) {
        double d = fabs(C[i] - R[i]) / (R[i] != 0 ? fabs(R[i]) : 1.0);
        if (d > e) e = d;
    }
    return e;
}

static double frob_rel(const double *C, const double *R, int64_t len) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < len; i++) {
        double d = C[i] - R[i];
        num += d * d;
        den += R[i] * R[i];
    }
    return sqrt(num / den);
}

static int verbose(void) { return getenv("TCNLA_TEST_VERBOSE") != NULL; }

/* max_ij |C - R|_ij / (|op(A)| |op(B)|)_ij in units of 2^-53 (op N, ld m
 * and k): the componentwise error DP's stop test aims at. */
static double abs_err_u(const double *C, const double *R, const double *A, const double *B,
                        int64_t m, int64_t n, int64_t k) {
    double worst = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = 0;
            for (int64_t l = 0; l < k; l++) s += fabs(A[i + l * m] * B[l + j * k]);
            if (s > 0) worst = fmax(worst, fabs(C[i + j * m] - R[i + j * m]) / (s * 0x1p-53));
        }
    return worst;
}

static const tcnla_gemm_method_t methods[2] = {TCNLA_GEMM_OZAKI_FP16, TCNLA_GEMM_OZAKI_INT8};

/* ------------------------------------------------------------------ CR */
TEST(ozaki_cr_equals_mpfr_correct_rounding) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0);
    struct {
        tcnla_op_t ta, tb;
        int64_t m, n, k, pad;
    } shapes[] = {{TCNLA_OP_N, TCNLA_OP_N, 19, 23, 1000, 0}, {TCNLA_OP_T, TCNLA_OP_N, 17, 13, 65, 3},
                  {TCNLA_OP_N, TCNLA_OP_T, 16, 9, 1, 2},     {TCNLA_OP_T, TCNLA_OP_T, 33, 7, 257, 1},
                  {TCNLA_OP_N, TCNLA_OP_N, 5, 6, 1500, 1}};
    const double phis[3] = {0.1, 1, 2};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        tcnla_op_t ta = shapes[s].ta, tb = shapes[s].tb;
        int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        int64_t lda = (ta == TCNLA_OP_N ? m : k) + shapes[s].pad;
        int64_t ldb = (tb == TCNLA_OP_N ? k : n) + shapes[s].pad, ldc = m + shapes[s].pad;
        int64_t na = lda * (ta == TCNLA_OP_N ? k : m), nb = ldb * (tb == TCNLA_OP_N ? n : k);
        double *A = malloc(sizeof(double) * (size_t)na), *B = malloc(sizeof(double) * (size_t)nb);
        double *C = malloc(sizeof(double) * (size_t)(ldc * n)),
               *R = malloc(sizeof(double) * (size_t)(m * n));
        for (int f = 0; f < 3; f++) {
            tn_rand_phi(40 + s, 1, phis[f], na, A);
            tn_rand_phi(40 + s, 2, phis[f], nb, B);
            mpfr_ref(ta, tb, m, n, k, A, lda, B, ldb, R);
            for (int t = 0; t < 2; t++) {
                for (int64_t i = 0; i < ldc * n; i++) C[i] = NAN; /* beta = 0: never read */
                int st = tcnla_dgemm(h, methods[t], ta, tb, m, n, k, 1.0, A, lda, B, ldb, 0.0, C,
                                     ldc);
                CHECK_EQ_INT(st, 0);
                int64_t bad = count_diff(C, ldc, R, m, n);
                CHECK_MSG(bad == 0, "CR %s shape %zu phi %g: %lld of %lld elements not CR",
                          tcnla_gemm_method_name(methods[t]), s, phis[f], (long long)bad,
                          (long long)(m * n));
            }
        }
        free(A), free(B), free(C), free(R);
    }
    tcnla_destroy(h);
}

/* Zero rows and columns, subnormal inputs and results, 1e300 next to
 * 1e-300 in one row, exact cancellation, k = 1. */
TEST(ozaki_cr_edge_values) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0);
    const int64_t m = 9, n = 8, k = 40;
    double A[9 * 40], B[40 * 8], C[9 * 8], R[9 * 8];
    tn_rand_phi(7, 1, 1.0, m * k, A);
    tn_rand_phi(7, 2, 1.0, k * n, B);
    for (int64_t l = 0; l < k; l++) {
        A[0 + l * m] = 0.0;                                 /* zero row */
        A[1 + l * m] = ldexp(A[1 + l * m], -1060);          /* subnormal row */
        A[2 + l * m] = ldexp(A[2 + l * m], l % 2 ? 990 : -1000); /* huge range */
        A[3 + l * m] = ldexp(A[3 + l * m], -540);           /* tiny products */
        A[4 + l * m] = l < 2 ? 0.75 : 0.0;                  /* cancellation below */
        B[l + 2 * k] = 0.0;                                 /* zero column */
        B[l + 3 * k] = ldexp(B[l + 3 * k], -530);           /* subnormal results with row 3 */
        B[l + 4 * k] = l == 0 ? 3.0 : (l == 1 ? -3.0 : B[l + 4 * k]);
        B[l + 5 * k] = ldexp(B[l + 5 * k], l % 3 ? 1 : -1070);
    }
    A[5] = 0x1p-1074; /* smallest subnormal */
    mpfr_ref(TCNLA_OP_N, TCNLA_OP_N, m, n, k, A, m, B, k, R);
    for (int t = 0; t < 2; t++) {
        CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                                 0.0, C, m),
                     0);
        CHECK_EQ_INT(count_diff(C, m, R, m, n), 0);
    }
    /* k = 1 with extreme exponents */
    double a1[3] = {0x1p-1074, 1e300, -3e-200}, b1[2] = {1e-10, -0x1.fffffffffffffp+1023};
    double c1[6], r1[6];
    mpfr_ref(TCNLA_OP_N, TCNLA_OP_N, 3, 2, 1, a1, 3, b1, 1, r1);
    for (int t = 0; t < 2; t++) {
        CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, 3, 2, 1, 1.0, a1, 3, b1, 1,
                                 0.0, c1, 3),
                     0);
        for (int i = 0; i < 6; i++)
            CHECK_MSG(same_bits(c1[i], r1[i]), "k=1 %s elem %d: %a vs %a",
                      tcnla_gemm_method_name(methods[t]), i, c1[i], r1[i]);
    }
    tcnla_destroy(h);
}

/* Exact ties: an exact product halfway between two doubles rounds to the
 * even one (RN-even), never away from zero. Rows of op(A) (k = 2) times
 * op(B) = [1; 1] give, exactly:
 *   1 + 2^-53      -> 1 (even); away from zero: 1 + 2^-52
 *   -(1 + 2^-53)   -> -1
 *   1 + 3 * 2^-53  -> 1 + 2^-51 (the even neighbour is the upper one)
 *   2^60 + 2^7     -> 2^60 (the ulp there is 2^8); away: 2^60 + 2^8
 * and a subnormal one, 1.25 * 2^-998 * 2^-75 = 2.5 * 2^-1074 -> 2^-1073
 * (even); away: 3 * 2^-1074. MPFR's RN-even reference agrees. */
TEST(ozaki_cr_exact_ties_round_to_even) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0);
    enum { M = 4, K = 2 };
    const double A[M * K] = {1.0, -1.0, 1.0, 0x1p60,                /* column 0 */
                             0x1p-53, -0x1p-53, 0x1.8p-52, 0x1p7}; /* column 1 */
    const double B[K] = {1.0, 1.0};
    const double want[M] = {1.0, -1.0, 1.0 + 0x1p-51, 0x1p60};
    double C[M], R[M];
    mpfr_ref(TCNLA_OP_N, TCNLA_OP_N, M, 1, K, A, M, B, K, R);
    const double a1[1] = {0x1.4p-998}, b1[1] = {0x1p-75};
    double c1, r1;
    mpfr_ref(TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, a1, 1, b1, 1, &r1);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < M; i++) C[i] = NAN;
        CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, M, 1, K, 1.0, A, M, B, K,
                                 0.0, C, M),
                     0);
        for (int i = 0; i < M; i++)
            CHECK_MSG(same_bits(C[i], want[i]) && same_bits(R[i], want[i]),
                      "%s row %d: %a (MPFR %a), expected %a", tcnla_gemm_method_name(methods[t]),
                      i, C[i], R[i], want[i]);
        c1 = NAN;
        CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, 1.0, a1, 1, b1, 1,
                                 0.0, &c1, 1),
                     0);
        CHECK_MSG(same_bits(c1, 0x1p-1073) && same_bits(r1, 0x1p-1073),
                  "%s subnormal tie: %a (MPFR %a), expected 0x1p-1073",
                  tcnla_gemm_method_name(methods[t]), c1, r1);
    }
    tcnla_destroy(h);
}

/* CR with alpha / beta: CR product, then alpha * P + beta * C in FP64. */
TEST(ozaki_cr_alpha_beta_applied_in_fp64) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0);
    const int64_t m = 11, n = 7, k = 30;
    double A[11 * 30], B[30 * 7], C[77], C0[77], R[77];
    tn_rand_phi(9, 1, 1.0, m * k, A);
    tn_rand_phi(9, 2, 1.0, k * n, B);
    tn_rand_phi(9, 3, 1.0, m * n, C0);
    mpfr_ref(TCNLA_OP_N, TCNLA_OP_N, m, n, k, A, m, B, k, R);
    memcpy(C, C0, sizeof C);
    CHECK_EQ_INT(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, -0.3, A,
                             m, B, k, 0.7, C, m),
                 0);
    int bad = 0;
    for (int i = 0; i < 77; i++) bad += !same_bits(C[i], -0.3 * R[i] + 0.7 * C0[i]);
    CHECK_EQ_INT(bad, 0);
    /* k = 0 through SGEMM: C = beta C */
    float Cf[4] = {1, 2, 3, 4}, Af[1] = {0}, Bf[1] = {0};
    CHECK_EQ_INT(tcnla_sgemm(h, TCNLA_GEMM_OZAKI_FP16, TCNLA_OP_N, TCNLA_OP_N, 2, 2, 0, 1.0f, Af,
                             2, Bf, 1, 2.0f, Cf, 2),
                 0);
    CHECK(Cf[0] == 2 && Cf[3] == 8);
    tcnla_destroy(h);
}

/* NaN / Inf inputs: computed as plain FP64 DGEMM. */
TEST(ozaki_nonfinite_inputs_fall_back_to_dgemm) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    const int64_t m = 6, n = 5, k = 7;
    double A[42], B[35], C[30], R[30];
    tn_rand_phi(3, 1, 1.0, 42, A);
    tn_rand_phi(3, 2, 1.0, 35, B);
    A[2] = NAN;
    B[10] = INFINITY;
    CHECK_EQ_INT(tcnla_dgemm(h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m,
                             B, k, 0.0, R, m),
                 0);
    for (int mode = 0; mode < 3; mode++) {
        REQUIRE(set_opts(h, (tcnla_ozaki_mode_t)mode, 3, 1, 0) == 0);
        for (int t = 0; t < 2; t++) {
            for (int i = 0; i < 30; i++) C[i] = NAN;
            CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                                     k, 0.0, C, m),
                         0);
            int bad = 0;
            for (int i = 0; i < 30; i++)
                bad += !(isnan(R[i]) ? isnan(C[i]) : same_bits(C[i], R[i]));
            CHECK_EQ_INT(bad, 0);
        }
    }
    tcnla_destroy(h);
}

/* ------------------------------------------------------------------ DP */
TEST(ozaki_dp_as_accurate_as_native_dgemm) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    const int64_t shapes[2][3] = {{192, 160, 256}, {40, 30, 1300}}; /* 1300: two FP16 k-blocks */
    const double phis[3] = {0.1, 1, 2};
    for (int sh = 0; sh < 2; sh++) {
        const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
        double *A = malloc(sizeof(double) * (size_t)(m * k)), *B = malloc(sizeof(double) * (size_t)(k * n));
        double *C = malloc(sizeof(double) * (size_t)(m * n)), *R = malloc(sizeof(double) * (size_t)(m * n));
        double *N = malloc(sizeof(double) * (size_t)(m * n));
        for (int f = 0; f < 3; f++) {
            tn_rand_phi(50 + f, 1 + 2 * sh, phis[f], m * k, A);
            tn_rand_phi(50 + f, 2 + 2 * sh, phis[f], k * n, B);
            REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0); /* reference: CR (tested above) */
            REQUIRE(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A,
                                m, B, k, 0.0, R, m) == 0);
            REQUIRE(tcnla_dgemm(h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A,
                                m, B, k, 0.0, N, m) == 0);
            double en = max_rel(N, R, m * n);
            for (int t = 0; t < 2; t++)
                for (int fast = 0; fast < 2; fast++) {
                    REQUIRE(set_opts(h, TCNLA_OZAKI_DP, 0, fast, 0) == 0);
                    tcnla_info_t info;
                    CHECK_EQ_INT(tcnla_dgemm_ex(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, m, n, k,
                                                1.0, A, m, B, k, 0.0, C, m, &info),
                                 0);
                    double e = max_rel(C, R, m * n);
                    CHECK_MSG(e <= 2 * en, "DP %s fast %d k %lld phi %g: max rel err %.3g, native %.3g",
                              tcnla_gemm_method_name(methods[t]), fast, (long long)k, phis[f], e, en);
                    /* componentwise, against |op(A)| |op(B)| u: what DP reaches,
                     * measured over these 12 runs per mode: at most 0.14 (all
                     * d^2 products) and 1.0 (fast: p + q <= d + 1); native
                     * DGEMM 1-22. Summing without the compensation gives
                     * 0.4-7.5, a stop test without Algorithm 3's (d + 1)
                     * factor one slice fewer and up to 1.4 (all products)
                     * and 18 (fast). */
                    const double ea = abs_err_u(C, R, A, B, m, n, k), ba = fast ? 2.0 : 0.3;
                    CHECK_MSG(ea <= ba,
                              "DP %s fast %d k %lld phi %g: |C - R| / (|A||B| u) = %.3g > %.2g "
                              "(d = %d)",
                              tcnla_gemm_method_name(methods[t]), fast, (long long)k, phis[f], ea,
                              ba, info.ozaki_d);
                    if (verbose()) {
                        const int d = info.ozaki_d, sa = info.ozaki_slices_a,
                                  sb = info.ozaki_slices_b;
                        printf("  [ozaki] DP %-10s k %-4lld fast %d phi %-3g d=%d slices %d %d "
                               "maxrel %.3g native %.3g  |err|/(|A||B| u) %.3g native %.3g\n",
                               tcnla_gemm_method_name(methods[t]), (long long)k, fast, phis[f],
                               d, sa, sb, e, en, ea, abs_err_u(N, R, A, B, m, n, k));
                    }
                }
        }
        free(A), free(B), free(C), free(R), free(N);
    }
    /* op(B) == 0: every product is zero, two slices suffice */
    {
        const int64_t m = 5, n = 4, k = 9;
        double A[45], B[36] = {0}, C[20];
        tn_rand_phi(1, 1, 2.0, 45, A);
        REQUIRE(set_opts(h, TCNLA_OZAKI_DP, 0, 1, 0) == 0);
        tcnla_info_t info;
        CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0,
                                    A, m, B, k, 0.0, C, m, &info),
                     0);
        CHECK(info.ozaki_d == 2);
        int nz = 0;
        for (int i = 0; i < 20; i++) nz += C[i] != 0.0;
        CHECK_EQ_INT(nz, 0);
    }
    tcnla_destroy(h);
}

/* A row whose largest element meets a tiny row of op(B) while its other
 * elements, 2^300 times smaller, meet normal ones: Algorithm 3's test on
 * the last slice alone would stop after the large element's 8 slices and
 * drop the rest of the row (relative error 0.5); the remainder test keeps
 * splitting. */
TEST(ozaki_dp_remainder_test_keeps_small_elements) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    double A[80], B[80], C[4], R[4];
    tn_rand_phi(200, 1, 1.0, 80, A);
    tn_rand_phi(200, 2, 1.0, 80, B);
    A[0] *= 0x1p300;
    B[0] *= 0x1p-300, B[40] *= 0x1p-300;
    REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0);
    REQUIRE(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, 2, 2, 40, 1.0, A, 2, B,
                        40, 0.0, R, 2) == 0);
    for (int t = 0; t < 2; t++)
        for (int fast = 0; fast < 2; fast++) {
            REQUIRE(set_opts(h, TCNLA_OZAKI_DP, 0, fast, 0) == 0);
            CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, 2, 2, 40, 1.0, A, 2, B,
                                     40, 0.0, C, 2), 0);
            CHECK_MSG(max_rel(C, R, 4) < 1e-15, "%s fast %d: max rel err %.3g",
                      tcnla_gemm_method_name(methods[t]), fast, max_rel(C, R, 4));
        }
    tcnla_destroy(h);
}

TEST(ozaki_sgemm_dp_as_accurate_as_native_sgemm) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    REQUIRE(set_opts(h, TCNLA_OZAKI_DP, 0, 1, 0) == 0);
    const int64_t m = 128, n = 96, k = 200;
    double *tmp = malloc(sizeof(double) * (size_t)(k * (m > n ? m : n)));
    float *A = malloc(sizeof(float) * (size_t)(m * k)), *B = malloc(sizeof(float) * (size_t)(k * n));
    const double phis[3] = {0.1, 1, 2};
    for (int f = 0; f < 3; f++) {
        tn_rand_phi(60 + f, 1, phis[f], m * k, tmp);
        for (int64_t i = 0; i < m * k; i++) A[i] = (float)tmp[i];
        tn_rand_phi(60 + f, 2, phis[f], k * n, tmp);
        for (int64_t i = 0; i < k * n; i++) B[i] = (float)tmp[i];
        for (int t = 0; t < 2; t++) {
            double err = -1, errn = -1;
            CHECK_EQ_INT(tu_method_err(h, methods[t], m, n, k, A, B, &err, &errn, NULL), 0);
            CHECK_MSG(err <= 1.5 * errn, "SGEMM %s phi %g: err %.3g native %.3g",
                      tcnla_gemm_method_name(methods[t]), phis[f], err, errn);
            if (verbose()) {
                printf("  [ozaki] SGEMM %-10s phi %-3g err %.3g native %.3g\n",
                       tcnla_gemm_method_name(methods[t]), phis[f], err, errn);
            }
        }
    }
    free(tmp), free(A), free(B);
    tcnla_destroy(h);
}

/* ---------------------------------------------------------------- FIXED */
TEST(ozaki_fixed_more_slices_more_accurate) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    const int64_t m = 40, n = 36, k = 300;
    double *A = malloc(sizeof(double) * (size_t)(m * k)), *B = malloc(sizeof(double) * (size_t)(k * n));
    double C[40 * 36], R[40 * 36];
    tn_rand_phi(70, 1, 1.0, m * k, A);
    tn_rand_phi(70, 2, 1.0, k * n, B);
    REQUIRE(set_opts(h, TCNLA_OZAKI_CR, 0, 1, 0) == 0);
    REQUIRE(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                        0.0, R, m) == 0);
    for (int t = 0; t < 2; t++)
        for (int fast = 0; fast < 2; fast++) {
            double prev = INFINITY;
            for (int s = 1; s <= 9; s++) {
                REQUIRE(set_opts(h, TCNLA_OZAKI_FIXED, s, fast, 0) == 0);
                CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A,
                                         m, B, k, 0.0, C, m),
                             0);
                double e = frob_rel(C, R, m * n);
                CHECK_MSG(e <= prev || e < 1e-16, "FIXED %s fast %d: %d slices err %.3g > %.3g",
                          tcnla_gemm_method_name(methods[t]), fast, s, e, prev);
                if (s == 1) CHECK(e > 1e-6); /* one slice is a low-precision product */
                if (verbose())
                    printf("  [ozaki] FIXED %-10s fast %d s=%d err %.3g\n",
                           tcnla_gemm_method_name(methods[t]), fast, s, e);
                prev = e;
            }
            CHECK(prev < 1e-15);
        }
    free(A), free(B);
    tcnla_destroy(h);
}

/* ------------------------------------------------------- reproducibility */
TEST(ozaki_bitwise_reproducible_across_threads_and_blocking) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    const int64_t m = 70, n = 53, k = 1300; /* k > 1024: two k-blocks for FP16 */
    double *A = malloc(sizeof(double) * (size_t)(m * k)), *B = malloc(sizeof(double) * (size_t)(k * n));
    double *C1 = malloc(sizeof(double) * (size_t)(m * n)), *C2 = malloc(sizeof(double) * (size_t)(m * n));
    tn_rand_phi(80, 1, 1.0, m * k, A);
    tn_rand_phi(80, 2, 1.0, k * n, B);
    const int saved = omp_get_max_threads();
    struct {
        tcnla_ozaki_mode_t mode;
        int slices, fast;
    } cfg[] = {{TCNLA_OZAKI_DP, 0, 1}, {TCNLA_OZAKI_DP, 0, 0}, {TCNLA_OZAKI_CR, 0, 0},
               {TCNLA_OZAKI_FIXED, 3, 1}};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
        for (int t = 0; t < 2; t++) {
            omp_set_num_threads(2);
            REQUIRE(set_opts(h, cfg[c].mode, cfg[c].slices, cfg[c].fast, 0) == 0);
            CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.0, A, k, B,
                                     k, 0.0, C1, m),
                         0);
            const size_t caps[2] = {100000, 400000};
            const int threads[2] = {1, 3};
            for (int r = 0; r < 2; r++) {
                omp_set_num_threads(threads[r]);
                REQUIRE(set_opts(h, cfg[c].mode, cfg[c].slices, cfg[c].fast, caps[r]) == 0);
                for (int64_t i = 0; i < m * n; i++) C2[i] = -1;
                CHECK_EQ_INT(tcnla_dgemm(h, methods[t], TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.0, A,
                                         k, B, k, 0.0, C2, m),
                             0);
                CHECK_MSG(memcmp(C1, C2, sizeof(double) * (size_t)(m * n)) == 0,
                          "%s mode %d: not bitwise reproducible (cap %zu, %d threads)",
                          tcnla_gemm_method_name(methods[t]), (int)cfg[c].mode, caps[r],
                          threads[r]);
            }
        }
    omp_set_num_threads(saved);
    /* a cap below one row plus one column is refused */
    REQUIRE(set_opts(h, TCNLA_OZAKI_DP, 0, 1, 1000) == 0);
    CHECK_EQ_INT(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_FP16, TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.0, A, k,
                             B, k, 0.0, C2, m),
                 TCNLA_ERR_ALLOC);
    free(A), free(B), free(C1), free(C2);
    tcnla_destroy(h);
}

/* -------------------------------------------------------------- options */
TEST(ozaki_invalid_options_rejected) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default(), g;
    CHECK(o.mode == TCNLA_OZAKI_DP && o.fast == 1 && o.workspace_cap == 0);
    CHECK_EQ_INT(tcnla_set_ozaki_opts(NULL, &o), -1);
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, NULL), -2);
    o.mode = (tcnla_ozaki_mode_t)7;
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, &o), -2);
    o.mode = TCNLA_OZAKI_FIXED;
    o.slices = 0;
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, &o), -2);
    o.slices = 4;
    o.fast = 2;
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, &o), -2);
    o.fast = 0;
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, &o), 0);
    CHECK(tcnla_get_ozaki_opts(h, &g) == 0 && g.mode == TCNLA_OZAKI_FIXED && g.slices == 4 &&
          g.fast == 0);
    tcnla_destroy(h);
}
