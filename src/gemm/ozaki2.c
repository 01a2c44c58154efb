/* Ozaki scheme II on the CPU (see ozaki2.h for the method), and the pieces
 * the CUDA backend shares: the CRT constants, the integer norm bound, the
 * plan, the digit / residue arithmetic and the reconstruction of one element.
 *
 * CPU steps (tn_cpu_ozaki2):
 *  1. Per row of op(A) / column of op(B): the largest exponent and the
 *     integer norm bound (tn_oz2_bound), and in DP mode g = |row| . w with
 *     w = |op(B)| e (and z = |op(A)|^T e for columns), in the index order.
 *  2. Plan (tn_oz2_plan): moduli count n, hA, hB; s_i = hA + sigma_i.
 *  3. Residues of every scaled row / column for every modulus (int8), the
 *     integer dot products (exact in int64), modulo p_l, reconstruction,
 *     C = alpha x 2^-(s_i + t_j) + beta C in FP64 (no FMA).
 *  Blocking in m and n keeps the residues under h->ozaki.workspace_cap and
 *  never changes a bit: each element depends only on its row, its column
 *  and the plan.
 */
#include "gemm/ozaki2.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* pairwise coprime, largest first */
static const int MODULI[TN_OZ2_MAXN] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227,
                                        223, 217, 211, 199, 197, 193, 191, 181, 179, 173};

/* ---------------------------------------------------- 192-bit integers */
#define NL 6 /* 32-bit limbs, least significant first */
typedef struct {
    uint32_t v[NL];
} big_t;

static void big_set(big_t *a, uint32_t x) {
    memset(a, 0, sizeof *a);
    a->v[0] = x;
}
static void big_mul(big_t *a, uint32_t x) {
    uint64_t carry = 0;
    for (int i = 0; i < NL; i++) {
        uint64_t t = (uint64_t)a->v[i] * x + carry;
        a->v[i] = (uint32_t)t;
        carry = t >> 32;
    }
}
static int big_bitlen(const big_t *a) {
    for (int i = NL - 1; i >= 0; i--)
        if (a->v[i]) return 32 * i + 32 - __builtin_clz(a->v[i]);
    return 0;
}
static int big_bit(const big_t *a, int b) { return (int)((a->v[b >> 5] >> (b & 31)) & 1u); }
static uint64_t big_bits(const big_t *a, int lo, int len) { /* bits [lo, lo + len), len <= 63 */
    uint64_t r = 0;
    for (int b = len - 1; b >= 0; b--) r = (r << 1) | (uint64_t)big_bit(a, lo + b);
    return r;
}
static uint32_t big_mod(const big_t *a, uint32_t p) {
    uint64_t r = 0;
    for (int i = NL - 1; i >= 0; i--) r = ((r << 32) | a->v[i]) % p;
    return (uint32_t)r;
}

static int inv_mod(int a, int p) { /* a^-1 mod p, gcd(a, p) == 1 */
    int t = 0, nt = 1, r = p, nr = a % p;
    while (nr) {
        int q = r / nr, x;
        x = t - q * nt, t = nt, nt = x;
        x = r - q * nr, r = nr, nr = x;
    }
    return t < 0 ? t + p : t;
}

/* parts of 40 bits of an integer below 2^G: part j holds bits
 * [G - 40 (j + 1), G - 40 j) (clipped at 0), scaled back */
static void parts(const big_t *a, int G, double out[4]) {
    for (int j = 0; j < 4; j++) {
        int hi = G - 40 * j, lo = G - 40 * (j + 1);
        if (hi <= 0) {
            out[j] = 0.0;
            continue;
        }
        if (lo < 0) lo = 0;
        out[j] = ldexp((double)big_bits(a, lo, hi - lo), lo);
    }
}

int tn_oz2_log2p(int n) {
    big_t P;
    big_set(&P, 1);
    for (int l = 0; l < n; l++) big_mul(&P, (uint32_t)MODULI[l]);
    return big_bitlen(&P) - 1;
}

void tn_oz2_consts(int n, tn_oz2_consts_t *c) {
    memset(c, 0, sizeof *c);
    if (n < 1) n = 1;
    if (n > TN_OZ2_MAXN) n = TN_OZ2_MAXN;
    c->n = n;
    big_t P;
    big_set(&P, 1);
    for (int l = 0; l < n; l++) big_mul(&P, (uint32_t)MODULI[l]);
    c->log2p = big_bitlen(&P) - 1;
    const int G = c->log2p + 1; /* P < 2^G, and so is every W_l */
    parts(&P, G, c->p);
    for (int j = 0; j < 4; j++) {
        c->lo[j] = TN_MAX(0, G - 40 * (j + 1));
        c->pow2lo[j] = ldexp(1.0, c->lo[j]);
        c->pow2mlo[j] = ldexp(1.0, -c->lo[j]);
    }
    c->pinv = 1.0 / (c->p[0] + c->p[1] + c->p[2] + c->p[3]);
    for (int l = 0; l < n; l++) {
        const int p = MODULI[l];
        big_t W;
        big_set(&W, 1);
        for (int o = 0; o < n; o++)
            if (o != l) big_mul(&W, (uint32_t)MODULI[o]);
        c->mod[l] = p;
        c->qinv[l] = inv_mod((int)big_mod(&W, (uint32_t)p), p);
        parts(&W, G, c->w[l]);
        c->pinvf[l] = 1.0f / (float)p;
        int pw = 1;
        for (int t = 0; t < TN_OZ2_CHUNKS; t++) {
            c->pw[l][t] = (float)(pw > p / 2 ? pw - p : pw);
            pw = pw * 4096 % p;
        }
    }
}

/* ---------------------------------------------------- scaling */
int tn_oz2_tbits(int64_t k) {
    int bl = 0;
    while (bl < 62 && ((int64_t)1 << bl) <= k) bl++; /* k < 2^bl */
    return 46 - bl;
}

uint64_t tn_oz2_sq_term(double x, int e, int tbits) {
    if (x == 0.0) return 0;
    int ex;
    double f = frexp(fabs(x), &ex);
    uint64_t m8 = (uint64_t)(f * 256.0) + 1; /* |x| <= m8 2^(ex - 8), m8 <= 256 */
    uint64_t v = m8 * m8;
    int sh = 2 * (ex - e) + tbits;
    if (sh >= 0) return v << sh;
    if (sh <= -63) return 1;
    return (v + ((uint64_t)1 << -sh) - 1) >> -sh;
}

static int exponent(double x) {
    int ex;
    (void)frexp(x, &ex);
    return ex;
}

uint64_t tn_oz2_bound(const double *x, int64_t stride, int64_t k, int *e) {
    const int tb = tn_oz2_tbits(k);
    int emax = INT_MIN;
    for (int64_t l = 0; l < k; l++)
        if (x[l * stride] != 0.0) emax = TN_MAX(emax, exponent(x[l * stride]));
    *e = emax;
    if (emax == INT_MIN) return 0;
    uint64_t s = 0;
    for (int64_t l0 = 0; l0 < k; l0 += TN_OZ2_BLEN) {
        const int64_t l1 = TN_MIN(k, l0 + TN_OZ2_BLEN);
        int ec = INT_MIN;
        for (int64_t l = l0; l < l1; l++)
            if (x[l * stride] != 0.0) ec = TN_MAX(ec, exponent(x[l * stride]));
        if (ec == INT_MIN) continue;
        uint64_t sc = 0;
        for (int64_t l = l0; l < l1; l++) sc += tn_oz2_sq_term(x[l * stride], ec, tb);
        s += tn_oz2_bound_at(sc, ec, emax);
    }
    return s;
}

int tn_oz2_sigma(int e, uint64_t s, int tbits) { return tn_oz2_sigma_of(e, s, tbits); }

int tn_oz2_dp_culog2(int out_prec) { return TN_OZ2_DP_CLOG2 - (out_prec == 32 ? 24 : 53); }

int tn_oz2_need(int sigma, double wn, double g, int out_prec) {
    if (!(g > 0.0)) return INT_MIN;
    const int s = tn_oz2_shift(wn, g, tn_oz2_dp_culog2(out_prec));
    return s == TN_OZ2_SHIFT_HUGE ? TN_OZ2_SHIFT_HUGE : s - sigma;
}

static double prod_moduli(int n) { /* P (rounded: at most 20 roundings of 2^-53) */
    double P = 1.0;
    for (int l = 0; l < n; l++) P *= (double)MODULI[l];
    return P;
}

/* the scaled products stay below P_n / 2 with extra shifts xa, xb, and
 * the scaled elements below 2^TN_OZ2_YBITS (the shifts too: an operand of
 * zeros takes any) */
static int dp_fits(double na, double nb, double sk, int xa, int xb, int n) {
    const double a = ldexp(na, xa), b = ldexp(nb, xb);
    return xa <= TN_OZ2_YBITS && xb <= TN_OZ2_YBITS && a < 0x1p79 && b < 0x1p79 &&
           (a + sk) * (b + sk) <= prod_moduli(n) * 0.5 * (1.0 - 0x1p-30);
}

/* the bits of an integer bound x >= 0: the least t with x + 1 <= 2^t */
static int bits_of(double x) {
    int e;
    const double f = frexp(x + 1.0, &e); /* x + 1 = f 2^e, f in [0.5, 1) */
    return f == 0.5 ? e - 1 : e;
}

int tn_oz2_plan(int mode, int n_fixed, int needA, int needB, double qa, double qb, int64_t k,
                tn_oz2_plan_t *pl) {
    if (mode == TCNLA_OZAKI_FIXED) {
        pl->n = TN_MAX(1, TN_MIN(n_fixed, TN_OZ2_MAXN));
        const int L = tn_oz2_log2p(pl->n) - 2;
        pl->hA = L / 2;
        pl->hB = L - pl->hA;
        pl->ya = pl->hA + 1; /* 2^sigma ||x|| <= 1: |x 2^(h + sigma)| <= 2^h, rounded */
        pl->yb = pl->hB + 1;
        return TCNLA_SUCCESS;
    }
    /* no constraint (INT_MIN: every g is 0, the products are exact zeros) */
    needA = TN_MAX(needA, 0), needB = TN_MAX(needB, 0);
    if (needA > 2 * TN_OZ2_YBITS || needB > 2 * TN_OZ2_YBITS) return TCNLA_ERR_RANGE;
    const double na = ldexp(sqrt(qa) * (1.0 + 0x1p-40), needA);
    const double nb = ldexp(sqrt(qb) * (1.0 + 0x1p-40), needB);
    const double sk = 0.5 * sqrt((double)k);
    int n = 1;
    while (n <= TN_OZ2_MAXN && !dp_fits(na, nb, sk, 0, 0, n)) n++;
    if (n > TN_OZ2_MAXN) return TCNLA_ERR_RANGE;
    /* the bits left over, one at a time to the operand with fewer so far */
    int xa = 0, xb = 0;
    for (;;) {
        if (xa <= xb && dp_fits(na, nb, sk, xa + 1, xb, n)) xa++;
        else if (dp_fits(na, nb, sk, xa, xb + 1, n)) xb++;
        else if (dp_fits(na, nb, sk, xa + 1, xb, n)) xa++;
        else break;
    }
    pl->n = n;
    pl->hA = needA + xa;
    pl->hB = needB + xb;
    pl->ya = bits_of(ldexp(na, xa));
    pl->yb = bits_of(ldexp(nb, xb));
    return TCNLA_SUCCESS;
}

/* ---------------------------------------------------- residues */
int tn_oz2_residue(const tn_oz2_consts_t *c, int l, double x, int s) {
    const double y = nearbyint(scalbn(x, s)); /* an integer, |y| < 2^80 */
    const double a = fabs(y), ah = trunc(a * 0x1p-39);
    const unsigned __int128 v =
        ((unsigned __int128)(uint64_t)ah << 39) | (uint64_t)(a - ah * 0x1p39);
    const int p = c->mod[l];
    int r = (int)(v % (unsigned)p);
    if (y < 0.0 && r) r = p - r;
    return r >= 128 ? r - p : r;
}

int tn_oz2_mod(int64_t v, int p) {
    int r = (int)(v % p);
    return r < 0 ? r + p : r;
}

double tn_oz2_reconstruct(const tn_oz2_consts_t *c, const unsigned char *r, int64_t stride) {
    double S0 = 0.0, S1 = 0.0, S2 = 0.0, S3 = 0.0;
    for (int l = 0; l < c->n; l++) {
        const double u = (double)r[l * stride];
        S0 += c->w[l][0] * u; /* every product and partial sum exact */
        S1 += c->w[l][1] * u;
        S2 += c->w[l][2] * u;
        S3 += c->w[l][3] * u;
    }
    const double q = rint((S0 + S1) * c->pinv);
    const double D0 = S0 - q * c->p[0], D1 = S1 - q * c->p[1]; /* exact */
    const double D2 = S2 - q * c->p[2], D3 = S3 - q * c->p[3];
    /* carry each part's bits above the next grid up: T0 + T1 + T2 + T3 = x
     * exactly, every step exact, |T_j+1| about half a unit of T_j's grid */
    const double H1 = rint(D1 * c->pow2mlo[0]) * c->pow2lo[0]; /* exact scalings */
    const double H2 = rint(D2 * c->pow2mlo[1]) * c->pow2lo[1];
    const double H3 = rint(D3 * c->pow2mlo[2]) * c->pow2lo[2];
    const double T0 = D0 + H1, T1 = (D1 - H1) + H2, T2 = (D2 - H2) + H3, T3 = D3 - H3;
    return T0 + (T1 + (T2 + T3));
}

int tn_oz2_selected(tcnla_handle_t h, tcnla_gemm_method_t method) {
    if (method != TCNLA_GEMM_OZAKI_INT8) return 0;
    if (h->ozaki.mode == TCNLA_OZAKI_DP) return h->ozaki.scheme != 1;
    if (h->ozaki.mode == TCNLA_OZAKI_FIXED) return h->ozaki.scheme == 2;
    return 0;
}

/* ---------------------------------------------------- the CPU reference */
typedef struct { /* element l of vector v: X[v * sv + l * sl] */
    const double *X;
    int64_t sv, sl;
} view_t;

static double at(const view_t *o, int64_t v, int64_t l) { return o->X[v * o->sv + l * o->sl]; }

double tn_oz2_vecs(const double *X, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                   const double *w, double wn, int out_prec, int *sig, int *need) {
    const view_t o = {X, sv, sl};
    const int tb = tn_oz2_tbits(k);
    double qmax = 0.0;
    int nmax = INT_MIN;
#pragma omp parallel for schedule(static) reduction(max : qmax, nmax)
    for (int64_t v = 0; v < nv; v++) {
        double gs = 0.0;
        if (w)
            for (int64_t l = 0; l < k; l++) gs += fabs(at(&o, v, l)) * w[l];
        int emax;
        const uint64_t s = tn_oz2_bound(o.X + v * o.sv, o.sl, k, &emax);
        sig[v] = tn_oz2_sigma(emax, s, tb);
        if (s) qmax = fmax(qmax, tn_oz2_scaled_sq(s, emax, sig[v], tb));
        if (w) nmax = TN_MAX(nmax, tn_oz2_need(sig[v], wn, gs, out_prec));
    }
    if (need) *need = nmax;
    return qmax;
}

/* w[l] = sum over vectors of |x_l| (vectors in order) */
static void abs_sums(const view_t *o, int64_t nv, int64_t k, double *w) {
#pragma omp parallel for schedule(static)
    for (int64_t l = 0; l < k; l++) {
        double s = 0.0;
        for (int64_t v = 0; v < nv; v++) s += fabs(at(o, v, l));
        w[l] = s;
    }
}

double tn_oz2_norm2(const double *w, int64_t k) {
    double s = 0.0;
    for (int t = 0; t < TN_OZ2_NORM_LANES; t++) {
        double p = 0.0;
        for (int64_t l = t; l < k; l += TN_OZ2_NORM_LANES) p += w[l] * w[l];
        s += p;
    }
    return sqrt(s);
}

/* residues of nv vectors from v0, scaled by 2^(h + sig[v]): R[(l nv + v) k + i] */
static void residues(const view_t *o, int64_t v0, int64_t nv, int64_t k, int h, const int *sig,
                     const tn_oz2_consts_t *c, int8_t *R) {
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < nv; v++) {
        const int s = h + sig[v0 + v];
        for (int64_t i = 0; i < k; i++) {
            const double x = at(o, v0 + v, i);
            for (int l = 0; l < c->n; l++)
                R[((int64_t)l * nv + v) * k + i] = (int8_t)tn_oz2_residue(c, l, x, s);
        }
    }
}

static int64_t dot8(const int8_t *a, const int8_t *b, int64_t k) {
    int64_t s = 0;
    for (int64_t k0 = 0; k0 < k; k0 += TN_OZ2_KBLOCK) { /* int32 exact per block */
        const int64_t k1 = TN_MIN(k, k0 + TN_OZ2_KBLOCK);
        int32_t t = 0;
        for (int64_t i = k0; i < k1; i++) t += (int32_t)a[i] * (int32_t)b[i];
        s += t;
    }
    return s;
}

int tn_cpu_ozaki2(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                  int64_t k, double alpha, const double *A, int64_t lda, const double *B,
                  int64_t ldb, double beta, double *C, int64_t ldc, int out_prec) {
    tcnla_handle_t h = cl->h;
    const view_t oa = {A, ta == TCNLA_OP_N ? 1 : lda, ta == TCNLA_OP_N ? lda : 1};
    const view_t ob = {B, tb == TCNLA_OP_N ? ldb : 1, tb == TCNLA_OP_N ? 1 : ldb};
    const int dp = h->ozaki.mode == TCNLA_OZAKI_DP;
    int st = TCNLA_SUCCESS;
    int *sa = malloc(sizeof(int) * (size_t)(m + n));
    double *w = dp ? malloc(sizeof(double) * (size_t)(2 * k)) : NULL;
    if (!sa || (dp && !w)) {
        free(sa), free(w);
        return TCNLA_ERR_ALLOC;
    }
    int *sb = sa + m;
    double *z = dp ? w + k : NULL, wn = 0.0, zn = 0.0;
    if (dp) {
        abs_sums(&ob, n, k, w);
        abs_sums(&oa, m, k, z);
        wn = tn_oz2_norm2(w, k), zn = tn_oz2_norm2(z, k);
    }
    int needA, needB;
    const double qa = tn_oz2_vecs(oa.X, oa.sv, oa.sl, m, k, w, wn, out_prec, sa, &needA);
    const double qb = tn_oz2_vecs(ob.X, ob.sv, ob.sl, n, k, z, zn, out_prec, sb, &needB);
    tn_oz2_plan_t pl;
    st = tn_oz2_plan((int)h->ozaki.mode, h->ozaki.slices, needA, needB, qa, qb, k, &pl);
    if (st) {
        free(sa), free(w);
        return st;
    }
    cl->info.ozaki_d = cl->info.ozaki_slices_a = cl->info.ozaki_slices_b = pl.n;
    cl->info.ozaki_scheme = 2;
    tn_oz2_consts_t c;
    tn_oz2_consts(pl.n, &c);

    /* blocking for the workspace cap: residues of mb rows and nb columns */
    const size_t vb = (size_t)pl.n * (size_t)k;
    const size_t cap = h->ozaki.workspace_cap;
    int64_t mb = m, nb = n;
    if (cap && vb * (size_t)(m + n) > cap) {
        if (2 * vb > cap) st = TCNLA_ERR_ALLOC;
        mb = TN_MAX(1, TN_MIN(m, (int64_t)(cap / 2 / vb)));
        nb = TN_MAX(1, TN_MIN(n, (int64_t)((cap - vb * (size_t)mb) / vb)));
    }
    int8_t *RA = st ? NULL : malloc(vb * (size_t)mb), *RB = st ? NULL : malloc(vb * (size_t)nb);
    if (!st && (!RA || !RB)) st = TCNLA_ERR_ALLOC;
    int64_t a_at = -1; /* first row of the block of A whose residues RA holds */
    for (int64_t j0 = 0; j0 < n && !st; j0 += nb) {
        const int64_t nbb = TN_MIN(nb, n - j0);
        residues(&ob, j0, nbb, k, pl.hB, sb, &c, RB);
        for (int64_t i0 = 0; i0 < m; i0 += mb) {
            const int64_t mbb = TN_MIN(mb, m - i0);
            if (a_at != i0) residues(&oa, i0, mbb, k, pl.hA, sa, &c, RA), a_at = i0;
#pragma omp parallel for schedule(dynamic)
            for (int64_t j = 0; j < nbb; j++) {
                unsigned char r[TN_OZ2_MAXN];
                for (int64_t i = 0; i < mbb; i++) {
                    for (int l = 0; l < c.n; l++) /* u_l = (q_l x) mod p_l */
                        r[l] = (unsigned char)(tn_oz2_mod(dot8(RA + ((int64_t)l * mbb + i) * k,
                                                               RB + ((int64_t)l * nbb + j) * k, k),
                                                          c.mod[l]) *
                                               c.qinv[l] % c.mod[l]);
                    const double x = tn_oz2_reconstruct(&c, r, 1);
                    const double v = alpha * scalbn(x, -(pl.hA + sa[i0 + i] + pl.hB + sb[j0 + j]));
                    double *cij = C + (i0 + i) + (j0 + j) * ldc;
                    *cij = beta == 0.0 ? v : v + beta * *cij;
                }
            }
        }
    }
    free(RA), free(RB), free(sa), free(w);
    return st;
}
