/* Tests of the generic eXmY formats (app/analysis/exmy.c), the [Ootomo & Yokota 2023]
 * Table 1 / Fig. 2 analysis (app/analysis/format_analysis.c) and the
 * `tcnla analyze formats` command.
 *
 * References are independent of the code under test where possible: the
 * bit-exact integer conversions of formats.c (tcnla_f32_to_*), enumeration
 * of every code through tcnla_*_to_f32, a brute-force variance summed over
 * every value of a format with erfc, and a Monte-Carlo estimate. */
#include "test.h"
#include "tcnla.h"
#include "analysis/exmy.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static tn_exmy fmt(const char *name) {
    tn_exmy f;
    char err[256];
    if (tn_exmy_parse(name, &f, err, sizeof err)) {
        fprintf(stderr, "bad format %s: %s\n", name, err);
        abort();
    }
    return f;
}

static uint64_t d2u(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static float u2f(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
/* same double, NaNs all alike, signed zeros apart */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || d2u(a) == d2u(b); }

typedef struct {
    uint64_t s;
} rng_t;
static uint64_t rng_next(rng_t *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------ formats */

TEST(analyze_format_constants) {
    tn_exmy f16 = fmt("e5m10"), e4 = fmt("e4m3"), e4i = fmt("e4m3ieee"), e5 = fmt("e5m2");
    CHECK(tn_exmy_max(&f16) == 65504.0);
    CHECK(tn_exmy_min_normal(&f16) == ldexp(1, -14));
    CHECK(tn_exmy_min_sub(&f16) == ldexp(1, -24));
    CHECK(e4.ocp_e4m3 == 1 && tn_exmy_max(&e4) == 448.0);
    CHECK(e4i.ocp_e4m3 == 0 && tn_exmy_max(&e4i) == 240.0);
    CHECK(tn_exmy_min_sub(&e4) == ldexp(1, -9));
    CHECK(tn_exmy_max(&e5) == 57344.0);
    tn_exmy bf = fmt("bf16"), f32 = fmt("fp32"), f64 = fmt("e11m52"), tf = fmt("TF32");
    CHECK(tn_exmy_max(&bf) == (double)u2f(0x7f7f0000u));
    CHECK(tn_exmy_max(&f32) == (double)FLT_MAX);
    CHECK(tn_exmy_min_sub(&f32) == (double)FLT_TRUE_MIN);
    CHECK(tn_exmy_min_normal(&f32) == (double)FLT_MIN);
    CHECK(tn_exmy_max(&f64) == DBL_MAX && tn_exmy_min_sub(&f64) == DBL_TRUE_MIN);
    CHECK(tf.ebits == 8 && tf.mbits == 10);
    /* parsing: names and errors */
    tn_exmy f;
    char err[256], name[32];
    CHECK(tn_exmy_parse("E5M10", &f, err, sizeof err) == 0 && f.mbits == 10);
    CHECK(tn_exmy_parse("e2m0", &f, err, sizeof err) == 0);
    CHECK(tn_exmy_parse("e11m52", &f, err, sizeof err) == 0);
    CHECK(tn_exmy_parse("e1m3", &f, err, sizeof err) == -1 && strstr(err, "2..11"));
    CHECK(tn_exmy_parse("e12m3", &f, err, sizeof err) == -1);
    CHECK(tn_exmy_parse("e5m53", &f, err, sizeof err) == -1 && strstr(err, "0..52"));
    const char *bad[] = {"", "e", "e5", "e5m", "e5m2x", "m5e2", "fp17", "e-5m2", "e5m-2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(tn_exmy_parse(bad[i], &f, err, sizeof err) == -1 && err[0], "'%s'", bad[i]);
    CHECK(tn_exmy_init(&f, 5, 2, 1) == -1); /* OCP variant only for e4m3 */
    tn_exmy_name(&e4, name, sizeof name);
    CHECK(!strcmp(name, "e4m3"));
    tn_exmy_name(&e4i, name, sizeof name);
    CHECK(!strcmp(name, "e4m3ieee"));
}

/* The generic decoder against formats.c's, every code. */
TEST(analyze_decode_matches_tcnla) {
    tn_exmy f16 = fmt("fp16"), bf = fmt("bf16"), e4 = fmt("e4m3"), e5 = fmt("e5m2");
    int bad = 0;
    for (uint32_t c = 0; c < 65536; c++) {
        bad += !same(tn_exmy_decode(&f16, c), tcnla_f16_to_f32((uint16_t)c));
        bad += !same(tn_exmy_decode(&bf, c), tcnla_bf16_to_f32((uint16_t)c));
        if (c < 256) {
            bad += !same(tn_exmy_decode(&e4, c), tcnla_e4m3_to_f32((uint8_t)c));
            bad += !same(tn_exmy_decode(&e5, c), tcnla_e5m2_to_f32((uint8_t)c));
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/* A float to exercise format f: random bits, a value in or near the range,
 * or an exact midpoint (tie) between neighbouring values (including the
 * one above max). */
static float test_float(rng_t *r, const tn_exmy *f) {
    uint64_t z = rng_next(r);
    int kind = (int)(z & 7);
    uint32_t sign = (uint32_t)((z >> 3) & 1) << 31;
    if (kind == 0) return u2f((uint32_t)(z >> 32));
    if (kind <= 4) { /* exponent from below the smallest subnormal to above max */
        int lo = tn_exmy_emin(f) - f->mbits - 3, hi = tn_exmy_emax(f) + 2;
        if (lo < -149) lo = -149;
        if (hi > 127) hi = 127;
        int e = lo + (int)((z >> 8) % (uint64_t)(hi - lo + 1));
        float v = ldexpf(1.0f + (float)((z >> 40) & 0x7fffff) * 0x1p-23f, e);
        return sign ? -v : v;
    }
    /* midpoint between the value of a random non-negative code and the next */
    uint64_t ncodes = (uint64_t)1 << (f->ebits + f->mbits);
    uint64_t c = (z >> 8) % ncodes;
    double a = tn_exmy_decode(f, c), b = tn_exmy_decode(f, c + 1);
    if (!isfinite(a)) return u2f(0x7f800000u | sign);
    if (!isfinite(b) || c + 1 == ncodes) /* above max: the overflow tie */
        b = a + ldexp(1.0, tn_exmy_emax(f) - f->mbits);
    float m = (float)((a + b) / 2); /* exact: at most 25 significant bits */
    return sign ? -m : m;
}

/* tn_exmy_round against the integer encoder of formats.c, RN/RNA/RZ. */
TEST(analyze_round_matches_tcnla) {
    tn_exmy F[4] = {fmt("fp16"), fmt("bf16"), fmt("e4m3"), fmt("e5m2")};
    const char *nm[4] = {"fp16", "bf16", "e4m3", "e5m2"};
    rng_t r = {12345};
    int bad[4] = {0};
    const int n = 1 << 18;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < n; i++) {
            float x = test_float(&r, &F[k]);
            for (int mode = 0; mode < 3; mode++) {
                double ref;
                tcnla_round_t m = (tcnla_round_t)mode;
                switch (k) {
                case 0: ref = tcnla_f16_to_f32(tcnla_f32_to_f16(x, m)); break;
                case 1: ref = tcnla_bf16_to_f32(tcnla_f32_to_bf16(x, m)); break;
                case 2: ref = tcnla_e4m3_to_f32(tcnla_f32_to_e4m3(x, m, 0)); break;
                default: ref = tcnla_e5m2_to_f32(tcnla_f32_to_e5m2(x, m, 0)); break;
                }
                double got = tn_exmy_round((double)x, &F[k], mode);
                if (!same(got, ref)) {
                    if (bad[k] < 3)
                        tt_fail(__FILE__, __LINE__, "%s mode %d: x = %a gives %a, formats.c %a",
                                nm[k], mode, (double)x, got, ref);
                    bad[k]++;
                }
            }
        }
    for (int k = 0; k < 4; k++) CHECK_MSG(bad[k] == 0, "%s: %d mismatches", nm[k], bad[k]);
    /* TF32 from floats, FP32 from doubles (tcnla_f64_to_f32), all modes */
    tn_exmy tf = fmt("tf32"), f32 = fmt("fp32");
    int badt = 0, badf = 0;
    for (int i = 0; i < n; i++) {
        float x = test_float(&r, &tf);
        uint64_t z = rng_next(&r);
        double d;
        if (z & 1) {
            memcpy(&d, &z, sizeof d);
        } else { /* doubles in and around FP32's range, some exactly on FP32 midpoints */
            int e = -155 + (int)((z >> 1) % 287);
            d = ldexp(1.0 + (double)(z >> 12) * 0x1p-52, e);
            if (z & 2) d = ldexp(floor(ldexp(d, 24 - e)) + 0.5, e - 24) * ((z & 4) ? -1 : 1);
        }
        for (int mode = 0; mode < 3; mode++) {
            badt += !same(tn_exmy_round(x, &tf, mode), tcnla_f32_to_tf32(x, (tcnla_round_t)mode));
            badf += !same(tn_exmy_round(d, &f32, mode), tcnla_f64_to_f32(d, (tcnla_round_t)mode));
        }
    }
    CHECK_EQ_INT(badt, 0);
    CHECK_EQ_INT(badf, 0);
    /* ties and edges by hand */
    tn_exmy *h = &F[0], *e4 = &F[2];
    CHECK(tn_exmy_round(65520.0, h, TN_EXMY_RN) == INFINITY);   /* max + ulp/2: tie to Inf */
    CHECK(tn_exmy_round(65519.99, h, TN_EXMY_RN) == 65504.0);
    CHECK(tn_exmy_round(1e9, h, TN_EXMY_RZ) == 65504.0);
    CHECK(tn_exmy_round(464.0, e4, TN_EXMY_RN) == 448.0);        /* tie to the even 448 */
    CHECK(isnan(tn_exmy_round(464.5, e4, TN_EXMY_RN)));
    CHECK(isnan(tn_exmy_round(INFINITY, e4, TN_EXMY_RN)));
    CHECK(same(tn_exmy_round(-0x1p-26, h, TN_EXMY_RN), -0.0)); /* 2^-25 tie rounds to -0 */
    CHECK(tn_exmy_round(0x1.8p-25, h, TN_EXMY_RN) == 0x1p-24);
}

/* ------------------------------------------------------------- counts */

/* Counts of values |v| < 2^s by enumerating the codes through formats.c. */
static void count_ref(int which, int s, uint64_t *normal, uint64_t *all) {
    const int nb = which <= 1 ? 16 : 8, mb = which == 0 ? 10 : which == 1 ? 7 : which == 2 ? 3 : 2;
    *normal = *all = 0;
    for (uint32_t c = 0; c < (1u << nb); c++) {
        double v = which == 0   ? tcnla_f16_to_f32((uint16_t)c)
                   : which == 1 ? tcnla_bf16_to_f32((uint16_t)c)
                   : which == 2 ? tcnla_e4m3_to_f32((uint8_t)c)
                                : tcnla_e5m2_to_f32((uint8_t)c);
        if (!isfinite(v) || !(fabs(v) < ldexp(1, s))) continue;
        if (v == 0 && (c >> (nb - 1))) continue; /* -0: the same value as +0 */
        (*all)++;
        uint32_t ef = (c >> mb) & ((1u << (nb - 1 - mb)) - 1);
        if (ef != 0 || v == 0) (*normal)++; /* normal, or the zero */
    }
}

TEST(analyze_counts_match_enumeration) {
    const char *nm[4] = {"fp16", "bf16", "e4m3", "e5m2"};
    for (int k = 0; k < 4; k++) {
        tn_exmy f = fmt(nm[k]);
        for (int s = 0; s < 3; s++) {
            uint64_t rn, ra, cn, ca, en, ea, e18;
            count_ref(k, s, &rn, &ra);
            tn_format_count(&f, s, &cn, &ca, &e18);
            CHECK(tn_format_count_enum(&f, s, &en, &ea) == 0);
            CHECK_MSG(cn == rn && en == rn, "%s s=%d normal: %llu %llu ref %llu", nm[k], s,
                      (unsigned long long)cn, (unsigned long long)en, (unsigned long long)rn);
            CHECK_MSG(ca == ra && ea == ra, "%s s=%d all: %llu %llu ref %llu", nm[k], s,
                      (unsigned long long)ca, (unsigned long long)ea, (unsigned long long)ra);
            /* eq. (18) as printed */
            CHECK(e18 == 2 * (uint64_t)(s + tn_exmy_bias(&f) + 1) * ((uint64_t)1 << f.mbits) + 1);
        }
    }
    /* Table 1 (bottom) lists the counts of all finite values */
    static const struct {
        const char *f;
        uint64_t n[3];
    } t1[] = {{"e4m3", {111, 127, 143}},
              {"e5m2", {119, 127, 135}},
              {"e5m10", {30719, 32767, 34815}},
              {"e8m7", {32511, 32767, 33023}},
              {"e8m10", {260095, 262143, 264191}},
              {"e8m23", {2130706431ull, 2147483647ull, 2164260863ull}}};
    for (size_t i = 0; i < sizeof t1 / sizeof t1[0]; i++) {
        tn_exmy f = fmt(t1[i].f);
        for (int s = 0; s < 3; s++) {
            uint64_t a;
            tn_format_count(&f, s, NULL, &a, NULL);
            CHECK_MSG(a == t1[i].n[s], "%s s=%d: %llu, Table 1 %llu", t1[i].f, s,
                      (unsigned long long)a, (unsigned long long)t1[i].n[s]);
        }
    }
    /* tiny formats where 2^s exceeds max: closed form clamps like the enumeration */
    const char *tiny[] = {"e2m0", "e2m1", "e2m3", "e3m0", "e3m2", "e4m3ieee", "e6m1"};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        tn_exmy f = fmt(tiny[i]);
        tn_format_stats st;
        tn_format_analyze(&f, &st, 0);
        CHECK_MSG(st.n_enumerated && st.n_enum_ok, "%s", tiny[i]);
    }
}

/* ----------------------------------------------------- probabilities */

TEST(analyze_probabilities_table1) {
    tn_format_stats h, e4, e5;
    tn_exmy f;
    f = fmt("e5m10"), tn_format_analyze(&f, &h, 0);
    f = fmt("e4m3"), tn_format_analyze(&f, &e4, 0);
    f = fmt("e5m2"), tn_format_analyze(&f, &e5, 0);
    /* the paper's definition: P(|g| < min normal) */
    CHECK(fabsl(h.p_nn - erfl(ldexpl(1, -14) / sqrtl(2))) < 1e-20L);
    CHECK(fabsl(h.p_nn - 4.8699e-5L) < 1e-9L);
    CHECK(fabsl(e4.p_nn - 1.24664e-2L) < 1e-6L);
    /* Table 1 lists half of it (one-sided): 2e-5, 6e-3, 2e-5 */
    CHECK(h.p_nn / 2 > 2e-5L / 1.5L && h.p_nn / 2 < 2e-5L * 1.5L);
    CHECK(e4.p_nn / 2 > 6e-3L / 1.5L && e4.p_nn / 2 < 6e-3L * 1.5L);
    CHECK(e5.p_nn / 2 > 2e-5L / 1.5L && e5.p_nn / 2 < 2e-5L * 1.5L);
    CHECK(!(h.p_nn > 2e-5L / 1.5L && h.p_nn < 2e-5L * 1.5L)); /* the two-sided is not */
    /* p_uf under RN matches Table 1: 8e-4, 6e-6, 2e-8 */
    CHECK(e4.p_uf > 8e-4L / 1.5L && e4.p_uf < 8e-4L * 1.5L);
    CHECK(e5.p_uf > 6e-6L / 1.5L && e5.p_uf < 6e-6L * 1.5L);
    CHECK(h.p_uf > 2e-8L / 1.5L && h.p_uf < 2e-8L * 1.5L);
    CHECK(fabsl(h.p_uf - erfl(ldexpl(1, -25) / sqrtl(2))) < 1e-25L);
    CHECK(h.min_sub_paper * 2 == h.min_sub && h.max_paper * 2 == h.max);
    /* RN not-normalized threshold is min normal - min sub / 2 */
    CHECK(h.p_nn_rn < h.p_nn && h.p_nn_rn > h.p_nn * (1 - 1e-3L));
    /* overflow: FP16 far beyond double; e2m1 exact */
    CHECK(h.p_of == 0 && h.p_of_log10 < -9e8L && h.p_of_log10 > -1e9L);
    CHECK(e4.p_of == 0 && fabsl(e4.p_of_log10 + 46753.70L) < 0.01L);
    tn_format_stats t;
    f = fmt("e2m1"), tn_format_analyze(&f, &t, 0);
    CHECK(t.of_threshold == 3.5L && fabsl(t.p_of - erfcl(3.5L / sqrtl(2))) < 1e-18L);
    CHECK(fabsl(t.p_of_eq16 - erfcl(3.0L / sqrtl(2))) < 1e-18L);
    /* log10 of a representable p_of; FP64's, far below long double, still finite */
    f = fmt("e3m5"), tn_format_analyze(&f, &t, 0);
    CHECK(t.p_of > 0 && fabsl(t.p_of_log10 - log10l(t.p_of)) < 1e-12L);
    f = fmt("fp64"), tn_format_analyze(&f, &t, 0);
    CHECK(isfinite(t.p_of_log10) && t.p_of_log10 < -7e615L);
}

/* ----------------------------------------------------------- variance */

/* alpha_Y - 1 summed over every value of a 16-bit format with erfc. */
static long double brute_alpha_minus_1(int which) {
    const int n = which >= 2 ? 256 : 65536, last = n / 2 - 1;
    static double v[32768];
    long double s = 0;
    int m = 0;
    /* positive codes ascend in value; cell of v_i: midpoints to v_{i-1}, v_{i+1} */
    for (int c = 0; c <= last; c++) {
        double x = which == 0   ? tcnla_f16_to_f32((uint16_t)c)
                   : which == 1 ? tcnla_bf16_to_f32((uint16_t)c)
                   : which == 2 ? tcnla_e4m3_to_f32((uint8_t)c)
                                : tcnla_e5m2_to_f32((uint8_t)c);
        if (!isfinite(x)) break;
        v[m++] = x;
    }
    /* overflow threshold: max + half the spacing below max */
    const long double top = (long double)v[m - 1] + ((long double)v[m - 1] - v[m - 2]) / 2;
    const long double r2 = sqrtl(2);
    for (int i = 1; i < m; i++) {
        long double lo = ((long double)v[i - 1] + v[i]) / 2;
        long double hi = i + 1 < m ? ((long double)v[i] + v[i + 1]) / 2 : top;
        s += (long double)v[i] * v[i] * (erfcl(lo / r2) - erfcl(hi / r2)); /* 2 P(cell) */
    }
    return s - 1;
}

TEST(analyze_variance_bruteforce) {
    const char *nm[4] = {"fp16", "bf16", "e4m3", "e5m2"};
    for (int k = 0; k < 4; k++) {
        tn_exmy f = fmt(nm[k]);
        long double fast = tn_format_variance_delta(&f, 0), ref = brute_alpha_minus_1(k);
        CHECK_MSG(fabsl(fast - ref) <= 1e-12L * fabsl(ref) + 1e-16L,
                  "%s: alpha-1 = %.12Le, brute force %.12Le", nm[k], fast, ref);
    }
}

TEST(analyze_variance_fast_equals_direct) {
    /* the Euler-Maclaurin summation of long runs against cell-by-cell sums */
    const char *nm[] = {"e5m12", "e4m13", "e11m9", "e2m12"};
    for (size_t i = 0; i < sizeof nm / sizeof nm[0]; i++) {
        tn_exmy f = fmt(nm[i]);
        long double a = tn_format_variance_delta(&f, 0), b = tn_format_variance_delta(&f, 1);
        CHECK_MSG(fabsl(a - b) <= 1e-11L * fabsl(b), "%s: fast %.15Le direct %.15Le", nm[i],
                  a, b);
    }
}

TEST(analyze_variance_limits) {
    tn_exmy f = fmt("e8m23");
    tn_format_stats st;
    tn_format_analyze(&f, &st, 0);
    CHECK(fabsl(st.alpha - 1) < 1e-12L && st.alpha < 1);
    /* alpha_Y decreases as Y decreases (Y = 10 .. 1), at X = 8 and X = 5 */
    for (int x = 5; x <= 8; x += 3) {
        long double prev = 0;
        for (int y = 10; y >= 1; y--) {
            tn_exmy_init(&f, x, y, 0);
            long double d = tn_format_variance_delta(&f, 0);
            CHECK_MSG(d < 0, "X=%d Y=%d: alpha-1 = %Le", x, y, d);
            if (y < 10) CHECK_MSG(d < prev, "X=%d Y=%d: %Le !< %Le", x, y, d, prev);
            prev = d;
        }
    }
    /* 4^Y (alpha_Y - 1) tends to a constant (-0.0464364...): exponential approach */
    long double c20, c23, c52;
    tn_exmy_init(&f, 8, 20, 0);
    c20 = ldexpl(tn_format_variance_delta(&f, 0), 40);
    tn_exmy_init(&f, 8, 23, 0);
    c23 = ldexpl(tn_format_variance_delta(&f, 0), 46);
    tn_exmy_init(&f, 11, 52, 0);
    c52 = ldexpl(tn_format_variance_delta(&f, 0), 104);
    CHECK_MSG(fabsl(c23 + 0.0464364L) < 1e-6L, "4^23 (alpha-1) = %.9Lf", c23);
    CHECK(fabsl(c20 - c23) < 1e-9L && fabsl(c52 - c23) < 1e-9L);
    /* the paper's formula: too large by O(2^-Y) */
    tn_exmy_init(&f, 5, 10, 0);
    long double dp = tn_format_variance_paper_delta(&f, NULL);
    CHECK(dp > 0 && dp * 1024 > 0.2L && dp * 1024 < 0.5L);
}

/* Monte Carlo: the paired estimate of alpha_Y - 1 and the fractions agree
 * with the computed values within 5 standard errors. */
TEST(analyze_montecarlo_agrees) {
    const char *nm[3] = {"fp16", "e4m3", "e2m1"};
    const int64_t n = 1 << 21;
    for (int k = 0; k < 3; k++) {
        tn_exmy f = fmt(nm[k]);
        tn_format_stats st;
        tn_format_mc mc;
        tn_format_analyze(&f, &st, 0);
        tn_format_montecarlo(&f, n, 7, &mc);
        CHECK(mc.n == n);
        CHECK_MSG(fabs(mc.delta - (double)st.alpha_minus_1) < 5 * mc.delta_se + 1e-15,
                  "%s: MC %.4e +- %.1e vs %.4Le", nm[k], mc.delta, mc.delta_se,
                  st.alpha_minus_1);
        CHECK_MSG(fabs(mc.var - (double)st.alpha) < 5 * mc.var_se, "%s var", nm[k]);
        double p = (double)st.p_nn_rn, se = sqrt(p * (1 - p) / (double)n) + 1e-12;
        CHECK_MSG(fabs(mc.frac_nn - p) < 5 * se, "%s: not normalized %.4e vs %.4e", nm[k],
                  mc.frac_nn, p);
        p = (double)st.p_uf, se = sqrt(p * (1 - p) / (double)n) + 1e-12;
        CHECK_MSG(fabs(mc.frac_zero - p) < 5 * se + 2.0 / (double)n, "%s: zero", nm[k]);
        p = (double)st.p_of, se = sqrt(p * (1 - p) / (double)n) + 1e-12;
        CHECK_MSG(fabs(mc.frac_of - p) < 5 * se + 2.0 / (double)n, "%s: overflow", nm[k]);
    }
}

/* ------------------------------------------------------------- command */

static int run(const char *args, char *out, size_t len) {
    const char *b = getenv("TCNLA_BIN");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", b ? b : "./build/tcnla", args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, len - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(analyze_cli) {
    const char *b = getenv("TCNLA_BIN");
    FILE *f = fopen(b ? b : "./build/tcnla", "rb");
    if (!f) SKIP("build/tcnla not built");
    fclose(f);
    static char buf[1 << 17];
    if (run("analyze --help", buf, sizeof buf) != 0 || !strstr(buf, "formats"))
        SKIP("this build/tcnla has no analyze command");
    CHECK_EQ_INT(run("analyze formats --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "--variance-sweep") && strstr(buf, "[e4m3 e5m2 e5m10 e8m7 e8m10 e8m23]"));
    CHECK_EQ_INT(run("analyze formats", buf, sizeof buf), 0);
    CHECK(strstr(buf, "65504") && strstr(buf, "448") && strstr(buf, "57344"));
    CHECK(strstr(buf, "30719") && strstr(buf, "2130706431") && strstr(buf, "2^-149"));
    CHECK_EQ_INT(run("analyze formats --format fp16 --json", buf, sizeof buf), 0);
    CHECK(buf[0] == '{' && strstr(buf, "\"max\":65504,") && strstr(buf, "\"n_all\":[30719,"));
    CHECK_EQ_INT(run("analyze formats --format e5m2 --format e2m1 --csv", buf, sizeof buf), 0);
    CHECK(!strncmp(buf, "format,ebits,mbits", 18) && strstr(buf, "\ne5m2,5,2,") &&
          strstr(buf, "\ne2m1,2,1,"));
    CHECK_EQ_INT(run("analyze formats --format e4m3 --samples 20000 --seed 3", buf, sizeof buf), 0);
    CHECK(strstr(buf, "MC: not normalized"));
    CHECK_EQ_INT(run("analyze formats --variance-sweep --x 8 --ymax 3", buf, sizeof buf), 0);
    CHECK(!strncmp(buf, "x,y,variance,one_minus_variance", 31) && strstr(buf, "\n8,3,0.9992"));
    /* usage errors: exit 2 with a message */
    CHECK_EQ_INT(run("analyze", buf, sizeof buf), 2);
    CHECK_EQ_INT(run("analyze frobnicate", buf, sizeof buf), 2);
    CHECK(strstr(buf, "unknown analysis"));
    CHECK_EQ_INT(run("analyze formats --format e1m3", buf, sizeof buf), 2);
    CHECK(strstr(buf, "2..11"));
    CHECK_EQ_INT(run("analyze formats --format e5m60", buf, sizeof buf), 2);
    CHECK(strstr(buf, "0..52"));
    CHECK_EQ_INT(run("analyze formats --format", buf, sizeof buf), 2);
    CHECK_EQ_INT(run("analyze formats --samples -5", buf, sizeof buf), 2);
    CHECK_EQ_INT(run("analyze formats --bogus", buf, sizeof buf), 2);
    CHECK_EQ_INT(run("analyze formats --json --csv", buf, sizeof buf), 2);
    CHECK_EQ_INT(run("analyze formats --variance-sweep --format fp16", buf, sizeof buf), 2);
    CHECK_EQ_INT(run("analyze formats --x 8", buf, sizeof buf), 2);
}
