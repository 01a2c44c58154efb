/* Deterministic double-precision log and sincos(2 pi u) for the Gaussian
 * generator, written once for the host and the device: only IEEE
 * operations that are correctly rounded everywhere (+, -, *, /, sqrt and
 * the fused multiply-add, C's fma() / CUDA's __fma_rn), in a fixed order,
 * never contracted otherwise (the host compiles with -ffp-contract=off; the
 * device uses the _rn intrinsics). So the CPU and the GPU draw bit-identical
 * random matrices, which glibc's and CUDA's libm (both accurate to an ulp or
 * so, but not identical) would not give. Accuracy: about 1e-14 relative
 * (series cut where their next term is below that), far below what
 * rounding to FP32 keeps; the series in Horner form with FMAs keep the GPU
 * fill (FP64-bound) short. */
#ifndef TCNLA_DETMATH_H
#define TCNLA_DETMATH_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TN_DM static __device__ inline
#define TN_ADD(a, b) __dadd_rn((a), (b))
#define TN_SUB(a, b) __dsub_rn((a), (b))
#define TN_MUL(a, b) __dmul_rn((a), (b))
#define TN_DIV(a, b) __ddiv_rn((a), (b))
#define TN_SQRT(a) __dsqrt_rn(a)
#define TN_FMA(a, b, c) __fma_rn((a), (b), (c))
#else
#include <math.h>
#define TN_DM static inline
#define TN_ADD(a, b) ((a) + (b))
#define TN_SUB(a, b) ((a) - (b))
#define TN_MUL(a, b) ((a) * (b))
#define TN_DIV(a, b) ((a) / (b))
#define TN_SQRT(a) sqrt(a)
#define TN_FMA(a, b, c) fma((a), (b), (c))
#endif

TN_DM uint64_t tn_dm_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
TN_DM double tn_dm_from_bits(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ln(x) for normal positive x: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716: the series to
 * s^15 (the next term, s^17 / 17, is below 5e-15 of s). */
TN_DM double tn_dm_log(double x) {
    uint64_t u = tn_dm_bits(x);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    double m = tn_dm_from_bits((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL); /* [1,2) */
    if (m > 1.4142135623730951) {
        m = TN_MUL(m, 0.5);
        e += 1;
    }
    double s = TN_DIV(TN_SUB(m, 1.0), TN_ADD(m, 1.0));
    double s2 = TN_MUL(s, s);
    /* 2 (s + s^3/3 + ... + s^15/15), Horner in s2 */
    double p = 1.0 / 15.0;
    p = TN_FMA(p, s2, 1.0 / 13.0);
    p = TN_FMA(p, s2, 1.0 / 11.0);
    p = TN_FMA(p, s2, 1.0 / 9.0);
    p = TN_FMA(p, s2, 1.0 / 7.0);
    p = TN_FMA(p, s2, 1.0 / 5.0);
    p = TN_FMA(p, s2, 1.0 / 3.0);
    double lnm = TN_MUL(2.0, TN_FMA(TN_MUL(s, s2), p, s));
    /* e ln 2 with ln 2 split so that e * LN2_HI is exact */
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    return TN_FMA((double)e, LN2_HI, TN_FMA((double)e, LN2_LO, lnm));
}

/* sin and cos of t, |t| <= pi/4: Taylor series to t^13 / t^14 (the next
 * terms are below 3e-14). */
TN_DM void tn_dm_sincos_small(double t, double *s, double *c) {
    double t2 = TN_MUL(t, t);
    double ps = 1.0 / 6227020800.0; /* 1/13! */
    ps = TN_FMA(ps, t2, -1.0 / 39916800.0);
    ps = TN_FMA(ps, t2, 1.0 / 362880.0);
    ps = TN_FMA(ps, t2, -1.0 / 5040.0);
    ps = TN_FMA(ps, t2, 1.0 / 120.0);
    ps = TN_FMA(ps, t2, -1.0 / 6.0);
    *s = TN_FMA(TN_MUL(t, t2), ps, t);
    double pc = 1.0 / 87178291200.0; /* 1/14! */
    pc = TN_FMA(pc, t2, -1.0 / 479001600.0);
    pc = TN_FMA(pc, t2, 1.0 / 3628800.0);
    pc = TN_FMA(pc, t2, -1.0 / 40320.0);
    pc = TN_FMA(pc, t2, 1.0 / 720.0);
    pc = TN_FMA(pc, t2, -1.0 / 24.0);
    pc = TN_FMA(pc, t2, 0.5);
    *c = TN_FMA(-t2, pc, 1.0);
}

/* sin and cos of 2 pi u for u in [0, 1): the quarter-turn and the octant are
 * taken from u exactly, the rest reduced to |t| <= pi/4. */
TN_DM void tn_dm_sincos2pi(double u, double *s, double *c) {
    const double TWO_PI = 6.283185307179586476925286766559;
    int q = (int)TN_MUL(u, 4.0);          /* quarter turn, exact */
    double r = TN_SUB(u, TN_MUL((double)q, 0.25)); /* [0, 1/4), exact */
    double a, b;
    if (r <= 0.125) {
        tn_dm_sincos_small(TN_MUL(r, TWO_PI), &a, &b); /* a = sin, b = cos of 2 pi r */
    } else {
        double cc, ss;
        tn_dm_sincos_small(TN_MUL(TN_SUB(0.25, r), TWO_PI), &ss, &cc);
        a = cc, b = ss; /* sin(pi/2 - x) = cos x */
    }
    switch (q & 3) {
    case 0: *s = a, *c = b; break;
    case 1: *s = b, *c = -a; break;
    case 2: *s = -a, *c = -b; break;
    default: *s = -b, *c = a; break;
    }
}

/* The Box-Muller pair of the generator from two 53-bit uniforms in (0, 1). */
TN_DM void tn_dm_box_muller(double u1, double u2, double *z0, double *z1) {
    double rad = TN_SQRT(TN_MUL(-2.0, tn_dm_log(u1)));
    double s, c;
    tn_dm_sincos2pi(u2, &s, &c);
    *z0 = TN_MUL(rad, c);
    *z1 = TN_MUL(rad, s);
}
#endif
