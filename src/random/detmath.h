/* Deterministic single-precision Box-Muller for the Gaussian generator,
 * written once for the host and the device: only IEEE operations that are
 * correctly rounded everywhere (+, -, *, /, sqrt, the fused multiply-add,
 * and RN conversion of a 32-bit integer to float), in a fixed order, never
 * contracted otherwise (the host compiles with -ffp-contract=off and calls
 * fmaf; the device uses the _rn intrinsics). So the CPU and the GPU draw
 * bit-identical random matrices, which glibc's and CUDA's libm (accurate to
 * an ulp or so, but not identical) would not give.
 *
 * Accuracy: ln and sin / cos within a few FP32 ulps (series cut where their
 * next term is below 0.05 ulp), so each Gaussian is within a few ulps of
 * sqrt(-2 ln u1) cos(2 pi u2) of its own uniforms: a random matrix needs no
 * more. The uniforms: u1 = RN(r 2^-32 + 2^-33) in [2^-33, 1] from a 32-bit
 * word (so |z| <= sqrt(66 ln 2) = 6.8), u2 the top 24 bits of the other.
 * Everything is FP32 arithmetic: in FP64 the GPU fill is held to the FP64
 * pipe, 0.47 ms per 64M values on an H200 (197 us in FP32). */
#ifndef TCNLA_DETMATH_H
#define TCNLA_DETMATH_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TN_DM static __device__ inline
#define TN_ADD(a, b) __fadd_rn((a), (b))
#define TN_SUB(a, b) __fsub_rn((a), (b))
#define TN_MUL(a, b) __fmul_rn((a), (b))
#define TN_DIV(a, b) __fdiv_rn((a), (b))
#define TN_SQRT(a) __fsqrt_rn(a)
#define TN_FMA(a, b, c) __fmaf_rn((a), (b), (c))
#define TN_U2F(u) __uint2float_rn(u)
#else
#include <math.h>
#define TN_DM static inline
#define TN_ADD(a, b) ((a) + (b))
#define TN_SUB(a, b) ((a) - (b))
#define TN_MUL(a, b) ((a) * (b))
#define TN_DIV(a, b) ((a) / (b))
#define TN_SQRT(a) sqrtf(a)
#define TN_FMA(a, b, c) fmaf((a), (b), (c))
#define TN_U2F(u) ((float)(u))
#endif

TN_DM uint32_t tn_dm_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
TN_DM float tn_dm_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ln(x) for normal positive x: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716: the series to
 * s^9 (the next term, s^11 / 11, is below 2.2e-9 of s, 0.04 ulp). m - 1 is
 * exact (Sterbenz). */
TN_DM float tn_dm_logf(float x) {
    const uint32_t u = tn_dm_bits(x);
    int e = (int)((u >> 23) & 0xffu) - 127;
    float m = tn_dm_from_bits((u & 0x007fffffu) | 0x3f800000u); /* [1,2) */
    if (m > 1.41421356f) {
        m = TN_MUL(m, 0.5f);
        e += 1;
    }
    const float f = TN_SUB(m, 1.0f);
    const float s = TN_DIV(f, TN_ADD(f, 2.0f));
    const float s2 = TN_MUL(s, s);
    /* 2 (s + s^3/3 + ... + s^9/9), Horner in s2 */
    float p = 0.111111111f; /* 1/9 */
    p = TN_FMA(p, s2, 0.142857143f); /* 1/7 */
    p = TN_FMA(p, s2, 0.2f);
    p = TN_FMA(p, s2, 0.333333333f);
    const float lnm = TN_MUL(2.0f, TN_FMA(TN_MUL(s, s2), p, s));
    /* e ln 2 with ln 2 split so that e * LN2_HI is exact (|e| < 2^7) */
    const float LN2_HI = 6.9313812256e-01f, LN2_LO = 9.0580006145e-06f;
    const float fe = (float)e;
    return TN_FMA(fe, LN2_HI, TN_FMA(fe, LN2_LO, lnm));
}

/* sin and cos of t, |t| <= pi/4: Taylor series to t^9 / t^10 (the next
 * terms are below 3e-9 relative, 0.05 ulp). */
TN_DM void tn_dm_sincosf_small(float t, float *s, float *c) {
    const float t2 = TN_MUL(t, t);
    float ps = 2.75573192e-06f; /* 1/9! */
    ps = TN_FMA(ps, t2, -1.98412698e-04f); /* -1/7! */
    ps = TN_FMA(ps, t2, 8.33333333e-03f);  /* 1/5! */
    ps = TN_FMA(ps, t2, -0.166666667f);    /* -1/3! */
    *s = TN_FMA(TN_MUL(t, t2), ps, t);
    float pc = 2.75573192e-07f; /* 1/10! */
    pc = TN_FMA(pc, t2, -2.48015873e-05f); /* -1/8! */
    pc = TN_FMA(pc, t2, 1.38888889e-03f);  /* 1/6! */
    pc = TN_FMA(pc, t2, -4.16666667e-02f); /* -1/4! */
    pc = TN_FMA(pc, t2, 0.5f);
    *c = TN_FMA(-t2, pc, 1.0f);
}

/* sin and cos of 2 pi u2, u2 = (w >> 8) 2^-24 in [0, 1) from a 32-bit word
 * w: the quarter turn is w's top two bits, the rest (exact in FP32) is
 * folded to the octant |t| <= pi/4. */
TN_DM void tn_dm_sincos2pif(uint32_t w, float *s, float *c) {
    const float TWO_PI = 6.28318531f;
    const unsigned q = w >> 30;
    const float r = TN_MUL(TN_U2F((w >> 8) & 0x3fffffu), 0x1p-24f); /* [0, 1/4), exact */
    /* one series for either octant (no divergent branch on the GPU):
     * t = 2 pi r, or 2 pi (1/4 - r) with sin and cos swapped */
    const int lo = r <= 0.125f;
    float ss, cc;
    tn_dm_sincosf_small(TN_MUL(lo ? r : TN_SUB(0.25f, r), TWO_PI), &ss, &cc);
    const float a = lo ? ss : cc, b = lo ? cc : ss; /* sin, cos of 2 pi r */
    /* quarter turns 0..3: (sin, cos) = (a, b), (b, -a), (-a, -b), (-b, a) */
    const float sq = (q & 1u) ? b : a, cq = (q & 1u) ? a : b;
    *s = (q & 2u) ? -sq : sq;
    *c = (q == 1u || q == 2u) ? -cq : cq;
}

/* The Box-Muller pair of the generator from two 32-bit random words:
 * u1 = RN(w1 2^-32 + 2^-33) in (0, 1], the angle from w2. */
TN_DM void tn_dm_box_muller(uint32_t w1, uint32_t w2, float *z0, float *z1) {
    const float u1 = TN_FMA(TN_U2F(w1), 0x1p-32f, 0x1p-33f);
    const float l = tn_dm_logf(u1); /* <= 0 */
    const float rad = TN_SQRT(TN_MUL(-2.0f, l));
    float s, c;
    tn_dm_sincos2pif(w2, &s, &c);
    *z0 = TN_MUL(rad, c);
    *z1 = TN_MUL(rad, s);
}
#endif
