/* A CPU model of one Tensor Core MMA instruction (Fasi, Higham, Mikaitis,
 * Pranesh 2021; [Ootomo & Yokota 2021] section 3.2; [Ootomo & Yokota 2023] section 4.3):
 *   - the products a[i]*b[i] are exact (11-bit significands: FP16, TF32);
 *   - every addend (the products, and C when it is added inside) is aligned
 *     to the exponent of the largest one and the bits below the
 *     accumulator's `acc_bits` significant bits are dropped (RZ);
 *   - the exact sum of the aligned addends is normalised and truncated (RZ)
 *     to FP32;
 *   - C added outside: an ordinary FP32 add with round-to-nearest.
 * The aligned addends are integers times 2^(e - acc_bits) below 2^acc_bits
 * in magnitude, so at most 65 of them sum exactly in a double.
 * Arguments are checked (a NULL model, operand or result, n outside 0..64,
 * c_inside not 0 / 1 return -(argument position)), so the function itself
 * never faults on them. */
#include "core/internal.h"

#include <float.h>
#include <math.h>

int tcnla_tc_mma(const tcnla_tc_model_t *model, const float *a, const float *b, int n, float c,
                 int c_inside, float *result) {
    if (!model || model->acc_bits < 1 || model->acc_bits > 53) return -1;
    if (!a && n > 0) return -2;
    if (!b && n > 0) return -3;
    if (n < 0 || n > 64) return -4;
    if (c_inside != 0 && c_inside != 1) return -6;
    if (!result) return -7;
    double t[65];
    int nt = 0;
    double amax = 0.0;
    for (int i = 0; i < n; i++) {
        double p = (double)a[i] * (double)b[i];
        t[nt++] = p;
        amax = fmax(amax, fabs(p));
    }
    if (c_inside) {
        t[nt++] = c;
        amax = fmax(amax, fabs((double)c));
    }
    float r;
    if (!isfinite(amax) || isnan(amax)) {
        /* NaN / Inf operands: IEEE propagation, no alignment. */
        double s = 0.0;
        for (int i = 0; i < nt; i++) s += t[i];
        r = (float)s;
        *result = c_inside ? r : c + r;
        return TCNLA_SUCCESS;
    }
    if (amax == 0.0) {
        r = 0.0f;
    } else {
        int e;
        frexp(amax, &e); /* amax in [2^(e-1), 2^e) */
        int bits = model->acc_bits;
        double inv_q = ldexp(1.0, bits - e); /* aligned quantum: 2^(e - bits) */
        double s = 0.0;
        for (int i = 0; i < nt; i++) s += trunc(t[i] * inv_q);
        double v = ldexp(s, e - bits);
        if (fabs(v) >= 0x1p128) /* beyond FP32 even truncated: Inf, as SGEMM gives */
            r = v > 0 ? INFINITY : -INFINITY;
        else
            r = tcnla_f64_to_f32(v, TCNLA_ROUND_RZ);
    }
    *result = c_inside ? r : c + r;
    return TCNLA_SUCCESS;
}
