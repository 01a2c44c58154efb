/* Splitting an FP32 value into two Tensor Core inputs ([Ootomo & Yokota 2021] section 3.3):
 *   Markidis  hi = f16(x),      lo = f16(x - hi)            x ~ hi + lo
 *   halfhalf  hi = f16(x),      lo = f16((x - hi) * 2^11)   x ~ hi + lo * 2^-11
 *   tf32tf32  hi = tf32rna(x),  lo = tf32rna((x - hi) * 2^11)
 * x - hi is exact in FP32 (Sterbenz, or both in the same binade), and the
 * scaling by 2^11 is exact unless it overflows, which it cannot since
 * |x - hi| <= 2^-11 |x|. The scaling moves lo away from FP16's subnormal
 * range, which is what widens halfhalf's usable exponent range over
 * Markidis' ([Ootomo & Yokota 2021] Fig. 6/7).
 *
 * Also here: the table of GEMM method properties and the range check that
 * the FP16-based methods run before they compute (docs/design.md). */
#include "core/internal.h"

#include <math.h>

#define SPLIT_SCALE 2048.0f         /* 2^11 */
#define SPLIT_INV_SCALE 4.8828125e-4f /* 2^-11 */

float tcnla_split_scale(tcnla_split_t kind) {
    return kind == TCNLA_SPLIT_MARKIDIS ? 1.0f : SPLIT_INV_SCALE;
}

void tcnla_split(tcnla_split_t kind, float x, float *hi, float *lo) {
    if (!isfinite(x)) {
        *hi = x;
        *lo = 0.0f;
        return;
    }
    float h, r;
    switch (kind) {
    case TCNLA_SPLIT_MARKIDIS:
        h = tcnla_f16_to_f32(tcnla_f32_to_f16(x, TCNLA_ROUND_RN));
        r = x - h;
        *hi = h;
        *lo = tcnla_f16_to_f32(tcnla_f32_to_f16(r, TCNLA_ROUND_RN));
        return;
    case TCNLA_SPLIT_HALFHALF:
        h = tcnla_f16_to_f32(tcnla_f32_to_f16(x, TCNLA_ROUND_RN));
        r = (x - h) * SPLIT_SCALE;
        *hi = h;
        *lo = tcnla_f16_to_f32(tcnla_f32_to_f16(r, TCNLA_ROUND_RN));
        return;
    case TCNLA_SPLIT_TF32TF32:
    default:
        h = tcnla_f32_to_tf32(x, TCNLA_ROUND_RNA);
        r = (x - h) * SPLIT_SCALE;
        *hi = h;
        *lo = tcnla_f32_to_tf32(r, TCNLA_ROUND_RNA);
        return;
    }
}

/* -------------------------------------------------------- method table */
static const tn_method_info methods[TCNLA_GEMM_METHOD_COUNT] = {
    [TCNLA_GEMM_NATIVE_FP32] = {0, 0, 0, TN_CONV_NONE, 0, 0, TCNLA_GEMM_NATIVE_FP32},
    [TCNLA_GEMM_NATIVE_FP64] = {0, 0, 0, TN_CONV_NONE, 0, 0, TCNLA_GEMM_NATIVE_FP64},
    [TCNLA_GEMM_TF32] = {1, 0, 0, TN_CONV_TF32, 10, 0, TCNLA_GEMM_TF32},
    [TCNLA_GEMM_FP16] = {1, 0, 0, TN_CONV_F16, 10, 1, TCNLA_GEMM_TCEC_TF32},
    [TCNLA_GEMM_MARKIDIS_FP16] = {1, 1, TCNLA_SPLIT_MARKIDIS, TN_CONV_NONE, 21, 1,
                                  TCNLA_GEMM_TCEC_TF32},
    [TCNLA_GEMM_TCEC_FP16] = {1, 1, TCNLA_SPLIT_HALFHALF, TN_CONV_NONE, 21, 1,
                              TCNLA_GEMM_TCEC_TF32},
    [TCNLA_GEMM_TCEC_TF32] = {1, 1, TCNLA_SPLIT_TF32TF32, TN_CONV_NONE, 21, 0,
                              TCNLA_GEMM_TCEC_TF32},
    [TCNLA_GEMM_SHGEMM_FP16] = {1, 1, TCNLA_SPLIT_HALFHALF, TN_CONV_NONE, 21, 1,
                                TCNLA_GEMM_SHGEMM_TF32},
    [TCNLA_GEMM_SHGEMM_TF32] = {1, 1, TCNLA_SPLIT_TF32TF32, TN_CONV_NONE, 21, 0,
                                TCNLA_GEMM_SHGEMM_TF32},
    [TCNLA_GEMM_OZAKI_FP16] = {1, 0, 0, TN_CONV_NONE, 0, 0, TCNLA_GEMM_OZAKI_FP16},
    [TCNLA_GEMM_OZAKI_INT8] = {1, 0, 0, TN_CONV_NONE, 0, 0, TCNLA_GEMM_OZAKI_INT8},
};

const tn_method_info *tn_method(tcnla_gemm_method_t m) {
    if ((int)m <= 0 || (int)m >= (int)TCNLA_GEMM_METHOD_COUNT) return &methods[1];
    return &methods[m];
}

/* The value the method feeds the Tensor Core for x (hi + lo * scale for the
 * splits), in double (exact whenever the split is within tolerance: hi and
 * lo * scale then hold 11 bits each, no more than 2^-12 apart in scale). */
static double represented(const tn_method_info *mi, float x) {
    if (mi->uses_split) {
        float hi, lo;
        tcnla_split(mi->split, x, &hi, &lo);
        return (double)hi + (double)lo * (double)tcnla_split_scale(mi->split);
    }
    if (mi->conv == TN_CONV_F16) return tcnla_f16_to_f32(tcnla_f32_to_f16(x, TCNLA_ROUND_RN));
    if (mi->conv == TN_CONV_TF32) return tcnla_f32_to_tf32(x, TCNLA_ROUND_RNA);
    return x;
}

int tn_range_ok(const float *x, int64_t count, int64_t len, int64_t ld,
                tcnla_gemm_method_t method) {
    const tn_method_info *mi = tn_method(method);
    if (!mi->tensor_core || mi->tol_bits == 0) return 1;
    int ok = 1;
#pragma omp parallel for schedule(static) reduction(&& : ok)
    for (int64_t v = 0; v < count; v++) {
        const float *p = x + v * ld;
        float vmax = 0.0f;
        for (int64_t i = 0; i < len; i++) vmax = fmaxf(vmax, fabsf(p[i]));
        double tol = ldexp((double)vmax, -mi->tol_bits);
        for (int64_t i = 0; i < len && ok; i++) {
            double r = represented(mi, p[i]);
            if (!isfinite(r) || fabs(r - (double)p[i]) > tol) ok = 0;
        }
    }
    return ok;
}

int tn_has_nonfinite(const float *x, int64_t rows, int64_t cols, int64_t ld) {
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(|| : bad)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            if (!isfinite(x[i + j * ld])) bad = 1;
    return bad;
}

int tn_has_nonfinite_f16(const uint16_t *x, int64_t rows, int64_t cols, int64_t ld) {
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(|| : bad)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            if ((x[i + j * ld] & 0x7c00u) == 0x7c00u) bad = 1;
    return bad;
}
