/* Ozaki scheme II: the constants of a moduli set, shared by the host code
 * (src/gemm/ozaki2.c) and the kernels (src/gemm/cuda/ozaki2_kernels.cu),
 * which take them by value. See ozaki2.h. */
#ifndef TCNLA_OZAKI2_CONSTS_H
#define TCNLA_OZAKI2_CONSTS_H

#define TN_OZ2_MAXN 20       /* moduli available (log2 P = 155.x for all 20) */
#define TN_OZ2_KBLOCK 131056 /* k per INT8 product: 131056 * 2^14 < 2^31, a multiple of 16 */
#define TN_OZ2_CHUNKS 7      /* 12-bit chunks of a scaled integer |a'| < 2^80 (2^84) */

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
