/* bench_oz2_fused: Ozaki scheme II's residue products on the GPU, the
 * cuBLASLt path against the fused Hopper kernel, in one process on the
 * same data.
 *
 * Per size S (m = n = k = S) and moduli count n:
 *  products_cublaslt: per modulus cuBLASLt's INT8 GEMM (the algorithm picked
 *    by timing, i8gemm_cuda.c) into an INT32 product and k_modp's reduction
 *    modulo p_l into uint8 (tn_cuda_oz2_products, fused 0);
 *  products_fused: the sm_90a kernel for all moduli (fused 1: clusters of
 *    two blocks sharing the B tiles); products_fused_1cta: the same kernel
 *    with one block per tile (fused 2);
 *  both on the same random int8 residues (n S^2 bytes per operand); their
 *  residue products must be the same bytes (bits_equal). Time: median of
 *  --reps runs between two events on the handle's stream, after a warm-up;
 *  TOPS = 2 S^3 n / t.
 *  dgemm_oz2_cublaslt, dgemm_oz2_fused: the whole tcnla_dgemm, OZAKI_INT8
 *    scheme II DP mode, with the tuning's oz2_fused = 0 / 1 (the moduli
 *    count is the plan's), and cublas_dgemm: cuBLAS DGEMM, on the same A, B
 *    (tn_rand_phi, phi = 1); host-synchronised time, median of --reps
 *    after a warm-up, the paths alternating; TFLOP/s = 2 S^3 / t; x_dgemm =
 *    cuBLAS DGEMM's time / the row's time; bits_equal: the two scheme II
 *    results are the same C bits.
 * Rows gpu,m,n,k,moduli,what,ms,tops,x_dgemm,bits_equal are appended to the
 * CSV (header written when the file is new).
 *   build/bench_oz2_fused [--sizes 4096,8192,16384] [--moduli 15] [--reps 5]
 *                         [--no-dgemm] [--out bench/results/ozaki_fused.csv] */
#define BENCH_NAME "bench_oz2_fused"
#include "../bench_util.h"
#include "tcnla.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TCNLA_HAVE_CUDA
#include "backend/cuda/tn_cuda.h"
#include "gemm/ozaki2.h"
#include "testmat/testdata.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <time.h>

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_d);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* bytes of random int8 residues: a 64 MiB random block repeated */
static void fill_i8(void *d, size_t bytes, uint64_t seed) {
    const size_t blk = (size_t)64 << 20;
    unsigned char *h = malloc(blk);
    if (!h) exit(1);
    uint64_t s = seed;
    for (size_t i = 0; i < blk; i += 8) {
        uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        memcpy(h + i, &z, 8);
    }
    for (size_t o = 0; o < bytes; o += blk)
        CHK(cudaMemcpy((char *)d + o, h, bytes - o < blk ? bytes - o : blk, cudaMemcpyHostToDevice),
            "cudaMemcpy");
    free(h);
}

static void row(FILE *f, const char *gpu, int64_t S, int nmod, const char *what, double ms,
                double tops, double xd, int eq) {
    char x[32] = "", e[16] = "";
    if (xd > 0) snprintf(x, sizeof x, "%.4f", xd);
    if (eq >= 0) snprintf(e, sizeof e, "%d", eq);
    fprintf(f, "%s,%lld,%lld,%lld,%d,%s,%.4f,%.2f,%s,%s\n", gpu, (long long)S, (long long)S,
            (long long)S, nmod, what, ms, tops, x, e);
    fflush(f);
    printf("%6lld %2d moduli %-20s %10.3f ms %9.2f %s%s%s%s\n", (long long)S, nmod, what, ms, tops,
           xd > 0 ? " x_dgemm " : "", x, eq >= 0 ? " bits_equal " : "", e);
}

/* the two products paths on random residues; returns 1 when their bytes agree */
static int bench_products(tcnla_handle_t h, FILE *f, const char *gpu, int64_t S, int nmod,
                          int reps) {
    struct tn_cuda_ctx *c = h->cuda;
    const int64_t mbp = (S + 31) / 32 * 32, kp = mbp;
    tn_oz2_consts_t cs;
    tn_oz2_consts(nmod, &cs);
    const size_t nr = (size_t)nmod * (size_t)mbp * (size_t)kp;
    const size_t nq = (size_t)nmod * (size_t)mbp * (size_t)mbp;
    signed char *RA = NULL, *RB = NULL;
    int *P = NULL;
    unsigned char *Q = NULL;
    CHK(cudaMalloc((void **)&RA, nr), "cudaMalloc RA");
    CHK(cudaMalloc((void **)&RB, nr), "cudaMalloc RB");
    CHK(cudaMalloc((void **)&P, 4 * (size_t)mbp * (size_t)mbp), "cudaMalloc P");
    CHK(cudaMalloc((void **)&Q, nq), "cudaMalloc Q");
    fill_i8(RA, nr, 11);
    fill_i8(RB, nr, 12);
    const int fused_ok = tn_cuda_oz2_fused_ok(c, nmod, mbp, mbp, kp);
    if (!fused_ok) printf("    the fused kernel cannot run here (not sm_90, or the shape)\n");
    cudaEvent_t e0, e1;
    CHK(cudaEventCreate(&e0), "event");
    CHK(cudaEventCreate(&e1), "event");
    double *t[3];
    for (int p = 0; p < 3; p++) t[p] = calloc((size_t)reps, sizeof(double));
    /* the cuBLASLt path's bytes, kept on the host for the comparison */
    unsigned char *q0 = malloc(nq), *q1 = malloc(nq);
    if (!q0 || !q1 || !t[0] || !t[1] || !t[2]) exit(1);
    int eq = -1, eqv[3] = {-1, -1, -1};
    for (int p = 0; p < 3; p++) { /* warm-ups (cuBLASLt's timing choice), bytes */
        if (p >= 1 && !fused_ok) break;
CHK(cudaMemset(Q, 0x5a + p, nq), "memset");
        for (int w = 0; w < (p ? 1 : 3); w++)
            CHK(tn_cuda_oz2_products(c, p, &cs, mbp, mbp, kp, RA, RB, P, Q), "products");
        CHK(cudaStreamSynchronize(c->stream), "sync");
        CHK(cudaMemcpy(p ? q1 : q0, Q, nq, cudaMemcpyDeviceToHost), "copy Q");
        if (p) eqv[p] = memcmp(q0, q1, nq) == 0;
    }
    if (fused_ok) eq = eqv[1] && eqv[2];
    for (int r = 0; r < reps; r++)
        for (int p = 0; p < 3; p++) {
            if (p >= 1 && !fused_ok) continue;
            CHK(cudaEventRecord(e0, c->stream), "record");
            CHK(tn_cuda_oz2_products(c, p, &cs, mbp, mbp, kp, RA, RB, P, Q), "products");
            CHK(cudaEventRecord(e1, c->stream), "record");
            CHK(cudaEventSynchronize(e1), "sync");
            float ms = 0;
            CHK(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
            t[p][r] = ms;
        }
    const double ops = 2.0 * (double)S * (double)S * (double)S * nmod;
    for (int p = 0; p < 3; p++) {
        if (p >= 1 && !fused_ok) continue;
        const double ms = median(t[p], reps);
        row(f, gpu, S, nmod,
            p == 0 ? "products_cublaslt" : p == 1 ? "products_fused" : "products_fused_1cta", ms,
            ops / (ms * 1e9), -1, p ? eqv[p] : -1);
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    cudaFree(RA), cudaFree(RB), cudaFree(P), cudaFree(Q);
    free(t[0]), free(t[1]), free(t[2]), free(q0), free(q1);
    return eq == 0;
}

/* the whole DGEMM: scheme II DP through both paths, and cuBLAS DGEMM */
static int bench_dgemm(tcnla_handle_t h, FILE *f, const char *gpu, int64_t S, int reps) {
    const size_t ne = (size_t)S * (size_t)S;
    double *hA = malloc(8 * ne), *hB = malloc(8 * ne), *c0 = malloc(8 * ne), *c1 = malloc(8 * ne);
    if (!hA || !hB || !c0 || !c1) exit(1);
    tn_rand_phi(31, 1, 1.0, (int64_t)ne, hA);
    tn_rand_phi(31, 2, 1.0, (int64_t)ne, hB);
    double *A = NULL, *B = NULL, *C = NULL;
    CHK(tcnla_malloc(h, (void **)&A, 8 * ne), "malloc A");
    CHK(tcnla_malloc(h, (void **)&B, 8 * ne), "malloc B");
    CHK(tcnla_malloc(h, (void **)&C, 8 * ne), "malloc C");
    CHK(tcnla_memcpy(h, A, hA, 8 * ne, TCNLA_MEMCPY_HOST_TO_HANDLE), "copy A");
    CHK(tcnla_memcpy(h, B, hB, 8 * ne, TCNLA_MEMCPY_HOST_TO_HANDLE), "copy B");
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = TCNLA_OZAKI_DP;
    o.scheme = TCNLA_OZAKI_SCHEME_2;
    CHK(tcnla_set_ozaki_opts(h, &o), "ozaki opts");
    cublasHandle_t cb;
    CHK(cublasCreate(&cb), "cublasCreate");
    CHK(cublasSetStream(cb, h->cuda->stream), "cublasSetStream");
    tcnla_tuning_t tu;
    CHK(tcnla_get_tuning(h, &tu), "get tuning");
    const int fused_ok = tn_cuda_oz2_fused_ok(h->cuda, 15, (S + 31) / 32 * 32,
                                              (S + 31) / 32 * 32, (S + 31) / 32 * 32);
    double *t[3];
    int nmod[2] = {0, 0};
    for (int p = 0; p < 3; p++) t[p] = calloc((size_t)reps, sizeof(double));
    const double one = 1.0, zero = 0.0;
    for (int r = -1; r < reps; r++) /* r = -1: warm-up */
        for (int p = 0; p < 3; p++) {
            if (p == 1 && !fused_ok) continue;
            tcnla_info_t info;
            memset(&info, 0, sizeof info);
            CHK(tcnla_synchronize(h), "sync");
            const double t0 = bench_now();
            if (p < 2) {
                tu.oz2_fused = p;
                CHK(tcnla_set_tuning(h, &tu), "set tuning");
                CHK(tcnla_dgemm_ex(h, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, S, S, S, 1.0,
                                   A, S, B, S, 0.0, C, S, &info),
                    "tcnla_dgemm");
            } else {
                CHK(cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, (int)S, (int)S, (int)S, &one, A,
                                (int)S, B, (int)S, &zero, C, (int)S),
                    "cublasDgemm");
            }
            CHK(tcnla_synchronize(h), "sync");
            const double dt = bench_now() - t0;
            if (r >= 0) t[p][r] = dt;
            if (p < 2) {
                nmod[p] = info.ozaki_scheme == 2 ? info.ozaki_d : -info.ozaki_scheme;
                if (r < 0)
                    CHK(tcnla_memcpy(h, p ? c1 : c0, C, 8 * ne, TCNLA_MEMCPY_HANDLE_TO_HOST),
                        "copy C");
            }
        }
    const int eq = fused_ok ? memcmp(c0, c1, 8 * ne) == 0 : -1;
    const double flops = 2.0 * (double)S * (double)S * (double)S;
    const double td = median(t[2], reps);
    for (int p = 0; p < 3; p++) {
        if (p == 1 && !fused_ok) continue;
        const double s = median(t[p], reps);
        const char *what = p == 0 ? "dgemm_oz2_cublaslt" : p == 1 ? "dgemm_oz2_fused" : "cublas_dgemm";
        row(f, gpu, S, p < 2 ? nmod[p] : 0, what, 1e3 * s, flops / (s * 1e12), td / s,
            p == 1 ? eq : -1);
    }
    tu.oz2_fused = 1;
    tcnla_set_tuning(h, &tu);
    cublasDestroy(cb);
    tcnla_free(h, A), tcnla_free(h, B), tcnla_free(h, C);
    free(hA), free(hB), free(c0), free(c1);
    for (int p = 0; p < 3; p++) free(t[p]);
    return eq == 0;
}

int main(int argc, char **argv) {
    const char *sizes = "4096,8192,16384", *out = "bench/results/ozaki_fused.csv";
    int nmod = 15, reps = 5, dgemm = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else if (!strcmp(argv[i], "--moduli") && i + 1 < argc) nmod = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--no-dgemm")) dgemm = 0;
        else {
            printf("usage: %s [--sizes 4096,8192,16384] [--moduli 15] [--reps 5] [--no-dgemm]\n"
                   "       [--out bench/results/ozaki_fused.csv]\n",
                   argv[0]);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (nmod < 1 || nmod > TN_OZ2_MAXN || reps < 1) {
        fprintf(stderr, "%s: --moduli 1..%d, --reps >= 1\n", BENCH_NAME, TN_OZ2_MAXN);
        return 2;
    }
    tcnla_handle_t h = NULL;
    CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create");
    char gpu[128] = "";
    tcnla_device_name(h, gpu, sizeof gpu);
    for (char *p = gpu; *p; p++)
        if (*p == ',') *p = ' ';
    FILE *probe = fopen(out, "r");
    const int fresh = probe == NULL;
    if (probe) fclose(probe);
    FILE *f = fopen(out, "a");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", BENCH_NAME, out);
        return 1;
    }
    if (fresh) fprintf(f, "gpu,m,n,k,moduli,what,ms,tops,x_dgemm,bits_equal\n");
    printf("%s: %s, %d moduli, %d reps; fused kernel %s\n", BENCH_NAME, gpu, nmod, reps,
           tn_cuda_oz2_fused_ok(h->cuda, nmod, 4096, 4096, 4096) ? "available" : "not available");
    int bad = 0;
    for (const char *p = sizes; p && *p;) {
        const int64_t S = atoll(p);
        if (S > 0) {
            bad |= bench_products(h, f, gpu, S, nmod, reps);
            if (dgemm) bad |= bench_dgemm(h, f, gpu, S, reps);
        }
        p = strchr(p, ',');
        if (p) p++;
    }
    fclose(f);
    tcnla_destroy(h);
    if (bad) printf("%s: the two paths gave different bits\n", BENCH_NAME);
    return bad;
}
#else
int main(void) {
    printf("bench_oz2_fused needs a CUDA build (make CUDA=1)\n");
    return 0;
}
#endif
