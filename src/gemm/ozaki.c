/* The Ozaki scheme on the CPU [Mukunoki et al. 2020]: DGEMM / SGEMM from error-free
 * slices, with the Tensor Core products emulated exactly.
 *
 * Steps (see ozaki.h for the split and why every product is exact):
 *  1. NaN / Inf anywhere in op(A) or op(B): plain FP64 DGEMM (BLAS) on the
 *     same data, so NaN and Inf propagate exactly as in DGEMM (a split of Inf
 *     has no meaning). Everything below sees finite data only.
 *  2. Plan (tn_ozaki_plan): k-blocking, slice count d.
 *     DP: [Mukunoki et al. 2020] Algorithm 3 for op(A) rows, and its transpose for op(B)
 *       columns: with w = |op(B)| e and u = 2^-53 (out_prec 64) or 2^-24
 *       (out_prec 32), row i needs the first d >= 2 with
 *         (d + 1) * (|slice_d of row i| w) < s_i = 2 sqrt(k) u (|op(A)| w)_i
       and (|remainder of row i after d slices| w) < s_i (the seed has only
       the first; without the second a row stops early when its largest
       elements meet small w_l and its smaller ones large w_l),
 *       or fewer when the row is split completely (a row with s_i == 0, whose
 *       products are all zero, stops at d = 2); column j likewise with
 *       z = |op(A)|^T e. d = the largest over rows and columns, used for both
 *       operands. Fast mode (h->ozaki.fast) skips p + q > d + 1, except when
 *       every row and column was split completely within d slices (then all
 *       d^2 products are taken, as the seed prescribes).
 *     CR: every row / column split until nothing is left; all products.
 *     FIXED: d = h->ozaki.slices; fast mode as h->ozaki.fast.
 *  3. Products: for every element (i, j), k-block and slice pair (p, q), the
 *     integer dot product of the slices, exact in int32 (what the Tensor Core
 *     returns, by the bounds of ozaki.h), scaled by 2^(eA + eB).
 *  4. Summation, per element, in a fixed order (k-block, p, q):
 *     DP / FIXED: FP64 with Neumaier's compensation, then
 *       C = alpha * S + beta * C in FP64.
 *     CR: an exact fixed-point accumulator (tn_ozaki_acc_t) and one
 *       correct rounding (RN-even, gradual underflow, overflow to Inf): S is
 *       the correctly-rounded exact product op(A) op(B). Then
 *       C = alpha * S + beta * C in FP64, so C is correctly rounded exactly
 *       when alpha == 1 and beta == 0 (alpha a power of two and beta == 0
 *       keeps it too, barring under/overflow).
 *  Reproducibility: every element depends only on its row of op(A), its
 *  column of op(B), the plan (a function of the whole inputs, computed in a
 *  fixed order) and C: no reduction crosses elements or threads, and the
 *  m / n blocking for the workspace cap only decides which elements are
 *  computed together. So C is bitwise the same for any thread count or cap.
 *  Workspace cap: the slices of a block of rows of op(A) and of columns of
 *  op(B) (int16 each, with their exponents) must fit; blocks of whole rows /
 *  columns (all of k) are the smallest unit, so a cap below one row plus one
 *  column returns TCNLA_ERR_ALLOC. Not counted: O(k) scratch per thread and
 *  O(m + n + k) plan arrays.
 */
#include "gemm/ozaki.h"
#include "gemm/ozaki2.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ blocking */
void tn_ozaki_blocking(tcnla_gemm_method_t method, int64_t k, int64_t *nkb, int64_t *kbl,
                       int *vmax) {
    int64_t kmax = method == TCNLA_GEMM_OZAKI_INT8 ? TN_OZ_INT8_KBLOCK : TN_OZ_FP16_KBLOCK;
    if (k < 1) k = 1;
    int64_t nb = (k + kmax - 1) / kmax;
    int64_t len = (k + nb - 1) / nb;
    *nkb = nb;
    *kbl = len;
    if (method == TCNLA_GEMM_OZAKI_INT8) {
        *vmax = 127;
    } else {
        int lg = 0; /* ceil(log2(len)) */
        while (((int64_t)1 << lg) < len) lg++;
        int beta = (24 - lg) / 2;
        if (beta > 11) beta = 11;
        *vmax = 1 << beta;
    }
}

/* ------------------------------------------------------------ the split */
int tn_ozaki_slice(double *x, int64_t len, int vmax, int16_t *out, int *e_out) {
    double mu = 0.0;
    for (int64_t l = 0; l < len; l++) {
        double a = fabs(x[l]);
        if (a > mu) mu = a;
    }
    if (mu == 0.0) return 0;
    int ex;
    double f = frexp(mu, &ex); /* mu = f 2^ex, 0.5 <= f < 1 */
    int s = 0;
    while (ldexp(f, s + 1) <= (double)vmax) s++; /* largest s with f 2^s <= vmax */
    const int e = ex - s;                        /* smallest e with mu <= vmax 2^e */
    double rest = 0.0;
    if (e >= -1022 && e <= 1023) {
        const double down = ldexp(1.0, -e), up = ldexp(1.0, e);
        for (int64_t l = 0; l < len; l++) {
            double y = x[l] * down; /* exact unless |y| < 2^-1022, and then v = 0 */
            double v = rint(y);
            out[l] = (int16_t)v;
            if (v != 0.0) x[l] = (y - v) * up; /* the exact remainder (representable) */
            double a = fabs(x[l]);
            if (a > rest) rest = a;
        }
    } else {
        for (int64_t l = 0; l < len; l++) {
            double y = ldexp(x[l], -e);
            double v = rint(y);
            out[l] = (int16_t)v;
            if (v != 0.0) x[l] = ldexp(y - v, e);
            double a = fabs(x[l]);
            if (a > rest) rest = a;
        }
    }
    *e_out = e;
    return rest == 0.0 ? 2 : 1;
}

/* Element l of vector v of an operand: X[v * sv + l * sl]. */
typedef struct {
    const double *X;
    int64_t sv, sl;
} opnd_t;

static opnd_t opnd_a(const double *A, int64_t lda, tcnla_op_t ta) {
    opnd_t o = {A, ta == TCNLA_OP_N ? 1 : lda, ta == TCNLA_OP_N ? lda : 1};
    return o;
}
static opnd_t opnd_b(const double *B, int64_t ldb, tcnla_op_t tb) {
    opnd_t o = {B, tb == TCNLA_OP_N ? ldb : 1, tb == TCNLA_OP_N ? 1 : ldb};
    return o;
}

static void load_vec(const opnd_t *o, int64_t v, int64_t k, double *x) {
    const double *p = o->X + v * o->sv;
    if (o->sl == 1)
        memcpy(x, p, sizeof(double) * (size_t)k);
    else
        for (int64_t l = 0; l < k; l++) x[l] = p[l * o->sl];
}

/* ---------------------------------------------------------------- plan */
/* Weighted |.| sums: out[l] = sum over the other dimension of |X|; for
 * op(A) rows (o = A, nv = m) this is z = |op(A)|^T e, for op(B) columns
 * w = |op(B)| e. Each out[l] is summed by one thread in a fixed order. */
static void abs_sums(const opnd_t *o, int64_t nv, int64_t k, double *out) {
#pragma omp parallel for schedule(static)
    for (int64_t l = 0; l < k; l++) {
        double s = 0.0;
        for (int64_t v = 0; v < nv; v++) s += fabs(o->X[v * o->sv + l * o->sl]);
        out[l] = s;
    }
}

/* Per vector: DP slice need (Algorithm 3) or, with w == NULL, the full
 * slice count. need[v] gets the count, done[v] 1 when the vector was split
 * completely. Returns 0 or TCNLA_ERR_ALLOC. */
static int vec_needs(const opnd_t *o, int64_t nv, int64_t k, const tn_ozaki_plan_t *pl,
                     const double *w, double u, int *need, int *done) {
    int fail = 0;
    const double sq = 2.0 * sqrt((double)k) * u;
#pragma omp parallel
    {
        double *x = malloc(sizeof(double) * (size_t)k);
        int16_t *sl = malloc(sizeof(int16_t) * (size_t)k);
        unsigned char *fin = malloc((size_t)pl->nkb);
        if (!x || !sl || !fin) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(dynamic, 8)
        for (int64_t v = 0; v < nv; v++) {
            if (!x || !sl || !fin) continue;
            load_vec(o, v, k, x);
            double s = 0.0;
            if (w)
                for (int64_t l = 0; l < k; l++) s += fabs(x[l]) * w[l];
            s *= sq;
            memset(fin, 0, (size_t)pl->nkb);
            int d = 0, complete = 0, cmax = 0;
            for (d = 1; d <= TN_OZ_MAX_SLICES; d++) {
                double t = 0.0, tr = 0.0;
                int left = 0;
                for (int64_t b = 0; b < pl->nkb; b++) {
                    if (fin[b]) continue;
                    int64_t off = b * pl->kbl, len = TN_MIN(pl->kbl, k - off);
                    int e, r = tn_ozaki_slice(x + off, len, pl->vmax, sl, &e);
                    if (r == 0) {
                        fin[b] = 1;
                        continue;
                    }
                    cmax = d;
                    if (r == 2)
                        fin[b] = 1;
                    else
                        left = 1;
                    if (w) {
                        double tb = 0.0, rb = 0.0;
                        for (int64_t l = 0; l < len; l++)
                            tb += fabs((double)sl[l]) * w[off + l];
                        for (int64_t l = 0; l < len; l++) rb += fabs(x[off + l]) * w[off + l];
                        t += ldexp(tb, e);
                        tr += rb;
                    }
                }
                if (!left) {
                    complete = 1;
                    break;
                }
                /* Algorithm 3's test on slice d, and the remainder itself
                 * below the target: a row whose largest elements meet small
                 * w_l (and whose later slices meet large ones) must not stop
                 * while its remainder still matters */
                if (w && d >= 2 && (((d + 1) * t < s && tr < s) || (s == 0.0 && t == 0.0))) break;
            }
            need[v] = complete ? cmax : TN_MIN(d, TN_OZ_MAX_SLICES);
            done[v] = complete;
        }
        free(x);
        free(sl);
        free(fin);
    }
    return fail ? TCNLA_ERR_ALLOC : 0;
}

int tn_ozaki_plan(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                  int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
                  int64_t ldb, int out_prec, tn_ozaki_plan_t *pl) {
    memset(pl, 0, sizeof *pl);
    tn_ozaki_blocking(method, k, &pl->nkb, &pl->kbl, &pl->vmax);
    pl->mode = (int)h->ozaki.mode;
    if (h->ozaki.mode == TCNLA_OZAKI_FIXED) {
        pl->d = pl->smax_a = pl->smax_b = TN_MAX(1, TN_MIN(h->ozaki.slices, TN_OZ_MAX_SLICES));
        pl->fast = h->ozaki.fast != 0;
        return TCNLA_SUCCESS;
    }
    const int cr = h->ozaki.mode == TCNLA_OZAKI_CR;
    opnd_t oa = opnd_a(A, lda, ta), ob = opnd_b(B, ldb, tb);
    double *w = NULL, *z = NULL;
    int *need = malloc(sizeof(int) * (size_t)(m + n)), *done = malloc(sizeof(int) * (size_t)(m + n));
    int st = TCNLA_SUCCESS;
    if (!need || !done) st = TCNLA_ERR_ALLOC;
    if (!st && !cr) {
        w = malloc(sizeof(double) * (size_t)k);
        z = malloc(sizeof(double) * (size_t)k);
        if (!w || !z) st = TCNLA_ERR_ALLOC;
        if (!st) {
            abs_sums(&ob, n, k, w);
            abs_sums(&oa, m, k, z);
        }
    }
    const double u = out_prec == 32 ? 0x1p-24 : 0x1p-53;
    if (!st) st = vec_needs(&oa, m, k, pl, w, u, need, done);
    if (!st) st = vec_needs(&ob, n, k, pl, z, u, need + m, done + m);
    if (!st) {
        int da = 0, db = 0, all = 1;
        for (int64_t v = 0; v < m; v++) da = TN_MAX(da, need[v]), all &= done[v];
        for (int64_t v = m; v < m + n; v++) db = TN_MAX(db, need[v]), all &= done[v];
        if (cr) {
            pl->d = TN_MAX(1, TN_MAX(da, db));
            pl->smax_a = TN_MAX(1, da);
            pl->smax_b = TN_MAX(1, db);
            pl->exact = 1;
            pl->exhausted = 1;
        } else {
            pl->d = TN_MAX(1, TN_MAX(da, db));
            pl->smax_a = pl->smax_b = pl->d;
            pl->exhausted = all;
            pl->fast = h->ozaki.fast != 0 && !all;
        }
    }
    free(w);
    free(z);
    free(need);
    free(done);
    return st;
}

/* ------------------------------------------------- exact accumulator */
void tn_ozaki_acc_init(tn_ozaki_acc_t *a) {
    memset(a->l, 0, sizeof a->l);
    a->lo = TN_OZ_ACC_LIMBS;
    a->hi = -1;
}

void tn_ozaki_acc_add(tn_ozaki_acc_t *a, int64_t v, int E) {
    if (v == 0) return;
    int off = E - TN_OZ_ACC_EBASE; /* >= 0 by the exponent bounds of the split */
    int idx = off >> 5, sh = off & 31;
    int64_t val = v * ((int64_t)1 << sh); /* |val| < 2^62 */
    int64_t lo = val & 0xffffffffLL;
    int64_t hi = (val - lo) / 4294967296LL; /* exact */
    a->l[idx] += lo;
    a->l[idx + 1] += hi;
    if (idx < a->lo) a->lo = idx;
    if (idx + 1 > a->hi) a->hi = idx + 1;
}

static int clz64(uint64_t x) { return __builtin_clzll(x); }

double tn_ozaki_acc_round(tn_ozaki_acc_t *a) {
    if (a->hi < 0) return 0.0;
    const int lo = a->lo;
    int top = TN_MIN(a->hi + 3, TN_OZ_ACC_LIMBS - 1);
    /* carries: canonical digits in [0, 2^32), the final carry is the sign */
    int64_t carry = 0;
    for (int i = lo; i <= top; i++) {
        int64_t x = a->l[i] + carry;
        int64_t d = x & 0xffffffffLL;
        carry = (x - d) / 4294967296LL;
        a->l[i] = d;
    }
    int neg = carry < 0;
    if (neg) { /* two's complement negation of the digits lo..top */
        int64_t c = 1;
        for (int i = lo; i <= top; i++) {
            int64_t x = (0xffffffffLL ^ a->l[i]) + c;
            a->l[i] = x & 0xffffffffLL;
            c = x >> 32;
        }
    }
    int t = top;
    while (t >= lo && a->l[t] == 0) t--;
    double r = 0.0;
    if (t >= lo) {
        uint64_t L0 = (uint64_t)a->l[t];
        uint64_t L1 = t - 1 >= lo ? (uint64_t)a->l[t - 1] : 0;
        uint64_t L2 = t - 2 >= lo ? (uint64_t)a->l[t - 2] : 0;
        int nb = 64 - clz64(L0); /* bits in the top digit, 1..32 */
        int topexp = 32 * t + nb - 1 + TN_OZ_ACC_EBASE;
        int lz = 32 - nb;
        uint64_t M = (L0 << 32) | L1;
        int sticky;
        if (lz) {
            M = (M << lz) | (L2 >> (32 - lz));
            sticky = (L2 & ((1ULL << (32 - lz)) - 1)) != 0;
        } else {
            sticky = L2 != 0;
        }
        for (int i = lo; i <= t - 3 && !sticky; i++) sticky = a->l[i] != 0;
        /* M: the 64 leading bits, bit 63 worth 2^topexp */
        int keep = topexp >= -1022 ? 53 : topexp + 1075; /* bits down to 2^-1074 */
        if (keep > 0) {
            int shift = 64 - keep;
            uint64_t q = M >> shift, rem = M & ((1ULL << shift) - 1), half = 1ULL << (shift - 1);
            if (rem > half || (rem == half && (sticky || (q & 1)))) q++;
            r = ldexp((double)q, topexp - keep + 1);
        } else if (keep == 0) { /* in [2^-1075, 2^-1074): a tie only at exactly 2^-1075 */
            r = (M != (1ULL << 63) || sticky) ? 0x1p-1074 : 0.0;
        }
        if (neg) r = -r;
    }
    for (int i = lo; i <= top; i++) a->l[i] = 0;
    a->lo = TN_OZ_ACC_LIMBS;
    a->hi = -1;
    return r;
}

/* ----------------------------------------------------------- products */
/* Exact: |sum| <= kbl * vmax^2 < 2^31 (ozaki.h). */
static int32_t dot16(const int16_t *a, const int16_t *b, int64_t n) {
    int32_t s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t l = 0; l < n; l++) s += (int32_t)a[l] * (int32_t)b[l];
    return s;
}

/* Slices of the vectors v0 .. v0+nv-1 of an operand: S[(iv*smax + p)*k + l],
 * exponents E[(iv*nkb + b)*smax + p], counts cnt[iv*nkb + b]. */
typedef struct {
    int16_t *S;
    int *E, *cnt;
    int smax;
} slices_t;

static int split_block(const opnd_t *o, int64_t v0, int64_t nv, int64_t k,
                       const tn_ozaki_plan_t *pl, slices_t *sl) {
    int fail = 0;
    const int smax = sl->smax;
#pragma omp parallel
    {
        double *x = malloc(sizeof(double) * (size_t)k);
        if (!x) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(dynamic, 4)
        for (int64_t iv = 0; iv < nv; iv++) {
            if (!x) continue;
            load_vec(o, v0 + iv, k, x);
            for (int64_t b = 0; b < pl->nkb; b++) {
                int64_t off = b * pl->kbl, len = TN_MIN(pl->kbl, k - off);
                int *E = sl->E + (iv * pl->nkb + b) * smax;
                int p = 0;
                while (p < smax) {
                    int16_t *out = sl->S + (iv * smax + p) * k + off;
                    int r = tn_ozaki_slice(x + off, len, pl->vmax, out, &E[p]);
                    if (r == 0) break;
                    p++;
                    if (r == 2) break;
                }
                sl->cnt[iv * pl->nkb + b] = p;
            }
        }
        free(x);
    }
    return fail ? TCNLA_ERR_ALLOC : 0;
}

static void compute_block(const tn_ozaki_plan_t *pl, int64_t k, const slices_t *sa, int64_t mb,
                          const slices_t *sb, int64_t nb, double alpha, double beta, double *C,
                          int64_t ldc) {
    const int d = pl->d, fast = pl->fast, nkb = (int)pl->nkb;
#pragma omp parallel
    {
        tn_ozaki_acc_t acc;
        if (pl->exact) tn_ozaki_acc_init(&acc);
#pragma omp for collapse(2) schedule(dynamic, 16)
        for (int64_t jj = 0; jj < nb; jj++)
            for (int64_t ii = 0; ii < mb; ii++) {
                double s = 0.0, c = 0.0;
                for (int b = 0; b < nkb; b++) {
                    int64_t off = b * pl->kbl, len = TN_MIN(pl->kbl, k - off);
                    int ca = sa->cnt[ii * nkb + b], cb = sb->cnt[jj * nkb + b];
                    const int *Ea = sa->E + (ii * nkb + b) * sa->smax;
                    const int *Eb = sb->E + (jj * nkb + b) * sb->smax;
                    for (int p = 0; p < ca; p++) {
                        const int16_t *ap = sa->S + (ii * sa->smax + p) * k + off;
                        int qmax = fast ? TN_MIN(cb, d - p) : cb; /* p + q <= d + 1, 1-based */
                        for (int q = 0; q < qmax; q++) {
                            const int16_t *bq = sb->S + (jj * sb->smax + q) * k + off;
                            int32_t v = dot16(ap, bq, len);
                            if (v == 0) continue;
                            if (pl->exact) {
                                tn_ozaki_acc_add(&acc, v, Ea[p] + Eb[q]);
                            } else { /* Neumaier */
                                double x = ldexp((double)v, Ea[p] + Eb[q]);
                                double t = s + x;
                                if (fabs(s) >= fabs(x))
                                    c += (s - t) + x;
                                else
                                    c += (x - t) + s;
                                s = t;
                            }
                        }
                    }
                }
                double S;
                if (pl->exact)
                    S = tn_ozaki_acc_round(&acc);
                else
                    S = isfinite(s) ? s + c : s;
                double *cij = C + ii + jj * ldc;
                *cij = beta == 0.0 ? alpha * S : alpha * S + beta * *cij;
            }
    }
}

/* ------------------------------------------------------------ fallback */
static int any_nonfinite(const double *X, int64_t rows, int64_t cols, int64_t ld) {
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            if (!isfinite(X[i + j * ld])) bad = 1;
    return bad;
}

static int native_dgemm(tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                        double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                        double beta, double *C, int64_t ldc) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return TCNLA_ERR_NOT_SUPPORTED;
    const int im = (int)m, in = (int)n, ik = (int)k, ia = (int)lda, ib = (int)ldb, ic = (int)ldc;
    if (beta == 0.0) /* BLAS may read C when beta == 0: make sure NaN there is ignored */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) C[i + j * ldc] = 0.0;
    dgemm_(ta == TCNLA_OP_N ? "N" : "T", tb == TCNLA_OP_N ? "N" : "T", &im, &in, &ik, &alpha, A,
           &ia, B, &ib, &beta, C, &ic);
    return TCNLA_SUCCESS;
}

/* ---------------------------------------------------------------- entry */
int tn_cpu_ozaki(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc,
                 int out_prec) {
    tcnla_handle_t h = cl->h;
    if (method != TCNLA_GEMM_OZAKI_FP16 && method != TCNLA_GEMM_OZAKI_INT8)
        return TCNLA_ERR_NOT_SUPPORTED;
    if (method == TCNLA_GEMM_OZAKI_FP16 && h->ozaki.scheme == TCNLA_OZAKI_SCHEME_2)
        return TCNLA_ERR_NOT_SUPPORTED;
    if (m <= 0 || n <= 0) return TCNLA_SUCCESS;
    if (k == 0 || alpha == 0.0) { /* C = beta C; C not read when beta == 0 */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
        return TCNLA_SUCCESS;
    }
    const int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    const int64_t brows = tb == TCNLA_OP_N ? k : n, bcols = tb == TCNLA_OP_N ? n : k;
    if (any_nonfinite(A, arows, acols, lda) || any_nonfinite(B, brows, bcols, ldb)) {
        int st = native_dgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        if (st == TCNLA_SUCCESS) cl->info.method = TCNLA_GEMM_NATIVE_FP64;
        return st;
    }

    if (tn_oz2_selected(h, method)) { /* scheme II; AUTO falls back when it needs > 20 moduli */
        int st2 = tn_cpu_ozaki2(cl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, out_prec);
        if (st2 != TCNLA_ERR_RANGE || h->ozaki.scheme == TCNLA_OZAKI_SCHEME_2) return st2;
        /* AUTO: scheme I below */
    }
    tn_ozaki_plan_t pl;
    int st = tn_ozaki_plan(h, method, ta, tb, m, n, k, A, lda, B, ldb, out_prec, &pl);
    if (st == TCNLA_SUCCESS) {
        cl->info.ozaki_d = pl.d, cl->info.ozaki_slices_a = pl.smax_a;
        cl->info.ozaki_slices_b = pl.smax_b, cl->info.ozaki_scheme = 1;
    }
    if (st) return st;

    /* blocking in m and n for the workspace cap (whole rows / columns) */
    const size_t nkb = (size_t)pl.nkb;
    const size_t rowb = (size_t)pl.smax_a * ((size_t)k * sizeof(int16_t) + nkb * sizeof(int)) +
                        nkb * sizeof(int);
    const size_t colb = (size_t)pl.smax_b * ((size_t)k * sizeof(int16_t) + nkb * sizeof(int)) +
                        nkb * sizeof(int);
    const size_t cap = h->ozaki.workspace_cap;
    int64_t mb = m, nb = n;
    if (cap && rowb * (size_t)m + colb * (size_t)n > cap) {
        if (rowb + colb > cap) return TCNLA_ERR_ALLOC;
        if (colb * (size_t)n <= cap / 2) {
            mb = (int64_t)((cap - colb * (size_t)n) / rowb);
        } else if (rowb * (size_t)m <= cap / 2) {
            nb = (int64_t)((cap - rowb * (size_t)m) / colb);
        } else {
            mb = TN_MAX(1, (int64_t)(cap / 2 / rowb));
            nb = (int64_t)((cap - rowb * (size_t)mb) / colb);
        }
        mb = TN_MAX(1, TN_MIN(mb, m));
        nb = TN_MAX(1, TN_MIN(nb, n));
    }
    slices_t sa = {NULL, NULL, NULL, pl.smax_a}, sb = {NULL, NULL, NULL, pl.smax_b};
    sa.S = malloc(sizeof(int16_t) * (size_t)pl.smax_a * (size_t)k * (size_t)mb);
    sa.E = malloc(sizeof(int) * (size_t)pl.smax_a * nkb * (size_t)mb);
    sa.cnt = malloc(sizeof(int) * nkb * (size_t)mb);
    sb.S = malloc(sizeof(int16_t) * (size_t)pl.smax_b * (size_t)k * (size_t)nb);
    sb.E = malloc(sizeof(int) * (size_t)pl.smax_b * nkb * (size_t)nb);
    sb.cnt = malloc(sizeof(int) * nkb * (size_t)nb);
    if (!sa.S || !sa.E || !sa.cnt || !sb.S || !sb.E || !sb.cnt) st = TCNLA_ERR_ALLOC;
    const opnd_t oa = opnd_a(A, lda, ta), ob = opnd_b(B, ldb, tb);
    int64_t a_split_at = -1; /* first row of the block of A now split */
    for (int64_t j0 = 0; j0 < n && !st; j0 += nb) {
        const int64_t nbb = TN_MIN(nb, n - j0);
        st = split_block(&ob, j0, nbb, k, &pl, &sb);
        for (int64_t i0 = 0; i0 < m && !st; i0 += mb) {
            const int64_t mbb = TN_MIN(mb, m - i0);
            if (a_split_at != i0) {
                st = split_block(&oa, i0, mbb, k, &pl, &sa);
                a_split_at = i0;
            }
            if (!st)
                compute_block(&pl, k, &sa, mbb, &sb, nbb, alpha, beta, C + i0 + j0 * ldc, ldc);
        }
    }
    free(sa.S), free(sa.E), free(sa.cnt);
    free(sb.S), free(sb.E), free(sb.cnt);
    return st;
}
