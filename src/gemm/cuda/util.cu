/* Memory-bound helper kernels of the CUDA GEMM backend: element
 * conversions, C = beta*C, the FP64 epilogue, and the NaN/Inf and range
 * checks that run before a Tensor Core method (same semantics as
 * tn_has_nonfinite and tn_range_ok of src/numerics/split.c). */
#include "gemm/cuda/split.cuh"
#include "gemm/cuda/tn_cuda.h"

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
 * convert_kernel, which ran at about 1.3 TB/s on 1 GiB operands */
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
 * ran at about 2.2 TB/s (1.23 ms for 1 GiB A and E into FP16, H200) */
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
         * where segments of 256 rows give them (a 1024 x 64 matrix took 33
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

/* ------------------------------------ element-wise check (trusted operand) */
/* tn_elem_bad (split.cuh): bit 0 NaN / Inf, bit 1 + i kind i fails. */
/* Measured on an H200 (session 8, Nsight Compute; this kernel is 100 KB of
 * code, with elem_bad inlined at 16 elements): RSVD's 16384^2 A 0.30 ms
 * (fast kinds) / 1.18 ms (others), RP-HOSVD's 768^3 tensor 0.49 / 0.92 ms.
 * Tried and dropped: elem_bad out of line behind an inline test of FP16's
 * normal range (HOSVD 0.43 / 0.43, RSVD 0.54 / 1.26); only the FP64 kinds
 * out of line, kinds from shared memory (35 KB of code: 0.30 / 1.10 and
 * 0.50 / 0.88). Session 13 (allfast, elem_bad4 below): RP-HOSVD's 1024^3
 * tensor 1.70 -> 1.03 ms on an H200 (4.2 TB/s). */
/* allfast (every kind fast): an element in FP16's normal range or zero
 * passes every kind (tn_elem_bad returns 0 for it), so four of them are tested
 * at once with tn_f16_normal_or_zero and only the others go through
 * tn_elem_bad, out of line. Same flags. */
static __device__ __forceinline__ unsigned elem_bad4_all(float4 v, const tn_elem_kinds_t &kk) {
    return tn_elem_bad(v.x, kk) | tn_elem_bad(v.y, kk) | tn_elem_bad(v.z, kk) | tn_elem_bad(v.w, kk);
}
static __device__ __noinline__ unsigned elem_bad4_slow(float4 v, tn_elem_kinds_t kk) {
    return elem_bad4_all(v, kk);
}
/* f16only (every kind an FP16 one, as for the FP16 Tensor Core methods):
 * the others in line, in FP32 (tn_elem_bad_f16, few registers). Not rare
 * for them: RSVD's 16384^2 test matrix has a fifth of its elements below
 * 2^-14; in line, and with the kinds that already failed in this thread
 * skipped (the flags are an OR), instead of the call out of line that
 * evaluated every kind of every such element: 1.55 ms (H200, session 18). */
static __device__ __forceinline__ unsigned elem_bad4(float4 v, const tn_elem_kinds_t &kk,
                                                     int allfast, int f16only, unsigned done) {
    if (!allfast) return elem_bad4_all(v, kk);
    if (tn_f16_normal_or_zero(fabsf(v.x)) && tn_f16_normal_or_zero(fabsf(v.y)) &&
        tn_f16_normal_or_zero(fabsf(v.z)) && tn_f16_normal_or_zero(fabsf(v.w)))
        return 0;
    if (f16only) /* (done: kinds this thread has seen fail are not evaluated again) */
        return tn_elem_bad_k(v.x, kk, 1, done) | tn_elem_bad_k(v.y, kk, 1, done) |
               tn_elem_bad_k(v.z, kk, 1, done) | tn_elem_bad_k(v.w, kk, 1, done);
    return elem_bad4_slow(v, kk); /* rare where allfast */
}

static __global__ void check_elementwise_kernel(const float *X, long long ld, long long rows,
                                                long long cols, tn_elem_kinds_t kk, int vec4,
                                                int *flags) {
    unsigned bad = 0;
    int allfast = 1, f16only = 1;
    for (int i = 0; i < kk.n; i++) {
        allfast &= kk.fast[i] != 0;
        f16only &= tn_rchk_is_f16(kk.kind[i]);
    }
    const long long step = (long long)gridDim.x * blockDim.x;
    const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        const float *p = X + j * ld;
        if (vec4) {
            const float4 *p4 = (const float4 *)p;
            const long long nq = rows / 4;
            long long q = t0;
            for (; q + 3 * step < nq; q += 4 * step) { /* four loads in flight */
                float4 v[4];
#pragma unroll
                for (int u = 0; u < 4; u++) v[u] = __ldg(p4 + q + u * step);
#pragma unroll
                for (int u = 0; u < 4; u++) bad |= elem_bad4(v[u], kk, allfast, f16only, bad);
            }
            for (; q < nq; q += step) bad |= elem_bad4(__ldg(p4 + q), kk, allfast, f16only, bad);
        } else {
            for (long long i = t0; i < rows; i += step) bad |= tn_elem_bad(__ldg(p + i), kk);
        }
    }
    for (int o = 16; o > 0; o >>= 1) bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    if ((threadIdx.x & 31) == 0 && bad)
        for (int i = 0; i <= kk.n; i++)
            if (bad & (1u << i)) atomicOr(&flags[i], 1);
}

extern "C" int tn_cu_check_elementwise(const float *X, int64_t ld, int64_t rows, int64_t cols,
                                       const tn_elem_kinds_t *kk, int *flags,
                                       cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return 0;
    /* a dense matrix is one long column */
    if (ld == rows && rows * cols / rows == cols) rows *= cols, cols = 1, ld = rows;
    const int vec4 = ((uintptr_t)X & 15u) == 0 && ld % 4 == 0 && rows % 4 == 0;
    const long long per = vec4 ? rows / 4 : rows;
    long long gx = (per + 255) / 256;
    if (gx > 2048) gx = 2048;
    if (gx < 1) gx = 1;
    const long long gy = cols < 65535 ? cols : 65535;
    check_elementwise_kernel<<<dim3((unsigned)gx, (unsigned)gy), 256, 0, stream>>>(
        X, (long long)ld, (long long)rows, (long long)cols, *kk, vec4, flags);
    return (int)cudaGetLastError();
}
