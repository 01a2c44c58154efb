/* Orthonormalization on the CUDA backend: Householder QR through cuSOLVER
 * (geqrf + orgqr), CholeskyQR in FP64 entirely on the GPU (cholqr64, with the
 * kernels of cholqr_kernels.cu, and on Hopper its single pass on the FP64
 * Tensor Cores, cholqr_dmma.cu) and CholeskyQR in FP32 with the small n x n
 * Cholesky factorization on the host (LAPACK). The breakdown test of
 * src/linalg/orth.c runs on the factor's numbers (CholeskyQR in FP64: on
 * the device, with the loss guard of src/linalg/cholguard.h). Y is written
 * only on success. */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "linalg/cholguard.h"
#include "linalg/lapack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int ce(cudaError_t e) { return tn_cuda_err(e); }
static size_t al256(size_t b) { return tn_ws_align(b); }

#define TRY(x)                                                                                 \
    do {                                                                                       \
        if ((st = (x)) != TCNLA_SUCCESS) goto out;                                             \
    } while (0)

static int householder(tcnla_handle_t h, int64_t m, int64_t n, float *Y, int64_t ldy, float *R,
                       int64_t ldr) {
    struct tn_cuda_ctx *c = h->cuda;
    int st, lw1 = 0, lw2 = 0, info = 0;
    int im = (int)m, in = (int)n, ild = (int)ldy;
    TRY(tn_cusolver_st(cusolverDnSgeqrf_bufferSize(c->cusolver, im, in, Y, ild, &lw1)));
    TRY(tn_cusolver_st(cusolverDnSorgqr_bufferSize(c->cusolver, im, in, in, Y, ild, NULL, &lw2)));
    int lw = lw1 > lw2 ? lw1 : lw2;
    char *ws = tn_cuda_workspace(c, sizeof(float) * (size_t)(lw + n + 64) + 256);
    if (!ws) return TCNLA_ERR_ALLOC;
    float *tau = (float *)ws, *work = tau + n + 32;
    int *dinfo = (int *)(work + lw);
    TRY(tn_cusolver_st(cusolverDnSgeqrf(c->cusolver, im, in, Y, ild, tau, work, lw, dinfo)));
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
    TRY(tn_cusolver_st(cusolverDnSorgqr(c->cusolver, im, in, in, Y, ild, tau, work, lw, dinfo)));
    const tn_cuda_read_t rd = {&info, dinfo, sizeof info};
    TRY(tn_cuda_read_back(c, &rd, 1));
    st = info == 0 ? TCNLA_SUCCESS : TCNLA_ERR_INTERNAL;
out:
    return st;
}

/* Row slabs of the Gram product: at least 128 rows, at most 16 of them (a
 * single-slab Gram product of 1024 x 64 ran on a few CTAs, 52 us each,
 * RP-HOSVD on an H100). */
int64_t tn_gram64_nslab(int64_t m) {
    int64_t nslab = m / 128;
    if (nslab < 1) nslab = 1;
    if (nslab > 16) nslab = 16;
    return nslab;
}

/* The upper triangle of G = Yw^T Yw (zeros below it) for Yw m x n in FP64
 * (leading dimension ldw), on the handle's stream: a strided batch of DGEMMs
 * over tn_gram64_nslab(m) row slabs into P (that many n x n partials), then
 * their sum in a fixed order (tn_cu_gram_reduce; dg, when not NULL, gets
 * G's diagonal, probe the FP64 guard's probe rows). (On FP64 input the
 * FP64 Tensor Core kernel of cholqr64's single pass, tn_cu_gram_dmma, is
 * no faster: H100, 16384 rows, 76 against 76 us at n = 266, 57 against
 * 46 at 137, 74 against 58 at 200.) Above TN_GRAM_SQUARE
 * columns only the blocks (0, 0), (0, 1), (1, 1) of the columns 0 .. h - 1
 * and h .. n - 1 are formed (3/4 of the products, three launches); up to
 * it the whole square in one launch, which is faster there (H100, 16 slabs
 * of 16384 rows: 77 against 87 us at n = 266, 24 against 51 at n = 64; 89
 * against 86 at n = 320, 160 against 141 at n = 512). */
#define TN_GRAM_SQUARE 300
int tn_cuda_gram64(tcnla_handle_t h, int64_t m, int64_t n, const double *Yw, int64_t ldw,
                   double *P, double *G, double *dg, double *probe) {
    struct tn_cuda_ctx *c = h->cuda;
    const int in = (int)n;
    const int64_t nslab = tn_gram64_nslab(m), slab = m / nslab, rem = m - slab * nslab;
    const size_t nn = (size_t)n * (size_t)n;
    const double one = 1.0, zero = 0.0;
    int st = TCNLA_SUCCESS;
    const int hc = n > TN_GRAM_SQUARE ? (in / 2 + 7) / 8 * 8 : in;
    for (int blk = 0; blk < (hc < in ? 3 : 1); blk++) {
        const int c0 = blk == 2 ? hc : 0, c1 = blk == 0 ? 0 : hc; /* rows, columns of G */
        const int w0 = blk == 2 ? in - hc : hc, w1 = blk == 0 ? hc : in - hc;
        TRY(tn_cublas_st(cublasDgemmStridedBatched(
            c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, w0, w1, (int)slab, &one, Yw + c0 * ldw, (int)ldw,
            (long long)slab, Yw + c1 * ldw, (int)ldw, (long long)slab, &zero, P + c0 + c1 * n, in,
            (long long)nn, (int)nslab)));
        if (rem) /* the rows past the last whole slab, into the first partial */
            TRY(tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, w0, w1, (int)rem,
                                         &one, Yw + slab * nslab + c0 * ldw, (int)ldw,
                                         Yw + slab * nslab + c1 * ldw, (int)ldw, &one, P + c0 + c1 * n,
                                         in)));
    }
    TRY(ce((cudaError_t)tn_cu_gram_reduce(P, nslab, n, G, dg, probe, ldw, c->stream)));
out:
    return st;
}

/* Below TN_TRINV_NB + 1 columns the FP64 path is the faster (H100, 16384 x
 * 128: the Gram partials 61 us against 48 for the widening and the batch
 * of DGEMMs). */
int tn_cuda_dmma_cols(const struct tn_cuda_ctx *c, int64_t n) {
    return n > TN_TRINV_NB && n <= TN_DMMA_GEMM_MAX && tn_cu_dmma_ok(tn_cuda_cc(c));
}

int tn_cuda_potrf_inv(struct tn_cuda_ctx *c, int n, double *G, double *R, double *diag,
                      int *info, unsigned *bar, double *Inv) {
    if (n > TN_TRINV_FULL_MAX) return TCNLA_ERR_INTERNAL;
    if (tn_cu_potrf_inv_ok(n, tn_cuda_cc(c), c->smem_optin)) {
        if (tn_cu_potrf_inv_cluster(n, G, n, R, n, diag, info, Inv, c->stream) == 0)
            return TCNLA_SUCCESS;
        (void)cudaGetLastError(); /* (a launch refused: the two launches below) */
    }
    int st = ce((cudaError_t)tn_cu_potrf_upper(n, G, n, R, diag, info, bar, c->sm_count,
                                               c->stream));
    if (!st) st = ce((cudaError_t)tn_cu_trinv_full(n, R, n, Inv, c->stream));
    return st;
}

/* Returned (positive, not a status) by cholqr64 when Y holds NaN or Inf:
 * the Gram matrix's diagonal is then not finite. */
#define TN_ORTH_NONFINITE 2

/* The verdict's flag read back (waiting path): TN_ORTH_NONFINITE where Y
 * held NaN or Inf, else its bits in *hflag */
static int verdict_read(struct tn_cuda_ctx *c, const int *dflag, int *hflag) {
    const tn_cuda_read_t rd = {hflag, dflag, sizeof *hflag};
    const int st = tn_cuda_read_back(c, &rd, 1);
    return st ? st : (*hflag & 2) ? TN_ORTH_NONFINITE : TCNLA_SUCCESS;
}

/* CholeskyQR in FP64 ([Baboulin et al. 2024] Algorithm 3; `twice`: CholeskyQR2), all of
 * it on the GPU: Y widened once into the workspace (Yw, with the guard's
 * TN_CHOL_PROBES probe rows below it: ld m + TN_CHOL_PROBES), per pass the
 * Gram matrix as a strided batch of DGEMMs over row slabs plus their sum
 * (tn_cu_gram_reduce, which also writes the probe rows), the factorization
 * (tn_cu_potrf_upper, one cooperative launch), then Qw = Yw R^-1 (from
 * 129 to TN_TRINV_FULL_MAX columns one DTRMM by R^-1, the factor and its
 * inverse from tn_cuda_potrf_inv: one cluster launch up to
 * TN_POTRF_CLUSTER_MAX columns on Hopper; else in 128-column blocks, a
 * DGEMM for the earlier blocks and a DGEMM by
 * the inverse of R's diagonal block, tn_cu_trinv_blocks; the probe rows
 * come along as 8 more rows), then the verdict on the device (tn_cu_chol_verdict: the
 * breakdown test of tn_chol_ok, where NaN / Inf in Y show as a non-finite
 * diagonal of the Gram matrix, and on the last pass the loss guard
 * tn_chol64_loss_within on the probe rows, src/linalg/cholguard.h), read
 * back once per pass; the last pass writes Y in FP32 only after it. R
 * (CholeskyQR2: R2 R1, by DTRMM) is formed on the GPU as well. Only the
 * Gram matrix's upper triangle is formed (3 of its 4 blocks). With Y16
 * (randLRA's FP16 path), the last pass writes Q rounded to FP16 into Y and
 * its FP16 copy into Y16 in the same pass. H200, whole
 * call: 16384 x 256 0.44 ms
 * (0.65 with cuBLAS DSYRK / cuSOLVER potrf / cuBLAS DTRSM and a separate
 * NaN check: 0.14 + 0.27 + 0.30 ms of kernels), 16384 x 512 1.00 ms
 * (1.27), CholeskyQR2 of 768 x 64 0.22 ms (0.30); these times leave out
 * the guard, whose probe rows ride in the Gram sum, the solve and the
 * verdict kernel (the waiting path's one launch more, with one read-back
 * of a flag instead of two of the diagonals).
 * defer (device memory, R and Y16 NULL): no read-back; each pass's verdict
 * ORs into *defer, and the last pass writes Y only while *defer is still 0
 * (the caller reads it later, tn_cuda_defer_end). cont (waiting, single
 * pass; may be NULL): where *cont is 1 and only the loss guard failed, the
 * call goes on as CholeskyQR2 (the next method of the RETRY chain: from
 * the Q it has, the same bits as starting it afresh, one pass instead of
 * two; after the single pass on the FP64 Tensor Cores, afresh) and sets
 * *cont = 2; where the first pass's factor is unusable (a breakdown, which
 * CholeskyQR2's first pass would repeat: bit for bit, or after the Tensor
 * Core pass up to the Gram matrix's rounding) it sets *cont = 3, for the
 * chain to skip CholeskyQR2. dist (the call, or NULL): Y's rows are
 * distributed over the ranks of dist->comm, whose Gram matrices are summed
 * (the factor, the verdicts and R then the same on every rank).
 * A deferred single pass leaves its record in c->cq_kept (the workspace
 * holds its Gram diagonal, factor, Q and probe rows until it is next asked
 * for). resume (waiting, single pass, no R or Y16): where that record is of
 * this Y, the first pass's computation is skipped and its verdict taken
 * again from what the deferred pass left: the same numbers the waiting
 * pass would compute (same inputs, same kernels), so the same bits and
 * decisions, one pass of work fewer (a 16384 x 266 pass: about 0.3 ms). */
static int cholqr64(tcnla_handle_t h, int twice, int64_t m, int64_t n, float *Y, int64_t ldy,
                    float *R, int64_t ldr, uint16_t *Y16, int64_t ldy16, int *defer,
                    int *cont, tn_call_t *dist, int resume) {
    struct tn_cuda_ctx *c = h->cuda;
    resume = resume && !twice && !defer && !R && !Y16 && !dist && c->cq_kept.valid &&
             c->cq_kept.Y == Y && c->cq_kept.m == m && c->cq_kept.n == n &&
             c->cq_kept.ldy == ldy;
    const void *kept_ws = c->cq_kept.ws;
    const int in = (int)n;
    const int64_t mp = m + TN_CHOL_PROBES; /* the rows of Yw and Qw */
    const int64_t nslab = tn_gram64_nslab(m);
    const size_t nn = (size_t)n * (size_t)n;
    const int64_t NB = TN_TRINV_NB, nblk = (n + NB - 1) / NB; /* the solve's blocks */
    const int whole = n > NB && n <= TN_TRINV_FULL_MAX; /* the solve as one DTRMM by R^-1 */
    const size_t ninv = whole ? nn : (size_t)(nblk * NB * NB);
    const size_t o_q = al256(sizeof(double) * (size_t)mp * (size_t)n),
                 o_v = o_q + al256(sizeof(double) * (size_t)mp * (size_t)n),
                 o_p = o_v + al256(sizeof(double) * ninv),
                 o_g = o_p + al256(sizeof(double) * nn * (size_t)nslab),
                 o_r = o_g + al256(sizeof(double) * nn),
                 o_d = o_r + al256(sizeof(double) * nn),
                 o_i = o_d + al256(sizeof(double) * 2 * (size_t)n), total = o_i + 256;
    char *ws = tn_cuda_workspace(c, total); /* (clears c->cq_kept) */
    if (!ws) return TCNLA_ERR_ALLOC;
    resume = resume && (const void *)ws == kept_ws; /* (the same size: never reallocated) */
    if (resume) c->cq_kept.resumed++;
    double *Yw = (double *)ws, *Qw = (double *)(ws + o_q), *Inv = (double *)(ws + o_v),
           *P = (double *)(ws + o_p), *G = (double *)(ws + o_g), *R1 = (double *)(ws + o_r),
           *dg = (double *)(ws + o_d);
    int *dinfo = (int *)(ws + o_i), *dflag = (int *)(ws + o_i + 128);
    unsigned *bar = (unsigned *)(ws + o_i + 64);
    int st = TCNLA_SUCCESS;
    const double one = 1.0, zero = 0.0, mone = -1.0;
    int fresh = 0; /* 1: the single pass below goes on as CholeskyQR2 afresh */
    if (!twice && !Y16 && !dist && whole && tn_cuda_dmma_cols(c, n)) {
        /* The single pass from the FP32 Y itself on Hopper's FP64 Tensor
         * Cores (kernels/cholqr_dmma.cu): the Gram partials, the factor
         * and R^-1 (in P and Inv, kept for a resume), the verdict with the
         * probe rows solved by R^-1 in its launch, then R (where asked) and
         * Y <- Y R^-1 in place unless the verdict (deferred: *defer)
         * failed. Where only the loss guard failed, CholeskyQR2 starts
         * afresh from the untouched Y below (the FP64 path: its bits). */
        if (!resume) {
            TRY(ce((cudaError_t)tn_cu_gram_dmma(Y, 0, ldy, m, n, nslab, P, c->stream)));
            TRY(ce((cudaError_t)tn_cu_gram_reduce(P, nslab, n, G, dg, NULL, 0, c->stream)));
            TRY(tn_cuda_potrf_inv(c, in, G, P, dg + n, dinfo, bar, Inv));
        }
        TRY(ce((cudaError_t)tn_cu_chol_verdict(dg, dinfo, in, 0x1p-53, NULL, 0, Inv,
                                               defer ? defer : dflag, !defer, c->stream)));
        if (!defer) {
            int hflag = 0;
            TRY(verdict_read(c, dflag, &hflag));
            if (hflag == 4 && cont && *cont) { /* only the loss guard failed: CholeskyQR2 */
                twice = 1, fresh = 1, *cont = 2;
            } else if (hflag) {
                if ((hflag & 1) && cont && *cont) *cont = 3; /* as below */
                st = TCNLA_ERR_NUMERICAL;
                goto out;
            }
        }
        if (!fresh) {
            if (R) TRY(ce((cudaError_t)tn_cu_upper_copy(n, P, n, NULL, 0, R, ldr, c->stream)));
            TRY(ce((cudaError_t)tn_cu_gemm_dmma(Y, ldy, m, n, n, Inv, n, 1, Y, ldy, 0, defer,
                                                c->stream)));
            if (defer) { /* for a redo after its verdict (cq_kept) */
                c->cq_kept.Y = Y, c->cq_kept.m = m, c->cq_kept.n = n, c->cq_kept.ldy = ldy;
                c->cq_kept.ws = ws, c->cq_kept.valid = 1;
            }
            goto out;
        }
    }
    if (!resume || fresh)
        TRY(ce((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, Y, ldy, Yw, mp, m, n, NULL,
                                          c->stream)));
    if (fresh) resume = 0;
    for (int pass = 0, npass = twice ? 2 : 1; pass < npass; pass++) {
        const int last = pass == npass - 1;
        /* the factor goes to the first partial's place (Rf), G is used up */
        double *Rf = P;
        if (resume && pass == 0) goto verdict; /* computed by the deferred pass */
        TRY(tn_cuda_gram64(h, m, n, Yw, mp, P, G, dg, Yw + m));
        if (dist) { /* rows on several ranks: G is their sum; its diagonal and the probes again */
            TRY(tn_dist_gram_sum(dist, G, (int64_t)nn));
            TRY(ce(cudaMemcpyAsync(P, G, sizeof(double) * nn, cudaMemcpyDeviceToDevice,
                                   c->stream)));
            TRY(ce((cudaError_t)tn_cu_gram_reduce(P, 1, n, G, dg, Yw + m, mp, c->stream)));
        }
        /* (from 129 to TN_TRINV_FULL_MAX columns R^-1 with it) */
        if (whole)
            TRY(tn_cuda_potrf_inv(c, in, G, Rf, dg + n, dinfo, bar, Inv));
        else
            TRY(ce((cudaError_t)tn_cu_potrf_upper(in, G, n, Rf, dg + n, dinfo, bar, c->sm_count,
                                                  c->stream)));
        /* R: the first factor kept (CholeskyQR2) */
        if (twice && !last && R)
            TRY(ce((cudaError_t)tn_cu_upper_copy(n, Rf, n, R1, n, NULL, 0, c->stream)));
        /* Qw = Yw R^-1: from 129 to TN_TRINV_FULL_MAX columns as one
         * DTRMM by the whole inverse (H100, 16392 rows: 72 against 97 us
         * at n = 266, 73 against 106 at 320); else NB = 128 columns at a time:
         * the earlier blocks' part off Yw's block (DGEMM), then the block
         * times the inverse of R's diagonal block (DGEMM). (The two QRs of
         * a randLRA call at k = 256 take 10 DGEMMs, 211 us on an H200;
         * 64-column blocks would take 21 DGEMMs of 12 us each, 253 us.) */
        if (whole) {
            TRY(tn_cublas_st(cublasDtrmm(c->cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER,
                                         CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, (int)mp, in, &one, Inv,
                                         in, Yw, (int)mp, Qw, (int)mp)));
        } else {
            TRY(ce((cudaError_t)tn_cu_trinv_blocks(in, Rf, n, Inv, c->stream)));
            for (int64_t j0 = 0; j0 < n; j0 += NB) {
                const int jb = (int)(n - j0 < NB ? n - j0 : NB);
                if (j0 > 0)
                    TRY(tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)mp, jb,
                                                 (int)j0, &mone, Qw, (int)mp, Rf + j0 * n, in,
                                                 &one, Yw + j0 * mp, (int)mp)));
                TRY(tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)mp, jb, jb,
                                             &one, Yw + j0 * mp, (int)mp,
                                             Inv + (j0 / NB) * NB * NB, (int)NB, &zero,
                                             Qw + j0 * mp, (int)mp)));
            }
        }
        /* the verdict: the breakdown test, and on the last pass the loss
         * guard on the probe rows of Qw */
    verdict:
        TRY(ce((cudaError_t)tn_cu_chol_verdict(dg, dinfo, in, 0x1p-53, last ? Qw + m : NULL, mp,
                                               NULL, defer ? defer : dflag, !defer, c->stream)));
        if (!defer) {
            int hflag = 0;
            TRY(verdict_read(c, dflag, &hflag));
            if (hflag == 4 && cont && *cont && !twice) {
                /* only the loss guard failed: one more pass on this Q is
                 * what CholeskyQR2, the next method, would compute (its
                 * first pass is this one, bit for bit) */
                twice = 1, npass = 2, *cont = 2;
                if (R) TRY(ce((cudaError_t)tn_cu_upper_copy(n, Rf, n, R1, n, NULL, 0, c->stream)));
                double *t = Yw;
                Yw = Qw, Qw = t;
                continue;
            }
            if (hflag) {
                /* the first pass's factor unusable: CholeskyQR2, the next
                 * method, would stop at the same place (its first pass is
                 * this one, bit for bit), so the chain goes on past it */
                if (pass == 0 && (hflag & 1) && cont && *cont) *cont = 3;
                st = TCNLA_ERR_NUMERICAL;
                goto out;
            }
        }
        /* R: the last factor (CholeskyQR2: times the first) */
        if (last && R) {
            if (twice)
                TRY(tn_cublas_st(cublasDtrmm(c->cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                             CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, in, in, &one, Rf,
                                             in, R1, in, R1, in)));
            TRY(ce((cudaError_t)tn_cu_upper_copy(n, twice ? R1 : Rf, n, NULL, 0, R, ldr,
                                                 c->stream)));
        }
        /* the last pass writes Y in FP32 */
        if (last && Y16) { /* Q rounded to FP16, in Y and Y16 (one pass) */
            TRY(ce((cudaError_t)tn_cu_f64_to_f32f16(Qw, mp, Y, ldy, Y16, ldy16, m, n, c->stream)));
        } else if (last && defer) { /* only where no pass broke down */
            TRY(ce((cudaError_t)tn_cu_f64_to_f32_unless(Qw, mp, Y, ldy, m, n, defer, c->stream)));
        } else if (last) {
            TRY(ce((cudaError_t)tn_cu_convert(TN_CONV_F64_TO_F32, Qw, mp, Y, ldy, m, n, NULL,
                                              c->stream)));
        } else { /* the next pass works on Q */
            double *t = Yw;
            Yw = Qw, Qw = t;
        }
    }
    if (defer && !twice && !dist) { /* for a redo after its verdict (cq_kept) */
        c->cq_kept.Y = Y, c->cq_kept.m = m, c->cq_kept.n = n, c->cq_kept.ldy = ldy;
        c->cq_kept.ws = ws, c->cq_kept.valid = 1;
    }
out:
    return st;
}

/* CholeskyQR in FP32 on the GPU: the Gram matrix and the triangular solve
 * with cuBLAS (SSYRK, STRSM), the n x n Cholesky factorization on the host
 * (spotrf), where the breakdown test runs on exactly the same numbers. */
static int cholqr32(tcnla_handle_t h, int64_t m, int64_t n, float *Y, int64_t ldy, float *R,
                    int64_t ldr) {
    struct tn_cuda_ctx *c = h->cuda;
    const int im = (int)m, in = (int)n;
    const size_t nn = (size_t)n * (size_t)n;
    const size_t goff = al256(sizeof(float) * (size_t)m * (size_t)n);
    char *ws = tn_cuda_workspace(c, goff + sizeof(float) * nn);
    if (!ws) return TCNLA_ERR_ALLOC;
    float *Yw = (float *)ws, *Gd = (float *)(ws + goff); /* working copy of Y (ld m), Gram / R */
    float *Gf = malloc(sizeof(float) * nn);
    double *fd = malloc(sizeof(double) * 2 * (size_t)n);
    int st = TCNLA_SUCCESS;
    if (!Gf || !fd) {
        st = TCNLA_ERR_ALLOC;
        goto out;
    }
    const float one = 1.0f, zero = 0.0f;
    TRY(ce(cudaMemcpy2DAsync(Yw, sizeof(float) * (size_t)m, Y, sizeof(float) * (size_t)ldy,
                             sizeof(float) * (size_t)m, (size_t)n, cudaMemcpyDeviceToDevice,
                             c->stream)));
    TRY(tn_cublas_st(cublasSsyrk(c->cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, in, im, &one, Yw,
                                 im, &zero, Gd, in)));
    TRY(ce(cudaMemcpyAsync(Gf, Gd, sizeof(float) * nn, cudaMemcpyDeviceToHost, c->stream)));
    TRY(ce(cudaStreamSynchronize(c->stream)));
    /* FP32 Cholesky on the host, as spotrf would do it on the GPU */
    for (int i = 0; i < in; i++) fd[i] = Gf[i + (int64_t)i * n];
    int info = 0;
    spotrf_("U", &in, Gf, &in, &info);
    if (!tn_chol32_ok(fd, Gf, in, in, info)) { /* breakdown, or Q not orthonormal in FP32 */
        st = TCNLA_ERR_NUMERICAL;
        goto out;
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = j + 1; i < n; i++) Gf[i + j * n] = 0.0f;
    TRY(ce(cudaMemcpyAsync(Gd, Gf, sizeof(float) * nn, cudaMemcpyHostToDevice, c->stream)));
    TRY(tn_cublas_st(cublasStrsm(c->cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                 CUBLAS_DIAG_NON_UNIT, im, in, &one, Gd, in, Yw, im)));
    TRY(ce(cudaMemcpy2DAsync(Y, sizeof(float) * (size_t)ldy, Yw, sizeof(float) * (size_t)m,
                             sizeof(float) * (size_t)m, (size_t)n, cudaMemcpyDeviceToDevice,
                             c->stream)));
    if (R)
        TRY(ce(cudaMemcpy2DAsync(R, sizeof(float) * (size_t)ldr, Gf, sizeof(float) * (size_t)n,
                                 sizeof(float) * (size_t)n, (size_t)n, cudaMemcpyHostToDevice,
                                 c->stream)));
    TRY(ce(cudaStreamSynchronize(c->stream))); /* Gf is freed below */
out:
    free(Gf);
    free(fd);
    return st;
}

int tn_cuda_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                           int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                           tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    int st;
    if (cl->dist_rows && (method == TCNLA_ORTH_HOUSEHOLDER || method == TCNLA_ORTH_CHOLQR_FP32))
        return TCNLA_ERR_NOT_SUPPORTED;
    /* NaN / Inf: CholeskyQR in FP64 sees them in the Gram matrix's diagonal;
     * the other methods check first, with the GEMM backend's checker */
    if (method == TCNLA_ORTH_HOUSEHOLDER || method == TCNLA_ORTH_CHOLQR_FP32) {
        int *flags = tn_cuda_workspace(c, tn_cu_check_scratch(n) + 64 + 256);
        if (!flags) return TCNLA_ERR_ALLOC;
        int hf[3] = {0, 0, 0};
        st = ce(cudaMemsetAsync(flags, 0, 3 * sizeof(int), c->stream));
        if (!st)
            st = ce((cudaError_t)tn_cu_check_f32(Y, ldy, m, n, 1, TN_RCHK_NONE, 0, flags,
                                                (char *)flags + 256, c->stream));
        const tn_cuda_read_t rd = {hf, flags, sizeof hf};
        if (!st) st = tn_cuda_read_back(c, &rd, 1);
        if (st) return st;
        if (hf[1]) return TCNLA_ERR_NUMERICAL;
    }
    for (;;) {
        if (method == TCNLA_ORTH_HOUSEHOLDER) st = householder(h, m, n, Y, ldy, R, ldr);
        else if (method == TCNLA_ORTH_CHOLQR_FP32) st = cholqr32(h, m, n, Y, ldy, R, ldr);
        else {
            int cont = on_breakdown == TCNLA_BREAKDOWN_RETRY;
            st = cholqr64(h, method == TCNLA_ORTH_CHOLQR2_FP64, m, n, Y, ldy, R, ldr, Y16, ldy16,
                          NULL, &cont, cl->dist_rows ? cl : NULL, cl->redo_deferred);
            /* continued as CholeskyQR2 (2), or CholeskyQR2 known to break
             * down as this did (3): the chain's next method after it */
            if (cont == 2 || cont == 3) method = TCNLA_ORTH_CHOLQR2_FP64;
        }
        if (used) *used = method;
        if (st == TN_ORTH_NONFINITE) return TCNLA_ERR_NUMERICAL;
        /* (rows on several ranks: no Householder; a failure the ranks
         * agreed on ends the chain) */
        if (st != TCNLA_ERR_NUMERICAL || on_breakdown != TCNLA_BREAKDOWN_RETRY ||
            method == TCNLA_ORTH_HOUSEHOLDER || cl->comm_failed ||
            (cl->dist_rows && method == TCNLA_ORTH_CHOLQR2_FP64))
            return st;
        method = method == TCNLA_ORTH_CHOLQR_FP32   ? TCNLA_ORTH_CHOLQR_FP64
                 : method == TCNLA_ORTH_CHOLQR_FP64 ? TCNLA_ORTH_CHOLQR2_FP64
                                                    : TCNLA_ORTH_HOUSEHOLDER;
    }
}

int tn_cuda_orthonormalize_deferred(tn_call_t *cl, tcnla_orth_t method, int64_t m, int64_t n,
                                     float *Y, int64_t ldy, int slot) {
    int *defer = tn_call_defer(cl);
    if (!defer || slot < TN_DEFER_ORTH || slot >= TN_DEFER_SLOTS ||
        (method != TCNLA_ORTH_CHOLQR_FP64 && method != TCNLA_ORTH_CHOLQR2_FP64))
        return TCNLA_ERR_NOT_SUPPORTED;
    if (cl->dist_rows) return TCNLA_ERR_NOT_SUPPORTED;
    return cholqr64(cl->h, method == TCNLA_ORTH_CHOLQR2_FP64, m, n, Y, ldy, NULL, 0, NULL, 0,
                    defer + slot, NULL, NULL, 0);
}

int tn_cuda_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A,
                       int64_t lda, const float *E, int64_t lde, float *D, uint16_t *D16,
                       int64_t ldd) {
    return ce((cudaError_t)tn_cu_add(A, lda, E, lde, rows, cols, D, D16, ldd, h->cuda->stream));
}

/* randLRA's D16 = fp16(A - X Y^T) in one fused kernel (the backend's
 * lowrank_residual16): on Hopper the wgmma kernel from K-major FP16 copies
 * of X and Y (tn_cu_lowrank_residual16_sm90), elsewhere the WMMA kernel
 * from column-major ones (tn_cu_lowrank_residual16); the copies are the
 * drivers' scratch. Nsight Compute on an H200 at m = n = 16384, k = 256:
 * the wgmma kernel 0.54 ms, the WMMA one 0.83 ms, against 1.3 ms for 16 MiB
 * slabs through cuBLAS and 1.56 ms (and 1 GiB) for an FP32 E. */
int tn_cuda_lowrank_residual16(tcnla_handle_t h, int64_t m, int64_t n, int64_t k,
                               const float *A, int64_t lda, const float *X, int64_t ldx,
                               const float *Y, int64_t ldy, uint16_t *D16, int64_t ldd,
                               float ascale) {
    struct tn_cuda_ctx *c = h->cuda;
    uint16_t *X16 = NULL, *Y16 = NULL;
    int st;
    if (c->tune->lr_sm90 &&
        tn_cu_lowrank_residual16_sm90_ok(m, n, k, A, lda, D16, ldd, c->smem_optin)) {
        const int64_t kp = (k + 7) / 8 * 8;
        st = tn_scratch_malloc(h, (void **)&X16, 2 * (size_t)(m * kp));
        if (!st) st = tn_scratch_malloc(h, (void **)&Y16, 2 * (size_t)(n * kp));
        if (!st)
            st = ce((cudaError_t)tn_cu_lowrank_residual16_sm90(m, n, k, A, lda, X, ldx, Y, ldy,
                                                               X16, Y16, kp, D16, ldd, ascale,
                                                               c->stream));
    } else {
        const int64_t ldx16 = (m + 7) / 8 * 8, ldy16 = (n + 7) / 8 * 8;
        st = tn_scratch_malloc(h, (void **)&X16, 2 * (size_t)(ldx16 * k));
        if (!st) st = tn_scratch_malloc(h, (void **)&Y16, 2 * (size_t)(ldy16 * k));
        if (!st) st = tn_cuda_to_f16(h, m, k, X, ldx, X16, ldx16);
        if (!st) st = tn_cuda_to_f16(h, n, k, Y, ldy, Y16, ldy16);
        if (!st)
            st = ce((cudaError_t)tn_cu_lowrank_residual16(m, n, k, A, lda, X16, ldx16, Y16, ldy16,
                                                          D16, ldd, ascale, c->stream));
    }
    tn_scratch_free(h, X16);
    tn_scratch_free(h, Y16);
    return st;
}

int tn_cuda_to_f16(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                   uint16_t *Y, int64_t ldy) {
    return ce((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F16, X, ld, Y, ldy, rows, cols, NULL,
                                         h->cuda->stream));
}

int tn_cuda_to_f16_scaled(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                          int64_t ld, float scale, uint16_t *Y, int64_t ldy, float *maxabs) {
    struct tn_cuda_ctx *c = h->cuda;
    if (scale == 1.0f && !maxabs) return tn_cuda_to_f16(h, rows, cols, X, ld, Y, ldy);
    unsigned *dmax = NULL;
    int st = TCNLA_SUCCESS;
    if (maxabs) {
        *maxabs = 0.0f;
        if (!(dmax = tn_cuda_workspace(c, 256))) return TCNLA_ERR_ALLOC;
        st = ce(cudaMemsetAsync(dmax, 0, sizeof(unsigned), c->stream));
    }
    if (!st)
        st = ce((cudaError_t)tn_cu_to_f16_scaled(X, ld, Y, ldy, rows, cols, scale, dmax,
                                                 c->stream));
    if (!st && maxabs) {
        unsigned *hp = (unsigned *)c->pinned;
        st = ce(cudaMemcpyAsync(hp, dmax, sizeof(unsigned), cudaMemcpyDeviceToHost, c->stream));
        if (!st) st = ce(cudaStreamSynchronize(c->stream));
        if (!st) memcpy(maxabs, hp, sizeof(float));
    }
    return st;
}

int tn_cuda_scale_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                         int64_t ld) {
    return ce((cudaError_t)tn_cu_scale(alpha, X, ld, rows, cols, h->cuda->stream));
}

/* ------------------------------------------- exact scaling (scaling.c) */
int tn_cuda_scale_exponents(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                            int64_t ld, int by_col, int *e) {
    struct tn_cuda_ctx *c = h->cuda;
    return ce((cudaError_t)tn_cu_scale_exponents(X, ld, rows, cols, by_col, e, c->sm_count,
                                                 c->stream));
}

int tn_cuda_scale_copy(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                       const int *er, const int *ec, float *Y, int64_t ldy) {
    return ce((cudaError_t)tn_cu_scale_copy(X, ld, rows, cols, er, ec, Y, ldy, h->cuda->stream));
}

int tn_cuda_sumsq_to(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                     double *dev) {
    struct tn_cuda_ctx *c = h->cuda;
    int st = ce(cudaMemsetAsync(dev, 0, sizeof(double), c->stream));
    if (!st) st = ce((cudaError_t)tn_cu_sumsq(X, ld, rows, cols, dev, c->stream));
    return st;
}

int tn_cuda_sumsq(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                  double *out) {
    double *d = tn_cuda_workspace(h->cuda, 256);
    if (!d) return TCNLA_ERR_ALLOC;
    const tn_cuda_read_t rd = {out, d, sizeof(double)};
    int st = tn_cuda_sumsq_to(h, rows, cols, X, ld, d);
    if (!st) st = tn_cuda_read_back(h->cuda, &rd, 1);
    return st;
}

int tn_cuda_unscale_update(tcnla_handle_t h, int64_t m, int64_t n, float alpha, const float *T,
                           int64_t ldt, const int *er, const int *ec, float beta, float *C,
                           int64_t ldc) {
    return ce((cudaError_t)tn_cu_unscale_update(m, n, alpha, T, ldt, er, ec, beta, C, ldc,
                                                h->cuda->stream));
}

int tn_cuda_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                          float *X, int64_t ld) {
    if (fmt != TCNLA_FMT_FP16) return TCNLA_ERR_NOT_SUPPORTED; /* only FP16 is used so far */
    /* one pass in place (no FP16 copy in the workspace) */
    return ce((cudaError_t)tn_cu_convert(TN_CONV_F32_ROUND_F16, X, ld, X, ld, rows, cols, NULL,
                                         h->cuda->stream));
}
