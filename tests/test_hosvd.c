/* RP-HOSVD ([Ootomo & Yokota 2023] Algorithm 2) on generated Tucker tensors (Algorithm 3). */
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ||A - core x_1 Q_1 ... x_N Q_N||_F / ||A||_F, by expanding one mode at a time. */
static double tucker_err(int order, const int64_t *dims, const int64_t *ranks, const float *A,
                         const float *core, float *const *Q) {
    int64_t cur[8], sz = 1;
    for (int i = 0; i < order; i++) cur[i] = ranks[i], sz *= ranks[i];
    int64_t total = 1;
    for (int i = 0; i < order; i++) total *= dims[i];
    double *t = malloc(sizeof(double) * (size_t)total), *u = malloc(sizeof(double) * (size_t)total);
    for (int64_t i = 0; i < sz; i++) t[i] = core[i];
    for (int i = 0; i < order; i++) {
        int64_t L = 1, T = 1;
        for (int a = 0; a < i; a++) L *= cur[a];
        for (int a = i + 1; a < order; a++) T *= cur[a];
        for (int64_t tt = 0; tt < T; tt++)
            for (int64_t r = 0; r < dims[i]; r++)
                for (int64_t l = 0; l < L; l++) {
                    double s = 0;
                    for (int64_t j = 0; j < cur[i]; j++)
                        s += t[l + j * L + tt * L * cur[i]] * Q[i][r + j * dims[i]];
                    u[l + r * L + tt * L * dims[i]] = s;
                }
        cur[i] = dims[i];
        double *x = t;
        t = u, u = x;
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < total; i++) {
        num += (t[i] - A[i]) * (t[i] - A[i]);
        den += (double)A[i] * A[i];
    }
    free(t), free(u);
    return sqrt(num / den);
}

static double run(int order, const int64_t *dims, const int64_t *ranks, int64_t pad,
                  tcnla_gemm_method_t proj, tcnla_gemm_method_t gm, int *status) {
    tcnla_handle_t h;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    int64_t total = 1, csz = 1;
    for (int i = 0; i < order; i++) total *= dims[i], csz *= ranks[i];
    float *A = malloc(sizeof(float) * (size_t)total), *core = malloc(sizeof(float) * (size_t)csz);
    float *Q[8];
    for (int i = 0; i < order; i++) Q[i] = malloc(sizeof(float) * (size_t)(dims[i] * ranks[i]));
    tn_testmat_tucker(order, dims, ranks, pad, 7, A);
    tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
    for (int i = 0; i < order; i++) o.ranks[i] = ranks[i];
    o.proj_method = proj;
    o.gemm_method = gm;
    o.random_format = (proj == TCNLA_GEMM_SHGEMM_FP16 || proj == TCNLA_GEMM_SHGEMM_TF32) ? TCNLA_FMT_FP16 : TCNLA_FMT_FP32;
    *status = tcnla_hosvd(h, &o, order, dims, A, core, Q);
    double e = *status ? -1 : tucker_err(order, dims, ranks, A, core, Q);
    free(A), free(core);
    for (int i = 0; i < order; i++) free(Q[i]);
    tcnla_destroy(h);
    return e;
}

TEST(hosvd_recovers_tucker_tensor_to_fp32_level) {
    const int64_t dims[3] = {40, 36, 30}, ranks[3] = {10, 9, 8};
    int st;
    double e32 = run(3, dims, ranks, 2, TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_NATIVE_FP32, &st);
    REQUIRE(st == 0);
    double esh = run(3, dims, ranks, 2, TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_TF32, &st);
    CHECK_MSG(st == 0, "status %d: %s", st, tcnla_strerror(st));
    if (st) return;
    double etf = run(3, dims, ranks, 2, TCNLA_GEMM_TF32, TCNLA_GEMM_TF32, &st);
    REQUIRE(st == 0);
    printf("    order 3: FP32 %.3e, SHGEMM_FP16 + TCEC_TF32 %.3e, TF32 %.3e\n", e32, esh, etf);
    CHECK(e32 < 1e-5);
    CHECK(esh < 1e-5 && esh < 3 * e32);
    CHECK(etf > 10 * e32); /* TF32 projection loses accuracy, as [Ootomo & Yokota 2023] Fig. 9 shows */
}

TEST(hosvd_order_4_and_order_2) {
    const int64_t d4[4] = {12, 10, 9, 8}, r4[4] = {5, 5, 4, 4};
    int st;
    double e = run(4, d4, r4, 1, TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_TF32, &st);
    REQUIRE(st == 0);
    CHECK_MSG(e < 1e-5, "order 4: %.3e", e);
    const int64_t d2[2] = {50, 40}, r2[2] = {7, 7};
    e = run(2, d2, r2, 2, TCNLA_GEMM_SHGEMM_TF32, TCNLA_GEMM_TCEC_TF32, &st);
    REQUIRE(st == 0);
    CHECK_MSG(e < 1e-5, "order 2: %.3e", e);
}

/* The default core method TCEC_FP16: the intermediates of a rank-deficient
 * tensor (rows of rounding noise) fall back to TCEC_TF32 whatever the range
 * policy, so the default call succeeds at FP32 level under the handle's
 * default TCNLA_RANGE_ERROR, and leaves that policy in place; the first
 * product, on A itself, follows the policy: a tensor below FP16's range
 * (scaled by 2^-40) is refused under ERROR and decomposed under FALLBACK. */
TEST(hosvd_tcec_fp16_core_falls_back_on_intermediates_only) {
    const int64_t dims[3] = {40, 36, 30}, ranks[3] = {10, 9, 8}, total = 40 * 36 * 30;
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float *A = malloc(sizeof(float) * total), *core = malloc(sizeof(float) * 720);
    float *Q[3];
    for (int i = 0; i < 3; i++) Q[i] = malloc(sizeof(float) * (size_t)(dims[i] * ranks[i]));
    tn_testmat_tucker(3, dims, ranks, 2, 7, A);
    tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
    CHECK(o.gemm_method == TCNLA_GEMM_TCEC_FP16);
    for (int i = 0; i < 3; i++) o.ranks[i] = ranks[i];
    int st = tcnla_hosvd(h, &o, 3, dims, A, core, Q);
    CHECK_MSG(st == 0, "status %d: %s", st, tcnla_strerror(st));
    const double e = st ? 1.0 : tucker_err(3, dims, ranks, A, core, Q);
    printf("    default (SHGEMM_FP16 + TCEC_FP16): %.3e\n", e);
    CHECK(e < 1e-5);
    /* the policy is the handle's again: a product of FP16-range-breaking
     * operands is refused */
    float tiny[16], out[16];
    for (int i = 0; i < 16; i++) tiny[i] = 0x1p-40f * (float)(i + 1);
    tcnla_tuning_t tu;
    tcnla_get_tuning(h, &tu);
    tu.exact_scaling = 0; /* (on, the product scales its operands exactly) */
    REQUIRE(tcnla_set_tuning(h, &tu) == 0);
    CHECK_EQ_INT(tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, 4, 4, 4, 1.0f, tiny,
                             4, tiny, 4, 0.0f, out, 4),
                 TCNLA_ERR_RANGE);
    tu.exact_scaling = 1;
    REQUIRE(tcnla_set_tuning(h, &tu) == 0);
    /* A below FP16's range: tcnla_hosvd never fails on finite input, whatever
     * the handle's policy: the first core product runs TCEC_TF32 and says so */
    for (int64_t i = 0; i < total; i++) A[i] *= 0x1p-40f;
    o.proj_method = TCNLA_GEMM_NATIVE_FP32, o.random_format = TCNLA_FMT_FP32;
    tcnla_info_t info;
    o.info = &info;
    st = tcnla_hosvd(h, &o, 3, dims, A, core, Q);
    CHECK_MSG(st == 0, "status %d: %s", st, tcnla_strerror(st));
    CHECK(info.fallbacks == 1 && !(info.methods & (1u << TCNLA_GEMM_TCEC_FP16)));
    if (!st) CHECK(tucker_err(3, dims, ranks, A, core, Q) < 1e-5);
    free(A), free(core);
    for (int i = 0; i < 3; i++) free(Q[i]);
    tcnla_destroy(h);
}

TEST(hosvd_invalid_arguments) {
    tcnla_handle_t h;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    const int64_t dims[3] = {4, 4, 4};
    float A[64], core[8], q0[8], q1[8], q2[8];
    float *Q[3] = {q0, q1, q2};
    memset(A, 0, sizeof A);
    tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 3, dims, A, core, Q), -2); /* ranks unset */
    o.ranks[0] = o.ranks[1] = o.ranks[2] = 2;
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 1, dims, A, core, Q), -3);
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 9, dims, A, core, Q), -3);
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 3, dims, NULL, core, Q), -5);
    o.ranks[1] = 5;
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 3, dims, A, core, Q), -2);
    /* dimensions whose product overflows int64 (2^120): the dimensions are
     * wrong, not the options, and nothing overflows on the way */
    o.ranks[0] = o.ranks[1] = o.ranks[2] = 1;
    const int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 3, huge, A, core, Q), -4);
    const int64_t big[3] = {INT64_MAX, 2, 1};
    CHECK_EQ_INT(tcnla_hosvd(h, &o, 3, big, A, core, Q), -4);
    tcnla_destroy(h);
}
