/* Counter-based random numbers (Philox4x32-10 from Random123): element i of
 * a stream depends only on (seed, stream, i), so any blocking, thread count
 * or device gives the same matrix for the same seed. */
#ifndef TCNLA_RANDOM_H
#define TCNLA_RANDOM_H
#include <stdint.h>

/* The 4 x 32 random bits of counter block `ctr` of (seed, stream). */
void tn_philox(uint64_t seed, uint64_t stream, uint64_t ctr, uint32_t out[4]);
/* Uniform in (lo, hi): 24 random bits, never exactly lo (for lo < hi). */
void tn_rand_uniform(uint64_t seed, uint64_t stream, float lo, float hi, int64_t n, float *out);
/* Normal(mean, sd) by Box-Muller in FP32 (src/random/detmath.h, identical on
 * the CPU and the GPU): counter block b gives elements 4b .. 4b + 3, the
 * pairs (words 0, 1) and (words 2, 3); mean + sd z is taken in double and
 * rounded to FP32. */
void tn_rand_normal(uint64_t seed, uint64_t stream, float mean, float sd, int64_t n, float *out);
/* exp_rand(emin, emax) of [Ootomo & Yokota 2021] section 4.1: random sign, exponent
 * uniform in the integers emin .. emax-1 (the paper's interval (a, b) read
 * as half-open, so that exp_rand(-15, 15) stays below FP16's overflow
 * threshold as the paper says it does), 23 uniformly random fraction bits. */
void tn_rand_exp(uint64_t seed, uint64_t stream, int emin, int emax, int64_t n, float *out);
#endif
