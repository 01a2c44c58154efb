/* The CUDA backend of every GEMM method (tn_cuda_gemm), called by
 * src/gemm/gemm.c after argument checking with a resolved method and
 * m, n > 0. It mirrors tn_cpu_gemm step by step:
 *   1. k == 0 or alpha == 0: C = beta * C (C not read when beta == 0);
 *   2. SHGEMM through tcnla_sgemm: B is rounded to FP16 (RN); a finite
 *      value that overflows returns TCNLA_ERR_RANGE;
 *   3. Tensor Core methods: NaN / Inf anywhere in the inputs -> NATIVE_FP32;
 *   4. FP16-range methods: the range check of tn_range_ok on the GPU; on
 *      failure TCNLA_ERR_RANGE (C untouched) or the method's fallback;
 *   5. the computation: cuBLAS for NATIVE_FP32 (pedantic SGEMM), TF32,
 *      FP16 and NATIVE_FP64; the library's mma.sync kernels
 *      (src/backend/cuda/kernels/tc_gemm.cu) for MARKIDIS, TCEC and SHGEMM, or on
 *      compute capability 9.0 the wgmma + TMA kernels of
 *      src/backend/cuda/kernels/tc_gemm_sm90.cu for TCEC and SHGEMM (the
 *      handle's tuning sm90 = 0 uses mma.sync there too).
 * Steps 2-4 run as GPU kernels whose flags come back in one small copy
 * into the handle's pinned buffer (one stream synchronisation). */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "backend/cuda/kernels/tn_sm90.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t al(size_t x) { return tn_ws_align(x); }
static int64_t round_up(int64_t x, int64_t q) { return (x + q - 1) / q * q; }

static int cu_st(int e) { return e == 0 ? TCNLA_SUCCESS : tn_cuda_err((cudaError_t)e); }

static int kmode_of(tcnla_gemm_method_t m) {
    switch (m) {
    case TCNLA_GEMM_TCEC_FP16: return TN_KMODE_TCEC_F16;
    case TCNLA_GEMM_MARKIDIS_FP16: return TN_KMODE_MARKIDIS_F16;
    case TCNLA_GEMM_SHGEMM_FP16: return TN_KMODE_SHGEMM_F16;
    case TCNLA_GEMM_TCEC_TF32: return TN_KMODE_TCEC_TF32;
    case TCNLA_GEMM_SHGEMM_TF32: return TN_KMODE_SHGEMM_TF32;
    default: return -1;
    }
}

/* The range check kind (TN_RCHK_*) of an FP16-range method. */
static int rchk_of(const tn_method_info *mi) {
    if (mi->uses_split) return (int)mi->split;
    return mi->conv == TN_CONV_F16 ? TN_RCHK_F16 : TN_RCHK_TF32;
}

/* Split-K slices of the own kernels. MARKIDIS stays the faithful baseline:
 * its four products in one Tensor Core accumulator over all of k. */
static int splits_for(tcnla_gemm_method_t method, int64_t m, int64_t n, int64_t k, int sm) {
    if (method == TCNLA_GEMM_MARKIDIS_FP16) return 1;
    return tn_cu_tc_gemm_splits(m, n, k, sm);
}

/* Whether the sm_90a kernels may run: compute capability 9.0, a mode they
 * have, and the handle's tuning sm90 (read at each call, so that tests and
 * benchmarks can compare both paths). */
static int sm90_wanted(const struct tn_cuda_ctx *c, int mode) {
    if (c->cc_major != 9 || c->cc_minor != 0 || mode == TN_KMODE_MARKIDIS_F16) return 0;
    if (!c->tune->sm90) return 0;
    return tn_cu_sm90_available(mode) && tn_cu_sm90_smem(mode) <= c->smem_optin;
}

/* Shapes of the stored operands. */
typedef struct {
    int64_t arows, acols, brows, bcols;
} shapes_t;

static int a_aligned(const float *A, int64_t lda) {
    return ((uintptr_t)A & 15u) == 0 && lda % 4 == 0;
}
static int b16_aligned(const uint16_t *B, int64_t ldb) {
    return ((uintptr_t)B & 15u) == 0 && ldb % 8 == 0;
}

/* TCNLA_GEMM_FP16 on Hopper with op(A) rounded inside the kernel
 * (tn_cu_gemm_f16_sm90): FP32 B (op N) rounded to FP16 into the workspace,
 * no FP16 copy of A. */
static int f16_sm90(const struct tn_cuda_ctx *c, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                    const float *A, int64_t lda, int have_b16) {
    return !have_b16 && tb == TCNLA_OP_N && sm90_wanted(c, TN_KMODE_SHGEMM_F16) &&
           a_aligned(A, lda) &&
           tn_cu_gemm_f16_sm90_wanted(m, n, k, c->sm_count, c->tune->sm90_f16);
}

int tn_cuda_f16_in_place(tcnla_handle_t h, tcnla_op_t ta, int64_t m, int64_t n, int64_t k,
                         const float *A, int64_t lda) {
    (void)ta;
    return f16_sm90(h->cuda, TCNLA_OP_N, m, n, k, A, lda, 0);
}

/* Workspace the computation of `method` needs after the checks (f16k:
 * TCNLA_GEMM_FP16 takes f16_sm90). */
static size_t ws_compute(tcnla_gemm_method_t method, const shapes_t *s, int64_t m, int64_t n,
                         int64_t k, const float *A, int64_t lda, const float *B, int have_b16,
                         int64_t ldb, int sm_count, int f16k) {
    size_t na = (size_t)s->arows * (size_t)s->acols, nb = (size_t)s->brows * (size_t)s->bcols;
    switch (method) {
    case TCNLA_GEMM_NATIVE_FP32: return have_b16 ? al(4 * nb) : 0;
    case TCNLA_GEMM_NATIVE_FP64: return al(8 * na) + al(8 * nb) + al(8 * (size_t)m * (size_t)n);
    case TCNLA_GEMM_TF32: return al(4 * na) + al(4 * nb);
    case TCNLA_GEMM_FP16:
        return f16k ? al(2 * (size_t)round_up(s->brows, 8) * (size_t)s->bcols)
                    : al(2 * na) + al(2 * nb);
    default: break;
    }
    /* own kernels: aligned copies of misaligned operands (B16 is checked
     * at run time, so count it whenever it may be needed) */
    size_t bytes = 0;
    int splits = splits_for(method, m, n, k, sm_count);
    if (splits > 1) bytes += al(4 * (size_t)splits * (size_t)m * (size_t)n);
    if (!a_aligned(A, lda)) bytes += al(4 * (size_t)round_up(s->arows, 4) * (size_t)s->acols);
    if (have_b16) bytes += al(2 * (size_t)round_up(s->brows, 8) * (size_t)s->bcols);
    else if (!a_aligned(B, ldb))
        bytes += al(4 * (size_t)round_up(s->brows, 4) * (size_t)s->bcols);
    return bytes;
}

/* Copies a rows x cols matrix of `esize`-byte elements to dst with leading
 * dimension ldd. */
static int copy2d(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t rows,
                  int64_t cols, size_t esize, cudaStream_t st) {
    return cu_st((int)cudaMemcpy2DAsync(dst, (size_t)ldd * esize, src, (size_t)lds * esize,
                                        (size_t)rows * esize, (size_t)cols,
                                        cudaMemcpyDeviceToDevice, st));
}

/* ------------------------------------------------- operands checked once */
/* A driver that multiplies by the same operand many times (tcnla_rsvd,
 * tcnla_hosvd) checks it once here, for the methods it will use
 * (none trusted when an element is NaN / Inf; methods without a range check
 * need nothing more):
 *  - element by element: every x meets |represented(x) - x| <= 2^-tol |x|.
 *    Then every vector of any layout passes the per-product check (its
 *    bound is 2^-tol times the vector's largest |x|): mask;
 *  - else, data with small elements (below FP16's normal range), the
 *    per-product check itself on the rows and on the columns of the stored
 *    matrix: mask_rows, mask_cols. A product whose vectors are whole rows,
 *    or unions of whole columns (a column is the largest |x| of any union
 *    of columns at most, and its error at least), passes its check too.
 * Both in one pass over A (tn_cu_trust_check), for the FP16 kinds, which
 * are all the range-checked methods have: first its bounded pass (the
 * magnitudes alone; where an element below FP16's normal range is exact,
 * it records the rows and columns where the exact pass records every
 * layout), the exact pass where that does not decide.
 * tn_cuda_gemm then skips that operand's check and decides exactly as it
 * would have. The record holds until tn_cuda_untrust; the driver must not
 * write the operand meanwhile. */
static int trust_methods(const tcnla_gemm_method_t *meths, int nm, tcnla_gemm_method_t m) {
    for (int i = 0; i < nm; i++)
        if (meths[i] == m) return 1;
    return 0;
}

/* The kinds of the element-wise check for the methods meths (kk; idx[m]:
 * method m's kind, -1 none; tolb: each kind's tol_bits). 0 when no method
 * runs on the Tensor Cores (nothing to check). */
static int trust_kinds(const tcnla_gemm_method_t *meths, int nm, tn_elem_kinds_t *kk, int *idx,
                       int *tolb) {
    memset(kk, 0, sizeof *kk);
    int any = 0;
    for (int m = 0; m < TCNLA_GEMM_METHOD_COUNT; m++) idx[m] = -1;
    for (int m = 1; m < TCNLA_GEMM_METHOD_COUNT; m++) {
        if (!trust_methods(meths, nm, (tcnla_gemm_method_t)m)) continue;
        const tn_method_info *mi = tn_method((tcnla_gemm_method_t)m);
        if (!mi->tensor_core) continue;
        any = 1;
        if (!mi->fp16_range) continue;
        const int kind = rchk_of(mi);
        /* (none so far) untrusted: tn_cu_trust_check takes neither */
        if (!tn_rchk_is_f16_kind(kind) || mi->tol_bits > 26) continue;
        const double sc = 1.0 / (double)((int64_t)1 << mi->tol_bits);
        int j = 0;
        while (j < kk->n && !(kk->kind[j] == kind && kk->scale[j] == sc)) j++;
        if (j == kk->n) {
            if (kk->n == 4) continue; /* (never: fewer kinds exist) untrusted */
            kk->kind[j] = kind, kk->scale[j] = sc, tolb[j] = mi->tol_bits, kk->n++;
            kk->fast[j] = tn_rchk_fast(kind, mi->tol_bits);
        }
        idx[m] = j;
    }
    return any;
}

/* From the element-wise flags hf (no NaN / Inf): the methods trusted
 * element by element, and in *need the kinds that failed there. */
static unsigned trust_mask(const tcnla_gemm_method_t *meths, int nm, const int *idx,
                           const int *hf, unsigned *need) {
    unsigned mask = 0;
    *need = 0;
    for (int m = 1; m < TCNLA_GEMM_METHOD_COUNT; m++) {
        if (!trust_methods(meths, nm, (tcnla_gemm_method_t)m)) continue;
        const tn_method_info *mi = tn_method((tcnla_gemm_method_t)m);
        if (!mi->tensor_core) continue;
        if (mi->fp16_range && (idx[m] < 0 || hf[1 + idx[m]])) {
            if (idx[m] >= 0) *need |= 1u << idx[m];
            continue;
        }
        mask |= 1u << m;
    }
    return mask;
}

static void trust_record(tn_call_t *cl, const float *A, int64_t ld, int64_t rows,
                         int64_t cols, unsigned mask, unsigned mrows, unsigned mcols) {
    cl->trust.base = (uintptr_t)A, cl->trust.ld = ld, cl->trust.rows = rows, cl->trust.cols = cols;
    cl->trust.mask = mask, cl->trust.mask_rows = mrows, cl->trust.mask_cols = mcols;
}

/* the bounded pass first (the tuning's trust_bounded = 0: never) */
static int bounded_wanted(const struct tn_cuda_ctx *c) { return c->tune->trust_bounded; }

int tn_cuda_trust(tn_call_t *cl, const float *A, int64_t ld, int64_t rows, int64_t cols,
                  const tcnla_gemm_method_t *meths, int nm) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    cl->trust.mask = cl->trust.mask_rows = cl->trust.mask_cols = 0;
    if (!A || rows <= 0 || cols <= 0 || ld < rows) return TCNLA_SUCCESS;
    int st = cu_st((int)cudaSetDevice(c->device));
    if (st) return st;
    tn_elem_kinds_t kk;
    int idx[TCNLA_GEMM_METHOD_COUNT], tolb[4] = {0, 0, 0, 0};
    if (!trust_kinds(meths, nm, &kk, idx, tolb)) return TCNLA_SUCCESS;
    char *w =
        tn_cuda_workspace(c, al(64 * sizeof(int)) + al(tn_cu_trust_check_scratch(rows, cols)));
    if (!w) return TCNLA_ERR_ALLOC;
    int *dflags = (int *)w;
    void *scratch = w + al(64 * sizeof(int));
    cudaStream_t stream = c->stream;
    int *hf = (int *)c->pinned;
    /* element-wise and per-vector (rows, columns) flags, one pass over A:
     * the bounded pass where every kind is fast, the exact one where it
     * does not decide (or is not possible) */
    int allfast = bounded_wanted(c);
    for (int j = 0; j < kk.n; j++) allfast &= kk.fast[j] != 0;
    for (int bounded = allfast; bounded >= 0; bounded--) {
        if ((st = cu_st((int)cudaMemsetAsync(dflags, 0, 64 * sizeof(int), stream))) ||
            (st = cu_st(tn_cu_trust_check(A, ld, rows, cols, &kk, tolb, bounded, dflags,
                                          scratch, c->sm_count, stream))) ||
            (st = cu_st((int)cudaMemcpyAsync(hf, dflags, 40 * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream))) ||
            (st = cu_st((int)cudaStreamSynchronize(stream))))
            return st;
        if (!bounded || hf[0]) break;
        if (!hf[6] && !hf[7]) { /* decided: every vector passes every kind */
            for (int i = 8; i < 40; i++) hf[i] = 0;
            break;
        }
    }
    if (hf[0]) return TCNLA_SUCCESS; /* NaN / Inf: every product checks */
    unsigned need; /* kinds failing element by element: their per-vector flags */
    const unsigned mask = trust_mask(meths, nm, idx, hf, &need);
    unsigned mrows = 0, mcols = 0;
    for (int m = 1; m < TCNLA_GEMM_METHOD_COUNT; m++) {
        const int j = idx[m];
        if (j < 0 || !(need & (1u << j)) || !trust_methods(meths, nm, (tcnla_gemm_method_t)m))
            continue;
        const int *f = hf + 8 + 6 * j;
        if (!f[1] && !f[2]) mrows |= 1u << m;
        if (!f[4] && !f[5]) mcols |= 1u << m;
    }
    trust_record(cl, A, ld, rows, cols, mask, mrows, mcols);
    return TCNLA_SUCCESS;
}

/* tn_cuda_trust folded into a first product C = op(A) B (alpha 1, beta 0,
 * op(B) = B k x n, C m x n with ldc; A with lda) whose kernel
 * checks every element of op(A) while it rounds or splits it, the product
 * running as tn_cuda_gemm would run it on a trusted A (same kernel, split-K
 * and bits):
 *  - SHGEMM_FP16, op(A) = A dense (lda = m), B16 FP16 bits drawn by the
 *    driver (tn_cuda_trust_f16): Hopper's n64 kernel (n <= 64);
 *  - FP16, op(A) = A or A^T, FP32 B (checked and rounded to FP16 here, as
 *    tn_cuda_gemm does): Hopper's kernel with op(A) rounded inside
 *    (f16_sm90, n <= 272).
 * SHGEMM_FP16's kernel does the exact element-wise check: taken (*done =
 * 1) when every element passes for every method of meths. FP16's does the
 * bounded pass of tn_cuda_trust (magnitudes, rows and columns): taken
 * where that pass decides (no NaN / Inf, no |x| >= 65504, no row or column
 * whose largest |x| is too small for the bound), which it does on data
 * with elements below FP16's range too (the randomized SVD's test matrix).
 * Then the record tn_cuda_trust would make is made, if B passes its check
 * as well. Otherwise nothing is trusted and C is undefined: the caller
 * runs tn_cuda_trust and the product on their own. Every kind must be fast
 * (tn_rchk_fast), else not taken; FP16's not with the tuning's
 * trust_bounded = 0 either (tn_cuda_trust's exact pass alone). */
static int finite16(const tn_call_t *cl, const uint16_t *X, int64_t ld, int64_t rows,
                    int64_t cols, int64_t stride, int64_t batch);
static int trusted(const tn_call_t *cl, tcnla_gemm_method_t method, const float *X,
                   int64_t ld, int64_t rows, int64_t cols, int64_t stride, int64_t batch,
                   int vcol);

/* tn_cuda_gemm_trusting's product, recorded for its verdict
 * (trusting_verdict, now or in tn_cuda_trust_settle) */
static void late_trust_rec(tn_call_t *cl, tcnla_gemm_method_t method,
                           const tcnla_gemm_method_t *meths, int nm, int sh, int shw,
                           const int *idx, const float *A, int64_t lda, int64_t arows,
                           int64_t acols) {
    tn_late_trust_t *r = &cl->late_trust;
    r->method = method, r->nm = nm < TCNLA_GEMM_METHOD_COUNT ? nm : TCNLA_GEMM_METHOD_COUNT;
    memcpy(r->meths, meths, sizeof(*meths) * (size_t)r->nm);
    memcpy(r->idx, idx, sizeof r->idx);
    r->sh = sh, r->shw = shw, r->A = A, r->lda = lda, r->arows = arows, r->acols = acols;
}

/* The verdict of tn_cuda_gemm_trusting's product from its flags hf (A's
 * check [0 .. 7], B's [8 .. 10]): 1 where it stands (A trusted, the product
 * counted as the method's), else 0 (nothing trusted) */
static int trusting_verdict(tn_call_t *cl, const int *hf) {
    const tn_late_trust_t *r = &cl->late_trust;
    const int sh = r->sh, shw = r->shw;
    if (hf[0] || hf[8] || hf[9] || hf[10] || ((!sh || shw) && (hf[6] || hf[7]))) return 0;
    /* kinds failing element by element (the bounded pass, FP16 and the
     * wide SHGEMM: the bound decided their rows and columns, which all
     * pass) */
    unsigned need;
    const unsigned mask = trust_mask(r->meths, r->nm, r->idx, hf, &need);
    if (sh && !shw && need) return 0;
    unsigned mvec = 0;
    for (int mm = 1; mm < TCNLA_GEMM_METHOD_COUNT; mm++)
        if (r->idx[mm] >= 0 && (need & (1u << r->idx[mm])) &&
            trust_methods(r->meths, r->nm, (tcnla_gemm_method_t)mm))
            mvec |= 1u << mm;
    trust_record(cl, r->A, r->lda, r->arows, r->acols, mask, mvec, mvec);
    cl->info.method = r->method;
    cl->info.path = shw ? 4 : sh ? 1 : 5;
    return 1;
}

int tn_cuda_gemm_trusting(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                          int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                          const float *B, const uint16_t *B16, int64_t ldb, float *C,
                          int64_t ldc, const tcnla_gemm_method_t *meths, int nm, int *done) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    const int sh = method == TCNLA_GEMM_SHGEMM_FP16, tra = ta == TCNLA_OP_T;
    const int kmode = kmode_of(TCNLA_GEMM_SHGEMM_FP16); /* (both: FP16 operands) */
    const int64_t arows = tra ? k : m, acols = tra ? m : k;
    *done = 0;
    cl->trust.mask = cl->trust.mask_rows = cl->trust.mask_cols = 0;
    if (m <= 0 || n <= 0 || k <= 0 || m > INT_MAX || k > INT_MAX || n > INT_MAX ||
        ldb > INT_MAX || ldc > INT_MAX || lda < arows || (sh && lda != arows) || !A ||
        !trust_methods(meths, nm, method) || !sm90_wanted(c, kmode))
        return TCNLA_SUCCESS;
    /* SHGEMM_FP16 above 64 columns: the wide-tile kernel (one column tile,
     * so that A is read once) with the bounded pass folded, as FP16's */
    const int shw = sh && n > 64 && !tra && B16 && bounded_wanted(c) && a_aligned(A, lda) &&
                    b16_aligned(B16, ldb) && n <= tn_cu_sm90_w_cols(n) &&
                    tn_cu_sm90_w_wanted(kmode, m, n, k, c->sm_count, c->tune->sm90_wide);
    if (sh ? ((tra || n > 64) && !shw) || !B16 || !finite16(cl, B16, ldb, k, n, 0, 1)
           : method != TCNLA_GEMM_FP16 || !B || B16 || !bounded_wanted(c) ||
                 !f16_sm90(c, TCNLA_OP_N, m, n, k, A, lda, 0))
        return TCNLA_SUCCESS;
    int st = cu_st((int)cudaSetDevice(c->device));
    if (st) return st;
    tn_elem_kinds_t kk;
    int idx[TCNLA_GEMM_METHOD_COUNT], tolb[4] = {0, 0, 0, 0};
    if (!trust_kinds(meths, nm, &kk, idx, tolb)) return TCNLA_SUCCESS;
    for (int j = 0; j < kk.n; j++)
        if (!kk.fast[j]) return TCNLA_SUCCESS;
    const tn_method_info *mi = tn_method(method);
    const int splits = sh && !shw ? splits_for(method, m, n, k, c->sm_count) : 1;
    const size_t pb = splits > 1 ? al(4 * (size_t)splits * (size_t)m * (size_t)n) : 0;
    const int64_t ldb16 = round_up(k, 8);
    const size_t b16b = sh ? 0 : al(2 * (size_t)ldb16 * (size_t)n);
    const size_t scb = shw  ? al(tn_cu_gemm_f16_sm90_fold_scratch(k))
                       : sh ? 0
                            : al(tn_cu_check_scratch(n)) + al(tn_cu_gemm_f16_sm90_fold_scratch(k));
    char *w = tn_cuda_workspace(c, al(64 * sizeof(int)) + pb + b16b + scb);
    if (!w) return TCNLA_SUCCESS; /* the ordinary path says what it needs */
    int *dflags = (int *)w; /* A's check [0 .. 7] (tn_cu_trust_check's), B's [8 .. 10] */
    float *P = pb ? (float *)(w + al(64 * sizeof(int))) : NULL;
    uint16_t *b16 = b16b ? (uint16_t *)(w + al(64 * sizeof(int)) + pb) : NULL;
    void *scratch = scb ? w + al(64 * sizeof(int)) + pb + b16b : NULL;
    cudaStream_t stream = c->stream;
    if ((st = cu_st((int)cudaMemsetAsync(dflags, 0, 64 * sizeof(int), stream)))) return st;
    int e;
    if (shw) {
        e = tn_cu_tc_gemm_sm90_w(kmode, 0, m, n, k, 1.0f, A, lda, B16, NULL, ldb, 0.0f, C, ldc,
                                 NULL, NULL, NULL, rchk_of(mi), mi->tol_bits, c->smem_optin,
                                 stream, &kk, tolb, dflags, scratch);
    } else if (sh) {
        e = tn_cu_tc_gemm_sm90(kmode, 0, 0, m, n, k, 1.0f, A, lda, B16, ldb, 0.0f, C, ldc, splits,
                               P, c->smem_optin, stream, &kk, dflags);
    } else { /* B as tn_cuda_gemm takes it: checked (columns), rounded to FP16 */
        if ((st = cu_st(tn_cu_check_f32(B, ldb, k, n, 1, rchk_of(mi), mi->tol_bits, dflags + 8,
                                        scratch, stream))) ||
            (st = cu_st(tn_cu_convert(TN_CONV_F32_TO_F16, B, ldb, b16, ldb16, k, n, dflags + 8,
                                      stream))))
            return st;
        e = tn_cu_gemm_f16_sm90(tra, m, n, k, 1.0f, A, lda, b16, ldb16, 0.0f, C, ldc,
                                c->smem_optin, stream, &kk, tolb, dflags,
                                (char *)scratch + al(tn_cu_check_scratch(n)),
                                tn_cu_gemm_f16_sm90_rows(m, n, c->sm_count));
    }
    if (e == (int)cudaErrorNotSupported) return TCNLA_SUCCESS; /* the product not queued */
    if ((st = cu_st(e))) return st;
    late_trust_rec(cl, method, meths, nm, sh, shw, idx, A, lda, arows, acols);
    if (cl->late_trust.allow && tn_call_defer(cl)) { /* the verdict read with the driver's next */
        if ((st = cu_st((int)cudaMemcpyAsync(c->late_pinned, dflags, 11 * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream))))
            return st;
        cl->late_trust.pending = 1;
        *done = 2;
        return TCNLA_SUCCESS;
    }
    int *hf = (int *)c->pinned;
    if ((st = cu_st((int)cudaMemcpyAsync(hf, dflags, 11 * sizeof(int), cudaMemcpyDeviceToHost,
                                         stream))) ||
        (st = cu_st((int)cudaStreamSynchronize(stream))))
        return st;
    *done = trusting_verdict(cl, hf);
    return TCNLA_SUCCESS;
}

int tn_cuda_trust_settle(tn_call_t *cl, int *done) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    *done = 0;
    const int st = cu_st((int)cudaStreamSynchronize(c->stream));
    if (st) return st;
    *done = trusting_verdict(cl, c->late_pinned);
    return TCNLA_SUCCESS;
}

/* RP-HOSVD's fused pass (tn_cu_sm90_hosvd_fused; tn_hosvd_fused in
 * internal.h). Taken only where the two products would run on Hopper's
 * kernels without checking A (trusted for both methods in their layouts)
 * or Omega (drawn by the driver); Q gets the check tcnla_sgemm gives it:
 * into the deferred verdicts, or waited for, and then a failure leaves
 * everything to the unfused products. */
int tn_cuda_hosvd_fused_possible(tcnla_handle_t h, int64_t I1, int64_t J1, int64_t J2) {
    struct tn_cuda_ctx *c = h->cuda;
    if (!c->tune->hosvd_fuse) return 0; /* the unfused products */
    return sm90_wanted(c, kmode_of(TCNLA_GEMM_TCEC_FP16)) &&
           sm90_wanted(c, kmode_of(TCNLA_GEMM_SHGEMM_FP16)) && J1 <= 64 && J2 <= 64 &&
           I1 % (32 * tn_cu_sm90_chunk(kmode_of(TCNLA_GEMM_TCEC_FP16))) == 0;
}

int tn_cuda_hosvd_fused(tn_call_t *cl, int64_t I1, int64_t I2, int64_t T, const float *A,
                        const float *Q, int64_t J1, const uint16_t *Om, int64_t J2, float *Out,
                        float *W, int *done) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    const tcnla_gemm_method_t mc = TCNLA_GEMM_TCEC_FP16, mp = TCNLA_GEMM_SHGEMM_FP16;
    *done = 0;
    const int64_t rest = I2 * T;
    if (!sm90_wanted(c, kmode_of(mc)) || !sm90_wanted(c, kmode_of(mp)) || rest > INT_MAX ||
        !tn_cu_sm90_hosvd_fused_ok(I1, I2, T, A, Q, I1, J1, Om, I1 * T, J2, c->smem_optin) ||
        !trusted(cl, mc, A, I1, I1, rest, 0, 1, 1) || !trusted(cl, mp, A, I1, I1, I2, I1 * I2, T, 1) ||
        !finite16(cl, Om, I1 * T, I1 * T, J2, 0, 1))
        return TCNLA_SUCCESS;
    int st = cu_st((int)cudaSetDevice(c->device));
    if (st) return st;
    /* split-K slices of whole slabs: the unfused projection's
     * (tn_cuda_gemm_batched) where its slices end at slab ends, so that
     * both give the same bits; else about one wave of CTAs */
    const int64_t skt = I1 / 32, kt = skt * T, tiles = (I2 + 127) / 128;
    const int s3 = splits_for(mp, I2, J2, I1 * T, c->sm_count);
    const int64_t per_kt = (kt + s3 - 1) / s3;
    int64_t per = (T * tiles + c->sm_count - 1) / c->sm_count;
    if (per_kt % skt == 0) per = per_kt / skt;
    const int splits = (int)((T + per - 1) / per);
    const size_t pb = al(4 * (size_t)splits * (size_t)I2 * (size_t)J2);
    char *w = tn_cuda_workspace(c, al(64) + al(tn_cu_check_scratch(J1)) + pb);
    if (!w) return TCNLA_SUCCESS; /* the unfused products say what they need */
    int *dflags = (int *)w;
    void *scratch = w + al(64);
    float *P = (float *)(w + al(64) + al(tn_cu_check_scratch(J1)));
    cudaStream_t stream = c->stream;
    const tn_method_info *mi = tn_method(mc);
    int *fl = tn_call_defer(cl) ? tn_call_defer(cl) + TN_DEFER_GEMM : dflags;
    if (!tn_call_defer(cl) && (st = cu_st((int)cudaMemsetAsync(dflags, 0, 64, stream)))) return st;
    if ((st = cu_st(tn_cu_check_f32(Q, I1, I1, J1, 1, rchk_of(mi), mi->tol_bits, fl, scratch,
                                    stream))))
        return st;
    if (!tn_call_defer(cl)) {
        int *hf = (int *)c->pinned;
        if ((st = cu_st((int)cudaMemcpyAsync(hf, dflags, 3 * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream))) ||
            (st = cu_st((int)cudaStreamSynchronize(stream))))
            return st;
        if (hf[1] || hf[2]) return TCNLA_SUCCESS;
    }
    const int e = tn_cu_sm90_hosvd_fused(I1, I2, T, A, Q, I1, J1, Om, I1 * T, J2, Out, rest, W,
                                         I2, P, per, c->smem_optin, stream);
    if (e == (int)cudaErrorNotSupported) return TCNLA_SUCCESS; /* nothing queued */
    if ((st = cu_st(e))) return st;
    cl->info.method = mc;
    *done = 1;
    return TCNLA_SUCCESS;
}

/* The FP16 view X (rows x cols, ld; batch views stride apart) lies inside
 * the range tn_cuda_trust_f16 recorded. */
static int finite16(const tn_call_t *cl, const uint16_t *X, int64_t ld, int64_t rows,
                    int64_t cols, int64_t stride, int64_t batch) {
    if (!X || cl->f16_hi <= cl->f16_lo || rows <= 0 || cols <= 0 || batch <= 0 || ld < rows ||
        stride < 0)
        return 0;
    const uint64_t last = (uint64_t)(batch - 1) * (uint64_t)stride +
                          (uint64_t)(cols - 1) * (uint64_t)ld + (uint64_t)rows;
    const uintptr_t x = (uintptr_t)X;
    return x >= cl->f16_lo && x < cl->f16_hi && last <= (uint64_t)(cl->f16_hi - x) / 2;
}

/* the rows x cols X (ld, as stored) lies in the driver's orthonormal basis
 * (tn_trust_basis) */
static int in_basis(const tn_call_t *cl, const float *X, int64_t ld, int64_t rows,
                    int64_t cols) {
    if (!X || cl->basis_hi <= cl->basis_lo || rows <= 0 || cols <= 0 || ld < rows ||
        rows > TN_BASIS_ROWS)
        return 0;
    const uint64_t last = (uint64_t)(cols - 1) * (uint64_t)ld + (uint64_t)rows;
    const uintptr_t x = (uintptr_t)X;
    return x >= cl->basis_lo && x < cl->basis_hi && last <= (uint64_t)(cl->basis_hi - x) / 4;
}

static int trusted(const tn_call_t *cl, tcnla_gemm_method_t method, const float *X,
                   int64_t ld, int64_t rows, int64_t cols, int64_t stride, int64_t batch,
                   int vcol) {
    if (cl->scaling == 2) return 1; /* exactly scaled copies of finite data (call.h) */
    return tn_trust_covers(&cl->trust, (int)method, (uintptr_t)X, ld, rows, cols, stride, batch,
                           vcol);
}

/* Hopper's wide-tile path (tc_gemm_sm90_w.cu, tn_cu_sm90_w_wanted):
 * SHGEMM_FP16 and TCEC_FP16 with op(B) = B and no pass over op(A), whose
 * check (the per-row maxima of tn_cu_check_f32) the product folds on the
 * way. Unless both operands are trusted the product goes to P, the flags
 * of every check are read after it, and C = alpha P + beta C only when all
 * are clear. *taken = 0: a flag was set, or the path cannot run: the
 * caller goes down the checked path, which decides (NaN / Inf, range,
 * fallback) as always; C is untouched. */
static int gemm_wide(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                     int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                     const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                     int64_t ldc, int *taken) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    *taken = 0;
    const int kmode = kmode_of(method);
    const int sh = method == TCNLA_GEMM_SHGEMM_FP16;
    if ((!sh && method != TCNLA_GEMM_TCEC_FP16) || tb != TCNLA_OP_N || (B16 && !sh) ||
        !sm90_wanted(c, kmode) ||
        !tn_cu_sm90_w_wanted(kmode, m, n, k, c->sm_count, c->tune->sm90_wide) ||
        !a_aligned(A, lda) || (B16 && !b16_aligned(B16, ldb)))
        return TCNLA_SUCCESS;
    const tn_method_info *mi = tn_method(method);
    const int kind = rchk_of(mi);
    const int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    const int trA = trusted(cl, method, A, lda, arows, acols, 0, 1, ta == TCNLA_OP_T);
    /* B: SHGEMM's FP16 B as given, or FP32 B rounded to FP16 (RN) here;
     * TCEC's Bhi / Blo from the pre-split pass (with B's check) */
    const int64_t ldb16 = round_up(k, 8);
    /* (B in the driver's orthonormal basis: no overflow, NaN or Inf to look for) */
    const int b_basis = !B16 && in_basis(cl, B, ldb, k, n);
    const int trB = B16 ? finite16(cl, B16, ldb, k, n, 0, 1)
                        : b_basis || (!sh && trusted(cl, method, B, ldb, k, n, 0, 1, 1));
    const int defer = !(trA && trB);
    const size_t bbytes = sh ? (B16 ? 0 : 2 * (size_t)ldb16 * (size_t)n)
                             : tn_cu_sm90_ps_bytes(kmode, 0, 0, n, k);
    const size_t need = al(64) + al(tn_cu_check_scratch(n)) + al(tn_cu_check_scratch(m)) +
                        al(bbytes) + (defer ? al(4 * (size_t)m * (size_t)n) : 0);
    char *w = tn_cuda_workspace(c, need);
    if (!w) return TCNLA_SUCCESS; /* the checked path says what it needs */
    tn_carve_t cv = {w, 0, need};
    int *dflags = tn_carve(&cv, 64);
    void *scratch = tn_carve(&cv, tn_cu_check_scratch(n));
    void *scratch_a = tn_carve(&cv, tn_cu_check_scratch(m));
    void *bw = bbytes ? tn_carve(&cv, bbytes) : NULL;
    float *P = defer ? tn_carve(&cv, 4 * (size_t)m * (size_t)n) : NULL;
    if (!dflags || !scratch || !scratch_a || (bbytes && !bw) || (defer && !P))
        return TCNLA_ERR_INTERNAL;
    cudaStream_t stream = c->stream;
    int st = 0;
    if ((st = cu_st((int)cudaMemsetAsync(dflags, 0, 64, stream)))) return st;
    const uint16_t *Bh = B16, *Bl = NULL;
    int64_t ldbh = ldb;
    if (sh && !B16) {
        if ((st = cu_st(tn_cu_convert(TN_CONV_F32_TO_F16, B, ldb, bw, ldb16, k, n,
                                      b_basis ? NULL : &dflags[0], stream))))
            return st;
        Bh = bw, ldbh = ldb16;
    }
    if (sh && !trB && (st = cu_st(tn_cu_check_f16(Bh, ldbh, k, n, dflags, stream)))) return st;
    if (!sh) {
        if ((st = cu_st(tn_cu_sm90_ps_split(kmode, 1, 0, 0, n, k, B, ldb, bw, kind,
                                            mi->tol_bits, dflags, trB ? NULL : scratch,
                                            c->sm_count, stream))))
            return st;
        void *ph, *pl;
        tn_cu_sm90_ps_b_parts(kmode, n, k, bw, &ph, &pl, &ldbh);
        Bh = ph, Bl = pl;
    }
    uint32_t *vmx = NULL;
    double *verr = NULL;
    if (!trA && (st = cu_st(tn_cu_check_begin(m, kind, scratch_a, &vmx, &verr, stream))))
        return st;
    int e = tn_cu_tc_gemm_sm90_w(kmode, ta == TCNLA_OP_T, m, n, k, alpha, A, lda, Bh, Bl, ldbh,
                                 beta, C, ldc, P, vmx, verr, kind, mi->tol_bits, c->smem_optin,
                                 stream, NULL, NULL, NULL, NULL);
    if (e == (int)cudaErrorNotSupported) return TCNLA_SUCCESS; /* nothing written */
    if ((st = cu_st(e))) return st;
    if (!trA && (st = cu_st(tn_cu_check_end(m, kind, mi->tol_bits, scratch_a, dflags, stream))))
        return st;
    if (defer) { /* C = alpha P + beta C unless a check failed; then C is untouched */
        int *hf = (int *)c->pinned;
        if ((st = cu_st(tn_cu_sm90_splitk_reduce_unless(1, P, m, n, alpha, beta, C, ldc, dflags,
                                                        stream))) ||
            (st = cu_st((int)cudaMemcpyAsync(hf, dflags, 3 * sizeof(int), cudaMemcpyDeviceToHost,
                                             stream))) ||
            (st = cu_st((int)cudaStreamSynchronize(stream))))
            return st;
        if (hf[0] || hf[1] || hf[2]) return TCNLA_SUCCESS;
    }
    *taken = 1;
    cl->info.method = method;
    cl->info.path = 4;
    return TCNLA_SUCCESS;
}

int tn_cuda_gemm(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                 int64_t ldc) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    if (!c) return TCNLA_ERR_INTERNAL;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return TCNLA_ERR_NOT_SUPPORTED; /* cuBLAS's 32-bit interface */
    int st = cu_st((int)cudaSetDevice(c->device));
    if (st) return st;
    cudaStream_t stream = c->stream;

    if (k == 0 || alpha == 0.0f) { /* C = beta * C; C not read when beta == 0 */
        if ((st = cu_st(tn_cu_scale(beta, C, ldc, m, n, stream)))) return st;
        cl->info.method = method;
        return TCNLA_SUCCESS;
    }

    if (tn_method(method)->tensor_core) {
        int taken = 0;
        if ((st = gemm_wide(cl, method, ta, tb, m, n, k, alpha, A, lda, B, B16, ldb, beta, C, ldc,
                            &taken)) ||
            taken)
            return st;
    }

    shapes_t s;
    s.arows = ta == TCNLA_OP_N ? m : k;
    s.acols = ta == TCNLA_OP_N ? k : m;
    s.brows = tb == TCNLA_OP_N ? k : n;
    s.bcols = tb == TCNLA_OP_N ? n : k;
    const tn_method_info *mi = tn_method(method);
    const int shgemm = method == TCNLA_GEMM_SHGEMM_FP16 || method == TCNLA_GEMM_SHGEMM_TF32;
    const int convert_b = shgemm && !B16;
    const int have_b16 = B16 != NULL || convert_b;
    const int64_t ldb16 = round_up(s.brows, 8);

    /* one workspace for the checks and for whichever method ends up running */
    size_t phase1 = al(64) + al(tn_cu_check_scratch(TN_MAX(m, n))) +
                    (convert_b ? al(2 * (size_t)ldb16 * (size_t)s.bcols) : 0);
    /* (asked only where FP16 may run: it reads the tuning and the kernels'
     * attributes) */
    const int f16k =
        (method == TCNLA_GEMM_FP16 || (mi->fp16_range && mi->fallback == TCNLA_GEMM_FP16)) &&
        f16_sm90(c, tb, m, n, k, A, lda, have_b16);
    size_t phase2 = ws_compute(method, &s, m, n, k, A, lda, B, have_b16, ldb, c->sm_count, f16k);
    if (mi->tensor_core) {
        size_t w = ws_compute(TCNLA_GEMM_NATIVE_FP32, &s, m, n, k, A, lda, B, have_b16, ldb,
                              c->sm_count, f16k);
        phase2 = TN_MAX(phase2, w);
    }
    if (mi->fp16_range) {
        size_t w = ws_compute(mi->fallback, &s, m, n, k, A, lda, B, have_b16, ldb, c->sm_count,
                              f16k);
        phase2 = TN_MAX(phase2, w);
    }
    /* Hopper's pre-split path (tc_gemm_sm90_ps.cu) wants the hi / lo parts
     * of both operands in the workspace as well; without that much memory,
     * or inside a driver that keeps to a memory bound (tn_bounded_begin),
     * the product runs on the in-kernel split instead */
    const int kmode = kmode_of(method);
    size_t psb = 0;
    int ps = 0; /* the pre-split path */
    const int ps_splits = splits_for(method, m, n, k, c->sm_count);
    if (kmode >= 0 && cl->bounded <= 0 && sm90_wanted(c, kmode) &&
        tn_cu_sm90_ps_wanted(kmode, m, n, k, ps_splits, c->tune->sm90_presplit)) {
        psb = al(tn_cu_sm90_ps_bytes(kmode, tb == TCNLA_OP_T, m, n, k));
        ps = 1;
    }
    char *wsp = tn_cuda_workspace(c, phase1 + phase2 + psb);
    if (!wsp && psb) wsp = tn_cuda_workspace(c, phase1 + phase2), psb = 0, ps = 0;
    if (!wsp) return TCNLA_ERR_ALLOC;
    tn_carve_t cv = {wsp, 0, phase1 + phase2 + psb};
    int *dflags = tn_carve(&cv, 64);
    void *scratch = tn_carve(&cv, tn_cu_check_scratch(TN_MAX(m, n)));
    void *psw = psb ? tn_carve(&cv, psb) : NULL;
    if (!dflags || !scratch || (psb && !psw)) return TCNLA_ERR_INTERNAL;
    int ps_done = 0; /* operands the pre-split pass has split (1 op(A), 2 op(B)) */
    const uint16_t *Bh = B16;
    int64_t ldbh = ldb;

    /* the checks' flags: this call's, or a driver's deferred verdicts
     * (tn_cuda_defer_begin: no wait here, the product runs as planned and
     * the driver redoes it where a flag comes up) */
    int *fl = tn_call_defer(cl) ? tn_call_defer(cl) + TN_DEFER_GEMM : dflags;
    int need_sync = 0;
    if ((convert_b || mi->tensor_core) && !tn_call_defer(cl)) {
        if ((st = cu_st((int)cudaMemsetAsync(dflags, 0, 64, stream)))) return st;
    }
    /* B in the driver's orthonormal basis: no overflow, NaN or Inf to look for */
    const int b_basis =
        tb == TCNLA_OP_N && !B16 && in_basis(cl, B, ldb, s.brows, s.bcols);
    if (convert_b) { /* SHGEMM via tcnla_sgemm: B rounded to FP16 (RN) */
        uint16_t *b16 = tn_carve(&cv, 2 * (size_t)ldb16 * (size_t)s.bcols);
        if (!b16) return TCNLA_ERR_INTERNAL;
        if ((st = cu_st(tn_cu_convert(TN_CONV_F32_TO_F16, B, ldb, b16, ldb16, s.brows, s.bcols,
                                      b_basis ? NULL : &fl[0], stream))))
            return st;
        Bh = b16;
        ldbh = ldb16;
        need_sync = !b_basis;
    }
    if (mi->tensor_core) {
        int kind = mi->fp16_range ? rchk_of(mi) : TN_RCHK_NONE;
        /* rows of op(A): the rows of A (op N) or its columns (op T) */
        /* (the pre-split path checks A and FP32 B in its pass over them) */
        const int trA = trusted(cl, method, A, lda, s.arows, s.acols, 0, 1, ta == TCNLA_OP_T);
        if (ps) {
            if ((st = cu_st(tn_cu_sm90_ps_split(kmode, 0, ta == TCNLA_OP_T, m, n, k, A, lda, psw,
                                                kind, mi->tol_bits, fl, trA ? NULL : scratch,
                                                c->sm_count, stream))))
                return st;
            ps_done |= 1;
            need_sync |= !trA;
        } else if (!trA) {
            if ((st = cu_st(tn_cu_check_f32(A, lda, s.arows, s.acols, ta == TCNLA_OP_T, kind,
                                            mi->tol_bits, fl, scratch, stream))))
                return st;
            need_sync = 1;
        }
        /* columns of op(B); SHGEMM's FP16 B needs no range check, nor
         * the NaN / Inf one where a driver drew it (tn_cuda_trust_f16) */
        if (Bh && !(convert_b && b_basis) &&
            !(Bh == B16 && finite16(cl, Bh, ldbh, s.brows, s.bcols, 0, 1))) {
            if ((st = cu_st(tn_cu_check_f16(Bh, ldbh, s.brows, s.bcols, fl, stream))))
                return st;
            need_sync = 1;
        } else if (!Bh) {
            const int trB = b_basis ||
                            trusted(cl, method, B, ldb, s.brows, s.bcols, 0, 1, tb == TCNLA_OP_N);
            if (ps) {
                if ((st = cu_st(tn_cu_sm90_ps_split(kmode, 1, tb == TCNLA_OP_T, m, n, k, B, ldb,
                                                    psw, kind, mi->tol_bits, fl,
                                                    trB ? NULL : scratch, c->sm_count, stream))))
                    return st;
                ps_done |= 2;
                need_sync |= !trB;
            } else if (!trB) {
                if ((st = cu_st(tn_cu_check_f32(B, ldb, s.brows, s.bcols, tb == TCNLA_OP_N, kind,
                                                mi->tol_bits, fl, scratch, stream))))
                    return st;
                need_sync = 1;
            }
        }
    }
    if (need_sync && !tn_call_defer(cl)) {
        int *hf = (int *)c->pinned;
        if ((st = cu_st((int)cudaMemcpyAsync(hf, dflags, 3 * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream))))
            return st;
        if ((st = cu_st((int)cudaStreamSynchronize(stream)))) return st;
        /* operands outside the split's range as given: exact scaling
         * (src/gemm/scaling.c) where allowed */
        const int scale = tn_call_may_scale(cl, method);
        if (hf[0]) return scale ? TN_NEEDS_SCALE : TCNLA_ERR_RANGE; /* FP16 overflow of B */
        if (hf[1]) {
            method = TCNLA_GEMM_NATIVE_FP32; /* NaN / Inf propagate as in SGEMM */
        } else if (mi->fp16_range && hf[2]) {
            if (scale) return TN_NEEDS_SCALE;
            if (!tn_call_range_fallback(cl)) return TCNLA_ERR_RANGE;
            method = mi->fallback;
        }
        mi = tn_method(method);
    }
    cl->info.method = method;

    const cublasOperation_t opa = ta == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t opb = tb == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T;
    const int im = (int)m, in = (int)n, ik = (int)k;
    const size_t na = (size_t)s.arows * (size_t)s.acols, nb = (size_t)s.brows * (size_t)s.bcols;

    switch (method) {
    case TCNLA_GEMM_NATIVE_FP32: {
        const float *Bf = B;
        int64_t ldbf = ldb;
        if (Bh) { /* FP16 B widened exactly */
            float *bw = tn_carve(&cv, 4 * nb);
            if (!bw) return TCNLA_ERR_INTERNAL;
            if ((st = cu_st(tn_cu_convert(TN_CONV_F16_TO_F32, Bh, ldbh, bw, s.brows, s.brows,
                                          s.bcols, NULL, stream))))
                return st;
            Bf = bw;
            ldbf = s.brows;
        }
        return tn_cublas_st(cublasGemmEx(c->cublas, opa, opb, im, in, ik, &alpha, A, CUDA_R_32F,
                                         (int)lda, Bf, CUDA_R_32F, (int)ldbf, &beta, C, CUDA_R_32F,
                                         (int)ldc, CUBLAS_COMPUTE_32F_PEDANTIC,
                                         CUBLAS_GEMM_DEFAULT));
    }
    case TCNLA_GEMM_NATIVE_FP64: {
        double *Ad = tn_carve(&cv, 8 * na), *Bd = tn_carve(&cv, 8 * nb);
        double *Rd = tn_carve(&cv, 8 * (size_t)m * (size_t)n);
        if (!Ad || !Bd || !Rd) return TCNLA_ERR_INTERNAL;
        const double one = 1.0, zero = 0.0;
        if ((st = cu_st(tn_cu_convert(TN_CONV_F32_TO_F64, A, lda, Ad, s.arows, s.arows, s.acols,
                                      NULL, stream))))
            return st;
        if (Bh)
            st = cu_st(tn_cu_convert(TN_CONV_F16_TO_F64, Bh, ldbh, Bd, s.brows, s.brows, s.bcols,
                                     NULL, stream));
        else
            st = cu_st(tn_cu_convert(TN_CONV_F32_TO_F64, B, ldb, Bd, s.brows, s.brows, s.bcols,
                                     NULL, stream));
        if (st) return st;
        if ((st = tn_cublas_st(cublasDgemm(c->cublas, opa, opb, im, in, ik, &one, Ad, (int)s.arows,
                                           Bd, (int)s.brows, &zero, Rd, im))))
            return st;
        return cu_st(tn_cu_epilogue_f64(alpha, Rd, beta, C, ldc, m, n, stream));
    }
    case TCNLA_GEMM_TF32:
    case TCNLA_GEMM_FP16: {
        if (Bh) return TCNLA_ERR_INTERNAL; /* FP16 B only reaches SHGEMM / native methods */
        const int f16 = method == TCNLA_GEMM_FP16;
        if (f16 && f16k) { /* B rounded here, A inside the kernel */
            const int64_t ldb16 = round_up(k, 8);
            uint16_t *b16 = tn_carve(&cv, 2 * (size_t)ldb16 * (size_t)n);
            if (!b16) return TCNLA_ERR_INTERNAL;
            if ((st = cu_st(tn_cu_convert(TN_CONV_F32_TO_F16, B, ldb, b16, ldb16, k, n, NULL,
                                          stream))))
                return st;
            const int e = tn_cu_gemm_f16_sm90(ta == TCNLA_OP_T, m, n, k, alpha, A, lda, b16, ldb16,
                                              beta, C, ldc, c->smem_optin, stream, NULL, NULL,
                                              NULL, NULL,
                                              tn_cu_gemm_f16_sm90_rows(m, n, c->sm_count));
            if (e != (int)cudaErrorNotSupported) {
                cl->info.path = 5;
                return cu_st(e);
            }
            return TCNLA_ERR_INTERNAL; /* (f16_sm90 said it runs) */
        }
        const size_t es = f16 ? 2 : 4;
        const int op = f16 ? TN_CONV_F32_TO_F16 : TN_CONV_F32_TO_TF32;
        void *Ac = tn_carve(&cv, es * na), *Bc = tn_carve(&cv, es * nb);
        if (!Ac || !Bc) return TCNLA_ERR_INTERNAL;
        if ((st = cu_st(tn_cu_convert(op, A, lda, Ac, s.arows, s.arows, s.acols, NULL, stream))))
            return st;
        if ((st = cu_st(tn_cu_convert(op, B, ldb, Bc, s.brows, s.brows, s.bcols, NULL, stream))))
            return st;
        const cudaDataType_t dt = f16 ? CUDA_R_16F : CUDA_R_32F;
        const cublasComputeType_t ct = f16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
        return tn_cublas_st(cublasGemmEx(c->cublas, opa, opb, im, in, ik, &alpha, Ac, dt,
                                         (int)s.arows, Bc, dt, (int)s.brows, &beta, C, CUDA_R_32F,
                                         (int)ldc, ct, CUBLAS_GEMM_DEFAULT));
    }
    default: break;
    }

    const int mode = kmode_of(method);
    if (mode < 0) return TCNLA_ERR_NOT_SUPPORTED;
    if (c->cc_major < 8) return TCNLA_ERR_NOT_SUPPORTED; /* mma.sync with FP32 accumulate */
    int big = tn_cu_tc_gemm_config();
    if (big < 0) return cu_st(-big);
    if (tn_cu_tc_gemm_smem(mode, big) > c->smem_optin) return TCNLA_ERR_NOT_SUPPORTED;

    const float *Ak = A;
    int64_t ldak = lda;
    if (!a_aligned(A, lda)) { /* the kernels load 16-byte vectors */
        int64_t ld4 = round_up(s.arows, 4);
        float *a2 = tn_carve(&cv, 4 * (size_t)ld4 * (size_t)s.acols);
        if (!a2) return TCNLA_ERR_INTERNAL;
        if ((st = copy2d(a2, ld4, A, lda, s.arows, s.acols, 4, stream))) return st;
        Ak = a2;
        ldak = ld4;
    }
    const void *Bk;
    int64_t ldbk;
    if (Bh) {
        Bk = Bh;
        ldbk = ldbh;
        if (!b16_aligned(Bh, ldbh)) {
            uint16_t *b2 = tn_carve(&cv, 2 * (size_t)ldb16 * (size_t)s.bcols);
            if (!b2) return TCNLA_ERR_INTERNAL;
            if ((st = copy2d(b2, ldb16, Bh, ldbh, s.brows, s.bcols, 2, stream))) return st;
            Bk = b2;
            ldbk = ldb16;
        }
    } else {
        Bk = B;
        ldbk = ldb;
        if (!a_aligned(B, ldb)) {
            int64_t ld4 = round_up(s.brows, 4);
            float *b2 = tn_carve(&cv, 4 * (size_t)ld4 * (size_t)s.bcols);
            if (!b2) return TCNLA_ERR_INTERNAL;
            if ((st = copy2d(b2, ld4, B, ldb, s.brows, s.bcols, 4, stream))) return st;
            Bk = b2;
            ldbk = ld4;
        }
    }
    /* split-K when the m x n tiles cannot fill the GPU */
    const int splits = splits_for(method, m, n, k, c->sm_count);
    float *P = NULL;
    if (splits > 1 && !(P = tn_carve(&cv, 4 * (size_t)splits * (size_t)m * (size_t)n)))
        return TCNLA_ERR_INTERNAL;
    cl->info.path = 0;
    if (sm90_wanted(c, mode)) { /* Hopper: wgmma fed by TMA (same tiles, splits and P) */
        if (ps && mode == kmode) { /* (not after a fallback to another method) */
            int e = tn_cu_tc_gemm_sm90_ps(mode, ta == TCNLA_OP_T, tb == TCNLA_OP_T, m, n, k,
                                          alpha, Ak, ldak, Bk, ldbk, beta, C, ldc, splits, P, psw,
                                          psb, ps_done, c->sm_count, c->smem_optin, stream);
            cl->info.path = 2;
            if (e != (int)cudaErrorNotSupported) return cu_st(e);
        }
        int e = tn_cu_tc_gemm_sm90(mode, ta == TCNLA_OP_T, tb == TCNLA_OP_T, m, n, k, alpha, Ak,
                                   ldak, Bk, ldbk, beta, C, ldc, splits, P, c->smem_optin, stream,
                                   NULL, NULL);
        cl->info.path = 1;
        if (e != (int)cudaErrorNotSupported) return cu_st(e);
        cl->info.path = 0;
    }
    return cu_st(tn_cu_tc_gemm(mode, ta == TCNLA_OP_T, tb == TCNLA_OP_T, m, n, k, alpha, Ak, ldak,
                               Bk, ldbk, beta, C, ldc, splits, P, c->smem_optin, stream));
}

/* Strided batches (tn_sgemm_batched, src/gemm/gemm.c) on the library's own
 * kernels and on cuBLAS, with the checks of the whole batch in one pass and
 * one stream synchronisation:
 *   - NATIVE_FP32 (FP32 B): cublasGemmStridedBatchedEx;
 *   - TF32, FP16 (cuBLAS on converted copies, as tn_cuda_gemm): the copies
 *     and cublasGemmStridedBatchedEx in groups of at most 32 MiB of them;
 *   - TCEC, SHGEMM (FP16 B) and MARKIDIS (not a reduce, see below): one
 *     launch of the mma.sync kernels (tn_cu_tc_gemm_batched) for the whole
 *     batch, on Hopper too (single products there use the wgmma kernels),
 *     except a reduce of A_t^T B_t whose B_t are consecutive row blocks of
 *     one matrix (RP-HOSVD's projections): on Hopper one wgmma product
 *     whose k runs through the slabs (tn_cu_tc_gemm_sm90_slabs).
 * A reduce on cuBLAS computes the products of a group side by side into the
 * workspace (at most 16 MiB of them) and adds them in order
 * (tn_cu_splitk_reduce). The Tensor Core methods first check every matrix
 * of A and B on its own vectors, as tn_cuda_gemm checks one product.
 * Anything else, and every batch in which some product would not run as
 * requested (NaN / Inf, a range check failing), returns TN_BATCH_LOOP before
 * touching C: the caller then runs the products one by one, each with its
 * own decision, exactly as separate calls would. */
static int strides_aligned(const void *X, int64_t ld, int64_t stride, int esize) {
    const int64_t q = 16 / esize; /* elements per 16 bytes */
    return ((uintptr_t)X & 15u) == 0 && ld % q == 0 && stride % q == 0;
}

/* The products t0 .. t0 + gn - 1 of a reduce are in P (m x n each, ld m):
 * C = their sum + (t0 ? C : beta C). */
static int reduce_group(int64_t gn, const float *P, int64_t m, int64_t n, int64_t t0, float beta,
                        float *C, int64_t ldc, cudaStream_t stream) {
    return cu_st(tn_cu_splitk_reduce((int)gn, P, m, n, 1.0f, t0 ? 1.0f : beta, C, ldc, 0, 1,
                                     stream));
}

int tn_cuda_gemm_batched(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta,
                         tcnla_op_t tb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *A, int64_t lda, int64_t sa, const float *B,
                         const uint16_t *B16, int64_t ldb, int64_t sb, float beta, float *C,
                         int64_t ldc, int64_t sc, int64_t batch, int reduce) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    if (!c) return TCNLA_ERR_INTERNAL;
    if (batch < 2 || k == 0 || alpha == 0.0f) return TN_BATCH_LOOP;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX || batch > INT_MAX)
        return TN_BATCH_LOOP;
    const int mode = kmode_of(method);
    const int shgemm = method == TCNLA_GEMM_SHGEMM_FP16 || method == TCNLA_GEMM_SHGEMM_TF32;
    const int native = method == TCNLA_GEMM_NATIVE_FP32 && !B16;
    const int conv = (method == TCNLA_GEMM_TF32 || method == TCNLA_GEMM_FP16) && !B16;
    /* MARKIDIS keeps all of k in one Tensor Core accumulator (RZ inside): a
     * reduce as one product would change its error, not only the order of
     * a sum, so its products stay separate calls */
    const int own = mode >= 0 && !(shgemm && !B16) && c->cc_major >= 8 &&
                    !(reduce && method == TCNLA_GEMM_MARKIDIS_FP16);
    if (!native && !conv && !own) return TN_BATCH_LOOP;
    int st = cu_st((int)cudaSetDevice(c->device));
    if (st) return st;
    cudaStream_t stream = c->stream;
    shapes_t s;
    s.arows = ta == TCNLA_OP_N ? m : k;
    s.acols = ta == TCNLA_OP_N ? k : m;
    s.brows = tb == TCNLA_OP_N ? k : n;
    s.bcols = tb == TCNLA_OP_N ? n : k;
    const cublasOperation_t opa = ta == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t opb = tb == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T;
    const size_t mn = (size_t)m * (size_t)n;
    const float zero = 0.0f;

    if (native) {
        cl->info.method = method;
        if (!reduce)
            return tn_cublas_st(cublasGemmStridedBatchedEx(
                c->cublas, opa, opb, (int)m, (int)n, (int)k, &alpha, A, CUDA_R_32F, (int)lda,
                (long long)sa, B, CUDA_R_32F, (int)ldb, (long long)sb, &beta, C, CUDA_R_32F,
                (int)ldc, (long long)sc, (int)batch, CUBLAS_COMPUTE_32F_PEDANTIC,
                CUBLAS_GEMM_DEFAULT));
        int64_t g = (int64_t)(((size_t)16 << 20) / (4 * mn));
        g = TN_MAX(1, TN_MIN(g, batch));
        float *P = tn_cuda_workspace(c, 4 * mn * (size_t)g);
        if (!P) return TCNLA_ERR_ALLOC;
        for (int64_t t0 = 0; t0 < batch; t0 += g) {
            const int64_t gn = TN_MIN(g, batch - t0);
            if ((st = tn_cublas_st(cublasGemmStridedBatchedEx(
                     c->cublas, opa, opb, (int)m, (int)n, (int)k, &alpha, A + t0 * sa, CUDA_R_32F,
                     (int)lda, (long long)sa, B + t0 * sb, CUDA_R_32F, (int)ldb, (long long)sb,
                     &zero, P, CUDA_R_32F, (int)m, (long long)mn, (int)gn,
                     CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT))) ||
                (st = reduce_group(gn, P, m, n, t0, beta, C, ldc, stream)))
                return st;
        }
        return TCNLA_SUCCESS;
    }

    /* own kernels: 16-byte aligned matrices (the kernels' vector loads) */
    const void *Bk = B16 ? (const void *)B16 : (const void *)B;
    int splits = 1, splits3 = 1;
    /* Hopper, a reduce of A_t^T B_t with B_t the consecutive row blocks of
     * one matrix (the RP-HOSVD projection): one wgmma product whose k runs
     * through the slabs (a 3-D tensor map of A), k a multiple of 32 */
    const int slabs = own && reduce && ta == TCNLA_OP_T && tb == TCNLA_OP_N && sb == k &&
                      k % 32 == 0 && k * batch <= INT_MAX && sm90_wanted(c, mode);
    if (own) {
        if (!strides_aligned(A, lda, sa, 4) || !strides_aligned(Bk, ldb, sb, B16 ? 2 : 4))
            return TN_BATCH_LOOP;
        int big = tn_cu_tc_gemm_config();
        if (big < 0) return cu_st(-big);
        if (tn_cu_tc_gemm_smem(mode, big) > c->smem_optin) return TN_BATCH_LOOP;
        if (method != TCNLA_GEMM_MARKIDIS_FP16) /* as splits_for */
            splits = tn_cu_tc_gemm_splits_batched(m, n, k, batch, reduce, c->sm_count);
        if (slabs) splits3 = splits_for(method, m, n, k * batch, c->sm_count);
    }
    const tn_method_info *mi = tn_method(method);
    /* a matrix with stride 0 is one matrix, checked once */
    const int64_t nba = sa ? batch : 1, nbb = sb ? batch : 1;
    const size_t nvec = (size_t)TN_MAX(nba * m, nbb * n);
    const int psplits = TN_MAX(splits, splits3);
    const size_t pbytes =
        psplits > 1 ? 4 * (size_t)psplits * mn * (size_t)(reduce ? 1 : batch) : 0;
    const size_t need = al(64) + al(tn_cu_check_scratch((int64_t)nvec)) + al(pbytes);
    char *wsp = tn_cuda_workspace(c, need);
    if (!wsp) return TCNLA_ERR_ALLOC;
    tn_carve_t cv = {wsp, 0, need};
    int *dflags = tn_carve(&cv, 64);
    void *scratch = tn_carve(&cv, tn_cu_check_scratch((int64_t)nvec));
    float *P = pbytes ? tn_carve(&cv, pbytes) : NULL;
    if (!dflags || !scratch || (pbytes && !P)) return TCNLA_ERR_INTERNAL;

    /* the checks of tn_cuda_gemm, every matrix on its own vectors */
    const int kind = mi->fp16_range ? rchk_of(mi) : TN_RCHK_NONE;
    if ((st = cu_st((int)cudaMemsetAsync(dflags, 0, 64, stream)))) return st;
    int checked = 0; /* what tn_cuda_trust covers is not read again */
    if (!(mi->tensor_core &&
          trusted(cl, method, A, lda, s.arows, s.acols, sa, nba, ta == TCNLA_OP_T))) {
        if ((st = cu_st(tn_cu_check_f32_batched(A, lda, sa, s.arows, s.acols, nba,
                                                ta == TCNLA_OP_T, kind, mi->tol_bits, dflags,
                                                scratch, stream))))
            return st;
        checked = 1;
    }
    if (B16) {
        if (!finite16(cl, B16, ldb, s.brows, s.bcols, sb, nbb)) {
            st = cu_st(tn_cu_check_f16_batched(B16, ldb, sb, s.brows, s.bcols, nbb, dflags,
                                               stream));
            checked = 1;
        }
    } else if (!(mi->tensor_core &&
                 trusted(cl, method, B, ldb, s.brows, s.bcols, sb, nbb, tb == TCNLA_OP_N))) {
        st = cu_st(tn_cu_check_f32_batched(B, ldb, sb, s.brows, s.bcols, nbb, tb == TCNLA_OP_N,
                                           kind, mi->tol_bits, dflags, scratch, stream));
        checked = 1;
    }
    if (st) return st;
    int *hf = (int *)c->pinned;
    hf[1] = hf[2] = 0;
    if (checked) {
        if ((st = cu_st((int)cudaMemcpyAsync(hf, dflags, 3 * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream))))
            return st;
        if ((st = cu_st((int)cudaStreamSynchronize(stream)))) return st;
    }
    if (hf[1] || (mi->fp16_range && hf[2])) return TN_BATCH_LOOP; /* product by product */
    cl->info.method = method;

    if (slabs) {
        const int e = tn_cu_tc_gemm_sm90_slabs(mode, m, n, k, batch, alpha, A, lda, sa, Bk, ldb,
                                               beta, C, ldc, splits3, P, c->smem_optin, stream);
        if (e != (int)cudaErrorNotSupported) return cu_st(e);
    }
    if (own) /* the mma.sync kernels with a batch (grid z) dimension, also on Hopper: a
                batched variant of the wgmma kernels cost 12% of their speed on single
                products (H200, 8192^3) and is not used */
        return cu_st(tn_cu_tc_gemm_batched(mode, ta == TCNLA_OP_T, tb == TCNLA_OP_T, m, n, k,
                                           alpha, A, lda, sa, Bk, ldb, sb, beta, C, ldc, sc,
                                           batch, reduce, splits, P, c->smem_optin, stream));

    /* TF32 / FP16 on cuBLAS: packed converted copies of a group of products
     * (the checks are done, so the workspace is free again) */
    const int f16 = method == TCNLA_GEMM_FP16;
    const size_t es = f16 ? 2 : 4;
    const int op = f16 ? TN_CONV_F32_TO_F16 : TN_CONV_F32_TO_TF32;
    const cudaDataType_t dt = f16 ? CUDA_R_16F : CUDA_R_32F;
    const cublasComputeType_t ct = f16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    const size_t na = (size_t)s.arows * (size_t)s.acols, nb = (size_t)s.brows * (size_t)s.bcols;
    const size_t per = al(es * na) + (sb ? al(es * nb) : 0) + (reduce ? al(4 * mn) : 0);
    int64_t g = (int64_t)(((size_t)32 << 20) / per);
    g = TN_MAX(1, TN_MIN(g, batch));
    const size_t abytes = al(es * na * (size_t)g), bbytes = al(es * nb * (size_t)(sb ? g : 1));
    char *w = tn_cuda_workspace(c, abytes + bbytes + (reduce ? al(4 * mn * (size_t)g) : 0));
    if (!w) return TCNLA_ERR_ALLOC;
    void *Ac = w, *Bc = w + abytes;
    float *Pc = reduce ? (float *)(w + abytes + bbytes) : NULL;
    if (!sb && (st = cu_st(tn_cu_convert(op, B, ldb, Bc, s.brows, s.brows, s.bcols, NULL, stream))))
        return st;
    for (int64_t t0 = 0; t0 < batch; t0 += g) {
        const int64_t gn = TN_MIN(g, batch - t0);
        if ((st = cu_st(tn_cu_convert_batched(op, A + t0 * sa, lda, sa, Ac, s.arows, (int64_t)na,
                                              s.arows, s.acols, gn, NULL, stream))))
            return st;
        if (sb && (st = cu_st(tn_cu_convert_batched(op, B + t0 * sb, ldb, sb, Bc, s.brows,
                                                    (int64_t)nb, s.brows, s.bcols, gn, NULL,
                                                    stream))))
            return st;
        float *Cg = reduce ? Pc : C + t0 * sc;
        if ((st = tn_cublas_st(cublasGemmStridedBatchedEx(
                 c->cublas, opa, opb, (int)m, (int)n, (int)k, &alpha, Ac, dt, (int)s.arows,
                 (long long)na, Bc, dt, (int)s.brows, sb ? (long long)nb : 0LL,
                 reduce ? &zero : &beta, Cg, CUDA_R_32F, reduce ? (int)m : (int)ldc,
                 reduce ? (long long)mn : (long long)sc, (int)gn, ct, CUBLAS_GEMM_DEFAULT))))
            return st;
        if (reduce && (st = reduce_group(gn, Pc, m, n, t0, beta, C, ldc, stream))) return st;
    }
    return TCNLA_SUCCESS;
}

int tn_cuda_gemm_f16(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                     int64_t k, float alpha, const uint16_t *A, int64_t lda, const uint16_t *B,
                     int64_t ldb, float beta, float *C, int64_t ldc) {
    tcnla_handle_t h = cl->h;
    struct tn_cuda_ctx *c = h->cuda;
    return tn_cublas_st(cublasGemmEx(c->cublas, ta == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T,
                                     tb == TCNLA_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T, (int)m, (int)n,
                                     (int)k, &alpha, A, CUDA_R_16F, (int)lda, B, CUDA_R_16F,
                                     (int)ldb, &beta, C, CUDA_R_32F, (int)ldc, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
}
