/* Child representations for groups of close eigenvalues of a symmetric
 * tridiagonal T = tridiag(e, d, e): one level of the representation tree of
 * MRRR [Dhillon & Parlett 2004; Dhillon, Parlett & Voemel 2006], for the
 * small eigensolver of src/backend/cuda/kernels/syev_kernels.cu (its
 * kernels call these functions; tests/test_mrrr_child.c runs them on the
 * CPU).
 *
 * The solver's twisted vectors of T - lam I are orthogonal to about
 * eps ||T|| / gap, so eigenvalues closer than about 1e-10 ||T|| (a flat
 * top of a spectrum, singular values equal to FP32's resolution) give
 * vectors that its check refuses. For a group of such values away from
 * zero, the factorization L D L^T = T - sig I, sig just outside the group
 * (the stationary recurrence from d and e), is exact for T with its
 * entries perturbed by a few ulps relative to them (where D does not grow),
 * so that its eigenvectors are those of a matrix within about
 * eps ||T|| of T: residuals of eps ||T||, and orthogonal to T's other
 * vectors to eps ||T|| / (the group's distance to them). Where its
 * elements do not grow (max |D_i| at most TN_MR_GROWTH times T's spread)
 * it determines its small eigenvalues, the group's lam - sig, to high
 * relative accuracy, and relative to those the group's gaps are large:
 * sig keeps a distance of the group's mean gap, so that the gaps are about
 * 1 / count of the values or more (1e-3 .. 1e-2 at 128 values). The
 * twisted factorizations of L D L^T - mu I, with mu refined by bisection
 * on the representation's own counts to relative accuracy, then give
 * vectors orthogonal to about n eps / relgap: 2e-13 .. 4e-13 on
 * gap_noise's groups of 128 values (tests/test_mrrr_child.c).
 *
 * Groups (tn_mr_groups): runs of ascending values whose neighbours are
 * closer than TN_MR_GTOL max|lam|, every value at least TN_MR_CAP max|lam|
 * from zero (clusters near zero, a rank-deficient Gram matrix, are the
 * solver's repair's: there the values themselves are rounding noise).
 * A multiple eigenvalue of the matrix that T reduces comes out of the
 * reduction spread by about eps ||T||, which a child resolves
 * (gpu_syev_fast_matches_syevd's values repeated 100 times); where a
 * child's vectors fail the solver's check anyway, its repair takes them. */
#ifndef TCNLA_MRRR_CHILD_H
#define TCNLA_MRRR_CHILD_H

#include <float.h>
#include <math.h>

#ifdef __CUDACC__
#define TN_MR_FN static __host__ __device__ __forceinline__
/* the loops' loads run ahead of their dependent chains */
#define TN_MR_UNROLL _Pragma("unroll 8")
#else
#define TN_MR_FN static inline
#define TN_MR_UNROLL
#endif

#define TN_MR_GTOL 1e-8   /* neighbours closer than this times max|lam|: one group */
#define TN_MR_CAP 1e-6    /* a group reaching within this times max|lam| of zero: none */
#define TN_MR_GROWTH 64.0 /* the largest |D_i| a child may have, times T's spread */

/* 1 / x: on the device the hardware approximation and two Newton steps
 * (within an ulp or two, without the division's slow path), on the host
 * the division. */
TN_MR_FN double tn_mr_rcp(double x) {
#ifdef __CUDA_ARCH__
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    double e = fma(-x, r, 1.0);
    r = fma(r, e, r);
    e = fma(-x, r, 1.0);
    return fma(r, e, r);
#else
    return 1.0 / x;
#endif
}

/* The smallest pivot magnitude (pivots below it are replaced by
 * -pivmin), as the solver's twisted factorizations take it. */
TN_MR_FN double tn_mr_pivmin(int n, const double *e) {
    double emax = 0.0;
    for (int j = 0; j < n - 1; j++) emax = fmax(emax, e[j] * e[j]);
    return DBL_MIN * fmax(1.0, emax);
}

/* Whether the run [a, b] of lam (ascending, n values; neighbours closer
 * than TN_MR_GTOL max|lam|, maximal) is a group that gets a child: b > a,
 * every value TN_MR_CAP max|lam| or more from zero, on one side of it. */
TN_MR_FN int tn_mr_take(int n, const double *lam, int a, int b) {
    const double tn = fmax(fabs(lam[0]), fabs(lam[n - 1]));
    return b > a && fmin(fabs(lam[a]), fabs(lam[b])) >= TN_MR_CAP * tn &&
           (lam[a] > 0.0) == (lam[b] > 0.0);
}

/* The groups of lam (ascending, n values): the maximal runs [ga[g], gb[g]]
 * of neighbours closer than TN_MR_GTOL max|lam| that tn_mr_take takes
 * (ga, gb: n / 2 entries). Returns their number; 0 where a value is not
 * finite or they descend. (The GPU's kernel finds the run of each value
 * by reductions over the block, with the same rule.) */
TN_MR_FN int tn_mr_groups(int n, const double *lam, int *ga, int *gb) {
    for (int i = 0; i < n; i++)
        if (!isfinite(lam[i]) || (i > 0 && lam[i] < lam[i - 1])) return 0;
    if (n < 2) return 0;
    const double gtol = TN_MR_GTOL * fmax(fabs(lam[0]), fabs(lam[n - 1]));
    int ng = 0;
    for (int a = 0; a < n;) {
        int b = a;
        while (b + 1 < n && lam[b + 1] - lam[b] < gtol) b++;
        if (tn_mr_take(n, lam, a, b)) {
            ga[ng] = a;
            gb[ng] = b;
            ng++;
        }
        a = b + 1;
    }
    return ng;
}

/* L D L^T = T - sig I (D: n, L: n - 1) by the stationary recurrence,
 * pivots below pivmin replaced by -pivmin; returns max |D_i| (not finite
 * where it broke down). */
TN_MR_FN double tn_mr_ldl(int n, const double *d, const double *e, double sig, double pivmin,
                          double *D, double *L) {
    double dp = d[0] - sig, big = 0.0;
    TN_MR_UNROLL
    for (int i = 0; i < n - 1; i++) {
        if (fabs(dp) < pivmin) dp = -pivmin;
        D[i] = dp;
        big = fmax(big, fabs(dp));
        L[i] = e[i] * tn_mr_rcp(dp);
        dp = (d[i + 1] - sig) - L[i] * e[i];
    }
    if (fabs(dp) < pivmin) dp = -pivmin;
    D[n - 1] = dp;
    big = fmax(big, fabs(dp));
    return isfinite(dp) ? big : dp;
}

/* The child of the group [a, b] of lam (T's values, ascending): sig the
 * group's smallest value less delta, or (where that factorization grows
 * beyond TN_MR_GROWTH times T's spread) its largest plus delta, delta its
 * mean gap (at least 8 eps of its values); D and L as tn_mr_ldl writes
 * them. Returns sig, or NaN where both grow too much (no child). */
TN_MR_FN double tn_mr_child(int n, const double *d, const double *e, const double *lam, int a,
                            int b, double pivmin, double *D, double *L) {
    const double lo = lam[a], hi = lam[b];
    const double delta = fmax((hi - lo) / (double)(b - a), 8.0 * DBL_EPSILON * fmax(fabs(lo),
                                                                                      fabs(hi)));
    const double spread = fmax(lam[n - 1] - lam[0], DBL_MIN), lim = TN_MR_GROWTH * spread;
    for (int side = 0; side < 2; side++) {
        const double sig = side == 0 ? lo - delta : hi + delta;
        const double big = tn_mr_ldl(n, d, e, sig, pivmin, D, L);
        if (big <= lim) return sig;
    }
    return NAN;
}

/* 2^-e, e the exponent of max(|a|, |b|), clamped to a normal number:
 * the recurrences below rescale their pairs by it (exact). */
TN_MR_FN double tn_mr_pow2_inv(double a, double b) {
#ifdef __CUDA_ARCH__
    const int ex = __double2hiint(fmax(fabs(a), fabs(b))) >> 20;
    return __hiloint2double(min(max(2046 - ex, 1), 2046) << 20, 0);
#else
    int ex = 0;
    (void)frexp(fmax(fabs(a), fabs(b)), &ex);
    ex = ex < -1020 ? -1020 : ex > 1020 ? 1020 : ex;
    return ldexp(1.0, -ex);
#endif
}

/* The stationary qd transform L D L^T - mu I = L+ D+ L+^T (LAPACK's
 * dlaneg, dlar1v) without a division on its chain: with s_i = sn / sd,
 * D+_i = D_i + s_i = P / sd, P = D_i sd + sn, and s_{i+1} = s_i L_i^2 D_i
 * / D+_i - mu = (sn L_i^2 D_i - mu P) / P; so the pair (sn, sd) <- (sn
 * L_i^2 D_i - mu P, P), rescaled every 4 steps. The P are the leading
 * minors of L D L^T - mu I (times a power of two). Its roundings fall on
 * D_i, on L_i^2 D_i and on mu, a relative eps each: on mu that perturbs
 * the matrix by eps |mu|, relative to the eigenvalues near mu the counts
 * and vectors are asked about, as the division's rounding is. The
 * progressive transform from the bottom has the same form. */

/* The number of eigenvalues of L D L^T below mu: D+_j < 0, the sign
 * changes of consecutive minors. A zero minor counts as positive, which
 * gives one change across it (the next is -L_j^2 D_j^2 times the one
 * before), as a zero pivot taken as -pivmin does. */
TN_MR_FN int tn_mr_negcount(int n, const double *D, const double *L, double mu) {
    double sn = -mu, sd = 1.0;
    int c = 0;
    TN_MR_UNROLL
    for (int j = 0; j < n - 1; j++) {
        const double P = fma(D[j], sd, sn);
        c += (P < 0.0) != (sd < 0.0);
        sn = fma(sn, L[j] * L[j] * D[j], -mu * P);
        sd = P;
        if ((j & 3) == 3) {
            const double sc = tn_mr_pow2_inv(sn, sd);
            sn *= sc;
            sd *= sc;
        }
    }
    const double P = fma(D[n - 1], sd, sn);
    return c + ((P < 0.0) != (sd < 0.0));
}

/* The bracket of the eigenvalue k (ascending, of all n) of L D L^T near
 * c: [c - r, c + r], r widened fourfold until count(lo) <= k < count(hi)
 * (at most 24 times). Returns 1 with *lo, *hi set, or 0. */
TN_MR_FN int tn_mr_bracket(int n, const double *D, const double *L, int k, double c, double r,
                           double *lo, double *hi) {
    for (int t = 0; t < 24; t++, r *= 4.0) {
        const double a = c - r, b = c + r;
        if (tn_mr_negcount(n, D, L, a) <= k && tn_mr_negcount(n, D, L, b) > k) {
            *lo = a;
            *hi = b;
            return 1;
        }
    }
    return 0;
}

/* Whether the bracket [lo, hi] is as narrow as the refinement asks: 2 eps
 * of its ends' magnitude (relative accuracy), or no point between them. */
TN_MR_FN int tn_mr_narrow(double lo, double hi) {
    const double mid = 0.5 * (lo + hi);
    return !(hi - lo > 2.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi))) || mid <= lo || mid >= hi;
}

/* The eigenvalue k of L D L^T to relative accuracy from its bracket
 * (tn_mr_bracket), by halving (the CPU's form; the GPU's kernel cuts the
 * bracket into 129 pieces per round, to the same width). */
TN_MR_FN double tn_mr_refine(int n, const double *D, const double *L, int k, double lo,
                             double hi) {
    while (!tn_mr_narrow(lo, hi)) {
        const double mid = 0.5 * (lo + hi);
        if (tn_mr_negcount(n, D, L, mid) > k) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

/* The eigenvector of L D L^T for its eigenvalue mu from the twisted
 * factorization of L D L^T - mu I (LAPACK's dlar1v without its
 * refinements), in pieces that the GPU runs side by side: the stationary
 * transform from the top (L+ and s) and the progressive one from the
 * bottom (U- and p), both in the form of tn_mr_negcount (their divisions
 * off the chains, as reciprocals; pivots below pivmin taken as -pivmin),
 * the twist index r of least |gamma_r| = |s_r + p_r + mu| (ties: the
 * largest r), z_r = 1, z_i = -L+_i z_{i+1} above r and z_{i+1} = -U-_i z_i
 * below. Arrays of n, element i at [i * st]. */
#define TN_MR_PIVOT(P, den, pivmin)                                                            \
    (fabs(P) < (pivmin) * fabs(den) ? -(pivmin) * (den) : (P))

/* lp[i] = L+_i (i < n - 1), s[i] = s_i (i < n) */
TN_MR_FN void tn_mr_stationary(int n, const double *D, const double *L, double mu,
                               double pivmin, double *lp, double *s, long st) {
    double sn = -mu, sd = 1.0;
    TN_MR_UNROLL
    for (int i = 0; i < n - 1; i++) {
        const double ld = L[i] * D[i];
        const double P = TN_MR_PIVOT(fma(D[i], sd, sn), sd, pivmin); /* D+_i sd */
        s[i * st] = sn * tn_mr_rcp(sd);
        lp[i * st] = ld * (sd * tn_mr_rcp(P));
        sn = fma(sn, L[i] * ld, -mu * P);
        sd = P;
        if ((i & 3) == 3) {
            const double sc = tn_mr_pow2_inv(sn, sd);
            sn *= sc;
            sd *= sc;
        }
    }
    s[(long)(n - 1) * st] = sn * tn_mr_rcp(sd);
}

/* um[i] = U-_i (i < n - 1), p[i] = p_i (i < n): p = pn / pd, D-_{i+1} =
 * L_i^2 D_i + p_{i+1} = Q / pd, Q = L_i^2 D_i pd + pn, p_i = p_{i+1} D_i /
 * D-_{i+1} - mu = (pn D_i - mu Q) / Q, U-_i = L_i D_i / D-_{i+1} */
TN_MR_FN void tn_mr_progressive(int n, const double *D, const double *L, double mu,
                                double pivmin, double *um, double *p, long st) {
    double pn = D[n - 1] - mu, pd = 1.0;
    p[(long)(n - 1) * st] = pn;
    TN_MR_UNROLL
    for (int i = n - 2; i >= 0; i--) {
        const double ld = L[i] * D[i];
        const double Q = TN_MR_PIVOT(fma(L[i] * ld, pd, pn), pd, pivmin);
        um[i * st] = ld * (pd * tn_mr_rcp(Q));
        pn = fma(pn, D[i], -mu * Q);
        pd = Q;
        p[i * st] = pn * tn_mr_rcp(pd);
        if ((i & 3) == 0) {
            const double sc = tn_mr_pow2_inv(pn, pd);
            pn *= sc;
            pd *= sc;
        }
    }
}

/* Whether twist candidate (g, i) beats (gb, ib): smaller |gamma|, ties the
 * larger index */
TN_MR_FN int tn_mr_better(double g, int i, double gb, int ib) {
    return g < gb || (g == gb && i > ib);
}

/* z_i for i < r from z_r = 1 (z_i = -L+_i z_{i+1}); returns their sum of
 * squares */
TN_MR_FN double tn_mr_up(int r, const double *lp, long st, double *z) {
    double zi = 1.0, ss = 0.0;
    TN_MR_UNROLL
    for (int i = r - 1; i >= 0; i--) {
        zi = -lp[i * st] * zi;
        z[i] = zi;
        ss = fma(zi, zi, ss);
    }
    return ss;
}

/* z_i for i > r from z_r = 1 (z_{i+1} = -U-_i z_i); returns their sum of
 * squares */
TN_MR_FN double tn_mr_down(int n, int r, const double *um, long st, double *z) {
    double zi = 1.0, ss = 0.0;
    TN_MR_UNROLL
    for (int i = r; i < n - 1; i++) {
        zi = -um[i * st] * zi;
        z[i + 1] = zi;
        ss = fma(zi, zi, ss);
    }
    return ss;
}

/* The whole of it, serially (the CPU's form): z (n) normalized; scratch
 * lp, s, um, p (n each, stride st). */
TN_MR_FN void tn_mr_vector(int n, const double *D, const double *L, double mu, double pivmin,
                           double *lp, double *s, double *um, double *p, long st, double *z) {
    tn_mr_stationary(n, D, L, mu, pivmin, lp, s, st);
    tn_mr_progressive(n, D, L, mu, pivmin, um, p, st);
    double gb = INFINITY;
    int r = 0;
    for (int i = 0; i < n; i++) {
        const double g = fabs(s[i * st] + p[i * st] + mu);
        if (tn_mr_better(g, i, gb, r)) gb = g, r = i;
    }
    z[r] = 1.0;
    const double ss = 1.0 + tn_mr_up(r, lp, st, z) + tn_mr_down(n, r, um, st, z);
    const double sc = 1.0 / sqrt(ss);
    for (int i = 0; i < n; i++) z[i] *= sc;
}

#endif
