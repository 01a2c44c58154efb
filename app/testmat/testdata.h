/* Test-data generators of the papers, on the library's host random numbers
 * (tcnla_philox4x32): element i depends only on (seed, stream, i), so any
 * thread count gives the same values. */
#ifndef TCNLA_TESTDATA_H
#define TCNLA_TESTDATA_H
#include <stdint.h>

/* exp_rand(emin, emax) of [Ootomo & Yokota 2022] section 4.1: random sign,
 * exponent uniform in the integers emin .. emax-1 (the paper's interval
 * (a, b) read as half-open, so that exp_rand(-15, 15) stays below FP16's
 * overflow threshold as the paper says it does), 23 uniformly random
 * fraction bits. Counter block b gives elements 2b and 2b + 1. */
void tn_rand_exp(uint64_t seed, uint64_t stream, int emin, int emax, int64_t n, float *out);

/* The input generator of [Mukunoki et al. 2020] section 5.1:
 * (rand - 0.5) * exp(phi * randn), rand uniform in [0, 1), randn standard
 * normal. phi widens the range of the magnitudes (phi = 0.1, 1, 2 give about
 * 1e-9 .. 1, .. 1e2, .. 5e4 at 10^8 samples). Counter blocks 2i and 2i + 1
 * give element i. */
void tn_rand_phi(uint64_t seed, uint64_t stream, double phi, int64_t n, double *out);
#endif
