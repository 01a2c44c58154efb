/* GPU tests of Ozaki scheme II's pipeline (src/backend/cuda/ozaki2_cuda.c:
 * op(B) and C in column blocks whose residues and reconstruction run on a
 * second stream beside the INT8 products): tcnla_dgemm / tcnla_sgemm through
 * OZAKI_INT8 scheme II in DP mode with the tuning's oz2_pipeline = 1 and 0
 * must give the same C bits and moduli count, on shapes that take the
 * pipeline (m n k >= 2^36, n >= 1024) with a ragged last block, transposes,
 * alpha, beta not 0 / 1 and ldc > m (the rows between m and ldc untouched),
 * with a workspace cap that gives the pipeline more and narrower blocks than
 * 4 and the sequential path column blocks of another width, and on a shape
 * below the rule (both in sequence). C is read back through the handle's
 * stream right after each call: a missing join shows as differing bits. A
 * planted failure midway (tn_cuda_ctx's oz2_pipe_fault) must be reported,
 * joined and leave the handle usable. */
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
#endif

#define NEED_GPU(h)                                                                           \
    do {                                                                                      \
        if (!(h)) SKIP("no CUDA device (or CUDA not compiled in)");                          \
    } while (0)

#ifdef TCNLA_HAVE_CUDA
static int oz2p_opts(tcnla_handle_t h, size_t cap) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = TCNLA_OZAKI_DP;
    o.scheme = TCNLA_OZAKI_SCHEME_2;
    o.workspace_cap = cap;
    return tcnla_set_ozaki_opts(h, &o);
}

/* One DGEMM (f32 0) or SGEMM (1) through scheme II DP on device copies of
 * the host operands; C in and out on the host (out after a failed call
 * too); *blocks: the pipeline's blocks of the call (0: in sequence). */
static int oz2p_gemm(tcnla_handle_t g, int f32, tcnla_op_t ta, tcnla_op_t tb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                     const void *B, int64_t ldb, double beta, void *C, int64_t ldc,
                     tcnla_info_t *info, int64_t *blocks) {
    const size_t es = f32 ? 4 : 8;
    const int64_t acols = ta == TCNLA_OP_N ? k : m, bcols = tb == TCNLA_OP_N ? n : k;
    const size_t ab = es * (size_t)(lda * acols), bb = es * (size_t)(ldb * bcols),
                 cb = es * (size_t)(ldc * n);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    *blocks = -1;
    int st = tcnla_malloc(g, &dA, ab);
    if (!st) st = tcnla_malloc(g, &dB, bb);
    if (!st) st = tcnla_malloc(g, &dC, cb);
    if (!st) st = tcnla_memcpy(g, dA, A, ab, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) st = tcnla_memcpy(g, dB, B, bb, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) st = tcnla_memcpy(g, dC, C, cb, TCNLA_MEMCPY_HOST_TO_HANDLE);
    int gst = st;
    if (!st) {
        g->cuda->oz2_pipe_blocks = -1;
        if (f32)
            st = tcnla_sgemm_ex(g, TCNLA_GEMM_OZAKI_INT8, ta, tb, m, n, k, (float)alpha, dA, lda,
                                dB, ldb, (float)beta, dC, ldc, info);
        else
            st = tcnla_dgemm_ex(g, TCNLA_GEMM_OZAKI_INT8, ta, tb, m, n, k, alpha, dA, lda, dB,
                                ldb, beta, dC, ldc, info);
        *blocks = g->cuda->oz2_pipe_blocks;
        gst = st;
        st = tcnla_memcpy(g, C, dC, cb, TCNLA_MEMCPY_HANDLE_TO_HOST);
    }
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dC);
    return gst ? gst : st;
}

typedef struct {
    int64_t m, n, k;
    tcnla_op_t ta, tb;
    double alpha, beta;
    size_t cap;         /* the workspace cap (0: none) */
    int64_t min_blocks; /* the pipeline's blocks at least (DGEMM; 0: in sequence) */
} oz2p_shape_t;

/* DGEMM and SGEMM of one shape with the pipeline on and off */
static void oz2p_case(tcnla_handle_t g, const oz2p_shape_t *s, uint64_t seed) {
    const int64_t lda = (s->ta == TCNLA_OP_N ? s->m : s->k) + 3;
    const int64_t ldb = (s->tb == TCNLA_OP_N ? s->k : s->n) + 1, ldc = s->m + 5;
    const int64_t acols = s->ta == TCNLA_OP_N ? s->k : s->m;
    const int64_t bcols = s->tb == TCNLA_OP_N ? s->n : s->k;
    const int64_t na = lda * acols, nb = ldb * bcols, nc = ldc * s->n;
    double *A = malloc(8 * (size_t)na), *B = malloc(8 * (size_t)nb);
    double *Ci = malloc(8 * (size_t)nc), *C0 = malloc(8 * (size_t)nc), *C1 = malloc(8 * (size_t)nc);
    if (!A || !B || !Ci || !C0 || !C1) {
        free(A), free(B), free(Ci), free(C0), free(C1);
        CHECK_MSG(0, "host memory for %lld x %lld x %lld", (long long)s->m, (long long)s->n,
                  (long long)s->k);
        return;
    }
    tn_rand_phi(seed, 1, 1.0, na, A);
    tn_rand_phi(seed, 2, 1.0, nb, B);
    CHECK_EQ_INT(oz2p_opts(g, s->cap), 0);
    for (int f32 = 0; f32 < 2; f32++) {
        if (f32) { /* the FP32 operands: the doubles rounded, in the same buffers */
            float *Af = (float *)A, *Bf = (float *)B;
            for (int64_t i = 0; i < na; i++) Af[i] = (float)A[i];
            for (int64_t i = 0; i < nb; i++) Bf[i] = (float)B[i];
        }
        const size_t es = f32 ? 4 : 8, cb = es * (size_t)nc;
        tn_rand_phi(seed, 3, 1.0, nc, Ci);
        if (f32)
            for (int64_t i = 0; i < nc; i++) ((float *)Ci)[i] = (float)Ci[i];
        memcpy(C0, Ci, cb), memcpy(C1, Ci, cb);
        tcnla_info_t i0, i1;
        memset(&i0, 0, sizeof i0), memset(&i1, 0, sizeof i1);
        int64_t b0 = -1, b1 = -1;
        GT_TUNE(g, oz2_pipeline, 1);
        const int s1 = oz2p_gemm(g, f32, s->ta, s->tb, s->m, s->n, s->k, s->alpha, A, lda, B, ldb,
                                 s->beta, C1, ldc, &i1, &b1);
        GT_TUNE(g, oz2_pipeline, 0);
        const int s0 = oz2p_gemm(g, f32, s->ta, s->tb, s->m, s->n, s->k, s->alpha, A, lda, B, ldb,
                                 s->beta, C0, ldc, &i0, &b0);
        GT_TUNE(g, oz2_pipeline, 1);
        CHECK_EQ_INT(s1, 0);
        CHECK_EQ_INT(s0, 0);
        CHECK(i0.ozaki_scheme == 2 && i1.ozaki_scheme == 2 && i0.ozaki_d == i1.ozaki_d);
        /* the path each took: off always in sequence; on as the rule says */
        CHECK_MSG(b0 == 0, "pipeline off: %lld blocks", (long long)b0);
        /* (the cap's narrower blocks need DGEMM's moduli count; SGEMM's,
         * fewer, may fit 4 blocks) */
        const int64_t want = f32 && s->cap ? 4 : s->min_blocks;
        if (want)
            CHECK_MSG(b1 >= want, "%s %lld x %lld x %lld: %lld pipeline blocks, want >= %lld",
                      f32 ? "sgemm" : "dgemm", (long long)s->m, (long long)s->n, (long long)s->k,
                      (long long)b1, (long long)want);
        else
            CHECK_MSG(b1 == 0, "below the rule: %lld pipeline blocks", (long long)b1);
        int64_t bad = 0, pad = 0;
        for (int64_t j = 0; j < s->n; j++)
            for (int64_t i = 0; i < ldc; i++) {
                const size_t o = es * (size_t)(i + j * ldc);
                if (i < s->m) bad += memcmp((char *)C0 + o, (char *)C1 + o, es) != 0;
                else
                    pad += memcmp((char *)C0 + o, (char *)Ci + o, es) != 0 ||
                           memcmp((char *)C1 + o, (char *)Ci + o, es) != 0;
            }
        CHECK_MSG(bad == 0 && pad == 0,
                  "%s %lldx%lldx%lld op %d%d cap %zu, %d moduli, %lld blocks: %lld elements "
                  "differ, %lld padding elements written",
                  f32 ? "sgemm" : "dgemm", (long long)s->m, (long long)s->n, (long long)s->k,
                  (int)s->ta, (int)s->tb, s->cap, i1.ozaki_d, (long long)b1, (long long)bad,
                  (long long)pad);
    }
    free(A), free(B), free(Ci), free(C0), free(C1);
}
#endif

TEST(gpu_oz2_pipe_same_bits) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    const oz2p_shape_t shapes[] = {
        /* 4 blocks of 2304 columns, the last 1288 */
        {4100, 8200, 3000, TCNLA_OP_N, TCNLA_OP_N, -0.75, 0.5, 0, 4},
        {8192, 8192, 8192, TCNLA_OP_N, TCNLA_OP_N, 1.25, -1.5, 0, 4},
        {5000, 4500, 4100, TCNLA_OP_T, TCNLA_OP_N, 0.5, 1.0, 0, 4},
        {3000, 6000, 4000, TCNLA_OP_N, TCNLA_OP_T, -2.0, 0.25, 0, 4},
        {2900, 5000, 5000, TCNLA_OP_T, TCNLA_OP_T, 1.0, 0.0, 0, 4},
        /* 500 MiB: DGEMM with 12 to 18 moduli pipelined in 7 or 11 blocks
         * (1280 or 768 columns), in sequence column blocks of 2050 or 1025 */
        {4100, 8200, 3000, TCNLA_OP_N, TCNLA_OP_N, -0.75, 0.5, (size_t)500 << 20, 5},
        /* below the rule: both in sequence */
        {2000, 3000, 1500, TCNLA_OP_N, TCNLA_OP_T, 0.5, 2.0, 0, 0},
        {20000, 1000, 4000, TCNLA_OP_N, TCNLA_OP_N, 1.5, 0.5, 0, 0}, /* n < 1024 */
    };
    for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++)
        oz2p_case(g, &shapes[si], 700 + (uint64_t)si);
    GT_TUNE(g, oz2_pipeline, 1);
#endif
    tcnla_destroy(g);
}

/* A failure midway (the planted fault in place of block 2's products): the
 * call reports it, the second stream is joined (C read back at once holds
 * block 0's columns, whose reconstruction was queued before the failure,
 * and the rest as given; the handle synchronizes), and the next call on the
 * handle gives the sequential path's bits. */
TEST(gpu_oz2_pipe_failure_joins) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    const int64_t m = 4100, n = 8200, k = 3000, ldc = m + 5, nc = ldc * n;
    double *A = malloc(8 * (size_t)(m * k)), *B = malloc(8 * (size_t)(k * n));
    double *Ci = malloc(8 * (size_t)nc), *C0 = malloc(8 * (size_t)nc), *C1 = malloc(8 * (size_t)nc);
    REQUIRE(A && B && Ci && C0 && C1);
    tn_rand_phi(801, 1, 1.0, m * k, A);
    tn_rand_phi(801, 2, 1.0, k * n, B);
    tn_rand_phi(801, 3, 1.0, nc, Ci);
    REQUIRE(oz2p_opts(g, 0) == TCNLA_SUCCESS);
    tcnla_info_t info;
    int64_t b0 = -1, b1 = -1;
    memcpy(C0, Ci, 8 * (size_t)nc);
    GT_TUNE(g, oz2_pipeline, 0);
    CHECK_EQ_INT(oz2p_gemm(g, 0, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 0.75, A, m, B, k, -0.5, C0, ldc,
                           &info, &b0),
                 0);
    GT_TUNE(g, oz2_pipeline, 1);
    memcpy(C1, Ci, 8 * (size_t)nc);
    g->cuda->oz2_pipe_fault = 3;
    const int sf = oz2p_gemm(g, 0, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 0.75, A, m, B, k, -0.5, C1,
                             ldc, &info, &b1);
    g->cuda->oz2_pipe_fault = 0;
    CHECK_EQ_INT(sf, TCNLA_ERR_INTERNAL);
    CHECK_EQ_INT(tcnla_synchronize(g), 0);
    CHECK_MSG(b1 == 4, "%lld pipeline blocks, want 4 (of 2304 columns)", (long long)b1);
    if (b1 == 4) {
        int64_t bad0 = 0, bad1 = 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < ldc; i++) {
                const int64_t o = i + j * ldc;
                if (j < 2304 && i < m) bad0 += memcmp(&C1[o], &C0[o], 8) != 0;
                else bad1 += memcmp(&C1[o], &Ci[o], 8) != 0;
            }
        CHECK_MSG(bad0 == 0 && bad1 == 0,
                  "after the failure: %lld elements of block 0 differ from the result, %lld "
                  "others were written",
                  (long long)bad0, (long long)bad1);
    }
    /* the handle goes on: the next pipelined call gives the same bits */
    memcpy(C1, Ci, 8 * (size_t)nc);
    CHECK_EQ_INT(oz2p_gemm(g, 0, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 0.75, A, m, B, k, -0.5, C1, ldc,
                           &info, &b1),
                 0);
    CHECK(b0 == 0 && b1 == 4);
    CHECK_MSG(memcmp(C0, C1, 8 * (size_t)nc) == 0, "after the failure: the next call differs");
    free(A), free(B), free(Ci), free(C0), free(C1);
#endif
    tcnla_destroy(g);
}
