/* The strided-batched GEMM (tcnla_sgemm_strided_batched) on the CPU
 * backend: every product equals the separate tcnla_sgemm call it stands
 * for, bit for bit (on the CPU it is that loop), for every kind of method,
 * transposes, leading dimensions and strides with gaps (which stay
 * untouched), beta, NaN in one product, a shared B (stride 0), and the
 * argument checks. The library's reduce and FP16-B forms of the same
 * product are tested in src/gemm/test_batched.c; the CUDA backend's
 * one-launch version is compared with the same loop in
 * tests/gpu/test_gpu_batched.c. */
#include "tcnla.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fill(uint64_t seed, int64_t n, float *x) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 3;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)((double)(s >> 40) / 16777216.0 * 2.0 - 1.0);
    }
}

typedef struct {
    int64_t m, n, k, batch;
    tcnla_op_t ta, tb;
} shape_t;

/* One batch against its loop of tcnla_sgemm calls; returns 1 when they agree. */
static int compare(tcnla_handle_t h, tcnla_gemm_method_t meth, const shape_t *s, float alpha,
                   float beta, int nan_at, uint64_t seed) {
    const int64_t arows = s->ta == TCNLA_OP_N ? s->m : s->k, acols = s->ta == TCNLA_OP_N ? s->k : s->m;
    const int64_t brows = s->tb == TCNLA_OP_N ? s->k : s->n, bcols = s->tb == TCNLA_OP_N ? s->n : s->k;
    const int64_t lda = arows + 2, ldb = brows + 1, ldc = s->m + 3;
    const int64_t sa = lda * acols + 5, sb = ldb * bcols + 3, sc = ldc * s->n + 2;
    const int64_t na = sa * s->batch, nb = sb * s->batch, nc = sc * s->batch;
    float *A = malloc(sizeof(float) * (size_t)na), *B = malloc(sizeof(float) * (size_t)nb);
    float *C1 = malloc(sizeof(float) * (size_t)nc), *C2 = malloc(sizeof(float) * (size_t)nc);
    fill(seed, na, A);
    fill(seed + 1, nb, B);
    fill(seed + 2, nc, C1);
    if (nan_at >= 0) A[nan_at * sa + 1] = NAN;
    memcpy(C2, C1, sizeof(float) * (size_t)nc);
    int st1 = 0;
    for (int64_t t = 0; t < s->batch && st1 == 0; t++)
        st1 = tcnla_sgemm(h, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A + t * sa, lda,
                          B + t * sb, ldb, beta, C1 + t * sc, ldc);
    int st2 = tcnla_sgemm_strided_batched(h, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda,
                                          sa, B, ldb, sb, beta, C2, ldc, sc, s->batch);
    int same = st1 == 0 && st2 == 0 && memcmp(C1, C2, sizeof(float) * (size_t)nc) == 0;
    if (!same)
        tt_fail(__FILE__, __LINE__,
                "%s m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d nan=%d: status %d %d, results %s",
                tcnla_gemm_method_name(meth), (long long)s->m, (long long)s->n, (long long)s->k,
                (long long)s->batch, s->ta, s->tb, nan_at, st1, st2,
                st1 == 0 && st2 == 0 ? "differ" : "-");
    free(A), free(B), free(C1), free(C2);
    return same;
}

/* the reduce and FP16-B forms: src/gemm/test_batched.c */
TEST(batched_gemm_equals_separate_calls_cpu) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    const tcnla_gemm_method_t meths[] = {TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_TCEC_TF32,
                                         TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_MARKIDIS_FP16,
                                         TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_SHGEMM_TF32,
                                         TCNLA_GEMM_TF32, TCNLA_GEMM_FP16};
    int ok = 0, total = 0;
    for (size_t mi = 0; mi < sizeof meths / sizeof meths[0]; mi++)
        for (int t = 0; t < 4; t++) {
            shape_t s = {13, 7, 21, 3, (t & 1) ? TCNLA_OP_T : TCNLA_OP_N,
                         (t & 2) ? TCNLA_OP_T : TCNLA_OP_N};
            ok += compare(h, meths[mi], &s, 0.75f, t == 2 ? 0.0f : -0.5f, -1, 100 + mi * 8 + t * 2);
            total++;
        }
    /* NaN in product 1: that product runs natively, the others as asked */
    shape_t sq = {8, 8, 8, 3, TCNLA_OP_N, TCNLA_OP_N};
    ok += compare(h, TCNLA_GEMM_TCEC_TF32, &sq, 1.0f, 0.0f, 1, 9), total++;
    /* a batch of one is the single call */
    shape_t one = {5, 6, 7, 1, TCNLA_OP_N, TCNLA_OP_T};
    ok += compare(h, TCNLA_GEMM_TCEC_FP16, &one, 2.0f, 0.5f, -1, 11), total++;
    CHECK_MSG(ok == total, "%d of %d batches differ from their separate calls", total - ok, total);
    tcnla_destroy(h);
}

TEST(batched_gemm_hosvd_layout_with_shared_b) {
    /* Out_t = In_t Q for the slabs of an L x I x T tensor (one Q): the
     * layout of the core's middle mode products, strides without gaps (the
     * reduce W = sum_t In_t^T Omega_t: src/gemm/test_batched.c) */
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    enum { L = 6, I = 10, T = 7, J = 4 };
    float In[L * I * T], Q[I * J], O1[L * J * T], O2[L * J * T];
    fill(21, L * I * T, In);
    fill(22, I * J, Q);
    for (int t = 0; t < T; t++)
        CHECK(tcnla_sgemm(h, TCNLA_GEMM_TCEC_TF32, TCNLA_OP_N, TCNLA_OP_N, L, J, I, 1.0f,
                          In + t * L * I, L, Q, I, 0.0f, O1 + t * L * J, L) == 0);
    CHECK(tcnla_sgemm_strided_batched(h, TCNLA_GEMM_TCEC_TF32, TCNLA_OP_N, TCNLA_OP_N, L, J, I,
                                      1.0f, In, L, L * I, Q, I, 0, 0.0f, O2, L, L * J, T) == 0);
    CHECK(memcmp(O1, O2, sizeof O1) == 0);
    tcnla_destroy(h);
}

TEST(batched_gemm_arguments) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float A[16], B[16], C[16];
    fill(31, 16, A), fill(32, 16, B);
    for (int i = 0; i < 16; i++) C[i] = 7.0f;
    const tcnla_gemm_method_t M = TCNLA_GEMM_NATIVE_FP32;
    const tcnla_op_t N = TCNLA_OP_N;
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(NULL, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -1);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, (tcnla_gemm_method_t)99, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -2);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, (tcnla_op_t)5, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -3);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, (tcnla_op_t)5, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -4);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, -1, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -5);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, -1, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -6);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, -1, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -7);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, NULL, 2, 4, B, 2, 4, 0, C, 2, 4, 2), -9);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 1, 4, B, 2, 4, 0, C, 2, 4, 2), -10);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, -4, B, 2, 4, 0, C, 2, 4, 2), -11);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, NULL, 2, 4, 0, C, 2, 4, 2), -12);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 1, 4, 0, C, 2, 4, 2), -13);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, -1, 0, C, 2, 4, 2), -14);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, NULL, 2, 4, 2), -16);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 1, 4, 2), -17);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, -4, 2), -18);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, -2), -19);
    /* empty batches and products leave C alone */
    for (int i = 0; i < 16; i++) C[i] = 7.0f;
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, 2, 4, 0, C, 2, 4, 0), 0);
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 0, 2, 2, 1, A, 1, 4, B, 2, 4, 0, C, 1, 4, 3), 0);
    int untouched = 1;
    for (int i = 0; i < 16; i++) untouched &= C[i] == 7.0f;
    CHECK(untouched);
    /* k == 0: C_t = beta C_t */
    CHECK_EQ_INT(tcnla_sgemm_strided_batched(h, M, N, N, 2, 2, 0, 1, A, 2, 0, B, 1, 0, 0.5f, C, 2, 4, 3), 0);
    CHECK(C[0] == 3.5f && C[3] == 3.5f && C[4] == 3.5f && C[11] == 3.5f && C[12] == 7.0f);
    tcnla_destroy(h);
}
