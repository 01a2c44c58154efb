/* The launchers of Ozaki scheme II's kernels (ozaki2_kernels.cu: the plan's
 * passes, residues, reduction modulo p_l, reconstruction; ozaki2_sm90.cu:
 * the fused INT8 products), for the host side (src/backend/cuda/ozaki2_cuda.c)
 * and the benchmarks that time the kernels alone. Each returns a cudaError_t
 * as int (0: launched). */
#ifndef TCNLA_OZAKI2_LAUNCH_H
#define TCNLA_OZAKI2_LAUNCH_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm/ozaki2_consts.h" /* tn_oz2_consts_t */

#ifdef __cplusplus
extern "C" {
#endif

/* the plan's passes: the scan of an operand (block arrays of its norm
 * bounds, the sums w, the blocks' parts of g), g of the operand read
 * second in DP mode, and the per-vector results (E, S, g, sig, the largest
 * scaled norm bound and need) */
int tn_oz2_scan(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv, int64_t k, int tbits,
                int *CE, unsigned long long *CS, double *part, double *w, double *wn,
                const double *wo, double *gpart, cudaStream_t st);
int tn_oz2_gsum(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                const double *w, double *part, double *g, cudaStream_t st);
int tn_oz2_vectors(const int *CE, const unsigned long long *CS, const double *gpart, int64_t nch,
                   int64_t nv, int tbits, int *E, unsigned long long *S, double *g,
                   const double *wn, int culog2, int *sig, unsigned long long *qmax, int *need,
                   int *bad, cudaStream_t st);
/* nvp a multiple of 16, kp of 32, R 4-byte aligned, every |x 2^(h + sig)|
 * below 2^ybits, ybits <= TN_OZ2_YBITS (else cudaErrorInvalidValue) */
int tn_oz2_residues(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                    int64_t v_base, int64_t nvp, int64_t kp, const int *sig, int h, int ybits,
                    const tn_oz2_consts_t *c, signed char *R, cudaStream_t st);
int tn_oz2_modp(const int *P, int64_t cnt, int p, int qinv, int first, unsigned char *Q,
                cudaStream_t st);
int tn_oz2_launch_reconstruct(const unsigned char *Q, int64_t mbp, int64_t nbp, int64_t mb,
                              int64_t nb, const tn_oz2_consts_t *c, const int *sa, const int *sb,
                              int hAB, double alpha, double beta, void *C, int64_t ldc, int f32,
                              cudaStream_t st);
/* the fused products (ozaki2_sm90.cu) */
int tn_oz2_fused_available(void);
size_t tn_oz2_fused_smem(void);
int tn_oz2_fused_fits(int nmod, int64_t mbp, int64_t nbp, int64_t kp);
int tn_oz2_fused(const signed char *RA, const signed char *RB, int nmod, int64_t mbp,
                 int64_t nbp, int64_t kp, const int *mod, const int *qinv, unsigned char *Q,
                 int cluster, size_t smem_limit, cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
