/* The Hopper (sm_90a) kernels of the error-corrected GEMM methods
 * (src/gemm/cuda/tc_gemm_sm90.cu): wgmma fed by TMA through an mbarrier
 * pipeline. Plain C declarations; the launchers are extern "C". */
#ifndef TCNLA_TN_SM90_H
#define TCNLA_TN_SM90_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the sm_90a kernel of `mode` (TN_KMODE_*) is loaded for the
 * current device and the driver has cuTensorMapEncodeTiled; 0 otherwise
 * (other GPUs, MARKIDIS, a build without sm_90a). */
int tn_cu_sm90_available(int mode);
/* Dynamic shared memory the sm_90a kernel of `mode` needs (0: no kernel). */
size_t tn_cu_sm90_smem(int mode);
/* C = alpha * op(A) op(B) + beta * C, as tn_cu_tc_gemm (same operands,
 * alignment, split-K slices and P), on the sm_90a kernels. Returns
 * cudaErrorNotSupported (and queues nothing) when they cannot run. */
int tn_cu_tc_gemm_sm90(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *A, int64_t lda, const void *B, int64_t ldb,
                       float beta, float *C, int64_t ldc, int splits, float *P,
                       size_t smem_limit, cudaStream_t stream);

/* The same for op(A) = [A_0^T A_1^T ... A_{slabs-1}^T] (m x kslab slabs),
 * A_t = A + t sstride (kslab x m, lda), and op(B) = B (kslab slabs x n, op
 * N, ldb): C = alpha sum_t A_t^T B_t + beta C as ONE product whose k runs
 * through the slabs (a 3-D tensor map of A). kslab must be a multiple of 32
 * and sstride * 4 of 16 bytes; else cudaErrorNotSupported. */
int tn_cu_tc_gemm_sm90_slabs(int mode, int64_t m, int64_t n, int64_t kslab, int64_t slabs,
                             float alpha, const float *A, int64_t lda, int64_t sstride,
                             const void *B, int64_t ldb, float beta, float *C, int64_t ldc,
                             int splits, float *P, size_t smem_limit, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
