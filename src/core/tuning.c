/* The handle's tuning switches (tcnla_tuning_t): defaults, the
 * environment's overrides (read here only, once per tcnla_create), and
 * their setters. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

tcnla_tuning_t tcnla_tuning_default(void) {
    tcnla_tuning_t t;
    memset(&t, 0, sizeof t);
    t.sm90 = 1;
    t.sm90_presplit = TCNLA_TUNING_AUTO;
    t.sm90_wide = TCNLA_TUNING_AUTO;
    t.sm90_f16 = TCNLA_TUNING_AUTO;
    t.lr_sm90 = 1;
    t.trust_bounded = 1;
    t.defer = 1;
    t.hosvd_fuse = 1;
    t.rsvd_gram = 1;
    t.syev_fast = 1;
    t.small_svd_jacobi = 0;
    t.exact_scaling = 1;
    t.oz2_fused = 1;
    t.small_svd_deflate = 1;
    return t;
}

/* "0" or "1" sets *v; anything else (unset included) leaves it */
static void env01(const char *name, int *v) {
    const char *e = getenv(name);
    if (e && (e[0] == '0' || e[0] == '1') && e[1] == 0) *v = e[0] - '0';
}

/* set, not empty and not "0": 1 */
static int env_set(const char *name) {
    const char *e = getenv(name);
    return e && *e && strcmp(e, "0") != 0;
}

void tn_tuning_from_env(tcnla_tuning_t *t) {
    *t = tcnla_tuning_default();
    if (env_set("TCNLA_DISABLE_SM90")) t->sm90 = 0;
    env01("TCNLA_SM90_PRESPLIT", &t->sm90_presplit);
    env01("TCNLA_SM90_WIDE", &t->sm90_wide);
    env01("TCNLA_SM90_F16", &t->sm90_f16);
    env01("TCNLA_LR_SM90", &t->lr_sm90);
    env01("TCNLA_TRUST_BOUNDED", &t->trust_bounded);
    env01("TCNLA_DEFER", &t->defer);
    env01("TCNLA_HOSVD_FUSE", &t->hosvd_fuse);
    env01("TCNLA_RSVD_GRAM", &t->rsvd_gram);
    env01("TCNLA_SYEV_FAST", &t->syev_fast);
    if (env_set("TCNLA_SMALL_SVD_JACOBI")) t->small_svd_jacobi = 1;
    env01("TCNLA_EXACT_SCALING", &t->exact_scaling);
    env01("TCNLA_OZ2_FUSED", &t->oz2_fused);
    env01("TCNLA_SMALL_SVD_DEFLATE", &t->small_svd_deflate);
}

static int is01(int v) { return v == 0 || v == 1; }
static int is_auto01(int v) { return v == TCNLA_TUNING_AUTO || is01(v); }

int tcnla_set_tuning(tcnla_handle_t h, const tcnla_tuning_t *t) {
    if (!h) return -1;
    TN_GUARD(h);
    if (!t || !is01(t->sm90) || !is_auto01(t->sm90_presplit) || !is_auto01(t->sm90_wide) ||
        !is_auto01(t->sm90_f16) || !is01(t->lr_sm90) || !is01(t->trust_bounded) ||
        !is01(t->defer) || !is01(t->hosvd_fuse) || !is01(t->rsvd_gram) || !is01(t->syev_fast) ||
        !is01(t->small_svd_jacobi) || !is01(t->exact_scaling) || !is01(t->oz2_fused) ||
        !is01(t->small_svd_deflate))
        return -2;
    h->tuning = *t;
    return TCNLA_SUCCESS;
}

int tcnla_get_tuning(tcnla_handle_t h, tcnla_tuning_t *t) {
    if (!h) return -1;
    if (!t) return -2;
    TN_GUARD(h);
    *t = h->tuning;
    return TCNLA_SUCCESS;
}
