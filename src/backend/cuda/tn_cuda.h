/* The CUDA backend's internal interface (not installed), shared by
 * src/backend/cuda/context.c, src/backend/cuda/gemm_cuda.c and the kernels in
 * src/backend/cuda/ (*.cu). Plain C declarations; the launchers are extern "C". */
#ifndef TCNLA_TN_CUDA_H
#define TCNLA_TN_CUDA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

/* cuBLAS, cuBLASLt and cuSOLVER: their headers, and every call through the
 * table of entry points of cuda_libs.c */
#include "backend/cuda/cuda_libs.h"

#ifndef __CUDACC__
#include "core/internal.h"
#endif
#include "gemm/ozaki2_consts.h" /* tn_oz2_consts_t */

#ifdef __cplusplus
extern "C" {
#endif

#ifndef __CUDACC__
/* Everything a CUDA handle owns (h->cuda). No state lives outside it. */
struct tn_cuda_ctx {
    int device;                 /* CUDA device ordinal */
    int cc_major, cc_minor;     /* compute capability */
    int sm_count;
    size_t smem_optin;          /* largest dynamic shared memory a block may opt into */
    cudaStream_t stream;        /* the stream all work goes to (own_stream or the user's) */
    cudaStream_t own_stream;    /* created with the handle */
    cublasHandle_t cublas;
    cusolverDnHandle_t cusolver;
    void *ws;                   /* grow-only device workspace */
    size_t ws_bytes;
    void *pinned;               /* small pinned host buffer (flags read back) */
    size_t pinned_bytes;
    int *late_pinned;           /* pinned: the flags of a check whose verdict is read later
                                   (tn_cuda_gemm_trusting, tn_cuda_trust_settle) */
    struct tn_i8_state *i8;     /* INT8 products of Ozaki scheme II (i8gemm_cuda.c) */
    cudaMemPool_t pool;         /* the drivers' scratch (tn_scratch_malloc), stream-ordered */
    int have_pool;
    /* the side stream of the calls that use one (tn_side_begin / _end /
     * _join: the call's random fills go there), created on first use, the
     * highest priority, with its fork and join events */
    cudaStream_t side;
    cudaEvent_t ev_fork, ev_join;
    /* a second lane inside one call: a stream with its own cuBLAS handle
     * (so that the two never share a cuBLAS workspace), for independent
     * chains of small kernels that would leave most of the GPU idle one
     * after the other (the eigensolver's repair of groups of equal values);
     * created on first use (tn_cuda_lane_fork / _join); lane_off (tests
     * only; 0 in use) keeps that work on the handle's stream */
    cudaStream_t lane;
    cublasHandle_t lane_blas;
    cudaEvent_t lane_fork, lane_join;
    int lane_off;
    /* (tests only; 0 in use) 1: the eigensolver makes no child
     * representations for groups of close values (tn_cu_syev_fast's
     * children 0), so that its repair meets them */
    int mr_off;
    /* device memory of the deferred verdicts (TN_DEFER_SLOTS ints), allocated
     * on first use; a call that defers points its cl->defer here.
     * defer_zero: tn_cuda_defer_end read them all 0, and nothing has
     * written them since (only deferred work does), so the next
     * tn_cuda_defer_begin need not clear them */
    int *defer_mem;
    int defer_zero;
    /* tn_cuda_defer_mark's copy of them (pinned, TN_DEFER_SLOTS ints) and
     * the event recorded behind it; created on first use */
    int *mark_pinned;
    cudaEvent_t ev_mark;
    /* (tests only; 0 in use) 1: the deflated small SVD's last check reads
     * as refused, whatever the device holds, so that its caller takes the
     * path of a refusal */
    int defl_fault;
    /* The deflated small SVD's eigenvalues read ahead of their checks
     * (small_svd_cuda.c, eig_solve_d's early): pinned room for them
     * (lam_room doubles) and the event behind their copy; its last flags
     * copied out (pinned, 1 + TN_DEFL_LEVELS ints) and the event behind
     * them (defl_flags_copy); created on first use */
    double *lam_pinned;
    size_t lam_room;
    cudaEvent_t ev_lam;
    int *flags_pinned;
    cudaEvent_t ev_flags;
    /* (tests only; 0 in use) spec_off 1: the deflated path reads its
     * eigenvalues with their checks, as without reading ahead; spec_fault
     * 1: its last read finds a failed check of a read-ahead level, so that
     * the call is redone without reading ahead */
    int spec_off, spec_fault;
    /* (tests only; 0 in use) 1: tn_cuda_defer_marked reports an
     * orthonormalization's flag as set, whatever the device holds, so that
     * its caller takes the path of a failed verdict */
    int mark_fault;
    unsigned marks; /* tn_cuda_defer_marked's reads (tests) */
    /* the last deferred single-pass CholeskyQR (cholqr64, orth_cuda.c): its
     * input Y (m x n, ld ldy) and the workspace that still holds its
     * factor, Q in FP64 and its verdict's inputs; valid until the
     * workspace is next asked for (tn_cuda_workspace clears it), so that
     * redoing that orthonormalization after its verdict failed
     * (cl->redo_deferred) starts from them instead of computing them again */
    struct {
        const float *Y;
        int64_t m, n, ldy;
        const void *ws;
        int valid;
        unsigned resumed; /* how many redos started from it (tests read it) */
    } cq_kept;
    /* the Gram matrix W^T W that tn_cuda_gram_ahead queued into the
     * workspace for the next tn_cuda_svd_from_gram_rows on the same W (n x
     * l, ld ldw) and k, which takes it instead of forming it; valid until
     * the workspace is next asked for (tn_cuda_workspace clears it) or that
     * call has read it */
    struct {
        const float *W;
        int64_t n, l, k, ldw;
        int valid;
        unsigned taken; /* how many calls took it (tests read it) */
    } gram_ahead;
    /* the handle's tuning (h->tuning, tcnla_set_tuning): read at each call */
    const tcnla_tuning_t *tune;
    /* what the last small SVD (tn_cuda_small_svd_path) ran: path (a
     * TN_SSVD_RAN_*), the Jacobi path's sweeps, jacobi_refused 1 where that
     * path ran but did not converge, met NaN / Inf or could not launch, and
     * gesvdj took over */
    struct {
        int path, sweeps, jacobi_refused;
        int refusal; /* its cause: 1 NaN / Inf, 2 / 4 / 8 the result check's bits
                        (tn_cu_jsvd_verify), 16 not converged, 32 launch refused */
        int fault;   /* tests only (0 in use): the planted fault of tn_cu_jsvd */
        /* the deflated path (src/linalg/deflated_svd.h): its levels and the
         * values each took (the last run of it, tn_cuda_small_svd_path or
         * tn_cuda_svd_from_gram_rows), defl_refused 1 where it ran and its
         * checks sent the call on (gesvdj, or the Gram path's refusal) */
        int levels, taken[4], defl_refused;
        int from_w; /* 1: the last was tn_cuda_svd_from_gram_rows (path: RAN_EIG or
                       RAN_DEFLATE where it took the call, else 0) */
        /* the symmetric eigensolutions of the last small SVD (or tn_cuda_syev):
         * how many the fast solver's repair of clustered vectors took, how
         * many went to cuSOLVER's syevd */
        int syev_repairs, syevd_runs;
        int filled; /* the columns the last deflated path's defl_fill built (0: none) */
        /* the eigensolutions whose values the last deflated path read ahead
         * of their checks (bit j: level j + 1), and how many times such a
         * call was redone without it because one of those checks failed */
        int early;
        unsigned early_redo;
    } ssvd;
};
/* 10 major + minor of the handle's device: 90 is where the sm_90a code
 * (the kernels guarded by S9_ON) runs; elsewhere those kernels' bodies
 * are empty, so their _ok tests take this, not major >= 9. */
static inline int tn_cuda_cc(const struct tn_cuda_ctx *c) { return 10 * c->cc_major + c->cc_minor; }

/* The stream a call's own kernels of the kind tn_side_begin moves go to. */
cudaStream_t tn_cuda_call_stream(const tn_call_t *cl);

/* The backend's communicators over NCCL (comm_nccl.c, src/dist/dist.h) */
int tn_cuda_comm_local(tcnla_comm_t *comms, const tcnla_handle_t *hs, int n);
int tn_cuda_comm_init_rank(tcnla_comm_t *comm, tcnla_handle_t h, int n, int rank,
                           const unsigned char *id);
int tn_cuda_comm_wrap(tcnla_comm_t *comm, tcnla_handle_t h, void *native);

/* ---- the CUDA backend's operations (cuda_backend.c puts them in tn_cuda_ops) */
void tn_cuda_destroy(tcnla_handle_t h);
int tn_cuda_malloc(tcnla_handle_t h, void **p, size_t bytes);
int tn_cuda_scratch_malloc(tcnla_handle_t h, void **p, size_t bytes);
int tn_cuda_scratch_free(tcnla_handle_t h, void *p);
size_t tn_cuda_workspace_bytes(tcnla_handle_t h);
size_t tn_cuda_pool_idle_bytes(tcnla_handle_t h);
int tn_cuda_free(tcnla_handle_t h, void *p);
int tn_cuda_memcpy(tcnla_handle_t h, void *dst, const void *src, size_t bytes,
                   tcnla_memcpy_kind_t kind);
int tn_cuda_set_stream(tcnla_handle_t h, void *stream);
int tn_cuda_synchronize(tcnla_handle_t h);
/* The second lane (c->lane): _fork makes it wait for what the handle's
 * stream has queued (creating it on first use); TCNLA_SUCCESS, or an error
 * with nothing changed (the caller then keeps to the handle's stream).
 * _join makes the handle's stream wait for what the lane has queued. */
int tn_cuda_lane_fork(struct tn_cuda_ctx *c);
int tn_cuda_lane_join(struct tn_cuda_ctx *c);
int tn_cuda_side_begin(tn_call_t *cl);
int tn_cuda_side_end(tn_call_t *cl);
int tn_cuda_side_join(tn_call_t *cl);
int tn_cuda_side_fill_blocks(tn_call_t *cl);
int tn_cuda_defer_begin(tn_call_t *cl);
int tn_cuda_defer_end(tn_call_t *cl, int *flags, const void *extra, void *host, size_t bytes);
int tn_cuda_defer_mark(tn_call_t *cl);
int tn_cuda_defer_marked(tn_call_t *cl, int *flags);
int tn_cuda_defer_close(tn_call_t *cl);
void tn_cuda_defer_hold(tn_call_t *cl, int hold);
int tn_cuda_orthonormalize_deferred(tn_call_t *cl, tcnla_orth_t method, int64_t m, int64_t n,
                                     float *Y, int64_t ldy, int slot);
/* (Y16: CholeskyQR in FP64 writes Q rounded to FP16 into Y and Y16 in its
 * last pass; with the other methods, tn_orthonormalize_f16 rounds after) */
int tn_cuda_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                           int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                           tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16);
int tn_cuda_random_fill(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                        uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                        int64_t ld);
int tn_cuda_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                        float *Vk, float *Sk, int scale_vk);
/* tn_cuda_small_svd_t with the path chosen (src/backend/cuda/small_svd_cuda.c):
 * TN_SSVD_AUTO the backend's rule (the eigensolution of R R^T where s_k >=
 * 1e-4 s_1, else the deflated Gram path from that eigensolution, the
 * tuning's small_svd_deflate, else or where its checks refuse gesvdj);
 * TN_SSVD_DEFLATE the deflated path always (gesvdj where it refuses);
 * TN_SSVD_JACOBI the one-sided Jacobi path,
 * preconditioned by that eigensolution's vectors, for l <= TN_JSVD_MAXL
 * (gesvdj where it fails; the tuning's small_svd_jacobi); TN_SSVD_JACOBI_PLAIN the Jacobi path on R^T
 * itself (no eigensolution, no preconditioner); TN_SSVD_GESVDJ cuSOLVER's
 * gesvdj alone. h->cuda->ssvd says what ran. */
enum {
    TN_SSVD_AUTO = 0,
    TN_SSVD_JACOBI = 1,
    TN_SSVD_JACOBI_PLAIN = 2,
    TN_SSVD_GESVDJ = 3,
    TN_SSVD_DEFLATE = 4
};
enum { TN_SSVD_RAN_EIG = 1, TN_SSVD_RAN_JACOBI = 2, TN_SSVD_RAN_GESVDJ = 3, TN_SSVD_RAN_DEFLATE = 4 };
int tn_cuda_small_svd_path(tcnla_handle_t h, int path, int64_t l, int64_t k, const float *R,
                           float *Uk, float *Vk, float *Sk, int scale_vk);
/* RSVD's last step without W's QR, from the eigensolution of W^T W in FP64
 * (src/backend/cuda/small_svd_cuda.c): W = B^T (n x l, handle memory) gives Xk
 * (l x k, leading dimension l; U = Q Xk), Sk (k) and VT (k x n, ldvt);
 * below s_k = 1e-4 s_1 the deflated Gram path (not with dist);
 * TN_GRAM_NOT_TAKEN where that is off or refuses, or the eigensolver fails
 * (nothing written but, where the deflated path's check refused, Xk, Sk,
 * VT and what `then` writes): the QR path then runs. _rows: trans, VT
 * written transposed (n x k, ldvt >= n); dist, W's rows over the ranks of
 * dist->comm; then (may be NULL), the caller's next work on Xk (the
 * randomized SVD's U = Q Xk), run where the call is taken: in the deflated
 * path queued behind the copy of its last check's flags, ahead of the wait
 * for them. */
int tn_cuda_svd_from_gram(tcnla_handle_t h, int64_t n, int64_t l, int64_t k, const float *W,
                          int64_t ldw, float *Xk, float *Sk, float *VT, int64_t ldvt);
int tn_cuda_svd_from_gram_rows(tcnla_handle_t h, int64_t n, int64_t l, int64_t k,
                               const float *W, int64_t ldw, float *Xk, float *Sk, float *VT,
                               int64_t ldvt, int trans, tn_call_t *dist, const tn_then_t *then);
/* W^T W (W n x l, ld ldw, handle memory) queued on the handle's stream,
 * where tn_cuda_svd_from_gram_rows (one GPU, k) would form it first: that
 * call on the same W, l and k, with nothing asking for the workspace in
 * between, takes it instead. Where the path would not form it (off in the
 * tuning, k out of range), nothing. For a caller about to wait on the host
 * (the randomized SVD's deferred verdicts), so that the GPU forms it
 * meanwhile. W must not change before that call. */
int tn_cuda_gram_ahead(tcnla_handle_t h, int64_t n, int64_t l, int64_t k, const float *W,
                       int64_t ldw);
/* The small SVD's symmetric eigensolver (eig_solve in small_svd_cuda.c)
 * on the n x n G (handle memory, upper triangle, ld n; not written): lam
 * (n, ascending) and X (n x n) in handle memory; *fast = 1 where the
 * solver of syev_kernels.cu gave them, 0 where cuSOLVER's syevd did. xr:
 * the columns of values |lam_j| < xr max|lam| need only be an orthonormal
 * basis of their invariant subspace (0: every column an eigenvector).
 * TN_GRAM_NOT_TAKEN where G's largest eigenvalue is not positive. */
int tn_cuda_syev(tcnla_handle_t h, int n, const double *G, double xr, double *X, double *lam,
                 int *fast);
/* CholeskyQR's FP64 Gram matrix (src/backend/cuda/orth_cuda.c): the upper
 * triangle of Yw^T Yw (m x n, ld ldw) into G (n x n, zeros below), with
 * tn_gram64_nslab(m) n x n partials in P; dg (may be NULL) its diagonal;
 * probe (may be NULL, ld ldw): the FP64 guard's probe rows (cholguard.h) */
int64_t tn_gram64_nslab(int64_t m);
/* Whether CholeskyQR's single pass and the small SVD take n columns to
 * the FP64 Tensor Core kernels (tn_cu_gram_dmma, tn_cu_gemm_dmma): Hopper,
 * from TN_TRINV_NB + 1 to TN_DMMA_GEMM_MAX columns (orth_cuda.c). */
int tn_cuda_dmma_cols(const struct tn_cuda_ctx *c, int64_t n);
int tn_cuda_gram64(tcnla_handle_t h, int64_t m, int64_t n, const double *Yw, int64_t ldw,
                   double *P, double *G, double *dg, double *probe);
/* The factor R of G = R^T R and Inv = R^-1 (src/backend/cuda/orth_cuda.c;
 * n x n each, ld n, n <= TN_TRINV_FULL_MAX): one cluster launch
 * (tn_cu_potrf_inv_cluster) where it runs, else tn_cu_potrf_upper then
 * tn_cu_trinv_full. G's upper triangle is read (and may be used up); R's
 * strictly lower part is not written; diag, info and bar as
 * tn_cu_potrf_upper's. Where the factorization breaks down (info != 0)
 * Inv holds NaN (the cluster launch) or the inverse of R as far as it was
 * written. */
int tn_cuda_potrf_inv(struct tn_cuda_ctx *c, int n, double *G, double *R, double *diag,
                      int *info, unsigned *bar, double *Inv);
int tn_cuda_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A,
                       int64_t lda, const float *E, int64_t lde, float *D, uint16_t *D16,
                       int64_t ldd);
/* D16 = fp16(ascale A - X Y^T) in one fused kernel (orth_cuda.c) */
int tn_cuda_lowrank_residual16(tcnla_handle_t h, int64_t m, int64_t n, int64_t k,
                               const float *A, int64_t lda, const float *X, int64_t ldx,
                               const float *Y, int64_t ldy, uint16_t *D16, int64_t ldd,
                               float ascale);
/* Y (FP16 bits) = fp16(scale X) and, when maxabs is not NULL, max |X| (NaN
 * where X holds one; a host synchronisation) (orth_cuda.c) */
int tn_cuda_to_f16_scaled(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                          int64_t ld, float scale, uint16_t *Y, int64_t ldy, float *maxabs);
int tn_cuda_scale_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                         int64_t ld);
int tn_cuda_scale_exponents(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                            int64_t ld, int by_col, int *e);
int tn_cuda_scale_copy(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                       const int *er, const int *ec, float *Y, int64_t ldy);
int tn_cuda_sumsq_to(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                     double *dev);
int tn_cuda_sumsq(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                  double *out);
int tn_cuda_f16_in_place(tcnla_handle_t h, tcnla_op_t ta, int64_t m, int64_t n, int64_t k,
                         const float *A, int64_t lda);
int tn_cuda_unscale_update(tcnla_handle_t h, int64_t m, int64_t n, float alpha, const float *T,
                           int64_t ldt, const int *er, const int *ec, float beta, float *C,
                           int64_t ldc);
int tn_cuda_to_f16(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                   uint16_t *Y, int64_t ldy);
int tn_cuda_gemm_f16(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                     int64_t k, float alpha, const uint16_t *A, int64_t lda, const uint16_t *B,
                     int64_t ldb, float beta, float *C, int64_t ldc);
int tn_cuda_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                          float *X, int64_t ld);
int tn_cuda_trust(tn_call_t *cl, const float *A, int64_t ld, int64_t rows, int64_t cols,
                  const tcnla_gemm_method_t *meths, int nm);
int tn_cuda_gemm_trusting(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                          int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                          const float *B, const uint16_t *B16, int64_t ldb, float *C,
                          int64_t ldc, const tcnla_gemm_method_t *meths, int nm, int *done);
int tn_cuda_trust_settle(tn_call_t *cl, int *done);
int tn_cuda_hosvd_fused_possible(tcnla_handle_t h, int64_t I1, int64_t J1, int64_t J2);
int tn_cuda_hosvd_fused(tn_call_t *cl, int64_t I1, int64_t I2, int64_t T, const float *A,
                        const float *Q, int64_t J1, const uint16_t *Om, int64_t J2, float *Out,
                        float *W, int *done);
int tn_cuda_gemm(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                 int64_t ldc);
/* tn_sgemm_batched's CUDA part (src/backend/cuda/gemm_cuda.c), after its
 * checks, batch >= 2: a status, or TN_BATCH_LOOP with C untouched. */
int tn_cuda_gemm_batched(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                         tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *A, int64_t lda, int64_t sa, const float *B,
                         const uint16_t *B16, int64_t ldb, int64_t sb, float beta, float *C,
                         int64_t ldc, int64_t sc, int64_t batch, int reduce);
/* Ozaki scheme on the CUDA backend (src/backend/cuda/ozaki_cuda.c), device
 * operands, m, n > 0, after argument checking: method OZAKI_FP16 / OZAKI_INT8
 * (or NATIVE_FP64: cuBLAS DGEMM). out_prec 64: A, B, C are FP64 (tcnla_dgemm);
 * 32: FP32 (tcnla_sgemm; widened on the device, C rounded once). Bitwise the
 * result of tn_cpu_ozaki on the same data and options. */
int tn_cuda_ozaki(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                  int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                  const void *B, int64_t ldb, double beta, void *C, int64_t ldc, int out_prec);

/* The CUDA backend (src/backend/cuda/ozaki2_cuda.c): A, B, C device memory,
 * FP32 (f32 = 1; out_prec 32) or FP64, same preconditions except finiteness:
 * when op(A) or op(B) holds Inf or NaN it returns TN_OZ2_NONFINITE (> 0)
 * without writing C. TCNLA_ERR_NOT_SUPPORTED beyond 2096160 rows / columns. */
#define TN_OZ2_NONFINITE 2
int tn_cuda_ozaki2(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                   int64_t k, double alpha, const void *A, int64_t lda, const void *B,
                   int64_t ldb, double beta, void *C, int64_t ldc, int f32, int out_prec);

/* The workspace budget of the Ozaki schemes' blocking (ozaki_cuda.c). */
size_t tn_oz_budget(tcnla_handle_t h);

/* Grow-only device workspace of at least `bytes` (NULL on failure). Growing
 * waits for the handle's stream first, so in-flight work never loses it. */
void *tn_cuda_workspace(struct tn_cuda_ctx *c, size_t bytes);
/* Maps a failed runtime call to a status (clears the non-sticky error). */
int tn_cuda_err(cudaError_t e);
/* One region of device memory to read to the host (tn_cuda_read_back). */
typedef struct {
    void *dst;       /* host */
    const void *src; /* device */
    size_t bytes;
} tn_cuda_read_t;
/* Reads n regions after the work queued on the handle's stream, with one
 * wait: copied into the handle's pinned buffer (grown where they do not
 * fit), which queues them back to back, then to their host destinations.
 * (A copy into pageable memory is staged by the driver, which waits for it:
 * two of them cost the host a round trip each.) Where the buffer cannot
 * grow, the copies go to their destinations directly. */
int tn_cuda_read_back(struct tn_cuda_ctx *c, const tn_cuda_read_t *r, int n);
/* cuBLAS (cuBLASLt) and cuSOLVER statuses: TCNLA_SUCCESS, TCNLA_ERR_ALLOC
 * when the library could not allocate, else TCNLA_ERR_CUBLAS /
 * TCNLA_ERR_CUSOLVER (cuda_libs.c). */
int tn_cublas_st(cublasStatus_t s);
int tn_cusolver_st(cusolverStatus_t s);

/* Pieces of one workspace allocation, each TN_WS_ALIGN-byte aligned:
 * tn_carve returns the next `bytes` (rounded up by tn_ws_align) from
 * base + off, or NULL when they would pass cap (the size accounting, which
 * must add tn_ws_align of each piece, was wrong: a bug). */
#define TN_WS_ALIGN 256
static inline size_t tn_ws_align(size_t x) {
    return (x + TN_WS_ALIGN - 1) & ~(size_t)(TN_WS_ALIGN - 1);
}
typedef struct {
    char *base;
    size_t off, cap;
} tn_carve_t;
static inline void *tn_carve(tn_carve_t *c, size_t bytes) {
    if (c->off + tn_ws_align(bytes) > c->cap) return NULL;
    void *p = c->base + c->off;
    c->off += tn_ws_align(bytes);
    return p;
}

/* C (m x n, int32, ldc) = A^T B, A (k x m) and B (k x n) int8 column-major,
 * exact for k <= TN_OZ2_KBLOCK; cuBLASLt with the algorithm of each shape
 * chosen by timing its first products (i8gemm_cuda.c). */
int tn_cuda_i8gemm(struct tn_cuda_ctx *c, int m, int n, int k, const signed char *A, int lda,
                   const signed char *B, int ldb, int *C, int ldc);
int tn_cuda_i8gemm_choice(struct tn_cuda_ctx *c, int m, int n, int k, int *ncand, float *ms);
void tn_cuda_i8_release(struct tn_cuda_ctx *c);

/* Ozaki scheme II's residue products of one block (ozaki2_cuda.c): for the
 * moduli l < cs->n, Q[(l nbp + j) mbp + i] = (q_l RA_l[i] . RB_l[j]) mod p_l
 * (uint8; RA[(l mbp + i) kp + kk], RB[(l nbp + j) kp + kk] int8, mbp, nbp,
 * kp multiples of 32). fused 1: the sm_90a kernel for all moduli in
 * clusters of two blocks (one block per tile where those cannot launch),
 * 2: one block per tile (tn_cuda_oz2_fused_ok must hold for both; P unused,
 * may be NULL); 0: per modulus
 * and k-block of at most TN_OZ2_KBLOCK a cuBLASLt INT8 product into P
 * (int32, mbp x nbp) and its reduction. The same Q bit for bit. */
int tn_cuda_oz2_products(struct tn_cuda_ctx *c, int fused, const tn_oz2_consts_t *cs,
                         int64_t mbp, int64_t nbp, int64_t kp, const signed char *RA,
                         const signed char *RB, int *P, unsigned char *Q);
/* 1 where the fused kernel can run these products on this device (sm_90a
 * kernel loaded, its shared memory, kp <= TN_OZ2_KBLOCK), the tuning aside */
int tn_cuda_oz2_fused_ok(const struct tn_cuda_ctx *c, int nmod, int64_t mbp, int64_t nbp,
                         int64_t kp);
#endif

/* ------------------------------------------------------------ launchers */
/* All launchers return a cudaError_t value as int (0 = cudaSuccess) and
 * queue work on `stream`. Matrices are column-major with int64 sizes. */

/* Element conversions of a rows x cols matrix (leading dims lds / ldd). */
enum {
    TN_CONV_F32_TO_F16 = 0,  /* RN; finite -> Inf sets flag[0] */
    TN_CONV_F32_TO_TF32 = 1, /* RNA (cvt.rna.tf32.f32), result as FP32 */
    TN_CONV_F32_TO_F64 = 2,
    TN_CONV_F16_TO_F32 = 3,
    TN_CONV_F16_TO_F64 = 4,
    TN_CONV_F32_ROUND_F16 = 5, /* FP32 -> FP32 holding fp16_rn(x) (in place allowed) */
    TN_CONV_F64_TO_F32 = 6     /* RN */
};
int tn_cu_convert(int op, const void *src, int64_t lds, void *dst, int64_t ldd, int64_t rows,
                  int64_t cols, int *flag, cudaStream_t stream);
/* dst = (float)src^T, round to nearest: src rows x cols FP64 (ld lds), dst
 * cols x rows FP32 (ld ldd), through shared memory in 32 x 32 tiles */
int tn_cu_f64_to_f32_t(const double *src, int64_t lds, float *dst, int64_t ldd, int64_t rows,
                       int64_t cols, cudaStream_t stream);
/* F = fp16_rn(fp32_rn(src)) as FP32 and H = the same values in FP16 (one
 * pass; CholeskyQR's Q for randLRA's FP16 products). */
int tn_cu_f64_to_f32f16(const double *src, int64_t lds, float *F, int64_t ldf, uint16_t *H,
                        int64_t ldh, int64_t rows, int64_t cols, cudaStream_t stream);
/* The same for `batch` matrices src + z*ss -> dst + z*sd (strides in
 * elements of the source and destination types), one launch. */
int tn_cu_convert_batched(int op, const void *src, int64_t lds, int64_t ss, void *dst, int64_t ldd,
                          int64_t sd, int64_t rows, int64_t cols, int64_t batch, int *flag,
                          cudaStream_t stream);

/* TN_CONV_F64_TO_F32, skipped (dst untouched) when *skip != 0 on the
 * device: a deferred CholeskyQR writes Q only where it did not break down. */
int tn_cu_f64_to_f32_unless(const double *src, int64_t lds, float *dst, int64_t ldd,
                            int64_t rows, int64_t cols, const int *skip, cudaStream_t stream);

/* C = beta * C (beta == 0: C = 0 without reading it). */
/* D = A + E elementwise (FP32, RN), stored in FP32 (D) or rounded to FP16
 * (D16, when not NULL); D may be E. */
int tn_cu_add(const float *A, int64_t lda, const float *E, int64_t lde, int64_t rows,
              int64_t cols, float *D, uint16_t *D16, int64_t ldd, cudaStream_t stream);
/* D16 = fp16(A - X16 Y16^T) (src/backend/cuda/kernels/lowrank_residual.cu): ldx, ldy
 * multiples of 8, X16 and Y16 16-byte aligned, their rows up to ldx / ldy
 * readable; k >= 0 (k = 0: fp16(A)). */
/* Y = fp16(scale X), scale a power of two; max |X| atomically into *maxbits
 * (float bits) when not NULL (util.cu) */
int tn_cu_to_f16_scaled(const float *X, int64_t lds, uint16_t *Y, int64_t ldy, int64_t rows,
                        int64_t cols, float scale, unsigned *maxbits, cudaStream_t stream);
int tn_cu_lowrank_residual16(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                             const uint16_t *X16, int64_t ldx, const uint16_t *Y16, int64_t ldy,
                             uint16_t *D16, int64_t ldd, float ascale, cudaStream_t stream);
/* The same on Hopper (src/backend/cuda/kernels/lowrank_residual_sm90.cu, wgmma and
 * TMA) from the FP32 factors X (m x k, ldx) and Y (n x k, ldy), whose FP16
 * K-major copies go to Xt (m x kp) and Yt (n x kp), kp = k rounded up to 8.
 * _ok: 1 where that kernel runs (the sm_90a cubin, k >= 1, m % 8 == 0, A and
 * D16 16-byte aligned with lda % 4 == 0 and ldd % 8 == 0; the caller,
 * tn_cuda_lowrank_residual16_sm90_ok, also asks the tuning's lr_sm90). */
int tn_cu_lowrank_residual16_sm90_ok(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                                     const uint16_t *D16, int64_t ldd, size_t smem_optin);
int tn_cu_lowrank_residual16_sm90(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                                  const float *X, int64_t ldx, const float *Y, int64_t ldy,
                                  uint16_t *Xt, uint16_t *Yt, int64_t kp, uint16_t *D16,
                                  int64_t ldd, float ascale, cudaStream_t stream);
int tn_cu_scale(float beta, float *C, int64_t ldc, int64_t m, int64_t n, cudaStream_t stream);

/* C = (float)(alpha * R + beta * C) with R an m x n FP64 matrix (ld m),
 * computed in FP64 as the CPU backend does (C not read when beta == 0). */
/* The small SVD from an eigensolution (lam ascending, W the l x l
 * eigenvectors of M^T M): for i < k, pair l - 1 - i: Vs = W_i / s_i (FP64),
 * Vk = W_i (times s_i when scale; FP32), Sk = s_i (when not NULL), s = sqrt(lam);
 * all l x k, leading dimension l. */
int tn_cu_eig_to_svd(const double *W, const double *lam, int64_t l, int64_t k, int scale,
                     double *Vs, float *Vk, float *Sk, cudaStream_t stream);
/* The deflated small SVD's merge (small_svd_cuda.c defl_levels): for j <
 * taken, column l - 1 - j of Xo (l x l, ld l) and lo[l - 1 - j] from column
 * p of the level-ordered eigenvectors and values, those of T and mu (the
 * last level's, ld l) where p < bt, else of X and lam; p = src[r] - (j -
 * j0[r]) for the run r that holds j (j0 ascending from 0). */
#define TN_DEFL_RUNS 16
typedef struct {
    int n;
    int j0[TN_DEFL_RUNS], src[TN_DEFL_RUNS];
} tn_defl_runs_t;
int tn_cu_defl_merge(int l, int taken, const tn_defl_runs_t *runs, const double *X,
                     const double *lam, const double *T, const double *mu, int bt, double *Xo,
                     double *lo, cudaStream_t stream);
/* *flag (device) |= 1 where |F - I| > tol or NaN, F n x n (ld n).
 * _defl_refine: the deflated path's refinement (kernels/util.cu): from F =
 * U^T U (k x k) and lam (l, ascending: s_i = sqrt(lam[l - 1 - i])) the
 * k x k Qv = diag(s) (I + P) (times diag(s') where scale) and Qu =
 * diag(s) (I + P) diag(1 / s'), Sk = s' (FP32, may be NULL), *flag |= 1
 * where an s' is not positive and finite. */
int tn_cu_defl_refine(int64_t k, int64_t l, const double *F, const double *lam, double rho,
                      int scale, double *Qv, double *Qu, float *Sk, int *flag,
                      cudaStream_t stream);
int tn_cu_orth_check_tol(int64_t n, const double *F, double tol, int *flag, cudaStream_t stream);
int tn_cu_epilogue_f64(float alpha, const double *R, float beta, float *C, int64_t ldc,
                       int64_t m, int64_t n, cudaStream_t stream);
/* Exact scaling (kernels/scaling.cu; the backend operations of the same
 * names in src/core/backend.h, launched on the stream): e[v] for each row
 * (by_col 0) or column of X; Y = diag(2^er) X diag(2^ec); C = alpha
 * ldexpf(T, -(er_i + ec_j)) + beta C. */
int tn_cu_scale_exponents(const float *X, int64_t ld, int64_t rows, int64_t cols, int by_col,
                          int *e, int sm_count, cudaStream_t stream);
int tn_cu_scale_copy(const float *X, int64_t ld, int64_t rows, int64_t cols, const int *er,
                     const int *ec, float *Y, int64_t ldy, cudaStream_t stream);
int tn_cu_sumsq(const float *X, int64_t ld, int64_t rows, int64_t cols, double *out,
                cudaStream_t stream);
int tn_cu_unscale_update(int64_t m, int64_t n, float alpha, const float *T, int64_t ldt,
                         const int *er, const int *ec, float beta, float *C, int64_t ldc,
                         cudaStream_t stream);

/* The symmetric eigensolver of src/backend/cuda/kernels/syev_kernels.cu (driven by
 * eig_solve in src/backend/cuda/small_svd_cuda.c). _fast: the n x n G (its upper
 * or lower triangle, ldg; not written) = Q T Q^T, lam (ascending) T's
 * eigenvalues and Z (n x n, ld n) its eigenvectors, Q (n x n, ld n) at ws,
 * on the stream, *flag (device) zeroed: G's eigenvectors are Q Z; with
 * children 1 the vectors of groups of close values away from zero from
 * child representations (src/linalg/mrrr_child.h). ws holds
 * _ws(n) doubles, of which ws + n^2, + 2 n^2 and + 3 n^2 (n x n each) are
 * free for the checks once it has run. _orth_check: F = X^T X -> I - (F -
 * I) / 2, flag = 1 where |F - I| > 1e-6, not counting the rows and columns
 * of dropped columns where lam is not NULL (|lam_j| < xr max|lam|, which
 * _drop sets to zero in X). _resid_check: R = G X, flag = 1
 * where |R - X diag(lam)| > 32 n eps max|lam| in a column with |lam_j| >=
 * xr max|lam|, or lam is not ascending; X copied to Xout (which may be R:
 * each entry is read before it is written). _ok: 1 where it
 * runs (cc = tn_cuda_cc 90, n within one cluster's shared memory). */
int tn_cu_syev_fast_ok(int n, int cc, size_t smem_optin);
size_t tn_cu_syev_fast_ws(int n);
int tn_cu_syev_fast(int n, const double *G, int64_t ldg, int upper, double *Z, double *lam,
                    int *flag, double *ws, int children, size_t smem_optin, cudaStream_t stream);
/* tn_cu_syev_fast with lam also copied to lam_host (pinned, n doubles) as
 * soon as the bisection has written it, then ev recorded: the host may
 * wait for the values alone while T's vectors and what follows run */
int tn_cu_syev_fast_early(int n, const double *G, int64_t ldg, int upper, double *Z,
                          double *lam, int *flag, double *ws, int children, size_t smem_optin,
                          double *lam_host, cudaEvent_t ev, cudaStream_t stream);
int tn_cu_syev_orth_check(int n, double *F, const double *lam, double xr, int *flag,
                          cudaStream_t stream);
int tn_cu_syev_drop(int n, double *X, const double *lam, double xr, cudaStream_t stream);
/* The repair of clustered vectors (eig_repair in small_svd_cuda.c; n x n
 * and n x c matrices ld n, T = tridiag(e, d, e) as tn_cu_syev_fast leaves
 * it in its ws): _reach: reach[j] = the largest i > j with |F_ij| > tol
 * (F's lower triangle), else j, reach2 the same at tol2. _start: Y (n x c) = fixed start
 * vectors. _tmul: V = T Y. _place: Z's columns a .. a + c - 1 = P's (n x
 * c), lam[a + j] = mu[j] + shift (mu not NULL). _diag_sub: H (c x c, ld c)
 * minus s on its diagonal. _sym_full: S (n x n, ld n) the whole symmetric
 * matrix of G's upper (or lower) triangle (ld ldg), for a DGEMM where
 * cuBLAS's DSYMM is slower at these sizes. */
int tn_cu_syev_reach(int n, const double *F, double tol, double tol2, int *reach, int *reach2,
                     cudaStream_t stream);
int tn_cu_syev_start(int n, int c, double *Y, cudaStream_t stream);
/* Y (n x c, ld n, n <= 448) = _start's vectors, each projected twice off
 * Zo's columns z0 .. n - 1 (n x n, ld n; orthonormal), one block a column. */
int tn_cu_syev_start_proj(int n, int c, const double *Zo, int z0, double *Y,
                          cudaStream_t stream);
int tn_cu_syev_tmul(int n, const double *d, const double *e, int c, const double *Y, double *V,
                    cudaStream_t stream);
int tn_cu_syev_place(int n, int c, const double *P, const double *mu, double shift, double *Z,
                     double *lam, int a, cudaStream_t stream);
int tn_cu_syev_diag_sub(int c, double *H, double s, cudaStream_t stream);
int tn_cu_syev_sym_full(int n, const double *G, int64_t ldg, int upper, double *S,
                        cudaStream_t stream);
/* The one-sided Jacobi path's kernels (src/backend/cuda/kernels/jacobi_svd.cu,
 * the algorithm of src/linalg/jacobi_svd.h). Y, V: l x L (ld l, L = TN_JSVD_W
 * tn_jsvd_nblocks(l), columns past l zero), rotated in place until Y's
 * columns are orthogonal (Y0 = Y V^T), at most `inner` inner and maxsweeps
 * outer sweeps (fault, tests only, 0 in use: 1 negates the rotation
 * angles, 2 skips the convergence test); state: 8 ints of device memory
 * ([3] sweeps, [4] converged, [5] 1 for NaN / Inf, set by _out, and the
 * bits of _verify), bar one unsigned (the grid barrier); one
 * cooperative launch of tn_jsvd_nblocks(l) / 2 blocks (an error where they
 * cannot all be resident). _out: s (l doubles) = the column norms, then the
 * k largest as Uk = y_j / s_j, Vk = v_j (times s_j with scale), Sk (may be
 * NULL), FP32, ld l, descending. _eye: V = [I 0] (l x cols, ld l). */
int tn_cu_jsvd(int l, double *Y, double *V, int *state, unsigned *bar, int inner, int maxsweeps,
               int fault, int sm_count, cudaStream_t stream);
/* The check of the result before it is used: G = Y^T Y, F = V^T V (upper
 * triangles), P = M V (each l x l, ld l, the driver's DSYRKs and DGEMM);
 * state[5] |= 2 / 4 / 8 where Y's columns are not orthogonal, V not
 * orthonormal, or Y != M V (kernels/jacobi_svd.cu gives the bounds). */
int tn_cu_jsvd_verify(int l, const double *G, const double *F, const double *P, const double *Y,
                      int *state, cudaStream_t stream);
int tn_cu_jsvd_out(int l, int k, const double *Y, const double *V, double *s, int scale,
                   float *Uk, float *Vk, float *Sk, int *state, cudaStream_t stream);
int tn_cu_jsvd_eye(int l, int64_t cols, double *V, cudaStream_t stream);
int tn_cu_syev_resid_check(int n, const double *R, const double *X, const double *lam,
                           double xr, double *Xout, int *flag, cudaStream_t stream);

/* CholeskyQR in FP64 (src/backend/cuda/kernels/cholqr_kernels.cu). G (n x n) = the sum of
 * the nslab partials P (n x n each, packed), in order, on and above the
 * diagonal (P's strictly lower parts are not read; G gets zeros there);
 * diag (may be NULL) receives G's diagonal; probe (may be NULL, ld ldp)
 * the guard's TN_CHOL_PROBES rows z_k(j) sqrt(G_jj) (src/linalg/cholguard.h). */
int tn_cu_gram_reduce(const double *P, int64_t nslab, int64_t n, double *G, double *diag,
                      double *probe, int64_t ldp, cudaStream_t stream);
/* G = R^T R (upper triangles, both n x n with ld; G is used up), one
 * cooperative launch of at most sm_count blocks: R's upper triangle (its
 * strictly lower part untouched), diag (n) R's diagonal, info 0 or the
 * 1-based column of the first pivot that is not positive (as LAPACK's
 * potrf); bar is one unsigned of device memory for the grid barrier. */
int tn_cu_potrf_upper(int n, double *G, int64_t ld, double *R, double *diag, int *info,
                      unsigned *bar, int sm_count, cudaStream_t stream);
/* G = R^T R and S = R^-1 in one launch of one cluster of ceil(n / 32)
 * blocks (kernels/potrf_cluster.cu), n <= TN_POTRF_CLUSTER_MAX, where
 * tn_cu_potrf_inv_ok (cc = tn_cuda_cc 90, the shared memory): G
 * read only (its upper triangle, ld), R's upper triangle (ld ldr; its
 * strictly lower part untouched), diag and info as tn_cu_potrf_upper, Inv
 * = R^-1 as tn_cu_trinv_full writes it (ld n, zeros below the diagonal;
 * all NaN where info != 0). A CUDA error where the launch is refused
 * (tn_cuda_potrf_inv then runs tn_cu_potrf_upper and tn_cu_trinv_full). */
#define TN_POTRF_CLUSTER_MAX 288
int tn_cu_potrf_inv_ok(int n, int cc, size_t smem_optin);
int tn_cu_potrf_inv_cluster(int n, const double *G, int64_t ld, double *R, int64_t ldr,
                            double *diag, int *info, double *Inv, cudaStream_t stream);
/* CholeskyQR's breakdown test (tn_chol_ok) on the device: gdiag[0 .. n)
 * the Gram matrix's diagonal, gdiag[n .. 2n) the factor's, *info potrf's;
 * flag |= 2 when a Gram diagonal element is not finite, |= 1 when the
 * factor is not usable, and with probe (the solve's TN_CHOL_PROBES probe
 * rows, ld ldp), or with inv (R^-1, ld n, n <= TN_TRINV_FULL_MAX: the
 * probe rows formed and solved here; probe NULL), |= 4 when Q is too far from orthonormal
 * (tn_chol64_loss_within) though the factor passed (and the flag held
 * nothing before). assign: *flag = those bits instead of ORing
 * them in. One small launch, no host synchronisation. */
int tn_cu_chol_verdict(const double *gdiag, const int *info, int n, double u,
                       const double *probe, int64_t ldp, const double *inv, int *flag,
                       int assign, cudaStream_t stream);
/* Products on the FP64 Tensor Cores (kernels/cholqr_dmma.cu), where
 * tn_cu_dmma_ok(tn_cuda_cc): the slab partials of Y^T Y (Y m x n, FP32, or
 * FP64 where f64; ld ldy) over nslab row slabs (slab s: rows s (m /
 * nslab) .., the last one to m) into P as tn_cu_gram_reduce reads them (on
 * and above the diagonal); and C = A B (A m x l FP32, lda; B l x k FP64,
 * ldb; upper: B zero below its diagonal, its 8 x 8 blocks wholly below it
 * not read; C FP32, m x k, or
 * k x m where transc, ldc; C may be A where k = l and !transc: Y <- Y
 * R^-1 in place), FP64 accumulation, l and k <= TN_DMMA_GEMM_MAX, nothing
 * written where flag is not NULL and *flag is not 0 when the kernel runs. */
#define TN_DMMA_GEMM_MAX 384
int tn_cu_dmma_ok(int cc);
int tn_cu_gram_dmma(const void *Y, int f64, int64_t ldy, int64_t m, int64_t n, int64_t nslab,
                    double *P, cudaStream_t stream);
int tn_cu_gemm_dmma(const float *A, int64_t lda, int64_t m, int64_t l, int64_t k,
                    const double *B, int64_t ldb, int upper, float *C, int64_t ldc, int transc,
                    const int *flag, cudaStream_t stream);
/* tn_cu_gemm_dmma with C in FP64 (C is not A; B full; no flag) */
int tn_cu_gemm_dmma64(const float *A, int64_t lda, int64_t m, int64_t l, int64_t k,
                      const double *B, int64_t ldb, double *C, int64_t ldc, int transc,
                      cudaStream_t stream);
/* The inverses of the diagonal blocks of the n x n upper triangular R (ld
 * ldr), TN_TRINV_NB x TN_TRINV_NB each: block b (rows and columns b NB ..)
 * at Inv + b NB^2 with ld NB, zeros below its diagonal and past n. */
#define TN_TRINV_NB 128
int tn_cu_trinv_blocks(int n, const double *R, int64_t ldr, double *Inv, cudaStream_t stream);
/* The whole inverse of the n x n upper triangular R (ld ldr), n at most
 * TN_TRINV_FULL_MAX, into Inv (ld n, zeros below the diagonal). */
#define TN_TRINV_FULL_MAX 384
int tn_cu_trinv_full(int n, const double *R, int64_t ldr, double *Inv, cudaStream_t stream);
/* The upper triangle of G (n x n) with zeros below, into D (FP64) and / or F
 * (FP32), either may be NULL. */
int tn_cu_upper_copy(int64_t n, const double *G, int64_t ldg, double *D, int64_t ldd, float *F,
                     int64_t ldf, cudaStream_t stream);

/* Checks of the vectors of a stored rows x cols FP32 matrix: the columns
 * (vec_is_col = 1) or the rows (0). flags[1] |= 1 when an element is NaN or
 * Inf. With check_kind >= 0 also the range check of tn_range_ok: every
 * element's representation error under check_kind (TN_RCHK_*) must be at
 * most 2^-tol_bits * max|vector| and finite, else flags[2] |= 1.
 * flags (3 ints) and scratch are device memory. */
enum {
    TN_RCHK_NONE = -1,
    TN_RCHK_MARKIDIS = 0, /* = TCNLA_SPLIT_MARKIDIS */
    TN_RCHK_HALFHALF = 1, /* = TCNLA_SPLIT_HALFHALF */
    TN_RCHK_TF32TF32 = 2, /* = TCNLA_SPLIT_TF32TF32 */
    TN_RCHK_F16 = 3,      /* single FP16 RN conversion */
    TN_RCHK_TF32 = 4      /* single TF32 RNA conversion */
};
/* 1 when every element in FP16's normal range (or 0) passes the range check
 * of `kind` at tol_bits without computing its error (tn_f16_normal_or_zero
 * in split.cuh): halfhalf represents such x within 2^-22 |x| (lo normal) or
 * 2^-36 <= 2^-22 |x| (lo subnormal), a single FP16 within 2^-11 |x|. */
/* An FP16 kind (MARKIDIS, HALFHALF, F16): its errors are exact in FP32. */
static inline int tn_rchk_is_f16_kind(int kind) {
    return kind == TN_RCHK_MARKIDIS || kind == TN_RCHK_HALFHALF || kind == TN_RCHK_F16;
}
static inline int tn_rchk_fast(int kind, int tol_bits) {
    return (kind == TN_RCHK_HALFHALF && tol_bits <= 21) || (kind == TN_RCHK_F16 && tol_bits <= 10);
}
/* 2^tol E for an FP16 kind: E, the largest error of an element below
 * FP16's normal range (2^-25 for one FP16, 2^-36 for the splits), so that
 * an element of at least this passes the kind element by element and a
 * vector whose largest |x| is at least this passes it whatever its small
 * elements are (the bounded pass of tn_cu_trust_check, util.cu). */
static inline float tn_trust_small(int kind, int tol_bits) {
    return ldexpf(1.0f, tol_bits - (kind == TN_RCHK_F16 ? 25 : 36));
}
int tn_cu_check_f32(const float *X, int64_t ld, int64_t rows, int64_t cols, int vec_is_col,
                    int check_kind, int tol_bits, int *flags, void *scratch, cudaStream_t stream);
/* Bytes of device scratch tn_cu_check_f32 needs for nvec vectors. */
size_t tn_cu_check_scratch(int64_t nvec);
/* The check in three steps, for a pass that reads the matrix anyway (the
 * pre-split pass of tc_gemm_sm90_ps.cu): begin zeroes the per-vector
 * maxima (vmx, verr, in scratch), the pass folds tn_check_elem of every
 * element of vector v into vmx[v] / verr[v] (atomic maxima), end sets the
 * flags. The same flags as tn_cu_check_f32 (maxima do not depend on order). */
int tn_cu_check_begin(int64_t nvec, int check_kind, void *scratch, uint32_t **vmx, double **verr,
                      cudaStream_t stream);
int tn_cu_check_end(int64_t nvec, int check_kind, int tol_bits, const void *scratch, int *flags,
                    cudaStream_t stream);
/* flags[1] |= 1 when any FP16 element (bit patterns) is NaN or Inf. */
int tn_cu_check_f16(const uint16_t *X, int64_t ld, int64_t rows, int64_t cols, int *flags,
                    cudaStream_t stream);
/* Both checks over a strided batch of `batch` matrices X + z*stride, each
 * checked on its own vectors (batch * nvec of them: scratch for
 * tn_cu_check_scratch(batch * nvec)), in one pass of launches. */
int tn_cu_check_f32_batched(const float *X, int64_t ld, int64_t stride, int64_t rows,
                            int64_t cols, int64_t batch, int vec_is_col, int check_kind,
                            int tol_bits, int *flags, void *scratch, cudaStream_t stream);
int tn_cu_check_f16_batched(const uint16_t *X, int64_t ld, int64_t stride, int64_t rows,
                            int64_t cols, int64_t batch, int *flags, cudaStream_t stream);

/* Kinds of the element-wise check of a trusted operand (tn_cu_trust_check;
 * folded into Hopper's n64 kernel, tn_sm90.h): an element x fails kind i
 * when |represented_i(x) - x| > scale[i] |x| (scale = 2^-tol_bits) under
 * kind[i] (TN_RCHK_*, i < n <= 4). Passing it means passing
 * tn_cu_check_f32's range check for every vector of every layout of those
 * elements. */
typedef struct {
    int n;
    int kind[4];
    double scale[4];
    int fast[4]; /* 1: FP16's normal range passes unseen (util.cu: HALFHALF with
                    tol <= 21, F16 with tol <= 10) */
} tn_elem_kinds_t;
/* Both checks in one pass, for FP16 kinds only (MARKIDIS, HALFHALF, F16,
 * tol_bits <= 26; else cudaErrorInvalidValue): flags[0] |= 1 when an
 * element is NaN or Inf, flags[1 + i] |= 1 when some element fails kind i;
 * and for every kind i (tol_bits[i]) the flags of tn_cu_check_f32 on the
 * rows at flags[8 + 6 i + 1 .. 2], on the columns at flags[8 + 6 i + 4 .. 5].
 * scratch: tn_cu_trust_check_scratch(rows, cols) bytes of device memory.
 * bounded (every kind fast, else cudaErrorInvalidValue): the same flags
 * from the vectors' magnitudes alone, except flags[1 + i] = some nonzero
 * |x| below 2^tol E (which the exact failures imply), where flags[6] and
 * flags[7] are both 0; else the exact pass must run (util.cu). */
size_t tn_cu_trust_check_scratch(int64_t rows, int64_t cols);
int tn_cu_trust_check(const float *X, int64_t ld, int64_t rows, int64_t cols,
                      const tn_elem_kinds_t *kk, const int *tol_bits, int bounded, int *flags,
                      void *scratch, int sm_count, cudaStream_t stream);

/* The Tensor Core GEMM kernels (sm_80+): C = alpha * op(A) op(B) + beta * C.
 * A is FP32; B is FP32 (TCEC, MARKIDIS) or FP16 bits (SHGEMM). A and B
 * must be 16-byte aligned with lda % 4 == 0 and ldb % 4 == 0 (FP32) or
 * ldb % 8 == 0 (FP16). */
enum {
    TN_KMODE_TCEC_F16 = 0,
    TN_KMODE_MARKIDIS_F16 = 1,
    TN_KMODE_SHGEMM_F16 = 2,
    TN_KMODE_TCEC_TF32 = 3,
    TN_KMODE_SHGEMM_TF32 = 4,
    TN_KMODE_COUNT = 5
};
/* Dynamic shared memory the kernel of `mode` needs; big = 1 for the
 * Hopper configuration (deeper pipeline), 0 otherwise. */
size_t tn_cu_tc_gemm_smem(int mode, int big);
/* Which configuration the kernels loaded for the current device use
 * (1 = big), or a negative cudaError_t. */
int tn_cu_tc_gemm_config(void);
/* Split-K: how many k-slices the kernels use for this shape on a GPU
 * with sm_count multiprocessors (1 when the m x n tiles fill the GPU). */
int tn_cu_tc_gemm_splits(int64_t m, int64_t n, int64_t k, int sm_count);
/* With splits > 1, P (splits * m * n floats of device memory) holds each
 * slice's result before a reduction in slice order adds them (FP32, RN)
 * and applies alpha / beta. */
int tn_cu_tc_gemm(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                  const float *A, int64_t lda, const void *B, int64_t ldb, float beta, float *C,
                  int64_t ldc, int splits, float *P, size_t smem_limit, cudaStream_t stream);
/* Strided batches on the same kernels, one launch (grid z: the products;
 * batches over 65535 in several): for z < batch, A_z = A + z*sa,
 * B_z = B + z*sb, C_z = C + z*sc (strides in elements, each matrix aligned
 * as above):
 *   reduce = 0: C_z = alpha * op(A_z) op(B_z) + beta * C_z;
 *   reduce = 1: C = alpha * sum_z op(A_z) op(B_z) + beta * C, computed as
 *               one product whose k-tiles run through the matrices in turn
 *               (each one's k tail zero-filled), split-K over all of them.
 * P: reduce ? splits * m * n : batch * splits * m * n floats. */
int tn_cu_tc_gemm_batched(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k,
                          float alpha, const float *A, int64_t lda, int64_t sa, const void *B,
                          int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                          int64_t batch, int reduce, int splits, float *P, size_t smem_limit,
                          cudaStream_t stream);
/* tn_cu_tc_gemm_splits for such a batch (reduce: the k-tiles of all the
 * products count; otherwise the tiles of all of them). */
int tn_cu_tc_gemm_splits_batched(int64_t m, int64_t n, int64_t k, int64_t batch, int reduce,
                                 int sm_count);
/* C_z = alpha * (P_z[0] + ... + P_z[splits-1]) + beta * C_z for z < batch
 * (P_z = P + z*splits*m*n, each slice m x n with ld m; C_z = C + z*sc), the
 * slices added in order in FP32 (RN); C not read when beta == 0. */
int tn_cu_splitk_reduce(int splits, const float *P, int64_t m, int64_t n, float alpha, float beta,
                        float *C, int64_t ldc, int64_t sc, int64_t batch, cudaStream_t stream);

/* Test hook: the split the kernels use (kind = tcnla_split_t), n elements
 * in device memory, hi / lo as FP32 values. */
int tn_cu_debug_split(int kind, const float *x, float *hi, float *lo, int64_t n,
                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
