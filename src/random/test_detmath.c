/* The FP32 Box-Muller of the Gaussian generator (src/random/detmath.h),
 * white-box; the generator's public side is tested in tests/test_randnla.c. */
#include "random/detmath.h"
#include "random/random.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* The FP32 Box-Muller of detmath.h against libm in double on the same
 * uniforms: within a few FP32 ulps of the radius, over a million Philox
 * words and the edge words (u1 at 2^-33 and at 1, every quarter turn and
 * octant boundary of the angle). */
TEST(gaussian_fp32_box_muller_within_ulps_of_libm) {
    const double two_pi = 6.283185307179586476925286766559;
    double worst = 0;
    uint32_t edge1[] = {0u, 1u, 0xffffff00u, 0xffffffffu, 0x80000000u, 0x7fffffffu};
    uint32_t edge2[] = {0u, 0x1fffffffu, 0x20000000u, 0x3fffffffu, 0x40000000u,
                        0x7fffffffu, 0x80000000u, 0xc0000000u, 0xffffffffu};
    for (int64_t b = 0; b < 500000 + 54; b++) {
        uint32_t w[4];
        tn_philox(77, 5, (uint64_t)b, w);
        if (b >= 500000) { /* the 6 x 9 edge pairs */
            w[0] = edge1[(b - 500000) / 9], w[1] = edge2[(b - 500000) % 9];
        }
        for (int p = 0; p < 2; p++) {
            float z0, z1;
            tn_dm_box_muller(w[2 * p], w[2 * p + 1], &z0, &z1);
            const double u1 = (double)fmaf((float)w[2 * p], 0x1p-32f, 0x1p-33f);
            const double u2 = (double)(w[2 * p + 1] >> 8) * 0x1p-24;
            const double rad = sqrt(-2.0 * log(u1));
            const double e0 = fabs(z0 - rad * cos(two_pi * u2)), e1 = fabs(z1 - rad * sin(two_pi * u2));
            CHECK(isfinite(z0) && isfinite(z1) && fabs(z0) <= 6.8 && fabs(z1) <= 6.8);
            if (rad > 0) {
                const double e = fmax(e0, e1) / rad / 0x1p-24;
                if (e > worst) worst = e;
            } else {
                CHECK(z0 == 0 && z1 == 0);
            }
        }
    }
    printf("    FP32 Box-Muller: worst error %.2f ulps (2^-24) of the radius\n", worst);
    CHECK_MSG(worst <= 6.0, "worst error %.2f ulps of the radius", worst);
}
