/* CholeskyQR's two products and the small SVD's V^T on Hopper's FP64
 * Tensor Cores (mma.sync m16n8k8 .f64, sm_90a), reading the FP32 matrix
 * itself (src/backend/cuda/orth_cuda.c, cholqr64's single pass;
 * small_svd_cuda.c, tn_cuda_svd_from_gram_rows):
 *
 *  - the Gram matrix's slab partials (tn_cu_gram_dmma): P_s = Y_s^T Y_s
 *    for the row slabs Y_s of Y, on and above the diagonal, one block per
 *    64 x 64 tile of the upper triangle and slab, in the layout that
 *    tn_cu_gram_reduce sums (n x n each, packed). Y (FP32 or FP64) is
 *    copied 32 rows at a time into shared memory as it is (cp.async of
 *    16 bytes, the next chunks in flight) and widened (exact) as the
 *    fragments are read;
 *  - C = A B with A FP32 and B FP64 (tn_cu_gemm_dmma): Q = Y R^-1 in
 *    place (B = R^-1, upper triangular), and the small SVD's V^T = Xs^T
 *    W^T. Each block stages 64 whole rows of A in shared memory (FP32,
 *    cp.async), multiplies them by B (from L2, a step ahead) with FP64
 *    accumulation, and writes C's rows (or C^T's columns) rounded to
 *    FP32, unless *flag (CholeskyQR's deferred verdict) is set. The block
 *    owns its rows, so in place is safe. tn_cu_gemm_dmma64 writes C in
 *    FP64: the small SVD's deflated path, Y_b = W X_b and V^T = Xs^T W^T
 *    from the FP32 W without widening it.
 *
 * These replace, on the single pass, the widening of Y into FP64, the
 * strided batch of DGEMMs and the DTRMM with its narrowing: FP64 products
 * of FP32 data, exact products and FP64 sums as before (the order of the
 * sums differs; test gpu_cholqr_dmma_products holds them to FP64
 * summation bounds). Throughput measured on an H100 (a probe of the
 * shapes, 8 warps per SM): m16n8k4 / k8 / k16 65-66 TFLOPS, m8n8k4 33.
 *
 * H100, bench/fixed_costs.c, 16384 x 266 (the randomized SVD's): the Gram
 * partials with their sum 72 us against 100 for the FP64 path's widening
 * and batch of DGEMMs (24 + 76), Y R^-1 49 us against 99 for its DTRMM
 * and narrowing (75 + 24); the deferred single pass 254-259 us. The Gram
 * kernel staged its chunks through registers then (loads a chunk ahead,
 * widened, stored as FP64: 226 registers, two blocks per SM); with the
 * chunks copied as they are by 16-byte cp.async and widened as read (149
 * registers, three blocks per SM) it takes 65-66 us against 71-74 on an
 * H200 (bench/fixed_costs.c, the partials with their sum; the deferred
 * single pass 219-220 against 226). Its FP64 input, which only the tests
 * and that benchmark use, holds two chunks in flight in 82 KB (87 against
 * 78 us). What bounds it: 15 tiles x 16 slabs = 240 blocks of unequal
 * work (the last block column holds 10 of 64 columns) and each column
 * block read once per tile it enters (126 MB through L2). */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "backend/cuda/tn_cuda.h"

#if S9_ON
/* c += a b, one m16n8k8 FP64 product: a_q at (g + 8 (q % 2), t + 4 (q / 2)),
 * b_q at (t + 4 q, g), c_0,1 at (g, 2 t + 0,1), c_2,3 at (g + 8, 2 t + 0,1),
 * g = lane / 4, t = lane % 4 */
static __device__ __forceinline__ void dmma8(double (&c)[4], const double (&a)[4],
                                             const double (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
#endif

#if S9_ON
/* cp.async of one element (4 or 8 bytes), zero-filled where !ok */
template <typename T>
static __device__ __forceinline__ void cp_elem(T *dst, const T *src, int ok) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(s9_smem_u32(dst)), "l"(src),
                 "n"(sizeof(T)), "r"(ok ? (int)sizeof(T) : 0)
                 : "memory");
}
static __device__ __forceinline__ void cp_commit(void) {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N> static __device__ __forceinline__ void cp_wait(void) {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
#endif

/* ------------------------------------------------------------ Gram */
#define GD_T 64        /* tile of G */
#define GD_KC 32       /* rows of Y per chunk */
#define GD_S 40        /* a tile column's stride in shared memory (elements) */
#define GD_THREADS 128 /* 4 warps, 32 x 32 of the tile each */

/* chunks in flight (stages): three of FP32 (61 KB, three blocks per SM),
 * two of FP64 (82 KB, two blocks per SM) */
template <typename T> static constexpr __host__ __device__ int gd_stages(void) {
    return sizeof(T) == 4 ? 3 : 2;
}
template <typename T> static size_t gram_dmma_smem(void) {
    return sizeof(T) * gd_stages<T>() * 2 * GD_T * GD_S;
}

#if S9_ON
/* cp.async of 16 bytes, the bytes past nbytes zero-filled */
static __device__ __forceinline__ void cp_16(void *dst, const void *src, int nbytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s9_smem_u32(dst)), "l"(src),
                 "r"(nbytes)
                 : "memory");
}
/* two consecutive elements of shared memory, widened */
static __device__ __forceinline__ void ld_pair(const float *p, double &a, double &b) {
    const float2 v = *(const float2 *)p;
    a = (double)v.x, b = (double)v.y;
}
static __device__ __forceinline__ void ld_pair(const double *p, double &a, double &b) {
    const double2 v = *(const double2 *)p;
    a = v.x, b = v.y;
}
#endif

/* Block (tile (I, J) of G's upper triangle, slab s): Y's rows of the slab
 * in chunks of 32, each chunk's columns of tiles I and J copied into
 * shared memory as they are (cp.async, 16 bytes at a time where vec: Y
 * 16-byte aligned, ldy and the slab's rows multiples of 4; else element by
 * element), gd_stages chunks in flight, widened as the fragments are read. The
 * product m16n8k8 takes its k index t + 4 h (lane t = lane % 4, h = 0, 1)
 * as row 2 t + h of the 8, in both operands alike, so that each lane
 * reads its two rows as one pair (conflict-free with the stride of 40).
 * The same bits from FP32 and from FP64 Y of the same values. */
template <typename T>
static __global__ void __launch_bounds__(GD_THREADS, 3)
    gram_dmma_kernel(const T *__restrict__ Y, long long ldy, long long m, int n, long long slab,
                     int nslab, int vec, double *__restrict__ P) {
#if S9_ON
    extern __shared__ __align__(16) unsigned char gsm_raw[];
    T *gsm = (T *)gsm_raw; /* [stage][operand][column][row] */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const int nt = (n + GD_T - 1) / GD_T;
    int p = blockIdx.x, I = 0; /* the tile (I, J), I <= J */
    while (p >= nt - I) p -= nt - I, I++;
    const int J = I + p, s = blockIdx.y, diag = I == J;
    const long long r0 = (long long)s * slab, r1 = s == nslab - 1 ? m : r0 + slab;
    const int nch = (int)((r1 - r0 + GD_KC - 1) / GD_KC);
    constexpr int EPS16 = 16 / (int)sizeof(T); /* elements per 16 bytes */
    constexpr int GD_ST = gd_stages<T>();
    /* chunk ch into stage st: operand o's column c (o = 0: tile I; 1: J) */
    auto load = [&](int ch, int st) {
        const long long rb = r0 + (long long)ch * GD_KC;
        for (int o = 0; o <= !diag; o++) {
            T *dst = gsm + (size_t)(st * 2 + o) * GD_T * GD_S;
            const int c0 = (o ? J : I) * GD_T;
            if (vec) { /* a column's 32 rows in 32 / EPS16 pieces of 16 bytes */
                constexpr int NP = GD_KC / EPS16;
                for (int e = tid; e < GD_T * NP; e += GD_THREADS) {
                    const int c = e / NP, q = e % NP, col = c0 + c;
                    const long long row = rb + q * EPS16;
                    const long long left = col < n ? r1 - row : 0;
                    const int nb = left <= 0 ? 0 : left >= EPS16 ? 16 : (int)left * (int)sizeof(T);
                    cp_16(dst + c * GD_S + q * EPS16, nb ? Y + row + (long long)col * ldy : Y, nb);
                }
            } else {
                for (int e = tid; e < GD_T * GD_KC; e += GD_THREADS) {
                    const int c = e / GD_KC, r = e % GD_KC, col = c0 + c;
                    const long long row = rb + r;
                    const int ok = col < n && row < r1;
                    cp_elem(dst + c * GD_S + r, ok ? Y + row + (long long)col * ldy : Y, ok);
                }
            }
        }
    };
    /* the warp's 32 x 32: rows (of G) wi * 32 .., columns wj * 32 .. of the tile */
    const int wi = warp & 1, wj = warp >> 1;
    const int i0 = I * GD_T + wi * 32, j0 = J * GD_T + wj * 32;
    const int live = i0 < n && j0 < n && !(diag && wi > wj); /* (the lower quarter of a diagonal tile is not read) */
    const int nbl = min(4, (n - j0 + 7) / 8); /* n8 blocks before n */
    double acc[2][4][4];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[a][b][q] = 0.0;
#pragma unroll
    for (int st = 0; st < GD_ST - 1; st++) {
        if (st < nch) load(st, st);
        cp_commit();
    }
    for (int ch = 0; ch < nch; ch++) {
        cp_wait<GD_ST - 2>(); /* (this thread's copies of chunk ch) */
        __syncthreads();      /* (everyone's; and the stage refilled below is read out) */
        if (ch + GD_ST - 1 < nch) load(ch + GD_ST - 1, (ch + GD_ST - 1) % GD_ST);
        cp_commit();
        if (!live) continue;
        const int st = ch % GD_ST;
        const T *sa = gsm + (size_t)(st * 2) * GD_T * GD_S;
        const T *sb = diag ? sa : sa + GD_T * GD_S;
#pragma unroll
        for (int ks = 0; ks < GD_KC / 8; ks++) {
            double fa[2][4], fb[4][2];
#pragma unroll
            for (int mb = 0; mb < 2; mb++)
#pragma unroll
                for (int h8 = 0; h8 < 2; h8++) /* a_q, q = h8 + 2 h: row 2 t + h */
                    ld_pair(sa + (wi * 32 + mb * 16 + g + 8 * h8) * GD_S + ks * 8 + 2 * t,
                            fa[mb][h8], fa[mb][h8 + 2]);
#pragma unroll
            for (int nb = 0; nb < 4; nb++) /* b_q: row 2 t + q */
                ld_pair(sb + (wj * 32 + nb * 8 + g) * GD_S + ks * 8 + 2 * t, fb[nb][0], fb[nb][1]);
#pragma unroll
            for (int nb = 0; nb < 4; nb++)
                if (nb < nbl)
#pragma unroll
                    for (int mb = 0; mb < 2; mb++) dmma8(acc[mb][nb], fa[mb], fb[nb]);
        }
    }
    cp_wait<0>();
    if (!live) return;
    double *Ps = P + (long long)s * n * n;
#pragma unroll
    for (int mb = 0; mb < 2; mb++)
#pragma unroll
        for (int nb = 0; nb < 4; nb++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int i = i0 + mb * 16 + g + 8 * (q >> 1), j = j0 + nb * 8 + 2 * t + (q & 1);
                if (i < n && j < n && i <= j) Ps[i + (long long)j * n] = acc[mb][nb][q];
            }
#endif
}

extern "C" int tn_cu_dmma_ok(int cc) { return cc == 90; }

extern "C" int tn_cu_gram_dmma(const void *Y, int f64, int64_t ldy, int64_t m, int64_t n,
                               int64_t nslab, double *P, cudaStream_t stream) {
    if (m < 1 || n < 1 || nslab < 1 || nslab > m || n > 4096) return (int)cudaErrorInvalidValue;
    const int nt = (int)((n + GD_T - 1) / GD_T);
    const dim3 grid((unsigned)(nt * (nt + 1) / 2), (unsigned)nslab);
    const long long slab = m / nslab;
    /* (the same test for both types: the same bits from either) */
    const int vec = ((uintptr_t)Y & 15u) == 0 && ldy % 4 == 0 && slab % 4 == 0;
    cudaError_t err;
    if (f64) {
        const size_t smem = gram_dmma_smem<double>();
        err = cudaFuncSetAttribute(gram_dmma_kernel<double>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (!err)
            gram_dmma_kernel<double><<<grid, GD_THREADS, smem, stream>>>(
                (const double *)Y, (long long)ldy, (long long)m, (int)n, slab, (int)nslab, vec, P);
    } else {
        const size_t smem = gram_dmma_smem<float>();
        err = cudaFuncSetAttribute(gram_dmma_kernel<float>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (!err)
            gram_dmma_kernel<float><<<grid, GD_THREADS, smem, stream>>>(
                (const float *)Y, (long long)ldy, (long long)m, (int)n, slab, (int)nslab, vec, P);
    }
    return err ? (int)err : (int)cudaGetLastError();
}

/* -------------------------------------- C = A B (Q = Y R^-1 in place) */
#define TQ_RB 64       /* rows of A per block */
#define TQ_THREADS 256 /* 8 warps: 2 row halves x 4 column classes */
#define TQ_S 72        /* a column's stride in shared memory (floats): conflict-free */
#define TQ_NBP 3       /* n8 column blocks a warp holds at a time */

static size_t gemm_dmma_smem(int l) { return sizeof(float) * (size_t)((l + 7) / 8 * 8) * TQ_S; }

/* Each block: rows r0 .. r0 + 63 of A (m x l, FP32) staged whole (before
 * any write, so that C may be A), times B (l x k, FP64; upper: zero below
 * the diagonal, its zero blocks skipped), the products m16n8k8 in FP64
 * (warp: rows wr * 32 .., the n8 blocks wc, wc + 4, ..., TQ_NBP at a
 * time), C in TC, FP32 or FP64 (transc: C^T, k x m) */
template <typename TC>
static __global__ void __launch_bounds__(TQ_THREADS, 2)
    gemm_dmma_kernel(const float *A, long long lda, long long m, int l, int k,
                     const double *__restrict__ B, long long ldb, int upper, TC *C,
                     long long ldc, int transc, const int *flag) {
#if S9_ON
    if (flag && *(volatile const int *)flag) return; /* a verdict failed: C stays as it is */
    extern __shared__ float tsm[]; /* [column][row] */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const long long r0 = (long long)blockIdx.x * TQ_RB;
    const int nb8 = (k + 7) / 8, nks = (l + 7) / 8;
    /* the thread copies rows lane and lane + 32 of columns warp + 8 q (zeros past l and m) */
    for (int c = warp; c < 8 * nks; c += TQ_THREADS / 32)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long long r = r0 + lane + 32 * h;
            const int ok = r < m && c < l;
            cp_elem(tsm + c * TQ_S + lane + 32 * h, ok ? A + r + (long long)c * lda : A, ok);
        }
    cp_commit();
    cp_wait<0>();
    __syncthreads();
    const int wr = warp & 1, wc = warp >> 1; /* rows wr * 32 ..; column blocks wc + 4 x */
    const int nmine = (nb8 - wc + 3) / 4;
    for (int x0 = 0; x0 < nmine; x0 += TQ_NBP) {
        double acc[2][TQ_NBP][4];
#pragma unroll
        for (int a = 0; a < 2; a++)
#pragma unroll
            for (int b = 0; b < TQ_NBP; b++)
#pragma unroll
                for (int q = 0; q < 4; q++) acc[a][b][q] = 0.0;
        /* B's rows 8 ks .. (upper: up to the last block held), a step ahead */
        const int kend = upper ? min(nks - 1, wc + 4 * min(x0 + TQ_NBP - 1, nmine - 1)) : nks - 1;
        double fb[TQ_NBP][2], fn[TQ_NBP][2];
        auto load_b = [&](int ks, double (&f)[TQ_NBP][2]) {
#pragma unroll
            for (int b = 0; b < TQ_NBP; b++) {
                const int j = (wc + 4 * (x0 + b)) * 8 + g, kk = ks * 8 + t;
                const int on = x0 + b < nmine && (!upper || wc + 4 * (x0 + b) >= ks) && j < k;
                f[b][0] = on && kk < l ? __ldg(B + kk + (long long)j * ldb) : 0.0;
                f[b][1] = on && kk + 4 < l ? __ldg(B + kk + 4 + (long long)j * ldb) : 0.0;
            }
        };
        load_b(0, fn);
        for (int ks = 0; ks <= kend; ks++) {
#pragma unroll
            for (int b = 0; b < TQ_NBP; b++) fb[b][0] = fn[b][0], fb[b][1] = fn[b][1];
            if (ks < kend) load_b(ks + 1, fn);
            double fa[2][4];
#pragma unroll
            for (int mb = 0; mb < 2; mb++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    fa[mb][q] = (double)tsm[(ks * 8 + t + 4 * (q >> 1)) * TQ_S + wr * 32 + mb * 16 +
                                            g + 8 * (q & 1)];
#pragma unroll
            for (int b = 0; b < TQ_NBP; b++)
                if (x0 + b < nmine && (!upper || wc + 4 * (x0 + b) >= ks))
#pragma unroll
                    for (int mb = 0; mb < 2; mb++) dmma8(acc[mb][b], fa[mb], fb[b]);
        }
#pragma unroll
        for (int b = 0; b < TQ_NBP; b++) {
            if (x0 + b >= nmine) continue;
#pragma unroll
            for (int mb = 0; mb < 2; mb++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const long long r = r0 + wr * 32 + mb * 16 + g + 8 * (q >> 1);
                    const int j = (wc + 4 * (x0 + b)) * 8 + 2 * t + (q & 1);
                    if (r < m && j < k)
                        C[transc ? j + r * ldc : r + (long long)j * ldc] = (TC)acc[mb][b][q];
                }
        }
    }
#endif
}

template <typename TC>
static int gemm_dmma_launch(const float *A, int64_t lda, int64_t m, int64_t l, int64_t k,
                            const double *B, int64_t ldb, int upper, TC *C, int64_t ldc,
                            int transc, const int *flag, cudaStream_t stream) {
    if (m < 1 || l < 1 || k < 1 || l > TN_DMMA_GEMM_MAX || k > TN_DMMA_GEMM_MAX || ldb < l ||
        ((const void *)C == (const void *)A && (transc || k != l || sizeof(TC) != sizeof(float))))
        return (int)cudaErrorInvalidValue;
    const size_t smem = gemm_dmma_smem((int)l);
    cudaError_t err = cudaFuncSetAttribute(gemm_dmma_kernel<TC>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (!err)
        gemm_dmma_kernel<TC><<<(unsigned)((m + TQ_RB - 1) / TQ_RB), TQ_THREADS, smem, stream>>>(
            A, (long long)lda, (long long)m, (int)l, (int)k, B, (long long)ldb, upper, C,
            (long long)ldc, transc, flag);
    return err ? (int)err : (int)cudaGetLastError();
}

extern "C" int tn_cu_gemm_dmma(const float *A, int64_t lda, int64_t m, int64_t l, int64_t k,
                               const double *B, int64_t ldb, int upper, float *C, int64_t ldc,
                               int transc, const int *flag, cudaStream_t stream) {
    return gemm_dmma_launch(A, lda, m, l, k, B, ldb, upper, C, ldc, transc, flag, stream);
}

extern "C" int tn_cu_gemm_dmma64(const float *A, int64_t lda, int64_t m, int64_t l, int64_t k,
                                 const double *B, int64_t ldb, double *C, int64_t ldc, int transc,
                                 cudaStream_t stream) {
    return gemm_dmma_launch(A, lda, m, l, k, B, ldb, 0, C, ldc, transc, (const int *)NULL, stream);
}
