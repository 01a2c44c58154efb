/* D16 = fp16(A - X Y^T) on Hopper (sm_90a): the randLRA refinement's
 * residual ([Baboulin et al. 2024] Algorithm 5 line 2) as
 * lowrank_residual.cu computes it (the FP16 product summed in FP32 inside
 * the Tensor Core, negated, one RN addition of A in FP32, one RN rounding
 * to FP16), with wgmma and TMA.
 *
 * That kernel (WMMA, k in chunks of 32 loaded through registers) runs at
 * 27 % of the HMMA pipe and 35 % of DRAM bandwidth (H200, m = n = 16384,
 * k = 256: 0.83 ms, this one 0.54 ms): each chunk waits for its L2 loads,
 * and the epilogue for A. Here a block (128 x 128 of D, two warpgroups of 64 rows, two
 * blocks per SM):
 *  - thread 0 asks for the block's A tile in L2 (bulk tensor prefetch) at
 *    the start, so that DRAM reads it while the product runs, and keeps a
 *    ring of three k-tiles (64 deep, X and Y K-major, 128-byte swizzle) in
 *    flight by TMA;
 *  - each warpgroup runs m64n128k16 wgmma on its 64 rows;
 *  - then the ring's memory takes the A tile (TMA, 128-byte swizzle: the
 *    accumulator layout reads it without bank conflicts) and the FP16
 *    result, which one TMA store writes out (tails clipped by the map).
 * X and Y are FP16 copies, K-major (row i: k values, kp apart), made by
 * tn_cu_lowrank_residual16_sm90 from the FP32 factors.
 * Why not persistent: a persistent form for k <= 256, one block per SM
 * keeping its 128 rows of X in shared memory through all its n-tiles (Y's
 * k-tiles in a ring across tiles, A and D in buffers of their own, A asked
 * into L2 two tiles ahead), would cut the L2 traffic this kernel is bound
 * by, but takes 0.73 ms against 0.54 (H200, Nsight Compute, k = 256): with
 * one block of two warpgroups per SM, the product, the epilogue and the
 * wait for A follow each other instead of overlapping across blocks. */
#include "backend/cuda/kernels/sm90_common.cuh"

#include <cuda_fp16.h>
#include <stdint.h>
#include <stdlib.h>

#define RS_BM 128
#define RS_BN 128
#define RS_BK 64                     /* k per ring stage: 128 bytes of FP16 */
#define RS_S 3                       /* ring stages */
#define RS_TILE (RS_BM * RS_BK * 2)  /* bytes of one X (or Y) k-tile: 16 KB */
#define RS_STAGE (2 * RS_TILE)
#define RS_BAR (RS_S * RS_STAGE)     /* barriers after the ring */
#define RS_SMEM (RS_BAR + 64 + 1024) /* + alignment to 1024 bytes */
#define RS_THREADS 256

#if S9_ON
static __device__ __forceinline__ void rs_prefetch_l2(const CUtensorMap *map, int c0, int c1) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(
                     (uint64_t)map),
                 "r"(c0), "r"(c1)
                 : "memory");
}
static __device__ __forceinline__ void rs_store_2d(const CUtensorMap *map, int c0, int c1,
                                                   uint32_t src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::
                     "l"((uint64_t)map),
                 "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}
#endif

extern __shared__ unsigned char rs_smem_raw[];

static __global__ void __launch_bounds__(RS_THREADS, 2)
    rs_sm90_kernel(const __grid_constant__ CUtensorMap tX, const __grid_constant__ CUtensorMap tY,
                   const __grid_constant__ CUtensorMap tA, const __grid_constant__ CUtensorMap tD,
                   int M, int K, float ascale) {
#if S9_ON
    if (!s9_dsmem_ok(RS_SMEM)) return;
    const int tid = threadIdx.x, cw = tid >> 7, lane = tid & 31, w = (tid >> 5) & 3;
    const int m0 = blockIdx.x * RS_BM, n0 = blockIdx.y * RS_BN;
    const int KT = (K + RS_BK - 1) / RS_BK;
    const uint32_t raw_s = s9_smem_u32(rs_smem_raw);
    const uint32_t base_s = (raw_s + 1023u) & ~1023u;
    unsigned char *base = rs_smem_raw + (base_s - raw_s);
    const uint32_t bar_s = base_s + RS_BAR;
#define FULL(i) (bar_s + 8u * (uint32_t)(i))
#define EMPTY(i) (bar_s + 8u * (uint32_t)(RS_S + (i)))
#define ABAR (bar_s + 8u * (uint32_t)(2 * RS_S))
    if (tid == 0) {
        for (int i = 0; i < RS_S; i++) {
            mbar_init(FULL(i), 1);
            mbar_init(EMPTY(i), RS_THREADS / 32); /* one arrival per warp */
        }
        mbar_init(ABAR, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        fence_async_smem();
    }
    __syncthreads();
    if (tid == 0) {
        for (int b = 0; b < 4; b++) rs_prefetch_l2(&tA, m0 + 32 * b, n0);
        for (int kt = 0; kt < KT && kt < RS_S; kt++) {
            const uint32_t dst = base_s + (uint32_t)(kt * RS_STAGE);
            mbar_expect_tx(FULL(kt), RS_STAGE);
            tma_load_2d(dst, &tX, kt * RS_BK, m0, FULL(kt));
            tma_load_2d(dst + RS_TILE, &tY, kt * RS_BK, n0, FULL(kt));
        }
    }
    /* the product: rows 64 cw .. of the block, all 128 columns (acc is not
     * zeroed: the first wgmma has scale-d 0) */
    float acc[64];
    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % RS_S;
        mbar_wait(FULL(s), (uint32_t)((kt / RS_S) & 1));
        const uint32_t st = base_s + (uint32_t)(s * RS_STAGE);
        const uint32_t cX = st + (uint32_t)(cw * 64 * 128), cY = st + RS_TILE;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 4; ks++)
            S9_WGMMA_F16(acc, wg_desc(cX + 32 * ks, 128), wg_desc(cY + 32 * ks, 128),
                         (kt > 0 || ks > 0) ? 1 : 0);
        wgmma_commit();
        wgmma_wait0();
        reg_fence(acc);
        __syncwarp();
        if (lane == 0) mbar_arrive(EMPTY(s));
        if (tid == 0 && kt + RS_S < KT) { /* refill the stage with k-tile kt + S */
            mbar_wait(EMPTY(s), (uint32_t)((kt / RS_S) & 1));
            const int k0 = (kt + RS_S) * RS_BK;
            mbar_expect_tx(FULL(s), RS_STAGE);
            tma_load_2d(st, &tX, k0, m0, FULL(s));
            tma_load_2d(st + RS_TILE, &tY, k0, n0, FULL(s));
        }
    }
    /* the ring is free: A's tile (4 boxes of 32 rows x 128 columns, FP32)
     * into its first 64 KB, D's (2 boxes of 64 rows, FP16) after it */
    __syncthreads();
    if (tid == 0) { /* (boxes wholly past row M are not loaded: their rows
                      * are never stored) */
        const int nb = min(4, (M - m0 + 31) / 32);
        mbar_expect_tx(ABAR, (uint32_t)(nb * 16384));
        for (int b = 0; b < nb; b++)
            tma_load_2d(base_s + (uint32_t)(b * 16384), &tA, m0 + 32 * b, n0, ABAR);
    }
    mbar_wait(ABAR, 0);
    unsigned char *dsm = base + 65536;
#pragma unroll
    for (int i = 0; i < 16; i++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int r = cw * 64 + 16 * w + (lane >> 2) + 8 * h; /* row in the block */
                const int c = 8 * i + 2 * (lane & 3) + e;             /* column */
                /* 128-byte swizzle: 16-byte chunk index XOR (line % 8) */
                const int ra = r & 31, rd = r & 63;
                const float a = *(const float *)(base + (r >> 5) * 16384 + c * 128 +
                                                 ((((ra >> 2) ^ (c & 7)) << 4) | ((ra & 3) << 2)));
                /* (ascale: a power of two, exact) */
                const float v = __fadd_rn(__fmul_rn(a, ascale), -acc[4 * i + 2 * h + e]);
                *(__half *)(dsm + (r >> 6) * 16384 + c * 128 +
                            ((((rd >> 3) ^ (c & 7)) << 4) | ((rd & 7) << 1))) = __float2half_rn(v);
            }
    fence_async_smem();
    __syncthreads();
    if (tid == 0) {
        rs_store_2d(&tD, m0, n0, base_s + 65536u); /* (the map clips the tails) */
        if (m0 + 64 < M) rs_store_2d(&tD, m0 + 64, n0, base_s + 65536u + 16384u);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
#undef FULL
#undef EMPTY
#undef ABAR
#else
    (void)M, (void)K, (void)ascale;
#endif
}

/* Xt (rows x kp, row i's k values contiguous, FP16 RN) from X (rows x k,
 * column-major, ld); columns k .. kp - 1 zero. 32 x 32 tiles through shared
 * memory. */
static __global__ void rs_kmajor16_kernel(long long rows, long long k, const float *X, long long ld,
                                          __half *Xt, long long kp) {
    __shared__ float t[32][33];
    const long long r0 = (long long)blockIdx.x * 32, k0 = (long long)blockIdx.y * 32;
    const int tx = threadIdx.x, ty = threadIdx.y; /* 32 x 8 */
    for (int j = ty; j < 32; j += 8) {
        const long long r = r0 + tx, kk = k0 + j;
        t[j][tx] = (r < rows && kk < k) ? X[r + kk * ld] : 0.0f;
    }
    __syncthreads();
    for (int j = ty; j < 32; j += 8) {
        const long long r = r0 + j, kk = k0 + tx;
        if (r < rows && kk < kp) Xt[r * kp + kk] = __float2half_rn(t[tx][j]);
    }
}

static int rs_kmajor16(int64_t rows, int64_t k, const float *X, int64_t ld, uint16_t *Xt,
                       int64_t kp, cudaStream_t stream) {
    const dim3 grid((unsigned)((rows + 31) / 32), (unsigned)((kp + 31) / 32));
    rs_kmajor16_kernel<<<grid, dim3(32, 8), 0, stream>>>((long long)rows, (long long)k, X,
                                                         (long long)ld, (__half *)Xt,
                                                         (long long)kp);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_lowrank_residual16_sm90_ok(int64_t m, int64_t n, int64_t k, const float *A,
                                                int64_t lda, const uint16_t *D16, int64_t ldd,
                                                size_t smem_optin) {
    if (m < 1 || n < 1 || k < 1 || m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL)
        return 0;
    /* TMA stores write whole 16-byte chunks: with m % 8 != 0 the last one
     * of each column would write rows past m */
    if (m % 8) return 0;
    if ((n + RS_BN - 1) / RS_BN > 65535 || (m + RS_BM - 1) / RS_BM > 0x7fffffffLL) return 0;
    /* TMA: 16-byte aligned bases and strides */
    if (lda % 4 || ((uintptr_t)A & 15u) || ldd % 8 || ((uintptr_t)D16 & 15u)) return 0;
    if (smem_optin < (size_t)RS_SMEM || !s9_encoder()) return 0;
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, (const void *)rs_sm90_kernel) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return attr.binaryVersion == 90; /* the sm_90a cubin (other builds: an empty body) */
}

extern "C" int tn_cu_lowrank_residual16_sm90(int64_t m, int64_t n, int64_t k, const float *A,
                                             int64_t lda, const float *X, int64_t ldx,
                                             const float *Y, int64_t ldy, uint16_t *Xt,
                                             uint16_t *Yt, int64_t kp, uint16_t *D16,
                                             int64_t ldd, float ascale, cudaStream_t stream) {
    if (kp < k || kp % 8) return (int)cudaErrorInvalidValue;
    s9_encode_fn enc = s9_encoder();
    if (!enc) return (int)cudaErrorNotSupported;
    const CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_128B;
    const CUtensorMapDataType h16 = CU_TENSOR_MAP_DATA_TYPE_UINT16;
    CUtensorMap mX, mY, mA, mD;
    int bad = 0;
    bad |= s9_map(&mX, enc, h16, 2, Xt, k, m, kp, RS_BK, RS_BM, sw);
    bad |= s9_map(&mY, enc, h16, 2, Yt, k, n, kp, RS_BK, RS_BN, sw);
    bad |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, m, n, lda, 32, RS_BN, sw);
    bad |= s9_map(&mD, enc, h16, 2, D16, m, n, ldd, 64, RS_BN, sw);
    if (bad) return (int)cudaErrorNotSupported;
    cudaError_t e = cudaFuncSetAttribute((const void *)rs_sm90_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, RS_SMEM);
    if (e != cudaSuccess) return (int)e;
    int r = rs_kmajor16(m, k, X, ldx, Xt, kp, stream);
    if (!r) r = rs_kmajor16(n, k, Y, ldy, Yt, kp, stream);
    if (r) return r;
    const dim3 grid((unsigned)((m + RS_BM - 1) / RS_BM), (unsigned)((n + RS_BN - 1) / RS_BN));
    rs_sm90_kernel<<<grid, RS_THREADS, RS_SMEM, stream>>>(mX, mY, mA, mD, (int)m, (int)k, ascale);
    return (int)cudaGetLastError();
}
