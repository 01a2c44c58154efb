/* The Cholesky factor of an n x n Gram matrix and its inverse in one
 * launch of one cluster (Hopper; n up to TN_POTRF_CLUSTER_MAX), for
 * CholeskyQR's solve Q = Y R^-1 at the randomized SVD's sizes (l = 266;
 * the repairs' 121-144 columns), in place of tn_cu_potrf_upper (a grid of
 * blocks meeting at grid barriers) followed by tn_cu_trinv_full.
 *
 * G = R^T R, R upper, in 32 x 32 blocks (nb = ceil(n / 32) <= 9): block b
 * of the cluster holds block column b of G, then of R (X), and block row
 * b of S = R^-1 (S), in its shared memory. Right-looking over the block
 * rows p = 0 .. nb - 1:
 *   A. block p factors its diagonal block, R_pp = chol(X_pp) (pc_chol: one
 *      warp, the operations of an unblocked right-looking factorization);
 *   -- cluster barrier; every block reads block p's verdict;
 *   B. every block b > p: R_pb = R_pp^-T X_pb by forward substitution
 *      (R_pp copied from block p); block p: S_pp = R_pp^-1 (pc_inv), off
 *      the chain of diagonal blocks;
 *   -- cluster barrier, split: block p + 1 updates its diagonal block,
 *      X_{p+1,p+1} -= R_{p,p+1}^T R_{p,p+1}, and factors it (step p + 1's
 *      A) between its arrival and its wait, so that the chain from one
 *      diagonal block to the next is A, B and that update only;
 *   C. every block b > p + 1: X_ib -= R_pi^T R_pb for p < i <= b; every
 *      block b <= p: S_bp = -T_bp S_pp, then the sum T_{b,p+1} =
 *      sum_{q=b}^{p} S_bq R_{q,p+1} of its next block, S_{b,p+1} =
 *      -T_{b,p+1} S_{p+1,p+1} (the row form of S R = I).
 * Blocks of R that other blocks of the cluster wrote come from R in
 * global memory (read through L2; from the writer's shared memory, nine
 * readers of one block made it the step's bottleneck); S_pp and R_pp from
 * block p's shared memory. The block products are FP64 MMAs (m8n8k4; warp
 * w: rows 8 (w / 2) .., columns 16 (w % 2) .., the sum over q ascending:
 * the same bits on every run). The last block column's diagonal block is
 * padded with the identity past n, so that no step tests bounds.
 *
 * H100, bench/fixed_costs.c (median of 30 launches, four machine
 * sessions): n = 266, 100-105 us against 143-147 for tn_cu_potrf_upper
 * and tn_cu_trinv_full (102-107 for the factorization alone); n = 137,
 * 54-58 against 76-81. A step (a diagonal block) is mostly pc_chol's 32 pivots
 * (each a shuffle and an rsqrt on the chain) and phase B (about 3.4 us
 * with the copies and barriers). Why it is written so (measured on the
 * H100):
 *  - the next pivot's 1 / sqrt overlaps the update of the other rows
 *    (chol_pivots): 10-15 us less at n = 266, 7 at 137, than with row
 *    k + 1's update and the 1 / sqrt ahead of it, the same bits;
 *  - the diagonal factorization and the substitutions fully unrolled make
 *    half a megabyte of code, which each block runs once from a cold
 *    instruction cache: about 12 us per diagonal block; so the pivot
 *    loops are rolled (rows shifted down one register per pivot);
 *  - a shuffle per row of the update issues one after the other (10 us a
 *    block): so the row of R goes through shared memory, read by the
 *    whole warp at once;
 *  - substitutions with a lane per row need a shuffle per pivot (2.4 us
 *    for S_pp, 5 for R_pb); with a lane per column their chains are
 *    lane-local (the triangle's entries read by the whole warp).
 *
 * info as LAPACK's potrf: the 1-based column of the first pivot that is
 * not positive (or NaN); the launch then stops after that step, with R
 * written up to the block before it and Inv all NaN (so that a product by
 * it shows the breakdown). */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "backend/cuda/tn_cuda.h"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define PC_NB 32        /* block size */
#define PC_THREADS 256  /* 8 warps: two 8 x 8 tiles each of a 32 x 32 block product */
#define PC_BB (PC_NB * PC_NB) /* doubles per block */

/* Shared memory for nb block columns: X and S (nb + 1 blocks: block b's
 * column of G, then of R, takes blocks 0 .. b, its row of R^-1 blocks b +
 * 1 .. nb, so that S's block j is block j + 1), the staging area (nb
 * blocks: one for a diagonal block, nb - 1 for R blocks), the pivots'
 * scratch, the verdict. */
static size_t pc_smem(int nb) {
    return sizeof(double) * ((size_t)PC_BB * (size_t)(2 * nb + 1) + 5 * PC_NB) + 16;
}

#if S9_ON
/* Element (r, c) of a block (32 x 32, row-major): the column's bits 2-4
 * XORed with the row's low bits, so that the fragments of the FP64 MMA
 * (eight rows by four columns, four rows by eight) hit distinct banks. */
static __device__ __forceinline__ int sw(int r, int c) { return r * PC_NB + (c ^ ((r & 7) << 2)); }

/* The FP64 MMA m8n8k4: d (8 x 8, lane: row lane / 4, columns 2 (lane % 4)
 * + {0, 1}) += a (8 x 4, lane: row lane / 4, column lane % 4) b (4 x 8,
 * lane: row lane % 4, column lane / 4). */
static __device__ __forceinline__ void dmma(double (&d)[2], double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

/* A thread's four elements of a 32 x 32 block product: warp w the rows
 * 8 (w / 2) .. + 7, columns 16 (w % 2) .. + 15 (two 8 x 8 tiles);
 * element (t, i): row pr(), column pc(t, i). */
static __device__ __forceinline__ int pr(int w, int lane) { return 8 * (w >> 1) + (lane >> 2); }
static __device__ __forceinline__ int pcol(int w, int lane, int t, int i) {
    return 16 * (w & 1) + 8 * t + 2 * (lane & 3) + i;
}
static __device__ __forceinline__ void acc_load(double (&acc)[2][2], const double *C, int w,
                                                int lane) {
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int i = 0; i < 2; i++) acc[t][i] = C[sw(pr(w, lane), pcol(w, lane, t, i))];
}
static __device__ __forceinline__ void acc_store(const double (&acc)[2][2], double *C, int w,
                                                 int lane) {
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int i = 0; i < 2; i++) C[sw(pr(w, lane), pcol(w, lane, t, i))] = acc[t][i];
}

/* acc += sign op(A) B on 32 x 32 blocks, op(A)(r, q) = A(q, r) (TA) or
 * A(r, q); the sum over q in chunks of four, ascending. */
template <bool TA>
static __device__ __forceinline__ void blk_mma(const double *A, const double *B, double sign,
                                               double (&acc)[2][2], int w, int lane) {
    const int r = pr(w, lane), q4 = lane & 3, cb = 16 * (w & 1) + (lane >> 2);
#pragma unroll
    for (int k0 = 0; k0 < PC_NB; k0 += 4) {
        const int q = k0 + q4;
        const double a = sign * (TA ? A[sw(q, r)] : A[sw(r, q)]);
        dmma(acc[0], a, B[sw(q, cb)]);
        dmma(acc[1], a, B[sw(q, cb + 8)]);
    }
}

/* nblk blocks of another block's shared memory (src, generic address)
 * into dst, 8 loads of a thread issued before their stores */
static __device__ __forceinline__ void pc_copy(double *dst, const double *src, int nblk,
                                               int tid) {
    const double2 *s2 = (const double2 *)src;
    double2 *d2 = (double2 *)dst;
    const int n2 = nblk * PC_BB / 2;
    for (int e0 = 0; e0 < n2; e0 += 8 * PC_THREADS) {
        double2 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int e = e0 + u * PC_THREADS + tid;
            if (e < n2) v[u] = s2[e];
        }
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int e = e0 + u * PC_THREADS + tid;
            if (e < n2) d2[e] = v[u];
        }
    }
}

/* 1 / sqrt(d) for d > 0: the hardware approximation and two Newton steps
 * (within an ulp or two; NaN or Inf for d <= 0, which the pivot test
 * refuses) */
static __device__ __forceinline__ double pc_rsqrt(double d) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(d));
    double e = fma(-d * y, y, 1.0);
    y = fma(0.5 * e, y, y);
    e = fma(-d * y, y, 1.0);
    return fma(0.5 * e, y, y);
}

/* Pivots k0 .. k1 - 1 of the Cholesky factorization of a 32 x 32 block
 * (upper) by one warp: lane j holds rows k .. k + L of column j in
 * h[0 .. L] at pivot k (the rows shift down by one per pivot, so that the
 * registers keep fixed names in a loop that is not unrolled; L >= 31 - k
 * for every pivot of the call). Row k of R goes to D and, for the update,
 * to rrow (two rows of 64 doubles, by the pivot's parity, zeros past 32:
 * each lane reads it at fixed offsets from row k's start); 1 / r_kk to
 * rps; f: the 1-based column of the first pivot that is not positive. The
 * update runs over whole columns: the entries below the diagonal (and
 * past the block) it changes are never read. d, rp: pivot k's diagonal
 * entry and its 1 / sqrt, on entry and on exit for the next pivot.
 * The chain from one pivot to the next is r_k,k+1 and the next diagonal
 * entry in lane k + 1 (its own values: no shuffle), their broadcast, and
 * the next 1 / sqrt, which the warp computes while it issues the update
 * of the other rows (placed after the row's exchange, in the same
 * straight-line code): the same operations and bits as an update of row
 * k + 1 first and the 1 / sqrt after it. */
template <int L>
static __device__ __forceinline__ void chol_pivots(double (&h)[PC_NB], int k0, int k1, double *D,
                                                   double *rrow, double *rps, int lane, int &f,
                                                   double &d, double &rp) {
#pragma unroll 1
    for (int k = k0; k < k1; k++) {
        f = !(d > 0.0) && !f ? k + 1 : f;
        const double rkj = lane < k ? 0.0 : lane == k ? d * rp : h[0] * rp;
        const int k1n = (k + 1) & (PC_NB - 1);
        /* lane k + 1: r_k,k+1 is its own rkj (unused after the last pivot) */
        const double dn = __shfl_sync(0xffffffffu, fma(-rkj, rkj, h[1]), k1n);
        D[sw(k, lane)] = rkj; /* (zero below the diagonal) */
        double *rw = rrow + 64 * (k & 1);
        rw[lane] = rkj;
        if (lane == k) rps[k] = rp;
        __syncwarp(); /* row k whole in rw */
        const double *rk = rw + k; /* r_k,k+i at rk[i] (zero past the block) */
#pragma unroll
        for (int i = 1; i <= L; i++) h[i - 1] = fma(-rk[i], rkj, h[i]);
        d = dn;
        rp = pc_rsqrt(dn);
    }
}

/* Phase A on a diagonal block: R_pp = chol(X_pp) in D, in place (upper,
 * zeros below; warp 0, lane j on column j: per pivot an rsqrt and the
 * rows below it, the operations of an unblocked right-looking
 * factorization), 1 / r_kk into rps; the verdict into *fl and, where a
 * pivot fails, c0 + its column into *info. rps: 160 doubles (then scratch
 * for the rows of R). */
static __device__ __forceinline__ void pc_chol(double *D, double *rps, int *fl, int *info, int c0,
                                               int lane) {
    double *rrow = rps + PC_NB; /* 2 x 64 doubles */
    rrow[32 + lane] = 0.0, rrow[96 + lane] = 0.0;
    double h[PC_NB];
#pragma unroll
    for (int i = 0; i < PC_NB; i++) h[i] = D[sw(i, lane)];
    int f = 0;
    double d = __shfl_sync(0xffffffffu, h[0], 0), rp = pc_rsqrt(d);
    chol_pivots<31>(h, 0, 8, D, rrow, rps, lane, f, d, rp);
    chol_pivots<23>(h, 8, 16, D, rrow, rps, lane, f, d, rp);
    chol_pivots<15>(h, 16, 24, D, rrow, rps, lane, f, d, rp);
    chol_pivots<7>(h, 24, 32, D, rrow, rps, lane, f, d, rp);
    if (lane == 0) {
        *fl = f;
        if (f) *info = c0 + f;
    }
}

/* S_pp = R_pp^-1 (R_pp in D, 1 / r_kk in rps) into Sp, by one warp: lane j
 * on column j in registers, x_k = s_k / r_kk (by the pivot's 1 / sqrt),
 * s_i -= r_ik x_k for i < k, k descending; r_ik read by the whole warp at
 * once, so that the chains are lane-local. */
static __device__ __forceinline__ void pc_inv(const double *D, const double *rps, double *Sp,
                                              int lane) {
    double s[PC_NB];
#pragma unroll
    for (int i = 0; i < PC_NB; i++) s[i] = i == lane ? 1.0 : 0.0;
#pragma unroll
    for (int k = PC_NB - 1; k >= 0; k--) {
        s[k] *= rps[k];
#pragma unroll
        for (int i = 0; i < k; i++) s[i] = fma(-D[sw(i, k)], s[k], s[i]);
    }
#pragma unroll
    for (int i = 0; i < PC_NB; i++) Sp[sw(i, lane)] = s[i];
}

/* Y <- R_pp^-T Y in place (Y a 32 x 32 block; R_pp in Rs, 1 / r_kk in
 * rinv) by forward substitution, by one warp: lane j on column j in
 * registers, y_k = x_k / r_kk (by the pivot's 1 / sqrt), x_i -= r_ki y_k
 * for i > k, k ascending (lane-local chains, as pc_inv). */
static __device__ __forceinline__ void pc_trsm(const double *Rs, const double *rinv, double *Y,
                                               int lane) {
    double x[PC_NB];
#pragma unroll
    for (int i = 0; i < PC_NB; i++) x[i] = Y[sw(i, lane)];
#pragma unroll
    for (int k = 0; k < PC_NB; k++) {
        x[k] *= rinv[k];
#pragma unroll
        for (int i = k + 1; i < PC_NB; i++) x[i] = fma(-Rs[sw(k, i)], x[k], x[i]);
    }
#pragma unroll
    for (int i = 0; i < PC_NB; i++) Y[sw(i, lane)] = x[i];
}

/* nblk blocks of R in global memory into dst: block t is R_{q0 + t dq, j0 + t dj}
 * (written by other blocks of the cluster before the barrier just passed:
 * read through L2), zeros past n */
static __device__ __forceinline__ void pc_gather(double *dst, const double *R, long long ldr,
                                                 int q0, int j0, int dq, int dj, int nblk, int n,
                                                 int tid) {
    const int tot = nblk * PC_BB;
    for (int e0 = 0; e0 < tot; e0 += 8 * PC_THREADS) {
        double v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) { /* e: block t, column c, row r (rows fastest) */
            const int e = e0 + u * PC_THREADS + tid, t = e / PC_BB, c = (e / PC_NB) % PC_NB;
            const int r = e % PC_NB, col = PC_NB * (j0 + t * dj) + c;
            v[u] = e < tot && col < n
                       ? __ldcg(R + (PC_NB * (q0 + t * dq) + r) + (long long)col * ldr)
                       : 0.0;
        }
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int e = e0 + u * PC_THREADS + tid, t = e / PC_BB, c = (e / PC_NB) % PC_NB;
            if (e < tot) dst[(size_t)t * PC_BB + sw(e % PC_NB, c)] = v[u];
        }
    }
}

static __device__ __forceinline__ void cl_arrive() {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
static __device__ __forceinline__ void cl_wait() {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* S_bp = -T S_pp in place in S's block p (which holds T), S_pp copied from
 * block p's shared memory (src) into Ist */
static __device__ __forceinline__ void pc_srow(double *S, double *Ist, const double *src, int p,
                                               int w, int lane, int tid) {
    pc_copy(Ist, src, 1, tid);
    __syncthreads();
    double *T = S + (size_t)p * PC_BB, acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    blk_mma<false>(T, Ist, -1.0, acc, w, lane);
    __syncthreads(); /* (every read of T before it is written) */
    acc_store(acc, T, w, lane);
    __syncthreads();
}
#endif

static __global__ void __launch_bounds__(PC_THREADS)
    potrf_inv_cluster_kernel(int n, const double *__restrict__ G, long long ld, double *R,
                             long long ldr, double *diag, int *info, double *Inv) {
#if S9_ON
    cg::cluster_group cl = cg::this_cluster();
    const int nb = (int)cl.num_blocks(), b = (int)cl.block_rank();
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, c0 = PC_NB * b;
    extern __shared__ double pc_sm[];
    /* X: block column b (G's upper part, then R's); S: block row b of R^-1
     * (blocks b .. nb - 1, each first holding its sum T); staging */
    double *X = pc_sm, *S = X + PC_BB, *Ist = X + (size_t)(nb + 1) * PC_BB;
    double *Rst = Ist + PC_BB;
    double *rps = Ist + (size_t)nb * PC_BB; /* the pivots' 1 / r_kk */
    int *fl = (int *)(rps + 5 * PC_NB);
    /* rows 0 .. c0 + 31 of the block column: the upper triangle of G, zeros
     * below it and past n, the identity on the diagonal past n */
    const int rows = c0 + PC_NB, tot = rows * PC_NB;
    for (int e0 = 0; e0 < tot; e0 += 8 * PC_THREADS) { /* (down G's columns, 8 loads in flight) */
        double v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int e = e0 + u * PC_THREADS + tid, cc = e / rows, r = e - cc * rows;
            const int col = c0 + cc;
            v[u] = e >= tot ? 0.0
                   : col >= n ? (r == col ? 1.0 : 0.0)
                   : r <= col ? __ldg(G + r + (long long)col * ld)
                              : 0.0;
        }
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int e = e0 + u * PC_THREADS + tid, cc = e / rows, r = e - cc * rows;
            if (e < tot) X[sw(r, cc)] = v[u];
        }
    }
    if (tid == 0) *fl = 0;
    cl.sync(); /* (every block's shared memory in place before any remote read) */
    int failed = 0;
    if (b == 0 && w == 0) pc_chol(X, rps, fl, info, c0, lane); /* A of step 0 (later: below) */
    for (int p = 0; p < nb; p++) {
        cl.sync(); /* R_pp and block p's verdict */
        failed = *cl.map_shared_rank(fl, p);
        if (failed) break; /* (the same in every block) */
        if (b > p) { /* B: R_pb = R_pp^-T X_pb */
            pc_copy(Ist, cl.map_shared_rank(X + (size_t)p * PC_BB, p), 1, tid);
            if (tid < PC_NB) Rst[tid] = *cl.map_shared_rank(rps + tid, p);
            __syncthreads();
            double *Xp = X + (size_t)p * PC_BB;
            if (w == 0) pc_trsm(Ist, Rst, Xp, lane);
            __syncthreads();
            for (int e = tid; e < PC_BB; e += PC_THREADS) {
                const int r = e % PC_NB, c = e / PC_NB, col = c0 + c;
                if (col < n) R[(PC_NB * p + r) + (long long)col * ldr] = Xp[sw(r, c)];
            }
        } else if (b == p) { /* (off the chain) S_pp; R_pp and its diagonal into R and diag */
            const double *D = X + (size_t)p * PC_BB;
            if (w == 0) pc_inv(D, rps, S + (size_t)p * PC_BB, lane);
            for (int e = tid; e < PC_BB; e += PC_THREADS) {
                const int r = e % PC_NB, c = e / PC_NB, col = c0 + c;
                if (col < n && r <= c) {
                    R[(c0 + r) + (long long)col * ldr] = D[sw(r, c)];
                    if (r == c) diag[col] = D[sw(r, c)];
                }
            }
        }
        if (p == nb - 1) { /* S_bp = -T S_pp of the last block column */
            cl.sync(); /* S_pp */
            if (b < p) pc_srow(S, Ist, cl.map_shared_rank(S + (size_t)p * PC_BB, p), p, w, lane,
                               tid);
            break;
        }
        cl_arrive(); /* R_p. and S_pp in every block (the wait below) */
        if (b == p + 1) { /* C of the next diagonal block, then its A, before the wait */
            __syncthreads();
            double *Bp = X + (size_t)p * PC_BB, *Xb = X + (size_t)b * PC_BB, acc[2][2];
            acc_load(acc, Xb, w, lane);
            blk_mma<true>(Bp, Bp, -1.0, acc, w, lane);
            acc_store(acc, Xb, w, lane);
            __syncthreads();
            if (w == 0) pc_chol(Xb, rps, fl, info, c0, lane);
        }
        cl_wait();
        if (b > p + 1) { /* C: X_ib -= R_pi^T R_pb, p < i <= b (R_pi from R) */
            pc_gather(Rst, R, ldr, p, p + 1, 0, 1, b - p - 1, n, tid); /* (i < b) */
            __syncthreads();
            const double *Bp = X + (size_t)p * PC_BB;
            for (int i = p + 1; i <= b; i++) {
                const double *A = i == b ? Bp : Rst + (size_t)(i - p - 1) * PC_BB;
                double *Xi = X + (size_t)i * PC_BB, acc[2][2];
                acc_load(acc, Xi, w, lane);
                blk_mma<true>(A, Bp, -1.0, acc, w, lane);
                acc_store(acc, Xi, w, lane);
            }
        } else if (b <= p) { /* S_bp = -T S_pp (b < p); the sum T of S_b,p+1 = -T S_p+1,p+1:
                              * T = sum_{q=b}^{p} S_bq R_q,p+1 */
            if (b < p)
                pc_srow(S, Ist, cl.map_shared_rank(S + (size_t)p * PC_BB, p), p, w, lane, tid);
            pc_gather(Rst, R, ldr, b, p + 1, 1, 0, p - b + 1, n, tid);
            __syncthreads();
            double acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
            for (int q = b; q <= p; q++)
                blk_mma<false>(S + (size_t)q * PC_BB, Rst + (size_t)(q - b) * PC_BB, 1.0, acc, w,
                               lane);
            acc_store(acc, S + (size_t)(p + 1) * PC_BB, w, lane);
        }
        __syncthreads(); /* (the staging free) */
    }
    __syncthreads(); /* (the last blocks of S) */
    /* Inv's block row b: S right of the diagonal block, zeros left of it;
     * NaN where the factorization broke down */
    for (int e = tid; e < PC_NB * n; e += PC_THREADS) {
        const int r = e % PC_NB, col = e / PC_NB, row = c0 + r;
        if (row < n)
            Inv[row + (long long)col * n] =
                failed ? __longlong_as_double(0x7ff8000000000000LL)
                : col < c0 || row > col ? 0.0
                                        : S[(size_t)(col / PC_NB) * PC_BB + sw(r, col % PC_NB)];
    }
    cl.sync(); /* no block leaves while another may read its shared memory */
#endif
}

extern "C" int tn_cu_potrf_inv_ok(int n, int cc, size_t smem_optin) {
    return cc == 90 && n >= 1 && n <= TN_POTRF_CLUSTER_MAX &&
           pc_smem((n + PC_NB - 1) / PC_NB) <= smem_optin;
}

extern "C" int tn_cu_potrf_inv_cluster(int n, const double *G, int64_t ld, double *R, int64_t ldr,
                                       double *diag, int *info, double *Inv, cudaStream_t stream) {
    if (n < 1 || n > TN_POTRF_CLUSTER_MAX) return (int)cudaErrorInvalidValue;
    const int nb = (n + PC_NB - 1) / PC_NB;
    const size_t smem = pc_smem(nb);
    cudaError_t err = cudaMemsetAsync(info, 0, sizeof(int), stream);
    if (!err)
        err = cudaFuncSetAttribute(potrf_inv_cluster_kernel,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (!err)
        err = cudaFuncSetAttribute(potrf_inv_cluster_kernel,
                                   cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (err) return (int)err;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)nb;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)nb);
    cfg.blockDim = dim3(PC_THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&cfg, potrf_inv_cluster_kernel, n, G, (long long)ld, R,
                                   (long long)ldr, diag, info, Inv);
}
