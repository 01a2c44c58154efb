/* bench/lra: randomized low-rank approximation on the GPU ([Baboulin et al. 2024] section 4),
 * every variant on the same A = X Y^T (Gaussian X, Y of rank k) in one
 * process: the FP32 baseline (SGEMM + Householder, no refinement), the same
 * with CholeskyQR in FP64, and the tgemm variants with CholeskyQR in FP64,
 * without and with iterative refinement. CSV rows appended to
 * bench/results/lra.csv: gpu,method,m,n,k,p,refine,seconds,rel_err,out_rank,peak_mib
 * (rel_err = ||A - X Y^T||_F / ||A||_F). */
#include "tcnla.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_lra"
#include "bench_util.h"

typedef struct {
    const char *name;
    tcnla_tgemm_t tgemm;
    tcnla_orth_t orth;
    int refine;
} variant;

int main(int argc, char **argv) {
    int64_t m = 16384, n = 16384, k = 256, p = 10;
    int reps = 5;
    const char *csv = "bench/results/lra.csv";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: bench_lra [--m M] [--n N] [--rank K] [--oversampling P] [--reps R] "
                   "[--csv FILE]\ndefaults: 16384 16384 256 10 5 bench/results/lra.csv\n");
            return 0;
        } else if (i + 1 < argc && !strcmp(argv[i], "--m")) m = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--n")) n = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rank")) k = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--oversampling")) p = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--csv")) csv = argv[++i];
        else {
            fprintf(stderr, "bench_lra: unknown option %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 50 || k < 1 || 2 * k + p > (m < n ? m : n)) {
        fprintf(stderr, "bench_lra: bad sizes\n");
        return 2;
    }
    cublasHandle_t cub;
    CHK(cublasCreate(&cub), "cublasCreate");
    curandGenerator_t g;
    CHK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curand");
    CHK(curandSetPseudoRandomGeneratorSeed(g, 2026), "curand seed");
    float *A, *X0, *Y0, *E, *X, *Y;
    CHK(cudaMalloc((void **)&A, sizeof(float) * (size_t)(m * n)), "malloc");
    CHK(cudaMalloc((void **)&E, sizeof(float) * (size_t)(m * n)), "malloc");
    CHK(cudaMalloc((void **)&X0, sizeof(float) * (size_t)(m * k)), "malloc");
    CHK(cudaMalloc((void **)&Y0, sizeof(float) * (size_t)(n * k)), "malloc");
    CHK(cudaMalloc((void **)&X, sizeof(float) * (size_t)(m * 3 * k)), "malloc");
    CHK(cudaMalloc((void **)&Y, sizeof(float) * (size_t)(n * 3 * k)), "malloc");
    CHK(curandGenerateNormal(g, X0, (size_t)(m * k), 0.0f, 1.0f), "curand");
    CHK(curandGenerateNormal(g, Y0, (size_t)(n * k), 0.0f, 1.0f), "curand");
    const float one = 1.0f, zero = 0.0f, mone = -1.0f;
    CHK(cublasSgemm(cub, CUBLAS_OP_N, CUBLAS_OP_T, (int)m, (int)n, (int)k, &one, X0, (int)m, Y0,
                    (int)n, &zero, A, (int)m), "A = X Y^T");
    float na;
    CHK(cublasSnrm2(cub, (int)(m * n), A, 1, &na), "nrm2");
    char gpu[256] = "?";
    FILE *out = fopen(csv, "a");
    if (!out) {
        fprintf(stderr, "bench_lra: cannot open %s\n", csv);
        return 1;
    }
    fseek(out, 0, SEEK_END);
    if (ftell(out) == 0) fprintf(out, "gpu,method,m,n,k,p,refine,seconds,rel_err,out_rank,peak_mib\n");
    const variant vs[] = {
        {"fp32_householder", TCNLA_TGEMM_NONE, TCNLA_ORTH_HOUSEHOLDER, 0},
        {"fp32_cholqr64", TCNLA_TGEMM_NONE, TCNLA_ORTH_CHOLQR_FP64, 0},
        {"tgemm32_32", TCNLA_TGEMM_32_32, TCNLA_ORTH_CHOLQR_FP64, 0},
        {"tgemm16_16", TCNLA_TGEMM_16_16, TCNLA_ORTH_CHOLQR_FP64, 0},
        {"tgemm16_32", TCNLA_TGEMM_16_32, TCNLA_ORTH_CHOLQR_FP64, 0},
        {"tgemm32_32+refine", TCNLA_TGEMM_32_32, TCNLA_ORTH_CHOLQR_FP64, 1},
        {"tgemm16_16+refine", TCNLA_TGEMM_16_16, TCNLA_ORTH_CHOLQR_FP64, 1},
        {"tgemm16_32+refine", TCNLA_TGEMM_16_32, TCNLA_ORTH_CHOLQR_FP64, 1},
    };
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
        tcnla_handle_t h; /* fresh per variant: the workspace only grows */
        CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create(CUDA)");
        tcnla_device_name(h, gpu, sizeof gpu);
        if (v == 0)
            printf("bench_lra on %s: m=%lld n=%lld rank %lld, p=%lld, A = X Y^T\n", gpu,
                   (long long)m, (long long)n, (long long)k, (long long)p);
        tcnla_lra_opts_t o = tcnla_lra_opts_default();
        o.rank = k, o.oversampling = p, o.tgemm = vs[v].tgemm, o.orth = vs[v].orth;
        o.refine = vs[v].refine, o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        double ts[64];
        int st = 0;
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        size_t peak = 0;
        for (int it = -1; it < reps && st == 0; it++) {
            cudaDeviceSynchronize();
            if (it == 0) tcnla_reset_peak_memory(h);
            cudaEventRecord(e0, 0);
            st = tcnla_lra(h, &o, m, n, A, m, X, m, Y, n);
            tcnla_synchronize(h);
            cudaEventRecord(e1, 0);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (it >= 0) ts[it] = ms * 1e-3;
        }
        cudaEventDestroy(e0), cudaEventDestroy(e1);
        if (st) {
            printf("  %-20s failed: %s\n", vs[v].name, tcnla_strerror(st));
            tcnla_destroy(h);
            continue;
        }
        tcnla_memory_stats(h, NULL, &peak);
        qsort(ts, (size_t)reps, sizeof(double), cmp_d);
        const int64_t r = tcnla_lra_out_rank(&o);
        CHK(cudaMemcpy(E, A, sizeof(float) * (size_t)(m * n), cudaMemcpyDeviceToDevice), "copy");
        CHK(cublasSgemm(cub, CUBLAS_OP_N, CUBLAS_OP_T, (int)m, (int)n, (int)r, &mone, X, (int)m, Y,
                        (int)n, &one, E, (int)m), "E = A - X Y^T");
        float ne;
        CHK(cublasSnrm2(cub, (int)(m * n), E, 1, &ne), "nrm2");
        const double err = (double)ne / (double)na;
        printf("  %-20s %9.2f ms   error %.3e   rank %lld   peak %.0f MiB\n", vs[v].name,
               ts[reps / 2] * 1e3, err, (long long)r, (double)peak / 1048576.0);
        fprintf(out, "%s,%s,%lld,%lld,%lld,%lld,%d,%.6e,%.6e,%lld,%.1f\n", gpu, vs[v].name,
                (long long)m, (long long)n, (long long)k, (long long)p, vs[v].refine,
                ts[reps / 2], err, (long long)r, (double)peak / 1048576.0);
        tcnla_destroy(h);
    }
    fclose(out);
    return 0;
}
