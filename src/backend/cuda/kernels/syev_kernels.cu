/* A symmetric eigensolver for the small (l x l, l up to 448) FP64
 * problems of the randomized SVD on Hopper, where cuSOLVER's syevd is a
 * chain of a few hundred small launches (2.2 ms at l = 266 on an H200, of
 * which the tridiagonalization sytrd is 1.33 ms). Here (tn_cu_syev_fast,
 * driven by eig_solve in small_svd_cuda.c):
 *
 *  1. Householder tridiagonalization G = Q T Q^T (LAPACK's dsytd2, lower:
 *     H_i from column i, A <- H_i A H_i as the rank-2 update A - v w^T -
 *     w v^T) in one launch of one cluster of 16 blocks (8 where 16 is
 *     refused and the rows fit) of 256 threads: A in their shared memory,
 *     rows dealt round-robin, full rows of A kept up to date. Each warp
 *     keeps its rows for the whole loop and holds the step's vectors in
 *     registers; the blocks exchange p = tau A v and the next column's
 *     entries by stores that count their bytes on the receiver's mbarrier
 *     (no cluster barrier, no block barrier in the loop), and each warp
 *     sums p^T v itself. The reflectors (v, tau) go to global memory.
 *  2. T's eigenvalues by bisection, one block per eigenvalue, 128 points
 *     per round (one per thread), to 2 eps ||T|| absolute; the Sturm counts from the signs of
 *     the leading minors of T - x I (no division), rescaled every 4 steps.
 *     In the same launch, other blocks form Q = H_0 ... H_{n-2} from the
 *     reflectors, a warp per row (the rows are independent). Inside the
 *     tridiagonalization's loop, where every step waited for them, they
 *     cost more (below).
 *  3. T's eigenvectors Z from twisted factorizations of T - lam I
 *     (Dhillon & Parlett), the stationary and the progressive one side by
 *     side on two warps (a lane per eigenvalue): the twist index with the
 *     smallest |gamma_r|, z_r = 1, then z by products only. Those of
 *     eigenvalues closer than about 1e-10 ||T|| are not orthogonal to each
 *     other: for groups of close values away from zero, a child
 *     representation L D L^T = T - sig I (one level of MRRR's
 *     representation tree, src/linalg/mrrr_child.h) gives vectors that
 *     are (mr_child_kernel, below).
 *  4. (small_svd_cuda.c) X = Q Z by DGEMM, then the checks, all on the
 *     device: F = X^T X - I at most 1e-6 elementwise, one Newton-Schulz
 *     step X <- X (I - F / 2) (it mixes vectors only among close
 *     eigenvalues, so their residuals stay at eps ||T||),
 *     then G X - X diag(lam) at most 32 n eps max|lam| elementwise and lam
 *     ascending. Any failure sets the flag; nothing is decided on the host
 *     before the caller's one read of the eigenvalues and the flag (or,
 *     tn_cu_syev_fast_early, of the eigenvalues as soon as the bisection
 *     has written them, the flag read later: the deflated path's levels).
 *     On a failure the caller repairs clusters of vectors (eig_repair, with
 *     the kernels under "cluster repair" below) and checks again, or runs
 *     syevd.
 *
 * Clusters near zero (a rank-deficient Gram matrix, a spectrum decaying
 * through FP64's resolution: the Gram matrix of columns spanning 1e-7,
 * test gpu_syev_fast_matches_syevd) get no child: the orthogonality check
 * refuses their vectors and the caller's repair takes them, as it takes
 * groups away from zero whose child fails; syevd the others.
 *
 * H200, l = 266, with Q formed inside the loop: tridiagonalization 0.65 ms
 * (Nsight Compute in bench_rsvd; 1.09 ms with two cluster barriers per
 * step and a warp per row and phase), bisection 77 us, vectors 62 us;
 * l = 440: 1.76 ms (2.40 ms with the barriers). H100, the whole of
 * tn_cu_syev_fast, Q formed beside the bisection against inside the loop
 * (same bits): 681 against 798 us at l = 266, 1587 against 2021 at
 * l = 440 (the tridiagonalization 527 us at l = 266; with each warp
 * summing p^T v itself, below, the whole 610 us at 266 and 260 at 137,
 * bench_fixed_costs). What a step costs is instructions
 * and latency in the warps: cluster.sync compiles to a GPU-scope fence,
 * an L1 invalidation and the barrier (the mbarrier exchange instead is
 * 10% faster), and bounds per slot on the columns cost more than the FP64
 * work on columns left of the diagonal they save (851 against 679 us at
 * l = 266, in a probe); whole slots left of the step's column dropped per
 * piece of 32 steps, with the piece's first slot a constant of the code
 * (tridiag_step), save it without bounds (H200, the whole
 * tn_cu_syev_fast 531 against 598-604 us at l = 266; with the rows
 * done before each piece dropped too, 514-520 against 535-538). */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "backend/cuda/tn_cuda.h"
#include "linalg/mrrr_child.h"

#include <cooperative_groups.h>
#include <float.h>

namespace cg = cooperative_groups;

#define SY_THREADS 256 /* per block of the tridiagonalization */
#define SY_MR_MAX 4    /* rows of A per warp, at most */
#define SY_RP_MAX 3    /* rows a warp takes at a time, at most */
#define BI_THREADS 128 /* bisection points per round, one per thread */

/* ----------------------------------------------------- tridiagonalization */
/* Shared memory of each block of C (the same layout in all, since remote
 * addresses are local offsets), ld = 32 NS: step i's {p_r, A(r, i + 1)}
 * (two parities, ld double2 each), two mbarriers, A (rmax x ld,
 * rmax = ceil(n / C): the block's rows rank, rank + C, ...), column
 * 0 (ld), d and e of the own rows (rmax each). */
static int tridiag_ns(int n);
static size_t tridiag_smem(int n, int C) {
    const size_t rmax = (size_t)(n + C - 1) / C, ld = 32 * (size_t)tridiag_ns(n);
    return sizeof(double) * (rmax * ld + 5 * ld + 2 * rmax + 2);
}

#if S9_ON /* (used by the cluster kernel only) */
static __device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The exchange between the blocks: stores into another block's shared
 * memory (st.async) that count their bytes on that block's mbarrier, the
 * receiver waiting on its own mbarrier for the bytes it expects
 * (sm90_common.cuh's mbar_expect_tx, mbar_wait, s9_mapa); no cluster
 * barrier (which compiles to a GPU-scope fence and an L1 invalidation
 * besides the barrier). Addresses in the shared window. */
static __device__ __forceinline__ void st_async2(unsigned raddr, double a, double b,
                                                 unsigned rbar) {
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 [%0], {%1, %2}, [%3];" ::"r"(
            raddr),
        "l"(__double_as_longlong(a)), "l"(__double_as_longlong(b)), "r"(rbar)
        : "memory");
}
#endif

/* Rows of A (and of Q in q_rows), column c of a row at lane c % 32, slot c / 32 (NS
 * slots, row stride 32 NS, NS fixed per kernel: 5, 7, 9, 12 or 14): a row's
 * shared-memory loads and stores are at fixed offsets and go out
 * together. Every step runs over whole rows: columns at or left of the
 * diagonal take part where v and w are zero (which leaves them as they
 * are), cheaper than a bound per slot (which cost 25% at n = 266).
 * Vectors every warp holds whole (v, w, the next column) are kept the
 * same way in registers. */
#define SY_NS_MAX 14 /* n up to 448 */

#if S9_ON /* (used by the cluster kernel only) */
/* Element c of a vector kept in slots K0 .. NS - 1 (every lane gets it;
 * c / 32 >= K0); the selects in asm, which the compiler would otherwise
 * turn into an indexed load from local memory. */
static __device__ __forceinline__ double slot_pick(const int NS, const int K0, const double *a,
                                                  int c) {
    const int kk = c >> 5;
    double t = 0.0;
#pragma unroll
    for (int k = K0; k < NS; k++)
        asm("{\n.reg .pred p;\nsetp.eq.s32 p, %2, %3;\nselp.f64 %0, %1, %0, p;\n}"
            : "+d"(t)
            : "d"(a[k]), "r"(kk), "r"(k));
    return __shfl_sync(0xffffffffu, t, c & 31);
}

/* The reflector I - tau v v^T that maps x (in slots, rows c >= ca; its
 * other entries ignored) to beta e_ca, as LAPACK's dlarfg: v in slots
 * (v_ca = 1, zero left of ca, x_c * *scale below), *tau (0 where x below
 * ca is zero). Slots below K0 (all their rows left of ca) are neither
 * read nor written. */
static __device__ __forceinline__ double reflector(const int NS, const int K0, int ca,
                                                  const double *x, double *v, double *tau,
                                                  double *scale) {
    const int lane = threadIdx.x & 31;
    double ss0 = 0.0, ss1 = 0.0;
#pragma unroll
    for (int k = K0; k < NS; k++) {
        const double y = lane + 32 * k > ca ? x[k] : 0.0;
        if (k & 1) ss1 = fma(y, y, ss1);
        else ss0 = fma(y, y, ss0);
    }
    const double ss = warp_sum(ss0 + ss1), alpha = slot_pick(NS, K0, x, ca);
    double t = 0.0, beta = alpha, scal = 0.0;
    if (ss != 0.0) {
        beta = -copysign(sqrt(fma(alpha, alpha, ss)), alpha);
        t = (beta - alpha) * tn_mr_rcp(beta);
        scal = tn_mr_rcp(alpha - beta);
    }
#pragma unroll
    for (int k = K0; k < NS; k++) {
        const int c = lane + 32 * k;
        v[k] = c == ca ? 1.0 : c > ca ? x[k] * scal : 0.0;
    }
    *tau = t;
    *scale = scal;
    return beta;
}

/* Iteration i of tridiag_steps with K0 = (i + 1) / 32: v and w of step i
 * are zero at rows <= i, v of step j at rows <= j, and the columns <= i of
 * the rows still changing are final, so slots below K0 take no part (their
 * terms would add exact zeros, in front of the sums: the same bits). */
static __device__ __forceinline__ void tridiag_step(
    const int NS, const int MR, const int RP, const int K0, int i, int n, int C, int rank,
    int rows, double *A, double *Vg, double *taug, double2 *pcb, const double *x0, double *dd,
    double *ee, unsigned long long *bar, unsigned rpc, unsigned rbar, double (&v)[SY_NS_MAX],
    double (&vr)[SY_MR_MAX], double &t) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = SY_THREADS / 32;
    const int ld = 32 * NS;
    const int j = i + 1, par = i & 1, jpar = j & 1, next = j < n - 1; /* step j exists */
    const double2 *pc = pcb + par * ld; /* step i's {p_r, A(r, i + 1)}, rows r > i */
    double vn[SY_NS_MAX], w[SY_NS_MAX];
    double K = 0.0, w1 = 0.0, tn = 0.0, sn = 0.0;
    if (i >= 0) { /* w = p + K v, K = -(tau / 2) p^T v */
        mbar_wait(s9_smem_u32(bar + par), (unsigned)(i >> 1) & 1u);
        /* p^T v (v zero at rows <= i, whose entries of pc are earlier steps') */
        double sd = 0.0;
#pragma unroll
        for (int k = K0; k < NS; k++) sd = fma(v[k], pc[lane + 32 * k].x, sd);
        K = -0.5 * t * warp_sum(sd);
        w1 = K + pc[i + 1].x;
#pragma unroll
        for (int k = K0; k < NS; k++)
            w[k] = lane + 32 * k > i ? fma(K, v[k], pc[lane + 32 * k].x) : 0.0;
    }
    if (next) { /* column j below the diagonal (rows >= j + 1), then H_j */
        if (tid == 0) mbar_expect_tx(s9_smem_u32(bar + jpar), 16u * (n - 1 - j));
        double x[SY_NS_MAX];
#pragma unroll
        for (int k = K0; k < NS; k++) {
            const int c = lane + 32 * k;
            x[k] = i < 0 ? x0[c] : pc[c].y - fma(v[k], w1, w[k]);
        }
        const double beta = reflector(NS, K0, j + 1, x, vn, &tn, &sn);
        if (j % C == rank && tid == 0) ee[j / C] = beta;
        if (rank == 0 && warp == 0) { /* H_j for q_rows: v (ld n, zero above j + 1) and tau */
#pragma unroll
            for (int k = 0; k < NS; k++)
                if (lane + 32 * k < n) Vg[(size_t)j * n + lane + 32 * k] = k < K0 ? 0.0 : vn[k];
            if (lane == 0) taug[j] = tn;
        }
    }
    /* the own rows of A, RP at a time; a row of slot hu < HU0 = K0 / 4 has
     * r < 8 C (hu + 1) <= 32 K0 (C <= 16 blocks of 8 warps): r <= i, done,
     * so those take no part */
    const int HU0 = K0 / 4;
#pragma unroll
    for (int h = 0; h < MR; h += RP) {
        double a[SY_RP_MAX][SY_NS_MAX], f2[SY_RP_MAX], acc[SY_RP_MAX];
        double *ar[SY_RP_MAX];
        int s[SY_RP_MAX], r[SY_RP_MAX], upd[SY_RP_MAX], dot[SY_RP_MAX];
#pragma unroll
        for (int u = 0; u < RP; u++) {
            const int hu = h + u;
            s[u] = warp + hu * nw;
            r[u] = rank + s[u] * C;
            upd[u] = hu >= HU0 && s[u] < rows && i >= 0 && r[u] > i;
            dot[u] = hu >= HU0 && s[u] < rows && next && r[u] > j;
            ar[u] = A + (size_t)min(s[u], rows - 1) * ld;
            f2[u] = upd[u] ? fma(K, vr[hu], pc[r[u]].x) : 0.0;
            if (upd[u] || dot[u])
#pragma unroll
                for (int k = K0; k < NS; k++) a[u][k] = ar[u][lane + 32 * k];
        }
#pragma unroll
        for (int u = 0; u < RP; u++)
            if (upd[u]) { /* a_c - (v_r w_c + w_r v_c) */
                const double f1 = vr[h + u];
#pragma unroll
                for (int k = K0; k < NS; k++) {
                    a[u][k] = a[u][k] - fma(f1, w[k], f2[u] * v[k]);
                    ar[u][lane + 32 * k] = a[u][k];
                }
            }
        __syncwarp(); /* the stores above before the reads of single entries below */
#pragma unroll
        for (int u = 0; u < RP; u++) {
            double c0 = 0.0, c1 = 0.0;
            if (dot[u])
#pragma unroll
                for (int k = K0; k < NS; k++) {
                    if (k & 1) c1 = fma(a[u][k], vn[k], c1);
                    else c0 = fma(a[u][k], vn[k], c0);
                }
            acc[u] = c0 + c1;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int u = 0; u < RP; u++)
                if (h + u >= HU0) acc[u] += __shfl_xor_sync(0xffffffffu, acc[u], o);
#pragma unroll
        for (int u = 0; u < RP; u++) {
            const int hu = h + u;
            if (upd[u] && r[u] == i + 1 && lane == 0) dd[s[u]] = ar[u][i + 1]; /* final */
            if (!dot[u]) continue;
            /* p_r and A(r, j + 1) to every block; v_r of step j */
            const double pv = tn * acc[u];
            if (lane < C)
                st_async2(rpc + 16u * (unsigned)(jpar * ld + r[u]), pv, ar[u][j + 1],
                          rbar + 8u * jpar);
            const double xr =
                i < 0 ? x0[r[u]] : pc[r[u]].y - fma(vr[hu], w1, fma(K, vr[hu], pc[r[u]].x));
            vr[hu] = r[u] == j + 1 ? 1.0 : xr * sn;
        }
    }
    if (next) {
#pragma unroll
        for (int k = K0; k < NS; k++) v[k] = vn[k];
        t = tn;
    }
}

/* The steps of tridiag_kernel, inlined with constant NS, MR (rows of A
 * per warp at most) and RP (rows a warp takes at a time, RP divides MR).
 * Warp w keeps the block's rows s = w, w + nw, ... of A for the whole
 * loop, so that nothing but the exchange between blocks orders the warps:
 * no block barrier in the loop. Iteration i ends step i (the wait for
 * every block's p; p^T v, which every warp sums itself from the whole p
 * and its v in the same order, so that all get the same bits; w; the
 * update of the own rows) and, on the same rows still in registers,
 * begins step j = i + 1: column j below the diagonal from what was
 * exchanged, H_j (its v and tau stored for q_rows by the first warp of
 * block 0), p_r = tau A(r, :) v and A(r, j + 1) sent to every block. Each
 * warp forms the vectors itself (no barrier to share them); for its own
 * rows r it keeps v_r (vr) as a scalar, formed as the slots form it. The
 * sum p^T v from the exchanged p, instead of a part per warp sent to
 * every block and summed on arrival, spares each block 128 stores a step
 * and the wait for them: H100, the whole tn_cu_syev_fast 272 against 301
 * us at n = 137, 646 against 688 at 266 (bench_fixed_costs). The loop
 * runs in NS pieces of 32 iterations, piece K0 on slots K0 .. NS - 1
 * only (tridiag_step), so that the work per step shrinks with the
 * trailing matrix: H200, the whole tn_cu_syev_fast 531 against 598-604 us
 * at n = 266, 220 against 242 at 137, 1208-1215 against 1484-1490 at 440,
 * the same bits (bench_fixed_costs' hash of the values). */
static __device__ __forceinline__ void tridiag_steps(const int NS, const int MR, const int RP,
                                                     int n, int C, int rank, int rows, double *A,
                                                     double *Vg, double *taug, double2 *pcb,
                                                     const double *x0, double *dd, double *ee,
                                                     unsigned long long *bar) {
    const int lane = threadIdx.x & 31;
    /* lane c < C sends to block c: pcb and bar there (offsets carry over) */
    const unsigned rpc = s9_mapa(s9_smem_u32(pcb), lane % C),
                   rbar = s9_mapa(s9_smem_u32(bar), lane % C);
    /* v of step i in slots */
    double v[SY_NS_MAX], vr[SY_MR_MAX], t = 0.0;
#pragma unroll
    for (int h = 0; h < MR; h++) vr[h] = 0.0;
    int i = -1;
#pragma unroll
    for (int K0 = 0; K0 < NS; K0++) /* iterations i with (i + 1) / 32 = K0 */
        for (const int iend = min(n - 1, 32 * K0 + 31); i < iend; i++)
            tridiag_step(NS, MR, RP, K0, i, n, C, rank, rows, A, Vg, taug, pcb, x0, dd, ee, bar,
                         rpc, rbar, v, vr, t);
}

/* T = Q^T G Q: d (n), e (n - 1) and Q's reflectors H_j = I - tau_j v_j
 * v_j^T (V: v_j in column j, ld n; tau), as LAPACK's dsytd2 (lower), in one
 * cluster of C blocks, rows dealt round-robin (row r in block r % C);
 * tridiag_steps has the loop. Between blocks per step: a 16-byte store
 * per row and block (p_r and the row's entry in the next column, from
 * the row's owner), stores that count their bytes on the receiver's
 * mbarrier (two, one per parity of the
 * step: a block writes step i + 1's only after its wait for step i,
 * which every block passes only after its reads of step i - 1's). */
static __device__ __forceinline__ void tridiag_body(const int NS, const int MR, const int RP,
                                                    int n, const double *__restrict__ G,
                                                    long long ldg, int upper, double *d,
                                                    double *e, double *V, double *tau) {
    cg::cluster_group cl = cg::this_cluster();
    const int C = (int)cl.num_blocks(), rank = (int)cl.block_rank();
    const int rows = (n - rank + C - 1) / C, rmax = (n + C - 1) / C, ld = 32 * NS;
    extern __shared__ double2 sm2[];
    double2 *pcb = sm2;
    unsigned long long *bar = (unsigned long long *)(pcb + 2 * ld);
    double *A = (double *)(bar + 2), *x0 = A + (size_t)rmax * ld, *dd = x0 + ld, *ee = dd + rmax;
    const int tid = threadIdx.x;

    for (int idx = tid; idx < rows * ld; idx += SY_THREADS) {
        const int s = idx / ld, j = idx - s * ld, r = rank + s * C;
        const int lo = min(r, j), hi = max(r, j);
        A[idx] = j >= n ? 0.0 : upper ? G[lo + (long long)hi * ldg] : G[hi + (long long)lo * ldg];
    }
    for (int idx = tid; idx < 4 * ld; idx += SY_THREADS) ((double *)pcb)[idx] = 0.0;
    for (int idx = tid; idx < ld; idx += SY_THREADS) x0[idx] = 0.0;
    if (tid < 2) mbar_init(s9_smem_u32(bar + tid), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    cl.sync(); /* every block's shared memory is in place before anyone touches it */
    /* column 0 below the diagonal gathered in every block */
    for (int idx = tid; idx < rows * C; idx += SY_THREADS) {
        const int s = idx / C, c = idx - s * C, r = rank + s * C;
        if (r >= 1) cl.map_shared_rank(x0, c)[r] = A[(size_t)s * ld];
    }
    if (rank == 0 && tid == 0) dd[0] = A[0];
    cl.sync();
    tridiag_steps(NS, MR, RP, n, C, rank, rows, A, V, tau, pcb, x0, dd, ee, bar);
    /* every warp's last stores into dd and ee (the last row's diagonal
     * entry comes in the loop's last iteration) before they are read */
    __syncthreads();
    for (int s = tid; s < rows; s += SY_THREADS) { /* d and e of the own rows */
        const int r = rank + s * C;
        d[r] = dd[s];
        if (r < n - 1) e[r] = ee[s];
    }
    cl.sync(); /* no block leaves while stores into it may be under way */
}
#endif

/* One kernel per slot count (the loops unrolled over fixed slots), rows
 * per warp for C = 16 and 8 warps: n <= 160, 224, 288, 384 and 448. The
 * slots past n hold zeros, whose terms leave every sum as it is: a kernel
 * of more slots gives the same bits (a probe compared Q, d, e, the vectors
 * and the values byte for byte for n = 1 .. 448). Fewer slots shorten each
 * step's chain: H100, bench_small_svd's eigensolution path (the whole
 * small SVD call), two runs each on one machine, n = 128: 0.36-0.37 ms
 * against 0.39-0.43 with 9 slots; 138: 0.37-0.43 against 0.43-0.45; 200
 * (7 slots): 0.60-0.63 against 0.65-0.68. */
#define SY_KERNEL(NAME, NS, MR, RP)                                                            \
    static __global__ void __launch_bounds__(SY_THREADS)                                       \
        NAME(int n, const double *__restrict__ G, long long ldg, int upper, double *d,         \
             double *e, double *V, double *tau) {                                              \
        TRIDIAG_BODY(NS, MR, RP)                                                               \
    }
#if S9_ON
#define TRIDIAG_BODY(NS, MR, RP) tridiag_body(NS, MR, RP, n, G, ldg, upper, d, e, V, tau);
#else
#define TRIDIAG_BODY(NS, MR, RP)
#endif
SY_KERNEL(tridiag5_kernel, 5, 3, 3)
SY_KERNEL(tridiag7_kernel, 7, 3, 3)
SY_KERNEL(tridiag5r2_kernel, 5, 2, 2)
SY_KERNEL(tridiag9_kernel, 9, 3, 3)
SY_KERNEL(tridiag12_kernel, 12, 3, 3)
SY_KERNEL(tridiag14_kernel, 14, 4, 2)
#undef SY_KERNEL
#undef TRIDIAG_BODY

/* The slots of the kernel for n, and its rows per warp (MR above). */
static int tridiag_ns(int n) {
    return n <= 32 * 5 ? 5 : n <= 32 * 7 ? 7 : n <= 32 * 9 ? 9 : n <= 32 * 12 ? 12 : 14;
}
static int tridiag_mr(int ns) { return ns == 14 ? 4 : 3; }
/* Where a block's rows fit two per warp, the kernel of 5 slots (n <= 160,
 * C = 16) takes them two at a time: each step's row loop then carries two
 * rows' loads, updates and reductions instead of three, the third empty in
 * most warps (the same operations per element, the same bits). H100,
 * bench_fixed_costs' tn_cu_syev_fast: 248 against 263 us at n = 137, 292
 * against 308 at 160; 7 slots two rows at a time measured slower (428-430
 * against 421-424 us at 200). */
static int tridiag_two_rows(int n, int ns, int C) {
    return ns == 5 && (n + C - 1) / C <= 2 * (SY_THREADS / 32);
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

/* One round of a block's bisection for the eigenvalue k: thread t's point
 * lo + (t + 1) w / (BI_THREADS + 1), w = hi - lo, has more than k values
 * below it where `above`; [lo, hi] becomes the piece between the last
 * point without and the first with (the ends where none or all have).
 * The same [lo, hi] in every thread; 0 where it did not move. */
static __device__ __forceinline__ int bisect_round(int above, int *firsts, double inv,
                                                   double *lo, double *hi) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const double w = *hi - *lo;
    const unsigned b = __ballot_sync(0xffffffffu, above);
    if (lane == 0) firsts[warp] = b ? warp * 32 + __ffs(b) - 1 : BI_THREADS;
    __syncthreads();
    int first = BI_THREADS;
    for (int q = BI_THREADS / 32 - 1; q >= 0; q--) first = min(first, firsts[q]);
    __syncthreads(); /* firsts is written again next round */
    const double nlo = first > 0 ? fma(w, (double)first * inv, *lo) : *lo;
    const double nhi = first < BI_THREADS ? fma(w, (double)(first + 1) * inv, *lo) : *hi;
    if (nlo == *lo && nhi == *hi) return 0;
    *lo = nlo;
    *hi = nhi;
    return 1;
}

/* lam[k] (ascending), one block of BI_THREADS per k, one point per thread:
 * the interval [lo, hi] with count(lo) <= k < count(hi) cut into
 * BI_THREADS + 1 pieces per round: 77 us at n = 266 on an H200. (A warp
 * per k with 4 points per lane takes 0.18 ms there: 266 warps, one per
 * scheduler on half the GPU, each issuing four chains.) */
static __device__ __forceinline__ void bisect_block(int n, const double *d_g, const double *e_g,
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
    const int lane = threadIdx.x & 31, k = blockIdx.x;
    double lo, hi, pivmin;
    gersh(d, e, n, &lo, &hi, &pivmin, lane); /* the same in every warp */
    const double atol = 2.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi));
    const double inv = 1.0 / (BI_THREADS + 1);
    const double cx = (double)(threadIdx.x + 1) * inv;
    for (int round = 0; round < 64; round++) { /* lo, hi: the same in every thread */
        const double w = hi - lo;
        if (!(w > fmax(atol, 2.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi))))) break;
        if (!bisect_round(sturm(d, e2, n, fma(w, cx, lo)) > k, firsts, inv, &lo, &hi)) break;
    }
    if (threadIdx.x == 0) lam[k] = 0.5 * (lo + hi);
}

/* Rows of Q = H_0 H_1 ... H_{n-2} from the tridiagonalization's
 * reflectors (V, ld n, and tau), one warp per row r, the row in slots as
 * tridiag_steps keeps rows (column c at lane c % 32, slot c / 32): q =
 * e_r^T, then q <- q - (tau_j q v_j) v_j^T for j = 0 .. n - 2. The
 * reflectors go through shared memory QR_CHUNK at a time, the next
 * chunk's copy in flight while one is used (each step read from global
 * memory waited for the load: 152 us at n = 266 on an H100, twice the
 * bisection beside it). Rows are independent, so this runs beside the
 * bisection instead of inside the tridiagonalization's loop, where every
 * step paid for them. Every warp of the block takes part in the copies
 * and barriers, rows past n or not. */
#define QR_CHUNK 8
static size_t q_rows_smem(int n) { return sizeof(double) * (2 * (size_t)QR_CHUNK * (n + 1)); }
static __device__ __forceinline__ void q_rows_chunk(int n, const double *V, const double *tau,
                                                    int j0, double *Vc, double *tc) {
    const int nj = min(QR_CHUNK, n - 1 - j0);
    const uint32_t vs = (uint32_t)__cvta_generic_to_shared(Vc),
                   ts = (uint32_t)__cvta_generic_to_shared(tc);
    const double *src = V + (size_t)j0 * n; /* the chunk's columns are contiguous */
    for (int e = threadIdx.x; e < nj * n; e += BI_THREADS)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(vs + 8u * (uint32_t)e),
                     "l"(src + e)
                     : "memory");
    if ((int)threadIdx.x < nj)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(ts + 8u * threadIdx.x),
                     "l"(tau + j0 + threadIdx.x)
                     : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int NS>
static __device__ __forceinline__ void q_rows(int n, int b, const double *__restrict__ V,
                                              const double *__restrict__ tau, double *Q) {
    extern __shared__ double qs_sm[];
    double *tcb = qs_sm, *vcb = qs_sm + 2 * QR_CHUNK; /* tau and V, two chunks each */
    const int lane = threadIdx.x & 31, r = b * (BI_THREADS / 32) + (threadIdx.x >> 5);
    const int live = r < n;
    double q[NS];
#pragma unroll
    for (int k = 0; k < NS; k++) q[k] = lane + 32 * k == r ? 1.0 : 0.0;
    const int nch = (n - 1 + QR_CHUNK - 1) / QR_CHUNK;
    if (nch > 0) q_rows_chunk(n, V, tau, 0, vcb, tcb);
    for (int ch = 0; ch < nch; ch++) {
        if (ch + 1 < nch) { /* the next chunk's copy, then wait for this one's */
            q_rows_chunk(n, V, tau, (ch + 1) * QR_CHUNK, vcb + ((ch + 1) & 1) * QR_CHUNK * n,
                         tcb + ((ch + 1) & 1) * QR_CHUNK);
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        __syncthreads();
        const double *Vc = vcb + (ch & 1) * QR_CHUNK * n, *tc = tcb + (ch & 1) * QR_CHUNK;
        const int nj = min(QR_CHUNK, n - 1 - ch * QR_CHUNK);
        for (int jj = 0; jj < nj && live; jj++) {
            double v[NS];
#pragma unroll
            for (int k = 0; k < NS; k++) {
                const int c = lane + 32 * k;
                v[k] = c < n ? Vc[jj * n + c] : 0.0;
            }
            double c0 = 0.0, c1 = 0.0;
#pragma unroll
            for (int k = 0; k < NS; k++) {
                if (k & 1) c1 = fma(q[k], v[k], c1);
                else c0 = fma(q[k], v[k], c0);
            }
            double acc = c0 + c1;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
            const double f = tc[jj] * acc;
#pragma unroll
            for (int k = 0; k < NS; k++) q[k] = fma(-f, v[k], q[k]);
        }
        __syncthreads(); /* read before the copy into this buffer two chunks on */
    }
    if (!live) return;
#pragma unroll
    for (int k = 0; k < NS; k++)
        if (lane + 32 * k < n) Q[r + (size_t)(lane + 32 * k) * n] = q[k];
}

/* Blocks 0 .. n - 1: the eigenvalues (bisect_block); the others: Q's
 * rows (q_rows), four per block. */
template <int NS>
static __global__ void __launch_bounds__(BI_THREADS)
    bisect_q_kernel(int n, const double *d, const double *e, double *lam, const double *V,
                    const double *tau, double *Q) {
    if ((int)blockIdx.x < n) bisect_block(n, d, e, lam);
    else q_rows<NS>(n, (int)blockIdx.x - n, V, tau, Q);
}

/* ------------------------------------------------------------ vectors of T */

/* Column k of Z (ld n): the eigenvector of T for lam[k] from the twisted
 * factorization of T - lam I, TW_THREADS = 2 warps per block of tw (at
 * most 32) eigenvalues, lane t of both warps on the block's eigenvalue t:
 *  1. warp 0 the stationary factorization T - lam I = L+ D+ L+^T (D+),
 *     warp 1 the progressive one U- D- U-^T (U-, and D- for the twist),
 *     side by side (their chains are independent);
 *  2. warp 0 the twist index r (the smallest |gamma_j|; of equal ones the
 *     largest j, as a descending scan with a strict comparison keeps), z_r = 1;
 *  3. warp 0 z above r (z_j = -l_j z_{j+1}, l_j = e_j / D+_j), warp 1 z
 *     below (z_{j+1} = -u_j z_j), side by side, in D+'s place;
 *  4. warp 0 the sum of squares in the order of one sequential pass (the
 *     part above r, then the part below), both warps the scaled column.
 * Each recurrence is the same sequence of operations as one thread doing
 * all four in turn, so the vectors have the same bits; the chains of 1
 * and 3 run at the same time, and d and e are read TW_AHEAD entries ahead
 * of 1's stores. H200, n = 266: 48 us against 63 for one thread doing all
 * four (137: 29 against 36; 440: 67 against 104). Shared memory: d, e, then
 * D+ (then z), U- and D- ([j][lane], tw lanes). */
#define TW_THREADS 64
#define TW_AHEAD 8 /* entries of d and e loaded at a time */
static size_t twisted_smem(int n, int tw) { return sizeof(double) * (2 + 3 * (size_t)tw) * n; }

static __global__ void __launch_bounds__(TW_THREADS)
    twisted_kernel(int n, int tw, const double *d_g, const double *e_g, const double *lam,
                   double *Z) {
    extern __shared__ double ts[];
    __shared__ int r_s[32];
    __shared__ double ss_s[32], em_s[TW_THREADS / 32];
    const int t = threadIdx.x & 31, half = threadIdx.x >> 5;
    double *d = ts, *e = d + n, *Dk = e + n + t, *Uk = Dk + (size_t)tw * n;
    double *Dm = Uk + (size_t)tw * n;
    double emax = 0.0;
    for (int j = threadIdx.x; j < n; j += TW_THREADS) {
        d[j] = d_g[j];
        const double ej = j < n - 1 ? e_g[j] : 0.0;
        e[j] = ej;
        emax = fmax(emax, ej * ej);
    }
    for (int o = 16; o > 0; o >>= 1) emax = fmax(emax, __shfl_xor_sync(0xffffffffu, emax, o));
    if (t == 0) em_s[half] = emax;
    __syncthreads();
    emax = fmax(em_s[0], em_s[1]);
    const int k = blockIdx.x * tw + t, live = t < tw && k < n;
    const double pivmin = DBL_MIN * fmax(1.0, emax), lk = live ? lam[k] : 0.0;
    double dp = 0.0; /* D+_{n-1} */
    if (live && half == 0) { /* T - lam I = L+ D+ L+^T */
        dp = d[0] - lk;
        for (int j0 = 0; j0 < n - 1; j0 += TW_AHEAD) { /* (d, e read ahead of the stores) */
            double dn[TW_AHEAD], en[TW_AHEAD];
#pragma unroll
            for (int u = 0; u < TW_AHEAD; u++) {
                const int j = min(j0 + u, n - 2);
                dn[u] = d[j + 1];
                en[u] = e[j];
            }
#pragma unroll
            for (int u = 0; u < TW_AHEAD; u++) {
                const int j = j0 + u;
                if (j >= n - 1) break;
                if (fabs(dp) < pivmin) dp = -pivmin;
                Dk[(size_t)j * tw] = dp;
                dp = (dn[u] - lk) - en[u] * (en[u] * tn_mr_rcp(dp));
            }
        }
        if (fabs(dp) < pivmin) dp = -pivmin;
    } else if (live) { /* T - lam I = U- D- U-^T */
        double dm = d[n - 1] - lk;
        for (int j0 = n - 2; j0 >= 0; j0 -= TW_AHEAD) {
            double dn[TW_AHEAD], en[TW_AHEAD];
#pragma unroll
            for (int u = 0; u < TW_AHEAD; u++) {
                const int j = max(j0 - u, 0);
                dn[u] = d[j];
                en[u] = e[j];
            }
#pragma unroll
            for (int q = 0; q < TW_AHEAD; q++) {
                const int j = j0 - q;
                if (j < 0) break;
                if (fabs(dm) < pivmin) dm = -pivmin;
                const double u = en[q] * tn_mr_rcp(dm), aj = dn[q] - lk;
                Uk[(size_t)j * tw] = u;
                dm = aj - u * en[q];
                Dm[(size_t)j * tw] = dm;
            }
        }
    }
    __syncthreads();
    if (live && half == 0) { /* the twist: gamma_j = D+_j + D-_j - (d_j - lam) */
        double best = fabs(dp); /* gamma_{n-1} = D+_{n-1} */
        int r = n - 1;
#pragma unroll 8
        for (int j = n - 2; j >= 0; j--) {
            const double aj = d[j] - lk, g = fabs(Dk[(size_t)j * tw] + Dm[(size_t)j * tw] - aj);
            if (g < best) {
                best = g;
                r = j;
            }
        }
        r_s[t] = r;
    }
    __syncthreads();
    const int r = live ? r_s[t] : 0;
    if (live && half == 0) { /* z_j = -l_j z_{j+1}, l_j = e_j / D+_j, above r */
        double zj = 1.0, ss = 1.0;
#pragma unroll 8
        for (int j = r - 1; j >= 0; j--) {
            zj = -(e[j] * tn_mr_rcp(Dk[(size_t)j * tw])) * zj;
            Dk[(size_t)j * tw] = zj;
            ss = fma(zj, zj, ss);
        }
        Dk[(size_t)r * tw] = 1.0;
        ss_s[t] = ss;
    } else if (live) { /* z_{j+1} = -u_j z_j, below r */
        double zj = 1.0;
#pragma unroll 8
        for (int j = r; j < n - 1; j++) {
            zj = -Uk[(size_t)j * tw] * zj;
            Dk[(size_t)(j + 1) * tw] = zj;
        }
    }
    __syncthreads();
    if (live && half == 0) { /* the sum of squares goes on below r, in that order */
        double ss = ss_s[t];
#pragma unroll 8
        for (int j = r; j < n - 1; j++) {
            const double zj = Dk[(size_t)(j + 1) * tw];
            ss = fma(zj, zj, ss);
        }
        ss_s[t] = 1.0 / sqrt(ss);
    }
    __syncthreads();
    if (!live) return;
    const double sc = ss_s[t];
    double *z = Z + (size_t)k * n;
    const int h = (n + 1) / 2, j0 = half ? h : 0, j1 = half ? n : h;
#pragma unroll 8
    for (int j = j0; j < j1; j++) z[j] = Dk[(size_t)j * tw] * sc;
}

/* --------------------------------------------- children of close groups */
/* Groups of close eigenvalues away from zero get their vectors from a
 * child representation L D L^T = T - sig I (src/linalg/mrrr_child.h, one
 * level of MRRR's representation tree): T's twisted vectors for values
 * closer than about 1e-10 ||T|| are not orthogonal, the child's are (its
 * values refined to relative accuracy). One launch after twisted_kernel,
 * a block of BI_THREADS per eigenvalue k, lam, d and e in its shared
 * memory:
 *  1. k's run of neighbours closer than TN_MR_GTOL max|lam| (the nearest
 *     wider gaps below and above k, by reductions over the block); where
 *     tn_mr_take refuses it (a single value, near or across zero), a value
 *     is not finite or they descend, the block returns (the launch costs
 *     2-7 us at n = 137 and 266 on an H100 where no block goes on);
 *  2. the run's child (tn_mr_child, thread 0; every member's block makes
 *     the same one), NaN sig: return;
 *  3. the child's eigenvalue k to relative accuracy: the bracket of
 *     tn_mr_bracket around lam[k] - sig (16 eps max|lam|, widened as it
 *     asks; its two counts on two threads), then rounds of BI_THREADS
 *     points as bisect_block's, to tn_mr_narrow's width;
 *  4. column k of Z overwritten with the child's twisted vector, its
 *     pieces side by side (src/linalg/mrrr_child.h): the stationary
 *     transform on warp 0's first thread, the progressive one on warp 1's,
 *     the twist index by a reduction over the block, z above and below it
 *     on the same two threads.
 * Where it returns early, twisted_kernel's vector stays (and the checks
 * judge it, as without children). Shared memory: lam, d, e, D, L, then
 * the vector's L+, s (then z), U- and p: 10 n doubles. */
static size_t mr_smem(int n) { return sizeof(double) * 10 * (size_t)n; }
static __global__ void __launch_bounds__(BI_THREADS)
    mr_child_kernel(int n, const double *d_g, const double *e_g, const double *lam_g,
                    double *Z) {
    extern __shared__ double cs[];
    __shared__ int ired[3][BI_THREADS / 32], firsts[BI_THREADS / 32], cnt[2], r_s;
    __shared__ double dred[BI_THREADS / 32], sig_s, ss_s[2];
    double *lam = cs, *d = lam + n, *e = d + n, *D = e + n, *L = D + n, *lp = L + n,
           *sv = lp + n, *um = sv + n, *pv = um + n, *z = sv;
    const int k = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
    for (int i = t; i < n; i += BI_THREADS) {
        lam[i] = lam_g[i];
        d[i] = d_g[i];
        e[i] = i < n - 1 ? e_g[i] : 0.0;
    }
    __syncthreads();
    const double gtol = TN_MR_GTOL * fmax(fabs(lam[0]), fabs(lam[n - 1]));
    /* the widest gap below k (after index am) and at or above it (after bm) */
    int am = -1, bm = n - 1, bad = 0;
    double emax = 0.0;
    for (int i = t; i < n; i += BI_THREADS) {
        bad |= !isfinite(lam[i]) || (i > 0 && lam[i] < lam[i - 1]);
        emax = fmax(emax, e[i] * e[i]);
        if (i < n - 1 && !(lam[i + 1] - lam[i] < gtol)) { /* a run ends at i */
            if (i < k) am = max(am, i);
            else bm = min(bm, i);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        am = max(am, __shfl_xor_sync(0xffffffffu, am, o));
        bm = min(bm, __shfl_xor_sync(0xffffffffu, bm, o));
        bad |= __shfl_xor_sync(0xffffffffu, bad, o);
        emax = fmax(emax, __shfl_xor_sync(0xffffffffu, emax, o));
    }
    if (lane == 0) ired[0][warp] = am, ired[1][warp] = bm, ired[2][warp] = bad, dred[warp] = emax;
    __syncthreads();
    for (int w = 0; w < BI_THREADS / 32; w++) {
        am = max(am, ired[0][w]);
        bm = min(bm, ired[1][w]);
        bad |= ired[2][w];
        emax = fmax(emax, dred[w]);
    }
    const int a = am + 1, b = bm;
    if (bad || !tn_mr_take(n, lam, a, b)) return; /* (the same in every thread) */
    const double pivmin = DBL_MIN * fmax(1.0, emax); /* tn_mr_pivmin */
    if (t == 0) sig_s = tn_mr_child(n, d, e, lam, a, b, pivmin, D, L);
    __syncthreads();
    const double sig = sig_s, c = lam[k] - sig;
    if (!isfinite(sig)) return;
    double r = 16.0 * DBL_EPSILON * fmax(fabs(lam[0]), fabs(lam[n - 1])), lo = c, hi = c;
    int held = 0;
    /* tn_mr_bracket, its two counts on two threads */
    for (int tr = 0; tr < 24 && !held; tr++, r *= 4.0) {
        lo = c - r, hi = c + r;
        if (t < 2) cnt[t] = tn_mr_negcount(n, D, L, t ? hi : lo);
        __syncthreads();
        held = cnt[0] <= k && cnt[1] > k;
        __syncthreads(); /* cnt is written again next time */
    }
    if (!held) return;
    const double inv = 1.0 / (BI_THREADS + 1), cx = (double)(t + 1) * inv;
    for (int round = 0; round < 64 && !tn_mr_narrow(lo, hi); round++)
        if (!bisect_round(tn_mr_negcount(n, D, L, fma(hi - lo, cx, lo)) > k, firsts, inv, &lo,
                          &hi))
            break;
    const double mu = 0.5 * (lo + hi);
    if (t == 0) tn_mr_stationary(n, D, L, mu, pivmin, lp, sv, 1);
    if (t == 32) tn_mr_progressive(n, D, L, mu, pivmin, um, pv, 1);
    __syncthreads();
    double gb = INFINITY; /* the twist index */
    int rt = 0;
    for (int i = t; i < n; i += BI_THREADS) {
        const double g = fabs(sv[i] + pv[i] + mu);
        if (tn_mr_better(g, i, gb, rt)) gb = g, rt = i;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const double go = __shfl_xor_sync(0xffffffffu, gb, o);
        const int ro = __shfl_xor_sync(0xffffffffu, rt, o);
        if (tn_mr_better(go, ro, gb, rt)) gb = go, rt = ro;
    }
    if (lane == 0) dred[warp] = gb, ired[0][warp] = rt;
    __syncthreads();
    if (t == 0) {
        for (int w = 1; w < BI_THREADS / 32; w++)
            if (tn_mr_better(dred[w], ired[0][w], gb, rt)) gb = dred[w], rt = ired[0][w];
        r_s = rt;
    }
    __syncthreads(); /* (s is read above and z written below in its place) */
    rt = r_s;
    if (t == 0) ss_s[0] = tn_mr_up(rt, lp, 1, z);
    if (t == 32) ss_s[1] = tn_mr_down(n, rt, um, 1, z);
    if (t == 0) z[rt] = 1.0;
    __syncthreads();
    const double sc = 1.0 / sqrt(1.0 + ss_s[0] + ss_s[1]);
    for (int i = t; i < n; i += BI_THREADS) Z[(size_t)k * n + i] = z[i] * sc;
}

/* ------------------------------------------------------- cluster repair */
/* The kernels of the repair of clustered vectors (eig_repair in
 * small_svd_cuda.c). */

/* reach[j]: the largest i > j with |F_ij| > tol (or NaN), else j, and
 * reach2[j] the same at tol2; F = Z^T Z (n x n, ld n, its lower triangle).
 * One block per column. */
static __global__ void reach_kernel(int n, const double *F, double tol, double tol2, int *reach,
                                    int *reach2) {
    __shared__ int part[2][32];
    const int j = blockIdx.x;
    int r = j, r2 = j;
    for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) {
        const double f = fabs(F[i + (size_t)j * n]);
        if (!(f <= tol)) r = i;
        if (!(f <= tol2)) r2 = i;
    }
    for (int o = 16; o > 0; o >>= 1) {
        r = max(r, __shfl_xor_sync(0xffffffffu, r, o));
        r2 = max(r2, __shfl_xor_sync(0xffffffffu, r2, o));
    }
    if ((threadIdx.x & 31) == 0) part[0][threadIdx.x >> 5] = r, part[1][threadIdx.x >> 5] = r2;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); w++)
            r = max(r, part[0][w]), r2 = max(r2, part[1][w]);
        reach[j] = r;
        reach2[j] = r2;
    }
}

/* Entry t of the fixed start vectors (column-major, ld n: t = row + n
 * column): uniform in [-1, 1) by splitmix64. */
static __device__ __forceinline__ double start_value(long long t) {
    unsigned long long x = (unsigned long long)t + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1p-52 - 1.0;
}

/* Y (n x c, ld n): the fixed start vectors. */
static __global__ void start_kernel(int n, int c, double *Y) {
    const long long nc = (long long)n * c;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nc;
         t += (long long)gridDim.x * blockDim.x)
        Y[t] = start_value(t);
}

#define SP_THREADS 512 /* start_proj_kernel's block: a thread per row (n <= 448) */

/* Y's column j (block j; Y n x c, ld n) = the start vector j projected off
 * Zo's columns z0 .. n - 1 (ld n, orthonormal) twice, y <- y - Zo (Zo^T y)
 * as classical Gram-Schmidt with its second pass: the vector in shared
 * memory, each projection coefficient a warp's dot product, each updated
 * entry a thread's sum over the columns, in a fixed order (the same bits
 * on every run). Zo comes from L2, so the loops are unrolled for their
 * loads to be in flight together (a rolled loop waits a load's latency
 * per term; the bounds let each thread have the registers for them). One
 * launch in place of the start kernel and four DGEMMs. H100, the
 * randomized SVD's deep_decay (126 vectors of 266, PyTorch's profiler):
 * 20 us; 50 with 256 threads (rows 256 and on a second pass) and the
 * compiler's register budget for several blocks per SM. */
#define SP_SLOTS 14 /* 32 SP_SLOTS >= 448 rows */
static __global__ void __launch_bounds__(SP_THREADS, 1)
    start_proj_kernel(int n, int c, const double *__restrict__ Zo, int z0, double *Y) {
    extern __shared__ double sp_sm[];
    double *y = sp_sm, *p = sp_sm + n;
    const int j = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int nw = SP_THREADS / 32;
    for (int i = tid; i < n; i += SP_THREADS) y[i] = start_value((long long)j * n + i);
    __syncthreads();
    for (int pass = 0; pass < 2; pass++) {
        for (int q = z0 + warp; q < n; q += nw) { /* p_q = Zo(:, q)^T y */
            const double *zq = Zo + (size_t)q * n;
            double z[SP_SLOTS], s0 = 0.0, s1 = 0.0;
#pragma unroll
            for (int h = 0; h < SP_SLOTS; h++) {
                const int i = lane + 32 * h;
                z[h] = i < n ? __ldg(zq + i) : 0.0;
            }
#pragma unroll
            for (int h = 0; h < SP_SLOTS; h++) {
                const int i = lane + 32 * h;
                const double t = i < n ? y[i] : 0.0;
                if (h & 1) s1 = fma(z[h], t, s1);
                else s0 = fma(z[h], t, s0);
            }
            double s = s0 + s1;
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
            if (lane == 0) p[q] = s;
        }
        __syncthreads();
        double u[(448 + SP_THREADS - 1) / SP_THREADS]; /* y_i - sum_q Zo(i, q) p_q */
#pragma unroll
        for (int h = 0; h < (448 + SP_THREADS - 1) / SP_THREADS; h++) {
            const int i = tid + h * SP_THREADS;
            double s[4] = {0.0, 0.0, 0.0, 0.0};
            if (i < n) {
                int q = z0;
                for (; q + 8 <= n; q += 8) { /* eight loads in flight */
                    double z[8];
#pragma unroll
                    for (int e = 0; e < 8; e++) z[e] = __ldg(Zo + i + (size_t)(q + e) * n);
#pragma unroll
                    for (int e = 0; e < 8; e++) s[e & 3] = fma(z[e], p[q + e], s[e & 3]);
                }
                for (; q < n; q++) s[0] = fma(__ldg(Zo + i + (size_t)q * n), p[q], s[0]);
            }
            u[h] = i < n ? y[i] - ((s[0] + s[1]) + (s[2] + s[3])) : 0.0;
        }
        __syncthreads(); /* (every read of y before the writes) */
#pragma unroll
        for (int h = 0; h < (448 + SP_THREADS - 1) / SP_THREADS; h++) {
            const int i = tid + h * SP_THREADS;
            if (i < n) y[i] = u[h];
        }
        __syncthreads();
    }
    for (int i = tid; i < n; i += SP_THREADS) Y[i + (size_t)j * n] = y[i];
}

/* V = T Y (n x c, ld n each), T = tridiag(e, d, e). */
static __global__ void tmul_kernel(int n, const double *d, const double *e, int c, const double *Y,
                                   double *V) {
    const long long nc = (long long)n * c;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nc;
         t += (long long)gridDim.x * blockDim.x) {
        const int i = (int)(t % n);
        double v = d[i] * Y[t];
        if (i > 0) v = fma(e[i - 1], Y[t - 1], v);
        if (i < n - 1) v = fma(e[i], Y[t + 1], v);
        V[t] = v;
    }
}

/* Z's columns a .. a + c - 1 = P's (n x c); lam[a + j] = mu[j] + shift where
 * mu is not NULL. */
static __global__ void place_kernel(int n, int c, const double *P, const double *mu, double *Z,
                                    double *lam, int a, double shift) {
    const long long nc = (long long)n * c;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nc;
         t += (long long)gridDim.x * blockDim.x) {
        const int i = (int)(t % n), j = (int)(t / n);
        Z[i + (size_t)(a + j) * n] = P[t];
        if (i == 0 && mu) lam[a + j] = mu[j] + shift;
    }
}

static __global__ void diag_sub_kernel(int c, double *H, double s) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < c; j += gridDim.x * blockDim.x)
        H[j + (size_t)j * c] -= s;
}

/* S (n x n, ld n) = the symmetric matrix whose upper (or lower) triangle G
 * (ld ldg) holds: each entry copied from the triangle, no arithmetic. */
static __global__ void sym_full_kernel(int n, const double *G, long long ldg, int upper,
                                       double *S) {
    const long long nn = (long long)n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x) {
        const int i = (int)(t % n), j = (int)(t / n), lo = min(i, j), hi = max(i, j);
        S[t] = upper ? G[lo + hi * ldg] : G[hi + lo * ldg];
    }
}

/* ------------------------------------------------------------------ checks */
/* Column j of the eigensolution is dropped (lam not NULL): |lam_j| < xr
 * max|lam|, the test of resid_check_kernel. */
static __device__ __forceinline__ int dropped_col(int n, const double *lam, double xr, int j) {
    return lam && fabs(lam[j]) < xr * fmax(fabs(lam[0]), fabs(lam[n - 1]));
}

/* F = X^T X (n x n) -> I - (F - I) / 2, flag = 1 where |F - I| > 1e-6 (or
 * NaN), not counting the rows and columns of dropped columns (lam not
 * NULL: zero columns of X, whose I - (F - I) / 2 keeps them zero and
 * leaves the others as they are). */
static __global__ void orth_check_kernel(int n, double *F, const double *lam, double xr,
                                         int *flag) {
    const long long nn = (long long)n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x) {
        const int i = (int)(t % n), j = (int)(t / n);
        const double id = i == j ? 1.0 : 0.0, f = F[t] - id;
        if (!(fabs(f) <= 1e-6) && !dropped_col(n, lam, xr, i) && !dropped_col(n, lam, xr, j))
            atomicOr(flag, 1);
        F[t] = fma(-0.5, f, id);
    }
}

/* X's dropped columns (dropped_col) set to zero. */
static __global__ void drop_cols_kernel(int n, double *X, const double *lam, double xr) {
    const long long nn = (long long)n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x)
        if (dropped_col(n, lam, xr, (int)(t / n))) X[t] = 0.0;
}

/* R = G X (n x n): flag = 1 where |R - X diag(lam)| > 32 n eps max|lam| in
 * a column whose |lam_j| >= xr max|lam|, or lam not finite and ascending;
 * X copied to Xout (which may be R: a thread reads its entry of R before
 * it writes that entry of Xout). */
static __global__ void resid_check_kernel(int n, const double *R, const double *X,
                                          const double *lam, double xr, double *Xout, int *flag) {
    const double lmax = fmax(fabs(lam[0]), fabs(lam[n - 1]));
    const double tol = 32.0 * n * DBL_EPSILON * lmax;
    const long long nn = (long long)n * n;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < nn;
         t += (long long)gridDim.x * blockDim.x) {
        const int j = (int)(t / n);
        if (!(fabs(R[t] - lam[j] * X[t]) <= tol) && !(fabs(lam[j]) < xr * lmax))
            atomicOr(flag, 1);
        if (t % n == 0 && j > 0 && !(lam[j] >= lam[j - 1])) atomicOr(flag, 1);
        Xout[t] = X[t];
    }
}

static int grid_for(long long nn) {
    long long b = (nn + 255) / 256;
    return (int)(b > 1024 ? 1024 : b);
}

extern "C" size_t tn_cu_syev_fast_ws(int n) { return 4 * (size_t)n * n + 2 * (size_t)n; }

/* The cluster for n: 16 blocks where the matrix fits their shared
 * memory (8 where the launch of 16 is refused and the rows fit the
 * warps), 0 where they do not fit. */
static int cluster_for(int n, size_t smem_optin) {
    return n <= 32 * SY_NS_MAX && tridiag_smem(n, 16) <= smem_optin ? 16 : 0;
}

extern "C" int tn_cu_syev_fast_ok(int n, int cc, size_t smem_optin) {
    return cc == 90 && n >= 1 && cluster_for(n, smem_optin) > 0;
}

extern "C" int tn_cu_syev_fast_early(int n, const double *G, int64_t ldg, int upper, double *X,
                                     double *lam, int *flag, double *ws, int children,
                                     size_t smem_optin, double *lam_host, cudaEvent_t ev,
                                     cudaStream_t stream) {
    const int C = cluster_for(n, smem_optin);
    if (C == 0) return (int)cudaErrorInvalidValue;
    const size_t nn = (size_t)n * n;
    double *Q = ws, *V = Q + nn, *tau = V + nn, *d = tau + 2 * nn, *e = d + n;
    cudaError_t err = cudaMemsetAsync(flag, 0, sizeof(int), stream);
    const size_t s8 = tridiag_smem(n, 8), smem = s8 <= smem_optin ? s8 : tridiag_smem(n, C);
    const int ns = tridiag_ns(n);
    void (*tridiag_kernel)(int, const double *, long long, int, double *, double *, double *,
                           double *) =
        ns == 5    ? tridiag5_kernel
        : ns == 7  ? tridiag7_kernel
        : ns == 9  ? tridiag9_kernel
        : ns == 12 ? tridiag12_kernel
                   : tridiag14_kernel;
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
        if (cfg.dynamicSmemBytes > smem_optin ||
            (n + c - 1) / c > tridiag_mr(ns) * (SY_THREADS / 32))
            break; /* (or a block's rows beyond its warps' registers) */
        void (*kf)(int, const double *, long long, int, double *, double *, double *, double *) =
            tridiag_two_rows(n, ns, c) ? tridiag5r2_kernel : tridiag_kernel;
        err = cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (!err) err = cudaFuncSetAttribute(kf, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (err) return (int)err;
        err = cudaLaunchKernelEx(&cfg, kf, n, G, (long long)ldg, upper, d, e, V, tau);
        if (!err) break;
        (void)cudaGetLastError();
    }
    if (err) return (int)err;
    void (*bq_kernel)(int, const double *, const double *, double *, const double *,
                      const double *, double *) =
        ns == 5    ? bisect_q_kernel<5>
        : ns == 7  ? bisect_q_kernel<7>
        : ns == 9  ? bisect_q_kernel<9>
        : ns == 12 ? bisect_q_kernel<12>
                   : bisect_q_kernel<14>;
    const int qb = (n + BI_THREADS / 32 - 1) / (BI_THREADS / 32);
    const size_t bq_smem = q_rows_smem(n) > 3 * sizeof(double) * n ? q_rows_smem(n)
                                                                     : 3 * sizeof(double) * n;
    err = cudaFuncSetAttribute(bq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)bq_smem);
    if (err) return (int)err;
    bq_kernel<<<n + qb, BI_THREADS, bq_smem, stream>>>(n, d, e, lam, V, tau, Q);
    if (lam_host) { /* the values, final here, copied out ahead of the vectors */
        err = cudaMemcpyAsync(lam_host, lam, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost,
                              stream);
        if (!err) err = cudaEventRecord(ev, stream);
        if (err) return (int)err;
    }
    int tw = 32; /* eigenvalues per block of twisted_kernel, as its shared memory allows */
    while (tw > 1 && twisted_smem(n, tw) > smem_optin) tw /= 2;
    err = cudaFuncSetAttribute(twisted_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)twisted_smem(n, tw));
    if (err) return (int)err;
    twisted_kernel<<<(n + tw - 1) / tw, TW_THREADS, twisted_smem(n, tw), stream>>>(n, tw, d, e,
                                                                                    lam, X);
    if (!children || n < 2) return (int)cudaGetLastError();
    /* the groups' members from their children */
    mr_child_kernel<<<n, BI_THREADS, mr_smem(n), stream>>>(n, d, e, lam, X);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_fast(int n, const double *G, int64_t ldg, int upper, double *X,
                               double *lam, int *flag, double *ws, int children,
                               size_t smem_optin, cudaStream_t stream) {
    return tn_cu_syev_fast_early(n, G, ldg, upper, X, lam, flag, ws, children, smem_optin, NULL,
                                 NULL, stream);
}

extern "C" int tn_cu_syev_orth_check(int n, double *F, const double *lam, double xr, int *flag,
                                     cudaStream_t stream) {
    orth_check_kernel<<<grid_for((long long)n * n), 256, 0, stream>>>(n, F, lam, xr, flag);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_drop(int n, double *X, const double *lam, double xr,
                               cudaStream_t stream) {
    drop_cols_kernel<<<grid_for((long long)n * n), 256, 0, stream>>>(n, X, lam, xr);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_resid_check(int n, const double *R, const double *X, const double *lam,
                                      double xr, double *Xout, int *flag, cudaStream_t stream) {
    resid_check_kernel<<<grid_for((long long)n * n), 256, 0, stream>>>(n, R, X, lam, xr, Xout,
                                                                       flag);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_reach(int n, const double *F, double tol, double tol2, int *reach,
                                int *reach2, cudaStream_t stream) {
    reach_kernel<<<n, 128, 0, stream>>>(n, F, tol, tol2, reach, reach2);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_start(int n, int c, double *Y, cudaStream_t stream) {
    start_kernel<<<grid_for((long long)n * c), 256, 0, stream>>>(n, c, Y);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_start_proj(int n, int c, const double *Zo, int z0, double *Y,
                                     cudaStream_t stream) {
    if (n > 448 || c < 1) return (int)cudaErrorInvalidValue;
    start_proj_kernel<<<c, SP_THREADS, 2 * sizeof(double) * (size_t)n, stream>>>(n, c, Zo, z0, Y);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_tmul(int n, const double *d, const double *e, int c, const double *Y,
                               double *V, cudaStream_t stream) {
    tmul_kernel<<<grid_for((long long)n * c), 256, 0, stream>>>(n, d, e, c, Y, V);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_place(int n, int c, const double *P, const double *mu, double shift,
                                double *Z, double *lam, int a, cudaStream_t stream) {
    place_kernel<<<grid_for((long long)n * c), 256, 0, stream>>>(n, c, P, mu, Z, lam, a, shift);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_diag_sub(int c, double *H, double s, cudaStream_t stream) {
    diag_sub_kernel<<<(c + 255) / 256, 256, 0, stream>>>(c, H, s);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_syev_sym_full(int n, const double *G, int64_t ldg, int upper, double *S,
                                   cudaStream_t stream) {
    sym_full_kernel<<<grid_for((long long)n * n), 256, 0, stream>>>(n, G, (long long)ldg, upper,
                                                                    S);
    return (int)cudaGetLastError();
}
