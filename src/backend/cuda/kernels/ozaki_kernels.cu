/* Kernels of the Ozaki scheme on the GPU ([Mukunoki et al. 2020]; host side in
 * src/backend/cuda/ozaki_cuda.c, CPU reference in src/gemm/ozaki.c).
 *
 * Every kernel that produces a value the CPU also produces does the same
 * IEEE operations in the same order: FP64 sums run sequentially in one
 * thread in the CPU's order, additions and products are written with
 * __dadd_rn / __dsub_rn / __dmul_rn so that nvcc cannot contract them into
 * FMAs, and rint / frexp / ldexp are the exact CUDA versions. Only maxima
 * (order-free) are reduced in parallel. So slices, exponents, slice counts
 * and the final sums are bitwise those of the CPU code.
 *
 * Layouts (all column-major sizes in int64):
 *   X        FP64 scratch of a block of vectors, k-contiguous: X[v*k + l]
 *            (split), or vector-contiguous X[l*nv + v] (plan).
 *   S        slices of k-block b, slice p, vector v:
 *            S[((b*smax + p)*nvp + v)*kbp + l], int8 (OZAKI_INT8) or FP16
 *            (OZAKI_FP16, the integer v stored exactly), zero padded in
 *            l (kbp = round_up(kbl, 16)) and in v (nvp); cuBLAS reads it as
 *            k-contiguous columns (TN layout).
 *   E, cnt   E[(v*nkb + b)*smax + p], cnt[v*nkb + b] as on the CPU.
 *   P        slice products of one k-block: for slice p of A, the columns
 *            (q*nbp + j) of an mbp x (qmax(p)*nbp) matrix, ld mbp, the
 *            p-blocks one after another. int32 (INT8) or FP32 (FP16; exact
 *            integers below 2^24). */
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki.h"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#define OZ_MAXS TN_OZ_MAX_SLICES

static dim3 grid2(int64_t rows, int64_t cols, int bx, int by) {
    int64_t gx = (rows + bx - 1) / bx, gy = (cols + by - 1) / by;
    if (gx > 2147483647) gx = 2147483647;
    if (gy > 65535) gy = 65535;
    if (gx < 1) gx = 1;
    if (gy < 1) gy = 1;
    return dim3((unsigned)gx, (unsigned)gy, 1);
}

/* e of tn_ozaki_slice: the smallest e with mu <= vmax 2^e. */
static __device__ int oz_exp(double mu, int vmax) {
    int ex;
    double f = frexp(mu, &ex);
    int s = 0;
    while (ldexp(f, s + 1) <= (double)vmax) s++;
    return ex - s;
}

/* --------------------------------------------------- checks, scaling */
template <typename T>
static __global__ void k_nonfinite(const T *X, long long ld, long long rows, long long cols,
                                   int *flag) {
    for (long long j = blockIdx.y; j < cols; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += (long long)gridDim.x * blockDim.x)
            if (!isfinite((double)X[i + j * ld])) {
                *flag = 1;
                return;
            }
}

extern "C" int tn_oz_nonfinite(int f32, const void *X, int64_t ld, int64_t rows, int64_t cols,
                               int *flag, cudaStream_t st) {
    if (rows <= 0 || cols <= 0) return 0;
    dim3 g = grid2(rows, cols, 256, 1);
    if (g.x > 4096) g.x = 4096;
    if (f32)
        k_nonfinite<float><<<g, 256, 0, st>>>((const float *)X, ld, rows, cols, flag);
    else
        k_nonfinite<double><<<g, 256, 0, st>>>((const double *)X, ld, rows, cols, flag);
    return (int)cudaGetLastError();
}

static __global__ void k_dscale(double beta, double *C, long long ldc, long long m,
                                long long n) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y)
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (long long)gridDim.x * blockDim.x)
            C[i + j * ldc] = beta == 0.0 ? 0.0 : __dmul_rn(beta, C[i + j * ldc]);
}

extern "C" int tn_oz_dscale(double beta, double *C, int64_t ldc, int64_t m, int64_t n,
                            cudaStream_t st) {
    dim3 g = grid2(m, n, 256, 1);
    if (g.x > 4096) g.x = 4096;
    k_dscale<<<g, 256, 0, st>>>(beta, C, ldc, m, n);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------------------- plan */
/* out[l] = sum over v in [0, nv) of |X[v*sv + l*sl]|, sequentially (abs_sums). */
static __global__ void k_abs_sums(const double *X, long long sv, long long sl, long long nv,
                                  long long k, double *out) {
    long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= k) return;
    double s = 0.0;
    for (long long v = 0; v < nv; v++) s = __dadd_rn(s, fabs(X[v * sv + l * sl]));
    out[l] = s;
}

extern "C" int tn_oz_abs_sums(const double *X, int64_t sv, int64_t sl, int64_t nv, int64_t k,
                              double *out, cudaStream_t st) {
    k_abs_sums<<<(unsigned)((k + 127) / 128), 128, 0, st>>>(X, sv, sl, nv, k, out);
    return (int)cudaGetLastError();
}

/* dst[v*dsv + l*dsl] = src[(v0 + v)*ssv + l*ssl] for v < nv, l < k (32 x 32 tiles). */
static __global__ void k_pack(const double *src, long long ssv, long long ssl, long long v0,
                              long long nv, long long k, double *dst, long long dsv,
                              long long dsl) {
    __shared__ double tile[32][33];
    const long long vb = (long long)blockIdx.x * 32, lb = (long long)blockIdx.y * 32;
    const int tx = threadIdx.x;
    for (int ty = threadIdx.y; ty < 32; ty += blockDim.y) {
        int a = ssv == 1 ? tx : ty, bq = ssv == 1 ? ty : tx; /* a: v, bq: l */
        long long v = vb + a, l = lb + bq;
        if (v < nv && l < k) tile[a][bq] = src[(v0 + v) * ssv + l * ssl];
    }
    __syncthreads();
    for (int ty = threadIdx.y; ty < 32; ty += blockDim.y) {
        int a = dsv == 1 ? tx : ty, bq = dsv == 1 ? ty : tx;
        long long v = vb + a, l = lb + bq;
        if (v < nv && l < k) dst[v * dsv + l * dsl] = tile[a][bq];
    }
}

extern "C" int tn_oz_pack(const double *src, int64_t ssv, int64_t ssl, int64_t v0, int64_t nv,
                          int64_t k, double *dst, int64_t dsv, int64_t dsl, cudaStream_t st) {
    if (nv <= 0 || k <= 0) return 0;
    int64_t gy = (k + 31) / 32;
    for (int64_t l0 = 0; l0 < gy; l0 += 65535) { /* gridDim.y limit */
        int64_t cnt = gy - l0 < 65535 ? gy - l0 : 65535;
        dim3 g((unsigned)((nv + 31) / 32), (unsigned)cnt);
        k_pack<<<g, dim3(32, 8), 0, st>>>(src + l0 * 32 * ssl, ssv, ssl, v0, nv,
                                          k - l0 * 32, dst + l0 * 32 * dsl, dsv, dsl);
    }
    return (int)cudaGetLastError();
}

/* vec_needs of ozaki.c, one thread per vector, on X[l*nv + v] (destroyed).
 * fin: nkb * nv bytes of scratch. erange[0] gets the max of the first slice
 * exponents, erange[1] the min of all slice exponents (CR window). */
static __global__ void k_plan(double *__restrict__ X, long long nv, long long k, long long nkb,
                              long long kbl, int vmax, const double *__restrict__ w, double sq,
                              int *need,
                              int *done, unsigned char *fin, int *erange) {
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nv) return;
    double *__restrict__ x = X + v;
#define XL(l) x[(long long)(l) * nv]
    /* the sums run in the CPU's order; unrolling only lets the loads of
     * later elements be issued early (the thread is latency bound) */
    double s = 0.0;
    if (w) {
#pragma unroll 8
        for (long long l = 0; l < k; l++) s = __dadd_rn(s, __dmul_rn(fabs(XL(l)), w[l]));
    }
    s = __dmul_rn(s, sq);
    for (long long b = 0; b < nkb; b++) fin[b * nv + v] = 0;
    int d = 0, complete = 0, cmax = 0, emax = INT_MIN, emin = INT_MAX;
    for (d = 1; d <= OZ_MAXS; d++) {
        double t = 0.0, tr = 0.0;
        int left = 0;
        for (long long b = 0; b < nkb; b++) {
            if (fin[b * nv + v]) continue;
            long long off = b * kbl, len = kbl < k - off ? kbl : k - off;
            double mu = 0.0;
#pragma unroll 8
            for (long long l = off; l < off + len; l++) mu = fmax(mu, fabs(XL(l)));
            if (mu == 0.0) {
                fin[b * nv + v] = 1;
                continue;
            }
            const int e = oz_exp(mu, vmax);
            double rest = 0.0, tb = 0.0, rb = 0.0;
            if (e >= -1022 && e <= 1023) {
                const double down = ldexp(1.0, -e), up = ldexp(1.0, e);
#pragma unroll 8
                for (long long l = off; l < off + len; l++) {
                    double xv = XL(l), y = __dmul_rn(xv, down), r = rint(y);
                    if (r != 0.0) XL(l) = xv = __dmul_rn(__dsub_rn(y, r), up);
                    rest = fmax(rest, fabs(xv));
                    if (w) tb = __dadd_rn(tb, __dmul_rn(fabs(r), w[l]));
                    if (w) rb = __dadd_rn(rb, __dmul_rn(fabs(xv), w[l]));
                }
            } else {
                for (long long l = off; l < off + len; l++) {
                    double xv = XL(l), y = ldexp(xv, -e), r = rint(y);
                    if (r != 0.0) XL(l) = xv = ldexp(__dsub_rn(y, r), e);
                    rest = fmax(rest, fabs(xv));
                    if (w) tb = __dadd_rn(tb, __dmul_rn(fabs(r), w[l]));
                    if (w) rb = __dadd_rn(rb, __dmul_rn(fabs(xv), w[l]));
                }
            }
            cmax = d;
            if (d == 1) emax = max(emax, e);
            emin = min(emin, e);
            if (rest == 0.0)
                fin[b * nv + v] = 1;
            else
                left = 1;
            if (w) t = __dadd_rn(t, ldexp(tb, e));
            if (w) tr = __dadd_rn(tr, rb);
        }
        if (!left) {
            complete = 1;
            break;
        }
        if (w && d >= 2 &&
            ((__dmul_rn((double)(d + 1), t) < s && tr < s) || (s == 0.0 && t == 0.0)))
            break; /* the slice test and the remainder test, as on the CPU */
    }
#undef XL
    need[v] = complete ? cmax : (d < OZ_MAXS ? d : OZ_MAXS);
    done[v] = complete;
    if (erange && cmax > 0) {
        atomicMax(&erange[0], emax);
        atomicMin(&erange[1], emin);
    }
}

extern "C" int tn_oz_plan(double *X, int64_t nv, int64_t k, int64_t nkb, int64_t kbl, int vmax,
                          const double *w, double sq, int *need, int *done, unsigned char *fin,
                          int *erange, cudaStream_t st) {
    if (nv <= 0) return 0;
    k_plan<<<(unsigned)((nv + 63) / 64), 64, 0, st>>>(X, nv, k, nkb, kbl, vmax, w, sq, need, done,
                                                      fin, erange);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------------------ split */
static __device__ double block_max(double x, double *red) {
    for (int o = 16; o > 0; o >>= 1) x = fmax(x, __shfl_xor_sync(0xffffffffu, x, o));
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) red[wid] = x;
    __syncthreads();
    double r = 0.0;
    for (int i = 0; i < nw; i++) r = fmax(r, red[i]);
    return r;
}

/* One block per (vector v, k-block b): split_block of ozaki.c. S must be
 * zeroed before (slices past the count and the padding stay zero). */
template <typename T>
static __global__ void k_split(double *X, long long k, long long nkb, long long kbl,
                               long long kbp, long long nvp, int vmax, int smax, T *S, int *E,
                               int *cnt) {
    __shared__ double red[32];
    const long long v = blockIdx.x, b = blockIdx.y;
    const long long off = b * kbl, len = kbl < k - off ? kbl : k - off;
    double *x = X + v * k + off;
    double mu = 0.0;
    for (long long l = threadIdx.x; l < len; l += blockDim.x) mu = fmax(mu, fabs(x[l]));
    mu = block_max(mu, red);
    int p = 0;
    while (p < smax && mu != 0.0) {
        const int e = oz_exp(mu, vmax);
        T *out = S + ((b * smax + p) * nvp + v) * kbp;
        double rest = 0.0;
        if (e >= -1022 && e <= 1023) {
            const double down = ldexp(1.0, -e), up = ldexp(1.0, e);
            for (long long l = threadIdx.x; l < len; l += blockDim.x) {
                double xv = x[l], y = __dmul_rn(xv, down), r = rint(y);
                out[l] = (T)(float)r;
                if (r != 0.0) x[l] = xv = __dmul_rn(__dsub_rn(y, r), up);
                rest = fmax(rest, fabs(xv));
            }
        } else {
            for (long long l = threadIdx.x; l < len; l += blockDim.x) {
                double xv = x[l], y = ldexp(xv, -e), r = rint(y);
                out[l] = (T)(float)r;
                if (r != 0.0) x[l] = xv = ldexp(__dsub_rn(y, r), e);
                rest = fmax(rest, fabs(xv));
            }
        }
        if (threadIdx.x == 0) E[(v * nkb + b) * smax + p] = e;
        p++;
        mu = block_max(rest, red);
    }
    if (threadIdx.x == 0) cnt[v * nkb + b] = p;
}

extern "C" int tn_oz_split(int fp16, double *X, int64_t nv, int64_t k, int64_t nkb, int64_t kbl,
                           int64_t kbp, int64_t nvp, int vmax, int smax, void *S, int *E, int *cnt,
                           cudaStream_t st) {
    if (nv <= 0) return 0;
    if (nkb > 65535 || nv > 2147483647) return (int)cudaErrorInvalidValue;
    dim3 g((unsigned)nv, (unsigned)nkb);
    if (fp16)
        k_split<__half><<<g, 256, 0, st>>>(X, k, nkb, kbl, kbp, nvp, vmax, smax, (__half *)S, E,
                                           cnt);
    else
        k_split<int8_t><<<g, 256, 0, st>>>(X, k, nkb, kbl, kbp, nvp, vmax, smax, (int8_t *)S, E,
                                           cnt);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------------- summation */
struct oz_sum_args {
    const void *P;
    long long mbp, nbp, mbb, nbb, nkb, b;
    const int *Ea, *ca, *Eb, *cb;
    int smax_a, smax_b, d, fast, first, last;
    double alpha, beta;
    double *C;
    long long ldc;
    double *state; /* DP: 2 * mbp * nbp (s, c) across k-blocks; CR: NL * mbp * nbp limbs */
    int L0;        /* CR: the window's lowest limb */
};

template <typename PT>
static __device__ __forceinline__ long long pval(const void *P, long long idx) {
    return (long long)((const PT *)P)[idx];
}

static __device__ __forceinline__ void store_c(const oz_sum_args &a, long long i, long long j,
                                               double S) {
    double *cij = a.C + i + j * a.ldc;
    *cij = a.beta == 0.0 ? __dmul_rn(a.alpha, S)
                         : __dadd_rn(__dmul_rn(a.alpha, S), __dmul_rn(a.beta, *cij));
}

/* DP / FIXED: Neumaier in the order (b, p, q), as compute_block. */
template <typename PT>
static __global__ void k_sum_dp(oz_sum_args a) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long j = blockIdx.y;
    if (i >= a.mbb || j >= a.nbb) return;
    const long long el = i + j * a.mbp;
    double s = 0.0, c = 0.0;
    if (!a.first) s = a.state[2 * el], c = a.state[2 * el + 1];
    const int ca = a.ca[i * a.nkb + a.b], cb = a.cb[j * a.nkb + a.b];
    const int *Ea = a.Ea + (i * a.nkb + a.b) * a.smax_a;
    const int *Eb = a.Eb + (j * a.nkb + a.b) * a.smax_b;
    long long poff = 0;
    for (int p = 0; p < ca; p++) {
        const int qg = a.fast ? min(a.smax_b, a.d - p) : a.smax_b; /* GEMM width of p */
        const int qmax = a.fast ? min(cb, a.d - p) : cb;
        for (int q = 0; q < qmax; q++) {
            long long v = pval<PT>(a.P, poff + i + ((long long)q * a.nbp + j) * a.mbp);
            if (v == 0) continue;
            double x = ldexp((double)v, Ea[p] + Eb[q]);
            double t = __dadd_rn(s, x);
            if (fabs(s) >= fabs(x))
                c = __dadd_rn(c, __dadd_rn(__dsub_rn(s, t), x));
            else
                c = __dadd_rn(c, __dadd_rn(__dsub_rn(x, t), s));
            s = t;
        }
        poff += (long long)qg * a.nbp * a.mbp;
    }
    if (!a.last) {
        a.state[2 * el] = s, a.state[2 * el + 1] = c;
        return;
    }
    store_c(a, i, j, isfinite(s) ? __dadd_rn(s, c) : s);
}

/* tn_ozaki_acc_round on a window of NL limbs whose limb 0 is limb L0 of
 * the CPU accumulator (every touched limb + 3 inside the window). */
template <int NL>
static __device__ double acc_round(long long *l, int L0) {
    const int lo = 0, top = NL - 1;
    long long carry = 0;
    for (int i = lo; i <= top; i++) {
        long long x = l[i] + carry;
        long long dgt = x & 0xffffffffLL;
        carry = (x - dgt) / 4294967296LL;
        l[i] = dgt;
    }
    const int neg = carry < 0;
    if (neg) {
        long long c = 1;
        for (int i = lo; i <= top; i++) {
            long long x = (0xffffffffLL ^ l[i]) + c;
            l[i] = x & 0xffffffffLL;
            c = x >> 32;
        }
    }
    int t = top;
    while (t >= lo && l[t] == 0) t--;
    double r = 0.0;
    if (t >= lo) {
        unsigned long long L0d = (unsigned long long)l[t];
        unsigned long long L1 = t - 1 >= lo ? (unsigned long long)l[t - 1] : 0;
        unsigned long long L2 = t - 2 >= lo ? (unsigned long long)l[t - 2] : 0;
        int nb = 64 - __clzll((long long)L0d);
        int topexp = 32 * (t + L0) + nb - 1 + TN_OZ_ACC_EBASE;
        int lz = 32 - nb;
        unsigned long long M = (L0d << 32) | L1;
        int sticky;
        if (lz) {
            M = (M << lz) | (L2 >> (32 - lz));
            sticky = (L2 & ((1ULL << (32 - lz)) - 1)) != 0;
        } else {
            sticky = L2 != 0;
        }
        for (int i = lo; i <= t - 3 && !sticky; i++) sticky = l[i] != 0;
        int keep = topexp >= -1022 ? 53 : topexp + 1075;
        if (keep > 0) {
            int shift = 64 - keep;
            unsigned long long q = M >> shift, rem = M & ((1ULL << shift) - 1),
                               half = 1ULL << (shift - 1);
            if (rem > half || (rem == half && (sticky || (q & 1)))) q++;
            r = ldexp((double)q, topexp - keep + 1);
        } else if (keep == 0) {
            r = (M != (1ULL << 63) || sticky) ? 0x1p-1074 : 0.0;
        }
        if (neg) r = -r;
    }
    return r;
}

/* CR: exact accumulation of every slice product, one rounding. */
template <typename PT, int NL>
static __global__ void k_sum_cr(oz_sum_args a) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long j = blockIdx.y;
    if (i >= a.mbb || j >= a.nbb) return;
    const long long el = i + j * a.mbp, ne = a.mbp * a.nbp;
    long long acc[NL];
#pragma unroll
    for (int t = 0; t < NL; t++) acc[t] = 0;
    if (!a.first) {
        const long long *g = (const long long *)a.state;
#pragma unroll
        for (int t = 0; t < NL; t++) acc[t] = g[t * ne + el];
    }
    const int ca = a.ca[i * a.nkb + a.b], cb = a.cb[j * a.nkb + a.b];
    const int *Ea = a.Ea + (i * a.nkb + a.b) * a.smax_a;
    const int *Eb = a.Eb + (j * a.nkb + a.b) * a.smax_b;
    const int base = TN_OZ_ACC_EBASE + 32 * a.L0;
    for (int p = 0; p < ca; p++) {
        const long long poff = (long long)p * a.smax_b * a.nbp * a.mbp;
        const int ep = Ea[p] - base;
        for (int q = 0; q < cb; q++) {
            long long v = pval<PT>(a.P, poff + i + ((long long)q * a.nbp + j) * a.mbp);
            if (v == 0) continue;
            const int off = ep + Eb[q], idx = off >> 5, sh = off & 31;
            long long val = v * (1LL << sh);
            long long lo = val & 0xffffffffLL;
            long long hi = (val - lo) / 4294967296LL;
            acc[idx] += lo;
            acc[idx + 1] += hi;
        }
    }
    if (!a.last) {
        long long *g = (long long *)a.state;
#pragma unroll
        for (int t = 0; t < NL; t++) g[t * ne + el] = acc[t];
        return;
    }
    store_c(a, i, j, acc_round<NL>(acc, a.L0));
}

extern "C" int tn_oz_sum(int fp16, int cr, int nl, const void *P, int64_t mbp, int64_t nbp,
                         int64_t mbb, int64_t nbb, int64_t nkb, int64_t b, const int *Ea,
                         const int *ca, const int *Eb, const int *cb, int smax_a, int smax_b,
                         int d, int fast, int first, int last, double alpha, double beta,
                         double *C, int64_t ldc, double *state, int L0, cudaStream_t st) {
    oz_sum_args a;
    a.P = P, a.mbp = mbp, a.nbp = nbp, a.mbb = mbb, a.nbb = nbb, a.nkb = nkb, a.b = b;
    a.Ea = Ea, a.ca = ca, a.Eb = Eb, a.cb = cb;
    a.smax_a = smax_a, a.smax_b = smax_b, a.d = d, a.fast = fast, a.first = first,
    a.last = last;
    a.alpha = alpha, a.beta = beta, a.C = C, a.ldc = ldc, a.state = state, a.L0 = L0;
    if (nbb > 65535) return (int)cudaErrorInvalidValue;
    dim3 g((unsigned)((mbb + 127) / 128), (unsigned)nbb);
    if (!cr) {
        if (fp16) k_sum_dp<float><<<g, 128, 0, st>>>(a);
        else k_sum_dp<int32_t><<<g, 128, 0, st>>>(a);
    } else {
        switch (nl) {
#define OZ_CR(NLV)                                                                             \
    case NLV:                                                                                  \
        if (fp16) k_sum_cr<float, NLV><<<g, 128, 0, st>>>(a);                                  \
        else k_sum_cr<int32_t, NLV><<<g, 128, 0, st>>>(a);                                     \
        break;
            OZ_CR(16)
            OZ_CR(32)
            OZ_CR(64)
            OZ_CR(TN_OZ_ACC_LIMBS)
#undef OZ_CR
        default: return (int)cudaErrorInvalidValue;
        }
    }
    return (int)cudaGetLastError();
}

/* The CR window size the kernels have for `need` limbs (0: too many). */
extern "C" int tn_oz_cr_limbs(int need) {
    if (need <= 16) return 16;
    if (need <= 32) return 32;
    if (need <= 64) return 64;
    if (need <= TN_OZ_ACC_LIMBS) return TN_OZ_ACC_LIMBS;
    return 0;
}
