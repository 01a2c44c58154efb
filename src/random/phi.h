/* The input generator of [Mukunoki et al. 2020] section 5.1: (rand - 0.5) * exp(phi * randn),
 * rand uniform in [0, 1), randn standard normal. phi widens the range of the
 * magnitudes (phi = 0.1, 1, 2 give about 1e-9 .. 1, .. 1e2, .. 5e4 at 10^8
 * samples). Counter-based (Philox): element i depends only on (seed, stream,
 * i), so any thread count or device gives the same values. */
#ifndef TCNLA_RANDOM_PHI_H
#define TCNLA_RANDOM_PHI_H
#include <stdint.h>

void tn_rand_phi(uint64_t seed, uint64_t stream, double phi, int64_t n, double *out);
#endif
