/* Error-corrected SGEMM on Hopper Tensor Cores (sm_90a): TCEC_FP16,
 * TCEC_TF32 [Ootomo & Yokota 2021] and SHGEMM_FP16, SHGEMM_TF32 ([Ootomo & Yokota 2023] section 4)
 * with wgmma fed by TMA (cp.async.bulk.tensor) through mbarrier rings.
 *
 * Block tile 128 x 128 x 32, 384 threads in three warpgroups:
 *   warpgroup 0 (split WG, setmaxnreg 40): thread 0 issues the TMA copies
 *     of the FP32 (or FP16) tiles of op(B) into a ring of raw
 *     stages (raw_full barriers, expect_tx bytes); all 128 threads split
 *     (TCEC) or copy (SHGEMM) each raw stage into hi (/ lo) tiles (FP16 or
 *     TF32, bit-identical to tcnla_split(), src/backend/cuda/kernels/split.cuh)
 *     in a second ring (conv_full / conv_empty barriers), K-major in the canonical wgmma layouts (64-byte
 *     swizzle for FP16, 128-byte for TF32), then refills the raw stage it
 *     has just read. The split of tile k+1.. overlaps the products of k.
 *   warpgroups 1, 2 (consumers, setmaxnreg 232): 64 rows each, m64n128
 *     wgmma, A from registers, B from shared memory: the consumers take the
 *     FP32 A tile from an A ring of their own (TMA issued by consumer thread
 *     128, a_full / a_empty barriers) and split it in registers (split.cuh,
 *     bit-identical). Per chunk (s9_chunk: 64 products, two
 *     k-tiles of 2 wgmma k16, for FP16; 32, one k-tile of 4 wgmma k8, for TF32)
 *     hi*hi goes to a fresh accumulator (scale-d = 0 on its first
 *     wgmma) and is added with RN FP32 adds into the result accumulator
 *     (RZ avoidance, [Ootomo & Yokota 2021] Fig. 4); dA*Bhi (+ Ahi*dB for TCEC) accumulate in their own wgmma
 *     accumulator; dA*dB is dropped. C = alpha*(acc + corr*2^-11) + beta*C,
 *     or, with split-K, the unscaled result into P[slice].
 * TF32 takes hi*hi in two n-halves (m64n64k8 into one 32-register
 * accumulator, each half added
 * into the result while the other wgmma group runs) so that the 32 TF32
 * fragment registers fit beside the result and correction accumulators.
 * Tails in m, n and k come from TMA's zero fill; transposes from the
 * tensor maps and the split pass (which reads either raw layout).
 * The tensor maps are encoded on the host through cuTensorMapEncodeTiled,
 * found with cudaGetDriverEntryPointByVersion (no -lcuda).
 * Only the sm_90a pass compiles the kernel bodies; other passes get empty
 * kernels that the host never launches (tn_cu_sm90_available). */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "backend/cuda/kernels/split.cuh"
#include "backend/cuda/tn_cuda.h"
#include "backend/cuda/kernels/tn_sm90.h"

#include <cuda.h> /* CUtensorMap and its enums (types only, no -lcuda) */
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S9_BM 128
#define S9_BN 128
#define S9_BK 32
#define S9_THREADS 384

/* ---------------------------------------------------- configuration */
/* The consumers read the raw FP32 A tile from their own ring (A stages of
 * 16 KB), split it in registers and feed wgmma's A operand from registers;
 * the split warpgroup only splits (TCEC) or copies (SHGEMM) B. TF32: hi*hi
 * is taken in two n-halves (m64n64k8, one
 * 32-register accumulator) so that 16 + 16 TF32 fragment registers fit
 * beside the 64-register result and correction accumulators; one chunk
 * (32 products) per RN add only. */
/* A stage: 128 x 32 FP32; raw stage: B 128 x 32 FP32 or FP16 */
static __host__ __device__ __forceinline__ int s9_raw_a(void) { return S9_BM * S9_BK * 4; }
static __host__ __device__ __forceinline__ int s9_raw_bytes(int mode) {
    return S9_BN * S9_BK * (s9_sh(mode) ? 2 : 4);
}
/* one hi or lo tile (128 x 32, FP16 or TF32) */
static __host__ __device__ __forceinline__ int s9_ct(int mode) {
    return S9_BM * S9_BK * (s9_tf32(mode) ? 4 : 2);
}
static __host__ __device__ __forceinline__ int s9_conv_bytes(int mode) {
    return (s9_sh(mode) ? 1 : 2) * s9_ct(mode);
}
/* A stages (16 KB each) */
static __host__ __device__ __forceinline__ int s9_na(int mode) {
    switch (mode) {
    case TN_KMODE_TCEC_F16: return 5;
    case TN_KMODE_SHGEMM_F16: return 7;
    case TN_KMODE_TCEC_TF32: return 4;
    default: return 6;
    }
}
static __host__ __device__ __forceinline__ int s9_nraw(int mode) {
    /* FP32 B 16 KB, FP16 B 8 KB per stage */
    return mode == TN_KMODE_TCEC_F16 ? 5 : mode == TN_KMODE_TCEC_TF32 ? 4 : 6;
}
static __host__ __device__ __forceinline__ int s9_nconv(int mode) {
    /* Bhi + Blo 16 KB (TCEC_FP16) / 32 KB (TCEC_TF32), Bhi 8 KB / 16 KB:
     * 5 A + 5 B + 4, 7 + 6 + 6, 4 + 4 + 3, 6 + 6 + 5 stages, 208-224 KB */
    switch (mode) {
    case TN_KMODE_TCEC_F16: return 4;
    case TN_KMODE_SHGEMM_F16: return 6;
    case TN_KMODE_TCEC_TF32: return 3;
    default: return 5;
    }
}
/* buffers (1024-byte aligned), then the barriers; +1024 for aligning the base */
/* layout: [A stages][raw B stages][conv stages][barriers] */
static __host__ __device__ __forceinline__ int s9_bar_off(int mode) {
    return s9_na(mode) * s9_raw_a() + s9_nraw(mode) * s9_raw_bytes(mode) +
           s9_nconv(mode) * s9_conv_bytes(mode);
}
static __host__ __device__ __forceinline__ int s9_smem(int mode) {
    return s9_bar_off(mode) + 512 + 1024;
}

/* ------------------------------------------------------- primitives */
#if S9_ON
/* A from registers (four FP16x2 words per thread, the m64k16 fragment:
 * warp w of the warpgroup holds rows 16w .. 16w+15, lane l rows l/4 and
 * l/4+8, k 2(l%4) .. +1 and +8 .. +9), B from shared memory */
#define S9_WGMMA_F16_RA(d, a, db, scd)                                                         \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "  \
                 "{%64,%65,%66,%67}, %68, p, 1, 1, 0;\n}\n"                                         \
                 : S9_ACC64(d)  \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(db), "r"(scd))

/* The same with n = 64 (32 accumulator registers): products with N <= 64 */
#define S9_WGMMA_F16_RA_N(n64, d, a, db, scd)                                                  \
    do {                                                                                       \
        if (n64) S9_WGMMA_F16_RA_N64(d, a, db, scd);                                           \
        else S9_WGMMA_F16_RA(d, a, db, scd);                                                   \
    } while (0)
#define S9_WGMMA_F16_RA_N64(d, a, db, scd)                                                     \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "                         \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, " \
                 "{%32,%33,%34,%35}, %36, p, 1, 1, 0;\n}\n"                                    \
                 : S9_ACC32(d)                                                                 \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(db), "r"(scd))

/* TF32 A from registers (four words per thread, the m64k8 fragment: warp
 * w holds rows 16w .. 16w+15, lane l: a0 (l/4, l%4), a1 (l/4+8, l%4),
 * a2 (l/4, l%4+4), a3 (l/4+8, l%4+4)), B from shared memory; n = 128
 * (corrections) and n = 64 (hi*hi, one n-half) */
#define S9_WGMMA_TF32_RA(d, a, db, scd)                                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                  \
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "                       \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "                                                                      \
                 "{%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"                                  \
                 : S9_ACC64(d) \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(db), "r"(scd))
#define S9_WGMMA_TF32_RA_N(n64, d, a, db, scd)                                                 \
    do {                                                                                       \
        if (n64) S9_WGMMA_TF32_RA_N64(d, a, db, scd);                                          \
        else S9_WGMMA_TF32_RA(d, a, db, scd);                                                  \
    } while (0)
#define S9_WGMMA_TF32_RA_N64(d, a, db, scd)                                                    \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                  \
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "                        \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "                                                                      \
                 "{%32,%33,%34,%35}, %36, p, 1, 1;\n}\n"                                  \
                 : S9_ACC32(d) \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(db), "r"(scd))

/* ra: A(m, k), A(m, k + 1) (k even) of a raw FP32 A stage. K-major: one
 * TMA box, rows of 32 k (128-byte swizzle); MN-major: four boxes of 32 m x
 * 32 k, rows of 32 m per k (128-byte swizzle), so that the fragment loads
 * (8 rows x 4 k per instruction) hit 32 different banks. */
static __device__ __forceinline__ void s9_ra_read2(const unsigned char *sa, int kmaj, int m, int k,
                                                   float *x0, float *x1) {
    if (kmaj) {
        float2 v = *(const float2 *)(sa + m * 128 + (((k >> 2) ^ (m & 7)) << 4) + (k & 3) * 4);
        *x0 = v.x;
        *x1 = v.y;
    } else {
        const unsigned char *b = sa + (m >> 5) * 4096 + (m & 3) * 4;
        *x0 = *(const float *)(b + k * 128 + ((((m & 31) >> 2) ^ (k & 7)) << 4));
        *x1 = *(const float *)(b + (k + 1) * 128 + ((((m & 31) >> 2) ^ ((k + 1) & 7)) << 4));
    }
}

/* ra, FP16: this thread's m64k16 A fragments of a 32-deep k-tile, split
 * (tn_split2_f16): words [4 ks + 2 e + h] hold rows mr + 8 h, k 16 ks +
 * kc + 8 e and the next */
static __device__ __forceinline__ void s9_ra_split16(const unsigned char *sa, int kmaj, int mr,
                                                     int kc, uint32_t *ah, uint32_t *al) {
#pragma unroll
    for (int ks = 0; ks < 2; ks++)
#pragma unroll
        for (int e2 = 0; e2 < 2; e2++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float x0, x1;
                s9_ra_read2(sa, kmaj, mr + 8 * h, 16 * ks + kc + 8 * e2, &x0, &x1);
                tn_split2_f16(x0, x1, 1, &ah[4 * ks + 2 * e2 + h], &al[4 * ks + 2 * e2 + h]);
            }
}

/* ra, TF32: A(m, k) of a raw FP32 A stage (the layouts of s9_ra_read2).
 * A warp's load (rows g = 0..7, k = k0 + l%4, k0 % 4 == 0) hits 32 banks
 * K-major; MN-major only when lanes with g >= 4 take k0 ^ 4 (the caller
 * swaps those pairs). */
static __device__ __forceinline__ float s9_ra_read1(const unsigned char *sa, int kmaj, int m, int k) {
    if (kmaj) return *(const float *)(sa + m * 128 + (((k >> 2) ^ (m & 7)) << 4) + (k & 3) * 4);
    return *(const float *)(sa + (m >> 5) * 4096 + (m & 3) * 4 + k * 128 +
                            ((((m & 31) >> 2) ^ (k & 7)) << 4));
}

/* ------------------------------------------------ raw stage -> hi / lo */
/* 8 consecutive k values (8q .. 8q+7) of row r of an FP32 raw tile:
 * K-major (TMA 128-byte swizzle, rows of 32 floats) or MN-major ([32 k][128]). */
static __device__ __forceinline__ void s9_read8_f32(const unsigned char *st, int kmaj, int r,
                                                    int q, float *x) {
    if (kmaj) {
        float4 v0 = *(const float4 *)(st + r * 128 + (((2 * q) ^ (r & 7)) << 4));
        float4 v1 = *(const float4 *)(st + r * 128 + (((2 * q + 1) ^ (r & 7)) << 4));
        x[0] = v0.x; x[1] = v0.y; x[2] = v0.z; x[3] = v0.w;
        x[4] = v1.x; x[5] = v1.y; x[6] = v1.z; x[7] = v1.w;
    } else {
        const float *s = (const float *)st;
#pragma unroll
        for (int e = 0; e < 8; e++) x[e] = s[(8 * q + e) * 128 + r];
    }
}
/* Same for an FP16 raw tile (K-major: TMA 64-byte swizzle, rows of 32
 * halves; MN-major: [32 k][128]), as 4 packed FP16x2 words. */
static __device__ __forceinline__ void s9_read8_f16(const unsigned char *st, int kmaj, int r,
                                                    int q, uint32_t *h) {
    if (kmaj) {
        uint4 v = *(const uint4 *)(st + r * 64 + ((q ^ ((r >> 1) & 3)) << 4));
        h[0] = v.x; h[1] = v.y; h[2] = v.z; h[3] = v.w;
    } else {
        const unsigned short *s = (const unsigned short *)st;
#pragma unroll
        for (int i = 0; i < 4; i++)
            h[i] = (uint32_t)s[(8 * q + 2 * i) * 128 + r] |
                   ((uint32_t)s[(8 * q + 2 * i + 1) * 128 + r] << 16);
    }
}
/* byte offset of 16-byte chunk c of row r in a hi / lo tile (the wgmma
 * K-major layouts: 64-byte swizzle for FP16, 128-byte for TF32) */
static __device__ __forceinline__ int s9_conv_off(const int tf32, int r, int c) {
    return tf32 ? r * 128 + ((c ^ (r & 7)) << 4) : r * 64 + ((c ^ ((r >> 1) & 3)) << 4);
}
/* Splits rows 0 .. rows - 1 (128, or 64 for the n64 kernels, whose wgmma
 * read no other) of a 128 x 32 FP32 raw tile into hi / lo tiles with the
 * 128 threads of the split warpgroup (t = 0..127). */
static __device__ __forceinline__ void s9_split_tile(const unsigned char *st, int kmaj,
                                                     const int tf32, unsigned char *hi,
                                                     unsigned char *lo, int t, const int rows) {
#pragma unroll 2
    for (int j = 0; j < rows / 32; j++) {
        int u = t + 128 * j, r = u & (rows - 1), q = rows == 128 ? u >> 7 : u >> 6;
        float x[8];
        s9_read8_f32(st, kmaj, r, q, x);
        if (tf32) {
            float h[8], l[8];
#pragma unroll
            for (int e = 0; e < 8; e++) tn_split_tf32(x[e], &h[e], &l[e]);
            *(float4 *)(hi + s9_conv_off(1, r, 2 * q)) = make_float4(h[0], h[1], h[2], h[3]);
            *(float4 *)(hi + s9_conv_off(1, r, 2 * q + 1)) = make_float4(h[4], h[5], h[6], h[7]);
            *(float4 *)(lo + s9_conv_off(1, r, 2 * q)) = make_float4(l[0], l[1], l[2], l[3]);
            *(float4 *)(lo + s9_conv_off(1, r, 2 * q + 1)) = make_float4(l[4], l[5], l[6], l[7]);
        } else {
            uint32_t h[4], l[4];
#pragma unroll
            for (int e = 0; e < 4; e++) tn_split2_f16(x[2 * e], x[2 * e + 1], 1, &h[e], &l[e]);
            *(uint4 *)(hi + s9_conv_off(0, r, q)) = make_uint4(h[0], h[1], h[2], h[3]);
            *(uint4 *)(lo + s9_conv_off(0, r, q)) = make_uint4(l[0], l[1], l[2], l[3]);
        }
    }
}
/* Copies rows 0 .. rows - 1 (as s9_split_tile) of a 128 x 32 FP16 raw tile
 * into the hi tile (FP16, or widened to TF32 where every FP16 value is
 * exact). */
static __device__ __forceinline__ void s9_copy_f16_tile(const unsigned char *st, int kmaj,
                                                        const int tf32, unsigned char *hi,
                                                        int t, const int rows) {
#pragma unroll 2
    for (int j = 0; j < rows / 32; j++) {
        int u = t + 128 * j, r = u & (rows - 1), q = rows == 128 ? u >> 7 : u >> 6;
        uint32_t h[4];
        s9_read8_f16(st, kmaj, r, q, h);
        if (tf32) {
            float f[8];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                f[2 * e] = tn_h2_lo(h[e]);
                f[2 * e + 1] = tn_h2_hi(h[e]);
            }
            *(float4 *)(hi + s9_conv_off(1, r, 2 * q)) = make_float4(f[0], f[1], f[2], f[3]);
            *(float4 *)(hi + s9_conv_off(1, r, 2 * q + 1)) = make_float4(f[4], f[5], f[6], f[7]);
        } else {
            *(uint4 *)(hi + s9_conv_off(0, r, q)) = make_uint4(h[0], h[1], h[2], h[3]);
        }
    }
}
#endif /* S9_ON */

/* ---------------------------------------------------------- the body */
extern __shared__ unsigned char s9_smem_raw[];

/* The element-wise check of a trusted operand (tn_cu_trust_check's first
 * flags, every kind fast) folded into SHGEMM_FP16's n64 kernel: the split
 * warpgroup, which only copies B there, reads each FP32 A stage too (16 KB:
 * 8 x 16 bytes per thread, in any order) and keeps the running maximum of
 * |x|'s bits and minimum of (bits - 1), so that 0 does not count; an
 * element outside FP16's normal range (or 0) shows in them, and only then
 * are the thread's 32 elements taken through tn_elem_bad_f16 (FP32, few
 * registers: that warpgroup runs on 40). Measured on an H200 (RP-HOSVD's
 * 1024^3 mode-1 projection): the same check in the consumers' split cost
 * 0.33 ms of 1.25. */
#if S9_ON
static __device__ __forceinline__ unsigned s9_chk_stage(const unsigned char *sa, int t,
                                                        const tn_elem_kinds_t &kk) {
    const uint4 *p = (const uint4 *)sa;
    unsigned mx = 0u, mn = 0xffffffffu;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const uint4 v = p[t + 128 * i];
        const unsigned u0 = v.x & 0x7fffffffu, u1 = v.y & 0x7fffffffu;
        const unsigned u2 = v.z & 0x7fffffffu, u3 = v.w & 0x7fffffffu;
        mx = max(mx, max(max(u0, u1), max(u2, u3)));
        mn = min(mn, min(min(u0 - 1u, u1 - 1u), min(u2 - 1u, u3 - 1u)));
    }
    /* [2^-14, 65504) or 0 everywhere: every kind passes */
    if (mx < 0x477fe000u && mn >= 0x387fffffu) return 0;
    unsigned b = 0;
#pragma unroll 1
    for (int q = 0; q < 32; q++)
        b |= tn_elem_bad_f16(((const float *)sa)[4 * (t + 128 * (q >> 2)) + (q & 3)], kk);
    return b;
}
#endif

static __device__ __forceinline__ void s9_body(const int MODE, const int NV,
                                               const CUtensorMap *tmA,
                                               const CUtensorMap *tmB, int ak, int bk, int M,
                                               int N, int K, float alpha, float beta,
                                               float *__restrict__ C, long long ldc,
                                               int kt_split, float *__restrict__ P, int chk,
                                               int kslab, const tn_elem_kinds_t &kk,
                                               int *__restrict__ fl, const CUtensorMap *tmO,
                                               int N2) {
#if S9_ON
    /* NV: 0 the 128-wide kernels, 1 the n64 ones, 2 n64 with A's check
     * (FCHK), 3 the fused RP-HOSVD pass (FU, tn_cu_sm90_hosvd_fused) */
    const int N64 = NV == 1 || NV == 2;
    const int FU = NV == 3 && MODE == TN_KMODE_TCEC_F16;
    const int TF32 = s9_tf32(MODE);
    const int SH = s9_sh(MODE);
    const int NRAW = s9_nraw(MODE), NCONV = s9_nconv(MODE), NA = s9_na(MODE);
    const int RAW = s9_raw_bytes(MODE), RAW_A = s9_raw_a();
    const int CT = s9_ct(MODE), CONV = s9_conv_bytes(MODE);
    const int AB = NA * RAW_A; /* bytes of the A stages */
    /* chk (s9_chunk): k-tiles per chunk, 1, 2 or 4 (32, 64, 128 products of
     * hi*hi summed inside the Tensor Core per RN add) */
    const int CHK = chk;
    /* N64 == 2 (SHGEMM_FP16's tn_sm90_gemm_2_n64c): A's element-wise check
     * into fl, in the split warpgroup (s9_chk_stage) */
    const int FCHK = NV == 2 && SH && !TF32;

    if (!s9_dsmem_ok(s9_smem(MODE))) return;
    const int tid = threadIdx.x, wg = tid >> 7;

    int m0, n0;
    s9_tile_of(blockIdx.x, M, N, &m0, &n0);
    const int kt_base = blockIdx.y * kt_split;
    const int KT = min((K + S9_BK - 1) / S9_BK - kt_base, kt_split);

    /* 1024-byte aligned base (swizzle patterns repeat every 1024 bytes) */
    const uint32_t raw_s = s9_smem_u32(s9_smem_raw);
    const uint32_t base_s = (raw_s + 1023u) & ~1023u;
    unsigned char *base = s9_smem_raw + (base_s - raw_s);
    /* A stages first (at base), then the raw (B) stages */
    const uint32_t rb_s = base_s + AB;
    unsigned char *rbase = base + AB;
    const uint32_t conv_s = rb_s + NRAW * RAW;
    unsigned char *conv = rbase + NRAW * RAW;
    const uint32_t bar_s = base_s + s9_bar_off(MODE);
    /* barriers: raw_full[NRAW], conv_full[NCONV], conv_empty[NCONV],
     * a_full[NA], a_empty[NA] */
#define RAW_FULL(i) (bar_s + 8u * (uint32_t)(i))
#define CONV_FULL(i) (bar_s + 8u * (uint32_t)(NRAW + (i)))
#define CONV_EMPTY(i) (bar_s + 8u * (uint32_t)(NRAW + NCONV + (i)))
#define A_FULL(i) (bar_s + 8u * (uint32_t)(NRAW + 2 * NCONV + (i)))
#define A_EMPTY(i) (bar_s + 8u * (uint32_t)(NRAW + 2 * NCONV + NA + (i)))

    if (tid == 0) {
        for (int i = 0; i < NRAW; i++) mbar_init(RAW_FULL(i), 1);
        for (int i = 0; i < NCONV; i++) {
            mbar_init(CONV_FULL(i), 128);
            mbar_init(CONV_EMPTY(i), 256);
        }
        for (int i = 0; i < NA; i++) {
            mbar_init(A_FULL(i), 1);
            /* one arrival per consumer warp (and per split warp: FCHK) */
            mbar_init(A_EMPTY(i), FCHK ? 12 : 8);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        fence_async_smem();
    }
    __syncthreads();

/* thread 0: TMA copies of k-tile t (of this slice) into raw slot s */
#define S9_ISSUE(t, s)                                                                         \
    do {                                                                                       \
        uint32_t dst_ = rb_s + (uint32_t)((s) * RAW);                                          \
        int k0_ = (kt_base + (t)) * S9_BK;                                                     \
        mbar_expect_tx(RAW_FULL(s), (uint32_t)(FU ? 12288 : RAW));                             \
        if (FU) { /* Q's rows k0 mod kslab (FP32), Omega's rows k0 (FP16) */                  \
            tma_load_2d(dst_, tmB, k0_ % kslab, 0, RAW_FULL(s));                               \
            tma_load_2d(dst_ + 8192u, tmO, k0_, 0, RAW_FULL(s));                               \
        } else if (bk) tma_load_2d(dst_, tmB, k0_, n0, RAW_FULL(s));                           \
        else tma_load_2d(dst_, tmB, n0, k0_, RAW_FULL(s));                                     \
    } while (0)
/* consumer thread 128: TMA copy of the A tile of k-tile t into A stage s */
#define S9_ISSUE_A(t, s)                                                                       \
    do {                                                                                       \
        uint32_t dst_ = base_s + (uint32_t)((s) * RAW_A);                                      \
        int k0_ = (kt_base + (t)) * S9_BK;                                                     \
        mbar_expect_tx(A_FULL(s), (uint32_t)RAW_A);                                            \
        if (ak) tma_load_ak(dst_, tmA, k0_, m0, kslab, A_FULL(s));                             \
        else                                                                                   \
            for (int i_ = 0; i_ < 4; i_++)                                                     \
                tma_load_2d(dst_ + 4096u * i_, tmA, m0 + 32 * i_, k0_, A_FULL(s));             \
    } while (0)

    if (wg == 0) {
        /* ------------------------------------------ split warpgroup */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        unsigned cbad = 0; /* FCHK */
        if (tid == 0)
            for (int t = 0; t < NRAW && t < KT; t++) S9_ISSUE(t, t);
        for (int kt = 0; kt < KT; kt++) {
            const int r = kt % NRAW, s = kt % NCONV;
            mbar_wait(RAW_FULL(r), (uint32_t)((kt / NRAW) & 1));
            mbar_wait(CONV_EMPTY(s), (uint32_t)(((kt / NCONV) & 1) ^ 1));
            const unsigned char *rb = base + r * RAW + AB; /* raw stage r */
            unsigned char *cb = conv + s * CONV; /* Bhi (, Blo) */
            /* N64: the wgmma read B's rows 0..63 only */
            if (FU) { /* B rows 0..63 Q (split), 64..127 Omega (hi only) */
                s9_split_tile(rb, 1, 0, cb, cb + CT, tid, 64);
                s9_copy_f16_tile(rb + 8192, 1, 0, cb + 4096, tid, 64);
            } else if (SH) s9_copy_f16_tile(rb, bk, TF32, cb, tid, N64 ? 64 : S9_BN);
            else s9_split_tile(rb, bk, TF32, cb, cb + CT, tid, N64 ? 64 : S9_BN);
            fence_async_smem(); /* generic stores -> wgmma (async proxy) reads */
            mbar_arrive(CONV_FULL(s));
            asm volatile("bar.sync 1, 128;" ::: "memory"); /* raw slot r read by all */
            if (tid == 0 && kt + NRAW < KT) S9_ISSUE(kt + NRAW, r);
            if (FCHK) { /* A stage of k-tile kt, after B's (which the consumers wait for) */
                const int ia = kt % NA;
                mbar_wait(A_FULL(ia), (uint32_t)((kt / NA) & 1));
                cbad |= s9_chk_stage(base + ia * RAW_A, tid, kk);
                __syncwarp();
                if ((tid & 31) == 0) mbar_arrive(A_EMPTY(ia));
            }
        }
        if (FCHK) {
            for (int o = 16; o > 0; o >>= 1) cbad |= __shfl_xor_sync(0xffffffffu, cbad, o);
            if ((tid & 31) == 0 && cbad)
                for (int i = 0; i <= kk.n; i++)
                    if (cbad & (1u << i)) atomicOr(&fl[i], 1);
        }
    } else {
        /* ---------------------------------------------- consumers */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int cw = wg - 1; /* rows 64 cw .. 64 cw + 63 of the tile */
        /* this thread's fragment rows (mr, mr + 8) and k offset */
        const int mr = cw * 64 + 16 * ((tid >> 5) & 3) + ((tid & 31) >> 2);
        const int kc = 2 * (tid & 3);
        if (tid == 128)
            for (int t = 0; t < NA && t < KT; t++) S9_ISSUE_A(t, t);
        float acc[64], corr[64], tmp[64];
#pragma unroll
        for (int i = 0; i < 64; i++) {
            acc[i] = 0.0f;
            corr[i] = 0.0f;
            tmp[i] = 0.0f;
        }
        /* N64, FP16: software-pipelined. The A fragments are double
         * buffered (x0 / x1), so k-tile kt + 1 is read and split while k-tile
         * kt's wgmma groups run; their wait, the RN add of a finished chunk
         * and the B stage's release come after that split. (The 128-wide
         * kernels have no registers for a second fragment set.) */
#define S9_N64_STEP(kt, CH, CL, PH, PL)                                                        \
    do {                                                                                       \
        const int ia_ = (kt) % NA, s_ = (kt) % NCONV;                                          \
        mbar_wait(A_FULL(ia_), (uint32_t)(((kt) / NA) & 1));                                   \
        s9_ra_split16(base + ia_ * RAW_A, ak, mr, kc, CH, CL);                                 \
        __syncwarp();                                                                          \
        if ((tid & 31) == 0) mbar_arrive(A_EMPTY(ia_)); /* A stage read */                     \
        if ((kt) > 0) { /* k-tile kt - 1: its groups, chunk add, B stage */                    \
            wgmma_wait0();                                                                     \
            reg_fence(tmp);                                                                    \
            reg_fence(corr);                                                                   \
            _Pragma("unroll") for (int i = 0; i < 8; i++)                                      \
                asm volatile("" : "+r"(PH[i]), "+r"(PL[i])::"memory");                         \
            if ((((kt) & (CHK - 1)) == 0)) { /* kt - 1 ended its chunk */                      \
                _Pragma("unroll") for (int i = 0; i < 32; i++) acc[i] = __fadd_rn(acc[i], tmp[i]); \
            }                                                                                  \
            mbar_arrive(CONV_EMPTY(((kt) - 1) % NCONV));                                       \
            if (tid == 128 && (kt) - 1 + NA < KT) { /* refill kt - 1's A stage */              \
                const int t_ = (kt) - 1, sl_ = t_ % NA;                                        \
                mbar_wait(A_EMPTY(sl_), (uint32_t)((t_ / NA) & 1));                            \
                S9_ISSUE_A(t_ + NA, sl_);                                                      \
            }                                                                                  \
        }                                                                                      \
        mbar_wait(CONV_FULL(s_), (uint32_t)(((kt) / NCONV) & 1));                              \
        const uint32_t cBh_ = conv_s + (uint32_t)(s_ * CONV);                                  \
        const uint32_t cBl_ = cBh_ + (uint32_t)CT;                                             \
        wgmma_fence();                                                                         \
        _Pragma("unroll") for (int ks = 0; ks < 2; ks++) {                                     \
            S9_WGMMA_F16_RA_N64(corr, CL + 4 * ks, wg_desc(cBh_ + 32 * ks, 64), 1);           \
            if (!SH) S9_WGMMA_F16_RA_N64(corr, CH + 4 * ks, wg_desc(cBl_ + 32 * ks, 64), 1);  \
        }                                                                                      \
        _Pragma("unroll") for (int ks = 0; ks < 2; ks++)                                       \
            S9_WGMMA_F16_RA_N64(tmp, CH + 4 * ks, wg_desc(cBh_ + 32 * ks, 64),                 \
                                (ks > 0 || ((kt) & (CHK - 1)) != 0) ? 1 : 0);                  \
        wgmma_commit();                                                                        \
    } while (0)
        if (N64 && !TF32) {
            uint32_t x0h[8], x0l[8], x1h[8], x1l[8];
            for (int kt = 0; kt < KT; kt += 2) {
                S9_N64_STEP(kt, x0h, x0l, x1h, x1l);
                if (kt + 1 < KT) S9_N64_STEP(kt + 1, x1h, x1l, x0h, x0l);
            }
            /* the last k-tile (its chunk ends with the slice); the wait on
             * every path, so that ptxas sees none reach the epilogue early */
            wgmma_wait0();
            reg_fence(tmp);
            reg_fence(corr);
#pragma unroll
            for (int i = 0; i < 8; i++)
                asm volatile("" : "+r"(x0h[i]), "+r"(x0l[i]), "+r"(x1h[i]), "+r"(x1l[i])::"memory");
            if (KT > 0) {
#pragma unroll
                for (int i = 0; i < 32; i++) acc[i] = __fadd_rn(acc[i], tmp[i]);
                mbar_arrive(CONV_EMPTY((KT - 1) % NCONV));
            }
        }
#undef S9_N64_STEP
/* FP16 register-A k-tile, after its two wgmma groups: the refill of the A
 * stage of k-tile kt - 1 (read by all 8 warps by now), the RN add of a
 * finished chunk's hi*hi (the first NACC accumulator registers), the B
 * stage released */
#define S9_RA_TAIL(NACC)                                                                       \
    do {                                                                                       \
        if (tid == 128 && kt > 0 && kt - 1 + NA < KT) {                                        \
            const int t_ = kt - 1, sl_ = t_ % NA;                                              \
            mbar_wait(A_EMPTY(sl_), (uint32_t)((t_ / NA) & 1));                                \
            S9_ISSUE_A(t_ + NA, sl_);                                                          \
        }                                                                                      \
        wgmma_wait1();                                                                         \
        if (clast) {                                                                           \
            reg_fence(tmp);                                                                    \
            _Pragma("unroll") for (int i_ = 0; i_ < (NACC); i_++) acc[i_] =                    \
                __fadd_rn(acc[i_], tmp[i_]);                                                   \
        }                                                                                      \
        wgmma_wait0();                                                                         \
        reg_fence(corr);                                                                       \
        _Pragma("unroll") for (int i_ = 0; i_ < 8; i_++) asm volatile(""                       \
                                                                      : "+r"(ah[i_]),          \
                                                                        "+r"(al[i_])::"memory"); \
        mbar_arrive(CONV_EMPTY(s));                                                            \
    } while (0)
        /* FU: B = [Q | Omega] (rows 0..63 | 64..127 of the B tiles), all
         * wgmma n64 but hi*hi: corr[0..31] Q's corrections (Alo*Bhi, then
         * Ahi*Blo, as TCEC_FP16's n64 kernel), fresh at each slab's start
         * (scale-d 0); corr[32..63] Omega's (Alo*Bhi, as SHGEMM_FP16's),
         * kept across the slice; hi*hi m64n128 into tmp per chunk. At each
         * slab's end (a chunk's end: kslab is a multiple of the chunk) Q's
         * columns go out as that slab's rows of C and acc[0..31] restarts.
         * (Zeroing corr[0..31] in the loop instead made ptxas serialize
         * every wgmma, C7511.) */
        for (int kt = 0; kt < (FU ? KT : 0); kt++) {
            const int s = kt % NCONV, skt = kslab / S9_BK;
            const int cfirst = (kt & (CHK - 1)) == 0;
            const int clast = ((kt + 1) & (CHK - 1)) == 0 || kt == KT - 1;
            const int sfirst = kt % skt == 0, slast = (kt + 1) % skt == 0;
            const int ia = kt % NA;
            mbar_wait(A_FULL(ia), (uint32_t)((kt / NA) & 1));
            uint32_t ah[8], al[8];
            s9_ra_split16(base + ia * RAW_A, ak, mr, kc, ah, al);
            __syncwarp();
            if ((tid & 31) == 0) mbar_arrive(A_EMPTY(ia));
            mbar_wait(CONV_FULL(s), (uint32_t)((kt / NCONV) & 1));
            const uint32_t cBh = conv_s + (uint32_t)(s * CONV);
            const uint32_t cBl = cBh + (uint32_t)CT;
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < 2; ks++)
                S9_WGMMA_F16_RA(tmp, ah + 4 * ks, wg_desc(cBh + 32 * ks, 64),
                                (ks > 0 || !cfirst) ? 1 : 0);
            wgmma_commit();
#pragma unroll
            for (int ks = 0; ks < 2; ks++) {
                S9_WGMMA_F16_RA_N64(corr, al + 4 * ks, wg_desc(cBh + 32 * ks, 64),
                                    (ks > 0 || !sfirst) ? 1 : 0);
                S9_WGMMA_F16_RA_N64(corr, ah + 4 * ks, wg_desc(cBl + 32 * ks, 64), 1);
                S9_WGMMA_F16_RA_N64(corr + 32, al + 4 * ks, wg_desc(cBh + 4096 + 32 * ks, 64), 1);
            }
            wgmma_commit();
            S9_RA_TAIL(64);
            if (slast) {
                const int t = (kt_base + kt) / skt;
                s9_epilogue(acc, corr, 8, tid, cw, m0, 0, M, N, alpha, 0.0f,
                            C + (long long)t * M, ldc, NULL);
#pragma unroll
                for (int i = 0; i < 32; i++) acc[i] = 0.0f;
            }
        }
        for (int kt = 0; kt < ((N64 && !TF32) || FU ? 0 : KT); kt++) {
            const int s = kt % NCONV;
            /* the chunk (relative to this slice): first / last k-tile */
            const int cfirst = (kt & (CHK - 1)) == 0;
            const int clast = ((kt + 1) & (CHK - 1)) == 0 || kt == KT - 1;
            if (TF32) { /* TF32 A split in registers, hi*hi in n-halves */
                const int ia = kt % NA;
                mbar_wait(A_FULL(ia), (uint32_t)((kt / NA) & 1));
                const unsigned char *sa = base + ia * RAW_A;
                /* fragment words [4 ks + 2 e + h]: row mr + 8h, k 8ks + 4e + l%4;
                 * MN-major: lanes with l/4 >= 4 load e ^ 1 first (bank spread) */
                const int sw = ak ? 0 : ((tid >> 4) & 1);
                uint32_t ah[16], al[16];
#pragma unroll
                for (int ks = 0; ks < 4; ks++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const float v0 = s9_ra_read1(sa, ak, mr + 8 * h, 8 * ks + 4 * sw + (kc >> 1));
                        const float v1 =
                            s9_ra_read1(sa, ak, mr + 8 * h, 8 * ks + 4 * (sw ^ 1) + (kc >> 1));
                        const float x0 = sw ? v1 : v0, x1 = sw ? v0 : v1;
                        float h0, l0, h1, l1;
                        tn_split_tf32(x0, &h0, &l0);
                        tn_split_tf32(x1, &h1, &l1);
                        ah[4 * ks + h] = __float_as_uint(h0);
                        al[4 * ks + h] = __float_as_uint(l0);
                        ah[4 * ks + 2 + h] = __float_as_uint(h1);
                        al[4 * ks + 2 + h] = __float_as_uint(l1);
                    }
                __syncwarp();
                if ((tid & 31) == 0) mbar_arrive(A_EMPTY(ia)); /* A stage read */
                mbar_wait(CONV_FULL(s), (uint32_t)((kt / NCONV) & 1));
                const uint32_t cBh = conv_s + (uint32_t)(s * CONV);
                const uint32_t cBl = cBh + (uint32_t)CT;
                wgmma_fence();
                /* hi*hi, n 0..63 (B rows 0..63) */
#pragma unroll
                for (int ks = 0; ks < 4; ks++)
                    S9_WGMMA_TF32_RA_N64(tmp, ah + 4 * ks, wg_desc(cBh + 32 * ks, 128), ks > 0 ? 1 : 0);
                wgmma_commit();
#pragma unroll
                for (int ks = 0; ks < 4; ks++) { /* (N64: n = 64 too) */
                    S9_WGMMA_TF32_RA_N(N64, corr, al + 4 * ks, wg_desc(cBh + 32 * ks, 128), 1);
                    if (!SH)
                        S9_WGMMA_TF32_RA_N(N64, corr, ah + 4 * ks, wg_desc(cBl + 32 * ks, 128), 1);
                }
                wgmma_commit();
                wgmma_wait1(); /* hi*hi of n 0..63 done; corrections in flight */
#pragma unroll
                for (int i = 0; i < 32; i++) asm volatile("" : "+f"(tmp[i])::"memory");
#pragma unroll
                for (int i = 0; i < 32; i++) acc[i] = __fadd_rn(acc[i], tmp[i]);
                if (!N64) {
                    wgmma_fence();
                    /* hi*hi, n 64..127 (B rows 64..127: 8 KB on) */
#pragma unroll
                    for (int ks = 0; ks < 4; ks++)
                        S9_WGMMA_TF32_RA_N64(tmp, ah + 4 * ks, wg_desc(cBh + 8192 + 32 * ks, 128),
                                             ks > 0 ? 1 : 0);
                    wgmma_commit();
                }
                /* refill the A stage of k-tile kt - 1 (read by all 8 warps by now) */
                if (tid == 128 && kt > 0 && kt - 1 + NA < KT) {
                    const int t = kt - 1, sl = t % NA;
                    mbar_wait(A_EMPTY(sl), (uint32_t)((t / NA) & 1));
                    S9_ISSUE_A(t + NA, sl);
                }
                wgmma_wait0();
                reg_fence(corr);
#pragma unroll
                for (int i = 0; i < 32; i++) asm volatile("" : "+f"(tmp[i])::"memory");
#pragma unroll
                for (int i = 0; i < 16; i++) asm volatile("" : "+r"(ah[i]), "+r"(al[i])::"memory");
                mbar_arrive(CONV_EMPTY(s));
                if (!N64) {
#pragma unroll
                    for (int i = 0; i < 32; i++) acc[32 + i] = __fadd_rn(acc[32 + i], tmp[i]);
                }
            } else { /* A: raw FP32 from shared memory, split in registers */
                const int ia = kt % NA;
                mbar_wait(A_FULL(ia), (uint32_t)((kt / NA) & 1));
                uint32_t ah[8], al[8]; /* [4 ks + reg] */
                s9_ra_split16(base + ia * RAW_A, ak, mr, kc, ah, al);
                __syncwarp();
                if ((tid & 31) == 0) mbar_arrive(A_EMPTY(ia)); /* A stage read */
                mbar_wait(CONV_FULL(s), (uint32_t)((kt / NCONV) & 1));
                const uint32_t cBh = conv_s + (uint32_t)(s * CONV);
                const uint32_t cBl = cBh + (uint32_t)CT;
                wgmma_fence();
                /* (N64: B rows 0..63 only, 32 accumulator registers) */
#pragma unroll
                for (int ks = 0; ks < 2; ks++)
                    S9_WGMMA_F16_RA_N(N64, tmp, ah + 4 * ks, wg_desc(cBh + 32 * ks, 64),
                                      (ks > 0 || !cfirst) ? 1 : 0);
                wgmma_commit();
#pragma unroll
                for (int ks = 0; ks < 2; ks++) {
                    S9_WGMMA_F16_RA_N(N64, corr, al + 4 * ks, wg_desc(cBh + 32 * ks, 64), 1);
                    if (!SH)
                        S9_WGMMA_F16_RA_N(N64, corr, ah + 4 * ks, wg_desc(cBl + 32 * ks, 64), 1);
                }
                wgmma_commit();
                S9_RA_TAIL(N64 ? 32 : 64);
            }
        }
        if (FU) /* Omega's columns: this slice's part, into P */
            s9_epilogue(acc + 32, corr + 32, 8, tid, cw, m0, 0, M, N2, 1.0f, 0.0f, NULL, 0, P);
        else
            s9_epilogue(acc, corr, N64 ? 8 : 16, tid, cw, m0, n0, M, N, alpha, beta, C, ldc, P);
    }
#undef S9_RA_TAIL
#undef S9_ISSUE
#undef S9_ISSUE_A
#undef A_FULL
#undef A_EMPTY
#undef RAW_FULL
#undef CONV_FULL
#undef CONV_EMPTY
#else
    (void)MODE, (void)NV, (void)tmA, (void)tmB, (void)ak, (void)bk, (void)M, (void)N;
    (void)K;
    (void)alpha, (void)beta, (void)C, (void)ldc, (void)kt_split, (void)P, (void)chk;
    (void)kslab, (void)kk, (void)fl, (void)tmO, (void)N2;
#endif
}

/* ---------------------------------------------------- instantiations */
#define S9_KERNEL_N(MODE, N64, NAME)                                                           \
    static __global__ void __launch_bounds__(S9_THREADS, 1)                                    \
        NAME(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, \
             int ak, int bk, int M, int N, int K, float alpha, float beta, float *C,           \
             long long ldc, int kt_split, float *P, int chk, int kslab,                        \
             const __grid_constant__ tn_elem_kinds_t kk, int *fl) {                            \
        s9_body(MODE, N64, &tmA, &tmB, ak, bk, M, N, K, alpha, beta, C, ldc, kt_split, P,      \
                chk, kslab, kk, fl, NULL, 0);                                                  \
    }
/* the 128-wide kernels (the _1: A split in registers) */
#define S9_KERNEL(MODE) S9_KERNEL_N(MODE, 0, tn_sm90_gemm_##MODE##_1)
/* N <= 64 (RP-HOSVD's rank-64 products): the register-A kernels with
 * m64n64 wgmma, half the Tensor Core work of a 128-wide tile */
#define S9_KERNEL64(MODE) S9_KERNEL_N(MODE, 1, tn_sm90_gemm_##MODE##_n64)
/* and the SHGEMM_FP16 one with A's element-wise check folded in (N64 = 2) */
S9_KERNEL_N(2, 2, tn_sm90_gemm_2_n64c)
/* RP-HOSVD's fused pass (tn_cu_sm90_hosvd_fused): TCEC_FP16 with B = [Q |
 * Omega] in the 128-wide register-A kernel */
static __global__ void __launch_bounds__(S9_THREADS, 1)
    tn_sm90_hosvd_fused(const __grid_constant__ CUtensorMap tmA,
                        const __grid_constant__ CUtensorMap tmB,
                        const __grid_constant__ CUtensorMap tmO, int M, int N, int N2, int K,
                        float *C, long long ldc, int kt_split, float *P, int chk, int kslab) {
    const tn_elem_kinds_t kz = {};
    s9_body(TN_KMODE_TCEC_F16, 3, &tmA, &tmB, 1, 1, M, N, K, 1.0f, 0.0f, C, ldc, kt_split, P,
            chk, kslab, kz, NULL, &tmO, N2);
}
S9_KERNEL(0) /* TN_KMODE_TCEC_F16, A split in registers */
S9_KERNEL(2) /* TN_KMODE_SHGEMM_F16, A split in registers */
S9_KERNEL(3) /* TN_KMODE_TCEC_TF32, A split in registers */
S9_KERNEL64(0)
S9_KERNEL64(2)
S9_KERNEL64(3)
S9_KERNEL64(4)
S9_KERNEL(4) /* TN_KMODE_SHGEMM_TF32, A split in registers */

typedef void (*s9_kernel_t)(const CUtensorMap, const CUtensorMap, int, int, int, int, int, float,
                            float, float *, long long, int, float *, int, int,
                            const tn_elem_kinds_t, int *);

/* The register-A kernels, for all four methods (the TF32 ones take
 * one 32-product chunk per RN add, s9_chunk's). */
static s9_kernel_t s9_kernel(int mode) {
    switch (mode) {
    case TN_KMODE_TCEC_F16: return tn_sm90_gemm_0_1;
    case TN_KMODE_SHGEMM_F16: return tn_sm90_gemm_2_1;
    case TN_KMODE_TCEC_TF32: return tn_sm90_gemm_3_1;
    case TN_KMODE_SHGEMM_TF32: return tn_sm90_gemm_4_1;
    default: return NULL;
    }
}

/* The register-A kernels for N <= 64 (same shared memory layout) */
static s9_kernel_t s9_kernel64(int mode) {
    switch (mode) {
    case TN_KMODE_TCEC_F16: return tn_sm90_gemm_0_n64;
    case TN_KMODE_SHGEMM_F16: return tn_sm90_gemm_2_n64;
    case TN_KMODE_TCEC_TF32: return tn_sm90_gemm_3_n64;
    case TN_KMODE_SHGEMM_TF32: return tn_sm90_gemm_4_n64;
    default: return NULL;
    }
}
/* N <= 64 takes the n64 kernels */
static int s9_use_n64(int64_t n) { return n <= 64; }

/* ------------------------------------------------------- host side */
extern "C" size_t tn_cu_sm90_smem(int mode) {
    if (!s9_kernel(mode)) return 0;
    return (size_t)s9_smem(mode);
}

extern "C" int tn_cu_sm90_available(int mode) {
    s9_kernel_t k = s9_kernel(mode);
    if (!k) return 0;
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, (const void *)k) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    /* the sm_90a cubin only (a PTX JIT or the sm_80 cubin has empty bodies) */
    if (attr.binaryVersion != 90) return 0;
    return s9_encoder() != NULL;
}

/* k-tiles (of 32) per chunk: hi*hi products summed inside the Tensor Core
 * before each RN add into the FP32 result. Defaults (H200 measurements):
 * 64 products for FP16 (SHGEMM_FP16
 * +7 % at 8192^3, error lower there, at most 0.65x SGEMM's in the tests),
 * 32 for TF32 (64 is 1-2 % faster but its error rises to 0.86x SGEMM's at
 * m = n = 256, k = 8192). */
static int s9_chunk(int mode) { return s9_tf32(mode) ? 1 : 2; }

/* Split-K's sum, C = alpha (P_0 + ... + P_(S-1)) + beta C, each element
 * by RN adds in slice order. Nothing is written when fl is given
 * and one of fl[0 .. 2] is set (the deferred checks of gemm_wide, read here
 * so that the host need not wait for them before the launch). V = 4: four
 * rows at a time (m, ldc and the pointers 16-byte aligned), one 16-byte
 * load per slice and store: H200, 16384 x 512, S = 1, beta = 0: 20 us,
 * against 55 us one element at a time. */
static __device__ __forceinline__ float s9_reduce1(float r, float alpha, float beta, const float *c) {
    const float v = __fmul_rn(alpha, r);
    return beta != 0.0f ? __fadd_rn(v, __fmul_rn(beta, *c)) : v;
}
static __global__ void s9_splitk_reduce(int S, const float *P, long long m, long long n,
                                        float alpha, float beta, float *C, long long ldc,
                                        const int *fl, int V) {
    if (fl && (fl[0] | fl[1] | fl[2])) return;
    const long long mv = m / V;
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < mv;
             i += (long long)gridDim.x * blockDim.x) {
            float *c = C + V * i + j * ldc;
            if (V == 4) {
                const float4 *p = (const float4 *)(P + j * m) + i;
                float4 r = p[0];
                for (int z = 1; z < S; z++) {
                    const float4 q = p[(long long)z * mv * n];
                    r.x = __fadd_rn(r.x, q.x), r.y = __fadd_rn(r.y, q.y);
                    r.z = __fadd_rn(r.z, q.z), r.w = __fadd_rn(r.w, q.w);
                }
                float4 v;
                v.x = s9_reduce1(r.x, alpha, beta, c), v.y = s9_reduce1(r.y, alpha, beta, c + 1);
                v.z = s9_reduce1(r.z, alpha, beta, c + 2), v.w = s9_reduce1(r.w, alpha, beta, c + 3);
                *(float4 *)c = v;
            } else {
                const float *p = P + i + j * m;
                float r = p[0];
                for (int z = 1; z < S; z++) r = __fadd_rn(r, p[(long long)z * m * n]);
                *c = s9_reduce1(r, alpha, beta, c);
            }
        }
}

/* A 3-D tensor map of T slabs of a column-major rows x cols matrix (leading
 * dim ld, slab stride sstride elements), box box0 x box1 x 1. */
static int s9_map3(CUtensorMap *map, s9_encode_fn enc, const float *X, int64_t rows,
                   int64_t cols, int64_t ld, int64_t T, int64_t sstride, int box0, int box1,
                   CUtensorMapSwizzle sw) {
    cuuint64_t dim[3] = {(cuuint64_t)rows, (cuuint64_t)cols, (cuuint64_t)T};
    cuuint64_t stride[2] = {(cuuint64_t)ld * 4u, (cuuint64_t)sstride * 4u};
    cuuint32_t box[3] = {(cuuint32_t)box0, (cuuint32_t)box1, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)X, dim, stride, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : -1;
}

static int s9_launch(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *A, int64_t lda, int64_t slabs, int64_t sstride,
                     const void *B, int64_t ldb, float beta, float *C, int64_t ldc, int splits,
                     float *P, size_t smem_limit, cudaStream_t stream,
                     const tn_elem_kinds_t *kk, int *fl);

extern "C" int tn_cu_tc_gemm_sm90(int mode, int transa, int transb, int64_t m, int64_t n,
                                  int64_t k, float alpha, const float *A, int64_t lda,
                                  const void *B, int64_t ldb, float beta, float *C, int64_t ldc,
                                  int splits, float *P, size_t smem_limit, cudaStream_t stream,
                                  const tn_elem_kinds_t *kk, int *aflags) {
    return s9_launch(mode, transa, transb, m, n, k, alpha, A, lda, 0, 0, B, ldb, beta, C, ldc,
                     splits, P, smem_limit, stream, kk, aflags);
}

extern "C" int tn_cu_tc_gemm_sm90_slabs(int mode, int64_t m, int64_t n, int64_t kslab,
                                        int64_t slabs, float alpha, const float *A, int64_t lda,
                                        int64_t sstride, const void *B, int64_t ldb, float beta,
                                        float *C, int64_t ldc, int splits, float *P,
                                        size_t smem_limit, cudaStream_t stream) {
    if (kslab % S9_BK || slabs < 1 || kslab * slabs > 0x7fffffffLL)
        return (int)cudaErrorNotSupported;
    return s9_launch(mode, 1, 0, m, n, kslab * slabs, alpha, A, lda, slabs, sstride, B, ldb,
                     beta, C, ldc, splits, P, smem_limit, stream, NULL, NULL);
}

/* slabs = 0: op(A) one 2-D matrix; slabs > 0: op(A) = [A_0^T .. A_{slabs-1}^T],
 * A_t = A + t sstride (k / slabs x m, K contiguous: transa) */
static int s9_launch(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *A, int64_t lda, int64_t slabs, int64_t sstride,
                     const void *B, int64_t ldb, float beta, float *C, int64_t ldc, int splits,
                     float *P, size_t smem_limit, cudaStream_t stream,
                     const tn_elem_kinds_t *kk, int *fl) {
    const int n64 = s9_use_n64(n);
    s9_kernel_t kern = n64 ? s9_kernel64(mode) : s9_kernel(mode);
    if (!kern || !tn_cu_sm90_available(mode)) return (int)cudaErrorNotSupported;
    /* the folded check: SHGEMM_FP16's n64 kernel only */
    if (fl && (!kk || !n64 || mode != TN_KMODE_SHGEMM_F16)) return (int)cudaErrorNotSupported;
    if (fl) kern = tn_sm90_gemm_2_n64c;
    tn_elem_kinds_t kz;
    memset(&kz, 0, sizeof kz);
    const size_t smem = (size_t)s9_smem(mode);
    if (smem > smem_limit) return (int)cudaErrorNotSupported;
    const int sh = s9_sh(mode);
    const int es_b = sh ? 2 : 4;
    /* TMA: 16-byte aligned bases and strides */
    if (((uintptr_t)A & 15u) || ((uintptr_t)B & 15u) || (lda * 4) % 16 || (ldb * es_b) % 16)
        return (int)cudaErrorNotSupported;
    if (m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL)
        return (int)cudaErrorNotSupported;
    int64_t tiles = ((m + S9_BM - 1) / S9_BM) * ((n + S9_BN - 1) / S9_BN);
    int64_t kt = (k + S9_BK - 1) / S9_BK;
    if (tiles > 0x7fffffffLL) return (int)cudaErrorNotSupported;
    if (splits < 1 || !P) splits = 1;
    if (splits > 65535) return (int)cudaErrorInvalidValue;
    const int per = (int)((kt + splits - 1) / splits);

    s9_encode_fn enc = s9_encoder();
    CUtensorMap mA, mB;
    const int ak = transa != 0, bk = transb == 0; /* K contiguous in memory */
    int bad = 0;
    /* A: op N is m x k (M contiguous), op T is k x m (K contiguous) */
    const int64_t kslab = slabs ? k / slabs : 0;
    if (slabs && ((sstride * 4) % 16 || !ak)) return (int)cudaErrorNotSupported;
    if (slabs)
        bad |= s9_map3(&mA, enc, A, kslab, m, lda, slabs, sstride, S9_BK, S9_BM,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    else if (ak)
        bad |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, k, m, lda, S9_BK, S9_BM,
                      CU_TENSOR_MAP_SWIZZLE_128B);
    else /* four boxes of 32 m x 32 k, 128-byte swizzle (s9_ra_read2) */
        bad |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, m, k, lda, 32, S9_BK,
                      CU_TENSOR_MAP_SWIZZLE_128B);
    /* B: op N is k x n (K contiguous), op T is n x k (N contiguous) */
    const CUtensorMapDataType bt = sh ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    if (bk)
        bad |= s9_map(&mB, enc, bt, es_b, B, k, n, ldb, S9_BK, S9_BN,
                      sh ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B);
    else
        bad |= s9_map(&mB, enc, bt, es_b, B, n, k, ldb, S9_BN, S9_BK, CU_TENSOR_MAP_SWIZZLE_NONE);
    if (bad) return (int)cudaErrorNotSupported;

    cudaError_t e = cudaFuncSetAttribute((const void *)kern,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
    kern<<<dim3((unsigned)tiles, (unsigned)splits), S9_THREADS, smem, stream>>>(
        mA, mB, ak, bk, (int)m, (int)n, (int)k, alpha, beta, C, (long long)ldc, per,
        splits > 1 ? P : NULL, s9_chunk(mode), (int)kslab, fl ? *kk : kz, fl);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    if (splits > 1) e = (cudaError_t)tn_cu_sm90_splitk_reduce(splits, P, m, n, alpha, beta, C, ldc,
                                                            stream);
    return (int)e;
}

extern "C" int tn_cu_sm90_splitk_reduce_unless(int splits, const float *P, int64_t m, int64_t n,
                                               float alpha, float beta, float *C, int64_t ldc,
                                               const int *flags, cudaStream_t stream) {
    const int V = m % 4 == 0 && ldc % 4 == 0 && ((uintptr_t)P & 15u) == 0 &&
                          ((uintptr_t)C & 15u) == 0
                      ? 4
                      : 1;
    int64_t gx = (m / V + 255) / 256, gy = n;
    if (gx > 4096) gx = 4096;
    if (gy > 65535) gy = 65535;
    s9_splitk_reduce<<<dim3((unsigned)gx, (unsigned)gy), 256, 0, stream>>>(
        splits, P, (long long)m, (long long)n, alpha, beta, C, (long long)ldc, flags, V);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_sm90_splitk_reduce(int splits, const float *P, int64_t m, int64_t n,
                                        float alpha, float beta, float *C, int64_t ldc,
                                        cudaStream_t stream) {
    return tn_cu_sm90_splitk_reduce_unless(splits, P, m, n, alpha, beta, C, ldc, NULL, stream);
}

extern "C" int tn_cu_sm90_chunk(int mode) { return s9_chunk(mode); }

/* RP-HOSVD's fused pass over an order >= 3 tensor held as T slabs of I1 x I2
 * (slab t at A + t I1 I2, column-major, ld I1): one read of the tensor
 * gives both
 *   Out (rows i2 + I2 t, J1 columns, ld ldout) = slab_t^T Q    (TCEC_FP16:
 *       the core's first mode product, Q I1 x J1 FP32), and
 *   W (I2 x J2, ld ldw) = sum_t slab_t^T Omega_t               (SHGEMM_FP16:
 *       the mode-2 projection, Omega (I1 T) x J2 FP16 bits, Omega_t its
 *       rows t I1 ..),
 * as tcnla_sgemm and tn_sgemm_batched compute them on Hopper (the same
 * split, chunks and sums; the projection's split-K slices are whole slabs,
 * so its sum may group differently from the unfused product's). The
 * 128-wide TCEC_FP16 register-A kernel with B = [Q | Omega]: Omega's 64
 * columns have no lo part (their Ahi * Blo is not issued); Q's columns are
 * written and cleared at each slab's end, Omega's kept across the slice,
 * each slice (`per` slabs) into P (ceil(T / per) x I2 x J2 floats), summed
 * into W after.
 * Operands unchecked: the caller has checked or trusted them. Conditions:
 * the sm_90a cubin, J1, J2 <= 64, I1 a multiple of 32 x the chunk (64),
 * 16-byte aligned A, Q, Omega with ld's to match, I1 T < 2^31. */
extern "C" int tn_cu_sm90_hosvd_fused_ok(int64_t I1, int64_t I2, int64_t T, const float *A,
                                         const float *Q, int64_t ldq, int64_t J1,
                                         const uint16_t *Om, int64_t ldo, int64_t J2,
                                         size_t smem_limit) {
    if (!tn_cu_sm90_available(TN_KMODE_TCEC_F16)) return 0;
    if ((size_t)s9_smem(TN_KMODE_TCEC_F16) > smem_limit) return 0;
    const int chk = s9_chunk(TN_KMODE_TCEC_F16);
    return J1 >= 1 && J1 <= 64 && J2 >= 1 && J2 <= 64 && I2 >= 1 && T >= 1 &&
           I1 % (S9_BK * chk) == 0 && I1 >= S9_BK * chk && I1 * T <= 0x7fffffffLL &&
           I2 <= 0x7fffffffLL && ((uintptr_t)A & 15u) == 0 && ((uintptr_t)Q & 15u) == 0 &&
           ((uintptr_t)Om & 15u) == 0 && I1 % 4 == 0 && (I1 * I2) % 4 == 0 && ldq % 4 == 0 &&
           ldq >= I1 && ldo % 8 == 0 && ldo >= I1 * T;
}

extern "C" int tn_cu_sm90_hosvd_fused(int64_t I1, int64_t I2, int64_t T, const float *A,
                                      const float *Q, int64_t ldq, int64_t J1, const uint16_t *Om,
                                      int64_t ldo, int64_t J2, float *Out, int64_t ldout, float *W,
                                      int64_t ldw, float *P, int64_t per, size_t smem_limit,
                                      cudaStream_t stream) {
    if (!tn_cu_sm90_hosvd_fused_ok(I1, I2, T, A, Q, ldq, J1, Om, ldo, J2, smem_limit) || !P)
        return (int)cudaErrorNotSupported;
    if (per < 1 || per > T) per = T; /* slabs per slice */
    const int splits = (int)((T + per - 1) / per);
    if (splits > 65535) return (int)cudaErrorInvalidValue;
    s9_encode_fn enc = s9_encoder();
    CUtensorMap mA, mB, mO;
    int bad = s9_map3(&mA, enc, A, I1, I2, I1, T, I1 * I2, S9_BK, S9_BM, CU_TENSOR_MAP_SWIZZLE_128B);
    bad |= s9_map(&mB, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, Q, I1, J1, ldq, S9_BK, 64,
                  CU_TENSOR_MAP_SWIZZLE_128B);
    bad |= s9_map(&mO, enc, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, Om, I1 * T, J2, ldo, S9_BK, 64,
                  CU_TENSOR_MAP_SWIZZLE_64B);
    if (bad) return (int)cudaErrorNotSupported;
    const size_t smem = (size_t)s9_smem(TN_KMODE_TCEC_F16);
    cudaError_t e = cudaFuncSetAttribute((const void *)tn_sm90_hosvd_fused,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
    const unsigned tiles = (unsigned)((I2 + S9_BM - 1) / S9_BM);
    tn_sm90_hosvd_fused<<<dim3(tiles, (unsigned)splits), S9_THREADS, smem, stream>>>(
        mA, mB, mO, (int)I2, (int)J1, (int)J2, (int)(I1 * T), Out, (long long)ldout,
        (int)(per * (I1 / S9_BK)), P, s9_chunk(TN_KMODE_TCEC_F16), (int)I1);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    return tn_cu_sm90_splitk_reduce(splits, P, I2, J2, 1.0f, 0.0f, W, ldw, stream);
}
