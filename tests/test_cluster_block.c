/* The rule of the fast eigensolver's repair of clustered vectors
 * (tn_cluster_block, src/linalg/cluster_block.h): which block of columns
 * it recomputes from the pairs that are not orthogonal (reach at the
 * clusters' tolerance, reach2 beyond the orthogonality check's) and the
 * eigenvalues. Clusters near zero (a rank-deficient Gram matrix, values
 * decaying through FP64's resolution) merge into one block with every
 * column between them; a cluster away from zero (equal values, a flat
 * top), a NaN or descending values give none; the block is cut to the
 * values below the exemption xr only where every refused pair lies there,
 * and says whether it lies below it. tn_cluster_groups: clusters away from
 * zero (and none near it) as groups with their filters and shifts. */
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

/* tn_cluster_groups: clusters away from zero, one group each (widened by
 * neighbours within the cap, overlapping ones merged), each with its
 * filter centre, the filter passes that bring the other groups' share
 * below 1e-16, and the Rayleigh-Ritz shift just below its values. */
TEST(cluster_groups_away_from_zero) {
    tn_cluster_group_t g[TN_CLUSTER_MAXG];
    /* a flat top alone: one group, no filter, the shift 1e-12 below it */
    const double lam[6] = {1e-17, 2e-17, 0.1, 0.5, 0.5 + 1e-12, 1.0};
    int r[6];
    no_pairs(6, r);
    r[3] = 4;
    CHECK_EQ_INT(tn_cluster_groups(6, r, lam, CAP, g), 1);
    CHECK_EQ_INT(g[0].a, 3);
    CHECK_EQ_INT(g[0].b, 4);
    CHECK_EQ_INT(g[0].passes, 0);
    CHECK(g[0].shift < lam[3] && lam[3] - g[0].shift >= 0.999e-12 && lam[3] - g[0].shift <= 2e-12);
    CHECK(fabs(g[0].centre - (0.5 + 0.5e-12)) <= 1e-15);
    /* with a cluster near zero as well: none (tn_cluster_block's case, or syevd) */
    r[0] = 1;
    CHECK_EQ_INT(tn_cluster_groups(6, r, lam, CAP, g), 0);
    /* two halves at 1e-4 and 1, each spread: two groups, two passes each */
    const double lt[6] = {1e-4, 1e-4 + 1e-13, 0.3, 1.0 - 1e-9, 1.0, 1.0 + 1e-9};
    int p[6];
    no_pairs(6, p);
    p[0] = 1, p[3] = 5;
    CHECK_EQ_INT(tn_cluster_groups(6, p, lt, CAP, g), 2);
    CHECK_EQ_INT(g[0].a, 0);
    CHECK_EQ_INT(g[0].b, 1);
    CHECK_EQ_INT(g[1].a, 3);
    CHECK_EQ_INT(g[1].b, 5);
    CHECK_EQ_INT(g[0].passes, 2); /* (1e-9 / 1 per pass) */
    CHECK_EQ_INT(g[1].passes, 2); /* (5e-14 / 1 per pass) */
    CHECK(g[0].shift < lt[0] && g[1].shift < lt[3] && g[1].shift > lt[2]);
    /* neighbours within the cap widen a group; two clusters so joined merge */
    const double lw[7] = {0.1, 0.5, 0.5 + 4e-7, 0.5 + 8e-7, 0.5 + 1.2e-6, 0.5 + 1.6e-6, 1.0};
    int q[7];
    no_pairs(7, q);
    q[1] = 2, q[4] = 5;
    CHECK_EQ_INT(tn_cluster_groups(7, q, lw, CAP, g), 1);
    CHECK_EQ_INT(g[0].a, 1);
    CHECK_EQ_INT(g[0].b, 5);
    const double lb[5] = {0.1, 0.5 - 5e-7, 0.5, 0.5 + 1e-12, 1.0}; /* (a neighbour below) */
    no_pairs(5, q);
    q[2] = 3;
    CHECK_EQ_INT(tn_cluster_groups(5, q, lb, CAP, g), 1);
    CHECK_EQ_INT(g[0].a, 1);
    CHECK_EQ_INT(g[0].b, 3);
    /* a group wider than 1e-4 max|lam| through such neighbours: none */
    double chain[300];
    int c[300];
    no_pairs(300, c);
    c[10] = 11;
    for (int i = 0; i < 300; i++) chain[i] = i < 299 ? 0.5 + 9e-7 * i : 1.0;
    CHECK_EQ_INT(tn_cluster_groups(300, c, chain, CAP, g), 0);
    /* groups too close for the filter (half-width over distance above
     * 1e-2), or needing more than TN_CLUSTER_PASSES passes (1e-3 a pass: 6) */
    const double lc[5] = {0.5, 0.5 + 2e-5, 0.5 + 5e-4, 0.5 + 5e-4 + 1e-12, 1.0};
    int e[5];
    no_pairs(5, e);
    e[0] = 1, e[2] = 3;
    CHECK_EQ_INT(tn_cluster_groups(5, e, lc, CAP, g), 0);
    const double lp[5] = {0.5, 0.5 + 2e-6, 0.5 + 1e-3, 0.5 + 1e-3 + 1e-12, 1.0};
    CHECK_EQ_INT(tn_cluster_groups(5, e, lp, CAP, g), 0);
    /* five groups (one more than TN_CLUSTER_MAXG): none; four: four */
    double l5[10];
    int f[10];
    no_pairs(10, f);
    for (int i = 0; i < 10; i++) l5[i] = 0.1 * (1 + i / 2) + 1e-13 * (i % 2);
    for (int i = 0; i < 10; i += 2) f[i] = i + 1;
    CHECK_EQ_INT(tn_cluster_groups(10, f, l5, CAP, g), 0);
    CHECK_EQ_INT(tn_cluster_groups(8, f, l5, CAP, g), 4);
    /* no cluster, a NaN, descending values: none */
    no_pairs(6, r);
    CHECK_EQ_INT(tn_cluster_groups(6, r, lam, CAP, g), 0);
    double ln[4] = {0.25, 0.5, 0.5, 1.0};
    int t[4];
    no_pairs(4, t);
    t[1] = 2;
    CHECK_EQ_INT(tn_cluster_groups(4, t, ln, CAP, g), 1);
    ln[3] = NAN;
    CHECK_EQ_INT(tn_cluster_groups(4, t, ln, CAP, g), 0);
    ln[3] = 0.4;
    CHECK_EQ_INT(tn_cluster_groups(4, t, ln, CAP, g), 0);
}
