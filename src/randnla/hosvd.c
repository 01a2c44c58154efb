/* Random-projection HOSVD ([Ootomo & Yokota 2023] Algorithm 2, Ahmadi-Asl et al.).
 *
 * Layout: the order-N tensor is stored with its first index fastest. For
 * mode i let L = I_1 ... I_{i-1} and T = I_{i+1} ... I_N; the tensor is then
 * T contiguous slabs M_t of L x I_i (column-major, leading dimension L), and
 * the mode-i unfolding A_(i) (I_i x L T, columns ordered l fastest) is
 * [M_0^T M_1^T ... M_{T-1}^T]. So, without transposed copies:
 *   W = A_(i) Omega = sum_t M_t^T Omega_t      (Omega_t: rows t L .. t L + L - 1)
 * Mode 1 (L = 1) and mode N (T = 1) are single GEMMs; the middle modes are
 * a strided batch of T slab products reduced into W (tn_sgemm_batched; on
 * the CUDA backend one product whose k runs through the slabs).
 * The core's mode products always contract the current first mode,
 * In (I_s x rest) -> Out (rest x J_s) = In^T Q_s: the modes turn round once
 * and end in the core's order, each product one GEMM with n = J_s.
 *
 * On Hopper (tn_hosvd_fused) mode 2's projection and the core's first mode
 * product are one pass over the tensor: both read op(A) = the slabs'
 * transposes, one with B = Omega_(2)'s slab rows, one with B = Q_1.
 *
 * Memory: one block of handle memory, allocated once, holds Omega during
 * the factors and then the two intermediate tensors of the core, so a call
 * costs one allocation and one free. Omega overlaps the intermediates,
 * except where the fused pass writes the first intermediate while it
 * reads Omega_(2) (1024^3, ranks 64: 929 MiB beside A instead of 801).
 *
 * Host synchronisations: the tensor's check (one), then, where the
 * backend defers verdicts (tn_defer_begin), one at the end for every
 * CholeskyQR's breakdown test and every core product's operand checks. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

tcnla_hosvd_opts_t tcnla_hosvd_opts_default(void) {
    tcnla_hosvd_opts_t o;
    memset(&o, 0, sizeof o);
    o.proj_method = TCNLA_GEMM_SHGEMM_FP16;
    /* TCEC_FP16 where the range check lets it (the first product, on the
     * tensor itself, for ordinary data); the later products take its
     * full-range fallback TCEC_TF32 where they must (see tcnla_hosvd) */
    o.gemm_method = TCNLA_GEMM_TCEC_FP16;
    o.random_format = TCNLA_FMT_FP16;
    o.orth = TCNLA_ORTH_CHOLQR2_FP64;
    o.on_breakdown = TCNLA_BREAKDOWN_RETRY;
    o.seed = 1;
    return o;
}

static int is_shgemm(tcnla_gemm_method_t m) {
    return m == TCNLA_GEMM_SHGEMM_FP16 || m == TCNLA_GEMM_SHGEMM_TF32;
}

/* W (I x J) = A_(i) Omega for a tensor whose mode-i slabs are L x I, T of them.
 * Omega (L T x J) is FP32 (Om32) or FP16 bits (Om16). */
static int project(tn_call_t *cl, tcnla_gemm_method_t meth, int64_t L, int64_t I, int64_t T,
                   int64_t J, const float *A, const float *Om32, const uint16_t *Om16, float *W) {
    const int64_t R = L * T;
    if (L == 1) /* A_(1) is A itself, I x T */
        return tn_sgemm(cl, meth, TCNLA_OP_N, TCNLA_OP_N, I, J, T, 1.0f, A, I, Om32, Om16, R,
                        0.0f, W, I);
    /* W = sum_t M_t^T Omega_t: slab t at A + t L I, Omega_t rows t L .. */
    return tn_sgemm_batched(cl, meth, TCNLA_OP_T, TCNLA_OP_N, I, J, L, 1.0f, A, L, L * I, Om32,
                            Om16, R, L, 0.0f, W, I, 0, T, 1);
}

/* Omega_(i) (the rows of mode i's unfolding x J_i) from random stream i */
static int fill_omega(tn_call_t *cl, const tcnla_hosvd_opts_t *o, int sh, int order,
                      const int64_t *dims, int i, void *Om) {
    int64_t R = 1;
    for (int a = 0; a < order; a++)
        if (a != i) R *= dims[a];
    const int64_t J = o->ranks[i];
    return tn_random_fill(cl, TCNLA_RAND_GAUSSIAN, sh ? TCNLA_FMT_FP16 : o->random_format, sh,
                          o->seed, (uint64_t)i, R, J, Om, R);
}

/* 2. core = A x_1 Q_1^T ... x_N Q_N^T, one mode at a time, always the
 * first: the current tensor (I_s x rest, its first mode first) gives
 * Out (rest x J_s) = In^T Q_s, a tensor whose modes are the rest and
 * then J_s. After N products the modes have gone round once: (J_1, ..,
 * J_N), the core in its own order. Every product is one GEMM with
 * n = J_s (the 64-wide rank), k = I_s and no strided batches; the
 * largest intermediate is the first, I_2 .. I_N J_1, in buf[0]; the
 * second in buf[1]. first_done: the first is in buf[0] already (the fused
 * pass). */
static int core_products(tn_call_t *cl, const tcnla_hosvd_opts_t *o, int order,
                         const int64_t *dims, int64_t total, const float *A, float *core,
                         float *const *Q, float *const *buf, int first_done) {
    int st = TCNLA_SUCCESS;
    const float *in = first_done ? buf[0] : A;
    int64_t rest = first_done ? total / dims[0] * o->ranks[0] : total;
    for (int i = first_done ? 1 : 0; i < order && st == TCNLA_SUCCESS; i++) {
        const int64_t I = dims[i], J = o->ranks[i];
        rest /= I; /* the other modes of the current tensor */
        float *out = i == order - 1 ? core : buf[i & 1];
        /* The intermediates (i > 0) of a rank-deficient tensor hold rows of
         * pure rounding noise, far below FP16's range relative to their own
         * size: products on them run the method's full-range partner
         * (TCEC_FP16 -> TCEC_TF32) straight away, without the range check
         * that would fail there (and that, a pass over the intermediate,
         * costs about what the TCEC_TF32 product does: H200, 1024^3, 0.14
         * against 0.17 ms). The product on A itself follows the handle's
         * range policy. */
        const tn_method_info *gm = tn_method(o->gemm_method);
        const tcnla_gemm_method_t meth = i > 0 && gm->fp16_range ? gm->fallback : o->gemm_method;
        st = tn_sgemm(cl, meth, TCNLA_OP_T, TCNLA_OP_N, rest, J, I, 1.0f, in, I, Q[i], NULL, I, 0.0f,
                         out, rest);
        rest *= J;
        in = out;
    }
    return st;
}

int tcnla_hosvd(tcnla_handle_t h, const tcnla_hosvd_opts_t *o, int order, const int64_t *dims,
                const float *A, float *core, float *const *Q) {
    if (!h) return -1;
    if (!o) return -2;
    if (order < 2 || order > TCNLA_HOSVD_MAX_ORDER) return -3;
    if (!dims) return -4;
    int64_t total = 1;
    for (int i = 0; i < order; i++) {
        if (dims[i] < 1) return -4;
        if (dims[i] > INT64_MAX / total) return -4; /* the tensor's size overflows */
        if (o->ranks[i] < 1 || o->ranks[i] > dims[i]) return -2;
        total *= dims[i];
    }
    if ((int)o->proj_method <= 0 || (int)o->proj_method >= (int)TCNLA_GEMM_METHOD_COUNT ||
        (int)o->gemm_method <= 0 || (int)o->gemm_method >= (int)TCNLA_GEMM_METHOD_COUNT ||
        is_shgemm(o->gemm_method) || (is_shgemm(o->proj_method) && o->random_format != TCNLA_FMT_FP16) ||
        (int)o->random_format < 0 || (int)o->random_format > (int)TCNLA_FMT_E5M2 ||
        (int)o->orth < 0 || (int)o->orth > (int)TCNLA_ORTH_CHOLQR2_FP64)
        return -2;
    if (!A) return -5;
    if (!core) return -6;
    if (!Q) return -7;
    for (int i = 0; i < order; i++)
        if (!Q[i]) return -7;
    TN_GUARD(h);
    tn_call_t call, *cl = &call;
    tn_call_init(cl, h);
    cl->range_fallback = 1; /* finite input never fails for want of FP16's range */

    int st = TCNLA_SUCCESS;
    const int sh = is_shgemm(o->proj_method);
    /* The core's largest intermediate is the first (I_2 .. I_N x J_1,
     * below). One block serves Omega (the factors) and then the core's two
     * intermediates. */
    const int64_t sz = total / dims[0] * o->ranks[0];
    size_t om_bytes = 0;
    for (int i = 0; i < order; i++) {
        size_t b = (size_t)(total / dims[i]) * (size_t)o->ranks[i] * (sh ? 2 : 4);
        if (b > om_bytes) om_bytes = b;
    }
    const size_t buf_bytes = sizeof(float) * (size_t)sz;
    const size_t buf_off = (buf_bytes + 255) & ~(size_t)255;
    size_t block_bytes = order > 2 ? buf_off + buf_bytes : buf_bytes; /* order 2: one buffer */
    /* The fused pass (tn_hosvd_fused: mode 2's projection and the core's
     * first product in one read of A) writes the first intermediate while
     * it reads Omega_(2): Omega then gets its own place after the buffers */
    const int fuse = order >= 3 && o->proj_method == TCNLA_GEMM_SHGEMM_FP16 &&
                     o->gemm_method == TCNLA_GEMM_TCEC_FP16 &&
                     tn_hosvd_fused_possible(h, dims[0], o->ranks[0], o->ranks[1]);
    const size_t om_off = fuse ? (block_bytes + 255) & ~(size_t)255 : 0;
    if (om_off + om_bytes > block_bytes) block_bytes = om_off + om_bytes;
    char *block = NULL;
    st = tn_scratch_malloc(h, (void **)&block, block_bytes);
    if (st != TCNLA_SUCCESS) return st;
    tn_bounded_begin(cl); /* device memory: the tensor plus the one block above */
    void *Om = block + om_off;
    /* Omega is only ever written by the fills below: the projections skip
     * its NaN / Inf check (and the host synchronisation with it) */
    if (sh) tn_trust_f16(cl, (const uint16_t *)Om, om_bytes / 2);
    const int checked = tn_method(o->proj_method)->tensor_core ||
                        tn_method(o->gemm_method)->tensor_core;
    /* every factor's projection and the core's first product read A in
     * some layout: checked once, element by element */
    const tcnla_gemm_method_t ms[2] = {o->proj_method, o->gemm_method};
    /* SHGEMM_FP16 projections: that check folded into mode 1's projection
     * where the backend can (Hopper, ranks[0] <= 64; H200, 1024^3: -0.8
     * ms), Omega_(1) drawn first */
    int first = 0, om1 = 0; /* mode 1 projected (and A trusted); Omega_(1) drawn */
    if (checked && o->proj_method == TCNLA_GEMM_SHGEMM_FP16) {
        st = fill_omega(cl, o, sh, order, dims, 0, Om);
        om1 = 1;
        if (st == TCNLA_SUCCESS)
            st = tn_gemm_trusting(cl, o->proj_method, TCNLA_OP_N, dims[0], o->ranks[0],
                                  total / dims[0], A, dims[0], NULL, (const uint16_t *)Om,
                                  total / dims[0], Q[0], dims[0], ms, 2, &first);
    }
    /* Else Omega_(1) drawn on a side stream while A is checked (the fill is
     * arithmetic, the check memory traffic), joined before anything else.
     * Only where there is a check: on the side the fill takes one block per
     * SM, slower on its own (H200, 1024^3, FP32 pipeline: +0.28 ms; with the
     * check: -0.23 ms) */
    if (st == TCNLA_SUCCESS && !first) {
        st = checked && !om1 ? tn_side_begin(cl) : TCNLA_SUCCESS;
        if (st == TCNLA_SUCCESS && !om1) {
            st = fill_omega(cl, o, sh, order, dims, 0, Om);
            const int st2 = checked ? tn_side_end(cl) : TCNLA_SUCCESS;
            if (st == TCNLA_SUCCESS) st = st2;
        }
        if (st == TCNLA_SUCCESS) st = tn_trust(cl, A, dims[0], dims[0], total / dims[0], ms, 2);
        const int st2 = tn_side_join(cl);
        if (st == TCNLA_SUCCESS) st = st2;
    }
    float *buf[2] = {(float *)block, order > 2 ? (float *)(block + buf_off) : NULL};

    /* From here on the verdicts of the factors' CholeskyQRs and of the
     * core products' operand checks (not the projections') are deferred
     * where the backend can (tn_defer_begin): one host synchronisation at
     * the end instead of one or two per step (1024^3: nine), and a step
     * redone only where its verdict came up (never for ordinary data). */
    const int deferred = st == TCNLA_SUCCESS && tn_defer_begin(cl) == TCNLA_SUCCESS;
    int dq[TCNLA_HOSVD_MAX_ORDER] = {0}; /* factor i's CholeskyQR deferred */
    int fused = 0; /* the core's first product done with mode 2's projection */

    /* 1. factors: W = A_(i) Omega_(i), Q_i = orth(W) */
    for (int i = 0; i < order && st == TCNLA_SUCCESS; i++) {
        int64_t L = 1, T = 1, I = dims[i], J = o->ranks[i];
        for (int a = 0; a < i; a++) L *= dims[a];
        for (int a = i + 1; a < order; a++) T *= dims[a];
        if (i > 0) st = fill_omega(cl, o, sh, order, dims, i, Om);
        /* mode 2: with the core's first product where the backend can
         * (H200, 1024^3: one read of A instead of two) */
        if (st == TCNLA_SUCCESS && i == 1 && fuse)
            st = tn_hosvd_fused(cl, dims[0], dims[1], T, A, Q[0], o->ranks[0],
                                (const uint16_t *)Om, J, buf[0], Q[1], &fused);
        /* (the projections decide as they go: nothing redoes them; where A
         * is trusted they have nothing to wait for anyway) */
        tn_defer_hold(cl, 1);
        if (st == TCNLA_SUCCESS && !(i == 0 && first) && !(i == 1 && fused))
            st = project(cl, o->proj_method, L, I, T, J, A, sh ? NULL : (const float *)Om,
                         sh ? (const uint16_t *)Om : NULL, Q[i]);
        tn_defer_hold(cl, 0);
        if (st == TCNLA_SUCCESS && deferred) {
            st = tn_orthonormalize_deferred(cl, o->orth, I, J, Q[i], I, TN_DEFER_ORTH + i);
            dq[i] = st == TCNLA_SUCCESS;
            if (st == TCNLA_ERR_NOT_SUPPORTED) st = TCNLA_SUCCESS; /* as below */
        }
        if (st == TCNLA_SUCCESS && !dq[i])
            st = tn_orthonormalize(cl, o->orth, o->on_breakdown, I, J, Q[i], I, NULL, 0, NULL);
    }
    tn_trust_f16(cl, NULL, 0); /* the block holds the core's FP32 tensors from here */
    /* 2. the core (stream order keeps Omega's last reader ahead of the
     * first write into the buffers) */
    if (st == TCNLA_SUCCESS) st = core_products(cl, o, order, dims, total, A, core, Q, buf, fused);
    if (deferred) { /* one wait for every verdict */
        int fl[TN_DEFER_SLOTS];
        const int st2 = tn_defer_end(cl, fl);
        if (st == TCNLA_SUCCESS) st = st2;
        int redo = fl[TN_DEFER_GEMM] | fl[TN_DEFER_GEMM + 1] | fl[TN_DEFER_GEMM + 2];
        /* a factor whose CholeskyQR broke down still holds its W: now as
         * without deferral (retried as o->on_breakdown says), then the
         * core again; likewise where a product's operand check failed */
        for (int i = 0; i < order && st == TCNLA_SUCCESS; i++)
            if (dq[i] && fl[TN_DEFER_ORTH + i]) {
                st = tn_orthonormalize(cl, o->orth, o->on_breakdown, dims[i], o->ranks[i], Q[i],
                                          dims[i], NULL, 0, NULL);
                redo = 1;
            }
        if (st == TCNLA_SUCCESS && redo)
            st = core_products(cl, o, order, dims, total, A, core, Q, buf, 0);
    }
    tn_untrust(cl);
    tn_bounded_end(cl);
    int st2 = tn_scratch_free(h, block);
    tn_call_info(cl, o->info);
    return st != TCNLA_SUCCESS ? st : st2;
}
