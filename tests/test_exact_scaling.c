/* Exact power-of-two scaling of the FP16 methods (src/gemm/scaling.c), on
 * the CPU backend's Tensor Core model: operands whose rows of op(A) and
 * columns of op(B) lie anywhere in FP32's range compute exactly what the
 * method computes on the same operands brought into FP16's range (the same
 * bits, times 2^-(e_i + f_j)), within 1.0x native SGEMM's error on the same
 * inputs; operands inside the range compute as without scaling. */
#include "tcnla.h"
#include "test.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tcnla_handle_t cpu(void) {
    tcnla_handle_t h = NULL;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    return h;
}

static void set_scaling(tcnla_handle_t h, int on) {
    tcnla_tuning_t t;
    tcnla_get_tuning(h, &t);
    t.exact_scaling = on;
    tcnla_set_tuning(h, &t);
}

/* random integers in -E..E */
static void rand_exps(uint64_t stream, int E, int n, int *e) {
    float *u = malloc(sizeof(float) * (size_t)n);
    tcnla_rand_uniform(77, stream, 0.0f, 1.0f, n, u);
    for (int i = 0; i < n; i++) {
        int v = (int)floorf(u[i] * (float)(2 * E + 1)) - E;
        e[i] = v > E ? E : v;
    }
    free(u);
}

/* row i of op(X) (rows x cols stored, ld rows) times 2^e_i: vcol 0 scales
 * the stored rows, 1 the stored columns */
static void scale_vec(float *X, int rows, int cols, int vcol, const int *e) {
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) X[i + j * rows] = ldexpf(X[i + j * rows], vcol ? e[j] : e[i]);
}

/* The same bits as the unscaled product, for every op combination, three
 * methods, and alpha / beta (C scaled as the product is). A wrong exponent,
 * a rounding in the scaling, or a skipped unscaling changes bits here. */
TEST(exact_scaling_gives_the_unscaled_bits_times_powers_of_two) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 20, N = 18, K = 70 };
    const tcnla_gemm_method_t meths[3] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_SHGEMM_FP16,
                                          TCNLA_GEMM_FP16};
    float A0[M * K], B0[K * N], A[M * K], B[K * N], C0[M * N], C[M * N], Ci[M * N];
    int er[M], ec[N];
    rand_exps(1, 40, M, er);
    rand_exps(2, 40, N, ec);
    er[0] = 80, ec[0] = -60; /* one row near 2^80, one column near 2^-60 (C stays normal) */
    tcnla_rand_uniform(5, 1, -1, 1, M * K, A0);
    tcnla_rand_uniform(5, 2, -1, 1, K * N, B0);
    for (int i = 0; i < K * N; i++) /* SHGEMM's B: FP16 values, exact under the scaling */
        B0[i] = tcnla_f16_to_f32(tcnla_f32_to_f16(B0[i], TCNLA_ROUND_RN));
    tcnla_rand_uniform(5, 3, -1, 1, M * N, Ci);
    int bad = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                const int lda = ta ? K : M, ldb = tb ? N : K;
                /* op(A)'s rows: stored rows (N) or columns (T); op(B)'s
                 * columns: stored columns (N) or rows (T) */
                memcpy(A, A0, sizeof A), memcpy(B, B0, sizeof B);
                scale_vec(A, ta ? K : M, ta ? M : K, ta, er);
                scale_vec(B, tb ? N : K, tb ? K : N, !tb, ec);
                const float alpha = 0.75f, beta = -0.5f;
                memcpy(C0, Ci, sizeof C0);
                tcnla_info_t info;
                int st = tcnla_sgemm_ex(h, meths[mi], ta, tb, M, N, K, alpha, A0, lda, B0, ldb,
                                        beta, C0, M, &info);
                CHECK(st == 0 && info.scaled == 0);
                for (int j = 0; j < N; j++)
                    for (int i = 0; i < M; i++) C[i + j * M] = ldexpf(Ci[i + j * M], er[i] + ec[j]);
                st = tcnla_sgemm_ex(h, meths[mi], ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C,
                                    M, &info);
                CHECK_MSG(st == 0, "%s ta %d tb %d: status %d", tcnla_gemm_method_name(meths[mi]),
                          ta, tb, st);
                CHECK(info.scaled == 1 && info.method == meths[mi] && info.fallbacks == 0);
                for (int j = 0; j < N; j++)
                    for (int i = 0; i < M; i++) {
                        const float want = ldexpf(C0[i + j * M], er[i] + ec[j]);
                        if (memcmp(&want, &C[i + j * M], sizeof want)) bad++;
                    }
                CHECK_MSG(bad == 0, "%s ta %d tb %d: %d elements differ",
                          tcnla_gemm_method_name(meths[mi]), ta, tb, bad);
                bad = 0;
            }
    /* SHGEMM with B given in FP16: op(A)'s rows alone are scaled */
    uint16_t B16[K * N];
    for (int i = 0; i < K * N; i++) B16[i] = tcnla_f32_to_f16(B0[i], TCNLA_ROUND_RN);
    memcpy(A, A0, sizeof A);
    scale_vec(A, M, K, 0, er);
    tcnla_info_t info;
    CHECK(tcnla_shgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A0, M, B16,
                          K, 0, C0, M, &info) == 0 && info.scaled == 0);
    CHECK(tcnla_shgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A, M, B16,
                          K, 0, C, M, &info) == 0 && info.scaled == 1);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            const float want = ldexpf(C0[i + j * M], er[i]);
            if (memcmp(&want, &C[i + j * M], sizeof want)) bad++;
        }
    CHECK_MSG(bad == 0, "SHGEMM with FP16 B: %d elements differ", bad);
    tcnla_destroy(h);
}

/* Rows and columns each spanning 20 binades, all far below FP16's range
 * (2^-60 .. 2^-40): the result is the product of the operands times 2^50
 * (inside the range) scaled back, bit for bit. A scaling that put each
 * vector's largest element lower than FP16's top binade would leave the
 * smallest elements' lo parts below FP16's resolution and fail the check. */
TEST(exact_scaling_keeps_each_vectors_own_dynamic_range) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 16, N = 16, K = 96 };
    float A[M * K], B[K * N], A50[M * K], B50[K * N], C[M * N], C50[M * N];
    float u[M * K + K * N];
    tcnla_rand_uniform(9, 4, 0, 1, M * K + K * N, u);
    for (int i = 0; i < M * K; i++)
        A[i] = ldexpf(1.0f + u[i], -60 + (int)(u[(i * 7) % (M * K)] * 20)) * (i % 3 ? 1 : -1);
    for (int i = 0; i < K * N; i++)
        B[i] = ldexpf(1.0f + u[M * K + i], -60 + (int)(u[M * K + (i * 5) % (K * N)] * 20));
    for (int i = 0; i < M * K; i++) A50[i] = ldexpf(A[i], 50);
    for (int i = 0; i < K * N; i++) B50[i] = ldexpf(B[i], 50);
    tcnla_info_t info;
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A50, M, B50, K,
                         0, C50, M, &info) == 0 && info.scaled == 0);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1, A, M, B, K, 0,
                         C, M, &info) == 0 && info.scaled == 1);
    int bad = 0;
    for (int i = 0; i < M * N; i++) {
        const float want = ldexpf(C50[i], -100);
        if (memcmp(&want, &C[i], sizeof want)) bad++;
    }
    CHECK_MSG(bad == 0, "%d elements differ", bad);
    tcnla_destroy(h);
}

/* Inputs scaled per row and column over 2^-40 .. 2^40: TCEC_FP16's error
 * against the FP64 product is at most native SGEMM's on the same inputs
 * (1.0x; the model measures about 0.4x at this size), for every op. */
TEST(exact_scaling_tcec_fp16_within_native_sgemm_error) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 48, N = 40, K = 512 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
    float *C = malloc(sizeof(float) * M * N);
    double *R = malloc(sizeof(double) * M * N);
    int er[M], ec[N];
    rand_exps(3, 40, M, er);
    rand_exps(4, 40, N, ec);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            const int lda = ta ? K : M, ldb = tb ? N : K;
            tcnla_rand_uniform(8, 1, -1, 1, M * K, A);
            tcnla_rand_uniform(8, 2, -1, 1, K * N, B);
            scale_vec(A, ta ? K : M, ta ? M : K, ta, er);
            scale_vec(B, tb ? N : K, tb ? K : N, !tb, ec);
            tu_ref_gemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, 0.0, NULL, M, R);
            tcnla_info_t info;
            REQUIRE(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, ta, tb, M, N, K, 1, A, lda, B, ldb, 0,
                                   C, M, &info) == 0);
            CHECK(info.scaled == 1 && info.method == TCNLA_GEMM_TCEC_FP16);
            const double e = tu_rel_err(C, M, R, M, N);
            REQUIRE(tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, ta, tb, M, N, K, 1, A, lda, B, ldb, 0,
                                C, M) == 0);
            const double en = tu_rel_err(C, M, R, M, N);
            printf("    ta %d tb %d: TCEC_FP16 %.3e, native %.3e, ratio %.3f\n", ta, tb, e, en,
                   e / en);
            CHECK_MSG(e <= 1.0 * en, "ta %d tb %d: ratio %.3f", ta, tb, e / en);
        }
    free(A), free(B), free(C), free(R);
    tcnla_destroy(h);
}

/* exact_scaling = 0: the range policy at once (TCNLA_ERR_RANGE, C
 * untouched; FALLBACK: the TF32 variant); in-range inputs compute the same
 * bits either way */
TEST(exact_scaling_off_applies_the_range_policy) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 8, N = 8, K = 32 };
    float A[M * K], B[K * N], C[M * N], C2[M * N], Cs[M * N];
    tcnla_rand_uniform(2, 1, -1, 1, M * K, A);
    tcnla_rand_uniform(2, 2, -1, 1, K * N, B);
    CHECK(tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M) == 0);
    set_scaling(h, 0);
    CHECK(tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C2, M) == 0);
    CHECK(memcmp(C, C2, sizeof C) == 0);
    for (int i = 0; i < M * K; i++) A[i] *= 1e-9f;
    for (int i = 0; i < M * N; i++) C[i] = Cs[i] = 7.0f;
    tcnla_info_t info;
    CHECK_EQ_INT(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M,
                                &info),
                 TCNLA_ERR_RANGE);
    CHECK(memcmp(C, Cs, sizeof C) == 0 && info.products == 0);
    CHECK(tcnla_set_range_policy(h, TCNLA_RANGE_FALLBACK) == 0);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_TF32 && info.scaled == 0 && info.fallbacks == 1);
    /* back on: the same call is scaled and stays TCEC_FP16 */
    set_scaling(h, 1);
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_FP16 && info.scaled == 1 && info.fallbacks == 0);
    /* the Markidis baseline is not scaled: the range policy */
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_MARKIDIS_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M,
                         &info) == 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_TF32 && info.scaled == 0);
    tcnla_destroy(h);
}

/* Zero rows and columns, NaN, overflow of SHGEMM's FP16 B */
TEST(exact_scaling_zero_vectors_nan_and_fp16_overflow) {
    tcnla_handle_t h = cpu();
    REQUIRE(h);
    enum { M = 6, N = 5, K = 16 };
    float A[M * K], B[K * N], C[M * N];
    tcnla_rand_uniform(3, 1, -1, 1, M * K, A);
    tcnla_rand_uniform(3, 2, -1, 1, K * N, B);
    for (int p = 0; p < K; p++) A[2 + p * M] = 0.0f, A[4 + p * M] *= 1e-30f;
    tcnla_info_t info;
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M, &info) == 0);
    CHECK(info.scaled == 1);
    for (int j = 0; j < N; j++) CHECK(C[2 + j * M] == 0.0f && C[4 + j * M] != 0.0f);
    /* SHGEMM's B above FP16's largest value: scaled, not a range error */
    for (int p = 0; p < K; p++) B[p + 3 * K] *= 1e30f;
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M,
                         &info) == 0);
    CHECK(info.scaled == 1 && info.method == TCNLA_GEMM_SHGEMM_FP16);
    for (int i = 0; i < M * N; i++) CHECK(isfinite(C[i]));
    /* NaN: the native product whatever the scale, with SHGEMM's B above
     * FP16's range too (scaled, then computed natively: NaN propagates) */
    A[1] = NAN;
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_NATIVE_FP32 && isnan(C[1]));
    CHECK(tcnla_sgemm_ex(h, TCNLA_GEMM_SHGEMM_FP16, 0, 0, M, N, K, 1, A, M, B, K, 0, C, M,
                         &info) == 0);
    CHECK(info.method == TCNLA_GEMM_NATIVE_FP32 && info.scaled == 1 && isnan(C[1]));
    for (int j = 0; j < N; j++) CHECK(isfinite(C[j * M]));
    tcnla_destroy(h);
}
