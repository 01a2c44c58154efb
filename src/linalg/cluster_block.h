/* The rule of the fast eigensolver's repair of clustered vectors
 * (eig_repair, src/backend/cuda/small_svd_cuda.c): from the pairs of
 * vectors that are not orthogonal and the eigenvalues, the block of columns
 * it recomputes, or none. Host code, tested on the CPU
 * (tests/test_cluster_block.c).
 *
 * Input, for n eigenvalues lam (ascending, as bisection gives them):
 * reach[j] the largest i > j whose vector's product with j's exceeds the
 * clusters' tolerance (else j), reach2[j] the same beyond the orthogonality
 * check's own tolerance (the pairs it refuses), xr the exemption (the
 * columns of values |lam| < xr max|lam| need only span their invariant
 * subspace; 0: none), cap (clusters within cap max|lam| of zero are
 * taken). A cluster is a run [a, b] closed under reach (i in it: reach[i]
 * in it too), b > a. The block [ra, rb] spans every cluster within cap of
 * zero (with every column between them: their values are as small); a
 * cluster away from zero, a non-finite or descending value, or no cluster
 * at all: no block. Where every pair that reach2 names lies among the
 * values below xr max|lam| (a contiguous run around zero), the block is cut
 * to those values, and *below = 1 (the block's values all below the
 * exemption: a basis of its subspace is enough); else *below says whether
 * the whole block lies below it. Returns 1 with *ra, *rb, *below set, or 0
 * (no block).
 *
 * tn_cluster_groups: where every cluster lies away from zero (equal values,
 * flat tops), the groups the repair recomputes one at a time: each
 * cluster widened by every neighbour within cap max|lam| of its ends,
 * overlapping ones merged, each group at most TN_CLUSTER_WIDTH max|lam|
 * wide and beyond cap max|lam| on one side of zero, at most
 * TN_CLUSTER_MAXG of them. Group g gets its centre c_g (the filter
 * (T - c_g I) that removes g's vectors from another group's start
 * vectors: by a factor of at most its half-width over the distance to
 * the other group's values, which must be 1e-2 or less), the number of
 * filter passes that bring every other group's share below 1e-16 (at most
 * TN_CLUSTER_PASSES) and the shift of its Rayleigh-Ritz step (its smallest
 * value less its width, at least 1e-12 max|lam|, not 0: the step's matrix
 * is then positive, and the values' differences, not their size, set its
 * accuracy). Returns the number of groups, or 0 (a cluster near zero,
 * none at all, a group too wide or too close to another, too many, a
 * non-finite or descending value). */
#ifndef TCNLA_CLUSTER_BLOCK_H
#define TCNLA_CLUSTER_BLOCK_H

#include <math.h>

static inline int tn_cluster_block(int n, const int *reach, const int *reach2, const double *lam,
                                   double xr, double cap, int *ra_out, int *rb_out,
                                   int *below) {
    double tnorm = 0.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(lam[i]) || (i > 0 && !(lam[i] >= lam[i - 1]))) return 0;
        tnorm = fmax(tnorm, fabs(lam[i]));
    }
    int ra = n, rb = -1;
    for (int a = 0, b; a < n; a = b + 1) {
        b = a;
        for (int i = a; i <= b; i++) b = reach[i] > b ? reach[i] : b;
        if (b == a) continue;
        if (!(fmax(fabs(lam[a]), fabs(lam[b])) <= cap * tnorm)) return 0; /* away from zero */
        ra = a < ra ? a : ra;
        rb = b;
    }
    if (rb < ra) return 0;
    const double xcut = xr * tnorm;
    int xa = n, xb = -1; /* the values below xcut: [xa, xb] */
    for (int i = 0; i < n; i++)
        if (fabs(lam[i]) < xcut) xa = i < xa ? i : xa, xb = i;
    int inside = xb >= xa;
    for (int j = 0; j < n && inside; j++)
        if (reach2[j] > j && (j < xa || reach2[j] > xb)) inside = 0;
    if (inside && ra <= xb && rb >= xa) {
        ra = ra > xa ? ra : xa;
        rb = rb < xb ? rb : xb;
    }
    *ra_out = ra, *rb_out = rb;
    *below = fmax(fabs(lam[ra]), fabs(lam[rb])) < xcut;
    return 1;
}

#define TN_CLUSTER_WIDTH 1e-4 /* the widest group, times max|lam| */
#define TN_CLUSTER_MAXG 4     /* groups at most */
#define TN_CLUSTER_PASSES 4   /* filter passes at most */

typedef struct {
    int a, b;      /* its columns */
    double centre; /* of its values: the filter T - centre I */
    double shift;  /* the Rayleigh-Ritz step's shift */
    int passes;    /* filter passes for its start vectors */
} tn_cluster_group_t;

static inline int tn_cluster_groups(int n, const int *reach, const double *lam, double cap,
                                    tn_cluster_group_t *g) {
    double tnorm = 0.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(lam[i]) || (i > 0 && !(lam[i] >= lam[i - 1]))) return 0;
        tnorm = fmax(tnorm, fabs(lam[i]));
    }
    const double near = cap * tnorm;
    int ng = 0;
    for (int a = 0, b; a < n; a = b + 1) {
        b = a;
        for (int i = a; i <= b; i++) b = reach[i] > b ? reach[i] : b;
        if (b == a) continue;
        if (fmax(fabs(lam[a]), fabs(lam[b])) <= near) return 0; /* near zero: not these */
        int ga = a, gb = b;
        while (ga > 0 && lam[ga] - lam[ga - 1] <= near) ga--;
        while (gb < n - 1 && lam[gb + 1] - lam[gb] <= near) gb++;
        if (ng > 0 && ga <= g[ng - 1].b) { /* overlaps the one before: merged */
            g[ng - 1].b = gb > g[ng - 1].b ? gb : g[ng - 1].b;
            continue;
        }
        if (ng == TN_CLUSTER_MAXG) return 0;
        g[ng].a = ga, g[ng].b = gb, ng++;
    }
    if (ng == 0) return 0;
    for (int q = 0; q < ng; q++) {
        const double lo = lam[g[q].a], hi = lam[g[q].b], w = hi - lo;
        if (!(w <= TN_CLUSTER_WIDTH * tnorm)) return 0;
        if (!(lo > near || hi < -near)) return 0; /* (not beyond the cap on one side) */
        g[q].centre = 0.5 * (lo + hi);
        g[q].shift = lo - fmax(w, 1e-12 * tnorm);
        if (g[q].shift == 0.0) return 0;
    }
    for (int q = 0; q < ng; q++) { /* q's start vectors filtered by every other group */
        int passes = 0;
        for (int h = 0; h < ng; h++) {
            if (h == q) continue;
            const double hw = 0.5 * (lam[g[h].b] - lam[g[h].a]) + 1e-16 * tnorm;
            const double dist =
                fmin(fabs(lam[g[q].a] - g[h].centre), fabs(lam[g[q].b] - g[h].centre));
            const double ratio = hw / dist;
            if (!(ratio <= 1e-2)) return 0;
            const int p = (int)ceil(16.0 / -log10(ratio));
            passes = p > passes ? p : passes;
        }
        if (passes > TN_CLUSTER_PASSES) return 0;
        g[q].passes = passes;
    }
    return ng;
}

#endif
