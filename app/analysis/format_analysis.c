/* [Ootomo & Yokota 2023] section 3.1-3.2 (Table 1, Fig. 2) computed for any eXmY: how a
 * g ~ N(0,1) value behaves once rounded to the format with RN.
 *
 * Checked against the IEEE definitions (the paper's printed formulas are
 * kept alongside where they differ; see also `tcnla analyze formats`):
 *
 *  - max: the largest finite value has exponent field 2^X - 2, i.e. unbiased
 *    exponent 2^X - 2 - bias = bias, and significand 2 - 2^-Y, so
 *    max = 2^bias (2 - 2^-Y) = 2^(bias+1) (1 - 2^-(Y+1)). The paper's eqs.
 *    (14)/(15) print 2^bias (1 - 2^-(Y+1)) = max / 2 (32752 for FP16, whose
 *    max is 65504). OCP E4M3: max = 2^8 * 1.75 = 448.
 *  - min normal 2^(1-bias): the paper's formula is right.
 *  - min subnormal 2^(1-bias-Y): the paper prints 2^(-bias) 2^-Y, half of it
 *    (2^-25 for FP16, whose smallest subnormal is 2^-24).
 *  - overflow: under RN, |g| overflows iff it reaches max + ulp(max)/2 (the
 *    tie goes to the even neighbour 2^(emax+1), which is Inf; OCP E4M3: the
 *    tie 464 goes to 448, which is even, so only |g| > 464 overflows to NaN).
 *    Eq. (16) 2(1 - Phi(max)) is P(|g| > max); both are kept.
 *  - underflow: RN(g) = 0 iff |g| <= min_sub/2 (the tie goes to the even
 *    neighbour 0). The paper's p_uf = 2(Phi(min^denorm) - 1/2) with its
 *    printed min^denorm = min_sub/2 is exactly this, and Table 1's p_uf
 *    values (8e-4, 6e-6, 2e-8) agree with it.
 *  - not normalized: eq. 2(Phi(min_normal) - 1/2) = P(|g| < min_normal);
 *    under RN the value is subnormal or zero iff |g| < min_normal - min_sub/2
 *    (both kept; they differ by a relative 2^-(Y+1)). Table 1's values (6e-3
 *    for e4m3, 2e-5 for e5m2 and FP16) are half of the formula's (1.25e-2,
 *    4.9e-5): they match the one-sided Phi(min_normal) - 1/2.
 *  - N^{2^s sigma}: eq. (18) 2(s + bias + 1) 2^Y + 1 matches neither its own
 *    eq. (17) nor Table 1. Normal values with |v| < 2^s plus zero number
 *    2(s + bias - 1) 2^Y + 1; all finite values (subnormals included, zero
 *    once) 2(s + bias) 2^Y - 1, which is what Table 1 lists (30,719 for
 *    FP16 at s = 0). Eq. (18) exceeds eq. (17)'s count by 4 * 2^Y (two
 *    binades of each sign): it is the normal-plus-zero count for |v| < 2^(s+2).
 *  - variance: alpha_Y = sum over finite v of v^2 P(RN(g) = v), the rounding
 *    cell of v running between the midpoints to its neighbours. At the
 *    lowest value 2^e of each binade (e > emin) the neighbour below is
 *    2^e - h/2 (h = 2^(e-Y)), so the cell is [2^e - h/4, 2^e + h/2]; the
 *    paper's formula uses +-exp_of(v) u_Y = +-h/2 for every v, counting the
 *    mass of [2^e - h/2, 2^e - h/4] twice. Its error is O(2^-Y), larger than
 *    alpha_Y - 1 = O(2^-2Y) itself (and of the other sign); both are
 *    computed. Draws that overflow are excluded (contribute 0; their
 *    probability is p_of). alpha_Y < 1 and alpha_Y - 1 -> c 4^-Y with
 *    c = -0.0464364 for X = 8: inside a binade rounding adds variance (the
 *    Sheppard term h^2/12 of a uniform grid), but each binade's bottom cell
 *    [2^e - h/4, 2^e + h/2] reaches further above its value than below, and
 *    that loss is larger.
 *
 * The variance is computed as alpha_Y - 1 = sum over rounding cells of
 * D = int_cell (v^2 - g^2) phi(g) dg, each D evaluated without cancellation
 * (pairs of Gauss-Legendre nodes v +- t combined through sinh/cosh), so that
 * alpha_Y - 1 is accurate even when it is 1e-32 (Y = 52). Cells are summed
 * one by one where there are few or they are wide; a uniform run of 2^Y
 * narrow cells is summed with the midpoint Euler-Maclaurin formula (the
 * integral by composite Gauss-Legendre, end corrections up to h^5 with the
 * cell function's expansion phi(v) [h^3 (2v^2-1)/12 + h^5 (2v^4-9v^2+3)/480]).
 * |g| > 20 (mass 5e-89) and |g| < 2^-100 are left out; the tests compare
 * the two summations and a brute-force sum over all FP16 values. */
#include "analysis/exmy.h"
#include "tcnla.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define SQRT2L 1.4142135623730950488016887242096981L
#define INV_SQRT_2PI 0.39894228040143267793994605993438187L
#define LN10L 2.3025850929940456840179914546843642L
#define PIL 3.1415926535897932384626433832795029L

static const long double G_HI = 20.0L;           /* |g| beyond: left out */
static const long double G_LO = 0x1p-100L;       /* |g| below: left out */
static const long double EM_MAX_HV = 0x1p-7L;    /* Euler-Maclaurin when h (B+1) <= this */

/* --------------------------------------------------------- quadrature */

#define GL_N 8
typedef struct {
    long double x[GL_N], w[GL_N]; /* nodes and weights on [-1, 1] */
    int force_direct;
} ctx_t;

/* Gauss-Legendre nodes by Newton's method on P_n, in long double. */
static void gl_init(ctx_t *c) {
    const int n = GL_N;
    for (int i = 0; i < n; i++) {
        long double x = cosl(PIL * (i + 0.75L) / (n + 0.5L)), dp = 1;
        for (int it = 0; it < 100; it++) {
            long double p0 = 1, p1 = x;
            for (int k = 2; k <= n; k++) {
                long double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            dp = n * (x * p1 - p0) / (x * x - 1);
            long double dx = p1 / dp;
            x -= dx;
            if (fabsl(dx) < 1e-21L) break;
        }
        c->x[i] = x;
        c->w[i] = 2 / ((1 - x * x) * dp * dp);
    }
}

static long double phi(long double v) { return INV_SQRT_2PI * expl(-0.5L * v * v); }

/* int_{-c}^{c} -(2 v t + t^2) phi(v + t) dt = D of the symmetric cell [v-c, v+c].
 * Node pairs +-t give phi(v) e^{-t^2/2} 2t [2v sinh(vt) - t cosh(vt)]. */
static long double dsym(const ctx_t *c, long double v, long double hw) {
    if (hw <= 0) return 0;
    int panels = (int)ceill(hw * (v + hw + 1) * 8);
    if (panels < 1) panels = 1;
    if (panels > 100000) panels = 100000;
    const long double pw = hw / panels, pv = phi(v);
    long double s = 0;
    for (int p = 0; p < panels; p++) {
        long double mid = (p + 0.5L) * pw, sp = 0;
        for (int i = 0; i < GL_N; i++) {
            long double t = mid + 0.5L * pw * c->x[i], vt = v * t, sh, ch;
            if (vt < 0.5L) {
                long double e = pv * expl(-0.5L * t * t);
                sh = e * sinhl(vt);
                ch = e * coshl(vt);
            } else {
                long double a = phi(v - t), b = phi(v + t);
                sh = 0.5L * (a - b);
                ch = 0.5L * (a + b);
            }
            sp += c->w[i] * 2 * t * (2 * v * sh - t * ch);
        }
        s += sp * 0.5L * pw;
    }
    return s;
}

/* int_{t0}^{t1} -(2 v t + t^2) phi(v + t) dt, t0 <= t1, same sign (one side of v). */
static long double dside(const ctx_t *c, long double v, long double t0, long double t1) {
    if (t1 <= t0) return 0;
    long double top = fmaxl(fabsl(t0), fabsl(t1));
    int panels = (int)ceill((t1 - t0) * (v + top + 1) * 8);
    if (panels < 1) panels = 1;
    if (panels > 100000) panels = 100000;
    const long double pw = (t1 - t0) / panels;
    long double s = 0;
    for (int p = 0; p < panels; p++) {
        long double mid = t0 + (p + 0.5L) * pw, sp = 0;
        for (int i = 0; i < GL_N; i++) {
            long double t = mid + 0.5L * pw * c->x[i];
            sp += c->w[i] * -(t * (2 * v + t)) * phi(v + t);
        }
        s += sp * 0.5L * pw;
    }
    return s;
}

/* D of the cell [v - a, v + b] of value v. */
static long double dcell(const ctx_t *c, long double v, long double a, long double b) {
    long double m = fminl(a, b);
    long double s = dsym(c, v, m);
    if (b > m) s += dside(c, v, m, b);
    if (a > m) s += dside(c, v, -a, -m);
    return s;
}

/* int_lo^hi phi (probability of an interval), by Gauss-Legendre. */
static long double pint(const ctx_t *c, long double lo, long double hi) {
    if (hi <= lo) return 0;
    int panels = (int)ceill((hi - lo) * (hi + 1) * 8);
    if (panels < 1) panels = 1;
    if (panels > 100000) panels = 100000;
    const long double pw = (hi - lo) / panels;
    long double s = 0;
    for (int p = 0; p < panels; p++) {
        long double mid = lo + (p + 0.5L) * pw, sp = 0;
        for (int i = 0; i < GL_N; i++) sp += c->w[i] * phi(mid + 0.5L * pw * c->x[i]);
        s += sp * 0.5L * pw;
    }
    return s;
}

/* ------------------------------------------ Euler-Maclaurin over a run */

/* Polynomials in v (coefficients low to high) and the derivative of
 * P(v) phi(v): (P' - v P) phi. */
#define PMAX 16
typedef struct {
    int deg;
    long double c[PMAX];
} poly_t;

static poly_t pderiv(const poly_t *p) {
    poly_t r;
    memset(&r, 0, sizeof r);
    r.deg = p->deg + 1;
    for (int k = 1; k <= p->deg; k++) r.c[k - 1] += k * p->c[k];
    for (int k = 0; k <= p->deg; k++) r.c[k + 1] -= p->c[k];
    return r;
}

static long double peval(const poly_t *p, long double v) {
    long double s = 0;
    for (int k = p->deg; k >= 0; k--) s = s * v + p->c[k];
    return s;
}

/* d^n/dv^n of the cell function f(v) = dsym(v, h/2) from its expansion
 * phi(v) [h^3 P0 / 12 + h^5 P1 / 480], P0 = 2v^2 - 1, P1 = 2v^4 - 9v^2 + 3. */
static long double fderiv(int n, long double v, long double h) {
    poly_t p0 = {2, {-1, 0, 2}}, p1 = {4, {3, 0, -9, 0, 2}};
    for (int i = 0; i < n; i++) {
        p0 = pderiv(&p0);
        p1 = pderiv(&p1);
    }
    long double h3 = h * h * h;
    return phi(v) * (h3 / 12 * peval(&p0, v) + h3 * h * h / 480 * peval(&p1, v));
}

/* Sum of D over the symmetric cells of width h centred at v1, v1 + h, ...,
 * v1 + (K-1) h, clipped to |g| <= G_HI. */
static long double run_sum(const ctx_t *c, long double v1, long double h, long double K) {
    if (K <= 0) return 0;
    if (v1 - h / 2 >= G_HI) return 0;
    long double kmax = floorl((G_HI - v1) / h) + 1; /* cells with centre <= G_HI */
    if (K > kmax) K = kmax;
    if (v1 + (K - 1) * h + h / 2 < G_LO) return 0;
    const long double A = v1 - h / 2, B = v1 + (K - 1) * h + h / 2;
    long double s = 0;
    if (c->force_direct || K < 64 || h * (B + 1) > EM_MAX_HV) {
        for (long double k = 0; k < K; k++) s += dsym(c, v1 + k * h, h / 2);
        return s;
    }
    /* midpoint Euler-Maclaurin: sum f(v_k) = (1/h) int_A^B f
     *   - h/24 [f']_A^B + 7 h^3/5760 [f''']_A^B - 31 h^5/967680 [f^(5)]_A^B */
    int panels = (int)ceill((B - A) * (B + 1) * 4);
    if (panels < 1) panels = 1;
    const long double pw = (B - A) / panels;
    long double integral = 0;
    for (int p = 0; p < panels; p++) {
        long double mid = A + (p + 0.5L) * pw, sp = 0;
        for (int i = 0; i < GL_N; i++) sp += c->w[i] * dsym(c, mid + 0.5L * pw * c->x[i], h / 2);
        integral += sp * 0.5L * pw;
    }
    s = integral / h;
    s -= h / 24 * (fderiv(1, B, h) - fderiv(1, A, h));
    s += 7 * h * h * h / 5760 * (fderiv(3, B, h) - fderiv(3, A, h));
    s -= 31 * powl(h, 5) / 967680 * (fderiv(5, B, h) - fderiv(5, A, h));
    return s;
}

/* ----------------------------------------------------------- variance */

static long double variance_delta(const tn_exmy *f, int force_direct) {
    ctx_t c;
    gl_init(&c);
    c.force_direct = force_direct;
    const int Y = f->mbits, emin = tn_exmy_emin(f), emax = tn_exmy_emax(f);
    const long double q = ldexpl(1, emin - Y); /* smallest positive value */
    const long double per = ldexpl(1, Y);
    long double s = 0; /* positive half */

    /* zero's cell [0, q/2] */
    if (q / 2 >= G_LO) s += dside(&c, 0, 0, fminl(q / 2, G_HI));
    /* subnormals k q, k = 1 .. 2^Y - 1, symmetric cells of width q */
    if (Y > 0) s += run_sum(&c, q, q, per - 1);
    /* normal binades */
    for (int e = emin; e <= emax; e++) {
        const long double v0 = ldexpl(1, e), h = ldexpl(1, e - Y);
        if (v0 - h / 2 >= G_HI) break;
        if (ldexpl(1, e + 1) < G_LO) continue;
        const long double a = e == emin ? h / 2 : h / 4;
        s += dcell(&c, v0, a, h / 2);
        long double K = per - 1;
        if (e == emax && f->ocp_e4m3) K = per - 2; /* S.1111.111 is NaN */
        s += run_sum(&c, v0 + h, h, K);
    }
    /* overflow: |g| >= T rounds to Inf (NaN), excluded: D = -int_T^inf g^2 phi */
    const long double T = (long double)tn_exmy_max(f) + ldexpl(1, emax - Y) / 2;
    if (T < G_HI) s -= 0.5L * erfcl(T / SQRT2L) + T * phi(T);
    return 2 * s;
}

long double tn_format_variance_delta(const tn_exmy *f, int force_direct) {
    return variance_delta(f, force_direct);
}

long double tn_format_variance_paper_delta(const tn_exmy *f, const long double *delta) {
    ctx_t c;
    gl_init(&c);
    c.force_direct = 0;
    const int Y = f->mbits, emin = tn_exmy_emin(f), emax = tn_exmy_emax(f);
    long double extra = 0;
    for (int e = emin + 1; e <= emax; e++) {
        const long double v0 = ldexpl(1, e), h = ldexpl(1, e - Y);
        if (v0 - h / 2 >= G_HI) break;
        if (v0 < G_LO) continue;
        extra += v0 * v0 * pint(&c, v0 - h / 2, v0 - h / 4);
    }
    return (delta ? *delta : variance_delta(f, 0)) + 2 * extra;
}

/* ------------------------------------------------------------- counts */

void tn_format_count(const tn_exmy *f, int s, uint64_t *n_normal, uint64_t *n_all,
                     uint64_t *n_eq18) {
    const uint64_t per = (uint64_t)1 << f->mbits, F = tn_exmy_count_nonneg(f);
    const uint64_t fields = (uint64_t)(s + tn_exmy_bias(f));
    /* codes (with +0) below 2^s: exponent fields 0 .. s + bias - 1 */
    uint64_t P = fields * per;
    if (P > F) P = F;
    if (n_all) *n_all = 2 * P - 1;
    if (n_normal) *n_normal = 2 * (P > per ? P - per : 0) + 1;
    if (n_eq18) *n_eq18 = 2 * (fields + 1) * per + 1;
}

int tn_format_count_enum(const tn_exmy *f, int s, uint64_t *n_normal, uint64_t *n_all) {
    if (f->ebits + f->mbits + 1 > 20) return -1;
    const uint64_t ncodes = (uint64_t)1 << (f->ebits + f->mbits), per = (uint64_t)1 << f->mbits;
    const double lim = ldexp(1.0, s);
    uint64_t all = 0, normal = 0;
    for (uint64_t code = 0; code < ncodes; code++) { /* non-negative codes */
        double v = tn_exmy_decode(f, code);
        if (!isfinite(v) || !(v < lim)) continue;
        all++;
        if (code >= per) normal++; /* exponent field >= 1 */
    }
    *n_all = 2 * all - 1;   /* -v for every v > 0; zero once */
    *n_normal = 2 * normal + 1;
    return 0;
}

/* ------------------------------------------------------- probabilities */

/* P(|g| >= x) = erfc(x / sqrt 2) and its log10 (asymptotic series when it
 * is below long double's range). */
static long double tail2(long double x, long double *lg) {
    long double p = erfcl(x / SQRT2L);
    if (p > LDBL_MIN * 1e6L) {
        *lg = log10l(p);
        return p;
    }
    long double z = x / SQRT2L, z2 = z * z;
    *lg = (-z2 - logl(z * sqrtl(PIL)) + log1pl(-1 / (2 * z2) + 3 / (4 * z2 * z2))) / LN10L;
    return 0;
}

int tn_format_analyze(const tn_exmy *f, tn_format_stats *st, int force_direct) {
    memset(st, 0, sizeof *st);
    st->fmt = *f;
    st->bias = tn_exmy_bias(f);
    st->emin = tn_exmy_emin(f);
    st->emax = tn_exmy_emax(f);
    st->max = tn_exmy_max(f);
    st->min_normal = tn_exmy_min_normal(f);
    st->min_sub = tn_exmy_min_sub(f);
    st->max_paper = ldexp(1.0 - ldexp(1.0, -(f->mbits + 1)), st->bias);
    st->min_sub_paper = ldexpl(1, -st->bias - f->mbits);
    st->of_threshold = (long double)st->max + ldexpl(1, st->emax - f->mbits) / 2;

    st->p_of = tail2(st->of_threshold, &st->p_of_log10);
    st->p_of_eq16 = tail2(st->max, &st->p_of_eq16_log10);
    const long double mn = st->min_normal, ms = st->min_sub;
    st->p_nn = erfl(mn / SQRT2L);
    st->p_nn_rn = erfl((mn - ms / 2) / SQRT2L);
    st->p_uf = erfl(ms / 2 / SQRT2L);
    st->p_below_min_sub = erfl(ms / SQRT2L);

    st->n_enumerated = f->ebits + f->mbits + 1 <= 20;
    st->n_enum_ok = 1;
    for (int s = 0; s < 3; s++) {
        tn_format_count(f, s, &st->n_normal[s], &st->n_all[s], &st->n_eq18[s]);
        if (st->n_enumerated) {
            uint64_t a, b;
            tn_format_count_enum(f, s, &a, &b);
            if (a != st->n_normal[s] || b != st->n_all[s]) st->n_enum_ok = 0;
        }
    }
    st->alpha_minus_1 = variance_delta(f, force_direct);
    st->alpha = 1 + st->alpha_minus_1;
    st->alpha_paper_minus_1 = tn_format_variance_paper_delta(f, &st->alpha_minus_1);
    return 0;
}

/* ---------------------------------------------------------- Monte Carlo */

void tn_format_montecarlo(const tn_exmy *f, int64_t n, uint64_t seed, tn_format_mc *mc) {
    const double two_pi = 6.283185307179586476925286766559, mn = tn_exmy_min_normal(f);
    const uint64_t stream = 0x616e616c; /* "anal" */
    double s_r2 = 0, s_r4 = 0, s_d = 0, s_d2 = 0;
    int64_t c_nn = 0, c_zero = 0, c_of = 0;
    memset(mc, 0, sizeof *mc);
    mc->n = n;
    if (n <= 0) return;
#pragma omp parallel for schedule(static) reduction(+ : s_r2, s_r4, s_d, s_d2, c_nn, c_zero, c_of)
    for (int64_t b = 0; b < (n + 1) / 2; b++) {
        uint32_t r[4];
        tcnla_philox4x32(seed, stream, (uint64_t)b, r);
        double u1 = ((double)(((uint64_t)r[0] << 21) ^ (r[1] >> 11)) + 0.5) * 0x1p-53;
        double u2 = ((double)(((uint64_t)r[2] << 21) ^ (r[3] >> 11)) + 0.5) * 0x1p-53;
        double rad = sqrt(-2.0 * log(u1));
        double g2[2] = {rad * cos(two_pi * u2), rad * sin(two_pi * u2)};
        for (int j = 0; j < 2 && 2 * b + j < n; j++) {
            double g = g2[j], v = tn_exmy_round(g, f, TN_EXMY_RN), r2;
            if (!isfinite(v)) {
                c_of++;
                r2 = 0;
            } else {
                r2 = v * v;
                if (fabs(v) < mn) c_nn++;
                if (v == 0) c_zero++;
            }
            /* r^2 - g^2 = (v - g)(v + g): no cancellation */
            double d = isfinite(v) ? (v - g) * (v + g) : -g * g;
            s_r2 += r2;
            s_r4 += r2 * r2;
            s_d += d;
            s_d2 += d * d;
        }
    }
    const double dn = (double)n;
    mc->var = s_r2 / dn;
    mc->var_se = sqrt(fmax(s_r4 / dn - mc->var * mc->var, 0) / dn);
    mc->delta = s_d / dn;
    mc->delta_se = sqrt(fmax(s_d2 / dn - mc->delta * mc->delta, 0) / dn);
    mc->frac_nn = (double)c_nn / dn;
    mc->frac_zero = (double)c_zero / dn;
    mc->frac_of = (double)c_of / dn;
}
