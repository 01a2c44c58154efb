/* GPU tests of the Hopper (sm_90a) wgmma + TMA kernels of TCEC_FP16,
 * TCEC_TF32, SHGEMM_FP16 and SHGEMM_TF32 (src/backend/cuda/kernels/tc_gemm_sm90.cu):
 * against the CPU backend and against the mma.sync kernels
 * (the tuning's sm90 = 0) on tails, transposes, ld > rows, misaligned
 * pointers, alpha / beta and split-K; accuracy against an FP64 reference
 * at k = 8192 and beyond, which must be no worse than cuBLAS SGEMM's.
 * On a GPU that is not compute capability 9.0 the same calls run the
 * mma.sync kernels (and the comparisons still hold). */
#include "test.h"
#include "gpu/gpu_util.h"
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TCNLA_HAVE_CUDA
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "backend/cuda/kernels/tn_sm90.h"
#endif

static const tcnla_gemm_method_t s9_methods[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_SHGEMM_FP16,
                                                 TCNLA_GEMM_TCEC_TF32, TCNLA_GEMM_SHGEMM_TF32};
#define NS9 4

static int s9_is_sh(tcnla_gemm_method_t m) {
    return m == TCNLA_GEMM_SHGEMM_FP16 || m == TCNLA_GEMM_SHGEMM_TF32;
}
static void mma_path(tcnla_handle_t g, int on) { GT_TUNE(g, sm90, !on); }

TEST(gpu_sm90_available_on_hopper) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    const int modes[4] = {TN_KMODE_TCEC_F16, TN_KMODE_SHGEMM_F16, TN_KMODE_TCEC_TF32,
                          TN_KMODE_SHGEMM_TF32};
    printf("    cc %d.%d, sm90 kernels:", major, minor);
    for (int i = 0; i < 4; i++) {
        int a = tn_cu_sm90_available(modes[i]);
        printf(" %d (%zu B smem)", a, tn_cu_sm90_smem(modes[i]));
        if (major == 9 && minor == 0) CHECK(a == 1);
        else CHECK(a == 0);
    }
    printf("\n");
    CHECK(tn_cu_sm90_available(TN_KMODE_MARKIDIS_F16) == 0);
#endif
    tcnla_destroy(g);
}

/* One product on the GPU (default path = sm90 on Hopper), on the mma.sync
 * path and on the CPU backend; all three agree, C's padding stays. */
static void s9_compare(tcnla_handle_t g, tcnla_handle_t c, tcnla_gemm_method_t meth,
                       tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k, int64_t pad,
                       float alpha, float beta, int via16, int off, uint64_t seed, int with_cpu) {
    int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    int64_t brows = tb == TCNLA_OP_N ? k : n, bcols = tb == TCNLA_OP_N ? n : k;
    int64_t lda = arows + pad, ldb = brows + pad, ldc = m + pad;
    float *A = malloc(sizeof(float) * (size_t)(lda * acols + 1));
    float *B = malloc(sizeof(float) * (size_t)(ldb * bcols + 1));
    uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)(ldb * bcols + 1));
    size_t cn = (size_t)(ldc * n);
    float *C0 = malloc(sizeof(float) * cn), *Cg = malloc(sizeof(float) * cn),
          *Cm = malloc(sizeof(float) * cn), *Cc = malloc(sizeof(float) * cn);
    gt_uniform(seed, -1, 1, lda * acols, A);
    gt_uniform(seed + 1, -1, 1, ldb * bcols, B);
    gt_uniform(seed + 2, -1, 1, ldc * n, C0);
    for (int64_t i = 0; i < ldb * bcols; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
    memcpy(Cg, C0, sizeof(float) * cn);
    memcpy(Cm, C0, sizeof(float) * cn);
    memcpy(Cc, C0, sizeof(float) * cn);
    const uint16_t *Bh = via16 ? B16 : NULL;
    tcnla_info_t ig = {0};
    int s1 = gt_gemm_info(g, meth, ta, tb, m, n, k, alpha, A, lda, B, Bh, ldb, beta, Cg, ldc, off,
                          &ig);
    const tcnla_gemm_method_t ug = ig.method;
    mma_path(g, 1);
    int s2 = gt_gemm_off(g, meth, ta, tb, m, n, k, alpha, A, lda, B, Bh, ldb, beta, Cm, ldc, off);
    mma_path(g, 0);
    int s3 = with_cpu ? gt_gemm(c, meth, ta, tb, m, n, k, alpha, A, lda, B, Bh, ldb, beta, Cc, ldc)
                      : 0;
    CHECK_MSG(s1 == 0 && s2 == 0 && s3 == 0, "%s m=%lld n=%lld k=%lld: status %d %d %d",
              tcnla_gemm_method_name(meth), (long long)m, (long long)n, (long long)k, s1, s2, s3);
    CHECK_MSG(ug == meth, "%s ran as %s", tcnla_gemm_method_name(meth),
              tcnla_gemm_method_name(ug));
    double dm = gt_rel_diff(Cg, Cm, m, n, ldc);
    double dc = with_cpu ? gt_rel_diff(Cg, Cc, m, n, ldc) : 0.0;
    CHECK_MSG(dm <= 1e-5 && dc <= 2e-5,
              "%s ta=%d tb=%d m=%lld n=%lld k=%lld pad=%lld off=%d b16=%d: vs mma %.3e vs cpu %.3e",
              tcnla_gemm_method_name(meth), ta, tb, (long long)m, (long long)n, (long long)k,
              (long long)pad, off, via16, dm, dc);
    int pad_ok = 1;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = m; i < ldc; i++)
            if (memcmp(&Cg[i + j * ldc], &C0[i + j * ldc], 4)) pad_ok = 0;
    CHECK_MSG(pad_ok, "%s: C padding written", tcnla_gemm_method_name(meth));
    free(A), free(B), free(B16), free(C0), free(Cg), free(Cm), free(Cc);
}

TEST(gpu_sm90_tails_transposes_alpha_beta) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    tcnla_handle_t c = gt_cpu();
    static const int64_t shapes[][3] = {{1, 1, 1},     {7, 33, 130},  {130, 7, 33},
                                        {33, 130, 7},  {129, 131, 257}, {128, 128, 32},
                                        {256, 8, 40},  {100, 70, 3000}, {300, 260, 96}};
    const int ns = (int)(sizeof shapes / sizeof shapes[0]);
    for (int mi = 0; mi < NS9; mi++)
        for (int si = 0; si < ns; si++)
            for (int t = 0; t < 4; t++) {
                tcnla_op_t ta = (t & 1) ? TCNLA_OP_T : TCNLA_OP_N;
                tcnla_op_t tb = (t & 2) ? TCNLA_OP_T : TCNLA_OP_N;
                int64_t pad = (si + t) % 3 == 0 ? 0 : (si + t) % 3 == 1 ? 3 : 4;
                float beta = t == 1 ? 0.0f : (t == 2 ? -0.5f : 1.5f);
                s9_compare(g, c, s9_methods[mi], ta, tb, shapes[si][0], shapes[si][1],
                           shapes[si][2], pad, 0.75f, beta, s9_is_sh(s9_methods[mi]) && (t & 1),
                           (si == 4 && t == 3) ? 1 : 0, 5000 + si * 4 + t, 1);
            }
    tcnla_destroy(c);
    tcnla_destroy(g);
}

/* Larger shapes against the mma.sync path only (the CPU model is slow):
 * many tiles, partial raster groups, split-K with long k, repeatability. */
TEST(gpu_sm90_larger_vs_mma_repeatable) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    static const int64_t shapes[][3] = {{1100, 1300, 520}, {256, 256, 8192}, {640, 384, 4100}};
    for (int mi = 0; mi < NS9; mi++)
        for (int si = 0; si < 3; si++)
            s9_compare(g, NULL, s9_methods[mi], si == 1 ? TCNLA_OP_N : TCNLA_OP_T, TCNLA_OP_N,
                       shapes[si][0], shapes[si][1], shapes[si][2], 0, 1.0f, 0.0f,
                       s9_is_sh(s9_methods[mi]) && si == 2, 0, 6000 + si, 0);
    /* bit-for-bit repeatable */
    const int64_t m = 1100, n = 1300, k = 520;
    float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
    float *C = malloc(sizeof(float) * m * n), *C2 = malloc(sizeof(float) * m * n);
    gt_uniform(61, -1, 1, m * k, A);
    gt_uniform(62, -1, 1, k * n, B);
    for (int mi = 0; mi < NS9; mi++) {
        CHECK(gt_gemm(g, s9_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0, C,
                      m) == 0);
        CHECK(gt_gemm(g, s9_methods[mi], TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL, k, 0,
                      C2, m) == 0);
        CHECK_MSG(memcmp(C, C2, sizeof(float) * m * n) == 0, "%s not repeatable",
                  tcnla_gemm_method_name(s9_methods[mi]));
    }
    free(A), free(B), free(C), free(C2);
    tcnla_destroy(g);
}

/* One path forced on (the tuning's sm90_presplit = 1, or sm90_wide = 1
 * with wide) against the in-kernel split (the same field 0): the same
 * products in the same order, bit-identical results, on tails,
 * transposes, alpha / beta, ld > rows and split-K. */
static void s9_set_path(tcnla_handle_t g, int wide, int v) {
    if (wide) GT_TUNE(g, sm90_wide, v);
    else GT_TUNE(g, sm90_presplit, v);
}
static void s9_path_identity(const tcnla_gemm_method_t *ms, int nm, int wide,
                             const int64_t (*shapes)[3], int ns) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    const char *what = wide ? "sm90_wide" : "sm90_presplit";
    /* the pre-split path (the default from m, n >= 1024) is compared on its
     * own (gpu_sm90_presplit_matches_rega), and the wide-tile path (the
     * default at some shapes) only on its own: elsewhere both runs take the
     * in-kernel split */
    GT_TUNE(g, sm90_presplit, 0);
    GT_TUNE(g, sm90_wide, 0);
    for (int mi = 0; mi < nm; mi++)
        for (int si = 0; si < ns; si++)
            for (int t = 0; t < 4; t++) {
                tcnla_op_t ta = (t & 1) ? TCNLA_OP_T : TCNLA_OP_N;
                tcnla_op_t tb = (t & 2) ? TCNLA_OP_T : TCNLA_OP_N;
                int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2], pad = t == 2 ? 3 : 0;
                int64_t lda = (ta == TCNLA_OP_N ? m : k) + pad, ldb = (tb == TCNLA_OP_N ? k : n) + pad;
                int64_t ldc = m + pad;
                float *A = malloc(sizeof(float) * (size_t)(lda * (ta == TCNLA_OP_N ? k : m)));
                float *B = malloc(sizeof(float) * (size_t)(ldb * (tb == TCNLA_OP_N ? n : k)));
                float *C1 = malloc(sizeof(float) * (size_t)(ldc * n));
                float *C2 = malloc(sizeof(float) * (size_t)(ldc * n));
                gt_uniform(7000 + si * 4 + t, -1, 1, lda * (ta == TCNLA_OP_N ? k : m), A);
                gt_uniform(7100 + si * 4 + t, -1, 1, ldb * (tb == TCNLA_OP_N ? n : k), B);
                gt_uniform(7200 + si * 4 + t, -1, 1, ldc * n, C1);
                memcpy(C2, C1, sizeof(float) * (size_t)(ldc * n));
                const float beta = t == 1 ? 0.0f : 1.5f;
                s9_set_path(g, wide, 1);
                tcnla_info_t info = {0};
                int s1 = gt_gemm_info(g, ms[mi], ta, tb, m, n, k, 0.75f, A, lda, B, NULL, ldb,
                                      beta, C1, ldc, 0, &info);
                /* the wide-tile kernel did run where op(B) = B */
                if (wide && tb == TCNLA_OP_N && lda % 4 == 0)
                    CHECK_MSG(info.path == 4, "%s m=%lld n=%lld k=%lld: path %d, not "
                              "the wide-tile kernel", tcnla_gemm_method_name(ms[mi]),
                              (long long)m, (long long)n, (long long)k, info.path);
                s9_set_path(g, wide, 0);
                int s2 = gt_gemm(g, ms[mi], ta, tb, m, n, k, 0.75f, A, lda, B, NULL, ldb, beta, C2,
                                 ldc);
                CHECK_MSG(s1 == 0 && s2 == 0, "status %d %d", s1, s2);
                CHECK_MSG(memcmp(C1, C2, sizeof(float) * (size_t)(ldc * n)) == 0,
                          "%s ta=%d tb=%d m=%lld n=%lld k=%lld: %s = 1 result differs from %s = 0 "
                          "(rel %.3e)",
                          tcnla_gemm_method_name(ms[mi]), ta, tb, (long long)m, (long long)n,
                          (long long)k, what, what, gt_rel_diff(C1, C2, m, n, ldc));
                free(A), free(B), free(C1), free(C2);
            }
    tcnla_destroy(g);
}

/* The pre-split path (the tuning's sm90_presplit = 1: hi / lo parts written once
 * by a pass over each operand, wgmma from shared memory) against the
 * in-kernel split (=0), all four methods: the same products in the same
 * order, bit-identical, on tails (k = 77, 130: not multiples of 8 or 32),
 * transposes, alpha / beta, ld > rows and split-K (k = 8192 at 256^2). */
TEST(gpu_sm90_presplit_matches_rega) {
    static const tcnla_gemm_method_t ms[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_SHGEMM_FP16,
                                             TCNLA_GEMM_TCEC_TF32, TCNLA_GEMM_SHGEMM_TF32};
    static const int64_t shapes[][3] = {{7, 33, 130},   {129, 131, 257},  {300, 260, 96},
                                        {130, 200, 77}, {256, 256, 8192}, {1100, 1300, 520}};
    s9_path_identity(ms, 4, 0, shapes, 6);
}

/* The wide-tile path (the tuning's sm90_wide = 1: 64 x 256 tiles, or 64 x
 * 272 / 288 for 256 < n <= 288 and 512 < n <= 576, op(A) split in
 * the product by warpgroups of its own, B by TMA; TCEC's B from the
 * pre-split pass) against the in-kernel split (=0), FP16 methods:
 * bit-identical on tails in m, n and k (n = 33 and 300: one tile with
 * empty columns; 260, 266 and 272 on 136 columns per consumer, 274, 280
 * and 288 on 144, 520 on two tiles of 272), k = 77 and 130, ld > rows,
 * beta 0 / 1.5, op(A) = A and A^T, and grids of more than one wave
 * (2048 x 1100, 5700 x 266, 5700 x 280; the other path splits k only where
 * its 128 x 128 tiles are fewer than the SMs, so none of these splits it:
 * the sums are then grouped differently); it ran where op(B) = B and A's
 * leading dimension is a multiple of 4 (TMA). Elsewhere (op(B) = B^T, A
 * not 16-byte aligned) both runs take the other path. */
TEST(gpu_sm90_wide_matches_rega) {
    static const tcnla_gemm_method_t ms[] = {TCNLA_GEMM_TCEC_FP16, TCNLA_GEMM_SHGEMM_FP16};
    static const int64_t shapes[][3] = {{7, 33, 130},    {129, 300, 257},  {300, 260, 96},
                                        {130, 520, 77},  {2048, 1100, 1030}, {5700, 266, 1100},
                                        {700, 274, 300}, {65, 272, 480},    {129, 288, 200},
                                        {5700, 280, 700}};
    s9_path_identity(ms, 2, 1, shapes, 10);
}

#ifdef TCNLA_HAVE_CUDA
/* The host side of a kernel-level case: op(A)'s storage A (lda x acols,
 * uniform(-amax, amax)), B (ldb x n, uniform(-1, 1)) in FP32 (Bf) and
 * rounded to FP16 (B), C0 (ldc x n, uniform(-1, 1)), and C1, C2 for two
 * results; seeds seed, seed + 100, seed + 200. 0 where memory ran out. */
typedef struct {
    float *A, *Bf, *C0, *C1, *C2;
    uint16_t *B;
} s9_case_t;

static void s9_case_free(s9_case_t *c) {
    free(c->A), free(c->Bf), free(c->B), free(c->C0), free(c->C1), free(c->C2);
}

static int s9_case_make(s9_case_t *c, uint64_t seed, float amax, int64_t lda, int64_t acols,
                        int64_t ldb, int64_t n, int64_t ldc) {
    const size_t na = (size_t)(lda * acols), nb = (size_t)(ldb * n), nc = (size_t)(ldc * n);
    c->A = malloc(sizeof(float) * na), c->Bf = malloc(sizeof(float) * nb);
    c->B = malloc(sizeof(uint16_t) * nb), c->C0 = malloc(sizeof(float) * nc);
    c->C1 = malloc(sizeof(float) * nc), c->C2 = malloc(sizeof(float) * nc);
    if (!c->A || !c->Bf || !c->B || !c->C0 || !c->C1 || !c->C2) {
        s9_case_free(c);
        return 0;
    }
    gt_uniform(seed, -amax, amax, (int64_t)na, c->A);
    gt_uniform(seed + 100, -1, 1, (int64_t)nb, c->Bf);
    for (size_t i = 0; i < nb; i++) c->B[i] = tcnla_f32_to_f16(c->Bf[i], TCNLA_ROUND_RN);
    gt_uniform(seed + 200, -1, 1, (int64_t)nc, c->C0);
    return 1;
}

/* the elements (rows x n, column stride ld) whose bits differ */
static int64_t s9_bits_differ(const float *x, const float *y, int64_t rows, int64_t ld,
                              int64_t n) {
    int64_t d = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < rows; i++)
            d += memcmp(&x[i + j * ld], &y[i + j * ld], sizeof(float)) != 0;
    return d;
}
#endif

/* The wide-tile kernel where op(A) needs no check (vmx NULL: the lean
 * kernel at 136 columns per consumer, whose fresh hi*hi accumulator spans
 * them all) against the same kernel checking op(A) on the way (vmx set:
 * the split warpgroups' check, two hi*hi parts): the same C, bit for bit,
 * for SHGEMM_FP16 (B FP16 as given) and TCEC_FP16 (Bhi / Blo from the
 * pre-split pass), on 128, 136 and 144 columns per consumer (n = 200,
 * 260, 266, 272, 280), tails in m and k, op(A) = A and A^T, ld > rows,
 * beta 0 and 1.5, the product into P, grids of more than one wave, and
 * rows of op(A) spread over 2^-20 .. 2^10 (the lo parts of small and
 * large elements). */
TEST(gpu_sm90_wide_lean_matches_checked) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    if (!tn_cu_sm90_available(TN_KMODE_SHGEMM_F16) || !tn_cu_sm90_available(TN_KMODE_TCEC_F16)) {
        tcnla_destroy(g);
        SKIP("no sm_90a kernels on this device");
    }
    static const int64_t shapes[][3] = {{300, 200, 96},  {129, 266, 257}, {700, 260, 300},
                                        {5700, 266, 1100}, {65, 272, 480},  {1100, 280, 700}};
    int ran = 0;
    for (int si = 0; si < 6; si++)
        for (int t = 0; t < 8; t++) {
            const int mode = (t & 4) ? TN_KMODE_TCEC_F16 : TN_KMODE_SHGEMM_F16;
            const int ta = t & 1, usep = (t & 3) == 2 && si == 1;
            const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
            const int64_t arows = ta ? k : m, acols = ta ? m : k;
            const int64_t lda = (arows + 3) / 4 * 4 + ((t & 2) ? 4 : 0);
            const int64_t ldb = (k + 7) / 8 * 8, ldc = m + ((t & 2) ? 3 : 0);
            const float alpha = 0.75f, beta = (t & 3) == 1 ? 0.0f : 1.5f;
            s9_case_t h;
            REQUIRE(s9_case_make(&h, 9100 + si * 8 + t, 1.0f, lda, acols, ldb, n, ldc));
            float *A = h.A, *Bf = h.Bf, *C0 = h.C0, *C1 = h.C1, *C2 = h.C2;
            const uint16_t *B = h.B;
            for (int64_t i = 0; i < m; i += 3) /* row i of op(A) scaled by 2^(i % 31 - 20) */
                for (int64_t p = 0; p < k; p++)
                    A[ta ? p + i * lda : i + p * lda] *= ldexpf(1.0f, (int)(i % 31) - 20);
            const size_t wsb = tn_cu_sm90_ps_bytes(mode, 0, 0, n, k);
            float *dA = NULL, *dBf = NULL, *dC1 = NULL, *dC2 = NULL, *dP1 = NULL, *dP2 = NULL;
            uint16_t *dB = NULL;
            uint32_t *vmx = NULL;
            double *verr = NULL;
            void *ws = NULL;
            int *fl = NULL;
            int ok = cudaMalloc((void **)&dA, sizeof(float) * (size_t)(lda * acols)) == 0 &&
                     cudaMalloc((void **)&dB, sizeof(uint16_t) * (size_t)(ldb * n)) == 0 &&
                     cudaMalloc((void **)&dBf, sizeof(float) * (size_t)(ldb * n)) == 0 &&
                     cudaMalloc((void **)&dC1, sizeof(float) * (size_t)(ldc * n)) == 0 &&
                     cudaMalloc((void **)&dC2, sizeof(float) * (size_t)(ldc * n)) == 0 &&
                     cudaMalloc((void **)&vmx, sizeof(uint32_t) * (size_t)m) == 0 &&
                     cudaMalloc((void **)&verr, sizeof(double) * (size_t)m) == 0 &&
                     cudaMalloc(&ws, wsb) == 0 && cudaMalloc((void **)&fl, 64) == 0;
            if (ok && usep)
                ok = cudaMalloc((void **)&dP1, sizeof(float) * (size_t)(m * n)) == 0 &&
                     cudaMalloc((void **)&dP2, sizeof(float) * (size_t)(m * n)) == 0;
            CHECK(ok);
            if (ok) {
                cudaMemcpy(dA, A, sizeof(float) * (size_t)(lda * acols), cudaMemcpyHostToDevice);
                cudaMemcpy(dB, B, sizeof(uint16_t) * (size_t)(ldb * n), cudaMemcpyHostToDevice);
                cudaMemcpy(dBf, Bf, sizeof(float) * (size_t)(ldb * n), cudaMemcpyHostToDevice);
                cudaMemcpy(dC1, C0, sizeof(float) * (size_t)(ldc * n), cudaMemcpyHostToDevice);
                cudaMemcpy(dC2, C0, sizeof(float) * (size_t)(ldc * n), cudaMemcpyHostToDevice);
                cudaMemset(vmx, 0, sizeof(uint32_t) * (size_t)m);
                cudaMemset(verr, 0, sizeof(double) * (size_t)m);
                cudaMemset(fl, 0, 64);
                const uint16_t *Bh = dB, *Bl = NULL;
                int64_t ldbh = ldb;
                int e0 = 0;
                if (mode == TN_KMODE_TCEC_F16) { /* Bhi / Blo as gemm_wide makes them */
                    e0 = tn_cu_sm90_ps_split(mode, 1, 0, 0, n, k, dBf, ldb, ws, TN_RCHK_HALFHALF,
                                             20, fl, NULL, g->cuda->sm_count, 0);
                    void *ph, *pl;
                    tn_cu_sm90_ps_b_parts(mode, n, k, ws, &ph, &pl, &ldbh);
                    Bh = ph, Bl = pl;
                }
                const int e1 = tn_cu_tc_gemm_sm90_w(mode, ta, m, n, k, alpha, dA, lda, Bh, Bl,
                                                    ldbh, beta, dC1, ldc, dP1, NULL, NULL,
                                                    TN_RCHK_HALFHALF, 20, g->cuda->smem_optin, 0,
                                                    NULL, NULL, NULL, NULL);
                const int e2 = tn_cu_tc_gemm_sm90_w(mode, ta, m, n, k, alpha, dA, lda, Bh, Bl,
                                                    ldbh, beta, dC2, ldc, dP2, vmx, verr,
                                                    TN_RCHK_HALFHALF, 20, g->cuda->smem_optin, 0,
                                                    NULL, NULL, NULL, NULL);
                CHECK_MSG(e0 == 0 && e1 == 0 && e2 == 0 && cudaDeviceSynchronize() == 0,
                          "m=%lld n=%lld k=%lld t=%d: %d %d %d", (long long)m, (long long)n,
                          (long long)k, t, e0, e1, e2);
                const float *x1 = usep ? dP1 : dC1, *x2 = usep ? dP2 : dC2;
                const int64_t ld = usep ? m : ldc;
                cudaMemcpy(C1, x1, sizeof(float) * (size_t)(ld * n), cudaMemcpyDeviceToHost);
                cudaMemcpy(C2, x2, sizeof(float) * (size_t)(ld * n), cudaMemcpyDeviceToHost);
                const int64_t diff = s9_bits_differ(C1, C2, m, ld, n);
                CHECK_MSG(diff == 0, "%s m=%lld n=%lld k=%lld t=%d%s: %lld elements differ",
                          mode == TN_KMODE_TCEC_F16 ? "TCEC_FP16" : "SHGEMM_FP16", (long long)m,
                          (long long)n, (long long)k, t, usep ? " (P)" : "", (long long)diff);
                ran++;
            }
            cudaFree(dA), cudaFree(dB), cudaFree(dBf), cudaFree(dC1), cudaFree(dC2);
            cudaFree(dP1), cudaFree(dP2), cudaFree(vmx), cudaFree(verr), cudaFree(ws), cudaFree(fl);
            s9_case_free(&h);
        }
    CHECK(ran == 48);
#endif
    tcnla_destroy(g);
}

/* TCNLA_GEMM_FP16 with op(A) rounded inside the kernel: the tall tiles (128
 * rows, n <= 272) against the 64-row tiles, each with and without the
 * bounded check folded in (aflags): the same C, bit for bit (each
 * element's sum is the same sequence of k-steps), and the same flags from
 * both tile heights, on tails in m (65, 129, 1100, 4100 rows) and k, n =
 * 200 and 266, op(A) = A and A^T, ld > rows, beta 0 and 1.5; op(A) with
 * small elements (2^-20, below the kind's bound) in a row and a whole
 * column, and one element above FP16's range in one case, so that the
 * flags (0 < |x| < bound, |x| >= 65504, a column the bound leaves
 * undecided) are set as they should be. */
TEST(gpu_sm90_f16_tall_matches_rows64) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
#ifdef TCNLA_HAVE_CUDA
    if (!(g->cuda->cc_major == 9 && g->cuda->cc_minor == 0)) {
        tcnla_destroy(g);
        SKIP("not compute capability 9.0");
    }
    /* the drivers' choice (tn_cu_gemm_f16_sm90_rows): tall tiles where they
     * fill the 64-row tiles' waves, on 132 SMs */
    CHECK(tn_cu_gemm_f16_sm90_rows(16384, 266, 132) == 128);
    CHECK(tn_cu_gemm_f16_sm90_rows(32768, 272, 132) == 128);
    CHECK(tn_cu_gemm_f16_sm90_rows(8448, 266, 132) == 64);   /* one wave of 64-row tiles */
    CHECK(tn_cu_gemm_f16_sm90_rows(20000, 266, 132) == 64);  /* 3 waves against 2 x 2 */
    CHECK(tn_cu_gemm_f16_sm90_rows(16384, 128, 132) == 64);  /* the NC = 64 kernel */
    CHECK(tn_cu_gemm_f16_sm90_rows(16384, 273, 132) == 64);  /* two column tiles */
    static const int64_t shapes[][3] = {{65, 266, 480}, {129, 266, 257}, {1100, 200, 1030},
                                        {4100, 266, 700}};
    int ran = 0;
    for (int si = 0; si < 4; si++)
        for (int t = 0; t < 4; t++) {
            const int ta = t & 1;
            const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
            const int64_t arows = ta ? k : m, acols = ta ? m : k;
            const int64_t lda = (arows + 3) / 4 * 4 + ((t & 2) ? 4 : 0);
            const int64_t ldb = (k + 7) / 8 * 8, ldc = m + ((t & 2) ? 3 : 0);
            const float alpha = 0.75f, beta = t == 1 ? 0.0f : 1.5f;
            s9_case_t h;
            REQUIRE(s9_case_make(&h, 9400 + si * 4 + t, 2.0f, lda, acols, ldb, n, ldc));
            float *A = h.A, *C0 = h.C0, *C1 = h.C1, *C2 = h.C2;
            const uint16_t *B = h.B;
            /* small elements: in row 3 of op(A), and all of column 13 (a column
             * the bound leaves undecided: flags[7]; bit 5 of the k-tile's second
             * mask word) */
            for (int64_t p = 0; p < k; p += 7) A[ta ? p + 3 * lda : 3 + p * lda] = 0x1p-20f;
            for (int64_t i = 0; i < m; i++) A[ta ? 13 + i * lda : i + 13 * lda] = -0x1p-21f;
            if (t == 3) A[ta ? 1 + (m - 1) * lda : (m - 1) + lda] = 7e4f; /* above FP16's range */
            const size_t scb = tn_cu_gemm_f16_sm90_fold_scratch(k);
            float *dA = NULL, *dC1 = NULL, *dC2 = NULL;
            uint16_t *dB = NULL;
            int *fl = NULL;
            void *sc = NULL;
            int ok = cudaMalloc((void **)&dA, sizeof(float) * (size_t)(lda * acols)) == 0 &&
                     cudaMalloc((void **)&dB, sizeof(uint16_t) * (size_t)(ldb * n)) == 0 &&
                     cudaMalloc((void **)&dC1, sizeof(float) * (size_t)(ldc * n)) == 0 &&
                     cudaMalloc((void **)&dC2, sizeof(float) * (size_t)(ldc * n)) == 0 &&
                     cudaMalloc((void **)&fl, 64) == 0 && cudaMalloc(&sc, scb) == 0;
            CHECK(ok);
            if (ok) {
                cudaMemcpy(dA, A, sizeof(float) * (size_t)(lda * acols), cudaMemcpyHostToDevice);
                cudaMemcpy(dB, B, sizeof(uint16_t) * (size_t)(ldb * n), cudaMemcpyHostToDevice);
                tn_elem_kinds_t kk;
                memset(&kk, 0, sizeof kk);
                kk.n = 1, kk.kind[0] = TN_RCHK_F16, kk.fast[0] = 1;
                const int tolb[1] = {10};
                int hf[2][16];
                /* v: tile rows 128 / 64, without / with the fold; C1 from v = 0 */
                for (int v = 0; v < 4; v++) {
                    const int rows = (v & 1) ? 64 : 128, fold = v >> 1;
                    cudaMemcpy(dC2, C0, sizeof(float) * (size_t)(ldc * n), cudaMemcpyHostToDevice);
                    cudaMemset(fl, 0, 64);
                    const int e = tn_cu_gemm_f16_sm90(ta, m, n, k, alpha, dA, lda, dB, ldb, beta,
                                                      dC2, ldc, g->cuda->smem_optin, 0,
                                                      fold ? &kk : NULL, fold ? tolb : NULL,
                                                      fold ? fl : NULL, fold ? sc : NULL, rows);
                    CHECK_MSG(e == 0 && cudaDeviceSynchronize() == 0,
                              "m=%lld n=%lld k=%lld t=%d v=%d: %d", (long long)m, (long long)n,
                              (long long)k, t, v, e);
                    cudaMemcpy(v ? C2 : C1, dC2, sizeof(float) * (size_t)(ldc * n),
                               cudaMemcpyDeviceToHost);
                    if (fold) cudaMemcpy(hf[v & 1], fl, 64, cudaMemcpyDeviceToHost);
                    /* (the padding rows too: untouched) */
                    const int64_t diff = v ? s9_bits_differ(C1, C2, ldc, ldc, n) : 0;
                    CHECK_MSG(diff == 0, "m=%lld n=%lld k=%lld t=%d v=%d: %lld elements differ",
                              (long long)m, (long long)n, (long long)k, t, v, (long long)diff);
                }
                CHECK_MSG(!memcmp(hf[0], hf[1], sizeof hf[0]) && hf[0][1] && hf[0][7] &&
                              hf[0][6] == (t == 3),
                          "m=%lld n=%lld k=%lld t=%d: flags %d %d %d / %d %d %d", (long long)m,
                          (long long)n, (long long)k, t, hf[0][1], hf[0][6], hf[0][7], hf[1][1],
                          hf[1][6], hf[1][7]);
                ran++;
            }
            cudaFree(dA), cudaFree(dB), cudaFree(dC1), cudaFree(dC2), cudaFree(fl), cudaFree(sc);
            s9_case_free(&h);
        }
    CHECK(ran == 16);
#endif
    tcnla_destroy(g);
}

/* The wide-tile path folds op(A)'s check into the product and reads every
 * check's flags afterwards: clean operands stay on it (path 4), and so
 * does an element below FP16's normal range in a row of numbers near 1,
 * and zeros (a row, a column) beside a large normal; a NaN in A or B, a
 * row of A the split cannot hold (1e-30s, or 0s and one 1e-20), A above
 * FP16's range and B overflowing FP16 send the call down the checked path;
 * a row of small numbers held exactly (2^-20 j) may go either way. Each
 * case against sm90_wide = 0: the same status and the same C, bit for
 * bit (untouched where the status is an error); SHGEMM_FP16 with FP32 B
 * and with FP16 B (tcnla_shgemm), TCEC_FP16. */
TEST(gpu_sm90_wide_defers_checks) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    if (!tn_cu_sm90_available(TN_KMODE_SHGEMM_F16)) {
        tcnla_destroy(g);
        SKIP("no sm_90a kernels on this device");
    }
    GT_TUNE(g, sm90_presplit, 0);
    /* k < 512: no split-K in the checked path; n = 400 on 64 x 256 tiles,
     * n = 270 on one 64 x 272 tile */
    const int64_t m = 300, k = 480;
    for (int64_t n = 400; n >= 270; n -= 130) {
        float *A = malloc(sizeof(float) * (size_t)(m * k)), *B = malloc(sizeof(float) * (size_t)(k * n));
        uint16_t *B16 = malloc(sizeof(uint16_t) * (size_t)(k * n));
        float *C0 = malloc(sizeof(float) * (size_t)(m * n)), *C1 = malloc(sizeof(float) * (size_t)(m * n));
        float *C2 = malloc(sizeof(float) * (size_t)(m * n));
        static const char *what[] = {"clean", "A elem 1e-6", "A NaN",   "A row 1e-30",
                                     "B NaN", "B 1e6",       "A 0, 6e4", "A 7e4",
                                     "A row 2^-20 j", "A row 0, 1e-20"};
        for (int cs = 0; cs < 10; cs++)
            for (int v = 0; v < 3; v++) {
                const tcnla_gemm_method_t meth = v == 2 ? TCNLA_GEMM_TCEC_FP16 : TCNLA_GEMM_SHGEMM_FP16;
                gt_uniform(8100 + cs, -1, 1, m * k, A);
                gt_uniform(8200 + cs, -1, 1, k * n, B);
                gt_uniform(8300 + cs, -1, 1, m * n, C0);
                if (cs == 1) A[5 + 17 * m] = 1e-6f;
                if (cs == 2) A[7 + 3 * m] = NAN;
                if (cs == 3)
                    for (int64_t j = 0; j < k; j++) A[11 + j * m] = 1e-30f * (float)(1 + j % 7);
                if (cs == 4) B[3 + 9 * k] = NAN;
                if (cs == 5) B[2 + 4 * k] = 1e6f;
                if (cs == 6) { /* zeros (a row, a column, one) and a large normal */
                    for (int64_t j = 0; j < k; j++) A[2 + j * m] = 0.0f;
                    for (int64_t i = 0; i < m; i++) A[i + 30 * m] = 0.0f;
                    A[40 + 100 * m] = 0.0f;
                    A[13 + 20 * m] = 60000.0f;
                }
                if (cs == 7) A[9 + 300 * m] = 7e4f; /* above FP16's range */
                if (cs == 8) /* held exactly; the kernel's bound for small elements flags the row */
                    for (int64_t j = 0; j < k; j++) A[19 + j * m] = ldexpf((float)(1 + j % 7), -20);
                if (cs == 9) { /* FP16 his and los all 0: the kernel reads the FP32 elements again */
                    for (int64_t j = 0; j < k; j++) A[23 + j * m] = 0.0f;
                    A[23 + 50 * m] = 1e-20f;
                }
                const int use16 = v == 1;
                if (use16 && (cs == 5)) continue; /* no FP16 for 1e6 */
                if (use16)
                    for (int64_t i = 0; i < k * n; i++) B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
                memcpy(C1, C0, sizeof(float) * (size_t)(m * n));
                memcpy(C2, C0, sizeof(float) * (size_t)(m * n));
                GT_TUNE(g, sm90_wide, 1);
                tcnla_info_t info = {0};
                int s1 = gt_gemm_info(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 0.5f, A, m, B,
                                      use16 ? B16 : NULL, k, 1.5f, C1, m, 0, &info);
                const int path = info.path;
                GT_TUNE(g, sm90_wide, 0);
                int s2 = gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 0.5f, A, m, B,
                                 use16 ? B16 : NULL, k, 1.5f, C2, m);
                CHECK_MSG(s1 == s2, "n=%lld %s %s%s: status %d (wide) vs %d", (long long)n, tcnla_gemm_method_name(meth),
                          what[cs], use16 ? " (FP16 B)" : "", s1, s2);
                CHECK_MSG(memcmp(C1, C2, sizeof(float) * (size_t)(m * n)) == 0,
                          "n=%lld %s %s%s: C differs (rel %.3e)", (long long)n, tcnla_gemm_method_name(meth), what[cs],
                          use16 ? " (FP16 B)" : "", gt_rel_diff(C1, C2, m, n, m));
                if (s1 != 0)
                    CHECK_MSG(memcmp(C1, C0, sizeof(float) * (size_t)(m * n)) == 0,
                              "%s %s: C written on status %d", tcnla_gemm_method_name(meth), what[cs], s1);
                /* (1e-6 passes its row's check: the row holds numbers near 1); the
                 * operands out of FP16's range (rows 1e-30, 1e6, 7e4, a row whose
                 * largest element is 1e-20) are declined by the wide path and
                 * computed on exactly scaled copies, whose product takes the wide
                 * path again */
                const int out = cs == 3 || cs == 5 || cs == 7 || cs == 9;
                CHECK_MSG(info.scaled == out, "%s %s%s: scaled %d", tcnla_gemm_method_name(meth),
                          what[cs], use16 ? " (FP16 B)" : "", info.scaled);
                CHECK_MSG(cs == 8 || out || (path == 4) == (cs <= 1 || cs == 6), "%s %s%s: path %d",
                          tcnla_gemm_method_name(meth), what[cs], use16 ? " (FP16 B)" : "", path);
            }
        free(A), free(B), free(B16), free(C0), free(C1), free(C2);
    }
    tcnla_destroy(g);
}

/* FP64 reference of A * B (op N, N) with contiguous inner loops. */
static void s9_ref(int64_t m, int64_t n, int64_t k, const float *A, const float *B, double *R) {
    double *At = malloc(sizeof(double) * (size_t)(m * k));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) At[p + i * k] = A[i + p * m];
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; j++) {
        double *bj = malloc(sizeof(double) * (size_t)k);
        for (int64_t p = 0; p < k; p++) bj[p] = B[p + j * k];
        for (int64_t i = 0; i < m; i++) {
            const double *ai = At + i * k;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int64_t p = 0;
            for (; p + 4 <= k; p += 4) {
                s0 += ai[p] * bj[p];
                s1 += ai[p + 1] * bj[p + 1];
                s2 += ai[p + 2] * bj[p + 2];
                s3 += ai[p + 3] * bj[p + 3];
            }
            for (; p < k; p++) s0 += ai[p] * bj[p];
            R[i + j * m] = (s0 + s1) + (s2 + s3);
        }
        free(bj);
    }
    free(At);
}

/* Accuracy ([Ootomo & Yokota 2021] eq. 6) against FP64: every sm90 method no worse than
 * cuBLAS SGEMM (NATIVE_FP32, pedantic) on the same inputs; SHGEMM against
 * A * fp16(B) and SGEMM on those inputs. The mma.sync path's error is
 * printed beside it. */
TEST(gpu_sm90_accuracy_vs_sgemm) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    static const int64_t shapes[][3] = {{256, 256, 8192}, {512, 512, 8192}, {1024, 1024, 8192},
                                        {256, 256, 65536}};
    for (int si = 0; si < 4; si++) {
        const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
        float *Bh = malloc(sizeof(float) * k * n), *C = malloc(sizeof(float) * m * n);
        uint16_t *B16 = malloc(sizeof(uint16_t) * k * n);
        double *R = malloc(sizeof(double) * m * n), *Rh = malloc(sizeof(double) * m * n);
        gt_uniform(71 + si, -1, 1, m * k, A);
        gt_uniform(81 + si, -1, 1, k * n, B);
        for (int64_t i = 0; i < k * n; i++) {
            B16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
            Bh[i] = tcnla_f16_to_f32(B16[i]);
        }
        s9_ref(m, n, k, A, B, R);
        s9_ref(m, n, k, A, Bh, Rh);
        CHECK(gt_gemm(g, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, B, NULL,
                      k, 0, C, m) == 0);
        double e32 = gt_rel_err(C, m, R, m, n);
        CHECK(gt_gemm(g, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, Bh,
                      NULL, k, 0, C, m) == 0);
        double eh32 = gt_rel_err(C, m, Rh, m, n);
        printf("    m=n=%lld k=%lld: sgemm %.3e (A*fp16(B): %.3e)\n", (long long)m, (long long)k,
               e32, eh32);
        for (int mi = 0; mi < NS9; mi++) {
            tcnla_gemm_method_t meth = s9_methods[mi];
            const int sh = s9_is_sh(meth);
            double e[2];
            for (int path = 0; path < 2; path++) {
                mma_path(g, path);
                CHECK(gt_gemm(g, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1, A, m, sh ? NULL : B,
                              sh ? B16 : NULL, k, 0, C, m) == 0);
                e[path] = gt_rel_err(C, m, sh ? Rh : R, m, n);
            }
            mma_path(g, 0);
            double ref = sh ? eh32 : e32;
            printf("      %-12s sm90 %.3e (x%.2f)  mma.sync %.3e (x%.2f)\n",
                   tcnla_gemm_method_name(meth), e[0], e[0] / ref, e[1], e[1] / ref);
            CHECK_MSG(e[0] <= ref, "%s k=%lld: %.3e vs sgemm %.3e", tcnla_gemm_method_name(meth),
                      (long long)k, e[0], ref);
        }
        free(A), free(B), free(Bh), free(C), free(B16), free(R), free(Rh);
    }
    tcnla_destroy(g);
}

/* TCNLA_GEMM_FP16 with op(A) rounded to FP16 inside the kernel (path 5,
 * forced on with the tuning's sm90_f16 = 1 at these small shapes): tails in m, n,
 * k, op(A) = A and A^T, ld > rows, alpha / beta, both tile widths (n <= 128
 * and n <= 272, and two column tiles at n = 300). Against an FP64 product
 * of the operands rounded to FP16 on the host, each element's error
 * within (k / 16 + 4) 2^-23 (|alpha| |fp16(op(A))| |fp16(B)| + |beta C|):
 * one FP32 rounding per 16-product step of the Tensor Core's sum and
 * per epilogue operation (the ratio to that bound must stay <= 1); and
 * against the other path (sm90_f16 = 0: FP16 copies and cuBLAS) in
 * norm, within twice that bound's norm (both sums keep to it). */
TEST(gpu_sm90_f16_inkernel_rounding) {
    tcnla_handle_t g = gt_gpu();
    NEED_GPU(g);
    if (!(g->cuda->cc_major == 9 && g->cuda->cc_minor == 0)) SKIP("not compute capability 9.0");
    static const int64_t shapes[][3] = {{7, 33, 130}, {129, 266, 257}, {300, 100, 96},
                                        {600, 272, 600}, {130, 300, 77}, {1100, 266, 1030}};
    for (int si = 0; si < 6; si++)
        for (int t = 0; t < 4; t++) {
            const tcnla_op_t ta = (t & 1) ? TCNLA_OP_T : TCNLA_OP_N;
            const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
            /* t >= 2: lda a multiple of 4 past the rows (else A is copied
             * to an aligned place first, and the old path runs) */
            const int64_t arows = ta == TCNLA_OP_N ? m : k;
            const int64_t pad = t >= 2 ? 8 - arows % 4 : 0;
            const int64_t lda = arows + pad, ldb = k + pad, ldc = m + pad;
            const int64_t acols = ta == TCNLA_OP_N ? k : m;
            float *A = malloc(sizeof(float) * (size_t)(lda * acols));
            float *B = malloc(sizeof(float) * (size_t)(ldb * n));
            float *C0 = malloc(sizeof(float) * (size_t)(ldc * n));
            float *C1 = malloc(sizeof(float) * (size_t)(ldc * n));
            float *C2 = malloc(sizeof(float) * (size_t)(ldc * n));
            gt_uniform(7300 + si * 4 + t, -2, 2, lda * acols, A);
            gt_uniform(7400 + si * 4 + t, -1, 1, ldb * n, B);
            gt_uniform(7500 + si * 4 + t, -1, 1, ldc * n, C0);
            const float alpha = 0.75f, beta = t == 1 ? 0.0f : 1.5f;
            memcpy(C1, C0, sizeof(float) * (size_t)(ldc * n));
            memcpy(C2, C0, sizeof(float) * (size_t)(ldc * n));
            /* op(A) (m x k) and B rounded to FP16, for the reference */
            double *Ar = malloc(sizeof(double) * (size_t)(m * k));
            double *Br = malloc(sizeof(double) * (size_t)(k * n));
            for (int64_t p = 0; p < k; p++)
                for (int64_t i = 0; i < m; i++)
                    Ar[p + i * k] = tcnla_f16_to_f32(tcnla_f32_to_f16(
                        ta == TCNLA_OP_N ? A[i + p * lda] : A[p + i * lda], TCNLA_ROUND_RN));
            for (int64_t j = 0; j < n; j++)
                for (int64_t p = 0; p < k; p++)
                    Br[p + j * k] = tcnla_f16_to_f32(tcnla_f32_to_f16(B[p + j * ldb], TCNLA_ROUND_RN));
            GT_TUNE(g, sm90_f16, 1);
            tcnla_info_t info = {0};
            const int s1 = gt_gemm_info(g, TCNLA_GEMM_FP16, ta, TCNLA_OP_N, m, n, k, alpha, A,
                                        lda, B, NULL, ldb, beta, C1, ldc, 0, &info);
            const int path = info.path;
            GT_TUNE(g, sm90_f16, 0);
            const int s2 = gt_gemm(g, TCNLA_GEMM_FP16, ta, TCNLA_OP_N, m, n, k, alpha, A, lda, B,
                                   NULL, ldb, beta, C2, ldc);
            GT_TUNE(g, sm90_f16, TCNLA_TUNING_AUTO);
            CHECK_MSG(s1 == 0 && s2 == 0, "status %d %d", s1, s2);
            if (lda % 4 == 0)
                CHECK_MSG(path == 5, "m=%lld n=%lld k=%lld ta=%d: path %d, not the FP16 kernel",
                          (long long)m, (long long)n, (long long)k, ta, path);
            double worst = 0.0, dn = 0.0, bn = 0.0;
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < m; i++) {
                    double s = 0.0, sa = 0.0;
                    const double *x = Ar + i * k, *y = Br + j * k;
                    for (int64_t p = 0; p < k; p++) {
                        s += x[p] * y[p];
                        sa += fabs(x[p] * y[p]);
                    }
                    const double c0 = C0[i + j * ldc];
                    const double ref = alpha * s + beta * c0;
                    const double bound = ((double)k / 16.0 + 4.0) * 0x1p-23 *
                                         (fabs(alpha) * sa + fabs(beta * c0));
                    const double e = fabs((double)C1[i + j * ldc] - ref);
                    const double r = bound > 0 ? e / bound : (e > 0 ? INFINITY : 0.0);
                    if (r > worst) worst = r;
                    const double d = (double)C1[i + j * ldc] - (double)C2[i + j * ldc];
                    dn += d * d, bn += bound * bound;
                }
            CHECK_MSG(worst <= 1.0, "m=%lld n=%lld k=%lld ta=%d: error / bound %.3f",
                      (long long)m, (long long)n, (long long)k, ta, worst);
            CHECK_MSG(sqrt(dn) <= 2.0 * sqrt(bn),
                      "m=%lld n=%lld k=%lld ta=%d: against cuBLAS %.3f x the bound", (long long)m,
                      (long long)n, (long long)k, ta, sqrt(dn / bn));
            free(A), free(B), free(C0), free(C1), free(C2), free(Ar), free(Br);
        }
    tcnla_destroy(g);
}
