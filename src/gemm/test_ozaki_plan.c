/* The slicing of the Ozaki scheme (src/gemm/ozaki.c, [Mukunoki et al. 2020] Algorithm 1),
 * white-box: the k-blocking bounds and the error-free split. The scheme
 * itself is tested through the public API in tests/test_ozaki.c. */
#include "core/internal.h"
#include "gemm/ozaki.h"
#include "tcnla.h"
#include "test.h"
#include "testmat/testdata.h"

#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The slice bounds that make every product exact (ozaki.h). */
TEST(ozaki_split_is_error_free_and_bounded) {
    int64_t nkb, kbl;
    int vmax;
    tn_ozaki_blocking(TCNLA_GEMM_OZAKI_FP16, 1000, &nkb, &kbl, &vmax);
    CHECK(nkb == 1 && kbl == 1000 && vmax == 128);
    tn_ozaki_blocking(TCNLA_GEMM_OZAKI_FP16, 1, &nkb, &kbl, &vmax);
    CHECK(vmax == 2048);
    tn_ozaki_blocking(TCNLA_GEMM_OZAKI_FP16, 1300, &nkb, &kbl, &vmax);
    CHECK(nkb == 2 && kbl == 650 && (int64_t)vmax * vmax * kbl <= (1 << 24));
    tn_ozaki_blocking(TCNLA_GEMM_OZAKI_INT8, 300000, &nkb, &kbl, &vmax);
    CHECK(nkb == 3 && vmax == 127 && (double)kbl * 127 * 127 < 2147483648.0);
    double x[64], y[64], acc[64];
    int16_t v[64];
    tn_rand_phi(5, 1, 2.0, 64, x);
    x[3] = 0x1p-1074;
    x[7] = 1e300;
    memcpy(y, x, sizeof x);
    memset(acc, 0, sizeof acc);
    /* the slices sum back to x exactly (checked with MPFR, sums being inexact in FP64) */
    mpfr_t s[64];
    for (int l = 0; l < 64; l++) mpfr_init2(s[l], 2200), mpfr_set_zero(s[l], 1);
    int e, r, count = 0, maxv = 0;
    do {
        r = tn_ozaki_slice(y, 64, 127, v, &e);
        if (r == 0) break;
        count++;
        for (int l = 0; l < 64; l++) {
            maxv = TN_MAX(maxv, abs(v[l]));
            mpfr_t t;
            mpfr_init2(t, 64);
            mpfr_set_si_2exp(t, v[l], e, MPFR_RNDN);
            mpfr_add(s[l], s[l], t, MPFR_RNDN);
            mpfr_clear(t);
        }
    } while (r == 1 && count < 1000);
    CHECK(maxv <= 127);
    CHECK(count > 1 && count < 400);
    int bad = 0;
    for (int l = 0; l < 64; l++) {
        bad += mpfr_cmp_d(s[l], x[l]) != 0;
        mpfr_clear(s[l]);
    }
    CHECK_EQ_INT(bad, 0);
}
