/* The internal strided-batched GEMM (tn_sgemm_batched, src/gemm/gemm.c)
 * on the CPU backend, white-box: what the public
 * tcnla_sgemm_strided_batched (tests/test_batched.c) does not reach, the
 * reduce (sum of the products into one C) and B given in FP16. Every reduce
 * and every FP16-B product equals the separate tcnla_sgemm / tcnla_shgemm
 * calls it stands for, bit for bit (on the CPU it is that loop), for every
 * kind of method, transposes, leading dimensions and strides with gaps
 * (which stay untouched), beta, NaN in one product, and the argument
 * checks. The CUDA backend's one-launch version is compared with the same
 * loop in tests/gpu/test_gpu_batched.c. */
#include "core/internal.h"
#include "tcnla.h"
#include "test.h"

/* tn_sgemm_batched in a call of its own, as the public entry points run it;
 * what ran goes to last_info */
static tcnla_info_t last_info;
static int batched(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                   int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                   int64_t sa, const float *B, const uint16_t *B16, int64_t ldb, int64_t sb,
                   float beta, float *C, int64_t ldc, int64_t sc, int64_t batch, int reduce) {
    if (!h) return -1;
    tn_call_t cl;
    tn_call_init(&cl, h);
    const int st = tn_sgemm_batched(&cl, method, ta, tb, m, n, k, alpha, A, lda, sa, B, B16, ldb,
                                    sb, beta, C, ldc, sc, batch, reduce);
    last_info = cl.info;
    return st;
}

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
    int reduce;
} shape_t;

/* One batch against its loop of public calls; returns 1 when they agree. */
static int compare(tcnla_handle_t h, tcnla_gemm_method_t meth, const shape_t *s, int via16,
                   float alpha, float beta, int nan_at, uint64_t seed) {
    const int64_t arows = s->ta == TCNLA_OP_N ? s->m : s->k, acols = s->ta == TCNLA_OP_N ? s->k : s->m;
    const int64_t brows = s->tb == TCNLA_OP_N ? s->k : s->n, bcols = s->tb == TCNLA_OP_N ? s->n : s->k;
    const int64_t lda = arows + 2, ldb = brows + 1, ldc = s->m + 3;
    const int64_t sa = lda * acols + 5, sb = ldb * bcols + 3, sc = ldc * s->n + 2;
    const int64_t na = sa * s->batch, nb = sb * s->batch, nc = s->reduce ? sc : sc * s->batch;
    float *A = malloc(sizeof(float) * (size_t)na), *B = malloc(sizeof(float) * (size_t)nb);
    uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)nb);
    float *C1 = malloc(sizeof(float) * (size_t)nc), *C2 = malloc(sizeof(float) * (size_t)nc);
    fill(seed, na, A);
    fill(seed + 1, nb, B);
    for (int64_t i = 0; i < nb; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
    fill(seed + 2, nc, C1);
    if (nan_at >= 0) A[nan_at * sa + 1] = NAN;
    memcpy(C2, C1, sizeof(float) * (size_t)nc);
    int st1 = 0;
    for (int64_t t = 0; t < s->batch && st1 == 0; t++) {
        float *Ct = C1 + (s->reduce ? 0 : t * sc);
        float bt = (s->reduce && t) ? 1.0f : beta;
        st1 = via16 ? tcnla_shgemm(h, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A + t * sa, lda,
                                   B16 + t * sb, ldb, bt, Ct, ldc)
                    : tcnla_sgemm(h, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A + t * sa, lda,
                                  B + t * sb, ldb, bt, Ct, ldc);
    }
    int st2 = batched(h, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda, sa,
                               via16 ? NULL : B, via16 ? B16 : NULL, ldb, sb, beta, C2, ldc, sc,
                               s->batch, s->reduce);
    int same = st1 == 0 && st2 == 0 && memcmp(C1, C2, sizeof(float) * (size_t)nc) == 0;
    if (!same)
        tt_fail(__FILE__, __LINE__,
                "%s m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d reduce=%d b16=%d nan=%d: status "
                "%d %d, results %s",
                tcnla_gemm_method_name(meth), (long long)s->m, (long long)s->n, (long long)s->k,
                (long long)s->batch, s->ta, s->tb, s->reduce, via16, nan_at, st1, st2,
                st1 == 0 && st2 == 0 ? "differ" : "-");
    free(A), free(B), free(B16), free(C1), free(C2);
    return same;
}

/* the products tests/test_batched.c leaves out: reduce, or B in FP16 */
TEST(batched_gemm_reduce_and_fp16_b_equal_separate_calls_cpu) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    const tcnla_gemm_method_t meths[] = {TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_TCEC_TF32,
                                         TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_MARKIDIS_FP16,
                                         TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_SHGEMM_TF32,
                                         TCNLA_GEMM_TF32, TCNLA_GEMM_FP16};
    int ok = 0, total = 0;
    for (size_t mi = 0; mi < sizeof meths / sizeof meths[0]; mi++)
        for (int t = 0; t < 4; t++)
            for (int reduce = 0; reduce < 2; reduce++) {
                shape_t s = {13, 7, 21, 3, (t & 1) ? TCNLA_OP_T : TCNLA_OP_N,
                             (t & 2) ? TCNLA_OP_T : TCNLA_OP_N, reduce};
                int sh = meths[mi] == TCNLA_GEMM_SHGEMM_FP16 || meths[mi] == TCNLA_GEMM_SHGEMM_TF32;
                if (!reduce && !(sh && (t & 1))) continue; /* public: tests/test_batched.c */
                ok += compare(h, meths[mi], &s, sh && (t & 1), 0.75f, t == 2 ? 0.0f : -0.5f, -1,
                              100 + mi * 8 + t * 2 + reduce);
                total++;
            }
    /* the shapes RP-HOSVD uses: a reduce over slabs (A^T, B = rows of one
     * tall matrix) and a product per slab with one shared B */
    shape_t proj = {9, 4, 6, 5, TCNLA_OP_T, TCNLA_OP_N, 1};
    ok += compare(h, TCNLA_GEMM_SHGEMM_FP16, &proj, 1, 1.0f, 0.0f, -1, 7), total++;
    ok += compare(h, TCNLA_GEMM_NATIVE_FP32, &proj, 0, 1.0f, 0.0f, -1, 8), total++;
    /* NaN in product 1: that product runs natively, the others as asked */
    shape_t sq = {8, 8, 8, 3, TCNLA_OP_N, TCNLA_OP_N, 1};
    ok += compare(h, TCNLA_GEMM_TCEC_TF32, &sq, 0, 1.0f, 0.0f, 1, 10), total++;
    /* a batch of one is the single call, reduce or not */
    shape_t one = {5, 6, 7, 1, TCNLA_OP_N, TCNLA_OP_T, 1};
    ok += compare(h, TCNLA_GEMM_TCEC_FP16, &one, 0, 2.0f, 0.5f, -1, 11), total++;
    CHECK_MSG(ok == total, "%d of %d batches differ from their separate calls", total - ok, total);
    tcnla_destroy(h);
}

TEST(batched_gemm_hosvd_reduce_over_slabs) {
    /* W = sum_t In_t^T Omega_t for the slabs In_t of an L x I x T tensor
     * with Omega (L T x J): the reduce of the core's projections (the
     * per-slab products with one shared B: tests/test_batched.c) */
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    enum { L = 6, I = 10, T = 7, J = 4 };
    float In[L * I * T];
    fill(21, L * I * T, In);
    float Om[L * T * J], W1[I * J], W2[I * J];
    fill(23, L * T * J, Om);
    for (int t = 0; t < T; t++)
        CHECK(tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_T, TCNLA_OP_N, I, J, L, 1.0f,
                          In + t * L * I, L, Om + t * L, L * T, t ? 1.0f : 0.0f, W1, I) == 0);
    CHECK(batched(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_T, TCNLA_OP_N, I, J, L, 1.0f, In, L,
                           L * I, Om, NULL, L * T, L, 0.0f, W2, I, 0, T, 1) == 0);
    CHECK(memcmp(W1, W2, sizeof W1) == 0);
    tcnla_destroy(h);
}

TEST(batched_gemm_internal_arguments) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float A[16], B[16], C[16];
    uint16_t B16[16];
    fill(31, 16, A), fill(32, 16, B);
    for (int i = 0; i < 16; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN), C[i] = 7.0f;
    const tcnla_gemm_method_t M = TCNLA_GEMM_NATIVE_FP32;
    const tcnla_op_t N = TCNLA_OP_N;
    CHECK_EQ_INT(batched(NULL, M, N, N, 2, 2, 2, 1, A, 2, 4, B, NULL, 2, 4, 0, C, 2, 4, 2, 0), -1);
    CHECK_EQ_INT(batched(h, (tcnla_gemm_method_t)99, N, N, 2, 2, 2, 1, A, 2, 4, B, NULL, 2, 4, 0, C, 2, 4, 2, 0), -2);
    CHECK_EQ_INT(batched(h, M, N, N, -1, 2, 2, 1, A, 2, 4, B, NULL, 2, 4, 0, C, 2, 4, 2, 0), -5);
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 1, 4, B, NULL, 2, 4, 0, C, 2, 4, 2, 0), -10);
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 2, -4, B, NULL, 2, 4, 0, C, 2, 4, 2, 0), -11);
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, B16, 2, 4, 0, C, 2, 4, 2, 0), -13);
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, NULL, 2, -1, 0, C, 2, 4, 2, 0), -15);
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, NULL, 2, 4, 0, C, 2, -4, 2, 0), -19);
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, NULL, 2, 4, 0, C, 2, 4, -2, 0), -20);
    /* FP16 B: only the methods tcnla_shgemm takes */
    CHECK_EQ_INT(batched(h, TCNLA_GEMM_TCEC_TF32, N, N, 2, 2, 2, 1, A, 2, 4, NULL, B16, 2, 4, 0, C, 2, 4, 2, 0), -2);
    CHECK_EQ_INT(batched(h, TCNLA_GEMM_DEFAULT, N, N, 2, 2, 2, 1, A, 2, 4, NULL, B16, 2, 4, 0, C, 2, 4, 2, 0), 0);
    CHECK(last_info.method == TCNLA_GEMM_SHGEMM_FP16);
    /* empty batches and products leave C alone */
    for (int i = 0; i < 16; i++) C[i] = 7.0f;
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 2, 1, A, 2, 4, B, NULL, 2, 4, 0, C, 2, 4, 0, 1), 0);
    CHECK_EQ_INT(batched(h, M, N, N, 0, 2, 2, 1, A, 1, 4, B, NULL, 2, 4, 0, C, 1, 4, 3, 0), 0);
    int untouched = 1;
    for (int i = 0; i < 16; i++) untouched &= C[i] == 7.0f;
    CHECK(untouched);
    /* k == 0: C = beta C; a reduce scales once */
    CHECK_EQ_INT(batched(h, M, N, N, 2, 2, 0, 1, A, 2, 0, B, NULL, 1, 0, 0.5f, C, 2, 4, 3, 1), 0);
    CHECK(C[0] == 3.5f && C[3] == 3.5f && C[4] == 7.0f);
    tcnla_destroy(h);
}
