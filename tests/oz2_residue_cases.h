/* The operands of the residue-kernel tests (src/backend/cuda/test_gpu_oz2_residues.c
 * on the GPU, tests/oz2_residues_emulate.cpp on the CPU): nv vectors of
 * length k, element i of vector v at x[v sv + i sl] (along_l: sl = 1, sv =
 * ld; else sv = 1, sl = ld), FP64 values that FP32 holds exactly where
 * f32; per vector a random exponent ev in [-60, 60] and sig[v] = -ev (so
 * |trunc(x 2^(h + sig))| < 2^h), elements uniform in (-2^ev, 2^ev) with
 * zeros, the two largest magnitudes below 2^ev and a subnormal mixed in;
 * the leading dimension's padding 12345 (not to be read). C and C++. */
#ifndef TCNLA_TESTS_OZ2_RESIDUE_CASES_H
#define TCNLA_TESTS_OZ2_RESIDUE_CASES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t oz2c_next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void oz2c_fill(uint64_t seed, int f32, int along_l, int64_t nv, int64_t k,
                             int64_t ld, double *x, int *sig) {
    const int64_t sv = along_l ? ld : 1, sl = along_l ? 1 : ld;
    const size_t nx = (size_t)(ld * (along_l ? nv : k));
    uint64_t s = seed;
    for (int64_t v = 0; v < nv; v++) {
        const int ev = (int)(oz2c_next(&s) % 121) - 60;
        sig[v] = -ev;
        for (int64_t i = 0; i < k; i++) {
            const uint64_t u = oz2c_next(&s);
            const double top = ldexp(1.0, ev) * (f32 ? 1.0 - 0x1p-24 : 1.0 - 0x1p-53);
            double val = ldexp((double)(int64_t)(u >> 11) * 0x1p-53 * 2.0 - 1.0, ev);
            switch (u & 31) {
            case 0: val = 0.0; break;
            case 1: val = top; break;
            case 2: val = -top; break;
            case 3: val = f32 ? 0x1p-140 : 0x1p-1070; break; /* subnormal */
            default: break;
            }
            if (f32) val = (double)(float)val;
            x[v * sv + i * sl] = val;
        }
    }
    for (size_t i = 0; i < nx; i++) { /* the leading dimension's padding */
        const int64_t v = along_l ? (int64_t)i / ld : (int64_t)i % ld;
        const int64_t l = along_l ? (int64_t)i % ld : (int64_t)i / ld;
        if (v >= nv || l >= k) x[i] = 12345.0;
    }
}

#endif
