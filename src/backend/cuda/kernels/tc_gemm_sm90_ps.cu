/* Error-corrected SGEMM on Hopper (sm_90a) from pre-split operands:
 * TCEC_FP16, SHGEMM_FP16, TCEC_TF32, SHGEMM_TF32.
 *
 * The kernels of tc_gemm_sm90.cu split each tile of A inside the consumer
 * warpgroups, once per column of output tiles (n / 128 times per element),
 * and a consumer cannot issue its next wgmma group before that split is
 * done. Here one pass per operand (ps_prep) first writes its hi and lo
 * parts, bit-identical to tcnla_split(), K-major into the handle's
 * workspace, once per element (and, from tn_cuda_gemm, the operand check
 * on the way: tn_cu_sm90_ps_split); the GEMM kernel then only moves tiles
 * and multiplies:
 *   warpgroup 0 (setmaxnreg 40): thread 0 issues the TMA copies of the
 *     Ahi, Alo, Bhi (, Blo) tiles of each k-tile (128 x 128 x 128 bytes of
 *     k: 64 FP16 or 32 TF32 values) into a ring of stages (full / empty
 *     mbarriers), in the layout wgmma reads (128-byte swizzle);
 *   warpgroups 1, 2 (setmaxnreg 232): 64 rows each, wgmma with both
 *     operands in shared memory, in the order of the register-A kernels:
 *     per k16 (FP16) or k8 (TF32) step, hi*hi into a fresh accumulator per
 *     chunk, which is added with RN FP32 adds into the result at the
 *     chunk's end ([Ootomo & Yokota 2021]'s RZ avoidance), then Alo*Bhi (and Ahi*Blo for
 *     TCEC) into the correction accumulator; dA*dB dropped. The results
 *     are the same bits as those kernels' (a GPU test compares them).
 *     A consumer commits hi*hi and the corrections of k-tile kt as two
 *     wgmma groups and waits for the first only (wait_group 1), so the
 *     corrections run while it adds hi*hi (at a chunk's end), frees the
 *     stage of kt - 1 and issues kt + 1: nothing else is left for it to
 *     do between groups.
 * Split-K slices and P as tn_cu_tc_gemm_sm90. Tails in m, n and k come
 * from TMA's zero fill (the tensor maps end at k, m and n).
 * Workspace (tn_cu_sm90_ps_bytes): Ahi, Alo (m x kp) and Bhi, Blo (n x kp)
 * of es bytes (2 FP16, 4 TF32), kp = k rounded up to 8; SHGEMM has one B
 * part (FP16 B copied K-major, or widened to FP32 for TF32), none when
 * SHGEMM_FP16's B is already K-contiguous (read in place). Where it runs:
 * tn_cu_sm90_ps_wanted (and never inside tcnla_rsvd / _lra / _hosvd, which
 * keep to their memory bounds). */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "backend/cuda/kernels/split.cuh"
#include "backend/cuda/kernels/tn_sm90.h"

#include <cuda_fp16.h>
#include <stdint.h>
#include <stdlib.h>

#define PS_BM 128
#define PS_BN 128
/* k-tile: 128 bytes of k per row (64 FP16 or 32 TF32 values), 128-byte
 * swizzle, four wgmma k-steps (k16 / k8) per stage for every method */
#define PS_KB 128
#define PS_THREADS 384

/* ---------------------------------------------------- configuration */
static __host__ __device__ __forceinline__ int ps_bk(int mode) { return s9_tf32(mode) ? 32 : 64; }
/* one 128-row tile of hi or lo parts (16 KB) */
static __host__ __device__ __forceinline__ int ps_ct(int mode) {
    (void)mode;
    return PS_BM * PS_KB;
}
/* tiles per stage: Ahi, Alo, Bhi (, Blo) */
static __host__ __device__ __forceinline__ int ps_nt(int mode) { return s9_sh(mode) ? 3 : 4; }
/* ring depth: 3 x 64 KB (TCEC), 4 x 48 KB (SHGEMM) */
static __host__ __device__ __forceinline__ int ps_stages(int mode) { return s9_sh(mode) ? 4 : 3; }
static __host__ __device__ __forceinline__ int ps_bar_off(int mode) {
    return ps_stages(mode) * ps_nt(mode) * ps_ct(mode);
}
/* stages, barriers (full, empty), +1024 for aligning the base */
static __host__ __device__ __forceinline__ int ps_smem(int mode) {
    return ps_bar_off(mode) + 8 * (2 * ps_stages(mode)) + 1024;
}

/* ------------------------------------------------ the operand pass */
/* X: R rows of K values (row r of op(A) or column j of op(B)), with k
 * contiguous (kc: X[r ld + k]) or r contiguous (X[k ld + r]), FP32 or
 * (PS_COPY16, PS_WIDEN16) FP16. Writes row r of hi (and lo) with k
 * contiguous and row stride kp; values past K in the last 8-chunk are 0.
 * 64 x 64 tiles through shared memory, so that reads and writes are both
 * contiguous whichever the layout. */
enum { PS_SPLIT16 = 0, PS_SPLITTF32 = 1, PS_COPY16 = 2, PS_WIDEN16 = 3 };

/* With vmx (FP32 input), also the operand check of tn_cu_check_f32 on the
 * R vectors (tn_check_elem folded into vmx[r], verr[r]). */
static __global__ void __launch_bounds__(256)
    ps_prep(int what, const void *X, long long ld, int kc, int R, int K, void *hi, void *lo,
            long long kp, int kind, uint32_t *vmx, double *verr, int vec4, int fast) {
    __shared__ float t[64][65];
    const int tid = threadIdx.x;
    const int k0 = blockIdx.x * 64;
    const int rtiles = (R + 63) / 64;
    const int in16 = what >= PS_COPY16;
    /* tile rt's 4 x 4 values of this thread, the contiguous dimension (b) 4
     * at a time: 16-byte loads where the 4 lie inside the matrix (vec4: FP32,
     * 16-byte aligned columns). A block takes tiles rt, rt + gridDim.y, ..:
     * the next tile's loads are issued before the current one is written, so
     * that they are in flight meanwhile. */
    float v[4][4];
#define PS_LOAD(RT_)                                                                           \
    do {                                                                                       \
        const int r0_ = (RT_) * 64;                                                            \
        _Pragma("unroll") for (int i = 0; i < 4; i++) {                                        \
            const int idx = tid + 256 * i;                                                     \
            const int a = idx >> 4, b = 4 * (idx & 15); /* kc: r = a, k = b; else k = a, r = b */ \
            const int ra = r0_ + (kc ? a : b), ka = k0 + (kc ? b : a); /* first of the 4 */   \
            const int inr = kc ? ra < R : ka < K;       /* the line of the 4 exists */         \
            const int nb = kc ? K - ka : R - ra;        /* values left along it */             \
            const long long off = kc ? (long long)ra * ld + ka : (long long)ka * ld + ra;      \
            v[i][0] = v[i][1] = v[i][2] = v[i][3] = 0.0f;                                      \
            if (inr && vec4 && nb >= 4) {                                                      \
                const float4 q = __ldg((const float4 *)((const float *)X + off));              \
                v[i][0] = q.x, v[i][1] = q.y, v[i][2] = q.z, v[i][3] = q.w;                    \
            } else if (inr) {                                                                  \
                _Pragma("unroll") for (int e = 0; e < 4; e++) if (e < nb) v[i][e] =            \
                    in16 ? __half2float(((const __half *)X)[off + e])                          \
                         : ((const float *)X)[off + e];                                        \
            }                                                                                  \
        }                                                                                      \
    } while (0)
    if ((int)blockIdx.y < rtiles) PS_LOAD((int)blockIdx.y);
    for (int rt = blockIdx.y; rt < rtiles; rt += gridDim.y) {
        const int r0 = rt * 64;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int idx = tid + 256 * i, a = idx >> 4, b = 4 * (idx & 15);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                if (kc) t[a][b + e] = v[i][e];
                else t[b + e][a] = v[i][e];
            }
        }
        __syncthreads();
        if (rt + (int)gridDim.y < rtiles) PS_LOAD(rt + (int)gridDim.y);
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int item = tid + 256 * j, r = item >> 3, c = item & 7;
            const int k = k0 + 8 * c;
            if (vmx) { /* the 8 lanes of row r (c = lane % 8) reduce, lane c = 0 folds */
                uint32_t mx = 0;
                double me = 0.0;
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const float x = t[r][8 * c + e];
                    /* fast (tn_rchk_fast): such an x is within the tolerance
                     * of any vector holding it, so its error need not be
                     * computed: the same flags */
                    if (fast && tn_f16_normal_or_zero(fabsf(x)))
                        mx = max(mx, __float_as_uint(x) & 0x7fffffffu);
                    else
                        tn_check_elem(kind, x, &mx, &me);
                }
#pragma unroll
                for (int o = 4; o > 0; o >>= 1) {
                    mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
                    const double oe = __shfl_xor_sync(0xffffffffu, me, o);
                    if (!(oe <= me)) me = oe;
                }
                /* (maxima start at 0: a 0 here changes nothing, and the
                 * fast path leaves me at 0 for most rows) */
                if (c == 0 && r0 + r < R) {
                    if (mx) atomicMax(&vmx[r0 + r], mx);
                    if (kind >= 0 && me != 0.0) tn_atomic_max_f64_nonneg(&verr[r0 + r], me);
                }
            }
            if (r0 + r < R && k < K) {
                float x[8];
#pragma unroll
                for (int e = 0; e < 8; e++) x[e] = t[r][8 * c + e];
                const long long o = (long long)(r0 + r) * kp + k;
                if (what == PS_SPLIT16) {
                    uint32_t h[4], l[4];
#pragma unroll
                    for (int e = 0; e < 4; e++) tn_split2_f16(x[2 * e], x[2 * e + 1], 1, &h[e], &l[e]);
                    *(uint4 *)((uint16_t *)hi + o) = make_uint4(h[0], h[1], h[2], h[3]);
                    *(uint4 *)((uint16_t *)lo + o) = make_uint4(l[0], l[1], l[2], l[3]);
                } else if (what == PS_SPLITTF32) {
                    float h[8], l[8];
#pragma unroll
                    for (int e = 0; e < 8; e++) tn_split_tf32(x[e], &h[e], &l[e]);
                    float4 *ph = (float4 *)((float *)hi + o), *pl = (float4 *)((float *)lo + o);
                    ph[0] = make_float4(h[0], h[1], h[2], h[3]);
                    ph[1] = make_float4(h[4], h[5], h[6], h[7]);
                    pl[0] = make_float4(l[0], l[1], l[2], l[3]);
                    pl[1] = make_float4(l[4], l[5], l[6], l[7]);
                } else if (what == PS_COPY16) { /* exact: the values are FP16 */
                    uint32_t h[4];
#pragma unroll
                    for (int e = 0; e < 4; e++) h[e] = tn_f2_to_h2(x[2 * e], x[2 * e + 1]);
                    *(uint4 *)((uint16_t *)hi + o) = make_uint4(h[0], h[1], h[2], h[3]);
                } else {
                    float4 *ph = (float4 *)((float *)hi + o);
                    ph[0] = make_float4(x[0], x[1], x[2], x[3]);
                    ph[1] = make_float4(x[4], x[5], x[6], x[7]);
                }
            }
        }
        __syncthreads();
    }
#undef PS_LOAD
}

/* ---------------------------------------------------------- the GEMM */
extern __shared__ unsigned char ps_smem_raw[];

static __device__ __forceinline__ void ps_body(const int MODE,
                                               const CUtensorMap *tAh, const CUtensorMap *tAl,
                                               const CUtensorMap *tBh, const CUtensorMap *tBl,
                                               int M, int N, int K,
                                               float alpha, float beta, float *__restrict__ C,
                                               long long ldc, int kt_split, float *__restrict__ P,
                                               int chk) {
#if S9_ON
    const int TF32 = s9_tf32(MODE), SH = s9_sh(MODE);
    const int S = ps_stages(MODE), CT = ps_ct(MODE), NT = ps_nt(MODE);
    const int STAGE = NT * CT;
    const int RB = PS_KB, BK = ps_bk(MODE); /* bytes, values of k per row of a tile */
    const int CHK = chk;                     /* k-tiles per chunk: 1, 2 or 4 */
    if (!s9_dsmem_ok(ps_smem(MODE))) return;
    const int tid = threadIdx.x, wg = tid >> 7;
    int m0, n0;
    s9_tile_of(blockIdx.x, M, N, &m0, &n0);
    const int kt_base = blockIdx.y * kt_split;
    const int KT = min((K + BK - 1) / BK - kt_base, kt_split);

    const uint32_t raw_s = s9_smem_u32(ps_smem_raw);
    const uint32_t base_s = (raw_s + 1023u) & ~1023u;
    const uint32_t bar_s = base_s + (uint32_t)ps_bar_off(MODE);
#define FULL(i) (bar_s + 8u * (uint32_t)(i))
#define EMPTY(i) (bar_s + 8u * (uint32_t)(S + (i)))
    if (tid == 0) {
        for (int i = 0; i < S; i++) {
            mbar_init(FULL(i), 1);
            /* one arrival per consumer warp */
            mbar_init(EMPTY(i), 8);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        fence_async_smem();
    }
    __syncthreads();

    if (wg == 0) {
        /* ---------------------------------------------- producer */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % S;
                if (kt >= S) mbar_wait(EMPTY(s), (uint32_t)(((kt / S) & 1) ^ 1));
                const uint32_t dst = base_s + (uint32_t)(s * STAGE);
                const int k0 = (kt_base + kt) * BK;
                mbar_expect_tx(FULL(s), (uint32_t)STAGE);
                tma_load_2d(dst, tAh, k0, m0, FULL(s));
                tma_load_2d(dst + CT, tAl, k0, m0, FULL(s));
                tma_load_2d(dst + 2 * CT, tBh, k0, n0, FULL(s));
                if (!SH) tma_load_2d(dst + 3 * CT, tBl, k0, n0, FULL(s));
            }
        }
    } else {
        /* ---------------------------------------------- consumers */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int cw = wg - 1; /* rows 64 cw .. 64 cw + 63 of the tile */
        /* corr and tmp are not zeroed: the first wgmma of each (scale-d
         * 0) does that. Zeroing them here made ptxas serialize every wgmma
         * (C7515), as the loop's first pass then enters with the registers
         * of the groups the later passes leave in flight defined by moves. */
        float acc[64], corr[64], tmp[64];
#pragma unroll
        for (int i = 0; i < 64; i++) acc[i] = 0.0f;
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % S;
            const int cfirst = (kt & (CHK - 1)) == 0;
            const int clast = ((kt + 1) & (CHK - 1)) == 0 || kt == KT - 1;
            mbar_wait(FULL(s), (uint32_t)((kt / S) & 1));
            const uint32_t st = base_s + (uint32_t)(s * STAGE);
            const uint32_t cAh = st + (uint32_t)(cw * 64 * RB), cAl = cAh + (uint32_t)CT;
            const uint32_t cBh = st + (uint32_t)(2 * CT), cBl = cBh + (uint32_t)CT;
            wgmma_fence();
            /* 4 k-steps per k-tile: k16 (FP16) or k8 (TF32), 32 bytes each */
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                S9_WGMMA_SS(TF32, tmp, wg_desc(cAh + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128),
                            (ks > 0 || !cfirst) ? 1 : 0);
            wgmma_commit();
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                S9_WGMMA_SS(TF32, corr, wg_desc(cAl + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128),
                            (kt > 0 || ks > 0) ? 1 : 0);
                if (!SH)
                    S9_WGMMA_SS(TF32, corr, wg_desc(cAh + 32 * ks, 128),
                                wg_desc(cBl + 32 * ks, 128), 1);
            }
            wgmma_commit();
            /* hi*hi of kt done (and all of kt - 1); the corrections run on.
             * (wait_group 2 where no add follows made ptxas serialize every
             * wgmma, C7514: it cannot follow two different counts.) */
            if (clast) {
                wgmma_wait1();
                reg_fence(tmp);
#pragma unroll
                for (int i = 0; i < 64; i++) acc[i] = __fadd_rn(acc[i], tmp[i]);
            } else {
                wgmma_wait1(); /* (inside both branches: else C7515 again) */
            }
            if (kt > 0) {
                __syncwarp();
                if ((tid & 31) == 0) mbar_arrive(EMPTY((kt - 1) % S));
            }
        }
        wgmma_wait0();
        reg_fence(corr);
        reg_fence(acc);
        if (KT <= 0) /* an empty split-K slice (nothing in flight here) */
#pragma unroll
            for (int i = 0; i < 64; i++) corr[i] = 0.0f;
        s9_epilogue(acc, corr, 16, tid, cw, m0, n0, M, N, alpha, beta, C, ldc, P);
    }
#undef FULL
#undef EMPTY
#else
    (void)MODE, (void)tAh, (void)tAl, (void)tBh, (void)tBl, (void)M, (void)N, (void)K;
    (void)alpha, (void)beta, (void)C, (void)ldc, (void)kt_split, (void)P, (void)chk;
#endif
}

#define PS_KERNEL(MODE, NAME)                                                                  \
    static __global__ void __launch_bounds__(PS_THREADS, 1) NAME(                              \
        const __grid_constant__ CUtensorMap tAh, const __grid_constant__ CUtensorMap tAl,      \
        const __grid_constant__ CUtensorMap tBh, const __grid_constant__ CUtensorMap tBl,      \
        int M, int N, int K, float alpha, float beta, float *C, long long ldc, int kt_split,   \
        float *P, int chk) {                                                                   \
        ps_body(MODE, &tAh, &tAl, &tBh, &tBl, M, N, K, alpha, beta, C, ldc, kt_split, P, chk);  \
    }
PS_KERNEL(0, tn_sm90_ps_0) /* TN_KMODE_TCEC_F16 */
PS_KERNEL(2, tn_sm90_ps_2) /* TN_KMODE_SHGEMM_F16 */
PS_KERNEL(3, tn_sm90_ps_3) /* TN_KMODE_TCEC_TF32 */
PS_KERNEL(4, tn_sm90_ps_4) /* TN_KMODE_SHGEMM_TF32 */

typedef void (*ps_kernel_t)(const CUtensorMap, const CUtensorMap, const CUtensorMap,
                            const CUtensorMap, int, int, int, float, float, float *, long long,
                            int, float *, int);

static ps_kernel_t ps_kernel(int mode) {
    switch (mode) {
    case TN_KMODE_TCEC_F16: return tn_sm90_ps_0;
    case TN_KMODE_SHGEMM_F16: return tn_sm90_ps_2;
    case TN_KMODE_TCEC_TF32: return tn_sm90_ps_3;
    case TN_KMODE_SHGEMM_TF32: return tn_sm90_ps_4;
    default: return NULL;
    }
}

/* ------------------------------------------------------- host side */
static size_t ps_al(size_t b) { return (b + 255) & ~(size_t)255; }
static int64_t ps_kp(int64_t k) { return (k + 7) / 8 * 8; }
/* SHGEMM_FP16 with op(B) = B (K contiguous) reads B in place */
static int ps_b_in_place(int mode, int transb) { return mode == TN_KMODE_SHGEMM_F16 && !transb; }

/* chunks and split-K slices are counted in k-tiles of 32, as by the
 * in-kernel path (the same sums, so the same bits); FP16 k-tiles here are
 * 64 deep, so odd counts of 32 (some split-K slices) are left to that
 * path */
static int ps_fits(int mode, int64_t k, int splits) {
    const int kx = ps_bk(mode) / 32;
    const int64_t kt = (k + 31) / 32, per = (kt + splits - 1) / splits;
    return tn_cu_sm90_chunk(mode) % kx == 0 && (splits <= 1 || per % kx == 0);
}

extern "C" int tn_cu_sm90_ps_wanted(int mode, int64_t m, int64_t n, int64_t k, int splits,
                                    int force) {
    if (!ps_kernel(mode) || m <= 0 || n <= 0 || k <= 0 || !ps_fits(mode, k, splits < 1 ? 1 : splits))
        return 0;
    if (force >= 0) return force; /* the handle's tuning sm90_presplit */
    /* each element of A is split n / 128 times by the in-kernel path, each
     * of B m / 128 times; the pass pays once that is 4 and 8 times or more
     * (H200: 16384 x 512 x 16384 TCEC_FP16 139.8 against 114.5 TFLOP/s;
     * 32768 x 256 x 32768 no gain for FP16, -23 % for TF32) and k is long
     * enough for the kernel to run a while (k = 256 in randLRA's refinement
     * lost 1.2 ms of 22.8) */
    return (m < n ? m : n) >= 512 && (m > n ? m : n) >= 1024 && k >= 1024;
}

extern "C" size_t tn_cu_sm90_ps_bytes(int mode, int transb, int64_t m, int64_t n, int64_t k) {
    const size_t es = s9_tf32(mode) ? 4 : 2, kp = (size_t)ps_kp(k);
    size_t b = 2 * ps_al(es * (size_t)m * kp);
    if (!ps_b_in_place(mode, transb)) b += (s9_sh(mode) ? 1 : 2) * ps_al(es * (size_t)n * kp);
    return b;
}

/* where op(A)'s (which 0) or op(B)'s (1) parts go in the workspace (m = 0:
 * none of op(A)'s) */
static void ps_parts(int mode, int which, int64_t m, int64_t n, int64_t k, void *ws, void **hi,
                     void **lo) {
    const size_t es = s9_tf32(mode) ? 4 : 2, kp = (size_t)ps_kp(k);
    char *w = (char *)ws + (which ? 2 * ps_al(es * (size_t)m * kp) : 0);
    *hi = w;
    *lo = w + ps_al(es * (size_t)(which ? n : m) * kp);
}

/* op(B)'s parts in a workspace laid out for m = 0 (none of op(A)'s):
 * Bhi, Blo, K-contiguous rows of kp = k rounded up to 8 (the wide-tile
 * path of tc_gemm_sm90_w.cu reads them) */
extern "C" void tn_cu_sm90_ps_b_parts(int mode, int64_t n, int64_t k, void *ws, void **hi,
                                      void **lo, int64_t *kp) {
    ps_parts(mode, 1, 0, n, k, ws, hi, lo);
    *kp = ps_kp(k);
}

extern "C" int tn_cu_sm90_ps_split(int mode, int which, int trans, int64_t m, int64_t n,
                                   int64_t k, const void *X, int64_t ld, void *ws,
                                   int check_kind, int tol_bits, int *flags, void *scratch,
                                   int sms, cudaStream_t stream) {
    const int tf32 = s9_tf32(mode), b16 = which && s9_sh(mode);
    const int64_t R = which ? n : m, kp = ps_kp(k);
    /* op(A) rows are K-contiguous when transa, op(B) columns when !transb */
    const int kc = which ? !trans : trans;
    const int what = b16 ? (tf32 ? PS_WIDEN16 : PS_COPY16) : (tf32 ? PS_SPLITTF32 : PS_SPLIT16);
    if (R <= 0 || k <= 0 || R > 0x7fffffffLL || k > 0x7fffffffLL) return (int)cudaErrorNotSupported;
    if (scratch && b16) return (int)cudaErrorInvalidValue; /* FP16 B: tn_cu_check_f16 */
    void *hi, *lo;
    ps_parts(mode, which, m, n, k, ws, &hi, &lo);
    uint32_t *vmx = NULL;
    double *verr = NULL;
    int e = 0;
    if (scratch && (e = tn_cu_check_begin(R, check_kind, scratch, &vmx, &verr, stream))) return e;
    const int64_t gx = (k + 63) / 64, rt = (R + 63) / 64;
    const int vec4 = !b16 && ((uintptr_t)X & 15u) == 0 && ld % 4 == 0;
    const int fast = tn_rchk_fast(check_kind, tol_bits);
    /* a few row tiles per block (4 at most), at least 8 blocks per SM.
     * H200, pass of op(A) with its check (ncu): 16384^2 FP16 596 us at 16
     * tiles per block, 579 at 8, 561 at 4, 585 at 2, 665 at 1; 8192^2 FP16
     * 152 / 148 / 148 / 164 us at 16 / 4 / 2 / 1, TF32 241 / 236 / 234 /
     * 237 */
    int64_t gy = (rt + 3) / 4;
    while (gy < rt && gx * gy < 8 * (int64_t)sms) gy *= 2;
    if (gy > rt) gy = rt;
    if (gy > 65535) gy = 65535;
    ps_prep<<<dim3((unsigned)gx, (unsigned)gy), 256, 0, stream>>>(
        what, X, (long long)ld, kc, (int)R, (int)k, hi, b16 ? NULL : lo, (long long)kp,
        check_kind, vmx, verr, vec4, fast);
    if ((e = (int)cudaGetLastError())) return e;
    return scratch ? tn_cu_check_end(R, check_kind, tol_bits, scratch, flags, stream) : 0;
}

extern "C" int tn_cu_tc_gemm_sm90_ps(int mode, int transa, int transb, int64_t m,
                                     int64_t n, int64_t k, float alpha, const float *A,
                                     int64_t lda, const void *B, int64_t ldb, float beta,
                                     float *C, int64_t ldc, int splits, float *P, void *ws,
                                     size_t ws_bytes, int done, int sms, size_t smem_limit,
                                     cudaStream_t stream) {
    ps_kernel_t kern = ps_kernel(mode);
    if (!kern || !tn_cu_sm90_available(mode)) return (int)cudaErrorNotSupported;
    const size_t smem = (size_t)ps_smem(mode);
    const size_t need = tn_cu_sm90_ps_bytes(mode, transb, m, n, k);
    if (smem > smem_limit || (need && (!ws || ws_bytes < need))) return (int)cudaErrorNotSupported;
    if (m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL)
        return (int)cudaErrorNotSupported;
    const int tf32 = s9_tf32(mode), sh = s9_sh(mode);
    const int in_place = ps_b_in_place(mode, transb);
    if (in_place && (((uintptr_t)B & 15u) || (ldb * 2) % 16)) return (int)cudaErrorNotSupported;
    const int64_t mt = (m + PS_BM - 1) / PS_BM, nt = (n + PS_BN - 1) / PS_BN;
    int64_t tiles = mt * nt;
    if (tiles > 0x7fffffffLL) return (int)cudaErrorNotSupported;
    if (splits < 1 || !P) splits = 1;
    if (splits > 65535) return (int)cudaErrorInvalidValue;
    if (!ps_fits(mode, k, splits)) return (int)cudaErrorNotSupported;
    const int kx = ps_bk(mode) / 32, chk = tn_cu_sm90_chunk(mode);
    /* k-tiles of this kernel per slice (one slice: all of them, rounded up) */
    const int per32 = (int)(((k + 31) / 32 + splits - 1) / splits);
    const int per = splits > 1 ? per32 / kx : (per32 + kx - 1) / kx;

    /* the tensor maps first: nothing is queued when one cannot be made */
    const size_t es = tf32 ? 4 : 2;
    const int64_t kp = ps_kp(k);
    void *Ah, *Al, *Bh, *Bl;
    ps_parts(mode, 0, m, n, k, ws, &Ah, &Al);
    ps_parts(mode, 1, m, n, k, ws, &Bh, &Bl);
    s9_encode_fn enc = s9_encoder();
    const CUtensorMapDataType dt = tf32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16;
    const CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_128B;
    CUtensorMap mAh, mAl, mBh, mBl;
    int bad = 0;
    const int bk = ps_bk(mode);
    bad |= s9_map(&mAh, enc, dt, (int)es, Ah, k, m, kp, bk, PS_BM, sw);
    bad |= s9_map(&mAl, enc, dt, (int)es, Al, k, m, kp, bk, PS_BM, sw);
    if (in_place) bad |= s9_map(&mBh, enc, dt, 2, B, k, n, ldb, bk, PS_BN, sw);
    else bad |= s9_map(&mBh, enc, dt, (int)es, Bh, k, n, kp, bk, PS_BN, sw);
    if (sh) mBl = mBh; /* not read */
    else bad |= s9_map(&mBl, enc, dt, (int)es, Bl, k, n, kp, bk, PS_BN, sw);
    if (bad) return (int)cudaErrorNotSupported;
    cudaError_t e = cudaFuncSetAttribute((const void *)kern,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;

    /* the operand passes not done yet (done: 1 op(A), 2 op(B)) */
    int r = 0;
    if (!(done & 1))
        r = tn_cu_sm90_ps_split(mode, 0, transa, m, n, k, A, lda, ws, TN_RCHK_NONE, 0, NULL, NULL,
                                sms, stream);
    if (!r && !in_place && !(done & 2))
        r = tn_cu_sm90_ps_split(mode, 1, transb, m, n, k, B, ldb, ws, TN_RCHK_NONE, 0, NULL, NULL,
                                sms, stream);
    if (r) return r;
    kern<<<dim3((unsigned)tiles, (unsigned)splits), PS_THREADS, smem, stream>>>(
        mAh, mAl, mBh, mBl, (int)m, (int)n, (int)k, alpha, beta, C, (long long)ldc, per,
        splits > 1 ? P : NULL, chk / kx);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    if (splits > 1) e = (cudaError_t)tn_cu_sm90_splitk_reduce(splits, P, m, n, alpha, beta, C, ldc,
                                                            stream);
    return (int)e;
}
