/* Checks shared by the libFuzzer targets of the file-format layer: every
 * result must satisfy the contract of app/io/io.h, else the target aborts
 * (which libFuzzer reports as a crash). */
#ifndef TCNLA_FUZZ_COMMON_H
#define TCNLA_FUZZ_COMMON_H
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Matrices are capped small so that each input runs fast. */
#define FUZZ_CAP ((size_t)1 << 20)

#define FUZZ_ASSERT(cond)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* A status and its message/result: failure leaves a one-line message that
 * starts with the name and an empty matrix; success a matrix within the cap. */
static inline void fuzz_check_result(int st, const tn_matrix *m, const char *err,
                                     const char *name) {
    FUZZ_ASSERT(st <= 0 && st >= TN_IO_ERR_RANGE);
    if (st) {
        FUZZ_ASSERT(strncmp(err, name, strlen(name)) == 0 && strlen(err) > strlen(name) + 2);
        FUZZ_ASSERT(strchr(err, '\n') == NULL);
        FUZZ_ASSERT(m->data == NULL && m->rows == 0 && m->cols == 0);
        return;
    }
    FUZZ_ASSERT(m->rows >= 0 && m->cols >= 0);
    size_t es = m->is_double ? 8 : 4;
    FUZZ_ASSERT(m->cols == 0 || (uint64_t)m->rows <= FUZZ_CAP / es / (uint64_t)m->cols);
    FUZZ_ASSERT((m->rows * m->cols == 0) == (m->data == NULL));
    /* Touch every element (ASan checks the allocation's extent). */
    volatile unsigned char sink = 0;
    for (size_t k = 0; k < (size_t)(m->rows * m->cols) * es; k++)
        sink ^= ((const unsigned char *)m->data)[k];
    (void)sink;
}
#endif
