/* The backend seam (not installed): the one table of operations each
 * backend fills (src/backend/cpu/cpu_backend.c, src/backend/cuda/
 * cuda_backend.c). The public entry points and the drivers reach a backend
 * only through h->ops; no code outside src/backend/ tests which backend a
 * handle has. All data arguments are in the handle's memory. Operations
 * that take a tn_call_t read the call's modes (src/core/call.h) and report
 * what ran into it. */
#ifndef TCNLA_BACKEND_H
#define TCNLA_BACKEND_H

#include "core/call.h"
#include "tcnla.h"
#include <stddef.h>
#include <stdint.h>

/* Work a backend call runs on its outputs before it returns (svd_from_gram) */
typedef struct {
    int (*run)(void *arg);
    void *arg;
} tn_then_t;

typedef struct tn_backend_ops {
    const char *name; /* "cpu", "cuda" */

    /* ---- life cycle, memory, streams */
    void (*destroy)(tcnla_handle_t h);
    /* entering / leaving a public call: the CUDA backend makes the handle's
     * device current and gives the caller's back (*saved: what to restore) */
    void (*enter)(tcnla_handle_t h, int *saved);
    void (*leave)(tcnla_handle_t h, int saved);
    int (*malloc)(tcnla_handle_t h, void **p, size_t bytes);
    int (*free)(tcnla_handle_t h, void *p);
    /* the drivers' scratch (tn_scratch_malloc): stream-ordered where the backend can */
    int (*scratch_malloc)(tcnla_handle_t h, void **p, size_t bytes);
    int (*scratch_free)(tcnla_handle_t h, void *p);
    int (*memcpy)(tcnla_handle_t h, void *dst, const void *src, size_t bytes,
                  tcnla_memcpy_kind_t kind);
    size_t (*workspace_bytes)(tcnla_handle_t h);
    size_t (*pool_idle_bytes)(tcnla_handle_t h);
    int (*set_stream)(tcnla_handle_t h, void *stream);
    int (*synchronize)(tcnla_handle_t h);

    /* ---- products (after argument checks; a resolved method; m, n > 0) */
    /* C = alpha op(A) op(B) + beta C, FP32; B16: B given as FP16 bits (B NULL) */
    int (*gemm)(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                int64_t ldc);
    /* tn_sgemm_batched's batch >= 2 in one go: a status, or TN_BATCH_LOOP
     * (C untouched: the caller runs the products one by one) */
    int (*gemm_batched)(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                        tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *A, int64_t lda, int64_t sa, const float *B,
                        const uint16_t *B16, int64_t ldb, int64_t sb, float beta, float *C,
                        int64_t ldc, int64_t sc, int64_t batch, int reduce);
    /* TCNLA_GEMM_FP16 on operands stored in FP16 (tn_gemm_f16) */
    int (*gemm_f16)(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                    int64_t k, float alpha, const uint16_t *A, int64_t lda, const uint16_t *B,
                    int64_t ldb, float beta, float *C, int64_t ldc);
    /* method OZAKI_FP16 / OZAKI_INT8 (or NATIVE_FP64 for FP64 data):
     * out_prec 64: A, B, C FP64 (tcnla_dgemm); 32: FP32 (tcnla_sgemm) */
    int (*ozaki)(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc, int out_prec);

    /* ---- orthonormalization and small problems */
    int (*orthonormalize)(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                          int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                          tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16);
    /* CholeskyQR with its verdict into cl->defer[slot]; TCNLA_ERR_NOT_SUPPORTED
     * where the backend does not defer */
    int (*orthonormalize_deferred)(tn_call_t *cl, tcnla_orth_t method, int64_t m, int64_t n,
                                   float *Y, int64_t ldy, int slot);
    int (*small_svd_t)(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                       float *Vk, float *Sk, int scale_vk);
    /* RSVD's last step from the eigensolution of W^T W: TN_NOT_TAKEN where
     * the backend has no such path or it does not apply. cl->dist_rows: W's
     * rows are distributed (the Gram matrices summed, VT this rank's columns).
     * trans: VT written transposed (n x k, ld ldvt >= n). then (may be NULL):
     * the work that follows on Xk, run where the call is taken (status 0),
     * the backend queuing it ahead of its last wait; where the call is not
     * taken, it may have run and its outputs are for the caller to write
     * again, as VT's */
    int (*svd_from_gram)(tn_call_t *cl, int64_t n, int64_t l, int64_t k, const float *W,
                         int64_t ldw, float *Xk, float *Sk, float *VT, int64_t ldvt, int trans,
                         const tn_then_t *then);
    /* W^T W of the next svd_from_gram (one rank; same W, l, k) queued ahead,
     * for the GPU to form while the host waits: that call takes it (W must
     * not change before it). NULL where the backend has no such path. */
    int (*gram_ahead)(tn_call_t *cl, int64_t n, int64_t l, int64_t k, const float *W,
                      int64_t ldw);

    /* ---- random matrices and element-wise work */
    int (*random_fill)(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                       uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                       int64_t ld);
    int (*round_inplace)(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                         float *X, int64_t ld);
    int (*add_matrix)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A, int64_t lda,
                      const float *E, int64_t lde, float *D, uint16_t *D16, int64_t ldd);
    int (*copy_matrix)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src,
                       int64_t lds, float *dst, int64_t ldd);
    /* D16 = fp16(ascale A - X Y^T) (ascale a power of two) in one fused
     * pass: TN_NOT_TAKEN where the backend has none for these operands (the
     * caller runs column slabs) */
    int (*lowrank_residual16)(tcnla_handle_t h, int64_t m, int64_t n, int64_t k, const float *A,
                              int64_t lda, const float *X, int64_t ldx, const float *Y,
                              int64_t ldy, uint16_t *D16, int64_t ldd, float ascale);
    /* Y (FP16 bits) = fp16(scale X), scale a power of two; *maxabs (when
     * not NULL) = max |X| (NaN where X holds one) */
    int (*to_f16_scaled)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                         float scale, uint16_t *Y, int64_t ldy, float *maxabs);
    /* X = alpha X */
    int (*scale_matrix)(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                        int64_t ld);
    /* Exact scaling (src/gemm/scaling.c): e[v] = TN_SCALE_TOP - E, with
     * 2^(E-1) <= max |x| < 2^E over row v (by_col 0) or column v (by_col 1)
     * of X; 0 for a vector of zeros (and one holding NaN / Inf) */
    int (*scale_exponents)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                           int64_t ld, int by_col, int *e);
    /* Y = diag(2^er) X diag(2^ec) element by element with ldexpf's rounding
     * (er or ec NULL: zeros) */
    int (*scale_copy)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                      const int *er, const int *ec, float *Y, int64_t ldy);
    /* C = alpha u + beta C with u = ldexpf(T_ij, -(er_i + ec_j)) (ec NULL:
     * zeros), alpha u and beta C rounded to FP32 and added (C not read when
     * beta == 0) */
    /* *out = sum of x^2 over the rows x cols X, accumulated in FP64 (waits
     * for the result) */
    int (*sumsq)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                 double *out);
    /* the same sum into *dev (handle memory), queued: nothing waits for it */
    int (*sumsq_to)(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                    double *dev);
    /* Whether TCNLA_GEMM_FP16's C = op(A) B (op(B) = B, FP32 B) runs
     * without a copy of A (the drivers' memory bound) */
    int (*f16_in_place)(tcnla_handle_t h, tcnla_op_t ta, int64_t m, int64_t n, int64_t k,
                        const float *A, int64_t lda);
    int (*unscale_update)(tcnla_handle_t h, int64_t m, int64_t n, float alpha, const float *T,
                          int64_t ldt, const int *er, const int *ec, float beta, float *C,
                          int64_t ldc);

    /* ---- the drivers' modes (src/core/internal.h: tn_trust, tn_defer_*, tn_side_*) */
    int (*trust)(tn_call_t *cl, const float *A, int64_t ld, int64_t rows, int64_t cols,
                 const tcnla_gemm_method_t *meths, int nm);
    int (*gemm_trusting)(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, int64_t m,
                         int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                         const uint16_t *B16, int64_t ldb, float *C, int64_t ldc,
                         const tcnla_gemm_method_t *meths, int nm, int *done);
    /* the verdict of a gemm_trusting that returned *done = 2 (waits) */
    int (*trust_settle)(tn_call_t *cl, int *done);
    int (*hosvd_fused_possible)(tcnla_handle_t h, int64_t I1, int64_t J1, int64_t J2);
    int (*hosvd_fused)(tn_call_t *cl, int64_t I1, int64_t I2, int64_t T, const float *A,
                       const float *Q, int64_t J1, const uint16_t *Om, int64_t J2, float *Out,
                       float *W, int *done);
    int (*defer_begin)(tn_call_t *cl);
    /* (and `bytes` of handle memory at `extra` into `host`, in the same wait) */
    int (*defer_end)(tn_call_t *cl, int *flags, const void *extra, void *host, size_t bytes);
    /* the flags so far copied out behind the work queued until now, no wait
     * (TCNLA_ERR_NOT_SUPPORTED: not deferring, or no such copy), and the
     * wait for that copy alone */
    int (*defer_mark)(tn_call_t *cl);
    int (*defer_marked)(tn_call_t *cl, int *flags);
    /* deferral ended without a wait, on flags defer_marked found all clear */
    int (*defer_close)(tn_call_t *cl);
    int (*side_begin)(tn_call_t *cl);
    int (*side_end)(tn_call_t *cl);
    int (*side_join)(tn_call_t *cl);

    /* ---- communicators (src/dist/dist.h; NULL: not on this backend) */
    /* n communicators, comms[i] rank i on hs[i] (the public checks done) */
    int (*comm_local)(tcnla_comm_t *comms, const tcnla_handle_t *hs, int n);
    /* rank `rank` of `n` from a shared identifier (blocks until all join) */
    int (*comm_init_rank)(tcnla_comm_t *comm, tcnla_handle_t h, int n, int rank,
                          const unsigned char *id);
    /* over the caller's own communicator object (not destroyed with it) */
    int (*comm_wrap)(tcnla_comm_t *comm, tcnla_handle_t h, void *native);
} tn_backend_ops;

/* Returned (positive, never a status) by an operation whose path does not
 * apply: the caller takes its generic one. */
#define TN_NOT_TAKEN 1
/* Returned (positive) by ops->gemm for a product whose operands fail the
 * range check where tn_call_may_scale allows exact scaling: C untouched,
 * nothing queued that writes it; the front (src/gemm/scaling.c) computes
 * the product on scaled copies. The operands hold no NaN / Inf, except
 * where SHGEMM's FP32 B overflowed FP16 in its rounding (checked first). */
#define TN_NEEDS_SCALE 2
/* The binade exact scaling moves each vector's largest magnitude into:
 * [2^(TN_SCALE_TOP - 1), 2^TN_SCALE_TOP), FP16's largest binade */
#define TN_SCALE_TOP 15

extern const tn_backend_ops tn_cpu_ops;
#ifdef TCNLA_HAVE_CUDA
extern const tn_backend_ops tn_cuda_ops;
/* fills h->cuda (device `device`) and h->device_name */
int tn_cuda_create(tcnla_handle_t h, int device);
int tn_cuda_device_count(void);  /* 0 when no GPU or no driver */
int tn_cuda_current_device(void); /* the calling thread's current device (0 if none) */
void tn_cuda_restore_device(int device);
/* tcnla_comm_unique_id (src/backend/cuda/comm_nccl.c) */
int tn_nccl_unique_id(unsigned char *id);
#endif

#endif
