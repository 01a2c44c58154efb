/* Kernels of CholeskyQR in FP64 on the CUDA backend (src/backend/cuda/orth_cuda.c):
 *
 *  - the Gram matrix's slab partials summed (tn_cu_gram_reduce, the upper
 *    triangle; zeros below it): the
 *    product Y^T Y runs as a strided batch of DGEMMs over row slabs of Y, so
 *    that a 16384 x 256 Y keeps the whole GPU busy (one DSYRK / DGEMM of
 *    that shape has a few dozen tiles), in a fixed order (deterministic);
 *  - the Cholesky factorization G = R^T R of the n x n Gram matrix
 *    (tn_cu_potrf_upper): one cooperative launch, right-looking in 32-column
 *    steps, blocks meeting at a grid barrier once per step. The chain of
 *    serial steps is what limits it (the work is a few MFLOP): per step
 *    the factorization of the 32 x 32 diagonal block, the trailing tiles
 *    and the barrier. So the diagonal block of the next step is factored
 *    as soon as its tile is updated (look-ahead, by block 0, while the
 *    other blocks update their tiles), by four warps with short code
 *    (diag_block), and a warp's two panel solves per tile run interleaved.
 *    One block per trailing tile (up to the SM count) beats a single block
 *    (2.5x slower at n = 512) and 8 blocks. Code stays in short loops: a
 *    fully unrolled version (300 KB of straight-line code) runs at the
 *    speed of instruction fetch. bench/fixed_costs.c times it (n = 266,
 *    512, 1024) and the whole CholeskyQR;
 *  - the inverses of R's 128 x 128 diagonal blocks (tn_cu_trinv_blocks),
 *    for the solve Q = Y R^-1 block by block in orth_cuda.c (DGEMMs): a
 *    forward substitution with one thread per row is latency-bound (21.6
 *    us per 16384 x 64 block on an H200, four warps per SM; cuBLAS's DTRSM
 *    61 us). Nsight Compute, the two CholeskyQRs of one randLRA call
 *    (16384 x 256 and x 512): 10 DGEMMs, 211 us, + 33 us of inverses,
 *    against 402 us for 12 substitutions + 9 DGEMMs.
 *
 * The factorization's breakdown test is LAPACK's: the first pivot that is
 * not positive (or NaN) stops it, with info = its column (1-based). */
#include "backend/cuda/tn_cuda.h"
#include "linalg/cholguard.h"

#define PO_NB 32      /* the factorization's step */
#define PO_THREADS 1024

/* ------------------------------------------------------------ Gram sum */
/* probe (may be NULL): the guard's probe rows (ld ldp), z_k(j) sqrt(G_jj)
 * written beside the diagonal (src/linalg/cholguard.h) */
static __global__ void gram_reduce_kernel(const double *P, long long nslab, long long nn,
                                          long long n, double *G, double *diag, double *probe,
                                          long long ldp) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nn;
         i += (long long)gridDim.x * blockDim.x) {
        if (i % n > i / n) { /* below the diagonal: not computed, not read */
            G[i] = 0.0;
            continue;
        }
        double s = P[i];
        for (long long t = 1; t < nslab; t++) s = __dadd_rn(s, P[t * nn + i]);
        G[i] = s;
        if (i % (n + 1) == 0) {
            const long long j = i / (n + 1);
            if (diag) diag[j] = s;
            if (probe) {
                const double d = __dsqrt_rn(s);
                for (int k = 0; k < TN_CHOL_PROBES; k++)
                    probe[k + j * ldp] = __dmul_rn(tn_chol_probe(k, j), d);
            }
        }
    }
}

extern "C" int tn_cu_gram_reduce(const double *P, int64_t nslab, int64_t n, double *G,
                                 double *diag, double *probe, int64_t ldp, cudaStream_t stream) {
    if (n <= 0) return 0;
    const long long nn = (long long)n * n;
    long long blocks = (nn + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    gram_reduce_kernel<<<(unsigned)blocks, 256, 0, stream>>>(P, (long long)nslab, nn,
                                                             (long long)n, G, diag, probe,
                                                             (long long)ldp);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------------ Cholesky (upper) */
/* Grid barrier for a cooperative launch: a monotonic arrival counter
 * (zeroed before the launch); the k-th barrier waits for k * gridDim.x. */
static __device__ __forceinline__ void grid_barrier(unsigned *bar, unsigned *target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        *target += gridDim.x;
        __threadfence();
        atomicAdd(bar, 1u);
        unsigned v;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(bar) : "memory");
        } while (v < *target);
    }
    __syncthreads();
}

/* Solves R_JJ^T x = b for one column of the step's row panel (rows j0 ..,
 * nb long) or, TWO, for two columns at once, one warp: lane i holds
 * element i of each (va, vb: the column's elements of G, loaded by the
 * caller); the results go to Pa_q[.] (and Pb_q[.]). The two solves are
 * independent chains interleaved in one loop (each column's operations
 * are those of a solve alone): the shuffle and multiply latencies of one
 * run under the other's. */
template <int TWO>
static __device__ __forceinline__ void panel_solve(int nb, double (*D)[PO_NB + 1],
                                                   const double *Dinv, double va, double vb,
                                                   double *Pa_q, double *Pb_q, int lane) {
#pragma unroll 4
    for (int k = 0; k < nb; k++) {
        const double dk = Dinv[k], l = D[lane][k];
        const double xa = __dmul_rn(__shfl_sync(0xffffffffu, va, k), dk);
        double xb = 0.0;
        if (TWO) xb = __dmul_rn(__shfl_sync(0xffffffffu, vb, k), dk);
        if (lane == k) {
            va = xa;
            if (TWO) vb = xb;
        } else if (lane > k) {
            va = __fma_rn(-l, xa, va);
            if (TWO) vb = __fma_rn(-l, xb, vb);
        }
    }
    Pa_q[lane] = va;
    if (TWO) Pb_q[lane] = vb;
}

/* Factors the diagonal block D (D[c][r] = G_JJ(r, c), upper triangle,
 * zeros elsewhere; nb <= 32 columns) in place into R_JJ, by the warps
 * 0 .. PO_DW - 1 (all of them call it): lane j works on column j, warp w
 * on rows PO_DR w .. PO_DR w + PO_DR - 1, held in registers. Step k: row
 * k (its values after step k - 1, unscaled) is in shared memory, published
 * by the warp that owns it; the warps meet at a named barrier; every warp
 * takes d = g_kk, r_kj = g_kj rsqrt(d) (r_kk = d rsqrt(d)) and r_ki from
 * it and updates g_ij -= r_ki r_kj for its rows k < i <= j: per element
 * the operations, in the same order, of an unblocked right-looking
 * factorization. The owner of row k + 1 updates and publishes it first,
 * then its other rows, so that the next step's chain (publication,
 * barrier, shared load, rsqrt) runs under those updates. Rows are
 * double-buffered by the parity of k: row k + 1 is written after the
 * barrier of step k, which a warp passes only when done reading row k - 1.
 * The code is short (steps unrolled by PO_DR only; the whole kernel is
 * under 3k SASS instructions): one warp doing all 32 columns with its
 * steps fully unrolled issues its instructions one after another (15.7k
 * SASS instructions in that kernel; 15k cycles a block on an H200).
 * Returns 0, or the 1-based column of the first pivot that is not
 * positive (or NaN; the factorization runs on, its values unused), the
 * same in every warp.
 * rowbuf: 2 x PO_NB doubles of shared memory. */
#define PO_DW 4              /* warps of the diagonal factorization */
#define PO_DR (PO_NB / PO_DW) /* rows per warp */
static __device__ __forceinline__ void po_dbar() {
    asm volatile("bar.sync 1, %0;" ::"n"(PO_DW * 32) : "memory");
}
static __device__ __forceinline__ int diag_block(double (*D)[PO_NB + 1], double (*rowbuf)[PO_NB],
                                                 int nb, int lane, int w) {
    double g[PO_DR];
#pragma unroll
    for (int ii = 0; ii < PO_DR; ii++) g[ii] = D[lane][PO_DR * w + ii];
    if (w == 0) rowbuf[0][lane] = g[0];
    int fail = 0;
    for (int kb = 0; kb < PO_DW; kb++) {
#pragma unroll
        for (int kk = 0; kk < PO_DR; kk++) {
            const int k = PO_DR * kb + kk;
            if (k >= nb) break; /* (the same in every warp) */
            po_dbar();
            const double *row = rowbuf[k & 1];
            const double d = row[k], rp = rsqrt(d);
            if (!(d > 0.0) && !fail) fail = k + 1; /* (what follows is not used) */
            const double rkj = lane < k ? 0.0 : lane == k ? __dmul_rn(d, rp) : __dmul_rn(row[lane], rp);
            if (w == kb && lane >= k) g[kk] = rkj;
            /* row k + 1 first, published for the next step */
            const int k1 = k + 1, w1 = kk == PO_DR - 1 ? kb + 1 : kb, i1 = (kk + 1) % PO_DR;
            if (k1 < nb && w == w1) {
                const double rki = __dmul_rn(row[k1], rp);
                if (k1 <= lane) g[i1] = __fma_rn(-rki, rkj, g[i1]);
                rowbuf[k1 & 1][lane] = g[i1];
            }
            /* the warp's other rows below row k + 1 */
#pragma unroll
            for (int ii = 0; ii < PO_DR; ii++) {
                const int i = PO_DR * w + ii;
                if (i > k1 && i <= lane) {
                    const double rki = __dmul_rn(row[i], rp);
                    g[ii] = __fma_rn(-rki, rkj, g[ii]);
                }
            }
        }
    }
#pragma unroll
    for (int ii = 0; ii < PO_DR; ii++) D[lane][PO_DR * w + ii] = g[ii];
    return fail;
}

/* G (n x n, ld) holds the Gram matrix in its upper triangle and is used up
 * as scratch; R (n x n, ld) receives the factor's upper triangle (its
 * strictly lower part is not written), diag R's diagonal (n), info the
 * LAPACK-style status. One grid barrier per 32-column step. Look-ahead:
 * the next step's diagonal block is trailing tile 0 of a step, which
 * block 0 alone takes (with more blocks than one); block 0 keeps its
 * update in shared memory (Dn) and factors it at once (diag_block),
 * writing R_JJ, its diagonal and, on a failing pivot, info, while the
 * other blocks update the other tiles. After the barrier every block
 * returns where info is set, and the other blocks read R_JJ from R (block
 * 0 keeps it in Dn), so the serial factorization of the diagonal block
 * leaves the chain of the other tiles; step 0's block alone is factored
 * by every block itself (the same numbers everywhere), at the same single
 * call site. The last step's block is factored by block 0 alone, with no
 * barrier before it (the other blocks are done). The first tile's
 * element and its row-panel columns are loaded before R_JJ, so that both
 * L2 round trips overlap. A warp solves its tile's two row-panel pieces
 * interleaved (panel_solve); the diagonal tiles write their piece of R's
 * row panel. R goes to its own array, so no block writes what another
 * still reads in the step; global data other blocks wrote is read with
 * ld.global.cg (L2). Every element of R and of G sees the same operations
 * in the same order as in an unblocked right-looking factorization
 * (diag_block's rsqrt scaling on the diagonal blocks, the substitutions
 * with 1 / R_kk on the row panels, the updates in column order),
 * whichever block computes it: the results do not depend on the grid. */
static __global__ void __launch_bounds__(PO_THREADS)
    potrf_upper_kernel(int n, double *G, long long ld, double *R, double *diag, int *info,
                       unsigned *bar) {
    static_assert(PO_THREADS == 32 * PO_NB, "a warp per panel column, an element per thread");
    __shared__ double D[PO_NB][PO_NB + 1];   /* D[c][r]: R_JJ(r, c) */
    __shared__ double Dn[PO_NB][PO_NB + 1];  /* the diagonal block being factored */
    __shared__ double Pa[PO_NB][PO_NB + 1];  /* Pa[q][p]: R(j0 + p, column q of tile bi) */
    __shared__ double Pb[PO_NB][PO_NB + 1];
    __shared__ double Dinv[PO_NB];           /* 1 / R_JJ(i, i) */
    __shared__ double rowbuf[2][PO_NB];      /* diag_block's published rows */
    __shared__ int fail_s;
    unsigned target = 0;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int rr = lane, cq = warp; /* the thread's element of a tile (row, column) */
    const int nblk = (int)gridDim.x, blk = (int)blockIdx.x;
    for (int e = tid; e < PO_NB * PO_NB; e += PO_THREADS) { /* step 0's diagonal block */
        const int r = e % PO_NB, c = e / PO_NB, nb = n < PO_NB ? n : PO_NB;
        Dn[c][r] = (r < nb && c < nb && r <= c) ? __ldcg(G + r + (long long)c * ld) : 0.0;
    }
    __syncthreads();
    for (int j0 = 0;; ) {
        const int nb = n - j0 < PO_NB ? n - j0 : PO_NB, last = j0 + nb >= n;
        if (j0 > 0 && last && blk != 0) return; /* (nothing left but block 0's factorization) */
        /* 1. the step's diagonal block (in Dn): factored by every block at
         * step 0, later by block 0 alone (tile 0 of the step before) */
        if ((j0 == 0 || blk == 0) && warp < PO_DW) {
            const int f = diag_block(Dn, rowbuf, nb, lane, warp);
            if (warp == 0 && lane == 0) fail_s = f;
            if (blk == 0) { /* R_JJ: each warp its rows (its own writes to Dn) */
                if (f == 0) {
                    if (lane < nb) {
#pragma unroll
                        for (int ii = 0; ii < PO_DR; ii++) {
                            const int p = PO_DR * warp + ii;
                            if (p <= lane) R[(j0 + p) + (long long)(j0 + lane) * ld] = Dn[lane][p];
                        }
                        if (lane / PO_DR == warp) diag[j0 + lane] = Dn[lane][lane];
                    }
                } else if (warp == 0 && lane == 0) {
                    *info = j0 + f;
                }
            }
        }
        if (last) return; /* (R_JJ, diag and info written) */
        if (j0 > 0) grid_barrier(bar, &target); /* (the step before's tiles, R_JJ) */
        else __syncthreads();
        if (j0 == 0 ? fail_s != 0 : __ldcg(info) != 0) return; /* the same in every block */
        const int c0 = j0 + nb;
        const int t = n - c0, nt = t > 0 ? (t + PO_NB - 1) / PO_NB : 0, ntiles = nt * (nt + 1) / 2;
        /* the block's trailing tiles (bi <= bj): block 0 tile 0 alone where
         * there are other blocks, which take the rest in turn */
        int tile = nblk == 1 ? 0 : blk;
        const int tstep = nblk == 1 ? 1 : blk == 0 ? ntiles : nblk - 1;
        /* the first tile's element and its panel columns, loaded early */
        int bi = 0, bj = 0, r0 = 0, cc0 = 0;
        double v = 0.0, va = 0.0, vb = 0.0;
        if (tile < ntiles) {
            int rem = tile; /* tile -> (bi <= bj) */
            while (rem > bj) rem -= ++bj;
            bi = rem, r0 = c0 + bi * PO_NB, cc0 = c0 + bj * PO_NB;
            const int r = r0 + rr, c = cc0 + cq, ca = r0 + warp, cb = cc0 + warp;
            v = (r < n && c < n && r <= c) ? __ldcg(G + r + (long long)c * ld) : 0.0;
            va = (lane < nb && ca < n) ? __ldcg(G + j0 + lane + (long long)ca * ld) : 0.0;
            if (bi != bj)
                vb = (lane < nb && cb < n) ? __ldcg(G + j0 + lane + (long long)cb * ld) : 0.0;
        }
        /* R_JJ into D: from Dn where the block factored it (every block at
         * step 0, block 0 later), else from R (block 0's) */
        for (int e = tid; e < PO_NB * PO_NB; e += PO_THREADS) {
            const int r = e % PO_NB, c = e / PO_NB;
            D[c][r] = !(r < nb && c < nb && r <= c) ? 0.0
                      : j0 == 0 || blk == 0         ? Dn[c][r]
                                                    : __ldcg(R + (j0 + r) + (long long)(j0 + c) * ld);
        }
        __syncthreads();
        if (tid < nb) Dinv[tid] = __drcp_rn(D[tid][tid]);
        __syncthreads(); /* (Dn free for tile 0) */
        /* 2. the trailing tiles: their two row-panel pieces (a warp per
         * column), then G_bi,bj -= Pa^T Pb */
        for (int first = 1; tile < ntiles; tile += tstep, first = 0) {
            if (!first) {
                bj = 0;
                int rem = tile;
                while (rem > bj) rem -= ++bj;
                bi = rem, r0 = c0 + bi * PO_NB, cc0 = c0 + bj * PO_NB;
                const int r = r0 + rr, c = cc0 + cq, ca = r0 + warp, cb = cc0 + warp;
                v = (r < n && c < n && r <= c) ? __ldcg(G + r + (long long)c * ld) : 0.0;
                va = (lane < nb && ca < n) ? __ldcg(G + j0 + lane + (long long)ca * ld) : 0.0;
                vb = (bi != bj && lane < nb && cb < n)
                         ? __ldcg(G + j0 + lane + (long long)cb * ld)
                         : 0.0;
            }
            if (bi != bj) panel_solve<1>(nb, D, Dinv, va, vb, Pa[warp], Pb[warp], lane);
            else panel_solve<0>(nb, D, Dinv, va, 0.0, Pa[warp], NULL, lane);
            __syncthreads();
            const double(*Pc)[PO_NB + 1] = bi == bj ? Pa : Pb;
            if (bi == bj)
                for (int e = tid; e < PO_NB * PO_NB; e += PO_THREADS) {
                    const int p = e % PO_NB, q = e / PO_NB;
                    if (p < nb && r0 + q < n) R[(j0 + p) + (long long)(r0 + q) * ld] = Pa[q][p];
                }
            const int r = r0 + rr, c = cc0 + cq, in = r < n && c < n && r <= c;
            double s = v;
            if (in) {
#pragma unroll 4
                for (int p = 0; p < nb; p++) s = __fma_rn(-Pa[rr][p], Pc[cq][p], s);
                G[r + (long long)c * ld] = s;
            }
            if (tile == 0) Dn[cq][rr] = in ? s : 0.0; /* the next diagonal block */
            __syncthreads(); /* Pa / Pb are refilled by the next tile; Dn is whole */
        }
        j0 = c0;
    }
}

/* bar: one unsigned of device memory for the barrier (zeroed here). */
extern "C" int tn_cu_potrf_upper(int n, double *G, int64_t ld, double *R, double *diag, int *info,
                                 unsigned *bar, int sm_count, cudaStream_t stream) {
    if (n <= 0) return 0;
    cudaError_t e = cudaMemsetAsync(bar, 0, sizeof(unsigned), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(info, 0, sizeof(int), stream);
    if (e != cudaSuccess) return (int)e;
    const int nt = (n + PO_NB - 1) / PO_NB;
    int blocks = nt * (nt + 1) / 2; /* the first step's trailing tiles, at most */
    if (blocks > sm_count) blocks = sm_count;
    if (blocks < 1) blocks = 1;
    long long ldl = (long long)ld;
    void *args[] = {&n, &G, &ldl, &R, &diag, &info, &bar};
    return (int)cudaLaunchCooperativeKernel((const void *)potrf_upper_kernel, dim3((unsigned)blocks),
                                            dim3(PO_THREADS), args, 0, stream);
}

/* ------------------------------------------------ breakdown test */
/* tn_chol_ok (src/linalg/orth.c) on the device, the same arithmetic, and
 * (probe not NULL) the loss guard tn_chol64_loss_within on the solve's
 * probe rows (TN_CHOL_PROBES x n, ld ldp): one block; flag |= 2 for a
 * non-finite Gram diagonal (the host path's TN_ORTH_NONFINITE), |= 1 for
 * an unusable factor, |= 4 for a Q too far from orthonormal from a usable
 * one (while the flag holds nothing else). assign: the flag is written (0
 * when all pass), else ORed into. */
#define CV_THREADS 256
static __global__ void __launch_bounds__(CV_THREADS)
    chol_verdict_kernel(const double *gd, const int *info, int n, double u, const double *probe,
                        long long ldp, int *flag, int assign) {
    __shared__ double part[CV_THREADS];
    int bad = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const double g = gd[i], r = gd[n + i];
        if (!isfinite(g)) bad |= 2;
        if (!(r > 0) || !isfinite(r) || !(g > 0) || __dmul_rn(r, r) < __dmul_rn(__dmul_rn((double)n, u), g))
            bad |= 1;
    }
    if (threadIdx.x == 0 && *info != 0) bad |= 1;
    double s = 0.0; /* the sum of squares, in a fixed order */
    if (probe)
        for (long long e = threadIdx.x; e < (long long)TN_CHOL_PROBES * n; e += blockDim.x) {
            const double v = probe[e % TN_CHOL_PROBES + (e / TN_CHOL_PROBES) * ldp];
            s = __fma_rn(v, v, s);
        }
    part[threadIdx.x] = s;
    bad = __syncthreads_or(bad & 1) | (__syncthreads_or(bad & 2) ? 2 : 0);
    for (int w = CV_THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] = __dadd_rn(part[threadIdx.x], part[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        /* (only where the factor was usable, in this pass and before) */
        if (probe && !bad && !(!assign && *flag) && !tn_chol64_loss_within(part[0])) bad |= 4;
        if (assign) *flag = bad;
        else if (bad) atomicOr(flag, bad);
    }
}

extern "C" int tn_cu_chol_verdict(const double *gdiag, const int *info, int n, double u,
                                  const double *probe, int64_t ldp, int *flag, int assign,
                                  cudaStream_t stream) {
    chol_verdict_kernel<<<1, CV_THREADS, 0, stream>>>(gdiag, info, n, u, probe, (long long)ldp,
                                                      flag, assign);
    return (int)cudaGetLastError();
}

/* ---------------------------------------- inverses of the diagonal blocks */
/* Column j of the inverse of a diagonal block by back substitution in
 * right-looking order: x_p = s_p (1 / R_pp), then s_i -= R_ip x_p for
 * i < p, p from j down to 0 (s = e_j at the start). One warp per column,
 * lane l holding rows l + 32 q; x_p goes round by a shuffle. R's block is
 * in shared memory (column p read by the whole warp at pivot p: no bank
 * conflicts). Grid: (diagonal block, group of TI_WARPS columns). H200,
 * Nsight Compute, the two QRs of a randLRA call at k = 256: 33 us (one
 * thread per column of a 64-column block: 70 us, and those inverses
 * composed pairwise into 128-column ones + 33 us; this kernel with a
 * select over s[] at every pivot and R loaded in a loop: 70 us). */
#define TI_NB TN_TRINV_NB
#define TI_WARPS 16
#define TI_SMEM (TI_NB * TI_NB * 8 + TI_NB * 8)
static __global__ void __launch_bounds__(TI_WARPS * 32)
    trinv_kernel(int n, const double *__restrict__ R, long long ldr, double *__restrict__ Inv) {
    extern __shared__ double ti_sm[];
    double *Rs = ti_sm, *rinv = ti_sm + TI_NB * TI_NB; /* Rs[i + p NB] = R(i, p) */
    const int b = blockIdx.x, r0 = b * TI_NB, tid = threadIdx.x, lane = tid & 31;
    const int j = blockIdx.y * TI_WARPS + (tid >> 5);
    const int jb = n - r0 < TI_NB ? n - r0 : TI_NB;
    /* R's block by cp.async, all of a thread's copies in flight at once
     * (zeros, by a source size of 0, below the diagonal and past n; the
     * address is inside the block either way). Loaded in a loop, one L2
     * round trip after the other, the load dominated the kernel. */
    {
        const uint32_t rs_s = (uint32_t)__cvta_generic_to_shared(Rs);
        for (int e = tid; e < TI_NB * TI_NB; e += TI_WARPS * 32) {
            const int i = e % TI_NB, p = e / TI_NB;
            const int pc = min(p, jb - 1), ic = min(i, pc);
            const double *src = R + (r0 + ic) + (long long)(r0 + pc) * ldr;
            asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(rs_s + 8u * (uint32_t)e),
                         "l"(src), "r"((i <= p && p < jb) ? 8 : 0)
                         : "memory");
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
    }
    __syncthreads();
    for (int p = tid; p < TI_NB; p += TI_WARPS * 32) rinv[p] = p < jb ? __drcp_rn(Rs[p + p * TI_NB]) : 0.0;
    __syncthreads();
    double s[TI_NB / 32];
#pragma unroll
    for (int q = 0; q < TI_NB / 32; q++) s[q] = lane + 32 * q == j ? 1.0 : 0.0;
    /* pivots p = 32 qq + pp: the owner lane pp holds x_p in s[qq]; rows
     * in s[q], q < qq, are all above p; in s[qq], the lanes below pp */
    const int jq = j >> 5;
#pragma unroll
    for (int qq = TI_NB / 32 - 1; qq >= 0; qq--) {
        if (j >= jb || qq > jq) continue;
        for (int pp = qq == jq ? (j & 31) : 31; pp >= 0; pp--) {
            const int p = 32 * qq + pp;
            const double xp = __dmul_rn(__shfl_sync(0xffffffffu, s[qq], pp), rinv[p]);
            const double *Rp = Rs + p * TI_NB + lane;
#pragma unroll
            for (int q = 0; q < qq; q++) s[q] = __fma_rn(-Rp[32 * q], xp, s[q]);
            if (lane == pp) s[qq] = xp;
            else if (lane < pp) s[qq] = __fma_rn(-Rp[32 * qq], xp, s[qq]);
        }
    }
    double *out = Inv + (long long)b * TI_NB * TI_NB + (long long)j * TI_NB;
#pragma unroll
    for (int q = 0; q < TI_NB / 32; q++) {
        const int i = lane + 32 * q;
        out[i] = (j < jb && i <= j) ? s[q] : 0.0;
    }
}

extern "C" int tn_cu_trinv_blocks(int n, const double *R, int64_t ldr, double *Inv,
                                  cudaStream_t stream) {
    if (n <= 0) return 0;
    cudaError_t e = cudaFuncSetAttribute((const void *)trinv_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, TI_SMEM);
    if (e != cudaSuccess) return (int)e;
    const dim3 grid((unsigned)((n + TI_NB - 1) / TI_NB), TI_NB / TI_WARPS);
    trinv_kernel<<<grid, TI_WARPS * 32, TI_SMEM, stream>>>(n, R, (long long)ldr, Inv);
    return (int)cudaGetLastError();
}

/* ------------------------------------------------- R out of the factor */
/* The upper triangle of G (n x n, ldg) with zeros below it, into D (FP64,
 * ldd) and / or F (FP32, ldf) where not NULL. */
static __global__ void upper_copy_kernel(long long n, const double *G, long long ldg, double *D,
                                         long long ldd, float *F, long long ldf) {
    const long long j = blockIdx.y;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const double v = i <= j ? G[i + j * ldg] : 0.0;
        if (D) D[i + j * ldd] = v;
        if (F) F[i + j * ldf] = __double2float_rn(v);
    }
}

extern "C" int tn_cu_upper_copy(int64_t n, const double *G, int64_t ldg, double *D, int64_t ldd,
                                float *F, int64_t ldf, cudaStream_t stream) {
    if (n <= 0) return 0;
    upper_copy_kernel<<<dim3((unsigned)((n + 255) / 256), (unsigned)n), 256, 0, stream>>>(
        (long long)n, G, (long long)ldg, D, (long long)ldd, F, (long long)ldf);
    return (int)cudaGetLastError();
}
