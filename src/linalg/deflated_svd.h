/* The small SVD by deflated Gram eigensolutions ("multi-level eigen"):
 * the leading k singular triplets of an m x l matrix M (m >= l; the
 * randomized SVD's R^T, l x l, or its W = A^T Q, n x l) from symmetric
 * eigensolutions in FP64 only, accurate where one eigensolution of M^T M
 * is not (s_k < 1e-4 s_1). The C reference tn_defl_svd_ref is in
 * src/linalg/deflated_svd.c, the GPU path (the same algorithm, the level
 * rule of this header) in src/backend/cuda/small_svd_cuda.c.
 *
 * Level 1: G = M^T M = X diag(lam) X^T (lam ascending). Level j + 1 on the
 * b columns X_b of X not taken yet (the smallest values): Y_b = M X_b,
 * G_b = Y_b^T Y_b = Z diag(mu) Z^T, X_b <- X_b Z, lam_b <- mu. A level takes
 * its values mu_i >= TN_DEFL_TAU mu_top (mu_top its largest); all of them
 * where it is the last one (TN_DEFL_LEVELS) or mu_top <= TN_DEFL_FLOOR
 * lam_1. The levels stop once k values are taken. Then s = sqrt(lam) of the
 * taken columns, merged into descending order (each level's come out
 * sorted, and a level's values lie below the previous one's up to
 * rounding), V = those columns of X, U = M V diag(1 / s) (0 where s = 0).
 *
 * Error argument (eps = 2^-53, FP64; c a modest factor, at most about l):
 *  - Level 1: G and its eigensolution are backward stable, G + E with
 *    |E| <= c eps lam_1, so a taken value errs by c eps lam_1, relatively
 *    c eps lam_1 / lam_i <= c eps / TN_DEFL_TAU (about 1e-8 for s_i;
 *    the Gram path's threshold), and the columns X_b span the trailing
 *    invariant subspace up to coupling X_t^T G X_b = -X_t^T E X_b, of size
 *    c eps lam_1.
 *  - Level 2: the eigenvalues of X_b^T G X_b are those of G restricted to
 *    span(X_b); the coupling above moves them by at most |C|^2 / gap
 *    (second order) or |C| = c eps lam_1 where a taken and an untaken value
 *    meet at the boundary (there relatively c eps / tau, as level 1).
 *    Y_b = M X_b is formed directly from M (not from G), with an error of
 *    c eps s_1 in each column, so the singular values of Y_b, sqrt(mu),
 *    err by c eps s_1: relatively c eps s_1 / s_i, 2e-9 c at s_i = 1e-7 s_1
 *    (not level 1's square (s_1 / s_i)^2). G_b = Y_b^T Y_b squares only
 *    level 2's own span: taking mu_i >= tau mu_top keeps that part at c eps /
 *    tau too. So each taken value errs relatively by about
 *    c eps (1 / tau + s_1 / s_i): 1e-8 or less down to s_i = 1e-7 s_1,
 *    1e-7 at 1e-9 s_1. The same bound holds at deeper levels (Y from M
 *    again; its absolute error stays c eps s_1), which M's own rounding
 *    (|dM| ~ eps s_1 for an M held in FP64) makes the best possible for any
 *    method that starts from M unless M is graded.
 *  - V = X [.. Z ..] is a product of orthogonal matrices: orthonormal to
 *    c eps. U = M V / s: see below.
 *  - TN_DEFL_FLOOR: below s = 1e-12 s_1 a further level gains nothing (the
 *    absolute error c eps s_1 is the value's size), so that level takes
 *    all its values.
 *  - U's orthogonality: level 1's vectors X_t are off the invariant
 *    subspace by about c eps lam_1 / lam_i, which in u_j = M v_j / s_j of a
 *    later level's v_j shows as u_i^T u_j ~ c eps lam_1 / (s_i s_j): the
 *    C reference measured 300-550 eps s_1 / s_k without the refinement
 *    below (1e-6 at s_k = 1e-7 s_1, 1e-4 at 1e-9 s_1).
 * Refinement (where a level past the first ran): H = Y^T Y for Y = M V =
 * U diag(s), formed from F = U^T U (H_ij = F_ij s_i s_j), has entries
 * accurate to about c eps s_1 s_i (Y's columns err by c eps s_1), far below
 * the coupling c eps lam_1 that level 1's eigensolver left, so the
 * first-order correction of H's eigenvectors, P_ij = H_ij / (H_jj - H_ii)
 * (i != j; 0 where |P_ij| > TN_DEFL_RHO: nearly equal values, whose
 * coupling costs nothing), V <- V (I + P), Y <- Y (I + P),
 * s_j' = sqrt(H_jj + sum_i H_ij P_ij) (the Ritz value to second order),
 * U = Y / s', removes it: measured (tests/test_deflated_svd.c) U and V
 * orthonormal to 0.5 eps s_1 / s_k or better (1e-12 at s_k = 1e-7 s_1,
 * 4e-8 at 1e-9 s_1), the values to 0.1 eps s_1 / s_k or better (graded R:
 * 7e-15), V orthonormal to working precision (P antisymmetric, |P| <=
 * rho). */
#ifndef TCNLA_DEFLATED_SVD_H
#define TCNLA_DEFLATED_SVD_H

#include <math.h>

#ifdef __CUDACC__
#define TN_DEFL_FN static __host__ __device__ __forceinline__
#else
#define TN_DEFL_FN static inline
#endif

#define TN_DEFL_TAU 1e-8    /* a level takes mu_i >= TN_DEFL_TAU mu_top (s_i >= 1e-4 s_top) */
#define TN_DEFL_LEVELS 4    /* the most levels; the last takes all its values */
#define TN_DEFL_FLOOR 1e-24 /* a level with mu_top <= FLOOR lam_1 takes all its values */
#define TN_DEFL_RHO 1e-6    /* the refinement's largest correction |P_ij| */

/* The refinement's P_ij from F_ij = u_i . u_j and s_i, s_j (i != j): H_ij /
 * (s_j^2 - s_i^2), H_ij = F_ij s_i s_j, 0 where larger than rho in size, the
 * gap is 0, or either is not finite. */
TN_DEFL_FN double tn_defl_p(double f, double si, double sj, double rho) {
    const double h = f * si * sj, g = sj * sj - si * si;
    return g != 0.0 && fabs(h) <= rho * fabs(g) ? h / g : 0.0;
}

/* The level rule: of a level's n values mu (ascending; lam1 level 1's
 * largest, last: no level after it), how many it takes (its largest
 * ones); -1 where one of them is NaN / Inf. */
#ifndef __CUDACC__
static inline int tn_defl_take(const double *mu, int n, double tau, double lam1, int last) {
    for (int i = 0; i < n; i++)
        if (!(mu[i] - mu[i] == 0.0)) return -1;
    const double top = mu[n - 1];
    if (last || !(top > TN_DEFL_FLOOR * lam1)) return n;
    int t = 0;
    while (t < n && mu[n - 1 - t] >= tau * top) t++;
    return t;
}

/* The merge: the taken columns l - ntaken .. l - 1 of a level-ordered
 * lam (l values, each level's ascending) in descending order of value
 * (ties by column, the larger first): perm[j] the column of the j-th. */
static inline void tn_defl_order(const double *lam, int l, int ntaken, int *perm) {
    for (int j = 0; j < ntaken; j++) perm[j] = l - 1 - j;
    for (int j = 1; j < ntaken; j++) { /* insertion sort: nearly sorted already */
        const int p = perm[j];
        int i = j;
        while (i > 0 && lam[perm[i - 1]] < lam[p]) {
            perm[i] = perm[i - 1];
            i--;
        }
        perm[i] = p;
    }
}

/* Per call: the levels run and the values each took. */
typedef struct {
    int levels;
    int taken[TN_DEFL_LEVELS];
} tn_defl_info_t;

/* The C reference (LAPACK dsyevd, BLAS): the k leading triplets of M (m x
 * l, ld ldm, m >= l) = U diag(s) V^T, U m x k (ld m), V l x k (ld l), s
 * descending, with the level rule above at tau (TN_DEFL_TAU in use) and at
 * most maxlev levels (1..TN_DEFL_LEVELS; 1: the plain Gram path), then,
 * where refine and a level past the first ran, the refinement. info may
 * be NULL. TCNLA_SUCCESS, TCNLA_ERR_NUMERICAL (NaN / Inf, or dsyevd
 * failed), TCNLA_ERR_ALLOC, or -i for the i-th argument out of range.
 * tn_defl_refine_ref: the refinement's matrices from F (k x k, ld k) and s
 * (descending), as the GPU's kernel makes them: Qv = diag(s) (I + P),
 * Qu = Qv diag(1 / s') (k x k each, ld k; 0 columns where s' = 0) and s'
 * at Qu + k^2 (k doubles): V' = (V / s) Qv, U' = U Qu. */
int tn_defl_svd_ref(int m, int l, int k, const double *M, int ldm, double tau, int maxlev,
                    int refine, double *U, double *s, double *V, tn_defl_info_t *info);
void tn_defl_refine_ref(int k, const double *F, const double *s, double rho, double *Qv,
                        double *Qu);
#endif /* __CUDACC__ */

#endif
