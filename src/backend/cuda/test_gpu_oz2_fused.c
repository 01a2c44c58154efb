/* GPU tests of Ozaki scheme II's fused products (src/backend/cuda/kernels/
 * ozaki2_sm90.cu: the INT8 products of all moduli reduced modulo p_l inside
 * one wgmma kernel) against the cuBLASLt path (an INT8 GEMM and a reduction
 * pass per modulus), bit for bit:
 *  - the residue products themselves (tn_cuda_oz2_products with fused 1:
 *    clusters of two blocks, 2: one block per tile, and 0) on random residues with m / n tails, m or n below one tile, k not a
 *    multiple of 128, all 20 moduli, and the extreme INT32 sums (every
 *    residue -128, or -128 against 127, k at the INT32 limit); a wrong
 *    constant for one modulus must change that modulus's bytes and no other;
 *  - tcnla_dgemm / tcnla_sgemm through OZAKI_INT8 scheme II in DP mode with
 *    the tuning's oz2_fused = 1 and 0 on shapes with tails and transposes:
 *    the same C bits and the same moduli count.
 * (gpu_ozaki2_bitwise_vs_cpu, tests/gpu/test_gpu_ozaki.c, compares the
 * default path, fused on Hopper, with the CPU reference.) On a GPU that is
 * not compute capability 9.0 the fused kernel does not run: the products
 * test skips and the GEMM test compares the cuBLASLt path with itself. */
#include "test.h"
#include "gpu/gpu_util.h"
#include "tcnla.h"
#include "testmat/testdata.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TCNLA_HAVE_CUDA
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki2.h"
#endif

#ifdef TCNLA_HAVE_CUDA
/* 1 on a device where the fused kernel must run (compute capability 9.0) */
static int oz2f_hopper(tcnla_handle_t g) { return g->cuda->cc_major == 9 && g->cuda->cc_minor == 0; }

/* Q of both paths for residues made by fill (0 random, 1 all -128, 2 A -128
 * and B 127), the fused one as tn_cuda_oz2_products' fused = variant (1:
 * clusters of two blocks, 2: one block per tile); with fault >= 0, the fused
 * path runs with q_fault + 1 in place of q_fault. Returns the bytes that
 * differ per modulus in diff[] (NULL: not kept) and their total, or -1 when
 * a step failed. */
static int64_t oz2f_compare(tcnla_handle_t g, int variant, int nmod, int64_t mbp, int64_t nbp,
                            int64_t kp, int fill, uint64_t seed, int fault, int64_t *diff) {
    struct tn_cuda_ctx *c = g->cuda;
    tn_oz2_consts_t cs, cf;
    tn_oz2_consts(nmod, &cs);
    cf = cs;
    if (fault >= 0) cf.qinv[fault] = (cf.qinv[fault] + 1) % cf.mod[fault];
    const size_t na = (size_t)nmod * (size_t)mbp * (size_t)kp;
    const size_t nb = (size_t)nmod * (size_t)nbp * (size_t)kp;
    const size_t nq = (size_t)nmod * (size_t)mbp * (size_t)nbp;
    signed char *hA = malloc(na), *hB = malloc(nb);
    unsigned char *q0 = malloc(nq), *q1 = malloc(nq);
    void *dA = NULL, *dB = NULL, *dP = NULL, *dQ0 = NULL, *dQ1 = NULL;
    int64_t bad = -1;
    if (!hA || !hB || !q0 || !q1) goto out;
    uint64_t s = seed;
    for (size_t i = 0; i < na; i++)
        hA[i] = fill ? (signed char)-128 : (signed char)(int)((gt_next(&s) >> 56) - 128);
    for (size_t i = 0; i < nb; i++)
        hB[i] = fill == 1 ? (signed char)-128
                : fill == 2 ? (signed char)127
                            : (signed char)(int)((gt_next(&s) >> 56) - 128);
    if (cudaMalloc(&dA, na) || cudaMalloc(&dB, nb) || cudaMalloc(&dP, 4 * (size_t)mbp * nbp) ||
        cudaMalloc(&dQ0, nq) || cudaMalloc(&dQ1, nq))
        goto out;
    if (cudaMemcpy(dA, hA, na, cudaMemcpyHostToDevice) ||
        cudaMemcpy(dB, hB, nb, cudaMemcpyHostToDevice) || cudaMemset(dQ0, 0xEE, nq) ||
        cudaMemset(dQ1, 0x77, nq))
        goto out;
    if (tn_cuda_oz2_products(c, 0, &cs, mbp, nbp, kp, dA, dB, dP, dQ0)) goto out;
    if (tn_cuda_oz2_products(c, variant, &cf, mbp, nbp, kp, dA, dB, NULL, dQ1)) goto out;
    if (cudaStreamSynchronize(c->stream) || cudaMemcpy(q0, dQ0, nq, cudaMemcpyDeviceToHost) ||
        cudaMemcpy(q1, dQ1, nq, cudaMemcpyDeviceToHost))
        goto out;
    bad = 0;
    for (int l = 0; l < nmod; l++) {
        const size_t at = (size_t)l * (size_t)mbp * (size_t)nbp;
        int64_t d = 0;
        for (size_t i = 0; i < (size_t)mbp * (size_t)nbp; i++) d += q0[at + i] != q1[at + i];
        if (diff) diff[l] = d;
        bad += d;
    }
out:
    cudaGetLastError();
    cudaFree(dA), cudaFree(dB), cudaFree(dP), cudaFree(dQ0), cudaFree(dQ1);
    free(hA), free(hB), free(q0), free(q1);
    return bad;
}
#endif

TEST(gpu_oz2_fused_products_same_bytes) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    const int hop = oz2f_hopper(g);
    const int ok = tn_cuda_oz2_fused_ok(g->cuda, 15, 4096, 4096, 4096);
    printf("    cc %d.%d, fused kernel %s\n", g->cuda->cc_major, g->cuda->cc_minor,
           ok ? "available" : "not available");
    CHECK(ok == hop);
    /* never beyond one INT32 k-block, nor with a modulus count or sizes it cannot take */
    CHECK(!tn_cuda_oz2_fused_ok(g->cuda, 15, 4096, 4096, (int64_t)TN_OZ2_KBLOCK + 32 - 16));
    CHECK(!tn_cuda_oz2_fused_ok(g->cuda, 0, 64, 64, 64));
    CHECK(!tn_cuda_oz2_fused_ok(g->cuda, TN_OZ2_MAXN + 1, 64, 64, 64));
    CHECK(!tn_cuda_oz2_fused_ok(g->cuda, 15, 48, 64, 64));
    if (!hop) {
        tcnla_destroy(g);
        SKIP("not compute capability 9.0: no fused kernel");
    }
    /* mbp x nbp x kp: tails of both tiles (128 x 256), below one tile, k
     * not a multiple of the 128-byte stage */
    const int64_t shapes[][4] = {{15, 1024, 800, 1504}, {20, 96, 288, 160},  {12, 416, 32, 32},
                                 {16, 32, 1056, 4128},  {15, 4096, 4096, 4096}, {13, 640, 544, 96}};
    for (int v = 1; v <= 2; v++) {
        for (int i = 0; i < 6; i++) {
            const int64_t *s = shapes[i];
            int64_t bad =
                oz2f_compare(g, v, (int)s[0], s[1], s[2], s[3], 0, 40 + (uint64_t)i, -1, NULL);
            CHECK_MSG(bad == 0, "variant %d, %d moduli, %lld x %lld x %lld: %lld bytes differ", v,
                      (int)s[0], (long long)s[1], (long long)s[2], (long long)s[3], (long long)bad);
        }
        /* the extreme sums: |acc| up to 2^14 x 131040 < 2^31, both signs */
        for (int fill = 1; fill <= 2; fill++) {
            int64_t bad = oz2f_compare(g, v, 20, 64, 32, 131040, fill, 0, -1, NULL);
            CHECK_MSG(bad == 0, "variant %d, extreme fill %d: %lld bytes differ", v, fill,
                      (long long)bad);
        }
        /* the comparison can fail: a wrong q_3 changes modulus 3's bytes only */
        int64_t diff[TN_OZ2_MAXN];
        int64_t bad = oz2f_compare(g, v, 15, 160, 288, 416, 0, 77, 3, diff);
        CHECK(bad > 0);
        if (bad > 0) {
            int others = 0;
            for (int l = 0; l < 15; l++) others += l != 3 && diff[l] != 0;
            CHECK_MSG(diff[3] > 160 * 288 / 2 && others == 0,
                      "planted fault: %lld bytes of modulus 3 differ, %d other moduli",
                      (long long)diff[3], others);
        }
    }
#endif
    tcnla_destroy(g);
}

#ifdef TCNLA_HAVE_CUDA
static int oz2f_opts(tcnla_handle_t h) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = TCNLA_OZAKI_DP;
    o.scheme = TCNLA_OZAKI_SCHEME_2;
    return tcnla_set_ozaki_opts(h, &o);
}

/* C of one DGEMM (f32 0) or SGEMM (1) through scheme II DP on g, device
 * copies of host operands; C in and out on the host. */
static int oz2f_gemm(tcnla_handle_t g, int f32, tcnla_op_t ta, tcnla_op_t tb, int64_t m,
                     int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb,
                     void *C, int64_t ldc, tcnla_info_t *info) {
    const size_t es = f32 ? 4 : 8;
    const int64_t acols = ta == TCNLA_OP_N ? k : m, bcols = tb == TCNLA_OP_N ? n : k;
    const size_t ab = es * (size_t)(lda * acols), bb = es * (size_t)(ldb * bcols),
                 cb = es * (size_t)(ldc * n);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    int st = tcnla_malloc(g, &dA, ab);
    if (!st) st = tcnla_malloc(g, &dB, bb);
    if (!st) st = tcnla_malloc(g, &dC, cb);
    if (!st) st = tcnla_memcpy(g, dA, A, ab, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) st = tcnla_memcpy(g, dB, B, bb, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) st = tcnla_memcpy(g, dC, C, cb, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) {
        if (f32)
            st = tcnla_sgemm_ex(g, TCNLA_GEMM_OZAKI_INT8, ta, tb, m, n, k, 1.25f, dA, lda, dB, ldb,
                                0.5f, dC, ldc, info);
        else
            st = tcnla_dgemm_ex(g, TCNLA_GEMM_OZAKI_INT8, ta, tb, m, n, k, -0.75, dA, lda, dB, ldb,
                                0.5, dC, ldc, info);
    }
    if (!st) st = tcnla_memcpy(g, C, dC, cb, TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dC);
    return st;
}
#endif

TEST(gpu_oz2_fused_gemm_same_bits) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    REQUIRE(oz2f_opts(g) == TCNLA_SUCCESS);
    typedef struct {
        int64_t m, n, k;
        tcnla_op_t ta, tb;
    } sh_t;
    const sh_t shapes[] = {{1000, 777, 1500, TCNLA_OP_N, TCNLA_OP_N},
                           {4096, 4096, 4096, TCNLA_OP_N, TCNLA_OP_N},
                           {100, 3000, 700, TCNLA_OP_T, TCNLA_OP_N},
                           {2500, 50, 1111, TCNLA_OP_N, TCNLA_OP_T},
                           {37, 29, 61, TCNLA_OP_T, TCNLA_OP_T},
                           {300, 260, 20000, TCNLA_OP_N, TCNLA_OP_N}};
    for (int si = 0; si < 6; si++) {
        const sh_t *s = &shapes[si];
        const int64_t lda = (s->ta == TCNLA_OP_N ? s->m : s->k) + 3;
        const int64_t ldb = (s->tb == TCNLA_OP_N ? s->k : s->n) + 1, ldc = s->m + 2;
        const int64_t acols = s->ta == TCNLA_OP_N ? s->k : s->m;
        const int64_t bcols = s->tb == TCNLA_OP_N ? s->n : s->k;
        double *A = malloc(8 * (size_t)(lda * acols)), *B = malloc(8 * (size_t)(ldb * bcols));
        double *C0 = malloc(8 * (size_t)(ldc * s->n)), *C1 = malloc(8 * (size_t)(ldc * s->n));
        REQUIRE(A && B && C0 && C1);
        tn_rand_phi(500 + (uint64_t)si, 1, 1.0, lda * acols, A);
        tn_rand_phi(500 + (uint64_t)si, 2, 1.0, ldb * bcols, B);
        for (int f32 = 0; f32 < 2; f32++) {
            /* the FP32 operands: the doubles rounded, in the same buffers */
            if (f32) {
                float *Af = (float *)A, *Bf = (float *)B;
                for (int64_t i = 0; i < lda * acols; i++) Af[i] = (float)A[i];
                for (int64_t i = 0; i < ldb * bcols; i++) Bf[i] = (float)B[i];
            }
            const size_t es = f32 ? 4 : 8, cb = es * (size_t)(ldc * s->n);
            tn_rand_phi(9, 3, 1.0, ldc * s->n, C0);
            if (f32)
                for (int64_t i = 0; i < ldc * s->n; i++) ((float *)C0)[i] = (float)C0[i];
            memcpy(C1, C0, cb);
            tcnla_info_t i0, i1;
            memset(&i0, 0, sizeof i0), memset(&i1, 0, sizeof i1);
            GT_TUNE(g, oz2_fused, 1);
            const int s1 = oz2f_gemm(g, f32, s->ta, s->tb, s->m, s->n, s->k, A, lda, B, ldb, C1,
                                     ldc, &i1);
            GT_TUNE(g, oz2_fused, 0);
            const int s0 = oz2f_gemm(g, f32, s->ta, s->tb, s->m, s->n, s->k, A, lda, B, ldb, C0,
                                     ldc, &i0);
            CHECK_EQ_INT(s1, 0);
            CHECK_EQ_INT(s0, 0);
            CHECK(i0.ozaki_scheme == 2 && i1.ozaki_scheme == 2 && i0.ozaki_d == i1.ozaki_d);
            int64_t bad = 0;
            for (int64_t i = 0; i < ldc * s->n; i++)
                bad += memcmp((char *)C0 + es * (size_t)i, (char *)C1 + es * (size_t)i, es) != 0;
            CHECK_MSG(bad == 0, "%s %lldx%lldx%lld op %d%d, %d moduli: %lld elements differ",
                      f32 ? "sgemm" : "dgemm", (long long)s->m, (long long)s->n,
                      (long long)s->k, (int)s->ta, (int)s->tb, i1.ozaki_d, (long long)bad);
        }
        free(A), free(B), free(C0), free(C1);
    }
    GT_TUNE(g, oz2_fused, 1);
#endif
    tcnla_destroy(g);
}
