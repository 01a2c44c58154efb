/* Kernels of exact power-of-two scaling (src/gemm/scaling.c; the CPU
 * backend's tn_cpu_scale_* compute the same bits): each vector's largest
 * magnitude turned into an exponent, the scaled copy, and the unscaling
 * epilogue; and the FP64 sum of squares of the randomized SVD's probes
 * (tn_cuda_sumsq). All memory-bound, on the handle's stream. */
#include "backend/cuda/tn_cuda.h"
#include "core/backend.h"

#include <stdint.h>

static dim3 grid2(int64_t rows, int64_t cols, int bx) {
    int64_t gx = (rows + bx - 1) / bx, gy = cols;
    if (gx > 4096) gx = 4096;
    if (gy > 65535) gy = 65535;
    return dim3((unsigned)(gx < 1 ? 1 : gx), (unsigned)(gy < 1 ? 1 : gy), 1);
}

/* |x|'s bits: non-negative floats order as their bit patterns, Inf above
 * every finite value and NaN above Inf */
static __device__ __forceinline__ unsigned abits(float x) { return __float_as_uint(fabsf(x)); }

/* row maxima: a thread per row, over a chunk of `per` columns */
static __global__ void rowmax_kernel(const float *X, long long ld, long long rows,
                                     long long cols, long long per, unsigned *bits) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const long long j0 = (long long)blockIdx.y * per;
    const long long j1 = j0 + per < cols ? j0 + per : cols;
    unsigned mx = 0;
    for (long long j = j0; j < j1; j++) mx = max(mx, abits(__ldg(X + i + j * ld)));
    if (mx) atomicMax(bits + i, mx);
}

/* column maxima: a block per column */
static __global__ void colmax_kernel(const float *X, long long ld, long long rows,
                                     long long cols, unsigned *bits) {
    __shared__ unsigned wmax[32];
    for (long long j = blockIdx.x; j < cols; j += gridDim.x) {
        unsigned mx = 0;
        for (long long i = threadIdx.x; i < rows; i += blockDim.x)
            mx = max(mx, abits(__ldg(X + i + j * ld)));
        for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        if ((threadIdx.x & 31) == 0) wmax[threadIdx.x >> 5] = mx;
        __syncthreads();
        if (threadIdx.x < 32) {
            mx = threadIdx.x < (blockDim.x >> 5) ? wmax[threadIdx.x] : 0u;
            for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
            if (threadIdx.x == 0) bits[j] = mx;
        }
        __syncthreads();
    }
}

/* the largest magnitude's bits -> TN_SCALE_TOP - E (2^(E-1) <= max < 2^E);
 * 0 for zero, Inf, NaN */
static __global__ void exponent_kernel(int *e, long long nv) {
    const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nv) return;
    const unsigned b = (unsigned)e[v];
    int E = 0;
    if (b != 0u && b < 0x7f800000u) (void)frexpf(__uint_as_float(b), &E);
    e[v] = b != 0u && b < 0x7f800000u ? TN_SCALE_TOP - E : 0;
}

extern "C" int tn_cu_scale_exponents(const float *X, int64_t ld, int64_t rows, int64_t cols,
                                     int by_col, int *e, int sm_count, cudaStream_t stream) {
    const int64_t nv = by_col ? cols : rows;
    if (nv <= 0) return 0;
    cudaError_t err = cudaMemsetAsync(e, 0, sizeof(int) * (size_t)nv, stream);
    if (err != cudaSuccess) return (int)err;
    if (rows > 0 && cols > 0) {
        if (by_col) {
            const int64_t g = cols < 65535 ? cols : 65535;
            colmax_kernel<<<(unsigned)g, 256, 0, stream>>>(X, (long long)ld, (long long)rows,
                                                           (long long)cols, (unsigned *)e);
        } else {
            /* about 8 blocks per SM over the rows and column chunks */
            const int64_t bx = (rows + 255) / 256, want = 8 * (int64_t)(sm_count > 0 ? sm_count : 1);
            int64_t chunks = (want + bx - 1) / bx;
            if (chunks > cols) chunks = cols;
            if (chunks > 65535) chunks = 65535;
            if (chunks < 1) chunks = 1;
            const int64_t per = (cols + chunks - 1) / chunks;
            chunks = (cols + per - 1) / per;
            rowmax_kernel<<<dim3((unsigned)bx, (unsigned)chunks), 256, 0, stream>>>(
                X, (long long)ld, (long long)rows, (long long)cols, (long long)per, (unsigned *)e);
        }
        if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
    }
    exponent_kernel<<<(unsigned)((nv + 255) / 256), 256, 0, stream>>>(e, (long long)nv);
    return (int)cudaGetLastError();
}

/* x 2^e with ldexpf's result: one correctly rounded multiply by the power
 * of two (two where it exceeds FP32's range, the first then exact) */
static __device__ __forceinline__ float times_pow2(float x, int e) {
    if (e < -126 || e > 254) return ldexpf(x, e);
    if (e > 127) x = __fmul_rn(x, 0x1p127f), e -= 127;
    return __fmul_rn(x, __int_as_float((e + 127) << 23));
}

static __global__ void scale_copy_kernel(const float *X, long long ld, long long rows,
                                         long long cols, const int *er, const int *ec, float *Y,
                                         long long ldy) {
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        const int fj = ec ? ec[j] : 0;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += (long long)gridDim.x * blockDim.x)
            Y[i + j * ldy] = times_pow2(__ldg(X + i + j * ld), (er ? er[i] : 0) + fj);
    }
}

/* the same, 4 rows per thread and step (rows, ld, ldy multiples of 4; X, Y
 * 16-byte aligned) */
static __global__ void scale_copy4_kernel(const float *X, long long ld, long long rows4,
                                          long long cols, const int *er, const int *ec, float *Y,
                                          long long ldy) {
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        const int fj = ec ? ec[j] : 0;
        const float4 *x4 = (const float4 *)(X + j * ld);
        float4 *y4 = (float4 *)(Y + j * ldy);
        for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < rows4;
             q += (long long)gridDim.x * blockDim.x) {
            float4 v = __ldg(x4 + q);
            if (er) {
                const int4 e = __ldg((const int4 *)er + q);
                v.x = times_pow2(v.x, e.x + fj), v.y = times_pow2(v.y, e.y + fj);
                v.z = times_pow2(v.z, e.z + fj), v.w = times_pow2(v.w, e.w + fj);
            } else {
                v.x = times_pow2(v.x, fj), v.y = times_pow2(v.y, fj);
                v.z = times_pow2(v.z, fj), v.w = times_pow2(v.w, fj);
            }
            y4[q] = v;
        }
    }
}

extern "C" int tn_cu_scale_copy(const float *X, int64_t ld, int64_t rows, int64_t cols,
                                const int *er, const int *ec, float *Y, int64_t ldy,
                                cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (rows % 4 == 0 && ld % 4 == 0 && ldy % 4 == 0 && ((uintptr_t)X & 15u) == 0 &&
        ((uintptr_t)Y & 15u) == 0 && ((uintptr_t)er & 15u) == 0) {
        scale_copy4_kernel<<<grid2(rows / 4, cols, 256), 256, 0, stream>>>(
            X, (long long)ld, (long long)(rows / 4), (long long)cols, er, ec, Y, (long long)ldy);
        return (int)cudaGetLastError();
    }
    scale_copy_kernel<<<grid2(rows, cols, 256), 256, 0, stream>>>(
        X, (long long)ld, (long long)rows, (long long)cols, er, ec, Y, (long long)ldy);
    return (int)cudaGetLastError();
}

static __global__ void unscale_kernel(long long m, long long n, float alpha, const float *T,
                                      long long ldt, const int *er, const int *ec, float beta,
                                      float *C, long long ldc) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y) {
        const int fj = ec ? ec[j] : 0;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x) {
            const float r = __fmul_rn(alpha, ldexpf(T[i + j * ldt], -(er[i] + fj)));
            float *p = C + i + j * ldc;
            *p = beta == 0.0f ? r : __fadd_rn(r, __fmul_rn(beta, *p));
        }
    }
}

extern "C" int tn_cu_unscale_update(int64_t m, int64_t n, float alpha, const float *T,
                                    int64_t ldt, const int *er, const int *ec, float beta,
                                    float *C, int64_t ldc, cudaStream_t stream) {
    if (m <= 0 || n <= 0) return 0;
    unscale_kernel<<<grid2(m, n, 256), 256, 0, stream>>>((long long)m, (long long)n, alpha, T,
                                                        (long long)ldt, er, ec, beta, C,
                                                        (long long)ldc);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------ sum of squares (FP64) */
static __global__ void sumsq_kernel(const float *X, long long ld, long long rows, long long cols,
                                    double *out) {
    __shared__ double part[32];
    double s = 0.0;
    for (long long j = blockIdx.y; j < cols; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += (long long)gridDim.x * blockDim.x) {
            const double x = (double)X[i + j * ld];
            s = __fma_rn(x, x, s);
        }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) atomicAdd(out, s);
    }
}

extern "C" int tn_cu_sumsq(const float *X, int64_t ld, int64_t rows, int64_t cols, double *out,
                           cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    int64_t gx = (rows + 255) / 256, gy = cols;
    if (gx > 64) gx = 64;
    if (gy > 1024) gy = 1024;
    sumsq_kernel<<<dim3((unsigned)gx, (unsigned)gy), 256, 0, stream>>>(
        X, (long long)ld, (long long)rows, (long long)cols, out);
    return (int)cudaGetLastError();
}
