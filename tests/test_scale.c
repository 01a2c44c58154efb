/* The scale of the input never matters to the randomized drivers: the same
 * matrix multiplied by 2^-60, 1e-7, 1e7 and 2^60 gives the same relative
 * error (within 1 %) as unscaled, with the default options on the CPU
 * backend and with the FP16 storage variants of randLRA ([Baboulin et al.
 * 2024] 16|32 and 16|16), whose FP16 copy of A is taken at a power of two
 * chosen from max |A| (for these, "the same" means: exactly, under a
 * power-of-two scale; within the spread of FP16's rounding otherwise). */
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double scales[4] = {0x1p-60, 1e-7, 1e7, 0x1p60};

/* ||A - X Y^T||_F / ||A||_F in FP64 */
static double lra_err(int64_t m, int64_t n, int64_t r, const float *A, const float *X,
                      const float *Y) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = A[i + j * m];
            for (int64_t p = 0; p < r; p++) s -= (double)X[i + p * m] * Y[j + p * n];
            num += s * s, den += (double)A[i + j * m] * A[i + j * m];
        }
    return sqrt(num / den);
}

/* A rank-12 matrix plus noise of relative size 1e-4: the refined rank-12
 * approximation's error is the noise, well above FP16's resolution of A,
 * and FP16 storage gives about 2^-11 where the scale is wrong */
static float *test_matrix(int64_t m, int64_t n) {
    float *A = malloc(sizeof(float) * (size_t)(m * n));
    float *E = malloc(sizeof(float) * (size_t)(m * n));
    tn_testmat_lowrank(m, n, 12, 5, A, m);
    tcnla_rand_normal(6, 1, 0.0f, 1.0f, m * n, E);
    double s = 0;
    for (int64_t i = 0; i < m * n; i++) s += (double)A[i] * A[i];
    const double sd = 1e-4 * sqrt(s / (double)(m * n));
    for (int64_t i = 0; i < m * n; i++) A[i] += (float)(sd * E[i]);
    free(E);
    return A;
}

TEST(scale_lra_fp16_storage_any_scale) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    enum { M = 128, N = 96, K = 12 };
    float *A = test_matrix(M, N), *As = malloc(sizeof(float) * M * N);
    float *X = malloc(sizeof(float) * M * 3 * K), *Y = malloc(sizeof(float) * N * 3 * K);
    const tcnla_tgemm_t tg[2] = {TCNLA_TGEMM_16_32, TCNLA_TGEMM_16_16};
    for (int t = 0; t < 2; t++) {
        tcnla_lra_opts_t o = tcnla_lra_opts_default();
        o.rank = K, o.oversampling = 0, o.tgemm = tg[t];
        const int64_t r = tcnla_lra_out_rank(&o);
        REQUIRE(tcnla_lra(h, &o, M, N, A, M, X, M, Y, N) == 0);
        const double e0 = lra_err(M, N, r, A, X, Y);
        printf("    tgemm %s: unscaled error %.4e\n", t ? "16|16" : "16|32", e0);
        CHECK(e0 < 3e-4); /* the noise (1e-4) and FP16's rounding of the factors */
        for (int si = t; si < 4; si += 1 + t) { /* 16|16: 1e-7 and 2^60 */
            for (int64_t i = 0; i < M * N; i++) As[i] = (float)(A[i] * scales[si]);
            const int st = tcnla_lra(h, &o, M, N, As, M, X, M, Y, N);
            CHECK_MSG(st == 0, "scale %g: %s", scales[si], tcnla_strerror(st));
            const double e = st ? 1.0 : lra_err(M, N, r, As, X, Y);
            /* a power of two scales the FP16 copy exactly: the same error; another
             * scale rounds A to other FP16 numbers, whose errors spread over 0.97 -
             * 1.14 of the unscaled one at this size (16|32, scales 1.1 - 3.3 times
             * 1e-7, 1e7 and 1); before the scaled storage the error was 0.98 (not
             * 1.7e-4) at 1e-7 */
            const double tol = si == 0 || si == 3 ? 1e-6 : 0.25;
            CHECK_MSG(fabs(e / e0 - 1) <= tol, "tgemm %d scale %g: error %.4e, unscaled %.4e",
                      (int)tg[t], scales[si], e, e0);
        }
    }
    free(A), free(As), free(X), free(Y);
    tcnla_destroy(h);
}

/* tcnla_rsvd with the defaults of a CPU handle and with the FP16-based
 * methods (the model): the residual of the scaled matrix is the unscaled
 * one's, the products that the split cannot hold run the TF32 variants */
TEST(scale_rsvd_any_scale) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    enum { M = 128, N = 96, K = 12 };
    float *A = test_matrix(M, N), *As = malloc(sizeof(float) * M * N);
    float *U = malloc(sizeof(float) * M * K), S[K], *VT = malloc(sizeof(float) * K * N);
    float *X = malloc(sizeof(float) * M * K), *Y = malloc(sizeof(float) * N * K);
    for (int fp16 = 0; fp16 < 2; fp16++) {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = K, o.oversampling = 6;
        if (!fp16) {
            o.proj_method = o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
            o.random_format = TCNLA_FMT_FP32;
        }
        double e0 = 0;
        for (int si = -1; si < 4; si++) {
            for (int64_t i = 0; i < M * N; i++) As[i] = si < 0 ? A[i] : (float)(A[i] * scales[si]);
            const int st = tcnla_rsvd(h, &o, M, N, As, M, U, M, S, VT, K);
            CHECK_MSG(st == 0, "scale %g: %s", si < 0 ? 1.0 : scales[si], tcnla_strerror(st));
            for (int64_t j = 0; j < K; j++)
                for (int64_t i = 0; i < M; i++) X[i + j * M] = U[i + j * M] * S[j];
            for (int64_t j = 0; j < K; j++)
                for (int64_t i = 0; i < N; i++) Y[i + j * N] = VT[j + i * K];
            const double e = st ? 1.0 : lra_err(M, N, K, As, X, Y);
            if (si < 0) {
                e0 = e;
                printf("    rsvd %s: unscaled residual %.4e\n", fp16 ? "FP16-based" : "native", e);
            } else {
                CHECK_MSG(fabs(e / e0 - 1) <= 0.01, "%s scale %g: residual %.4e, unscaled %.4e",
                          fp16 ? "FP16-based" : "native", scales[si], e, e0);
            }
        }
    }
    free(A), free(As), free(U), free(VT), free(X), free(Y);
    tcnla_destroy(h);
}
