/* GPU tests of Ozaki scheme II's residue kernel (src/backend/cuda/kernels/
 * ozaki2_kernels.cu: k_residues through tn_oz2_residues) over the whole
 * padded layout R[(l nvp + v) kp + i] (zero outside nv, k): every byte
 * checked against the CPU reference tn_oz2_residue (the same residue modulo
 * p_l, centred: |r| <= (p_l - 1) / 2; the CPU's byte for p_l = 256):
 *  - FP64 and FP32 operands, both layouts (the elements of a vector
 *    contiguous, sl = 1, or the vectors contiguous, sv = 1), leading
 *    dimensions that are not multiples of anything, nv and k with tails of
 *    the 16 x 128 tile (kp ending inside a tile), k past 16 column tiles
 *    (blocks that loop over tiles), a v_base inside the operand, nvp a
 *    multiple of 16 but not of 32, h on both sides of the 2^36 split
 *    (h + 1 <= 36 and above, up to 79), 1 to 20 moduli;
 *  - the data: per-vector exponents over a wide range with sig = -exponent,
 *    zeros, FP64 subnormals, values at the extremes of |y| < 2^h;
 *  - the launcher's checks: a misaligned R, nvp not a multiple of 16, kp not
 *    a multiple of 32, no moduli are refused with nothing written; no byte
 *    past the layout is written;
 *  - the comparison can fail: a wrong 2^36 mod p_3 changes modulus 3's bytes
 *    and no other's. */
#include "test.h"
#include "gpu/gpu_util.h"
#include "tcnla.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TCNLA_HAVE_CUDA
#include "backend/cuda/kernels/ozaki2_launch.h"
#include "oz2_residue_cases.h"
#include "gemm/ozaki2.h"

typedef struct {
    int f32, along_l;  /* FP32 data; the elements of a vector contiguous (sl = 1) */
    int64_t nv, k;     /* the operand: nv vectors of length k */
    int64_t v_base;    /* the first vector of the call */
    int64_t nvp;       /* vectors in R (a multiple of 16), 0: rup(nv - v_base, 32) */
    int h, nmod;
} rcase_t;

#define RCANARY 64 /* bytes after the layout that must stay untouched */

/* 1 when byte b is the kernels' residue of x 2^s modulo p_l: congruent to
 * the CPU's (tn_oz2_residue, in [-128, 127]) and centred, |b| <= (p - 1) / 2
 * (the rounded quotient), or the CPU's byte itself for p = 256 */
static int res_ok(const tn_oz2_consts_t *c, int l, double x, int s, int b) {
    const int want = tn_oz2_residue(c, l, x, s), p = c->mod[l];
    if (p == 256) return b == want;
    return (want - b) % p == 0 && 2 * abs(b) <= p - 1;
}

/* Runs tn_oz2_residues (with cs's constants, or cf's where fault >= 0: a
 * wrong 2^36 mod p_fault) on the case's data and checks every byte of the
 * layout against the CPU: the bytes that fail per modulus in diff (may be
 * NULL), their total returned; -1 when a step failed, -2 when a byte past
 * the layout changed. */
static int64_t res_compare(const rcase_t *t, uint64_t seed, int fault, int64_t *diff) {
    tn_oz2_consts_t cs, cf;
    tn_oz2_consts(t->nmod, &cs);
    cf = cs;
    if (fault >= 0) cf.pw[fault][3] = cf.pw[fault][3] == 1.0f ? 2.0f : 1.0f;
    const int64_t nvc = t->nv - t->v_base;
    const int64_t nvp = t->nvp ? t->nvp : (nvc + 31) / 32 * 32, kp = (t->k + 31) / 32 * 32;
    const int64_t ld = t->along_l ? t->k + 3 : t->nv + 5;
    const int64_t sv = t->along_l ? ld : 1, sl = t->along_l ? 1 : ld;
    const size_t nx = (size_t)(ld * (t->along_l ? t->nv : t->k)), es = t->f32 ? 4 : 8;
    const size_t nr = (size_t)t->nmod * (size_t)nvp * (size_t)kp;
    double *x = malloc(8 * nx);
    void *hx = malloc(es * nx);
    int *sig = malloc(4 * (size_t)t->nv);
    signed char *r = malloc(nr + RCANARY);
    void *dX = NULL, *dS = NULL, *dR = NULL;
    int64_t bad = -1;
    if (!x || !hx || !sig || !r) goto out;
    oz2c_fill(seed, t->f32, t->along_l, t->nv, t->k, ld, x, sig);
    for (size_t i = 0; i < nx; i++) {
        if (t->f32) ((float *)hx)[i] = (float)x[i];
        else ((double *)hx)[i] = x[i];
    }
    if (cudaMalloc(&dX, es * nx) || cudaMalloc(&dS, 4 * (size_t)t->nv) ||
        cudaMalloc(&dR, nr + RCANARY))
        goto out;
    if (cudaMemcpy(dX, hx, es * nx, cudaMemcpyHostToDevice) ||
        cudaMemcpy(dS, sig, 4 * (size_t)t->nv, cudaMemcpyHostToDevice) ||
        cudaMemset(dR, 0x5A, nr + RCANARY))
        goto out;
    if (tn_oz2_residues(dX, t->f32, sv, sl, t->nv, t->k, t->v_base, nvp, kp, (const int *)dS,
                        t->h, t->h + 1, &cf, dR, 0))
        goto out;
    if (cudaDeviceSynchronize() || cudaMemcpy(r, dR, nr + RCANARY, cudaMemcpyDeviceToHost))
        goto out;
    bad = 0;
    for (int l = 0; l < t->nmod; l++) {
        int64_t d = 0;
        for (int64_t v = 0; v < nvp; v++) {
            const int64_t gv = t->v_base + v;
            const signed char *rr = r + ((size_t)l * (size_t)nvp + (size_t)v) * (size_t)kp;
            for (int64_t i = 0; i < kp; i++)
                d += gv < t->nv && i < t->k
                         ? !res_ok(&cs, l, x[gv * sv + i * sl], t->h + sig[gv], rr[i])
                         : rr[i] != 0;
        }
        if (diff) diff[l] = d;
        bad += d;
    }
    for (int i = 0; i < RCANARY; i++)
        if (r[nr + (size_t)i] != 0x5A) bad = -2;
out:
    cudaGetLastError();
    cudaFree(dX), cudaFree(dS), cudaFree(dR);
    free(x), free(hx), free(sig), free(r);
    return bad;
}
#endif

TEST(gpu_ozaki2_residues_kernel_vs_cpu) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    /* f32, along_l, nv, k, v_base, nvp, h, moduli */
    const rcase_t cases[] = {
        {0, 1, 37, 61, 0, 0, 60, 16},     {0, 0, 37, 61, 0, 0, 60, 16},
        {0, 0, 33, 1030, 0, 0, 79, 20},   {0, 1, 33, 1030, 0, 0, 79, 20},
        {0, 0, 19, 2049, 0, 0, 35, 3},    {0, 1, 19, 2049, 0, 0, 36, 3},
        {0, 1, 70, 3, 0, 0, 50, 8},       {0, 0, 5, 70, 0, 0, 20, 1},
        {0, 0, 64, 256, 0, 0, 60, 15},    {0, 1, 64, 256, 0, 0, 60, 15}, /* whole tiles */
        {0, 0, 48, 4100, 0, 0, 60, 15},   {0, 1, 48, 4100, 0, 0, 30, 15}, /* > 16 tiles */
        {0, 0, 100, 300, 48, 64, 60, 16}, {0, 1, 100, 300, 48, 64, 60, 16}, /* v_base */
        {0, 1, 90, 200, 64, 48, 40, 7},                                   /* nvp % 32 = 16 */
        {1, 1, 45, 1100, 0, 0, 30, 7},    {1, 0, 45, 1100, 0, 0, 30, 7},
        {1, 1, 45, 1100, 0, 0, 60, 16},   {1, 0, 45, 1100, 0, 0, 60, 16},
        {1, 0, 128, 512, 0, 0, 24, 12},   {1, 1, 17, 33, 0, 0, 79, 20}};
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < nc; i++) {
        const rcase_t *t = &cases[i];
        const int64_t nvp = t->nvp ? t->nvp : (t->nv - t->v_base + 31) / 32 * 32;
        const int64_t bad = res_compare(t, 500 + (uint64_t)i, -1, NULL);
        CHECK_MSG(bad == 0, "%s %s, nv %lld k %lld v_base %lld nvp %lld h %d, %d moduli: %lld%s",
                  t->f32 ? "FP32" : "FP64", t->along_l ? "sl = 1" : "sv = 1", (long long)t->nv,
                  (long long)t->k, (long long)t->v_base, (long long)nvp, t->h, t->nmod,
                  (long long)bad, bad == -2 ? " (wrote past the layout)" : " bytes wrong");
    }
    /* the comparison can fail: a wrong constant for modulus 3 */
    for (int h = 30; h <= 60; h += 30) {
        const rcase_t t = {0, 1, 40, 300, 0, 0, h, 10};
        int64_t diff[TN_OZ2_MAXN] = {0};
        const int64_t bad = res_compare(&t, 77, 3, diff);
        int others = 0;
        for (int l = 0; l < 10; l++) others += l != 3 && diff[l] != 0;
        /* h = 30: the constant is unused (ah = 0), nothing changes */
        if (h == 30) CHECK_MSG(bad == 0, "h 30: %lld bytes differ", (long long)bad);
        else
            CHECK_MSG(bad > 0 && diff[3] > 40 * 300 / 2 && others == 0,
                      "planted fault: %lld bytes of modulus 3 differ, %d other moduli",
                      (long long)(bad > 0 ? diff[3] : bad), others);
    }
    /* refused, nothing written */
    {
        tn_oz2_consts_t cs;
        tn_oz2_consts(8, &cs);
        double *dX = NULL;
        int *dS = NULL;
        signed char *dR = NULL;
        const size_t nr = 8 * 64 * 128 + 64;
        if (!cudaMalloc((void **)&dX, 8 * 64 * 100) && !cudaMalloc((void **)&dS, 4 * 64) &&
            !cudaMalloc((void **)&dR, nr)) {
            cudaMemset(dX, 0, 8 * 64 * 100), cudaMemset(dS, 0, 4 * 64);
            cudaMemset(dR, 0x5A, nr);
            CHECK(tn_oz2_residues(dX, 0, 100, 1, 64, 100, 0, 64, 128, dS, 60, 61, &cs, dR + 1, 0) != 0);
            CHECK(tn_oz2_residues(dX, 0, 100, 1, 64, 100, 0, 40, 128, dS, 60, 61, &cs, dR, 0) != 0);
            CHECK(tn_oz2_residues(dX, 0, 100, 1, 64, 100, 0, 64, 112, dS, 60, 61, &cs, dR, 0) != 0);
            CHECK(tn_oz2_residues(dX, 0, 100, 1, 64, 100, 0, 64, 128, dS, 79, 81, &cs, dR, 0) != 0);
            tn_oz2_consts_t c0 = cs;
            c0.n = 0;
            CHECK(tn_oz2_residues(dX, 0, 100, 1, 64, 100, 0, 64, 128, dS, 60, 61, &c0, dR, 0) != 0);
            signed char *h = malloc(nr);
            int untouched = 0;
            if (h && !cudaDeviceSynchronize() && !cudaMemcpy(h, dR, nr, cudaMemcpyDeviceToHost)) {
                untouched = 1;
                for (size_t i = 0; i < nr; i++) untouched &= h[i] == 0x5A;
            }
            CHECK_MSG(untouched, "a refused call wrote to R");
            free(h);
        } else
            CHECK_MSG(0, "cudaMalloc failed");
        cudaFree(dX), cudaFree(dS), cudaFree(dR);
        cudaGetLastError();
    }
#endif
    tcnla_destroy(g);
}
