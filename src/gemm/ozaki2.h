/* Ozaki scheme II (Ozaki, Uchino, Imamura 2025): DGEMM / SGEMM from INT8
 * Tensor Core products modulo small pairwise coprime moduli, recombined by
 * the Chinese remainder theorem. Shared by the CPU reference
 * (src/gemm/ozaki2.c) and the CUDA backend (src/backend/cuda/ozaki2_cuda.c).
 * Host code only.
 *
 * 1. Scaling. Row i of op(A) becomes the integer vector
 *      a'_i = rint(2^s_i a_i),   column j of op(B):  b'_j = rint(2^t_j b_j)
 *    (to the nearest, ties to even), and the moduli count n is the least
 *    with |a'_i . b'_j| < P / 2 for every pair, by Cauchy-Schwarz from
 *    NA = max_i 2^s_i ||a_i||_2 and NB (column norms; DP mode):
 *      (NA + sqrt(k) / 2) (NB + sqrt(k) / 2) <= P / 2 (1 - 2^-30),
 *    sqrt(k) / 2 for the rounding (||a'_i|| <= 2^s_i ||a_i|| + sqrt(k) / 2),
 *    the factor for NA's and P's roundings. The norms are bounded without
 *    rounding-order effects: |x| <= (m8 + 1) 2^(e - 8) from the top 8 bits
 *    m8 of x = f 2^e, squared and summed as integers in blocks (tn_oz2_bound), so
 *    the bounds, their maxima and n are the same on every backend and for
 *    every blocking.
 *    DP mode: s_i = hA + sigma_i (2^sigma_i ||a_i|| <= 1, tn_oz2_sigma)
 *    with hA the largest need of the rows (tn_oz2_need): the error of
 *    rounding row i is about 2^-(s_i + 1) ||b_j||_2 / sqrt(3) in C_ij,
 *    independent of k, while native GEMM's is of order u ||a_i||_2 ||b_j||_2
 *    or less; aggregated over the columns j through w = |op(B)| e as in
 *    [Mukunoki et al. 2020] Alg. 3, row i needs the least s_i with
 *    2^-(s_i + 1) ||w||_2 <= c u (|op(A)| w)_i (tn_oz2_shift), the alignment
 *    of |a_i| with w taking care of rows whose large elements meet small
 *    ones of op(B). c = 1/16 (TN_OZ2_DP_CLOG2): rounding to nearest halves
 *    truncation's bound, and c = 1/16 keeps the errors where truncation
 *    with c = 1/8 had them (tests/test_ozaki2.c: the largest relative
 *    error over native DGEMM's, geometric mean over 48 random cases, 0.041
 *    against 0.037; c = 1/8 with rounding gives 0.081). Every row takes
 *    the largest need: the aggregate is a row's, not an element's, and the
 *    rows below the largest need keep their margin (each row at its own
 *    need gave 3.2x native's largest error on one heavy-tailed case where
 *    the common need gave 0.9x). The bits n leaves over go to both operands
 *    as extra shifts (more accuracy, never less).
 *    FIXED mode: hA + hB = floor(log2 P) - 2 for the caller's n.
 *    Every scaled element stays below 2^80 (TN_OZ2_YBITS, where the GPU's
 *    residues are exact); a plan that would pass it, or that needs more
 *    than TN_OZ2_MAXN moduli, is TCNLA_ERR_RANGE.
 * 2. Products. For each modulus p_l: the residues of a'_i and b'_j in
 *    [-128, 127] (INT8), their integer dot product (exact in INT32 for k-blocks
 *    of at most TN_OZ2_KBLOCK, |r_a r_b| <= 2^14), and that product modulo p_l.
 * 3. Reconstruction (tn_oz2_reconstruct, one element): with P = prod p_l,
 *    W_l = P / p_l and u_l = (q_l r_l) mod p_l (q_l = W_l^-1 mod p_l),
 *    Y = sum_l W_l u_l is congruent to x = a'_i . b'_j modulo P. W_l and P are
 *    held as 4 FP64 parts of 40 bits on one grid per part, so the 4 partial
 *    sums S_j = sum_l W_lj u_l are exact (u_l < 2^8, at most 20 terms); then
 *    q = rint(Y / P), D_j = S_j - q P_j (exact), the bits of each D_j above
 *    the next part's grid carried up (exact), and x = T0 + (T1 + (T2 + T3)),
 *    within one unit in the last place (correctly rounded in 99.7% of
 *    random cases); C_ij = x 2^-(s_i + t_j). The
 *    same operations on the CPU and the GPU: bitwise the same x.
 * The only error is the rounding in step 1: at most 2^-(s_i + 1) per element of row i.
 * The sums w, ||w|| and g of DP mode are FP64 sums; ||w|| in the order of
 * tn_oz2_norm2 on every backend, w and g in an order of each backend's own.
 * They choose the needs only: where the neediest vector's r lies within
 * those sums' rounding of a power of 2 (about k u relative: rarely, on data
 * that is not exact in any order), the CPU and the GPU can take needs one
 * apart, and then hA or n and the products' last bits differ.
 */
#ifndef TCNLA_OZAKI2_H
#define TCNLA_OZAKI2_H

#include "core/internal.h"
#include <stdint.h>

#include "gemm/ozaki2_consts.h"
/* The constants for the first n moduli, 1 <= n <= TN_OZ2_MAXN. */
void tn_oz2_consts(int n, tn_oz2_consts_t *c);
/* floor(log2 P) of the first n moduli. */
int tn_oz2_log2p(int n);

/* The integer norm bound of a vector x (a row of op(A) or a column of
 * op(B)) of length k, finite. Its elements go in blocks of TN_OZ2_BLEN
 * (block c: elements TN_OZ2_BLEN c, ..; the last may be shorter). Block c
 * has e_c, its largest exponent (x = f 2^e, 0.5 <= f < 1; INT_MIN where
 * all are zero), and s_c = sum of tn_oz2_sq_term(x_l, e_c, tbits) =
 * ceil((m8 + 1)^2 2^(2 (e_l - e_c) + tbits)), tbits = tn_oz2_tbits(k);
 * the vector has e = max e_c and s = sum over c of
 * tn_oz2_bound_at(s_c, e_c, e) = ceil(s_c 4^-(e - e_c)), an exact integer
 * (below 2^63) with ||x||^2 <= s 2^(2 (e - 8) - tbits). Each block needs
 * only its own elements, and the blocks combine once e is known, so one
 * pass over the data gives the blocks' e_c, s_c (the GPU's scan). */
int tn_oz2_tbits(int64_t k);
/* One element's contribution to a block's s_c (the block's e_c given). */
uint64_t tn_oz2_sq_term(double x, int e, int tbits);
/* s of the vector x[l * stride], l < k (the definition above), and *e. */
uint64_t tn_oz2_bound(const double *x, int64_t stride, int64_t k, int *e);
/* The shift sigma with s_v = h + sigma (h = hA or hB): 2^s_v ||x|| <= 2^h. */
int tn_oz2_sigma(int e, uint64_t s, int tbits);

/* DP mode's c u as a power of 2 (c = 1/16; u of the output precision) */
#define TN_OZ2_DP_CLOG2 (-4)
int tn_oz2_dp_culog2(int out_prec);

/* The h a vector needs in DP mode: tn_oz2_shift(wn, g) - sigma
 * (TN_OZ2_SHIFT_HUGE passed on); INT_MIN when it does not constrain
 * (g == 0: it meets only zeros of the other operand). */
int tn_oz2_need(int sigma, double wn, double g, int out_prec);

/* Plan: the moduli count n, hA and hB (row i of op(A) is scaled by
 * 2^(hA + sigma_i)), and ya, yb with |a'_il| < 2^ya, |b'_lj| < 2^yb.
 * DP mode (mode TCNLA_OZAKI_DP): needA, needB = the largest needs
 * (INT_MIN: none), qa, qb = the largest tn_oz2_scaled_sq of the vectors at
 * their sigma (0 where all are zero); hA >= needA, hB >= needB.
 * FIXED mode: n_fixed moduli, hA + hB = floor(log2 P) - 2 (the needs and q
 * unused). k = the inner dimension.
 * Returns 0, or TCNLA_ERR_RANGE when DP needs more than TN_OZ2_MAXN moduli
 * or a scaled element could reach 2^TN_OZ2_YBITS. */
typedef struct {
    int n, hA, hB, ya, yb;
} tn_oz2_plan_t;
int tn_oz2_plan(int mode, int n_fixed, int needA, int needB, double qa, double qb, int64_t k,
                tn_oz2_plan_t *pl);
/* The plan's per-vector pass on the CPU: nv vectors of length k, element l
 * of vector v at X[v * sv + l * sl], finite: sig[v] (tn_oz2_sigma), and in
 * DP mode (w != NULL: g = sum |x_l| w_l in index order, wn = ||w||) *need =
 * the largest tn_oz2_need (INT_MIN when none constrains; need may be
 * NULL); returns the largest tn_oz2_scaled_sq at sigma (0 for zeros). */
double tn_oz2_vecs(const double *X, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                   const double *w, double wn, int out_prec, int *sig, int *need);
/* ||w||_2 in TN_OZ2_NORM_LANES strided partial sums (lane t: w_t^2,
 * w_(t + 256)^2, ... in turn), the partial sums added in lane order, then
 * the square root: both backends compute it so */
double tn_oz2_norm2(const double *w, int64_t k);

/* Residue in [-128, 127] modulo p_l of the integer rint(x 2^s), |.| < 2^80. */
int tn_oz2_residue(const tn_oz2_consts_t *c, int l, double x, int s);
/* r mod p in [0, p) of an integer |v| < 2^31. */
int tn_oz2_mod(int64_t v, int p);
/* x = a'_i . b'_j from u[l * stride] = (q_l (x mod p_l)) mod p_l, as FP64
 * (within one unit in the last place), before the 2^-(s_i + t_j) scaling. */
double tn_oz2_reconstruct(const tn_oz2_consts_t *c, const unsigned char *r, int64_t stride);

/* Scheme II is used for this call: OZAKI_INT8 in DP mode unless the options
 * ask for scheme 1, or FIXED mode with scheme 2. */
int tn_oz2_selected(tcnla_handle_t h, tcnla_gemm_method_t method);

/* The CPU reference: C = alpha op(A) op(B) + beta C, FP64 data, finite op(A),
 * op(B), m, n, k >= 1, alpha != 0. out_prec 64 or 32. */
int tn_cpu_ozaki2(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                  int64_t k, double alpha, const double *A, int64_t lda, const double *B,
                  int64_t ldb, double beta, double *C, int64_t ldc, int out_prec);

#endif
