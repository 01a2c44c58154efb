/* A symmetric eigensolver for the small (l x l, l up to about 470) FP64
 * problems of the randomized SVD on Hopper, where cuSOLVER's syevd is a
 * chain of a few hundred small launches (2.2 ms at l = 266 on an H200, of
 * which the tridiagonalization sytrd is 1.33 ms). Here (tn_cu_syev_fast,
 * driven by eig_solve in small_svd_cuda.c):
 *
 *  1. Householder tridiagonalization G = Q T Q^T (LAPACK's dsytd2, lower:
 *     H_i from column i, A <- H_i A H_i as the rank-2 update A - v w^T -
 *     w v^T) in one launch of one cluster of 16 blocks (8 where 16 is
 *     refused) of 512 threads: A and Q in their shared memory, rows dealt
 *     round-robin, full rows of A kept up to date; Q = H_0 ... H_{n-2}
 *     accumulated on the fly, each block on its own rows of Q. Per step
 *     two cluster barriers: after every block has sent its rows' p = tau
 *     A v and its part of p^T v, and after the updates, by which every
 *     block has sent its rows' entries of the next column (so that each
 *     forms v and tau itself from the gathered column).
 *  2. T's eigenvalues by bisection, one block per eigenvalue, 128 points
 *     per round (one per thread), to 2 eps ||T|| absolute; the Sturm counts from the signs of
 *     the leading minors of T - x I (no division), rescaled every 4 steps.
 *  3. T's eigenvectors Z, one thread per eigenvalue, from a twisted
 *     factorization of T - lam I (Dhillon & Parlett): the twist index with
 *     the smallest |gamma_r|, z_r = 1, then z by products only.
 *  4. (small_svd_cuda.c) X = Q Z by DGEMM, then the checks, all on the
 *     device: F = X^T X - I at most 1e-6 elementwise, one Newton-Schulz
 *     step X <- X (I - F / 2) (the twisted vectors of eigenvalues closer
 *     than about 1e-10 ||T|| are not orthogonal to each other, which
 *     MRRR's representation tree would fix; the step mixes vectors only
 *     among such close eigenvalues, so their residuals stay at eps ||T||),
 *     then G X - X diag(lam) at most 32 n eps max|lam| elementwise and lam
 *     ascending. Any failure sets the flag, for the caller to run syevd
 *     instead; nothing is decided on the host before the caller's one read
 *     of the eigenvalues and the flag.
 *
 * Equal eigenvalues (which T's Householder reduction splits apart,
 * e_i = 0) come out as twice the same vector: the orthogonality check
 * refuses them (syevd then), as it refuses clusters closer than about
 * 1e-10 ||T|| (the Gram matrix of columns spanning 1e-7, test
 * gpu_syev_fast_matches_syevd).
 *
 * H200, l = 266 (a Gram matrix of decaying columns, cudaEvent medians of 7,
 * session 21): tridiagonalization 1.06 ms, bisection 0.18 ms (77 us with
 * a block per eigenvalue, Nsight Compute, session 22), vectors 0.06 ms;
 * the per-step time of the tridiagonalization (about 7.7k cycles, of
 * which the two barriers about 1.6k) is in its row loops (a warp per row,
 * two or three rows per warp), not in the barriers (about 450 cycles per
 * cluster.sync of 16 x 512 threads, measured alone). */
#include "gemm/cuda/tn_cuda.h"

#include <cooperative_groups.h>
#include <float.h>

namespace cg = cooperative_groups;

#define SY_THREADS 512 /* per block of the tridiagonalization */
#define SY_MAXC 16     /* largest cluster */
#define BI_THREADS 128 /* bisection points per round, one per thread */

/* ----------------------------------------------------- tridiagonalization */
/* Shared memory of each block of C (the same layout in all, since remote
 * addresses are local offsets): A and Q (rmax x n each, rmax = ceil(n / C):
 * the block's rows rank, rank + C, ...), v, p and column i below the
 * diagonal as gathered (two parities each, n), tau Q v (rmax), the
 * blocks' parts of p^T v (two parities, SY_MAXC), two times a double per
 * warp of reduction scratch. */
static size_t tridiag_smem(int n, int C) {
    const size_t rmax = (size_t)(n + C - 1) / C;
    return sizeof(double) *
           (2 * rmax * (size_t)n + 6 * (size_t)n + rmax + 2 * SY_MAXC + 2 * SY_THREADS / 32);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900 /* (used by the cluster kernel only) */
static __device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* a[0 .. m) . v[0 .. m) over a warp (every lane gets it), two partial sums. */
static __device__ __forceinline__ double warp_dot(const double *a, const double *v, int m,
                                                  int lane) {
    double a0 = 0.0, a1 = 0.0;
    int j = lane;
    for (; j + 32 < m; j += 64) {
        a0 = fma(a[j], v[j], a0);
        a1 = fma(a[j + 32], v[j + 32], a1);
    }
    if (j < m) a0 = fma(a[j], v[j], a0);
    return warp_sum(a0 + a1);
}
#endif

/* 1 / x for normal, finite x without the division's slow-path branch: the
 * hardware approximation and two Newton steps (within an ulp or two). */
static __device__ __forceinline__ double frcp(double x) {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    double e = fma(-x, r, 1.0);
    r = fma(r, e, r);
    e = fma(-x, r, 1.0);
    return fma(r, e, r);
}

/* T = Q^T G Q: d (n), e (n - 1), Q (n x n, ld n), as LAPACK's dsytd2
 * (lower) with Q = H_0 H_1 ... H_{n-2} accumulated on the fly (each block
 * keeps its own rows of Q: Q H_i needs nothing from other rows). Step i:
 * every block reads row i right of the diagonal (column i below it) from
 * its owner's shared memory and forms v and tau itself; its warps take
 * one row each, of A (p = tau A v, sent to every block, with the block's
 * part of p^T v) or of Q (Q v, kept); a cluster barrier; the rank-2
 * update of its rows of A and the update of its rows of Q, one row per
 * warp; a cluster barrier (row i + 1 complete in its owner). */
static __global__ void __launch_bounds__(SY_THREADS)
    tridiag_kernel(int n, const double *__restrict__ G, long long ldg, int upper, double *d,
                   double *e, double *Qout) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cg::cluster_group cl = cg::this_cluster();
    const int C = (int)cl.num_blocks(), rank = (int)cl.block_rank();
    const int rows = (n - rank + C - 1) / C, rmax = (n + C - 1) / C;
    extern __shared__ double sm[];
    double *A = sm, *Q = A + (size_t)rmax * n, *vb = Q + (size_t)rmax * n, *pb = vb + 2 * n,
           *xg = pb + 2 * n, *qd = xg + 2 * n, *db = qd + rmax, *red = db + 2 * SY_MAXC;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = SY_THREADS / 32;

    for (int idx = tid; idx < rows * n; idx += SY_THREADS) {
        const int s = idx / n, j = idx - s * n, r = rank + s * C;
        const int lo = min(r, j), hi = max(r, j);
        A[idx] = upper ? G[lo + (long long)hi * ldg] : G[hi + (long long)lo * ldg];
        Q[idx] = r == j ? 1.0 : 0.0;
    }
    cl.sync(); /* every block's shared memory is in place before anyone touches it */
    /* column 0 below the diagonal gathered in every block */
    for (int idx = tid; idx < rows * C; idx += SY_THREADS) {
        const int s = idx / C, c = idx - s * C, r = rank + s * C;
        if (r >= 1) cl.map_shared_rank(xg, c)[r - 1] = A[(size_t)s * n];
    }
    cl.sync();

    for (int i = 0; i < n - 1; i++) {
        const int m = n - 1 - i, par = i & 1;
        double *v = vb + par * n, *p = pb + par * n, *x = xg + par * n,
               *dots = db + par * SY_MAXC;
        /* H_i from x = column i below the diagonal, gathered; every warp
         * sums its squares itself (no block barrier) */
        double ss = 0.0;
        for (int j = 1 + lane; j < m; j += 32) ss = fma(x[j], x[j], ss);
        ss = warp_sum(ss);
        const double alpha = x[0];
        double t = 0.0, beta = alpha, scal = 0.0;
        if (ss != 0.0) {
            beta = -copysign(sqrt(fma(alpha, alpha, ss)), alpha);
            t = (beta - alpha) * frcp(beta);
            scal = frcp(alpha - beta);
        }
        if (i % C == rank && tid == 0) {
            d[i] = A[(size_t)(i / C) * n + i];
            e[i] = beta;
        }
        for (int j = tid; j < m; j += SY_THREADS) v[j] = j == 0 ? 1.0 : x[j] * scal;
        __syncthreads();
        const int s0 = i < rank ? 0 : (i - rank) / C + 1; /* first own row r > i */
        const int na = rows - s0;                           /* own rows of A below row i */
        if (t != 0.0) {
            double part = 0.0;
            for (int w = warp; w < na + rows; w += nw) {
                if (w < na) { /* p = tau A v, sent to every block */
                    const int s = s0 + w, q = rank + s * C - i - 1;
                    const double acc = t * warp_dot(A + (size_t)s * n + i + 1, v, m, lane);
                    if (lane < C) cl.map_shared_rank(p, lane)[q] = acc;
                    part = fma(acc, v[q], part);
                } else { /* tau Q v on the own rows of Q */
                    const int s = w - na;
                    const double acc = t * warp_dot(Q + (size_t)s * n + i + 1, v, m, lane);
                    if (lane == 0) qd[s] = acc;
                }
            }
            if (lane == 0) red[nw + warp] = part;
            __syncthreads();
            if (tid < C) {
                double sp = 0.0;
                for (int w = 0; w < nw; w++) sp += red[nw + w];
                cl.map_shared_rank(dots, tid)[rank] = sp;
            }
        }
        cl.sync();
        { /* A <- A - v w^T - w v^T, w = p - (tau / 2) (p^T v) v; Q <- Q - (tau Q v) v^T */
            double K = 0.0;
            if (t != 0.0) {
                double sd = 0.0;
                for (int c = 0; c < C; c++) sd += dots[c];
                K = -0.5 * t * sd;
            }
            for (int w = warp; w < na + rows; w += nw) {
                if (w < na) {
                    const int s = s0 + w, q = rank + s * C - i - 1;
                    double *a = A + (size_t)s * n + i + 1;
                    if (t != 0.0) {
                        const double vq = v[q], wq = fma(K, vq, p[q]);
#pragma unroll 4
                        for (int j = lane; j < m; j += 32) {
                            const double vj = v[j], wj = fma(K, vj, p[j]);
                            a[j] -= fma(vq, wj, wq * vj);
                        }
                    }
                    /* this row's entry in column i + 1, gathered for step i + 1 */
                    const double a0 = __shfl_sync(0xffffffffu, a[0], 0);
                    if (q >= 1 && lane < C)
                        cl.map_shared_rank(xg + (par ^ 1) * n, lane)[q - 1] = a0;
                } else if (t != 0.0) {
                    const int s = w - na;
                    const double f = qd[s];
                    double *q = Q + (size_t)s * n + i + 1;
#pragma unroll 4
                    for (int j = lane; j < m; j += 32) q[j] = fma(-f, v[j], q[j]);
                }
            }
        }
        cl.sync(); /* row i + 1 complete in its owner */
    }
    if ((n - 1) % C == rank && tid == 0) d[n - 1] = A[(size_t)((n - 1) / C) * n + n - 1];
    for (int idx = tid; idx < rows * n; idx += SY_THREADS) {
        const int s = idx / n, j = idx - s * n;
        Qout[rank + s * C + (size_t)j * n] = Q[idx];
    }
#endif
}

/* ------------------------------------------------------------- bisection */
/* T's Gershgorin interval [*gl, *gu] widened as dstebz does, its norm and
 * pivmin, from d and e2 = e^2 in shared memory; one warp. */
static __device__ void gersh(const double *d, const double *e, int n, double *gl, double *gu,
                             double *pivmin, int lane) {
    double lo = DBL_MAX, hi = -DBL_MAX, emax = 0.0;
    for (int j = lane; j < n; j += 32) {
        const double a = j > 0 ? fabs(e[j - 1]) : 0.0, b = j < n - 1 ? fabs(e[j]) : 0.0;
        lo = fmin(lo, d[j] - a - b);
        hi = fmax(hi, d[j] + a + b);
        emax = fmax(emax, b * b);
    }
    for (int o = 16; o > 0; o >>= 1) {
        lo = fmin(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = fmax(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        emax = fmax(emax, __shfl_xor_sync(0xffffffffu, emax, o));
    }
    const double tn = fmax(fabs(lo), fabs(hi));
    *pivmin = DBL_MIN * fmax(1.0, emax);
    *gl = lo - 2.1 * DBL_EPSILON * tn * n - 4.2 * *pivmin;
    *gu = hi + 2.1 * DBL_EPSILON * tn * n + 4.2 * *pivmin;
}

/* The number of T's eigenvalues below x: the sign changes of the leading
 * principal minors p_j of T - x I (p_j = (d_j - x) p_{j-1} - e_{j-1}^2
 * p_{j-2}, so that q_j = p_j / p_{j-1} is dstebz's pivot without its
 * division), read from the sign bits (an exact zero p_j counts as
 * positive, which gives the count dstebz's replacement of q_j = 0 by
 * -pivmin gives: one change across p_{j-1}, 0, p_{j+1} = -e^2 p_{j-1});
 * the last two minors rescaled by a power of two every 4 steps (exact, so
 * the count does not depend on the factor), the loop unrolled by 4 so
 * that the minors stay in place. */
static __device__ __forceinline__ double pow2_inv(double a, double b) {
    /* 2^-exponent(max(|a|, |b|)) from the high word, clamped to a normal */
    const int ex = __double2hiint(fmax(fabs(a), fabs(b))) >> 20;
    return __hiloint2double(min(max(2046 - ex, 1), 2046) << 20, 0);
}
#define STURM_STEP(j)                                                                          \
    do {                                                                                       \
        const double pn_ = fma(d[j] - x, p1, -e2[(j) - 1] * p2);                               \
        cnt += (__double2hiint(pn_) ^ __double2hiint(p1)) < 0;                                 \
        p2 = p1;                                                                               \
        p1 = pn_;                                                                              \
    } while (0)
static __device__ __forceinline__ int sturm(const double *d, const double *e2, int n, double x) {
    double p1 = d[0] - x, p2 = 1.0;
    int cnt = __double2hiint(p1) < 0, j = 1;
    for (; j + 3 < n; j += 4) {
        STURM_STEP(j);
        STURM_STEP(j + 1);
        STURM_STEP(j + 2);
        STURM_STEP(j + 3);
        const double sc = pow2_inv(p1, p2);
        p1 *= sc;
        p2 *= sc;
    }
    for (; j < n; j++) STURM_STEP(j);
    return cnt;
}
#undef STURM_STEP

/* lam[k] (ascending), one block of BI_THREADS per k, one point per thread:
 * the interval [lo, hi] with count(lo) <= k < count(hi) cut into
 * BI_THREADS + 1 pieces per round. (Session 21's version, a warp per k
 * with 4 points per lane, ran 0.18 ms at n = 266 on an H200: 266 warps,
 * one per scheduler on half the GPU, each issuing four chains.) */
static __global__ void __launch_bounds__(BI_THREADS) bisect_kernel(int n, const double *d_g,
                                                                   const double *e_g,
                                                                   double *lam) {
    extern __shared__ double bs[];
    __shared__ int firsts[BI_THREADS / 32];
    double *d = bs, *e = d + n, *e2 = e + n;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        d[j] = d_g[j];
        const double ej = j < n - 1 ? e_g[j] : 0.0;
        e[j] = ej;
        e2[j] = ej * ej;
    }
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, k = blockIdx.x;
    double lo, hi, pivmin;
    gersh(d, e, n, &lo, &hi, &pivmin, lane); /* the same in every warp */
    const double atol = 2.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi));
    const double inv = 1.0 / (BI_THREADS + 1);
    const double cx = (double)(threadIdx.x + 1) * inv;
    for (int round = 0; round < 64; round++) { /* lo, hi: the same in every thread */
        const double w = hi - lo;
        if (!(w > fmax(atol, 2.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi))))) break;
        const int c = sturm(d, e2, n, fma(w, cx, lo));
        /* the first point with more than k eigenvalues below it */
        const unsigned b = __ballot_sync(0xffffffffu, c > k);
        if (lane == 0) firsts[warp] = b ? warp * 32 + __ffs(b) - 1 : BI_THREADS;
        __syncthreads();
        int first = BI_THREADS;
        for (int q = BI_THREADS / 32 - 1; q >= 0; q--) first = min(first, firsts[q]);
        __syncthreads(); /* firsts is written again next round */
        const double nlo = first > 0 ? fma(w, (double)first * inv, lo) : lo;
        const double nhi = first < BI_THREADS ? fma(w, (double)(first + 1) * inv, lo) : hi;
        if (nlo == lo && nhi == hi) break;
        lo = nlo;
        hi = nhi;
    }
    if (threadIdx.x == 0) lam[k] = 0.5 * (lo + hi);
}

/* ------------------------------------------------------------ vectors of T */

/* Column k of Z (ld n): the eigenvector of T for lam[k] from the twisted
 * factorization of T - lam I, one thread per k, blocks of T_w threads
 * keeping D+ and U- in shared memory ([j][thread]); the loops are
 * unrolled so that the loads run ahead of the dependent chains. */
static size_t twisted_smem(int n, int tw) { return sizeof(double) * (2 + 2 * (size_t)tw) * n; }

static __global__ void twisted_kernel(int n, const double *d_g, const double *e_g,
                                      const double *lam, double *Z) {
    extern __shared__ double ts[];
    const int tw = blockDim.x, t = threadIdx.x;
    double *d = ts, *e = d + n, *Dk = e + n + t, *Uk = e + n + (size_t)tw * n + t;
    for (int j = t; j < n; j += tw) {
        d[j] = d_g[j];
        e[j] = j < n - 1 ? e_g[j] : 0.0;
    }
    __syncthreads();
    const int k = blockIdx.x * tw + t;
    if (k >= n) return;
    double emax = 0.0;
    for (int j = 0; j < n - 1; j++) emax = fmax(emax, e[j] * e[j]);
    const double pivmin = DBL_MIN * fmax(1.0, emax), lk = lam[k];
    double *z = Z + (size_t)k * n;
    double dp = d[0] - lk; /* T - lam I = L+ D+ L+^T */
#pragma unroll 8
    for (int j = 0; j < n - 1; j++) {
        if (fabs(dp) < pivmin) dp = -pivmin;
        Dk[(size_t)j * tw] = dp;
        dp = (d[j + 1] - lk) - e[j] * (e[j] * frcp(dp));
    }
    if (fabs(dp) < pivmin) dp = -pivmin;
    double best = fabs(dp); /* gamma_{n-1} = D+_{n-1} */
    int r = n - 1;
    double dm = d[n - 1] - lk; /* T - lam I = U- D- U-^T */
#pragma unroll 8
    for (int j = n - 2; j >= 0; j--) {
        if (fabs(dm) < pivmin) dm = -pivmin;
        const double u = e[j] * frcp(dm), aj = d[j] - lk;
        Uk[(size_t)j * tw] = u;
        dm = aj - u * e[j];
        const double g = fabs(Dk[(size_t)j * tw] + dm - aj);
        if (g < best) {
            best = g;
            r = j;
        }
    }
    double zj = 1.0, ss = 1.0;
    z[r] = 1.0;
#pragma unroll 8
    for (int j = r - 1; j >= 0; j--) { /* z_j = -l_j z_{j+1}, l_j = e_j / D+_j */
        zj = -(e[j] * frcp(Dk[(size_t)j * tw])) * zj;
        z[j] = zj;
        ss = fma(zj, zj, ss);
    }
    zj = 1.0;
#pragma unroll 8
    for (int j = r; j < n - 1; j++) { /* z_{j+1} = -u_j z_j */
        zj = -Uk[(size_t)j * tw] * zj;
        z[j + 1] = zj;
        ss = fma(zj, zj, ss);
    }
    const double sc = 1.0 / sqrt(ss);
#pragma unroll 8
    for (int j = 0; j < n; j++) z[j] *= sc;
}

/* ------------------------------------------------------------------ checks */
/* F = X^T X (n x n) -> I - (F - I) / 2, flag = 1 where |F - I| > 1e-6 (or NaN). */
static __global__ void orth_check_kernel(int n, double *F, int *flag) {
    const long long nn = (long long)n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x) {
        const double id = (t % n == t / n) ? 1.0 : 0.0, f = F[t] - id;
        if (!(fabs(f) <= 1e-6)) atomicOr(flag, 1);
        F[t] = fma(-0.5, f, id);
    }
}

/* R = G X (n x n): flag = 1 where |R - X diag(lam)| > 32 n eps max|lam|,
 * or lam not finite and ascending; X copied to Xout. */
static __global__ void resid_check_kernel(int n, const double *R, const double *X,
                                          const double *lam, double *Xout, int *flag) {
    const double lmax = fmax(fabs(lam[0]), fabs(lam[n - 1]));
    const double tol = 32.0 * n * DBL_EPSILON * lmax;
    const long long nn = (long long)n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x) {
        const int j = (int)(t / n);
        if (!(fabs(R[t] - lam[j] * X[t]) <= tol)) atomicOr(flag, 1);
        if (t % n == 0 && j > 0 && !(lam[j] >= lam[j - 1])) atomicOr(flag, 1);
        Xout[t] = X[t];
    }
}

static int grid_for(long long nn) {
    long long b = (nn + 255) / 256;
    return (int)(b > 1024 ? 1024 : b);
}

extern "C" size_t tn_cu_syev_fast_ws(int n) { return 4 * (size_t)n * n + 2 * (size_t)n; }

/* The cluster for n: 16 blocks where the matrix and Q fit their shared
 * memory (8 where the launch of 16 is refused), 0 where they do not fit. */
static int cluster_for(int n, size_t smem_optin) {
    return tridiag_smem(n, 16) <= smem_optin ? 16 : 0;
}

extern "C" int tn_cu_syev_fast_ok(int n, int cc_major, size_t smem_optin) {
    return cc_major >= 9 && n >= 1 && cluster_for(n, smem_optin) > 0;
}

extern "C" int tn_cu_syev_fast(int n, const double *G, int64_t ldg, int upper, double *X,
                               double *lam, int *flag, double *ws, size_t smem_optin,
                               cudaStream_t stream) {
    const int C = cluster_for(n, smem_optin);
    if (C == 0) return (int)cudaErrorInvalidValue;
    const size_t nn = (size_t)n * n;
    double *Q = ws, *S1 = Q + nn, *S2 = S1 + nn, *d = S2 + 2 * nn, *e = d + n;
    cudaError_t err = cudaMemsetAsync(flag, 0, sizeof(int), stream);
    const size_t s8 = tridiag_smem(n, 8), smem = s8 <= smem_optin ? s8 : tridiag_smem(n, C);
    if (!err)
        err = cudaFuncSetAttribute(tridiag_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)smem);
    if (!err)
        err = cudaFuncSetAttribute(tridiag_kernel,
                                   cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (err) return (int)err;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(SY_THREADS);
    cfg.stream = stream;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    for (int c = C; c >= 8; c /= 2) { /* 16, or 8 where 16 is refused */
        at[0].val.clusterDim.x = (unsigned)c;
        cfg.gridDim = dim3((unsigned)c);
        cfg.dynamicSmemBytes = tridiag_smem(n, c);
        if (cfg.dynamicSmemBytes > smem_optin) break;
        err = cudaLaunchKernelEx(&cfg, tridiag_kernel, n, G, (long long)ldg, upper, d, e, Q);
        if (!err) break;
        (void)cudaGetLastError();
    }
    if (err) return (int)err;
    bisect_kernel<<<n, BI_THREADS, 3 * sizeof(double) * n, stream>>>(n, d, e, lam);
    int tw = 32; /* threads per block of twisted_kernel, as its shared memory allows */
    while (tw > 1 && twisted_smem(n, tw) > smem_optin) tw /= 2;
    err = cudaFuncSetAttribute(twisted_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)twisted_smem(n, tw));
    if (err) return (int)err;
    twisted_kernel<<<(n + tw - 1) / tw, tw, twisted_smem(n, tw), stream>>>(n, d, e, lam, X);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_orth_check(int n, double *F, int *flag, cudaStream_t stream) {
    orth_check_kernel<<<grid_for((long long)n * n), 256, 0, stream>>>(n, F, flag);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_resid_check(int n, const double *R, const double *X, const double *lam,
                                      double *Xout, int *flag, cudaStream_t stream) {
    resid_check_kernel<<<grid_for((long long)n * n), 256, 0, stream>>>(n, R, X, lam, Xout, flag);
    return (int)cudaGetLastError();
}
