/* Ozaki scheme II (Ozaki, Uchino, Imamura 2025): DGEMM / SGEMM from INT8
 * Tensor Core products modulo small pairwise coprime moduli, recombined by
 * the Chinese remainder theorem. Shared by the CPU reference
 * (src/gemm/ozaki2.c) and the CUDA backend (src/backend/cuda/ozaki2_cuda.c).
 * Host code only.
 *
 * 1. Scaling. Row i of op(A) becomes the integer vector
 *      a'_i = trunc(2^s_i a_i),   column j of op(B):  b'_j = trunc(2^t_j b_j),
 *    with ||a'_i||_2 <= 2^hA and ||b'_j||_2 <= 2^hB, hA + hB = floor(log2 M) - 2,
 *    so |a'_i . b'_j| <= M / 4 by Cauchy-Schwarz. The norm bound is computed
 *    without rounding-order effects: |x| <= (m8 + 1) 2^(e - 8) from the top 8
 *    bits m8 of x = f 2^e, squared and summed as integers (tn_oz2_vec_info),
 *    so s_i is the same on every backend and for every blocking.
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
 * The only error is the truncation in step 1: 2^-s_i per element of row i.
 * DP mode picks the moduli count from the bound of [Mukunoki et al. 2020] Alg. 3 applied to
 * that truncation (tn_oz2_plan); FIXED mode takes the caller's count.
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

/* Per vector (a row of op(A) or a column of op(B)) of length k, finite:
 * e = the largest exponent (x = f 2^e, 0.5 <= f < 1; INT_MIN for a zero
 * vector), s = sum of ceil((m8 + 1)^2 2^(2 (e_h - e) + tn_oz2_tbits(k))),
 * an exact integer. ||x||^2 <= s 2^(2 (e - 8) - tbits). */
int tn_oz2_tbits(int64_t k);
/* One element's contribution to s (the vector's e given). */
uint64_t tn_oz2_sq_term(double x, int e, int tbits);
/* The shift sigma with s_v = h + sigma (h = hA or hB): 2^s_v ||x|| <= 2^h. */
int tn_oz2_sigma(int e, uint64_t s, int tbits);

/* Plan: from the per-vector sigma and, in DP mode, the per-vector need
 * (tn_oz2_need), the moduli count and hA, hB. mode TCNLA_OZAKI_DP or
 * TCNLA_OZAKI_FIXED (n_fixed moduli). Returns 0, or TCNLA_ERR_RANGE when DP
 * needs more than TN_OZ2_MAXN moduli. */
typedef struct {
    int n, hA, hB;
} tn_oz2_plan_t;
/* The h a vector needs in DP mode: 2^-(h + sigma) ||w||_2 <= u g / 8
 * where g = |x| . w (w = |op(B)| e for rows of op(A), z = |op(A)|^T e for
 * columns of op(B)); INT_MIN when the vector does not constrain (g == 0). */
int tn_oz2_need(int sigma, double wnorm, double g, int out_prec);
/* The largest need of a set of vectors from the minimum of their keys
 * (tn_oz2_gkey): need(0, f) - e for key = (f, e); INT_MIN for UINT64_MAX. */
int tn_oz2_need_key(uint64_t key, double wnorm, int out_prec);
int tn_oz2_plan(int mode, int n_fixed, int needA, int needB, tn_oz2_plan_t *pl);
/* ||w||_2 summed in index order (both backends use it on the host) */
double tn_oz2_norm2(const double *w, int64_t k);

/* Residue in [-128, 127] modulo p_l of the integer trunc(x 2^s), |.| < 2^80. */
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
