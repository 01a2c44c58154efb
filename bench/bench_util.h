/* Small helpers shared by the benchmark programs under bench/. */
#ifndef TCNLA_BENCH_UTIL_H
#define TCNLA_BENCH_UTIL_H
#include <stdio.h>
#include <stdlib.h>

/* Exits with a message naming the program, the step and the line when a
 * call (CUDA, cuBLAS, cuSOLVER, cuRAND or tcnla) returns nonzero. */
#define CHK(x, what)                                                                           \
    do {                                                                                       \
        int s_ = (int)(x);                                                                     \
        if (s_ != 0) {                                                                         \
            fprintf(stderr, "%s: %s failed (%d, line %d)\n", BENCH_NAME, what, s_, __LINE__);  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* qsort comparison of doubles (medians of timings). */
static inline int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#endif
