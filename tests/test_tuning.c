/* The handle's tuning switches: defaults, set / get, rejected values, and
 * the environment read once at tcnla_create (and never later). */
#include "tcnla.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const char *const tuning_vars[] = {
    "TCNLA_DISABLE_SM90", "TCNLA_SM90_PRESPLIT", "TCNLA_SM90_WIDE",    "TCNLA_SM90_F16",
    "TCNLA_LR_SM90",      "TCNLA_TRUST_BOUNDED", "TCNLA_DEFER",        "TCNLA_HOSVD_FUSE",
    "TCNLA_RSVD_GRAM",    "TCNLA_SYEV_FAST",     "TCNLA_SMALL_SVD_JACOBI", "TCNLA_OZ2_FUSED",
    "TCNLA_SMALL_SVD_DEFLATE"};
#define NVARS ((int)(sizeof tuning_vars / sizeof tuning_vars[0]))

/* the caller's values of the variables, cleared while a test runs */
typedef struct {
    char *v[NVARS];
} saved_env_t;
static void env_clear(saved_env_t *s) {
    for (int i = 0; i < NVARS; i++) {
        const char *e = getenv(tuning_vars[i]);
        s->v[i] = e ? strdup(e) : NULL;
        unsetenv(tuning_vars[i]);
    }
}
static void env_restore(saved_env_t *s) {
    for (int i = 0; i < NVARS; i++) {
        if (s->v[i]) setenv(tuning_vars[i], s->v[i], 1);
        else unsetenv(tuning_vars[i]);
        free(s->v[i]);
        s->v[i] = NULL;
    }
}

static int tuning_eq(const tcnla_tuning_t *a, const tcnla_tuning_t *b) {
    return a->sm90 == b->sm90 && a->sm90_presplit == b->sm90_presplit &&
           a->sm90_wide == b->sm90_wide && a->sm90_f16 == b->sm90_f16 &&
           a->lr_sm90 == b->lr_sm90 && a->trust_bounded == b->trust_bounded &&
           a->defer == b->defer && a->hosvd_fuse == b->hosvd_fuse &&
           a->rsvd_gram == b->rsvd_gram && a->syev_fast == b->syev_fast &&
           a->small_svd_jacobi == b->small_svd_jacobi && a->oz2_fused == b->oz2_fused &&
           a->small_svd_deflate == b->small_svd_deflate;
}

TEST(tuning_defaults) {
    const tcnla_tuning_t d = tcnla_tuning_default();
    CHECK_EQ_INT(d.sm90, 1);
    CHECK_EQ_INT(d.sm90_presplit, TCNLA_TUNING_AUTO);
    CHECK_EQ_INT(d.sm90_wide, TCNLA_TUNING_AUTO);
    CHECK_EQ_INT(d.sm90_f16, TCNLA_TUNING_AUTO);
    CHECK_EQ_INT(d.lr_sm90, 1);
    CHECK_EQ_INT(d.trust_bounded, 1);
    CHECK_EQ_INT(d.defer, 1);
    CHECK_EQ_INT(d.hosvd_fuse, 1);
    CHECK_EQ_INT(d.rsvd_gram, 1);
    CHECK_EQ_INT(d.syev_fast, 1);
    CHECK_EQ_INT(d.small_svd_jacobi, 0);
    CHECK_EQ_INT(d.oz2_fused, 1);
    CHECK_EQ_INT(d.small_svd_deflate, 1);

    saved_env_t s;
    env_clear(&s);
    tcnla_handle_t h = NULL;
    int st = tcnla_create(&h, TCNLA_BACKEND_CPU);
    env_restore(&s);
    REQUIRE(st == TCNLA_SUCCESS);
    tcnla_tuning_t t;
    memset(&t, 0x5a, sizeof t);
    CHECK(tcnla_get_tuning(h, &t) == TCNLA_SUCCESS);
    CHECK(tuning_eq(&t, &d));
    tcnla_destroy(h);
}

TEST(tuning_set_get_round_trip_and_rejects) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == TCNLA_SUCCESS);
    tcnla_tuning_t t = tcnla_tuning_default(), g;
    t.sm90 = 0, t.sm90_presplit = 1, t.sm90_wide = 0, t.sm90_f16 = 1, t.lr_sm90 = 0;
    t.trust_bounded = 0, t.defer = 0, t.hosvd_fuse = 0, t.rsvd_gram = 0, t.syev_fast = 0;
    t.small_svd_jacobi = 1, t.oz2_fused = 0, t.small_svd_deflate = 0;
    CHECK(tcnla_set_tuning(h, &t) == TCNLA_SUCCESS);
    CHECK(tcnla_get_tuning(h, &g) == TCNLA_SUCCESS);
    CHECK(tuning_eq(&g, &t));

    /* statuses: -1 handle, -2 struct */
    CHECK_EQ_INT(tcnla_set_tuning(NULL, &t), -1);
    CHECK_EQ_INT(tcnla_get_tuning(NULL, &g), -1);
    CHECK_EQ_INT(tcnla_set_tuning(h, NULL), -2);
    CHECK_EQ_INT(tcnla_get_tuning(h, NULL), -2);

    /* each field out of its range: -2, the handle's tuning unchanged */
    const tcnla_tuning_t d = tcnla_tuning_default();
    for (int f = 0; f < 13; f++) {
        for (int bad = 0; bad < 3; bad++) {
            tcnla_tuning_t b = d;
            int *p[13] = {&b.sm90,     &b.sm90_presplit, &b.sm90_wide,  &b.sm90_f16,
                          &b.lr_sm90,  &b.trust_bounded, &b.defer,      &b.hosvd_fuse,
                          &b.rsvd_gram, &b.syev_fast,    &b.small_svd_jacobi, &b.oz2_fused,
                          &b.small_svd_deflate};
            const int tri = f >= 1 && f <= 3; /* AUTO allowed */
            const int vals[3] = {2, -2, tri ? 7 : TCNLA_TUNING_AUTO};
            *p[f] = vals[bad];
            CHECK_MSG(tcnla_set_tuning(h, &b) == -2, "field %d value %d accepted", f, vals[bad]);
            CHECK(tcnla_get_tuning(h, &g) == TCNLA_SUCCESS && tuning_eq(&g, &t));
        }
    }
    /* AUTO where allowed */
    tcnla_tuning_t a = d;
    a.sm90_presplit = a.sm90_wide = a.sm90_f16 = TCNLA_TUNING_AUTO;
    CHECK(tcnla_set_tuning(h, &a) == TCNLA_SUCCESS);
    CHECK(tcnla_set_tuning(h, &d) == TCNLA_SUCCESS);
    CHECK(tcnla_get_tuning(h, &g) == TCNLA_SUCCESS && tuning_eq(&g, &d));
    tcnla_destroy(h);
}

TEST(tuning_environment_read_once_at_create) {
    saved_env_t s;
    env_clear(&s);
    setenv("TCNLA_DISABLE_SM90", "1", 1);
    setenv("TCNLA_SM90_PRESPLIT", "1", 1);
    setenv("TCNLA_SM90_WIDE", "0", 1);
    setenv("TCNLA_SM90_F16", "1", 1);
    setenv("TCNLA_LR_SM90", "0", 1);
    setenv("TCNLA_TRUST_BOUNDED", "0", 1);
    setenv("TCNLA_DEFER", "0", 1);
    setenv("TCNLA_HOSVD_FUSE", "0", 1);
    setenv("TCNLA_RSVD_GRAM", "0", 1);
    setenv("TCNLA_SYEV_FAST", "0", 1);
    setenv("TCNLA_SMALL_SVD_JACOBI", "1", 1);
    setenv("TCNLA_OZ2_FUSED", "0", 1);
    setenv("TCNLA_SMALL_SVD_DEFLATE", "0", 1);
    tcnla_handle_t h = NULL;
    int st = tcnla_create(&h, TCNLA_BACKEND_CPU);
    for (int i = 0; i < NVARS; i++) unsetenv(tuning_vars[i]);
    if (st != TCNLA_SUCCESS) {
        env_restore(&s);
        REQUIRE(st == TCNLA_SUCCESS);
    }
    tcnla_tuning_t t, g;
    CHECK(tcnla_get_tuning(h, &t) == TCNLA_SUCCESS);
    CHECK_EQ_INT(t.sm90, 0);
    CHECK_EQ_INT(t.sm90_presplit, 1);
    CHECK_EQ_INT(t.sm90_wide, 0);
    CHECK_EQ_INT(t.sm90_f16, 1);
    CHECK_EQ_INT(t.lr_sm90, 0);
    CHECK_EQ_INT(t.trust_bounded, 0);
    CHECK_EQ_INT(t.defer, 0);
    CHECK_EQ_INT(t.hosvd_fuse, 0);
    CHECK_EQ_INT(t.rsvd_gram, 0);
    CHECK_EQ_INT(t.syev_fast, 0);
    CHECK_EQ_INT(t.small_svd_jacobi, 1);
    CHECK_EQ_INT(t.oz2_fused, 0);
    CHECK_EQ_INT(t.small_svd_deflate, 0);

    /* set after create: nothing changes, in this handle or in the next one
     * (created without them) */
    setenv("TCNLA_DISABLE_SM90", "0", 1);
    setenv("TCNLA_SM90_PRESPLIT", "0", 1);
    setenv("TCNLA_DEFER", "1", 1);
    setenv("TCNLA_SMALL_SVD_JACOBI", "0", 1);
    float a = 1.0f, b = 2.0f, c = 0.0f; /* a call in between */
    CHECK(tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, 1.0f, &a, 1,
                      &b, 1, 0.0f, &c, 1) == TCNLA_SUCCESS);
    CHECK(c == 2.0f);
    CHECK(tcnla_get_tuning(h, &g) == TCNLA_SUCCESS && tuning_eq(&g, &t));
    for (int i = 0; i < NVARS; i++) unsetenv(tuning_vars[i]);
    CHECK(tcnla_get_tuning(h, &g) == TCNLA_SUCCESS && tuning_eq(&g, &t));
    tcnla_destroy(h);

    /* values other than the documented ones leave the defaults */
    setenv("TCNLA_SM90_PRESPLIT", "2", 1);
    setenv("TCNLA_DEFER", "no", 1);
    setenv("TCNLA_DISABLE_SM90", "0", 1);
    setenv("TCNLA_SMALL_SVD_JACOBI", "", 1);
    h = NULL;
    st = tcnla_create(&h, TCNLA_BACKEND_CPU);
    env_restore(&s);
    REQUIRE(st == TCNLA_SUCCESS);
    const tcnla_tuning_t d = tcnla_tuning_default();
    CHECK(tcnla_get_tuning(h, &g) == TCNLA_SUCCESS && tuning_eq(&g, &d));
    tcnla_destroy(h);
}
