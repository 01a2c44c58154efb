/* Philox-based generators (see random.h). */
#include "random/random.h"
#include "random/detmath.h"
#include "tcnla.h"

#include <Random123/philox.h>
#include <math.h>
#include <string.h>

void tn_philox(uint64_t seed, uint64_t stream, uint64_t ctr, uint32_t out[4]) {
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t c = {{(uint32_t)ctr, (uint32_t)(ctr >> 32), (uint32_t)stream,
                           (uint32_t)(stream >> 32)}};
    philox4x32_ctr_t r = philox4x32(c, key);
    memcpy(out, r.v, sizeof r.v);
}

/* (0, 1) with 24 random bits: (u + 0.5) * 2^-24. */
static double unit24(uint32_t u) { return ((double)(u >> 8) + 0.5) * 0x1p-24; }

void tn_rand_uniform(uint64_t seed, uint64_t stream, float lo, float hi, int64_t n, float *out) {
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < (n + 3) / 4; b++) {
        uint32_t r[4];
        tn_philox(seed, stream, (uint64_t)b, r);
        for (int j = 0; j < 4 && 4 * b + j < n; j++)
            out[4 * b + j] = (float)((double)lo + ((double)hi - (double)lo) * unit24(r[j]));
    }
}

void tn_rand_normal(uint64_t seed, uint64_t stream, float mean, float sd, int64_t n, float *out) {
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < (n + 3) / 4; b++) {
        uint32_t r[4];
        float z[4];
        tn_philox(seed, stream, (uint64_t)b, r);
        tn_dm_box_muller(r[0], r[1], &z[0], &z[1]);
        tn_dm_box_muller(r[2], r[3], &z[2], &z[3]);
        for (int j = 0; j < 4 && 4 * b + j < n; j++)
            out[4 * b + j] = (float)((double)mean + (double)sd * (double)z[j]);
    }
}

/* The public entry points (tcnla.h, "host random numbers"). */
int tcnla_philox4x32(uint64_t seed, uint64_t stream, uint64_t counter, uint32_t out[4]) {
    if (!out) return -4;
    tn_philox(seed, stream, counter, out);
    return TCNLA_SUCCESS;
}

int tcnla_rand_uniform(uint64_t seed, uint64_t stream, float lo, float hi, int64_t n, float *out) {
    if (!isfinite(lo)) return -3;
    if (!isfinite(hi)) return -4;
    if (n < 0) return -5;
    if (!out && n > 0) return -6;
    tn_rand_uniform(seed, stream, lo, hi, n, out);
    return TCNLA_SUCCESS;
}

int tcnla_rand_normal(uint64_t seed, uint64_t stream, float mean, float sd, int64_t n, float *out) {
    if (!isfinite(mean)) return -3;
    if (!isfinite(sd) || sd < 0) return -4;
    if (n < 0) return -5;
    if (!out && n > 0) return -6;
    tn_rand_normal(seed, stream, mean, sd, n, out);
    return TCNLA_SUCCESS;
}
