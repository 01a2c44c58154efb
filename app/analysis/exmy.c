/* Generic eXmY formats: descriptors, parsing, rounding from double and
 * decoding (see exmy.h). The rounding scales |x| onto the integer grid of
 * its binade (an exact power-of-two scaling), rounds the integer part by
 * explicit comparisons (no dependence on fesetround), and scales back; it
 * agrees bit for bit with the integer encoder of formats.c for FP16, BF16,
 * TF32, E4M3, E5M2 and FP32 (tests/test_analyze.c). */
#include "analysis/exmy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tn_exmy_init(tn_exmy *f, int ebits, int mbits, int ocp_e4m3) {
    if (ebits < TN_EXMY_MIN_EBITS || ebits > TN_EXMY_MAX_EBITS || mbits < 0 ||
        mbits > TN_EXMY_MAX_MBITS)
        return -1;
    if (ocp_e4m3 && (ebits != 4 || mbits != 3)) return -1;
    f->ebits = ebits;
    f->mbits = mbits;
    f->ocp_e4m3 = ocp_e4m3 ? 1 : 0;
    return 0;
}

static int ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int tn_exmy_parse(const char *s, tn_exmy *f, char *err, size_t errlen) {
    static const struct {
        const char *name;
        int e, m, ocp;
    } alias[] = {{"fp16", 5, 10, 0},     {"half", 5, 10, 0},     {"bf16", 8, 7, 0},
                 {"bfloat16", 8, 7, 0},  {"bfloat", 8, 7, 0},    {"tf32", 8, 10, 0},
                 {"fp32", 8, 23, 0},     {"single", 8, 23, 0},   {"fp64", 11, 52, 0},
                 {"double", 11, 52, 0},  {"fp8_e4m3", 4, 3, 1},  {"fp8_e5m2", 5, 2, 0},
                 {"e4m3", 4, 3, 1},      {"e4m3ocp", 4, 3, 1},   {"e4m3ieee", 4, 3, 0}};
    if (err && errlen) err[0] = 0;
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (ieq(s, alias[i].name)) return tn_exmy_init(f, alias[i].e, alias[i].m, alias[i].ocp);
    /* eXmY with decimal X, Y */
    const char *p = s;
    long x = -1, y = -1;
    if (tolower((unsigned char)*p) == 'e' && isdigit((unsigned char)p[1])) {
        char *end;
        x = strtol(p + 1, &end, 10);
        if (tolower((unsigned char)*end) == 'm' && isdigit((unsigned char)end[1])) {
            y = strtol(end + 1, &end, 10);
            if (*end) y = -2;
        } else {
            y = -2;
        }
    }
    if (x < 0 || y < 0) {
        if (err)
            snprintf(err, errlen,
                     "'%s' is not a format: expected eXmY (X exponent bits, Y fraction bits), "
                     "e4m3 (OCP FP8), e4m3ieee, or fp16, bf16, tf32, fp32, fp64",
                     s);
        return -1;
    }
    if (x < TN_EXMY_MIN_EBITS || x > TN_EXMY_MAX_EBITS) {
        if (err)
            snprintf(err, errlen, "'%s': exponent bits X = %ld, must be in %d..%d", s, x,
                     TN_EXMY_MIN_EBITS, TN_EXMY_MAX_EBITS);
        return -1;
    }
    if (y > TN_EXMY_MAX_MBITS) {
        if (err)
            snprintf(err, errlen, "'%s': fraction bits Y = %ld, must be in 0..%d", s, y,
                     TN_EXMY_MAX_MBITS);
        return -1;
    }
    return tn_exmy_init(f, (int)x, (int)y, 0);
}

void tn_exmy_name(const tn_exmy *f, char *buf, size_t n) {
    if (f->ebits == 4 && f->mbits == 3) snprintf(buf, n, f->ocp_e4m3 ? "e4m3" : "e4m3ieee");
    else snprintf(buf, n, "e%dm%d", f->ebits, f->mbits);
}

const char *tn_exmy_label(const tn_exmy *f) {
    int e = f->ebits, m = f->mbits;
    if (e == 4 && m == 3) return f->ocp_e4m3 ? "FP8 E4M3 (OCP)" : "E4M3 IEEE-style";
    if (e == 5 && m == 2) return "FP8 E5M2";
    if (e == 5 && m == 10) return "FP16";
    if (e == 8 && m == 7) return "bfloat16";
    if (e == 8 && m == 10) return "TF32";
    if (e == 8 && m == 23) return "FP32";
    if (e == 11 && m == 52) return "FP64";
    return "";
}

int tn_exmy_bias(const tn_exmy *f) { return (1 << (f->ebits - 1)) - 1; }
int tn_exmy_emin(const tn_exmy *f) { return 1 - tn_exmy_bias(f); }
/* IEEE: the top finite exponent field is 2^X - 2, i.e. 2^X - 2 - bias = bias.
 * OCP E4M3 uses the all-ones field too: 15 - 7 = 8. */
int tn_exmy_emax(const tn_exmy *f) { return tn_exmy_bias(f) + (f->ocp_e4m3 ? 1 : 0); }

double tn_exmy_max(const tn_exmy *f) {
    /* largest significand: 2 - 2^-Y (IEEE), 2 - 2^(1-Y) = 1.110b (E4M3 OCP) */
    double sig = 2.0 - ldexp(1.0, f->ocp_e4m3 ? 1 - f->mbits : -f->mbits);
    return ldexp(sig, tn_exmy_emax(f));
}
double tn_exmy_min_normal(const tn_exmy *f) { return ldexp(1.0, tn_exmy_emin(f)); }
double tn_exmy_min_sub(const tn_exmy *f) { return ldexp(1.0, tn_exmy_emin(f) - f->mbits); }

uint64_t tn_exmy_count_nonneg(const tn_exmy *f) {
    uint64_t per = (uint64_t)1 << f->mbits;
    if (f->ocp_e4m3) return ((uint64_t)1 << (f->ebits + f->mbits)) - 1; /* all but 0x7f */
    return (((uint64_t)1 << f->ebits) - 1) * per; /* exponent fields 0 .. 2^X - 2 */
}

double tn_exmy_round(double x, const tn_exmy *f, int mode) {
    if (isnan(x)) return x;
    if (isinf(x)) return f->ocp_e4m3 ? copysign(NAN, x) : x;
    if (x == 0) return x;
    const int Y = f->mbits, emin = tn_exmy_emin(f);
    const double a = fabs(x), maxv = tn_exmy_max(f);
    int e = ilogb(a);
    if (e < emin) e = emin; /* subnormal range: the grid of the smallest binade */
    /* m = a / 2^(e - Y) < 2^(Y+1) <= 2^53: an exact power-of-two scaling */
    double m = ldexp(a, Y - e);
    double fl = floor(m), frac = m - fl; /* exact: m < 2^53 */
    double k;
    switch (mode) {
    case TN_EXMY_RZ:
        k = fl;
        break;
    case TN_EXMY_RNA:
        k = frac >= 0.5 ? fl + 1 : fl;
        break;
    default: /* RN, ties to the even integer significand */
        k = (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0)) ? fl + 1 : fl;
        break;
    }
    /* k * 2^(e - Y): exact (a multiple of 2^(emin - Y) >= 2^-1074) unless it
     * overflows double, which is an overflow of the format too */
    double r = ldexp(k, e - Y);
    if (r > maxv) {
        if (mode == TN_EXMY_RZ) r = maxv;
        else return f->ocp_e4m3 ? copysign(NAN, x) : copysign(INFINITY, x);
    }
    return copysign(r, x);
}

double tn_exmy_decode(const tn_exmy *f, uint64_t c) {
    const int X = f->ebits, Y = f->mbits;
    const uint64_t fmask = ((uint64_t)1 << Y) - 1, emask = ((uint64_t)1 << X) - 1;
    const int neg = (int)((c >> (X + Y)) & 1);
    const uint64_t ef = (c >> Y) & emask, m = c & fmask;
    double v;
    if (f->ocp_e4m3 && ef == emask && m == fmask) v = NAN;
    else if (!f->ocp_e4m3 && ef == emask) v = m ? NAN : INFINITY;
    else if (ef == 0) v = ldexp((double)m, tn_exmy_emin(f) - Y);
    else v = ldexp((double)(m | (fmask + 1)), (int)ef - tn_exmy_bias(f) - Y);
    return neg ? -v : v;
}
