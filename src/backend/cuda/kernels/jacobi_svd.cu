/* The small SVD's block one-sided Jacobi path on the GPU (driven by
 * jacobi_path in src/backend/cuda/small_svd_cuda.c): the algorithm of
 * src/linalg/jacobi_svd.h, whose C reference tn_jsvd_ref the GPU tests
 * compare it with, in FP64.
 *
 *  - tn_cu_jsvd: every sweep in one cooperative launch of nb / 2 blocks of
 *    JS_THREADS threads (nb = tn_jsvd_nblocks(l) blocks of W = 16 columns;
 *    l = 266: 9 blocks, 17 steps a sweep; l = 1024: 32 blocks, 63 steps).
 *    In a step each block takes one pair of column blocks (tn_jsvd_pair):
 *    their 32 x 32 Gram matrix from 32-row chunks of Y staged in shared
 *    memory (4 x 4 tiles a thread, four row groups added at the end), the
 *    inner two-sided Jacobi sweeps on it in shared memory (16 disjoint
 *    rotations a round, one barrier a round: each thread updates its 2 x 2
 *    block of J^T H J and two entries of Q J, and the thread whose block
 *    holds the off-diagonal entry of one of the next round's pairs makes
 *    that rotation; a sweep that no pair needs is skipped after one
 *    parallel check), then Y and V times the accumulated Q chunk by chunk
 *    (Q's column in registers, S's rows broadcast; skipped where no
 *    rotation was made). The blocks meet at a grid barrier after every step (the
 *    counter barrier of cholqr_kernels.cu); Y and V, which other blocks
 *    write, are read and written through L2 (ld / st .cg). A block that made
 *    a rotation adds 1 to the sweep's flag (three flags in turn: block 0
 *    zeroes the next sweep's while every block has read the one before);
 *    after a sweep's last barrier every block reads it, and all stop
 *    together when it is 0 (converged) or after maxsweeps. state: [0..2]
 *    the flags, [3] sweeps run, [4] 1 = converged, [5] 1 = NaN / Inf met
 *    (tn_cu_jsvd_out).
 *  - tn_cu_jsvd_out: s_j = |y_j| (a warp per column), then a block per
 *    column ranks it (descending, ties by index, as the reference) and
 *    writes the k leading u_j = y_j / s_j, v_j (times s_j with scale), s_j
 *    in FP32;
 *  - tn_cu_jsvd_verify: the result checked before it is used (Y's columns
 *    orthogonal, V orthonormal, Y = M V column by column, from DSYRKs and a
 *    DGEMM of the driver), so that a wrong result of the sweeps, whatever
 *    its cause, goes to gesvdj instead of out. 
 * The cost is latency, not FLOPs: docs/design.md gives the model and the
 * measured times.
 * With TN_JSVD_EMULATE defined, only jsvd_kernel is compiled, for
 * tests/jacobi_emulate.cpp, which runs it on the CPU (blocks as threads,
 * each block's threads as fibers switched at __syncthreads) against the C
 * reference. */
#ifndef TN_JSVD_EMULATE
#include "backend/cuda/tn_cuda.h"
#endif
#include "linalg/jacobi_svd.h"

#define JS_W TN_JSVD_W
#define JS_W2 (2 * TN_JSVD_W)
#define JS_NP (TN_JSVD_W)   /* rotations a round: W2 / 2 */
#define JS_THREADS 256
#define JS_RC TN_JSVD_RC     /* rows of Y per staged chunk */
#define JS_RW (JS_RC / (JS_THREADS / 32)) /* a warp's rows of a chunk in the update */
#define JS_RG8 (JS_RC / TN_JSVD_RG)          /* a group's rows of a chunk in the Gram product */
#define JS_LD (JS_W2 + 2) /* row stride of S, H, Q: S's rows 16-byte aligned (double2 loads) */

static_assert(JS_W2 == 32 && JS_THREADS == 256 && TN_JSVD_RG == 4 && JS_RC == 32,
              "the thread mapping of the Gram product");
static_assert(JS_NP * JS_NP == JS_THREADS, "a thread per 2 x 2 block of a round's update");

/* The grid barrier of cholqr_kernels.cu: a monotonic arrival counter
 * (zeroed before the launch); the k-th barrier waits for k * gridDim.x. */
static __device__ __forceinline__ void js_barrier(unsigned *bar, unsigned *target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        *target += gridDim.x;
        __threadfence();
        atomicAdd(bar, 1u);
        unsigned v;
        do {
#ifdef TN_JSVD_EMULATE
            v = __atomic_load_n(bar, __ATOMIC_ACQUIRE);
            TN_JSVD_EMULATE_SPIN();
#else
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(bar) : "memory");
#endif
        } while (v < *target);
    }
    __syncthreads();
}

struct js_smem {
    alignas(16) double S[JS_RC][JS_LD]; /* a chunk of rows of Y_C or V_C */
    double H[JS_W2][JS_LD];             /* the Gram matrix, rotated */
    double Q[JS_W2][JS_LD];             /* the accumulated rotation */
    /* a round's rotations (tn_jsvd_rot's inputs and outputs), two rounds
     * in turn: round rd's in [rd & 1], written during round rd - 1 */
    double cs[2][JS_NP], sn[2][JS_NP], t[2][JS_NP], a[2][JS_NP], b[2][JS_NP], c[2][JS_NP];
    int on[2][JS_NP];
    int any[TN_JSVD_INNER], need[TN_JSVD_INNER];
    int stop;
};

/* The pair of column x in round r of tn_jsvd_pair(n, r, ...) (its inverse):
 * returns the pair's index, *side 0 where x is its first column (a), 1
 * where its second (b). */
static __device__ __forceinline__ int js_slot(int n, int r, int x, int *side) {
    const int m = n - 1;
    if (x == m) return *side = 1, 0;
    if (x == r) return *side = 0, 0;
    const int p = (x - r + m) % m;
    if (p <= n / 2 - 1) return *side = 0, p;
    return *side = 1, m - p;
}

/* Round rd's rotation of pair k from H as it is (a round's first). */
static __device__ __forceinline__ void js_rot_from_H(js_smem &sm, int rd, int k, double tol,
                                                     int flip, int s) {
    int p, q;
    tn_jsvd_pair(JS_W2, rd, k, &p, &q);
    const double a = sm.H[p][p], b = sm.H[q][q], c = sm.H[p][q];
    double cs, sn, t;
    const int on = tn_jsvd_rot(a, b, c, tol, flip, &cs, &sn, &t), u = rd & 1;
    sm.on[u][k] = on, sm.a[u][k] = a, sm.b[u][k] = b, sm.c[u][k] = c;
    sm.cs[u][k] = cs, sm.sn[u][k] = sn, sm.t[u][k] = t;
    if (on) sm.any[s] = 1;
}

/* The global column of local column c of the pair (bi, bj). */
static __device__ __forceinline__ int js_col(int c, int bi, int bj) {
    return c < JS_W ? bi * JS_W + c : bj * JS_W + (c - JS_W);
}

#define JS_PER (JS_RC * JS_W2 / JS_THREADS) /* chunk elements a thread moves */
static_assert(JS_PER * JS_THREADS == JS_RC * JS_W2, "the chunk's split over the threads");

/* Loads rows r0 .. r0 + JS_RC of the pair's columns of X (ld l) into
 * registers (zeros past l): element e = tid + i JS_THREADS is row e % JS_RC
 * of local column e / JS_RC. Issued a chunk ahead, so that the loads' L2
 * latency overlaps the work on the chunk before. */
static __device__ __forceinline__ void js_fetch(double (&v)[JS_PER], const double *X, int l, int r0,
                                                int bi, int bj) {
#pragma unroll
    for (int i = 0; i < JS_PER; i++) {
        const int e = (int)threadIdx.x + i * JS_THREADS, rr = e % JS_RC, c = e / JS_RC;
        v[i] = r0 + rr < l ? __ldcg(X + (long long)js_col(c, bi, bj) * l + r0 + rr) : 0.0;
    }
}

/* Puts js_fetch's registers into S; the caller synchronizes. */
static __device__ __forceinline__ void js_put(js_smem &sm, const double (&v)[JS_PER]) {
#pragma unroll
    for (int i = 0; i < JS_PER; i++) {
        const int e = (int)threadIdx.x + i * JS_THREADS;
        sm.S[e % JS_RC][e / JS_RC] = v[i];
    }
}

/* One step's work on the pair of blocks (bi, bj); returns (in every
 * thread) 1 where a rotation was made. */
static __device__ int js_pair(js_smem &sm, int l, double *Y, double *V, int bi, int bj, double tol,
                              int inner, int flip) {
    const int tid = threadIdx.x;
    /* H = Y_C^T Y_C (jacobi_svd.h's order): the threads in TN_JSVD_RG
     * groups of 64, group g the rows g JS_RG8 .. of each chunk, thread
     * (ti, tj) of a group the 4 x 4 tile (4 ti.., 4 tj..) of its partial
     * sum (8 loads a row for 16 products); then groups 1, 2, 3 leave their
     * partials in Q, S, H and group 0 adds them, (p0 + p1) + (p2 + p3) */
    const int grp = tid >> 6, ti = (tid & 63) >> 3, tj = tid & 7;
    double hp[4][4];
#pragma unroll
    for (int x = 0; x < 4; x++)
#pragma unroll
        for (int y = 0; y < 4; y++) hp[x][y] = 0.0;
    if (tid < TN_JSVD_INNER) sm.any[tid] = sm.need[tid] = 0;
    double v[JS_PER];
    js_fetch(v, Y, l, 0, bi, bj);
    for (int r0 = 0; r0 < l; r0 += JS_RC) {
        js_put(sm, v);
        __syncthreads();
        if (r0 + JS_RC < l) js_fetch(v, Y, l, r0 + JS_RC, bi, bj);
        /* (rows past l are zeros: their products add nothing) */
#pragma unroll 2
        for (int rr = grp * JS_RG8; rr < (grp + 1) * JS_RG8; rr++) {
            double x[4], y[4];
#pragma unroll
            for (int u = 0; u < 4; u += 2) {
                const double2 xu = *reinterpret_cast<const double2 *>(&sm.S[rr][4 * ti + u]);
                const double2 yu = *reinterpret_cast<const double2 *>(&sm.S[rr][4 * tj + u]);
                x[u] = xu.x, x[u + 1] = xu.y, y[u] = yu.x, y[u + 1] = yu.y;
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int z = 0; z < 4; z++) hp[u][z] = fma(x[u], y[z], hp[u][z]);
        }
        __syncthreads();
    }
    if (grp) {
        double(*P)[JS_LD] = grp == 1 ? sm.Q : grp == 2 ? sm.S : sm.H;
#pragma unroll
        for (int u = 0; u < 4; u++)
#pragma unroll
            for (int z = 0; z < 4; z++) P[4 * ti + u][4 * tj + z] = hp[u][z];
    }
    __syncthreads();
    if (!grp)
#pragma unroll
        for (int u = 0; u < 4; u++)
#pragma unroll
            for (int z = 0; z < 4; z++) {
                const int i = 4 * ti + u, j = 4 * tj + z;
                sm.H[i][j] = (hp[u][z] + sm.Q[i][j]) + (sm.S[i][j] + sm.H[i][j]);
            }
    __syncthreads();
    for (int e = tid; e < JS_W2 * JS_W2; e += JS_THREADS)
        sm.Q[e / JS_W2][e % JS_W2] = (e / JS_W2 == e % JS_W2) ? 1.0 : 0.0;
    __syncthreads();

    int rotated = 0;
    const int bm = tid / JS_NP, bk = tid % JS_NP; /* this thread's 2 x 2 block of a round */
    for (int s = 0; s < inner; s++) {
        /* every pair checked at once first: an inner sweep with no rotation
         * leaves H as it is, so where no pair needs one it is skipped (the
         * same result as running it, in one phase instead of 31 rounds);
         * the first round's rotations made in the same pass */
        for (int e = tid; e < JS_W2 * JS_W2; e += JS_THREADS) {
            const int p = e / JS_W2, q = e % JS_W2;
            if (p < q && tn_jsvd_needs(sm.H[p][p], sm.H[q][q], sm.H[p][q], tol)) sm.need[s] = 1;
        }
        if (tid < JS_NP) js_rot_from_H(sm, 0, tid, tol, flip, s);
        __syncthreads();
        if (!sm.need[s]) break;
        for (int rd = 0; rd < JS_W2 - 1; rd++) {
            /* one phase a round: H = J^T H J, thread (m, k) the 2 x 2 block
             * of rows (p_m, q_m) and columns (p_k, q_k), first J_k on its
             * columns, then J_m^T on its rows (the diagonal blocks of a
             * rotation: a' = a - t c, b' = b + t c, 0), the reference's
             * operations in its order; Q = Q J (row r, rotation k), two per
             * thread; then the thread whose block holds H[p'][q'] of the
             * next round's pair (p', q') makes that rotation (its diagonal
             * entries from this round's a, b, t, c), so that a round needs
             * one barrier */
            const int u = rd & 1, m = bm, k = bk;
            int pm, qm, pk, qk;
            tn_jsvd_pair(JS_W2, rd, m, &pm, &qm);
            tn_jsvd_pair(JS_W2, rd, k, &pk, &qk);
            const int onm = sm.on[u][m], onk = sm.on[u][k];
            double hpp = sm.H[pm][pk], hpq = sm.H[pm][qk], hqp = sm.H[qm][pk], hqq = sm.H[qm][qk];
            if (onk) {
                const double cs = sm.cs[u][k], sn = sm.sn[u][k];
                double x = hpp, y = hpq;
                hpp = cs * x - sn * y, hpq = sn * x + cs * y;
                x = hqp, y = hqq;
                hqp = cs * x - sn * y, hqq = sn * x + cs * y;
            }
            if (onm) {
                if (m == k) {
                    hpp = sm.a[u][m] - sm.t[u][m] * sm.c[u][m];
                    hqq = sm.b[u][m] + sm.t[u][m] * sm.c[u][m];
                    hpq = 0.0, hqp = 0.0;
                } else {
                    const double cs = sm.cs[u][m], sn = sm.sn[u][m];
                    double x = hpp, y = hqp;
                    hpp = cs * x - sn * y, hqp = sn * x + cs * y;
                    x = hpq, y = hqq;
                    hpq = cs * x - sn * y, hqq = sn * x + cs * y;
                }
            }
            if (onk || onm) {
                sm.H[pm][pk] = hpp, sm.H[pm][qk] = hpq;
                sm.H[qm][pk] = hqp, sm.H[qm][qk] = hqq;
            }
            for (int e = tid; e < JS_NP * JS_W2; e += JS_THREADS) {
                const int kk = e % JS_NP, r = e / JS_NP;
                if (!sm.on[u][kk]) continue;
                int p, q;
                tn_jsvd_pair(JS_W2, rd, kk, &p, &q);
                double *x = sm.Q[r];
                const double xp = x[p], xq = x[q], cs = sm.cs[u][kk], sn = sm.sn[u][kk];
                x[p] = cs * xp - sn * xq;
                x[q] = sn * xp + cs * xq;
            }
            if (rd + 1 < JS_W2 - 1 && m != k) {
                const int r1 = rd + 1;
#pragma unroll
                for (int h = 0; h < 2; h++) { /* rows p_m, q_m */
                    int side, p1, q1;
                    const int x = h ? qm : pm, k1 = js_slot(JS_W2, r1, x, &side);
                    if (side) continue;
                    tn_jsvd_pair(JS_W2, r1, k1, &p1, &q1);
                    if (q1 != pk && q1 != qk) continue;
                    const int sd2 = q1 == qk; /* q1 pair k's second column */
                    const double c1 = h ? (q1 == pk ? hqp : hqq) : (q1 == pk ? hpp : hpq);
                    /* H[x][x] and H[q1][q1] after this round */
                    const double a1 =
                        !onm ? (h ? sm.b[u][m] : sm.a[u][m])
                             : (h ? sm.b[u][m] + sm.t[u][m] * sm.c[u][m]
                                  : sm.a[u][m] - sm.t[u][m] * sm.c[u][m]);
                    const double b1 =
                        !onk ? (sd2 ? sm.b[u][k] : sm.a[u][k])
                             : (sd2 ? sm.b[u][k] + sm.t[u][k] * sm.c[u][k]
                                    : sm.a[u][k] - sm.t[u][k] * sm.c[u][k]);
                    double cs, sn, t;
                    const int on = tn_jsvd_rot(a1, b1, c1, tol, flip, &cs, &sn, &t), w = r1 & 1;
                    sm.on[w][k1] = on, sm.a[w][k1] = a1, sm.b[w][k1] = b1, sm.c[w][k1] = c1;
                    sm.cs[w][k1] = cs, sm.sn[w][k1] = sn, sm.t[w][k1] = t;
                    if (on) sm.any[s] = 1;
                }
            }
            __syncthreads();
        }
        const int any = sm.any[s]; /* written before the sweep's last barrier */
        rotated |= any;
        if (!any) break;
    }
    if (!rotated) return 0;
    /* Y_C = Y_C Q, V_C = V_C Q, chunk by chunk (each chunk read whole into
     * S before any of it is written; the next one's loads issued first):
     * thread (warp w, lane j) holds column j of Q in registers and sums
     * rows JS_RW w .. of the chunk, S's row read by the whole warp at once
     * (a broadcast, two entries a load), each element summed over c in
     * order */
    const int lj = tid & 31, w0 = (tid >> 5) * JS_RW;
    double qj[JS_W2];
#pragma unroll
    for (int cc = 0; cc < JS_W2; cc++) qj[cc] = sm.Q[cc][lj];
    for (int m = 0; m < 2; m++) {
        double *X = m ? V : Y;
        double *xj = X + (long long)js_col(lj, bi, bj) * l;
        js_fetch(v, X, l, 0, bi, bj);
        for (int r0 = 0; r0 < l; r0 += JS_RC) {
            js_put(sm, v);
            __syncthreads();
            /* the next chunk's rows: not among those written below */
            if (r0 + JS_RC < l) js_fetch(v, X, l, r0 + JS_RC, bi, bj);
            double acc[JS_RW];
#pragma unroll
            for (int i = 0; i < JS_RW; i++) acc[i] = 0.0;
#pragma unroll
            for (int cc = 0; cc < JS_W2; cc += 2)
#pragma unroll
                for (int i = 0; i < JS_RW; i++) {
                    const double2 s2 = *reinterpret_cast<const double2 *>(&sm.S[w0 + i][cc]);
                    acc[i] = fma(s2.x, qj[cc], acc[i]);
                    acc[i] = fma(s2.y, qj[cc + 1], acc[i]);
                }
#pragma unroll
            for (int i = 0; i < JS_RW; i++)
                if (r0 + w0 + i < l) __stcg(xj + r0 + w0 + i, acc[i]);
            __syncthreads();
        }
    }
    return 1;
}

static __global__ void __launch_bounds__(JS_THREADS, 1)
    jsvd_kernel(int l, int nb, double *Y, double *V, double tol, int inner, int maxsweeps,
                int fault, int *state, unsigned *bar) {
    __shared__ js_smem sm;
    unsigned target = 0;
    int sweep = 0, conv = 0;
    while (sweep < maxsweeps) {
        int *flag = state + sweep % 3;
        if (blockIdx.x == 0 && threadIdx.x == 0) state[(sweep + 1) % 3] = 0;
        for (int step = 0; step < nb - 1; step++) {
            int bi, bj;
            tn_jsvd_pair(nb, step, (int)blockIdx.x, &bi, &bj);
            const int rot = js_pair(sm, l, Y, V, bi, bj, tol, inner, fault == 1);
            if (rot && threadIdx.x == 0) atomicAdd(flag, 1);
            js_barrier(bar, &target);
        }
        sweep++;
        if (threadIdx.x == 0) sm.stop = atomicAdd(flag, 0) == 0;
        /* (fault 2, tests only: the convergence test skipped) */
        __syncthreads();
        conv = sm.stop || fault == 2;
        __syncthreads();
        if (conv) break;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        state[3] = sweep;
        state[4] = conv;
    }
}

#ifndef TN_JSVD_EMULATE
static __global__ void jsvd_eye_kernel(int l, long long total, double *V) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x)
        V[i] = (i % l == i / l) ? 1.0 : 0.0;
}

static __global__ void jsvd_norms_kernel(int l, const double *Y, double *s, int *state) {
    const int j = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (j >= l) return;
    const double *y = Y + (long long)j * l;
    double acc = 0.0;
    for (int r = lane; r < l; r += 32) acc = fma(y[r], y[r], acc);
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) {
        const double v = sqrt(acc);
        s[j] = v;
        if (!isfinite(v)) atomicOr(state + 5, 1);
    }
}

static __global__ void jsvd_out_kernel(int l, int k, const double *Y, const double *V,
                                       const double *s, int scale, float *Uk, float *Vk,
                                       float *Sk) {
    __shared__ int rank_s;
    const int j = blockIdx.x;
    const double sj = s[j];
    if (threadIdx.x == 0) rank_s = 0;
    __syncthreads();
    int cnt = 0;
    for (int i = threadIdx.x; i < l; i += blockDim.x) {
        const double si = s[i];
        cnt += si > sj || (si == sj && i < j);
    }
    if (cnt) atomicAdd(&rank_s, cnt);
    __syncthreads();
    const int rank = rank_s;
    if (rank >= k) return;
    const double inv = sj > 0.0 ? 1.0 / sj : 0.0, vs = scale ? sj : 1.0;
    for (int r = threadIdx.x; r < l; r += blockDim.x) {
        Uk[r + (long long)rank * l] = (float)(Y[r + (long long)j * l] * inv);
        Vk[r + (long long)rank * l] = (float)(V[r + (long long)j * l] * vs);
    }
    if (Sk && threadIdx.x == 0) Sk[rank] = (float)sj;
}

/* The result's check (tn_cu_jsvd_verify): G = Y^T Y, F = V^T V (upper
 * triangles), P = M V, all l x l (ld l); state[5] |= 2 where columns of Y
 * are not orthogonal to 1e-10 (relative to their norms), 4 where V is not
 * orthonormal to 1e-10, 8 where |P_j - y_j| > 1e-8 |y_j| + 16 l eps |M|_F
 * (|M|_F^2 = trace G). A block per column j (its column of G and F, and
 * P_j - y_j). */
static __global__ void jsvd_verify_kernel(int l, const double *G, const double *F,
                                          const double *P, const double *Y, int *state) {
    __shared__ double red[2][128];
    const int j = blockIdx.x, tid = threadIdx.x;
    double tr = 0.0, d2 = 0.0;
    int bad = 0;
    const double gjj = G[j + (long long)j * l];
    for (int i = tid; i < l; i += blockDim.x) {
        tr += G[i + (long long)i * l];
        const double e = P[i + (long long)j * l] - Y[i + (long long)j * l];
        d2 += e * e;
        if (i < j && !(fabs(G[i + (long long)j * l]) <=
                       1e-10 * sqrt(G[i + (long long)i * l]) * sqrt(gjj)))
            bad |= 2;
        if (i <= j && !(fabs(F[i + (long long)j * l] - (i == j ? 1.0 : 0.0)) <= 1e-10)) bad |= 4;
    }
    red[0][tid] = tr, red[1][tid] = d2;
    __syncthreads();
    for (int o = 64; o > 0; o >>= 1) {
        if (tid < o) red[0][tid] += red[0][tid + o], red[1][tid] += red[1][tid + o];
        __syncthreads();
    }
    if (tid == 0 && !(sqrt(red[1][0]) <= 1e-8 * sqrt(gjj) +
                                           16.0 * l * 2.220446049250313e-16 * sqrt(red[0][0])))
        bad |= 8;
    if (bad) atomicOr(state + 5, bad);
}

extern "C" int tn_cu_jsvd_verify(int l, const double *G, const double *F, const double *P,
                                 const double *Y, int *state, cudaStream_t stream) {
    if (l < 1) return (int)cudaErrorInvalidValue;
    jsvd_verify_kernel<<<(unsigned)l, 128, 0, stream>>>(l, G, F, P, Y, state);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_jsvd_eye(int l, int64_t cols, double *V, cudaStream_t stream) {
    const long long total = (long long)l * cols;
    long long blocks = (total + 255) / 256;
    if (blocks > 1024) blocks = 1024;
    if (blocks < 1) return 0;
    jsvd_eye_kernel<<<(unsigned)blocks, 256, 0, stream>>>(l, total, V);
    return (int)cudaGetLastError();
}

extern "C" int tn_cu_jsvd(int l, double *Y, double *V, int *state, unsigned *bar, int inner,
                          int maxsweeps, int fault, int sm_count, cudaStream_t stream) {
    if (l < 1 || l > TN_JSVD_MAXL) return (int)cudaErrorInvalidValue;
    if (inner < 1 || inner > TN_JSVD_INNER) inner = TN_JSVD_INNER; /* sm.any's size */
    int nb = tn_jsvd_nblocks(l), blocks = nb / 2, per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, jsvd_kernel,
                                                                  JS_THREADS, 0);
    if (e != cudaSuccess) return (int)e;
    if ((long long)per_sm * sm_count < blocks) return (int)cudaErrorCooperativeLaunchTooLarge;
    e = cudaMemsetAsync(state, 0, 8 * sizeof(int), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(bar, 0, sizeof(unsigned), stream);
    if (e != cudaSuccess) return (int)e;
    double tol = tn_jsvd_tol(l);
    void *args[] = {&l, &nb, &Y, &V, &tol, &inner, &maxsweeps, &fault, &state, &bar};
    return (int)cudaLaunchCooperativeKernel((const void *)jsvd_kernel, dim3((unsigned)blocks),
                                            dim3(JS_THREADS), args, 0, stream);
}

extern "C" int tn_cu_jsvd_out(int l, int k, const double *Y, const double *V, double *s,
                              int scale, float *Uk, float *Vk, float *Sk, int *state,
                              cudaStream_t stream) {
    if (l < 1 || k < 1 || k > l) return (int)cudaErrorInvalidValue;
    jsvd_norms_kernel<<<(unsigned)((l + 7) / 8), 256, 0, stream>>>(l, Y, s, state);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return (int)e;
    jsvd_out_kernel<<<(unsigned)l, 128, 0, stream>>>(l, k, Y, V, s, scale, Uk, Vk, Sk);
    return (int)cudaGetLastError();
}
#endif
