/* Orthonormalization on the CUDA backend: Householder QR through cuSOLVER
 * (geqrf + orgqr), CholeskyQR with the Gram matrix and the triangular solve
 * on the GPU (cuBLAS syrk / trsm, FP32 or FP64) and the small n x n
 * Cholesky factorization on the host (LAPACK, microseconds for the n of
 * randomized algorithms), where the breakdown test of src/linalg/orth.c
 * runs on exactly the same numbers. Y is written only on success. */
#include "core/internal.h"
#include "gemm/cuda/tn_cuda.h"
#include "linalg/lapack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cb(cublasStatus_t s) {
    return s == CUBLAS_STATUS_SUCCESS ? TCNLA_SUCCESS
           : s == CUBLAS_STATUS_ALLOC_FAILED ? TCNLA_ERR_ALLOC
                                             : TCNLA_ERR_CUBLAS;
}
static int cs(cusolverStatus_t s) {
    return s == CUSOLVER_STATUS_SUCCESS ? TCNLA_SUCCESS
           : s == CUSOLVER_STATUS_ALLOC_FAILED ? TCNLA_ERR_ALLOC
                                               : TCNLA_ERR_CUSOLVER;
}
static int ce(cudaError_t e) { return tn_cuda_err(e); }

#define TRY(x)                                                                                 \
    do {                                                                                       \
        if ((st = (x)) != TCNLA_SUCCESS) goto out;                                             \
    } while (0)

static int householder(tcnla_handle_t h, int64_t m, int64_t n, float *Y, int64_t ldy, float *R,
                       int64_t ldr) {
    struct tn_cuda_ctx *c = h->cuda;
    int st, lw1 = 0, lw2 = 0, info = 0;
    int im = (int)m, in = (int)n, ild = (int)ldy;
    TRY(cs(cusolverDnSgeqrf_bufferSize(c->cusolver, im, in, Y, ild, &lw1)));
    TRY(cs(cusolverDnSorgqr_bufferSize(c->cusolver, im, in, in, Y, ild, NULL, &lw2)));
    int lw = lw1 > lw2 ? lw1 : lw2;
    char *ws = tn_cuda_workspace(c, sizeof(float) * (size_t)(lw + n + 64) + 256);
    if (!ws) return TCNLA_ERR_ALLOC;
    float *tau = (float *)ws, *work = tau + n + 32;
    int *dinfo = (int *)(work + lw);
    TRY(cs(cusolverDnSgeqrf(c->cusolver, im, in, Y, ild, tau, work, lw, dinfo)));
    if (R) { /* the upper triangle of the factored Y, through the host (n x n) */
        float *hr = malloc(sizeof(float) * (size_t)(n * n));
        if (!hr) return TCNLA_ERR_ALLOC;
        st = ce(cudaMemcpy2DAsync(hr, sizeof(float) * (size_t)n, Y, sizeof(float) * (size_t)ldy,
                                  sizeof(float) * (size_t)n, (size_t)n, cudaMemcpyDeviceToHost,
                                  c->stream));
        if (st == TCNLA_SUCCESS) st = ce(cudaStreamSynchronize(c->stream));
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = j + 1; i < n; i++) hr[i + j * n] = 0.0f;
        if (st == TCNLA_SUCCESS)
            st = ce(cudaMemcpy2DAsync(R, sizeof(float) * (size_t)ldr, hr, sizeof(float) * (size_t)n,
                                      sizeof(float) * (size_t)n, (size_t)n, cudaMemcpyHostToDevice,
                                      c->stream));
        if (st == TCNLA_SUCCESS) st = ce(cudaStreamSynchronize(c->stream));
        free(hr);
        if (st) return st;
    }
    TRY(cs(cusolverDnSorgqr(c->cusolver, im, in, in, Y, ild, tau, work, lw, dinfo)));
    TRY(ce(cudaMemcpyAsync(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost, c->stream)));
    TRY(ce(cudaStreamSynchronize(c->stream)));
    st = info == 0 ? TCNLA_SUCCESS : TCNLA_ERR_INTERNAL;
out:
    return st;
}

/* CholeskyQR passes on the GPU. fp64: Y is widened into the workspace and
 * the Gram matrix, the solve and (for `twice`) the second pass run in FP64. */
static int cholqr(tcnla_handle_t h, int fp64, int twice, int64_t m, int64_t n, float *Y,
                  int64_t ldy, float *R, int64_t ldr) {
    struct tn_cuda_ctx *c = h->cuda;
    const int im = (int)m, in = (int)n;
    size_t ybytes = fp64 ? sizeof(double) * (size_t)(m * n) : sizeof(float) * (size_t)(m * n);
    size_t gbytes = sizeof(double) * (size_t)(n * n);
    const size_t yoff = 0, goff = (ybytes + 255) & ~(size_t)255,
                 aoff = goff + ((gbytes + 255) & ~(size_t)255);
    const size_t abytes = sizeof(double) * (size_t)(2 * n) + 256; /* diagonals, info */
    char *ws = tn_cuda_workspace(c, aoff + abytes);
    if (!ws) return TCNLA_ERR_ALLOC;
    int lwork = 0;
    if (fp64 && cusolverDnDpotrf_bufferSize(c->cusolver, CUBLAS_FILL_MODE_UPPER, in,
                                            (double *)(ws + goff), in,
                                            &lwork) != CUSOLVER_STATUS_SUCCESS)
        return TCNLA_ERR_CUSOLVER;
    /* grow for potrf's work: nothing is in the workspace yet, so it may move */
    ws = tn_cuda_workspace(c, aoff + abytes + sizeof(double) * (size_t)lwork);
    if (!ws) return TCNLA_ERR_ALLOC;
    void *Yw = ws + yoff;            /* working copy of Y (m x n, ld m) */
    void *Gd = ws + goff;            /* Gram / R on the device */
    double *dg = (double *)(ws + aoff); /* diag before (n), after (n) */
    int *dinfo = (int *)(dg + 2 * n);
    double *pwork = (double *)(ws + aoff + abytes);
    const int need_r = R != NULL || twice; /* R factors wanted on the host */
    double *G = malloc(sizeof(double) * (size_t)(3 * n * n)); /* host: Gram, R1, R2 */
    float *Gf = malloc(sizeof(float) * (size_t)(n * n));
    int st = TCNLA_SUCCESS;
    if (!G || !Gf) {
        st = TCNLA_ERR_ALLOC;
        goto out;
    }
    double *R1 = G + n * n, *R2 = R1 + n * n;
    if (fp64)
        TRY(ce((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, Y, ldy, Yw, m, m, n, NULL, c->stream)));
    else
        TRY(ce(cudaMemcpy2DAsync(Yw, sizeof(float) * (size_t)m, Y, sizeof(float) * (size_t)ldy,
                                 sizeof(float) * (size_t)m, (size_t)n, cudaMemcpyDeviceToDevice,
                                 c->stream)));
    for (int pass = 0; pass < (twice ? 2 : 1); pass++) {
        double *Rp = pass ? R2 : R1;
        if (fp64) {
            const double one = 1.0, zero = 0.0;
            TRY(cb(cublasDsyrk(c->cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, in, im, &one,
                               (const double *)Yw, im, &zero, (double *)Gd, in)));
            /* Cholesky on the GPU; the breakdown test (tn_chol_ok) on the two
             * diagonals, read back with the info in one small copy */
            TRY(cb(cublasDcopy(c->cublas, in, (const double *)Gd, in + 1, dg, 1)));
            TRY(cs(cusolverDnDpotrf(c->cusolver, CUBLAS_FILL_MODE_UPPER, in, (double *)Gd, in,
                                    pwork, lwork, dinfo)));
            TRY(cb(cublasDcopy(c->cublas, in, (const double *)Gd, in + 1, dg + n, 1)));
            TRY(ce(cudaMemcpyAsync(G, dg, sizeof(double) * (size_t)(2 * n) + sizeof(int),
                                   cudaMemcpyDeviceToHost, c->stream)));
            TRY(ce(cudaStreamSynchronize(c->stream)));
            {
                int info;
                memcpy(&info, G + 2 * n, sizeof info);
                if (!tn_chol_ok(G, G + n, in, info, 0x1p-53)) {
                    st = TCNLA_ERR_NUMERICAL;
                    goto out;
                }
            }
            if (need_r) {
                TRY(ce(cudaMemcpyAsync(Rp, Gd, gbytes, cudaMemcpyDeviceToHost, c->stream)));
                TRY(ce(cudaStreamSynchronize(c->stream)));
                for (int64_t j = 0; j < n; j++)
                    for (int64_t i = j + 1; i < n; i++) Rp[i + j * n] = 0.0;
            }
            TRY(cb(cublasDtrsm(c->cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                               CUBLAS_DIAG_NON_UNIT, im, in, &one, (const double *)Gd, in,
                               (double *)Yw, im)));
        } else {
            const float one = 1.0f, zero = 0.0f;
            TRY(cb(cublasSsyrk(c->cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, in, im, &one,
                               (const float *)Yw, im, &zero, (float *)Gd, in)));
            TRY(ce(cudaMemcpyAsync(Gf, Gd, sizeof(float) * (size_t)(n * n), cudaMemcpyDeviceToHost,
                                   c->stream)));
            TRY(ce(cudaStreamSynchronize(c->stream)));
            /* FP32 Cholesky on the host, as spotrf would do it on the GPU */
            float *Fg = Gf;
            double *fd = malloc(sizeof(double) * (size_t)(2 * n));
            if (!fd) {
                st = TCNLA_ERR_ALLOC;
                goto out;
            }
            for (int i = 0; i < in; i++) fd[i] = Fg[i + (int64_t)i * n];
            int info = 0;
            spotrf_("U", &in, Fg, &in, &info);
            for (int i = 0; i < in; i++) fd[n + i] = Fg[i + (int64_t)i * n];
            int ok = tn_chol_ok(fd, fd + n, in, info, 0x1p-24);
            free(fd);
            if (!ok) {
                st = TCNLA_ERR_NUMERICAL;
                goto out;
            }
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < n; i++) {
                    if (i > j) Fg[i + j * n] = 0.0f;
                    Rp[i + j * n] = Fg[i + j * n];
                }
            TRY(ce(cudaMemcpyAsync(Gd, Fg, sizeof(float) * (size_t)(n * n), cudaMemcpyHostToDevice,
                                   c->stream)));
            TRY(cb(cublasStrsm(c->cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                               CUBLAS_DIAG_NON_UNIT, im, in, &one, (const float *)Gd, in,
                               (float *)Yw, im)));
            TRY(ce(cudaStreamSynchronize(c->stream))); /* Gf is reused by the next pass */
        }
    }
    if (twice) { /* R = R2 R1 */
        const double one = 1.0;
        dtrmm_("L", "U", "N", "N", &in, &in, &one, R2, &in, R1, &in);
    }
    /* Y <- Yw (FP64 -> FP32 rounds once) */
    if (fp64)
        TRY(ce((cudaError_t)tn_cu_epilogue_f64(1.0f, (const double *)Yw, 0.0f, Y, ldy, m, n,
                                               c->stream)));
    else
        TRY(ce(cudaMemcpy2DAsync(Y, sizeof(float) * (size_t)ldy, Yw, sizeof(float) * (size_t)m,
                                 sizeof(float) * (size_t)m, (size_t)n, cudaMemcpyDeviceToDevice,
                                 c->stream)));
    if (R) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < n; i++) Gf[i + j * n] = (float)R1[i + j * n];
        TRY(ce(cudaMemcpy2DAsync(R, sizeof(float) * (size_t)ldr, Gf, sizeof(float) * (size_t)n,
                                 sizeof(float) * (size_t)n, (size_t)n, cudaMemcpyHostToDevice,
                                 c->stream)));
    }
    TRY(ce(cudaStreamSynchronize(c->stream)));
out:
    free(G);
    free(Gf);
    return st;
}

int tn_cuda_orthonormalize(tcnla_handle_t h, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                           int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                           tcnla_orth_t *used) {
    struct tn_cuda_ctx *c = h->cuda;
    /* NaN / Inf check (flags[1]) with the GEMM backend's checker */
    int *flags = tn_cuda_workspace(c, tn_cu_check_scratch(n) + 64 + 256);
    if (!flags) return TCNLA_ERR_ALLOC;
    int hf[3] = {0, 0, 0}, st;
    st = ce(cudaMemsetAsync(flags, 0, 3 * sizeof(int), c->stream));
    if (!st)
        st = ce((cudaError_t)tn_cu_check_f32(Y, ldy, m, n, 1, TN_RCHK_NONE, 0, flags,
                                            (char *)flags + 256, c->stream));
    if (!st) st = ce(cudaMemcpyAsync(hf, flags, sizeof hf, cudaMemcpyDeviceToHost, c->stream));
    if (!st) st = ce(cudaStreamSynchronize(c->stream));
    if (st) return st;
    if (hf[1]) return TCNLA_ERR_NUMERICAL;
    for (;;) {
        if (method == TCNLA_ORTH_HOUSEHOLDER) st = householder(h, m, n, Y, ldy, R, ldr);
        else
            st = cholqr(h, method != TCNLA_ORTH_CHOLQR_FP32, method == TCNLA_ORTH_CHOLQR2_FP64, m,
                        n, Y, ldy, R, ldr);
        if (used) *used = method;
        if (st != TCNLA_ERR_NUMERICAL || on_breakdown != TCNLA_BREAKDOWN_RETRY ||
            method == TCNLA_ORTH_HOUSEHOLDER)
            return st;
        method = method == TCNLA_ORTH_CHOLQR_FP32   ? TCNLA_ORTH_CHOLQR_FP64
                 : method == TCNLA_ORTH_CHOLQR_FP64 ? TCNLA_ORTH_CHOLQR2_FP64
                                                    : TCNLA_ORTH_HOUSEHOLDER;
    }
}

int tn_cuda_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                          float *X, int64_t ld) {
    struct tn_cuda_ctx *c = h->cuda;
    if (fmt != TCNLA_FMT_FP16) return TCNLA_ERR_NOT_SUPPORTED; /* only FP16 is used so far */
    uint16_t *t = tn_cuda_workspace(c, sizeof(uint16_t) * (size_t)(rows * cols));
    if (!t) return TCNLA_ERR_ALLOC;
    int st = ce((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F16, X, ld, t, rows, rows, cols, NULL,
                                           c->stream));
    if (!st)
        st = ce((cudaError_t)tn_cu_convert(TN_CONV_F16_TO_F32, t, rows, X, ld, rows, cols, NULL,
                                           c->stream));
    return st;
}
