/* Scheme II's residue kernel (k_residues, src/backend/cuda/kernels/
 * ozaki2_kernels.cu, its source included as C++) run on the CPU: a block's
 * 256 threads are OS threads, __syncthreads a std::barrier, the blocks one
 * after another (grids of 3 or 16 column tiles and 3 tile rows, so that
 * blocks loop over both). The CUDA intrinsics it uses are the same IEEE
 * operations here (-ffp-contract=off; __fma_rn is fma). Every byte of the
 * layout R[(l nvp + v) kp + i] is checked against tn_oz2_residue: the same
 * residue modulo p_l and centred (|r| <= (p_l - 1) / 2, the unique such
 * byte for odd p_l), the CPU's byte for p_l = 256, zero outside nv, k,
 * and nothing written past the layout. The cases are those of
 * gpu_ozaki2_residues_kernel_vs_cpu
 * (src/backend/cuda/test_gpu_oz2_residues.c). It tests the kernel's
 * indexing, tails and arithmetic, not the GPU's memory model.
 *   tests/oz2_residues_emulate.sh   (builds it against build-cpu/libtcnla.a, runs it) */
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
#include "gemm/ozaki2.h"
#include "oz2_residue_cases.h"
}

struct tn_emu_dim {
    unsigned x = 0, y = 0, z = 0;
};
static thread_local tn_emu_dim threadIdx;
static tn_emu_dim blockIdx, gridDim;
static std::barrier<> *emu_bar;

#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
static inline void __syncthreads() { emu_bar->arrive_and_wait(); }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
static inline int __double2loint(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return (int)(uint32_t)b;
}
static inline double __longlong_as_double(long long v) {
    double d;
    memcpy(&d, &v, 8);
    return d;
}
static inline unsigned __byte_perm(unsigned a, unsigned b, unsigned sel) {
    const uint64_t x = ((uint64_t)b << 32) | a;
    unsigned r = 0;
    for (int i = 0; i < 4; i++)
        r |= (unsigned)((x >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
    return r;
}
struct double2 {
    double x, y;
};
#define OZ2_C52 6755399441055744.0 /* as in ozaki2_kernels.cu */
using std::copysign;
using std::fabs;
using std::trunc;
using std::rint;
#include "oz2_residues_kernel.inc"

/* tn_oz2_residues' launch on the emulated grid (gx column tiles at most) */
template <typename TIn>
static void launch(const TIn *X, int64_t sv, int64_t sl, int64_t nv, int64_t k, int64_t v_base,
                   int64_t nvp, int64_t kp, const int *sig, int h, const tn_oz2_consts_t *c,
                   signed char *R, unsigned gx) {
    oz2_rres rc;
    memset(&rc, 0, sizeof rc);
    rc.n = c->n;
    for (int l = 0; l < c->n; l++) {
        rc.npinv[l] = -1.0 / (double)c->mod[l];
        rc.p36[l] = (double)c->pw[l][3];
        rc.p[l] = (unsigned)c->mod[l];
        rc.p16[l] = (unsigned)c->mod[l] << 16;
        rc.c8[l] = (unsigned)(int)c->pw[l][3] & 0xFFu;
    }
    const int64_t nvb = nv - v_base < 0 ? 0 : nv - v_base;
    const int64_t lt = (kp + OZ2_RL - 1) / OZ2_RL, vt = nvp / OZ2_RV;
    gridDim.x = (unsigned)(lt < gx ? lt : gx);
    gridDim.y = (unsigned)(vt < 3 ? vt : 3);
    const TIn *Xb = X + v_base * sv;
    for (unsigned by = 0; by < gridDim.y; by++)
        for (unsigned bx = 0; bx < gridDim.x; bx++) {
            blockIdx.x = bx, blockIdx.y = by;
            std::barrier<> bar(256);
            emu_bar = &bar;
            std::vector<std::thread> th;
            for (unsigned t = 0; t < 256; t++)
                th.emplace_back([=] {
                    threadIdx.x = t;
                    if (h + 1 > 36)
                        k_residues<TIn, 1>(Xb, sv, sl, nvb, k, nvp, kp, nvp * kp, sig + v_base,
                                           h, rc, R);
                    else
                        k_residues<TIn, 0>(Xb, sv, sl, nvb, k, nvp, kp, nvp * kp, sig + v_base,
                                           h, rc, R);
                });
            for (auto &x : th) x.join();
        }
}


struct rcase_t {
    int f32, along_l;
    int64_t nv, k, v_base, nvp;
    int h, nmod;
};

int main() {
    /* f32, along_l, nv, k, v_base, nvp (0: rup(nv - v_base, 32)), h, moduli */
    const rcase_t cases[] = {
        {0, 1, 37, 61, 0, 0, 60, 16},     {0, 0, 37, 61, 0, 0, 60, 16},
        {0, 0, 33, 1030, 0, 0, 79, 20},   {0, 1, 33, 1030, 0, 0, 79, 20},
        {0, 0, 19, 2049, 0, 0, 35, 3},    {0, 1, 19, 2049, 0, 0, 36, 3},
        {0, 1, 70, 3, 0, 0, 50, 8},       {0, 0, 5, 70, 0, 0, 20, 1},
        {0, 0, 64, 256, 0, 0, 60, 15},    {0, 1, 64, 256, 0, 0, 60, 15},
        {0, 0, 48, 4100, 0, 0, 60, 15},   {0, 1, 48, 4100, 0, 0, 30, 15},
        {0, 0, 100, 300, 48, 64, 60, 16}, {0, 1, 100, 300, 48, 64, 60, 16},
        {0, 1, 90, 200, 64, 48, 40, 7},   {1, 1, 45, 1100, 0, 0, 30, 7},
        {1, 0, 45, 1100, 0, 0, 30, 7},    {1, 1, 45, 1100, 0, 0, 60, 16},
        {1, 0, 45, 1100, 0, 0, 60, 16},   {1, 0, 128, 512, 0, 0, 24, 12},
        {1, 1, 17, 33, 0, 0, 79, 20}};
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    int fails = 0;
    for (int ci = 0; ci < nc; ci++) {
        const rcase_t *t = &cases[ci];
        tn_oz2_consts_t cs;
        tn_oz2_consts(t->nmod, &cs);
        const int64_t nvc = t->nv - t->v_base;
        const int64_t nvp = t->nvp ? t->nvp : (nvc + 31) / 32 * 32, kp = (t->k + 31) / 32 * 32;
        const int64_t ld = t->along_l ? t->k + 3 : t->nv + 5;
        const int64_t sv = t->along_l ? ld : 1, sl = t->along_l ? 1 : ld;
        const size_t nx = (size_t)(ld * (t->along_l ? t->nv : t->k));
        const size_t nr = (size_t)t->nmod * (size_t)nvp * (size_t)kp;
        std::vector<double> x(nx);
        std::vector<float> xf(nx);
        std::vector<int> sig((size_t)t->nv);
        std::vector<signed char> r(nr + 64, 0x5A);
        oz2c_fill(500 + (uint64_t)ci, t->f32, t->along_l, t->nv, t->k, ld, x.data(), sig.data());
        for (size_t i = 0; i < nx; i++) xf[i] = (float)x[i];
        const unsigned gx = ci % 2 ? 16 : 3;
        if (t->f32)
            launch(xf.data(), sv, sl, t->nv, t->k, t->v_base, nvp, kp, sig.data(), t->h, &cs,
                   r.data(), gx);
        else
            launch(x.data(), sv, sl, t->nv, t->k, t->v_base, nvp, kp, sig.data(), t->h, &cs,
                   r.data(), gx);
        int64_t bad = 0;
        for (int l = 0; l < t->nmod; l++)
            for (int64_t v = 0; v < nvp; v++) {
                const int64_t gv = t->v_base + v;
                for (int64_t i = 0; i < kp; i++) {
                    const int b = r[((size_t)l * (size_t)nvp + (size_t)v) * (size_t)kp + (size_t)i];
                    if (gv < t->nv && i < t->k) {
                        const int p = cs.mod[l];
                        const int want = tn_oz2_residue(&cs, l, x[(size_t)(gv * sv + i * sl)],
                                                        t->h + sig[(size_t)gv]);
                        bad += p == 256 ? b != want : !((want - b) % p == 0 && 2 * abs(b) <= p - 1);
                    } else
                        bad += b != 0;
                }
            }
        int past = 0;
        for (int i = 0; i < 64; i++) past += r[nr + (size_t)i] != 0x5A;
        if (bad || past)
            printf("FAIL %s %s, nv %lld k %lld v_base %lld nvp %lld h %d, %d moduli: %lld bytes "
                   "wrong, %d written past the layout\n",
                   t->f32 ? "FP32" : "FP64", t->along_l ? "sl = 1" : "sv = 1", (long long)t->nv,
                   (long long)t->k, (long long)t->v_base, (long long)nvp, t->h, t->nmod,
                   (long long)bad, past);
        fails += bad || past;
    }
    printf("oz2_residues_emulate: %d of %d cases passed\n", nc - fails, nc);
    return fails != 0;
}
