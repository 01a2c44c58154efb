/* The C reference of the small SVD by deflated Gram eigensolutions
 * (tn_defl_svd_ref, src/linalg/deflated_svd.h), which the GPU path is
 * tested against (src/backend/cuda/test_gpu_randnla.c): on M = Ua diag(s)
 * Vb^T with s geometric from 1 down to 1e-7 and 1e-9 (l = 64..300, square
 * and tall), on column-graded R^T (tests/small_svd_mat.h), clustered small
 * values, exactly low rank plus noise, k < l: the k values to relative
 * 1e-6 (the project's target) and in fact to a small multiple of what the
 * path achieves, U and V orthonormal, M V = U S. Planted faults (level 2
 * skipped: the plain Gram path; a wrong tau) fail these checks; bad
 * arguments get their status. */
#include "tcnla.h"
#include "test.h"
#include "small_svd_mat.h"

#include "../src/linalg/deflated_svd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 0x1p-52
#define SV_TARGET 1e-6

static int verbose(void) {
    const char *v = getenv("TCNLA_TEST_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

typedef struct {
    double sv;   /* max_j |s_j - sx_j| / sx_j */
    double orth; /* max |U^T U - I|, |V^T V - I| */
    double res;  /* max_j |M v_j - s_j u_j| / s_1 */
    int levels;
} defl_err;

/* Runs the reference (tau, maxlev) on M (m x l), errors against sx. */
static int run(int m, int l, int k, const double *M, const double *sx, double tau, int maxlev,
               int refine, defl_err *e) {
    double *U = malloc(sizeof(double) * ((size_t)m * k + (size_t)l * k + k + m));
    if (!U) return TCNLA_ERR_ALLOC;
    double *V = U + (size_t)m * k, *s = V + (size_t)l * k, *r = s + k;
    tn_defl_info_t info;
    const int st = tn_defl_svd_ref(m, l, k, M, m, tau, maxlev, refine, U, s, V, &info);
    memset(e, 0, sizeof *e);
    e->levels = info.levels;
    for (int j = 0; j < k && st == TCNLA_SUCCESS; j++) {
        const double d = fabs(s[j] - sx[j]) / sx[j];
        if (!(d <= e->sv)) e->sv = d;
        for (int i = 0; i < m; i++) r[i] = -s[j] * U[i + (size_t)j * m];
        for (int c = 0; c < l; c++)
            for (int i = 0; i < m; i++) r[i] += M[i + (size_t)c * m] * V[c + (size_t)j * l];
        double r2 = 0.0;
        for (int i = 0; i < m; i++) r2 += r[i] * r[i];
        if (!(sqrt(r2) / sx[0] <= e->res)) e->res = sqrt(r2) / sx[0];
        for (int q = 0; q <= j; q++) {
            double du = 0.0, dv = 0.0;
            for (int i = 0; i < m; i++) du += U[i + (size_t)j * m] * U[i + (size_t)q * m];
            for (int i = 0; i < l; i++) dv += V[i + (size_t)j * l] * V[i + (size_t)q * l];
            du = fabs(du - (q == j)), dv = fabs(dv - (q == j));
            if (!(du <= e->orth)) e->orth = du;
            if (!(dv <= e->orth)) e->orth = dv;
        }
    }
    free(U);
    return st;
}

/* The bounds, from the error argument of deflated_svd.h and what the
 * reference achieves (TCNLA_TEST_VERBOSE=1 prints it), in units of
 * u = eps s_1 / s_k (eps = 2^-52) where a level past the first ran, else
 * u = eps (s_1 / s_k)^2 (the plain Gram path): l = 64..300, s_k = 1e-7 s_1
 * and 1e-9 s_1, square and tall, planted, graded, clustered, low rank: the
 * values' relative error 0.000-0.095 u (graded: 7e-15 or less), the
 * orthogonality of U and V 0.0000-0.49 u (570 u without the refinement),
 * the residual |M v - s u| / s_1 0.5-3.4 eps. Bounds: 1 u, 4 u and 16 eps. */
#define ORTH_BOUND 4.0

static double unit(double ratio, int levels) {
    return 0x1p-52 * (levels > 1 ? ratio : ratio * ratio);
}

static int holds(const defl_err *e, double ratio, int l) {
    (void)l;
    const double u = unit(ratio, e->levels);
    return e->sv <= 1.0 * u && e->orth <= ORTH_BOUND * u && e->res <= 16.0 * 0x1p-52;
}

static void say(const char *what, int m, int l, int k, double ratio, const defl_err *e) {
    if (verbose())
        printf("  %s m %d l %d k %d s_1/s_k %.0e: levels %d, in u: sv %.3f orth %.4f; "
               "res %.2f eps (sv %.2e orth %.2e)\n", what, m, l, k, ratio, e->levels,
               e->sv / unit(ratio, e->levels), e->orth / unit(ratio, e->levels), e->res / EPS,
               e->sv, e->orth);
}

static double *geometric(int l, double decades) {
    double *s = malloc(sizeof(double) * (size_t)l);
    if (s)
        for (int j = 0; j < l; j++) s[j] = pow(10.0, -decades * j / (l - 1));
    return s;
}

TEST(deflated_svd_ref_planted) {
    const int ls[] = {64, 130, 266, 300};
    for (int t = 0; t < 4; t++)
        for (int dec = 7; dec <= 9; dec += 2)
            for (int tall = 0; tall < 2; tall++) {
                const int l = ls[t], m = tall ? 4 * l : l, k = l;
                double *s = geometric(l, dec), *M = malloc(sizeof(double) * (size_t)m * l);
                REQUIRE(s && M);
                CHECK_EQ_INT(ssvd_planted(m, l, s, 100 + t, M), 0);
                defl_err e;
                CHECK_EQ_INT(run(m, l, k, M, s, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, &e), TCNLA_SUCCESS);
                const double ratio = s[0] / s[k - 1];
                say("planted", m, l, k, ratio, &e);
                CHECK_MSG(holds(&e, ratio, l), "l %d m %d 1e-%d: sv %.3g orth %.3g res %.3g", l, m,
                          dec, e.sv, e.orth, e.res);
                if (dec == 7) CHECK_MSG(e.sv <= SV_TARGET * 1e-2, "sv %.3g", e.sv);
                CHECK(e.levels >= 2);
                free(s), free(M);
            }
}

/* R^T of graded columns (the randomized SVD's factor): s_k = 1e-7 and 1e-9
 * s_1, k = l - 10, against dgesvj (relatively accurate on these). */
TEST(deflated_svd_ref_graded) {
    const int ls[] = {64, 130, 266, 300};
    for (int t = 0; t < 4; t++)
        for (int dec = 7; dec <= 9; dec += 2) {
            const int l = ls[t], k = l - 10;
            double *M = malloc(sizeof(double) * ((size_t)l * l + l));
            REQUIRE(M);
            double *sx = M + (size_t)l * l;
            CHECK_EQ_INT(ssvd_graded(l, k, dec, l, 31 + t, M), 0);
            CHECK_EQ_INT(ssvd_exact(l, M, sx), 0);
            defl_err e;
            CHECK_EQ_INT(run(l, l, k, M, sx, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, &e), TCNLA_SUCCESS);
            const double ratio = sx[0] / sx[k - 1];
            say("graded", l, l, k, ratio, &e);
            CHECK_MSG(holds(&e, ratio, l), "l %d 1e-%d: sv %.3g orth %.3g res %.3g", l, dec, e.sv,
                      e.orth, e.res);
            free(M);
        }
}

/* Clustered small values (40 within 1e-10 of each other at 1e-6, k
 * through the cluster and past it), and exactly low rank (rank 150 of
 * 200, values 1 .. 1e-3) plus Gaussian noise of 1e-12: k = 150 and k = 170
 * (20 noise values, to absolute accuracy). */
TEST(deflated_svd_ref_clustered_and_low_rank) {
    const int l = 200;
    double *s = malloc(sizeof(double) * l), *M = malloc(sizeof(double) * ((size_t)l * l + l));
    REQUIRE(s && M);
    double *sx = M + (size_t)l * l;
    for (int j = 0; j < l; j++)
        s[j] = j < 80    ? pow(10.0, -5.0 * j / 79)
               : j < 120 ? 1e-6 * (1.0 + 1e-10 * (119 - j))
                         : 1e-7 * pow(10.0, -2.0 * (j - 120) / 79);
    CHECK_EQ_INT(ssvd_planted(l, l, s, 7, M), 0);
    for (int k = 100; k <= 160; k += 60) {
        defl_err e;
        CHECK_EQ_INT(run(l, l, k, M, s, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, &e), TCNLA_SUCCESS);
        say("clustered", l, l, k, s[0] / s[k - 1], &e);
        CHECK_MSG(holds(&e, s[0] / s[k - 1], l), "k %d: sv %.3g orth %.3g res %.3g", k, e.sv,
                  e.orth, e.res);
    }
    const int r = 150;
    for (int j = 0; j < l; j++) s[j] = j < r ? pow(10.0, -3.0 * j / (r - 1)) : 0.0;
    CHECK_EQ_INT(ssvd_planted(l, l, s, 8, M), 0);
    uint64_t st = 99;
    for (size_t i = 0; i < (size_t)l * l; i++) M[i] += 1e-12 * ssvd_gauss(&st);
    CHECK_EQ_INT(ssvd_exact(l, M, sx), 0);
    defl_err e;
    CHECK_EQ_INT(run(l, l, r, M, sx, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, &e), TCNLA_SUCCESS);
    say("low rank", l, l, r, sx[0] / sx[r - 1], &e);
    CHECK_MSG(holds(&e, sx[0] / sx[r - 1], l), "rank: sv %.3g orth %.3g res %.3g", e.sv, e.orth,
              e.res);
    /* past the rank: the noise values (about 1e-11) to about eps s_1 absolute */
    const int k = r + 20;
    CHECK_EQ_INT(run(l, l, k, M, sx, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, &e), TCNLA_SUCCESS);
    say("low rank + noise", l, l, k, sx[0] / sx[k - 1], &e);
    CHECK_MSG(e.sv * sx[k - 1] <= 64.0 * l * EPS * sx[0] && e.res <= 16.0 * l * EPS,
              "noise: sv %.3g res %.3g", e.sv, e.res);
    free(s), free(M);
}

/* The checks catch a planted fault: level 2 skipped (maxlev 1: the plain
 * Gram path, errors eps (s_1 / s_k)^2), tau 1e-16 (level 1 takes down to
 * s = 1e-8 s_1), or the refinement skipped (U's orthogonality). */
TEST(deflated_svd_ref_planted_faults_fail) {
    const int l = 130, m = l, k = l;
    double *s = geometric(l, 7.0), *M = malloc(sizeof(double) * (size_t)m * l);
    REQUIRE(s && M);
    CHECK_EQ_INT(ssvd_planted(m, l, s, 3, M), 0);
    const double ratio = s[0] / s[k - 1];
    const char *what[3] = {"fault no level 2", "fault tau 1e-16", "fault no refinement"};
    for (int fault = 0; fault < 3; fault++) {
        defl_err e;
        const int st = run(m, l, k, M, s, fault == 1 ? 1e-16 : TN_DEFL_TAU,
                           fault == 0 ? 1 : TN_DEFL_LEVELS, fault != 2, &e);
        say(what[fault], m, l, k, ratio, &e);
        /* the bounds of a deflated run (u = eps s_1 / s_k), and the target */
        CHECK_MSG(st != TCNLA_SUCCESS || !(e.sv <= 1.0 * unit(ratio, 2)) ||
                      !(e.orth <= ORTH_BOUND * unit(ratio, 2)) || !(e.sv <= SV_TARGET),
                  "%s went unnoticed", what[fault]);
    }
    free(s), free(M);
}

/* Bad arguments: their status, nothing written; NaN / Inf:
 * TCNLA_ERR_NUMERICAL; the zero matrix and l = 1: exact. */
TEST(deflated_svd_ref_bad_input) {
    double M[4] = {3.0, 0.0, 0.0, -4.0}, U[4] = {9, 9, 9, 9}, V[4] = {9, 9, 9, 9}, s[2] = {9, 9};
    const double T = TN_DEFL_TAU;
    const int L = TN_DEFL_LEVELS;
    CHECK_EQ_INT(tn_defl_svd_ref(0, 1, 1, M, 1, T, L, 1, U, s, V, NULL), -1);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 3, 1, M, 2, T, L, 1, U, s, V, NULL), -2);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 0, 1, M, 2, T, L, 1, U, s, V, NULL), -2);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 0, M, 2, T, L, 1, U, s, V, NULL), -3);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 3, M, 2, T, L, 1, U, s, V, NULL), -3);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, NULL, 2, T, L, 1, U, s, V, NULL), -4);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 1, T, L, 1, U, s, V, NULL), -5);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, 0.0, L, 1, U, s, V, NULL), -6);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, NAN, L, 1, U, s, V, NULL), -6);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, 0, 1, U, s, V, NULL), -7);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L + 1, 1, U, s, V, NULL), -7);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 2, U, s, V, NULL), -8);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 1, NULL, s, V, NULL), -9);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 1, U, NULL, V, NULL), -10);
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 1, U, s, NULL, NULL), -11);
    CHECK(U[0] == 9 && V[0] == 9 && s[0] == 9);
    /* diag(3, -4): s = (4, 3), v_1 = +-e_2, u_1 = M v_1 / 4 */
    tn_defl_info_t info;
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 1, U, s, V, &info), TCNLA_SUCCESS);
    CHECK(s[0] == 4.0 && s[1] == 3.0 && fabs(V[1]) == 1.0 && U[1] == -V[1] && info.levels == 1);
    double one = -2.5, u1 = 0, v1 = 0, s1 = 0;
    CHECK_EQ_INT(tn_defl_svd_ref(1, 1, 1, &one, 1, T, L, 1, &u1, &s1, &v1, NULL), TCNLA_SUCCESS);
    CHECK(s1 == 2.5 && u1 == -v1 && fabs(v1) == 1.0);
    double Z[9] = {0}, Uz[9], Vz[9], sz[3];
    CHECK_EQ_INT(tn_defl_svd_ref(3, 3, 3, Z, 3, T, L, 1, Uz, sz, Vz, &info), TCNLA_SUCCESS);
    CHECK(sz[0] == 0.0 && sz[2] == 0.0 && Uz[0] == 0.0 && info.levels == 1);
    M[1] = NAN;
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 1, U, s, V, NULL), TCNLA_ERR_NUMERICAL);
    M[1] = INFINITY;
    CHECK_EQ_INT(tn_defl_svd_ref(2, 2, 2, M, 2, T, L, 1, U, s, V, NULL), TCNLA_ERR_NUMERICAL);
}
