/* Kernels of Ozaki scheme II (host side in src/backend/cuda/ozaki2_cuda.c, the
 * method and the CPU reference in src/gemm/ozaki2.h / ozaki2.c).
 *
 * An operand is a set of nv vectors of length k (rows of op(A), columns of
 * op(B)): element l of vector v is X[v*sv + l*sl], FP32 or FP64. The kernels
 * that read it go through 32 x 32 tiles in shared memory, loaded along
 * whichever index is contiguous, so both layouts read coalesced.
 *
 * What must equal the CPU bit for bit does: the largest exponents (integer
 * maxima), the norm bounds (integer sums: atomics commute), the residues
 * (exact integers, computed in FP32 below 2^24), the modular products and
 * the reconstruction (the same FP64 operations in the same order, the last
 * combination with __dmul_rn / __dadd_rn so that nothing is contracted).
 * The sums g = |x| . w of DP mode are FP64 sums in a fixed order of their
 * own (deterministic, not the CPU's order): they only choose the moduli
 * count.
 *
 * Layouts of the products: residues R[(l*nvp + v)*kp + i] (int8, zero
 * padded to nvp, kp multiples of 32), cuBLAS's int32 product of one modulus
 * P[j*mbp + i], u_l = (q_l P) mod p_l of the products Q[(l*nbp + j)*mbp + i]
 * (uint8). */
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki2_consts.h"

#include <limits.h>
#include <stdint.h>

#define T32 32

typedef struct {
    const void *X;
    long long sv, sl, nv, k;
    int f32;
} oz2_view;

static __device__ __forceinline__ double ldx(const oz2_view &o, long long v, long long l) {
    const long long idx = v * o.sv + l * o.sl;
    return o.f32 ? (double)((const float *)o.X)[idx] : ((const double *)o.X)[idx];
}

/* A tile in registers: the 4 elements a thread of a 32 x 8 block loads */
typedef struct {
    double x[4];
} oz2_regs;

/* the thread's 4 elements of tile (v0, l0), 0 outside, read along the
 * contiguous index (issued together, stored later: the passes fetch the
 * next tile before they work on the current one). Tiles inside the operand
 * take one base address and a stride, without per-element checks. */
static __device__ __forceinline__ void fetch_tile(oz2_regs *r, const oz2_view &o, long long v0,
                                                  long long l0) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int along_l = o.sl == 1; /* the elements of a vector are contiguous */
    if (v0 + T32 <= o.nv && l0 + T32 <= o.k) {
        const long long base = along_l ? (v0 + ty) * o.sv + l0 + tx
                                       : (v0 + tx) * o.sv + (l0 + ty) * o.sl;
        const long long step = 8 * (along_l ? o.sv : o.sl);
        if (o.f32) {
            const float *p = (const float *)o.X + base;
#pragma unroll
            for (int s = 0; s < 4; s++) r->x[s] = (double)p[s * step];
        } else {
            const double *p = (const double *)o.X + base;
#pragma unroll
            for (int s = 0; s < 4; s++) r->x[s] = p[s * step];
        }
        return;
    }
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const long long v = along_l ? v0 + ty + 8 * s : v0 + tx;
        const long long l = along_l ? l0 + tx : l0 + ty + 8 * s;
        r->x[s] = v < o.nv && l < o.k ? ldx(o, v, l) : 0.0;
    }
}

/* t[v][l] = element (v0 + v, l0 + l) from the fetched registers */
static __device__ __forceinline__ void store_tile(double (*t)[T32 + 1], const oz2_view &o,
                                                  const oz2_regs *r) {
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int s = 0; s < 4; s++) {
        if (o.sl == 1) t[ty + 8 * s][tx] = r->x[s];
        else t[tx][ty + 8 * s] = r->x[s];
    }
}

/* frexp's exponent and the top 8 bits of the significand (f 256 rounded
 * down), from the bits for normal numbers; frexp for subnormals */
static __device__ __forceinline__ int exp_m8(double x, unsigned *m8) {
    const unsigned long long b = (unsigned long long)__double_as_longlong(x);
    const int ef = (int)((b >> 52) & 0x7FF);
    if (ef != 0) {
        *m8 = 128u + (unsigned)((b >> 45) & 127u);
        return ef - 1022;
    }
    int ex;
    const double f = frexp(fabs(x), &ex);
    *m8 = (unsigned)(f * 256.0);
    return ex;
}

static __device__ unsigned long long sq_term(double x, int e, int tbits) {
    if (x == 0.0) return 0;
    unsigned m;
    const int ex = exp_m8(x, &m);
    unsigned long long m8 = (unsigned long long)m + 1;
    unsigned long long v = m8 * m8;
    int sh = 2 * (ex - e) + tbits;
    if (sh >= 0) return v << sh;
    if (sh <= -63) return 1;
    return (v + (1ull << -sh) - 1) >> -sh;
}

/* The sums over tiles run in a fixed order per block (blocks loop over
 * tiles with a stride of the grid size), so they are deterministic. */
#define OZ2_PARTS 64

/* -------------------------------------------------------------- pass 1 */
/* E[v] = max exponent (atomicMax; E preset below -2^30), and when wpart:
 * wpart[b * k + l] = sum of |x| over the vectors of the tiles b, b + 64, ...
 * (each of the 8 thread rows sums the tile rows ty, ty + 8, .. in turn, and
 * the 8 partial sums are added in the order of ty at the end: a fixed order,
 * so the sums are deterministic) */
static __global__ void k_pass1(oz2_view o, int *E, double *wpart) {
    __shared__ double t[T32][T32 + 1];
    __shared__ double red[8][T32];
    const long long l0 = (long long)blockIdx.x * T32, vtiles = (o.nv + T32 - 1) / T32;
    const int tid = threadIdx.y * T32 + threadIdx.x, v = tid >> 3, q = tid & 7;
    double ws = 0.0;
    oz2_regs nx;
    if (blockIdx.y < vtiles) fetch_tile(&nx, o, (long long)blockIdx.y * T32, l0);
    for (long long vt = blockIdx.y; vt < vtiles; vt += gridDim.y) {
        const long long v0 = vt * T32;
        store_tile(t, o, &nx);
        __syncthreads();
        if (vt + gridDim.y < vtiles) fetch_tile(&nx, o, (vt + gridDim.y) * T32, l0);
        int em = INT_MIN;
        for (int c = q; c < T32; c += 8) {
            const double x = t[v][c];
            if (x != 0.0) {
                unsigned m;
                em = max(em, exp_m8(x, &m));
            }
        }
        em = max(em, __shfl_xor_sync(0xffffffffu, em, 1));
        em = max(em, __shfl_xor_sync(0xffffffffu, em, 2));
        em = max(em, __shfl_xor_sync(0xffffffffu, em, 4));
        if (q == 0 && em != INT_MIN && v0 + v < o.nv) atomicMax(&E[v0 + v], em);
        if (wpart)
            for (int r = threadIdx.y; r < T32; r += 8)
                ws = __dadd_rn(ws, fabs(t[r][threadIdx.x]));
        __syncthreads();
    }
    if (wpart) {
        red[threadIdx.y][threadIdx.x] = ws;
        __syncthreads();
        if (threadIdx.y == 0 && l0 + threadIdx.x < o.k) {
            double s = 0.0;
            for (int r = 0; r < 8; r++) s = __dadd_rn(s, red[r][threadIdx.x]);
            wpart[(long long)blockIdx.y * o.k + l0 + threadIdx.x] = s;
        }
    }
}

/* out[i] = sum_b part[b * len + i], b in order */
static __global__ void k_sum_parts(const double *part, long long nb, long long len, double *out) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    double s = 0.0;
    for (long long b = 0; b < nb; b++) s = __dadd_rn(s, part[b * len + i]);
    out[i] = s;
}

/* -------------------------------------------------------------- pass 2 */
/* S[v] += integer norm bound terms (atomicAdd: exact, commutes), and when
 * w: gpart[b * nv + v] = sum of |x| w_l over the tiles b, b + 64, ... of l. */
static __global__ void k_pass2(oz2_view o, const int *E, int tbits, unsigned long long *S,
                               const double *w, double *gpart) {
    __shared__ double t[T32][T32 + 1];
    __shared__ double wt[T32]; /* w of the tile's columns (0 past k) */
    const long long v0 = (long long)blockIdx.y * T32, ltiles = (o.k + T32 - 1) / T32;
    const int tid = threadIdx.y * T32 + threadIdx.x, v = tid >> 3, q = tid & 7;
    const int e = v0 + v < o.nv ? E[v0 + v] : INT_MIN;
    unsigned long long s = 0;
    double g = 0.0, wn = 0.0;
    oz2_regs nx;
    if (blockIdx.x < ltiles) {
        const long long l0 = (long long)blockIdx.x * T32;
        fetch_tile(&nx, o, v0, l0);
        if (w && threadIdx.y == 0) wn = l0 + threadIdx.x < o.k ? w[l0 + threadIdx.x] : 0.0;
    }
    for (long long lt = blockIdx.x; lt < ltiles; lt += gridDim.x) {
        store_tile(t, o, &nx);
        if (w && threadIdx.y == 0) wt[threadIdx.x] = wn;
        __syncthreads();
        if (lt + gridDim.x < ltiles) {
            const long long l1 = (lt + gridDim.x) * T32;
            fetch_tile(&nx, o, v0, l1);
            if (w && threadIdx.y == 0) wn = l1 + threadIdx.x < o.k ? w[l1 + threadIdx.x] : 0.0;
        }
        for (int c = q; c < T32; c += 8) {
            const double x = t[v][c];
            if (e > -(1 << 30)) s += sq_term(x, e, tbits);
            if (w) g = __dadd_rn(g, __dmul_rn(fabs(x), wt[c]));
        }
        __syncthreads();
    }
    for (int d = 1; d < 8; d <<= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, d);
        g = __dadd_rn(g, __shfl_xor_sync(0xffffffffu, g, d));
    }
    if (q == 0 && v0 + v < o.nv) {
        if (s) atomicAdd(&S[v0 + v], s);
        if (w) gpart[(long long)blockIdx.x * o.nv + v0 + v] = g;
    }
}

/* sig[v] as tn_oz2_sigma; in DP mode (g != NULL) also *key = the minimum of
 * tn_oz2_gkey(g[v], sig[v]) (order-free; *key preset to UINT64_MAX). *bad
 * is set when a vector holds Inf or NaN (its E is above every finite
 * exponent), so no separate pass looks for them. */
static __global__ void k_sigma(const int *E, const unsigned long long *S, long long nv, int tbits,
                               int *sig, const double *g, unsigned long long *key, int *bad) {
    const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int sg = 0;
    if (v < nv) {
        const int e = E[v];
        if (e > 1024) atomicOr(bad, 1); /* exp_m8 of Inf / NaN: 2047 - 1022 */
        const unsigned long long s = S[v];
        if (s != 0 && e > -(1 << 30)) {
            const int a = 16 + tbits - (64 - __clzll((long long)s)) - 2 * e;
            sg = a >= 0 ? a / 2 : -((1 - a) / 2);
        }
        sig[v] = sg;
    }
    if (!g) return;
    unsigned long long kk = v < nv ? (unsigned long long)tn_oz2_gkey(g[v], sg) : ~0ull;
    for (int d = 16; d > 0; d >>= 1) {
        const unsigned long long o = __shfl_xor_sync(0xffffffffu, kk, d);
        kk = o < kk ? o : kk;
    }
    if ((threadIdx.x & 31) == 0 && kk != ~0ull) atomicMin(key, kk);
}

/* ------------------------------------------------------------ residues */
/* R for vectors [v_base, v_base + nvp) and all kp (zero outside nv, k):
 * trunc(x 2^(h + sig[v])) modulo each p_l, in [-128, 127]. A block takes
 * one tile row of 32 vectors and the column tiles blockIdx.x, + gridDim.x,
 * .., fetching the next tile before it works on the current one. nch (the
 * 12-bit chunks of the scaled integers that can be nonzero) is a constant
 * where the kernels below inline this (3, 5 or 7: ceil((h + 1) / 12)), so
 * each keeps only what it uses in registers. */
static __device__ __forceinline__ void residues_body(const oz2_view &o, long long v_base,
                                                     long long nvp, long long kp,
                                                     const int *sig, int h, const int nch,
                                                     const tn_oz2_consts_t &c,
                                                     signed char *R) {
    __shared__ double t[T32][T32 + 1];
    const long long v0 = (long long)blockIdx.y * T32, ltiles = kp / T32;
    oz2_view ob = o;
    ob.X = o.f32 ? (const void *)((const float *)o.X + v_base * o.sv)
                 : (const void *)((const double *)o.X + v_base * o.sv);
    ob.nv = o.nv - v_base < 0 ? 0 : o.nv - v_base;
    const int tid = threadIdx.y * T32 + threadIdx.x, v = tid >> 3, lq = (tid & 7) * 4;
    const int s = v0 + v < ob.nv ? h + sig[v_base + v0 + v] : 0;
    /* 2^s as two exact powers (|s| <= 2046): the same trunc(x 2^s) as
     * scalbn, since an intermediate underflow means |x 2^s| < 1 anyway */
    const int s1 = s / 2, s2 = s - s1;
    const double p1 = __longlong_as_double((long long)(s1 + 1023) << 52);
    const double p2 = __longlong_as_double((long long)(s2 + 1023) << 52);
    oz2_regs nx;
    if (blockIdx.x < ltiles) fetch_tile(&nx, ob, v0, (long long)blockIdx.x * T32);
    for (long long lt = blockIdx.x; lt < ltiles; lt += gridDim.x) {
        store_tile(t, ob, &nx);
        __syncthreads();
        if (lt + gridDim.x < ltiles) fetch_tile(&nx, ob, v0, (lt + gridDim.x) * T32);
        /* each element as signed 12-bit chunks (floats, exact): x = sum c_t 2^(12 t) */
        float ch[4][TN_OZ2_CHUNKS];
        unsigned int low[4]; /* the two's complement low byte: the residue modulo 256 */
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const double y = trunc(__dmul_rn(__dmul_rn(t[v][lq + e], p1), p2));
            const double a = fabs(y), ah = trunc(__dmul_rn(a, 0x1p-36)); /* ah < 2^44 */
            /* integers below 2^52 read from the mantissa of x + 2^52 */
            const unsigned long long hi =
                (unsigned long long)__double_as_longlong(__dadd_rn(ah, 0x1p52)) &
                0xFFFFFFFFFFFFFull;
            const unsigned long long lo =
                (unsigned long long)__double_as_longlong(
                    __dadd_rn(__dsub_rn(a, __dmul_rn(ah, 0x1p36)), 0x1p52)) &
                0xFFFFFFFFFFFFFull;
            const float sg = y < 0.0 ? -1.0f : 1.0f;
            const unsigned int cc[TN_OZ2_CHUNKS] = {
                (unsigned)(lo & 4095u),         (unsigned)((lo >> 12) & 4095u),
                (unsigned)((lo >> 24) & 4095u), (unsigned)(hi & 4095u),
                (unsigned)((hi >> 12) & 4095u), (unsigned)((hi >> 24) & 4095u),
                (unsigned)((hi >> 36) & 4095u)};
#pragma unroll
            for (int tt = 0; tt < TN_OZ2_CHUNKS; tt++) /* small integers to float, exactly */
                ch[e][tt] = sg * (__int_as_float(0x4B000000 | (int)cc[tt]) - 8388608.0f);
            low[e] = (y < 0.0 ? 0u - (unsigned)lo : (unsigned)lo) & 0xFFu;
        }
        const long long base = (v0 + v) * kp + lt * T32 + lq;
        for (int l = 0; l < c.n; l++) {
            unsigned int word;
            if (c.mod[l] == 256) {
                word = low[0] | low[1] << 8 | low[2] << 16 | low[3] << 24;
            } else {
                /* sum of |c_t| |pw_t| < 7 * 4095 * 127 < 2^22: exact, and the
                 * quotient rounded to nearest (1.5 2^23 trick) is exact too,
                 * since x / p_l (p_l odd) stays 1 / (2 p_l) away from a half
                 * integer while the error of x * (1 / p_l) is below 2^22 / p_l
                 * 2^-23. So r = x - q p_l is the residue in [-(p-1)/2, (p-1)/2]. */
                const float p = (float)c.mod[l], pinv = c.pinvf[l];
                word = 0;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float acc = 0.0f;
#pragma unroll
                    for (int tt = 0; tt < TN_OZ2_CHUNKS; tt++)
                        if (tt < nch) acc = fmaf(ch[e][tt], c.pw[l][tt], acc);
                    const float q = __fadd_rn(__fmaf_rn(acc, pinv, 12582912.0f), -12582912.0f);
                    const float r = __fmaf_rn(-q, p, acc);
                    /* the two's complement byte from the mantissa of r + 1.5 2^23 */
                    word |= ((unsigned)__float_as_int(r + 12582912.0f) & 0xFFu) << (8 * e);
                }
            }
            *(unsigned int *)(R + (long long)l * nvp * kp + base) = word;
        }
        __syncthreads();
    }
}

/* |trunc(x 2^s)| <= 2^h: h + 1 <= 36 bits (FP32 inputs in DP mode), 3 chunks */
static __global__ void __launch_bounds__(256, 5) k_residues3(oz2_view o, long long v_base, long long nvp, long long kp,
                                   const int *sig, int h, tn_oz2_consts_t c, signed char *R) {
    residues_body(o, v_base, nvp, kp, sig, h, 3, c, R);
}
static __global__ void k_residues5(oz2_view o, long long v_base, long long nvp, long long kp,
                                   const int *sig, int h, tn_oz2_consts_t c, signed char *R) {
    residues_body(o, v_base, nvp, kp, sig, h, 5, c, R);
}
static __global__ void k_residues7(oz2_view o, long long v_base, long long nvp, long long kp,
                                   const int *sig, int h, tn_oz2_consts_t c, signed char *R) {
    residues_body(o, v_base, nvp, kp, sig, h, TN_OZ2_CHUNKS, c, R);
}

/* ------------------------------------------------- products modulo p_l */
/* Q = u = (q_l P) mod p (first k-block) or (Q + (q_l P) mod p) mod p,
 * 4 elements per thread, all in exact FP32 integer arithmetic */
static __device__ __forceinline__ float mod_small(float x, float p, float pinv) {
    /* x mod p for an integer 0 <= |x| < 2^24: quotient to nearest, one fix */
    const float q = __fadd_rn(__fmul_rn(x, pinv), 12582912.0f) - 12582912.0f;
    float r = fmaf(-q, p, x); /* exact */
    r = r < 0.0f ? r + p : r;
    return r >= p ? r - p : r;
}

/* q v mod p for an int32 v = vh 2^16 + vl (vh in [-2^15, 2^15), vl in
 * [0, 2^16)) as vh c1 + vl c0 with c1 = q 2^16 mod p and c0 = q, both
 * taken in (-p/2, p/2]: |vh c1| <= 2^22 and |vl c0| < 2^23, so the sum is
 * an exact FP32 integer below 2^24 and one reduction gives the residue.
 * vh and vl reach FP32 through the mantissa (exact, full rate). */
static __global__ void k_modp(const int *P, long long cnt4, int p, float c0, float c1,
                              float pinvf, int first, unsigned char *Q) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cnt4) return;
    const int4 v = ((const int4 *)P)[i];
    const int vv[4] = {v.x, v.y, v.z, v.w};
    unsigned int old = first ? 0u : ((const unsigned int *)Q)[i], word = 0;
    const float pf = (float)p;
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int vh = vv[e] >> 16, vl = vv[e] & 0xFFFF;
        const float fh = __int_as_float(0x4B000000 | (vh + 32768)) - 8421376.0f; /* 2^23 + 2^15 */
        const float fl = __int_as_float(0x4B000000 | vl) - 8388608.0f;
        float u = mod_small(__fmaf_rn(fh, c1, __fmul_rn(fl, c0)), pf, pinvf);
        if (!first) u = mod_small(u + (float)((old >> (8 * e)) & 0xFFu), pf, pinvf);
        word |= ((unsigned)__float_as_int(u + 8388608.0f) & 0xFFu) << (8 * e);
    }
    ((unsigned int *)Q)[i] = word;
}

/* ---------------------------------------------------------- reconstruct */
/* x 2^-e as scalbn(x, -e) rounds it (once, to nearest): a product with the
 * exact power when that is a normal double, scalbn otherwise */
static __device__ __forceinline__ double scale2(double x, int e) {
    if (e >= -1023 && e <= 1022)
        return __dmul_rn(x, __longlong_as_double((long long)(1023 - e) << 52));
    return scalbn(x, -e);
}

/* C[i + j ldc] = alpha x 2^-(hA + sa[i] + hB + sb[j]) + beta C, i < mb, j < nb
 * (C, sa, sb already offset to the block). A thread takes 4 consecutive
 * rows of one column: one 32-bit load per modulus, the 4 x 4 partial sums
 * S_t = sum_l w_lt u_l accumulated over the moduli in a loop that runs over
 * l with uniform (constant bank) weights; then per element the operations
 * of tn_oz2_reconstruct in the same order. Every product w_lt u_l (40 x 8
 * bits) and partial sum is exact, so FMA or not is the same. */
#define OZ2_REC_ROWS 4
static __global__ void __launch_bounds__(128)
    k_reconstruct(const unsigned char *Q, long long mbp, long long nbp, long long mb,
                  long long nb, tn_oz2_consts_t c, const int *sa, const int *sb, int hAB,
                  double alpha, double beta, void *C, long long ldc, int f32) {
    const long long i0 = OZ2_REC_ROWS * ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (i0 >= mb) return;
    const long long step = mbp * nbp / 4; /* one modulus, in 32-bit words */
    for (long long j = blockIdx.y; j < nb; j += gridDim.y) {
        const unsigned int *q = (const unsigned int *)(Q + j * mbp + i0);
        double S[OZ2_REC_ROWS][4];
#pragma unroll
        for (int e = 0; e < OZ2_REC_ROWS; e++) S[e][0] = S[e][1] = S[e][2] = S[e][3] = 0.0;
#pragma unroll 4
        for (int l = 0; l < c.n; l++) {
            const unsigned int wd = __ldg(q + l * step);
#pragma unroll
            for (int e = 0; e < OZ2_REC_ROWS; e++) {
                /* u_l < 256 to FP64 from the mantissa of u + 2^52 */
                const double u = __hiloint2double(0x43300000, (int)((wd >> (8 * e)) & 0xFFu)) -
                                 0x1p52;
                S[e][0] = fma(c.w[l][0], u, S[e][0]);
                S[e][1] = fma(c.w[l][1], u, S[e][1]);
                S[e][2] = fma(c.w[l][2], u, S[e][2]);
                S[e][3] = fma(c.w[l][3], u, S[e][3]);
            }
        }
        const int ej = hAB + sb[j];
#pragma unroll
        for (int e = 0; e < OZ2_REC_ROWS; e++) {
            const long long i = i0 + e;
            if (i >= mb) break;
            const double qq = rint(__dmul_rn(__dadd_rn(S[e][0], S[e][1]), c.pinv));
            const double D0 = fma(-qq, c.p[0], S[e][0]), D1 = fma(-qq, c.p[1], S[e][1]);
            const double D2 = fma(-qq, c.p[2], S[e][2]), D3 = fma(-qq, c.p[3], S[e][3]);
            const double H1 = __dmul_rn(rint(__dmul_rn(D1, c.pow2mlo[0])), c.pow2lo[0]);
            const double H2 = __dmul_rn(rint(__dmul_rn(D2, c.pow2mlo[1])), c.pow2lo[1]);
            const double H3 = __dmul_rn(rint(__dmul_rn(D3, c.pow2mlo[2])), c.pow2lo[2]);
            const double T0 = __dadd_rn(D0, H1), T1 = __dadd_rn(__dsub_rn(D1, H1), H2);
            const double T2 = __dadd_rn(__dsub_rn(D2, H2), H3), T3 = __dsub_rn(D3, H3);
            const double x = __dadd_rn(T0, __dadd_rn(T1, __dadd_rn(T2, T3)));
            const double v = __dmul_rn(alpha, scale2(x, ej + sa[i]));
            const long long at = i + j * ldc;
            if (f32) {
                float *cf = (float *)C;
                cf[at] =
                    (float)(beta == 0.0 ? v : __dadd_rn(v, __dmul_rn(beta, (double)cf[at])));
            } else {
                double *cd = (double *)C;
                cd[at] = beta == 0.0 ? v : __dadd_rn(v, __dmul_rn(beta, cd[at]));
            }
        }
    }
}

/* ------------------------------------------------------------ launchers */
static oz2_view view_of(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv, int64_t k) {
    oz2_view o;
    o.X = X, o.f32 = f32, o.sv = sv, o.sl = sl, o.nv = nv, o.k = k;
    return o;
}

/* E, and the sums w over the vectors when w != NULL (part: 64 k doubles).
 * nv <= 65535 * 32. */
extern "C" int tn_oz2_pass1(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv,
                            int64_t k, int *E, double *part, double *w, cudaStream_t st) {
    if (nv <= 0 || k <= 0) return 0;
    /* 0x80808080 is below -2^30: "no exponent yet" */
    cudaError_t e = cudaMemsetAsync(E, 0x80, sizeof(int) * (size_t)nv, st);
    if (e != cudaSuccess) return (int)e;
    const oz2_view o = view_of(X, f32, sv, sl, nv, k);
    const int64_t vt = (nv + T32 - 1) / T32, nb = vt < OZ2_PARTS ? vt : OZ2_PARTS;
    k_pass1<<<dim3((unsigned)((k + T32 - 1) / T32), (unsigned)nb), dim3(T32, 8), 0, st>>>(
        o, E, w ? part : NULL);
    if (w) k_sum_parts<<<(unsigned)((k + 255) / 256), 256, 0, st>>>(part, nb, k, w);
    return (int)cudaGetLastError();
}

/* sig from E and the norm bounds; when w != NULL also g = |x| . w (part: 64
 * nv doubles) and *key, the smallest tn_oz2_gkey(g, sig). nv <= 65535 * 32. */
extern "C" int tn_oz2_pass2(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv,
                            int64_t k, const int *E, int tbits, unsigned long long *S,
                            const double *w, double *part, double *g, int *sig,
                            unsigned long long *key, int *bad, cudaStream_t st) {
    if (nv <= 0 || k <= 0) return 0;
    cudaError_t e = cudaMemsetAsync(S, 0, sizeof(unsigned long long) * (size_t)nv, st);
    if (e != cudaSuccess) return (int)e;
    const oz2_view o = view_of(X, f32, sv, sl, nv, k);
    const int64_t lt = (k + T32 - 1) / T32, nb = lt < OZ2_PARTS ? lt : OZ2_PARTS;
    k_pass2<<<dim3((unsigned)nb, (unsigned)((nv + T32 - 1) / T32)), dim3(T32, 8), 0, st>>>(
        o, E, tbits, S, w, w ? part : NULL);
    if (w) k_sum_parts<<<(unsigned)((nv + 255) / 256), 256, 0, st>>>(part, nb, nv, g);
    if (w) {
        e = cudaMemsetAsync(key, 0xFF, sizeof *key, st);
        if (e != cudaSuccess) return (int)e;
    }
    k_sigma<<<(unsigned)((nv + 255) / 256), 256, 0, st>>>(E, S, nv, tbits, sig, w ? g : NULL,
                                                           key, bad);
    return (int)cudaGetLastError();
}

extern "C" int tn_oz2_residues(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv,
                               int64_t k, int64_t v_base, int64_t nvp, int64_t kp,
                               const int *sig, int h, const tn_oz2_consts_t *c,
                               signed char *R, cudaStream_t st) {
    if (nvp <= 0 || kp <= 0) return 0;
    const oz2_view o = view_of(X, f32, sv, sl, nv, k);
    /* column tiles per block: enough blocks in flight, a few tiles each */
    const int64_t lt = kp / T32, gx = lt < 16 ? lt : 16;
    const dim3 g((unsigned)gx, (unsigned)(nvp / T32)), b(T32, 8);
    if (h + 1 <= 36) k_residues3<<<g, b, 0, st>>>(o, v_base, nvp, kp, sig, h, *c, R);
    else if (h + 1 <= 60) k_residues5<<<g, b, 0, st>>>(o, v_base, nvp, kp, sig, h, *c, R);
    else k_residues7<<<g, b, 0, st>>>(o, v_base, nvp, kp, sig, h, *c, R);
    return (int)cudaGetLastError();
}

extern "C" int tn_oz2_modp(const int *P, int64_t cnt, int p, int qinv, int first,
                           unsigned char *Q, cudaStream_t st) {
    const int64_t c4 = cnt / 4;
    if (c4 <= 0) return 0;
    /* c0 = q, c1 = q 2^16 mod p, each in (-p/2, p/2] */
    int r0 = qinv % p, r1 = (int)(((long long)qinv * 65536) % p);
    if (r0 > p / 2) r0 -= p;
    if (r1 > p / 2) r1 -= p;
    k_modp<<<(unsigned)((c4 + 255) / 256), 256, 0, st>>>(P, c4, p, (float)r0, (float)r1,
                                                          1.0f / (float)p, first, Q);
    return (int)cudaGetLastError();
}

extern "C" int tn_oz2_launch_reconstruct(const unsigned char *Q, int64_t mbp, int64_t nbp, int64_t mb,
                                  int64_t nb, const tn_oz2_consts_t *c, const int *sa,
                                  const int *sb, int hAB, double alpha, double beta, void *C,
                                  int64_t ldc, int f32, cudaStream_t st) {
    if (mb <= 0 || nb <= 0) return 0;
    dim3 g((unsigned)((mb + 511) / 512), (unsigned)(nb < 65535 ? nb : 65535));
    k_reconstruct<<<g, 128, 0, st>>>(Q, mbp, nbp, mb, nb, *c, sa, sb, hAB, alpha, beta, C, ldc,
                                     f32);
    return (int)cudaGetLastError();
}
