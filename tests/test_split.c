/* Splitting FP32 into two Tensor Core inputs ([Ootomo & Yokota 2021] section 3). */
#include "tcnla.h"
#include "test.h"

#include <math.h>
#include <string.h>

/* Fraction bits of x (of 23) that hi + lo * scale keeps: 23 when exact,
 * else 23 - ceil(log2(err/ulp + 1)). */
static int kept_bits(tcnla_split_t kind, float x) {
    float hi, lo;
    tcnla_split(kind, x, &hi, &lo);
    double rec = (double)hi + (double)lo * (double)tcnla_split_scale(kind);
    int e;
    frexp(x, &e);
    double ulp = ldexp(1.0, e - 24);
    double err = fabs(rec - (double)x) / ulp;
    if (err == 0) return 23;
    return 23 - (int)ceil(log2(err + 1.0));
}

/* Expected kept length over 10^6 random mantissas (assumption 1 of seed
 * 002: independent, equiprobable bits) at exponent e. */
static double mean_kept(tcnla_split_t kind, int e) {
    const int n = 1000000;
    double sum = 0;
    for (int b = 0; b < n / 4; b++) {
        uint32_t r[4];
        tcnla_philox4x32(2022, (uint64_t)kind, (uint64_t)b, r);
        for (int j = 0; j < 4; j++) {
            float x = ldexpf((float)(0x800000u | (r[j] & 0x7fffffu)) * 0x1p-23f, e);
            sum += kept_bits(kind, x);
        }
    }
    return sum / n;
}

TEST(split_expected_mantissa_22_75_bits_halfhalf) {
    double m = mean_kept(TCNLA_SPLIT_HALFHALF, 0);
    CHECK_MSG(fabs(m - 22.75) <= 0.02, "halfhalf keeps %.4f bits on average, expected 22.75", m);
}

TEST(split_expected_mantissa_22_75_bits_markidis) {
    double m = mean_kept(TCNLA_SPLIT_MARKIDIS, 0);
    CHECK_MSG(fabs(m - 22.75) <= 0.02, "Markidis keeps %.4f bits on average, expected 22.75", m);
}

TEST(split_expected_mantissa_22_75_bits_tf32tf32_rna) {
    /* [Ootomo & Yokota 2021] section 3.3: RNA gives the same 22.75-bit expectation */
    double m = mean_kept(TCNLA_SPLIT_TF32TF32, 0);
    CHECK_MSG(fabs(m - 22.75) <= 0.02, "tf32tf32 keeps %.4f bits on average, expected 22.75", m);
    m = mean_kept(TCNLA_SPLIT_TF32TF32, -100); /* full FP32 exponent range */
    CHECK_MSG(fabs(m - 22.75) <= 0.02, "tf32tf32 at 2^-100 keeps %.4f bits", m);
}

TEST(split_scaling_widens_range_vs_markidis) {
    /* At 2^-10 Markidis' lo falls into FP16's subnormals and loses bits;
     * the 2^11 scaling of halfhalf keeps them ([Ootomo & Yokota 2021] Fig. 6/7). */
    double mk = mean_kept(TCNLA_SPLIT_MARKIDIS, -10), hh = mean_kept(TCNLA_SPLIT_HALFHALF, -10);
    CHECK_MSG(mk < 21.0, "Markidis at 2^-10 keeps %.3f bits, expected a loss", mk);
    CHECK_MSG(fabs(hh - 22.75) <= 0.02, "halfhalf at 2^-10 keeps %.3f bits", hh);
    /* halfhalf loses bits too, later: at 2^-20 lo is subnormal */
    CHECK(mean_kept(TCNLA_SPLIT_HALFHALF, -20) < 22.0);
}

TEST(split_parts_are_format_values_and_exact_when_short) {
    for (int b = 0; b < 20000; b++) {
        uint32_t r[4];
        tcnla_philox4x32(7, 9, (uint64_t)b, r);
        float x = ldexpf((float)(0x800000u | (r[0] & 0x7fffffu)) * 0x1p-23f, (int)(r[1] % 20) - 8);
        if (r[2] & 1) x = -x;
        float hi, lo;
        tcnla_split(TCNLA_SPLIT_HALFHALF, x, &hi, &lo);
        CHECK(tcnla_f16_to_f32(tcnla_f32_to_f16(hi, TCNLA_ROUND_RN)) == hi);
        CHECK(tcnla_f16_to_f32(tcnla_f32_to_f16(lo, TCNLA_ROUND_RN)) == lo);
        CHECK(fabsf(lo) <= fabsf(x) * 1.001f || x == 0);
        tcnla_split(TCNLA_SPLIT_TF32TF32, x, &hi, &lo);
        CHECK(tcnla_f32_to_tf32(hi, TCNLA_ROUND_RZ) == hi);
        CHECK(tcnla_f32_to_tf32(lo, TCNLA_ROUND_RZ) == lo);
        /* a value with 22 significant bits splits exactly */
        uint32_t u;
        memcpy(&u, &x, 4);
        u &= ~1u;
        float y;
        memcpy(&y, &u, 4);
        int kb = kept_bits(TCNLA_SPLIT_HALFHALF, y);
        CHECK_MSG(kb >= 22, "x=%a keeps %d bits", (double)y, kb);
        if (tt_failed_now()) return;
    }
}

TEST(split_nonfinite_and_zero) {
    float hi, lo;
    tcnla_split(TCNLA_SPLIT_HALFHALF, INFINITY, &hi, &lo);
    CHECK(isinf(hi) && hi > 0 && lo == 0);
    tcnla_split(TCNLA_SPLIT_TF32TF32, -INFINITY, &hi, &lo);
    CHECK(isinf(hi) && hi < 0 && lo == 0);
    tcnla_split(TCNLA_SPLIT_MARKIDIS, NAN, &hi, &lo);
    CHECK(isnan(hi) && lo == 0);
    tcnla_split(TCNLA_SPLIT_HALFHALF, 0.0f, &hi, &lo);
    CHECK(hi == 0 && lo == 0);
    /* FP16 overflow: hi is Inf, the range check must catch it */
    tcnla_split(TCNLA_SPLIT_HALFHALF, 70000.0f, &hi, &lo);
    CHECK(isinf(hi));
    CHECK(tcnla_split_scale(TCNLA_SPLIT_HALFHALF) == 0x1p-11f);
    CHECK(tcnla_split_scale(TCNLA_SPLIT_MARKIDIS) == 1.0f);
}
