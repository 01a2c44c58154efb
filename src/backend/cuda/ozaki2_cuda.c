/* Ozaki scheme II on the CUDA backend (the method: src/gemm/ozaki2.h; the
 * kernels: ozaki2_kernels.cu). Same steps, same numbers as the CPU
 * reference (src/gemm/ozaki2.c):
 *  1. Plan: one read of op(B), then one of op(A) (FP32 or FP64, in place,
 *     each pass fetching its next tile before it works on the current
 *     one): per block of TN_OZ2_BLEN elements of every row of op(A) /
 *     column of op(B) its largest exponent and integer norm bound (k_scan),
 *     then per vector the largest exponent, the norm bound and sigma
 *     (k_combine, k_sigma; an exponent above every finite one reports Inf
 *     or NaN, and the call returns TN_OZ2_NONFINITE before any product). DP
 *     mode adds w = |op(B)| e from the read of op(B), z = |op(A)|^T e and
 *     g = |op(A)| w from the read of op(A), and one more read of op(B) for
 *     its g = |op(B)|^T z (z needs all of op(A)); the norms of w and z in
 *     the CPU's order, and the largest need of each operand (atomicMax).
 *     Also the largest scaled norm bound of each (atomicMax on the bits:
 *     order-free). Those come back to the host (one copy), which picks the
 *     moduli count n and hA, hB with the CPU's function (tn_oz2_plan).
 *  2. Blocks of mb rows x nb columns (workspace: h->ozaki.workspace_cap, or
 *     half the free device memory up to 16 GiB): the residues of the block's
 *     rows and columns for all n moduli (int8, k-contiguous, so cuBLAS runs
 *     the TN layout), then per modulus one INT8 GEMM (cuBLASLt, the
 *     algorithm picked by timing: i8gemm_cuda.c) per k-block of at most
 *     TN_OZ2_KBLOCK (exact INT32) and its product reduced modulo p_l to
 *     uint8; on Hopper with k <= TN_OZ2_KBLOCK instead one sm_90a kernel
 *     for all moduli that reduces its INT32 accumulators modulo p_l and
 *     writes the uint8 residues directly (ozaki2_sm90.cu; the same bits; the
 *     tuning's oz2_fused = 0 keeps cuBLASLt); then one kernel reconstructs
 *     every element and applies alpha, beta. Each element depends only on
 *     its row, its column and the plan, so the blocking never changes a
 *     bit, and FIXED mode is bitwise the CPU.
 * Device memory at 16384^3 with 16 moduli: 4 + 4 GiB of residues, 1 GiB of
 * INT32 product (not with the fused kernel), 4 GiB of residue products; the
 * plan, before those and in the same cached workspace: 12 bytes per block
 * of TN_OZ2_BLEN elements of op(A) and op(B) (8 more of op(A) in DP mode:
 * 0.25 GiB at 16384^2) and O(m + n + k). */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki.h"
#include "gemm/ozaki2.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/kernels/ozaki2_launch.h"

#define OZ2_MAX_VECTORS ((int64_t)65535 * 32) /* grid.y of the plan passes */

static int cu(cudaError_t e) { return e == cudaSuccess ? TCNLA_SUCCESS : tn_cuda_err(e); }
static int cuk(int e) { return e == 0 ? TCNLA_SUCCESS : tn_cuda_err((cudaError_t)e); }
static int64_t rup(int64_t x, int64_t q) { return (x + q - 1) / q * q; }
static size_t al(size_t x) { return tn_ws_align(x); }

/* residues of A and B, the INT32 product (not with the fused kernel), the
 * residue products */
static size_t block_bytes(int nmod, int64_t mbp, int64_t nbp, int64_t kp, int fused) {
    const size_t N = (size_t)nmod;
    return al(N * (size_t)mbp * (size_t)kp) + al(N * (size_t)nbp * (size_t)kp) +
           (fused ? 0 : al(4 * (size_t)mbp * (size_t)nbp)) + al(N * (size_t)mbp * (size_t)nbp);
}

int tn_cuda_oz2_fused_ok(const struct tn_cuda_ctx *c, int nmod, int64_t mbp, int64_t nbp,
                         int64_t kp) {
    return c->cc_major == 9 && c->cc_minor == 0 && tn_oz2_fused_fits(nmod, mbp, nbp, kp) &&
           c->smem_optin >= tn_oz2_fused_smem() && tn_oz2_fused_available();
}

int tn_cuda_oz2_products(struct tn_cuda_ctx *c, int fused, const tn_oz2_consts_t *cs,
                         int64_t mbp, int64_t nbp, int64_t kp, const signed char *RA,
                         const signed char *RB, int *P, unsigned char *Q) {
    cudaStream_t s = c->stream;
    if (fused) {
        /* clusters of two blocks sharing B (multicast) unless fused is 2;
         * one block per tile where a cluster cannot launch */
        int e = fused == 2 ? (int)cudaErrorNotSupported
                           : tn_oz2_fused(RA, RB, cs->n, mbp, nbp, kp, cs->mod, cs->qinv, Q, 2,
                                          c->smem_optin, s);
        if (e) {
            (void)cudaGetLastError();
            e = tn_oz2_fused(RA, RB, cs->n, mbp, nbp, kp, cs->mod, cs->qinv, Q, 1, c->smem_optin,
                             s);
        }
        return cuk(e);
    }
    int st = TCNLA_SUCCESS;
    for (int l = 0; l < cs->n && !st; l++) {
        for (int64_t k0 = 0; k0 < kp && !st; k0 += TN_OZ2_KBLOCK) {
            const int64_t kl = TN_MIN((int64_t)TN_OZ2_KBLOCK, kp - k0);
            st = tn_cuda_i8gemm(c, (int)mbp, (int)nbp, (int)kl,
                                RA + (size_t)l * (size_t)mbp * (size_t)kp + k0, (int)kp,
                                RB + (size_t)l * (size_t)nbp * (size_t)kp + k0, (int)kp, P,
                                (int)mbp);
            if (!st)
                st = cuk(tn_oz2_modp(P, mbp * nbp, cs->mod[l], cs->qinv[l], k0 == 0,
                                     Q + (size_t)l * (size_t)mbp * (size_t)nbp, s));
        }
    }
    return st;
}


/* The plan on the GPU; sig (device, m + n) stays for the products. */
static int plan(tcnla_handle_t h, const void *A, int64_t sva, int64_t sla, const void *B,
                int64_t svb, int64_t slb, int f32, int64_t m, int64_t n, int64_t k,
                int out_prec, int *sig, tn_oz2_plan_t *pl) {
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = c->stream;
    const int dp = h->ozaki.mode == TCNLA_OZAKI_DP;
    const int tb = tn_oz2_tbits(k), cl = tn_oz2_dp_culog2(out_prec);
    const size_t nparts = 64 * (size_t)TN_MAX(k, TN_MAX(m, n));
    const size_t nch = (size_t)((k + TN_OZ2_BLEN - 1) / TN_OZ2_BLEN), nvs = (size_t)(m + n);
    /* what the host reads, in one span (one copy): the two largest scaled
     * norm bounds, the two needs of DP mode and the flags; then ||w||, ||z|| */
    typedef struct {
        unsigned long long q[2];
        int need[2], bad, pad;
        double wn[2];
    } back_t;
    const size_t wk = al(8 * (size_t)k);
    if (nch > SIZE_MAX / 32 / nvs) return TCNLA_ERR_ALLOC;
    const size_t bytes = al(4 * nvs) + al(8 * nvs) + al(8 * nvs) + 2 * wk + al(sizeof(back_t)) +
                         al(8 * nparts) + al(4 * nch * nvs) + al(8 * nch * nvs) +
                         (dp ? al(8 * nch * (size_t)m) : 0);
    /* the handle's cached workspace: free until the residues, kept from
     * call to call (an allocation per call would map its pages afresh) */
    char *p = tn_cuda_workspace(c, bytes);
    if (!p) return TCNLA_ERR_ALLOC;
    int st;
    int *E = (int *)p;
    unsigned long long *S = (unsigned long long *)(p + al(4 * nvs));
    double *g = (double *)((char *)S + al(8 * nvs));
    double *w = (double *)((char *)g + al(8 * nvs));
    double *z = (double *)((char *)w + wk);
    back_t *bk = (back_t *)((char *)z + wk);
    double *part = (double *)((char *)bk + al(sizeof(back_t)));
    int *CE = (int *)((char *)part + al(8 * nparts)); /* A's blocks, then B's */
    unsigned long long *CS = (unsigned long long *)((char *)CE + al(4 * nch * nvs));
    double *gpart = dp ? (double *)((char *)CS + al(8 * nch * nvs)) : NULL; /* A's */
    int *CEb = CE + nch * (size_t)m;
    unsigned long long *CSb = CS + nch * (size_t)m;
    st = cu(cudaMemsetAsync(&bk->bad, 0, sizeof(int), s));
    /* one read of B (blocks, w), one of A (blocks, z, g with w), and in DP
     * mode one more of B (g with z, which needs all of A) */
    if (!st)
        st = cuk(tn_oz2_scan(B, f32, svb, slb, n, k, tb, CEb, CSb, part, dp ? w : NULL, &bk->wn[0],
                             NULL, NULL, s));
    if (!st)
        st = cuk(tn_oz2_scan(A, f32, sva, sla, m, k, tb, CE, CS, part, dp ? z : NULL, &bk->wn[1],
                             dp ? w : NULL, gpart, s));
    if (!st)
        st = cuk(tn_oz2_vectors(CE, CS, gpart, (int64_t)nch, m, tb, E, S, dp ? g : NULL,
                                &bk->wn[0], cl, sig, &bk->q[0], &bk->need[0], &bk->bad, s));
    if (!st && dp) st = cuk(tn_oz2_gsum(B, f32, svb, slb, n, k, z, part, g + m, s));
    if (!st)
        st = cuk(tn_oz2_vectors(CEb, CSb, NULL, (int64_t)nch, n, tb, E + m, S + m,
                                dp ? g + m : NULL, &bk->wn[1], cl, sig + m, &bk->q[1],
                                &bk->need[1], &bk->bad, s));
    back_t hb;
    memset(&hb, 0, sizeof hb);
    if (!st) st = cu(cudaMemcpyAsync(&hb, bk, sizeof hb, cudaMemcpyDeviceToHost, s));
    if (!st) st = cu(cudaStreamSynchronize(s));
    if (st) return st;
    if (hb.bad & 1) return TN_OZ2_NONFINITE;
    if (hb.bad & 2) return TCNLA_ERR_RANGE; /* a need beyond any moduli count */
    double q[2];
    memcpy(q, hb.q, sizeof q); /* the bits of the doubles */
    const int needA = dp && hb.need[0] >= -(1 << 30) ? hb.need[0] : INT_MIN;
    const int needB = dp && hb.need[1] >= -(1 << 30) ? hb.need[1] : INT_MIN;
    return tn_oz2_plan((int)h->ozaki.mode, h->ozaki.slices, needA, needB, q[0], q[1], k, pl);
}

static int fits(int nmod, int64_t mb, int64_t nb, int64_t kp, int fused, size_t bud) {
    const int64_t mbp = rup(mb, 32), nbp = rup(nb, 32);
    return mbp <= INT_MAX && nbp <= INT_MAX && block_bytes(nmod, mbp, nbp, kp, fused) <= bud;
}

/* Blocks of mb rows x nb columns within the budget. The residues of a
 * block of rows are made again for every block of columns, so first all m
 * rows with the columns halved down to 1024 (the residues of A made once;
 * at 32768^3 FP32 on an H200, 2 x 2 blocks made them twice over, about
 * 7 ms of 500); when that does not fit, both halved, the larger first. */
static int blocking(int nmod, int64_t m, int64_t n, int64_t kp, int fused, size_t bud,
                    int64_t *mb, int64_t *nb) {
    int64_t b = n;
    while (!fits(nmod, m, b, kp, fused, bud) && b > 1024) b = (b + 1) / 2;
    if (fits(nmod, m, b, kp, fused, bud)) {
        *mb = m, *nb = b;
        return TCNLA_SUCCESS;
    }
    int64_t r = m;
    b = n;
    while (!fits(nmod, r, b, kp, fused, bud)) {
        if (r <= 32 && b <= 32) return TCNLA_ERR_ALLOC;
        if (r >= b) r = (r + 1) / 2;
        else b = (b + 1) / 2;
    }
    *mb = r, *nb = b;
    return TCNLA_SUCCESS;
}

int tn_cuda_ozaki2(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                   int64_t k, double alpha, const void *A, int64_t lda, const void *B,
                   int64_t ldb, double beta, void *C, int64_t ldc, int f32, int out_prec) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = c->stream;
    if (m > OZ2_MAX_VECTORS || n > OZ2_MAX_VECTORS || k > INT_MAX - 64)
        return TCNLA_ERR_NOT_SUPPORTED;
    const int64_t sva = ta == TCNLA_OP_N ? 1 : lda, sla = ta == TCNLA_OP_N ? lda : 1;
    const int64_t svb = tb == TCNLA_OP_N ? ldb : 1, slb = tb == TCNLA_OP_N ? 1 : ldb;
    int *sig = NULL;
    int st = cu(cudaMallocAsync((void **)&sig, 4 * (size_t)(m + n), s));
    if (st) return st;
    tn_oz2_plan_t pl;
    st = plan(h, A, sva, sla, B, svb, slb, f32, m, n, k, out_prec, sig, &pl);
    if (st == TN_OZ2_NONFINITE) {
        int st2 = cu(cudaFreeAsync(sig, s));
        return st2 ? st2 : st;
    }
    tn_oz2_consts_t cs;
    if (!st) {
        tn_oz2_consts(pl.n, &cs);
        cl->info.ozaki_d = cl->info.ozaki_slices_a = cl->info.ozaki_slices_b = pl.n;
        cl->info.ozaki_scheme = 2;
    }

    /* blocking for the workspace budget (never changes a bit) */
    const int64_t kp = rup(k, 32);
    /* the fused products where they can run (any block of 32-multiples
     * does where the whole does) */
    const int fused = !st && c->tune->oz2_fused &&
                      tn_cuda_oz2_fused_ok(c, pl.n, rup(m, 32), rup(n, 32), kp);
    int64_t mb = m, nb = n;
    if (!st) st = blocking(pl.n, m, n, kp, fused, tn_oz_budget(h), &mb, &nb);
    const int64_t mbp = rup(mb, 32), nbp = rup(nb, 32);
    char *ws = st ? NULL : tn_cuda_workspace(c, block_bytes(pl.n, mbp, nbp, kp, fused));
    if (!st && !ws) st = TCNLA_ERR_ALLOC;
    signed char *RA = (signed char *)ws;
    signed char *RB = RA + al((size_t)pl.n * (size_t)mbp * (size_t)kp);
    int *P = fused ? NULL : (int *)((char *)RB + al((size_t)pl.n * (size_t)nbp * (size_t)kp));
    unsigned char *Q = (unsigned char *)RB + al((size_t)pl.n * (size_t)nbp * (size_t)kp) +
                       (fused ? 0 : al(4 * (size_t)mbp * (size_t)nbp));
    const size_t es = f32 ? 4 : 8;
    int64_t a_at = -1;
    for (int64_t j0 = 0; j0 < n && !st; j0 += nb) {
        const int64_t nbb = TN_MIN(nb, n - j0);
        st = cuk(tn_oz2_residues(B, f32, svb, slb, j0 + nbb, k, j0, nbp, kp, sig + m, pl.hB,
                                 pl.yb, &cs, RB, s));
        for (int64_t i0 = 0; i0 < m && !st; i0 += mb) {
            const int64_t mbb = TN_MIN(mb, m - i0);
            if (a_at != i0) {
                st = cuk(tn_oz2_residues(A, f32, sva, sla, i0 + mbb, k, i0, mbp, kp, sig, pl.hA,
                                         pl.ya, &cs, RA, s));
                a_at = i0;
            }
            if (!st) st = tn_cuda_oz2_products(c, fused, &cs, mbp, nbp, kp, RA, RB, P, Q);
            if (!st)
                st = cuk(tn_oz2_launch_reconstruct(Q, mbp, nbp, mbb, nbb, &cs, sig + i0, sig + m + j0,
                                            pl.hA + pl.hB, alpha, beta,
                                            (char *)C + es * (size_t)(i0 + j0 * ldc), ldc, f32,
                                            s));
        }
    }
    int st2 = cu(cudaFreeAsync(sig, s));
    return st ? st : st2;
}

int tn_cuda_oz_arch(tcnla_handle_t h) { return 10 * h->cuda->cc_major + h->cuda->cc_minor; }
