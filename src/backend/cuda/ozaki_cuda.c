/* The Ozaki scheme on the CUDA backend [Mukunoki et al. 2020]: tcnla_dgemm and
 * tcnla_sgemm with OZAKI_FP16 / OZAKI_INT8, and tcnla_dgemm NATIVE_FP64
 * (cuBLAS DGEMM). Operands and C are device memory of the handle.
 *
 * Same steps, same numbers as the CPU reference (src/gemm/ozaki.c):
 *  1. k == 0 or alpha == 0: C = beta C. NaN / Inf in op(A) or op(B):
 *     cuBLAS DGEMM (last_method = NATIVE_FP64), as the CPU falls back to
 *     BLAS dgemm.
 *  2. Plan on the GPU: the |.| sums w, z and Algorithm 3 per row / column
 *     run one vector per thread in the CPU's order (ozaki_kernels.cu), the
 *     slice counts come back to the host and d, smax_a, smax_b, fast are
 *     derived exactly as tn_ozaki_plan does; k-blocking and vmax come from
 *     tn_ozaki_blocking. So the GPU takes the same slices as the CPU.
 *  3. Blocks of mb rows of op(A) x nb columns of op(B) (workspace budget:
 *     h->ozaki.workspace_cap, or half the free device memory up to 16 GiB):
 *     the split kernels write the slices as int8 (or FP16) k-contiguous
 *     vectors, zero padded to kbp = round_up(kbl, 16) and to multiples of
 *     16 vectors, so cuBLAS runs the TN layout:
 *       cublasGemmEx(T, N, mbp, qmax(p) * nbp, kbp, S_A[b][p], kbp,
 *                    S_B[b][0..qmax), kbp, P_p, mbp)
 *     one GEMM per (k-block b, slice p of A) against all needed slices of B
 *     (qmax(p) = d - p in fast mode, all otherwise), INT32 (INT8, exact) or
 *     FP32 (FP16 slices are integers of <= 11 bits + sign, partial sums
 *     integers below 2^24: exact).
 *  4. Summation, one thread per element, order (b, p, q) as on the CPU:
 *     DP / FIXED Neumaier in FP64 (no FMA), CR an exact fixed-point
 *     accumulator (the CPU's 32-bit-digit carry-save limbs restricted to
 *     the window of limbs the exponents of this product can touch) and the
 *     same correct rounding; then C = alpha S + beta C in FP64. Every
 *     element depends only on its row, its column and the plan, so the
 *     result is bitwise the CPU's for any blocking.
 * tcnla_sgemm: A, B (and C when beta != 0) are widened to FP64 on the
 * device, the scheme runs with out_prec 32, C is rounded once to FP32. */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki.h"
#include "gemm/ozaki2.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* launchers (ozaki_kernels.cu) */
int tn_oz_nonfinite(int f32, const void *X, int64_t ld, int64_t rows, int64_t cols, int *flag,
                    cudaStream_t st);
int tn_oz_dscale(double beta, double *C, int64_t ldc, int64_t m, int64_t n, cudaStream_t st);
int tn_oz_abs_sums(const double *X, int64_t sv, int64_t sl, int64_t nv, int64_t k, double *out,
                   cudaStream_t st);
int tn_oz_pack(const double *src, int64_t ssv, int64_t ssl, int64_t v0, int64_t nv, int64_t k,
               double *dst, int64_t dsv, int64_t dsl, cudaStream_t st);
int tn_oz_plan(double *X, int64_t nv, int64_t k, int64_t nkb, int64_t kbl, int vmax,
               const double *w, double sq, int *need, int *done, unsigned char *fin, int *erange,
               cudaStream_t st);
int tn_oz_split(int fp16, double *X, int64_t nv, int64_t k, int64_t nkb, int64_t kbl, int64_t kbp,
                int64_t nvp, int vmax, int smax, void *S, int *E, int *cnt, cudaStream_t st);
int tn_oz_sum(int fp16, int cr, int nl, const void *P, int64_t mbp, int64_t nbp, int64_t mbb,
              int64_t nbb, int64_t nkb, int64_t b, const int *Ea, const int *ca, const int *Eb,
              const int *cb, int smax_a, int smax_b, int d, int fast, int first, int last,
              double alpha, double beta, double *C, int64_t ldc, double *state, int L0,
              cudaStream_t st);
int tn_oz_cr_limbs(int need);

/* Slice counts of the last plan (d, smax_a, smax_b): a read-only hook for
 * bench/ozaki.c (not part of the API; last writer wins across handles). */

static size_t al(size_t x) { return tn_ws_align(x); }
static int64_t rup(int64_t x, int64_t q) { return (x + q - 1) / q * q; }
static int cu(cudaError_t e) { return e == cudaSuccess ? TCNLA_SUCCESS : tn_cuda_err(e); }
static int cuk(int e) { return e == 0 ? TCNLA_SUCCESS : tn_cuda_err((cudaError_t)e); }

/* Element l of vector v of an operand: X[v * sv + l * sl] (as in ozaki.c). */
typedef struct {
    const double *X;
    int64_t sv, sl, nv;
} opnd_t;

typedef struct {
    tn_ozaki_plan_t pl;
    int64_t k, kbp;
    int fp16;
    size_t es;  /* bytes per slice element */
    int nl, L0; /* CR window */
} oz_t;

static int qg_of(const oz_t *o, int p) {
    if (!o->pl.fast) return o->pl.smax_b;
    return TN_MIN(o->pl.smax_b, o->pl.d - p);
}

static size_t p_bytes(const oz_t *o, int64_t mbp, int64_t nbp) {
    size_t cols = 0;
    for (int p = 0; p < o->pl.smax_a; p++) cols += (size_t)TN_MAX(0, qg_of(o, p));
    return 4 * cols * (size_t)mbp * (size_t)nbp;
}

static size_t block_bytes(const oz_t *o, int64_t mbp, int64_t nbp) {
    const size_t nkb = (size_t)o->pl.nkb, k = (size_t)o->k, kbp = (size_t)o->kbp;
    size_t b = al(64);
    b += al(8 * k * (size_t)TN_MAX(mbp, nbp));
    b += al(o->es * nkb * (size_t)o->pl.smax_a * (size_t)mbp * kbp);
    b += al(o->es * nkb * (size_t)o->pl.smax_b * (size_t)nbp * kbp);
    b += al(4 * (size_t)mbp * nkb * (size_t)o->pl.smax_a) + al(4 * (size_t)mbp * nkb);
    b += al(4 * (size_t)nbp * nkb * (size_t)o->pl.smax_b) + al(4 * (size_t)nbp * nkb);
    b += al(p_bytes(o, mbp, nbp));
    if (nkb > 1)
        b += al((o->pl.exact ? 8 * (size_t)o->nl : 16) * (size_t)mbp * (size_t)nbp);
    return b;
}

/* workspace budget of both schemes (ozaki2_cuda.c uses it too) */
size_t tn_oz_budget(tcnla_handle_t h) {
    if (h->ozaki.workspace_cap) return h->ozaki.workspace_cap;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) fr = (size_t)4 << 30;
    size_t b = (fr + h->cuda->ws_bytes) / 2;
    return TN_MIN(b, (size_t)16 << 30);
}

/* Algorithm 3 / full split counts of one operand on the GPU, chunked. */
static int plan_operand(struct tn_cuda_ctx *c, const opnd_t *o, int64_t k, const oz_t *oz,
                        const double *w, double sq, double *X, unsigned char *fin, int64_t chunk,
                        int *need, int *done, int *erange) {
    int st = 0;
    for (int64_t v0 = 0; v0 < o->nv && !st; v0 += chunk) {
        int64_t nvc = TN_MIN(chunk, o->nv - v0);
        st = cuk(tn_oz_pack(o->X, o->sv, o->sl, v0, nvc, k, X, 1, nvc, c->stream));
        if (!st)
            st = cuk(tn_oz_plan(X, nvc, k, oz->pl.nkb, oz->pl.kbl, oz->pl.vmax, w, sq, need + v0,
                                done + v0, fin, erange, c->stream));
    }
    return st;
}

static int make_plan(tcnla_handle_t h, tcnla_gemm_method_t method, const opnd_t *oa,
                     const opnd_t *ob, int64_t k, int out_prec, oz_t *oz) {
    struct tn_cuda_ctx *c = h->cuda;
    tn_ozaki_plan_t *pl = &oz->pl;
    memset(oz, 0, sizeof *oz);
    tn_ozaki_blocking(method, k, &pl->nkb, &pl->kbl, &pl->vmax);
    oz->k = k;
    oz->kbp = rup(pl->kbl, 16);
    oz->fp16 = method == TCNLA_GEMM_OZAKI_FP16;
    oz->es = oz->fp16 ? 2 : 1;
    oz->nl = 16;
    pl->mode = (int)h->ozaki.mode;
    if (h->ozaki.mode == TCNLA_OZAKI_FIXED) {
        pl->d = pl->smax_a = pl->smax_b = TN_MAX(1, TN_MIN(h->ozaki.slices, TN_OZ_MAX_SLICES));
        pl->fast = h->ozaki.fast != 0;
        return TCNLA_SUCCESS;
    }
    const int cr = h->ozaki.mode == TCNLA_OZAKI_CR;
    const int64_t m = oa->nv, n = ob->nv, nmax = TN_MAX(m, n);
    size_t fixed = al(64) + 2 * al(8 * (size_t)k) + 2 * al(4 * (size_t)(m + n));
    size_t per = 8 * (size_t)k + (size_t)pl->nkb;
    size_t bud = tn_oz_budget(h);
    int64_t chunk = bud > fixed + per ? (int64_t)((bud - fixed) / per) - 2 : 1;
    chunk = TN_MAX(1, TN_MIN(chunk, nmax));
    size_t total = fixed + al(8 * (size_t)k * (size_t)chunk) + al((size_t)pl->nkb * (size_t)chunk);
    char *ws = tn_cuda_workspace(c, total);
    if (!ws) return TCNLA_ERR_ALLOC;
    tn_carve_t cv = {ws, 0, total};
    int *er = tn_carve(&cv, 64);
    double *w = tn_carve(&cv, 8 * (size_t)k), *z = tn_carve(&cv, 8 * (size_t)k);
    int *need = tn_carve(&cv, 4 * (size_t)(m + n)), *done = tn_carve(&cv, 4 * (size_t)(m + n));
    double *X = tn_carve(&cv, 8 * (size_t)k * (size_t)chunk);
    unsigned char *fin = tn_carve(&cv, (size_t)pl->nkb * (size_t)chunk);
    if (!er || !w || !z || !need || !done || !X || !fin) return TCNLA_ERR_INTERNAL;
    int st = 0;
    int *hp = (int *)c->pinned;
    hp[0] = INT_MIN, hp[1] = INT_MAX, hp[2] = INT_MIN, hp[3] = INT_MAX;
    st = cu(cudaMemcpyAsync(er, hp, 4 * sizeof(int), cudaMemcpyHostToDevice, c->stream));
    if (!st) st = cu(cudaStreamSynchronize(c->stream)); /* hp reused below */
    if (!st && !cr) {
        st = cuk(tn_oz_abs_sums(ob->X, ob->sv, ob->sl, n, k, w, c->stream));
        if (!st) st = cuk(tn_oz_abs_sums(oa->X, oa->sv, oa->sl, m, k, z, c->stream));
    }
    const double u = out_prec == 32 ? 0x1p-24 : 0x1p-53;
    const double sq = 2.0 * sqrt((double)k) * u; /* as vec_needs; s * sq below */
    if (!st)
        st = plan_operand(c, oa, k, oz, cr ? NULL : w, sq, X, fin, chunk, need, done, er);
    if (!st)
        st = plan_operand(c, ob, k, oz, cr ? NULL : z, sq, X, fin, chunk, need + m, done + m,
                          er + 2);
    int *hn = NULL;
    if (!st) {
        hn = malloc(sizeof(int) * 2 * (size_t)(m + n));
        if (!hn) st = TCNLA_ERR_ALLOC;
    }
    if (!st) st = cu(cudaMemcpyAsync(hn, need, 4 * (size_t)(m + n), cudaMemcpyDeviceToHost, c->stream));
    if (!st)
        st = cu(cudaMemcpyAsync(hn + m + n, done, 4 * (size_t)(m + n), cudaMemcpyDeviceToHost,
                                c->stream));
    if (!st) st = cu(cudaMemcpyAsync(hp, er, 4 * sizeof(int), cudaMemcpyDeviceToHost, c->stream));
    if (!st) st = cu(cudaStreamSynchronize(c->stream));
    if (!st) {
        const int *hd = hn + m + n;
        int da = 0, db = 0, all = 1;
        for (int64_t v = 0; v < m; v++) da = TN_MAX(da, hn[v]), all &= hd[v];
        for (int64_t v = m; v < m + n; v++) db = TN_MAX(db, hn[v]), all &= hd[v];
        pl->d = TN_MAX(1, TN_MAX(da, db));
        if (cr) {
            pl->smax_a = TN_MAX(1, da);
            pl->smax_b = TN_MAX(1, db);
            pl->exact = 1;
            pl->exhausted = 1;
            /* window of limbs: every slice product v 2^(eA + eB), |v| < 2^31 */
            if (hp[0] != INT_MIN && hp[2] != INT_MIN) {
                int emax = hp[0] + hp[2], emin = hp[1] + hp[3];
                int lo = (emin - TN_OZ_ACC_EBASE) >> 5;
                int hi = ((emax - TN_OZ_ACC_EBASE) >> 5) + 1;
                oz->L0 = lo;
                oz->nl = tn_oz_cr_limbs(hi + 3 - lo + 1);
                if (!oz->nl) st = TCNLA_ERR_INTERNAL;
            }
        } else {
            pl->smax_a = pl->smax_b = pl->d;
            pl->exhausted = all;
            pl->fast = h->ozaki.fast != 0 && !all;
        }
    }
    free(hn);
    return st;
}

/* *found = whether op(A) or op(B) (FP32 or FP64, stored arows x acols and
 * brows x bcols) holds NaN or Inf; one flag read back, one stream sync. */
static int any_nonfinite(struct tn_cuda_ctx *c, int f32, const void *A, int64_t lda,
                         int64_t arows, int64_t acols, const void *B, int64_t ldb, int64_t brows,
                         int64_t bcols, int *found) {
    cudaStream_t s = c->stream;
    int st, *flag = tn_cuda_workspace(c, 64);
    if (!flag) return TCNLA_ERR_ALLOC;
    if ((st = cu(cudaMemsetAsync(flag, 0, sizeof(int), s)))) return st;
    if ((st = cuk(tn_oz_nonfinite(f32, A, lda, arows, acols, flag, s)))) return st;
    if ((st = cuk(tn_oz_nonfinite(f32, B, ldb, brows, bcols, flag, s)))) return st;
    int *hp = (int *)c->pinned;
    if ((st = cu(cudaMemcpyAsync(hp, flag, sizeof(int), cudaMemcpyDeviceToHost, s)))) return st;
    if ((st = cu(cudaStreamSynchronize(s)))) return st;
    *found = hp[0] != 0;
    return TCNLA_SUCCESS;
}

/* C = alpha op(A) op(B) + beta C, FP64 device data. */
static int ozaki_f64(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                     int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                     const double *B, int64_t ldb, double beta, double *C, int64_t ldc,
                     int out_prec) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = c->stream;
    int st;
    if (k == 0 || alpha == 0.0) { /* C = beta C; C not read when beta == 0 */
        cl->info.method = method;
        return cuk(tn_oz_dscale(beta, C, ldc, m, n, s));
    }
    const int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    const int64_t brows = tb == TCNLA_OP_N ? k : n, bcols = tb == TCNLA_OP_N ? n : k;
    int native = method == TCNLA_GEMM_NATIVE_FP64;
    if (!native && (st = any_nonfinite(c, 0, A, lda, arows, acols, B, ldb, brows, bcols, &native)))
        return st;
    if (native) {
        if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
            ldc > INT_MAX)
            return TCNLA_ERR_NOT_SUPPORTED;
        cl->info.method = TCNLA_GEMM_NATIVE_FP64;
        return tn_cublas_st(cublasDgemm(c->cublas, ta == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T,
                                        tb == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T, (int)m,
                                        (int)n, (int)k, &alpha, A, (int)lda, B, (int)ldb, &beta, C,
                                        (int)ldc));
    }
    cl->info.method = method;

    const opnd_t oa = {A, ta == TCNLA_OP_N ? 1 : lda, ta == TCNLA_OP_N ? lda : 1, m};
    const opnd_t ob = {B, tb == TCNLA_OP_N ? ldb : 1, tb == TCNLA_OP_N ? 1 : ldb, n};
    oz_t oz;
    if ((st = make_plan(h, method, &oa, &ob, k, out_prec, &oz))) return st;
    const tn_ozaki_plan_t *pl = &oz.pl;
    cl->info.ozaki_d = pl->d, cl->info.ozaki_slices_a = pl->smax_a;
    cl->info.ozaki_slices_b = pl->smax_b, cl->info.ozaki_scheme = 1;
    if (oz.kbp > INT_MAX || pl->nkb > 65535) return TCNLA_ERR_NOT_SUPPORTED;

    /* blocking in m and n for the workspace budget (never changes a bit) */
    const size_t bud = tn_oz_budget(h);
    int64_t mb = m, nb = TN_MIN(n, 65535);
    for (;;) {
        int64_t mbp = rup(mb, 16), nbp = rup(nb, 16);
        int fits = block_bytes(&oz, mbp, nbp) <= bud && mbp <= INT_MAX &&
                   (int64_t)pl->smax_b * nbp <= INT_MAX;
        if (fits) break;
        if (mb <= 16 && nb <= 16) return TCNLA_ERR_ALLOC;
        if (mb >= nb) mb = (mb + 1) / 2;
        else nb = (nb + 1) / 2;
    }
    const int64_t mbp = rup(mb, 16), nbp = rup(nb, 16);
    const size_t total = block_bytes(&oz, mbp, nbp);
    char *ws = tn_cuda_workspace(c, total);
    if (!ws) return TCNLA_ERR_ALLOC;
    tn_carve_t cv = {ws, 0, total};
    const size_t nkb = (size_t)pl->nkb, kbp = (size_t)oz.kbp;
    (void)tn_carve(&cv, 64);
    double *X = tn_carve(&cv, 8 * (size_t)k * (size_t)TN_MAX(mbp, nbp));
    const size_t sa_bytes = oz.es * nkb * (size_t)pl->smax_a * (size_t)mbp * kbp;
    const size_t sb_bytes = oz.es * nkb * (size_t)pl->smax_b * (size_t)nbp * kbp;
    char *SA = tn_carve(&cv, sa_bytes), *SB = tn_carve(&cv, sb_bytes);
    int *EA = tn_carve(&cv, 4 * (size_t)mbp * nkb * (size_t)pl->smax_a);
    int *CA = tn_carve(&cv, 4 * (size_t)mbp * nkb);
    int *EB = tn_carve(&cv, 4 * (size_t)nbp * nkb * (size_t)pl->smax_b);
    int *CB = tn_carve(&cv, 4 * (size_t)nbp * nkb);
    void *P = tn_carve(&cv, p_bytes(&oz, mbp, nbp));
    double *state = NULL;
    if (nkb > 1 &&
        !(state = tn_carve(&cv, (pl->exact ? 8 * (size_t)oz.nl : 16) * (size_t)mbp * (size_t)nbp)))
        return TCNLA_ERR_INTERNAL;
    if (!X || !SA || !SB || !EA || !CA || !EB || !CB || !P) return TCNLA_ERR_INTERNAL;

    const int32_t ione = 1, izero = 0;
    const float fone = 1.0f, fzero = 0.0f;
    int64_t a_split_at = -1;
    st = 0;
    for (int64_t j0 = 0; j0 < n && !st; j0 += nb) {
        const int64_t nbb = TN_MIN(nb, n - j0);
        st = cu(cudaMemsetAsync(SB, 0, sb_bytes, s));
        if (!st) st = cuk(tn_oz_pack(ob.X, ob.sv, ob.sl, j0, nbb, k, X, k, 1, s));
        if (!st)
            st = cuk(tn_oz_split(oz.fp16, X, nbb, k, pl->nkb, pl->kbl, oz.kbp, nbp, pl->vmax,
                                 pl->smax_b, SB, EB, CB, s));
        for (int64_t i0 = 0; i0 < m && !st; i0 += mb) {
            const int64_t mbb = TN_MIN(mb, m - i0);
            if (a_split_at != i0) {
                st = cu(cudaMemsetAsync(SA, 0, sa_bytes, s));
                if (!st) st = cuk(tn_oz_pack(oa.X, oa.sv, oa.sl, i0, mbb, k, X, k, 1, s));
                if (!st)
                    st = cuk(tn_oz_split(oz.fp16, X, mbb, k, pl->nkb, pl->kbl, oz.kbp, mbp,
                                         pl->vmax, pl->smax_a, SA, EA, CA, s));
                a_split_at = i0;
            }
            for (int64_t b = 0; b < pl->nkb && !st; b++) {
                size_t poff = 0;
                for (int p = 0; p < pl->smax_a && !st; p++) {
                    const int qg = qg_of(&oz, p);
                    if (qg <= 0) continue;
                    const char *Ap = SA + oz.es * ((size_t)b * pl->smax_a + p) * mbp * kbp;
                    const char *Bq = SB + oz.es * ((size_t)b * pl->smax_b) * nbp * kbp;
                    char *Pp = (char *)P + 4 * poff;
                    if (oz.fp16)
                        st = tn_cublas_st(cublasGemmEx(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N,
                                                       (int)mbp, (int)(qg * nbp), (int)kbp, &fone,
                                                       Ap, CUDA_R_16F, (int)kbp, Bq, CUDA_R_16F,
                                                       (int)kbp, &fzero, Pp, CUDA_R_32F, (int)mbp,
                                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                    else
                        st = tn_cublas_st(cublasGemmEx(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N,
                                                       (int)mbp, (int)(qg * nbp), (int)kbp, &ione,
                                                       Ap, CUDA_R_8I, (int)kbp, Bq, CUDA_R_8I,
                                                       (int)kbp, &izero, Pp, CUDA_R_32I, (int)mbp,
                                                       CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
                    poff += (size_t)qg * (size_t)mbp * (size_t)nbp;
                }
                if (!st)
                    st = cuk(tn_oz_sum(oz.fp16, pl->exact, oz.nl, P, mbp, nbp, mbb, nbb, pl->nkb,
                                       b, EA, CA, EB, CB, pl->smax_a, pl->smax_b, pl->d, pl->fast,
                                       b == 0, b == pl->nkb - 1, alpha, beta, C + i0 + j0 * ldc,
                                       ldc, state, oz.L0, s));
            }
        }
    }
    return st;
}

int tn_cuda_ozaki(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                  int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                  const void *B, int64_t ldb, double beta, void *C, int64_t ldc, int out_prec) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    if (!c) return TCNLA_ERR_INTERNAL;
    if (method != TCNLA_GEMM_OZAKI_FP16 && method != TCNLA_GEMM_OZAKI_INT8 &&
        method != TCNLA_GEMM_NATIVE_FP64)
        return TCNLA_ERR_NOT_SUPPORTED;
    if (method == TCNLA_GEMM_OZAKI_FP16 && h->ozaki.scheme == TCNLA_OZAKI_SCHEME_2)
        return TCNLA_ERR_NOT_SUPPORTED;
    if (m <= 0 || n <= 0) return TCNLA_SUCCESS;
    int st = cu(cudaSetDevice(c->device));
    if (st) return st;
    if (tn_oz2_selected(h, method) && k > 0 && alpha != 0.0) {
        /* scheme II on the data as it is (FP32 read in place); NaN / Inf go
         * the scheme I path's way (native DGEMM), and AUTO falls back to
         * scheme I when scheme II cannot do it (> 20 moduli, > 2M rows) */
        const int f32 = out_prec == 32;
        st = tn_cuda_ozaki2(cl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, f32,
                            out_prec);
        /* Inf / NaN (found by the plan's first pass, nothing written) go on below */
        if (st != TN_OZ2_NONFINITE &&
            !((st == TCNLA_ERR_RANGE || st == TCNLA_ERR_NOT_SUPPORTED) &&
              h->ozaki.scheme == TCNLA_OZAKI_SCHEME_AUTO)) {
            if (!st) cl->info.method = method;
            return st;
        }
    }
    if (out_prec == 64)
        return ozaki_f64(cl, method, ta, tb, m, n, k, alpha, (const double *)A, lda,
                         (const double *)B, ldb, beta, (double *)C, ldc, 64);
    /* FP32 data: widened exactly, the scheme for FP32 accuracy, one rounding */
    cudaStream_t s = c->stream;
    const int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    const int64_t brows = tb == TCNLA_OP_N ? k : n, bcols = tb == TCNLA_OP_N ? n : k;
    const size_t na = (size_t)TN_MAX(arows, 1) * (size_t)acols;
    const size_t nb = (size_t)TN_MAX(brows, 1) * (size_t)bcols;
    const size_t nc = (size_t)m * (size_t)n;
    double *Ad = NULL;
    if ((st = cu(cudaMallocAsync((void **)&Ad, 8 * (na + nb + nc) + 8, s)))) return st;
    double *Bd = Ad + na, *Cd = Bd + nb;
    if (k > 0) {
        st = cuk(tn_cu_convert(TN_CONV_F32_TO_F64, A, lda, Ad, TN_MAX(arows, 1), arows, acols,
                               NULL, s));
        if (!st)
            st = cuk(tn_cu_convert(TN_CONV_F32_TO_F64, B, ldb, Bd, TN_MAX(brows, 1), brows,
                                   bcols, NULL, s));
    }
    if (!st && beta != 0.0)
        st = cuk(tn_cu_convert(TN_CONV_F32_TO_F64, C, ldc, Cd, m, m, n, NULL, s));
    if (!st)
        st = ozaki_f64(cl, method, ta, tb, m, n, k, alpha, Ad, TN_MAX(arows, 1), Bd,
                       TN_MAX(brows, 1), beta, Cd, m, 32);
    if (!st) st = cuk(tn_cu_epilogue_f64(1.0f, Cd, 0.0f, (float *)C, ldc, m, n, s));
    int st2 = cu(cudaFreeAsync(Ad, s));
    return st ? st : st2;
}
