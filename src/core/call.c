/* The per-call context (src/core/call.h). */
#include "core/internal.h"

#include <string.h>

void tn_call_init(tn_call_t *cl, tcnla_handle_t h) {
    memset(cl, 0, sizeof *cl);
    cl->h = h;
    cl->info.method = TCNLA_GEMM_DEFAULT;
}

void tn_call_count(tn_call_t *cl, tcnla_gemm_method_t asked) {
    const tcnla_gemm_method_t ran = cl->info.method;
    cl->info.products++;
    if (ran != asked) cl->info.fallbacks++;
    if ((int)ran > 0 && (int)ran < 32) cl->info.methods |= (uint32_t)1 << ran;
}

void tn_call_info(const tn_call_t *cl, tcnla_info_t *info) {
    if (info) *info = cl->info;
}

int tn_call_range_fallback(const tn_call_t *cl) {
    return cl->range_fallback || cl->h->range_policy == TCNLA_RANGE_FALLBACK;
}

int tn_call_may_scale(const tn_call_t *cl, tcnla_gemm_method_t method) {
    return !cl->scaling && cl->h->tuning.exact_scaling &&
           (method == TCNLA_GEMM_TCEC_FP16 || method == TCNLA_GEMM_SHGEMM_FP16 ||
            method == TCNLA_GEMM_FP16);
}
