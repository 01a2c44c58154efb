/* The Hopper (sm_90a) kernels of the error-corrected GEMM methods
 * (src/backend/cuda/kernels/tc_gemm_sm90.cu): wgmma fed by TMA through an mbarrier
 * pipeline. Plain C declarations; the launchers are extern "C". */
#ifndef TCNLA_TN_SM90_H
#define TCNLA_TN_SM90_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "backend/cuda/tn_cuda.h" /* tn_elem_kinds_t */

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
 * cudaErrorNotSupported (and queues nothing) when they cannot run.
 * aflags (device memory) non-NULL: the product also does the element-wise
 * check of tn_cu_trust_check (its flags[0 .. n]) of every element of A
 * under kk (every kind fast); only SHGEMM_FP16's n64 kernel folds it
 * (N <= 64), anything else is cudaErrorNotSupported. */
int tn_cu_tc_gemm_sm90(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *A, int64_t lda, const void *B, int64_t ldb,
                       float beta, float *C, int64_t ldc, int splits, float *P,
                       size_t smem_limit, cudaStream_t stream, const tn_elem_kinds_t *kk,
                       int *aflags);

/* The same for op(A) = [A_0^T A_1^T ... A_{slabs-1}^T] (m x kslab slabs),
 * A_t = A + t sstride (kslab x m, lda), and op(B) = B (kslab slabs x n, op
 * N, ldb): C = alpha sum_t A_t^T B_t + beta C as ONE product whose k runs
 * through the slabs (a 3-D tensor map of A). kslab must be a multiple of 32
 * and sstride * 4 of 16 bytes; else cudaErrorNotSupported. */
int tn_cu_tc_gemm_sm90_slabs(int mode, int64_t m, int64_t n, int64_t kslab, int64_t slabs,
                             float alpha, const float *A, int64_t lda, int64_t sstride,
                             const void *B, int64_t ldb, float beta, float *C, int64_t ldc,
                             int splits, float *P, size_t smem_limit, cudaStream_t stream);

/* RP-HOSVD's fused pass (tc_gemm_sm90.cu says what it computes): the
 * core's first mode product Out = slab_t^T Q (TCEC_FP16) and the mode-2
 * projection W = sum_t slab_t^T Omega_t (SHGEMM_FP16) in one read of the
 * tensor (T slabs of I1 x I2). _ok: 1 where it runs. Split-K slices of
 * `per` slabs; P: ceil(T / per) x I2 x J2 floats. */
int tn_cu_sm90_hosvd_fused_ok(int64_t I1, int64_t I2, int64_t T, const float *A, const float *Q,
                              int64_t ldq, int64_t J1, const uint16_t *Om, int64_t ldo,
                              int64_t J2, size_t smem_limit);
int tn_cu_sm90_hosvd_fused(int64_t I1, int64_t I2, int64_t T, const float *A, const float *Q,
                           int64_t ldq, int64_t J1, const uint16_t *Om, int64_t ldo, int64_t J2,
                           float *Out, int64_t ldout, float *W, int64_t ldw, float *P,
                           int64_t per, size_t smem_limit, cudaStream_t stream);

/* Split-K: C = alpha * sum of the `splits` m x n slices of P + beta * C
 * (the slices added in order, RN). */
int tn_cu_sm90_splitk_reduce(int splits, const float *P, int64_t m, int64_t n, float alpha,
                             float beta, float *C, int64_t ldc, cudaStream_t stream);
/* The same, unless flags[0], flags[1] or flags[2] (device memory) is set
 * when it runs: then C is not written. */
int tn_cu_sm90_splitk_reduce_unless(int splits, const float *P, int64_t m, int64_t n,
                                    float alpha, float beta, float *C, int64_t ldc,
                                    const int *flags, cudaStream_t stream);
/* k-tiles of 32 per chunk of hi*hi products summed inside the Tensor Core
 * before each RN add: 2 for the FP16 methods, 1 for TF32. */
int tn_cu_sm90_chunk(int mode);

/* The pre-split path (tc_gemm_sm90_ps.cu): one pass writes the hi / lo
 * parts of op(A) and op(B) K-major into a workspace of
 * tn_cu_sm90_ps_bytes(); the GEMM kernel then multiplies them with both
 * wgmma operands in shared memory. Same operands, results (bit for bit),
 * split-K slices and P as tn_cu_tc_gemm_sm90. */
/* 1 when the pre-split path should run for this shape and split-K count
 * (tn_cu_tc_gemm_splits): min(m, n) >= 512, max(m, n) >= 1024 and
 * k >= 1024 (each element would otherwise be split n / 128 or m / 128
 * times, at least 4 and 8) where force is TCNLA_TUNING_AUTO, never where
 * it is 0, always where 1 (the handle's tuning sm90_presplit); 0 where
 * slice lengths do not fit its 64-deep FP16 k-tiles. */
int tn_cu_sm90_ps_wanted(int mode, int64_t m, int64_t n, int64_t k, int splits, int force);
/* m = 0: a workspace of op(B)'s parts alone (tn_cu_sm90_ps_b_parts). */
size_t tn_cu_sm90_ps_bytes(int mode, int transb, int64_t m, int64_t n, int64_t k);
/* The pass that writes the parts of op(A) (which = 0: X = A, trans =
 * transa) or op(B) (1: X = B, trans = transb; FP16 for SHGEMM) into ws.
 * With scratch (FP32 X only), also the check of tn_cu_check_f32 on the
 * same vectors (rows of op(A), columns of op(B)), on the way: the same
 * flags, one read of X fewer. sms: the device's SM count (sizes the grid). */
int tn_cu_sm90_ps_split(int mode, int which, int trans, int64_t m, int64_t n, int64_t k,
                        const void *X, int64_t ld, void *ws, int check_kind, int tol_bits,
                        int *flags, void *scratch, int sms, cudaStream_t stream);
/* The product, after tn_cu_sm90_ps_split of the operands in `done` (1:
 * op(A), 2: op(B)); the others are split here. cudaErrorNotSupported
 * (nothing queued) when it cannot run, e.g. a workspace smaller than
 * tn_cu_sm90_ps_bytes(). */
int tn_cu_tc_gemm_sm90_ps(int mode, int transa, int transb, int64_t m, int64_t n,
                          int64_t k, float alpha, const float *A, int64_t lda, const void *B,
                          int64_t ldb, float beta, float *C, int64_t ldc, int splits, float *P,
                          void *ws, size_t ws_bytes, int done, int sms, size_t smem_limit,
                          cudaStream_t stream);

/* op(B)'s hi / lo parts (and their row stride kp) in a workspace that
 * tn_cu_sm90_ps_split(mode, which = 1, ..., m = 0, ...) filled. */
void tn_cu_sm90_ps_b_parts(int mode, int64_t n, int64_t k, void *ws, void **hi, void **lo,
                           int64_t *kp);

/* The wide-tile path (tc_gemm_sm90_w.cu): SHGEMM_FP16 and TCEC_FP16 with
 * 64 x 256, 64 x 272 or 64 x 288 output tiles (whichever pads n least),
 * op(A) split inside the product by warpgroups of its own (no pass over
 * it), op(B) FP16 and K-contiguous (SHGEMM's B; TCEC's Bhi / Blo from the
 * pass). 1 where it should run: 192 <= n <= 512 with at most a third of
 * the last 256-column tile empty, or 256 < n <= 288, m, k >= 1024, where force is TCNLA_TUNING_AUTO; never where
 * it is 0, wherever the kernels exist where 1 (the handle's tuning
 * sm90_wide). */
int tn_cu_sm90_w_wanted(int mode, int64_t m, int64_t n, int64_t k, int sms, int force);
/* C = alpha op(A) B + beta C (B = Bh, and Bl for TCEC; k x n, ldb), or with
 * P the unscaled product into P (m x n) for tn_cu_sm90_splitk_reduce with
 * one slice. vmx, verr (NULL: no check): the per-row maxima of op(A)'s
 * check (tn_cu_check_begin / _end, check_kind, tol_bits), folded on the
 * way. aflags non-NULL: tn_cu_trust_check's bounded pass on op(A) under kk
 * and tkind_bits folded into the split warpgroups, as tn_cu_gemm_f16_sm90
 * does (below; the same flags, the same scratch); once per column tile,
 * so meant for n <= one tile (tn_cu_sm90_w_cols). cudaErrorNotSupported
 * (nothing queued) when it cannot run. */
int tn_cu_tc_gemm_sm90_w(int mode, int transa, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *A, int64_t lda, const uint16_t *Bh, const uint16_t *Bl,
                         int64_t ldb, float beta, float *C, int64_t ldc, float *P, uint32_t *vmx,
                         double *verr, int check_kind, int tol_bits, size_t smem_limit,
                         cudaStream_t stream, const tn_elem_kinds_t *kk, const int *tkind_bits,
                         int *aflags, void *scratch);
/* The columns of the wide-tile kernel's tiles for n columns (256, 272 or
 * 288). */
int tn_cu_sm90_w_cols(int64_t n);

/* TCNLA_GEMM_FP16 with op(A) rounded to FP16 inside the kernel (the same
 * file; no m x k FP16 copy of A): C = alpha fp16(op(A)) B16 + beta C, B16
 * FP16, k x n, K contiguous (16-byte aligned, ldb a multiple of 8); op(A)
 * = A (transa 0, m x k) or A^T (A k x m), A 16-byte aligned, lda a
 * multiple of 4. _wanted: where it is the default (n <= 272, a wave of
 * 64-row tiles, k >= 512) with force TCNLA_TUNING_AUTO; never with 0,
 * always with 1 (the handle's tuning sm90_f16).
 * aflags (device memory) non-NULL: the product also does the bounded pass
 * of tn_cu_trust_check on op(A) under kk and tol_bits (every kind fast,
 * else cudaErrorNotSupported), in the converter warpgroups: its
 * flags[0 .. 7] (flags[7] for a row or a column of op(A) that the bound
 * does not decide), with scratch of tn_cu_gemm_f16_sm90_fold_scratch(k)
 * bytes of device memory. tile_rows: 64 or 128 (tall tiles: 128 < n <= 272,
 * m > 64), 0 for 128 wherever the shape allows; the same bits either way.
 * _rows: the tile rows that take least time on sms SMs (tall tiles where
 * they fill the waves of the 64-row tiles, which they halve).
 * cudaErrorNotSupported: not run, nothing written. */
int tn_cu_gemm_f16_sm90_wanted(int64_t m, int64_t n, int64_t k, int sms, int force);
int tn_cu_gemm_f16_sm90_rows(int64_t m, int64_t n, int sms);
int tn_cu_gemm_f16_sm90(int transa, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                        int64_t lda, const uint16_t *B16, int64_t ldb, float beta, float *C,
                        int64_t ldc, size_t smem_limit, cudaStream_t stream,
                        const tn_elem_kinds_t *kk, const int *tol_bits, int *aflags,
                        void *scratch, int tile_rows);
size_t tn_cu_gemm_f16_sm90_fold_scratch(int64_t k);

#ifdef __cplusplus
}
#endif
#endif
