/* Memory-bound helper kernels of the CUDA GEMM backend: element
 * conversions, C = beta*C, the FP64 epilogue, and the NaN/Inf and range
 * checks that run before a Tensor Core method (same semantics as
 * tn_has_nonfinite and tn_range_ok of src/numerics/split.c). */
#include "backend/cuda/kernels/split.cuh"
#include "backend/cuda/tn_cuda.h"
#include "linalg/deflated_svd.h"

#include <cuda_fp16.h>
#include <stdint.h>

/* 2D launch shape for a rows x cols matrix: x over rows, y over columns,
 * both grid-strided. */
static dim3 grid2d(int64_t rows, int64_t cols, int bx) {
    int64_t gx = (rows + bx - 1) / bx, gy = cols;
    if (gx > 4096) gx = 4096;
    if (gy > 65535) gy = 65535;
    if (gx < 1) gx = 1;
    if (gy < 1) gy = 1;
    return dim3((unsigned)gx, (unsigned)gy, 1);
}

/* ------------------------------------------------------- conversions */
static __global__ void convert_kernel(int op, const void *src, long long lds, void *dst,
                                      long long ldd, long long rows, long long cols, int *flag,
                                      long long ss, long long sd, long long batch,
                                      const int *skip) {
    if (skip && *skip) return;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z)
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += (long long)gridDim.x * blockDim.x) {
            long long s = z * ss + i + j * lds, d = z * sd + i + j * ldd;
            switch (op) {
            case TN_CONV_F32_TO_F16: {
                float x = ((const float *)src)[s];
                __half h = __float2half_rn(x);
                if (flag && __hisinf(h) && isfinite(x)) atomicOr(flag, 1);
                ((__half *)dst)[d] = h;
                break;
            }
            case TN_CONV_F32_TO_TF32:
                ((float *)dst)[d] = tn_tf32rna(((const float *)src)[s]);
                break;
            case TN_CONV_F32_TO_F64:
                ((double *)dst)[d] = (double)((const float *)src)[s];
                break;
            case TN_CONV_F16_TO_F32:
                ((float *)dst)[d] = __half2float(((const __half *)src)[s]);
                break;
            case TN_CONV_F16_TO_F64:
                ((double *)dst)[d] = (double)__half2float(((const __half *)src)[s]);
                break;
            case TN_CONV_F32_ROUND_F16:
                ((float *)dst)[d] = __half2float(__float2half_rn(((const float *)src)[s]));
                break;
            case TN_CONV_F64_TO_F32:
                ((float *)dst)[d] = __double2float_rn(((const double *)src)[s]);
                break;
            default: break;
            }
        }
    }
}

/* FP32 -> FP16 / TF32 / FP32 rounded to FP16 with 16-byte loads: 4
 * elements per thread and step (every column start 16-byte aligned,
 * rows % 4 == 0); the same values as
 * convert_kernel, which runs at about 1.3 TB/s on 1 GiB operands */
static __global__ void convert4_kernel(int op, const float *src, long long lds, void *dst,
                                       long long ldd, long long rows4, long long cols, int *flag,
                                       long long ss, long long sd, long long batch) {
    for (long long z = blockIdx.z; z < batch; z += gridDim.z)
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        const float4 *s4 = (const float4 *)(src + z * ss + j * lds);
        for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < rows4;
             q += (long long)gridDim.x * blockDim.x) {
            /* (in place for the rounding: no read-only-cache load there) */
            const float4 v = op == TN_CONV_F32_ROUND_F16 ? s4[q] : __ldg(s4 + q);
            if (op == TN_CONV_F32_TO_F16) {
                const __half2 a = __floats2half2_rn(v.x, v.y), b = __floats2half2_rn(v.z, v.w);
                if (flag && ((__hisinf(__low2half(a)) && isfinite(v.x)) ||
                             (__hisinf(__high2half(a)) && isfinite(v.y)) ||
                             (__hisinf(__low2half(b)) && isfinite(v.z)) ||
                             (__hisinf(__high2half(b)) && isfinite(v.w))))
                    atomicOr(flag, 1);
                uint2 w;
                w.x = *(const uint32_t *)&a;
                w.y = *(const uint32_t *)&b;
                ((uint2 *)((__half *)dst + z * sd + j * ldd))[q] = w;
            } else if (op == TN_CONV_F32_ROUND_F16) {
                ((float4 *)((float *)dst + z * sd + j * ldd))[q] = make_float4(
                    __half2float(__float2half_rn(v.x)), __half2float(__float2half_rn(v.y)),
                    __half2float(__float2half_rn(v.z)), __half2float(__float2half_rn(v.w)));
            } else { /* TN_CONV_F32_TO_TF32 */
                ((float4 *)((float *)dst + z * sd + j * ldd))[q] =
                    make_float4(tn_tf32rna(v.x), tn_tf32rna(v.y), tn_tf32rna(v.z), tn_tf32rna(v.w));
            }
        }
    }
}

/* FP32 <-> FP64 with 16-byte accesses, 4 elements per thread and step
 * (column starts 32-byte aligned, rows % 4 == 0); CholeskyQR's copies of Y.
 * Its own kernel: the two ops inside convert4_kernel made that kernel's
 * FP32 -> FP16 of a 1 GiB A 15 % slower (H200, Nsight Compute). */
static __global__ void convert64_kernel(int op, const void *src, long long lds, void *dst,
                                        long long ldd, long long rows4, long long cols,
                                        const int *skip) {
    if (skip && *skip) return;
    for (long long j = blockIdx.y; j < cols; j += gridDim.y)
        for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < rows4;
             q += (long long)gridDim.x * blockDim.x) {
            if (op == TN_CONV_F32_TO_F64) {
                const float4 v = __ldg((const float4 *)((const float *)src + j * lds) + q);
                double2 *d2 = (double2 *)((double *)dst + j * ldd) + 2 * q;
                d2[0] = make_double2((double)v.x, (double)v.y);
                d2[1] = make_double2((double)v.z, (double)v.w);
            } else {
                const double2 *s2 = (const double2 *)((const double *)src + j * lds) + 2 * q;
                const double2 a = __ldg(s2), b = __ldg(s2 + 1);
                ((float4 *)((float *)dst + j * ldd))[q] =
                    make_float4(__double2float_rn(a.x), __double2float_rn(a.y),
                                __double2float_rn(b.x), __double2float_rn(b.y));
            }
        }
}

/* tn_cu_f64_to_f32_t: block (bx, by) rounds the 32 x 32 tile of src at
 * rows 32 bx .., columns 32 by .. and writes it transposed; a thread copies
 * 4 entries each way (blockDim 32 x 8) */
static __global__ void f64_to_f32_t_kernel(const double *src, long long lds, float *dst,
                                           long long ldd, long long rows, long long cols) {
    __shared__ float tile[32][33];
    const long long r0 = (long long)blockIdx.x * 32, c0 = (long long)blockIdx.y * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int q = ty; q < 32; q += 8) { /* column c0 + q of src, rows r0 + tx */
        const long long r = r0 + tx, c = c0 + q;
        if (r < rows && c < cols) tile[q][tx] = __double2float_rn(src[r + c * lds]);
    }
    __syncthreads();
    for (int q = ty; q < 32; q += 8) { /* column r0 + q of dst, rows c0 + tx */
        const long long r = r0 + q, c = c0 + tx;
        if (r < rows && c < cols) dst[c + r * ldd] = tile[tx][q];
    }
}

extern "C" int tn_cu_f64_to_f32_t(const double *src, int64_t lds, float *dst, int64_t ldd,
                                  int64_t rows, int64_t cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (lds < rows || ldd < cols || (rows + 31) / 32 > 2147483647 || (cols + 31) / 32 > 65535)
        return (int)cudaErrorInvalidValue;
    f64_to_f32_t_kernel<<<dim3((unsigned)((rows + 31) / 32), (unsigned)((cols + 31) / 32)),
                          dim3(32, 8), 0, stream>>>(src, (long long)lds, dst, (long long)ldd,
                                                    (long long)rows, (long long)cols);
    return (int)cudaGetLastError();
}

/* FP32 <-> FP64 (16-byte accesses where aligned) and the element-wise
 * fallback of every op; nothing written when *skip != 0 (device) */
static int convert_wide(int op, const void *src, int64_t lds, int64_t ss, void *dst, int64_t ldd,
                        int64_t sd, int64_t rows, int64_t cols, int64_t batch, int *flag,
                        const int *skip, cudaStream_t stream) {
    if ((op == TN_CONV_F32_TO_F64 || op == TN_CONV_F64_TO_F32) && batch == 1 && rows % 4 == 0 &&
        lds % 4 == 0 && ldd % 4 == 0 && ((uintptr_t)src & 31u) == 0 &&
        ((uintptr_t)dst & 31u) == 0) {
        const dim3 g = grid2d(rows / 4, cols, 256);
        convert64_kernel<<<g, 256, 0, stream>>>(op, src, (long long)lds, dst, (long long)ldd,
                                                (long long)(rows / 4), (long long)cols, skip);
        return (int)cudaGetLastError();
    }
    dim3 g = grid2d(rows, cols, 256);
    g.z = (unsigned)(batch > 65535 ? 65535 : batch);
    convert_kernel<<<g, 256, 0, stream>>>(op, src, (long long)lds, dst, (long long)ldd,
                                          (long long)rows, (long long)cols, flag, (long long)ss,
                                          (long long)sd, (long long)batch, skip);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_convert_batched(int op, const void *src, int64_t lds, int64_t ss, void *dst,
                                     int64_t ldd, int64_t sd, int64_t rows, int64_t cols,
                                     int64_t batch, int *flag, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0 || batch <= 0) return 0;
    const int64_t de = op == TN_CONV_F32_TO_F16 ? 2 : 4; /* bytes per element written */
    if ((op == TN_CONV_F32_TO_F16 || op == TN_CONV_F32_TO_TF32 || op == TN_CONV_F32_ROUND_F16) &&
        rows % 4 == 0 &&
        lds % 4 == 0 && ldd % 4 == 0 && (batch == 1 || (ss % 4 == 0 && sd % 4 == 0)) &&
        ((uintptr_t)src & 15u) == 0 && ((uintptr_t)dst & (uintptr_t)(4 * de - 1)) == 0) {
        dim3 g = grid2d(rows / 4, cols, 256);
        g.z = (unsigned)(batch > 65535 ? 65535 : batch);
        convert4_kernel<<<g, 256, 0, stream>>>(op, (const float *)src, (long long)lds, dst,
                                               (long long)ldd, (long long)(rows / 4),
                                               (long long)cols, flag, (long long)ss,
                                               (long long)sd, (long long)batch);
        return (int)cudaGetLastError();
    }
    return convert_wide(op, src, lds, ss, dst, ldd, sd, rows, cols, batch, flag, NULL, stream);
}

extern "C" int tn_cu_f64_to_f32_unless(const double *src, int64_t lds, float *dst, int64_t ldd,
                                       int64_t rows, int64_t cols, const int *skip,
                                       cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    return convert_wide(TN_CONV_F64_TO_F32, src, lds, 0, dst, ldd, 0, rows, cols, 1, NULL, skip,
                        stream);
}

/* FP64 -> FP32 holding fp16_rn(fp32_rn(x)) and the same values in FP16:
 * CholeskyQR's Q for the FP16 products of randLRA, in one pass instead of
 * three (FP64 -> FP32, the rounding in place, FP32 -> FP16). vec: rows % 4
 * == 0, lds, ldf, ldh multiples of 4, src 32-byte, F 16-byte, H 8-byte
 * aligned. */
static __global__ void f64_to_f32f16_kernel(const double *src, long long lds, float *F,
                                            long long ldf, __half *H, long long ldh,
                                            long long rows, long long cols, int vec) {
    const long long rq = vec ? rows / 4 : rows;
    for (long long j = blockIdx.y; j < cols; j += gridDim.y)
        for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < rq;
             q += (long long)gridDim.x * blockDim.x) {
            if (vec) {
                const double2 *s2 = (const double2 *)(src + j * lds) + 2 * q;
                const double2 a = __ldg(s2), b = __ldg(s2 + 1);
                const __half2 lo = __floats2half2_rn(__double2float_rn(a.x), __double2float_rn(a.y));
                const __half2 hi = __floats2half2_rn(__double2float_rn(b.x), __double2float_rn(b.y));
                ((float4 *)(F + j * ldf))[q] =
                    make_float4(__low2float(lo), __high2float(lo), __low2float(hi), __high2float(hi));
                uint2 w;
                w.x = *(const uint32_t *)&lo;
                w.y = *(const uint32_t *)&hi;
                ((uint2 *)(H + j * ldh))[q] = w;
            } else {
                const __half h = __float2half_rn(__double2float_rn(src[q + j * lds]));
                F[q + j * ldf] = __half2float(h);
                H[q + j * ldh] = h;
            }
        }
}

extern "C" int tn_cu_f64_to_f32f16(const double *src, int64_t lds, float *F, int64_t ldf,
                                   uint16_t *H, int64_t ldh, int64_t rows, int64_t cols,
                                   cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int vec = rows % 4 == 0 && lds % 4 == 0 && ldf % 4 == 0 && ldh % 4 == 0 &&
                    ((uintptr_t)src & 31u) == 0 && ((uintptr_t)F & 15u) == 0 &&
                    ((uintptr_t)H & 7u) == 0;
    const dim3 g = grid2d(vec ? rows / 4 : rows, cols, 256);
    f64_to_f32f16_kernel<<<g, 256, 0, stream>>>(src, (long long)lds, F, (long long)ldf,
                                                 (__half *)H, (long long)ldh, (long long)rows,
                                                 (long long)cols, vec);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_convert(int op, const void *src, int64_t lds, void *dst, int64_t ldd,
                             int64_t rows, int64_t cols, int *flag, cudaStream_t stream) {
    return tn_cu_convert_batched(op, src, lds, 0, dst, ldd, 0, rows, cols, 1, flag, stream);
}

/* ------------------------------- FP16 of 2^s X, and max |X| on the way */
/* Y = fp16_rn(scale * X) (scale a power of two: exact unless it overflows
 * FP32) and, when maxbits is not NULL, the largest |X| (NaN counts as the
 * largest) as the bits of a non-negative float, max-ed into *maxbits
 * (non-negative floats order as their bit patterns): each block reduces its
 * part first, so that one atomic per block meets the others, not one per
 * warp (that many on one address cost about 2 ms at 16384^2). Four rows per
 * thread and step where rows, lds and ldy are multiples of 4 and X is
 * 16-byte, Y 8-byte aligned. */
static __global__ void to_f16_scaled_kernel(const float *X, long long lds, __half *Y,
                                            long long ldy, long long rows, long long cols,
                                            float scale, unsigned *maxbits, int vec) {
    __shared__ unsigned wmax[32];
    unsigned mx = 0;
    const long long nq = vec ? rows / 4 : rows, total = nq * cols;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        const long long j = t / nq, q = t - j * nq;
        if (vec) {
            const float4 x = __ldg((const float4 *)(X + j * lds) + q);
            const __half2 lo = __floats2half2_rn(__fmul_rn(x.x, scale), __fmul_rn(x.y, scale));
            const __half2 hi = __floats2half2_rn(__fmul_rn(x.z, scale), __fmul_rn(x.w, scale));
            __half2 *y = (__half2 *)(Y + j * ldy + 4 * q);
            y[0] = lo, y[1] = hi;
            mx = max(mx, max(max(__float_as_uint(fabsf(x.x)), __float_as_uint(fabsf(x.y))),
                             max(__float_as_uint(fabsf(x.z)), __float_as_uint(fabsf(x.w)))));
        } else {
            const float x = __ldg(X + q + j * lds);
            Y[q + j * ldy] = __float2half_rn(__fmul_rn(x, scale));
            mx = max(mx, __float_as_uint(fabsf(x)));
        }
    }
    if (!maxbits) return;
    for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if ((threadIdx.x & 31) == 0) wmax[threadIdx.x >> 5] = mx;
    __syncthreads();
    if (threadIdx.x < 32) {
        mx = threadIdx.x < (blockDim.x >> 5) ? wmax[threadIdx.x] : 0u;
        for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        if (threadIdx.x == 0 && mx) atomicMax(maxbits, mx);
    }
}

extern "C" int tn_cu_to_f16_scaled(const float *X, int64_t lds, uint16_t *Y, int64_t ldy,
                                   int64_t rows, int64_t cols, float scale, unsigned *maxbits,
                                   cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    const int vec = rows % 4 == 0 && lds % 4 == 0 && ldy % 4 == 0 && ((uintptr_t)X & 15u) == 0 &&
                    ((uintptr_t)Y & 7u) == 0;
    const int64_t total = (vec ? rows / 4 : rows) * cols;
    const int64_t nb = (total + 255) / 256;
    const unsigned blocks = (unsigned)(nb < 2048 ? nb : 2048);
    to_f16_scaled_kernel<<<blocks, 256, 0, stream>>>(X, (long long)lds, (__half *)Y,
                                                     (long long)ldy, (long long)rows,
                                                     (long long)cols, scale, maxbits, vec);
    return (int)cudaGetLastError();
}

/* ---------------------------------------------- D = A + E (FP32 or FP16) */
static __global__ void add_kernel(const float *A, long long lda, const float *E, long long lde,
                                  long long rows, long long cols, float *D, __half *D16,
                                  long long ldd) {
    for (long long j = blockIdx.y; j < cols; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += (long long)gridDim.x * blockDim.x) {
            const float v = __fadd_rn(A[i + j * lda], E[i + j * lde]);
            if (D16) D16[i + j * ldd] = __float2half_rn(v);
            else D[i + j * ldd] = v;
        }
}

/* the same with 16-byte loads, 4 rows per thread and step (rows, lda, lde,
 * ldd multiples of 4, A, E, D 16-byte and D16 8-byte aligned): add_kernel
 * runs at about 2.2 TB/s (1.23 ms for 1 GiB A and E into FP16, H200) */
static __global__ void add4_kernel(const float *A, long long lda, const float *E, long long lde,
                                   long long rows4, long long cols, float *D, __half *D16,
                                   long long ldd) {
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        const float4 *a4 = (const float4 *)(A + j * lda), *e4 = (const float4 *)(E + j * lde);
        for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < rows4;
             q += (long long)gridDim.x * blockDim.x) {
            const float4 a = __ldg(a4 + q), e = __ldg(e4 + q);
            const float4 v = make_float4(__fadd_rn(a.x, e.x), __fadd_rn(a.y, e.y),
                                         __fadd_rn(a.z, e.z), __fadd_rn(a.w, e.w));
            if (D16) {
                const __half2 lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
                uint2 w;
                w.x = *(const uint32_t *)&lo;
                w.y = *(const uint32_t *)&hi;
                ((uint2 *)(D16 + j * ldd))[q] = w;
            } else {
                ((float4 *)(D + j * ldd))[q] = v;
            }
        }
    }
}

extern "C" int tn_cu_add(const float *A, int64_t lda, const float *E, int64_t lde, int64_t rows,
                         int64_t cols, float *D, uint16_t *D16, int64_t ldd, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    if (rows % 4 == 0 && lda % 4 == 0 && lde % 4 == 0 && ldd % 4 == 0 &&
        ((uintptr_t)A & 15u) == 0 && ((uintptr_t)E & 15u) == 0 &&
        (D16 ? ((uintptr_t)D16 & 7u) == 0 : ((uintptr_t)D & 15u) == 0)) {
        add4_kernel<<<grid2d(rows / 4, cols, 256), 256, 0, stream>>>(
            A, (long long)lda, E, (long long)lde, (long long)(rows / 4), (long long)cols, D,
            (__half *)D16, (long long)ldd);
        return (int)cudaGetLastError();
    }
    add_kernel<<<grid2d(rows, cols, 256), 256, 0, stream>>>(A, (long long)lda, E, (long long)lde,
                                                           (long long)rows, (long long)cols, D,
                                                           (__half *)D16, (long long)ldd);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------------- C = beta*C */
static __global__ void scale_kernel(float beta, float *C, long long ldc, long long m,
                                    long long n) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x) {
            float *p = C + i + j * ldc;
            *p = beta == 0.0f ? 0.0f : __fmul_rn(beta, *p);
        }
}

extern "C" int tn_cu_scale(float beta, float *C, int64_t ldc, int64_t m, int64_t n,
                           cudaStream_t stream) {
    if (m <= 0 || n <= 0) return 0;
    scale_kernel<<<grid2d(m, n, 256), 256, 0, stream>>>(beta, C, (long long)ldc, (long long)m,
                                                        (long long)n);
    return (int)cudaGetLastError();
}

/* -------------------------------------------------- FP64 epilogue */
static __global__ void epilogue_f64_kernel(float alpha, const double *R, float beta, float *C,
                                           long long ldc, long long m, long long n) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x) {
            float *p = C + i + j * ldc;
            double r = __dmul_rn((double)alpha, R[i + j * m]);
            if (beta != 0.0f) r = __dadd_rn(r, __dmul_rn((double)beta, (double)*p));
            *p = __double2float_rn(r);
        }
}

extern "C" int tn_cu_epilogue_f64(float alpha, const double *R, float beta, float *C,
                                  int64_t ldc, int64_t m, int64_t n, cudaStream_t stream) {
    if (m <= 0 || n <= 0) return 0;
    epilogue_f64_kernel<<<grid2d(m, n, 256), 256, 0, stream>>>(
        alpha, R, beta, C, (long long)ldc, (long long)m, (long long)n);
    return (int)cudaGetLastError();
}

/* ------------------------------------- small SVD from an eigensolution */
/* lam ascending, W its eigenvectors (l x l): column i of the result is
 * eigenpair l - 1 - i, s_i = sqrt(lam): Vs (FP64, l x k) = W_i / s_i,
 * Vk (FP32, l x k) = W_i (times s_i when scale), Sk = s (when not NULL) */
static __global__ void eig_to_svd_kernel(const double *W, const double *lam, long long l,
                                         long long k, int scale, double *Vs, float *Vk,
                                         float *Sk) {
    const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (r >= l || i >= k) return;
    const double si = sqrt(lam[l - 1 - i]), w = W[r + (l - 1 - i) * l];
    Vs[r + i * l] = w / si;
    Vk[r + i * l] = (float)(scale ? w * si : w);
    if (Sk && r == 0) Sk[i] = (float)si;
}

extern "C" int tn_cu_eig_to_svd(const double *W, const double *lam, int64_t l, int64_t k,
                                int scale, double *Vs, float *Vk, float *Sk,
                                cudaStream_t stream) {
    if (l <= 0 || k <= 0) return 0;
    eig_to_svd_kernel<<<dim3((unsigned)((l + 127) / 128), (unsigned)k), 128, 0, stream>>>(
        W, lam, (long long)l, (long long)k, scale, Vs, Vk, Sk);
    return (int)cudaGetLastError();
}

/* The deflated path's merge (tn_cu_defl_merge): block j copies merged
 * column j */
static __global__ void defl_merge_kernel(int l, const tn_defl_runs_t runs, const double *X,
                                         const double *lam, const double *T, const double *mu,
                                         int bt, double *Xo, double *lo) {
    const int j = blockIdx.x;
    int r = 0;
    while (r + 1 < runs.n && runs.j0[r + 1] <= j) r++;
    const int p = runs.src[r] - (j - runs.j0[r]), d = l - 1 - j;
    const double *S = p < bt ? T : X;
    for (int i = threadIdx.x; i < l; i += blockDim.x)
        Xo[i + (size_t)d * l] = S[i + (size_t)p * l];
    if (threadIdx.x == 0) lo[d] = p < bt ? mu[p] : lam[p];
}

extern "C" int tn_cu_defl_merge(int l, int taken, const tn_defl_runs_t *runs, const double *X,
                                const double *lam, const double *T, const double *mu, int bt,
                                double *Xo, double *lo, cudaStream_t stream) {
    if (taken <= 0) return 0;
    if (runs->n < 1 || runs->n > TN_DEFL_RUNS || runs->j0[0] != 0 || taken > l)
        return (int)cudaErrorInvalidValue;
    defl_merge_kernel<<<(unsigned)taken, 128, 0, stream>>>(l, *runs, X, lam, T, mu, bt, Xo, lo);
    return (int)cudaGetLastError();
}

/* flag |= 1 where |F - I| > tol or NaN (F n x n, ld n): the deflated small
 * SVD's orthogonality check (small_svd_cuda.c) */
static __global__ void orth_tol_kernel(long long n, const double *F, double tol, int *flag) {
    const long long nn = n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x) {
        const double f = F[t] - ((t % n == t / n) ? 1.0 : 0.0);
        if (!(fabs(f) <= tol)) atomicOr(flag, 1);
    }
}

extern "C" int tn_cu_orth_check_tol(int64_t n, const double *F, double tol, int *flag,
                                    cudaStream_t stream) {
    if (n <= 0) return 0;
    const long long nn = (long long)n * n, blocks = (nn + 255) / 256;
    orth_tol_kernel<<<(unsigned)(blocks < 1024 ? blocks : 1024), 256, 0, stream>>>(
        (long long)n, F, tol, flag);
    return (int)cudaGetLastError();
}

/* The deflated path's refinement (src/linalg/deflated_svd.h;
 * tn_defl_refine_ref its C reference): block j makes column j of Qv =
 * diag(s) (I + P) (times s'_j where scale), Qu = diag(s) (I + P) / s'_j,
 * s'_j = sqrt(max(s_j^2 F_jj + sum_i H_ij P_ij, 0)) into Sk (FP32, may be
 * NULL), from F (k x k, ld k) and s_i = sqrt(lam[l - 1 - i]); flag |= 1
 * where s'_j is not positive and finite. */
static __global__ void defl_refine_kernel(long long k, long long l, const double *F,
                                          const double *lam, double rho, int scale, double *Qv,
                                          double *Qu, float *Sk, int *flag) {
    __shared__ double part[32];
    const long long j = blockIdx.x;
    const double sj = sqrt(lam[l - 1 - j]);
    double acc = 0.0;
    for (long long i = threadIdx.x; i < k; i += blockDim.x) {
        const double si = sqrt(lam[l - 1 - i]), f = F[i + j * k];
        const double p = i == j ? 0.0 : tn_defl_p(f, si, sj, rho);
        if (p != 0.0) acc += f * si * sj * p;
        Qv[i + j * k] = si * ((i == j ? 1.0 : 0.0) + p);
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    double sum = 0.0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) sum += part[w]; /* in order */
    const double sn = sqrt(fmax(sj * sj * F[j + j * k] + sum, 0.0));
    const int ok = sn > 0.0 && sn <= 1.79e308;
    for (long long i = threadIdx.x; i < k; i += blockDim.x) {
        const double q = Qv[i + j * k];
        Qu[i + j * k] = ok ? q / sn : 0.0;
        if (scale) Qv[i + j * k] = q * sn;
    }
    if (threadIdx.x == 0) {
        if (Sk) Sk[j] = (float)sn;
        if (!ok) atomicOr(flag, 1);
    }
}

extern "C" int tn_cu_defl_refine(int64_t k, int64_t l, const double *F, const double *lam,
                                 double rho, int scale, double *Qv, double *Qu, float *Sk,
                                 int *flag, cudaStream_t stream) {
    if (k <= 0) return 0;
    defl_refine_kernel<<<(unsigned)k, 256, 0, stream>>>((long long)k, (long long)l, F, lam, rho,
                                                        scale, Qv, Qu, Sk, flag);
    return (int)cudaGetLastError();
}

/* ----------------------------------------------------------- checks */
#define TN_SEG_ROWS 8192 /* column vectors: rows per warp task (at most) */
#define TN_SEG_COLS 256  /* row vectors: columns per block task */

/* Vectors are the columns (contiguous). A group of lpc lanes (32, or 8 for
 * columns shorter than 2048, so that short columns do not pay a whole
 * warp's reduction each) handles one column segment; with vec4 (every
 * column 16-byte aligned) a lane reads 4 elements per load and the
 * segment's last < 4 one by one. */
static __global__ void check_cols_kernel(const float *X, long long ld, long long rows,
                                         long long cols, int kind, uint32_t *vmx,
                                         double *verr, long long stride, long long batch,
                                         int vec4, int lpc, long long seg) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int sub = lane & (lpc - 1), cpw = 32 / lpc; /* columns per warp */
    long long nseg = (rows + seg - 1) / seg;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z)
    for (long long c0 = ((long long)blockIdx.x * 8 + warp) * cpw; c0 < cols;
         c0 += (long long)gridDim.x * 8 * cpw)
        for (long long sg = blockIdx.y; sg < nseg; sg += gridDim.y) {
            const long long c = c0 + lane / lpc;
            const float *p = X + z * stride + c * ld;
            long long i0 = sg * seg, i1 = min(rows, i0 + seg);
            uint32_t mx = 0;
            double me = 0.0;
            if (c < cols) {
                if (vec4) {
                    const long long nq = (i1 - i0) >> 2; /* i0 is a multiple of 4 */
                    const float4 *p4 = (const float4 *)(p + i0);
#pragma unroll 4
                    for (long long q = sub; q < nq; q += lpc) {
                        const float4 v = __ldg(p4 + q);
                        tn_check_elem(kind, v.x, &mx, &me);
                        tn_check_elem(kind, v.y, &mx, &me);
                        tn_check_elem(kind, v.z, &mx, &me);
                        tn_check_elem(kind, v.w, &mx, &me);
                    }
                    const long long it = i0 + 4 * nq + sub;
                    if (it < i1) tn_check_elem(kind, p[it], &mx, &me);
                } else {
#pragma unroll 4
                    for (long long i = i0 + sub; i < i1; i += lpc) tn_check_elem(kind, p[i], &mx, &me);
                }
            }
            for (int o = lpc / 2; o > 0; o >>= 1) { /* within the lane group */
                mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
                double oe = __shfl_xor_sync(0xffffffffu, me, o);
                if (!(oe <= me)) me = oe;
            }
            if (sub == 0 && c < cols) {
                atomicMax(&vmx[z * cols + c], mx);
                if (kind >= 0) tn_atomic_max_f64_nonneg(&verr[z * cols + c], me);
            }
        }
}

/* Vectors are the rows (strided by ld). A block handles 128 rows (4
 * consecutive ones per lane, one 16-byte load per column when vec4; one by
 * one otherwise) x a column segment; its 8 warps stride over the columns. */
static __global__ void check_rows_kernel(const float *Xb, long long ld, long long rows,
                                         long long cols, int kind, uint32_t *vmx,
                                         double *verr, long long stride, long long batch,
                                         int vec4) {
    __shared__ uint32_t smx[8][128];
    __shared__ double sme[8][128];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    long long nseg = (cols + TN_SEG_COLS - 1) / TN_SEG_COLS;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z)
    for (long long r0 = (long long)blockIdx.x * 128; r0 < rows; r0 += (long long)gridDim.x * 128)
        for (long long sg = blockIdx.y; sg < nseg; sg += gridDim.y) {
            const float *X = Xb + z * stride;
            const long long r = r0 + 4 * lane, c0 = sg * TN_SEG_COLS,
                            c1 = min(cols, c0 + TN_SEG_COLS);
            uint32_t mx[4] = {0, 0, 0, 0};
            double me[4] = {0.0, 0.0, 0.0, 0.0};
            if (vec4 && r + 3 < rows) {
#pragma unroll 4
                for (long long c = c0 + warp; c < c1; c += 8) {
                    const float4 v = __ldg((const float4 *)(X + r + c * ld));
                    tn_check_elem(kind, v.x, &mx[0], &me[0]);
                    tn_check_elem(kind, v.y, &mx[1], &me[1]);
                    tn_check_elem(kind, v.z, &mx[2], &me[2]);
                    tn_check_elem(kind, v.w, &mx[3], &me[3]);
                }
            } else {
                for (long long c = c0 + warp; c < c1; c += 8)
                    for (int e = 0; e < 4; e++)
                        if (r + e < rows) tn_check_elem(kind, X[r + e + c * ld], &mx[e], &me[e]);
            }
            for (int e = 0; e < 4; e++) {
                smx[warp][4 * lane + e] = mx[e];
                sme[warp][4 * lane + e] = me[e];
            }
            __syncthreads();
            /* warp w reduces rows 32 w' .. of the block: thread t -> row t (< 128) */
            if (threadIdx.x < 128 && r0 + threadIdx.x < rows) {
                uint32_t m = smx[0][threadIdx.x];
                double er = sme[0][threadIdx.x];
                for (int w = 1; w < 8; w++) {
                    m = max(m, smx[w][threadIdx.x]);
                    if (!(sme[w][threadIdx.x] <= er)) er = sme[w][threadIdx.x];
                }
                atomicMax(&vmx[z * rows + r0 + threadIdx.x], m);
                if (kind >= 0) tn_atomic_max_f64_nonneg(&verr[z * rows + r0 + threadIdx.x], er);
            }
            __syncthreads();
        }
}

/* Per vector: NaN/Inf -> flags[1]; error above 2^-tol_bits * max|vector|
 * -> flags[2]. */
static __global__ void check_final_kernel(long long nvec, int kind, int tol_bits,
                                          const uint32_t *vmx, const double *verr, int *flags) {
    int nonfinite = 0, bad = 0;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nvec;
         v += (long long)gridDim.x * blockDim.x) {
        uint32_t mx = vmx[v];
        if (mx >= 0x7f800000u) {
            nonfinite = 1;
        } else if (kind >= 0) {
            double tol = ldexp((double)__uint_as_float(mx), -tol_bits);
            double e = verr[v];
            if (!(e <= tol)) bad = 1;
        }
    }
    if (__any_sync(0xffffffffu, nonfinite) && (threadIdx.x & 31) == 0) atomicOr(&flags[1], 1);
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) atomicOr(&flags[2], 1);
}

extern "C" size_t tn_cu_check_scratch(int64_t nvec) {
    return (size_t)nvec * (sizeof(double) + sizeof(uint32_t)) + 16;
}

/* per-vector partials in scratch: FP64 errors first (8-byte aligned), then
 * maxima; zeroed here (the errors only for a range check) */
extern "C" int tn_cu_check_begin(int64_t nvec, int check_kind, void *scratch, uint32_t **vmx,
                                 double **verr, cudaStream_t stream) {
    *verr = (double *)scratch;
    *vmx = (uint32_t *)(*verr + nvec);
    cudaError_t e = cudaMemsetAsync(*vmx, 0, sizeof(uint32_t) * (size_t)nvec, stream);
    if (e == cudaSuccess && check_kind >= 0)
        e = cudaMemsetAsync(*verr, 0, sizeof(double) * (size_t)nvec, stream);
    return (int)e;
}

extern "C" int tn_cu_check_end(int64_t nvec, int check_kind, int tol_bits, const void *scratch,
                               int *flags, cudaStream_t stream) {
    const double *verr = (const double *)scratch;
    const uint32_t *vmx = (const uint32_t *)(verr + nvec);
    int64_t fb = (nvec + 255) / 256;
    if (fb > 4096) fb = 4096;
    check_final_kernel<<<(unsigned)fb, 256, 0, stream>>>((long long)nvec, check_kind, tol_bits,
                                                         vmx, verr, flags);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_check_f32_batched(const float *X, int64_t ld, int64_t stride, int64_t rows,
                                       int64_t cols, int64_t batch, int vec_is_col,
                                       int check_kind, int tol_bits, int *flags, void *scratch,
                                       cudaStream_t stream) {
    if (rows <= 0 || cols <= 0 || batch <= 0) return 0;
    /* vectors: matrix z's vector v is number z * nvec + v */
    int64_t nvec = (vec_is_col ? cols : rows) * batch;
    double *verr;
    uint32_t *vmx;
    cudaError_t e = (cudaError_t)tn_cu_check_begin(nvec, check_kind, scratch, &vmx, &verr, stream);
    if (e != cudaSuccess) return (int)e;
    int64_t gz = batch > 65535 ? 65535 : batch;
    /* 16-byte loads when every vector start (column c, or rows 4 i of any
     * column) of every matrix of the batch is 16-byte aligned */
    const int vec4 = ((uintptr_t)X & 15u) == 0 && ld % 4 == 0 && (batch == 1 || stride % 4 == 0);
    if (vec_is_col) {
        const int lpc = rows >= 2048 ? 32 : 8, cpb = 8 * (32 / lpc); /* columns per block */
        /* few or short columns: shorter segments, for at least 512 blocks
         * where segments of 256 rows give them (a 1024 x 64 matrix takes 33
         * us in 2 blocks on an H200, its lanes' loads one after another) */
        int64_t gx = (cols + cpb - 1) / cpb, seg = TN_SEG_ROWS;
        while (seg > 256 && gx * gz * ((rows + seg - 1) / seg) < 512) seg /= 2;
        int64_t gy = (rows + seg - 1) / seg;
        if (gx > 0x7fffffffLL) gx = 0x7fffffffLL;
        if (gy > 65535) gy = 65535;
        check_cols_kernel<<<dim3((unsigned)gx, (unsigned)gy, (unsigned)gz), 256, 0, stream>>>(
            X, (long long)ld, (long long)rows, (long long)cols, check_kind, vmx, verr,
            (long long)stride, (long long)batch, vec4, lpc, (long long)seg);
    } else {
        int64_t gx = (rows + 127) / 128, gy = (cols + TN_SEG_COLS - 1) / TN_SEG_COLS;
        if (gx > 0x7fffffffLL) gx = 0x7fffffffLL;
        if (gy > 65535) gy = 65535;
        check_rows_kernel<<<dim3((unsigned)gx, (unsigned)gy, (unsigned)gz), 256, 0, stream>>>(
            X, (long long)ld, (long long)rows, (long long)cols, check_kind, vmx, verr,
            (long long)stride, (long long)batch, vec4);
    }
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    return tn_cu_check_end(nvec, check_kind, tol_bits, scratch, flags, stream);
}

extern "C" int tn_cu_check_f32(const float *X, int64_t ld, int64_t rows, int64_t cols,
                               int vec_is_col, int check_kind, int tol_bits, int *flags,
                               void *scratch, cudaStream_t stream) {
    return tn_cu_check_f32_batched(X, ld, 0, rows, cols, 1, vec_is_col, check_kind, tol_bits,
                                   flags, scratch, stream);
}

/* NaN / Inf among FP16 bits; with vec8 (every column 16-byte aligned) a
 * thread reads 8 values per load, the column's last < 8 one by one. */
static __global__ void check_f16_kernel(const uint16_t *X, long long ld, long long rows,
                                        long long cols, int *flags, long long stride,
                                        long long batch, int vec8) {
    int bad = 0;
    const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x,
                    tn = (long long)gridDim.x * blockDim.x;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z)
        for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
            const uint16_t *p = X + z * stride + j * ld;
            if (vec8) {
                const long long n8 = rows >> 3;
                for (long long q = t0; q < n8; q += tn) {
                    const uint4 v = __ldg((const uint4 *)p + q);
                    const unsigned w[4] = {v.x, v.y, v.z, v.w};
                    for (int e = 0; e < 4; e++) /* two halves per word */
                        if ((w[e] & 0x7c00u) == 0x7c00u || (w[e] & 0x7c000000u) == 0x7c000000u)
                            bad = 1;
                }
                for (long long i = 8 * n8 + t0; i < rows; i += tn)
                    if ((p[i] & 0x7c00u) == 0x7c00u) bad = 1;
            } else {
                for (long long i = t0; i < rows; i += tn)
                    if ((p[i] & 0x7c00u) == 0x7c00u) bad = 1;
            }
        }
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) atomicOr(&flags[1], 1);
}

extern "C" int tn_cu_check_f16_batched(const uint16_t *X, int64_t ld, int64_t stride,
                                       int64_t rows, int64_t cols, int64_t batch, int *flags,
                                       cudaStream_t stream) {
    if (rows <= 0 || cols <= 0 || batch <= 0) return 0;
    const int vec8 = ((uintptr_t)X & 15u) == 0 && ld % 8 == 0 && (batch == 1 || stride % 8 == 0);
    dim3 g = grid2d(vec8 ? (rows + 7) / 8 : rows, cols, 256);
    g.z = (unsigned)(batch > 65535 ? 65535 : batch);
    check_f16_kernel<<<g, 256, 0, stream>>>(X, (long long)ld, (long long)rows, (long long)cols,
                                            flags, (long long)stride, (long long)batch, vec8);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_check_f16(const uint16_t *X, int64_t ld, int64_t rows, int64_t cols,
                               int *flags, cudaStream_t stream) {
    return tn_cu_check_f16_batched(X, ld, 0, rows, cols, 1, flags, stream);
}

/* ------------------------- the whole check of a trusted operand, one pass */
/* tn_cuda_trust's check for FP16 kinds only (tn_rchk_is_f16_kind, with
 * tol_bits <= 26, so that 2^-tol |x| is exact in FP32 for |x| >= 2^-100;
 * the methods have 10 and 21), in one read
 * of X: the element-wise flags (flags[0 .. n]) and, for every
 * kind, the per-vector check of tn_cu_check_f32 on the rows and on the
 * columns. A vector fails kind j when some element's error exceeds 2^-tol
 * times the vector's largest |x|; an element that passes the element-wise
 * test (error <= 2^-tol |x|) cannot be that element, so only the errors of
 * elements failing it are kept (exact in FP32, tn_f16_err: their FP32 bits,
 * non-negative, order as unsigned). Per vector, in scratch: the largest
 * magnitude bits (NaN > Inf > finite), then per kind the largest kept
 * error; rows first, then columns.
 * A block covers TN_TR_ROWS rows (a warp 128 of them, a lane 4 consecutive
 * ones, one 16-byte load per column) and a range of columns, in groups of
 * TN_TR_U columns whose loads are issued before the group ahead is reduced
 * (two groups of 64 bytes a lane in flight: a memory-bound pass needs many
 * bytes in flight per SM): row maxima stay in the lanes' registers until
 * the end, column maxima are reduced in the warp (redux), then over the
 * warps in shared memory, TN_TR_CCH columns at a time. The bounded and the
 * exact pass are two instances of the kernel: the bounded one holds no
 * error maxima (under 64 registers: 4 blocks of 256 threads per SM,
 * against 2 for the exact one), and one wave of blocks covers the matrix;
 * bench/fixed_costs.c times both on a 16384^2 matrix. One pass instead of
 * an element-wise pass (0.30 ms on RSVD's 16384^2 A with every element in
 * FP16's normal range, 1.16 ms on the test matrix, where a fifth of them
 * lie below it) followed, where a kind fails
 * there, by a row and a column pass of tn_cu_check_f32 per such kind
 * (0.44-0.51 ms each, H200).
 * The bounded pass (bounded = 1, every kind fast) keeps only the
 * magnitudes: an element below FP16's normal range, 0 < |x| < 2^-14, is
 * represented within E = 2^-25 by one FP16 (half its subnormal spacing)
 * and within E = 2^-36 by halfhalf (hi subnormal, so |x - hi| <= 2^-25
 * and lo = fp16(2^11 (x - hi)) within 2^-25, scaled back by 2^-11); the
 * elements in the normal range pass element by element (tn_rchk_fast). So
 * a vector whose largest |x| is at least 2^tol E passes kind j whatever its
 * small elements are, and an element of at least 2^tol E passes it
 * element-wise. The flags are those of the exact pass, except that
 * flags[1 + j] = some 0 < |x| < 2^tol E (which the exact failures imply;
 * where all of those elements pass exactly, the caller trusts rows and
 * columns where the exact pass would have let it trust every layout).
 * Where that does not decide, it says so: flags[6] for an element
 * of at least 65504 (or NaN / Inf), flags[7] for a vector with 0 < max |x|
 * < 2^tol E; the caller then runs the exact pass. Per element only the
 * row, column and thread maxima and the thread's least nonzero |x|; the
 * flags come from the thread's extremes at the end (a version with the
 * three flags per element was as slow as the exact pass). On the
 * RSVD's test matrix (a fifth of the elements below 2^-14) the exact pass
 * takes the branch-free error path at almost every element. */
#define TN_TR_ROWS 1024 /* 8 warps x 128 */
#define TN_TR_CCH 256 /* columns per flush of the block's column maxima */
#define TN_TR_U 4     /* columns per group of loads (TN_TR_CCH a multiple) */

typedef struct {
    int n;
    int kind[4];
    float scale[4]; /* 2^-tol_bits */
    int tol[4];
    int fast[4];
    int allfast; /* every kind fast (tn_rchk_fast) */
    int bounded; /* the bounded pass (tn_cu_trust_check's argument) */
    uint32_t thr[4]; /* bounded: the bits of each kind's 2^tol E (above) */
    uint32_t thrmax; /* and of the largest */
} tr_kinds_t;

/* Two elements (the lane's rows e, e + 1): into the lane's row maxima
 * (rmx, rme[j]) and column maxima (cmx, cme[j]), and the element-wise bits.
 * Branch-free: with a fifth of the elements below FP16's normal range, some
 * lane of every warp takes the errors at every element anyway (a branch per
 * element that skips the normal ones runs at 0.95 ms for RSVD's A); the
 * conversions go two at a time (cvt.rn.f16x2). The errors are those of
 * tn_f16_err, exact, except where fp16(x) overflows or x is NaN: then
 * they are Inf or NaN here, which fail every kind's element-wise test and,
 * as error maxima, every vector's test as tn_f16_err's +Inf does. */
static __device__ __forceinline__ void tr_pair(float x0, float x1, const tr_kinds_t &kk,
                                               uint32_t *rmx, uint32_t (*rme)[4], int e,
                                               uint32_t &cmx, uint32_t *cme, unsigned &bad) {
    const uint32_t u0 = __float_as_uint(x0) & 0x7fffffffu, u1 = __float_as_uint(x1) & 0x7fffffffu;
    rmx[e] = max(rmx[e], u0), rmx[e + 1] = max(rmx[e + 1], u1);
    cmx = max(cmx, max(u0, u1));
    bad |= (unsigned)(max(u0, u1) >= 0x7f800000u);
    const float a0 = __uint_as_float(u0), a1 = __uint_as_float(u1);
    /* 0 < |x| < 2^-100: fails (2^-tol |x| may round) */
    const int t0 = u0 - 1u < 0x0d7fffffu, t1 = u1 - 1u < 0x0d7fffffu;
    const uint32_t h = tn_f2_to_h2(x0, x1);
    const float d0 = __fsub_rn(x0, tn_h2_lo(h)), d1 = __fsub_rn(x1, tn_h2_hi(h));
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (j >= kk.n) break;
        float e0 = fabsf(d0), e1 = fabsf(d1); /* F16 */
        if (kk.kind[j] != TN_RCHK_F16) { /* HALFHALF (lo scaled by 2^11) or MARKIDIS */
            const int hh = kk.kind[j] == TN_RCHK_HALFHALF;
            const float sc = hh ? TN_SPLIT_SCALE : 1.0f, is = hh ? TN_SPLIT_INV_SCALE : 1.0f;
            const uint32_t l = tn_f2_to_h2(__fmul_rn(d0, sc), __fmul_rn(d1, sc));
            e0 = fabsf(__fsub_rn(__fmul_rn(tn_h2_lo(l), is), d0));
            e1 = fabsf(__fsub_rn(__fmul_rn(tn_h2_hi(l), is), d1));
        }
        const int f0 = t0 || !(e0 <= __fmul_rn(a0, kk.scale[j])),
                  f1 = t1 || !(e1 <= __fmul_rn(a1, kk.scale[j]));
        bad |= (unsigned)(f0 | f1) << (1 + j);
        const uint32_t b0 = f0 ? __float_as_uint(e0) : 0u, b1 = f1 ? __float_as_uint(e1) : 0u;
        rme[e][j] = max(rme[e][j], b0), rme[e + 1][j] = max(rme[e + 1][j], b1);
        cme[j] = max(cme[j], max(b0, b1));
    }
}

/* A group of TN_TR_U columns of the lane's four rows (zeros past the
 * group's ncg columns and past rows; one 16-byte load per column where
 * full, else one element at a time). */
static __device__ __forceinline__ void tr_load(const float *X, long long ld, long long c, int ncg,
                                               long long r0, long long rows, int full,
                                               float (*v)[4]) {
    if (full && ncg == TN_TR_U) { /* (the loads together, no branch between) */
#pragma unroll
        for (int u = 0; u < TN_TR_U; u++) {
            const float4 f = __ldg((const float4 *)(X + (c + u) * ld + r0));
            v[u][0] = f.x, v[u][1] = f.y, v[u][2] = f.z, v[u][3] = f.w;
        }
        return;
    }
#pragma unroll
    for (int u = 0; u < TN_TR_U; u++) {
        const float *p = X + (c + u) * ld + r0;
        if (u < ncg && full) {
            const float4 f = __ldg((const float4 *)p);
            v[u][0] = f.x, v[u][1] = f.y, v[u][2] = f.z, v[u][3] = f.w;
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++) v[u][e] = u < ncg && r0 + e < rows ? __ldg(p + e) : 0.0f;
        }
    }
}

/* BOUNDED: the bounded pass (magnitudes only), else the exact one; two
 * instances, so that the bounded pass holds no error maxima (fewer
 * registers, more blocks per SM). The column range [cb, cend) goes in
 * groups of TN_TR_U columns, the next group's loads issued before the
 * current one is reduced (two groups of a lane in flight), and the
 * column maxima leave shared memory once per TN_TR_CCH columns. */
template <int BOUNDED>
static __global__ void __launch_bounds__(256, BOUNDED ? 4 : 2)
    trust_check_kernel(const float *X, long long ld, long long rows, long long cols,
                       long long cchunk, tr_kinds_t kk, int vec4, uint32_t *vm, int *flags) {
    __shared__ uint32_t smx[BOUNDED ? 1 : 5][TN_TR_CCH]; /* column maxima: magnitude, kinds */
    const int nk = BOUNDED ? 0 : kk.n; /* kinds with error maxima */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nv = 1 + nk;
    const long long r0 = (long long)blockIdx.x * TN_TR_ROWS + warp * 128 + 4 * lane;
    const long long cb = (long long)blockIdx.y * cchunk, cend = min(cols, cb + cchunk);
    const int full = vec4 && r0 + 3 < rows;
    uint32_t rmx[4], rme[4][4];
    uint32_t lo = 0xffffffffu; /* bounded: the least |x| - 1 (0 wraps to the top) */
    unsigned bad = 0;
#pragma unroll
    for (int e = 0; e < 4; e++) {
        rmx[e] = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) rme[e][j] = 0;
    }
    for (int t = threadIdx.x; t < nv * TN_TR_CCH; t += blockDim.x)
        smx[t / TN_TR_CCH][t % TN_TR_CCH] = 0;
    __syncthreads();
    const long long ng = cend > cb ? (cend - cb + TN_TR_U - 1) / TN_TR_U : 0;
    float v[TN_TR_U][4], w[TN_TR_U][4];
    if (ng > 0) tr_load(X, ld, cb, (int)min((long long)TN_TR_U, cend - cb), r0, rows, full, v);
    for (long long g = 0; g < ng; g++) {
        const long long c = cb + g * TN_TR_U;
        const int q0 = (int)((g * TN_TR_U) % TN_TR_CCH); /* c's place in its chunk */
        const int ncg = (int)min((long long)TN_TR_U, cend - c);
        if (g + 1 < ng)
            tr_load(X, ld, c + TN_TR_U, (int)min((long long)TN_TR_U, cend - c - TN_TR_U), r0,
                    rows, full, w);
#pragma unroll
        for (int u = 0; u < TN_TR_U; u++) {
            const int q = q0 + u;
            uint32_t cmx = 0, cme[4] = {0, 0, 0, 0};
            if (BOUNDED) { /* magnitudes, and the least nonzero one */
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const uint32_t b = __float_as_uint(v[u][e]) & 0x7fffffffu;
                    rmx[e] = max(rmx[e], b), cmx = max(cmx, b), lo = min(lo, b - 1u);
                }
            } else {
                /* every kind fast and the warp's 128 elements in FP16's
                 * normal range or 0: they pass everything, only their
                 * magnitudes count */
                int easy = kk.allfast;
#pragma unroll
                for (int e = 0; e < 4; e++) easy &= tn_f16_normal_or_zero(fabsf(v[u][e]));
                if (__all_sync(0xffffffffu, easy)) {
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const uint32_t b = __float_as_uint(v[u][e]) & 0x7fffffffu;
                        rmx[e] = max(rmx[e], b), cmx = max(cmx, b);
                    }
                } else {
                    tr_pair(v[u][0], v[u][1], kk, rmx, rme, 0, cmx, cme, bad);
                    tr_pair(v[u][2], v[u][3], kk, rmx, rme, 2, cmx, cme, bad);
                }
            }
            cmx = __reduce_max_sync(0xffffffffu, cmx);
            if (lane == 0 && u < ncg) atomicMax(&smx[0][q], cmx);
#pragma unroll
            for (int j = 0; j < 4; j++)
                if (j < nk && __any_sync(0xffffffffu, cme[j] != 0)) {
                    const uint32_t m = __reduce_max_sync(0xffffffffu, cme[j]);
                    if (lane == 0 && u < ncg) atomicMax(&smx[1 + j][q], m);
                }
        }
        if (q0 + TN_TR_U == TN_TR_CCH || g + 1 == ng) { /* the chunk's column maxima out */
            const long long c0 = c - q0;
            const int nc = q0 + ncg;
            __syncthreads();
            for (int t = threadIdx.x; t < nv * TN_TR_CCH; t += blockDim.x) {
                const int j = t / TN_TR_CCH, qq = t % TN_TR_CCH;
                const uint32_t m = smx[j][qq];
                if (qq < nc && m) atomicMax(&vm[(long long)j * cols + rows * nv + c0 + qq], m);
                smx[j][qq] = 0;
            }
            __syncthreads();
        }
#pragma unroll
        for (int u = 0; u < TN_TR_U; u++)
#pragma unroll
            for (int e = 0; e < 4; e++) v[u][e] = w[u][e];
    }
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const long long r = r0 + e;
        if (r >= rows) continue;
        if (rmx[e]) atomicMax(&vm[r], rmx[e]);
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (j < nk && rme[e][j]) atomicMax(&vm[(long long)(1 + j) * rows + r], rme[e][j]);
    }
    if (BOUNDED) { /* the element flags from the thread's extremes */
        const uint32_t hi = max(max(rmx[0], rmx[1]), max(rmx[2], rmx[3]));
        bad |= (unsigned)(hi >= 0x7f800000u) | (unsigned)(hi >= 0x477fe000u) << 6;
        for (int j = 0; j < kk.n; j++) bad |= (unsigned)(lo < kk.thr[j] - 1u) << (1 + j);
    }
    bad = __reduce_or_sync(0xffffffffu, bad);
    if (lane == 0 && bad) {
        for (int i = 0; i <= kk.n; i++)
            if (bad & (1u << i)) atomicOr(&flags[i], 1);
        if (bad & 64u) atomicOr(&flags[6], 1); /* (bounded) */
    }
}

/* Per kind j and layout (blockIdx.y: 0 rows, 1 columns), the flags of
 * tn_cu_check_f32 in flags[8 + 6 j + 3 layout + 1 .. 2]: a vector with NaN
 * / Inf, a vector whose largest kept error exceeds 2^-tol times its largest
 * magnitude (compared in FP64, exactly). */
static __global__ void trust_final_kernel(long long rows, long long cols, tr_kinds_t kk,
                                          const uint32_t *vm, int *flags) {
    const int lay = blockIdx.y, nv = kk.bounded ? 1 : 1 + kk.n;
    const long long nvec = lay ? cols : rows;
    const uint32_t *mx = vm + (lay ? rows * nv : 0);
    if (kk.bounded) { /* a vector that the bound does not decide */
        int und = 0;
        for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nvec;
             v += (long long)gridDim.x * blockDim.x)
            und |= kk.thrmax != 0 && mx[v] - 1u < kk.thrmax - 1u;
        if (__any_sync(0xffffffffu, und) && (threadIdx.x & 31) == 0) atomicOr(&flags[7], 1);
        return;
    }
    for (int j = 0; j < kk.n; j++) {
        const uint32_t *me = mx + (long long)(1 + j) * nvec;
        int nonfinite = 0, bad = 0;
        for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nvec;
             v += (long long)gridDim.x * blockDim.x) {
            if (mx[v] >= 0x7f800000u) nonfinite = 1;
            else if (!((double)__uint_as_float(me[v]) <=
                       ldexp((double)__uint_as_float(mx[v]), -kk.tol[j])))
                bad = 1;
        }
        int *f = flags + 8 + 6 * j + 3 * lay;
        if (__any_sync(0xffffffffu, nonfinite) && (threadIdx.x & 31) == 0) atomicOr(&f[1], 1);
        if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) atomicOr(&f[2], 1);
    }
}

/* Blocks of 256 threads of kernel f resident per SM (1 if the query fails). */
static int tr_per_sm(const void *f) {
    int v = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 256, 0) != cudaSuccess || v < 1) {
        cudaGetLastError(); /* (the query's error, if any, is not the launch's) */
        v = 1;
    }
    return v;
}

extern "C" size_t tn_cu_trust_check_scratch(int64_t rows, int64_t cols) {
    return (size_t)(rows + cols) * 5 * sizeof(uint32_t);
}

extern "C" int tn_cu_trust_check(const float *X, int64_t ld, int64_t rows, int64_t cols,
                                 const tn_elem_kinds_t *kk, const int *tol_bits, int bounded,
                                 int *flags, void *scratch, int sm_count, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    tr_kinds_t t;
    memset(&t, 0, sizeof t);
    t.n = kk->n;
    t.allfast = 1;
    float thr = 0.0f;
    for (int j = 0; j < kk->n; j++) {
        if (!tn_rchk_is_f16_kind(kk->kind[j]) || tol_bits[j] < 0 || tol_bits[j] > 26)
            return (int)cudaErrorInvalidValue;
        t.kind[j] = kk->kind[j], t.scale[j] = (float)kk->scale[j], t.tol[j] = tol_bits[j];
        t.fast[j] = kk->fast[j];
        t.allfast &= kk->fast[j] != 0;
        /* E: the largest error below FP16's normal range (module comment) */
        const float tj = tn_trust_small(kk->kind[j], tol_bits[j]);
        memcpy(&t.thr[j], &tj, sizeof tj);
        if (tj > thr) thr = tj;
    }
    if (bounded && !t.allfast) return (int)cudaErrorInvalidValue;
    t.bounded = bounded != 0;
    memcpy(&t.thrmax, &thr, sizeof thr);
    uint32_t *vm = (uint32_t *)scratch;
    const int nv = bounded ? 1 : 1 + t.n;
    cudaError_t e = cudaMemsetAsync(vm, 0, sizeof(uint32_t) * (size_t)((rows + cols) * nv), stream);
    if (e != cudaSuccess) return (int)e;
    const int vec4 = ((uintptr_t)X & 15u) == 0 && ld % 4 == 0;
    /* one wave of blocks (as many as fit on the SMs at once), each a
     * TN_TR_ROWS-row strip of a column range */
    /* (once per process and instance, thread-safe: C++ function-local statics) */
    static const int per_sm_exact = tr_per_sm((const void *)trust_check_kernel<0>),
                     per_sm_bounded = tr_per_sm((const void *)trust_check_kernel<1>);
    const int per_sm = bounded ? per_sm_bounded : per_sm_exact;
    const long long gx = (rows + TN_TR_ROWS - 1) / TN_TR_ROWS;
    long long gy = ((long long)per_sm * (sm_count > 0 ? sm_count : 132) + gx - 1) / gx;
    if (gy > cols) gy = cols;
    if (gy > 65535) gy = 65535;
    const long long cchunk = (cols + gy - 1) / gy;
    gy = (cols + cchunk - 1) / cchunk;
    if (gx > 0x7fffffffLL) return (int)cudaErrorInvalidValue;
    const dim3 grid((unsigned)gx, (unsigned)gy);
    if (bounded)
        trust_check_kernel<1><<<grid, 256, 0, stream>>>(X, (long long)ld, (long long)rows,
                                                        (long long)cols, cchunk, t, vec4, vm, flags);
    else
        trust_check_kernel<0><<<grid, 256, 0, stream>>>(X, (long long)ld, (long long)rows,
                                                        (long long)cols, cchunk, t, vec4, vm, flags);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    long long fb = ((rows > cols ? rows : cols) + 255) / 256;
    if (fb > 1024) fb = 1024;
    trust_final_kernel<<<dim3((unsigned)fb, 2), 256, 0, stream>>>((long long)rows,
                                                                  (long long)cols, t, vm, flags);
    return (int)cudaGetLastError();
}
