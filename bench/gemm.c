/* bench_gemm: every tcnla GEMM method and the cuBLAS baselines on the same
 * inputs, in one process (docs/design.md, "Measuring").
 *
 * For each shape: A (m x k) and B (k x n) uniform(-1, 1), column-major,
 * op N. Each method gets warm-up runs, then the median of timed runs with
 * CUDA events on the handle's stream; effective TFLOP/s = 2mnk / time.
 * rel_err = ||C - C_ref||_F / ||C_ref||_F ([Ootomo & Yokota 2021] eq. 6) against an FP64
 * product computed on the GPU with cublasDgemm. SHGEMM methods take B
 * already in FP16 (tcnla_shgemm) and are measured against A * fp16(B); the
 * row cublas_sgemm_hB is cuBLAS SGEMM on those same inputs.
 * Rows `gpu,method,m,n,k,seconds,tflops,rel_err` are appended to the CSV.
 *
 *   build/bench_gemm --help */
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef TCNLA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define DEFAULT_SHAPES "1024,2048,4096,8192,16384,16384x512x16384,32768x256x32768"
#define DEFAULT_METHODS                                                                        \
    "cublas_sgemm,cublas_tf32,cublas_fp16,cublas_bf16x9,cublas_dgemm,cublas_sgemm_hB,"         \
    "native_fp32,native_fp64,tf32,fp16,markidis_fp16,tcec_fp16,tcec_tf32,shgemm_fp16,"         \
    "shgemm_tf32,tcec_fp16_mma,tcec_tf32_mma,shgemm_fp16_mma,shgemm_tf32_mma"

static void usage(const char *argv0) {
    printf("usage: %s [options]\n"
           "  --shapes LIST   comma-separated shapes, N (square) or MxNxK\n"
           "                  (default " DEFAULT_SHAPES ")\n"
           "  --methods LIST  comma-separated methods: tcnla names (native_fp32, native_fp64,\n"
           "                  tf32, fp16, markidis_fp16, tcec_fp16, tcec_tf32, shgemm_fp16,\n"
           "                  shgemm_tf32) and cuBLAS baselines (cublas_sgemm: SGEMM,\n"
           "                  CUBLAS_COMPUTE_32F; cublas_tf32: FAST_TF32 on FP32 inputs;\n"
           "                  cublas_fp16: FP16 inputs, FP32 accumulate; cublas_bf16x9:\n"
           "                  EMULATED_16BFX9; cublas_dgemm: DGEMM on FP64 inputs;\n"
           "                  cublas_sgemm_hB: SGEMM on A * fp16(B), the SHGEMM baseline);\n"
           "                  a tcnla name with the suffix _mma runs with the tuning's sm90 = 0\n"
           "                  (the mma.sync kernels; without it Hopper uses wgmma + TMA)\n"
           "                  (default all)\n"
           "  --reps N        timed runs per method (default 10; 3 when 2mnk > 4e12)\n"
           "  --warmup N      warm-up runs (default 2; 1 when 2mnk > 4e12)\n"
           "  --out FILE      CSV to append to (default bench/results/gemm.csv)\n"
           "  --seed S        input seed (default 1)\n"
           "  --help\n",
           argv0);
}

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define CB(x)                                                                                  \
    do {                                                                                       \
        cublasStatus_t s_ = (x);                                                               \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* uniform(-1, 1), counter based so that threads need no shared state */
static void fill_uniform(float *x, size_t n, uint64_t seed) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix(seed * 0x9e3779b97f4a7c15ULL + i + 1);
        x[i] = (float)(((double)(r >> 40) + 0.5) / 16777216.0 * 2.0 - 1.0);
    }
}

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int64_t m, n, k;
} shape_t;

typedef struct {
    tcnla_handle_t h;
    cublasHandle_t cb;
    cudaStream_t st;
    shape_t s;
    float *dA, *dB, *dC, *dBh; /* dBh: fp16(B) widened to FP32 */
    uint16_t *dA16, *dB16;
    double *dAd, *dBd, *dCd;
    tcnla_info_t info; /* what the last tcnla product ran */
} ctx_t;

/* Runs one method once; returns 0 or a status. */
static int run_once(ctx_t *c, const char *name) {
    const int m = (int)c->s.m, n = (int)c->s.n, k = (int)c->s.k;
    const float one = 1.0f, zero = 0.0f;
    if (!strcmp(name, "cublas_sgemm") || !strcmp(name, "cublas_tf32") ||
        !strcmp(name, "cublas_bf16x9") || !strcmp(name, "cublas_sgemm_hB")) {
        cublasComputeType_t ct = !strcmp(name, "cublas_tf32")     ? CUBLAS_COMPUTE_32F_FAST_TF32
                                 : !strcmp(name, "cublas_bf16x9") ? CUBLAS_COMPUTE_32F_EMULATED_16BFX9
                                                                  : CUBLAS_COMPUTE_32F;
        const float *B = !strcmp(name, "cublas_sgemm_hB") ? c->dBh : c->dB;
        cublasStatus_t s = cublasGemmEx(c->cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, c->dA,
                                        CUDA_R_32F, m, B, CUDA_R_32F, k, &zero, c->dC, CUDA_R_32F,
                                        m, ct, CUBLAS_GEMM_DEFAULT);
        return s == CUBLAS_STATUS_SUCCESS ? 0 : -1000 - (int)s;
    }
    if (!strcmp(name, "cublas_fp16")) {
        cublasStatus_t s = cublasGemmEx(c->cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, c->dA16,
                                        CUDA_R_16F, m, c->dB16, CUDA_R_16F, k, &zero, c->dC,
                                        CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        return s == CUBLAS_STATUS_SUCCESS ? 0 : -1000 - (int)s;
    }
    if (!strcmp(name, "cublas_dgemm")) {
        const double d1 = 1.0, d0 = 0.0;
        cublasStatus_t s = cublasDgemm(c->cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &d1, c->dAd, m,
                                       c->dBd, k, &d0, c->dCd, m);
        return s == CUBLAS_STATUS_SUCCESS ? 0 : -1000 - (int)s;
    }
    size_t len = strlen(name);
    if (len > 4 && !strcmp(name + len - 4, "_mma")) { /* the mma.sync kernels */
        char base[64];
        if (len - 4 >= sizeof base) return -2000;
        memcpy(base, name, len - 4);
        base[len - 4] = 0;
        tcnla_tuning_t t;
        tcnla_get_tuning(c->h, &t);
        const int sm90 = t.sm90;
        t.sm90 = 0;
        tcnla_set_tuning(c->h, &t);
        int r = run_once(c, base);
        t.sm90 = sm90;
        tcnla_set_tuning(c->h, &t);
        return r;
    }
    tcnla_gemm_method_t meth;
    if (tcnla_gemm_method_from_name(name, &meth) != 0) return -2000;
    if (meth == TCNLA_GEMM_SHGEMM_FP16 || meth == TCNLA_GEMM_SHGEMM_TF32)
        return tcnla_shgemm_ex(c->h, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, c->dA, m,
                               c->dB16, k, 0.0f, c->dC, m, &c->info);
    return tcnla_sgemm_ex(c->h, meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, c->dA, m, c->dB, k,
                          0.0f, c->dC, m, &c->info);
}

static double rel_err_host(const float *C, const double *R, size_t n) {
    double num = 0, den = 0;
#pragma omp parallel for reduction(+ : num, den) schedule(static)
    for (size_t i = 0; i < n; i++) {
        double e = (double)C[i] - R[i];
        num += e * e;
        den += R[i] * R[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int parse_shape(const char *t, shape_t *s) {
    long long a, b, c;
    if (sscanf(t, "%lldx%lldx%lld", &a, &b, &c) == 3) {
        s->m = a, s->n = b, s->k = c;
    } else if (sscanf(t, "%lld", &a) == 1) {
        s->m = s->n = s->k = a;
    } else {
        return -1;
    }
    return (s->m > 0 && s->n > 0 && s->k > 0) ? 0 : -1;
}

int main(int argc, char **argv) {
    const char *shapes = DEFAULT_SHAPES, *methods = DEFAULT_METHODS;
    const char *out = "bench/results/gemm.csv";
    int reps_opt = 0, warm_opt = -1;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(argv[0]);
            return 0;
        } else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
            shapes = argv[++i];
        } else if (!strcmp(argv[i], "--methods") && i + 1 < argc) {
            methods = argv[++i];
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps_opt = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) {
            warm_opt = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "unknown argument %s (see --help)\n", argv[i]);
            return 2;
        }
    }
    ctx_t c;
    memset(&c, 0, sizeof c);
    int st = tcnla_create(&c.h, TCNLA_BACKEND_CUDA);
    if (st) {
        fprintf(stderr, "no CUDA backend: %s\n", tcnla_strerror(st));
        return 1;
    }
    char gpu[256];
    tcnla_device_name(c.h, gpu, sizeof gpu);
    CK(cudaStreamCreateWithFlags(&c.st, cudaStreamNonBlocking));
    tcnla_set_stream(c.h, c.st);
    CB(cublasCreate(&c.cb));
    CB(cublasSetStream(c.cb, c.st));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    FILE *csv = fopen(out, "a");
    if (!csv) {
        perror(out);
        return 1;
    }
    fseek(csv, 0, SEEK_END);
    if (ftell(csv) == 0) fprintf(csv, "gpu,method,m,n,k,seconds,tflops,rel_err\n");
    printf("%-24s %-16s %9s %9s %12s\n", gpu, "method", "shape", "TFLOP/s", "rel_err");

    char *shape_list = strdup(shapes);
    for (char *sv = NULL, *tok = strtok_r(shape_list, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv)) {
        if (parse_shape(tok, &c.s)) {
            fprintf(stderr, "bad shape %s\n", tok);
            continue;
        }
        const size_t m = (size_t)c.s.m, n = (size_t)c.s.n, k = (size_t)c.s.k;
        const double flops = 2.0 * (double)m * (double)n * (double)k;
        const int reps = reps_opt > 0 ? reps_opt : (flops > 4e12 ? 3 : 10);
        const int warm = warm_opt >= 0 ? warm_opt : (flops > 4e12 ? 1 : 2);
        /* inputs, their FP16 and FP64 forms, the FP64 references */
        float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
        float *Ch = malloc(sizeof(float) * m * n);
        double *R = malloc(sizeof(double) * m * n), *Rh = malloc(sizeof(double) * m * n);
        double *Xd = malloc(sizeof(double) * (m * k > k * n ? m * k : k * n));
        uint16_t *X16 = malloc(sizeof(uint16_t) * (m * k > k * n ? m * k : k * n));
        if (!A || !B || !Ch || !R || !Rh || !Xd || !X16) {
            fprintf(stderr, "host allocation failed\n");
            return 1;
        }
        fill_uniform(A, m * k, seed * 2);
        fill_uniform(B, k * n, seed * 2 + 1);
        CK(cudaMalloc((void **)&c.dA, sizeof(float) * m * k));
        CK(cudaMalloc((void **)&c.dB, sizeof(float) * k * n));
        CK(cudaMalloc((void **)&c.dBh, sizeof(float) * k * n));
        CK(cudaMalloc((void **)&c.dC, sizeof(float) * m * n));
        CK(cudaMalloc((void **)&c.dA16, sizeof(uint16_t) * m * k));
        CK(cudaMalloc((void **)&c.dB16, sizeof(uint16_t) * k * n));
        CK(cudaMalloc((void **)&c.dAd, sizeof(double) * m * k));
        CK(cudaMalloc((void **)&c.dBd, sizeof(double) * k * n));
        CK(cudaMalloc((void **)&c.dCd, sizeof(double) * m * n));
        CK(cudaMemcpy(c.dA, A, sizeof(float) * m * k, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c.dB, B, sizeof(float) * k * n, cudaMemcpyHostToDevice));
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < m * k; i++) {
            X16[i] = tcnla_f32_to_f16(A[i], TCNLA_ROUND_RN);
            Xd[i] = A[i];
        }
        CK(cudaMemcpy(c.dA16, X16, sizeof(uint16_t) * m * k, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c.dAd, Xd, sizeof(double) * m * k, cudaMemcpyHostToDevice));
        /* B in FP64 -> reference R; fp16(B) in FP64 -> reference Rh */
        const double d1 = 1.0, d0 = 0.0;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < k * n; i++) Xd[i] = B[i];
        CK(cudaMemcpy(c.dBd, Xd, sizeof(double) * k * n, cudaMemcpyHostToDevice));
        CB(cublasDgemm(c.cb, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &d1, c.dAd, (int)m,
                       c.dBd, (int)k, &d0, c.dCd, (int)m));
        CK(cudaMemcpyAsync(R, c.dCd, sizeof(double) * m * n, cudaMemcpyDeviceToHost, c.st));
        CK(cudaStreamSynchronize(c.st));
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < k * n; i++) {
            X16[i] = tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN);
            Xd[i] = tcnla_f16_to_f32(X16[i]);
            B[i] = (float)Xd[i];
        }
        CK(cudaMemcpy(c.dB16, X16, sizeof(uint16_t) * k * n, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c.dBh, B, sizeof(float) * k * n, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(c.dBd, Xd, sizeof(double) * k * n, cudaMemcpyHostToDevice));
        CB(cublasDgemm(c.cb, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &d1, c.dAd, (int)m,
                       c.dBd, (int)k, &d0, c.dCd, (int)m));
        CK(cudaMemcpyAsync(Rh, c.dCd, sizeof(double) * m * n, cudaMemcpyDeviceToHost, c.st));
        CK(cudaStreamSynchronize(c.st));
        /* FP64 B again for the DGEMM baseline */
        fill_uniform(B, k * n, seed * 2 + 1);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < k * n; i++) Xd[i] = B[i];
        CK(cudaMemcpy(c.dBd, Xd, sizeof(double) * k * n, cudaMemcpyHostToDevice));

        char *mlist = strdup(methods);
        for (char *mv = NULL, *mt = strtok_r(mlist, ",", &mv); mt; mt = strtok_r(NULL, ",", &mv)) {
            const int hb = !strcmp(mt, "cublas_sgemm_hB") || !strncasecmp(mt, "shgemm", 6);
            CK(cudaMemsetAsync(c.dC, 0xff, sizeof(float) * m * n, c.st)); /* NaN poison */
            int rs = 0;
            for (int w = 0; w < warm && !rs; w++) rs = run_once(&c, mt);
            if (rs) {
                printf("%-24s %-16s %s: status %d (%s)\n", gpu, mt, tok, rs,
                       rs > -1000 ? tcnla_strerror(rs) : "cuBLAS");
                continue;
            }
            float *t = malloc(sizeof(float) * (size_t)reps);
            for (int r = 0; r < reps; r++) {
                CK(cudaEventRecord(e0, c.st));
                rs = run_once(&c, mt);
                CK(cudaEventRecord(e1, c.st));
                CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&t[r], e0, e1));
            }
            CK(cudaStreamSynchronize(c.st));
            qsort(t, (size_t)reps, sizeof(float), cmp_f);
            double sec = (reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2])) * 1e-3;
            free(t);
            double err;
            if (!strcmp(mt, "cublas_dgemm")) {
                double *Cd = malloc(sizeof(double) * m * n);
                CK(cudaMemcpy(Cd, c.dCd, sizeof(double) * m * n, cudaMemcpyDeviceToHost));
#pragma omp parallel for schedule(static)
                for (size_t i = 0; i < m * n; i++) Ch[i] = (float)Cd[i];
                free(Cd);
            } else {
                CK(cudaMemcpy(Ch, c.dC, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
            }
            err = rel_err_host(Ch, hb ? Rh : R, m * n);
            tcnla_gemm_method_t used = TCNLA_GEMM_DEFAULT, meth;
            char label[64];
            snprintf(label, sizeof label, "%s", mt);
            if (tcnla_gemm_method_from_name(mt, &meth) == 0) {
                used = c.info.method;
                if (used != meth)
                    snprintf(label, sizeof label, "%s(as %s)", mt, tcnla_gemm_method_name(used));
            }
            double tf = flops / sec * 1e-12;
            printf("%-24s %-16s %9s %9.2f %12.3e\n", gpu, label, tok, tf, err);
            fprintf(csv, "%s,%s,%lld,%lld,%lld,%.6e,%.3f,%.4e\n", gpu, label, (long long)m,
                    (long long)n, (long long)k, sec, tf, err);
            fflush(csv);
        }
        free(mlist);
        cudaFree(c.dA), cudaFree(c.dB), cudaFree(c.dBh), cudaFree(c.dC), cudaFree(c.dA16);
        cudaFree(c.dB16), cudaFree(c.dAd), cudaFree(c.dBd), cudaFree(c.dCd);
        free(A), free(B), free(Ch), free(R), free(Rh), free(Xd), free(X16);
    }
    free(shape_list);
    fclose(csv);
    cublasDestroy(c.cb);
    tcnla_destroy(c.h);
    cudaStreamDestroy(c.st);
    return 0;
}
#else
int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "bench_gemm needs a build with the CUDA backend (make CUDA=1 bench)\n");
    return 1;
}
#endif
