/* The small l x l SVD of the randomized algorithms on the GPU (cuSOLVER's
 * Jacobi SVD, gesvdj, in FP64), so that they need no host round trip and no
 * host LAPACK: see tn_small_svd_t in internal.h. */
#include "core/internal.h"
#include "gemm/cuda/tn_cuda.h"

static int cs(cusolverStatus_t s) {
    return s == CUSOLVER_STATUS_SUCCESS ? TCNLA_SUCCESS
           : s == CUSOLVER_STATUS_ALLOC_FAILED ? TCNLA_ERR_ALLOC
                                               : TCNLA_ERR_CUSOLVER;
}
static int cb(cublasStatus_t s) {
    return s == CUBLAS_STATUS_SUCCESS ? TCNLA_SUCCESS
           : s == CUBLAS_STATUS_ALLOC_FAILED ? TCNLA_ERR_ALLOC
                                             : TCNLA_ERR_CUBLAS;
}

int tn_cuda_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                        float *Vk, float *Sk, int scale_vk) {
    struct tn_cuda_ctx *c = h->cuda;
    const int n = (int)l;
    gesvdjInfo_t params = NULL;
    int st = cs(cusolverDnCreateGesvdjInfo(&params));
    if (st) return st;
    int lwork = 0;
    const size_t ll = (size_t)l * (size_t)l;
    /* the matrices first, for the size query; then room for gesvdj's work (the
     * workspace may move when it grows: nothing is written before that) */
    double *ws = tn_cuda_workspace(c, sizeof(double) * (4 * ll + (size_t)l) + 64);
    if (!ws) st = TCNLA_ERR_ALLOC;
    if (!st)
        st = cs(cusolverDnDgesvdj_bufferSize(c->cusolver, CUSOLVER_EIG_MODE_VECTOR, 0, n, n,
                                             ws + ll, n, ws + 4 * ll, ws + 2 * ll, n, ws + 3 * ll,
                                             n, &lwork, params));
    if (!st) ws = tn_cuda_workspace(c, sizeof(double) * (4 * ll + (size_t)l + (size_t)lwork) + 64);
    if (!st && !ws) st = TCNLA_ERR_ALLOC;
    if (st) {
        cusolverDnDestroyGesvdjInfo(params);
        return st;
    }
    double *Rd = ws, *T = Rd + ll, *U = T + ll, *V = U + ll, *S = V + ll, *work = S + l;
    int *dinfo = (int *)(work + lwork);
    const double one = 1.0, zero = 0.0;
    st = tn_cuda_err((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, R, l, Rd, l, l, l, NULL,
                                                c->stream));
    if (!st) /* T = Rd^T */
        st = cb(cublasDgeam(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, &one, Rd, n, &zero, Rd, n,
                            T, n));
    if (!st)
        st = cs(cusolverDnDgesvdj(c->cusolver, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, T, n, S, U, n,
                                  V, n, work, lwork, dinfo, params));
    if (!st && scale_vk) st = cb(cublasDdgmm(c->cublas, CUBLAS_SIDE_RIGHT, n, (int)k, V, n, S, 1, V, n));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, U, 0.0f, Uk, l, l, k, c->stream));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, V, 0.0f, Vk, l, l, k, c->stream));
    if (!st && Sk)
        st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, S, 0.0f, Sk, k, k, 1, c->stream));
    int info = 0;
    if (!st)
        st = tn_cuda_err(cudaMemcpyAsync(&info, dinfo, sizeof info, cudaMemcpyDeviceToHost, c->stream));
    if (!st) st = tn_cuda_err(cudaStreamSynchronize(c->stream));
    cusolverDnDestroyGesvdjInfo(params);
    if (!st && info != 0) st = TCNLA_ERR_NUMERICAL; /* did not converge / bad argument */
    return st;
}
