/* D16 = fp16(A - X Y^T) in one kernel: the residual of [Baboulin et al. 2024]'s iterative
 * refinement (Algorithm 5 line 2) for the FP16-storage variants, which read
 * only fp16(E). X (m x k) and Y (n x k) are FP16 (ld multiples of 8, 16-byte
 * aligned); A is FP32. Per element: the FP16 product summed in FP32 inside
 * the Tensor Core (as the TCNLA_GEMM_FP16 method), negated, one RN addition
 * of A in FP32, one RN rounding to FP16 -- the operations of the two-step
 * path (an FP32 E = -X Y^T, then tn_cu_add), without storing E: one read of
 * A and one write of D16 (H200, m = n = 16384, k = 256: the two steps took
 * 1.56 ms and a 1 GiB E).
 *
 * Block tile 128 x 128, 256 threads as 2 x 4 warps of 64 x 32, k in chunks
 * of 32 through two shared-memory buffers (the next chunk's global loads in
 * flight while the current one is multiplied), WMMA m16n16k16 (HMMA);
 * then each warp puts its accumulators into shared memory and adds A
 * column by column (64 rows, 256 contiguous bytes of A per column). */
#include "backend/cuda/tn_cuda.h"

#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

#define LR_BM 128
#define LR_BN 128
#define LR_BK 32
#define LR_LDS (LR_BM + 8)   /* halves per k row of a staged X or Y chunk */
#define LR_LDW (64 + 4)      /* floats per column of a warp's 64 x 32 result */
#define LR_THREADS 256
#define LR_CHUNK (LR_BK * LR_LDS) /* halves of one staged X (or Y) chunk */
#define LR_SMEM_OPS (4 * LR_CHUNK * 2)
#define LR_SMEM_EPI (8 * 32 * LR_LDW * 4)
#define LR_SMEM (LR_SMEM_OPS > LR_SMEM_EPI ? LR_SMEM_OPS : LR_SMEM_EPI)

/* rows r .. r + 7 of column p of an FP16 matrix Z (ld ldz, `rows` rows
 * allocated), or zeros where p >= k or r >= rows */
static __device__ __forceinline__ uint4 lr_load8(const __half *Z, long long ldz, long long rows,
                                                 long long r, long long p, long long k) {
    if (p < k && r < rows) return *(const uint4 *)(Z + r + p * ldz);
    return make_uint4(0u, 0u, 0u, 0u);
}

static __global__ void __launch_bounds__(LR_THREADS, 2)
    lowrank_residual16_kernel(long long m, long long n, long long k, const float *__restrict__ A,
                              long long lda, const __half *__restrict__ X, long long ldx,
                              const __half *__restrict__ Y, long long ldy, __half *__restrict__ D,
                              long long ldd, int vec, float ascale) {
    using namespace nvcuda;
    extern __shared__ __align__(16) unsigned char lr_smem[];
    __half *ops = (__half *)lr_smem; /* [buffer][X | Y] chunks */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int wm = warp >> 2, wn = warp & 3; /* 64-row half, 32-column quarter */
    const long long i0 = (long long)blockIdx.x * LR_BM, j0 = (long long)blockIdx.y * LR_BN;
    /* rows of X / Y allocated (ld rounded to 8 by the launcher: all valid
     * memory; rows past m or n are never stored) */
    const long long xr = ldx, yr = ldy;
    /* this thread's two 8-half vectors of each chunk: (row 8 * (v % 16), k v / 16) */
    uint4 px[2], py[2];
#define LR_FETCH(c)                                                                            \
    for (int h = 0; h < 2; h++) {                                                              \
        const int v = tid + h * LR_THREADS, r = 8 * (v & 15), p = v >> 4;                      \
        px[h] = lr_load8(X, ldx, xr, i0 + r, (long long)(c) * LR_BK + p, k);                   \
        py[h] = lr_load8(Y, ldy, yr, j0 + r, (long long)(c) * LR_BK + p, k);                   \
    }
#define LR_STAGE(b)                                                                            \
    for (int h = 0; h < 2; h++) {                                                              \
        const int v = tid + h * LR_THREADS, r = 8 * (v & 15), p = v >> 4;                      \
        *(uint4 *)(ops + (2 * (b)) * LR_CHUNK + p * LR_LDS + r) = px[h];                       \
        *(uint4 *)(ops + (2 * (b) + 1) * LR_CHUNK + p * LR_LDS + r) = py[h];                   \
    }
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 2; b++) wmma::fill_fragment(acc[a][b], 0.0f);
    const long long nc = (k + LR_BK - 1) / LR_BK;
    LR_FETCH(0);
    LR_STAGE(0);
    __syncthreads();
    for (long long c = 0; c < nc; c++) {
        const int b = (int)(c & 1);
        if (c + 1 < nc) LR_FETCH(c + 1);
        const __half *xs = ops + (2 * b) * LR_CHUNK, *ys = ops + (2 * b + 1) * LR_CHUNK;
        for (int ks = 0; ks < LR_BK / 16; ks++) {
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
            for (int ni = 0; ni < 2; ni++)
                wmma::load_matrix_sync(fb[ni], ys + ks * 16 * LR_LDS + wn * 32 + ni * 16, LR_LDS);
            for (int mi = 0; mi < 4; mi++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa;
                wmma::load_matrix_sync(fa, xs + ks * 16 * LR_LDS + wm * 64 + mi * 16, LR_LDS);
                for (int ni = 0; ni < 2; ni++) wmma::mma_sync(acc[mi][ni], fa, fb[ni], acc[mi][ni]);
            }
        }
        if (c + 1 < nc) LR_STAGE(b ^ 1);
        __syncthreads();
    }
#undef LR_FETCH
#undef LR_STAGE
    /* epilogue: the warp's 64 x 32 sums, column-major, in its own region */
    float *w = (float *)lr_smem + warp * 32 * LR_LDW;
    for (int mi = 0; mi < 4; mi++)
        for (int ni = 0; ni < 2; ni++)
            wmma::store_matrix_sync(w + ni * 16 * LR_LDW + mi * 16, acc[mi][ni], LR_LDW,
                                    wmma::mem_col_major);
    __syncwarp();
    /* 16 columns at a time: their A loads all in flight before the first
     * store (one column per round trip to memory is 3x slower in all) */
    const long long i = i0 + wm * 64 + 2 * lane;
    for (int c0 = 0; c0 < 32; c0 += 16) {
        float2 a[16];
#pragma unroll
        for (int c = 0; c < 16; c++) {
            const long long j = j0 + wn * 32 + c0 + c;
            const float *ap = A + i + j * lda;
            if (j >= n) a[c] = make_float2(0.0f, 0.0f);
            else if (vec && i + 1 < m) a[c] = __ldg((const float2 *)ap);
            else a[c] = make_float2(i < m ? __ldg(ap) : 0.0f, i + 1 < m ? __ldg(ap + 1) : 0.0f);
        }
#pragma unroll
        for (int c = 0; c < 16; c++) {
            const long long j = j0 + wn * 32 + c0 + c;
            if (j >= n) break;
            const float2 s = *(const float2 *)(w + (c0 + c) * LR_LDW + 2 * lane);
            /* (ascale: a power of two, exact) */
            const float v0 = __fadd_rn(__fmul_rn(a[c].x, ascale), -s.x),
                        v1 = __fadd_rn(__fmul_rn(a[c].y, ascale), -s.y);
            if (vec && i + 1 < m) {
                *(__half2 *)(D + i + j * ldd) = __floats2half2_rn(v0, v1);
            } else {
                if (i < m) D[i + j * ldd] = __float2half_rn(v0);
                if (i + 1 < m) D[i + 1 + j * ldd] = __float2half_rn(v1);
            }
        }
    }
}

extern "C" int tn_cu_lowrank_residual16(int64_t m, int64_t n, int64_t k, const float *A,
                                        int64_t lda, const uint16_t *X16, int64_t ldx,
                                        const uint16_t *Y16, int64_t ldy, uint16_t *D16,
                                        int64_t ldd, float ascale, cudaStream_t stream) {
    if (m <= 0 || n <= 0) return 0;
    if (ldx % 8 || ldy % 8 || ((uintptr_t)X16 & 15u) || ((uintptr_t)Y16 & 15u))
        return (int)cudaErrorInvalidValue;
    cudaError_t e = cudaFuncSetAttribute(lowrank_residual16_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, LR_SMEM);
    if (e != cudaSuccess) return (int)e;
    const int vec = lda % 2 == 0 && ldd % 2 == 0 && ((uintptr_t)A & 7u) == 0 &&
                    ((uintptr_t)D16 & 3u) == 0;
    const int64_t gy = (n + LR_BN - 1) / LR_BN;
    if (gy > 65535) return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)((m + LR_BM - 1) / LR_BM), (unsigned)gy, 1);
    lowrank_residual16_kernel<<<grid, LR_THREADS, LR_SMEM, stream>>>(
        (long long)m, (long long)n, (long long)k, A, (long long)lda, (const __half *)X16,
        (long long)ldx, (const __half *)Y16, (long long)ldy, (__half *)D16, (long long)ldd, vec,
        ascale);
    return (int)cudaGetLastError();
}
