/* The CPU Tensor Core model ([Ootomo & Yokota 2021] section 3.2, [Ootomo & Yokota 2023]
 * section 4.3). */
#include "tcnla.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* tcnla_tc_mma's result; a failing status fails the test */
static float mma(const tcnla_tc_model_t *m, const float *a, const float *b, int n, float c,
                 int c_inside) {
    float r = NAN;
    const int st = tcnla_tc_mma(m, a, b, n, c, c_inside, &r);
    CHECK_MSG(st == TCNLA_SUCCESS, "tcnla_tc_mma returned %d", st);
    return r;
}

static tcnla_tc_model_t model(int bits, int k) {
    tcnla_tc_model_t m = tcnla_tc_model_default();
    m.acc_bits = bits;
    m.k_per_mma = k;
    m.tcec_chunk = k;
    return m;
}

TEST(tcmodel_exact_when_sum_fits) {
    tcnla_tc_model_t m = model(25, 16);
    float a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = (float)(i + 1), b[i] = 0.5f;
    CHECK(mma(&m, a, b, 16, 0.0f, 1) == 68.0f);
    CHECK(mma(&m, a, b, 16, 1.0f, 1) == 69.0f);
    CHECK(mma(&m, a, b, 16, 1.0f, 0) == 69.0f);
    CHECK(mma(&m, a, b, 0, 3.0f, 1) == 3.0f);
}

TEST(tcmodel_truncates_small_addends_rz) {
    /* 1 + 2^-30 + 2^-30: the small addends sit below the 25-bit window of
     * the largest one and are dropped (aligned with truncation). */
    tcnla_tc_model_t m = model(25, 8);
    float a[3] = {1.0f, 0x1p-15f, 0x1p-15f}, b[3] = {1.0f, 0x1p-15f, 0x1p-15f};
    CHECK(mma(&m, a, b, 3, 0.0f, 1) == 1.0f);
    /* each addend is truncated toward zero on alignment: 1 - 2^-26 -> 1 */
    float a2[2] = {1.0f, -0x1p-13f}, b2[2] = {1.0f, 0x1p-13f};
    float r = mma(&m, a2, b2, 2, 0.0f, 1);
    CHECK_MSG(r == 1.0f, "got %a", (double)r);
    /* 1 + 1.5*2^-24: aligned to 1 + 2^-24 (25 bits), then truncated to FP32:
     * 1. Rounding the exact sum to nearest would give 1 + 2^-23 (the
     * alignment's truncation shows); rounding the aligned 1 + 2^-24 to
     * nearest would not differ: it is a tie, and ties-to-even gives 1 too. */
    float a3[2] = {1.0f, 0x1.8p-12f}, b3[2] = {1.0f, 0x1p-12f};
    r = mma(&m, a3, b3, 2, 0.0f, 1);
    CHECK_MSG(r == 1.0f, "got %a", (double)r);
    CHECK(1.0f + 0x1.8p-24f == 1.0f + 0x1p-23f);
    float a4[2] = {-1.0f, -0x1.8p-12f};
    r = mma(&m, a4, b3, 2, 0.0f, 1);
    CHECK_MSG(r == -1.0f, "got %a", (double)r);
    /* A tie where the final rounding shows: 1 + 3*2^-24 is exact in the
     * 25-bit window and halfway between 1 + 2^-23 (odd) and 1 + 2^-22
     * (even). RZ gives 1 + 2^-23; ties-to-even and ties-away would both give
     * 1 + 2^-22. */
    float a5[2] = {1.0f, 0x1.8p-12f}, b5[2] = {1.0f, 0x1p-11f};
    r = mma(&m, a5, b5, 2, 0.0f, 1);
    CHECK_MSG(r == 1.0f + 0x1p-23f, "got %a, expected RZ's %a", (double)r, (double)(1.0f + 0x1p-23f));
    float a6[2] = {-1.0f, -0x1.8p-12f};
    r = mma(&m, a6, b5, 2, 0.0f, 1);
    CHECK_MSG(r == -1.0f - 0x1p-23f, "got %a", (double)r);
}

TEST(tcmodel_mma_checks_its_arguments) {
    tcnla_tc_model_t m = model(25, 16);
    float a[2] = {1, 2}, b[2] = {3, 4}, r = 42.0f;
    CHECK_EQ_INT(tcnla_tc_mma(NULL, a, b, 2, 0.0f, 1, &r), -1);
    CHECK_EQ_INT(tcnla_tc_mma(&m, NULL, b, 2, 0.0f, 1, &r), -2);
    CHECK_EQ_INT(tcnla_tc_mma(&m, a, NULL, 2, 0.0f, 1, &r), -3);
    CHECK_EQ_INT(tcnla_tc_mma(&m, a, b, -1, 0.0f, 1, &r), -4);
    CHECK_EQ_INT(tcnla_tc_mma(&m, a, b, 65, 0.0f, 1, &r), -4);
    CHECK_EQ_INT(tcnla_tc_mma(&m, a, b, 2, 0.0f, 2, &r), -6);
    CHECK_EQ_INT(tcnla_tc_mma(&m, a, b, 2, 0.0f, 1, NULL), -7);
    tcnla_tc_model_t bad = m;
    bad.acc_bits = 0;
    CHECK_EQ_INT(tcnla_tc_mma(&bad, a, b, 2, 0.0f, 1, &r), -1);
    CHECK(r == 42.0f); /* untouched by every failure */
    CHECK_EQ_INT(tcnla_tc_mma(&m, NULL, NULL, 0, 5.0f, 1, &r), 0); /* no products: c */
    CHECK(r == 5.0f);
    CHECK_EQ_INT(tcnla_tc_mma(&m, a, b, 2, 0.0f, 1, &r), 0);
    CHECK(r == 11.0f);
}

TEST(tcmodel_c_inside_rz_vs_outside_rn) {
    /* c = 1 and one product 1.5*2^-24: inside, the product is aligned to c
     * and truncated (24 bits: dropped; 25 bits: 2^-24, then RZ to FP32): 1.
     * Outside, 1 + 1.5*2^-24 is an RN FP32 add: 1 + 2^-23. */
    float a[1] = {0x1.8p-12f}, b[1] = {0x1p-12f};
    tcnla_tc_model_t m24 = model(24, 8), m25 = model(25, 8);
    CHECK(mma(&m24, a, b, 1, 1.0f, 1) == 1.0f);
    CHECK(mma(&m25, a, b, 1, 1.0f, 1) == 1.0f);
    CHECK(mma(&m24, a, b, 1, 1.0f, 0) == 1.0f + 0x1p-23f);
    CHECK(mma(&m25, a, b, 1, 1.0f, 0) == 1.0f + 0x1p-23f);
    /* 25 bits keep what 24 bits lose: 1 + 2^-24 + 2^-24 (two products) */
    float a2[2] = {0x1p-12f, 0x1p-12f}, b2[2] = {0x1p-12f, 0x1p-12f};
    CHECK(mma(&m25, a2, b2, 2, 1.0f, 1) == 1.0f + 0x1p-23f);
    CHECK(mma(&m24, a2, b2, 2, 1.0f, 1) == 1.0f);
}

TEST(tcmodel_nonfinite_propagates) {
    tcnla_tc_model_t m = model(25, 16);
    float a[2] = {INFINITY, 1.0f}, b[2] = {1.0f, 1.0f};
    CHECK(isinf(mma(&m, a, b, 2, 0.0f, 1)));
    float a2[2] = {NAN, 1.0f};
    CHECK(isnan(mma(&m, a2, b, 2, 0.0f, 1)));
    float a3[2] = {0x1p100f, 0x1p100f}, b3[2] = {0x1p30f, 0x1p30f};
    CHECK(isinf(mma(&m, a3, b3, 2, 0.0f, 1))); /* FP32 overflow -> Inf */
}

/* The halfhalf product with all three terms accumulated inside the Tensor
 * Core, as a probe computed it on an H200 with cuBLAS (split with
 * halfhalf, each product by cublasGemmEx on FP16 inputs with FP32
 * accumulation): hi*hi over the whole k inside one
 * accumulator, then [Alo | Ahi] x [Bhi ; Blo] likewise, combined
 * as hh + corr * 2^-11 in FP32. Returns the relative Frobenius error. */
static double hh_inside_err(tcnla_handle_t h, int m, int k, double *sgemm_err) {
    tcnla_tc_model_t md;
    tcnla_get_tc_model(h, &md);
    const int kp = md.k_per_mma;
    float *A = malloc(sizeof(float) * (size_t)m * k), *B = malloc(sizeof(float) * (size_t)m * k);
    float *ah = malloc(sizeof(float) * (size_t)m * k), *al = malloc(sizeof(float) * (size_t)m * k);
    float *bh = malloc(sizeof(float) * (size_t)m * k), *bl = malloc(sizeof(float) * (size_t)m * k);
    float *C = malloc(sizeof(float) * (size_t)m * m);
    tcnla_rand_uniform(7, 1, -1.0f, 1.0f, (int64_t)m * k, A); /* A stored k x m: column i = row i */
    tcnla_rand_uniform(7, 2, -1.0f, 1.0f, (int64_t)m * k, B); /* B stored k x m */
    for (int64_t i = 0; i < (int64_t)m * k; i++) {
        tcnla_split(TCNLA_SPLIT_HALFHALF, A[i], &ah[i], &al[i]);
        tcnla_split(TCNLA_SPLIT_HALFHALF, B[i], &bh[i], &bl[i]);
    }
    double num = 0, den = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            const int64_t oa = (int64_t)i * k, ob = (int64_t)j * k;
            float hh = 0, corr = 0;
            double r = 0;
            for (int p = 0; p < k; p++) r += (double)A[oa + p] * B[ob + p];
            for (int p = 0; p < k; p += kp) hh = mma(&md, ah + oa + p, bh + ob + p, kp, hh, 1);
            for (int p = 0; p < k; p += kp) corr = mma(&md, al + oa + p, bh + ob + p, kp, corr, 1);
            for (int p = 0; p < k; p += kp) corr = mma(&md, ah + oa + p, bl + ob + p, kp, corr, 1);
            float c = hh + corr * 0x1p-11f;
            num += (c - r) * (c - r);
            den += r * r;
        }
    /* SGEMM (NATIVE_FP32) on the same product */
    double *R = malloc(sizeof(double) * (size_t)m * m);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double r = 0;
            for (int p = 0; p < k; p++) r += (double)A[(int64_t)i * k + p] * B[(int64_t)j * k + p];
            R[i + (int64_t)j * m] = r;
        }
    tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_T, TCNLA_OP_N, m, m, k, 1.0f, A, k, B, k, 0.0f,
                C, m);
    double sn = 0;
    for (int64_t i = 0; i < (int64_t)m * m; i++) sn += (C[i] - R[i]) * (C[i] - R[i]);
    *sgemm_err = sqrt(sn / den);
    free(A), free(B), free(ah), free(al), free(bh), free(bl), free(C), free(R);
    return sqrt(num / den);
}

TEST(tcmodel_matches_h200_anchor_hh_inside_tc) {
    /* Measured on an NVIDIA H200 with cuBLAS, m = n = 1024,
     * A, B uniform(-1,1), relative Frobenius error against FP64:
     *   k = 256:  cuBLAS SGEMM 2.87e-07, halfhalf inside the Tensor Core 3.43e-07 (ratio 1.2)
     *   k = 4096: cuBLAS SGEMM 5.74e-07, halfhalf inside the Tensor Core 4.88e-06 (ratio 8.5)
     * With the default model (25 bits, 16 products per instruction) the
     * model's ratio to NATIVE_FP32 must land within a factor of 2 of the
     * GPU's, and so must its absolute error (m = n = 96 here: the Frobenius
     * ratio hardly depends on m, n). */
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    const int ks[2] = {256, 4096};
    const double gpu_ratio[2] = {3.43e-7 / 2.87e-7, 4.88e-6 / 5.74e-7};
    const double gpu_err[2] = {3.43e-7, 4.88e-6};
    for (int t = 0; t < 2; t++) {
        double se, e = hh_inside_err(h, 96, ks[t], &se);
        double ratio = e / se;
        printf("    k=%d: model hh-inside err %.3e (H200 %.3e), NATIVE_FP32 %.3e, ratio %.2f "
               "(H200 %.2f)\n",
               ks[t], e, gpu_err[t], se, ratio, gpu_ratio[t]);
        CHECK_MSG(ratio >= gpu_ratio[t] / 2 && ratio <= gpu_ratio[t] * 2,
                  "k=%d: model ratio %.2f vs H200 %.2f", ks[t], ratio, gpu_ratio[t]);
        CHECK_MSG(e >= gpu_err[t] / 2 && e <= gpu_err[t] * 2, "k=%d: model error %.3e vs %.3e",
                  ks[t], e, gpu_err[t]);
    }
    tcnla_destroy(h);
}
