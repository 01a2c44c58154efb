/* GPU tests of the Ozaki AUTO mode (src/gemm/ozaki_auto.c) on the CUDA
 * backend: a large square product takes scheme 2 and gives DP mode's bits;
 * small and skinny products give cuBLAS DGEMM's / SGEMM's bits, with
 * NATIVE_FP64 / NATIVE_FP32 reported; the model answers for the handle.
 * Every test skips when the build or the machine has no GPU. */
#include "../test.h"
#include "gpu_util.h"
#include "testmat/testdata.h"
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NEED_GPU(h)                                                                           \
    do {                                                                                      \
        if (!(h)) SKIP("no CUDA device (or CUDA not compiled in)");                          \
    } while (0)

static int set_mode(tcnla_handle_t h, tcnla_ozaki_mode_t mode) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = mode;
    return tcnla_set_ozaki_opts(h, &o);
}

/* C = op(A) op(B) (op N) on the GPU with device copies; f32: FP32 data. */
static int run(tcnla_handle_t g, int f32, tcnla_gemm_method_t meth, int64_t m, int64_t n,
               int64_t k, const double *A, const double *B, double *C, tcnla_info_t *info) {
    const size_t es = f32 ? 4 : 8, mk = (size_t)(m * k), kn = (size_t)(k * n),
                 mn = (size_t)(m * n);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    int st = tcnla_malloc(g, &dA, es * mk);
    if (!st) st = tcnla_malloc(g, &dB, es * kn);
    if (!st) st = tcnla_malloc(g, &dC, es * mn);
    float *t = f32 ? malloc(4 * (mk > kn ? (mk > mn ? mk : mn) : (kn > mn ? kn : mn))) : NULL;
    if (!st && f32 && !t) st = TCNLA_ERR_ALLOC;
    if (!st) {
        if (f32) {
            for (size_t i = 0; i < mk; i++) t[i] = (float)A[i];
            st = tcnla_memcpy(g, dA, t, 4 * mk, TCNLA_MEMCPY_HOST_TO_HANDLE);
            for (size_t i = 0; i < kn; i++) t[i] = (float)B[i];
            if (!st) st = tcnla_memcpy(g, dB, t, 4 * kn, TCNLA_MEMCPY_HOST_TO_HANDLE);
        } else {
            st = tcnla_memcpy(g, dA, A, 8 * mk, TCNLA_MEMCPY_HOST_TO_HANDLE);
            if (!st) st = tcnla_memcpy(g, dB, B, 8 * kn, TCNLA_MEMCPY_HOST_TO_HANDLE);
        }
    }
    if (!st)
        st = f32 ? tcnla_sgemm_ex(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, dA, m, dB, k,
                                  0.0f, dC, m, info)
                 : tcnla_dgemm_ex(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, dA, m, dB, k,
                                  0.0, dC, m, info);
    if (!st) {
        if (f32) {
            st = tcnla_memcpy(g, t, dC, 4 * mn, TCNLA_MEMCPY_HANDLE_TO_HOST);
            for (size_t i = 0; i < mn; i++) C[i] = t[i];
        } else {
            st = tcnla_memcpy(g, C, dC, 8 * mn, TCNLA_MEMCPY_HANDLE_TO_HOST);
        }
    }
    free(t);
    tcnla_free(g, dA);
    tcnla_free(g, dB);
    tcnla_free(g, dC);
    return st;
}

TEST(gpu_ozaki_auto_large_square_takes_scheme2) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    int nat = -1;
    REQUIRE(tcnla_ozaki_auto_predict(g, 64, 16384, 16384, 16384, &nat, NULL, NULL) == 0);
    CHECK_EQ_INT(nat, 0);
    /* the smallest square the model gives to the scheme (memory: 3 n^2 doubles) */
    int64_t n = 4096;
    while (n < 16384 && (tcnla_ozaki_auto_predict(g, 64, n, n, n, &nat, NULL, NULL), nat)) n *= 2;
    const size_t nn = (size_t)(n * n);
    double *A = malloc(8 * nn), *B = malloc(8 * nn), *C = malloc(8 * nn), *D = malloc(8 * nn);
    REQUIRE(A && B && C && D);
    tn_rand_phi(41, 1, 0.5, (int64_t)nn, A);
    tn_rand_phi(41, 2, 0.5, (int64_t)nn, B);
    tcnla_info_t info;
    REQUIRE(set_mode(g, TCNLA_OZAKI_AUTO) == 0);
    CHECK_EQ_INT(run(g, 0, TCNLA_GEMM_OZAKI_INT8, n, n, n, A, B, C, &info), 0);
    CHECK_EQ_INT(info.method, TCNLA_GEMM_OZAKI_INT8);
    CHECK_EQ_INT(info.ozaki_scheme, 2);
    CHECK_EQ_INT(info.fallbacks, 0);
    REQUIRE(set_mode(g, TCNLA_OZAKI_DP) == 0);
    CHECK_EQ_INT(run(g, 0, TCNLA_GEMM_OZAKI_INT8, n, n, n, A, B, D, &info), 0);
    CHECK(memcmp(C, D, 8 * nn) == 0); /* AUTO's scheme is DP mode, bit for bit */
    free(A), free(B), free(C), free(D);
    tcnla_destroy(g);
}

TEST(gpu_ozaki_auto_small_and_skinny_are_cublas) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    static const int64_t shapes[][3] = {{256, 256, 256}, {1000, 37, 513}, {4096, 4096, 64},
                                        {64, 2048, 2048}};
    for (int s = 0; s < 4; s++) {
        const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        for (int f32 = 0; f32 < 2; f32++) {
            int nat = -1;
            REQUIRE(tcnla_ozaki_auto_predict(g, f32 ? 32 : 64, m, n, k, &nat, NULL, NULL) == 0);
            CHECK_MSG(nat == 1, "%lld x %lld x %lld (FP%d): the model takes the scheme",
                      (long long)m, (long long)n, (long long)k, f32 ? 32 : 64);
            if (nat != 1) continue;
            double *A = malloc(8 * (size_t)(m * k)), *B = malloc(8 * (size_t)(k * n));
            double *C = malloc(8 * (size_t)(m * n)), *D = malloc(8 * (size_t)(m * n));
            REQUIRE(A && B && C && D);
            tn_rand_phi(42 + (uint64_t)s, 1, 1.0, m * k, A);
            tn_rand_phi(42 + (uint64_t)s, 2, 1.0, k * n, B);
            tcnla_info_t info;
            REQUIRE(set_mode(g, TCNLA_OZAKI_AUTO) == 0);
            CHECK_EQ_INT(run(g, f32, TCNLA_GEMM_OZAKI_INT8, m, n, k, A, B, C, &info), 0);
            CHECK_EQ_INT(info.method, f32 ? TCNLA_GEMM_NATIVE_FP32 : TCNLA_GEMM_NATIVE_FP64);
            CHECK_EQ_INT(info.ozaki_scheme, 0);
            CHECK_EQ_INT(run(g, f32, f32 ? TCNLA_GEMM_NATIVE_FP32 : TCNLA_GEMM_NATIVE_FP64, m, n,
                             k, A, B, D, &info),
                         0);
            CHECK(memcmp(C, D, 8 * (size_t)(m * n)) == 0);
            free(A), free(B), free(C), free(D);
        }
    }
    tcnla_destroy(g);
}
