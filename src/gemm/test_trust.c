/* tn_trust_covers (src/gemm/trust.c): which views of an operand checked
 * once by a driver (tn_cuda_trust) may skip their per-product check. A
 * wrong "yes" would let a product run unchecked on elements nobody
 * checked, or on vectors whose check was never made: every case below
 * names which. */
#include "core/internal.h"
#include "tcnla.h"
#include "test.h"

#include <stdint.h>

enum { M6 = TCNLA_GEMM_TCEC_FP16, M8 = TCNLA_GEMM_SHGEMM_FP16 };

static tn_trust_t rec(int64_t ld, unsigned any, unsigned rows, unsigned cols) {
    tn_trust_t t;
    t.base = 4096; /* an address; nothing is read */
    t.ld = ld, t.rows = 100, t.cols = 50;
    t.mask = any, t.mask_rows = rows, t.mask_cols = cols;
    return t;
}
/* the address of element (r, c) of the record with leading dimension ld */
static uintptr_t at(const tn_trust_t *t, int64_t r, int64_t c) {
    return t->base + 4u * (uintptr_t)(r + c * t->ld);
}

TEST(trust_dense_any_layout) {
    const tn_trust_t t = rec(100, 1u << M6, 0, 0);
    CHECK(tn_trust_covers(&t, M6, t.base, 100, 100, 50, 0, 1, 0));
    CHECK(tn_trust_covers(&t, M6, t.base, 100, 100, 50, 0, 1, 1));
    CHECK(!tn_trust_covers(&t, M8, t.base, 100, 100, 50, 0, 1, 0)); /* another method */
    CHECK(!tn_trust_covers(&t, 0, t.base, 100, 100, 50, 0, 1, 0));
    CHECK(!tn_trust_covers(&t, 40, t.base, 100, 100, 50, 0, 1, 0));
    /* a reinterpretation of the dense span (another ld) inside it */
    CHECK(tn_trust_covers(&t, M6, t.base, 1000, 1000, 5, 0, 1, 1));
    CHECK(tn_trust_covers(&t, M6, at(&t, 37, 3), 100, 63, 47, 0, 1, 0));
    /* one element past the end, before the start, misaligned */
    CHECK(!tn_trust_covers(&t, M6, at(&t, 1, 0), 100, 100, 50, 0, 1, 0));
    CHECK(!tn_trust_covers(&t, M6, t.base - 4, 100, 100, 50, 0, 1, 0));
    CHECK(!tn_trust_covers(&t, M6, t.base + 2, 100, 10, 10, 0, 1, 0));
    /* batches: the last matrix inside the span or not */
    CHECK(tn_trust_covers(&t, M6, t.base, 100, 100, 10, 1000, 5, 0));
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 10, 1001, 5, 0));
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 10, 0, 5, 0));
    /* sizes that would overflow a naive end computation */
    CHECK(!tn_trust_covers(&t, M6, t.base, INT64_MAX / 2, 10, 3, 0, 1, 0));
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 10, INT64_MAX / 4, 3, 0));
}

TEST(trust_padded_stays_inside_the_block) {
    const tn_trust_t t = rec(128, 1u << M6, 0, 0);
    CHECK(tn_trust_covers(&t, M6, t.base, 128, 100, 50, 0, 1, 0));
    CHECK(tn_trust_covers(&t, M6, at(&t, 20, 5), 128, 80, 45, 0, 1, 1));
    CHECK(!tn_trust_covers(&t, M6, at(&t, 20, 5), 128, 81, 45, 0, 1, 1)); /* padding rows */
    CHECK(!tn_trust_covers(&t, M6, at(&t, 0, 5), 128, 100, 46, 0, 1, 1)); /* past the columns */
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 50, 0, 1, 0));       /* another ld */
    CHECK(!tn_trust_covers(&t, M6, t.base, 128, 100, 10, 1280, 2, 0));    /* no batches */
}

TEST(trust_by_rows_needs_whole_rows) {
    for (int64_t ld = 100; ld <= 128; ld += 28) {
        const tn_trust_t t = rec(ld, 0, 1u << M6, 0);
        CHECK(tn_trust_covers(&t, M6, t.base, ld, 100, 50, 0, 1, 0));
        CHECK(tn_trust_covers(&t, M6, at(&t, 10, 0), ld, 10, 50, 0, 1, 0));
        CHECK(!tn_trust_covers(&t, M6, t.base, ld, 100, 50, 0, 1, 1));        /* columns */
        CHECK(!tn_trust_covers(&t, M6, t.base, ld, 100, 49, 0, 1, 0));        /* part rows */
        CHECK(!tn_trust_covers(&t, M6, at(&t, 0, 1), ld, 100, 49, 0, 1, 0));  /* part rows */
        CHECK(!tn_trust_covers(&t, M6, t.base, 2 * ld, 100, 25, 0, 1, 0));    /* other rows */
        CHECK(!tn_trust_covers(&t, M6, t.base, ld, 100, 25, 25 * ld, 2, 0));  /* halves */
    }
}

TEST(trust_by_columns_needs_unions_of_whole_columns) {
    const tn_trust_t t = rec(100, 0, 0, 1u << M6);
    CHECK(tn_trust_covers(&t, M6, t.base, 100, 100, 50, 0, 1, 1));
    CHECK(tn_trust_covers(&t, M6, at(&t, 0, 7), 100, 100, 3, 0, 1, 1));
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 50, 0, 1, 0)); /* rows */
    /* a vector of two or ten whole columns (the next mode's unfolding) */
    CHECK(tn_trust_covers(&t, M6, t.base, 200, 200, 25, 0, 1, 1));
    CHECK(tn_trust_covers(&t, M6, t.base, 1000, 1000, 5, 0, 1, 1));
    CHECK(!tn_trust_covers(&t, M6, t.base, 200, 150, 25, 0, 1, 1)); /* 1.5 columns */
    CHECK(!tn_trust_covers(&t, M6, at(&t, 50, 0), 100, 100, 49, 0, 1, 1)); /* straddles */
    CHECK(!tn_trust_covers(&t, M6, t.base, 150, 100, 30, 0, 1, 1));  /* columns drift */
    /* batches of slabs (the middle-mode projection) */
    CHECK(tn_trust_covers(&t, M6, t.base, 100, 100, 10, 1000, 5, 1));
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 10, 1050, 4, 1));
    CHECK(!tn_trust_covers(&t, M6, t.base, 100, 100, 10, 1000, 6, 1)); /* past the end */
    /* padded: each vector exactly one whole column */
    const tn_trust_t p = rec(128, 0, 0, 1u << M6);
    CHECK(tn_trust_covers(&p, M6, at(&p, 0, 3), 128, 100, 40, 0, 1, 1));
    CHECK(!tn_trust_covers(&p, M6, at(&p, 0, 3), 128, 99, 40, 0, 1, 1));
    CHECK(!tn_trust_covers(&p, M6, at(&p, 1, 3), 128, 99, 40, 0, 1, 1));
}
