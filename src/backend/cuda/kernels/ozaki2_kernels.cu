/* Kernels of Ozaki scheme II (host side in src/backend/cuda/ozaki2_cuda.c, the
 * method and the CPU reference in src/gemm/ozaki2.h / ozaki2.c).
 *
 * An operand is a set of nv vectors of length k (rows of op(A), columns of
 * op(B)): element l of vector v is X[v*sv + l*sl], FP32 or FP64. The kernels
 * that read it go through tiles in shared memory (32 x 32; 16 x 128 for the
 * residues), loaded along whichever index is contiguous, so both layouts
 * read coalesced.
 *
 * What must equal the CPU bit for bit does: the largest exponents (integer
 * maxima), the norm bounds (integer sums of the blocks' bounds, each
 * rounded up to the vector's exponent as tn_oz2_bound does), the residues
 * (exact integers, computed in FP64 below 2^52; congruent to the CPU's, the
 * same products modulo p_l), the modular products and the reconstruction
 * (exact partial sums, held scaled by 2^-274, then the same FP64 operations
 * in the same order, the last combination with __dmul_rn / __dadd_rn so
 * that nothing is contracted).
 * The sums w and g = |x| . w of DP mode are FP64 sums in a fixed order of
 * their own (deterministic, not the CPU's order); ||w|| is summed in the
 * CPU's order (k_norm2). They only choose the needs, hence hA, hB and the
 * moduli count (src/gemm/ozaki2.h says when the two backends can differ).
 *
 * Layouts of the products: residues R[(l*nvp + v)*kp + i] (int8, zero
 * padded to nvp, kp multiples of 32), cuBLAS's int32 product of one modulus
 * P[j*mbp + i], u_l = (q_l P) mod p_l of the products Q[(l*nbp + j)*mbp + i]
 * (uint8). */
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki2_consts.h"
#include "backend/cuda/kernels/ozaki2_launch.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

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

/* tn_oz2_sq_term of a nonzero element from its exponent ex and m8 */
static __device__ __forceinline__ unsigned long long sq_term_of(int ex, unsigned m, int e,
                                                                int tbits) {
    const unsigned long long m8 = (unsigned long long)m + 1;
    const unsigned long long v = m8 * m8;
    const int sh = 2 * (ex - e) + tbits;
    if (sh >= 0) return v << sh;
    if (sh <= -63) return 1;
    return (v + (1ull << -sh) - 1) >> -sh;
}

/* The sums over tiles run in a fixed order per block (blocks loop over
 * tiles with a stride of the grid size), so they are deterministic. */
#define OZ2_PARTS 64

/* The passes keep two tiles in flight: a block's tiles alternate between
 * two register sets, each refilled with the tile after next as soon as it
 * is in shared memory (64 bytes per thread in flight). The tiles are still
 * taken in order, so every sum below runs in the same order. */

/* ---------------------------------------------------------------- scan */
/* One pass over an operand gives every block of TN_OZ2_BLEN = 32 elements
 * of every vector (a tile's row) its largest exponent and its integer norm
 * bound at that exponent (ozaki2.h: tn_oz2_bound's e_c, s_c), so that
 * k_combine can sum the vector's bound once the vector's largest exponent
 * is known; and the sums that DP mode takes from the same read. Block
 * arrays: CE[c * nv + v], CS[c * nv + v] (c = the block of columns, a 32 x
 * 32 tile's column index). */

/* one tile of the scan (the registers r hold it; refilled with tile vn) */
static __device__ __forceinline__ void scan_tile(double (*t)[T32 + 1], const double *wot,
                                                 const oz2_view &o, oz2_regs *r, long long vt,
                                                 long long vn, long long vtiles, long long l0,
                                                 int tbits, int *CE, unsigned long long *CS,
                                                 double *gpart, int wpart, double *ws) {
    const int tid = threadIdx.y * T32 + threadIdx.x, v = tid >> 3, q = tid & 7;
    const long long v0 = vt * T32;
    store_tile(t, o, r);
    __syncthreads();
    if (vn < vtiles) fetch_tile(r, o, vn * T32, l0);
    /* row v of the tile: 8 threads, elements q, q + 8, q + 16, q + 24 */
    int em = INT_MIN, ex[4];
    unsigned m8[4];
    double xs[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        xs[i] = t[v][q + 8 * i];
        ex[i] = xs[i] != 0.0 ? exp_m8(xs[i], &m8[i]) : INT_MIN;
        em = max(em, ex[i]);
    }
    em = max(em, __shfl_xor_sync(0xffffffffu, em, 1));
    em = max(em, __shfl_xor_sync(0xffffffffu, em, 2));
    em = max(em, __shfl_xor_sync(0xffffffffu, em, 4));
    unsigned long long sc = 0;
    double g = 0.0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (ex[i] != INT_MIN) sc += sq_term_of(ex[i], m8[i], em, tbits);
        if (gpart) g = __dadd_rn(g, __dmul_rn(fabs(xs[i]), wot[q + 8 * i]));
    }
    for (int d = 1; d < 8; d <<= 1) { /* integers: any order; g: this fixed tree */
        sc += __shfl_xor_sync(0xffffffffu, sc, d);
        g = __dadd_rn(g, __shfl_xor_sync(0xffffffffu, g, d));
    }
    if (q == 0 && v0 + v < o.nv) {
        const long long at = (long long)blockIdx.x * o.nv + v0 + v;
        CE[at] = em;
        CS[at] = sc;
        if (gpart) gpart[at] = g;
    }
    if (wpart)
        for (int rr = threadIdx.y; rr < T32; rr += 8) *ws = __dadd_rn(*ws, fabs(t[rr][threadIdx.x]));
    __syncthreads();
}

/* Block (x, y) takes the 32 columns l0 = 32 x of the vector tiles y,
 * y + gridDim.y, ...: CE, CS of block x of each vector; when wpart:
 * wpart[y * k + l] = sum of |x| over its vectors (each of the 8 thread
 * rows sums the tile rows ty, ty + 8, .. in turn, and the 8 partial sums
 * are added in the order of ty at the end: a fixed order, so the sums are
 * deterministic); when wo (the other operand's sums, length k): gpart[x *
 * nv + v] = sum over the block's columns of |x_l| wo_l (k_combine adds the
 * blocks in order). */
static __global__ void __launch_bounds__(256, 4)
    k_scan(oz2_view o, int tbits, int *CE, unsigned long long *CS, double *wpart, const double *wo,
           double *gpart) {
    __shared__ double t[T32][T32 + 1];
    __shared__ double red[8][T32];
    __shared__ double wot[T32];
    const long long l0 = (long long)blockIdx.x * T32, vtiles = (o.nv + T32 - 1) / T32;
    const long long G = gridDim.y;
    if (threadIdx.y == 0) wot[threadIdx.x] = wo && l0 + threadIdx.x < o.k ? wo[l0 + threadIdx.x] : 0.0;
    double ws = 0.0;
    oz2_regs n0, n1;
    long long vt = blockIdx.y;
    if (vt < vtiles) fetch_tile(&n0, o, vt * T32, l0);
    if (vt + G < vtiles) fetch_tile(&n1, o, (vt + G) * T32, l0);
    double *gp = wo ? gpart : NULL;
    for (; vt < vtiles; vt += 2 * G) {
        scan_tile(t, wot, o, &n0, vt, vt + 2 * G, vtiles, l0, tbits, CE, CS, gp, wpart != NULL, &ws);
        if (vt + G >= vtiles) break;
        scan_tile(t, wot, o, &n1, vt + G, vt + 3 * G, vtiles, l0, tbits, CE, CS, gp, wpart != NULL,
                  &ws);
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

/* out[i] = sum_b part[b * len + i], b in order (nb <= OZ2_PARTS). A block
 * of 32 x 8 threads takes 32 consecutive i: all its parts are loaded at
 * once into shared memory, then one thread per i adds them in order. */
static __global__ void k_sum_parts(const double *part, long long nb, long long len, double *out) {
    __shared__ double x[OZ2_PARTS][T32];
    const long long i = (long long)blockIdx.x * T32 + threadIdx.x, ic = i < len ? i : len - 1;
    double r[OZ2_PARTS / 8]; /* loads without branches (clamped), all issued together */
#pragma unroll
    for (int u = 0; u < OZ2_PARTS / 8; u++) {
        const long long b = threadIdx.y + 8 * u;
        r[u] = __ldg(part + (b < nb ? b : nb - 1) * len + ic);
    }
#pragma unroll
    for (int u = 0; u < OZ2_PARTS / 8; u++) x[threadIdx.y + 8 * u][threadIdx.x] = r[u];
    __syncthreads();
    if (threadIdx.y == 0 && i < len) {
        double s = 0.0;
        for (int b = 0; b < nb; b++) s = __dadd_rn(s, x[b][threadIdx.x]);
        out[i] = s;
    }
}

/* ------------------------------------------------------- combine blocks */
/* Per vector v (32 per block, OZ2_CROWS threads each, thread y taking the
 * blocks y, y + OZ2_CROWS, ..): E[v] = max of CE, S[v] = sum of
 * tn_oz2_bound_at(CS, CE, E[v]) (integers: any order), and when gpart:
 * g[v] = sum of the blocks' gpart, each thread's in its order, then the
 * threads' in the order of y (fixed). */
#define OZ2_CROWS 16
static __global__ void __launch_bounds__(T32 *OZ2_CROWS)
    k_combine(const int *CE, const unsigned long long *CS, const double *gpart, long long nch,
              long long nv, int *E, unsigned long long *S, double *g) {
    __shared__ int re[OZ2_CROWS][T32];
    __shared__ unsigned long long rs[OZ2_CROWS][T32];
    __shared__ double rg[OZ2_CROWS][T32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long v = (long long)blockIdx.x * T32 + tx;
    int e = INT_MIN;
    if (v < nv)
        for (long long c = ty; c < nch; c += OZ2_CROWS) e = max(e, __ldg(CE + c * nv + v));
    re[ty][tx] = e;
    __syncthreads();
    for (int y = 0; y < OZ2_CROWS; y++) e = max(e, re[y][tx]);
    unsigned long long s = 0;
    double gs = 0.0;
    if (v < nv)
        for (long long c = ty; c < nch; c += OZ2_CROWS) {
            s += tn_oz2_bound_at(__ldg(CS + c * nv + v), __ldg(CE + c * nv + v), e);
            if (gpart) gs = __dadd_rn(gs, __ldg(gpart + c * nv + v));
        }
    rs[ty][tx] = s;
    rg[ty][tx] = gs;
    __syncthreads();
    if (ty == 0 && v < nv) {
        for (int y = 1; y < OZ2_CROWS; y++) {
            s += rs[y][tx];
            gs = __dadd_rn(gs, rg[y][tx]);
        }
        E[v] = e;
        S[v] = s;
        if (gpart) g[v] = gs;
    }
}

/* ----------------------------------------------------------- g of DP mode */
/* w of the columns of tile lt (0 past k), in the registers of row 0 */
static __device__ __forceinline__ double w_of(const oz2_view &o, const double *w, long long lt) {
    const long long l = lt * T32 + threadIdx.x;
    return threadIdx.y == 0 && l < o.k ? w[l] : 0.0;
}

/* one tile of k_gsum (the registers r, wr hold it; refilled with tile ln) */
static __device__ __forceinline__ void gsum_tile(double (*t)[T32 + 1], double *wt,
                                                 const oz2_view &o, oz2_regs *r, double *wr,
                                                 long long ln, long long ltiles, long long v0,
                                                 const double *w, double *g) {
    const int tid = threadIdx.y * T32 + threadIdx.x, v = tid >> 3, q = tid & 7;
    store_tile(t, o, r);
    if (threadIdx.y == 0) wt[threadIdx.x] = *wr;
    __syncthreads();
    if (ln < ltiles) {
        fetch_tile(r, o, v0, ln * T32);
        *wr = w_of(o, w, ln);
    }
    for (int c = q; c < T32; c += 8) *g = __dadd_rn(*g, __dmul_rn(fabs(t[v][c]), wt[c]));
    __syncthreads();
}

/* The g of the operand read second in DP mode (its w comes from the other
 * operand's scan, after this one's): gpart[b * nv + v] = sum of |x| w_l
 * over the tiles b, b + 64, ... of l (one more read of the operand). */
static __global__ void k_gsum(oz2_view o, const double *w, double *gpart) {
    __shared__ double t[T32][T32 + 1];
    __shared__ double wt[T32]; /* w of the tile's columns (0 past k) */
    const long long v0 = (long long)blockIdx.y * T32, ltiles = (o.k + T32 - 1) / T32;
    const long long G = gridDim.x;
    const int tid = threadIdx.y * T32 + threadIdx.x, v = tid >> 3, q = tid & 7;
    double g = 0.0, w0 = 0.0, w1 = 0.0;
    oz2_regs n0, n1;
    long long lt = blockIdx.x;
    if (lt < ltiles) {
        fetch_tile(&n0, o, v0, lt * T32);
        w0 = w_of(o, w, lt);
    }
    if (lt + G < ltiles) {
        fetch_tile(&n1, o, v0, (lt + G) * T32);
        w1 = w_of(o, w, lt + G);
    }
    for (; lt < ltiles; lt += 2 * G) {
        gsum_tile(t, wt, o, &n0, &w0, lt + 2 * G, ltiles, v0, w, &g);
        if (lt + G >= ltiles) break;
        gsum_tile(t, wt, o, &n1, &w1, lt + 3 * G, ltiles, v0, w, &g);
    }
    for (int d = 1; d < 8; d <<= 1) g = __dadd_rn(g, __shfl_xor_sync(0xffffffffu, g, d));
    if (q == 0 && v0 + v < o.nv) gpart[(long long)blockIdx.x * o.nv + v0 + v] = g;
}

/* sig[v] as tn_oz2_sigma, *qmax = the largest tn_oz2_scaled_sq at sigma
 * (atomicMax on the bits of non-negative doubles: order-free; preset to
 * 0), and in DP mode (g != NULL) *need = the largest tn_oz2_need from g[v]
 * and *wn (atomicMax; preset below -2^30: no constraint). *bad gets 1 when a vector holds
 * Inf or NaN (its E is above every finite exponent), so no separate pass
 * looks for them, and 2 when a need is TN_OZ2_SHIFT_HUGE. */
static __global__ void k_sigma(const int *E, const unsigned long long *S, long long nv, int tbits,
                               int *sig, const double *g, const double *wn, int culog2,
                               unsigned long long *qmax, int *need, int *bad) {
    const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long qb = 0;
    int nd = INT_MIN;
    if (v < nv) {
        const int e = E[v];
        if (e > 1024) atomicOr(bad, 1); /* exp_m8 of Inf / NaN: 2047 - 1022 */
        const unsigned long long s = S[v];
        const int sg = tn_oz2_sigma_of(e, s, tbits);
        if (s != 0 && e > -(1 << 30) && e <= 1024)
            qb = (unsigned long long)__double_as_longlong(tn_oz2_scaled_sq(s, e, sg, tbits));
        sig[v] = sg;
        if (g && g[v] > 0.0) { /* as tn_oz2_need */
            const int sh = tn_oz2_shift(*wn, g[v], culog2);
            if (sh == TN_OZ2_SHIFT_HUGE) atomicOr(bad, 2);
            else nd = sh - sg;
        }
    }
    for (int d = 16; d > 0; d >>= 1) {
        const unsigned long long o = __shfl_xor_sync(0xffffffffu, qb, d);
        qb = o > qb ? o : qb;
        nd = max(nd, __shfl_xor_sync(0xffffffffu, nd, d));
    }
    if ((threadIdx.x & 31) == 0) {
        if (qb) atomicMax(qmax, qb);
        if (nd != INT_MIN) atomicMax(need, nd);
    }
}

/* *out = tn_oz2_norm2(w, k), in its order: TN_OZ2_NORM_LANES threads, lane
 * t sums w_t^2, w_(t + 256)^2, ... in turn, then one thread adds the lanes
 * in order and takes the square root (one block) */
static __global__ void __launch_bounds__(TN_OZ2_NORM_LANES)
    k_norm2(const double *w, long long k, double *out) {
    __shared__ double part[TN_OZ2_NORM_LANES];
    double p = 0.0;
    for (long long l = threadIdx.x; l < k; l += TN_OZ2_NORM_LANES)
        p = __dadd_rn(p, __dmul_rn(w[l], w[l]));
    part[threadIdx.x] = p;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int t = 0; t < TN_OZ2_NORM_LANES; t++) s = __dadd_rn(s, part[t]);
        *out = __dsqrt_rn(s);
    }
}

/* ------------------------------------------------------------ residues */
#define OZ2_C52 6755399441055744.0 /* 1.5 2^52 */

/* k_residues: the residues of an operand in the layout of the INT8
 * products, streamed at the memory rate.
 *  - Each y = rint(x 2^s), s = h + sig[v], |y| < 2^80 (ybits <= 80), is
 *    sg (ah 2^36 + lo) with ah < 2^44, lo < 2^36 (exact FP64 integers, the
 *    signs set with copysign: integer operations). Per element, once: y, ah,
 *    lo and lo', ah', the low bytes of sg lo and sg ah (two's complement:
 *    of lo32(sg lo + 1.5 2^52) and lo32(sg ah + 1.5 2^52), lo32 the low
 *    word of the bits). Per modulus, in FP64:
 *      acc = fma(sg ah, 2^36 mod p, sg lo)  |acc| < 2^44 127 + 2^36 < 2^51: exact
 *      T = fma(acc, -1 / p, 1.5 2^52)       = 1.5 2^52 - q, q = acc / p rounded
 *                                             to nearest, exactly: the error of
 *                                             acc (1 / p) is below 2^51 / p 2^-53,
 *                                             and acc / p (p odd) stays 1 / (2 p)
 *                                             away from a half integer
 *    and the residue r = acc - q p in [-(p-1)/2, (p-1)/2] (the same r as
 *    the rounded quotient in any exact arithmetic) has the two's complement
 *    byte (acc + lo32(T) p) mod 256 (lo32(T) is -q modulo 2^32), where
 *    acc mod 256 = (lo' + ah' c8) mod 256, c8 = (2^36 mod p) mod 256 in
 *    [0, 255]: integer work, no FP64 operation for acc's byte. Two elements
 *    share a 32-bit word in 16-bit lanes: lane 0 the low byte of element 0
 *    (bits 8..15 zero), bits 16 up element 1's; ap = ah' c8 + lo' (one IMAD
 *    for both) keeps lane 0 below 255 + 255^2 < 2^16, so byte 0 of ap is
 *    element 0's acc mod 256 and byte 2 element 1's. Then
 *    w0 = lo32(T0) p + ap (byte 0 is element 0's residue) and
 *    w1 = lo32(T1) (p 2^16) + ap (the product's bits 0..15 are zero, so
 *    byte 2 is element 1's), and two byte selections give the word.
 *    p = 256 takes the same path: q does not change the byte. HI = 0 when
 *    |y| < 2^36 (ybits <= 36; FP32 inputs in DP mode): ah = 0, acc = sg lo.
 *  - In the sm_90a code (nvcc 13) the moduli loop issues 6.3 instructions
 *    per element and modulus, 2 of them FP64 (HI = 0: 4.25, 1 FP64), and
 *    the once-per-element work takes 8 FP64 operations (HI = 1).
 *  - Tiles of OZ2_RV = 16 vectors x OZ2_RL = 128 columns, 256 threads: warp
 *    w takes rows w and w + 8 in turn, a lane 4 consecutive columns, and
 *    per modulus one 32-bit store: 32 lanes write one row's 128 consecutive
 *    bytes (a whole line where kp is a multiple of 128; kp, a multiple of
 *    32, ends a row between two lanes' words). Four elements a thread keep
 *    the registers at 64 (4 blocks, 32 warps an SM; HI = 1 reloads a few
 *    spilled words once a tile) with 4 independent FP64 chains per modulus.
 *  - The loads are coalesced for both layouts: the contiguous index runs
 *    across the lanes (sl = 1: 32 consecutive columns of a row per warp
 *    load; sv = 1: 16 consecutive vectors of 2 columns). Each thread issues
 *    its 8 loads of the next tile together before it works on the current
 *    one; they pass through registers into a shared tile of doubles, two
 *    tiles alternating, so one barrier per tile. In the tile, row v holds
 *    the 64 16-byte pieces (column pairs) of its 128 columns, piece c at
 *    c ^ ((v ^ (c >> 3)) & 7) (oz2_rsw): the 16-byte reads of 8 lanes (one
 *    row, pieces 2 lane + j) and the 8-byte writes of 16 lanes of both load
 *    patterns (16 consecutive columns of a row; 8 vectors x 2 columns) all
 *    fall in distinct banks.
 * The moduli loop is unrolled to TN_OZ2_MAXN (uniform exit at n), its
 * constants constant-bank operands. Checked byte for byte against the CPU
 * by gpu_ozaki2_residues_kernel_vs_cpu (src/backend/cuda/
 * test_gpu_oz2_residues.c) and, on the CPU, by tests/oz2_residues_emulate.sh
 * (this source run with a thread per CUDA thread). */
#define OZ2_RV 16
#define OZ2_RL 128

typedef struct {
    double npinv[TN_OZ2_MAXN], p36[TN_OZ2_MAXN]; /* -1 / p_l, 2^36 mod p_l centred */
    unsigned p[TN_OZ2_MAXN], p16[TN_OZ2_MAXN];  /* p_l, p_l 2^16 */
    unsigned c8[TN_OZ2_MAXN];                   /* p36[l] mod 256, in [0, 255] */
    int n;
} oz2_rres;

/* index in a residue tile (doubles) of column l of row v */
static __device__ __forceinline__ int oz2_rsw(int v, int l) {
    const int c = l >> 1;
    return v * OZ2_RL + 2 * (c ^ ((v ^ (c >> 3)) & 7)) + (l & 1);
}

/* load s (0..7) of a thread: element (v, l) of the tile */
static __device__ __forceinline__ void oz2_rpos(int along_l, int s, int *v, int *l) {
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    if (along_l) {
        *v = 2 * s + (tid >> 7);
        *l = tid & 127;
    } else {
        *v = (lane & 7) | ((lane >> 4) << 3);
        *l = 2 * (8 * s + w) + ((lane >> 3) & 1);
    }
}

/* the thread's 8 loads of tile (v0, l0), 0 outside nv, k; whole tiles
 * from one base address and a stride, without per-element checks */
template <typename TIn>
static __device__ __forceinline__ void oz2_rfetch(TIn *r, const TIn *X, long long sv,
                                                  long long sl, long long nv, long long k,
                                                  long long v0, long long l0) {
    const int along_l = sl == 1;
    int v, l;
    oz2_rpos(along_l, 0, &v, &l);
    if (v0 + OZ2_RV <= nv && l0 + OZ2_RL <= k) {
        const TIn *p = X + (v0 + v) * sv + (l0 + l) * sl;
        const long long step = along_l ? 2 * sv : 16 * sl;
#pragma unroll
        for (int s = 0; s < 8; s++) r[s] = p[s * step];
        return;
    }
#pragma unroll
    for (int s = 0; s < 8; s++) {
        oz2_rpos(along_l, s, &v, &l);
        r[s] = v0 + v < nv && l0 + l < k ? X[(v0 + v) * sv + (l0 + l) * sl] : (TIn)0;
    }
}

/* the thread's 8 loads into tile t (as doubles: exact for FP32), load s at
 * oz2_rsw(v, l) of oz2_rpos, the offsets written out per layout:
 *  sl = 1: v = 2 s + vh, c = l >> 1 fixed, v & 7 = (2 s & 7) ^ vh, so the
 *          piece is cv ^ (2 s & 7) with cv = c ^ ((c >> 3) & 7) ^ vh;
 *  sv = 1: v fixed, c = 8 s + w (c >> 3 = s), so the piece is 8 s + (a ^ s)
 *          with a = w ^ (v & 7). */
template <typename TIn>
static __device__ __forceinline__ void oz2_rstore(double *t, const TIn *r, int along_l) {
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    if (along_l) {
        const int vh = tid >> 7, l = tid & 127, c = l >> 1, cv = c ^ ((c >> 3) & 7) ^ vh;
        double *b = t + vh * OZ2_RL + (l & 1);
#pragma unroll
        for (int s = 0; s < 8; s++) b[2 * s * OZ2_RL + 2 * (cv ^ ((2 * s) & 7))] = (double)r[s];
    } else {
        const int v = (lane & 7) | ((lane >> 4) << 3), a = w ^ (v & 7);
        double *b = t + v * OZ2_RL + ((lane >> 3) & 1);
#pragma unroll
        for (int s = 0; s < 8; s++) b[16 * s + 2 * (a ^ s)] = (double)r[s];
    }
}

/* R for vectors [v_base, v_base + nvp) and all kp (zero outside nv, k):
 * rint(x 2^(h + sig[v])) modulo each p_l, in [-128, 127]. X, nv and sig
 * start at v_base. A block takes the tile rows blockIdx.y, + gridDim.y, ..
 * and in each the column tiles blockIdx.x, + gridDim.x, .. HI = 0 when
 * every |y| < 2^36: ah = 0, acc = sg lo. */
template <typename TIn, int HI>
static __global__ void __launch_bounds__(256, 4)
    k_residues(const TIn *X, long long sv, long long sl, long long nv, long long k,
               long long nvp, long long kp, long long mstride, const int *sig, int h,
               oz2_rres rc, signed char *R) {
    __shared__ __align__(16) double t[2][OZ2_RV * OZ2_RL];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, along_l = sl == 1;
    const long long ltiles = (kp + OZ2_RL - 1) / OZ2_RL, vtiles = nvp / OZ2_RV;
    int buf = 0;
    for (long long vt = blockIdx.y; vt < vtiles; vt += gridDim.y) {
        const long long v0 = vt * OZ2_RV;
        /* the scales 2^(h + sig) of the thread's rows w, w + 8 */
        const int sa = v0 + w < nv ? h + sig[v0 + w] : 0;
        const int sb = v0 + w + 8 < nv ? h + sig[v0 + w + 8] : 0;
        TIn nx[8];
        if (blockIdx.x < ltiles)
            oz2_rfetch(nx, X, sv, sl, nv, k, v0, (long long)blockIdx.x * OZ2_RL);
        for (long long lt = blockIdx.x; lt < ltiles; lt += gridDim.x) {
            const double *tb = t[buf];
            oz2_rstore(t[buf], nx, along_l);
            buf ^= 1;
            __syncthreads(); /* also: every thread is past its reads of t[buf] */
            if (lt + gridDim.x < ltiles)
                oz2_rfetch(nx, X, sv, sl, nv, k, v0, (lt + gridDim.x) * OZ2_RL);
            const long long col = lt * OZ2_RL + 4 * lane;
#pragma unroll 1
            for (int r = 0; r < 2; r++) {
                const int v = w + 8 * r, sc = r ? sb : sa;
                /* 2^sc as two exact powers: the same rint(x 2^sc) as
                 * scalbn, since an intermediate underflow means |x 2^sc|
                 * < 2^-400 anyway (a shift puts the vector's norm below
                 * 2^80, so sc < 1074 + 80 + 64: p2 < 2^610) */
                const double p1 = __longlong_as_double((long long)(sc / 2 + 1023) << 52);
                const double p2 = __longlong_as_double((long long)(sc - sc / 2 + 1023) << 52);
                double hs[4], ls[4]; /* sg ah, sg lo */
                unsigned lp[2], hp[2]; /* lanes of lo, ah (two elements a word) */
#pragma unroll
                for (int j = 0; j < 2; j++) {
                    const double2 d = *(const double2 *)&tb[oz2_rsw(v, 4 * lane + 2 * j)];
                    unsigned lb[2], hb[2];
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const double y = rint(__dmul_rn(__dmul_rn(e ? d.y : d.x, p1), p2));
                        double ah = 0.0, lo = y;
                        if (HI) {
                            const double a = fabs(y);
                            ah = trunc(__dmul_rn(a, 0x1p-36));    /* < 2^44 */
                            lo = __fma_rn(-ah, 0x1p36, a);       /* exact, < 2^36 */
                            ah = copysign(ah, y);                 /* sign bits: integer ops */
                            lo = copysign(lo, y);
                        }
                        hs[2 * j + e] = ah;
                        ls[2 * j + e] = lo;
                        lb[e] = (unsigned)__double2loint(__dadd_rn(lo, OZ2_C52));
                        hb[e] = HI ? (unsigned)__double2loint(__dadd_rn(ah, OZ2_C52)) : 0u;
                    }
                    lp[j] = (lb[0] & 0xFFu) | (lb[1] << 16);
                    hp[j] = (hb[0] & 0xFFu) | (hb[1] << 16);
                }
                unsigned *out = (unsigned *)(R + (v0 + v) * kp + col);
                const bool st = col < kp;
#pragma unroll
                for (int l = 0; l < TN_OZ2_MAXN; l++) {
                    if (l >= rc.n) break;
                    unsigned q[2];
#pragma unroll
                    for (int j = 0; j < 2; j++) {
                        const unsigned ap = HI ? hp[j] * rc.c8[l] + lp[j] : lp[j];
                        unsigned wd[2];
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const double x = ls[2 * j + e];
                            const double acc = HI ? __fma_rn(hs[2 * j + e], rc.p36[l], x) : x;
                            const double T = __fma_rn(acc, rc.npinv[l], OZ2_C52);
                            wd[e] = (unsigned)__double2loint(T) * (e ? rc.p16[l] : rc.p[l]) + ap;
                        }
                        q[j] = __byte_perm(wd[0], wd[1], 0x7610); /* bytes 0, 2 */
                    }
                    if (st) *out = __byte_perm(q[0], q[1], 0x6420);
                    out = (unsigned *)((signed char *)out + mstride);
                }
            }
        }
    }
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

/* The weights come scaled: ws = w 2^OZ2_REC_SCALE (exact, below 2^956), and
 * u_l < 256 enters as the double whose bits are u_l, the subnormal
 * u_l 2^-1074 (no conversion: FP64 keeps subnormals, at full speed). So
 * each product and partial sum is the exact one times 2^-274, a normal
 * double (the terms are integers >= 1 when nonzero, below 2^170), and one
 * exact product by 2^274 gives S_t bit for bit. */
#define OZ2_REC_SCALE 800

/* C[i + j ldc] = alpha x 2^-(hA + sa[i] + hB + sb[j]) + beta C, i < mb, j < nb
 * (C, sa, sb already offset to the block). A thread takes 4 consecutive
 * rows of one column: it loads its 32-bit word of every modulus first (all
 * loads in flight together), then the 4 x 4 partial sums S_t = sum_l w_lt u_l
 * over the moduli in order (unrolled up to TN_OZ2_MAXN, stopping at c.n:
 * the weights are constant-bank operands); then per element the operations
 * of tn_oz2_reconstruct in the same order, and the 4 results written with
 * one 16-byte store (FP32) or two (FP64) where C is aligned. Every product
 * w_lt u_l (40 x 8 bits) and partial sum is exact, so FMA or not is the
 * same. With few moduli the last parts are 0 (P < 2^120: 15 moduli or
 * fewer): those S_t stay +0, as the sums of +0 products were. */
#define OZ2_REC_ROWS 4
template <int NP> /* the parts t < NP that can be nonzero (the others: w_lt = 0, P_t = 0) */
static __global__ void __launch_bounds__(128)
    k_reconstruct(const unsigned char *Q, long long mbp, long long nbp, long long mb,
                  long long nb, tn_oz2_consts_t c, const int *sa, const int *sb, int hAB,
                  double alpha, double beta, void *C, long long ldc, int f32) {
    const long long i0 = OZ2_REC_ROWS * ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (i0 >= mb) return;
    const long long step = mbp * nbp / 4; /* one modulus, in 32-bit words */
    for (long long j = blockIdx.y; j < nb; j += gridDim.y) {
        const unsigned int *q = (const unsigned int *)(Q + j * mbp + i0);
        unsigned int wd[TN_OZ2_MAXN];
#pragma unroll
        for (int l = 0; l < TN_OZ2_MAXN; l++) wd[l] = l < c.n ? __ldg(q + l * step) : 0u;
        double S[OZ2_REC_ROWS][4];
#pragma unroll
        for (int e = 0; e < OZ2_REC_ROWS; e++) S[e][0] = S[e][1] = S[e][2] = S[e][3] = 0.0;
#pragma unroll
        for (int l = 0; l < TN_OZ2_MAXN; l++) {
            if (l >= c.n) break;
#pragma unroll
            for (int e = 0; e < OZ2_REC_ROWS; e++) {
                const double u = __hiloint2double(0, (int)((wd[l] >> (8 * e)) & 0xFFu));
#pragma unroll
                for (int t = 0; t < NP; t++) S[e][t] = fma(c.w[l][t], u, S[e][t]);
            }
        }
        const int ej = hAB + sb[j];
        const long long at = i0 + j * ldc;
        const int full = i0 + OZ2_REC_ROWS <= mb;
        double old[OZ2_REC_ROWS] = {0.0, 0.0, 0.0, 0.0};
        if (beta != 0.0) {
            if (f32) {
                const float *cf = (const float *)C + at;
                if (full && ((uintptr_t)cf & 15) == 0) {
                    const float4 o4 = *(const float4 *)cf;
                    old[0] = o4.x, old[1] = o4.y, old[2] = o4.z, old[3] = o4.w;
                } else {
                    for (int e = 0; e < OZ2_REC_ROWS && i0 + e < mb; e++) old[e] = cf[e];
                }
            } else {
                const double *cd = (const double *)C + at;
                if (full && ((uintptr_t)cd & 15) == 0) {
                    const double2 a = ((const double2 *)cd)[0], b = ((const double2 *)cd)[1];
                    old[0] = a.x, old[1] = a.y, old[2] = b.x, old[3] = b.y;
                } else {
                    for (int e = 0; e < OZ2_REC_ROWS && i0 + e < mb; e++) old[e] = cd[e];
                }
            }
        }
        double out[OZ2_REC_ROWS];
#pragma unroll
        for (int e = 0; e < OZ2_REC_ROWS; e++) {
            const double S0 = __dmul_rn(S[e][0], 0x1p274), S1 = __dmul_rn(S[e][1], 0x1p274);
            const double S2 = __dmul_rn(S[e][2], 0x1p274), S3 = __dmul_rn(S[e][3], 0x1p274);
            const double qq = rint(__dmul_rn(__dadd_rn(S0, S1), c.pinv));
            const double D0 = fma(-qq, c.p[0], S0), D1 = fma(-qq, c.p[1], S1);
            const double D2 = fma(-qq, c.p[2], S2), D3 = fma(-qq, c.p[3], S3);
            const double H1 = __dmul_rn(rint(__dmul_rn(D1, c.pow2mlo[0])), c.pow2lo[0]);
            const double H2 = __dmul_rn(rint(__dmul_rn(D2, c.pow2mlo[1])), c.pow2lo[1]);
            const double H3 = __dmul_rn(rint(__dmul_rn(D3, c.pow2mlo[2])), c.pow2lo[2]);
            const double T0 = __dadd_rn(D0, H1), T1 = __dadd_rn(__dsub_rn(D1, H1), H2);
            const double T2 = __dadd_rn(__dsub_rn(D2, H2), H3), T3 = __dsub_rn(D3, H3);
            const double x = __dadd_rn(T0, __dadd_rn(T1, __dadd_rn(T2, T3)));
            const int ei = i0 + e < mb ? sa[i0 + e] : 0;
            const double v = __dmul_rn(alpha, scale2(x, ej + ei));
            out[e] = beta == 0.0 ? v : __dadd_rn(v, __dmul_rn(beta, old[e]));
        }
        if (f32) {
            float *cf = (float *)C + at;
            if (full && ((uintptr_t)cf & 15) == 0) {
                *(float4 *)cf = make_float4((float)out[0], (float)out[1], (float)out[2],
                                            (float)out[3]);
            } else {
                for (int e = 0; e < OZ2_REC_ROWS && i0 + e < mb; e++) cf[e] = (float)out[e];
            }
        } else {
            double *cd = (double *)C + at;
            if (full && ((uintptr_t)cd & 15) == 0) {
                ((double2 *)cd)[0] = make_double2(out[0], out[1]);
                ((double2 *)cd)[1] = make_double2(out[2], out[3]);
            } else {
                for (int e = 0; e < OZ2_REC_ROWS && i0 + e < mb; e++) cd[e] = out[e];
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

/* The scan (k_scan): the block arrays CE, CS (ceil(k / 32) blocks of nv);
 * when w != NULL the sums w over the vectors (part: 64 k doubles) and
 * *wn = tn_oz2_norm2(w, k); when wo != NULL (the other operand's sums,
 * length k) the blocks' parts of g in gpart (ceil(k / 32) nv doubles).
 * nv <= 65535 * 32. */
extern "C" int tn_oz2_scan(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                           int tbits, int *CE, unsigned long long *CS, double *part, double *w,
                           double *wn, const double *wo, double *gpart, cudaStream_t st) {
    if (nv <= 0 || k <= 0) return 0;
    const oz2_view o = view_of(X, f32, sv, sl, nv, k);
    const int64_t vt = (nv + T32 - 1) / T32, nb = vt < OZ2_PARTS ? vt : OZ2_PARTS;
    k_scan<<<dim3((unsigned)((k + T32 - 1) / T32), (unsigned)nb), dim3(T32, 8), 0, st>>>(
        o, tbits, CE, CS, w ? part : NULL, wo, wo ? gpart : NULL);
    if (w) {
        k_sum_parts<<<(unsigned)((k + T32 - 1) / T32), dim3(T32, 8), 0, st>>>(part, nb, k, w);
        k_norm2<<<1, TN_OZ2_NORM_LANES, 0, st>>>(w, k, wn);
    }
    return (int)cudaGetLastError();
}

/* g = |x| . w of the operand (k_gsum, then its parts in order; part: 64 nv
 * doubles). nv <= 65535 * 32. */
extern "C" int tn_oz2_gsum(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                           const double *w, double *part, double *g, cudaStream_t st) {
    if (nv <= 0 || k <= 0) return 0;
    const oz2_view o = view_of(X, f32, sv, sl, nv, k);
    const int64_t lt = (k + T32 - 1) / T32, nb = lt < OZ2_PARTS ? lt : OZ2_PARTS;
    k_gsum<<<dim3((unsigned)nb, (unsigned)((nv + T32 - 1) / T32)), dim3(T32, 8), 0, st>>>(o, w,
                                                                                         part);
    k_sum_parts<<<(unsigned)((nv + T32 - 1) / T32), dim3(T32, 8), 0, st>>>(part, nb, nv, g);
    return (int)cudaGetLastError();
}

/* From the scan's block arrays (nch blocks): E, S (k_combine; and g from
 * gpart when gpart != NULL), then sig and *qmax, and in DP mode (g !=
 * NULL: from gpart, or as tn_oz2_gsum left it) *need from g and *wn =
 * ||w|| (k_sigma; culog2: tn_oz2_dp_culog2). */
extern "C" int tn_oz2_vectors(const int *CE, const unsigned long long *CS, const double *gpart,
                              int64_t nch, int64_t nv, int tbits, int *E, unsigned long long *S,
                              double *g, const double *wn, int culog2, int *sig,
                              unsigned long long *qmax, int *need, int *bad, cudaStream_t st) {
    if (nv <= 0 || nch <= 0) return 0;
    cudaError_t e = cudaMemsetAsync(qmax, 0, sizeof *qmax, st);
    if (e == cudaSuccess) e = cudaMemsetAsync(need, 0x80, sizeof *need, st); /* below -2^30 */
    if (e != cudaSuccess) return (int)e;
    k_combine<<<(unsigned)((nv + T32 - 1) / T32), dim3(T32, OZ2_CROWS), 0, st>>>(
        CE, CS, g ? gpart : NULL, nch, nv, E, S, g);
    k_sigma<<<(unsigned)((nv + 255) / 256), 256, 0, st>>>(E, S, nv, tbits, sig, g, wn, culog2, qmax,
                                                           need, bad);
    return (int)cudaGetLastError();
}

/* 4 blocks of 32 KB an SM: the shared memory carveout asked at its largest
 * (the kernel's loads and stores do not use L1) */
template <typename TIn, int HI>
static int launch_residues_hi(const TIn *X, dim3 g, int64_t sv, int64_t sl, int64_t nv,
                              int64_t k, int64_t nvp, int64_t kp, const int *sig, int h,
                              const oz2_rres &rc, signed char *R, cudaStream_t st) {
    const cudaError_t e = cudaFuncSetAttribute((const void *)k_residues<TIn, HI>,
                                               cudaFuncAttributePreferredSharedMemoryCarveout,
                                               (int)cudaSharedmemCarveoutMaxShared);
    if (e != cudaSuccess) return (int)e;
    k_residues<TIn, HI><<<g, 256, 0, st>>>(X, sv, sl, nv, k, nvp, kp, nvp * kp, sig, h, rc, R);
    return 0;
}

template <typename TIn>
static int launch_residues(const TIn *X, dim3 g, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                           int64_t nvp, int64_t kp, const int *sig, int h, int ybits,
                           const oz2_rres &rc, signed char *R, cudaStream_t st) {
    return ybits > 36 ? launch_residues_hi<TIn, 1>(X, g, sv, sl, nv, k, nvp, kp, sig, h, rc, R, st)
                      : launch_residues_hi<TIn, 0>(X, g, sv, sl, nv, k, nvp, kp, sig, h, rc, R, st);
}

extern "C" int tn_oz2_residues(const void *X, int f32, int64_t sv, int64_t sl, int64_t nv,
                               int64_t k, int64_t v_base, int64_t nvp, int64_t kp,
                               const int *sig, int h, int ybits, const tn_oz2_consts_t *c,
                               signed char *R, cudaStream_t st) {
    if (nvp <= 0 || kp <= 0) return 0;
    if (nvp % OZ2_RV || kp % 32 || (uintptr_t)R % 4 || c->n < 1 || c->n > TN_OZ2_MAXN ||
        ybits > TN_OZ2_YBITS)
        return (int)cudaErrorInvalidValue;
    oz2_rres rc;
    memset(&rc, 0, sizeof rc);
    rc.n = c->n;
    for (int l = 0; l < c->n; l++) {
        rc.npinv[l] = -1.0 / (double)c->mod[l];
        rc.p36[l] = (double)c->pw[l][3]; /* 2^36 mod p_l, centred */
        rc.p[l] = (unsigned)c->mod[l];
        rc.p16[l] = (unsigned)c->mod[l] << 16;
        rc.c8[l] = (unsigned)(int)c->pw[l][3] & 0xFFu;
    }
    const int64_t nvb = nv - v_base < 0 ? 0 : nv - v_base;
    /* a few column tiles per block (the next one fetched while the current
     * one is worked on), many blocks in flight */
    const int64_t lt = (kp + OZ2_RL - 1) / OZ2_RL, vt = nvp / OZ2_RV;
    const dim3 g((unsigned)(lt < 16 ? lt : 16), (unsigned)(vt < 65535 ? vt : 65535));
    const int e = f32 ? launch_residues((const float *)X + v_base * sv, g, sv, sl, nvb, k, nvp,
                                        kp, sig + v_base, h, ybits, rc, R, st)
                      : launch_residues((const double *)X + v_base * sv, g, sv, sl, nvb, k, nvp,
                                        kp, sig + v_base, h, ybits, rc, R, st);
    if (e) return e;
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
    tn_oz2_consts_t cs = *c; /* the weights scaled for k_reconstruct (exact) */
    int np = 1; /* parts past the last nonzero one add +0 to +0: left out */
    for (int l = 0; l < cs.n; l++)
        for (int t = 0; t < 4; t++) {
            cs.w[l][t] = ldexp(cs.w[l][t], OZ2_REC_SCALE);
            if (cs.w[l][t] != 0.0 || cs.p[t] != 0.0) np = np > t + 1 ? np : t + 1;
        }
    if (np <= 2)
        k_reconstruct<2><<<g, 128, 0, st>>>(Q, mbp, nbp, mb, nb, cs, sa, sb, hAB, alpha, beta, C,
                                            ldc, f32);
    else if (np == 3)
        k_reconstruct<3><<<g, 128, 0, st>>>(Q, mbp, nbp, mb, nb, cs, sa, sb, hAB, alpha, beta, C,
                                            ldc, f32);
    else
        k_reconstruct<4><<<g, 128, 0, st>>>(Q, mbp, nbp, mb, nb, cs, sa, sb, hAB, alpha, beta, C,
                                            ldc, f32);
    return (int)cudaGetLastError();
}
