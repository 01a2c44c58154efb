/* The CUDA backend's table (src/core/backend.h): cuBLAS / cuSOLVER and the
 * library's own kernels on the handle's device and stream (context.c holds
 * the handle's CUDA state). */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"

int tn_cuda_current_device(void) {
    int d = 0;
    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError();
        d = 0;
    }
    return d;
}

void tn_cuda_restore_device(int device) {
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess || d != device) {
        (void)cudaGetLastError();
        if (cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
    }
}

/* A public call runs on the handle's device; the caller's comes back after
 * (h->device, not the context's: tcnla_destroy leaves after the context is
 * gone). */
static void cuda_enter(tcnla_handle_t h, int *saved) {
    *saved = tn_cuda_current_device();
    if (*saved != h->device && cudaSetDevice(h->device) != cudaSuccess) (void)cudaGetLastError();
}

static void cuda_leave(tcnla_handle_t h, int saved) {
    if (saved != h->device) tn_cuda_restore_device(saved);
}

/* tn_cuda_orthonormalize, then Y rounded to FP16 with its FP16 bits in Y16
 * where the method that ran did not write them itself (CholeskyQR in FP64
 * writes both in its last pass). */
static int cuda_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                               int64_t m, int64_t n, float *Y, int64_t ldy, float *R,
                               int64_t ldr, tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16) {
    tcnla_orth_t u = method;
    int st = tn_cuda_orthonormalize(cl, method, on_breakdown, m, n, Y, ldy, R, ldr, &u, Y16,
                                    ldy16);
    if (used) *used = u;
    if (st == TCNLA_SUCCESS && Y16 &&
        (u == TCNLA_ORTH_HOUSEHOLDER || u == TCNLA_ORTH_CHOLQR_FP32)) {
        st = tn_cuda_round_inplace(cl->h, TCNLA_FMT_FP16, m, n, Y, ldy);
        if (st == TCNLA_SUCCESS) st = tn_cuda_to_f16(cl->h, m, n, Y, ldy, Y16, ldy16);
    }
    return st;
}

static int cuda_copy_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src,
                            int64_t lds, float *dst, int64_t ldd) {
    return tn_cuda_err(cudaMemcpy2DAsync(dst, sizeof(float) * (size_t)ldd, src,
                                         sizeof(float) * (size_t)lds, sizeof(float) * (size_t)rows,
                                         (size_t)cols, cudaMemcpyDeviceToDevice, h->cuda->stream));
}

static int cuda_svd_from_gram(tn_call_t *cl, int64_t n, int64_t l, int64_t k, const float *W,
                              int64_t ldw, float *Xk, float *Sk, float *VT, int64_t ldvt,
                              int trans, const tn_then_t *then) {
    return tn_cuda_svd_from_gram_rows(cl->h, n, l, k, W, ldw, Xk, Sk, VT, ldvt, trans,
                                      cl->dist_rows ? cl : NULL, then);
}

static int cuda_gram_ahead(tn_call_t *cl, int64_t n, int64_t l, int64_t k, const float *W,
                           int64_t ldw) {
    return tn_cuda_gram_ahead(cl->h, n, l, k, W, ldw);
}

const tn_backend_ops tn_cuda_ops = {
    .name = "cuda",
    .destroy = tn_cuda_destroy,
    .enter = cuda_enter,
    .leave = cuda_leave,
    .malloc = tn_cuda_malloc,
    .free = tn_cuda_free,
    .scratch_malloc = tn_cuda_scratch_malloc,
    .scratch_free = tn_cuda_scratch_free,
    .memcpy = tn_cuda_memcpy,
    .workspace_bytes = tn_cuda_workspace_bytes,
    .pool_idle_bytes = tn_cuda_pool_idle_bytes,
    .set_stream = tn_cuda_set_stream,
    .synchronize = tn_cuda_synchronize,
    .gemm = tn_cuda_gemm,
    .gemm_batched = tn_cuda_gemm_batched,
    .gemm_f16 = tn_cuda_gemm_f16,
    .ozaki = tn_cuda_ozaki,
    .orthonormalize = cuda_orthonormalize,
    .orthonormalize_deferred = tn_cuda_orthonormalize_deferred,
    .small_svd_t = tn_cuda_small_svd_t,
    .svd_from_gram = cuda_svd_from_gram,
    .gram_ahead = cuda_gram_ahead,
    .random_fill = tn_cuda_random_fill,
    .round_inplace = tn_cuda_round_inplace,
    .add_matrix = tn_cuda_add_matrix,
    .copy_matrix = cuda_copy_matrix,
    .lowrank_residual16 = tn_cuda_lowrank_residual16,
    .to_f16_scaled = tn_cuda_to_f16_scaled,
    .scale_matrix = tn_cuda_scale_matrix,
    .scale_exponents = tn_cuda_scale_exponents,
    .sumsq = tn_cuda_sumsq,
    .sumsq_to = tn_cuda_sumsq_to,
    .f16_in_place = tn_cuda_f16_in_place,
    .scale_copy = tn_cuda_scale_copy,
    .unscale_update = tn_cuda_unscale_update,
    .trust = tn_cuda_trust,
    .gemm_trusting = tn_cuda_gemm_trusting,
    .trust_settle = tn_cuda_trust_settle,
    .hosvd_fused_possible = tn_cuda_hosvd_fused_possible,
    .hosvd_fused = tn_cuda_hosvd_fused,
    .defer_begin = tn_cuda_defer_begin,
    .defer_end = tn_cuda_defer_end,
    .defer_mark = tn_cuda_defer_mark,
    .defer_marked = tn_cuda_defer_marked,
    .defer_close = tn_cuda_defer_close,
    .side_begin = tn_cuda_side_begin,
    .side_end = tn_cuda_side_end,
    .side_join = tn_cuda_side_join,
    .comm_local = tn_cuda_comm_local,
    .comm_init_rank = tn_cuda_comm_init_rank,
    .comm_wrap = tn_cuda_comm_wrap,
};
