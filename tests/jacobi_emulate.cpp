/* The GPU kernel of the small SVD's Jacobi path (jsvd_kernel,
 * src/backend/cuda/kernels/jacobi_svd.cu, compiled here as C++ with
 * TN_JSVD_EMULATE) run on the CPU: each thread block an OS thread, its 256
 * threads ucontext fibers that run in turn up to their next __syncthreads
 * (a scheduler pass per barrier interval), the grid barrier on real atomics
 * across the blocks. Then the same checks as the GPU tests against the C
 * reference tn_jsvd_ref_run on the same Y, V: the sweeps within 1, the
 * values (column norms, sorted) to relative 1e-12, and the result's
 * invariants (Y's columns orthogonal, V orthonormal, Y = Y0 V0^T V). It
 * tests the kernel's indexing and phases, not the GPU's memory model
 * (fibers run one at a time: races do not show; compute-sanitizer's
 * racecheck / synccheck on the GPU do that, tests/gpu/small_svd_run.sh).
 *   tests/jacobi_emulate.sh   (builds it against build/libtcnla.a, runs it) */
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "small_svd_mat.h"

struct tn_emu_dim {
    unsigned x, y, z;
};
static thread_local tn_emu_dim threadIdx, blockIdx;
static tn_emu_dim gridDim;

struct tn_emu_block {
    std::vector<ucontext_t> ctx;
    std::vector<int> done;
    ucontext_t sched;
    int tid;
};
static thread_local tn_emu_block *emu_blk;

static void __syncthreads() { swapcontext(&emu_blk->ctx[emu_blk->tid], &emu_blk->sched); }

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __ldcg(p) (*(p))
#define __stcg(p, v) (*(p) = (v))
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define TN_JSVD_EMULATE_SPIN() std::this_thread::yield()
static unsigned atomicAdd(unsigned *p, unsigned v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

struct double2 {
    double x, y;
};

#define TN_JSVD_EMULATE 1
#include "../src/backend/cuda/kernels/jacobi_svd.cu"

struct emu_args {
    int l, nb, inner, maxsweeps, fault;
    double *Y, *V, tol;
    int *state;
    unsigned *bar;
};
static emu_args g_args;

static void fiber_main() {
    const emu_args &a = g_args;
    jsvd_kernel(a.l, a.nb, a.Y, a.V, a.tol, a.inner, a.maxsweeps, a.fault, a.state, a.bar);
    emu_blk->done[emu_blk->tid] = 1; /* then back to the scheduler (uc_link) */
}

/* One block: JS_THREADS fibers, run pass by pass (a pass: each fiber up to
 * its next __syncthreads or its end); every fiber must reach the same
 * barriers, so a pass that ends some fibers but not all is an error. */
static void run_block(unsigned b, int *err) {
    blockIdx.x = b;
    tn_emu_block blk;
    emu_blk = &blk;
    blk.ctx.resize(JS_THREADS);
    blk.done.assign(JS_THREADS, 0);
    const size_t stack = 256 * 1024;
    std::vector<char> stacks((size_t)JS_THREADS * stack);
    for (int t = 0; t < JS_THREADS; t++) {
        getcontext(&blk.ctx[t]);
        blk.ctx[t].uc_stack.ss_sp = stacks.data() + (size_t)t * stack;
        blk.ctx[t].uc_stack.ss_size = stack;
        blk.ctx[t].uc_link = &blk.sched;
        makecontext(&blk.ctx[t], fiber_main, 0);
    }
    for (;;) {
        for (int t = 0; t < JS_THREADS; t++) {
            if (blk.done[t]) continue;
            blk.tid = t;
            threadIdx.x = (unsigned)t;
            swapcontext(&blk.sched, &blk.ctx[t]);
        }
        int left = 0;
        for (int t = 0; t < JS_THREADS; t++) left += !blk.done[t];
        if (left && left < JS_THREADS) {
            *err = 1; /* divergent barriers */
            std::fprintf(stderr, "block %u: %d of %d threads ended\n", b, JS_THREADS - left,
                         JS_THREADS);
            std::exit(3);
        }
        if (!left) break;
    }
}

/* The kernel on l x L Y, V (as tn_cu_jsvd launches it): state as there. */
static void emulate(int l, double *Y, double *V, int fault, int *state) {
    static unsigned bar;
    bar = 0;
    std::memset(state, 0, 8 * sizeof(int));
    g_args = {l, tn_jsvd_nblocks(l), TN_JSVD_INNER, TN_JSVD_SWEEPS, fault, Y, V, tn_jsvd_tol(l),
              state, &bar};
    const int blocks = tn_jsvd_nblocks(l) / 2;
    gridDim.x = (unsigned)blocks;
    std::vector<std::thread> th;
    int err = 0;
    for (int b = 0; b < blocks; b++) th.emplace_back(run_block, (unsigned)b, &err);
    for (auto &t : th) t.join();
}

static double col_norm(const double *x, int l) {
    double a = 0;
    for (int r = 0; r < l; r++) a += x[r] * x[r];
    return std::sqrt(a);
}

int main() {
    int fails = 0;
    const int ls[] = {1, 40, 100, 130};
    for (int li = 0; li < 4; li++)
        for (int pre = 0; pre < 2; pre++) {
            const int l = ls[li], k = l > 10 ? l - 10 : l, L = TN_JSVD_W * tn_jsvd_nblocks(l);
            const size_t lL = (size_t)l * L, ll = (size_t)l * l;
            std::vector<double> M(ll), X(ll), Y0(lL, 0.0), V0(lL, 0.0);
            if (ssvd_graded(l, k, 7.0, l, 7 + li, M.data()) != 0) return 2;
            if (pre && ssvd_gram_vectors(l, M.data(), X.data()) != 0) return 2;
            for (int j = 0; j < l; j++)
                for (int i = 0; i < l; i++) {
                    double acc = 0;
                    if (pre)
                        for (int c = 0; c < l; c++) acc += M[i + (size_t)c * l] * X[c + (size_t)j * l];
                    else
                        acc = M[i + (size_t)j * l];
                    Y0[i + (size_t)j * l] = acc;
                    V0[i + (size_t)j * l] = pre ? X[i + (size_t)j * l] : (double)(i == j);
                }
            std::vector<double> Ye = Y0, Ve = V0, Yr = Y0, Vr = V0;
            int state[8], swr = 0;
            emulate(l, Ye.data(), Ve.data(), 0, state);
            const int str = tn_jsvd_ref_run(l, Yr.data(), Vr.data(), TN_JSVD_INNER, 0, &swr);
            std::vector<double> se(l), sr(l);
            for (int j = 0; j < l; j++) {
                se[j] = col_norm(&Ye[(size_t)j * l], l);
                sr[j] = col_norm(&Yr[(size_t)j * l], l);
            }
            std::sort(se.begin(), se.end());
            std::sort(sr.begin(), sr.end());
            double dsv = 0, cosmax = 0, orth = 0, inv = 0;
            for (int j = 0; j < l; j++)
                if (sr[j] > 0) dsv = std::max(dsv, std::fabs(se[j] - sr[j]) / sr[j]);
            for (int i = 0; i < l; i++)
                for (int j = 0; j <= i; j++) {
                    double y = 0, v = 0;
                    for (int r = 0; r < l; r++) {
                        y += Ye[r + (size_t)i * l] * Ye[r + (size_t)j * l];
                        v += Ve[r + (size_t)i * l] * Ve[r + (size_t)j * l];
                    }
                    const double ni = col_norm(&Ye[(size_t)i * l], l),
                                 nj = col_norm(&Ye[(size_t)j * l], l);
                    if (i != j && ni > 0 && nj > 0) cosmax = std::max(cosmax, std::fabs(y) / (ni * nj));
                    orth = std::max(orth, std::fabs(v - (i == j)));
                }
            /* Y = M V (Y0 = M V0, V0 orthogonal): |M v_j - y_j| / |M|_F */
            double fro = 0;
            for (size_t e = 0; e < ll; e++) fro += M[e] * M[e];
            fro = std::sqrt(fro);
            for (int j = 0; j < l; j++) {
                double d2 = 0;
                for (int i = 0; i < l; i++) {
                    double acc = 0;
                    for (int c = 0; c < l; c++) acc += M[i + (size_t)c * l] * Ve[c + (size_t)j * l];
                    d2 += (acc - Ye[i + (size_t)j * l]) * (acc - Ye[i + (size_t)j * l]);
                }
                inv = std::max(inv, std::sqrt(d2) / fro);
            }
            const int ok = state[4] == 1 && str == 0 && std::abs(state[3] - swr) <= 1 &&
                           dsv <= 1e-12 && cosmax <= 1e-12 && orth <= 1e-12 && inv <= 1e-13;
            std::printf("l %4d pre %d: kernel %s in %d sweeps (reference %d), values %.1e, "
                        "cos %.1e, V^T V - I %.1e, |M V - Y| / |M| %.1e  %s\n",
                        l, pre, state[4] ? "converged" : "NOT converged", state[3], swr, dsv,
                        cosmax, orth, inv, ok ? "ok" : "FAIL");
            fails += !ok;
        }
    /* the planted faults: negated angles never converge; a skipped
     * convergence test stops after one sweep claiming convergence */
    {
        const int l = 100, L = TN_JSVD_W * tn_jsvd_nblocks(l);
        std::vector<double> M((size_t)l * l), Y((size_t)l * L, 0.0), V((size_t)l * L, 0.0);
        ssvd_graded(l, 90, 7.0, l, 3, M.data());
        int state[8];
        for (int fault = 1; fault <= 2; fault++) {
            std::fill(Y.begin(), Y.end(), 0.0), std::fill(V.begin(), V.end(), 0.0);
            std::copy(M.begin(), M.end(), Y.begin());
            for (int i = 0; i < l; i++) V[i + (size_t)i * l] = 1.0;
            emulate(l, Y.data(), V.data(), fault, state);
            const int ok = fault == 1 ? state[4] == 0 && state[3] == TN_JSVD_SWEEPS
                                      : state[4] == 1 && state[3] == 1;
            std::printf("fault %d: converged %d after %d sweeps  %s\n", fault, state[4], state[3],
                        ok ? "ok" : "FAIL");
            fails += !ok;
        }
    }
    std::printf("%s\n", fails ? "jacobi_emulate: FAILED" : "jacobi_emulate: all ok");
    return fails ? 1 : 0;
}
