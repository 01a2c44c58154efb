/* Ozaki scheme II: the constants of a moduli set, shared by the host code
 * (src/gemm/ozaki2.c) and the kernels (src/backend/cuda/kernels/ozaki2_kernels.cu),
 * which take them by value. See ozaki2.h. */
#ifndef TCNLA_OZAKI2_CONSTS_H
#define TCNLA_OZAKI2_CONSTS_H

#define TN_OZ2_MAXN 20       /* moduli available (log2 P = 155.x for all 20) */
#define TN_OZ2_KBLOCK 131056 /* k per INT8 product: 131056 * 2^14 < 2^31, a multiple of 16 */
#define TN_OZ2_CHUNKS 7      /* 12-bit chunks of a scaled integer |a'| < 2^80 (2^84) */
#define TN_OZ2_YBITS 80      /* every scaled element |x 2^s| below 2^80 (the GPU's residues) */
#define TN_OZ2_NORM_LANES 256 /* tn_oz2_norm2's order: 256 strided partial sums, then in turn */
#define TN_OZ2_BLEN 32       /* elements of a vector per block of its norm bound (ozaki2.h) */

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TN_OZ2_HD __host__ __device__
#else
#define TN_OZ2_HD
#endif

/* DP mode's shift of a vector x (a row of op(A) or a column of op(B)) with
 * g = |x| . w > 0 (w = |op(B)| e for rows, |op(A)|^T e for columns, wn its
 * norm, tn_oz2_norm2): the least integer s with
 *     2^-(s + 1) wn <= 2^culog2 g,   2^culog2 = c u,
 * where 2^-(s + 1) bounds each element's rounding to the nearest integer
 * after the scaling by 2^s (see ozaki2.h). That is s = ceil(log2 r) - 1,
 * r = wn / (2^culog2 g), read off the bits of r (two IEEE operations, the
 * same on every backend for the same wn and g); TN_OZ2_SHIFT_HUGE where r
 * is not below 2^1000 (no moduli count could hold the vector). */
#define TN_OZ2_SHIFT_HUGE (1 << 20)
static inline TN_OZ2_HD int tn_oz2_shift(double wn, double g, int culog2) {
#ifdef __CUDA_ARCH__
    const double r = __ddiv_rn(wn, __dmul_rn(g, ldexp(1.0, culog2)));
#else
    const double r = wn / (g * ldexp(1.0, culog2));
#endif
    if (!(r < 0x1p1000)) return TN_OZ2_SHIFT_HUGE;
    int e;
    const double f = frexp(r, &e); /* r = f 2^e, f in [0.5, 1) */
    return (f == 0.5 ? e - 1 : e) - 1;
}

/* The shift sigma of a vector with integer norm bound s and largest
 * exponent e (tn_oz2_sigma, ozaki2.h): the largest sigma with 2^(2 sigma) s
 * 2^(2 (e - 8) - tbits) <= 2^(2 sigma + bl + 2 e - 16 - tbits) <= 1, bl the
 * bit length of s (s < 2^bl); 0 for a vector of zeros (s = 0, or e the
 * "no element" marker INT_MIN). */
static inline TN_OZ2_HD int tn_oz2_sigma_of(int e, unsigned long long s, int tbits) {
    if (s == 0 || e <= -(1 << 30)) return 0;
#ifdef __CUDA_ARCH__
    const int bl = 64 - __clzll((long long)s);
#else
    const int bl = 64 - __builtin_clzll(s);
#endif
    const int a = 16 + tbits - bl - 2 * e;
    return a >= 0 ? a / 2 : -((1 - a) / 2); /* floor(a / 2) */
}

/* The square of the norm bound of a vector scaled by 2^s: S 2^(2 (s + e - 8)
 * - tbits), with S and e its integer norm bound and largest exponent
 * (tn_oz2_sq_term); 0 for S = 0. S rounds to the nearest double (the plan
 * allows for that). Order-free maxima of these (non-negative doubles order
 * as their bits) give the range of the scaled products. */
static inline TN_OZ2_HD double tn_oz2_scaled_sq(unsigned long long S, int e, int s, int tbits) {
#ifdef __CUDA_ARCH__
    return S ? ldexp(__ull2double_rn(S), 2 * (s + e - 8) - tbits) : 0.0;
#else
    return S ? ldexp((double)S, 2 * (s + e - 8) - tbits) : 0.0;
#endif
}

/* A block's integer norm bound sc, taken at its own largest exponent ec,
 * at the vector's largest exponent e >= ec: ceil(sc 4^-(e - ec)) (0 for
 * sc = 0). */
static inline TN_OZ2_HD unsigned long long tn_oz2_bound_at(unsigned long long sc, int ec, int e) {
    if (sc == 0) return 0;
    const long long d = 2 * ((long long)e - (long long)ec);
    if (d == 0) return sc;
    if (d >= 64) return 1;
    return (sc >> d) + ((sc & ((1ull << d) - 1)) != 0);
}

typedef struct {
    int n;                             /* moduli used */
    int log2p;                         /* floor(log2 P) */
    int mod[TN_OZ2_MAXN];              /* p_l */
    int qinv[TN_OZ2_MAXN];             /* (P / p_l)^-1 mod p_l */
    double w[TN_OZ2_MAXN][4];          /* P / p_l in 4 parts of 40 bits, on a common grid */
    double p[4];                       /* P in the same 4 parts */
    int lo[4];                         /* part j is a multiple of 2^lo[j] */
    double pinv;                       /* 1 / P (rounded) */
    float pinvf[TN_OZ2_MAXN];          /* 1 / p_l (rounded) */
    float pw[TN_OZ2_MAXN][TN_OZ2_CHUNKS]; /* 2^(12 t) mod p_l, in (-p_l / 2, p_l / 2] */
    double pow2lo[4], pow2mlo[4];      /* 2^lo[j], 2^-lo[j] */
} tn_oz2_consts_t;

#endif
