/* GPU tests of the Ozaki scheme (src/backend/cuda/ozaki_cuda.c):
 * the CUDA backend against the CPU reference (src/gemm/ozaki.c) bit for bit
 * in DP, CR and FIXED modes, with phi = 0.1, 1, 2 ([Mukunoki et al. 2020] inputs), odd
 * sizes, transposes, k across the FP16 k-block boundary, the workspace cap,
 * NaN / Inf fallback, tcnla_sgemm, NATIVE_FP64 through cuBLAS, and DP
 * accuracy against cuBLAS DGEMM (CR mode as the exact reference). Every
 * test skips when the build or the machine has no GPU. */
#include "../test.h"
#include "gpu_util.h"
#include "testmat/testdata.h"
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NEED_GPU(h)                                                                           \
    do {                                                                                      \
        if (!(h)) SKIP("no CUDA device (or CUDA not compiled in)");                          \
    } while (0)

static int oz_opts(tcnla_handle_t h, tcnla_ozaki_mode_t mode, int slices, int fast, size_t cap) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = mode;
    o.slices = slices;
    o.fast = fast;
    o.workspace_cap = cap;
    o.scheme = TCNLA_OZAKI_SCHEME_1; /* scheme 2: test_gpu_ozaki2.c */
    return tcnla_set_ozaki_opts(h, &o);
}

/* tcnla_dgemm on either backend with host operands (A: lda x acols, ...). */
/* what dg's last product ran, per handle backend (0 CPU, 1 GPU) */
static tcnla_info_t dg_info[2];

static int dg(tcnla_handle_t h, tcnla_gemm_method_t meth, tcnla_op_t ta, tcnla_op_t tb,
              int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
              const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    tcnla_backend_t be;
    tcnla_get_backend(h, &be);
    if (be == TCNLA_BACKEND_CPU)
        return tcnla_dgemm_ex(h, meth, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                              &dg_info[0]);
    int64_t acols = ta == TCNLA_OP_N ? k : m, bcols = tb == TCNLA_OP_N ? n : k;
    size_t ab = 8 * (size_t)(lda * acols), bb = 8 * (size_t)(ldb * bcols), cb = 8 * (size_t)(ldc * n);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    int st = tcnla_malloc(h, &dA, ab + 8);
    if (!st) st = tcnla_malloc(h, &dB, bb + 8);
    if (!st) st = tcnla_malloc(h, &dC, cb + 8);
    if (!st && ab) st = tcnla_memcpy(h, dA, A, ab, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st && bb) st = tcnla_memcpy(h, dB, B, bb, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) st = tcnla_memcpy(h, dC, C, cb, TCNLA_MEMCPY_HOST_TO_HANDLE);
    if (!st) {
        st = tcnla_dgemm_ex(h, meth, ta, tb, m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc,
                            &dg_info[1]);
        int st2 = tcnla_memcpy(h, C, dC, cb, TCNLA_MEMCPY_HANDLE_TO_HOST);
        if (!st) st = st2;
    }
    tcnla_free(h, dA);
    tcnla_free(h, dB);
    tcnla_free(h, dC);
    return st;
}

static int64_t bit_diffs(const double *X, const double *Y, int64_t len) {
    int64_t bad = 0;
    for (int64_t i = 0; i < len; i++)
        if (memcmp(&X[i], &Y[i], sizeof(double)) != 0) bad++;
    return bad;
}

static const tcnla_gemm_method_t oz_methods[2] = {TCNLA_GEMM_OZAKI_FP16, TCNLA_GEMM_OZAKI_INT8};
static const char *mth(tcnla_gemm_method_t m) { return tcnla_gemm_method_name(m); }

typedef struct {
    int64_t m, n, k;
    tcnla_op_t ta, tb;
} shape_t;

/* GPU == CPU bitwise for one method / mode / shape / phi. */
static void cmp_one(tcnla_handle_t g, tcnla_handle_t c, tcnla_gemm_method_t meth,
                    tcnla_ozaki_mode_t mode, int slices, const shape_t *s, double phi,
                    uint64_t seed, double alpha, double beta) {
    int64_t lda = (s->ta == TCNLA_OP_N ? s->m : s->k) + 3;
    int64_t ldb = (s->tb == TCNLA_OP_N ? s->k : s->n) + 1;
    int64_t acols = s->ta == TCNLA_OP_N ? s->k : s->m, bcols = s->tb == TCNLA_OP_N ? s->n : s->k;
    int64_t ldc = s->m + 2;
    double *A = malloc(8 * (size_t)(lda * acols)), *B = malloc(8 * (size_t)(ldb * bcols));
    double *Cg = malloc(8 * (size_t)(ldc * s->n)), *Cc = malloc(8 * (size_t)(ldc * s->n));
    tn_rand_phi(seed, 1, phi, lda * acols, A);
    tn_rand_phi(seed, 2, phi, ldb * bcols, B);
    tn_rand_phi(seed, 3, 1.0, ldc * s->n, Cg);
    memcpy(Cc, Cg, 8 * (size_t)(ldc * s->n));
    oz_opts(g, mode, slices, 1, 0);
    oz_opts(c, mode, slices, 1, 0);
    int sg = dg(g, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda, B, ldb, beta, Cg, ldc);
    int sc = dg(c, meth, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda, B, ldb, beta, Cc, ldc);
    CHECK_EQ_INT(sg, 0);
    CHECK_EQ_INT(sc, 0);
    int64_t bad = bit_diffs(Cg, Cc, ldc * s->n);
    CHECK_MSG(bad == 0, "%s mode %d phi %g %lldx%lldx%lld op %d%d: %lld elements differ",
              mth(meth), (int)mode, phi, (long long)s->m, (long long)s->n, (long long)s->k,
              (int)s->ta, (int)s->tb, (long long)bad);
    free(A), free(B), free(Cg), free(Cc);
}

TEST(gpu_ozaki_dp_cr_fixed_bitwise_vs_cpu) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const shape_t shapes[] = {{37, 29, 61, TCNLA_OP_N, TCNLA_OP_N},
                              {33, 17, 1030, TCNLA_OP_T, TCNLA_OP_N},
                              {19, 23, 2049, TCNLA_OP_N, TCNLA_OP_T},
                              {5, 70, 3, TCNLA_OP_T, TCNLA_OP_T}};
    const double phis[] = {0.1, 1.0, 2.0};
    for (int mi = 0; mi < 2; mi++)
        for (int si = 0; si < 4; si++)
            for (int f = 0; f < 3; f++) {
                uint64_t seed = 100 + 10 * (uint64_t)si + (uint64_t)f;
                cmp_one(g, c, oz_methods[mi], TCNLA_OZAKI_DP, 0, &shapes[si], phis[f], seed, 1.0,
                        0.0);
                cmp_one(g, c, oz_methods[mi], TCNLA_OZAKI_CR, 0, &shapes[si], phis[f], seed, 1.0,
                        0.0);
                if (f == 1) {
                    cmp_one(g, c, oz_methods[mi], TCNLA_OZAKI_FIXED, 3, &shapes[si], phis[f],
                            seed, -0.75, 0.5);
                    cmp_one(g, c, oz_methods[mi], TCNLA_OZAKI_DP, 0, &shapes[si], phis[f], seed,
                            1.5, -2.0);
                }
            }
    tcnla_destroy(g);
    tcnla_destroy(c);
}

/* exponents far apart within rows: wide CR windows and the ldexp path */
TEST(gpu_ozaki_wide_range_bitwise) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const int64_t m = 9, n = 7, k = 40;
    double A[9 * 40], B[40 * 7], Cg[9 * 7], Cc[9 * 7];
    tn_rand_phi(11, 1, 2.0, m * k, A);
    tn_rand_phi(11, 2, 2.0, k * n, B);
    for (int64_t i = 0; i < m * k; i += 7) A[i] = ldexp(A[i], (int)(i % 5) * 200 - 500);
    for (int64_t i = 0; i < k * n; i += 5) B[i] = ldexp(B[i], -(int)(i % 4) * 150);
    A[3] = 0x1p-1074;
    B[2] = -0x1.8p-1060;
    for (int mi = 0; mi < 2; mi++)
        for (int mode = 0; mode < 2; mode++) {
            memset(Cg, 0, sizeof Cg), memset(Cc, 0, sizeof Cc);
            oz_opts(g, (tcnla_ozaki_mode_t)mode, 0, 1, 0);
            oz_opts(c, (tcnla_ozaki_mode_t)mode, 0, 1, 0);
            CHECK_EQ_INT(dg(g, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                            0.0, Cg, m), 0);
            CHECK_EQ_INT(dg(c, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                            0.0, Cc, m), 0);
            int64_t bad = bit_diffs(Cg, Cc, m * n);
            CHECK_MSG(bad == 0, "%s mode %d: %lld differ", mth(oz_methods[mi]), mode,
                      (long long)bad);
        }
    tcnla_destroy(g);
    tcnla_destroy(c);
}

TEST(gpu_ozaki_workspace_cap_same_bits) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 100, n = 90, k = 1500;
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *C0 = malloc(8 * m * n),
           *C1 = malloc(8 * m * n);
    tn_rand_phi(21, 1, 1.0, m * k, A);
    tn_rand_phi(21, 2, 1.0, k * n, B);
    for (int mi = 0; mi < 2; mi++)
        for (int mode = 0; mode < 2; mode++) {
            memset(C0, 0, 8 * m * n), memset(C1, 0, 8 * m * n);
            oz_opts(g, (tcnla_ozaki_mode_t)mode, 0, 1, 0);
            CHECK_EQ_INT(dg(g, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                            0.0, C0, m), 0);
            oz_opts(g, (tcnla_ozaki_mode_t)mode, 0, 1, (size_t)3 << 20);
            CHECK_EQ_INT(dg(g, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                            0.0, C1, m), 0);
            CHECK_MSG(bit_diffs(C0, C1, m * n) == 0, "%s mode %d: cap changed bits",
                      mth(oz_methods[mi]), mode);
            oz_opts(g, (tcnla_ozaki_mode_t)mode, 0, 1, 1000);
            CHECK_EQ_INT(dg(g, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                            0.0, C1, m), TCNLA_ERR_ALLOC);
        }
    free(A), free(B), free(C0), free(C1);
    tcnla_destroy(g);
}

TEST(gpu_ozaki_nan_inf_fallback) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 6, n = 5, k = 7;
    double A[42], B[35], C[30];
    tn_rand_phi(3, 1, 1.0, 42, A);
    tn_rand_phi(3, 2, 1.0, 35, B);
    A[2] = NAN;         /* row 2 of A (op N) */
    B[1 + 3 * k] = INFINITY; /* column 3 of B */
    for (int mi = 0; mi < 2; mi++) {
        for (int i = 0; i < 30; i++) C[i] = NAN; /* beta == 0: C never read */
        oz_opts(g, TCNLA_OZAKI_DP, 0, 1, 0);
        CHECK_EQ_INT(dg(g, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k, 0.0,
                        C, m), 0);
        CHECK(dg_info[1].method == TCNLA_GEMM_NATIVE_FP64);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double x = C[i + j * m];
                if (i == 2) CHECK(isnan(x));
                else if (j == 3) CHECK(isinf(x) || isnan(x));
                else CHECK(isfinite(x));
            }
    }
    tcnla_destroy(g);
}

TEST(gpu_ozaki_sgemm_bitwise_and_native_fp64) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const int64_t m = 45, n = 38, k = 1100;
    float *A = malloc(4 * m * k), *B = malloc(4 * k * n), *Cg = malloc(4 * m * n),
          *Cc = malloc(4 * m * n);
    gt_uniform(5, -1, 1, m * k, A);
    gt_uniform(6, -1, 1, k * n, B);
    for (int mi = 0; mi < 2; mi++)
        for (int mode = 0; mode < 2; mode++) {
            gt_uniform(7, -1, 1, m * n, Cg);
            memcpy(Cc, Cg, 4 * m * n);
            oz_opts(g, (tcnla_ozaki_mode_t)mode, 0, 1, 0);
            oz_opts(c, (tcnla_ozaki_mode_t)mode, 0, 1, 0);
            CHECK_EQ_INT(gt_gemm(g, oz_methods[mi], TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.25f, A, k,
                                 B, NULL, k, 0.5f, Cg, m), 0);
            CHECK_EQ_INT(gt_gemm(c, oz_methods[mi], TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.25f, A, k,
                                 B, NULL, k, 0.5f, Cc, m), 0);
            CHECK_MSG(memcmp(Cg, Cc, 4 * m * n) == 0, "sgemm %s mode %d differs",
                      mth(oz_methods[mi]), mode);
        }
    /* NATIVE_FP64 on the GPU: cuBLAS DGEMM, close to BLAS */
    double *Ad = malloc(8 * m * k), *Bd = malloc(8 * k * n), *Dg = malloc(8 * m * n),
           *Dc = malloc(8 * m * n);
    tn_rand_phi(8, 1, 1.0, m * k, Ad);
    tn_rand_phi(8, 2, 1.0, k * n, Bd);
    memset(Dg, 0, 8 * m * n), memset(Dc, 0, 8 * m * n);
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, Ad, m, Bd,
                    k, 0.0, Dg, m), 0);
    CHECK_EQ_INT(dg(c, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, Ad, m, Bd,
                    k, 0.0, Dc, m), 0);
    double num = 0, den = 0;
    for (int64_t i = 0; i < m * n; i++) num += (Dg[i] - Dc[i]) * (Dg[i] - Dc[i]), den += Dc[i] * Dc[i];
    CHECK(sqrt(num / den) < 1e-14);
    /* quick return: k == 0 gives C = beta C */
    for (int64_t i = 0; i < m * n; i++) Dg[i] = 2.0;
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, 0, 1.0, Ad, m, Bd, 1,
                    0.5, Dg, m), 0);
    CHECK(Dg[0] == 1.0 && Dg[m * n - 1] == 1.0);
    free(A), free(B), free(Cg), free(Cc), free(Ad), free(Bd), free(Dg), free(Dc);
    tcnla_destroy(g);
    tcnla_destroy(c);
}

/* DP mode is as accurate as native DGEMM: max relative error against the
 * correctly rounded product (CR mode, bitwise the CPU's exact result). */
TEST(gpu_ozaki_dp_accuracy_vs_dgemm) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 256, n = 256, k = 2048;
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *R = malloc(8 * m * n),
           *D = malloc(8 * m * n), *O = malloc(8 * m * n);
    const double phis[] = {0.1, 1.0, 2.0};
    for (int f = 0; f < 3; f++) {
        tn_rand_phi(30 + f, 1, phis[f], m * k, A);
        tn_rand_phi(30 + f, 2, phis[f], k * n, B);
        memset(R, 0, 8 * m * n), memset(D, 0, 8 * m * n);
        oz_opts(g, TCNLA_OZAKI_CR, 0, 1, 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, R, m), 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, D, m), 0);
        double ed = 0;
        for (int64_t i = 0; i < m * n; i++) ed = fmax(ed, fabs(D[i] - R[i]) / fabs(R[i]));
        for (int mi = 0; mi < 2; mi++) {
            memset(O, 0, 8 * m * n);
            oz_opts(g, TCNLA_OZAKI_DP, 0, 1, 0);
            CHECK_EQ_INT(dg(g, oz_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                            0.0, O, m), 0);
            double eo = 0;
            for (int64_t i = 0; i < m * n; i++) eo = fmax(eo, fabs(O[i] - R[i]) / fabs(R[i]));
            printf("    phi %.1f %s DP max rel err %.3e, cuBLAS DGEMM %.3e\n", phis[f],
                   mth(oz_methods[mi]), eo, ed);
            CHECK(eo <= ed);
        }
    }
    free(A), free(B), free(R), free(D), free(O);
    tcnla_destroy(g);
}

/* ------------------------------------------------------ scheme II (CRT) */
static int oz2_opts(tcnla_handle_t h, tcnla_ozaki_mode_t mode, int moduli, size_t cap) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = mode;
    o.slices = moduli;
    o.scheme = TCNLA_OZAKI_SCHEME_2;
    o.workspace_cap = cap;
    return tcnla_set_ozaki_opts(h, &o);
}

/* FIXED: the residues, products and reconstruction are exact integer work
 * and the last operations are the CPU's: bitwise equal; DP: the moduli
 * count comes from sums in another order, the same in all these cases. */
TEST(gpu_ozaki2_bitwise_vs_cpu) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const shape_t shapes[] = {{37, 29, 61, TCNLA_OP_N, TCNLA_OP_N},
                              {33, 17, 1030, TCNLA_OP_T, TCNLA_OP_N},
                              {19, 23, 2049, TCNLA_OP_N, TCNLA_OP_T},
                              {5, 70, 3, TCNLA_OP_T, TCNLA_OP_T}};
    const double phis[] = {0.1, 1.0, 2.0};
    const int moduli[] = {3, 8, 16, 20};
    for (int si = 0; si < 4; si++)
        for (int f = 0; f < 3; f++) {
            const shape_t *s = &shapes[si];
            int64_t lda = (s->ta == TCNLA_OP_N ? s->m : s->k) + 3;
            int64_t ldb = (s->tb == TCNLA_OP_N ? s->k : s->n) + 1;
            int64_t acols = s->ta == TCNLA_OP_N ? s->k : s->m;
            int64_t bcols = s->tb == TCNLA_OP_N ? s->n : s->k, ldc = s->m + 2;
            double *A = malloc(8 * (size_t)(lda * acols)), *B = malloc(8 * (size_t)(ldb * bcols));
            double *Cg = malloc(8 * (size_t)(ldc * s->n)), *Cc = malloc(8 * (size_t)(ldc * s->n));
            tn_rand_phi(300 + (uint64_t)si, 1, phis[f], lda * acols, A);
            tn_rand_phi(300 + (uint64_t)si, 2, phis[f], ldb * bcols, B);
            for (int mi = -1; mi < 4; mi++) { /* -1: DP */
                const double alpha = mi == 1 ? -0.75 : 1.0, beta = mi == 1 ? 0.5 : 0.0;
                tn_rand_phi(7, 3, 1.0, ldc * s->n, Cg);
                memcpy(Cc, Cg, 8 * (size_t)(ldc * s->n));
                const tcnla_ozaki_mode_t mode = mi < 0 ? TCNLA_OZAKI_DP : TCNLA_OZAKI_FIXED;
                oz2_opts(g, mode, mi < 0 ? 0 : moduli[mi], 0);
                oz2_opts(c, mode, mi < 0 ? 0 : moduli[mi], 0);
                CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, s->ta, s->tb, s->m, s->n, s->k, alpha, A,
                                lda, B, ldb, beta, Cg, ldc), 0);
                CHECK_EQ_INT(dg(c, TCNLA_GEMM_OZAKI_INT8, s->ta, s->tb, s->m, s->n, s->k, alpha, A,
                                lda, B, ldb, beta, Cc, ldc), 0);
                const int dgpu = dg_info[1].ozaki_d, dcpu = dg_info[0].ozaki_d,
                          sch = dg_info[1].ozaki_scheme;
                CHECK(sch == 2 && dgpu == dcpu);
                int64_t bad = bit_diffs(Cg, Cc, ldc * s->n);
                CHECK_MSG(bad == 0, "scheme 2 %s %d moduli phi %g %lldx%lldx%lld op %d%d: %lld differ",
                          mi < 0 ? "DP" : "FIXED", dgpu, phis[f], (long long)s->m,
                          (long long)s->n, (long long)s->k, (int)s->ta, (int)s->tb,
                          (long long)bad);
            }
            free(A), free(B), free(Cg), free(Cc);
        }
    /* tcnla_sgemm: FP32 read in place, FP32 written, the CPU's numbers */
    const int64_t m = 45, n = 38, k = 1100;
    float *Af = malloc(4 * m * k), *Bf = malloc(4 * k * n), *Fg = malloc(4 * m * n),
          *Fc = malloc(4 * m * n);
    gt_uniform(5, -1, 1, m * k, Af);
    gt_uniform(6, -1, 1, k * n, Bf);
    for (int mode = 0; mode < 2; mode++) {
        gt_uniform(7, -1, 1, m * n, Fg);
        memcpy(Fc, Fg, 4 * m * n);
        const tcnla_ozaki_mode_t md = mode ? TCNLA_OZAKI_FIXED : TCNLA_OZAKI_DP;
        oz2_opts(g, md, 7, 0);
        oz2_opts(c, md, 7, 0);
        CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.25f, Af,
                             k, Bf, NULL, k, 0.5f, Fg, m), 0);
        CHECK_EQ_INT(gt_gemm(c, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1.25f, Af,
                             k, Bf, NULL, k, 0.5f, Fc, m), 0);
        CHECK_MSG(memcmp(Fg, Fc, 4 * m * n) == 0, "sgemm scheme 2 mode %d differs", mode);
    }
    free(Af), free(Bf), free(Fg), free(Fc);
    tcnla_destroy(g);
    tcnla_destroy(c);
}

/* A row whose large element meets a tiny row of op(B) needs many bits on
 * A's side only: the plan keeps every scaled element below 2^80 (where the
 * GPU's residues are exact) or says RANGE, the same on both backends, and
 * the bits agree where it runs (scheme 2 forced; AUTO falls back to scheme
 * 1 on RANGE) */
TEST(gpu_ozaki2_lopsided_needs_same_as_cpu) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const int64_t m = 64, n = 48, k = 1024;
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *Cg = malloc(8 * m * n),
           *Cc = malloc(8 * m * n);
    const double scales[] = {1e6, 1e7, 1e8, 1e9};
    int ran = 0, range = 0;
    for (int t = 0; t < 4; t++) {
        tn_rand_phi(320, 1, 0.5, m * k, A);
        tn_rand_phi(320, 2, 0.5, k * n, B);
        A[0] *= scales[t];                                      /* a_00 large */
        for (int64_t j = 0; j < n; j++) B[j * k] *= 1e-30;      /* row 0 of B tiny */
        oz2_opts(g, TCNLA_OZAKI_DP, 0, 0);
        oz2_opts(c, TCNLA_OZAKI_DP, 0, 0);
        memset(Cg, 0, 8 * m * n), memset(Cc, 0, 8 * m * n);
        const int sg = dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                          k, 0.0, Cg, m);
        const int sc = dg(c, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                          k, 0.0, Cc, m);
        CHECK_MSG(sg == sc && (sg == 0 || sg == TCNLA_ERR_RANGE), "scale %g: GPU %d, CPU %d",
                  scales[t], sg, sc);
        if (sg == 0) {
            ran++;
            CHECK_MSG(bit_diffs(Cg, Cc, m * n) == 0 && dg_info[1].ozaki_d == dg_info[0].ozaki_d,
                      "scale %g (%d moduli): GPU and CPU differ", scales[t], dg_info[1].ozaki_d);
        } else {
            range++;
        }
    }
    printf("    lopsided needs: %d ran (bits equal), %d RANGE\n", ran, range);
    CHECK(ran >= 1 && range >= 1);
    free(A), free(B), free(Cg), free(Cc);
    tcnla_destroy(g);
    tcnla_destroy(c);
}

/* k beyond one INT8 product (131056): the products of the k-blocks are
 * reduced modulo p_l and added; integer data, nothing truncated: exact */
TEST(gpu_ozaki2_k_blocks_exact) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 40, n = 36, k = 140001;
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *C = malloc(8 * m * n),
           *R = malloc(8 * m * n);
    uint64_t s = 99;
    for (int64_t i = 0; i < m * k; i++) A[i] = (double)((int64_t)(gt_next(&s) >> 54) - 512);
    for (int64_t i = 0; i < k * n; i++) B[i] = (double)((int64_t)(gt_next(&s) >> 52) - 2048);
    oz_opts(g, TCNLA_OZAKI_CR, 0, 1, 0);
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                    0.0, R, m), 0);
    oz2_opts(g, TCNLA_OZAKI_FIXED, 20, 0);
    memset(C, 0, 8 * m * n);
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                    0.0, C, m), 0);
    int64_t bad = 0;
    for (int64_t i = 0; i < m * n; i++) bad += C[i] != R[i];
    CHECK_MSG(bad == 0, "%lld of %lld elements not exact", (long long)bad, (long long)(m * n));
    free(A), free(B), free(C), free(R);
    tcnla_destroy(g);
}

TEST(gpu_ozaki2_workspace_cap_same_bits_and_nan) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 100, n = 90, k = 1500;
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *C0 = malloc(8 * m * n),
           *C1 = malloc(8 * m * n);
    tn_rand_phi(21, 1, 1.0, m * k, A);
    tn_rand_phi(21, 2, 1.0, k * n, B);
    memset(C0, 0, 8 * m * n), memset(C1, 0, 8 * m * n);
    oz2_opts(g, TCNLA_OZAKI_DP, 0, 0);
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                    0.0, C0, m), 0);
    oz2_opts(g, TCNLA_OZAKI_DP, 0, (size_t)3 << 20); /* blocks of 32 x 64 */
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                    0.0, C1, m), 0);
    CHECK_MSG(bit_diffs(C0, C1, m * n) == 0, "scheme 2: the cap changed bits");
    oz2_opts(g, TCNLA_OZAKI_DP, 0, 1000);
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                    0.0, C1, m), TCNLA_ERR_ALLOC);
    { /* many columns: all rows, the columns in blocks (about 1050 of them) */
        const int64_t m2 = 64, n2 = 2100, k2 = 256;
        double *A2 = malloc(8 * m2 * k2), *B2 = malloc(8 * k2 * n2), *D0 = calloc(m2 * n2, 8),
               *D1 = calloc(m2 * n2, 8);
        tn_rand_phi(22, 1, 0.5, m2 * k2, A2);
        tn_rand_phi(22, 2, 0.5, k2 * n2, B2);
        oz2_opts(g, TCNLA_OZAKI_DP, 0, 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m2, n2, k2, 1.0, A2, m2,
                        B2, k2, 0.0, D0, m2), 0);
        oz2_opts(g, TCNLA_OZAKI_DP, 0, (size_t)6 << 20);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m2, n2, k2, 1.0, A2, m2,
                        B2, k2, 0.0, D1, m2), 0);
        CHECK_MSG(bit_diffs(D0, D1, m2 * n2) == 0, "scheme 2: column blocks changed bits");
        free(A2), free(B2), free(D0), free(D1);
    }
    A[5] = NAN;
    oz2_opts(g, TCNLA_OZAKI_DP, 0, 0);
    CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k,
                    0.0, C1, m), 0);
    CHECK(dg_info[1].method == TCNLA_GEMM_NATIVE_FP64 && isnan(C1[5]) && isfinite(C1[6]));
    free(A), free(B), free(C0), free(C1);
    tcnla_destroy(g);
}

/* DP against cuBLAS DGEMM and SGEMM on the same inputs (exact reference:
 * scheme 1 CR, bitwise the CPU's correctly rounded product) */
TEST(gpu_ozaki2_dp_accuracy_vs_cublas) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 256, n = 256, k = 4096;
    double *A = malloc(8 * m * k), *B = malloc(8 * k * n), *R = malloc(8 * m * n),
           *D = malloc(8 * m * n), *O = malloc(8 * m * n);
    float *Af = malloc(4 * m * k), *Bf = malloc(4 * k * n), *Cf = malloc(4 * m * n),
          *Nf = malloc(4 * m * n);
    const double phis[] = {0.1, 0.5, 1.0, 2.0};
    for (int f = 0; f < 4; f++) {
        tn_rand_phi(40 + f, 1, phis[f], m * k, A);
        tn_rand_phi(40 + f, 2, phis[f], k * n, B);
        memset(R, 0, 8 * m * n), memset(D, 0, 8 * m * n), memset(O, 0, 8 * m * n);
        oz_opts(g, TCNLA_OZAKI_CR, 0, 1, 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, R, m), 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, D, m), 0);
        oz2_opts(g, TCNLA_OZAKI_DP, 0, 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, O, m), 0);
        double ed = 0, eo = 0;
        for (int64_t i = 0; i < m * n; i++) {
            ed = fmax(ed, fabs(D[i] - R[i]) / fabs(R[i]));
            eo = fmax(eo, fabs(O[i] - R[i]) / fabs(R[i]));
        }
        const int nm = dg_info[1].ozaki_d;
        printf("    phi %.1f scheme 2 DP (%d moduli) max rel err %.3e, cuBLAS DGEMM %.3e\n",
               phis[f], nm, eo, ed);
        CHECK(eo <= ed);
        /* SGEMM: FP32 inputs; reference the exact product of the FP32 values */
        for (int64_t i = 0; i < m * k; i++) Af[i] = (float)A[i], A[i] = Af[i];
        for (int64_t i = 0; i < k * n; i++) Bf[i] = (float)B[i], B[i] = Bf[i];
        oz_opts(g, TCNLA_OZAKI_CR, 0, 1, 0);
        CHECK_EQ_INT(dg(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B,
                        k, 0.0, R, m), 0);
        oz2_opts(g, TCNLA_OZAKI_DP, 0, 0);
        CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, Af,
                             m, Bf, NULL, k, 0.0f, Nf, m), 0);
        tcnla_info_t info = {0};
        CHECK_EQ_INT(gt_gemm_info(g, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f,
                                  Af, m, Bf, NULL, k, 0.0f, Cf, m, 0, &info), 0);
        const int nms = info.ozaki_d;
        double es = 0, eq = 0;
        for (int64_t i = 0; i < m * n; i++) {
            const double r = (float)R[i];
            es = fmax(es, fabs(Nf[i] - r) / fabs(r));
            eq = fmax(eq, fabs(Cf[i] - r) / fabs(r));
        }
        printf("    phi %.1f scheme 2 SGEMM DP (%d moduli) max rel err %.3e, cuBLAS SGEMM %.3e\n",
               phis[f], nms, eq, es);
        CHECK(eq <= es);
    }
    free(A), free(B), free(R), free(D), free(O), free(Af), free(Bf), free(Cf), free(Nf);
    tcnla_destroy(g);
}
