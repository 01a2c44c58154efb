/* What ran, reported per call (tcnla_info_t): the _ex GEMMs and the drivers'
 * opts.info, on the CPU backend. */
#include "tcnla.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tcnla_handle_t cpu(void) {
    tcnla_handle_t h = NULL;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    return h;
}

#define BIT(m) ((uint32_t)1 << (m))

TEST(info_gemm_reports_the_method_that_ran) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 24, N = 20, K = 32 };
    float A[M * K], B[K * N], C[M * N];
    tcnla_rand_uniform(3, 1, -1, 1, M * K, A);
    tcnla_rand_uniform(3, 2, -1, 1, K * N, B);
    tcnla_info_t info;
    memset(&info, 0x5a, sizeof info);
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A, M,
                                B, K, 0, C, M, &info),
                 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_FP16 && info.products == 1 && info.fallbacks == 0);
    CHECK(info.methods == BIT(TCNLA_GEMM_TCEC_FP16) && info.ozaki_scheme == 0);
    /* a row below the split's range: computed on exactly scaled copies, and
     * said so; with exact scaling off, the fallback policy runs TCEC_TF32
     * and says so */
    for (int p = 0; p < K; p++) A[3 + p * M] = ldexpf(A[3 + p * M], -40);
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A, M,
                                B, K, 0, C, M, &info),
                 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_FP16 && info.scaled == 1 && info.fallbacks == 0);
    tcnla_tuning_t tu;
    tcnla_get_tuning(h, &tu);
    tu.exact_scaling = 0;
    REQUIRE(tcnla_set_tuning(h, &tu) == 0);
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A, M,
                                B, K, 0, C, M, &info),
                 TCNLA_ERR_RANGE);
    CHECK(info.products == 0); /* written on failure too: nothing ran */
    CHECK(tcnla_set_range_policy(h, TCNLA_RANGE_FALLBACK) == 0);
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A, M,
                                B, K, 0, C, M, &info),
                 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_TF32 && info.products == 1 && info.fallbacks == 1);
    /* NaN: the native product, so that it propagates as in SGEMM */
    A[0] = NAN;
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A,
                                M, B, K, 0, C, M, &info),
                 0);
    CHECK(info.method == TCNLA_GEMM_NATIVE_FP32 && info.fallbacks == 1);
    /* the handle keeps nothing of it: a later call on another method reports its own */
    A[0] = 0.5f;
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A,
                                M, B, K, 0, C, M, &info),
                 0);
    CHECK(info.method == TCNLA_GEMM_NATIVE_FP32 && info.fallbacks == 0);
    /* the Ozaki scheme's counts (DP mode, OZAKI_INT8: scheme II, moduli) */
    double Ad[M * K], Bd[K * N], Cd[M * N];
    for (int i = 0; i < M * K; i++) Ad[i] = A[i];
    for (int i = 0; i < K * N; i++) Bd[i] = B[i];
    CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1.0, Ad,
                                M, Bd, K, 0.0, Cd, M, &info),
                 0);
    CHECK(info.method == TCNLA_GEMM_OZAKI_INT8 && info.ozaki_scheme == 2 && info.ozaki_d >= 2);
    CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1.0, Ad,
                                M, Bd, K, 0.0, Cd, M, &info),
                 0);
    CHECK(info.ozaki_scheme == 1 && info.ozaki_d >= 2 && info.ozaki_slices_a >= 1 &&
          info.ozaki_slices_b >= 1);
    /* NULL info is allowed */
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A,
                                M, B, K, 0, C, M, NULL),
                 0);
    tcnla_destroy(h);
}

/* The drivers count every product they run: RSVD on the CPU runs the
 * projection, two per power iteration, B^T = A^T Q and the two products
 * of its last step (VT and U). */
TEST(info_drivers_count_their_products) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 120, N = 90, K = 6 };
    float *A = malloc(sizeof(float) * M * N);
    tcnla_rand_normal(5, 1, 0, 1, M * N, A);
    float U[M * K], S[K], VT[K * N];
    for (int q = 0; q <= 2; q++) {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        tcnla_info_t info;
        o.rank = K, o.oversampling = 4, o.power_iters = q;
        o.proj_method = TCNLA_GEMM_NATIVE_FP32, o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        o.random_format = TCNLA_FMT_FP32;
        o.info = &info;
        CHECK_EQ_INT(tcnla_rsvd(h, &o, M, N, A, M, U, M, S, VT, K), 0);
        CHECK_MSG(info.products == 4 + 2 * q, "q = %d: %d products", q, info.products);
        CHECK(info.fallbacks == 0 && info.methods == BIT(TCNLA_GEMM_NATIVE_FP32));
    }
    /* the products of another method show in `methods` */
    {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        tcnla_info_t info;
        o.rank = K, o.oversampling = 4, o.power_iters = 0;
        o.proj_method = TCNLA_GEMM_TF32, o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        o.random_format = TCNLA_FMT_FP32;
        o.info = &info;
        CHECK_EQ_INT(tcnla_rsvd(h, &o, M, N, A, M, U, M, S, VT, K), 0);
        CHECK(info.products == 4);
        CHECK(info.methods == (BIT(TCNLA_GEMM_TF32) | BIT(TCNLA_GEMM_NATIVE_FP32)));
    }
    /* randLRA (no refinement, p = 0: Q and A^T Q are the factors): two products */
    {
        tcnla_lra_opts_t o = tcnla_lra_opts_default();
        tcnla_info_t info;
        float X[M * K], Y[N * K];
        o.rank = K, o.oversampling = 0, o.refine = 0, o.tgemm = TCNLA_TGEMM_NONE;
        o.info = &info;
        CHECK_EQ_INT(tcnla_lra(h, &o, M, N, A, M, X, M, Y, N), 0);
        CHECK(info.products == 2 && info.methods == BIT(TCNLA_GEMM_NATIVE_FP32));
    }
    /* RP-HOSVD of an order-3 tensor: a projection per mode, a core product per mode */
    {
        const int64_t dims[3] = {8, 7, 6};
        float *T = malloc(sizeof(float) * 8 * 7 * 6), core[3 * 3 * 3], Q0[8 * 3], Q1[7 * 3],
              Q2[6 * 3];
        float *const Q[3] = {Q0, Q1, Q2};
        tcnla_rand_normal(6, 1, 0, 1, 8 * 7 * 6, T);
        tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
        tcnla_info_t info;
        o.ranks[0] = o.ranks[1] = o.ranks[2] = 3;
        o.proj_method = o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        o.random_format = TCNLA_FMT_FP32;
        o.info = &info;
        CHECK_EQ_INT(tcnla_hosvd(h, &o, 3, dims, T, core, Q), 0);
        /* the middle mode's projection is a batch of slab products, one per slab */
        CHECK_MSG(info.products == 1 + 6 + 1 + 3, "%d products", info.products);
        CHECK(info.methods == BIT(TCNLA_GEMM_NATIVE_FP32) && info.fallbacks == 0);
        free(T);
    }
    free(A);
    tcnla_destroy(h);
}
