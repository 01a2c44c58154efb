/* bench_kernels: [Baboulin et al. 2024] Fig. 1, the GEMM and QR kernels of randomized LRA
 * alone, through the tcnla API, in one process.
 *
 * Fig. 1a, GEMM: C (m x k) = A (m x n) B (n x k), A and B Gaussian (FP32),
 * m = n = 35840 on a GPU as the paper, k = 8 ... 1024:
 *   sgemm               NATIVE_FP32 (cuBLAS SGEMM on the CUDA backend, BLAS on the CPU)
 *   tgemm32_32          TCNLA_GEMM_FP16 on the FP32 A, B: the GEMM rounds them (implicit
 *                       conversion, always included), C in FP32 (tcnla_lra's 32|32)
 *   tgemm16_32          TCNLA_GEMM_FP16 on A, B rounded to FP16 beforehand (FP16 values
 *                       in FP32 storage, as src/randnla/lra.c keeps them), C in FP32
 *   tgemm16_16          the same, C rounded to FP16 afterwards (in the timing)
 *   tgemm16_32+conv     tgemm16_32 with the explicit conversion of A and B (copy and
 *   tgemm16_16+conv     round to FP16, tcnla_lra's steps) inside the timing
 *   cublas_fp16_16_32   (CUDA only) cublasGemmEx on A, B stored in FP16, C FP32: what
 *   cublas_fp16_16_16   the paper's tgemm 16|32, 16|16 are (C FP16 for 16|16); for
 *                       comparison, tcnla has no FP16-storage path
 * rel_err = ||C - C_ref||_F / ||C_ref||_F against NATIVE_FP64 on the FP32 A, B.
 *
 * Fig. 1b, QR: orthonormalize a Gaussian n x k matrix (tcnla_orthonormalize,
 * no retry on breakdown): householder (sgeqrf + sorgqr; cuSOLVER on the GPU),
 * cholqr_fp32, cholqr_fp64 ([Baboulin et al. 2024] Algorithm 3). orth_err = ||Q^T Q - I||_F
 * (Q^T Q by NATIVE_FP64).
 *
 * Timing: warm-up runs, then the median of timed runs, each synchronized
 * (tcnla_synchronize, and cudaDeviceSynchronize on the GPU) and measured
 * with the host's monotonic clock. TFLOP/s: GEMM 2mnk / t; QR the paper's
 * reference count (2nk^2 - 2k^3/3) / t for every variant.
 * Rows appended to the CSV:
 *   gpu,kernel,method,m,n,k,seconds,tflops,rel_err,orth_err,status
 * (gemm: C is m x k, A m x n; qr: the matrix is n x k, m = n).
 *
 *   build/bench_kernels --help */
#include "tcnla.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TCNLA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

#define BENCH_NAME "bench_kernels"
#include "bench_util.h"

#define MAXK 64

enum { G_SGEMM, G_T3232, G_T1632, G_T1616, G_T1632C, G_T1616C, G_CUB1632, G_CUB1616, G_COUNT };
static const char *const gemm_names[G_COUNT] = {
    "sgemm", "tgemm32_32", "tgemm16_32", "tgemm16_16", "tgemm16_32+conv", "tgemm16_16+conv",
    "cublas_fp16_16_32", "cublas_fp16_16_16"};
static const tcnla_orth_t qr_methods[3] = {TCNLA_ORTH_HOUSEHOLDER, TCNLA_ORTH_CHOLQR_FP32,
                                           TCNLA_ORTH_CHOLQR_FP64};
static const char *const qr_names[3] = {"householder", "cholqr_fp32", "cholqr_fp64"};

typedef struct {
    tcnla_handle_t h;
    int cuda;
    int64_t m, n, k;
    float *A, *A16, *B, *B16, *C;   /* handle memory */
    float *Y0, *Y, *G;              /* QR: the input, its working copy, Q^T Q */
#ifdef TCNLA_HAVE_CUDA
    cublasHandle_t cb;
    uint16_t *Ah, *Bh, *Ch;         /* FP16 storage for the cuBLAS rows */
#endif
} ctx_t;

static int sync_all(ctx_t *c) {
    int st = tcnla_synchronize(c->h);
#ifdef TCNLA_HAVE_CUDA
    if (c->cuda && cudaDeviceSynchronize() != cudaSuccess) st = st ? st : TCNLA_ERR_CUDA;
#endif
    return st;
}

/* A16 <- fp16(A), B16 <- fp16(B) as tcnla_lra converts (copy, round in place). */
static int convert(ctx_t *c) {
    int st = tcnla_memcpy(c->h, c->A16, c->A, sizeof(float) * (size_t)(c->m * c->n),
                          TCNLA_MEMCPY_HANDLE_TO_HANDLE);
    if (!st) st = tcnla_round_matrix(c->h, TCNLA_FMT_FP16, c->m, c->n, c->A16, c->m);
    if (!st) st = tcnla_memcpy(c->h, c->B16, c->B, sizeof(float) * (size_t)(c->n * c->k),
                               TCNLA_MEMCPY_HANDLE_TO_HANDLE);
    if (!st) st = tcnla_round_matrix(c->h, TCNLA_FMT_FP16, c->n, c->k, c->B16, c->n);
    return st;
}

/* One run of GEMM variant v. */
static int gemm_once(ctx_t *c, int v) {
    const tcnla_op_t N = TCNLA_OP_N;
    const int64_t m = c->m, n = c->n, k = c->k;
    int st = 0;
    switch (v) {
    case G_SGEMM:
        return tcnla_sgemm(c->h, TCNLA_GEMM_NATIVE_FP32, N, N, m, k, n, 1.0f, c->A, m, c->B, n,
                           0.0f, c->C, m);
    case G_T3232:
        return tcnla_sgemm(c->h, TCNLA_GEMM_FP16, N, N, m, k, n, 1.0f, c->A, m, c->B, n, 0.0f,
                           c->C, m);
    case G_T1632C:
    case G_T1616C:
        if ((st = convert(c))) return st;
        /* fall through */
    case G_T1632:
    case G_T1616:
        st = tcnla_sgemm(c->h, TCNLA_GEMM_FP16, N, N, m, k, n, 1.0f, c->A16, m, c->B16, n, 0.0f,
                         c->C, m);
        if (!st && (v == G_T1616 || v == G_T1616C))
            st = tcnla_round_matrix(c->h, TCNLA_FMT_FP16, m, k, c->C, m);
        return st;
#ifdef TCNLA_HAVE_CUDA
    case G_CUB1632:
    case G_CUB1616: {
        const float one = 1.0f, zero = 0.0f;
        cublasStatus_t s = cublasGemmEx(
            c->cb, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)k, (int)n, &one, c->Ah, CUDA_R_16F,
            (int)m, c->Bh, CUDA_R_16F, (int)n, &zero, v == G_CUB1616 ? (void *)c->Ch : (void *)c->C,
            v == G_CUB1616 ? CUDA_R_16F : CUDA_R_32F, (int)m, CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT);
        return s == CUBLAS_STATUS_SUCCESS ? 0 : TCNLA_ERR_CUBLAS;
    }
#endif
    default:
        return TCNLA_ERR_NOT_SUPPORTED;
    }
}

/* Warm-up runs, then the median of `reps` timed runs of kernel (gemm: v; qr:
 * 100 + method index). The QR input is restored before every run, untimed. */
static int timed(ctx_t *c, int v, int warmup, int reps, double *t) {
    double ts[256];
    int st = 0;
    for (int r = -warmup; r < reps && !st; r++) {
        if (v >= 100) {
            st = tcnla_memcpy(c->h, c->Y, c->Y0, sizeof(float) * (size_t)(c->n * c->k),
                              TCNLA_MEMCPY_HANDLE_TO_HANDLE);
            if (st) break;
        }
        if ((st = sync_all(c))) break;
        const double t0 = bench_now();
        if (v >= 100)
            st = tcnla_orthonormalize(c->h, qr_methods[v - 100], TCNLA_BREAKDOWN_ERROR, c->n,
                                      c->k, c->Y, c->n, NULL, 0, NULL);
        else
            st = gemm_once(c, v);
        if (!st) st = sync_all(c);
        if (r >= 0) ts[r] = bench_now() - t0;
    }
    if (st) return st;
    qsort(ts, (size_t)reps, sizeof(double), cmp_d);
    *t = ts[reps / 2];
    return 0;
}

/* ||X - R||_F / ||R||_F of two host arrays. */
static double rel_diff(const float *X, const float *R, size_t len) {
    double num = 0, den = 0;
#pragma omp parallel for reduction(+ : num, den) schedule(static)
    for (size_t i = 0; i < len; i++) {
        const double d = (double)X[i] - (double)R[i];
        num += d * d;
        den += (double)R[i] * R[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* A status for the CSV: "ok", or the message without commas. */
static const char *status_text(int st, char *buf, size_t n) {
    snprintf(buf, n, "%s", st ? tcnla_strerror(st) : "ok");
    for (char *p = buf; *p; p++)
        if (*p == ',') *p = ';';
    return buf;
}

static int parse_ks(const char *s, int64_t *ks) {
    int cnt = 0;
    const char *p = s;
    while (*p && cnt < MAXK) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 1 || (*end && *end != ',')) return -1;
        ks[cnt++] = v;
        p = *end ? end + 1 : end;
    }
    return *p ? -1 : cnt;
}

static void usage(void) {
    printf("usage: bench_kernels [options]\n"
           "[Baboulin et al. 2024] Fig. 1: GEMM C (m x k) = A (m x n) B (n x k) with sgemm and the tgemm variants\n"
           "(with and without the explicit FP16 conversion), and the orthonormalization of an\n"
           "n x k matrix (householder, cholqr_fp32, cholqr_fp64), over k.\n"
           "  --backend B   auto, cuda or cpu [auto]\n"
           "  --m N         m = n [35840 on a GPU, as the paper; 256 on the CPU]\n"
           "  --ks K1,K2,.. the k [8,16,32,64,128,256,512,1024 on a GPU; 8,16,32 on the CPU]\n"
           "  --kernels L   gemm, qr or gemm,qr [gemm,qr]\n"
           "  --reps R      timed runs, the median is reported [10 on a GPU, 3 on the CPU]\n"
           "  --warmup W    untimed runs first [2 on a GPU, 1 on the CPU]\n"
           "  --csv FILE    CSV to append to [bench/results/baboulin2024_fig1.csv]\n"
           "On the CPU backend the Tensor Core methods run on the (slow) model: small sizes only.\n");
}

int main(int argc, char **argv) {
    tcnla_backend_t be = TCNLA_BACKEND_AUTO;
    int64_t m = 0, ks[MAXK];
    int nk = 0, reps = 0, warmup = -1;
    const char *csv = "bench/results/baboulin2024_fig1.csv", *kernels = "gemm,qr";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: unknown option or missing value: %s (see --help)\n", BENCH_NAME, a);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--backend")) {
            if (!strcmp(v, "auto")) be = TCNLA_BACKEND_AUTO;
            else if (!strcmp(v, "cuda")) be = TCNLA_BACKEND_CUDA;
            else if (!strcmp(v, "cpu")) be = TCNLA_BACKEND_CPU;
            else {
                fprintf(stderr, "%s: --backend: '%s' is not auto, cuda or cpu\n", BENCH_NAME, v);
                return 2;
            }
        } else if (!strcmp(a, "--m")) m = atoll(v);
        else if (!strcmp(a, "--ks")) {
            if ((nk = parse_ks(v, ks)) <= 0) {
                fprintf(stderr, "%s: --ks: '%s' is not a list of positive integers\n", BENCH_NAME, v);
                return 2;
            }
        } else if (!strcmp(a, "--kernels")) kernels = v;
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--warmup")) warmup = atoi(v);
        else if (!strcmp(a, "--csv")) csv = v;
        else {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", BENCH_NAME, a);
            return 2;
        }
    }
    const int do_gemm = strstr(kernels, "gemm") != NULL, do_qr = strstr(kernels, "qr") != NULL;
    ctx_t c;
    memset(&c, 0, sizeof c);
    CHK(tcnla_create(&c.h, be), "tcnla_create");
    tcnla_get_backend(c.h, &be);
    c.cuda = be == TCNLA_BACKEND_CUDA;
    if (m == 0) m = c.cuda ? 35840 : 256;
    if (nk == 0) {
        static const int64_t gpu_ks[] = {8, 16, 32, 64, 128, 256, 512, 1024}, cpu_ks[] = {8, 16, 32};
        nk = c.cuda ? 8 : 3;
        memcpy(ks, c.cuda ? gpu_ks : cpu_ks, sizeof(int64_t) * (size_t)nk);
    }
    if (reps == 0) reps = c.cuda ? 10 : 3;
    if (warmup < 0) warmup = c.cuda ? 2 : 1;
    int64_t kmax = 0;
    for (int i = 0; i < nk; i++) kmax = ks[i] > kmax ? ks[i] : kmax;
    if (m < 1 || kmax > m || reps < 1 || reps > 256 || warmup > 100 || !(do_gemm || do_qr) ||
        (c.cuda && m > INT32_MAX)) {
        fprintf(stderr, "%s: bad sizes (m = %lld, largest k = %lld; see --help)\n", BENCH_NAME,
                (long long)m, (long long)kmax);
        return 2;
    }
    c.m = c.n = m;
    char dev[256] = "?", sbuf[160];
    tcnla_device_name(c.h, dev, sizeof dev);
    FILE *out = fopen(csv, "a");
    if (!out) {
        fprintf(stderr, "%s: cannot open %s\n", BENCH_NAME, csv);
        return 1;
    }
    fseek(out, 0, SEEK_END);
    if (ftell(out) == 0) fprintf(out, "gpu,kernel,method,m,n,k,seconds,tflops,rel_err,orth_err,status\n");
    printf("%s on %s: m = n = %lld, k in {", BENCH_NAME, dev, (long long)m);
    for (int i = 0; i < nk; i++) printf("%s%lld", i ? "," : "", (long long)ks[i]);
    printf("}, median of %d after %d warm-up runs\n", reps, warmup);

    const size_t mn = (size_t)(m * m), nkmax = (size_t)(m * kmax);
    float *hC = malloc(sizeof(float) * nkmax), *hR = malloc(sizeof(float) * nkmax);
    float *hG = malloc(sizeof(float) * (size_t)(kmax * kmax));
    if (!hC || !hR || !hG) {
        fprintf(stderr, "%s: out of host memory\n", BENCH_NAME);
        return 1;
    }
    if (do_gemm) {
        CHK(tcnla_malloc(c.h, (void **)&c.A, sizeof(float) * mn), "malloc A");
        CHK(tcnla_malloc(c.h, (void **)&c.A16, sizeof(float) * mn), "malloc A16");
        CHK(tcnla_malloc(c.h, (void **)&c.B, sizeof(float) * nkmax), "malloc B");
        CHK(tcnla_malloc(c.h, (void **)&c.B16, sizeof(float) * nkmax), "malloc B16");
        CHK(tcnla_malloc(c.h, (void **)&c.C, sizeof(float) * nkmax), "malloc C");
        CHK(tcnla_random_fill(c.h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 2026, 1, m, m, c.A, m),
            "fill A");
#ifdef TCNLA_HAVE_CUDA
        if (c.cuda) { /* the same Gaussians rounded to FP16, in FP16 storage */
            CHK(cublasCreate(&c.cb), "cublasCreate");
            CHK(cudaMalloc((void **)&c.Ah, sizeof(uint16_t) * mn), "cudaMalloc");
            CHK(cudaMalloc((void **)&c.Bh, sizeof(uint16_t) * nkmax), "cudaMalloc");
            CHK(cudaMalloc((void **)&c.Ch, sizeof(uint16_t) * nkmax), "cudaMalloc");
            CHK(tcnla_random_fill_f16(c.h, TCNLA_RAND_GAUSSIAN, 2026, 1, m, m, c.Ah, m), "fill Ah");
        }
#endif
    }
    if (do_qr) {
        CHK(tcnla_malloc(c.h, (void **)&c.Y0, sizeof(float) * nkmax), "malloc Y0");
        CHK(tcnla_malloc(c.h, (void **)&c.Y, sizeof(float) * nkmax), "malloc Y");
        CHK(tcnla_malloc(c.h, (void **)&c.G, sizeof(float) * (size_t)(kmax * kmax)), "malloc G");
    }
    for (int ki = 0; ki < nk && do_gemm; ki++) {
        const int64_t k = ks[ki];
        c.k = k;
        /* B: the first k columns of the n x kmax Gaussian (contiguous, ld = n) */
        CHK(tcnla_random_fill(c.h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 2026, 2, m, k, c.B, m),
            "fill B");
#ifdef TCNLA_HAVE_CUDA
        if (c.cuda)
            CHK(tcnla_random_fill_f16(c.h, TCNLA_RAND_GAUSSIAN, 2026, 2, m, k, c.Bh, m), "fill Bh");
#endif
        CHK(tcnla_sgemm(c.h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_N, m, k, m, 1.0f, c.A, m,
                        c.B, m, 0.0f, c.C, m), "reference product");
        CHK(tcnla_memcpy(c.h, hR, c.C, sizeof(float) * (size_t)(m * k), TCNLA_MEMCPY_HANDLE_TO_HOST),
            "copy");
        CHK(convert(&c), "FP16 conversion");
        printf("gemm k = %lld\n", (long long)k);
        for (int v = 0; v < G_COUNT; v++) {
            if ((v == G_CUB1632 || v == G_CUB1616) && !c.cuda) continue;
            double t = 0, err = NAN;
            int st = timed(&c, v, warmup, reps, &t);
            if (!st) {
                if (v == G_CUB1616) {
#ifdef TCNLA_HAVE_CUDA
                    uint16_t *h16 = malloc(sizeof(uint16_t) * (size_t)(m * k));
                    if (h16 && cudaMemcpy(h16, c.Ch, sizeof(uint16_t) * (size_t)(m * k),
                                          cudaMemcpyDeviceToHost) == cudaSuccess) {
                        for (int64_t i = 0; i < m * k; i++) hC[i] = tcnla_f16_to_f32(h16[i]);
                        err = rel_diff(hC, hR, (size_t)(m * k));
                    }
                    free(h16);
#endif
                } else if (tcnla_memcpy(c.h, hC, c.C, sizeof(float) * (size_t)(m * k),
                                        TCNLA_MEMCPY_HANDLE_TO_HOST) == 0) {
                    err = rel_diff(hC, hR, (size_t)(m * k));
                }
            }
            const double tf = st ? 0 : 2.0 * (double)m * (double)m * (double)k / t * 1e-12;
            if (st)
                printf("  %-18s failed: %s\n", gemm_names[v], tcnla_strerror(st));
            else
                printf("  %-18s %10.4f ms  %9.4g TFLOP/s  rel_err %.3e\n", gemm_names[v], t * 1e3,
                       tf, err);
            fprintf(out, "%s,gemm,%s,%lld,%lld,%lld,%.6e,%.6e,%.6e,,%s\n", dev, gemm_names[v],
                    (long long)m, (long long)m, (long long)k, st ? NAN : t, tf, err,
                    status_text(st, sbuf, sizeof sbuf));
            fflush(out);
        }
    }
    for (int ki = 0; ki < nk && do_qr; ki++) {
        const int64_t k = ks[ki], n = m;
        c.k = k;
        CHK(tcnla_random_fill(c.h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, 2026, 3, n, k, c.Y0, n),
            "fill Y0");
        printf("qr %lld x %lld\n", (long long)n, (long long)k);
        const double flops = 2.0 * (double)n * (double)k * (double)k -
                             2.0 / 3.0 * (double)k * (double)k * (double)k;
        for (int q = 0; q < 3; q++) {
            double t = 0, oe = NAN;
            int st = timed(&c, 100 + q, warmup, reps, &t);
            if (!st) {
                CHK(tcnla_sgemm(c.h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_T, TCNLA_OP_N, k, k, n, 1.0f,
                                c.Y, n, c.Y, n, 0.0f, c.G, k), "Q^T Q");
                CHK(tcnla_memcpy(c.h, hG, c.G, sizeof(float) * (size_t)(k * k),
                                 TCNLA_MEMCPY_HANDLE_TO_HOST), "copy");
                double s = 0;
                for (int64_t j = 0; j < k; j++)
                    for (int64_t i = 0; i < k; i++) {
                        const double d = (double)hG[i + j * k] - (i == j);
                        s += d * d;
                    }
                oe = sqrt(s);
            }
            const double tf = st ? 0 : flops / t * 1e-12;
            if (st)
                printf("  %-18s failed: %s\n", qr_names[q], tcnla_strerror(st));
            else
                printf("  %-18s %10.4f ms  %9.4g TFLOP/s  ||Q^T Q - I||_F %.3e\n", qr_names[q],
                       t * 1e3, tf, oe);
            fprintf(out, "%s,qr,%s,%lld,%lld,%lld,%.6e,%.6e,,%.6e,%s\n", dev, qr_names[q],
                    (long long)n, (long long)n, (long long)k, st ? NAN : t, tf, oe,
                    status_text(st, sbuf, sizeof sbuf));
            fflush(out);
        }
    }
    fclose(out);
#ifdef TCNLA_HAVE_CUDA
    if (c.cuda && do_gemm) {
        cublasDestroy(c.cb);
        cudaFree(c.Ah), cudaFree(c.Bh), cudaFree(c.Ch);
    }
#endif
    tcnla_free(c.h, c.A), tcnla_free(c.h, c.A16), tcnla_free(c.h, c.B), tcnla_free(c.h, c.B16);
    tcnla_free(c.h, c.C), tcnla_free(c.h, c.Y0), tcnla_free(c.h, c.Y), tcnla_free(c.h, c.G);
    free(hC), free(hR), free(hG);
    tcnla_destroy(c.h);
    return 0;
}
