/* Fixed costs of the randomized SVD on the GPU, each alone (internal
 * entry points: src/ headers), timed with CUDA events on the handle's
 * stream, median of --reps after warm-up runs:
 *   trust   tn_cu_trust_check (tn_cuda_trust's one pass over A, util.cu) on
 *           an m x m FP32 matrix (m = 16384 by default: 1 GiB), the
 *           randomized SVD's kinds (HALFHALF tol 21, F16 tol 10), its
 *           bounded pass (the default) and its exact pass, on uniform(-1, 1)
 *           data ("uniform") and on that with every fifth element times
 *           1e-6 ("small5", a fifth below FP16's normal range); GB/s =
 *           4 m^2 bytes / time; the flags it set (0/1 for flags[0 .. 25]);
 *   potrf   tn_cu_potrf_upper (cholqr_kernels.cu) on the Gram matrix Y^T Y
 *           (FP64, Y uniform 2n x n), n = 266, 512, 1024 (--sizes), G
 *           copied in before each run (outside the timing); info and an
 *           FNV-1a hash of R's upper triangle and diagonal (the same bits
 *           give the same hash); up to TN_TRINV_FULL_MAX also with the whole
 *           inverse: tn_cu_potrf_upper then tn_cu_trinv_full
 *           ("potrf_trinv"), and tn_cu_potrf_inv_cluster's one launch
 *           ("potrf_inv_cluster", Hopper, up to TN_POTRF_CLUSTER_MAX),
 *           each with a hash of R's upper triangle and the inverse;
 *   cholqr  tcnla_orthonormalize(TCNLA_ORTH_CHOLQR_FP64) of a Gaussian
 *           16384 x n Y (the randomized SVD's l = 266 and the other sizes):
 *           Gram matrix, verdict, factorization and solve, the whole call
 *           ("cholqr_fp64", which waits for its verdict), and its single
 *           pass with the verdict deferred ("cholqr_fp64_deferred", the
 *           randomized SVD's); kernel "cholqr_step": the products alone,
 *           on Hopper's FP64 Tensor Cores from the FP32 Y ("gram_dmma_f32"
 *           with the partials' sum, "trmm_dmma_f32": Y R^-1 in place) and
 *           the FP64 path's cuBLAS steps ("widen_f64", "gram_dgemm_batched"
 *           with the sum, "dtrmm", "narrow_f32"), the Gram partials
 *           from the widened Y ("gram_dmma_f64"), and the small SVD's
 *           products from W = Y: V^T = (W X)^T, n - 10 columns of X, from
 *           the FP32 W rounded to FP32 ("vt_dmma_f32") or in FP64
 *           ("vt_dmma_f64") and by cuBLAS from the widened W ("vt_dgemm"),
 *           and a deflation level's Y_b = W X_b, n / 2 + 4 columns, in FP64
 *           ("yb_dmma_f64", "yb_dgemm");
 *   syev    tn_cu_syev_fast (syev_kernels.cu: tridiagonalization,
 *           bisection with Q, twisted vectors) on the Gram matrix of a
 *           2n x n Gaussian Y whose column j is scaled by 10^(-4 j / n),
 *           n = 137, 160, 266 (--syev-sizes; the sizes of the randomized
 *           SVD's top solve and of its deflation levels and repairs);
 *           checked against LAPACK's dsyevd on the host: X = Q Z, the
 *           largest |lam - lam_dsyevd| / lam_max, |X^T X - I| and
 *           |G X - X diag(lam)| / lam_max (elementwise maxima), and an
 *           FNV-1a hash of lam.
 * CSV (bench/results/fixed_costs.csv unless --csv):
 *   gpu,kernel,case,m,n,us,gbps,reps,check
 *   build/bench_fixed_costs [--csv FILE] [--reps R] [--m M] [--sizes 266,512,1024]
 *                           [--syev-sizes 137,160,266] */
#define BENCH_NAME "bench_fixed_costs"
#include "bench_util.h"
#include "tcnla.h"

#ifdef TCNLA_HAVE_CUDA
#include "backend/cuda/tn_cuda.h"
#include "linalg/lapack.h"

#include <math.h>

static FILE *csv_out;
static const char *gpu_name;

static void row(const char *kernel, const char *cs, int64_t m, int64_t n, double us, double gbps,
                int reps, const char *check) {
    char line[512];
    snprintf(line, sizeof line, "%s,%s,%s,%lld,%lld,%.1f,%.1f,%d,%s\n", gpu_name, kernel, cs,
             (long long)m, (long long)n, us, gbps, reps, check);
    printf("%s", line);
    if (csv_out) fprintf(csv_out, "%s", line);
    fflush(stdout);
}

static int cmp_f(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double median_us(float *t, int reps) {
    qsort(t, (size_t)reps, sizeof(float), cmp_f);
    return 1e3 * (double)t[reps / 2];
}

static void bench_trust(tcnla_handle_t h, int64_t m, int reps) {
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = c->stream;
    const size_t mm = (size_t)m * (size_t)m;
    float *X = malloc(sizeof(float) * mm), *dX;
    int *dfl, hf[64];
    void *scr;
    float *t = malloc(sizeof(float) * (size_t)reps);
    if (!X || !t) exit(1);
    CHK(tcnla_malloc(h, (void **)&dX, sizeof(float) * mm), "malloc");
    CHK(tcnla_malloc(h, (void **)&dfl, 64 * sizeof(int)), "malloc");
    CHK(tcnla_malloc(h, &scr, tn_cu_trust_check_scratch(m, m)), "malloc");
    CHK(tcnla_rand_uniform(7, 0, -1.0f, 1.0f, (int64_t)mm, X), "uniform");
    tn_elem_kinds_t kk;
    memset(&kk, 0, sizeof kk);
    int tol[4] = {21, 10, 0, 0};
    kk.n = 2, kk.kind[0] = TN_RCHK_HALFHALF, kk.kind[1] = TN_RCHK_F16;
    for (int j = 0; j < 2; j++)
        kk.scale[j] = ldexp(1.0, -tol[j]), kk.fast[j] = tn_rchk_fast(kk.kind[j], tol[j]);
    cudaEvent_t e0, e1;
    CHK(cudaEventCreate(&e0), "event");
    CHK(cudaEventCreate(&e1), "event");
    for (int data = 0; data < 2; data++) {
        if (data == 1)
            for (size_t i = 0; i < mm; i += 5) X[i] *= 1e-6f;
        CHK(tcnla_memcpy(h, dX, X, sizeof(float) * mm, TCNLA_MEMCPY_HOST_TO_HANDLE), "memcpy");
        for (int bounded = 1; bounded >= 0; bounded--) {
            for (int r = -2; r < reps; r++) {
                CHK(cudaMemsetAsync(dfl, 0, 64 * sizeof(int), s), "memset");
                CHK(cudaEventRecord(e0, s), "event");
                CHK(tn_cu_trust_check(dX, m, m, m, &kk, tol, bounded, dfl, scr, c->sm_count, s),
                    "tn_cu_trust_check");
                CHK(cudaEventRecord(e1, s), "event");
                CHK(cudaEventSynchronize(e1), "event");
                if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
            }
            CHK(cudaMemcpy(hf, dfl, sizeof hf, cudaMemcpyDeviceToHost), "memcpy");
            char flags[40], cs[32];
            for (int i = 0; i < 26; i++) flags[i] = hf[i] ? '1' : '0';
            flags[26] = 0;
            snprintf(cs, sizeof cs, "%s_%s", data ? "small5" : "uniform",
                     bounded ? "bounded" : "exact");
            const double us = median_us(t, reps);
            row("trust", cs, m, m, us, 4.0 * (double)mm / us * 1e-3, reps, flags);
        }
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    tcnla_free(h, dX), tcnla_free(h, dfl), tcnla_free(h, scr);
    free(X), free(t);
}

/* FNV-1a of nbytes at p, continuing from hs (1469598103934665603 to start) */
static uint64_t fnv_bytes(uint64_t hs, const void *p, size_t nbytes) {
    const unsigned char *b = p;
    for (size_t q = 0; q < nbytes; q++) hs = (hs ^ b[q]) * 1099511628211ULL;
    return hs;
}

static void bench_potrf(tcnla_handle_t h, int n, int reps) {
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = c->stream;
    const int m = 2 * n;
    const size_t nn = (size_t)n * (size_t)n;
    float *Yf = malloc(sizeof(float) * (size_t)m * n);
    double *Y = malloc(sizeof(double) * (size_t)m * n), *G = malloc(sizeof(double) * nn);
    double *R = malloc(sizeof(double) * nn), *dg = malloc(sizeof(double) * (size_t)n);
    float *t = malloc(sizeof(float) * (size_t)reps);
    if (!Yf || !Y || !G || !R || !dg || !t) exit(1);
    CHK(tcnla_rand_uniform(11, (uint64_t)n, -1.0f, 1.0f, (int64_t)m * n, Yf), "uniform");
    for (size_t i = 0; i < (size_t)m * n; i++) Y[i] = Yf[i];
    for (int j = 0; j < n; j++) /* the upper triangle, zeros below */
        for (int i = 0; i < n; i++) {
            double a = 0.0;
            if (i <= j)
                for (int p = 0; p < m; p++) a += Y[p + (size_t)i * m] * Y[p + (size_t)j * m];
            G[i + (size_t)j * n] = a;
        }
    double *dG0, *dG, *dR, *ddg;
    int *dinfo, info = 0;
    unsigned *dbar;
    CHK(tcnla_malloc(h, (void **)&dG0, sizeof(double) * nn), "malloc");
    CHK(tcnla_malloc(h, (void **)&dG, sizeof(double) * nn), "malloc");
    CHK(tcnla_malloc(h, (void **)&dR, sizeof(double) * nn), "malloc");
    CHK(tcnla_malloc(h, (void **)&ddg, sizeof(double) * (size_t)n), "malloc");
    CHK(tcnla_malloc(h, (void **)&dinfo, sizeof(int)), "malloc");
    CHK(tcnla_malloc(h, (void **)&dbar, sizeof(unsigned)), "malloc");
    CHK(cudaMemcpy(dG0, G, sizeof(double) * nn, cudaMemcpyHostToDevice), "memcpy");
    CHK(cudaMemset(dR, 0, sizeof(double) * nn), "memset");
    cudaEvent_t e0, e1;
    CHK(cudaEventCreate(&e0), "event");
    CHK(cudaEventCreate(&e1), "event");
    for (int r = -3; r < reps; r++) {
        CHK(cudaMemcpyAsync(dG, dG0, sizeof(double) * nn, cudaMemcpyDeviceToDevice, s), "memcpy");
        CHK(cudaEventRecord(e0, s), "event");
        CHK(tn_cu_potrf_upper(n, dG, n, dR, ddg, dinfo, dbar, c->sm_count, s), "potrf");
        CHK(cudaEventRecord(e1, s), "event");
        CHK(cudaEventSynchronize(e1), "event");
        if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
    }
    CHK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost), "memcpy");
    CHK(cudaMemcpy(R, dR, sizeof(double) * nn, cudaMemcpyDeviceToHost), "memcpy");
    CHK(cudaMemcpy(dg, ddg, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost), "memcpy");
    uint64_t hs = 1469598103934665603ULL; /* R's upper triangle by columns, then diag */
    for (int j = 0; j < n; j++) hs = fnv_bytes(hs, &R[(size_t)j * n], sizeof(double) * (j + 1));
    hs = fnv_bytes(hs, dg, sizeof(double) * (size_t)n);
    char check[64];
    snprintf(check, sizeof check, "info=%d hash=%016llx", info, (unsigned long long)hs);
    row("potrf", "gram_2n", n, n, median_us(t, reps), 0.0, reps, check);
    if (n <= TN_TRINV_FULL_MAX) { /* with the inverse: two launches, and the cluster's one */
        double *dI;
        CHK(tcnla_malloc(h, (void **)&dI, sizeof(double) * nn), "malloc");
        for (int cl = 0; cl < 2; cl++) {
            if (cl && !tn_cu_potrf_inv_ok(n, tn_cuda_cc(c), c->smem_optin)) break;
            for (int r = -3; r < reps; r++) {
                CHK(cudaMemcpyAsync(dG, dG0, sizeof(double) * nn, cudaMemcpyDeviceToDevice, s),
                    "memcpy");
                CHK(cudaEventRecord(e0, s), "event");
                if (cl) {
                    CHK(tn_cu_potrf_inv_cluster(n, dG, n, dR, n, ddg, dinfo, dI, s), "cluster");
                } else {
                    CHK(tn_cu_potrf_upper(n, dG, n, dR, ddg, dinfo, dbar, c->sm_count, s),
                        "potrf");
                    CHK(tn_cu_trinv_full(n, dR, n, dI, s), "trinv");
                }
                CHK(cudaEventRecord(e1, s), "event");
                CHK(cudaEventSynchronize(e1), "event");
                if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
            }
            CHK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost), "memcpy");
            /* R's upper triangle, then the whole inverse (the same bits,
             * the same hash) */
            CHK(cudaMemcpy(R, dR, sizeof(double) * nn, cudaMemcpyDeviceToHost), "memcpy");
            uint64_t hi = 1469598103934665603ULL;
            for (int j = 0; j < n; j++)
                hi = fnv_bytes(hi, &R[(size_t)j * n], sizeof(double) * (j + 1));
            CHK(cudaMemcpy(R, dI, sizeof(double) * nn, cudaMemcpyDeviceToHost), "memcpy");
            hi = fnv_bytes(hi, R, sizeof(double) * nn);
            snprintf(check, sizeof check, "info=%d hash=%016llx", info, (unsigned long long)hi);
            row(cl ? "potrf_inv_cluster" : "potrf_trinv", "gram_2n", n, n, median_us(t, reps),
                0.0, reps, check);
        }
        tcnla_free(h, dI);
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    tcnla_free(h, dG0), tcnla_free(h, dG), tcnla_free(h, dR), tcnla_free(h, ddg);
    tcnla_free(h, dinfo), tcnla_free(h, dbar);
    free(Yf), free(Y), free(G), free(R), free(dg), free(t);
}

static void bench_cholqr(tcnla_handle_t h, int64_t m, int64_t n, int reps) {
    cudaStream_t s = h->cuda->stream;
    float *dY0, *dY, *t = malloc(sizeof(float) * (size_t)reps);
    if (!t) exit(1);
    CHK(tcnla_malloc(h, (void **)&dY0, sizeof(float) * (size_t)(m * n)), "malloc");
    CHK(tcnla_malloc(h, (void **)&dY, sizeof(float) * (size_t)(m * n)), "malloc");
    CHK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 5, 0, m, n, dY0, m), "fill");
    cudaEvent_t e0, e1;
    CHK(cudaEventCreate(&e0), "event");
    CHK(cudaEventCreate(&e1), "event");
    tcnla_orth_t used = TCNLA_ORTH_HOUSEHOLDER;
    for (int r = -3; r < reps; r++) {
        CHK(cudaMemcpyAsync(dY, dY0, sizeof(float) * (size_t)(m * n), cudaMemcpyDeviceToDevice, s),
            "memcpy");
        CHK(cudaEventRecord(e0, s), "event");
        CHK(tcnla_orthonormalize(h, TCNLA_ORTH_CHOLQR_FP64, TCNLA_BREAKDOWN_ERROR, m, n, dY, m,
                                 NULL, 0, &used),
            "tcnla_orthonormalize");
        CHK(cudaEventRecord(e1, s), "event");
        CHK(cudaEventSynchronize(e1), "event");
        if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
    }
    char check[32];
    snprintf(check, sizeof check, "used=%d", (int)used);
    row("cholqr", "cholqr_fp64", m, n, median_us(t, reps), 0.0, reps, check);
    /* the single pass with its verdict deferred (the randomized SVD's) */
    tn_call_t cl;
    tn_call_init(&cl, h);
    int flags[TN_DEFER_SLOTS] = {0};
    for (int r = -3; r < reps; r++) {
        CHK(cudaMemcpyAsync(dY, dY0, sizeof(float) * (size_t)(m * n), cudaMemcpyDeviceToDevice, s),
            "memcpy");
        CHK(tn_defer_begin(&cl), "defer_begin");
        CHK(cudaEventRecord(e0, s), "event");
        CHK(tn_orthonormalize_deferred(&cl, TCNLA_ORTH_CHOLQR_FP64, m, n, dY, m, TN_DEFER_ORTH),
            "tn_orthonormalize_deferred");
        CHK(cudaEventRecord(e1, s), "event");
        CHK(tn_defer_end(&cl, flags), "defer_end");
        if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
    }
    snprintf(check, sizeof check, "flag=%d", flags[TN_DEFER_ORTH]);
    row("cholqr", "cholqr_fp64_deferred", m, n, median_us(t, reps), 0.0, reps, check);
    /* its products alone: on Hopper's FP64 Tensor Cores from the FP32 Y
     * (what the single pass runs there), and the FP64 path's (Y widened, a
     * strided batch of DGEMMs over the slabs, the DTRMM by R^-1, Q narrowed) */
    struct tn_cuda_ctx *c = h->cuda;
    const int64_t nslab = tn_gram64_nslab(m), slab = m / nslab;
    const size_t nn = (size_t)(n * n);
    double *dW, *dQ, *dP, *dG, *dI;
    CHK(tcnla_malloc(h, (void **)&dW, sizeof(double) * (size_t)(m * n)), "malloc");
    CHK(tcnla_malloc(h, (void **)&dQ, sizeof(double) * (size_t)(m * n)), "malloc");
    CHK(tcnla_malloc(h, (void **)&dP, sizeof(double) * nn * (size_t)nslab), "malloc");
    CHK(tcnla_malloc(h, (void **)&dG, sizeof(double) * nn), "malloc");
    CHK(tcnla_malloc(h, (void **)&dI, sizeof(double) * nn), "malloc");
    CHK(cudaMemsetAsync(dI, 0, sizeof(double) * nn, s), "memset");
    const double one = 1.0, zero = 0.0;
    const int dm = tn_cu_dmma_ok(tn_cuda_cc(c)) && n <= TN_DMMA_GEMM_MAX;
    CHK(tn_cu_convert(TN_CONV_F32_TO_F64, dY0, m, dW, m, m, n, NULL, s), "widen");
    /* the small SVD's products from W (m x n): V^T (k = n - 10 columns of
     * X / s) and a deflation level's Y_b (b = n / 2 + 4 columns) */
    const int kv = n > 10 ? (int)n - 10 : (int)n;
    const int kb = (int)n / 2 + 4 < n ? (int)n / 2 + 4 : (int)n;
    for (int step = 0; step < 12; step++) {
        if ((step < 2 || step == 6 || step == 7 || step == 8 || step == 10) && !dm) continue;
        for (int r = -3; r < reps; r++) {
            CHK(cudaEventRecord(e0, s), "event");
            switch (step) {
            case 0: /* Gram partials from FP32, summed */
                CHK(tn_cu_gram_dmma(dY0, 0, m, m, n, nslab, dP, s), "gram_dmma");
                CHK(tn_cu_gram_reduce(dP, nslab, n, dG, NULL, NULL, 0, s), "gram_reduce");
                break;
            case 1: /* Y R^-1 in place, FP32 out */
                CHK(tn_cu_gemm_dmma(dY, m, m, n, n, dI, n, 1, dY, m, 0, NULL, s), "gemm_dmma");
                break;
            case 2:
                CHK(tn_cu_convert(TN_CONV_F32_TO_F64, dY0, m, dW, m, m, n, NULL, s), "widen");
                break;
            case 3:
                CHK(cublasDgemmStridedBatched(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)n,
                                              (int)slab, &one, dW, (int)m, (long long)slab, dW,
                                              (int)m, (long long)slab, &zero, dP, (int)n,
                                              (long long)nn, (int)nslab),
                    "dgemm_batched");
                CHK(tn_cu_gram_reduce(dP, nslab, n, dG, NULL, NULL, 0, s), "gram_reduce");
                break;
            case 4:
                CHK(cublasDtrmm(c->cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                CUBLAS_DIAG_NON_UNIT, (int)m, (int)n, &one, dI, (int)n, dW,
                                (int)m, dQ, (int)m),
                    "dtrmm");
                break;
            case 5:
                CHK(tn_cu_convert(TN_CONV_F64_TO_F32, dQ, m, dY, m, m, n, NULL, s), "narrow");
                break;
            case 6: /* Gram partials from FP64, summed */
                CHK(tn_cu_gram_dmma(dW, 1, m, m, n, nslab, dP, s), "gram_dmma");
                CHK(tn_cu_gram_reduce(dP, nslab, n, dG, NULL, NULL, 0, s), "gram_reduce");
                break;
            case 7: /* V^T = (W X)^T from the FP32 W, FP32 out */
                CHK(tn_cu_gemm_dmma(dY0, m, m, n, kv, dI, n, 0, dY, kv, 1, NULL, s), "gemm_dmma");
                break;
            case 8: /* the same in FP64 */
                CHK(tn_cu_gemm_dmma64(dY0, m, m, n, kv, dI, n, dQ, kv, 1, s), "gemm_dmma64");
                break;
            case 9: /* the same by cuBLAS from the widened W */
                CHK(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_T, kv, (int)m, (int)n, &one, dI,
                                (int)n, dW, (int)m, &zero, dQ, kv),
                    "dgemm");
                break;
            case 10: /* Y_b = W X_b from the FP32 W, FP64 out */
                CHK(tn_cu_gemm_dmma64(dY0, m, m, n, kb, dI, n, dQ, m, 0, s), "gemm_dmma64");
                break;
            default: /* the same by cuBLAS from the widened W */
                CHK(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, kb, (int)n, &one, dW,
                                (int)m, dI, (int)n, &zero, dQ, (int)m),
                    "dgemm");
            }
            CHK(cudaEventRecord(e1, s), "event");
            CHK(cudaEventSynchronize(e1), "event");
            if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
        }
        static const char *names[] = {"gram_dmma_f32", "trmm_dmma_f32", "widen_f64",
                                      "gram_dgemm_batched", "dtrmm", "narrow_f32",
                                      "gram_dmma_f64", "vt_dmma_f32", "vt_dmma_f64",
                                      "vt_dgemm", "yb_dmma_f64", "yb_dgemm"};
        row("cholqr_step", names[step], m, n, median_us(t, reps), 0.0, reps, "");
    }
    tcnla_free(h, dW), tcnla_free(h, dQ), tcnla_free(h, dP), tcnla_free(h, dG);
    tcnla_free(h, dI);
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    tcnla_free(h, dY0), tcnla_free(h, dY);
    free(t);
}

static void bench_syev(tcnla_handle_t h, int n, int reps) {
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = c->stream;
    if (!tn_cu_syev_fast_ok(n, tn_cuda_cc(c), c->smem_optin)) {
        row("syev", "gram_graded", n, n, 0.0, 0.0, 0, "not_taken");
        return;
    }
    const int m = 2 * n;
    const size_t nn = (size_t)n * (size_t)n, wsn = tn_cu_syev_fast_ws(n);
    float *Yf = malloc(sizeof(float) * (size_t)m * n), *t = malloc(sizeof(float) * (size_t)reps);
    double *G = calloc(nn, sizeof(double)), *E = malloc(sizeof(double) * nn);
    double *Q = malloc(sizeof(double) * nn), *Z = malloc(sizeof(double) * nn);
    double *X = malloc(sizeof(double) * nn), *lam = malloc(sizeof(double) * (size_t)n);
    double *lref = malloc(sizeof(double) * (size_t)n);
    if (!Yf || !t || !G || !E || !Q || !Z || !X || !lam || !lref) exit(1);
    CHK(tcnla_rand_normal(13, (uint64_t)n, 0.0f, 1.0f, (int64_t)m * n, Yf), "normal");
    for (int j = 0; j < n; j++) /* the upper triangle of Y^T Y, Y's columns graded */
        for (int i = 0; i <= j; i++) {
            double a = 0.0;
            for (int p = 0; p < m; p++)
                a += (double)Yf[p + (size_t)i * m] * (double)Yf[p + (size_t)j * m];
            G[i + (size_t)j * n] = a * pow(10.0, -4.0 * (i + j) / (2.0 * n));
        }
    double *dG, *dZ, *dlam, *dws;
    int *dflag;
    CHK(tcnla_malloc(h, (void **)&dG, sizeof(double) * nn), "malloc");
    CHK(tcnla_malloc(h, (void **)&dZ, sizeof(double) * nn), "malloc");
    CHK(tcnla_malloc(h, (void **)&dlam, sizeof(double) * (size_t)n), "malloc");
    CHK(tcnla_malloc(h, (void **)&dws, sizeof(double) * wsn), "malloc");
    CHK(tcnla_malloc(h, (void **)&dflag, sizeof(int)), "malloc");
    CHK(cudaMemcpy(dG, G, sizeof(double) * nn, cudaMemcpyHostToDevice), "memcpy");
    cudaEvent_t e0, e1;
    CHK(cudaEventCreate(&e0), "event");
    CHK(cudaEventCreate(&e1), "event");
    for (int r = -3; r < reps; r++) {
        CHK(cudaEventRecord(e0, s), "event");
        CHK(tn_cu_syev_fast(n, dG, n, 1, dZ, dlam, dflag, dws, 1, c->smem_optin, s), "syev_fast");
        CHK(cudaEventRecord(e1, s), "event");
        CHK(cudaEventSynchronize(e1), "event");
        if (r >= 0) CHK(cudaEventElapsedTime(&t[r], e0, e1), "event");
    }
    CHK(cudaMemcpy(Z, dZ, sizeof(double) * nn, cudaMemcpyDeviceToHost), "memcpy");
    CHK(cudaMemcpy(Q, dws, sizeof(double) * nn, cudaMemcpyDeviceToHost), "memcpy");
    CHK(cudaMemcpy(lam, dlam, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost), "memcpy");
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &n, &n, &one, Q, &n, Z, &n, &zero, X, &n); /* X = Q Z */
    memcpy(E, G, sizeof(double) * nn);
    int lwork = -1, liwork = -1, iwq = 0, info = 0;
    double wq = 0.0;
    dsyevd_("N", "U", &n, E, &n, lref, &wq, &lwork, &iwq, &liwork, &info);
    lwork = (int)wq + 1, liwork = iwq > 1 ? iwq : 1;
    double *work = malloc(sizeof(double) * (size_t)lwork);
    int *iwork = malloc(sizeof(int) * (size_t)liwork);
    if (!work || !iwork) exit(1);
    dsyevd_("N", "U", &n, E, &n, lref, work, &lwork, iwork, &liwork, &info);
    const double lmax = fmax(fabs(lref[0]), fabs(lref[n - 1]));
    double dl = 0.0, orth = 0.0, res = 0.0;
    for (int j = 0; j < n; j++) dl = fmax(dl, fabs(lam[j] - lref[j]) / lmax);
    dgemm_("T", "N", &n, &n, &n, &one, X, &n, X, &n, &zero, E, &n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) orth = fmax(orth, fabs(E[i + (size_t)j * n] - (i == j)));
    for (int j = 0; j < n; j++) /* G whole from its upper triangle */
        for (int i = j + 1; i < n; i++) G[i + (size_t)j * n] = G[j + (size_t)i * n];
    dgemm_("N", "N", &n, &n, &n, &one, G, &n, X, &n, &zero, E, &n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            res = fmax(res, fabs(E[i + (size_t)j * n] - X[i + (size_t)j * n] * lam[j]) / lmax);
    char check[160];
    snprintf(check, sizeof check, "info=%d dlam=%.2e orth=%.2e resid=%.2e hash=%016llx", info, dl,
             orth, res, (unsigned long long)fnv_bytes(1469598103934665603ULL, lam,
                                                      sizeof(double) * (size_t)n));
    row("syev", "gram_graded", n, n, median_us(t, reps), 0.0, reps, check);
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    tcnla_free(h, dG), tcnla_free(h, dZ), tcnla_free(h, dlam), tcnla_free(h, dws);
    tcnla_free(h, dflag);
    free(Yf), free(t), free(G), free(E), free(Q), free(Z), free(X), free(lam), free(lref);
    free(work), free(iwork);
}

static int parse_list(const char *s, int *v, int max) {
    int n = 0;
    while (s && *s && n < max) {
        v[n++] = atoi(s);
        s = strchr(s, ',');
        if (s) s++;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *csv = "bench/results/fixed_costs.csv";
    int reps = 20, sizes[8] = {266, 512, 1024}, ns = 3, esizes[8] = {137, 160, 266}, nes = 3;
    int64_t m = 16384;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--csv")) csv = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--m")) m = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--sizes")) ns = parse_list(argv[++i], sizes, 8);
        else if (i + 1 < argc && !strcmp(argv[i], "--syev-sizes"))
            nes = parse_list(argv[++i], esizes, 8);
        else {
            fprintf(stderr,
                    "usage: %s [--csv FILE] [--reps R] [--m M] [--sizes N,..] "
                    "[--syev-sizes N,..]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || m < 1 || m > 32768 || ns < 1 || nes < 1) {
        fprintf(stderr, "%s: --reps 1..1000, --m 1..32768, non-empty --sizes and --syev-sizes\n",
                BENCH_NAME);
        return 2;
    }
    for (int i = 0; i < nes; i++)
        if (esizes[i] < 2 || esizes[i] > 448) {
            fprintf(stderr, "%s: syev sizes 2..448\n", BENCH_NAME);
            return 2;
        }
    for (int i = 0; i < ns; i++)
        if (sizes[i] < 1 || sizes[i] > 4096 || sizes[i] > m) {
            fprintf(stderr, "%s: sizes 1..4096, at most m\n", BENCH_NAME);
            return 2;
        }
    tcnla_handle_t h = NULL;
    CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create (CUDA)");
    csv_out = fopen(csv, "w");
    if (!csv_out) {
        fprintf(stderr, "%s: cannot open %s\n", BENCH_NAME, csv);
        return 1;
    }
    gpu_name = h->device_name;
    const char *head = "gpu,kernel,case,m,n,us,gbps,reps,check\n";
    printf("%s", head);
    fprintf(csv_out, "%s", head);
    bench_trust(h, m, reps);
    for (int i = 0; i < ns; i++) bench_potrf(h, sizes[i], reps);
    for (int i = 0; i < ns; i++) bench_cholqr(h, m, sizes[i], reps);
    for (int i = 0; i < nes; i++) bench_syev(h, esizes[i], reps);
    fclose(csv_out);
    tcnla_destroy(h);
    return 0;
}
#else
int main(void) {
    fprintf(stderr, "%s: needs the CUDA backend (build with CUDA=1)\n", BENCH_NAME);
    return 1;
}
#endif
