/* The block one-sided Jacobi SVD of the small SVD (l <= TN_JSVD_MAXL, FP64):
 * its parameters, its ordering and its rotation, shared by the C reference
 * (tn_jsvd_ref in src/linalg/small_svd.c) and the GPU kernel
 * (src/backend/cuda/kernels/jacobi_svd.cu), so that both run the same
 * algorithm. docs/design.md ("The small SVD's one-sided Jacobi path") says
 * why it is built this way.
 *
 * Y (l rows, TN_JSVD_W * nb columns, nb = tn_jsvd_nblocks(l), columns past
 * l zero) is rotated from the right until its columns are orthogonal, V
 * (same shape) accumulates the rotations: Y0 = Y V^T throughout. Columns
 * are taken in blocks of TN_JSVD_W; a sweep is nb - 1 steps, each step
 * pairs every block with another (round robin, tn_jsvd_pair), and each
 * pair of blocks (2W columns C) is handled alone:
 *   H = Y_C^T Y_C (2W x 2W): each entry four partial sums over the rows
 *   in order, p_g over the rows r with (r mod TN_JSVD_RC) / (TN_JSVD_RC /
 *   TN_JSVD_RG) = g, then (p_0 + p_1) + (p_2 + p_3) (the GPU's row groups);
 *   up to TN_JSVD_INNER sweeps of two-sided Jacobi on H (2W - 1 rounds of W
 *   disjoint rotations each, tn_jsvd_pair again), rotation (p, q) where
 *   h_pq^2 > tol^2 h_pp h_qq (tn_jsvd_needs), accumulated into Q (2W x 2W); an
 *   inner sweep without a rotation ends them;
 *   where some rotation was made: Y_C = Y_C Q, V_C = V_C Q.
 * The sweep that makes no rotation at all (every pair of columns
 * orthogonal to tol) ends the iteration: converged. */
#ifndef TCNLA_JACOBI_SVD_H
#define TCNLA_JACOBI_SVD_H

#include <math.h>

#define TN_JSVD_W 16       /* columns per block (a pair of blocks: 32) */
#define TN_JSVD_MAXL 1024  /* the largest l */
#define TN_JSVD_INNER 2    /* inner sweeps per pair of blocks, at most */
#define TN_JSVD_SWEEPS 40  /* outer sweeps before giving up (not converged) */
#define TN_JSVD_RC 32      /* rows a chunk, in the Gram product's order */
#define TN_JSVD_RG 4       /* partial sums of a Gram entry (row groups of a chunk) */

#ifdef __CUDACC__
#define TN_JSVD_FN static __host__ __device__ __forceinline__
#else
#define TN_JSVD_FN static inline
#endif

/* Blocks of W columns for l columns, rounded up to an even count (>= 2). */
TN_JSVD_FN int tn_jsvd_nblocks(int l) {
    int nb = (l + TN_JSVD_W - 1) / TN_JSVD_W;
    return nb < 2 ? 2 : nb + (nb & 1);
}

/* Round robin over n (even) players: in round r (0 .. n - 2), pair p (0 ..
 * n/2 - 1) is (*a, *b), a != b; the n - 1 rounds meet every pair once. */
TN_JSVD_FN void tn_jsvd_pair(int n, int r, int p, int *a, int *b) {
    const int m = n - 1;
    if (p == 0) {
        *a = r;
        *b = m;
    } else {
        *a = (r + p) % m;
        *b = (r - p + m) % m;
    }
}

/* The orthogonality threshold for l rows: |y_p . y_q| <= tol |y_p| |y_q|
 * counts as orthogonal (the rounding error of a dot product of l terms). */
TN_JSVD_FN double tn_jsvd_tol(int l) { return (double)(l < 16 ? 16 : l) * 2.220446049250313e-16; }

/* Whether columns with Gram entries a = |y_p|^2, b = |y_q|^2, c = y_p . y_q
 * need a rotation: |c| > tol sqrt(a b), tested squared, c^2 > tol^2 a b
 * (NaN: no), so that no square root is on the path of a round (the entries
 * of Gram matrices of FP32 data, at most l 2^256, cannot overflow). */
TN_JSVD_FN int tn_jsvd_needs(double a, double b, double c, double tol) {
    return c * c > (tol * tol) * (a * b);
}

/* 1 / sqrt(x): the GPU's rsqrt (within an ulp), 1.0 / sqrt(x) on the host. */
TN_JSVD_FN double tn_jsvd_rsqrt(double x) {
#ifdef __CUDA_ARCH__
    return rsqrt(x);
#else
    return 1.0 / sqrt(x);
#endif
}

/* The rotation that makes the columns p, q of a Gram matrix
 * [[a, c], [c, b]] orthogonal: [y_p y_q] <- [cs y_p - sn y_q, sn y_p + cs y_q]
 * gives a' = a - t c, b' = b + t c, c' = 0 (t = sn / cs, |t| <= 1). With
 * d = b - a and the angle 2 theta of cos = |d| / r, r = sqrt(d^2 + 4 c^2):
 * y = 1 / r, u = cs^2 = (1 + |d| y) / 2, z = 1 / sqrt(u); cs = u z,
 * sn = sign(d) c y z, t = sign(d) c y z^2 (= sign(d) 2c / (|d| + r), the
 * smaller root of t^2 + (d / c) t - 1 = 0; sign(0) = 1): two reciprocal
 * square roots and no division on the path of a round. Returns 0 (nothing
 * to do, *cs = 1, *sn = 0) where !tn_jsvd_needs; `flip` (tests only: a
 * planted fault) negates the angle. */
TN_JSVD_FN int tn_jsvd_rot(double a, double b, double c, double tol, int flip, double *cs,
                           double *sn, double *t) {
    *cs = 1.0, *sn = 0.0, *t = 0.0;
    if (!tn_jsvd_needs(a, b, c, tol)) return 0;
    const double d = b - a, y = tn_jsvd_rsqrt(d * d + 4.0 * (c * c));
    const double u = 0.5 * (1.0 + fabs(d) * y), z = tn_jsvd_rsqrt(u);
    const double sc = (d < 0.0) != (flip != 0) ? -c : c; /* sign(d) c, negated by flip */
    *cs = u * z;
    *sn = sc * y * z;
    *t = sc * y * (z * z);
    return 1;
}

#ifndef __CUDACC__
/* The C reference (src/linalg/small_svd.c). tn_jsvd_ref_run: the sweeps on
 * Y and V (l rows, ld l, TN_JSVD_W * tn_jsvd_nblocks(l) columns, those past
 * l zero), at most `inner` inner sweeps a pair of blocks (TN_JSVD_INNER in
 * the library); TCNLA_SUCCESS (converged) or TN_NOT_TAKEN (not in
 * TN_JSVD_SWEEPS sweeps), *sweeps the sweeps run. tn_jsvd_ref: the k
 * leading singular triplets of the l x l M (ld l) = U diag(s) V^T, U and V
 * l x k (ld l), s descending, from the sweeps on Y = M X0, V = X0 (X0 l x l,
 * ld l, orthogonal: a preconditioner; NULL: Y = M, V = I), then s_j =
 * |y_j|, u_j = y_j / s_j (0 where s_j = 0), ordered by s (ties by column);
 * TCNLA_SUCCESS, TN_NOT_TAKEN (not converged, U s V not written),
 * TCNLA_ERR_NUMERICAL (NaN or Inf), TCNLA_ERR_ALLOC, or -i for the i-th
 * argument out of range (l outside 1..TN_JSVD_MAXL, k outside 1..l, M or an
 * output NULL). fault (tests only; 0 in use): 1 negates every rotation
 * angle, 2 stops after one sweep as if converged. */
#ifdef __cplusplus
extern "C" {
#endif
int tn_jsvd_ref_run(int l, double *Y, double *V, int inner, int fault, int *sweeps);
int tn_jsvd_ref(int l, int k, const double *M, const double *X0, double *U, double *s, double *V,
                int *sweeps, int fault);
#ifdef __cplusplus
}
#endif
#endif

#endif
