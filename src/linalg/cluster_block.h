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
 * (no block). */
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

#endif
