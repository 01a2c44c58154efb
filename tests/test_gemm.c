/* CPU GEMMs of every method: argument forms, edge cases, NaN/Inf, range
 * handling and the accuracy ratios against NATIVE_FP32. */
#include "testmat/testdata.h"
#include "tcnla.h"
#include "test.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const tcnla_gemm_method_t all_methods[] = {
    TCNLA_GEMM_NATIVE_FP32,    TCNLA_GEMM_NATIVE_FP64, TCNLA_GEMM_TF32,
    TCNLA_GEMM_FP16,           TCNLA_GEMM_MARKIDIS_FP16, TCNLA_GEMM_TCEC_FP16,
    TCNLA_GEMM_TCEC_TF32,      TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_SHGEMM_TF32};
#define NMETHODS ((int)(sizeof all_methods / sizeof all_methods[0]))

static tcnla_handle_t cpu(void) {
    tcnla_handle_t h = NULL;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    return h;
}

static int is_shgemm(tcnla_gemm_method_t m) {
    return m == TCNLA_GEMM_SHGEMM_FP16 || m == TCNLA_GEMM_SHGEMM_TF32;
}

/* Relative error a method may show on small U(-1,1) products. */
static double tolerance(tcnla_gemm_method_t m) {
    return (m == TCNLA_GEMM_TF32 || m == TCNLA_GEMM_FP16) ? 2e-3 : 2e-6;
}

static void round_to_f16(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = tcnla_f16_to_f32(tcnla_f32_to_f16(x[i], TCNLA_ROUND_RN));
}

TEST(gemm_invalid_arguments_return_minus_i) {
    tcnla_handle_t h = cpu();
    float A[16] = {0}, B[16] = {0}, C[16];
    for (int i = 0; i < 16; i++) C[i] = 7.0f;
    const tcnla_gemm_method_t M = TCNLA_GEMM_TCEC_FP16;
    const tcnla_op_t N = TCNLA_OP_N, T = TCNLA_OP_T;
    CHECK_EQ_INT(tcnla_sgemm(NULL, M, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), -1);
    CHECK_EQ_INT(tcnla_sgemm(h, (tcnla_gemm_method_t)77, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), -2);
    CHECK_EQ_INT(tcnla_sgemm(h, M, (tcnla_op_t)5, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), -3);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, (tcnla_op_t)5, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), -4);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, -1, 2, 2, 1, A, 2, B, 2, 0, C, 2), -5);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, -1, 2, 1, A, 2, B, 2, 0, C, 2), -6);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, -1, 1, A, 2, B, 2, 0, C, 2), -7);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, NULL, 2, B, 2, 0, C, 2), -9);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 3, 2, 2, 1, A, 2, B, 2, 0, C, 3), -10);
    CHECK_EQ_INT(tcnla_sgemm(h, M, T, N, 2, 2, 3, 1, A, 2, B, 3, 0, C, 2), -10);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, A, 2, NULL, 2, 0, C, 2), -11);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 3, 1, A, 2, B, 2, 0, C, 2), -12);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, T, 2, 3, 2, 1, A, 2, B, 2, 0, C, 2), -12);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, NULL, 2), -14);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 1), -15);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 0, 2, 2, 1, A, 1, B, 2, 0, C, 0), -15); /* ldc >= 1 */
    uint16_t B16[4] = {0};
    CHECK_EQ_INT(tcnla_shgemm(h, TCNLA_GEMM_TCEC_FP16, N, N, 2, 2, 2, 1, A, 2, B16, 2, 0, C, 2), -2);
    CHECK_EQ_INT(tcnla_shgemm(h, TCNLA_GEMM_SHGEMM_FP16, N, N, 2, 2, 2, 1, A, 2, B16, 1, 0, C, 2), -12);
    for (int i = 0; i < 16; i++) CHECK(C[i] == 7.0f); /* nothing written */
    tcnla_destroy(h);
}

/* Every method, every transpose combination, ld > rows, alpha and beta,
 * odd sizes: against the FP64 product of the same inputs. */
TEST(gemm_all_methods_all_argument_forms) {
    tcnla_handle_t h = cpu();
    const int64_t m = 7, n = 5, k = 37, pad = 3;
    float *A = malloc(sizeof(float) * 64 * 64), *B = malloc(sizeof(float) * 64 * 64);
    float *C0 = malloc(sizeof(float) * 64 * 64), *C = malloc(sizeof(float) * 64 * 64);
    double *R = malloc(sizeof(double) * 64 * 64);
    tcnla_rand_uniform(3, 1, -1, 1, 64 * 64, A);
    tcnla_rand_uniform(3, 2, -1, 1, 64 * 64, B);
    tcnla_rand_uniform(3, 3, -1, 1, 64 * 64, C0);
    for (int mi = 0; mi < NMETHODS; mi++) {
        tcnla_gemm_method_t meth = all_methods[mi];
        float *Bm = B;
        float *Bh = NULL;
        if (is_shgemm(meth)) { /* SHGEMM's B is FP16 */
            Bh = malloc(sizeof(float) * 64 * 64);
            memcpy(Bh, B, sizeof(float) * 64 * 64);
            round_to_f16(Bh, 64 * 64);
            Bm = Bh;
        }
        for (int t = 0; t < 4; t++) {
            tcnla_op_t ta = (t & 1) ? TCNLA_OP_T : TCNLA_OP_N, tb = (t & 2) ? TCNLA_OP_T : TCNLA_OP_N;
            int64_t lda = (ta == TCNLA_OP_N ? m : k) + pad, ldb = (tb == TCNLA_OP_N ? k : n) + pad;
            int64_t ldc = m + pad;
            const float alpha = 0.75f, beta = -1.5f;
            memcpy(C, C0, sizeof(float) * 64 * 64);
            int st = tcnla_sgemm(h, meth, ta, tb, m, n, k, alpha, A, lda, Bm, ldb, beta, C, ldc);
            CHECK_MSG(st == 0, "%s: status %d", tcnla_gemm_method_name(meth), st);
            tu_ref_gemm(ta, tb, m, n, k, alpha, A, lda, Bm, ldb, beta, C0, ldc, R);
            double e = tu_rel_err(C, ldc, R, m, n);
            CHECK_MSG(e <= tolerance(meth), "%s ta=%d tb=%d: rel err %.3e",
                      tcnla_gemm_method_name(meth), ta, tb, e);
            /* padding between columns untouched */
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = m; i < ldc; i++) CHECK(C[i + j * ldc] == C0[i + j * ldc]);
        }
        free(Bh);
    }
    free(A), free(B), free(C0), free(C), free(R);
    tcnla_destroy(h);
}

TEST(gemm_beta_zero_ignores_nan_in_c) {
    tcnla_handle_t h = cpu();
    float A[6 * 9], B[9 * 4], C[6 * 4];
    tcnla_rand_uniform(4, 1, -1, 1, 6 * 9, A);
    tcnla_rand_uniform(4, 2, -1, 1, 9 * 4, B);
    for (int mi = 0; mi < NMETHODS; mi++) {
        for (int i = 0; i < 24; i++) C[i] = NAN;
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 6, 4, 9, 1.0f, A, 6, B, 9,
                          0.0f, C, 6) == 0);
        for (int i = 0; i < 24; i++)
            CHECK_MSG(isfinite(C[i]), "%s left NaN", tcnla_gemm_method_name(all_methods[mi]));
        /* k == 0 and alpha == 0 with beta == 0: zeros, C not read */
        for (int i = 0; i < 24; i++) C[i] = NAN;
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 6, 4, 0, 1.0f, A, 6, B, 1,
                          0.0f, C, 6) == 0);
        for (int i = 0; i < 24; i++) CHECK(C[i] == 0.0f);
        for (int i = 0; i < 24; i++) C[i] = NAN;
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 6, 4, 9, 0.0f, A, 6, B, 9,
                          0.0f, C, 6) == 0);
        for (int i = 0; i < 24; i++) CHECK(C[i] == 0.0f);
    }
    tcnla_destroy(h);
}

TEST(gemm_sizes_zero_and_one) {
    tcnla_handle_t h = cpu();
    float a = 3.0f, b = -2.0f, c = 5.0f;
    for (int mi = 0; mi < NMETHODS; mi++) {
        c = 5.0f;
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1,
                          2.0f, &c, 1) == 0);
        CHECK_MSG(c == 4.0f, "%s: 1x1x1 gave %g", tcnla_gemm_method_name(all_methods[mi]), c);
        c = 5.0f; /* m == 0 or n == 0: nothing happens, NULL pointers allowed */
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 0, 1, 1, 1.0f, NULL, 1, &b,
                          1, 0.0f, &c, 1) == 0);
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 1, 0, 1, 1.0f, &a, 1, NULL,
                          1, 0.0f, &c, 1) == 0);
        CHECK(c == 5.0f);
        /* k == 0, beta != 0: C = beta * C */
        CHECK(tcnla_sgemm(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 1, 1, 0, 1.0f, NULL, 1, NULL,
                          1, 3.0f, &c, 1) == 0);
        CHECK(c == 15.0f);
    }
    tcnla_destroy(h);
}

TEST(gemm_nan_inf_propagate_like_sgemm) {
    tcnla_info_t info;
    tcnla_handle_t h = cpu();
    float A[4 * 8], B[8 * 3], C[12], Cn[12];
    tcnla_rand_uniform(5, 1, 0.5f, 1, 32, A);
    tcnla_rand_uniform(5, 2, 0.5f, 1, 24, B);
    A[1 + 2 * 4] = INFINITY; /* row 1 of A */
    B[5 + 0 * 8] = NAN;      /* column 0 of B */
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, 4, 3, 8, 1, A, 4, B, 8, 0,
                      Cn, 4, &info) == 0);
    for (int mi = 0; mi < NMETHODS; mi++) {
        CHECK(tcnla_sgemm_ex(h, all_methods[mi], TCNLA_OP_N, TCNLA_OP_N, 4, 3, 8, 1, A, 4, B, 8, 0, C,
                          4, &info) == 0);
        for (int i = 0; i < 12; i++) {
            CHECK_MSG(isnan(C[i]) == isnan(Cn[i]) && isinf(C[i]) == isinf(Cn[i]),
                      "%s: C[%d] = %g, SGEMM %g", tcnla_gemm_method_name(all_methods[mi]), i, C[i],
                      Cn[i]);
        }
        CHECK(isinf(C[1 + 1 * 4]) && C[1 + 1 * 4] > 0);
        CHECK(isnan(C[0]));
        tcnla_gemm_method_t used;
        used = info.method;
        if (all_methods[mi] != TCNLA_GEMM_NATIVE_FP64) CHECK(used == TCNLA_GEMM_NATIVE_FP32);
    }
    tcnla_destroy(h);
}

TEST(gemm_default_method_comes_from_handle) {
    tcnla_info_t info;
    tcnla_handle_t h = cpu();
    float A[16 * 16], B[16 * 16], C[16 * 16];
    tcnla_rand_uniform(6, 1, -1, 1, 256, A);
    tcnla_rand_uniform(6, 2, -1, 1, 256, B);
    CHECK(tcnla_set_gemm_method(h, TCNLA_GEMM_TCEC_TF32) == 0);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_DEFAULT, TCNLA_OP_N, TCNLA_OP_N, 16, 16, 16, 1, A, 16, B, 16,
                      0, C, 16, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_TF32);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, 16, 16, 16, 1, A, 16, B, 16, 0,
                      C, 16, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_FP16);
    CHECK(tcnla_set_gemm_method(h, TCNLA_GEMM_OZAKI_INT8) == 0);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_DEFAULT, TCNLA_OP_N, TCNLA_OP_N, 16, 16, 16, 1, A, 16, B, 16,
                      0, C, 16, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_OZAKI_INT8);
    int d = 0, sa = 0, sb = 0;
    CHECK((d = info.ozaki_d, sa = info.ozaki_slices_a, sb = info.ozaki_slices_b, 0) == 0 && d >= 1 && sa >= 1 && sb >= 1);
    tcnla_destroy(h);
}

TEST(gemm_shgemm_fp16_input_matches_sgemm_entry) {
    tcnla_info_t info;
    tcnla_handle_t h = cpu();
    const int m = 9, n = 6, k = 40;
    float A[9 * 40], B[40 * 6], C1[54], C2[54];
    uint16_t B16[40 * 6];
    tcnla_rand_normal(8, 1, 0, 1, m * k, A);
    tcnla_rand_normal(8, 2, 0, 1, k * n, B);
    for (int i = 0; i < k * n; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
    for (int t = 0; t < 2; t++) {
        tcnla_gemm_method_t meth = t ? TCNLA_GEMM_SHGEMM_TF32 : TCNLA_GEMM_SHGEMM_FP16;
        CHECK(tcnla_shgemm(h, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B16, k, 0, C1, m) == 0);
        CHECK(tcnla_sgemm(h, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, k, 0, C2, m) == 0);
        CHECK(memcmp(C1, C2, sizeof C1) == 0);
    }
    /* DEFAULT on tcnla_shgemm means SHGEMM_FP16 */
    CHECK(tcnla_shgemm_ex(h, TCNLA_GEMM_DEFAULT, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B16, k, 0,
                       C2, m, &info) == 0);
    tcnla_gemm_method_t used;
    used = info.method;
    CHECK(used == TCNLA_GEMM_SHGEMM_FP16);
    /* FP16 B that overflows through the FP32 entry point is a range error */
    B[3] = 1e5f;
    CHECK_EQ_INT(tcnla_sgemm(h, TCNLA_GEMM_SHGEMM_TF32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m,
                             B, k, 0, C2, m),
                 TCNLA_ERR_RANGE);
    tcnla_destroy(h);
}

/* The range policy, with exact scaling off (test_exact_scaling.c: on,
 * these inputs compute in the FP16 methods) */
TEST(gemm_range_policy_without_exact_scaling) {
    tcnla_info_t info;
    tcnla_handle_t h = cpu();
    tcnla_tuning_t tu;
    tcnla_get_tuning(h, &tu);
    tu.exact_scaling = 0;
    REQUIRE(tcnla_set_tuning(h, &tu) == 0);
    const int m = 16, n = 16, k = 64;
    float A[16 * 64], B[64 * 16], C[256], Cs[256];
    tn_rand_exp(9, 1, -45, -35, m * k, A);
    tn_rand_exp(9, 2, -45, -35, k * n, B);
    for (int i = 0; i < 256; i++) C[i] = Cs[i] = 42.0f;
    const tcnla_gemm_method_t fp16m[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_MARKIDIS_FP16,
                                         TCNLA_GEMM_FP16, TCNLA_GEMM_SHGEMM_FP16};
    for (int i = 0; i < 4; i++) {
        int st = tcnla_sgemm(h, fp16m[i], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, k, 0, C, m);
        /* SHGEMM's FP16 B underflows to zero: that is its input, not a range error */
        if (fp16m[i] != TCNLA_GEMM_SHGEMM_FP16)
            CHECK_MSG(st == TCNLA_ERR_RANGE, "%s: status %d", tcnla_gemm_method_name(fp16m[i]), st);
        else
            CHECK(st == TCNLA_ERR_RANGE); /* A itself is out of halfhalf's range */
        CHECK(memcmp(C, Cs, sizeof C) == 0); /* C untouched */
    }
    CHECK(tcnla_sgemm(h, TCNLA_GEMM_TCEC_TF32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, k, 0, C,
                      m) == 0);
    /* overflow of FP16 */
    float A2[4] = {1, 2, 70000.0f, 4}, B2[4] = {1, 1, 1, 1}, C2[4];
    CHECK_EQ_INT(tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, 2, 2, 2, 1, A2, 2, B2,
                             2, 0, C2, 2),
                 TCNLA_ERR_RANGE);
    /* fallback policy: TCEC_FP16 computes with TCEC_TF32 and says so */
    CHECK(tcnla_set_range_policy(h, TCNLA_RANGE_FALLBACK) == 0);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, k, 0, C,
                      m, &info) == 0);
    tcnla_gemm_method_t used;
    used = info.method;
    CHECK(used == TCNLA_GEMM_TCEC_TF32);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, k, 0,
                      C, m, &info) == 0);
    used = info.method;
    CHECK(used == TCNLA_GEMM_SHGEMM_TF32);
    /* small elements next to large ones in the same row are not a range problem */
    float A3[2 * 4] = {1.0f, 1.0f, 1e-12f, 1e-12f, 0.5f, 0.5f, -0.25f, -0.25f};
    float B3[4 * 2] = {1, 1, 1, 1, 1, 2, 3, 4}, C3[4];
    CHECK(tcnla_set_range_policy(h, TCNLA_RANGE_ERROR) == 0);
    CHECK(tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, 2, 2, 4, 1, A3, 2, B3, 4, 0,
                      C3, 2) == 0);
    tcnla_destroy(h);
}

/* ------------------------------- accuracy ratios against NATIVE_FP32 */
enum { RM = 128, RN = 128, RK = 4096 };

static void ratio_inputs(float **A, float **B, int dist, int ea, int eb, uint64_t seed) {
    *A = malloc(sizeof(float) * RM * RK);
    *B = malloc(sizeof(float) * RK * RN);
    if (dist == 0) {
        tcnla_rand_uniform(seed, 1, -1, 1, (int64_t)RM * RK, *A);
        tcnla_rand_uniform(seed, 2, -1, 1, (int64_t)RK * RN, *B);
    } else {
        tn_rand_exp(seed, 1, ea, eb, (int64_t)RM * RK, *A);
        tn_rand_exp(seed, 2, ea, eb, (int64_t)RK * RN, *B);
    }
}

static double ratio_of(tcnla_gemm_method_t meth, int dist, int ea, int eb, int *status) {
    tcnla_handle_t h = cpu();
    float *A, *B;
    double e = 0, en = 1;
    ratio_inputs(&A, &B, dist, ea, eb, 11);
    if (is_shgemm(meth)) round_to_f16(B, (int64_t)RK * RN);
    *status = tu_method_err(h, meth, RM, RN, RK, A, B, &e, &en, NULL);
    if (*status == 0)
        printf("    %-13s err %.3e  NATIVE_FP32 %.3e  ratio %.3f\n", tcnla_gemm_method_name(meth), e,
               en, e / en);
    free(A), free(B);
    tcnla_destroy(h);
    return e / en;
}

TEST(accuracy_uniform_tcec_fp16_within_1_5_native) {
    int st;
    double r = ratio_of(TCNLA_GEMM_TCEC_FP16, 0, 0, 0, &st);
    REQUIRE(st == 0);
    CHECK_MSG(r <= 1.5, "TCEC_FP16 / NATIVE_FP32 = %.3f", r);
}

TEST(accuracy_uniform_tcec_tf32_within_1_5_native) {
    int st;
    double r = ratio_of(TCNLA_GEMM_TCEC_TF32, 0, 0, 0, &st);
    REQUIRE(st == 0);
    CHECK_MSG(r <= 1.5, "TCEC_TF32 / NATIVE_FP32 = %.3f", r);
}

TEST(accuracy_uniform_markidis_rz_at_least_3x_native) {
    int st;
    double r = ratio_of(TCNLA_GEMM_MARKIDIS_FP16, 0, 0, 0, &st);
    REQUIRE(st == 0);
    CHECK_MSG(r >= 3.0, "MARKIDIS_FP16 / NATIVE_FP32 = %.3f", r);
}

TEST(accuracy_uniform_shgemm_within_1_5_native_on_fp16_b) {
    int st;
    double r = ratio_of(TCNLA_GEMM_SHGEMM_FP16, 0, 0, 0, &st);
    REQUIRE(st == 0);
    CHECK_MSG(r <= 1.5, "SHGEMM_FP16 / NATIVE_FP32 = %.3f", r);
    r = ratio_of(TCNLA_GEMM_SHGEMM_TF32, 0, 0, 0, &st);
    REQUIRE(st == 0);
    CHECK_MSG(r <= 1.5, "SHGEMM_TF32 / NATIVE_FP32 = %.3f", r);
}

TEST(accuracy_exp_rand_tcec_tf32_within_1_5_native) {
    /* [Ootomo & Yokota 2021] section 4.1 / Fig. 8: TF32 keeps FP32's exponent range */
    const int ranges[3][2] = {{-15, 15}, {-35, -15}, {-45, -35}};
    for (int r = 0; r < 3; r++) {
        int st;
        double q = ratio_of(TCNLA_GEMM_TCEC_TF32, 1, ranges[r][0], ranges[r][1], &st);
        CHECK_MSG(st == 0, "exp_rand(%d,%d): status %d", ranges[r][0], ranges[r][1], st);
        CHECK_MSG(q <= 1.5, "exp_rand(%d,%d): TCEC_TF32 / NATIVE_FP32 = %.3f", ranges[r][0],
                  ranges[r][1], q);
    }
}

TEST(accuracy_exp_rand_tcec_fp16_scaled_exactly) {
    int st;
    /* exp_rand(-45,-35): below FP16's range, computed on exactly scaled
     * copies at the in-range accuracy */
    double q0 = ratio_of(TCNLA_GEMM_TCEC_FP16, 1, -45, -35, &st);
    CHECK_MSG(st == 0, "exp_rand(-45,-35): status %d", st);
    CHECK_MSG(q0 <= 1.0, "exp_rand(-45,-35): TCEC_FP16 / NATIVE_FP32 = %.3f", q0);
    /* exp_rand(-15,15): within FP16's range, computed */
    double q = ratio_of(TCNLA_GEMM_TCEC_FP16, 1, -15, 15, &st);
    CHECK(st == 0);
    CHECK_MSG(q <= 2.0, "exp_rand(-15,15): TCEC_FP16 / NATIVE_FP32 = %.3f", q);
}
