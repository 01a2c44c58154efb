/* The randomized low-rank approximation's refinement residual
 * (tn_lowrank_residual16, src/randnla/lra.c), white-box; tcnla_lra itself is
 * tested through the public API in tests/test_lra.c. */
#include "core/internal.h"
#include "tcnla.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The refinement's fp16(A - X Y^T) (tn_lowrank_residual16): column slabs
 * of any width give the same bits as one slab, and every element is the
 * FP16 rounding of A - X Y^T to within the FP32 product's error. */
TEST(lra_residual16_slabs_same_bits) {
    enum { M = 37, N = 29, K = 5 };
    tcnla_handle_t h;
    tcnla_create(&h, TCNLA_BACKEND_CPU);
    float A[M * N], X[M * K], Y[N * K];
    uint16_t D[3][M * N];
    for (int i = 0; i < M * N; i++) A[i] = (float)((int)(i * 7919LL % 2003) - 1000) / 37.0f;
    for (int i = 0; i < M * K; i++)
        X[i] = tcnla_f16_to_f32(tcnla_f32_to_f16((float)((i * 31 % 97) - 48) / 13.0f, TCNLA_ROUND_RN));
    for (int i = 0; i < N * K; i++)
        Y[i] = tcnla_f16_to_f32(tcnla_f32_to_f16((float)((i * 17 % 89) - 44) / 11.0f, TCNLA_ROUND_RN));
    const int64_t slabs[3] = {0, 1, 6};
    tn_call_t cl;
    tn_call_init(&cl, h);
    for (int t = 0; t < 3; t++)
        REQUIRE(tn_lowrank_residual16(&cl, M, N, K, A, M, X, M, Y, N, D[t], M, slabs[t], 1.0f) == 0);
    CHECK(memcmp(D[0], D[1], sizeof D[0]) == 0);
    CHECK(memcmp(D[0], D[2], sizeof D[0]) == 0);
    int bad = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double s = A[i + j * M];
            for (int p = 0; p < K; p++) s -= (double)X[i + p * M] * Y[j + p * N];
            const double d = tcnla_f16_to_f32(D[0][i + j * M]);
            /* FP16 rounding (2^-11 relative) of a value known to ~2^-22 */
            if (fabs(d - s) > fabs(s) * 0x1p-11 * 1.01 + 1e-4) bad++;
        }
    CHECK_EQ_INT(bad, 0);
    tcnla_destroy(h);
}
