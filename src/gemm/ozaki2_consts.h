/* Ozaki scheme II: the constants of a moduli set, shared by the host code
 * (src/gemm/ozaki2.c) and the kernels (src/backend/cuda/kernels/ozaki2_kernels.cu),
 * which take them by value. See ozaki2.h. */
#ifndef TCNLA_OZAKI2_CONSTS_H
#define TCNLA_OZAKI2_CONSTS_H

#define TN_OZ2_MAXN 20       /* moduli available (log2 P = 155.x for all 20) */
#define TN_OZ2_KBLOCK 131056 /* k per INT8 product: 131056 * 2^14 < 2^31, a multiple of 16 */
#define TN_OZ2_CHUNKS 7      /* 12-bit chunks of a scaled integer |a'| < 2^80 (2^84) */

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TN_OZ2_HD __host__ __device__
#else
#define TN_OZ2_HD
#endif

/* DP mode takes the largest need over the vectors (tn_oz2_need), and
 * need(sigma, g) depends on g 2^sigma only, decreasing in it: the vector
 * with the smallest g 2^sigma decides. Its key, order-free so that both
 * backends can take the minimum in any order (the GPU with atomicMin):
 * f 2^e = g 2^sigma with f in [0.5, 1), key = (e + 4096) 2^51 + the top 51
 * fraction bits of f; UINT64_MAX when g is 0, Inf or NaN (no constraint). */
static inline TN_OZ2_HD uint64_t tn_oz2_gkey(double g, int sigma) {
    if (!(g > 0.0) || g > 1.7976931348623157e308) return UINT64_MAX;
    int adj = 0;
    if (g < 0x1p-1000) { /* subnormal or close: scale up exactly */
        g *= 0x1p64;
        adj = -64;
    }
    uint64_t b;
    memcpy(&b, &g, sizeof b);
    const int e = (int)(b >> 52) - 1022 + adj + sigma;
    return ((uint64_t)(e + 4096) << 51) | ((b & 0xFFFFFFFFFFFFFull) >> 1);
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
