/* The CPU backend's table (src/core/backend.h): host memory, BLAS / LAPACK,
 * and the Tensor Core model for the Tensor Core methods. The drivers' modes
 * that only a GPU has (trusted operands, deferred verdicts, side streams,
 * fused passes) are no-ops or "not taken" here, so every driver runs the
 * same code on both backends. */
#include "core/internal.h"
#include "dist/dist.h"

#include <stdlib.h>
#include <string.h>

static void cpu_destroy(tcnla_handle_t h) { (void)h; }
static void cpu_enter(tcnla_handle_t h, int *saved) { (void)h, *saved = -1; }
static void cpu_leave(tcnla_handle_t h, int saved) { (void)h, (void)saved; }

static int cpu_malloc(tcnla_handle_t h, void **p, size_t bytes) {
    (void)h;
    *p = malloc(bytes);
    return *p ? TCNLA_SUCCESS : TCNLA_ERR_ALLOC;
}

static int cpu_free(tcnla_handle_t h, void *p) {
    (void)h;
    free(p);
    return TCNLA_SUCCESS;
}

static int cpu_memcpy(tcnla_handle_t h, void *dst, const void *src, size_t bytes,
                      tcnla_memcpy_kind_t kind) {
    (void)h, (void)kind;
    memmove(dst, src, bytes);
    return TCNLA_SUCCESS;
}

static size_t cpu_workspace_bytes(tcnla_handle_t h) { return h->host_ws_bytes; }
static size_t cpu_pool_idle_bytes(tcnla_handle_t h) { return (void)h, 0; }

static int cpu_set_stream(tcnla_handle_t h, void *stream) {
    (void)h, (void)stream;
    return TCNLA_ERR_NOT_SUPPORTED;
}

static int cpu_synchronize(tcnla_handle_t h) { return (void)h, TCNLA_SUCCESS; }

/* (host memory: the products' copies are the host workspace's) */
static int cpu_f16_in_place(tcnla_handle_t h, tcnla_op_t ta, int64_t m, int64_t n, int64_t k,
                            const float *A, int64_t lda) {
    (void)h, (void)ta, (void)m, (void)n, (void)k, (void)A, (void)lda;
    return 1;
}

static int cpu_gemm_batched(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                            tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                            const float *A, int64_t lda, int64_t sa, const float *B,
                            const uint16_t *B16, int64_t ldb, int64_t sb, float beta, float *C,
                            int64_t ldc, int64_t sc, int64_t batch, int reduce) {
    (void)cl, (void)method, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A;
    (void)lda, (void)sa, (void)B, (void)B16, (void)ldb, (void)sb, (void)beta, (void)C, (void)ldc;
    (void)sc, (void)batch, (void)reduce;
    return TN_BATCH_LOOP;
}

static int cpu_orthonormalize_deferred(tn_call_t *cl, tcnla_orth_t method, int64_t m,
                                       int64_t n, float *Y, int64_t ldy, int slot) {
    (void)cl, (void)method, (void)m, (void)n, (void)Y, (void)ldy, (void)slot;
    return TCNLA_ERR_NOT_SUPPORTED;
}

static int cpu_svd_from_gram(tn_call_t *cl, int64_t n, int64_t l, int64_t k, const float *W,
                             int64_t ldw, float *Xk, float *Sk, float *VT, int64_t ldvt,
                             int trans, const tn_then_t *then) {
    (void)cl, (void)n, (void)l, (void)k, (void)W, (void)ldw, (void)Xk, (void)Sk, (void)VT;
    (void)ldvt, (void)trans, (void)then;
    return TN_NOT_TAKEN;
}

static int cpu_lowrank_residual16(tcnla_handle_t h, int64_t m, int64_t n, int64_t k,
                                  const float *A, int64_t lda, const float *X, int64_t ldx,
                                  const float *Y, int64_t ldy, uint16_t *D16, int64_t ldd,
                                  float ascale) {
    (void)h, (void)m, (void)n, (void)k, (void)A, (void)lda, (void)X, (void)ldx, (void)Y;
    (void)ldy, (void)D16, (void)ldd, (void)ascale;
    return TN_NOT_TAKEN;
}

static int cpu_trust(tn_call_t *cl, const float *A, int64_t ld, int64_t rows, int64_t cols,
                     const tcnla_gemm_method_t *meths, int nm) {
    (void)cl, (void)A, (void)ld, (void)rows, (void)cols, (void)meths, (void)nm;
    return TCNLA_SUCCESS; /* nothing trusted: every product checks its operands */
}

static int cpu_gemm_trusting(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                             int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                             const float *B, const uint16_t *B16, int64_t ldb, float *C,
                             int64_t ldc, const tcnla_gemm_method_t *meths, int nm, int *done) {
    (void)cl, (void)method, (void)ta, (void)m, (void)n, (void)k, (void)A, (void)lda, (void)B;
    (void)B16, (void)ldb, (void)C, (void)ldc, (void)meths, (void)nm;
    *done = 0;
    return TCNLA_SUCCESS;
}

/* (gemm_trusting never queues: nothing to settle) */
static int cpu_trust_settle(tn_call_t *cl, int *done) {
    (void)cl;
    *done = 1;
    return TCNLA_SUCCESS;
}

static int cpu_hosvd_fused_possible(tcnla_handle_t h, int64_t I1, int64_t J1, int64_t J2) {
    (void)h, (void)I1, (void)J1, (void)J2;
    return 0;
}

static int cpu_hosvd_fused(tn_call_t *cl, int64_t I1, int64_t I2, int64_t T, const float *A,
                           const float *Q, int64_t J1, const uint16_t *Om, int64_t J2, float *Out,
                           float *W, int *done) {
    (void)cl, (void)I1, (void)I2, (void)T, (void)A, (void)Q, (void)J1, (void)Om, (void)J2;
    (void)Out, (void)W;
    *done = 0;
    return TCNLA_SUCCESS;
}

static int cpu_defer_begin(tn_call_t *cl) { return (void)cl, TCNLA_ERR_NOT_SUPPORTED; }

static int cpu_defer_end(tn_call_t *cl, int *flags, const void *extra, void *host,
                         size_t bytes) {
    (void)cl;
    memset(flags, 0, sizeof(int) * TN_DEFER_SLOTS);
    if (bytes) memcpy(host, extra, bytes); /* (handle memory is host memory) */
    return TCNLA_SUCCESS;
}

static int cpu_defer_mark(tn_call_t *cl) { return (void)cl, TCNLA_ERR_NOT_SUPPORTED; }

static int cpu_defer_close(tn_call_t *cl) { return (void)cl, TCNLA_ERR_NOT_SUPPORTED; }

static int cpu_defer_marked(tn_call_t *cl, int *flags) {
    (void)cl;
    memset(flags, 0, sizeof(int) * TN_DEFER_SLOTS);
    return TCNLA_ERR_NOT_SUPPORTED;
}

static int cpu_side(tn_call_t *cl) { return (void)cl, TCNLA_SUCCESS; }

const tn_backend_ops tn_cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .enter = cpu_enter,
    .leave = cpu_leave,
    .malloc = cpu_malloc,
    .free = cpu_free,
    .scratch_malloc = cpu_malloc,
    .scratch_free = cpu_free,
    .memcpy = cpu_memcpy,
    .workspace_bytes = cpu_workspace_bytes,
    .pool_idle_bytes = cpu_pool_idle_bytes,
    .set_stream = cpu_set_stream,
    .synchronize = cpu_synchronize,
    .gemm = tn_cpu_gemm,
    .gemm_batched = cpu_gemm_batched,
    .gemm_f16 = tn_cpu_gemm_f16,
    .ozaki = tn_cpu_ozaki_op,
    .orthonormalize = tn_cpu_orthonormalize,
    .orthonormalize_deferred = cpu_orthonormalize_deferred,
    .small_svd_t = tn_cpu_small_svd_t,
    .svd_from_gram = cpu_svd_from_gram,
    .random_fill = tn_cpu_random_fill,
    .round_inplace = tn_cpu_round_inplace,
    .add_matrix = tn_cpu_add_matrix,
    .copy_matrix = tn_cpu_copy_matrix,
    .lowrank_residual16 = cpu_lowrank_residual16,
    .to_f16_scaled = tn_cpu_to_f16_scaled,
    .scale_matrix = tn_cpu_scale_matrix,
    .scale_exponents = tn_cpu_scale_exponents,
    .sumsq = tn_cpu_sumsq,
    .sumsq_to = tn_cpu_sumsq, /* (handle memory is host memory) */
    .f16_in_place = cpu_f16_in_place,
    .scale_copy = tn_cpu_scale_copy,
    .unscale_update = tn_cpu_unscale_update,
    .trust = cpu_trust,
    .gemm_trusting = cpu_gemm_trusting,
    .trust_settle = cpu_trust_settle,
    .hosvd_fused_possible = cpu_hosvd_fused_possible,
    .hosvd_fused = cpu_hosvd_fused,
    .defer_begin = cpu_defer_begin,
    .defer_end = cpu_defer_end,
    .defer_mark = cpu_defer_mark,
    .defer_marked = cpu_defer_marked,
    .defer_close = cpu_defer_close,
    .side_begin = cpu_side,
    .side_end = cpu_side,
    .side_join = cpu_side,
    .comm_local = tn_shm_comm_create,
};
