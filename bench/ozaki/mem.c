/* bench_ozaki_mem: the memory-bound kernels of Ozaki scheme II on the CUDA
 * backend (src/backend/cuda/kernels/ozaki2_kernels.cu), each alone, through
 * the launchers that src/backend/cuda/ozaki2_cuda.c calls:
 *   plan         DP mode's passes as plan() issues them: the scans of B
 *                (its blocks' norm bounds, w) and of A (blocks, z, g with
 *                w), A's vectors (E, S, g, sigma, need), g of B with z,
 *                B's vectors; bytes = 3 reads of an operand
 *   residues_A   the residues of op(A) = A (m x k, column-major: the vectors
 *                are rows, read across the columns, transposed in the tile)
 *   residues_B   the residues of op(B) = B (k x n, column-major: the vectors
 *                are columns, contiguous); bytes = the operand read + the
 *                int8 residues of every modulus written
 *   reconstruct  C (FP64 for FP64 inputs, FP32 for FP32) from the uint8
 *                products of every modulus, beta = 0; bytes = the products
 *                read + C written
 * m = n = k = N; A, B Gaussian (cuRAND). Moduli: 16 for N <= 8192, 15
 * above (DP mode at phi = 0.5 picks these); h = hA = the plan's split of
 * log2 P - 2 for FP64 inputs (h + 1 > 36: the residues use the 2^36 split),
 * h = 30 for FP32 inputs (h + 1 <= 36, as DP mode gives FP32 data). The
 * products Q are random bytes (the reconstruction's work does not depend on
 * their values); sigma comes from the timed plan.
 * Timing: one warm-up run, then the median of --reps runs, each between two
 * CUDA events on one stream. GB/s = bytes / median time (1 GB = 1e9 bytes).
 * Rows appended to the CSV (default bench/results/ozaki_mem.csv):
 *   gpu,kernel,in_prec,n,moduli,h,ms,gbytes,gbps
 *
 *   build/bench_ozaki_mem [--sizes 4096,8192,16384] [--precs f64,f32] [--reps 5]
 *                         [--kernels plan,residues_A,residues_B,reconstruct]
 *                         [--out CSV]
 * (all four by default) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_ozaki_mem"
#include "../bench_util.h"

#ifndef TCNLA_HAVE_CUDA
int main(void) {
    fprintf(stderr, "%s: needs the CUDA backend (build with CUDA=1)\n", BENCH_NAME);
    return 2;
}
#else
#include <cuda_runtime.h>
#include <curand.h>

#include "gemm/ozaki2.h"

#include "backend/cuda/kernels/ozaki2_launch.h"

typedef struct {
    int64_t n, kp;
    int f32, nmod, hA, hB;
    tn_oz2_consts_t cs;
    void *A, *B, *C;
    signed char *R;
    unsigned char *Q;
    int *E, *sig, *bad;
    unsigned long long *S, *q;
    int *need;
    double *g, *w, *z, *part, *wn, *gpart;
    int *CE;
    unsigned long long *CS;
    cudaStream_t st;
} ctx_t;

static int parse_list(const char *s, int64_t *v, int max) {
    int n = 0;
    while (*s && n < max) {
        v[n++] = strtoll(s, (char **)&s, 10);
        if (*s == ',') s++;
        else break;
    }
    return n;
}

static int run_plan(ctx_t *c) {
    const int64_t n = c->n;
    const int tb = tn_oz2_tbits(n);
    const int cl = tn_oz2_dp_culog2(c->f32 ? 32 : 64);
    const int64_t nch = (n + TN_OZ2_BLEN - 1) / TN_OZ2_BLEN;
    int *CEb = c->CE + nch * n;
    unsigned long long *CSb = c->CS + nch * n;
    int st = tn_oz2_scan(c->B, c->f32, n, 1, n, n, tb, CEb, CSb, c->part, c->w, c->wn, NULL, NULL,
                         c->st);
    if (!st)
        st = tn_oz2_scan(c->A, c->f32, 1, n, n, n, tb, c->CE, c->CS, c->part, c->z, c->wn + 1, c->w,
                         c->gpart, c->st);
    if (!st)
        st = tn_oz2_vectors(c->CE, c->CS, c->gpart, nch, n, tb, c->E, c->S, c->g, c->wn, cl, c->sig,
                            c->q, c->need, c->bad, c->st);
    if (!st) st = tn_oz2_gsum(c->B, c->f32, n, 1, n, n, c->z, c->part, c->g + n, c->st);
    if (!st)
        st = tn_oz2_vectors(CEb, CSb, NULL, nch, n, tb, c->E + n, c->S + n, c->g + n, c->wn + 1, cl,
                            c->sig + n, c->q + 1, c->need + 1, c->bad, c->st);
    return st;
}

static int run_kernel(ctx_t *c, int which) {
    const int64_t n = c->n;
    switch (which) {
    case 0: return run_plan(c);
    case 1:
        return tn_oz2_residues(c->A, c->f32, 1, n, n, n, 0, c->kp, c->kp, c->sig, c->hA,
                               c->hA + 1, &c->cs, c->R, c->st);
    case 2:
        return tn_oz2_residues(c->B, c->f32, n, 1, n, n, 0, c->kp, c->kp, c->sig + n, c->hB,
                               c->hB + 1, &c->cs, c->R, c->st);
    default:
        return tn_oz2_launch_reconstruct(c->Q, c->kp, c->kp, n, n, &c->cs, c->sig, c->sig + n,
                                         c->hA + c->hB, 1.0, 0.0, c->C, n, c->f32, c->st);
    }
}

static double bytes_of(const ctx_t *c, int which) {
    const double n = (double)c->n, es = c->f32 ? 4 : 8, kp = (double)c->kp;
    const double opnd = n * n * es;
    switch (which) {
    case 0: return 3 * opnd;
    case 1:
    case 2: return opnd + (double)c->nmod * kp * kp;
    default: return (double)c->nmod * kp * kp + n * n * es;
    }
}

int main(int argc, char **argv) {
    int64_t sizes[8] = {4096, 8192, 16384};
    int nsz = 3, reps = 5;
    const char *out = "bench/results/ozaki_mem.csv", *precs = "f64,f32",
               *kernels = "plan,residues_A,residues_B,reconstruct";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsz = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--precs") && i + 1 < argc) precs = argv[++i];
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) kernels = argv[++i];
        else {
            printf("usage: %s [--sizes N,..] [--precs f64,f32] [--reps R]\n"
                   "       [--kernels plan,residues_A,residues_B,reconstruct] [--out CSV]\n",
                   argv[0]);
            return !strcmp(argv[i], "--help") ? 0 : 2;
        }
    }
    if (nsz < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "%s: bad --sizes or --reps\n", BENCH_NAME);
        return 2;
    }
    for (int i = 0; i < nsz; i++)
        if (sizes[i] < 32 || sizes[i] > 32768 || sizes[i] % 2) {
            fprintf(stderr, "%s: sizes must be even, in [32, 32768]\n", BENCH_NAME);
            return 2;
        }
    struct cudaDeviceProp prop;
    CHK(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    FILE *csv = fopen(out, "a");
    if (!csv) {
        fprintf(stderr, "%s: cannot open %s\n", BENCH_NAME, out);
        return 1;
    }
    if (ftell(csv) == 0) fprintf(csv, "gpu,kernel,in_prec,n,moduli,h,ms,gbytes,gbps\n");
    static const char *const names[4] = {"plan", "residues_A", "residues_B", "reconstruct"};
    printf("%s on %s\n%-14s %-4s %6s %3s %4s %10s %9s %8s\n", BENCH_NAME, prop.name, "kernel",
           "in", "n", "mod", "h", "ms", "GB", "GB/s");
    curandGenerator_t gen;
    CHK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
    CHK(curandSetPseudoRandomGeneratorSeed(gen, 20250601ull), "curandSetSeed");
    for (int si = 0; si < nsz; si++)
        for (int f32 = 0; f32 < 2; f32++) {
            if (!bench_in_list(precs, f32 ? "f32" : "f64")) continue;
            ctx_t c;
            memset(&c, 0, sizeof c);
            const int64_t n = sizes[si], es = f32 ? 4 : 8;
            c.n = n, c.f32 = f32, c.kp = (n + 31) / 32 * 32;
            c.nmod = n <= 8192 ? 16 : 15;
            tn_oz2_consts(c.nmod, &c.cs);
            const int L = tn_oz2_log2p(c.nmod) - 2;
            c.hA = f32 ? 30 : L / 2;
            c.hB = f32 ? 30 : L - c.hA;
            const size_t nn = (size_t)n * (size_t)n, nm = (size_t)c.nmod * (size_t)c.kp * (size_t)c.kp;
            CHK(cudaStreamCreate(&c.st), "cudaStreamCreate");
            CHK(cudaMalloc(&c.A, es * nn), "cudaMalloc A");
            CHK(cudaMalloc(&c.B, es * nn), "cudaMalloc B");
            CHK(cudaMalloc(&c.C, es * nn), "cudaMalloc C");
            CHK(cudaMalloc((void **)&c.R, nm), "cudaMalloc R");
            CHK(cudaMalloc((void **)&c.Q, nm), "cudaMalloc Q");
            CHK(cudaMalloc((void **)&c.E, 4 * 2 * (size_t)n), "cudaMalloc E");
            CHK(cudaMalloc((void **)&c.sig, 4 * 2 * (size_t)n), "cudaMalloc sig");
            CHK(cudaMalloc((void **)&c.S, 8 * 2 * (size_t)n), "cudaMalloc S");
            CHK(cudaMalloc((void **)&c.g, 8 * 2 * (size_t)n), "cudaMalloc g");
            CHK(cudaMalloc((void **)&c.w, 8 * (size_t)n), "cudaMalloc w");
            CHK(cudaMalloc((void **)&c.z, 8 * (size_t)n), "cudaMalloc z");
            CHK(cudaMalloc((void **)&c.part, 8 * 64 * (size_t)n), "cudaMalloc part");
            const size_t nch = (size_t)((n + TN_OZ2_BLEN - 1) / TN_OZ2_BLEN);
            CHK(cudaMalloc((void **)&c.CE, 4 * 2 * nch * (size_t)n), "cudaMalloc CE");
            CHK(cudaMalloc((void **)&c.CS, 8 * 2 * nch * (size_t)n), "cudaMalloc CS");
            CHK(cudaMalloc((void **)&c.gpart, 8 * nch * (size_t)n), "cudaMalloc gpart");
            CHK(cudaMalloc((void **)&c.q, 16), "cudaMalloc q");
            CHK(cudaMalloc((void **)&c.need, 8), "cudaMalloc need");
            CHK(cudaMalloc((void **)&c.wn, 16), "cudaMalloc wn");
            CHK(cudaMalloc((void **)&c.bad, 4), "cudaMalloc bad");
            CHK(cudaMemset(c.bad, 0, 4), "cudaMemset");
            CHK(curandSetStream(gen, c.st), "curandSetStream");
            if (f32) {
                CHK(curandGenerateNormal(gen, (float *)c.A, nn, 0.0f, 1.0f), "curand A");
                CHK(curandGenerateNormal(gen, (float *)c.B, nn, 0.0f, 1.0f), "curand B");
            } else {
                CHK(curandGenerateNormalDouble(gen, (double *)c.A, nn, 0.0, 1.0), "curand A");
                CHK(curandGenerateNormalDouble(gen, (double *)c.B, nn, 0.0, 1.0), "curand B");
            }
            CHK(curandGenerate(gen, (unsigned int *)c.Q, nm / 4), "curand Q");
            CHK(run_plan(&c), "plan"); /* sigma for the residues and the reconstruction */
            CHK(cudaStreamSynchronize(c.st), "plan sync");
            cudaEvent_t e0, e1;
            CHK(cudaEventCreate(&e0), "cudaEventCreate");
            CHK(cudaEventCreate(&e1), "cudaEventCreate");
            for (int kk = 0; kk < 4; kk++) {
                if (!bench_in_list(kernels, names[kk])) continue;
                double t[100];
                CHK(run_kernel(&c, kk), names[kk]); /* warm-up */
                for (int r = 0; r < reps; r++) {
                    CHK(cudaEventRecord(e0, c.st), "cudaEventRecord");
                    CHK(run_kernel(&c, kk), names[kk]);
                    CHK(cudaEventRecord(e1, c.st), "cudaEventRecord");
                    CHK(cudaEventSynchronize(e1), "cudaEventSynchronize");
                    float ms = 0.0f;
                    CHK(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
                    t[r] = ms;
                }
                qsort(t, (size_t)reps, sizeof t[0], cmp_d);
                const double ms = t[reps / 2], gb = bytes_of(&c, kk) * 1e-9;
                const int h = kk == 2 ? c.hB : c.hA;
                printf("%-14s %-4s %6lld %3d %4d %10.3f %9.3f %8.1f\n", names[kk],
                       f32 ? "f32" : "f64", (long long)n, c.nmod, h, ms, gb, gb / (ms * 1e-3));
                fprintf(csv, "%s,%s,%s,%lld,%d,%d,%.4f,%.4f,%.1f\n", prop.name, names[kk],
                        f32 ? "f32" : "f64", (long long)n, c.nmod, h, ms, gb, gb / (ms * 1e-3));
                fflush(csv);
                fflush(stdout);
            }
            cudaEventDestroy(e0), cudaEventDestroy(e1);
            cudaFree(c.A), cudaFree(c.B), cudaFree(c.C), cudaFree(c.R), cudaFree(c.Q);
            cudaFree(c.E), cudaFree(c.sig), cudaFree(c.S), cudaFree(c.g), cudaFree(c.w);
            cudaFree(c.z), cudaFree(c.part), cudaFree(c.q), cudaFree(c.need), cudaFree(c.wn), cudaFree(c.bad);
            cudaFree(c.CE), cudaFree(c.CS), cudaFree(c.gpart);
            cudaStreamDestroy(c.st);
        }
    curandDestroyGenerator(gen);
    fclose(csv);
    return 0;
}
#endif
