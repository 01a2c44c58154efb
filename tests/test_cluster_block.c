/* The rule of the fast eigensolver's repair of clustered vectors
 * (tn_cluster_block, src/linalg/cluster_block.h): which block of columns
 * it recomputes from the pairs that are not orthogonal (reach at the
 * clusters' tolerance, reach2 beyond the orthogonality check's) and the
 * eigenvalues. Clusters near zero (a rank-deficient Gram matrix, values
 * decaying through FP64's resolution) merge into one block with every
 * column between them; a cluster away from zero (equal values, a flat
 * top), a NaN or descending values give none; the block is cut to the
 * values below the exemption xr only where every refused pair lies there,
 * and says whether it lies below it. */
#include "test.h"

#include "../src/linalg/cluster_block.h"

#include <math.h>

#define CAP 1e-6 /* small_svd_cuda.c's REPAIR_CAP */

/* reach / reach2 with no pairs, then the pairs (j, i) set: reach[j] = i */
static void no_pairs(int n, int *r) {
    for (int j = 0; j < n; j++) r[j] = j;
}

TEST(cluster_block_none_without_clusters) {
    const double lam[5] = {1e-3, 1e-2, 0.1, 0.5, 1.0};
    int r[5], r2[5], ra = -7, rb = -7, below = -7;
    no_pairs(5, r), no_pairs(5, r2);
    CHECK_EQ_INT(tn_cluster_block(5, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 0);
    CHECK_EQ_INT(ra, -7); /* (nothing written) */
}

TEST(cluster_block_near_zero_merges_and_spans_only_below_xr) {
    /* two clusters near zero, {0, 1} and {3, 4}, column 2 between them */
    const double lam[7] = {1e-17, 2e-17, 5e-13, 1e-11, 2e-11, 0.3, 1.0};
    int r[7], r2[7], ra = -1, rb = -1, below = -1;
    no_pairs(7, r), no_pairs(7, r2);
    r[0] = 1, r[3] = 4;
    r2[0] = 1;
    CHECK_EQ_INT(tn_cluster_block(7, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 1);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 4);
    CHECK_EQ_INT(below, 1);
    /* xr = 0: every column an eigenvector, the same block for Rayleigh-Ritz */
    CHECK_EQ_INT(tn_cluster_block(7, r, r2, lam, 0.0, CAP, &ra, &rb, &below), 1);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 4);
    CHECK_EQ_INT(below, 0);
    /* values on both sides of zero (a Gram matrix's rounding) */
    const double lz[4] = {-3e-17, 1e-17, 0.5, 1.0};
    int q[4], q2[4];
    no_pairs(4, q), no_pairs(4, q2);
    q[0] = 1, q2[0] = 1;
    CHECK_EQ_INT(tn_cluster_block(4, q, q2, lz, 1e-9, CAP, &ra, &rb, &below), 1);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 1);
    CHECK_EQ_INT(below, 1);
}

TEST(cluster_block_refuses_clusters_away_from_zero) {
    /* equal values at 0.5 (a flat top), with or without a cluster near zero */
    const double lam[6] = {1e-17, 2e-17, 0.1, 0.5, 0.5 + 1e-12, 1.0};
    int r[6], r2[6], ra = -1, rb = -1, below = -1;
    no_pairs(6, r), no_pairs(6, r2);
    r[3] = 4, r2[3] = 4;
    CHECK_EQ_INT(tn_cluster_block(6, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 0);
    r[0] = 1;
    CHECK_EQ_INT(tn_cluster_block(6, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 0);
    /* a cluster just above the cap (1e-6 ||T||) is away from zero */
    const double lc[4] = {1e-17, 2e-6, 2.0000001e-6, 1.0};
    int q[4], q2[4];
    no_pairs(4, q), no_pairs(4, q2);
    q[1] = 2;
    CHECK_EQ_INT(tn_cluster_block(4, q, q2, lc, 1e-9, CAP, &ra, &rb, &below), 0);
    q[1] = 1, q[0] = 1; /* (the one below the cap instead) */
    const double ld[4] = {1e-17, 2e-17, 2e-6, 1.0};
    CHECK_EQ_INT(tn_cluster_block(4, q, q2, ld, 1e-9, CAP, &ra, &rb, &below), 1);
}

TEST(cluster_block_cut_to_the_exempt_values_only_where_the_refused_pairs_are) {
    /* a chain of pairs beyond the clusters' tolerance from 0 up to column 5
     * (values to 1e-7, above xr = 1e-9); the refused pairs among 0 .. 2 */
    const double lam[7] = {1e-16, 1e-14, 1e-12, 1e-10, 1e-8, 1e-7, 1.0};
    int r[7], r2[7], ra = -1, rb = -1, below = -1;
    no_pairs(7, r), no_pairs(7, r2);
    for (int j = 0; j < 5; j++) r[j] = j + 1;
    r2[0] = 2;
    CHECK_EQ_INT(tn_cluster_block(7, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 1);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 3); /* the values below 1e-9 */
    CHECK_EQ_INT(below, 1);
    /* a refused pair reaching above xr: the whole block, with Rayleigh-Ritz */
    r2[3] = 4;
    CHECK_EQ_INT(tn_cluster_block(7, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 1);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 5);
    CHECK_EQ_INT(below, 0);
    /* no exemption: no cut */
    r2[3] = 3;
    CHECK_EQ_INT(tn_cluster_block(7, r, r2, lam, 0.0, CAP, &ra, &rb, &below), 1);
    CHECK_EQ_INT(rb, 5);
    CHECK_EQ_INT(below, 0);
}

TEST(cluster_block_refuses_non_finite_or_descending_values) {
    double lam[4] = {1e-17, 2e-17, 0.5, 1.0};
    int r[4], r2[4], ra = -1, rb = -1, below = -1;
    no_pairs(4, r), no_pairs(4, r2);
    r[0] = 1;
    CHECK_EQ_INT(tn_cluster_block(4, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 1);
    lam[2] = NAN;
    CHECK_EQ_INT(tn_cluster_block(4, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 0);
    lam[2] = INFINITY;
    CHECK_EQ_INT(tn_cluster_block(4, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 0);
    lam[2] = 1.5; /* above lam[3] */
    CHECK_EQ_INT(tn_cluster_block(4, r, r2, lam, 1e-9, CAP, &ra, &rb, &below), 0);
}
