/* tcnla_orthonormalize on ill-conditioned input: Y = U diag(s) V^T with
 * known singular values (geometric from 1 to 1/kappa, slatms), every
 * method, both breakdown policies. A method that returns success must
 * return a Q as orthonormal as that method achieves; one that cannot must
 * say so (ERROR) or hand over to the next method (RETRY), and `used` names
 * the method that ran. */
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U32 0x1p-24
#define U64 0x1p-53

enum { OM = 300, ON = 16 };

static const char *const orth_name[4] = {"householder", "cholqr_fp32", "cholqr_fp64",
                                         "cholqr2_fp64"};

/* |Q^T Q - I| (max over the entries) that a method which succeeded may
 * leave, from what each achieves on these matrices (m = 300, n = 16, u =
 * 2^-24; measured in parentheses, TCNLA_TEST_VERBOSE=1 prints them), each
 * bound 3-7x above the largest measured:
 *  - Householder: its FP32 rounding, whatever kappa (0.23-0.35 n u): 1 n u;
 *  - CholeskyQR2 in FP64: Q rounded once to FP32 (0.007-0.015 n u, kappa up
 *    to 1e8): 0.05 n u;
 *  - CholeskyQR in FP64: that rounding plus the kappa^2 2^-53 loss
 *    [Yamamoto et al. 2015] (0.13-0.77 kappa^2 2^-53 for kappa 1e5..1e7):
 *    0.05 n u + 1.5 kappa^2 2^-53, and whatever kappa its guard
 *    (tn_chol64_loss_within: an estimate of the loss at most 2^-12, which
 *    the measured loss ran 0.5-13x) holds it to 32 * 2^-12 (without the
 *    guard kappa = 1e8 gave 0.05-0.4, the pivot test of tn_chol_ok
 *    catching only some of kappa 1e9);
 *  - CholeskyQR in FP32: its guard (tn_chol32_ok) lets it run on nearly
 *    orthogonal Y only (0.55-0.68 n u at kappa 1.5 and 4): 3 n u. */
static double orth_bound(tcnla_orth_t used, double kappa) {
    switch (used) {
    case TCNLA_ORTH_HOUSEHOLDER: return 1.0 * ON * U32;
    case TCNLA_ORTH_CHOLQR2_FP64: return 0.05 * ON * U32;
    case TCNLA_ORTH_CHOLQR_FP64: return 0.05 * ON * U32 + fmin(1.5 * kappa * kappa * U64, 0x1p-7);
    case TCNLA_ORTH_CHOLQR_FP32:
    default: return 3.0 * ON * U32;
    }
}

static void make_y(double kappa, uint64_t seed, float *Y) {
    double sig[ON];
    for (int i = 0; i < ON; i++) sig[i] = pow(kappa, -(double)i / (ON - 1));
    tn_testmat_latms(OM, ON, sig, seed, Y, OM);
}

TEST(orth_ill_conditioned_every_method_orthonormal_or_reported) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float *Y0 = malloc(sizeof(float) * OM * ON), *Y = malloc(sizeof(float) * OM * ON);
    float *R = malloc(sizeof(float) * ON * ON);
    REQUIRE(Y0 && Y && R);
    const double kappas[10] = {1.5, 4, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    int ran[4] = {0, 0, 0, 0}; /* successes per method, over the sweep */
    for (int kk = 0; kk < 10; kk++) {
        const double kappa = kappas[kk];
        make_y(kappa, 300 + kk, Y0);
        for (int meth = 0; meth <= TCNLA_ORTH_CHOLQR2_FP64; meth++)
            for (int pol = 0; pol < 2; pol++) {
                const tcnla_breakdown_t on = pol ? TCNLA_BREAKDOWN_RETRY : TCNLA_BREAKDOWN_ERROR;
                memcpy(Y, Y0, sizeof(float) * OM * ON);
                tcnla_orth_t used = (tcnla_orth_t)-1;
                const int st = tcnla_orthonormalize(h, (tcnla_orth_t)meth, on, OM, ON, Y, OM, R,
                                                    ON, &used);
                if (st == TCNLA_ERR_NUMERICAL && !pol) { /* reported: Y untouched */
                    CHECK_MSG(memcmp(Y, Y0, sizeof(float) * OM * ON) == 0,
                              "kappa %.0e %s: Y changed on a breakdown", kappa, orth_name[meth]);
                    CHECK_MSG(used == (tcnla_orth_t)meth, "kappa %.0e %s: used %d", kappa,
                              orth_name[meth], (int)used);
                    continue;
                }
                CHECK_MSG(st == 0, "kappa %.0e %s %s: status %d", kappa, orth_name[meth],
                          pol ? "retry" : "error", st);
                if (st) continue;
                /* ERROR runs the method itself; RETRY the method or one later in the chain */
                CHECK_MSG(pol ? (int)used >= meth || used == TCNLA_ORTH_HOUSEHOLDER
                              : used == (tcnla_orth_t)meth,
                          "kappa %.0e %s %s: used %d", kappa, orth_name[meth],
                          pol ? "retry" : "error", (int)used);
                if ((int)used < 0 || (int)used > 3) continue;
                if (!pol) ran[meth]++;
                const double d = tu_orth_defect(Y, OM, ON), b = orth_bound(used, kappa);
                if (getenv("TCNLA_TEST_VERBOSE") && !pol)
                    printf("  kappa %.0e %-12s |Q^T Q - I| %.2e = %.3f n u = %.3g kappa^2 u64\n",
                           kappa, orth_name[meth], d, d / (ON * U32), d / (kappa * kappa * U64));
                CHECK_MSG(d <= b,
                          "kappa %.0e %s (%s) ran %s: |Q^T Q - I| = %.2e = %.2f n u, bound %.2e",
                          kappa, orth_name[meth], pol ? "retry" : "error", orth_name[used], d,
                          d / (ON * U32), b);
                /* Y = Q R to FP32's accuracy (relative to |Y|, at most 1 here) */
                double worst = 0;
                for (int j = 0; j < ON; j++)
                    for (int i = 0; i < OM; i++) {
                        double s = 0;
                        for (int p = 0; p <= j; p++) s += (double)Y[i + p * OM] * R[p + j * ON];
                        worst = fmax(worst, fabs(s - Y0[i + j * OM]));
                    }
                CHECK_MSG(worst <= 64 * U32, "kappa %.0e %s ran %s: |QR - Y| = %.2e", kappa,
                          orth_name[meth], orth_name[used], worst);
            }
    }
    /* each method ran on its own somewhere in the sweep (FP32 CholeskyQR on
     * the nearly orthogonal ones only) */
    for (int meth = 0; meth < 4; meth++)
        CHECK_MSG(ran[meth] > 0, "%s never succeeded", orth_name[meth]);
    free(Y0), free(Y), free(R);
    tcnla_destroy(h);
}

/* The condition numbers where each CholeskyQR gives up, from the theory:
 * FP32 beyond O(sqrt(n)) (its guard), single-pass FP64 where its loss
 * estimate u64 |R_s^-1|_F^2 exceeds 2^-12 (kappa about 5e6 here; its guard)
 * or the Gram matrix is numerically singular (kappa 1e9: Y in FP32 holds
 * the small singular values only to about 1e-7 |Y|, so which test stops it
 * depends on the draw; these seeds are fixed), CholeskyQR2 not before its
 * first pass does. Under RETRY the chain then runs the next method that
 * holds. */
TEST(orth_breakdown_points_follow_the_condition_number) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float *Y0 = malloc(sizeof(float) * OM * ON), *Y = malloc(sizeof(float) * OM * ON);
    REQUIRE(Y0 && Y);
    struct {
        double kappa;
        uint64_t seed;
        tcnla_orth_t meth;
        int breaks;
        tcnla_orth_t retry_used;
    } cases[] = {
        {4, 400, TCNLA_ORTH_CHOLQR_FP32, 0, TCNLA_ORTH_CHOLQR_FP32},
        {1e2, 401, TCNLA_ORTH_CHOLQR_FP32, 1, TCNLA_ORTH_CHOLQR_FP64},
        {2e4, 402, TCNLA_ORTH_CHOLQR_FP32, 1, TCNLA_ORTH_CHOLQR_FP64},
        {1e6, 403, TCNLA_ORTH_CHOLQR_FP64, 0, TCNLA_ORTH_CHOLQR_FP64},
        {1e7, 403, TCNLA_ORTH_CHOLQR_FP64, 1, TCNLA_ORTH_CHOLQR2_FP64},
        /* potrf succeeds here: only the pivot test stops a Q with
         * |Q^T Q - I| = 9.5 */
        {1e9, 400, TCNLA_ORTH_CHOLQR_FP64, 1, TCNLA_ORTH_HOUSEHOLDER},
        {1e8, 405, TCNLA_ORTH_CHOLQR2_FP64, 0, TCNLA_ORTH_CHOLQR2_FP64},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        make_y(cases[c].kappa, cases[c].seed, Y0);
        memcpy(Y, Y0, sizeof(float) * OM * ON);
        int st = tcnla_orthonormalize(h, cases[c].meth, TCNLA_BREAKDOWN_ERROR, OM, ON, Y, OM, NULL,
                                      0, NULL);
        CHECK_MSG(st == (cases[c].breaks ? TCNLA_ERR_NUMERICAL : 0),
                  "kappa %.0e %s: status %d, expected %s", cases[c].kappa,
                  orth_name[cases[c].meth], st, cases[c].breaks ? "a breakdown" : "success");
        memcpy(Y, Y0, sizeof(float) * OM * ON);
        tcnla_orth_t used = (tcnla_orth_t)-1;
        st = tcnla_orthonormalize(h, cases[c].meth, TCNLA_BREAKDOWN_RETRY, OM, ON, Y, OM, NULL, 0,
                                  &used);
        CHECK_MSG(st == 0 && used == cases[c].retry_used,
                  "kappa %.0e %s retry: status %d used %d, expected %s", cases[c].kappa,
                  orth_name[cases[c].meth], st, (int)used, orth_name[cases[c].retry_used]);
    }
    free(Y0), free(Y);
    tcnla_destroy(h);
}

/* Single-pass CholeskyQR in FP64 never returns a Q that is not orthonormal:
 * on Y = U diag(s) V^T with kappa 1e4 .. 1e12 (m x n = 300 x 16, 1000 x 96
 * and 2000 x 200, two draws each) it either succeeds with |Q^T Q - I| within
 * orth_bound (at most 2^-7 whatever kappa, where without its guard kappa =
 * 1e8 comes back 0.05-0.4 off) or reports the breakdown with Y untouched;
 * at kappa 1e4 it succeeds by itself (no false alarm, no retry), from 1e8
 * on (estimated loss 1e-2 and more, 40x the guard's limit) it breaks down;
 * under RETRY CholeskyQR2 or Householder then gives their own bounds. */
TEST(orth_cholqr64_guard_no_silent_loss) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    const int sizes[3][2] = {{300, 16}, {1000, 96}, {2000, 200}};
    const double kappas[5] = {1e4, 1e6, 1e8, 1e9, 1e12};
    for (int sz = 0; sz < 3; sz++) {
        const int m = sizes[sz][0], n = sizes[sz][1];
        float *Y0 = malloc(sizeof(float) * m * n), *Y = malloc(sizeof(float) * m * n);
        double *sig = malloc(sizeof(double) * n);
        REQUIRE(Y0 && Y && sig);
        for (int kk = 0; kk < 5; kk++)
            for (int seed = 0; seed < 2; seed++) {
                const double kappa = kappas[kk];
                for (int i = 0; i < n; i++) sig[i] = pow(kappa, -(double)i / (n - 1));
                REQUIRE(tn_testmat_latms(m, n, sig, 500 + 10 * kk + seed, Y0, m) == 0);
                /* loss bound: orth_bound's, for n columns */
                const double b64 = 0.05 * n * U32 + fmin(1.5 * kappa * kappa * U64, 0x1p-7);
                memcpy(Y, Y0, sizeof(float) * m * n);
                tcnla_orth_t used = (tcnla_orth_t)-1;
                int st = tcnla_orthonormalize(h, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_ERROR, m,
                                              n, Y, m, NULL, 0, &used);
                if (kappa <= 1e4) CHECK_MSG(st == 0, "%dx%d kappa %.0e: status %d", m, n, kappa, st);
                if (kappa >= 1e8)
                    CHECK_MSG(st == TCNLA_ERR_NUMERICAL, "%dx%d kappa %.0e: status %d, |Q^T Q - I| %.2e",
                              m, n, kappa, st, st ? 0.0 : tu_orth_defect(Y, m, n));
                if (st == TCNLA_ERR_NUMERICAL) {
                    CHECK(memcmp(Y, Y0, sizeof(float) * m * n) == 0);
                } else {
                    CHECK_EQ_INT(st, 0);
                    const double d = tu_orth_defect(Y, m, n);
                    if (getenv("TCNLA_TEST_VERBOSE"))
                        printf("  %dx%d kappa %.0e |Q^T Q - I| %.2e (bound %.2e)\n", m, n, kappa,
                               d, b64);
                    CHECK_MSG(d <= b64, "%dx%d kappa %.0e: |Q^T Q - I| = %.2e > %.2e", m, n, kappa,
                              d, b64);
                }
                memcpy(Y, Y0, sizeof(float) * m * n);
                st = tcnla_orthonormalize(h, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_RETRY, m, n,
                                          Y, m, NULL, 0, &used);
                CHECK_EQ_INT(st, 0);
                if (kappa <= 1e4) CHECK(used == TCNLA_ORTH_CHOLQR_FP64);
                if (kappa >= 1e8) CHECK(used != TCNLA_ORTH_CHOLQR_FP64);
                if (st == 0) {
                    const double d = tu_orth_defect(Y, m, n);
                    const double b = used == TCNLA_ORTH_CHOLQR_FP64     ? b64
                                     : used == TCNLA_ORTH_CHOLQR2_FP64 ? 0.05 * n * U32
                                                                       : 1.0 * n * U32;
                    CHECK_MSG(d <= b, "%dx%d kappa %.0e retry ran %s: |Q^T Q - I| = %.2e > %.2e",
                              m, n, kappa, orth_name[used], d, b);
                }
            }
        free(Y0), free(Y), free(sig);
    }
    tcnla_destroy(h);
}

/* The drivers: the randomized SVD's bases after its power iterations are
 * ill-conditioned (kappa up to s_1 / s_l) but well inside what the guard
 * accepts, so the default single-pass CholeskyQR in FP64 under
 * TCNLA_BREAKDOWN_ERROR succeeds there (a false alarm would be a status);
 * on a matrix of exact rank 6 < l = 16 (the basis's trailing singular
 * values are rounding errors) it reports the breakdown under ERROR and
 * under RETRY returns U with orthonormal columns. */
TEST(orth_cholqr64_guard_in_rsvd) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    enum { N = 192, K = 12 };
    float *A = malloc(sizeof(float) * N * N), *U = malloc(sizeof(float) * N * K);
    float *VT = malloc(sizeof(float) * K * N), S[K];
    double sig[N];
    REQUIRE(A && U && VT);
    for (int c = 0; c < 3; c++) {
        /* 0: exp spectrum (s_k = 1e-3), 1: linear, 2: rank 6 */
        if (c < 2) {
            tn_spectrum(c == 0 ? TN_SPEC_EXP : TN_SPEC_LINEAR, N, K, 1e-3, 20, 3.0, 1e6, sig);
            REQUIRE(tn_testmat_latms(N, N, sig, 900 + c, A, N) == 0);
        } else {
            REQUIRE(tn_testmat_lowrank(N, N, 6, 902, A, N) == 0);
        }
        for (int pol = 0; pol < 2; pol++) {
            tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
            o.rank = K;
            o.oversampling = 4;
            o.power_iters = 2;
            o.proj_method = TCNLA_GEMM_NATIVE_FP32;
            o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
            o.orth = TCNLA_ORTH_CHOLQR_FP64;
            o.on_breakdown = pol ? TCNLA_BREAKDOWN_RETRY : TCNLA_BREAKDOWN_ERROR;
            const int st = tcnla_rsvd(h, &o, N, N, A, N, U, N, S, VT, K);
            if (c < 2 || pol) {
                CHECK_MSG(st == 0, "case %d policy %d: status %d", c, pol, st);
                if (st == 0) {
                    const double d = tu_orth_defect(U, N, K);
                    CHECK_MSG(d <= 1.0 * K * U32 + 0x1p-12, "case %d: |U^T U - I| = %.2e", c, d);
                }
            } else {
                CHECK_MSG(st == TCNLA_ERR_NUMERICAL, "rank 6, ERROR: status %d", st);
            }
        }
    }
    free(A), free(U), free(VT);
    tcnla_destroy(h);
}
