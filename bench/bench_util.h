/* Small helpers shared by the benchmark programs under bench/. */
#ifndef TCNLA_BENCH_UTIL_H
#define TCNLA_BENCH_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Wall-clock seconds (monotonic), for timings that include the host. */
static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort comparison of doubles (medians of timings). */
static inline int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether name is one of the entries of a comma-separated list (NULL: every
 * name is). */
static inline int bench_in_list(const char *list, const char *name) {
    if (!list) return 1;
    const size_t n = strlen(name);
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, len)) return 1;
        if (!e) return 0;
        p = e + 1;
    }
}
/* A comma-separated list of positive numbers into out (at most cap): the
 * count, or -1 for an empty, malformed, non-positive or too long list. */
static inline int bench_parse_positive(const char *s, double *out, int cap) {
    int c = 0;
    while (*s) {
        char *end;
        const double v = strtod(s, &end);
        if (end == s || c == cap || !(v > 0.0)) return -1;
        out[c++] = v;
        if (*end && *end != ',') return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return c ? c : -1;
}
#endif
