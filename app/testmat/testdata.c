/* exp_rand and the phi generator (see testdata.h). */
#include "testmat/testdata.h"
#include "tcnla.h"

#include <math.h>

void tn_rand_exp(uint64_t seed, uint64_t stream, int emin, int emax, int64_t n, float *out) {
    uint32_t span = (uint32_t)(emax > emin ? emax - emin : 1);
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < (n + 1) / 2; b++) {
        uint32_t r[4];
        tcnla_philox4x32(seed, stream, (uint64_t)b, r);
        for (int j = 0; j < 2 && 2 * b + j < n; j++) {
            uint32_t frac = r[2 * j] & 0x7fffffu, sign = r[2 * j] >> 31;
            int e = emin + (int)(((uint64_t)r[2 * j + 1] * span) >> 32);
            float v = ldexpf((float)(0x800000u | frac) * 0x1p-23f, e);
            out[2 * b + j] = sign ? -v : v;
        }
    }
}

/* 53 random bits from two words. */
static uint64_t bits53(uint32_t hi, uint32_t lo) {
    return ((uint64_t)hi << 21) ^ (uint64_t)(lo >> 11);
}

void tn_rand_phi(uint64_t seed, uint64_t stream, double phi, int64_t n, double *out) {
    const double two_pi = 6.283185307179586476925286766559;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint32_t r[4], s[4];
        tcnla_philox4x32(seed, stream, 2 * (uint64_t)i, r);
        tcnla_philox4x32(seed, stream, 2 * (uint64_t)i + 1, s);
        double rnd = (double)bits53(r[0], r[1]) * 0x1p-53;          /* [0, 1) */
        double u1 = ((double)bits53(r[2], r[3]) + 0.5) * 0x1p-53;   /* (0, 1) */
        double u2 = (double)bits53(s[0], s[1]) * 0x1p-53;           /* [0, 1) */
        double randn = sqrt(-2.0 * log(u1)) * cos(two_pi * u2);     /* Box-Muller */
        out[i] = (rnd - 0.5) * exp(phi * randn);
    }
}
