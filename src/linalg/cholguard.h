/* The FP64 CholeskyQR guard's probes, written once for the host and the
 * device (src/linalg/orth.c, src/backend/cuda/kernels/cholqr_kernels.cu).
 *
 * The loss of orthogonality of CholeskyQR with its Gram matrix in FP64 is
 * Q^T Q - I = -R^-T dG R^-1 (dG the Gram matrix's rounding and potrf's
 * backward error, |dG_ij| ~ u64 d_i d_j with d_j = |y_j|), so its size is
 * u64 |R_s^-1|^2 with R_s = R D^-1 the factor of Y with unit columns
 * [Yamamoto et al. 2015]. |R_s^-1|_F^2 is estimated from TN_CHOL_PROBES
 * rows z_k^T D appended to Y: the triangular solve that forms Q = Y R^-1
 * turns them into z_k^T R_s^-1 at no extra pass, and for z_k with
 * independent unit-variance entries E |R_s^-T z_k|^2 = |R_s^-1|_F^2. The
 * entries are fixed (a hash of (k, j)): uniform in (-sqrt 3, sqrt 3), so
 * that no direction escapes all probes (each z_k^T v, |v| = 1, has a
 * continuous law of variance 1: all 8 below a tenth of it, an estimate
 * 100x low, has a probability below 1e-8). */
#ifndef TCNLA_CHOLGUARD_H
#define TCNLA_CHOLGUARD_H

#include <stdint.h>

#ifdef __CUDACC__
#define TN_CG static __host__ __device__ inline
#else
#define TN_CG static inline
#endif

#define TN_CHOL_PROBES 8

/* Q = Y R^-1 is accepted while u64 |R_s^-1|_F^2 (estimated) stays at or
 * below this: see tn_chol64_loss_within */
#define TN_CHOL64_LOSS_MAX 0x1p-12

/* probe entry z_k(j) */
TN_CG double tn_chol_probe(int k, int64_t j) {
    uint32_t x = (uint32_t)j * 0x9e3779b1u + (uint32_t)k * 0x85ebca77u + 0x27d4eb2fu;
    x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
    /* ((x >> 8) + 0.5) 2^-23 - 1 in (-1, 1), exact, times sqrt(3) */
    return ((double)(x >> 8) * 0x1p-23 + (0x1p-24 - 1.0)) * 1.7320508075688772;
}

/* The guard's verdict on the pass whose Q is returned: `sum` = the sum of
 * |z_k^T R_s^-1|^2 over the probes (the extra rows of the solve's result),
 * so u64 sum / TN_CHOL_PROBES estimates u64 |R_s^-1|_F^2, against which the
 * measured max |(Q^T Q - I)_ij| of the FP64 Q ran 0.5-13x (Y = U diag(s)
 * V^T, m = 1000 and 2000, n = 16 to 128, kappa 1e4 .. 1e9) and
 * CholeskyQR's analysis gives O(kappa_2(R_s)^2 u64) [Yamamoto et al.
 * 2015]. Accepting up to 2^-12 keeps |Q^T Q - I| to about 1e-3 (13 x 2^-12
 * = 3e-3 at the worst ratio measured), so that Q's columns are orthonormal
 * to about 2^-10, FP16's precision, to which the Tensor Core products that
 * consume Q round (TCEC recovers FP32 from two such halves). That is
 * kappa_2 up to about 4e6 for unit-norm columns, never
 * kappa^2 u64 near 1: at kappa_2 = 1e8 (Q off by 0.05-0.4 from orthonormal,
 * which the pivot test of tn_chol_ok lets through) the estimate is 0.01-0.03,
 * 40x above the limit. NaN fails. */
TN_CG int tn_chol64_loss_within(double sum) {
    return sum * (0x1p-53 / TN_CHOL_PROBES) <= TN_CHOL64_LOSS_MAX;
}

#undef TN_CG
#endif
