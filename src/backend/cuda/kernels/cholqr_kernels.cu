/* Kernels of CholeskyQR in FP64 on the CUDA backend (src/backend/cuda/orth_cuda.c):
 *
 *  - the Gram matrix's slab partials summed (tn_cu_gram_reduce, the upper
 *    triangle; zeros below it): the
 *    product Y^T Y runs as a strided batch of DGEMMs over row slabs of Y (on
 *    Hopper's single pass, tn_cu_gram_dmma in cholqr_dmma.cu), so
 *    that a 16384 x 256 Y keeps the whole GPU busy (one DSYRK / DGEMM of
 *    that shape has a few dozen tiles), in a fixed order (deterministic);
 *  - the Cholesky factorization G = R^T R of the n x n Gram matrix
 *    (tn_cu_potrf_upper): one cooperative launch, right-looking in 32-column
 *    steps, blocks meeting at a grid barrier once per step. The chain of
 *    serial steps is what limits it (the work is a few MFLOP): per step
 *    the factorization of the 32 x 32 diagonal block, the trailing tiles
 *    and the barrier. So the diagonal block of the next step is factored
 *    as soon as its tile is updated (look-ahead, by block 0, while the
 *    other blocks update their tiles), by two warps with shuffles
 *    (diag_block), and a tile's row-panel pieces are solved by four warps
 *    each (panel_solve). Blocks of 512 threads, so that these chains have
 *    128 registers a thread to keep their shuffles and loads in flight
 *    (about 102 us at n = 266 on an H100, of which half is the diagonal
 *    blocks' chain). One block per
 *    trailing tile (up to the SM count) beats a single block (2.5x slower
 *    at n = 512) and 8 blocks. bench/fixed_costs.c times it (n = 266,
 *    512, 1024) and the whole CholeskyQR;
 *  - the inverses of R's 128 x 128 diagonal blocks (tn_cu_trinv_blocks),
 *    for the solve Q = Y R^-1 block by block in orth_cuda.c (DGEMMs): a
 *    forward substitution with one thread per row is latency-bound (21.6
 *    us per 16384 x 64 block on an H200, four warps per SM; cuBLAS's DTRSM
 *    61 us). Nsight Compute, the two CholeskyQRs of one randLRA call
 *    (16384 x 256 and x 512): 10 DGEMMs, 211 us, + 33 us of inverses,
 *    against 402 us for 12 substitutions + 9 DGEMMs; and, from 129 to
 *    TN_TRINV_FULL_MAX columns, the whole inverse (tn_cu_trinv_full), for
 *    the solve as one DTRMM.
 *
 * The factorization's breakdown test is LAPACK's: the first pivot that is
 * not positive (or NaN) stops it, with info = its column (1-based). */
#include "backend/cuda/tn_cuda.h"
#include "linalg/cholguard.h"

#define PO_NB 32      /* the factorization's step */
#define PO_THREADS 512 /* 128 registers a thread for the latency-bound chains */
#define PO_CT (PO_NB * 32 / PO_THREADS) /* tile columns a thread takes */

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

/* Solves R_JJ^T X = B for the 32 columns of a piece of the step's row
 * panel, in place in P (P[q][p]: row p of column q; nb rows), by PO_PW
 * warps (h = 0 .. PO_PW - 1): lane q takes column q, warp h rows
 * PO_PH h .. PO_PH h + PO_PH - 1 in registers. In phase h, warp h solves
 * its rows (x_k = b_k (1 / R_kk), then b_p -= R_kp x_k for its rows p > k)
 * and stores them; after a barrier of the PO_PW warps (named barrier bar),
 * the warps below update their rows with them. Every element sees the
 * operations of a right-looking substitution in the same order (k
 * ascending). R_kp comes from shared memory, the same address for the
 * whole warp; there are no shuffles, so that the two pieces of a tile are
 * solved side by side without contending for the shuffle unit. */
#define PO_PH 8               /* rows per warp of the panel solve */
#define PO_PW (PO_NB / PO_PH) /* warps per panel piece */
static __device__ __forceinline__ void panel_solve(int nb, double (*D)[PO_NB + 1],
                                                   const double *Dinv, double (*P)[PO_NB + 1],
                                                   int lane, int h, int bar) {
    double a[PO_PH];
    double *col = P[lane];
    const int r0 = PO_PH * h;
#pragma unroll
    for (int ii = 0; ii < PO_PH; ii++) a[ii] = col[r0 + ii];
    for (int ph = 0; ph < PO_PW && PO_PH * ph < nb; ph++) { /* (the same in every warp) */
        const int k0 = PO_PH * ph, kend = nb < k0 + PO_PH ? nb : k0 + PO_PH;
        if (h == ph) {
#pragma unroll
            for (int kk = 0; kk < PO_PH; kk++) {
                const int k = k0 + kk;
                if (k >= kend) break;
                const double x = __dmul_rn(a[kk], Dinv[k]);
                a[kk] = x;
#pragma unroll
                for (int ii = kk + 1; ii < PO_PH; ii++) a[ii] = __fma_rn(-D[r0 + ii][k], x, a[ii]);
            }
#pragma unroll
            for (int ii = 0; ii < PO_PH; ii++) col[r0 + ii] = a[ii];
        }
        asm volatile("bar.sync %0, %1;" ::"r"(bar), "n"(PO_PW * 32) : "memory");
        if (h > ph)
            for (int k = k0; k < kend; k++) {
                const double x = col[k];
#pragma unroll
                for (int ii = 0; ii < PO_PH; ii++) a[ii] = __fma_rn(-D[r0 + ii][k], x, a[ii]);
            }
    }
    /* (rows past nb: zeros, as loaded; a warp whose rows all lie past nb
     * never stores them) */
}

/* Factors the diagonal block D (D[c][r] = G_JJ(r, c), upper triangle,
 * zeros elsewhere; nb <= 32 columns) in place into R_JJ, by warps 0 and 1
 * (both call it): lane j works on column j, warp w on rows 16 w ..
 * 16 w + 15, held in registers. Warp 0 takes pivots 0 .. 15 with shuffles
 * alone: d = g_kk from lane k, r_kj = g_kj rsqrt(d) (r_kk = d rsqrt(d)),
 * r_ki from lane i, and g_ij -= r_ki r_kj for its rows k < i <= j; then it
 * stores its rows of R. After a barrier of the two warps, warp 1 updates
 * its rows with them (k in order) and takes pivots 16 .. 31 the same way.
 * Per element these are the operations, in the same order, of an
 * unblocked right-looking factorization. The pivot loop is unrolled (with
 * no test against nb for a whole block, FULL), so that a pivot's shuffles
 * are issued together. Returns 0, or the 1-based column of the first
 * pivot that is not positive (or NaN; the factorization runs on, its
 * values unused), the same in both warps. fails: two ints of shared
 * memory. */
#define PO_DW 2               /* warps of the diagonal factorization */
#define PO_DR (PO_NB / PO_DW) /* rows per warp */
static __device__ __forceinline__ void po_dbar() {
    asm volatile("bar.sync 1, %0;" ::"n"(PO_DW * 32) : "memory");
}
template <bool FULL> /* nb == PO_NB: no test against nb in the unrolled loop */
static __device__ __forceinline__ int diag_pivots(double (&g)[PO_DR], int k0, int nb, int lane) {
    int fail = 0;
#pragma unroll
    for (int kk = 0; kk < PO_DR; kk++) {
        const int k = k0 + kk;
        if (!FULL && k >= nb) break;
        const double d = __shfl_sync(0xffffffffu, g[kk], k);
        const double rp = rsqrt(d);
        if (!(d > 0.0) && !fail) fail = k + 1;
        const double rkj = lane < k ? 0.0 : lane == k ? __dmul_rn(d, rp) : __dmul_rn(g[kk], rp);
        if (lane >= k) g[kk] = rkj;
#pragma unroll
        for (int ii = kk + 1; ii < PO_DR; ii++) {
            const double rki = __shfl_sync(0xffffffffu, rkj, k0 + ii);
            if (k0 + ii <= lane) g[ii] = __fma_rn(-rki, rkj, g[ii]);
        }
    }
    return fail;
}
static __device__ __forceinline__ int diag_block(double (*D)[PO_NB + 1], int *fails, int nb,
                                                 int lane, int w) {
    static_assert(PO_DW == 2, "two warps of 16 rows");
    double g[PO_DR];
#pragma unroll
    for (int ii = 0; ii < PO_DR; ii++) g[ii] = D[lane][PO_DR * w + ii];
    int fail = 0;
    if (w == 0) {
        fail = nb == PO_NB ? diag_pivots<true>(g, 0, nb, lane) : diag_pivots<false>(g, 0, nb, lane);
#pragma unroll
        for (int ii = 0; ii < PO_DR; ii++) D[lane][ii] = g[ii];
    }
    po_dbar();
    if (w == 1 && nb > PO_DR) {
#pragma unroll 4
        for (int k = 0; k < PO_DR; k++) {
            const double rkj = D[lane][k];
#pragma unroll
            for (int ii = 0; ii < PO_DR; ii++)
                if (PO_DR + ii <= lane) g[ii] = __fma_rn(-D[PO_DR + ii][k], rkj, g[ii]);
        }
        fail = nb == PO_NB ? diag_pivots<true>(g, PO_DR, nb, lane)
                           : diag_pivots<false>(g, PO_DR, nb, lane);
#pragma unroll
        for (int ii = 0; ii < PO_DR; ii++) D[lane][PO_DR + ii] = g[ii];
    }
    if (lane == 0) fails[w] = fail;
    po_dbar();
    return fails[0] ? fails[0] : fails[1];
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
 * L2 round trips overlap. Four warps solve each of a tile's row-panel
 * pieces, the two pieces side by side (panel_solve); each thread updates
 * PO_CT elements of the tile; the diagonal tiles write their piece of R's
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
    static_assert(PO_CT * PO_THREADS == 32 * PO_NB && PO_THREADS / 32 >= 2 * PO_PW,
                  "each warp PO_CT tile columns, a panel solve by PO_PW warps");
    __shared__ double D[PO_NB][PO_NB + 1];   /* D[c][r]: R_JJ(r, c) */
    __shared__ double Dn[PO_NB][PO_NB + 1];  /* the diagonal block being factored */
    __shared__ double Pa[PO_NB][PO_NB + 1];  /* Pa[q][p]: R(j0 + p, column q of tile bi) */
    __shared__ double Pb[PO_NB][PO_NB + 1];
    __shared__ double Dinv[PO_NB];           /* 1 / R_JJ(i, i) */
    __shared__ int fails[PO_DW];             /* diag_block's verdicts */
    __shared__ int fail_s;
    unsigned target = 0;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int rr = lane, nw = PO_THREADS / 32; /* the thread's tile elements: (rr, warp + nw t) */
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
            const int f = diag_block(Dn, fails, nb, lane, warp);
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
        double v[PO_CT], va[PO_CT], vb[PO_CT];
        auto load_tile = [&]() { /* v: the tile's elements; va, vb: its panel columns */
#pragma unroll
            for (int t = 0; t < PO_CT; t++) {
                const int cq = warp + nw * t;
                const int r = r0 + rr, c = cc0 + cq, ca = r0 + cq, cb = cc0 + cq;
                v[t] = (r < n && c < n && r <= c) ? __ldcg(G + r + (long long)c * ld) : 0.0;
                va[t] = (lane < nb && ca < n) ? __ldcg(G + j0 + lane + (long long)ca * ld) : 0.0;
                vb[t] = (bi != bj && lane < nb && cb < n)
                            ? __ldcg(G + j0 + lane + (long long)cb * ld)
                            : 0.0;
            }
        };
        if (tile < ntiles) {
            int rem = tile; /* tile -> (bi <= bj) */
            while (rem > bj) rem -= ++bj;
            bi = rem, r0 = c0 + bi * PO_NB, cc0 = c0 + bj * PO_NB;
            load_tile();
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
                load_tile();
            }
#pragma unroll
            for (int t = 0; t < PO_CT; t++) {
                Pa[warp + nw * t][lane] = va[t];
                if (bi != bj) Pb[warp + nw * t][lane] = vb[t];
            }
            __syncthreads();
            if (warp < PO_PW) panel_solve(nb, D, Dinv, Pa, lane, warp, 2);
            else if (warp < 2 * PO_PW && bi != bj)
                panel_solve(nb, D, Dinv, Pb, lane, warp - PO_PW, 3);
            __syncthreads();
            const double(*Pc)[PO_NB + 1] = bi == bj ? Pa : Pb;
            if (bi == bj)
                for (int e = tid; e < PO_NB * PO_NB; e += PO_THREADS) {
                    const int p = e % PO_NB, q = e / PO_NB;
                    if (p < nb && r0 + q < n) R[(j0 + p) + (long long)(r0 + q) * ld] = Pa[q][p];
                }
            double sv[PO_CT];
#pragma unroll
            for (int t = 0; t < PO_CT; t++) sv[t] = v[t];
#pragma unroll 4
            for (int p = 0; p < nb; p++) {
                const double x = Pa[rr][p];
#pragma unroll
                for (int t = 0; t < PO_CT; t++) sv[t] = __fma_rn(-x, Pc[warp + nw * t][p], sv[t]);
            }
#pragma unroll
            for (int t = 0; t < PO_CT; t++) {
                const int cq = warp + nw * t, r = r0 + rr, c = cc0 + cq;
                const int in = r < n && c < n && r <= c;
                if (in) G[r + (long long)c * ld] = sv[t];
                if (tile == 0) Dn[cq][rr] = in ? sv[t] : 0.0; /* the next diagonal block */
            }
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
 * probe rows (TN_CHOL_PROBES x n, ld ldp), or (inv not NULL) on the probe
 * rows z_k(j) sqrt(G_jj) times R^-1 (inv, ld n, zeros below the diagonal)
 * formed here, for the solve that writes no probe rows
 * (cholqr_dmma.cu): one block; flag |= 2 for a
 * non-finite Gram diagonal (the host path's TN_ORTH_NONFINITE), |= 1 for
 * an unusable factor, |= 4 for a Q too far from orthonormal from a usable
 * one (while the flag holds nothing else). assign: the flag is written (0
 * when all pass), else ORed into.
 * The probe rows' solve Z R^-1 (Z: the TN_CHOL_PROBES x n rows z_k(i)
 * sqrt(G_ii)) on the FP64 MMA m8n8k4: a warp per 8 columns of R^-1 at a
 * time, its rows 4 at a time (a load of 4 rows x 8 columns: whole 32-byte
 * sectors), Z's 8 x 4 block from shared memory; the MMA sums in the
 * hardware's fixed order, then the squares of each warp's results and the
 * block's tree: the same bits on every run. H100, the randomized SVD's
 * n = 266 (PyTorch's profiler): 11 us a launch; a thread per column that
 * read its column's rows one after the other (a separate sector per
 * element and lane) took 22. */
#define CV_THREADS 512
#define CV_INV_MAX TN_TRINV_FULL_MAX /* columns of inv, at most */
#define CV_ZLD (CV_INV_MAX + 4)      /* Z's row stride: 4 mod 16, no bank conflicts */
#define CV_STEPS 8                   /* loads in flight per warp */
static_assert(TN_CHOL_PROBES == 8, "the probes are the MMA's 8 rows");

/* d (8 x 8, lane: row lane / 4, columns 2 (lane % 4) + {0, 1}) += a (8 x
 * 4, lane: row lane / 4, column lane % 4) b (4 x 8, lane: row lane % 4,
 * column lane / 4) */
static __device__ __forceinline__ void cv_dmma(double (&d)[2], double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

/* (one block: the registers of a block per SM, so that the loads of a
 * batch go out together instead of one before each MMA) */
static __global__ void __launch_bounds__(CV_THREADS, 1)
    chol_verdict_kernel(const double *gd, const int *info, int n, double u, const double *probe,
                        long long ldp, const double *inv, int *flag, int assign) {
    __shared__ double part[CV_THREADS];
    __shared__ double zd[TN_CHOL_PROBES * CV_ZLD]; /* Z, for inv (zeros past n) */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int bad = 0;
    for (int i = tid; i < n; i += blockDim.x) {
        const double g = gd[i], r = gd[n + i];
        if (!isfinite(g)) bad |= 2;
        if (!(r > 0) || !isfinite(r) || !(g > 0) || __dmul_rn(r, r) < __dmul_rn(__dmul_rn((double)n, u), g))
            bad |= 1;
    }
    if (tid == 0 && *info != 0) bad |= 1;
    double s = 0.0; /* the sum of squares, in a fixed order */
    if (probe)
        for (long long e = tid; e < (long long)TN_CHOL_PROBES * n; e += blockDim.x) {
            const double v = probe[e % TN_CHOL_PROBES + (e / TN_CHOL_PROBES) * ldp];
            s = __fma_rn(v, v, s);
        }
    if (inv) { /* (n <= CV_INV_MAX) */
        const int n4 = (n + 3) & ~3;
        for (int i = tid; i < n4; i += blockDim.x) {
            const double d = i < n ? __dsqrt_rn(gd[i]) : 0.0;
            for (int k = 0; k < TN_CHOL_PROBES; k++)
                zd[k * CV_ZLD + i] = i < n ? __dmul_rn(tn_chol_probe(k, i), d) : 0.0;
        }
        __syncthreads();
        const int kr = lane >> 2, ic = lane & 3; /* a's row (probe) and column (row of R^-1) */
        for (int j0 = 8 * warp; j0 < n; j0 += 8 * (CV_THREADS / 32)) {
            const int jb = j0 + kr; /* b's column */
            const int steps = (min(j0 + 8, n) + 3) >> 2; /* R^-1's rows up to the tile's last column */
            const double *col = inv + (long long)min(jb, n - 1) * n;
            double acc[2] = {0.0, 0.0};
            for (int t0 = 0; t0 < steps; t0 += CV_STEPS) {
                double b[CV_STEPS], a[CV_STEPS];
#pragma unroll
                for (int q = 0; q < CV_STEPS; q++) {
                    const int i = 4 * (t0 + q) + ic;
                    b[q] = t0 + q < steps && i < n && jb < n ? __ldcg(col + i) : 0.0;
                    a[q] = t0 + q < steps ? zd[kr * CV_ZLD + i] : 0.0;
                }
#pragma unroll
                for (int q = 0; q < CV_STEPS; q++) cv_dmma(acc, a[q], b[q]);
            }
            s = __fma_rn(acc[0], acc[0], s); /* (columns past n: zeros) */
            s = __fma_rn(acc[1], acc[1], s);
        }
    }
    part[tid] = s;
    bad = __syncthreads_or(bad & 1) | (__syncthreads_or(bad & 2) ? 2 : 0);
    for (int w = CV_THREADS / 2; w > 0; w /= 2) {
        if (tid < w) part[tid] = __dadd_rn(part[tid], part[tid + w]);
        __syncthreads();
    }
    if (tid == 0) {
        /* (only where the factor was usable, in this pass and before) */
        if ((probe || inv) && !bad && !(!assign && *flag) && !tn_chol64_loss_within(part[0]))
            bad |= 4;
        if (assign) *flag = bad;
        else if (bad) atomicOr(flag, bad);
    }
}

extern "C" int tn_cu_chol_verdict(const double *gdiag, const int *info, int n, double u,
                                  const double *probe, int64_t ldp, const double *inv, int *flag,
                                  int assign, cudaStream_t stream) {
    if (inv && (probe || n > CV_INV_MAX)) return (int)cudaErrorInvalidValue;
    chol_verdict_kernel<<<1, CV_THREADS, 0, stream>>>(gdiag, info, n, u, probe, (long long)ldp,
                                                      inv, flag, assign);
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
/* The pivots ptop .. 0 of chunk qq (p = 32 qq + pp) of column j's back
 * substitution, shared by trinv_kernel and trinv_full_kernel: lane l holds
 * rows l + 32 q in s[q]; the owner lane pp holds x_p in s[qq]; rows in
 * s[q], q < qq, are all above p; in s[qq], the lanes below pp. Rc: the
 * chunk's column of pivot 32 qq, row lane (column pp at Rc + pp ldc);
 * rinvq: 1 / R_pp of the chunk's pivots. qq is a constant once inlined
 * into the callers' unrolled loops, so s stays in registers. */
template <int NQ>
static __device__ __forceinline__ void trinv_pivots(double (&s)[NQ], int qq, int ptop,
                                                    const double *Rc, int ldc,
                                                    const double *rinvq, int lane) {
    for (int pp = ptop; pp >= 0; pp--) {
        const double xp = __dmul_rn(__shfl_sync(0xffffffffu, s[qq], pp), rinvq[pp]);
        const double *Rp = Rc + pp * ldc;
#pragma unroll
        for (int q = 0; q < qq; q++) s[q] = __fma_rn(-Rp[32 * q], xp, s[q]);
        if (lane == pp) s[qq] = xp;
        else if (lane < pp) s[qq] = __fma_rn(-Rp[32 * qq], xp, s[qq]);
    }
}

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
    const int jq = j >> 5;
#pragma unroll
    for (int qq = TI_NB / 32 - 1; qq >= 0; qq--) {
        if (j >= jb || qq > jq) continue;
        trinv_pivots(s, qq, qq == jq ? (j & 31) : 31, Rs + 32 * qq * TI_NB + lane, TI_NB,
                     rinv + 32 * qq, lane);
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

/* ------------------------------------------------------ the whole inverse */
/* R^-1 of the n x n upper triangular R (ld ldr), n <= TN_TRINV_FULL_MAX,
 * into Inv (ld n, zeros below the diagonal), for the solve Q = Y R^-1 as
 * one DTRMM. Column j by the back substitution of trinv_kernel (one warp
 * per column, lane l holding rows l + 32 q, x_p round by a shuffle); R
 * goes through shared memory 32 columns (pivots) at a time, from the
 * block's last pivot down, the next chunk's copy in flight while a chunk
 * is used, every warp taking the pivots of a chunk at or left of its
 * column. Four warps (columns) a block: with sixteen (and no copy in
 * flight during a chunk's use) it took 46 us at n = 266 on an H100. */
#define TF_WARPS 4
#define TF_NQ (TN_TRINV_FULL_MAX / 32)
static size_t trinv_full_smem(int n) { return sizeof(double) * (64 * (size_t)n + n); }
/* chunk c of R (rows 0 .. min(32 c + 32, n) - 1 of its columns, zeros below
 * each column's diagonal) into Rc (Rc[i + (p - 32 c) n] = R(i, p)), by
 * cp.async: 16 bytes where R's columns are 16-byte aligned (pairs of
 * rows), else 8 */
static __device__ __forceinline__ void trinv_chunk(int n, const double *R, long long ldr, int c,
                                                   double *Rc, int pairs) {
    const int pc = min(32, n - 32 * c), rows = min(32 * c + 32, n);
    const uint32_t rc_s = (uint32_t)__cvta_generic_to_shared(Rc);
    if (pairs) { /* n even, so every Rc column starts 16-byte aligned too */
        const int hr = rows / 2; /* rows is even: 32 c + 32 or n */
        for (int e = threadIdx.x; e < hr * pc; e += TF_WARPS * 32) {
            const int pl = e / hr, i = 2 * (e - pl * hr), p = 32 * c + pl;
            const int ic = min(i, p & ~1);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(
                             rc_s + 8u * (uint32_t)(i + pl * n)),
                         "l"(R + ic + (long long)p * ldr), "r"(i + 1 <= p ? 16 : i <= p ? 8 : 0)
                         : "memory");
        }
    } else {
        for (int e = threadIdx.x; e < rows * pc; e += TF_WARPS * 32) {
            const int pl = e / rows, i = e - pl * rows, p = 32 * c + pl;
            asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(
                             rc_s + 8u * (uint32_t)(i + pl * n)),
                         "l"(R + min(i, p) + (long long)p * ldr), "r"(i <= p ? 8 : 0)
                         : "memory");
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
static __global__ void __launch_bounds__(TF_WARPS * 32)
    trinv_full_kernel(int n, const double *__restrict__ R, long long ldr, double *__restrict__ Inv) {
    extern __shared__ double tf_sm[];
    double *rinv = tf_sm, *buf = tf_sm + n; /* two chunks of 32 n */
    const int tid = threadIdx.x, lane = tid & 31, j0 = blockIdx.x * TF_WARPS;
    const int j = j0 + (tid >> 5), jq = j >> 5;
    const int jl = min(j0 + TF_WARPS, n) - 1, cl = jl >> 5; /* the block's last column, chunk */
    const int pairs = n % 2 == 0 && ldr % 2 == 0 && ((uintptr_t)R & 15) == 0;
    trinv_chunk(n, R, ldr, cl, buf + (cl & 1) * 32 * n, pairs);
    for (int p = tid; p <= jl; p += TF_WARPS * 32) rinv[p] = __drcp_rn(R[p + (long long)p * ldr]);
    double s[TF_NQ];
#pragma unroll
    for (int q = 0; q < TF_NQ; q++) s[q] = lane + 32 * q == j ? 1.0 : 0.0;
#pragma unroll
    for (int qq = TF_NQ - 1; qq >= 0; qq--) {
        if (qq > cl) continue; /* (the same in every warp of the block) */
        if (qq > 0) { /* the next chunk's copy, then wait for this one's */
            trinv_chunk(n, R, ldr, qq - 1, buf + ((qq - 1) & 1) * 32 * n, pairs);
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        __syncthreads(); /* the chunk and rinv in place */
        if (j < n && qq <= jq)
            trinv_pivots(s, qq, qq == jq ? (j & 31) : 31, buf + (qq & 1) * 32 * n + lane, n,
                         rinv + 32 * qq, lane);
        __syncthreads(); /* read before the copy into this buffer two chunks on */
    }
    if (j >= n) return;
    double *out = Inv + (long long)j * n;
#pragma unroll
    for (int q = 0; q < TF_NQ; q++) {
        const int i = lane + 32 * q;
        if (i < n) out[i] = i <= j ? s[q] : 0.0;
    }
}

extern "C" int tn_cu_trinv_full(int n, const double *R, int64_t ldr, double *Inv,
                                cudaStream_t stream) {
    if (n <= 0) return 0;
    if (n > TN_TRINV_FULL_MAX) return (int)cudaErrorInvalidValue;
    cudaError_t e = cudaFuncSetAttribute((const void *)trinv_full_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)trinv_full_smem(n));
    if (e != cudaSuccess) return (int)e;
    trinv_full_kernel<<<(unsigned)((n + TF_WARPS - 1) / TF_WARPS), TF_WARPS * 32,
                        trinv_full_smem(n), stream>>>(n, R, (long long)ldr, Inv);
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
