/* GPU tests of the CUDA backend (`make test-gpu`): the handle, every GEMM
 * method against the CPU backend on the same inputs, bit-identical splits,
 * accuracy ratios against an FP64 reference ([Ootomo & Yokota 2021] eq. 6), edge cases,
 * NaN/Inf, the range check and its fallback. Every test skips when the
 * build or the machine has no GPU. */
#include "test.h"
#include "gpu/gpu_util.h"
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef TCNLA_HAVE_CUDA
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#endif

static const tcnla_gemm_method_t all_methods[] = {
    TCNLA_GEMM_NATIVE_FP32,   TCNLA_GEMM_NATIVE_FP64, TCNLA_GEMM_TF32,
    TCNLA_GEMM_FP16,          TCNLA_GEMM_MARKIDIS_FP16, TCNLA_GEMM_TCEC_FP16,
    TCNLA_GEMM_TCEC_TF32,     TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_SHGEMM_TF32};
#define NMETHODS ((int)(sizeof all_methods / sizeof all_methods[0]))
static const tcnla_gemm_method_t tc_methods[] = {
    TCNLA_GEMM_MARKIDIS_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_TCEC_TF32,
    TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_SHGEMM_TF32};
#define NTC ((int)(sizeof tc_methods / sizeof tc_methods[0]))

static int is_sh(tcnla_gemm_method_t m) {
    return m == TCNLA_GEMM_SHGEMM_FP16 || m == TCNLA_GEMM_SHGEMM_TF32;
}
static const char *mname(tcnla_gemm_method_t m) { return tcnla_gemm_method_name(m); }

/* --------------------------------------------------------------- handle */
TEST(gpu_handle_basics) {
    tcnla_handle_t h = gt_gpu();
    NEED_GPU(h);
    int compiled = 0, count = 0;
    CHECK(tcnla_cuda_available(&compiled, &count) == 0 && compiled == 1 && count > 0);
    tcnla_backend_t be;
    CHECK(tcnla_get_backend(h, &be) == 0 && be == TCNLA_BACKEND_CUDA);
    char name[256];
    CHECK(tcnla_device_name(h, name, sizeof name) == 0);
    CHECK(strlen(name) > 0 && strcmp(name, "CPU") != 0);
    printf("    device: %s\n", name);
    /* memory round trip through every copy kind */
    float x[1000], y[1000];
    gt_uniform(1, -1, 1, 1000, x);
    void *d1 = NULL, *d2 = NULL, *d0 = (void *)1;
    CHECK(tcnla_malloc(h, &d0, 0) == 0 && d0 == NULL);
    REQUIRE(tcnla_malloc(h, &d1, sizeof x) == 0 && d1);
    REQUIRE(tcnla_malloc(h, &d2, sizeof x) == 0 && d2);
    CHECK(tcnla_memcpy(h, d1, x, sizeof x, TCNLA_MEMCPY_HOST_TO_HANDLE) == 0);
    CHECK(tcnla_memcpy(h, d2, d1, sizeof x, TCNLA_MEMCPY_HANDLE_TO_HANDLE) == 0);
    CHECK(tcnla_memcpy(h, y, d2, sizeof x, TCNLA_MEMCPY_HANDLE_TO_HOST) == 0);
    CHECK(memcmp(x, y, sizeof x) == 0);
    CHECK(tcnla_free(h, d1) == 0);
    CHECK(tcnla_free(h, d2) == 0);
    CHECK(tcnla_free(h, NULL) == 0);
    /* streams: the default stream, then back to a user stream */
    CHECK(tcnla_set_stream(h, NULL) == 0);
    float a = 3.0f, b = -2.0f, c = 5.0f;
    CHECK(gt_gemm(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, 1, &a, 1, &b, NULL, 1,
                  2.0f, &c, 1) == 0);
    CHECK(c == 4.0f);
#ifdef TCNLA_HAVE_CUDA
    cudaStream_t s;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(tcnla_set_stream(h, s) == 0);
    c = 5.0f;
    CHECK(gt_gemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, 1, &a, 1, &b, NULL,
                  1, 2.0f, &c, 1) == 0);
    CHECK(c == 4.0f);
    CHECK(tcnla_synchronize(h) == 0);
    CHECK(tcnla_destroy(h) == 0);
    cudaStreamDestroy(s);
#else
    tcnla_destroy(h);
#endif
    /* AUTO picks the GPU here */
    tcnla_handle_t h2 = NULL;
    CHECK(tcnla_create(&h2, TCNLA_BACKEND_AUTO) == 0);
    CHECK(tcnla_get_backend(h2, &be) == 0 && be == TCNLA_BACKEND_CUDA);
    tcnla_destroy(h2);
}

/* ------------------------------------------------------- split bit-exact */
#ifdef TCNLA_HAVE_CUDA
static int64_t split_inputs(float *x, int64_t cap) {
    int64_t n = 0;
    /* random values over the whole usable exponent range */
    uint64_t s = 12345;
    while (n < cap / 2) {
        uint64_t r = gt_next(&s);
        int e = -60 + (int)(r % 76); /* 2^-60 .. 2^15 */
        float f = 1.0f + (float)((r >> 20) & 0x7fffff) / 8388608.0f;
        x[n++] = ldexpf(((r >> 50) & 1) ? -f : f, e);
    }
    /* ties of FP16 and TF32 rounding, at several binades and in the
     * FP16 subnormal range, and neighbours of the ties */
    for (int e = -30; e <= 14 && n + 12 < cap; e++) {
        for (int t = 0; t < 3; t++) {
            float base = ldexpf(1.0f + (float)t / 1024.0f, e);
            float tie = base + ldexpf(1.0f, e - 11); /* half an ulp of FP16 / TF32 */
            x[n++] = tie;
            x[n++] = -tie;
            x[n++] = nextafterf(tie, 0.0f);
            x[n++] = nextafterf(tie, 1e30f);
        }
    }
    /* FP16 subnormals, FP32 subnormals, zeros, the FP16 overflow boundary */
    const float special[] = {0.0f, -0.0f, 0x1p-24f, 0x1p-25f, 0x3p-26f, 0x1.8p-24f, 0x1p-14f,
                             0x1.ff8p-15f, 1e-40f, -1e-42f, 0x1p-149f, 65504.0f, 65519.0f,
                             -65519.0f, 65519.99f, 0x1p-126f, 0x1.000002p-20f, 1.0f / 3.0f};
    for (size_t i = 0; i < sizeof special / sizeof special[0] && n < cap; i++) x[n++] = special[i];
    return n;
}
#endif

TEST(gpu_split_bit_identical_to_tcnla_split) {
    tcnla_handle_t h = gt_gpu();
    NEED_GPU(h);
#ifdef TCNLA_HAVE_CUDA
    const int64_t cap = 1 << 16;
    float *x = malloc(sizeof(float) * cap), *hi = malloc(sizeof(float) * cap),
          *lo = malloc(sizeof(float) * cap);
    int64_t n = split_inputs(x, cap);
    float *dx, *dh, *dl;
    REQUIRE(tcnla_malloc(h, (void **)&dx, sizeof(float) * n) == 0);
    REQUIRE(tcnla_malloc(h, (void **)&dh, sizeof(float) * n) == 0);
    REQUIRE(tcnla_malloc(h, (void **)&dl, sizeof(float) * n) == 0);
    CHECK(tcnla_memcpy(h, dx, x, sizeof(float) * n, TCNLA_MEMCPY_HOST_TO_HANDLE) == 0);
    for (int kind = 0; kind < 3; kind++) {
        CHECK(tn_cu_debug_split(kind, dx, dh, dl, n, 0) == 0);
        CHECK(tcnla_memcpy(h, hi, dh, sizeof(float) * n, TCNLA_MEMCPY_HANDLE_TO_HOST) == 0);
        CHECK(tcnla_memcpy(h, lo, dl, sizeof(float) * n, TCNLA_MEMCPY_HANDLE_TO_HOST) == 0);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            float eh, el;
            tcnla_split((tcnla_split_t)kind, x[i], &eh, &el);
            if (memcmp(&eh, &hi[i], 4) || memcmp(&el, &lo[i], 4)) {
                if (bad < 5)
                    printf("    kind %d x=%a: gpu (%a, %a) cpu (%a, %a)\n", kind, x[i], hi[i],
                           lo[i], eh, el);
                bad++;
            }
        }
        CHECK_MSG(bad == 0, "split kind %d: %lld of %lld differ", kind, (long long)bad,
                  (long long)n);
    }
    tcnla_free(h, dx);
    tcnla_free(h, dh);
    tcnla_free(h, dl);
    free(x), free(hi), free(lo);
#endif
    tcnla_destroy(h);
}

/* k = 1 and B = powers of two: every product is exact, so C shows the
 * split the kernels made (hi + lo * 2^-11) and must equal the CPU backend
 * bit for bit. */
TEST(gpu_split_shows_in_products_bit_identical) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const int64_t m = 300, n = 5, k = 1;
    float *A = malloc(sizeof(float) * m), B[5], Cg[300 * 5], Cc[300 * 5];
    uint16_t B16[5];
    gt_exp_rand(3, -2, 12, m, A); /* inside every split's range, Markidis' too */
    for (int j = 0; j < n; j++) {
        B[j] = ldexpf(j & 1 ? -1.0f : 1.0f, j - 2);
        B16[j] = tcnla_f32_to_f16(B[j], TCNLA_ROUND_RN);
    }
    for (int t = 0; t < NTC; t++) {
        tcnla_gemm_method_t meth = tc_methods[t];
        for (int via16 = 0; via16 < (is_sh(meth) ? 2 : 1); via16++) {
            for (int i = 0; i < m * n; i++) Cg[i] = Cc[i] = NAN;
            int s1 = gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, A, m, B,
                             via16 ? B16 : NULL, 1, 0.0f, Cg, m);
            int s2 = gt_gemm(c, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, A, m, B,
                             via16 ? B16 : NULL, 1, 0.0f, Cc, m);
            CHECK_MSG(s1 == 0 && s2 == 0, "%s: status gpu %d cpu %d", mname(meth), s1, s2);
            int bad = 0;
            for (int i = 0; i < m * n; i++)
                if (memcmp(&Cg[i], &Cc[i], 4)) {
                    if (bad < 3)
                        printf("    %s: C[%d] gpu %a cpu %a (a=%a)\n", mname(meth), i, Cg[i],
                               Cc[i], A[i % m]);
                    bad++;
                }
            CHECK_MSG(bad == 0, "%s: %d elements differ", mname(meth), bad);
        }
    }
    free(A);
    tcnla_destroy(c);
    tcnla_destroy(g);
}

/* ------------------------------------------------ every method vs the CPU */
static void compare_backends(tcnla_handle_t g, tcnla_handle_t c, tcnla_gemm_method_t meth,
                             tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k,
                             int64_t pad, float alpha, float beta, int via16, int off,
                             uint64_t seed) {
    int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    int64_t brows = tb == TCNLA_OP_N ? k : n, bcols = tb == TCNLA_OP_N ? n : k;
    int64_t lda = arows + pad, ldb = brows + pad, ldc = m + pad;
    float *A = malloc(sizeof(float) * (size_t)(lda * acols + 1));
    float *B = malloc(sizeof(float) * (size_t)(ldb * bcols + 1));
    uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)(ldb * bcols + 1));
    float *C0 = malloc(sizeof(float) * (size_t)(ldc * n)), *Cg = malloc(sizeof(float) * (size_t)(ldc * n)),
          *Cc = malloc(sizeof(float) * (size_t)(ldc * n));
    gt_uniform(seed, -1, 1, lda * acols, A);
    gt_uniform(seed + 1, -1, 1, ldb * bcols, B);
    gt_uniform(seed + 2, -1, 1, ldc * n, C0);
    for (int64_t i = 0; i < ldb * bcols; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
    memcpy(Cg, C0, sizeof(float) * (size_t)(ldc * n));
    memcpy(Cc, C0, sizeof(float) * (size_t)(ldc * n));
    tcnla_info_t ig = {0}, ic = {0};
    int s1 = gt_gemm_info(g, meth, ta, tb, m, n, k, alpha, A, lda, B, via16 ? B16 : NULL, ldb, beta,
                          Cg, ldc, off, &ig);
    int s2 = gt_gemm_info(c, meth, ta, tb, m, n, k, alpha, A, lda, B, via16 ? B16 : NULL, ldb, beta,
                          Cc, ldc, 0, &ic);
    const tcnla_gemm_method_t ug = ig.method, uc = ic.method;
    CHECK_MSG(s1 == 0 && s2 == 0, "%s m=%lld n=%lld k=%lld: status gpu %d cpu %d", mname(meth),
              (long long)m, (long long)n, (long long)k, s1, s2);
    CHECK_MSG(ug == uc, "%s: last method gpu %s cpu %s", mname(meth), mname(ug), mname(uc));
    double d = gt_rel_diff(Cg, Cc, m, n, ldc);
    CHECK_MSG(d <= 2e-5, "%s ta=%d tb=%d m=%lld n=%lld k=%lld pad=%lld off=%d b16=%d: gpu vs cpu %.3e",
              mname(meth), ta, tb, (long long)m, (long long)n, (long long)k, (long long)pad, off,
              via16, d);
    /* the padding rows of C are never written */
    int pad_ok = 1;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = m; i < ldc; i++)
            if (memcmp(&Cg[i + j * ldc], &C0[i + j * ldc], 4)) pad_ok = 0;
    CHECK_MSG(pad_ok, "%s: C padding written", mname(meth));
    free(A), free(B), free(B16), free(C0), free(Cg), free(Cc);
}

TEST(gpu_every_method_matches_cpu_backend) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    for (int mi = 0; mi < NMETHODS; mi++)
        for (int t = 0; t < 4; t++) {
            tcnla_op_t ta = (t & 1) ? TCNLA_OP_T : TCNLA_OP_N;
            tcnla_op_t tb = (t & 2) ? TCNLA_OP_T : TCNLA_OP_N;
            compare_backends(g, c, all_methods[mi], ta, tb, 70, 45, 300, 0, 1.25f, -0.5f, 0, 0,
                             100 + t);
            if (is_sh(all_methods[mi]))
                compare_backends(g, c, all_methods[mi], ta, tb, 70, 45, 300, 0, 1.25f, -0.5f, 1,
                                 0, 200 + t);
        }
    /* split-K (few tiles, long k), with beta and ld > rows */
    for (int t = 0; t < NTC; t++)
        compare_backends(g, c, tc_methods[t], t & 1 ? TCNLA_OP_T : TCNLA_OP_N,
                         t & 2 ? TCNLA_OP_T : TCNLA_OP_N, 100, 70, 3000 + 7 * t, 2, 0.5f, 2.0f,
                         is_sh(tc_methods[t]) && t == 4, 0, 300 + t);
    /* tcnla_shgemm's native methods widen the FP16 B exactly */
    compare_backends(g, c, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_T, 33, 17, 65, 1, 1, 0, 1,
                     0, 7);
    compare_backends(g, c, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_T, TCNLA_OP_N, 33, 17, 65, 1, 1, 2, 1,
                     0, 8);
    tcnla_destroy(c);
    tcnla_destroy(g);
}

/* Tails in m, n and k, both transposes, ld > rows, misaligned pointers. */
TEST(gpu_tails_transposes_ld) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    static const int64_t shapes[][3] = {{1, 1, 1},     {7, 33, 130}, {130, 7, 33}, {33, 130, 7},
                                        {1, 130, 33},  {130, 1, 1},  {129, 131, 257},
                                        {128, 128, 32}, {256, 8, 40}};
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int mi = 0; mi < NTC; mi++)
        for (int si = 0; si < nshapes; si++)
            for (int t = 0; t < 4; t++) {
                tcnla_op_t ta = (t & 1) ? TCNLA_OP_T : TCNLA_OP_N;
                tcnla_op_t tb = (t & 2) ? TCNLA_OP_T : TCNLA_OP_N;
                int64_t pad = (si + t) % 3 == 0 ? 0 : (si + t) % 3 == 1 ? 3 : 4;
                compare_backends(g, c, tc_methods[mi], ta, tb, shapes[si][0], shapes[si][1],
                                 shapes[si][2], pad, 0.75f, 1.5f, is_sh(tc_methods[mi]) && (t & 1),
                                 (si == 6 && t == 3) ? 1 : 0, 1000 + si * 4 + t);
            }
    /* the cuBLAS methods too, on a few forms */
    const tcnla_gemm_method_t cub[] = {TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_NATIVE_FP64,
                                       TCNLA_GEMM_TF32, TCNLA_GEMM_FP16};
    for (int mi = 0; mi < 4; mi++)
        for (int si = 0; si < nshapes; si += 2)
            for (int t = 0; t < 4; t++)
                compare_backends(g, c, cub[mi], (t & 1) ? TCNLA_OP_T : TCNLA_OP_N,
                                 (t & 2) ? TCNLA_OP_T : TCNLA_OP_N, shapes[si][0], shapes[si][1],
                                 shapes[si][2], t, -1.0f, 0.25f, 0, t == 2, 2000 + si * 4 + t);
    tcnla_destroy(c);
    tcnla_destroy(g);
}

/* A small run of every method over tails and transposes: the filter that
 * tests/gpu/sanitize.sh runs under compute-sanitizer. */
TEST(gpu_small_sanitize_set) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    for (int mi = 0; mi < NMETHODS; mi++)
        for (int t = 0; t < 4; t++)
            compare_backends(g, c, all_methods[mi], (t & 1) ? TCNLA_OP_T : TCNLA_OP_N,
                             (t & 2) ? TCNLA_OP_T : TCNLA_OP_N, 37 + t, 130 - t, 45 + 17 * t,
                             t % 2 ? 3 : 0, 1.0f, t == 1 ? 0.0f : 0.5f,
                             is_sh(all_methods[mi]) && t >= 2, t == 3, 3000 + mi * 4 + t);
    /* the split-K path (two k-slices and the reduction) */
    for (int mi = 0; mi < NTC; mi++)
        compare_backends(g, c, tc_methods[mi], mi & 1 ? TCNLA_OP_T : TCNLA_OP_N, TCNLA_OP_N, 40,
                         60, 600, 1, 1.0f, 0.5f, is_sh(tc_methods[mi]), 0, 3100 + mi);
    tcnla_destroy(c);
    tcnla_destroy(g);
}

/* --------------------------------------------------------------- edges */
TEST(gpu_beta_zero_ignores_nan_in_c_and_quick_returns) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    float A[6 * 9], B[9 * 4], C[6 * 4];
    gt_uniform(4, -1, 1, 54, A);
    gt_uniform(5, -1, 1, 36, B);
    for (int mi = 0; mi < NMETHODS; mi++) {
        tcnla_gemm_method_t meth = all_methods[mi];
        for (int i = 0; i < 24; i++) C[i] = NAN;
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, 6, 4, 9, 1.0f, A, 6, B, NULL, 9, 0.0f, C,
                      6) == 0);
        for (int i = 0; i < 24; i++) CHECK_MSG(isfinite(C[i]), "%s left NaN", mname(meth));
        for (int i = 0; i < 24; i++) C[i] = NAN; /* k == 0 */
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, 6, 4, 0, 1.0f, A, 6, B, NULL, 1, 0.0f, C,
                      6) == 0);
        for (int i = 0; i < 24; i++) CHECK(C[i] == 0.0f);
        for (int i = 0; i < 24; i++) C[i] = NAN; /* alpha == 0 */
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, 6, 4, 9, 0.0f, A, 6, B, NULL, 9, 0.0f, C,
                      6) == 0);
        for (int i = 0; i < 24; i++) CHECK(C[i] == 0.0f);
        for (int i = 0; i < 24; i++) C[i] = 2.0f; /* k == 0, beta != 0 */
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, 6, 4, 0, 1.0f, A, 6, B, NULL, 1, 3.0f, C,
                      6) == 0);
        for (int i = 0; i < 24; i++) CHECK(C[i] == 6.0f);
        float a = 3.0f, b = -2.0f, c = 5.0f; /* 1 x 1 x 1 */
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, NULL, 1, 2.0f, &c,
                      1) == 0);
        CHECK_MSG(c == 4.0f, "%s: 1x1x1 gave %g", mname(meth), c);
    }
    tcnla_destroy(g);
}

/* The handle of the three tests of the checks below, with the pre-split
 * path as check_presplit says (gpu_presplit_checks_same_decisions). */
static int check_presplit = TCNLA_TUNING_AUTO;
static tcnla_handle_t check_gpu(void) {
    tcnla_handle_t g = gt_gpu();
    if (g) GT_TUNE(g, sm90_presplit, check_presplit);
    return g;
}

TEST(gpu_nan_inf_propagate_like_sgemm) {
    tcnla_handle_t g = check_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    const int m = 40, n = 30, k = 50;
    float A[40 * 50], B[50 * 30], Cg[40 * 30], Cc[40 * 30];
    uint16_t B16[50 * 30];
    gt_uniform(6, 0.5f, 1, m * k, A);
    gt_uniform(7, 0.5f, 1, k * n, B);
    A[1 + 2 * m] = INFINITY; /* row 1 of A */
    A[5 + 7 * m] = -INFINITY; /* row 5 */
    B[5 + 0 * k] = NAN;       /* column 0 of B */
    for (int i = 0; i < k * n; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
    for (int mi = 0; mi < NMETHODS; mi++) {
        tcnla_gemm_method_t meth = all_methods[mi];
        for (int via16 = 0; via16 < (is_sh(meth) ? 2 : 1); via16++) {
            tcnla_info_t ig = {0}, ic = {0};
            CHECK(gt_gemm_info(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B,
                               via16 ? B16 : NULL, k, 0, Cg, m, 0, &ig) == 0);
            CHECK(gt_gemm_info(c, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B,
                               via16 ? B16 : NULL, k, 0, Cc, m, 0, &ic) == 0);
            const tcnla_gemm_method_t ug = ig.method, uc = ic.method;
            CHECK_MSG(ug == uc, "%s: last method gpu %s cpu %s", mname(meth), mname(ug), mname(uc));
            if (meth != TCNLA_GEMM_NATIVE_FP64) CHECK(ug == TCNLA_GEMM_NATIVE_FP32);
            int bad = 0;
            for (int i = 0; i < m * n; i++) {
                int same = isnan(Cg[i]) == isnan(Cc[i]) && isinf(Cg[i]) == isinf(Cc[i]) &&
                           (!isinf(Cg[i]) || Cg[i] == Cc[i]);
                if (same && isfinite(Cg[i]) && fabs(Cg[i] - Cc[i]) > 1e-5 * fabs(Cc[i]) + 1e-6)
                    same = 0;
                if (!same) bad++;
            }
            CHECK_MSG(bad == 0, "%s: %d elements differ from the CPU", mname(meth), bad);
            CHECK(isinf(Cg[1 + 1 * m]) && Cg[1 + 1 * m] > 0);
            CHECK(isinf(Cg[5 + 1 * m]) && Cg[5 + 1 * m] < 0);
            CHECK(isnan(Cg[0]));
        }
    }
    tcnla_destroy(c);
    tcnla_destroy(g);
}

/* exp_rand(-45, -35) is below FP16's range: with exact scaling off, FP16
 * methods report it, TF32 methods compute it, the fallback policy switches
 * (gpu_exact_scaling_*: on, they compute it). */
TEST(gpu_range_error_and_fallback) {
    tcnla_handle_t g = check_gpu();
    NEED_GPU(g);
    GT_TUNE(g, exact_scaling, 0);
    const int m = 64, n = 48, k = 256;
    float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
    float *C = malloc(sizeof(float) * m * n), *C2 = malloc(sizeof(float) * m * n);
    double *R = malloc(sizeof(double) * m * n);
    uint16_t *B16 = malloc(sizeof(uint16_t) * k * n);
    gt_exp_rand(11, -45, -35, m * k, A);
    gt_exp_rand(12, -45, -35, k * n, B);
    gt_ref(TCNLA_OP_N, TCNLA_OP_N, m, n, k, A, m, B, k, R);
    const tcnla_gemm_method_t f16m[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_MARKIDIS_FP16,
                                        TCNLA_GEMM_FP16, TCNLA_GEMM_SHGEMM_FP16};
    for (int i = 0; i < 4; i++) {
        for (int e = 0; e < m * n; e++) C[e] = 42.0f;
        CHECK_EQ_INT(gt_gemm(g, f16m[i], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0,
                             C, m),
                     TCNLA_ERR_RANGE);
        int untouched = 1;
        for (int e = 0; e < m * n; e++) untouched &= C[e] == 42.0f;
        CHECK_MSG(untouched, "%s wrote C on a range error", mname(f16m[i]));
    }
    /* TF32-based methods have FP32's exponent range */
    CHECK(gt_gemm(g, TCNLA_GEMM_TCEC_TF32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0,
                  C, m) == 0);
    double e_tf = gt_rel_err(C, m, R, m, n);
    CHECK_MSG(e_tf < 2e-6, "tcec_tf32 on exp_rand(-45,-35): %.3e", e_tf);
    /* fallback: TCEC_FP16 computes as TCEC_TF32, bit for bit */
    CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_FALLBACK) == 0);
    tcnla_info_t info = {0};
    CHECK(gt_gemm_info(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL,
                       k, 0, C2, m, 0, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_TF32);
    CHECK(memcmp(C, C2, sizeof(float) * m * n) == 0);
    CHECK(gt_gemm_info(g, TCNLA_GEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0,
                       C2, m, 0, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_TCEC_TF32);
    /* SHGEMM_FP16 with A out of range falls back to SHGEMM_TF32 */
    float *Bn = malloc(sizeof(float) * k * n);
    gt_uniform(13, -1, 1, k * n, Bn);
    for (int e = 0; e < k * n; e++) B16[e] = tcnla_f32_to_f16(Bn[e], TCNLA_ROUND_RN);
    CHECK(gt_gemm_info(g, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, NULL,
                       B16, k, 0, C2, m, 0, &info) == 0);
    CHECK(info.method == TCNLA_GEMM_SHGEMM_TF32);
    /* a B that overflows FP16 in SHGEMM via tcnla_sgemm: an error whatever the policy */
    Bn[3] = 1e5f;
    CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bn,
                         NULL, k, 0, C2, m),
                 TCNLA_ERR_RANGE);
    CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_SHGEMM_TF32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bn,
                         NULL, k, 0, C2, m),
                 TCNLA_ERR_RANGE);
    /* the check is per row of op(A): one row of tiny values fails, the same
     * values spread over a row with a large element do not */
    CHECK(tcnla_set_range_policy(g, TCNLA_RANGE_ERROR) == 0);
    gt_uniform(14, -1, 1, m * k, A);
    gt_uniform(15, -1, 1, k * n, Bn);
    CHECK(gt_gemm(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bn, NULL, k,
                  0, C2, m) == 0);
    float tiny[256];
    gt_exp_rand(16, -30, -20, k, tiny);
    for (int p = 0; p < k; p++) A[7 + p * m] = tiny[p]; /* row 7 of A */
    CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bn,
                         NULL, k, 0, C2, m),
                 TCNLA_ERR_RANGE);
    A[7 + 100 * m] = 1.0f; /* now the row's maximum makes its small elements negligible */
    CHECK(gt_gemm(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bn, NULL, k,
                  0, C2, m) == 0);
    /* the same for a column of op(B), and with op(A) = A^T */
    for (int p = 0; p < k; p++) Bn[p + 5 * k] = tiny[p];
    CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bn,
                         NULL, k, 0, C2, m),
                 TCNLA_ERR_RANGE);
    CHECK_EQ_INT(gt_gemm(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_T, TCNLA_OP_N, n, n, k, 1, Bn, k, Bn,
                         NULL, k, 0, C2, n),
                 TCNLA_ERR_RANGE);
    free(A), free(B), free(C), free(C2), free(R), free(B16), free(Bn);
    tcnla_destroy(g);
}

/* Exact scaling on every kernel path: rows of op(A) and columns of op(B)
 * multiplied by 2^e, e in -40..40, give the unscaled product's bits times
 * 2^(e_i + f_j) (the CPU model: test_exact_scaling.c), for TCEC_FP16 and
 * SHGEMM_FP16 (FP32 B and FP16 B; FP16: the next test), all ops, alpha / beta, with
 * shapes and tunings that take the mma.sync kernels, Hopper's in-kernel
 * split, pre-split, wide-tile and FP16-inside paths. */
static int scaled_case(tcnla_handle_t g, tcnla_gemm_method_t meth, int ta, int tb, int64_t m,
                       int64_t n, int64_t k, int b16) {
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    float *A0 = malloc(sizeof(float) * (size_t)(ar * ac)), *A = malloc(sizeof(float) * (size_t)(ar * ac));
    float *B0 = malloc(sizeof(float) * (size_t)(br * bc)), *B = malloc(sizeof(float) * (size_t)(br * bc));
    float *C0 = malloc(sizeof(float) * (size_t)(m * n)), *C = malloc(sizeof(float) * (size_t)(m * n));
    uint16_t *B16 = b16 ? malloc(sizeof(uint16_t) * (size_t)(br * bc)) : NULL;
    int *er = malloc(sizeof(int) * (size_t)m), *ec = malloc(sizeof(int) * (size_t)n);
    float *u = malloc(sizeof(float) * (size_t)(m + n));
    gt_uniform(41, 0, 1, m + n, u);
    for (int64_t i = 0; i < m; i++) er[i] = (int)(u[i] * 81) - 40;
    for (int64_t j = 0; j < n; j++) ec[j] = b16 ? 0 : (int)(u[m + j] * 81) - 40;
    gt_uniform(42, -1, 1, ar * ac, A0);
    gt_uniform(43, -1, 1, br * bc, B0);
    for (int64_t i = 0; i < br * bc; i++) { /* FP16 values: SHGEMM's B is exact then */
        const uint16_t h = tcnla_f32_to_f16(B0[i], TCNLA_ROUND_RN);
        B0[i] = tcnla_f16_to_f32(h);
        if (B16) B16[i] = h;
    }
    for (int64_t j = 0; j < ac; j++)
        for (int64_t i = 0; i < ar; i++) A[i + j * ar] = ldexpf(A0[i + j * ar], ta ? er[j] : er[i]);
    for (int64_t j = 0; j < bc; j++)
        for (int64_t i = 0; i < br; i++) B[i + j * br] = ldexpf(B0[i + j * br], tb ? ec[i] : ec[j]);
    gt_uniform(44, -1, 1, m * n, C0);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) C[i + j * m] = ldexpf(C0[i + j * m], er[i] + ec[j]);
    tcnla_info_t i0 = {0}, i1 = {0};
    int bad = -1;
    /* (FP16 runs on cuBLAS, whose epilogue may fuse alpha acc + beta C into
     * one rounding where the unscaling rounds alpha u and beta C apart:
     * beta = 0 there, so that the product's bits are compared) */
    const float beta = meth == TCNLA_GEMM_FP16 ? 0.0f : -0.5f;
    const int s0 = gt_gemm_info(g, meth, ta, tb, m, n, k, 0.75f, A0, ar, B16 ? NULL : B0, B16, br,
                                beta, C0, m, 0, &i0);
    const int s1 = gt_gemm_info(g, meth, ta, tb, m, n, k, 0.75f, A, ar, B16 ? NULL : B, B16, br,
                                beta, C, m, 0, &i1);
    if (s0 == 0 && s1 == 0 && i0.scaled == 0 && i1.scaled == 1 && i1.method == meth) {
        bad = 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                const float want = ldexpf(C0[i + j * m], er[i] + ec[j]);
                if (memcmp(&want, &C[i + j * m], sizeof want)) bad++;
            }
    }
    if (bad)
        printf("    %s ta %d tb %d %lldx%lldx%lld%s: status %d / %d, scaled %d / %d, %d differ\n",
               mname(meth), ta, tb, (long long)m, (long long)n, (long long)k, b16 ? " B16" : "",
               s0, s1, i0.scaled, i1.scaled, bad);
    free(A0), free(A), free(B0), free(B), free(C0), free(C), free(B16), free(er), free(ec), free(u);
    return bad == 0;
}

TEST(gpu_exact_scaling_same_bits_on_every_path) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    /* m, n, k: small (mma.sync / in-kernel split), pre-split sizes, the
     * wide-tile band (192 <= n <= 512), FP16 with op(A) inside (n <= 272) */
    const int64_t shapes[][3] = {{70, 33, 100}, {1024, 1024, 1024}, {2048, 256, 1024},
                                 {8704, 64, 1024}};
    const tcnla_gemm_method_t ms[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_SHGEMM_FP16};
    for (int sm90 = 1; sm90 >= 0; sm90--) {
        GT_TUNE(g, sm90, sm90);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int mi = 0; mi < 2; mi++)
                for (int t = 0; t < 4; t++) {
                    const int ta = t & 1, tb = t >> 1;
                    if (s > 0 && t != 0 && t != 1) continue; /* (large: op(B) = B, both op(A)) */
                    CHECK_MSG(scaled_case(g, ms[mi], ta, tb, shapes[s][0], shapes[s][1],
                                          shapes[s][2], 0),
                              "sm90 %d shape %zu %s ta %d tb %d", sm90, s, mname(ms[mi]), ta, tb);
                }
        CHECK(scaled_case(g, TCNLA_GEMM_SHGEMM_FP16, 0, 0, 2048, 256, 1024, 1));
        CHECK(scaled_case(g, TCNLA_GEMM_SHGEMM_FP16, 1, 0, 70, 33, 100, 1));
    }
    tcnla_destroy(g);
}

/* The same for TCNLA_GEMM_FP16 (cuBLAS on FP16 copies, or Hopper's kernel
 * with op(A) rounded inside at 8704 x 64). Apart from the test above, whose
 * name the sanitizer pass selects: its racecheck reports hazards inside
 * cuBLAS's own FP16 kernels (nvjet_*), not in tcnla's. */
TEST(gpu_fp16_method_powers_of_two_same_bits) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t shapes[][3] = {{70, 33, 100}, {1024, 1024, 1024}, {2048, 256, 1024},
                                 {8704, 64, 1024}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            CHECK_MSG(scaled_case(g, TCNLA_GEMM_FP16, ta, 0, shapes[s][0], shapes[s][1],
                                  shapes[s][2], 0),
                      "shape %zu ta %d", s, ta);
    tcnla_destroy(g);
}

/* The checks read 4 elements per load where every vector start is 16-byte
 * aligned (ld % 4 == 0) and one by one otherwise: a vector's last element
 * (past the last whole group of 4) is seen in both layouts, for the range
 * check (rows of op(A), columns of op(B)) and for NaN. */
TEST(gpu_checks_see_every_element_aligned_or_not) {
    tcnla_handle_t g = check_gpu();
    NEED_GPU(g);
    GT_TUNE(g, exact_scaling, 0); /* (the range errors are the checks' verdicts) */
    const int m = 70, n = 9, k = 70;
    float *A = malloc(sizeof(float) * 72 * k), *B = malloc(sizeof(float) * 72 * n),
          *C = calloc((size_t)m * n, sizeof(float)), tiny[70];
    gt_exp_rand(31, -30, -20, 70, tiny);
    for (int ld = 70; ld <= 72; ld += 2) {
        for (int where = 0; where < 4; where++) {
            gt_uniform(32, -1, 1, ld * k, A);
            gt_uniform(33, -1, 1, ld * n, B);
            tcnla_set_range_policy(g, TCNLA_RANGE_ERROR);
            int want = TCNLA_ERR_RANGE;
            if (where == 0) /* the last row of A: tiny everywhere */
                for (int p = 0; p < k; p++) A[(m - 1) + p * ld] = tiny[p];
            if (where == 1) /* column 8 of B (rows 0..k-1), its last element too */
                for (int p = 0; p < k; p++) B[p + 8 * ld] = tiny[p];
            if (where == 2) A[(m - 1) + 5 * ld] = NAN, want = 0; /* last row: NaN */
            if (where == 3) B[(k - 1) + 8 * ld] = NAN, want = 0; /* last element of a column */
            tcnla_info_t info = {0};
            const int st = gt_gemm_info(g, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k,
                                        1, A, ld, B, NULL, ld, 0, C, m, 0, &info);
            CHECK_MSG(st == want, "ld %d case %d: status %d, want %d", ld, where, st, want);
            if (where >= 2) {
                const tcnla_gemm_method_t used = info.method;
                CHECK_MSG(used == TCNLA_GEMM_NATIVE_FP32, "ld %d case %d: NaN not seen", ld,
                          where);
                CHECK(where == 2 ? isnan(C[(m - 1) + 0 * m]) : isnan(C[0 + 8 * m]));
            }
        }
    }
    /* FP16 B of SHGEMM (8 values per load when ld % 8 == 0): Inf in a
     * column's last element (past the last group of 8) or inside */
    uint16_t *B16 = malloc(sizeof(uint16_t) * 72 * n);
    for (int ld = 70; ld <= 72; ld += 2)
        for (int where = 0; where < 2; where++) {
            gt_uniform(34, -1, 1, ld * k, A);
            gt_uniform(35, -1, 1, ld * n, B);
            for (int e = 0; e < ld * n; e++) B16[e] = tcnla_f32_to_f16(B[e], TCNLA_ROUND_RN);
            B16[(where ? 13 : k - 1) + 4 * ld] = 0x7c00; /* +Inf */
            tcnla_info_t info = {0};
            CHECK(gt_gemm_info(g, TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A,
                               ld, NULL, B16, ld, 0, C, m, 0, &info) == 0);
            const tcnla_gemm_method_t used = info.method;
            CHECK_MSG(used == TCNLA_GEMM_NATIVE_FP32, "FP16 B, ld %d case %d: Inf not seen", ld,
                      where);
            CHECK(isinf(C[0 + 4 * m]) || isnan(C[0 + 4 * m]));
        }
    free(B16);
    free(A), free(B), free(C);
    tcnla_destroy(g);
}

/* The same three tests through Hopper's pre-split path, whose pass over A
 * and FP32 B also does their checks (the tuning's sm90_presplit = 1 makes
 * even these small products take it): the same statuses, fallbacks and
 * NaN / Inf results. (Elsewhere the path runs by default from m, n >= 1024
 * only.) */
TEST(gpu_presplit_checks_same_decisions) {
    check_presplit = 1;
    gpu_nan_inf_propagate_like_sgemm();
    gpu_range_error_and_fallback();
    gpu_checks_see_every_element_aligned_or_not();
    check_presplit = TCNLA_TUNING_AUTO;
}

TEST(gpu_invalid_arguments_return_minus_i) {
    tcnla_handle_t h = gt_gpu();
    NEED_GPU(h);
    float *A, *B, *C;
    REQUIRE(tcnla_malloc(h, (void **)&A, 64) == 0);
    REQUIRE(tcnla_malloc(h, (void **)&B, 64) == 0);
    REQUIRE(tcnla_malloc(h, (void **)&C, 64) == 0);
    const tcnla_gemm_method_t M = TCNLA_GEMM_TCEC_FP16;
    const tcnla_op_t N = TCNLA_OP_N;
    CHECK_EQ_INT(tcnla_sgemm(h, (tcnla_gemm_method_t)77, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), -2);
    CHECK_EQ_INT(tcnla_sgemm(h, M, (tcnla_op_t)5, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), -3);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, -1, 2, 2, 1, A, 2, B, 2, 0, C, 2), -5);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, NULL, 2, B, 2, 0, C, 2), -9);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 3, 2, 2, 1, A, 2, B, 2, 0, C, 3), -10);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 3, 1, A, 2, B, 2, 0, C, 2), -12);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, NULL, 2), -14);
    CHECK_EQ_INT(tcnla_sgemm(h, M, N, N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 1), -15);
    CHECK_EQ_INT(tcnla_shgemm(h, TCNLA_GEMM_TCEC_FP16, N, N, 2, 2, 2, 1, A, 2, (uint16_t *)B, 2, 0,
                              C, 2),
                 -2);
    CHECK_EQ_INT(tcnla_sgemm(h, (tcnla_gemm_method_t)TCNLA_GEMM_METHOD_COUNT, N, N, 2, 2, 2, 1, A,
                             2, B, 2, 0, C, 2),
                 -2);
    tcnla_free(h, A), tcnla_free(h, B), tcnla_free(h, C);
    tcnla_destroy(h);
}

/* ------------------------------------------------------------ accuracy */
TEST(gpu_accuracy_ratios_uniform_k8192) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 256, n = 256, k = 8192;
    float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
    float *Bh = malloc(sizeof(float) * k * n), *C = malloc(sizeof(float) * m * n);
    uint16_t *B16 = malloc(sizeof(uint16_t) * k * n);
    double *R = malloc(sizeof(double) * m * n), *Rh = malloc(sizeof(double) * m * n);
    gt_uniform(21, -1, 1, m * k, A);
    gt_uniform(22, -1, 1, k * n, B);
    for (int64_t i = 0; i < k * n; i++) {
        B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
        Bh[i] = tcnla_f16_to_f32(B16[i]);
    }
    gt_ref(TCNLA_OP_N, TCNLA_OP_N, m, n, k, A, m, B, k, R);
    gt_ref(TCNLA_OP_N, TCNLA_OP_N, m, n, k, A, m, Bh, k, Rh);
    double err[TCNLA_GEMM_METHOD_COUNT] = {0};
    for (int mi = 0; mi < NMETHODS; mi++) {
        tcnla_gemm_method_t meth = all_methods[mi];
        if (is_sh(meth)) continue;
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0, C, m) == 0);
        err[meth] = gt_rel_err(C, m, R, m, n);
    }
    double e32 = err[TCNLA_GEMM_NATIVE_FP32];
    printf("    rel err (k=%lld): sgemm %.3e tcec_fp16 %.3e (x%.2f) tcec_tf32 %.3e (x%.2f) "
           "markidis %.3e (x%.2f) tf32 %.2e fp16 %.2e fp64 %.2e\n",
           (long long)k, e32, err[TCNLA_GEMM_TCEC_FP16], err[TCNLA_GEMM_TCEC_FP16] / e32,
           err[TCNLA_GEMM_TCEC_TF32], err[TCNLA_GEMM_TCEC_TF32] / e32,
           err[TCNLA_GEMM_MARKIDIS_FP16], err[TCNLA_GEMM_MARKIDIS_FP16] / e32,
           err[TCNLA_GEMM_TF32], err[TCNLA_GEMM_FP16], err[TCNLA_GEMM_NATIVE_FP64]);
    CHECK(e32 > 0 && e32 < 1e-5);
    CHECK_MSG(err[TCNLA_GEMM_TCEC_FP16] <= 1.5 * e32, "tcec_fp16 %.3e vs sgemm %.3e",
              err[TCNLA_GEMM_TCEC_FP16], e32);
    CHECK_MSG(err[TCNLA_GEMM_TCEC_TF32] <= 1.5 * e32, "tcec_tf32 %.3e vs sgemm %.3e",
              err[TCNLA_GEMM_TCEC_TF32], e32);
    CHECK_MSG(err[TCNLA_GEMM_MARKIDIS_FP16] >= 3.0 * e32, "markidis %.3e vs sgemm %.3e",
              err[TCNLA_GEMM_MARKIDIS_FP16], e32);
    CHECK(err[TCNLA_GEMM_NATIVE_FP64] < 1e-7);
    CHECK(err[TCNLA_GEMM_TF32] > 1e-4 && err[TCNLA_GEMM_TF32] < 1e-3);
    CHECK(err[TCNLA_GEMM_FP16] > 1e-4 && err[TCNLA_GEMM_FP16] < 1e-3);
    /* SHGEMM against SGEMM on A * fp16(B) */
    CHECK(gt_gemm(g, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bh, NULL, k,
                  0, C, m) == 0);
    double eh32 = gt_rel_err(C, m, Rh, m, n);
    for (int t = 0; t < 2; t++) {
        tcnla_gemm_method_t meth = t ? TCNLA_GEMM_SHGEMM_TF32 : TCNLA_GEMM_SHGEMM_FP16;
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, NULL, B16, k, 0, C, m) == 0);
        double e = gt_rel_err(C, m, Rh, m, n);
        printf("    %s on A*fp16(B): %.3e, sgemm %.3e (x%.2f)\n", mname(meth), e, eh32, e / eh32);
        CHECK_MSG(e <= 1.5 * eh32, "%s %.3e vs sgemm %.3e", mname(meth), e, eh32);
        /* through tcnla_sgemm (B rounded inside) the same numbers */
        float *C2 = malloc(sizeof(float) * m * n);
        CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0, C2, m) == 0);
        CHECK(memcmp(C, C2, sizeof(float) * m * n) == 0);
        free(C2);
    }
    free(A), free(B), free(Bh), free(C), free(B16), free(R), free(Rh);
    tcnla_destroy(g);
}

/* Many blocks in both directions (grouped rasterisation with a partial
 * group), repeatability (no races), and the error of a larger product. */
TEST(gpu_larger_shapes_repeatable) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const int64_t m = 1100, n = 1300, k = 520;
    float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
    float *C = malloc(sizeof(float) * m * n), *C2 = malloc(sizeof(float) * m * n);
    double *R = malloc(sizeof(double) * m * n);
    gt_uniform(31, -1, 1, m * k, A);
    gt_uniform(32, -1, 1, k * n, B);
    gt_ref(TCNLA_OP_T, TCNLA_OP_N, m, n, k, A, k, B, k, R);
    CHECK(gt_gemm(g, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1, A, k, B, NULL, k,
                  0, C, m) == 0);
    double e32 = gt_rel_err(C, m, R, m, n);
    const tcnla_gemm_method_t ms[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_TCEC_TF32,
                                      TCNLA_GEMM_MARKIDIS_FP16};
    for (int i = 0; i < 3; i++) {
        CHECK(gt_gemm(g, ms[i], TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1, A, k, B, NULL, k, 0, C, m) == 0);
        CHECK(gt_gemm(g, ms[i], TCNLA_OP_T, TCNLA_OP_N, m, n, k, 1, A, k, B, NULL, k, 0, C2, m) == 0);
        CHECK_MSG(memcmp(C, C2, sizeof(float) * m * n) == 0, "%s not repeatable", mname(ms[i]));
        double e = gt_rel_err(C, m, R, m, n);
        printf("    %s m=%lld n=%lld k=%lld: %.3e (sgemm %.3e)\n", mname(ms[i]), (long long)m,
               (long long)n, (long long)k, e, e32);
        if (ms[i] != TCNLA_GEMM_MARKIDIS_FP16) CHECK(e <= 1.5 * e32);
        else CHECK(e < 1e-4);
    }
    free(A), free(B), free(C), free(C2), free(R);
    tcnla_destroy(g);
}

/* The library's own kernels only (no cuBLAS), tails, transposes and
 * split-K against the CPU backend: tests/gpu/device_run.sh also runs this
 * with CUDA_FORCE_PTX_JIT=1, which runs the compute_80 PTX (the sm_80
 * configuration: shallower pipeline, one split buffer) on a newer GPU. */
TEST(gpu_tc_kernels_vs_cpu) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 33, 130}, {130, 7, 33}, {129, 131, 257},
                                        {100, 70, 3000}};
    for (int mi = 0; mi < NTC; mi++)
        for (int si = 0; si < 5; si++)
            for (int t = 0; t < 4; t++)
                compare_backends(g, c, tc_methods[mi], (t & 1) ? TCNLA_OP_T : TCNLA_OP_N,
                                 (t & 2) ? TCNLA_OP_T : TCNLA_OP_N, shapes[si][0], shapes[si][1],
                                 shapes[si][2], t == 1 ? 3 : 0, 1.0f, t == 2 ? 0.0f : -0.5f,
                                 is_sh(tc_methods[mi]) && (t & 1), t == 3, 4000 + si * 4 + t);
    tcnla_destroy(c);
    tcnla_destroy(g);
}

#ifdef TCNLA_HAVE_CUDA
/* The operand a driver checks once (tn_trust, src/backend/cuda/gemm_cuda.c).
 * A (m x k, padded lda) holds ordinary values (trusted element by element),
 * or one tiny value (fails the element-wise test of the FP16 splits, passes
 * the per-row and per-column checks: trusted by layout), or one value FP16
 * cannot hold, or a NaN (not trusted), or a whole row of small values (that
 * row fails its FP16 check, the columns pass: trusted for column vectors
 * only). For each method, the products C1 = A B (A's rows as vectors),
 * C2 = X A^T (rows), C3 = A(2:m, :) B (rows of a view) and C4 = A^T Y
 * (columns) give the same status, the same method that ran and the same
 * bits with the trust as without. */
static int run4(tn_call_t *call, tcnla_gemm_method_t meth, int64_t m, int64_t n, int64_t k,
                const float *dA, int64_t lda, const float *dB, const uint16_t *dB16,
                const float *dX, const float *dY, float *dC, int64_t blk, float *hC, int *st,
                tcnla_gemm_method_t *ran) {
    tcnla_handle_t g = call->h;
    const tcnla_op_t N = TCNLA_OP_N, T = TCNLA_OP_T;
    for (int p = 0; p < 4; p++) {
        float *C = dC + (size_t)p * (size_t)blk;
        if (p == 1) st[p] = tn_sgemm(call, meth, N, T, n, m, k, 1.0f, dX, n, dA, NULL, lda, 0.0f, C, n);
        else if (p == 3)
            st[p] = tn_sgemm(call, meth, T, N, k, n, m, 1.0f, dA, lda, dY, NULL, m, 0.0f, C, k);
        else {
            const int64_t r = p == 0 ? m : m - 1;
            const float *Ap = p == 0 ? dA : dA + 1;
            st[p] = is_sh(meth) ? tn_sgemm(call, meth, N, N, r, n, k, 1.0f, Ap, lda, NULL, dB16, k,
                                               0.0f, C, r)
                                : tn_sgemm(call, meth, N, N, r, n, k, 1.0f, Ap, lda, dB, NULL, k,
                                              0.0f, C, r);
        }
        ran[p] = TCNLA_GEMM_DEFAULT;
        if (st[p] == TCNLA_SUCCESS) ran[p] = call->info.method;
    }
    return tcnla_memcpy(g, hC, dC, sizeof(float) * 4 * (size_t)blk, TCNLA_MEMCPY_HANDLE_TO_HOST);
}

/* The operand cases of the trust tests, planted in uniform(-1, 1) data A
 * (k columns, leading dimension lda): 0 none; 1 an element below FP16's
 * range that the split cannot hold (1e-30); 2 one above it (1e6); 3 a NaN;
 * 4 row 20 scaled by 1e-6. */
static void plant_trust_case(float *A, int64_t lda, int64_t k, int cs) {
    if (cs == 1) A[5 + 3 * lda] = 1e-30f;
    if (cs == 2) A[7 + 9 * lda] = 1e6f;
    if (cs == 3) A[11 + 2 * lda] = NAN;
    if (cs == 4)
        for (int64_t j = 0; j < k; j++) A[20 + j * lda] *= 1e-6f;
}

TEST(gpu_trusted_operand_same_decisions) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    GT_TUNE(g, exact_scaling, 0); /* (the range errors are the checks' verdicts) */
    tn_call_t cl;
    tn_call_init(&cl, g);
    const int64_t m = 192, n = 40, k = 260, lda = 200, blk = m * m;
    const tcnla_gemm_method_t ms[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_TCEC_TF32,
                                      TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TF32};
    float *A = malloc(sizeof(float) * (size_t)(lda * k)), *B = malloc(sizeof(float) * (size_t)(k * n));
    float *X = malloc(sizeof(float) * (size_t)(n * k)), *Y = malloc(sizeof(float) * (size_t)(m * n));
    uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)(k * n));
    const size_t cn = 4 * (size_t)blk;
    float *C0 = malloc(sizeof(float) * cn), *C1 = malloc(sizeof(float) * cn);
    gt_uniform(71, -1.0f, 1.0f, k * n, B);
    gt_uniform(72, -1.0f, 1.0f, n * k, X);
    gt_uniform(73, -1.0f, 1.0f, m * n, Y);
    for (int64_t i = 0; i < k * n; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
    float *dA = NULL, *dB = NULL, *dX = NULL, *dY = NULL, *dC = NULL;
    uint16_t *dB16 = NULL;
    CHECK(tcnla_malloc(g, (void **)&dA, sizeof(float) * (size_t)(lda * k)) == 0);
    CHECK(tcnla_malloc(g, (void **)&dB, sizeof(float) * (size_t)(k * n)) == 0);
    CHECK(tcnla_malloc(g, (void **)&dX, sizeof(float) * (size_t)(n * k)) == 0);
    CHECK(tcnla_malloc(g, (void **)&dY, sizeof(float) * (size_t)(m * n)) == 0);
    CHECK(tcnla_malloc(g, (void **)&dB16, sizeof(uint16_t) * (size_t)(k * n)) == 0);
    CHECK(tcnla_malloc(g, (void **)&dC, sizeof(float) * cn) == 0);
    tcnla_memcpy(g, dB, B, sizeof(float) * (size_t)(k * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
    tcnla_memcpy(g, dX, X, sizeof(float) * (size_t)(n * k), TCNLA_MEMCPY_HOST_TO_HANDLE);
    tcnla_memcpy(g, dY, Y, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
    tcnla_memcpy(g, dB16, B16, sizeof(uint16_t) * (size_t)(k * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
    for (int cs = 0; cs < 5; cs++) {
        gt_uniform(70, -1.0f, 1.0f, lda * k, A);
        plant_trust_case(A, lda, k, cs);
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)(lda * k), TCNLA_MEMCPY_HOST_TO_HANDLE);
        for (int i = 0; i < 4; i++) {
            const tcnla_gemm_method_t me = ms[i];
            int st0[4], st1[4];
            tcnla_gemm_method_t r0[4], r1[4];
            memset(C0, 0, sizeof(float) * cn);
            tcnla_memcpy(g, dC, C0, sizeof(float) * cn, TCNLA_MEMCPY_HOST_TO_HANDLE);
            CHECK(run4(&cl, me, m, n, k, dA, lda, dB, dB16, dX, dY, dC, blk, C0, st0, r0) == 0);
            CHECK(tn_trust(&cl, dA, lda, m, k, &me, 1) == 0);
            const int any = (cl.trust.mask >> (int)me) & 1;
            const int rows = (cl.trust.mask_rows >> (int)me) & 1;
            const int cols = (cl.trust.mask_cols >> (int)me) & 1;
            memset(C1, 0, sizeof(float) * cn);
            tcnla_memcpy(g, dC, C1, sizeof(float) * cn, TCNLA_MEMCPY_HOST_TO_HANDLE);
            CHECK(run4(&cl, me, m, n, k, dA, lda, dB, dB16, dX, dY, dC, blk, C1, st1, r1) == 0);
            tn_untrust(&cl);
            CHECK(cl.trust.mask == 0 && cl.trust.mask_rows == 0 &&
                  cl.trust.mask_cols == 0);
            const int f16 = me != TCNLA_GEMM_TCEC_TF32 && me != TCNLA_GEMM_TF32;
            /* (case 0: every layout, or, where the bounded pass does not
             * judge A's smallest elements, its rows and columns) */
            if (cs == 0 || (!f16 && cs != 3)) CHECK(any || (f16 && cs == 0 && rows && cols));
            if (cs == 3 || f16) CHECK(!any || cs == 0);
            if (f16 && cs == 1) CHECK(rows && cols);
            if (f16 && cs == 2) CHECK(!rows && !cols);
            if (f16 && cs == 4) CHECK(!rows && cols);
            for (int p = 0; p < 4; p++) {
                CHECK(st0[p] == st1[p]);
                CHECK(r0[p] == r1[p]);
            }
            CHECK(memcmp(C0, C1, sizeof(float) * cn) == 0);
            if (cs == 1) CHECK(st0[0] == 0 && r0[0] == me); /* the per-row check passes */
            if (cs == 3) CHECK(st0[0] == 0 && r0[0] == TCNLA_GEMM_NATIVE_FP32);
            if (f16 && cs == 4) CHECK(st0[0] == TCNLA_ERR_RANGE && st0[3] == 0 && r0[3] == me);
            printf("    case %d %-12s trusted any %d rows %d cols %d, statuses %d %d %d %d\n", cs,
                   mname(me), any, rows, cols, st0[0], st0[1], st0[2], st0[3]);
        }
    }
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dX), tcnla_free(g, dY);
    tcnla_free(g, dB16), tcnla_free(g, dC);
    free(A), free(B), free(X), free(Y), free(B16), free(C0), free(C1);
    tcnla_destroy(g);
}

/* tn_cu_trust_check (tn_trust's one pass: element-wise flags, and the
 * per-vector check on rows and columns for every FP16 kind) against the
 * element-wise test computed here in FP64 and the per-product check
 * tn_cu_check_f32 run on both layouts. Data: uniform(-1, 1) with a fifth
 * of the elements times 1e-6 (below FP16's normal range, as in RSVD's test
 * matrix), one row and one column wholly times 1e-6 (those vectors fail
 * the F16 kind), and per trial a value FP16 cannot hold, a NaN, or nothing
 * more; and the row and column alone (the kernel's fast path for warps
 * whose elements all lie in FP16's normal range); shapes with rows not a multiple of 4, odd leading dimensions
 * (one element at a time), several row strips and column chunks. */
static int f16_elem_fails(float x, int kind, int tol) {
    if (!isfinite(x)) return 1;
    const double ax = fabs((double)x);
    if (ax != 0.0 && ax < 0x1p-100) return 1;
    const float h = tcnla_f16_to_f32(tcnla_f32_to_f16(x, TCNLA_ROUND_RN));
    if (!isfinite(h)) return 1;
    double e;
    if (kind == TN_RCHK_F16) {
        e = fabs((double)h - (double)x);
    } else {
        const float d = x - h; /* exact */
        const double l = kind == TN_RCHK_HALFHALF
                             ? ldexp(tcnla_f16_to_f32(tcnla_f32_to_f16(d * 2048.0f, TCNLA_ROUND_RN)), -11)
                             : tcnla_f16_to_f32(tcnla_f32_to_f16(d, TCNLA_ROUND_RN));
        e = fabs(l - (double)d);
    }
    return !(e <= ldexp(ax, -tol));
}

/* The check kinds of the methods ms (n <= 4) as tn_cuda_trust forms them. */
static void kinds_of(const tcnla_gemm_method_t *ms, int n, tn_elem_kinds_t *kk, int *tol) {
    memset(kk, 0, sizeof *kk);
    for (int j = 0; j < 4; j++) tol[j] = 0;
    for (int j = 0; j < n; j++) {
        const tn_method_info *mi = tn_method(ms[j]);
        kk->kind[j] = mi->uses_split ? (int)mi->split : TN_RCHK_F16;
        tol[j] = mi->tol_bits, kk->scale[j] = ldexp(1.0, -tol[j]);
        kk->fast[j] = tn_rchk_fast(kk->kind[j], tol[j]);
    }
    kk->n = n;
}

TEST(gpu_trust_check_one_pass_same_flags) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const tcnla_gemm_method_t ms[3] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_FP16,
                                       TCNLA_GEMM_MARKIDIS_FP16};
    tn_elem_kinds_t kk;
    int tol[4];
    kinds_of(ms, 3, &kk, tol);
    const int64_t shapes[4][4] = {/* rows, cols, ld, offset (elements) */
                                  {2053, 301, 2056, 0},
                                  {1500, 700, 1501, 1},
                                  {64, 3000, 64, 0},
                                  {3000, 40, 3001, 3}};
    struct tn_cuda_ctx *c = g->cuda;
    for (int sh = 0; sh < 4; sh++) {
        const int64_t rows = shapes[sh][0], cols = shapes[sh][1], ld = shapes[sh][2],
                      off = shapes[sh][3], len = off + ld * cols;
        float *X = malloc(sizeof(float) * (size_t)len), *dX = NULL;
        void *scr = NULL;
        int *dfl = NULL, hf[64], ho[64];
        const size_t sb = tn_cu_trust_check_scratch(rows, cols) + tn_cu_check_scratch(rows + cols);
        CHECK(tcnla_malloc(g, (void **)&dX, sizeof(float) * (size_t)len) == 0);
        CHECK(tcnla_malloc(g, &scr, sb) == 0);
        CHECK(tcnla_malloc(g, (void **)&dfl, 2 * 64 * sizeof(int)) == 0);
        for (int trial = 0; trial < 4; trial++) {
            gt_uniform(90 + sh, -1.0f, 1.0f, len, X);
            if (trial < 3) /* (trial 3: only the small row and column) */
                for (int64_t i = 0; i < len; i += 5) X[i] *= 1e-6f;
            for (int64_t j = 0; j < cols; j++) X[off + 7 + j * ld] *= 1e-6f;  /* row 7 */
            for (int64_t i = 0; i < rows; i++) X[off + i + 3 * ld] *= 1e-6f;  /* column 3 */
            if (trial == 1) X[off + rows - 1 + (cols - 1) * ld] = 7e4f;
            if (trial == 2) X[off + rows / 2 + (cols / 2) * ld] = NAN;
            /* the element-wise flags, here */
            int ew[4] = {0, 0, 0, 0};
            for (int64_t j = 0; j < cols; j++)
                for (int64_t i = 0; i < rows; i++) {
                    const float x = X[off + i + j * ld];
                    if (!isfinite(x)) ew[0] = 1;
                    for (int q = 0; q < 3; q++)
                        if (isfinite(x) && f16_elem_fails(x, kk.kind[q], tol[q])) ew[1 + q] = 1;
                }
            tcnla_memcpy(g, dX, X, sizeof(float) * (size_t)len, TCNLA_MEMCPY_HOST_TO_HANDLE);
            CHECK(cudaMemsetAsync(dfl, 0, 2 * 64 * sizeof(int), c->stream) == cudaSuccess);
            CHECK(tn_cu_trust_check(dX + off, ld, rows, cols, &kk, tol, 0, dfl, scr,
                                    c->sm_count, c->stream) == 0);
            for (int q = 0; q < 3; q++)
                for (int lay = 0; lay < 2; lay++)
                    CHECK(tn_cu_check_f32(dX + off, ld, rows, cols, lay, kk.kind[q], tol[q],
                                          dfl + 64 + 8 + 6 * q + 3 * lay,
                                          (char *)scr + tn_cu_trust_check_scratch(rows, cols),
                                          c->stream) == 0);
            CHECK(cudaMemcpyAsync(hf, dfl, 64 * sizeof(int), cudaMemcpyDeviceToHost, c->stream) ==
                  cudaSuccess);
            CHECK(cudaMemcpyAsync(ho, dfl + 64, 64 * sizeof(int), cudaMemcpyDeviceToHost,
                                  c->stream) == cudaSuccess);
            CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
            int same = 1;
            for (int q = 0; q < 4; q++) same &= hf[q] == ew[q];
            for (int q = 0; q < 3; q++)
                for (int e = 1; e < 6; e++)
                    if (e != 3) same &= hf[8 + 6 * q + e] == ho[8 + 6 * q + e];
            CHECK(same);
            /* what the data makes of it: every kind fails element-wise (F16
             * at least, in trial 3); the small row fails F16's row check,
             * the small column its column check; the large value fails
             * every vector of the F16 kinds */
            CHECK(hf[2] && (trial == 3 || (hf[1] && hf[3])));
            if (trial == 0 || trial == 3) CHECK(hf[8 + 6 * 1 + 2] && hf[8 + 6 * 1 + 5] && !hf[0]);
            if (trial == 2) CHECK(hf[0] && hf[8 + 1] && hf[8 + 4]);
            printf("    %lld x %lld (ld %lld) trial %d: flags %d %d %d %d, rows/cols per kind"
                   " %d%d/%d%d %d%d/%d%d %d%d/%d%d %s\n",
                   (long long)rows, (long long)cols, (long long)ld, trial, hf[0], hf[1], hf[2],
                   hf[3], hf[9], hf[10], hf[12], hf[13], hf[15], hf[16], hf[18], hf[19], hf[21],
                   hf[22], hf[24], hf[25], same ? "same" : "DIFFER");
        }
        tcnla_free(g, dX), tcnla_free(g, scr), tcnla_free(g, dfl);
        free(X);
    }
    tcnla_destroy(g);
}

/* The bounded pass of tn_cu_trust_check (magnitudes only) against the
 * exact one, for the two fast kinds (TCEC_FP16's halfhalf, FP16): where it
 * decides (flags[6], flags[7] clear), NaN / Inf as the exact pass, every
 * vector passing there, and each kind's element flag exactly "some 0 <
 * |x| < 2^-15" (2^tol E for both), which the exact flag implies. Cases:
 * uniform data (0), every fifth element scaled by 1e-6 (1: decided,
 * element flags set), a row scaled by 1e-6 (2: undecided, flags[7]), 7e4
 * (3: flags[6]), a NaN (4), everything below 2^-15 (5: undecided). */
TEST(gpu_trust_bounded_pass_agrees) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const tcnla_gemm_method_t ms[2] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_FP16};
    tn_elem_kinds_t kk;
    int tol[4];
    kinds_of(ms, 2, &kk, tol);
    CHECK(kk.fast[0] && kk.fast[1]);
    const int64_t shapes[2][4] = {{2053, 301, 2056, 0}, {1500, 700, 1501, 1}};
    struct tn_cuda_ctx *c = g->cuda;
    for (int sh = 0; sh < 2; sh++) {
        const int64_t rows = shapes[sh][0], cols = shapes[sh][1], ld = shapes[sh][2],
                      off = shapes[sh][3], len = off + ld * cols;
        float *X = malloc(sizeof(float) * (size_t)len), *dX = NULL;
        void *scr = NULL;
        int *dfl = NULL, hb[64], he[64];
        CHECK(tcnla_malloc(g, (void **)&dX, sizeof(float) * (size_t)len) == 0);
        CHECK(tcnla_malloc(g, &scr, tn_cu_trust_check_scratch(rows, cols)) == 0);
        CHECK(tcnla_malloc(g, (void **)&dfl, 2 * 64 * sizeof(int)) == 0);
        for (int cs = 0; cs < 6; cs++) {
            gt_uniform(110 + sh, -1.0f, 1.0f, len, X);
            if (cs == 1)
                for (int64_t i = 0; i < len; i += 5) X[i] *= 1e-6f;
            if (cs == 2)
                for (int64_t j = 0; j < cols; j++) X[off + 7 + j * ld] *= 1e-6f;
            if (cs == 3) X[off + rows - 1 + (cols - 1) * ld] = 7e4f;
            if (cs == 4) X[off + rows / 2 + (cols / 2) * ld] = NAN;
            if (cs == 5)
                for (int64_t i = 0; i < len; i++) X[i] *= 0x1p-15f;
            int sub = 0;
            for (int64_t j = 0; j < cols; j++)
                for (int64_t i = 0; i < rows; i++) {
                    const float a = fabsf(X[off + i + j * ld]);
                    sub |= a > 0.0f && a < 0x1p-15f;
                }
            tcnla_memcpy(g, dX, X, sizeof(float) * (size_t)len, TCNLA_MEMCPY_HOST_TO_HANDLE);
            CHECK(cudaMemsetAsync(dfl, 0, 2 * 64 * sizeof(int), c->stream) == cudaSuccess);
            CHECK(tn_cu_trust_check(dX + off, ld, rows, cols, &kk, tol, 1, dfl, scr,
                                    c->sm_count, c->stream) == 0);
            CHECK(tn_cu_trust_check(dX + off, ld, rows, cols, &kk, tol, 0, dfl + 64, scr,
                                    c->sm_count, c->stream) == 0);
            CHECK(cudaMemcpyAsync(hb, dfl, 64 * sizeof(int), cudaMemcpyDeviceToHost, c->stream) ==
                  cudaSuccess);
            CHECK(cudaMemcpyAsync(he, dfl + 64, 64 * sizeof(int), cudaMemcpyDeviceToHost,
                                  c->stream) == cudaSuccess);
            CHECK(cudaStreamSynchronize(c->stream) == cudaSuccess);
            const int decided = !hb[6] && !hb[7];
            CHECK(hb[0] == he[0]);
            if (decided && !hb[0])
                for (int q = 0; q < 2; q++) {
                    CHECK(hb[1 + q] == sub && (!he[1 + q] || hb[1 + q]));
                    for (int e = 1; e < 6; e++)
                        if (e != 3) CHECK(he[8 + 6 * q + e] == 0);
                }
            if (cs <= 1) CHECK(decided && !hb[0] && hb[1] == sub);
            if (cs == 1) CHECK(sub && he[2]);
            if (cs == 2 || cs == 5) CHECK(hb[7] && !hb[6]);
            if (cs == 3) CHECK(hb[6]);
            if (cs == 4) CHECK(hb[0]);
            printf("    %lld x %lld case %d: bounded %d %d %d | %d %d, exact %d %d %d\n",
                   (long long)rows, (long long)cols, cs, hb[0], hb[1], hb[2], hb[6], hb[7], he[0],
                   he[1], he[2]);
        }
        tcnla_free(g, dX), tcnla_free(g, scr), tcnla_free(g, dfl);
        free(X);
    }
    tcnla_destroy(g);
}

/* tn_gemm_trusting (A's check folded into a first product) against
 * tn_trust followed by the ordinary product: the same product bit for bit
 * where it is taken, and the trust record of tn_trust's pass that the
 * kernel folds. Cases: an element below FP16's range that the methods
 * cannot hold (1), one above it (2), a NaN (3), a row of the stored A
 * scaled by 1e-6 (4: a row or column whose largest |x| is below the
 * bounded pass's bound), elements in FP16's subnormal range that the
 * methods hold within tolerance (5). Two products:
 *  - SHGEMM_FP16 (RP-HOSVD's mode-1 projection, Hopper's n64 kernel, the
 *    exact element-wise check): n = 64 and 40, m and k tails, split-K.
 *    The record of the exact pass (trust_bounded = 0; the bounded
 *    pass's trusts no more than that); not taken (nothing trusted)
 *    exactly where that pass does not trust A element by element for both
 *    methods: taken in cases 0 and 5 (the kernel's slow path);
 *  - SHGEMM_FP16 above 64 columns (the randomized SVD's projection,
 *    Hopper's wide-tile kernel, forced to run at these sizes by the
 *    tuning's sm90_wide = 1; the bounded pass): n = 266 and 274 (272- and
 *    288-column tiles). The bounded pass's record; taken where that pass
 *    decides: cases 0, 5 and 1;
 *  - FP16 with FP32 B (the randomized SVD's projection, Hopper's kernel
 *    with A rounded inside, forced to run at these sizes by the tuning's
 *    sm90_f16 = 1; the bounded pass): n = 266 (two consumer halves)
 *    and 40, op(A) = A and A^T. The bounded pass's record (tn_trust's
 *    default); taken where that pass decides: cases 0, 5 and 1 (there
 *    with rows and columns trusted, not elements). */
TEST(gpu_gemm_trusting_same_product_and_record) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tn_call_t cl;
    tn_call_init(&cl, g);
    const int64_t m = 300, k = 1000;
    const struct {
        tcnla_gemm_method_t me;
        tcnla_op_t ta;
        int64_t n;
    } cf[] = {{TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, 64},  {TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, 40},
              {TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, 266}, {TCNLA_GEMM_SHGEMM_FP16, TCNLA_OP_N, 274},
              {TCNLA_GEMM_FP16, TCNLA_OP_N, 266},        {TCNLA_GEMM_FP16, TCNLA_OP_N, 40},
              {TCNLA_GEMM_FP16, TCNLA_OP_T, 266}};
    const int hopper = g->cuda->cc_major == 9 && g->cuda->cc_minor == 0;
    float *A = malloc(sizeof(float) * (size_t)(m * k));
    float *C0 = malloc(sizeof(float) * (size_t)(m * 274));
    float *C1 = malloc(sizeof(float) * (size_t)(m * 274));
    float *dA = NULL, *dC = NULL, *dBf = NULL;
    uint16_t *dB = NULL;
    REQUIRE(tcnla_malloc(g, (void **)&dA, sizeof(float) * (size_t)(m * k)) == 0);
    REQUIRE(tcnla_malloc(g, (void **)&dB, sizeof(uint16_t) * (size_t)(k * 274)) == 0);
    REQUIRE(tcnla_malloc(g, (void **)&dBf, sizeof(float) * (size_t)(k * 266)) == 0);
    REQUIRE(tcnla_malloc(g, (void **)&dC, sizeof(float) * (size_t)(m * 274)) == 0);
    int late_taken[2] = {0, 0}; /* products queued with their verdict read later: failed, held */
    for (int cs = 0; cs < 6; cs++) {
        for (int t = 0; t < (int)(sizeof cf / sizeof cf[0]); t++) {
            const tcnla_gemm_method_t me = cf[t].me;
            const int sh = me == TCNLA_GEMM_SHGEMM_FP16;
            const tcnla_op_t ta = cf[t].ta;
            const int shw = sh && cf[t].n > 64; /* the wide-tile kernel, the bounded pass */
            const int64_t n = cf[t].n, arows = ta == TCNLA_OP_N ? m : k, acols = m * k / arows;
            const tcnla_gemm_method_t ms[2] = {me, TCNLA_GEMM_TCEC_FP16};
            const int nms = sh ? 2 : 1;
            const unsigned want = (1u << me) | (sh ? 1u << TCNLA_GEMM_TCEC_FP16 : 0u);
            gt_uniform(90, -1.0f, 1.0f, m * k, A);
            plant_trust_case(A, arows, acols, cs); /* cases 0-4 */
            if (cs == 5 && sh) A[1] = 0x1p-20f, A[2 + 7 * arows] = -3 * 0x1p-22f;
            if (cs == 5 && sh) A[arows - 1 + (acols - 1) * arows] = 0x1p-24f;
            /* FP16 alone: subnormal, within 2^-10 |x| of its FP16 value */
            if (cs == 5 && !sh) A[1] = 0x1.8p-15f + 0x1p-30f, A[2 + 7 * arows] = -0x1p-15f;
            tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)(m * k), TCNLA_MEMCPY_HOST_TO_HANDLE);
            const int sf = sh ? tcnla_random_fill_f16(g, TCNLA_RAND_GAUSSIAN, 5, (uint64_t)t, k,
                                                      n, dB, k)
                              : tcnla_random_fill(g, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 5,
                                                  (uint64_t)t, k, n, dBf, k);
            CHECK(sf == 0);
            if (!sh) GT_TUNE(g, sm90_f16, 1);
            if (shw) GT_TUNE(g, sm90_wide, 1);
            /* r0: the exact pass's record; rb: the bounded pass's (the
             * default), which trusts no more than r0 */
            if (sh) tn_trust_f16(&cl, dB, (size_t)(k * n));
            CHECK(tn_trust(&cl, dA, arows, arows, acols, ms, nms) == 0);
            const tn_trust_t rb = cl.trust;
            tn_untrust(&cl);
            GT_TUNE(g, trust_bounded, 0);
            CHECK(tn_trust(&cl, dA, arows, arows, acols, ms, nms) == 0);
            GT_TUNE(g, trust_bounded, 1);
            const tn_trust_t r0 = cl.trust;
            tn_untrust(&cl);
            CHECK((rb.mask & ~r0.mask) == 0 && (rb.mask_rows & ~(r0.mask | r0.mask_rows)) == 0 &&
                  (rb.mask_cols & ~(r0.mask | r0.mask_cols)) == 0);
            if (sh) tn_trust_f16(&cl, dB, (size_t)(k * n));
            /* (TCNLA_ERR_RANGE where a row fails its check: cases 2 and 4) */
            const int st0 = sh ? tn_sgemm(&cl, me, ta, TCNLA_OP_N, m, n, k, 1.0f, dA, arows, NULL, dB,
                                              k, 0.0f, dC, m)
                               : tn_sgemm(&cl, me, ta, TCNLA_OP_N, m, n, k, 1.0f, dA, arows, dBf, NULL,
                                             k, 0.0f, dC, m);
            CHECK(st0 == 0 || st0 == TCNLA_ERR_RANGE);
            const tcnla_gemm_method_t ran0 = cl.info.method;
            tcnla_memcpy(g, C0, dC, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HANDLE_TO_HOST);
            int done = -1;
            memset(C1, 0, sizeof(float) * (size_t)(m * n));
            tcnla_memcpy(g, dC, C1, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
            CHECK(tn_gemm_trusting(&cl, me, ta, m, n, k, dA, arows, sh ? NULL : dBf, sh ? dB : NULL,
                                   k, dC, m, ms, nms, &done) == 0);
            GT_TUNE(g, sm90_f16, TCNLA_TUNING_AUTO);
            GT_TUNE(g, sm90_wide, TCNLA_TUNING_AUTO);
            const tn_trust_t r1 = cl.trust;
            const tcnla_gemm_method_t ran1 = cl.info.method;
            tcnla_memcpy(g, C1, dC, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HANDLE_TO_HOST);
            tn_untrust(&cl);
            /* the verdict read later (late_trust.allow, deferred verdicts):
             * queued (done 2), then tn_trust_settle's verdict, record and
             * product those of the call that waited */
            if (sh) tn_trust_f16(&cl, dB, (size_t)(k * n));
            if (!sh) GT_TUNE(g, sm90_f16, 1);
            if (shw) GT_TUNE(g, sm90_wide, 1);
            tcnla_memcpy(g, dC, C0, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
            int late = -1, settled = -1, fl[TN_DEFER_SLOTS];
            cl.late_trust.allow = 1;
            REQUIRE(tn_defer_begin(&cl) == 0);
            CHECK(tn_gemm_trusting(&cl, me, ta, m, n, k, dA, arows, sh ? NULL : dBf,
                                   sh ? dB : NULL, k, dC, m, ms, nms, &late) == 0);
            const tn_trust_t rq = cl.trust; /* (nothing trusted while the verdict is out) */
            CHECK(tn_trust_settle(&cl, &settled) == 0);
            CHECK(tn_defer_end(&cl, fl) == 0);
            cl.late_trust.allow = 0;
            GT_TUNE(g, sm90_f16, TCNLA_TUNING_AUTO);
            GT_TUNE(g, sm90_wide, TCNLA_TUNING_AUTO);
            CHECK(late == 2 || (late == 0 && done == 0)); /* (0: not queued) */
            if (late == 2) late_taken[done]++;
            CHECK(rq.mask == 0 && rq.mask_rows == 0 && rq.mask_cols == 0);
            CHECK(settled == (late == 2 ? done : 1) && !cl.late_trust.pending);
            if (late == 2) {
                CHECK(cl.trust.mask == r1.mask && cl.trust.mask_rows == r1.mask_rows &&
                      cl.trust.mask_cols == r1.mask_cols && cl.trust.base == r1.base);
                float *C2 = malloc(sizeof(float) * (size_t)(m * n));
                tcnla_memcpy(g, C2, dC, sizeof(float) * (size_t)(m * n),
                             TCNLA_MEMCPY_HANDLE_TO_HOST);
                if (done) CHECK(memcmp(C1, C2, sizeof(float) * (size_t)(m * n)) == 0);
                free(C2);
            }
            tn_untrust(&cl);
            const int elementwise = (r0.mask & want) == want;
            const tn_trust_t rw = sh && !shw ? r0 : rb; /* the record the fold gives */
            CHECK(done == 0 || done == 1);
            if (hopper) CHECK(done == (sh && !shw ? elementwise : cs == 0 || cs == 1 || cs == 5));
            else CHECK(done == 0);
            if (hopper && !sh && cs == 1)
                CHECK(rb.mask == 0 && rb.mask_rows == want && rb.mask_cols == want);
            if (done) {
                CHECK(r1.mask == rw.mask && r1.mask_rows == rw.mask_rows &&
                      r1.mask_cols == rw.mask_cols && r1.base == rw.base && r1.ld == rw.ld &&
                      r1.rows == rw.rows && r1.cols == rw.cols);
                CHECK(st0 == 0 && ran0 == me && ran1 == me);
                CHECK(memcmp(C0, C1, sizeof(float) * (size_t)(m * n)) == 0);
            } else {
                CHECK(r1.mask == 0 && r1.mask_rows == 0 && r1.mask_cols == 0);
            }
            printf("    case %d %s op %c n %3d: taken %d (tn_trust element-wise %d, rows %d, "
                   "cols %d)\n",
                   cs, sh ? "shgemm_fp16" : "fp16", ta == TCNLA_OP_N ? 'N' : 'T', (int)n, done,
                   elementwise, (r0.mask_rows & want) == want, (r0.mask_cols & want) == want);
        }
    }
    printf("    verdict read later: %d products held, %d failed\n", late_taken[1], late_taken[0]);
    if (hopper) CHECK(late_taken[0] > 0 && late_taken[1] > 0);
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dBf), tcnla_free(g, dC);
    free(A), free(C0), free(C1);
    tcnla_destroy(g);
}

/* tn_trust_f16 (a driver's own FP16 random matrix): an FP16 B inside the
 * recorded range skips its NaN / Inf check. Seen through a NaN planted in
 * it (which a driver's fill never writes): inside the range SHGEMM_FP16
 * runs (the check would have sent the product to native FP32); a view
 * reaching one element past the range, or after tn_untrust, is checked and
 * runs native FP32; the strided-batch product likewise. */
TEST(gpu_trusted_f16_operand_skips_its_check) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tn_call_t cl;
    tn_call_init(&cl, g);
    const int64_t m = 96, n = 24, k = 80;
    float *A = malloc(sizeof(float) * (size_t)(m * k));
    uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)(k * n));
    gt_uniform(81, -1.0f, 1.0f, m * k, A);
    for (int64_t i = 0; i < k * n; i++) B16[i] = tcnla_f32_to_f16(0.25f, TCNLA_ROUND_RN);
    B16[3 + 5 * k] = 0x7e00; /* NaN */
    float *dA = NULL, *dC = NULL;
    uint16_t *dB = NULL;
    REQUIRE(tcnla_malloc(g, (void **)&dA, sizeof(float) * (size_t)(m * k)) == 0);
    REQUIRE(tcnla_malloc(g, (void **)&dB, sizeof(uint16_t) * (size_t)(k * n)) == 0);
    REQUIRE(tcnla_malloc(g, (void **)&dC, sizeof(float) * (size_t)(m * n)) == 0);
    tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)(m * k), TCNLA_MEMCPY_HOST_TO_HANDLE);
    tcnla_memcpy(g, dB, B16, sizeof(uint16_t) * (size_t)(k * n), TCNLA_MEMCPY_HOST_TO_HANDLE);
    const tcnla_gemm_method_t SH = TCNLA_GEMM_SHGEMM_FP16;
    for (int c = 0; c < 4; c++) {
        /* c 0: trusted; 1: the range one element short; 2: untrusted; 3: batched, trusted */
        if (c == 0 || c == 3) tn_trust_f16(&cl, dB, (size_t)(k * n));
        if (c == 1) tn_trust_f16(&cl, dB, (size_t)(k * n) - 1);
        int st;
        if (c < 3)
            st = tn_sgemm(&cl, SH, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, dA, m, NULL, dB, k, 0.0f,
                              dC, m);
        else /* two k-slabs of 40 rows of B, reduced: B's whole range */
            st = tn_sgemm_batched(&cl, SH, TCNLA_OP_N, TCNLA_OP_N, m, n, k / 2, 1.0f, dA, m,
                                  m * (k / 2), NULL, dB, k, k / 2, 0.0f, dC, m, 0, 2, 1);
        tn_untrust(&cl);
        CHECK_MSG(st == 0, "case %d: %s", c, tcnla_strerror(st));
        tcnla_gemm_method_t ran = TCNLA_GEMM_DEFAULT;
        ran = cl.info.method;
        CHECK_MSG(ran == ((c == 0 || c == 3) ? SH : TCNLA_GEMM_NATIVE_FP32), "case %d ran %s", c,
                  tcnla_gemm_method_name(ran));
    }
    CHECK(cl.f16_lo == 0 && cl.f16_hi == 0);
    tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dC);
    free(A), free(B16);
}
#endif
