/* (rand - 0.5) * exp(phi * randn) of [Mukunoki et al. 2020] section 5.1 (see phi.h). */
#include "random/phi.h"

#include "random/random.h"

#include <math.h>

/* 53 random bits from two words. */
static uint64_t bits53(uint32_t hi, uint32_t lo) {
    return ((uint64_t)hi << 21) ^ (uint64_t)(lo >> 11);
}

void tn_rand_phi(uint64_t seed, uint64_t stream, double phi, int64_t n, double *out) {
    const double two_pi = 6.283185307179586476925286766559;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint32_t r[4], s[4];
        tn_philox(seed, stream, 2 * (uint64_t)i, r);
        tn_philox(seed, stream, 2 * (uint64_t)i + 1, s);
        double rnd = (double)bits53(r[0], r[1]) * 0x1p-53;          /* [0, 1) */
        double u1 = ((double)bits53(r[2], r[3]) + 0.5) * 0x1p-53;   /* (0, 1) */
        double u2 = (double)bits53(s[0], s[1]) * 0x1p-53;           /* [0, 1) */
        double randn = sqrt(-2.0 * log(u1)) * cos(two_pi * u2);     /* Box-Muller */
        out[i] = (rnd - 0.5) * exp(phi * randn);
    }
}
