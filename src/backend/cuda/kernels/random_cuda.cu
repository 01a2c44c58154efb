/* Random matrices on the GPU, element for element the values of
 * src/random/random.c + src/random/fill.c: the same Philox4x32-10 counters
 * (Random123), the same uniform maps, the same deterministic FP32
 * Box-Muller (detmath.h), the same RN rounding to the storage format. */
#include <Random123/philox.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "random/detmath.h"

/* Must match tcnla_rand_dist_t / tcnla_format_t. */
enum { D_GAUSS = 0, D_UNIFORM = 1, D_SPARSE3 = 2, D_SPARSE_SQRT = 3 };
enum { F_FP32 = 0, F_FP16 = 1, F_BF16 = 2, F_TF32 = 3, F_E4M3 = 4, F_E5M2 = 5 };

__device__ static void philox(uint64_t seed, uint64_t stream, uint64_t ctr, uint32_t out[4]) {
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t c = {{(uint32_t)ctr, (uint32_t)(ctr >> 32), (uint32_t)stream,
                           (uint32_t)(stream >> 32)}};
    philox4x32_ctr_t r = philox4x32(c, key);
    out[0] = r.v[0], out[1] = r.v[1], out[2] = r.v[2], out[3] = r.v[3];
}

__device__ static double unit24(uint32_t u) {
    return __dmul_rn(__dadd_rn((double)(u >> 8), 0.5), 0x1p-24);
}
/* RN to the storage format, as FP32 (round_to of fill.c). */
__device__ static float round_to(int fmt, float x) {
    switch (fmt) {
    case F_FP16: return __half2float(__float2half_rn(x));
    case F_BF16: return __bfloat162float(__float2bfloat16_rn(x));
    case F_TF32: {
        uint32_t u = __float_as_uint(x);
        if ((u & 0x7f800000u) == 0x7f800000u) return x;
        u += 0xfffu + ((u >> 13) & 1u);
        return __uint_as_float(u & ~0x1fffu);
    }
    case F_E4M3: {
        __nv_fp8_storage_t v = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
        return __half2float(__half(__nv_cvt_fp8_to_halfraw(v, __NV_E4M3)));
    }
    case F_E5M2: {
        __nv_fp8_storage_t v = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
        return __half2float(__half(__nv_cvt_fp8_to_halfraw(v, __NV_E5M2)));
    }
    default: return x;
    }
}

/* Element idx (column-major, idx = i + j rows) of X; contig: ld == rows, so
 * no 64-bit division for (i, j). */
__device__ static void store(void *X, long long ld, long long rows, int contig, long long idx,
                             long long n, float v, int fmt, int f16) {
    if (idx >= n) return;
    const long long off = contig ? idx : idx % rows + idx / rows * ld;
    float r = round_to(fmt, v);
    if (f16) ((__half *)X)[off] = __float2half_rn(r);
    else ((float *)X)[off] = r;
}

/* One thread per Philox counter: 4 values (2 Box-Muller pairs, or 4
 * uniform-based values). contig: ld == rows; vec: contig and X 8-byte
 * aligned (the 4 values, elements 4b .. 4b + 3, go out in one 8-byte store
 * of FP16 or two of FP32). */
__device__ static void fill_at(long long b, int dist, int fmt, int f16, uint64_t seed,
                               uint64_t stream, long long rows, long long n, double sparse_p,
                               void *X, long long ld, int contig, int vec) {
    if (4 * b >= n) return;
    uint32_t r[4];
    float v[4];
    philox(seed, stream, (uint64_t)b, r);
    if (dist == D_GAUSS) {
        /* mean 0, sd 1: (float)(0 + 1 * z) = z, as random.c computes it */
        tn_dm_box_muller(r[0], r[1], &v[0], &v[1]);
        tn_dm_box_muller(r[2], r[3], &v[2], &v[3]);
    } else {
        for (int q = 0; q < 4; q++) {
            if (dist == D_UNIFORM) { /* lo = -1, hi = 1 */
                v[q] = (float)__dadd_rn(-1.0, __dmul_rn(__dsub_rn(1.0, -1.0), unit24(r[q])));
            } else { /* uniform (0, 1) as FP32, compared in double */
                double u = (double)(float)__dadd_rn(0.0, __dmul_rn(__dsub_rn(1.0, 0.0), unit24(r[q])));
                v[q] = u < sparse_p ? 1.0f : u < 2 * sparse_p ? -1.0f : 0.0f;
            }
        }
    }
    if (vec && 4 * b + 3 < n) {
        float w[4];
        for (int q = 0; q < 4; q++) w[q] = round_to(fmt, v[q]);
        if (f16) {
            __half2 lo = __halves2half2(__float2half_rn(w[0]), __float2half_rn(w[1]));
            __half2 hi = __halves2half2(__float2half_rn(w[2]), __float2half_rn(w[3]));
            uint2 p;
            memcpy(&p.x, &lo, 4);
            memcpy(&p.y, &hi, 4);
            ((uint2 *)X)[b] = p;
        } else {
            ((float2 *)X)[2 * b] = make_float2(w[0], w[1]);
            ((float2 *)X)[2 * b + 1] = make_float2(w[2], w[3]);
        }
        return;
    }
    for (int q = 0; q < 4; q++) store(X, ld, rows, contig, 4 * b + q, n, v[q], fmt, f16);
}

/* Counters b = 0 .. nctr - 1, grid-strided (one per thread unless the
 * launch is capped). */
__global__ void fill_kernel(int dist, int fmt, int f16, uint64_t seed, uint64_t stream,
                            long long rows, long long n, double sparse_p, void *X, long long ld,
                            int contig, int vec, long long nctr) {
    for (long long b = blockIdx.x * (long long)blockDim.x + threadIdx.x; b < nctr;
         b += (long long)gridDim.x * blockDim.x)
        fill_at(b, dist, fmt, f16, seed, stream, rows, n, sparse_p, X, ld, contig, vec);
}

/* max_blocks > 0 caps the grid (the fill then shares the SMs with work on
 * other streams instead of taking them all). */
extern "C" int tn_cu_random_fill(int dist, int fmt, int f16, uint64_t seed, uint64_t stream,
                                 int64_t rows, int64_t cols, double sparse_p, void *X, int64_t ld,
                                 int max_blocks, cudaStream_t s) {
    long long n = (long long)rows * cols;
    if (n == 0) return 0;
    long long threads = (n + 3) / 4;
    long long blocks = (threads + 255) / 256;
    if (max_blocks > 0 && blocks > max_blocks) blocks = max_blocks;
    if (blocks > 0x7fffffffLL) blocks = 0x7fffffffLL;
    const int contig = ld == rows, vec = contig && ((uintptr_t)X & 7u) == 0;
    fill_kernel<<<(unsigned)blocks, 256, 0, s>>>(dist, fmt, f16, seed, stream, (long long)rows, n,
                                                 sparse_p, X, (long long)ld, contig, vec, threads);
    return (int)cudaGetLastError();
}
