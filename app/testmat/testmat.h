/* Test matrices of the seeds (host memory, column-major). */
#ifndef TCNLA_TESTMAT_H
#define TCNLA_TESTMAT_H
#include <stdint.h>

typedef enum {
    TN_SPEC_LINEAR = 0, /* s_i = max(1 - a i, s_p), a = (1 - s_p) / p ([Ootomo & Yokota 2023] 5.1.1) */
    TN_SPEC_EXP = 1,    /* s_i = 2^(-a i), a = log2(1 / s_p) / p ([Ootomo & Yokota 2023] 5.1.1) */
    TN_SPEC_POLY = 2    /* (phi x r, 2^-alpha, 3^-alpha, ...)  type 2 of [Ootomo & Yokota 2023] 3.3 */
} tn_spectrum_t;

/* The first nsv singular values of a spectrum (i = 0 .. nsv-1). LINEAR and
 * EXP use (p, s_p); POLY uses (r, alpha, phi). */
void tn_spectrum(tn_spectrum_t kind, int64_t nsv, int64_t p, double sp, int64_t r, double alpha,
                 double phi, double *sigma);
/* A (m x n, lda) = U diag(sigma) V^T with Haar-like random orthogonal U, V
 * (LAPACK slatms from libtmglib; O(mn min(m,n)) level-2 work: keep it for
 * test sizes). Returns LAPACK's info (0 = ok). */
int tn_testmat_latms(int64_t m, int64_t n, const double *sigma, uint64_t seed, float *A,
                     int64_t lda);
/* A (m x n, lda) = U_r diag(sigma_1..r) V_r^T with U_r, V_r orthonormal
 * (Householder QR of Gaussian m x r and n x r matrices, level-3 LAPACK):
 * the singular values beyond r are zero. For large matrices whose spectrum
 * has decayed below FP32 resolution by index r. Returns 0, -1 (memory) or
 * a LAPACK info. */
int tn_testmat_svd_fast(int64_t m, int64_t n, int64_t r, const double *sigma, uint64_t seed,
                        float *A, int64_t lda);
/* Cauchy matrix C_ij = 1 / (|x_i - y_j| + gamma), x, y uniform in
 * (-1e-3, 1e-3), gamma = 1e-3, followed by one orthogonal (power) iteration
 * A = C C^T C as in [Ootomo & Yokota 2023] 5.1.1: its elements exceed FP16's range.
 * Computed as (C C^T) C (an m x m Gram matrix) for m <= 4096 or m <= n, else
 * as C (C^T C) (n x n): the extra memory is at most max(64 MiB, size of A),
 * and the values of m > 4096, m > n differ from (C C^T) C's by rounding. */
int tn_testmat_cauchy(int64_t m, int64_t n, uint64_t seed, float *A, int64_t lda);
/* Low-rank X Y^T with Gaussian X (m x k), Y (n x k) ([Baboulin et al. 2024] section 4.1). */
int tn_testmat_lowrank(int64_t m, int64_t n, int64_t k, uint64_t seed, float *A, int64_t lda);
/* Tucker tensor of [Ootomo & Yokota 2023] Algorithm 3: core G ~ U(-1,1) of J_1 x ... x J_N,
 * then for each mode G <- G x_i (Oa Ob)^T with Oa (J_i x (J_i - pad)) and
 * Ob ((J_i - pad) x I_i) uniform(-1,1): multilinear rank J_i - pad. A has
 * dims I_1 x ... x I_N (first index fastest). Returns 0 or -1 (memory). */
int tn_testmat_tucker(int order, const int64_t *dims, const int64_t *ranks, int64_t pad,
                      uint64_t seed, float *A);
#endif
