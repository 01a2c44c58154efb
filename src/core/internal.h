/* Internal declarations shared by the library's modules (not installed).
 * Internal functions carry the tn_ prefix and are hidden from the shared
 * library's symbol table by -fvisibility=hidden. */
#ifndef TCNLA_INTERNAL_H
#define TCNLA_INTERNAL_H

#include "tcnla.h"
#include <stddef.h>
#include <stdint.h>

struct tn_cuda_ctx; /* defined by the CUDA backend (src/backend/cuda/tn_cuda.h) */

#include "core/backend.h"
#include "core/call.h"

#include <pthread.h>

struct tcnla_handle_s {
    const tn_backend_ops *ops;        /* the backend's table (src/core/backend.h) */
    tcnla_backend_t backend;          /* CPU or CUDA, never AUTO */
    int device;                       /* CUDA device ordinal; -1 on the CPU backend */
    pthread_mutex_t lock;             /* held by every public call (TN_GUARD) */
    tcnla_gemm_method_t method;       /* handle default for TCNLA_GEMM_DEFAULT */
    tcnla_range_policy_t range_policy;
    tcnla_tc_model_t model;           /* CPU Tensor Core model parameters */
    char device_name[256];
    void *host_ws;                    /* grow-only host workspace */
    size_t host_ws_bytes;
    struct tn_cuda_ctx *cuda;         /* NULL on the CPU backend */
    tcnla_ozaki_opts_t ozaki;         /* options of the Ozaki scheme */
    tcnla_tuning_t tuning;            /* the backend's path switches (src/core/tuning.c) */
    struct {                          /* sizes of live tcnla_malloc blocks (open addressing) */
        void **keys;
        size_t *sizes;
        unsigned char *scratch;       /* 1: a driver's scratch block, 0: from tcnla_malloc */
        size_t cap, count;
        size_t live, peak_live;
    } mem;
};

/* Every public entry point that takes a handle, after checking that it is
 * not NULL: TN_GUARD(h) takes the handle's lock and makes its device
 * current; both are given back when the function returns, whichever way. */
typedef struct {
    tcnla_handle_t h;
    int saved;
} tn_guard_t;
tn_guard_t tn_guard_enter(tcnla_handle_t h);
void tn_guard_leave(tn_guard_t *g);
#define TN_GUARD(h)                                                                            \
    tn_guard_t tn_guard_ __attribute__((cleanup(tn_guard_leave), unused)) = tn_guard_enter(h)

/* tcnla_tuning_default() with the environment's overrides (docs/api.md,
 * "Tuning"): the library's one reading of the environment, at tcnla_create. */
void tn_tuning_from_env(tcnla_tuning_t *t);

/* Grow-only host workspace of the handle (never shrinks; freed with the
 * handle). Returns NULL when the allocation fails. */
void *tn_host_workspace(tcnla_handle_t h, size_t bytes);

/* Argument checking of the BLAS-shaped GEMMs; returns 0 or -i. */
int tn_check_gemm_args(tcnla_handle_t h, tcnla_op_t transa, tcnla_op_t transb, int64_t m,
                       int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                       int64_t ldb, const void *C, int64_t ldc);

/* The checked fronts of the public calls, for callers that already hold
 * the handle's lock and have a call context (the drivers): the same
 * arguments, checks and statuses as tcnla_sgemm (B FP32, B16 NULL) or
 * tcnla_shgemm (B NULL, B16 FP16 bits), tcnla_orthonormalize,
 * tcnla_random_fill (f16 = 0, X float *) and tcnla_random_fill_f16
 * (f16 = 1, X uint16_t *); products counted in cl->info. */
int tn_sgemm(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t transa, tcnla_op_t transb,
             int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
             const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
             int64_t ldc);
int tn_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                      int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                      tcnla_orth_t *used);
int tn_random_fill(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                   uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                   int64_t ld);
/* Strided-batched SGEMM / SHGEMM (src/gemm/gemm.c), for t < batch with
 * A_t = A + t*sa, B_t = B + t*sb (or B16 + t*sb: the SHGEMM form of
 * tcnla_shgemm, B NULL), C_t = C + t*sc (strides in elements, >= 0):
 *   reduce = 0: C_t = alpha op(A_t) op(B_t) + beta C_t;
 *   reduce = 1: C = alpha sum_t op(A_t) op(B_t) + beta C (sc unused).
 * The arguments mean what they mean for tcnla_sgemm / tcnla_shgemm (the same
 * checks and statuses; -11, -15, -19, -20 for negative sa, sb, sc, batch,
 * -13 when both B and B16 are given).
 * Each product gets the semantics of a separate call: the CUDA backend
 * checks all of A's and B's matrices in one pass (one synchronisation) and
 * runs the batch in one launch when every product would run as requested;
 * otherwise, and on the CPU backend, the products run one by one (a reduce
 * as C = alpha P_0 + beta C, then C = alpha P_t + C). Results match the
 * separate calls up to the order of the summation. */
int tn_sgemm_batched(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t transa,
                     tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *A, int64_t lda, int64_t sa, const float *B, const uint16_t *B16,
                     int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                     int64_t batch, int reduce);
/* A backend's "not taken: run the batch product by product". */
#define TN_BATCH_LOOP TN_NOT_TAKEN

/* Within one driver call (tcnla_rsvd, tcnla_hosvd): check the operand A
 * (rows x cols, ld) once for the nm methods that will multiply by it, so
 * that their products need not check it again (the CUDA backend;
 * tn_cuda_trust in src/backend/cuda/gemm_cuda.c says when it is taken). It
 * costs one to three passes over A, so it pays where A meets more than two
 * products (tcnla_lra's passes have two each and do not use it). The
 * caller must not write A until tn_untrust, which every exit path calls. A
 * no-op on the CPU backend. */
int tn_trust(tn_call_t *cl, const float *A, int64_t ld, int64_t rows, int64_t cols,
             const tcnla_gemm_method_t *meths, int nm);
void tn_untrust(tn_call_t *cl);
/* tn_trust(h, A, lda, arows, acols, meths, nm) folded into a first
 * product C = op(A) B (alpha 1, beta 0; A arows x acols; op(B) = B, k x n,
 * ldb; C m x n, ldc): SHGEMM_FP16 with B16 FP16 bits the driver drew (see
 * tn_trust_f16), op(A) = A and lda = m, or FP16 with FP32 B. Where the
 * CUDA backend can check A inside the product (Hopper; n <= 64 for
 * SHGEMM_FP16, every element passing; 64 < n <= 288 for SHGEMM_FP16 on the
 * wide-tile kernel and n <= 272 for FP16, tn_trust's bounded pass
 * deciding: tn_cuda_gemm_trusting in
 * src/backend/cuda/gemm_cuda.c), *done = 1, C is the product tcnla_shgemm /
 * tcnla_sgemm would give and A is trusted as tn_trust would trust it;
 * else *done = 0, nothing is trusted and C is undefined (the caller runs
 * tn_trust and the product). The caller calls tn_untrust as after
 * tn_trust. With cl->late_trust.allow set while verdicts are deferred
 * (tn_defer_begin), the backend may queue the product and its check and
 * return *done = 2 without waiting: nothing is trusted yet and C is
 * pending until tn_trust_settle (which waits for the handle's work)
 * says whether it is *done 1 (A trusted, C the product) or 0 (as above);
 * the work queued meanwhile must not need A trusted, and none of it may
 * fail on a C that turns out undefined (deferred verdicts only). */
int tn_gemm_trusting(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, int64_t m,
                     int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                     const uint16_t *B16, int64_t ldb, float *C, int64_t ldc,
                     const tcnla_gemm_method_t *meths, int nm, int *done);
int tn_trust_settle(tn_call_t *cl, int *done);
/* RP-HOSVD's fused pass, for an order >= 3 tensor A seen as T slabs of
 * I1 x I2 (column-major, dense): where the backend has it (Hopper; A
 * trusted for TCEC_FP16 and SHGEMM_FP16 by tn_trust / tn_gemm_trusting,
 * Omega inside tn_trust_f16's range, J1, J2 <= 64, I1 a multiple of 64),
 * one read of A gives both the core's first product Out (I2 T x J1, ld
 * I2 T) = A_(1)^T Q (TCEC_FP16, Q I1 x J1, ld I1; Q's check as
 * tcnla_sgemm's, deferred inside tn_defer_begin / _end) and the mode-2
 * projection W (I2 x J2, ld I2) = sum_t slab_t^T Omega_t (SHGEMM_FP16,
 * Omega (I1 T) x J2 FP16 bits, ld I1 T): *done = 1. Else *done = 0 and
 * nothing is written: the caller runs the two products. */
/* whether tn_hosvd_fused may run for these sizes (the device and shape
 * conditions, not the operands'): the driver then keeps Omega apart from
 * Out */
int tn_hosvd_fused_possible(tcnla_handle_t h, int64_t I1, int64_t J1, int64_t J2);
int tn_hosvd_fused(tn_call_t *cl, int64_t I1, int64_t I2, int64_t T, const float *A,
                   const float *Q, int64_t J1, const uint16_t *Om, int64_t J2, float *Out,
                   float *W, int *done);
/* Within one driver call: X[0 .. count) holds FP16 values the driver drew
 * itself (tcnla_random_fill_f16: finite by construction) and writes only
 * with such fills until tn_untrust; an FP16 B operand lying inside skips its
 * NaN / Inf check, and with it a host synchronisation. One range at a time;
 * a no-op on the CPU backend. */
void tn_trust_f16(tn_call_t *cl, const uint16_t *X, size_t count);
/* Within one driver call: X[0 .. count) holds an orthonormal basis the
 * driver formed (columns of at most TN_BASIS_ROWS rows and norm 1, so
 * |x| <= 1 and each column's largest |x| >= 2^-12, inside FP16's normal
 * range), or, where its orthonormalization failed, data whose products the
 * driver discards (a deferred verdict, tn_defer_begin, reruns them): as
 * op(B) of a product it skips the range and NaN / Inf checks, and with them
 * their kernels and a host synchronisation. One range at a time (NULL
 * clears it); a no-op on the CPU backend. */
#define TN_BASIS_ROWS ((int64_t)1 << 24)
void tn_trust_basis(tn_call_t *cl, const float *X, size_t count);
/* Within tcnla_rsvd, tcnla_lra and tcnla_hosvd, which promise device memory
 * of about size(A) plus their factors (no copy of A; randLRA's E aside): the
 * products take no path whose workspace grows with an operand's size
 * (Hopper's pre-split path, src/backend/cuda/kernels/tc_gemm_sm90_ps.cu). Calls nest;
 * a no-op on the CPU backend. */
void tn_bounded_begin(tn_call_t *cl);
void tn_bounded_end(tn_call_t *cl);
/* Tensor Core method properties. */
typedef enum { TN_CONV_NONE = 0, TN_CONV_F16 = 1, TN_CONV_TF32 = 2 } tn_conv_t;
typedef struct {
    int tensor_core;         /* computed with Tensor Core products (the model on the CPU) */
    int uses_split;          /* operands split into hi + lo * scale */
    tcnla_split_t split;     /* which split, when uses_split */
    tn_conv_t conv;          /* single conversion, when !uses_split and tensor_core */
    int tol_bits;            /* range check: representation error <= 2^-tol_bits * max|vector| */
    int fp16_range;          /* limited to the FP16 exponent range (range check needed) */
    tcnla_gemm_method_t fallback; /* full-range method for TCNLA_RANGE_FALLBACK */
} tn_method_info;
const tn_method_info *tn_method(tcnla_gemm_method_t m);

/* Range check of a packed operand (rows of op(A) or columns of op(B), each
 * `len` long and contiguous, `count` of them, `ld` apart). For every vector,
 * every element's representation error under the method's conversion must be
 * at most 2^-tol_bits times the vector's largest magnitude, and no element may
 * overflow. Returns 1 when the operand is representable. */
int tn_range_ok(const float *x, int64_t count, int64_t len, int64_t ld, tcnla_gemm_method_t method);
/* 1 if any element of the m x n column-major matrix is NaN or Inf. */
int tn_has_nonfinite(const float *x, int64_t rows, int64_t cols, int64_t ld);
int tn_has_nonfinite_f16(const uint16_t *x, int64_t rows, int64_t cols, int64_t ld);

/* CholeskyQR's breakdown test (src/linalg/orth.c): potrf's info was 0 and
 * every pivot r_ii satisfies r_ii^2 >= n u g_ii, with g the Gram matrix's
 * diagonal before the factorization (the squared sine of each column's angle
 * to the span of the previous ones). 1 when the factor is usable. */
int tn_chol_ok(const double *gdiag, const double *rdiag, int n, int info, double u);
/* FP32 CholeskyQR's guard: tn_chol_ok with u = 2^-24, and a condition
 * estimate of the column-scaled factor R (spotrf's upper triangle, ld ldr)
 * small enough that Q is orthonormal to FP32's level (src/linalg/orth.c). */
int tn_chol32_ok(const double *gdiag, const float *R, int ldr, int n, int info);

/* Work beside the handle's stream (CUDA backend; no-ops on the CPU):
 * between tn_side_begin and tn_side_end, tcnla's own kernels (random fills,
 * conversions; no cuBLAS / cuSOLVER call, no tn_scratch_malloc) go to a
 * side stream of the highest priority that starts after the work queued so
 * far; random fills there take one block per SM, so that they share the
 * SMs with the work queued meanwhile on the handle's stream instead of
 * waiting for it. tn_side_join (which ends the side work if needed) makes
 * the handle's stream wait for it: call it before the results are used and
 * before their memory is freed, on every path. */
int tn_side_begin(tn_call_t *cl);
int tn_side_end(tn_call_t *cl);
int tn_side_join(tn_call_t *cl);
/* Deferred verdicts (the CUDA backend): between tn_defer_begin and
 * tn_defer_end the products' operand checks (tcnla_sgemm / tcnla_shgemm
 * single products) and the CholeskyQRs of tn_orthonormalize_deferred do
 * not wait for their results: the products run the method the checks
 * would keep if they pass, and the flags collect on the device. One host
 * synchronisation in tn_defer_end reads them (flags: TN_DEFER_SLOTS ints):
 * TN_DEFER_GEMM + 0 .. 2 (an FP16 overflow, NaN / Inf, a range failure in
 * some product's operands: those products must be redone without
 * deferral, which decides as usual), TN_DEFER_ORTH + i (factor slot i:
 * its CholeskyQR broke down, or met NaN / Inf; its Y is untouched).
 * tn_defer_begin returns TCNLA_ERR_NOT_SUPPORTED on the CPU backend (run
 * everything as usual); after it succeeded, tn_defer_end must run on
 * every path. Other calls between the two (tn_sgemm_batched, the wide
 * Hopper products, other orthonormalizations) check and wait as usual. */
#define TN_DEFER_GEMM 0
#define TN_DEFER_ORTH 4
#define TN_DEFER_SLOTS 16
int tn_defer_begin(tn_call_t *cl);
int tn_defer_end(tn_call_t *cl, int *flags);
/* tn_defer_end, reading also `bytes` of handle memory at `extra` into
 * `host` in the same host synchronisation (outside tn_defer_begin / _end:
 * only those, flags all 0) */
int tn_defer_end_read(tn_call_t *cl, int *flags, const void *extra, void *host, size_t bytes);
/* The flags so far, read without ending deferral and without waiting for
 * work queued after the mark: tn_defer_mark queues their copy (no wait;
 * TCNLA_ERR_NOT_SUPPORTED outside tn_defer_begin / _end or on the CPU
 * backend), tn_defer_marked waits for that copy only and returns them, so
 * that the caller may queue the work that follows before it decides. One
 * mark at a time; flags set after the mark are read by the next one or by
 * tn_defer_end. */
int tn_defer_mark(tn_call_t *cl);
int tn_defer_marked(tn_call_t *cl, int *flags);
/* tn_defer_end without its wait, where tn_defer_marked found every flag
 * clear and nothing queued since the mark sets one (those flags are then
 * the final ones): TCNLA_ERR_NOT_SUPPORTED outside tn_defer_begin / _end */
int tn_defer_close(tn_call_t *cl);
/* hold = 1: the calls that follow check and wait as without deferral (a
 * product whose redo the caller would not run: RP-HOSVD's projections);
 * hold = 0: deferred again. A no-op outside tn_defer_begin / _end. */
void tn_defer_hold(tn_call_t *cl, int hold);
/* CholeskyQR (method CHOLQR_FP64 or CHOLQR2_FP64) of Y (m x n, ld ldy),
 * its verdict deferred into flags[slot] (TN_DEFER_ORTH <= slot <
 * TN_DEFER_SLOTS), Y written only without breakdown; no retry. Returns
 * TCNLA_ERR_NOT_SUPPORTED (nothing done) outside tn_defer_begin / _end or
 * for another method: the caller orthonormalizes as usual. */
int tn_orthonormalize_deferred(tn_call_t *cl, tcnla_orth_t method, int64_t m, int64_t n,
                               float *Y, int64_t ldy, int slot);
/* tcnla_orthonormalize (without R), then Y's values rounded to FP16 (RN) in
 * place and Y16 (FP16 bits, ldy16) = the same values: randLRA's Q and Q16.
 * On the CUDA backend CholeskyQR in FP64 writes both in its last pass. */
int tn_orthonormalize_f16(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                          int64_t m, int64_t n, float *Y, int64_t ldy, uint16_t *Y16,
                          int64_t ldy16);
/* The orthonormalization of a matrix whose rows are distributed over
 * cl->comm (this rank's m >= 1 rows, fewer than n allowed): the CholeskyQR
 * methods with the Gram matrices summed over the ranks (cl->dist_rows),
 * Y16 as in tn_orthonormalize_f16 where not NULL; without cl->comm,
 * tn_orthonormalize (or _f16). */
int tn_orthonormalize_dist(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                           int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                           tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16);
/* The drivers' bodies, after the argument checks and with the call made
 * (cl->comm set for the distributed drivers of src/dist/: m is this rank's
 * rows of the mg in all) */
int tn_rsvd_check_opts(const tcnla_rsvd_opts_t *o, int64_t m, int64_t n);
int tn_rsvd_run(tn_call_t *cl, const tcnla_rsvd_opts_t *o, int64_t m, int64_t mg, int64_t n,
                const float *A, int64_t lda, float *U, int64_t ldu, float *S, float *VT,
                int64_t ldvt);
int tn_lra_check_opts(const tcnla_lra_opts_t *o, int64_t m, int64_t n);
int tn_lra_run(tn_call_t *cl, const tcnla_lra_opts_t *o, int64_t m, int64_t mg, int64_t n,
               const float *A, int64_t lda, float *X, int64_t ldx, float *Y, int64_t ldy);
/* Rounds the rows x cols matrix X (handle memory, leading dimension ld) to
 * `fmt` in place (RN), keeping FP32 storage. */
int tn_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols, float *X,
                     int64_t ld);
/* Scratch memory of the drivers (tcnla_rsvd, tcnla_lra, tcnla_hosvd): counted
 * as tcnla_malloc is, but on the CUDA backend ordered on the handle's stream
 * and taken from a pool the handle keeps (no cudaMalloc / cudaFree, and no
 * device-wide wait, per call). Only for memory that the handle's stream
 * alone uses between the two calls. */
int tn_scratch_malloc(tcnla_handle_t h, void **p, size_t bytes);
/* A product whose backend returned TN_NEEDS_SCALE, computed on copies of
 * op(A) and op(B) scaled exactly by rows / columns (src/gemm/scaling.c);
 * TN_NOT_TAKEN where the copies cannot be made. */
int tn_gemm_scaled(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                   int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                   const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                   int64_t ldc);
int tn_scratch_free(tcnla_handle_t h, void *p);
/* Y (FP16 bits, ldy) = the rows x cols FP32 matrix X (ld) rounded to FP16
 * (RN), both in handle memory. */
int tn_to_f16(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
              uint16_t *Y, int64_t ldy);
/* C = alpha op(A) op(B) + beta C for A and B stored in FP16 (bits), in
 * handle memory: the TCNLA_GEMM_FP16 method without its conversions of the
 * operands ([Baboulin et al. 2024]'s tgemm 16|32 on operands converted once). After
 * argument checks by the caller; m, n, k > 0. */
int tn_gemm_f16(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                float alpha, const uint16_t *A, int64_t lda, const uint16_t *B, int64_t ldb,
                float beta, float *C, int64_t ldc);
/* D = A + E elementwise for rows x cols FP32 matrices in handle memory (one
 * RN addition), into FP32 D or, when D16 is not NULL, rounded to FP16 bits
 * (RN); D may be E. */
int tn_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A, int64_t lda,
                  const float *E, int64_t lde, float *D, uint16_t *D16, int64_t ldd);
/* D16 (FP16 bits, ldd) = fp16(A - X Y^T) for A (m x n, FP32) and FP16-valued
 * X (m x k), Y (n x k) stored in FP32, all in handle memory: the product in
 * the TCNLA_GEMM_FP16 method, rounded to FP32, then one RN addition of A
 * and the rounding to FP16 (what tcnla_sgemm with alpha = -1 into an FP32 E,
 * then tn_add_matrix, give); the m x n FP32 E is never stored. slab_cols
 * <= 0: on a GPU one fused kernel (tn_cu_lowrank_residual16_sm90 on Hopper
 * where it applies, else tn_cu_lowrank_residual16), on the CPU
 * column slabs of about 16 MiB of FP32 product; slab_cols > 0: column slabs
 * of that width, each an FP16 product into FP32 and an addition (the
 * fused kernel's reference in the tests). */
int tn_lowrank_residual16(tn_call_t *cl, int64_t m, int64_t n, int64_t k, const float *A,
                          int64_t lda, const float *X, int64_t ldx, const float *Y, int64_t ldy,
                          uint16_t *D16, int64_t ldd, int64_t slab_cols, float ascale);
/* Y (FP16 bits, ldy) = fp16(scale X) for a power of two `scale`, and
 * *maxabs (when not NULL; a host synchronisation on a GPU) = max |X| (NaN
 * where X holds one); X = alpha X. Both in handle memory. */
int tn_to_f16_scaled(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                     float scale, uint16_t *Y, int64_t ldy, float *maxabs);
int tn_scale_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                    int64_t ld);
/* Copies a rows x cols matrix between leading dimensions, both in handle memory. */
int tn_copy_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src, int64_t lds,
                   float *dst, int64_t ldd);
/* SVD of a small n x n matrix on the host, FP64: M = U diag(S) VT, all n x n. */
int tn_small_svd(int n, const double *M, double *U, double *S, double *VT);
/* The leading k singular triplets of R^T for an l x l FP32 matrix R in the
 * handle's memory (FP64 inside): R^T = Ur diag(s) Vr^T, Uk = Ur(:, 1:k),
 * Vk = Vr(:, 1:k) (times diag(s(1:k)) when scale_vk) (l x k, leading
 * dimension l), Sk = s(1:k) (may be NULL), all in the handle's memory.
 * CPU: LAPACK dgesdd; CUDA: the eigensolution of R R^T (DSYRK, syevd) when
 * the k values span s_k >= 1e-4 s_1, else the deflated Gram path
 * (src/linalg/deflated_svd.h), cuSOLVER gesvdj where it refuses (the
 * tuning's small_svd_jacobi: the one-sided Jacobi path first, l <= 1024). */
int tn_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk, float *Vk,
                   float *Sk, int scale_vk);

/* Returned by the backend's svd_from_gram where its path does not apply. */
#define TN_GRAM_NOT_TAKEN TN_NOT_TAKEN

/* Backends: C = alpha*op(A)*op(B) + beta*C after argument checking, with a
 * resolved method (never DEFAULT), m, n > 0. B16 is non-NULL for SHGEMM
 * inputs given in FP16 (then B is NULL). */
int tn_cpu_gemm(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                int64_t ldc);
/* The rest of the CPU backend's operations (src/backend/cpu/cpu_backend.c
 * puts them in tn_cpu_ops; src/core/backend.h says what each does). */
int tn_cpu_gemm_f16(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                    int64_t k, float alpha, const uint16_t *A, int64_t lda, const uint16_t *B,
                    int64_t ldb, float beta, float *C, int64_t ldc);
int tn_cpu_scale_exponents(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                           int64_t ld, int by_col, int *e);
int tn_cpu_scale_copy(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                      const int *er, const int *ec, float *Y, int64_t ldy);
int tn_cpu_unscale_update(tcnla_handle_t h, int64_t m, int64_t n, float alpha, const float *T,
                          int64_t ldt, const int *er, const int *ec, float beta, float *C,
                          int64_t ldc);
int tn_cpu_sumsq(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                 double *out);
int tn_cpu_ozaki_op(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                    int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                    const void *B, int64_t ldb, double beta, void *C, int64_t ldc, int out_prec);
int tn_cpu_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                          int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                          tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16);
int tn_cpu_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                       float *Vk, float *Sk, int scale_vk);
int tn_cpu_random_fill(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                       uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                       int64_t ld);
int tn_cpu_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                         float *X, int64_t ld);
int tn_cpu_to_f16_scaled(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                         int64_t ld, float scale, uint16_t *Y, int64_t ldy, float *maxabs);
int tn_cpu_scale_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                        int64_t ld);
int tn_cpu_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A, int64_t lda,
                      const float *E, int64_t lde, float *D, uint16_t *D16, int64_t ldd);
int tn_cpu_copy_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src,
                       int64_t lds, float *dst, int64_t ldd);
/* Ozaki scheme on the CPU (src/gemm/ozaki.c): C = alpha*op(A)*op(B) + beta*C
 * with FP64 data, after argument checking, m, n > 0; method OZAKI_FP16 or
 * OZAKI_INT8, options from h->ozaki. out_prec 64 for tcnla_dgemm, 32 when
 * called for tcnla_sgemm (A, B, C then hold FP32 values widened to FP64 and
 * DP mode targets FP32 accuracy; the caller rounds C). */
int tn_cpu_ozaki(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc,
                 int out_prec);


/* BLAS / LAPACK (Fortran interface, 32-bit integers). */
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc);

#define TN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TN_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
