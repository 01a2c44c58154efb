/* bench/hosvd: RP-HOSVD on the GPU ([Ootomo & Yokota 2023] section 5.2, Fig. 9): a Tucker
 * tensor of [Ootomo & Yokota 2023] Algorithm 3 (generated on the host by the library's
 * generator), decomposed by each variant in one process: the FP32 baseline
 * (SGEMM projections with an FP32 random matrix, SGEMM mode products) and the
 * Tensor Core variants. CSV rows appended to bench/results/hosvd.csv:
 *   gpu,method,dims,ranks,seconds,rel_err,peak_mib
 * rel_err = ||A - core x_1 Q_1 ... x_N Q_N||_F / ||A||_F, reconstructed on the GPU.
 * Every variant is the same tcnla_hosvd code: its middle modes run as strided
 * batches (as tcnla_sgemm_strided_batched), cuBLAS strided-batched SGEMM for
 * the FP32 baseline, one launch of the library's kernels for the Tensor Core
 * methods.
 * Median of --reps timed runs after one warm-up; the column "x fp32" is the
 * FP32 baseline's median over the variant's. */
#include "tcnla.h"
#include "testmat/testmat.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_hosvd"
#include "bench_util.h"

/* core x_1 Q_1 x_2 Q_2 x_3 Q_3 (order 3) into W, with T as scratch:
 *   mode 1: W (I1 x J2 J3) = Q_1 core;
 *   mode 2: T slab t (I1 x I2) = W slab t (I1 x J2) Q_2^T, t < J3 (strided batch);
 *   mode 3: W (I1 I2 x I3) = T (I1 I2 x J3) Q_3^T. */
static void expand(cublasHandle_t cub, const int64_t *d, const int64_t *r, const float *core,
                   float *const *Q, float *W, float *T) {
    const float one = 1.0f, zero = 0.0f;
    CHK(cublasSgemm(cub, CUBLAS_OP_N, CUBLAS_OP_N, (int)d[0], (int)(r[1] * r[2]), (int)r[0], &one,
                    Q[0], (int)d[0], core, (int)r[0], &zero, W, (int)d[0]), "mode 1");
    CHK(cublasSgemmStridedBatched(cub, CUBLAS_OP_N, CUBLAS_OP_T, (int)d[0], (int)d[1], (int)r[1],
                                  &one, W, (int)d[0], d[0] * r[1], Q[1], (int)d[1], 0, &zero, T,
                                  (int)d[0], d[0] * d[1], (int)r[2]), "mode 2");
    CHK(cublasSgemm(cub, CUBLAS_OP_N, CUBLAS_OP_T, (int)(d[0] * d[1]), (int)d[2], (int)r[2], &one,
                    T, (int)(d[0] * d[1]), Q[2], (int)d[2], &zero, W, (int)(d[0] * d[1])), "mode 3");
}

typedef struct {
    const char *name;
    tcnla_gemm_method_t proj, gemm;
    tcnla_format_t fmt;
} variant;

int main(int argc, char **argv) {
    int64_t d[3] = {512, 512, 512}, r[3] = {64, 64, 64}, pad = 4;
    int reps = 10; /* timed runs after one warm-up; the median is reported */
    const char *csv = "bench/results/hosvd.csv", *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: bench_hosvd [--dim I] [--rank J] [--reps R] [--csv FILE] [--variants LIST]\n"
                   "order-3 tensor I x I x I, ranks J (multilinear rank J - 4)\n"
                   "defaults: 512 64 10 bench/results/hosvd.csv, every variant\n"
                   "variants: fp32 (the baseline; without it there is no speed-up column),\n"
                   "  tf32, shgemm_fp16+tcec_tf32, shgemm_tf32+tcec_tf32, shgemm_fp16+native_fp32,\n"
                   "  shgemm_fp16+tcec_fp16 (the library's default: the core's later products, on\n"
                   "  the intermediate tensors, run TCEC_TF32)\n");
            return 0;
        } else if (i + 1 < argc && !strcmp(argv[i], "--dim")) d[0] = d[1] = d[2] = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rank")) r[0] = r[1] = r[2] = atoll(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--csv")) csv = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--variants")) only = argv[++i];
        else {
            fprintf(stderr, "bench_hosvd: unknown option %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 50 || r[0] <= pad || r[0] > d[0]) {
        fprintf(stderr, "bench_hosvd: bad sizes\n");
        return 2;
    }
    const int64_t tot = d[0] * d[1] * d[2], csz = r[0] * r[1] * r[2];
    float *hA = malloc(sizeof(float) * (size_t)tot);
    CHK(tn_testmat_tucker(3, d, r, pad, 7, hA), "tucker");
    cublasHandle_t cub;
    CHK(cublasCreate(&cub), "cublasCreate");
    float *A, *T, *W, *core, *Q[3];
    CHK(cudaMalloc((void **)&A, sizeof(float) * (size_t)tot), "malloc");
    CHK(cudaMalloc((void **)&T, sizeof(float) * (size_t)tot), "malloc");
    CHK(cudaMalloc((void **)&W, sizeof(float) * (size_t)tot), "malloc");
    CHK(cudaMalloc((void **)&core, sizeof(float) * (size_t)csz), "malloc");
    for (int i = 0; i < 3; i++) CHK(cudaMalloc((void **)&Q[i], sizeof(float) * (size_t)(d[i] * r[i])), "malloc");
    CHK(cudaMemcpy(A, hA, sizeof(float) * (size_t)tot, cudaMemcpyHostToDevice), "copy");
    free(hA);
    float na;
    CHK(cublasSnrm2(cub, (int)tot, A, 1, &na), "nrm2");
    FILE *out = fopen(csv, "a");
    if (!out) {
        fprintf(stderr, "bench_hosvd: cannot open %s\n", csv);
        return 1;
    }
    fseek(out, 0, SEEK_END);
    if (ftell(out) == 0) fprintf(out, "gpu,method,dims,ranks,seconds,rel_err,peak_mib\n");
    const variant vs[] = {
        {"fp32", TCNLA_GEMM_NATIVE_FP32, TCNLA_GEMM_NATIVE_FP32, TCNLA_FMT_FP32},
        {"tf32", TCNLA_GEMM_TF32, TCNLA_GEMM_TF32, TCNLA_FMT_FP32},
        {"shgemm_fp16+tcec_tf32", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_TF32, TCNLA_FMT_FP16},
        {"shgemm_tf32+tcec_tf32", TCNLA_GEMM_SHGEMM_TF32, TCNLA_GEMM_TCEC_TF32, TCNLA_FMT_FP16},
        {"shgemm_fp16+native_fp32", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_NATIVE_FP32, TCNLA_FMT_FP16},
        {"shgemm_fp16+tcec_fp16", TCNLA_GEMM_SHGEMM_FP16, TCNLA_GEMM_TCEC_FP16, TCNLA_FMT_FP16},
    };
    char gpu[256] = "?";
    int printed = 0;
    double t_fp32 = 0; /* the FP32 baseline's median, for the speed-up column */
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
        if (!bench_in_list(only, vs[v].name)) continue;
        tcnla_handle_t h;
        CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create(CUDA)");
        tcnla_device_name(h, gpu, sizeof gpu);
        if (!printed++)
            printf("bench_hosvd on %s: %lld^3 tensor, ranks %lld (multilinear rank %lld)\n", gpu,
                   (long long)d[0], (long long)r[0], (long long)(r[0] - pad));
        tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
        for (int i = 0; i < 3; i++) o.ranks[i] = r[i];
        o.proj_method = vs[v].proj, o.gemm_method = vs[v].gemm, o.random_format = vs[v].fmt;
        double ts[64];
        int st = 0;
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        for (int it = -1; it < reps && st == 0; it++) {
            cudaDeviceSynchronize();
            if (it == 0) tcnla_reset_peak_memory(h);
            cudaEventRecord(e0, 0);
            st = tcnla_hosvd(h, &o, 3, d, A, core, Q);
            tcnla_synchronize(h);
            cudaEventRecord(e1, 0);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (it >= 0) ts[it] = ms * 1e-3;
        }
        cudaEventDestroy(e0), cudaEventDestroy(e1);
        if (st) {
            printf("  %-24s failed: %s\n", vs[v].name, tcnla_strerror(st));
            tcnla_destroy(h);
            continue;
        }
        size_t peak;
        tcnla_memory_stats(h, NULL, &peak);
        qsort(ts, (size_t)reps, sizeof(double), cmp_d);
        expand(cub, d, r, core, Q, W, T);
        const float mone = -1.0f;
        CHK(cublasSaxpy(cub, (int)tot, &mone, A, 1, W, 1), "axpy");
        float ne;
        CHK(cublasSnrm2(cub, (int)tot, W, 1, &ne), "nrm2");
        const double med = ts[reps / 2];
        if (v == 0) t_fp32 = med;
        printf("  %-24s %9.2f ms  %5.2fx fp32   error %.3e   peak %.0f MiB (A %.0f MiB)\n",
               vs[v].name, med * 1e3, t_fp32 > 0 ? t_fp32 / med : 0.0, ne / na,
               (double)peak / 1048576.0, (double)tot * 4 / 1048576.0);
        fprintf(out, "%s,%s,%lldx%lldx%lld,%lld,%.6e,%.6e,%.1f\n", gpu, vs[v].name,
                (long long)d[0], (long long)d[1], (long long)d[2], (long long)r[0], med,
                (double)(ne / na), (double)peak / 1048576.0);
        tcnla_destroy(h);
    }
    fclose(out);
    return 0;
}
