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
 * in magnitude, so at most 65 of them sum exactly in a double. */
#include "core/internal.h"

#include <float.h>
#include <math.h>

float tcnla_tc_mma(const tcnla_tc_model_t *model, const float *a, const float *b, int n, float c,
                   int c_inside) {
    double t[65];
    int nt = 0;
    double amax = 0.0;
    if (n > 64) n = 64;
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
        return c_inside ? r : c + r;
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
    return c_inside ? r : c + r;
}
