/* The C reference of the small SVD's one-sided Jacobi path (tn_jsvd_ref,
 * src/linalg/jacobi_svd.h), which the GPU kernel is tested against
 * (src/backend/cuda/test_gpu_randnla.c): on column-graded R (the
 * randomized SVD's l x l factor, tests/small_svd_mat.h) with s_k down to
 * 1e-7 s_1, l = 64..300, the k leading singular values to relative 1e-6 of
 * LAPACK's dgesvj (the path's target), in fact to a small multiple of what
 * it achieves, and the vectors with residuals |M v_j - s_j u_j| / s_j and
 * orthogonality of that order; the same with a planted fault (a negated
 * rotation angle, a missing convergence test) must fail these checks; bad
 * arguments get their status. */
#include "tcnla.h"
#include "test.h"
#include "small_svd_mat.h"

#include "../src/linalg/jacobi_svd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TN_NOT_TAKEN 1 /* src/core/backend.h */

/* The path's target: relative 1e-6 on s_1..s_k. What the reference
 * achieves on these matrices (l = 64..300, s_k / s_1 = 1e-8..4e-8, and a
 * Gaussian R; TCNLA_TEST_VERBOSE=1 prints it), in units of l 2^-52:
 * relative error of the values 0.2-2.1, residual |M v_j - s_j u_j| / s_j
 * 0.03-0.3, orthogonality of U and V 1.0-4.2; bound on each: 8 l 2^-52. */
#define SV_BOUND 1e-6
#define TIGHT(l) (8.0 * (l) * 0x1p-52)

static int verbose(void) {
    const char *v = getenv("TCNLA_TEST_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

/* Runs the reference on M (X0: preconditioner or NULL); *e its errors
 * against dgesvj's values sx. Returns its status. */
static int run_ref(int l, int k, const double *M, const double *X0, const double *sx, int fault,
                   ssvd_err *e, int *sweeps) {
    double *U = malloc(sizeof(double) * (2 * (size_t)l * k + k));
    if (!U) return TCNLA_ERR_ALLOC;
    double *V = U + (size_t)l * k, *s = V + (size_t)l * k;
    const int st = tn_jsvd_ref(l, k, M, X0, U, s, V, sweeps, fault);
    if (st == TCNLA_SUCCESS) ssvd_check(l, k, M, U, s, V, sx, e);
    free(U);
    return st;
}

static int bounds_hold(int l, const ssvd_err *e) {
    return e->sv <= TIGHT(l) && e->res <= TIGHT(l) && e->orth <= TIGHT(l);
}

TEST(small_svd_jacobi_ref_graded) {
    const int ls[] = {64, 130, 266, 300};
    for (int t = 0; t < 4; t++) {
        const int l = ls[t], k = l - 10;
        for (int pre = 0; pre < 2; pre++) {
            double *M = malloc(sizeof(double) * (2 * (size_t)l * l + l));
            REQUIRE(M);
            double *X = M + (size_t)l * l, *sx = X + (size_t)l * l;
            CHECK_EQ_INT(ssvd_graded(l, k, 7.0, l, 11 + t, M), 0);
            CHECK_EQ_INT(ssvd_exact(l, M, sx), 0);
            if (pre) CHECK_EQ_INT(ssvd_gram_vectors(l, M, X), 0);
            CHECK(sx[k - 1] < 1e-6 * sx[0]);
            ssvd_err e = {0};
            int sw = 0;
            const int st = run_ref(l, k, M, pre ? X : NULL, sx, 0, &e, &sw);
            CHECK_EQ_INT(st, TCNLA_SUCCESS);
            if (verbose())
                printf("  l %d k %d s_k/s_1 %.1e pre %d: sweeps %d, in l eps: sv %.2f res %.2f "
                       "orth %.2f\n", l, k, sx[k - 1] / sx[0], pre, sw, e.sv / (l * 0x1p-52),
                       e.res / (l * 0x1p-52), e.orth / (l * 0x1p-52));
            CHECK_MSG(e.sv <= SV_BOUND, "l %d pre %d: relative error %.3g > %.0e", l, pre, e.sv,
                      SV_BOUND);
            CHECK_MSG(bounds_hold(l, &e), "l %d pre %d: sv %.3g res %.3g orth %.3g", l, pre, e.sv,
                      e.res, e.orth);
            free(M);
        }
    }
}

/* Exactly low rank (R's columns from `rank` on zero), k = rank; and
 * without grading (decades 0: a Gaussian R, the most sweeps). */
TEST(small_svd_jacobi_ref_low_rank_and_flat) {
    const int l = 200;
    const int ks[2] = {150, 190}, ranks[2] = {150, 200};
    const double dec[2] = {7.0, 0.0};
    for (int t = 0; t < 2; t++) {
        double *M = malloc(sizeof(double) * ((size_t)l * l + l));
        REQUIRE(M);
        double *sx = M + (size_t)l * l;
        CHECK_EQ_INT(ssvd_graded(l, ks[t], dec[t], ranks[t], 5 + t, M), 0);
        CHECK_EQ_INT(ssvd_exact(l, M, sx), 0);
        ssvd_err e = {0};
        int sw = 0;
        CHECK_EQ_INT(run_ref(l, ks[t], M, NULL, sx, 0, &e, &sw), TCNLA_SUCCESS);
        if (verbose())
            printf("  l %d k %d rank %d decades %.0f: sweeps %d, in l eps: sv %.2f res %.2f "
                   "orth %.2f\n", l, ks[t], ranks[t], dec[t], sw, e.sv / (l * 0x1p-52),
                   e.res / (l * 0x1p-52), e.orth / (l * 0x1p-52));
        CHECK_MSG(e.sv <= SV_BOUND && bounds_hold(l, &e), "t %d: sv %.3g res %.3g orth %.3g", t,
                  e.sv, e.res, e.orth);
        free(M);
    }
}

/* The checks above catch a planted fault: every rotation angle negated
 * (no convergence: TN_NOT_TAKEN, or wrong triplets), or the convergence
 * test skipped (one sweep: wrong values). */
TEST(small_svd_jacobi_ref_planted_faults_fail) {
    const int l = 130, k = 120;
    double *M = malloc(sizeof(double) * ((size_t)l * l + l));
    REQUIRE(M);
    double *sx = M + (size_t)l * l;
    CHECK_EQ_INT(ssvd_graded(l, k, 7.0, l, 3, M), 0);
    CHECK_EQ_INT(ssvd_exact(l, M, sx), 0);
    for (int fault = 1; fault <= 2; fault++) {
        ssvd_err e = {0};
        int sw = 0;
        const int st = run_ref(l, k, M, NULL, sx, fault, &e, &sw);
        if (verbose())
            printf("  fault %d: status %d sweeps %d sv %.2e res %.2e orth %.2e\n", fault, st, sw,
                   e.sv, e.res, e.orth);
        CHECK_MSG(st != TCNLA_SUCCESS || !(e.sv <= SV_BOUND) || !bounds_hold(l, &e),
                  "fault %d went unnoticed", fault);
    }
    free(M);
}

/* Bad arguments: their status, nothing written; NaN: TCNLA_ERR_NUMERICAL;
 * l = 1 and the zero matrix: exact. */
TEST(small_svd_jacobi_ref_bad_input) {
    double M[4] = {3.0, 0.0, 0.0, -4.0}, U[4] = {9, 9, 9, 9}, V[4] = {9, 9, 9, 9}, s[2] = {9, 9};
    int sw = -1;
    CHECK_EQ_INT(tn_jsvd_ref(0, 1, M, NULL, U, s, V, &sw, 0), -1);
    CHECK_EQ_INT(tn_jsvd_ref(TN_JSVD_MAXL + 1, 1, M, NULL, U, s, V, &sw, 0), -1);
    CHECK_EQ_INT(tn_jsvd_ref(2, 0, M, NULL, U, s, V, &sw, 0), -2);
    CHECK_EQ_INT(tn_jsvd_ref(2, 3, M, NULL, U, s, V, &sw, 0), -2);
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, NULL, NULL, U, s, V, &sw, 0), -3);
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, M, NULL, NULL, s, V, &sw, 0), -5);
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, M, NULL, U, NULL, V, &sw, 0), -6);
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, M, NULL, U, s, NULL, &sw, 0), -7);
    CHECK(U[0] == 9 && V[0] == 9 && s[0] == 9 && sw == -1);
    /* diag(3, -4): s = (4, 3), u_1 = -e_2 (u_j = y_j / s_j), v_1 = e_2 */
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, M, NULL, U, s, V, &sw, 0), TCNLA_SUCCESS);
    CHECK(s[0] == 4.0 && s[1] == 3.0 && U[1] == -1.0 && V[1] == 1.0 && U[2] == 1.0);
    double one = -2.5, u1 = 0, v1 = 0, s1 = 0;
    CHECK_EQ_INT(tn_jsvd_ref(1, 1, &one, NULL, &u1, &s1, &v1, &sw, 0), TCNLA_SUCCESS);
    CHECK(s1 == 2.5 && u1 == -1.0 && v1 == 1.0);
    double Z[9] = {0}, Uz[9], Vz[9], sz[3];
    CHECK_EQ_INT(tn_jsvd_ref(3, 3, Z, NULL, Uz, sz, Vz, &sw, 0), TCNLA_SUCCESS);
    CHECK(sz[0] == 0.0 && sz[2] == 0.0 && Uz[0] == 0.0);
    M[1] = NAN;
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, M, NULL, U, s, V, &sw, 0), TCNLA_ERR_NUMERICAL);
    M[1] = INFINITY;
    CHECK_EQ_INT(tn_jsvd_ref(2, 2, M, NULL, U, s, V, &sw, 0), TCNLA_ERR_NUMERICAL);
}
