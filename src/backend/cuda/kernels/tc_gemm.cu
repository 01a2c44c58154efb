/* Error-corrected single-precision GEMM on Tensor Cores with mma.sync
 * (sm_80+): TCEC_FP16 / TCEC_TF32 [Ootomo & Yokota 2021], SHGEMM_FP16 / SHGEMM_TF32
 * ([Ootomo & Yokota 2023] section 4) and the MARKIDIS_FP16 baseline.
 *
 * One kernel body, specialised by compile-time constants of an inlined
 * function (C-style CUDA, no templates):
 *
 *   global --cp.async 16B--> FP32 (or FP16) stage ring in shared memory
 *          --split pass-->   hi / lo tiles (FP16 or TF32) in shared memory,
 *                            K-contiguous and XOR-swizzled
 *          --ldmatrix-->     mma.sync fragments --> register accumulators
 *
 * The split happens as each k-tile is staged (no full-size split copies in
 * device memory) and is bit-identical to tcnla_split(). Per mma instruction
 * (16 products for FP16, 8 for TF32) the hi*hi product comes out of a fresh
 * Tensor Core accumulator (C = 0) and is added into the FP32 result with an
 * ordinary RN add outside the Tensor Core (the RZ avoidance of [Ootomo & Yokota 2021]
 * Fig. 4); the correction terms dA*Bhi (+ Ahi*dB) accumulate inside the
 * Tensor Core in their own accumulator; dA*dB is dropped; the result is
 * acc + corr * 2^-11. MARKIDIS accumulates its four products in one
 * accumulator inside the Tensor Core (no scaling), as the baseline does.
 *
 * Block tile 128 x 128 x 32, 8 warps (2 x 4), warp tile 64 x 32. On
 * Hopper (the sm_90a build) the stage ring is deeper and the split tiles
 * are double-buffered so that one barrier per k-tile suffices and the split
 * of tile k+1 overlaps the products of tile k across warps; the sm_80 build
 * (A100 and the PTX for later GPUs) uses less shared memory. */
#include "backend/cuda/kernels/split.cuh"
#include "backend/cuda/tn_cuda.h"

#include <cuda_fp16.h>
#include <stdint.h>

#define TN_BM 128
#define TN_BN 128
#define TN_BK 32
#define TN_THREADS 256

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TN_BIG 1
#else
#define TN_BIG 0
#endif

/* ---------------------------------------------------- configuration */
static __host__ __device__ __forceinline__ int cfg_tf32(int mode) {
    return mode == TN_KMODE_TCEC_TF32 || mode == TN_KMODE_SHGEMM_TF32;
}
static __host__ __device__ __forceinline__ int cfg_bf16(int mode) {
    return mode == TN_KMODE_SHGEMM_F16 || mode == TN_KMODE_SHGEMM_TF32;
}
static __host__ __device__ __forceinline__ int cfg_stages(int mode, int big) {
    return big ? (cfg_tf32(mode) ? 3 : 4) : 3;
}
static __host__ __device__ __forceinline__ int cfg_nconv(int big) { return big ? 2 : 1; }
static __host__ __device__ __forceinline__ int cfg_stage_bytes(int mode) {
    return TN_BM * TN_BK * 4 + TN_BN * TN_BK * (cfg_bf16(mode) ? 2 : 4);
}
/* one hi or lo tile of the split operands */
static __host__ __device__ __forceinline__ int cfg_conv_tile(int mode) {
    return TN_BM * TN_BK * (cfg_tf32(mode) ? 4 : 2);
}
static __host__ __device__ __forceinline__ int cfg_conv_bytes(int mode) {
    return (2 + (cfg_bf16(mode) ? 1 : 2)) * cfg_conv_tile(mode);
}
static __host__ __device__ __forceinline__ int cfg_smem(int mode, int big) {
    return cfg_stages(mode, big) * cfg_stage_bytes(mode) + cfg_nconv(big) * cfg_conv_bytes(mode);
}

/* ------------------------------------------------------- primitives */
static __device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void cp_async_commit(void) {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
static __device__ __forceinline__ void cp_async_wait(const int n) {
    if (n <= 0) asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (n == 1) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else asm volatile("cp.async.wait_group 2;\n" ::: "memory");
}
static __device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t *r0, uint32_t *r1,
                                               uint32_t *r2, uint32_t *r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(*r0), "=r"(*r1), "=r"(*r2), "=r"(*r3)
                 : "r"(addr)
                 : "memory");
}
/* D = A * B + C, m16n8k16, FP16 inputs, FP32 accumulate. */
static __device__ __forceinline__ void mma_f16(float *d, const uint32_t *a, const uint32_t *b,
                                               const float *c) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
          "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
/* D = A * B + C, m16n8k8, TF32 inputs, FP32 accumulate. */
static __device__ __forceinline__ void mma_tf32(float *d, const uint32_t *a, const uint32_t *b,
                                                const float *c) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
          "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
static __device__ __forceinline__ void mma_any(const int tf32, float *d, const uint32_t *a,
                                               const uint32_t *b, const float *c) {
    if (tf32) mma_tf32(d, a, b, c);
    else mma_f16(d, a, b, c);
}

/* -------------------------------------------------- global -> stage */
/* FP32 operand, K contiguous in global memory (A with op T, B with op N):
 * stage [128 rows][32 k] floats, 16-byte chunk c of row r at c ^ (r & 7). */
static __device__ __forceinline__ void load_f32_kmaj(uint32_t st, const float *X, long long ld,
                                                     int nrows, int r0, int k0, int K) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int id = tid + TN_THREADS * j, r = id >> 3, c = id & 7;
        int gr = r0 + r, p = k0 + 4 * c;
        int valid = gr < nrows ? min(max(K - p, 0), 4) : 0;
        const float *src = valid > 0 ? X + (long long)gr * ld + p : X;
        cp_async16(st + r * 128 + ((c ^ (r & 7)) << 4), src, valid * 4);
    }
}
/* FP32 operand, M (or N) contiguous (A with op N, B with op T):
 * stage [32 k][128 rows] floats. */
static __device__ __forceinline__ void load_f32_mnmaj(uint32_t st, const float *X, long long ld,
                                                      int nrows, int r0, int k0, int K) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int id = tid + TN_THREADS * j, kk = id >> 5, c = id & 31;
        int p = k0 + kk, gr = r0 + 4 * c;
        int valid = p < K ? min(max(nrows - gr, 0), 4) : 0;
        const float *src = valid > 0 ? X + (long long)p * ld + gr : X;
        cp_async16(st + kk * 512 + c * 16, src, valid * 4);
    }
}
/* FP16 operand, K contiguous: stage [128][32] halves, chunk c of row r at
 * c ^ ((r >> 1) & 3). */
static __device__ __forceinline__ void load_f16_kmaj(uint32_t st, const uint16_t *X, long long ld,
                                                     int nrows, int r0, int k0, int K) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        int id = tid + TN_THREADS * j, r = id >> 2, c = id & 3;
        int gr = r0 + r, p = k0 + 8 * c;
        int valid = gr < nrows ? min(max(K - p, 0), 8) : 0;
        const uint16_t *src = valid > 0 ? X + (long long)gr * ld + p : X;
        cp_async16(st + r * 64 + ((c ^ ((r >> 1) & 3)) << 4), src, valid * 2);
    }
}
/* FP16 operand, N contiguous: stage [32 k][128] halves. */
static __device__ __forceinline__ void load_f16_mnmaj(uint32_t st, const uint16_t *X,
                                                      long long ld, int nrows, int r0, int k0,
                                                      int K) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        int id = tid + TN_THREADS * j, kk = id >> 4, c = id & 15;
        int p = k0 + kk, gr = r0 + 8 * c;
        int valid = p < K ? min(max(nrows - gr, 0), 8) : 0;
        const uint16_t *src = valid > 0 ? X + (long long)p * ld + gr : X;
        cp_async16(st + kk * 256 + c * 16, src, valid * 2);
    }
}

/* ------------------------------------------------- stage -> split tiles */
/* Reads the 8 consecutive k values (8q .. 8q+7) of row r of an FP32 stage. */
static __device__ __forceinline__ void read8_f32(const unsigned char *st, const int kmaj, int r,
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
/* Same for an FP16 stage, as 4 packed FP16x2 words. */
static __device__ __forceinline__ void read8_f16(const unsigned char *st, const int kmaj, int r,
                                                 int q, uint32_t *h) {
    if (kmaj) {
        uint4 v = *(const uint4 *)(st + r * 64 + ((q ^ ((r >> 1) & 3)) << 4));
        h[0] = v.x; h[1] = v.y; h[2] = v.z; h[3] = v.w;
    } else {
        const unsigned short *s = (const unsigned short *)st;
        unsigned short e[8];
#pragma unroll
        for (int i = 0; i < 8; i++) e[i] = s[(8 * q + i) * 128 + r];
#pragma unroll
        for (int i = 0; i < 4; i++) h[i] = (uint32_t)e[2 * i] | ((uint32_t)e[2 * i + 1] << 16);
    }
}
/* Byte offset of the 16-byte chunk c of row r in a split tile. */
static __device__ __forceinline__ int conv_off(const int tf32, int r, int c) {
    return tf32 ? r * 128 + ((c ^ (r & 7)) << 4) : r * 64 + ((c ^ ((r >> 1) & 3)) << 4);
}

/* Splits one 128 x 32 FP32 stage tile into hi / lo tiles.
 * split: 0 Markidis, 1 halfhalf, 2 tf32tf32. */
static __device__ __forceinline__ void split_f32_tile(const unsigned char *st, const int kmaj,
                                                      const int split, unsigned char *hi,
                                                      unsigned char *lo) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        int u = tid + TN_THREADS * j, r = u & 127, q = u >> 7;
        float x[8];
        read8_f32(st, kmaj, r, q, x);
        if (split == 2) {
            float h[8], l[8];
#pragma unroll
            for (int e = 0; e < 8; e++) tn_split_tf32(x[e], &h[e], &l[e]);
            *(float4 *)(hi + conv_off(1, r, 2 * q)) = make_float4(h[0], h[1], h[2], h[3]);
            *(float4 *)(hi + conv_off(1, r, 2 * q + 1)) = make_float4(h[4], h[5], h[6], h[7]);
            *(float4 *)(lo + conv_off(1, r, 2 * q)) = make_float4(l[0], l[1], l[2], l[3]);
            *(float4 *)(lo + conv_off(1, r, 2 * q + 1)) = make_float4(l[4], l[5], l[6], l[7]);
        } else {
            uint32_t h[4], l[4];
#pragma unroll
            for (int e = 0; e < 4; e++) tn_split2_f16(x[2 * e], x[2 * e + 1], split, &h[e], &l[e]);
            *(uint4 *)(hi + conv_off(0, r, q)) = make_uint4(h[0], h[1], h[2], h[3]);
            *(uint4 *)(lo + conv_off(0, r, q)) = make_uint4(l[0], l[1], l[2], l[3]);
        }
    }
}
/* Copies a 128 x 32 FP16 stage tile into the hi tile (FP16, or TF32 where
 * every FP16 value is exact). */
static __device__ __forceinline__ void copy_f16_tile(const unsigned char *st, const int kmaj,
                                                     const int tf32, unsigned char *hi) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        int u = tid + TN_THREADS * j, r = u & 127, q = u >> 7;
        uint32_t h[4];
        read8_f16(st, kmaj, r, q, h);
        if (tf32) {
            float f[8];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                f[2 * e] = tn_h2_lo(h[e]);
                f[2 * e + 1] = tn_h2_hi(h[e]);
            }
            *(float4 *)(hi + conv_off(1, r, 2 * q)) = make_float4(f[0], f[1], f[2], f[3]);
            *(float4 *)(hi + conv_off(1, r, 2 * q + 1)) = make_float4(f[4], f[5], f[6], f[7]);
        } else {
            *(uint4 *)(hi + conv_off(0, r, q)) = make_uint4(h[0], h[1], h[2], h[3]);
        }
    }
}

/* ---------------------------------------------------------- the body */
extern __shared__ __align__(128) unsigned char tn_smem[];

static __device__ __forceinline__ void tc_gemm_body(const int MODE, const int AK, const int BKM,
                                                    int M, int N, int K, float alpha,
                                                    const float *__restrict__ A, long long lda,
                                                    const void *__restrict__ Bv, long long ldb,
                                                    float beta, float *__restrict__ C,
                                                    long long ldc, int kt_split,
                                                    float *__restrict__ P, long long sa,
                                                    long long sb, long long sc, int kts,
                                                    int nseg) {
    const int TF32 = cfg_tf32(MODE);
    const int BF16 = cfg_bf16(MODE);
    const int MARK = MODE == TN_KMODE_MARKIDIS_F16;
    const int SPLIT = MARK ? 0 : (TF32 ? 2 : 1);
    const int NSTAGE = cfg_stages(MODE, TN_BIG);
    const int NCONV = cfg_nconv(TN_BIG);
    const int STAGE_BYTES = cfg_stage_bytes(MODE);
    const int STAGE_A = TN_BM * TN_BK * 4;
    const int CT = cfg_conv_tile(MODE);
    const int CONV_BYTES = cfg_conv_bytes(MODE);
    const int STEPS = TF32 ? 4 : 2; /* mma k-steps per k-tile */

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 2, wn = warp & 3;

    { /* guard: the host sized shared memory for this build's configuration */
        uint32_t dsmem;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsmem));
        if (dsmem < (uint32_t)cfg_smem(MODE, TN_BIG)) return;
    }

    /* grouped rasterisation: 8 block rows share their B panels in L2 */
    const int tiles_m = (M + TN_BM - 1) / TN_BM, tiles_n = (N + TN_BN - 1) / TN_BN;
    const int pid = blockIdx.x, width = 8 * tiles_n, group = pid / width;
    const int first_m = group * 8, gsz = min(tiles_m - first_m, 8);
    const int tm = first_m + (pid % width) % gsz, tn = (pid % width) / gsz;
    const int m0 = tm * TN_BM, n0 = tn * TN_BN;

    unsigned char *stage0 = tn_smem;
    unsigned char *conv0 = tn_smem + NSTAGE * STAGE_BYTES;
    const uint32_t stage0_s = smem_u32(stage0);
    const uint32_t conv0_s = smem_u32(conv0);
    const float *B32 = (const float *)Bv;
    const uint16_t *B16 = (const uint16_t *)Bv;

    /* Batches (strides sa, sb, sc in elements): with nseg == 1 the block
     * computes product blockIdx.z, A + z*sa times B + z*sb into C + z*sc.
     * With nseg > 1 (grid z of 1) the k-tiles are nseg segments of kts
     * tiles, segment s reading A + s*sa and B + s*sb over k = 0 .. K-1:
     * the sum of a batch of products as one product. (The offsets are
     * formed where they are used, so that the base pointers stay kernel
     * parameters rather than registers.) Split-K: slice blockIdx.y covers
     * tiles kt_base .. kt_base + KT - 1 of the nseg * kts and, with P,
     * writes its unscaled result to P[z][slice] instead of C. */
    const int kt_base = blockIdx.y * kt_split;
    const int KT = min(nseg * kts - kt_base, kt_split);

    float acc[4][4][4], corr[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                acc[i][j][e] = 0.0f;
                corr[i][j][e] = 0.0f;
            }
    const float zero4[4] = {0.0f, 0.0f, 0.0f, 0.0f};

/* issue the copies of k-tile t into stage slot s */
#define TN_LOAD_TILE(t, s)                                                                     \
    do {                                                                                       \
        uint32_t sa_ = stage0_s + (s) * STAGE_BYTES, sb_ = sa_ + STAGE_A;                      \
        unsigned g_ = (unsigned)(kt_base + (t));                                               \
        unsigned sg_ = nseg > 1 ? g_ / (unsigned)kts : 0u;                                     \
        int k0_ = (int)(g_ - sg_ * (unsigned)kts) * TN_BK;                                     \
        const long long o_ = nseg > 1 ? (long long)sg_ : (long long)blockIdx.z;                \
        const float *A_ = A + o_ * sa;                                                         \
        if (AK) load_f32_kmaj(sa_, A_, lda, M, m0, k0_, K);                                    \
        else load_f32_mnmaj(sa_, A_, lda, M, m0, k0_, K);                                      \
        if (BF16) {                                                                            \
            const uint16_t *B_ = B16 + o_ * sb;                                                \
            if (BKM) load_f16_kmaj(sb_, B_, ldb, N, n0, k0_, K);                               \
            else load_f16_mnmaj(sb_, B_, ldb, N, n0, k0_, K);                                  \
        } else {                                                                               \
            const float *B_ = B32 + o_ * sb;                                                   \
            if (BKM) load_f32_kmaj(sb_, B_, ldb, N, n0, k0_, K);                               \
            else load_f32_mnmaj(sb_, B_, ldb, N, n0, k0_, K);                                  \
        }                                                                                      \
    } while (0)
/* split the stage slot s into split-tile buffer b */
#define TN_SPLIT_TILE(s, b)                                                                    \
    do {                                                                                       \
        const unsigned char *sa_ = stage0 + (s) * STAGE_BYTES, *sb_ = sa_ + STAGE_A;           \
        unsigned char *cv_ = conv0 + (b) * CONV_BYTES;                                         \
        split_f32_tile(sa_, AK, SPLIT, cv_, cv_ + CT);                                         \
        if (BF16) copy_f16_tile(sb_, BKM, TF32, cv_ + 2 * CT);                                 \
        else split_f32_tile(sb_, BKM, SPLIT, cv_ + 2 * CT, cv_ + 3 * CT);                      \
    } while (0)

    /* prologue: NSTAGE-1 tiles in flight, tile 0 split */
#pragma unroll
    for (int s = 0; s < NSTAGE - 1; s++) {
        if (s < KT) TN_LOAD_TILE(s, s);
        cp_async_commit();
    }
    cp_async_wait(NSTAGE - 2);
    __syncthreads();
    if (KT > 0) TN_SPLIT_TILE(0, 0);

    /* per-lane parts of the ldmatrix addresses */
    const int a_row = wm * 64 + (lane & 7) + ((lane >> 3) & 1) * 8, a_ch = lane >> 4;
    const int b_row = wn * 32 + (lane & 7) + (lane >> 4) * 8, b_ch = (lane >> 3) & 1;

    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait(NSTAGE - 3); /* tile kt+1 has landed (this thread's copies) */
        __syncthreads();           /* ... everyone's; split tile kt complete */
        {
            int nt = kt + NSTAGE - 1;
            if (nt < KT) TN_LOAD_TILE(nt, nt % NSTAGE);
            cp_async_commit();
        }
        const uint32_t cv = conv0_s + (kt % NCONV) * CONV_BYTES;
        const uint32_t cAh = cv, cAl = cv + CT, cBh = cv + 2 * CT, cBl = cv + 3 * CT;
#pragma unroll
        for (int s = 0; s < STEPS; s++) {
            uint32_t ah[4][4], al[4][4], bh[4][2], bl[4][2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int r = a_row + 16 * i;
                uint32_t off = (uint32_t)conv_off(TF32, r, 2 * s + a_ch);
                ldsm_x4(cAh + off, &ah[i][0], &ah[i][1], &ah[i][2], &ah[i][3]);
                ldsm_x4(cAl + off, &al[i][0], &al[i][1], &al[i][2], &al[i][3]);
            }
#pragma unroll
            for (int jj = 0; jj < 2; jj++) {
                int r = b_row + 16 * jj;
                uint32_t off = (uint32_t)conv_off(TF32, r, 2 * s + b_ch);
                ldsm_x4(cBh + off, &bh[2 * jj][0], &bh[2 * jj][1], &bh[2 * jj + 1][0],
                        &bh[2 * jj + 1][1]);
                if (!BF16)
                    ldsm_x4(cBl + off, &bl[2 * jj][0], &bl[2 * jj][1], &bl[2 * jj + 1][0],
                            &bl[2 * jj + 1][1]);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (MARK) {
                        mma_f16(acc[i][j], al[i], bl[j], acc[i][j]);
                        mma_f16(acc[i][j], al[i], bh[j], acc[i][j]);
                        mma_f16(acc[i][j], ah[i], bl[j], acc[i][j]);
                        mma_f16(acc[i][j], ah[i], bh[j], acc[i][j]);
                    } else {
                        float t[4];
                        mma_any(TF32, t, ah[i], bh[j], zero4);
#pragma unroll
                        for (int e = 0; e < 4; e++) acc[i][j][e] = __fadd_rn(acc[i][j][e], t[e]);
                        mma_any(TF32, corr[i][j], al[i], bh[j], corr[i][j]);
                        if (!BF16) mma_any(TF32, corr[i][j], ah[i], bl[j], corr[i][j]);
                    }
                }
        }
        if (kt + 1 < KT) {
            if (NCONV == 1) __syncthreads(); /* the single split buffer is free again */
            TN_SPLIT_TILE((kt + 1) % NSTAGE, (kt + 1) % NCONV);
        }
    }
    cp_async_wait(0);
#undef TN_LOAD_TILE
#undef TN_SPLIT_TILE

    /* epilogue: r = acc + corr * 2^-11; C = alpha * r (+ beta * C) */
    const int g = lane >> 2, t4 = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int gi = m0 + wm * 64 + 16 * i + g + 8 * h;
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    int gj = n0 + wn * 32 + 8 * j + 2 * t4 + e;
                    float r = acc[i][j][2 * h + e];
                    if (!MARK) r = __fadd_rn(r, __fmul_rn(corr[i][j][2 * h + e], TN_SPLIT_INV_SCALE));
                    if (gi < M && gj < N) {
                        if (P) {
                            P[((long long)blockIdx.z * gridDim.y + blockIdx.y) * M * N + gi +
                              (long long)gj * M] = r;
                        } else {
                            float *p = C + (long long)blockIdx.z * sc + gi + (long long)gj * ldc;
                            float v = __fmul_rn(alpha, r);
                            if (beta != 0.0f) v = __fadd_rn(v, __fmul_rn(beta, *p));
                            *p = v;
                        }
                    }
                }
            }
}

/* ---------------------------------------------------- instantiations */
typedef void (*tn_tc_kernel_t)(int, int, int, float, const float *, long long, const void *,
                               long long, float, float *, long long, int, float *, long long,
                               long long, long long, int, int);

#define TN_TC_KERNEL(MODE, AK, BKM)                                                            \
    static __global__ void __launch_bounds__(TN_THREADS, 1)                                    \
        tn_tc_gemm_##MODE##_##AK##_##BKM(int M, int N, int K, float alpha, const float *A,     \
                                         long long lda, const void *B, long long ldb,          \
                                         float beta, float *C, long long ldc, int kt_split,    \
                                         float *P, long long sa, long long sb, long long sc,   \
                                         int kts, int nseg) {                                  \
        tc_gemm_body(MODE, AK, BKM, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, kt_split, P, \
                     sa, sb, sc, kts, nseg);                                                   \
    }
#define TN_TC_KERNELS(MODE)                                                                    \
    TN_TC_KERNEL(MODE, 0, 0)                                                                   \
    TN_TC_KERNEL(MODE, 0, 1)                                                                   \
    TN_TC_KERNEL(MODE, 1, 0)                                                                   \
    TN_TC_KERNEL(MODE, 1, 1)
TN_TC_KERNELS(0)
TN_TC_KERNELS(1)
TN_TC_KERNELS(2)
TN_TC_KERNELS(3)
TN_TC_KERNELS(4)

#define TN_TC_ROW(MODE)                                                                        \
    {tn_tc_gemm_##MODE##_0_0, tn_tc_gemm_##MODE##_0_1, tn_tc_gemm_##MODE##_1_0,                \
     tn_tc_gemm_##MODE##_1_1}
static const tn_tc_kernel_t tn_tc_kernels[TN_KMODE_COUNT][4] = {
    TN_TC_ROW(0), TN_TC_ROW(1), TN_TC_ROW(2), TN_TC_ROW(3), TN_TC_ROW(4)};

/* ------------------------------------------------------- host side */
extern "C" size_t tn_cu_tc_gemm_smem(int mode, int big) {
    if (mode < 0 || mode >= TN_KMODE_COUNT) return 0;
    return (size_t)cfg_smem(mode, big);
}

extern "C" int tn_cu_tc_gemm_config(void) {
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, (const void *)tn_tc_kernels[0][0]);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return -(int)e;
    }
    /* the sm_90a build (big) runs on cc 9.x; the sm_80 cubin and the
     * compute_80 PTX (small) everywhere else */
    return (attr.ptxVersion >= 90 && attr.binaryVersion >= 90 && attr.binaryVersion < 100) ? 1 : 0;
}

extern "C" int tn_cu_tc_gemm_splits_batched(int64_t m, int64_t n, int64_t k, int64_t batch,
                                            int reduce, int sm_count) {
    int64_t tiles = ((m + TN_BM - 1) / TN_BM) * ((n + TN_BN - 1) / TN_BN);
    int64_t kt = (k + TN_BK - 1) / TN_BK;
    if (batch < 1) batch = 1;
    if (reduce) kt *= batch; /* the k-tiles of all products, one after another */
    else tiles *= batch;     /* every product's tiles run side by side */
    if (sm_count <= 0 || tiles >= sm_count || kt < 16) return 1;
    /* one block per SM: fill one wave, at least 8 k-tiles per slice */
    int64_t s = sm_count / tiles, smax = kt / 8;
    if (s > smax) s = smax;
    if (s > 64) s = 64;
    if (s < 1) s = 1;
    int64_t per = (kt + s - 1) / s; /* no empty slice */
    return (int)((kt + per - 1) / per);
}

extern "C" int tn_cu_tc_gemm_splits(int64_t m, int64_t n, int64_t k, int sm_count) {
    return tn_cu_tc_gemm_splits_batched(m, n, k, 1, 0, sm_count);
}

/* C_z = alpha * (P_z[0] + ... + P_z[S-1]) + beta * C_z (slices added in
 * order, FP32 RN) for the products z of a batch: P_z = P + z*S*m*n,
 * C_z = C + z*sc. */
static __global__ void splitk_reduce_kernel(int S, const float *P, long long m, long long n,
                                            float alpha, float beta, float *C, long long ldc,
                                            long long sc, long long batch) {
    for (long long z = blockIdx.z; z < batch; z += gridDim.z)
        for (long long j = blockIdx.y; j < n; j += gridDim.y)
            for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
                 i += (long long)gridDim.x * blockDim.x) {
                const float *p = P + z * S * m * n + i + j * m;
                float r = p[0];
                for (int q = 1; q < S; q++) r = __fadd_rn(r, p[(long long)q * m * n]);
                float *c = C + z * sc + i + j * ldc;
                float v = __fmul_rn(alpha, r);
                if (beta != 0.0f) v = __fadd_rn(v, __fmul_rn(beta, *c));
                *c = v;
            }
}

extern "C" int tn_cu_splitk_reduce(int splits, const float *P, int64_t m, int64_t n, float alpha,
                                   float beta, float *C, int64_t ldc, int64_t sc, int64_t batch,
                                   cudaStream_t stream) {
    if (m <= 0 || n <= 0 || batch <= 0) return 0;
    int64_t gx = (m + 255) / 256, gy = n, gz = batch;
    if (gx > 4096) gx = 4096;
    if (gy > 65535) gy = 65535;
    if (gz > 65535) gz = 65535;
    splitk_reduce_kernel<<<dim3((unsigned)gx, (unsigned)gy, (unsigned)gz), 256, 0, stream>>>(
        splits, P, (long long)m, (long long)n, alpha, beta, C, (long long)ldc, (long long)sc,
        (long long)batch);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_tc_gemm_batched(int mode, int transa, int transb, int64_t m, int64_t n,
                                     int64_t k, float alpha, const float *A, int64_t lda,
                                     int64_t sa, const void *B, int64_t ldb, int64_t sb,
                                     float beta, float *C, int64_t ldc, int64_t sc, int64_t batch,
                                     int reduce, int splits, float *P, size_t smem_limit,
                                     cudaStream_t stream) {
    if (mode < 0 || mode >= TN_KMODE_COUNT) return (int)cudaErrorInvalidValue;
    if (batch < 1 || sa < 0 || sb < 0 || sc < 0) return (int)cudaErrorInvalidValue;
    if (batch == 1) reduce = 0;
    int big = tn_cu_tc_gemm_config();
    if (big < 0) return -big;
    size_t smem = (size_t)cfg_smem(mode, big);
    if (smem > smem_limit) return (int)cudaErrorInvalidConfiguration;
    int64_t tiles = ((m + TN_BM - 1) / TN_BM) * ((n + TN_BN - 1) / TN_BN);
    int64_t kts = (k + TN_BK - 1) / TN_BK;
    const int64_t nseg = reduce ? batch : 1;
    if (tiles > 0x7fffffffLL || kts * nseg > 0x7fffffffLL) return (int)cudaErrorInvalidConfiguration;
    if (splits < 1 || !P) splits = 1;
    if (splits > 65535) return (int)cudaErrorInvalidValue;
    int per = (int)((kts * nseg + splits - 1) / splits);
    /* A with op T and B with op N have K contiguous */
    int ak = transa != 0, bk = transb == 0;
    tn_tc_kernel_t kern = tn_tc_kernels[mode][ak * 2 + bk];
    cudaError_t e =
        cudaFuncSetAttribute((const void *)kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)smem);
    if (e != cudaSuccess) return (int)e;
    /* a batch in launches of at most 65535 products (grid z) */
    const int es_b = (mode == TN_KMODE_SHGEMM_F16 || mode == TN_KMODE_SHGEMM_TF32) ? 2 : 4;
    const int64_t nz = reduce ? 1 : batch;
    for (int64_t z0 = 0; z0 < nz; z0 += 65535) {
        const int64_t gz = nz - z0 < 65535 ? nz - z0 : 65535;
        kern<<<dim3((unsigned)tiles, (unsigned)splits, (unsigned)gz), TN_THREADS, smem, stream>>>(
            (int)m, (int)n, (int)k, alpha, A + z0 * sa, (long long)lda,
            (const char *)B + z0 * sb * es_b, (long long)ldb, beta, C + z0 * sc, (long long)ldc,
            per, splits > 1 ? P + z0 * splits * m * n : NULL, (long long)sa, (long long)sb,
            (long long)sc, (int)kts, (int)nseg);
        if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    }
    if (splits > 1)
        return tn_cu_splitk_reduce(splits, P, m, n, alpha, beta, C, ldc, sc, nz, stream);
    return (int)e;
}

extern "C" int tn_cu_tc_gemm(int mode, int transa, int transb, int64_t m, int64_t n, int64_t k,
                             float alpha, const float *A, int64_t lda, const void *B, int64_t ldb,
                             float beta, float *C, int64_t ldc, int splits, float *P,
                             size_t smem_limit, cudaStream_t stream) {
    return tn_cu_tc_gemm_batched(mode, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta,
                                 C, ldc, 0, 1, 0, splits, P, smem_limit, stream);
}

/* --------------------------------------------------------- test hook */
static __global__ void tn_debug_split_kernel(int kind, const float *x, float *hi, float *lo,
                                             long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (long long)gridDim.x * blockDim.x) {
        float h, l;
        if (kind == 2) {
            tn_split_tf32(x[i], &h, &l);
        } else {
            /* the packed path the GEMM kernels use, element i in either half */
            uint32_t h2, l2;
            if (i & 1) {
                tn_split2_f16(0.0f, x[i], kind == 1, &h2, &l2);
                h = tn_h2_hi(h2);
                l = tn_h2_hi(l2);
            } else {
                tn_split2_f16(x[i], 0.0f, kind == 1, &h2, &l2);
                h = tn_h2_lo(h2);
                l = tn_h2_lo(l2);
            }
        }
        hi[i] = h;
        lo[i] = l;
    }
}

extern "C" int tn_cu_debug_split(int kind, const float *x, float *hi, float *lo, int64_t n,
                                 cudaStream_t stream) {
    if (n <= 0) return 0;
    long long blocks = (n + 255) / 256;
    if (blocks > 65535) blocks = 65535;
    tn_debug_split_kernel<<<(unsigned)blocks, 256, 0, stream>>>(kind, x, hi, lo, (long long)n);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return (int)e;
    return (int)cudaStreamSynchronize(stream);
}
