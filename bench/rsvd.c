/* bench/rsvd: randomized SVD on the GPU, side by side in one process on the
 * same matrix: cuSOLVER's cusolverDnXgesvdr, the plain FP32 pipeline
 * (SGEMM, FP32 Omega, Householder QR) and tcnla_rsvd with the Tensor Core
 * methods, with the time per step ([Ootomo & Yokota 2023] Fig. 8), the relative residual
 * ||A - U S V^T||_F / ||A||_F and the optimal (Eckart-Young) one, and
 * sv_maxrel, the largest relative error of the top k (nonzero) singular
 * values against the known ones. CSV rows (appended) to bench/results/rsvd.csv:
 *   gpu,method,m,n,k,p,q,seconds,rel_err,optimal,t_random,t_proj,t_orth,
 *   t_power,t_bt,t_svd,peak_mib,spectrum,sv_maxrel
 * peak_mib: the library's own device memory during tcnla_rsvd (tcnla_memory_stats:
 * live allocations + workspace), to compare with size(A) and (m+n)(k+p).
 * The test matrix is generated on the GPU: U, V (r = min(m, n, 4k + 64)
 * columns) from cuSOLVER QR of Gaussian matrices, A = U diag(s) V^T, s_1 = 1
 * (--spectrum): exp s_i = 10^(-3 i / k) (s_k = 1e-3, [Ootomo & Yokota 2023]
 * 5.1.1's A_exp; the default), poly_slow (i + 1)^-0.5, gap_noise 1 for
 * i < k / 2, then 1e-2, plus 1e-4, deep_decay 10^(-8 i / k), low_rank
 * 10^(-2 i / r0) for i < r0 = k / 2, then 0. */
#include "tcnla.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_rsvd"
#include "bench_util.h"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "bench_rsvd: %s: %s (line %d)\n", #x, cudaGetErrorString(e_),       \
                    __LINE__);                                                                 \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
static cublasHandle_t cub;
static cusolverDnHandle_t sol;

/* Q (rows x r) orthonormal from a Gaussian matrix, on the GPU. */
static void orthonormal(curandGenerator_t g, int64_t rows, int64_t r, float *Q) {
    CHK(curandGenerateNormal(g, Q, (size_t)(rows * r), 0.0f, 1.0f), "curand");
    int lw1 = 0, lw2 = 0, *info;
    float *tau, *work;
    CHK(cusolverDnSgeqrf_bufferSize(sol, (int)rows, (int)r, Q, (int)rows, &lw1), "geqrf ws");
    CHK(cusolverDnSorgqr_bufferSize(sol, (int)rows, (int)r, (int)r, Q, (int)rows, NULL, &lw2), "orgqr ws");
    int lw = lw1 > lw2 ? lw1 : lw2;
    CK(cudaMalloc((void **)&tau, sizeof(float) * (size_t)(r + lw)));
    CK(cudaMalloc((void **)&info, sizeof(int)));
    work = tau + r;
    CHK(cusolverDnSgeqrf(sol, (int)rows, (int)r, Q, (int)rows, tau, work, lw, info), "geqrf");
    CHK(cusolverDnSorgqr(sol, (int)rows, (int)r, (int)r, Q, (int)rows, tau, work, lw, info), "orgqr");
    CK(cudaDeviceSynchronize());
    cudaFree(tau);
    cudaFree(info);
}

/* ||A - U diag(S) VT||_F / ||A||_F with U (m x k), S (host, k), VT (k x n). */
static double residual(const float *A, int64_t m, int64_t n, int64_t k, const float *U,
                       const float *S, const float *VT, float *E, float *W) {
    CK(cudaMemcpy(E, A, sizeof(float) * (size_t)(m * n), cudaMemcpyDeviceToDevice));
    float *dS;
    CK(cudaMalloc((void **)&dS, sizeof(float) * (size_t)k));
    CK(cudaMemcpy(dS, S, sizeof(float) * (size_t)k, cudaMemcpyHostToDevice));
    CHK(cublasSdgmm(cub, CUBLAS_SIDE_RIGHT, (int)m, (int)k, U, (int)m, dS, 1, W, (int)m), "dgmm");
    const float mone = -1.0f, one = 1.0f;
    CHK(cublasSgemm(cub, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &mone, W, (int)m, VT,
                    (int)k, &one, E, (int)m), "sgemm");
    float ne = 0, na = 0;
    CHK(cublasSnrm2(cub, (int)(m * n), E, 1, &ne), "nrm2");
    CHK(cublasSnrm2(cub, (int)(m * n), A, 1, &na), "nrm2");
    cudaFree(dS);
    return (double)ne / (double)na;
}

/* s_i (i = 0 .. r-1) of the spectrum `name`; -1 for an unknown name */
static int spectrum(const char *name, int64_t r, int64_t k, double *s) {
    for (int64_t i = 0; i < r; i++) {
        const double x = (double)i;
        if (!strcmp(name, "exp")) s[i] = pow(10.0, -3.0 * x / (double)k);
        else if (!strcmp(name, "poly_slow")) s[i] = pow(x + 1.0, -0.5);
        else if (!strcmp(name, "gap_noise")) s[i] = (i < k / 2 ? 1.0 : 1e-2) + 1e-4;
        else if (!strcmp(name, "deep_decay")) s[i] = pow(10.0, -8.0 * x / (double)k);
        else if (!strcmp(name, "low_rank"))
            s[i] = i < k / 2 ? pow(10.0, -2.0 * x / (double)(k / 2)) : 0.0;
        else return -1;
    }
    return 0;
}

/* max |S_i - s_i| / s_i over i < k with s_i > 0 */
static double sv_maxrel(const float *S, const double *s, int64_t k) {
    double e = 0;
    for (int64_t i = 0; i < k; i++)
        if (s[i] > 0) {
            const double d = fabs((double)S[i] - s[i]) / s[i];
            if (!(d <= e)) e = d;
        }
    return e;
}

typedef struct {
    const char *name;
    tcnla_gemm_method_t proj, gemm;
    tcnla_format_t fmt;
    tcnla_orth_t orth;
    tcnla_gemm_method_t power; /* 0: tcnla_rsvd's default (from the data) */
    int pass_efficient;        /* 2q + 1 passes over A (tcnla_rsvd_opts_t) */
} variant;

int main(int argc, char **argv) {
    int64_t m = 16384, n = 16384, k = 256, p = 10;
    int q = 2, reps = 5;
    const char *csv = "bench/results/rsvd.csv", *only = NULL, *spec = "exp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: bench_rsvd [--m M] [--n N] [--rank K] [--oversampling P] "
                   "[--power-iters Q] [--reps R] [--csv FILE] [--variants LIST] [--spectrum S]\n"
                   "defaults: 16384 16384 256 10 2 5 bench/results/rsvd.csv, every variant, exp\n"
                   "spectra: exp (s_k = 1e-3), poly_slow, gap_noise, deep_decay (s_k = 1e-8),\n"
                   "  low_rank (rank k / 2)\n"
                   "variants: cusolver_gesvdr, fp32_pipeline, fp32_cholqr2, tf32, defaults\n"
                   "  (tcnla_rsvd_opts_default(): CholeskyQR in FP64, the projection in FP16 where\n"
                   "  power iterations follow, their precision from the data), shgemm_fp16+tcec_fp16\n"
                   "  (CholeskyQR2 in FP64), shgemm_fp16+tcec_fp16_chol1 (the defaults with the\n"
                   "  projection in SHGEMM_FP16), shgemm_fp16+tcec_fp16_chol1_tcecpower (power iterations in\n"
                   "  TCEC), shgemm_fp16+tcec_fp16_chol1_shpower (power iterations in\n"
                   "  SHGEMM_FP16), shgemm_fp16+tcec_fp16_chol1_fp16power (power iterations in FP16),\n"
                   "  fp16+tcec_fp16_chol1_fp16power (the projection\n"
                   "  too), fp16_chol1 (every product in FP16: B = Q^T A too), fp16_pass_efficient\n"
                   "  (fp16_chol1 with 2q + 1 passes over A: opts.pass_efficient),\n"
                   "  defaults_pass_efficient (the defaults so), shgemm_tf32+tcec_tf32\n");
            return 0;
        } else if (i + 1 < argc && !strcmp(argv[i], "--m")) m = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--n")) n = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rank")) k = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--oversampling")) p = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--power-iters")) q = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--csv")) csv = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--variants")) only = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--spectrum")) spec = argv[++i];
        else {
            fprintf(stderr, "bench_rsvd: unknown option %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 50 || k < 1 || k + p > (m < n ? m : n)) {
        fprintf(stderr, "bench_rsvd: bad sizes\n");
        return 2;
    }
    tcnla_handle_t h;
    CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create(CUDA)");
    char gpu[256];
    tcnla_device_name(h, gpu, sizeof gpu);
    CHK(cublasCreate(&cub), "cublasCreate");
    CHK(cusolverDnCreate(&sol), "cusolverDnCreate");
    curandGenerator_t g;
    CHK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curand");
    CHK(curandSetPseudoRandomGeneratorSeed(g, 2026), "curand seed");

    /* the matrix */
    const int64_t mn = m < n ? m : n, r = mn < 4 * k + 64 ? mn : 4 * k + 64;
    double *sig = malloc(sizeof(double) * (size_t)r), tail = 0, all = 0;
    float *hs = malloc(sizeof(float) * (size_t)r);
    if (spectrum(spec, r, k, sig)) {
        fprintf(stderr, "bench_rsvd: unknown spectrum '%s' (see --help)\n", spec);
        return 2;
    }
    for (int64_t i = 0; i < r; i++) {
        hs[i] = (float)sig[i];
        all += sig[i] * sig[i];
        if (i >= k) tail += sig[i] * sig[i];
    }
    const double optimal = sqrt(tail / all);
    float *A, *U0, *V0, *ds, *E, *W;
    CK(cudaMalloc((void **)&A, sizeof(float) * (size_t)(m * n)));
    CK(cudaMalloc((void **)&U0, sizeof(float) * (size_t)(m * r)));
    CK(cudaMalloc((void **)&V0, sizeof(float) * (size_t)(n * r)));
    CK(cudaMalloc((void **)&ds, sizeof(float) * (size_t)r));
    orthonormal(g, m, r, U0);
    orthonormal(g, n, r, V0);
    CK(cudaMemcpy(ds, hs, sizeof(float) * (size_t)r, cudaMemcpyHostToDevice));
    CHK(cublasSdgmm(cub, CUBLAS_SIDE_RIGHT, (int)m, (int)r, U0, (int)m, ds, 1, U0, (int)m), "dgmm");
    const float one = 1.0f, zero = 0.0f;
    CHK(cublasSgemm(cub, CUBLAS_OP_N, CUBLAS_OP_T, (int)m, (int)n, (int)r, &one, U0, (int)m, V0,
                    (int)n, &zero, A, (int)m), "sgemm A");
    CK(cudaDeviceSynchronize());
    cudaFree(U0);
    cudaFree(V0);
    cudaFree(ds);
    CK(cudaMalloc((void **)&E, sizeof(float) * (size_t)(m * n)));
    float *U, *S, *VT;
    CK(cudaMalloc((void **)&U, sizeof(float) * (size_t)(m * (k + p))));
    CK(cudaMalloc((void **)&S, sizeof(float) * (size_t)(k + p)));
    CK(cudaMalloc((void **)&VT, sizeof(float) * (size_t)(n * (k + p))));
    CK(cudaMalloc((void **)&W, sizeof(float) * (size_t)(m * (k + p))));
    float *hS = malloc(sizeof(float) * (size_t)(k + p));

    FILE *out = fopen(csv, "a");
    if (!out) {
        fprintf(stderr, "bench_rsvd: cannot open %s\n", csv);
        return 1;
    }
    fseek(out, 0, SEEK_END);
    if (ftell(out) == 0) {
        fprintf(out, "gpu,method,m,n,k,p,q,seconds,rel_err,optimal,t_random,t_proj,t_orth,"
                     "t_power,t_bt,t_svd,peak_mib,spectrum,sv_maxrel\n");
    } else { /* a file of the older columns (without spectrum, sv_maxrel) is not appended to */
        char head[512] = {0};
        FILE *in = fopen(csv, "r");
        if (!in || !fgets(head, sizeof head, in) || !strstr(head, ",sv_maxrel")) {
            fprintf(stderr, "bench_rsvd: %s has other columns than this program writes: name a "
                            "new file with --csv\n", csv);
            return 1;
        }
        fclose(in);
    }
    printf("bench_rsvd on %s: m=%lld n=%lld k=%lld p=%lld q=%d, spectrum %s, optimal residual "
           "%.4e\n", gpu, (long long)m, (long long)n, (long long)k, (long long)p, q, spec, optimal);

    /* cuSOLVER gesvdr (FP32), with the same rank, oversampling and iterations */
    if (bench_in_list(only, "cusolver_gesvdr")) {
        cusolverDnParams_t par;
        CHK(cusolverDnCreateParams(&par), "params");
        size_t wd = 0, wh = 0;
        float *Uc, *Vc, *Sc;
        CK(cudaMalloc((void **)&Uc, sizeof(float) * (size_t)(m * (k + p))));
        CK(cudaMalloc((void **)&Vc, sizeof(float) * (size_t)(n * (k + p))));
        CK(cudaMalloc((void **)&Sc, sizeof(float) * (size_t)(k + p)));
        CHK(cusolverDnXgesvdr_bufferSize(sol, par, 'S', 'S', m, n, k, p, q, CUDA_R_32F, A, m,
                                         CUDA_R_32F, Sc, CUDA_R_32F, Uc, m, CUDA_R_32F, Vc, n,
                                         CUDA_R_32F, &wd, &wh), "gesvdr ws");
        void *bd, *bh = malloc(wh ? wh : 1);
        int *info;
        CK(cudaMalloc(&bd, wd ? wd : 1));
        CK(cudaMalloc((void **)&info, sizeof(int)));
        /* gesvdr overwrites A: run on a copy */
        double ts[64];
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        for (int it = -1; it < reps; it++) {
            CK(cudaMemcpy(E, A, sizeof(float) * (size_t)(m * n), cudaMemcpyDeviceToDevice));
            cudaEventRecord(e0, 0);
            CHK(cusolverDnXgesvdr(sol, par, 'S', 'S', m, n, k, p, q, CUDA_R_32F, E, m, CUDA_R_32F,
                                  Sc, CUDA_R_32F, Uc, m, CUDA_R_32F, Vc, n, CUDA_R_32F, bd, wd, bh,
                                  wh, info), "gesvdr");
            cudaEventRecord(e1, 0);
            CK(cudaEventSynchronize(e1));
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (it >= 0) ts[it] = ms * 1e-3;
        }
        cudaEventDestroy(e0), cudaEventDestroy(e1);
        qsort(ts, (size_t)reps, sizeof(double), cmp_d);
        /* residual: U (m x k), V (n x k, ld n) -> VT = V^T */
        CK(cudaMemcpy(hS, Sc, sizeof(float) * (size_t)k, cudaMemcpyDeviceToHost));
        float *VTc;
        CK(cudaMalloc((void **)&VTc, sizeof(float) * (size_t)(k * n)));
        CHK(cublasSgeam(cub, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)n, &one, Vc, (int)n, &zero, VTc,
                        (int)k, VTc, (int)k), "geam");
        double res = residual(A, m, n, k, Uc, hS, VTc, E, W);
        const double svr = sv_maxrel(hS, sig, k);
        printf("  %-26s %9.2f ms   residual %.4e (%.4f x optimal)   sv_maxrel %.3e\n",
               "cusolver_gesvdr", ts[reps / 2] * 1e3, res, res / optimal, svr);
        fprintf(out, "%s,cusolver_gesvdr,%lld,%lld,%lld,%lld,%d,%.6e,%.6e,%.6e,,,,,,,,%s,%.3e\n",
                gpu, (long long)m, (long long)n, (long long)k, (long long)p, q, ts[reps / 2], res,
                optimal, spec, svr);
        cudaFree(Uc), cudaFree(Vc), cudaFree(Sc), cudaFree(bd), cudaFree(info), cudaFree(VTc);
        free(bh);
        cusolverDnDestroyParams(par);
    }

    const variant vs[] = {
        {"fp32_pipeline", TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_NATIVE_FP32, TCNLA_FMT_FP32, TCNLA_ORTH_HOUSEHOLDER, 0, 0},
        {"fp32_cholqr2", TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_NATIVE_FP32, TCNLA_FMT_FP32, TCNLA_ORTH_CHOLQR2_FP64, 0, 0},
        {"tf32", TCNLA_GEMM_TF32, TCNLA_GEMM_TF32, TCNLA_FMT_FP32, TCNLA_ORTH_CHOLQR2_FP64, 0, 0},
        {"shgemm_fp16+tcec_fp16", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR2_FP64, 0, 0},
        {"defaults", TCNLA_GEMM_DEFAULT, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, 0, 0},
        {"shgemm_fp16+tcec_fp16_chol1", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, 0, 0},
        {"shgemm_fp16+tcec_fp16_chol1_tcecpower", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, TCNLA_GEMM_TCEC_FP16, 0},
        {"shgemm_fp16+tcec_fp16_chol1_shpower", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, TCNLA_GEMM_SHGEMM_FP16, 0},
        {"shgemm_fp16+tcec_fp16_chol1_fp16power", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, TCNLA_GEMM_FP16, 0},
        {"fp16+tcec_fp16_chol1_fp16power", TCNLA_GEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, TCNLA_GEMM_FP16, 0},
        {"fp16_chol1", TCNLA_GEMM_FP16, TCNLA_GEMM_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, 0, 0},
        {"fp16_pass_efficient", TCNLA_GEMM_FP16, TCNLA_GEMM_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, 0, 1},
        {"defaults_pass_efficient", TCNLA_GEMM_DEFAULT, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR_FP64, 0, 1},
        {"shgemm_tf32+tcec_tf32", TCNLA_GEMM_SHGEMM_TF32, TCNLA_GEMM_TCEC_TF32, TCNLA_FMT_FP16, TCNLA_ORTH_CHOLQR2_FP64, 0, 0},
    };
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
        if (!bench_in_list(only, vs[v].name)) continue;
        if (vs[v].pass_efficient && q < 1) { /* (the library refuses it: no row under its name) */
            printf("  %-26s skipped: 2q + 1 passes need --power-iters 1 or more\n", vs[v].name);
            continue;
        }
        /* a fresh handle per variant: the workspace only grows, and the peak
         * memory is measured per variant */
        tcnla_destroy(h);
        CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create(CUDA)");
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k, o.oversampling = p, o.power_iters = q;
        o.proj_method = vs[v].proj, o.gemm_method = vs[v].gemm, o.power_method = vs[v].power;
        o.random_format = vs[v].fmt, o.orth = vs[v].orth;
        o.pass_efficient = vs[v].pass_efficient;
        double ts[64], steps[TCNLA_RSVD_STEPS], stepsum[TCNLA_RSVD_STEPS] = {0};
        int st = 0;
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        for (int it = -1; it < reps && st == 0; it++) {
            CK(cudaDeviceSynchronize());
            cudaEventRecord(e0, 0);
            st = tcnla_rsvd(h, &o, m, n, A, m, U, m, S, VT, k);
            tcnla_synchronize(h);
            cudaEventRecord(e1, 0);
            CK(cudaEventSynchronize(e1));
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (it >= 0) ts[it] = ms * 1e-3;
        }
        cudaEventDestroy(e0), cudaEventDestroy(e1);
        if (st) {
            printf("  %-26s failed: %s\n", vs[v].name, tcnla_strerror(st));
            continue;
        }
        qsort(ts, (size_t)reps, sizeof(double), cmp_d);
        o.timings = steps; /* one more run for the per-step breakdown (synchronizing) */
        tcnla_info_t info;
        o.info = &info;
        size_t cur0, peak;
        tcnla_memory_stats(h, &cur0, NULL);
        tcnla_reset_peak_memory(h);
        CHK(tcnla_rsvd(h, &o, m, n, A, m, U, m, S, VT, k), "rsvd (timed steps)");
        tcnla_memory_stats(h, NULL, &peak);
        const double peak_mib = (double)peak / 1048576.0;
        for (int i = 0; i < TCNLA_RSVD_STEPS; i++) stepsum[i] = steps[i];
        CK(cudaMemcpy(hS, S, sizeof(float) * (size_t)k, cudaMemcpyDeviceToHost));
        double res = residual(A, m, n, k, U, hS, VT, E, W);
        const double svr = sv_maxrel(hS, sig, k);
        printf("  %-26s %9.2f ms   residual %.4e (%.4f x optimal)   sv_maxrel %.3e   steps ms: "
               "rng %.2f proj %.2f orth %.2f power %.2f bt %.2f svd %.2f   peak %.0f MiB (A: %.0f "
               "MiB)\n",
               vs[v].name, ts[reps / 2] * 1e3, res, res / optimal, svr, stepsum[0] * 1e3,
               stepsum[1] * 1e3, stepsum[2] * 1e3, stepsum[3] * 1e3, stepsum[4] * 1e3,
               stepsum[5] * 1e3, peak_mib, (double)(m * n) * 4 / 1048576.0);
        if (!vs[v].proj) /* the projection's method from the options */
            printf("    projection: auto:%s\n", tcnla_gemm_method_name(info.proj_method));
        if (!vs[v].power && vs[v].gemm == TCNLA_GEMM_TCEC_FP16 && q > 0) /* from the data */
            printf("    power iterations: auto:%s\n", tcnla_gemm_method_name(info.power_method));
        fprintf(out, "%s,%s,%lld,%lld,%lld,%lld,%d,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,"
                     "%.1f,%s,%.3e\n",
                gpu, vs[v].name, (long long)m, (long long)n, (long long)k, (long long)p, q,
                ts[reps / 2], res, optimal, stepsum[0], stepsum[1], stepsum[2], stepsum[3],
                stepsum[4], stepsum[5], peak_mib, spec, svr);
    }
    fclose(out);
    tcnla_destroy(h);
    return 0;
}
