/* The handle's record of its memory blocks (src/core/handle.c): what
 * reaches the backend's free, and what tcnla_destroy does with blocks still
 * live. The CPU backend's table with counting free functions in place. */
#include "core/backend.h"
#include "core/internal.h"
#include "tcnla.h"
#include "test.h"

#include <stdlib.h>

static void *freed[512];
static int nfreed, nscratch_freed;

static int counting_free(tcnla_handle_t h, void *p) {
    if (nfreed < 512) freed[nfreed] = p;
    nfreed++;
    return tn_cpu_ops.free(h, p);
}

static int counting_scratch_free(tcnla_handle_t h, void *p) {
    nscratch_freed++;
    return tn_cpu_ops.scratch_free(h, p);
}

TEST(handle_free_and_destroy_reach_the_backend_once_per_block) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    static tn_backend_ops ops;
    ops = tn_cpu_ops;
    ops.free = counting_free;
    ops.scratch_free = counting_scratch_free;
    h->ops = &ops;
    nfreed = nscratch_freed = 0;
    void *blk[200];
    for (int i = 0; i < 200; i++) REQUIRE(tcnla_malloc(h, &blk[i], 16) == 0);
    void *s = NULL;
    REQUIRE(tn_scratch_malloc(h, &s, 32) == 0 && s);
    CHECK_EQ_INT(tcnla_free(h, s), -2); /* a driver's scratch block is not the caller's */
    CHECK_EQ_INT(tn_scratch_free(h, blk[0]), TCNLA_ERR_INTERNAL); /* nor the other way */
    CHECK_EQ_INT(tn_scratch_free(h, s), 0);
    CHECK_EQ_INT(nscratch_freed, 1);
    for (int i = 0; i < 50; i++) CHECK_EQ_INT(tcnla_free(h, blk[i]), 0);
    for (int i = 0; i < 50; i++) CHECK_EQ_INT(tcnla_free(h, blk[i]), -2);
    CHECK_EQ_INT(nfreed, 50);
    CHECK_EQ_INT(h->mem.count, 150);
    /* the 150 blocks still live are freed by tcnla_destroy, each once */
    CHECK_EQ_INT(tcnla_destroy(h), 0);
    CHECK_EQ_INT(nfreed, 200);
    CHECK_EQ_INT(nscratch_freed, 1);
    int missing = 0;
    for (int i = 50; i < 200; i++) {
        int seen = 0;
        for (int j = 50; j < 200; j++) seen += freed[j] == blk[i];
        missing += seen != 1;
    }
    CHECK_EQ_INT(missing, 0);
}
