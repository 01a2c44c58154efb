/* TCNLA_OZAKI_AUTO on the CPU backend (src/gemm/ozaki_auto.c): the
 * model's choices (the reference GPU's table, sm_90), the native products
 * it runs (the bits of NATIVE_FP64 / NATIVE_FP32, reported in
 * tcnla_info_t), the mode kept across calls, and bad inputs. The scheme's
 * side (a large square product through scheme 2) runs in
 * tests/gpu/test_gpu_ozaki_auto.c; on the CPU it would take minutes. */
#include "tcnla.h"
#include "test.h"
#include "testmat/testdata.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int set_mode(tcnla_handle_t h, tcnla_ozaki_mode_t mode, int scheme) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = mode;
    o.scheme = (tcnla_ozaki_scheme_t)scheme;
    return tcnla_set_ozaki_opts(h, &o);
}

static int predict(tcnla_handle_t h, int bits, int64_t m, int64_t n, int64_t k, double *tn,
                   double *to) {
    int native = -1;
    if (tcnla_ozaki_auto_predict(h, bits, m, n, k, &native, tn, to)) return -1;
    return native;
}

TEST(ozaki_auto_model_choices) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    double tn, to, tn2, to2;
    /* large square FP64 products: scheme 2 (measured 1.13x .. 1.52x DGEMM at 8192 .. 32768) */
    CHECK_EQ_INT(predict(h, 64, 16384, 16384, 16384, &tn, &to), 0);
    CHECK(to < tn && tn > 0.05 && tn < 0.5); /* DGEMM at 16384: about 0.16 s */
    CHECK_EQ_INT(predict(h, 64, 32768, 32768, 32768, NULL, NULL), 0);
    CHECK_EQ_INT(predict(h, 32, 16384, 16384, 16384, NULL, NULL), 0);
    /* small, skinny and short-k products: native */
    CHECK_EQ_INT(predict(h, 64, 64, 64, 64, &tn, &to), 1);
    CHECK(tn < to);
    CHECK_EQ_INT(predict(h, 64, 1024, 1024, 1024, NULL, NULL), 1);
    CHECK_EQ_INT(predict(h, 64, 16384, 16384, 256, NULL, NULL), 1);
    CHECK_EQ_INT(predict(h, 64, 16384, 256, 16384, NULL, NULL), 1);
    CHECK_EQ_INT(predict(h, 64, 256, 16384, 16384, NULL, NULL), 1);
    CHECK_EQ_INT(predict(h, 32, 256, 256, 256, NULL, NULL), 1);
    /* nothing to compute: native, and a finite native time */
    CHECK_EQ_INT(predict(h, 64, 0, 100, 100, &tn, &to), 1);
    CHECK(isfinite(tn) && isinf(to));
    CHECK_EQ_INT(predict(h, 64, 100, 100, 0, NULL, NULL), 1);
    /* the CPU handle uses the reference table: the same as no handle */
    CHECK_EQ_INT(predict(NULL, 64, 8192, 8192, 8192, &tn2, &to2), predict(h, 64, 8192, 8192, 8192, &tn, &to));
    CHECK(tn == tn2 && to == to2);
    /* the times grow with the product */
    predict(h, 64, 4096, 4096, 4096, &tn, &to);
    predict(h, 64, 8192, 4096, 4096, &tn2, &to2);
    CHECK(tn2 > tn && to2 > to);
    tcnla_destroy(h);
}

TEST(ozaki_auto_bad_inputs) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    int nat = 7;
    CHECK_EQ_INT(tcnla_ozaki_auto_predict(h, 16, 8, 8, 8, &nat, NULL, NULL), -2);
    CHECK_EQ_INT(tcnla_ozaki_auto_predict(h, 0, 8, 8, 8, &nat, NULL, NULL), -2);
    CHECK_EQ_INT(tcnla_ozaki_auto_predict(h, 64, -1, 8, 8, &nat, NULL, NULL), -3);
    CHECK_EQ_INT(tcnla_ozaki_auto_predict(h, 64, 8, -1, 8, &nat, NULL, NULL), -4);
    CHECK_EQ_INT(tcnla_ozaki_auto_predict(h, 64, 8, 8, -1, &nat, NULL, NULL), -5);
    CHECK_EQ_INT(nat, 7); /* untouched on failure */
    CHECK_EQ_INT(tcnla_ozaki_auto_predict(h, 64, 8, 8, 8, NULL, NULL, NULL), 0);
    /* modes: AUTO is 3, nothing above */
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = (tcnla_ozaki_mode_t)4;
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, &o), -2);
    o.mode = (tcnla_ozaki_mode_t)-1;
    CHECK_EQ_INT(tcnla_set_ozaki_opts(h, &o), -2);
    CHECK_EQ_INT(set_mode(h, TCNLA_OZAKI_AUTO, 0), 0);
    CHECK_EQ_INT(set_mode(h, TCNLA_OZAKI_AUTO, 2), 0);
    CHECK_EQ_INT(set_mode(h, TCNLA_OZAKI_AUTO, 3), -2);
    /* the GEMM argument checks come first, as in every mode */
    double A[4] = {1, 2, 3, 4}, C[4];
    CHECK_EQ_INT(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, 2, 2, 2, 1.0, A, 1,
                             A, 2, 0.0, C, 2), -10);
    CHECK_EQ_INT(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, -1, 2, 2, 1.0, A,
                             2, A, 2, 0.0, C, 2), -5);
    CHECK_EQ_INT(tcnla_dgemm(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, 2, 2, 2, 1.0, A, 2,
                             NULL, 2, 0.0, C, 2), -11);
    tcnla_destroy(h);
}

/* A shape the model gives to native: DGEMM's bits, NATIVE_FP64 in info,
 * the handle still in AUTO mode afterwards; SGEMM likewise with NATIVE_FP32. */
TEST(ozaki_auto_native_shapes_are_native_bits) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    const int64_t m = 37, n = 29, k = 61;
    REQUIRE(predict(h, 64, m, n, k, NULL, NULL) == 1 && predict(h, 32, m, n, k, NULL, NULL) == 1);
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *C = malloc(8 * m * n),
           *R = malloc(8 * m * n);
    float *Af = malloc(4 * m * k), *Bf = malloc(4 * k * n), *Cf = malloc(4 * m * n),
          *Rf = malloc(4 * m * n);
    REQUIRE(A && B && C && R && Af && Bf && Cf && Rf);
    tn_rand_phi(31, 1, 1.0, m * k, A);
    tn_rand_phi(31, 2, 1.0, k * n, B);
    for (int64_t i = 0; i < m * n; i++) C[i] = R[i] = 0.25 * (double)(i % 7);
    for (int64_t i = 0; i < m * k; i++) Af[i] = (float)A[i];
    for (int64_t i = 0; i < k * n; i++) Bf[i] = (float)B[i];
    for (int64_t i = 0; i < m * n; i++) Cf[i] = Rf[i] = (float)C[i];
    tcnla_info_t info;
    REQUIRE(tcnla_dgemm(h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_T, m, n, k / 2, 1.5, A,
                        m, B, n, -0.5, R, m) == 0);
    REQUIRE(set_mode(h, TCNLA_OZAKI_AUTO, 0) == 0);
    memset(&info, 0xff, sizeof info);
    CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_T, m, n, k / 2,
                                1.5, A, m, B, n, -0.5, C, m, &info), 0);
    CHECK_EQ_INT(info.method, TCNLA_GEMM_NATIVE_FP64);
    CHECK_EQ_INT(info.ozaki_scheme, 0);
    CHECK_EQ_INT(info.products, 1);
    CHECK_EQ_INT(info.fallbacks, 1); /* ran otherwise than asked */
    CHECK(memcmp(C, R, 8 * (size_t)(m * n)) == 0);
    tcnla_ozaki_opts_t o;
    REQUIRE(tcnla_get_ozaki_opts(h, &o) == 0);
    CHECK_EQ_INT(o.mode, TCNLA_OZAKI_AUTO);
    /* OZAKI_FP16 in AUTO mode: native too */
    for (int64_t i = 0; i < m * n; i++) C[i] = R[i] = 1.0;
    REQUIRE(tcnla_dgemm(h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, R, m) == 0);
    CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A,
                                m, B, k, 0.0, C, m, &info), 0);
    CHECK_EQ_INT(info.method, TCNLA_GEMM_NATIVE_FP64);
    CHECK(memcmp(C, R, 8 * (size_t)(m * n)) == 0);
    /* tcnla_sgemm: SGEMM's bits */
    REQUIRE(tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 2.0f, Af, m,
                        Bf, k, 1.0f, Rf, m) == 0);
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 2.0f,
                                Af, m, Bf, k, 1.0f, Cf, m, &info), 0);
    CHECK_EQ_INT(info.method, TCNLA_GEMM_NATIVE_FP32);
    CHECK(memcmp(Cf, Rf, 4 * (size_t)(m * n)) == 0);
    /* NaN in A: native as in DP mode, NaN propagated */
    A[3] = NAN;
    CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A,
                                m, B, k, 0.0, C, m, &info), 0);
    CHECK_EQ_INT(info.method, TCNLA_GEMM_NATIVE_FP64);
    CHECK(isnan(C[3]));
    /* DP mode on the same handle still takes scheme 2 for the same shape */
    A[3] = 0.5;
    REQUIRE(set_mode(h, TCNLA_OZAKI_DP, 0) == 0);
    CHECK_EQ_INT(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A,
                                m, B, k, 0.0, C, m, &info), 0);
    CHECK_EQ_INT(info.method, TCNLA_GEMM_OZAKI_INT8);
    CHECK_EQ_INT(info.ozaki_scheme, 2);
    free(A), free(B), free(C), free(R), free(Af), free(Bf), free(Cf), free(Rf);
    tcnla_destroy(h);
}
