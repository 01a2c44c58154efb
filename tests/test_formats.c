/* Tests of the number-format conversions (src/numerics/formats.c).
 *
 * The main check is against an independent reference: the sorted table of
 * every finite non-negative value of the target format, built from the
 * format's definition with ldexp. For an input x the two neighbours of |x|
 * are found by binary search, and the mode picks one of them by an exact
 * comparison with their midpoint. The midpoints of these formats need at
 * most 25 significant bits, so double (and long double) holds them exactly.
 * FP16 RN is also compared with GCC's _Float16 conversion. */
#include "test.h"
#include "tcnla.h"

#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static uint32_t f2u(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static float u2f(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
static uint64_t d2u(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static double u2d(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* splitmix64 with a fixed seed per test: runs are reproducible. */
typedef struct {
    uint64_t s;
} rng_t;
static uint64_t rng_next(rng_t *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint32_t rng_u32(rng_t *r) { return (uint32_t)(rng_next(r) >> 32); }
/* uniform in [lo, hi] */
static int rng_int(rng_t *r, int lo, int hi) {
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static const tcnla_round_t MODES[3] = {TCNLA_ROUND_RN, TCNLA_ROUND_RNA, TCNLA_ROUND_RZ};
static const char *MODE_NAME[3] = {"RN", "RNA", "RZ"};

/* ---------------------------------------------------- reference formats */

typedef struct {
    const char *name;
    int ebits, mbits, has_inf;
    uint32_t maxc;    /* code of the largest finite value */
    uint32_t signbit; /* the sign bit in the code */
    uint32_t inf;     /* code of +Inf (IEEE-like only) */
    uint32_t nan;     /* code of the canonical quiet NaN */
    double next;      /* the value one ulp above max (not in the format) */
    double *val;      /* val[c], c = 0..maxc: the value of positive code c */
} ref_t;

/* Builds the table straight from the definition: value of (e, f) is
 * 2^(1-bias-mbits) * f for e == 0, else 2^(e-bias-mbits) * (2^mbits + f). */
static void ref_init(ref_t *r, const char *name, int ebits, int mbits, int has_inf) {
    int bias = (1 << (ebits - 1)) - 1;
    r->name = name;
    r->ebits = ebits;
    r->mbits = mbits;
    r->has_inf = has_inf;
    r->signbit = 1u << (ebits + mbits);
    r->inf = ((1u << ebits) - 1) << mbits;
    r->maxc = has_inf ? r->inf - 1 : r->signbit - 2;
    r->nan = has_inf ? r->inf | (1u << (mbits - 1)) : r->signbit - 1;
    r->val = malloc(((size_t)r->maxc + 1) * sizeof *r->val);
    for (uint32_t c = 0; c <= r->maxc; c++) {
        int e = (int)(c >> mbits);
        double f = (double)(c & ((1u << mbits) - 1));
        r->val[c] = e ? ldexp(ldexp(1.0, mbits) + f, e - bias - mbits)
                      : ldexp(f, 1 - bias - mbits);
    }
    r->next = 2 * r->val[r->maxc] - r->val[r->maxc - 1];
}
static void ref_free(ref_t *r) { free(r->val); }

/* Whether the reference rounds away from `lo` toward `hi` (the next larger
 * value, whose code is `hi_code`) for lo <= ax < hi. */
static int ref_up(double ax, double lo, double hi, uint32_t hi_code, int m) {
    double mid = (lo + hi) / 2; /* exact */
    if (ax == lo) return 0;
    switch (m) {
    case 0: return ax > mid || (ax == mid && (hi_code & 1) == 0);
    case 1: return ax >= mid;
    default: return 0;
    }
}

/* Expected code of x in the format, mode index m (0 RN, 1 RNA, 2 RZ). */
static uint32_t ref_round(const ref_t *r, double x, int m, int saturate) {
    uint32_t s = signbit(x) ? r->signbit : 0;
    double ax = fabs(x);
    if (isnan(x)) return s | r->nan;
    if (isinf(x)) return s | (saturate ? r->maxc : r->has_inf ? r->inf : r->nan);
    double maxv = r->val[r->maxc];
    if (ax > maxv) {
        if (saturate || !ref_up(ax, maxv, r->next, r->maxc + 1, m)) return s | r->maxc;
        return s | (r->has_inf ? r->inf : r->nan);
    }
    /* largest c with val[c] <= ax */
    uint32_t lo = 0, hi = r->maxc;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (r->val[mid] <= ax) lo = mid;
        else hi = mid - 1;
    }
    if (lo == r->maxc) return s | lo;
    return s | (lo + (uint32_t)ref_up(ax, r->val[lo], r->val[lo + 1], lo + 1, m));
}

/* The FP32 value of a code per the reference (NaN: canonical quiet). */
static float ref_value(const ref_t *r, uint32_t c) {
    float sgn = (c & r->signbit) ? -1.0f : 1.0f;
    uint32_t a = c & (r->signbit - 1);
    if (r->has_inf ? (a & r->inf) == r->inf : a == r->nan) {
        if (r->has_inf && a == r->inf) return sgn * INFINITY;
        return u2f(((c & r->signbit) ? 0x80000000u : 0) | 0x7fc00000u);
    }
    return sgn * (float)r->val[a];
}

/* Random float for testing format r: a mix of arbitrary bit patterns (all
 * exponents, Inf, NaN), values in the format's range and a bit beyond
 * (subnormals included), and exact midpoints of neighbours +-0..2 ulps. */
static float gen_float(rng_t *g, const ref_t *r) {
    uint32_t u = rng_u32(g);
    int bias = (1 << (r->ebits - 1)) - 1;
    switch (u & 3) {
    case 0: /* any bit pattern */
        return u2f(rng_u32(g));
    case 1: { /* exponent from below the smallest subnormal to above max */
        int e = rng_int(g, 127 + (1 - bias - r->mbits) - 3, 127 + bias + 2);
        if (e < 0) e = 0;
        if (e > 254) e = 254;
        return u2f((u & 0x80000000u) | ((uint32_t)e << 23) | (rng_u32(g) & 0x7fffffu));
    }
    default: { /* a midpoint (or max + half ulp), nudged by up to 2 ulps */
        uint32_t c = (uint32_t)(rng_next(g) % (r->maxc + 1));
        double hi = c < r->maxc ? r->val[c + 1] : r->next;
        float mid = (float)((r->val[c] + hi) / 2); /* exact */
        uint32_t mu = f2u(mid);
        int k = rng_int(g, -2, 2);
        if (mu == 0 && k < 0) k = -k;
        return u2f((mu + (uint32_t)k) | (u & 0x80000000u));
    }
    }
}

/* Values every format is checked on in addition to the random ones. */
static const float SPECIALS[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN,
                                 FLT_MAX, -FLT_MAX, FLT_MIN, 0x1p-149f, -0x1p-149f,
                                 0x1.fffffep-127f, 0x1.fffffep127f};

/* Checks a conversion of format r against the reference on x in all modes.
 * conv returns the library's code. Returns the number of mismatches. */
typedef uint32_t (*conv_fn)(float x, tcnla_round_t mode, int saturate);

static int check_one(const ref_t *r, conv_fn conv, float x, int saturate) {
    int bad = 0;
    for (int m = 0; m < 3; m++) {
        uint32_t exp = ref_round(r, x, m, saturate);
        uint32_t got = conv(x, MODES[m], saturate);
        if (got != exp) {
            bad++;
            CHECK_MSG(0, "%s %s%s: x = %a (0x%08x): got 0x%x, expected 0x%x", r->name,
                      MODE_NAME[m], saturate ? " sat" : "", (double)x, f2u(x), got, exp);
        }
    }
    return bad;
}

/* Random inputs, specials and every neighbour midpoint +-1 float ulp. */
static void check_format(const ref_t *r, conv_fn conv, int nrand, int with_sat) {
    rng_t g = {0x5eed0000u + (uint64_t)r->ebits * 64 + (uint64_t)r->mbits};
    int bad = 0;
    for (int sat = 0; sat <= with_sat; sat++) {
        for (size_t i = 0; i < sizeof SPECIALS / sizeof SPECIALS[0]; i++)
            bad += check_one(r, conv, SPECIALS[i], sat);
        /* the smallest subnormal, half of it, max, max + half ulp, with the
         * floats around each */
        double edges[] = {r->val[1], r->val[1] / 2, r->val[r->maxc],
                          (r->val[r->maxc] + r->next) / 2, r->next};
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            for (int k = -1; k <= 1; k++) {
                float x = u2f(f2u((float)edges[i]) + (uint32_t)k);
                bad += check_one(r, conv, x, sat) + check_one(r, conv, -x, sat);
            }
        /* every midpoint between neighbours, +-1 ulp of FP32 */
        for (uint32_t c = 0; c <= r->maxc && bad < 50; c++) {
            double hi = c < r->maxc ? r->val[c + 1] : r->next;
            uint32_t mu = f2u((float)((r->val[c] + hi) / 2));
            for (int k = -1; k <= 1; k++) bad += check_one(r, conv, u2f(mu + (uint32_t)k), sat);
        }
        for (int i = 0; i < nrand && bad < 50; i++) bad += check_one(r, conv, gen_float(&g, r), sat);
    }
}

/* Adapters: every conversion as conv_fn. TF32 results are mapped back to
 * their code (sign, exponent and top 10 fraction bits) after checking that
 * the 13 low bits are zero and NaN is the canonical 0x7fc00000 | sign. */
static uint32_t conv_f16(float x, tcnla_round_t m, int s) {
    (void)s;
    return tcnla_f32_to_f16(x, m);
}
static uint32_t conv_bf16(float x, tcnla_round_t m, int s) {
    (void)s;
    return tcnla_f32_to_bf16(x, m);
}
static uint32_t conv_tf32(float x, tcnla_round_t m, int s) {
    (void)s;
    uint32_t u = f2u(tcnla_f32_to_tf32(x, m));
    if (u & 0x1fffu) return 0xdeadbeefu; /* low bits must be zero */
    return u >> 13;
}
static uint32_t conv_e4m3(float x, tcnla_round_t m, int s) { return tcnla_f32_to_e4m3(x, m, s); }
static uint32_t conv_e5m2(float x, tcnla_round_t m, int s) { return tcnla_f32_to_e5m2(x, m, s); }

static int is_f16_nan(uint32_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
static int is_bf16_nan(uint32_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu); }

/* ------------------------------------------------------ exhaustive tests */

TEST(formats_f16_decode_exhaustive) {
    ref_t r;
    ref_init(&r, "f16", 5, 10, 1);
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float got = tcnla_f16_to_f32((uint16_t)h);
        float exp = ref_value(&r, h);
        if (is_f16_nan(h)) {
            /* quiet NaN, sign and payload kept */
            CHECK_MSG(isnan(got) && (f2u(got) & 0x400000u) && !signbit(got) == !(h & 0x8000u) &&
                          ((f2u(got) >> 13) & 0x3ffu) == ((h & 0x3ffu) | 0x200u),
                      "f16 0x%04x -> 0x%08x", h, f2u(got));
        } else {
            CHECK_MSG(f2u(got) == f2u(exp), "f16 0x%04x -> %a, expected %a", h, (double)got,
                      (double)exp);
        }
#ifdef __FLT16_MAX__
        uint16_t hh = (uint16_t)h;
        _Float16 hf;
        memcpy(&hf, &hh, sizeof hf);
        if (!is_f16_nan(h))
            CHECK_MSG(f2u(got) == f2u((float)hf), "f16 0x%04x: _Float16 gives %a", h,
                      (double)(float)hf);
#endif
    }
    ref_free(&r);
}

TEST(formats_f16_roundtrip_exhaustive) {
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float x = tcnla_f16_to_f32((uint16_t)h);
        for (int m = 0; m < 3; m++) {
            uint32_t back = tcnla_f32_to_f16(x, MODES[m]);
            if (is_f16_nan(h))
                CHECK_MSG(back == (0x7e00u | (h & 0x8000u)), "f16 NaN 0x%04x -> 0x%04x", h, back);
            else
                CHECK_MSG(back == h, "f16 0x%04x %s -> 0x%04x", h, MODE_NAME[m], back);
        }
    }
}

TEST(formats_bf16_roundtrip_exhaustive) {
    ref_t r;
    ref_init(&r, "bf16", 8, 7, 1);
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float x = tcnla_bf16_to_f32((uint16_t)h);
        if (is_bf16_nan(h)) {
            CHECK_MSG(isnan(x) && (f2u(x) & 0x400000u) && !signbit(x) == !(h & 0x8000u),
                      "bf16 NaN 0x%04x -> 0x%08x", h, f2u(x));
        } else {
            /* bf16 is the top half of FP32, subnormals included */
            CHECK_MSG(f2u(x) == h << 16 && f2u(x) == f2u(ref_value(&r, h)),
                      "bf16 0x%04x -> 0x%08x", h, f2u(x));
        }
        for (int m = 0; m < 3; m++) {
            uint32_t back = tcnla_f32_to_bf16(x, MODES[m]);
            if (is_bf16_nan(h))
                CHECK_MSG(back == (0x7fc0u | (h & 0x8000u)), "bf16 NaN 0x%04x -> 0x%04x", h, back);
            else
                CHECK_MSG(back == h, "bf16 0x%04x %s -> 0x%04x", h, MODE_NAME[m], back);
        }
    }
    ref_free(&r);
}

TEST(formats_fp8_roundtrip_exhaustive) {
    ref_t r4, r5;
    ref_init(&r4, "e4m3", 4, 3, 0);
    ref_init(&r5, "e5m2", 5, 2, 1);
    for (uint32_t v = 0; v < 256; v++) {
        float x4 = tcnla_e4m3_to_f32((uint8_t)v), x5 = tcnla_e5m2_to_f32((uint8_t)v);
        int nan4 = (v & 0x7f) == 0x7f, nan5 = (v & 0x7f) > 0x7c;
        CHECK_MSG(nan4 ? isnan(x4) && !signbit(x4) == !(v & 0x80)
                       : f2u(x4) == f2u(ref_value(&r4, v)),
                  "e4m3 0x%02x -> %a", v, (double)x4);
        CHECK_MSG(nan5 ? isnan(x5) && !signbit(x5) == !(v & 0x80)
                       : f2u(x5) == f2u(ref_value(&r5, v)),
                  "e5m2 0x%02x -> %a", v, (double)x5);
        for (int m = 0; m < 3; m++)
            for (int sat = 0; sat <= 1; sat++) {
                uint32_t b4 = tcnla_f32_to_e4m3(x4, MODES[m], sat);
                uint32_t b5 = tcnla_f32_to_e5m2(x5, MODES[m], sat);
                uint32_t e4 = nan4 ? (0x7fu | (v & 0x80)) : v;
                /* saturation maps +-Inf to +-max */
                uint32_t e5 = nan5 ? (0x7eu | (v & 0x80)) : (sat && (v & 0x7f) == 0x7c) ? v - 1 : v;
                CHECK_MSG(b4 == e4, "e4m3 0x%02x %s sat=%d -> 0x%02x", v, MODE_NAME[m], sat, b4);
                CHECK_MSG(b5 == e5, "e5m2 0x%02x %s sat=%d -> 0x%02x", v, MODE_NAME[m], sat, b5);
            }
    }
    ref_free(&r4);
    ref_free(&r5);
}

/* All 2^19 sign/exponent/fraction patterns of TF32 are fixed points. */
TEST(formats_tf32_exact_values_exhaustive) {
    for (uint32_t c = 0; c < (1u << 19); c++) {
        uint32_t u = c << 13;
        float x = u2f(u);
        int nan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu);
        for (int m = 0; m < 3; m++) {
            uint32_t got = f2u(tcnla_f32_to_tf32(x, MODES[m]));
            uint32_t exp = nan ? 0x7fc00000u | (u & 0x80000000u) : u;
            CHECK_MSG(got == exp, "tf32 0x%08x %s -> 0x%08x", u, MODE_NAME[m], got);
        }
    }
}

/* ------------------------------------------------ FP16 RN vs _Float16 */

#ifdef __FLT16_MAX__
static uint32_t gcc_f16(float x) {
    _Float16 h = (_Float16)x;
    uint16_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}
/* NaN: GCC keeps the payload; the library gives the canonical quiet NaN.
 * Both must be NaN with the same sign. */
static int f16_same(uint32_t a, uint32_t b) {
    if (is_f16_nan(a) || is_f16_nan(b)) return is_f16_nan(a) && is_f16_nan(b) && (a >> 15) == (b >> 15);
    return a == b;
}
#endif

/* Every FP16 value and every midpoint between neighbours (including the
 * one between 65504 and 65536), with the 16 floats either side. */
TEST(formats_f16_rn_vs_gcc_boundaries) {
#ifndef __FLT16_MAX__
    SKIP("compiler has no _Float16");
#else
    ref_t r;
    ref_init(&r, "f16", 5, 10, 1);
    int bad = 0;
    for (uint32_t c = 0; c <= r.maxc && bad < 20; c++) {
        double hi = c < r.maxc ? r.val[c + 1] : r.next;
        uint32_t pts[2] = {f2u((float)r.val[c]), f2u((float)((r.val[c] + hi) / 2))};
        for (int p = 0; p < 2; p++)
            for (int k = -16; k <= 16; k++) {
                if ((int64_t)pts[p] + k < 0) continue;
                for (uint32_t s = 0; s <= 1; s++) {
                    float x = u2f((pts[p] + (uint32_t)k) | (s << 31));
                    uint32_t got = tcnla_f32_to_f16(x, TCNLA_ROUND_RN), exp = gcc_f16(x);
                    if (!f16_same(got, exp)) {
                        bad++;
                        CHECK_MSG(0, "x = %a: got 0x%04x, _Float16 0x%04x", (double)x, got, exp);
                    }
                }
            }
    }
    ref_free(&r);
#endif
}

TEST(formats_f16_rn_vs_gcc_random) {
#ifndef __FLT16_MAX__
    SKIP("compiler has no _Float16");
#else
    rng_t g = {12345};
    int bad = 0;
    for (int i = 0; i < 6000000 && bad < 20; i++) {
        uint32_t u = rng_u32(&g);
        if (i & 1) {
            /* concentrated: exponents 2^-28 .. 2^17 (FP16 subnormals, normals,
             * overflow), sometimes with the 13 dropped bits near a tie */
            uint32_t e = 127 - 28 + (uint32_t)(rng_next(&g) % 46);
            u = (u & 0x807fffffu) | (e << 23);
            if (i & 2) u = (u & ~0x1fffu) | ((0x1000u + (u & 7) - 3) & 0x1fffu);
        }
        float x = u2f(u);
        uint32_t got = tcnla_f32_to_f16(x, TCNLA_ROUND_RN), exp = gcc_f16(x);
        if (!f16_same(got, exp)) {
            bad++;
            CHECK_MSG(0, "x = %a (0x%08x): got 0x%04x, _Float16 0x%04x", (double)x, u, got, exp);
        }
    }
#endif
}

/* ------------------------------------------- all modes vs the reference */

TEST(formats_f16_modes_vs_reference) {
    ref_t r;
    ref_init(&r, "f16", 5, 10, 1);
    check_format(&r, conv_f16, 2000000, 0);
    ref_free(&r);
}

TEST(formats_bf16_modes_vs_reference) {
    ref_t r;
    ref_init(&r, "bf16", 8, 7, 1);
    check_format(&r, conv_bf16, 2000000, 0);
    ref_free(&r);
}

TEST(formats_tf32_modes_vs_reference) {
    ref_t r;
    ref_init(&r, "tf32", 8, 10, 1);
    check_format(&r, conv_tf32, 2000000, 0);
    ref_free(&r);
}

TEST(formats_e4m3_modes_vs_reference) {
    ref_t r;
    ref_init(&r, "e4m3", 4, 3, 0);
    check_format(&r, conv_e4m3, 2000000, 1);
    ref_free(&r);
}

TEST(formats_e5m2_modes_vs_reference) {
    ref_t r;
    ref_init(&r, "e5m2", 5, 2, 1);
    check_format(&r, conv_e5m2, 2000000, 1);
    ref_free(&r);
}

/* --------------------------------------------------------- FP64 -> FP32 */

/* Reference for f64 -> f32: the neighbours lo <= |x| < hi among the floats
 * (hi = 2^128 above FLT_MAX) by nextafterf, the midpoint in long double. */
static uint32_t ref_f64_to_f32(double x, int m) {
    uint32_t s = signbit(x) ? 0x80000000u : 0;
    if (isnan(x)) return s | 0x7fc00000u;
    if (isinf(x)) return s | 0x7f800000u;
    double ax = fabs(x);
    float lo;
    if (ax > FLT_MAX) {
        lo = FLT_MAX;
    } else {
        lo = (float)ax; /* a first guess, corrected below */
        while ((double)lo > ax) lo = nextafterf(lo, 0.0f);
        while ((double)nextafterf(lo, INFINITY) <= ax) lo = nextafterf(lo, INFINITY);
    }
    if ((double)lo == ax) return s | f2u(lo);
    long double hi = lo == FLT_MAX ? 0x1p128L : (long double)nextafterf(lo, INFINITY);
    long double mid = ((long double)lo + hi) / 2, lax = ax;
    int up = m == 0 ? lax > mid || (lax == mid && (f2u(lo) & 1))
           : m == 1 ? lax >= mid : 0;
    if (!up) return s | f2u(lo);
    return s | (lo == FLT_MAX ? 0x7f800000u : f2u(lo) + 1);
}

static int check_f64(double x) {
    int bad = 0;
    for (int m = 0; m < 3; m++) {
        uint32_t got = f2u(tcnla_f64_to_f32(x, MODES[m])), exp = ref_f64_to_f32(x, m);
        if (got != exp) {
            bad++;
            CHECK_MSG(0, "f64 %s: x = %a: got 0x%08x, expected 0x%08x", MODE_NAME[m], x, got, exp);
        }
    }
    return bad;
}

TEST(formats_f64_to_f32_vs_reference) {
    rng_t g = {777};
    int bad = 0;
    const double specials[] = {0.0, -0.0, 1.0, INFINITY, -INFINITY, NAN, -NAN, DBL_MAX,
                               DBL_MIN, 4.9e-324, FLT_MAX, (double)FLT_MAX + 0x1p103,
                               0x1.ffffffp127, 0x1p128, 0x1p-149, 0x1p-150, 0x1.8p-149,
                               0x1p-151, 0x1.fffffep-127, 0x1.ffffffp-127};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        bad += check_f64(specials[i]) + check_f64(-specials[i]);
    for (int i = 0; i < 2000000 && bad < 20; i++) {
        uint64_t u = rng_next(&g);
        double x;
        switch (i & 3) {
        case 0: /* any bit pattern */
            x = u2d(u);
            break;
        case 1: { /* 2^-155 .. 2^130: float subnormals, normals, overflow */
            uint64_t e = 1023 - 155 + rng_next(&g) % 286;
            x = u2d((u & 0x800fffffffffffffull) | (e << 52));
            break;
        }
        default: { /* midpoint of two neighbouring floats, +-0..2 double ulps */
            uint32_t f = rng_u32(&g) & 0x7fffffffu;
            if (f >= 0x7f800000u) f = 0x7f7fffffu;
            if (i & 4) f &= 0x80ffffffu; /* small: subnormal and low normals */
            double lo = u2f(f), hi = f == 0x7f7fffffu ? 0x1p128 : u2f(f + 1);
            uint64_t mu = d2u((lo + hi) / 2) + (uint64_t)(int64_t)rng_int(&g, -2, 2);
            x = u2d(mu | (u & 0x8000000000000000ull));
            break;
        }
        }
        bad += check_f64(x);
    }
}

TEST(formats_f64_to_f32_specific) {
    /* ties */
    CHECK(tcnla_f64_to_f32(1 + 0x1p-24, TCNLA_ROUND_RN) == 1.0f);
    CHECK(tcnla_f64_to_f32(1 + 0x1p-24, TCNLA_ROUND_RNA) == 1 + 0x1p-23f);
    CHECK(tcnla_f64_to_f32(1 + 0x3p-24, TCNLA_ROUND_RN) == 1 + 0x1p-22f);
    CHECK(tcnla_f64_to_f32(-(1 + 0x1p-24), TCNLA_ROUND_RNA) == -(1 + 0x1p-23f));
    /* RZ truncates, including in the subnormal range */
    CHECK(tcnla_f64_to_f32(0x1.fffffffffp0, TCNLA_ROUND_RZ) == 0x1.fffffep0f);
    CHECK(tcnla_f64_to_f32(-0x1.fffffffffp0, TCNLA_ROUND_RZ) == -0x1.fffffep0f);
    CHECK(tcnla_f64_to_f32(0x1.fffffffp-149, TCNLA_ROUND_RZ) == 0x1p-149f);
    CHECK(tcnla_f64_to_f32(0x1.fffffffp-140, TCNLA_ROUND_RZ) == 0x1.ff8p-140f);
    CHECK(f2u(tcnla_f64_to_f32(-0x1p-151, TCNLA_ROUND_RZ)) == 0x80000000u);
    /* underflow: half the smallest subnormal */
    CHECK(f2u(tcnla_f64_to_f32(0x1p-150, TCNLA_ROUND_RN)) == 0);
    CHECK(tcnla_f64_to_f32(0x1p-150, TCNLA_ROUND_RNA) == 0x1p-149f);
    CHECK(tcnla_f64_to_f32(0x1.000001p-150, TCNLA_ROUND_RN) == 0x1p-149f);
    CHECK(tcnla_f64_to_f32(0x3p-150, TCNLA_ROUND_RN) == 0x1p-148f);
    CHECK(f2u(tcnla_f64_to_f32(-4.9e-324, TCNLA_ROUND_RN)) == 0x80000000u);
    /* overflow */
    CHECK(tcnla_f64_to_f32(DBL_MAX, TCNLA_ROUND_RN) == INFINITY);
    CHECK(tcnla_f64_to_f32(-DBL_MAX, TCNLA_ROUND_RNA) == -INFINITY);
    CHECK(tcnla_f64_to_f32(DBL_MAX, TCNLA_ROUND_RZ) == FLT_MAX);
    CHECK(tcnla_f64_to_f32(0x1.ffffffp127, TCNLA_ROUND_RN) == INFINITY);
    CHECK(tcnla_f64_to_f32(0x1.fffffefp127, TCNLA_ROUND_RN) == FLT_MAX);
    CHECK(tcnla_f64_to_f32(-INFINITY, TCNLA_ROUND_RZ) == -INFINITY);
    CHECK(f2u(tcnla_f64_to_f32(-NAN, TCNLA_ROUND_RN)) == 0xffc00000u);
    CHECK(f2u(tcnla_f64_to_f32(u2d(0x7ff0000000000001ull), TCNLA_ROUND_RN)) == 0x7fc00000u);
}

/* ------------------------------------------------------ specific values */

TEST(formats_f16_specific) {
    CHECK_EQ_INT(tcnla_f32_to_f16(65504.0f, TCNLA_ROUND_RN), 0x7bff);
    CHECK_EQ_INT(tcnla_f32_to_f16(65519.0f, TCNLA_ROUND_RN), 0x7bff);
    CHECK_EQ_INT(tcnla_f32_to_f16(65520.0f, TCNLA_ROUND_RN), 0x7c00);
    CHECK_EQ_INT(tcnla_f32_to_f16(65520.0f, TCNLA_ROUND_RNA), 0x7c00);
    CHECK_EQ_INT(tcnla_f32_to_f16(65520.0f, TCNLA_ROUND_RZ), 0x7bff);
    CHECK_EQ_INT(tcnla_f32_to_f16(-1e10f, TCNLA_ROUND_RZ), 0xfbff);
    CHECK_EQ_INT(tcnla_f32_to_f16(INFINITY, TCNLA_ROUND_RZ), 0x7c00);
    CHECK_EQ_INT(tcnla_f32_to_f16(-INFINITY, TCNLA_ROUND_RN), 0xfc00);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1p-24f, TCNLA_ROUND_RN), 0x0001);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1p-25f, TCNLA_ROUND_RN), 0x0000);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1p-25f, TCNLA_ROUND_RNA), 0x0001);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1.000002p-25f, TCNLA_ROUND_RN), 0x0001);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x3p-25f, TCNLA_ROUND_RN), 0x0002);
    CHECK_EQ_INT(tcnla_f32_to_f16(-0x1p-25f, TCNLA_ROUND_RN), 0x8000);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1.ffcp-15f, TCNLA_ROUND_RN), 0x0400); /* carry into normal */
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1.ffcp-15f, TCNLA_ROUND_RZ), 0x03ff);
    CHECK_EQ_INT(tcnla_f32_to_f16(1 + 0x1p-11f, TCNLA_ROUND_RN), 0x3c00);
    CHECK_EQ_INT(tcnla_f32_to_f16(1 + 0x1p-11f, TCNLA_ROUND_RNA), 0x3c01);
    CHECK_EQ_INT(tcnla_f32_to_f16(1 + 0x3p-11f, TCNLA_ROUND_RN), 0x3c02);
    CHECK_EQ_INT(tcnla_f32_to_f16(-0.0f, TCNLA_ROUND_RN), 0x8000);
    CHECK_EQ_INT(tcnla_f32_to_f16(0x1p-149f, TCNLA_ROUND_RNA), 0x0000);
    CHECK_EQ_INT(tcnla_f32_to_f16(NAN, TCNLA_ROUND_RN), 0x7e00);
    CHECK_EQ_INT(tcnla_f32_to_f16(-NAN, TCNLA_ROUND_RZ), 0xfe00);
    CHECK_EQ_INT(tcnla_f32_to_f16(u2f(0x7f800001u), TCNLA_ROUND_RN), 0x7e00); /* sNaN */
    CHECK(tcnla_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(tcnla_f16_to_f32(0x03ff) == 0x1.ff8p-15f);
    CHECK(tcnla_f16_to_f32(0xfbff) == -65504.0f);
    CHECK(f2u(tcnla_f16_to_f32(0x7c01)) == 0x7fc02000u); /* sNaN made quiet */
    CHECK(f2u(tcnla_f16_to_f32(0x8000)) == 0x80000000u);
}

TEST(formats_bf16_tf32_specific) {
    CHECK_EQ_INT(tcnla_f32_to_bf16(1 + 0x1p-8f, TCNLA_ROUND_RN), 0x3f80);
    CHECK_EQ_INT(tcnla_f32_to_bf16(1 + 0x1p-8f, TCNLA_ROUND_RNA), 0x3f81);
    CHECK_EQ_INT(tcnla_f32_to_bf16(1 + 0x3p-8f, TCNLA_ROUND_RN), 0x3f82);
    CHECK_EQ_INT(tcnla_f32_to_bf16(FLT_MAX, TCNLA_ROUND_RN), 0x7f80);
    CHECK_EQ_INT(tcnla_f32_to_bf16(-FLT_MAX, TCNLA_ROUND_RZ), 0xff7f);
    CHECK_EQ_INT(tcnla_f32_to_bf16(0x1p-149f, TCNLA_ROUND_RN), 0x0000);
    CHECK_EQ_INT(tcnla_f32_to_bf16(0x1p-134f, TCNLA_ROUND_RNA), 0x0001); /* half of min sub */
    CHECK_EQ_INT(tcnla_f32_to_bf16(0x1p-134f, TCNLA_ROUND_RN), 0x0000);
    CHECK_EQ_INT(tcnla_f32_to_bf16(-NAN, TCNLA_ROUND_RN), 0xffc0);
    CHECK(tcnla_bf16_to_f32(0x0001) == 0x1p-133f);
    CHECK(f2u(tcnla_bf16_to_f32(0x7f81)) == 0x7fc10000u);

    CHECK(tcnla_f32_to_tf32(1 + 0x1p-11f, TCNLA_ROUND_RN) == 1.0f);
    CHECK(tcnla_f32_to_tf32(1 + 0x1p-11f, TCNLA_ROUND_RNA) == 1 + 0x1p-10f);
    CHECK(tcnla_f32_to_tf32(1 + 0x3p-11f, TCNLA_ROUND_RN) == 1 + 0x1p-9f);
    CHECK(tcnla_f32_to_tf32(0x1.fffffep0f, TCNLA_ROUND_RZ) == 0x1.ffcp0f);
    CHECK(tcnla_f32_to_tf32(0x1.fffffep0f, TCNLA_ROUND_RN) == 2.0f);
    CHECK(tcnla_f32_to_tf32(FLT_MAX, TCNLA_ROUND_RN) == INFINITY);
    CHECK(f2u(tcnla_f32_to_tf32(-FLT_MAX, TCNLA_ROUND_RZ)) == 0xff7fe000u);
    CHECK(f2u(tcnla_f32_to_tf32(u2f(0x00001000u), TCNLA_ROUND_RN)) == 0); /* half min sub */
    CHECK(f2u(tcnla_f32_to_tf32(u2f(0x00001000u), TCNLA_ROUND_RNA)) == 0x00002000u);
    CHECK(f2u(tcnla_f32_to_tf32(u2f(0x007ff000u), TCNLA_ROUND_RN)) == 0x00800000u);
    CHECK(f2u(tcnla_f32_to_tf32(NAN, TCNLA_ROUND_RN)) == 0x7fc00000u);
    CHECK(f2u(tcnla_f32_to_tf32(u2f(0xff800001u), TCNLA_ROUND_RZ)) == 0xffc00000u);
}

/* Values from the OCP 8-bit floating point spec (OFP8). */
TEST(formats_fp8_ocp_values) {
    /* E4M3: bias 7, max S.1111.110 = 448, NaN S.1111.111, no Inf */
    CHECK(tcnla_e4m3_to_f32(0x7e) == 448.0f);
    CHECK(tcnla_e4m3_to_f32(0xfe) == -448.0f);
    CHECK(tcnla_e4m3_to_f32(0x08) == 0x1p-6f);
    CHECK(tcnla_e4m3_to_f32(0x07) == 0x7p-9f);
    CHECK(tcnla_e4m3_to_f32(0x01) == 0x1p-9f);
    CHECK(tcnla_e4m3_to_f32(0x78) == 256.0f);
    CHECK(isnan(tcnla_e4m3_to_f32(0x7f)) && !signbit(tcnla_e4m3_to_f32(0x7f)));
    CHECK(isnan(tcnla_e4m3_to_f32(0xff)) && signbit(tcnla_e4m3_to_f32(0xff)));
    CHECK(f2u(tcnla_e4m3_to_f32(0x80)) == 0x80000000u);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(448.0f, TCNLA_ROUND_RN, 0), 0x7e);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(480.0f, TCNLA_ROUND_RN, 0), 0x7f);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(480.0f, TCNLA_ROUND_RN, 1), 0x7e);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(-480.0f, TCNLA_ROUND_RN, 0), 0xff);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(-480.0f, TCNLA_ROUND_RN, 1), 0xfe);
    /* 464 is the midpoint of 448 (fraction 110, even) and the absent 480 */
    CHECK_EQ_INT(tcnla_f32_to_e4m3(464.0f, TCNLA_ROUND_RN, 0), 0x7e);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0x1.d00002p8f, TCNLA_ROUND_RN, 0), 0x7f);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(464.0f, TCNLA_ROUND_RNA, 0), 0x7f);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(464.0f, TCNLA_ROUND_RNA, 1), 0x7e);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(1e30f, TCNLA_ROUND_RZ, 0), 0x7e); /* RZ never overflows */
    CHECK_EQ_INT(tcnla_f32_to_e4m3(INFINITY, TCNLA_ROUND_RN, 0), 0x7f);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(INFINITY, TCNLA_ROUND_RZ, 0), 0x7f);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(-INFINITY, TCNLA_ROUND_RN, 1), 0xfe);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(NAN, TCNLA_ROUND_RN, 1), 0x7f);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(-NAN, TCNLA_ROUND_RN, 0), 0xff);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0x1p-9f, TCNLA_ROUND_RN, 0), 0x01);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0x1p-10f, TCNLA_ROUND_RN, 0), 0x00);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0x1p-10f, TCNLA_ROUND_RNA, 0), 0x01);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0x3p-10f, TCNLA_ROUND_RN, 0), 0x02);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0xfp-10f, TCNLA_ROUND_RN, 0), 0x08); /* 7.5 * 2^-9 */
    CHECK_EQ_INT(tcnla_f32_to_e4m3(0xfp-10f, TCNLA_ROUND_RZ, 0), 0x07);
    CHECK_EQ_INT(tcnla_f32_to_e4m3(-0x1p-12f, TCNLA_ROUND_RN, 0), 0x80);
    /* E5M2: bias 15, max S.11110.11 = 57344, Inf S.11111.00 */
    CHECK(tcnla_e5m2_to_f32(0x7b) == 57344.0f);
    CHECK(tcnla_e5m2_to_f32(0x7c) == INFINITY);
    CHECK(tcnla_e5m2_to_f32(0xfc) == -INFINITY);
    CHECK(isnan(tcnla_e5m2_to_f32(0x7d)) && isnan(tcnla_e5m2_to_f32(0x7e)) &&
          isnan(tcnla_e5m2_to_f32(0xff)));
    CHECK(tcnla_e5m2_to_f32(0x04) == 0x1p-14f);
    CHECK(tcnla_e5m2_to_f32(0x01) == 0x1p-16f);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(57344.0f, TCNLA_ROUND_RN, 0), 0x7b);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(61439.0f, TCNLA_ROUND_RN, 0), 0x7b);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(61440.0f, TCNLA_ROUND_RN, 0), 0x7c); /* tie, max is odd */
    CHECK_EQ_INT(tcnla_f32_to_e5m2(61440.0f, TCNLA_ROUND_RZ, 0), 0x7b);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(61440.0f, TCNLA_ROUND_RN, 1), 0x7b);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(-1e30f, TCNLA_ROUND_RNA, 0), 0xfc);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(-1e30f, TCNLA_ROUND_RNA, 1), 0xfb);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(INFINITY, TCNLA_ROUND_RN, 0), 0x7c);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(INFINITY, TCNLA_ROUND_RN, 1), 0x7b); /* OFP8 saturating */
    CHECK_EQ_INT(tcnla_f32_to_e5m2(NAN, TCNLA_ROUND_RN, 1), 0x7e);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(-NAN, TCNLA_ROUND_RZ, 0), 0xfe);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(0x1p-17f, TCNLA_ROUND_RN, 0), 0x00);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(0x1p-17f, TCNLA_ROUND_RNA, 0), 0x01);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(1.25f, TCNLA_ROUND_RN, 0), 0x3d);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(1.125f, TCNLA_ROUND_RN, 0), 0x3c);
    CHECK_EQ_INT(tcnla_f32_to_e5m2(1.125f, TCNLA_ROUND_RNA, 0), 0x3d);
}

/* The conversions are integer code: the FP rounding mode must not matter. */
TEST(formats_independent_of_fp_rounding_mode) {
    enum { N = 20000 };
    static const int fe[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    static uint32_t want[N][6];
    static float xs[N];
    static double ds[N];
    rng_t g = {99};
    for (int i = 0; i < N; i++) {
        uint32_t u = rng_u32(&g);
        if (i & 1) u = (u & 0x807fffffu) | ((uint32_t)(100 + i % 50) << 23);
        xs[i] = u2f(u);
        ds[i] = (double)xs[i] * (1 + 0x1p-40);
    }
    for (int pass = -1; pass < 3; pass++) {
        if (pass >= 0 && fesetround(fe[pass]) != 0) continue;
        for (int i = 0; i < N; i++) {
            tcnla_round_t m = MODES[i % 3];
            uint32_t r[6] = {tcnla_f32_to_f16(xs[i], m), tcnla_f32_to_bf16(xs[i], m),
                             f2u(tcnla_f32_to_tf32(xs[i], m)), tcnla_f32_to_e4m3(xs[i], m, i & 1),
                             tcnla_f32_to_e5m2(xs[i], m, i & 1), f2u(tcnla_f64_to_f32(ds[i], m))};
            for (int k = 0; k < 6; k++) {
                if (pass < 0) want[i][k] = r[k];
                else CHECK_MSG(r[k] == want[i][k], "fe mode %d, conversion %d, x = %a", pass, k,
                               (double)xs[i]);
            }
        }
    }
    fesetround(FE_TONEAREST);
}
