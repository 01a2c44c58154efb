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

/* lo is (x - hi) * scale rounded to nearest in its format (RN-even for
 * FP16, RNA for TF32): never more than half a unit in its last place away,
 * and ties go as the rounding says. With hi rounded to nearest, x - hi has
 * at most 12 significant bits against lo's 11, so every inexact lo is an
 * exact tie (a third of random x here): rounding toward zero shows only in
 * which way the ties go. */
static double fmt_ulp(tcnla_split_t kind, double r) {
    int e;
    frexp(r, &e); /* |r| in [2^(e-1), 2^e) */
    if (kind == TCNLA_SPLIT_TF32TF32) return ldexp(1.0, e - 11);
    return ldexp(1.0, (e - 1 < -14 ? -14 : e - 1) - 10); /* FP16, subnormals below 2^-14 */
}

TEST(split_lo_rounded_to_nearest) {
    const tcnla_split_t kinds[3] = {TCNLA_SPLIT_MARKIDIS, TCNLA_SPLIT_HALFHALF,
                                    TCNLA_SPLIT_TF32TF32};
    for (int t = 0; t < 3; t++) {
        const double scale = 1.0 / (double)tcnla_split_scale(kinds[t]);
        int worse = 0, ties = 0, wrong_ties = 0;
        double worst = 0;
        for (int b = 0; b < 25000; b++) {
            uint32_t r[4];
            tcnla_philox4x32(35, (uint64_t)t, (uint64_t)b, r);
            for (int j = 0; j < 4; j++) {
                const int e = (int)(r[j] >> 24) % 16 - 8; /* 2^-8 .. 2^7 */
                float x = ldexpf((float)(0x800000u | (r[j] & 0x7fffffu)) * 0x1p-23f, e);
                if (r[j] & 0x800000u) x = -x;
                float hi, lo;
                tcnla_split(kinds[t], x, &hi, &lo);
                const double rem = ((double)x - (double)hi) * scale; /* exact */
                if (rem == 0) continue;
                const double err = fabs(rem - (double)lo) / fmt_ulp(kinds[t], rem);
                worst = fmax(worst, err);
                worse += err > 0.5;
                if (err == 0.5) { /* a tie: to even (FP16), away from zero (TF32 RNA) */
                    ties++;
                    if (kinds[t] == TCNLA_SPLIT_TF32TF32)
                        wrong_ties += !(fabs((double)lo) > fabs(rem));
                    else
                        wrong_ties += (tcnla_f32_to_f16(lo, TCNLA_ROUND_RN) & 1u) != 0;
                }
            }
        }
        CHECK_MSG(worse == 0 && worst <= 0.5,
                  "split %d: %d of 10^5 lo more than half a unit from (x - hi) * scale "
                  "(worst %.3f units)",
                  (int)kinds[t], worse, worst);
        CHECK_MSG(ties > 10000 && wrong_ties == 0, "split %d: %d of %d ties rounded the wrong way",
                  (int)kinds[t], wrong_ties, ties);
    }
    /* ties: halfhalf's lo of 1 + (2^11 + 3) 2^-23 is (2^11 + 3) 2^-12, halfway
     * between FP16 neighbours; RN-even takes (2^11 + 4) 2^-12, RZ
     * (2^11 + 2) 2^-12; TF32's RNA takes the larger magnitude */
    float hi, lo;
    tcnla_split(TCNLA_SPLIT_HALFHALF, 1.0f + 2051 * 0x1p-23f, &hi, &lo);
    CHECK_MSG(hi == 1.0f && lo == 2052 * 0x1p-12f, "halfhalf tie: hi %a lo %a", (double)hi,
              (double)lo);
    tcnla_split(TCNLA_SPLIT_HALFHALF, -1.0f - 2055 * 0x1p-23f, &hi, &lo);
    CHECK_MSG(hi == -1.0f && lo == -2056 * 0x1p-12f, "halfhalf tie: hi %a lo %a", (double)hi,
              (double)lo);
    tcnla_split(TCNLA_SPLIT_TF32TF32, 1.0f + 2049 * 0x1p-23f, &hi, &lo);
    CHECK_MSG(hi == 1.0f && lo == 2050 * 0x1p-12f, "tf32tf32 tie: hi %a lo %a", (double)hi,
              (double)lo);
}
