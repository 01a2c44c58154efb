/* The trust check (tn_cu_trust_check) and the Cholesky factorization
 * (tn_cu_potrf_upper) of one revision of src/backend/cuda/kernels/util.cu
 * and cholqr_kernels.cu, alone: compiled with those two files only (no
 * libtcnla), so that two revisions build side by side
 * (bench/fixed_costs_run.sh) and their outputs compare byte for byte:
 *   trust: the 64 flags of the bounded and the exact pass (kinds HALFHALF
 *          tol 21 and F16 tol 10, the randomized SVD's; the exact pass also
 *          MARKIDIS tol 21) on uniform(-1, 1) data, that data with every
 *          fifth element times 1e-6, a row times 1e-6, a 7e4, a NaN; shapes
 *          16384^2 and small ones with odd leading dimensions and offsets;
 *   potrf: info, R's upper triangle and diag on the Gram matrix Y^T Y of a
 *          uniform 2n x n Y (FP64, n = 1 .. 1024), and on one whose column
 *          200 repeats column 100 (a breakdown at a later step).
 * Writes them to OUTFILE; prints a line per case with the kernel's median
 * time (CUDA events, --reps runs).
 *   fixed_costs_bits OUTFILE [--reps R] */
#include "backend/cuda/tn_cuda.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (cudaError_t)(x);                                                     \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "fixed_costs_bits: %s (line %d): %s\n", #x, __LINE__,              \
                    cudaGetErrorString(e_));                                                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static uint64_t rng_state;
static double urand(void) { /* uniform [0, 1), xorshift64* */
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) * 0x1p-53;
}

static int cmpf(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static FILE *out;

static void trust_case(const char *name, int64_t rows, int64_t cols, int64_t ld, int64_t off,
                       int variant, int reps, int sm, float *dbuf, int *dfl, void *scr) {
    const int64_t len = off + ld * cols;
    float *X = (float *)malloc(sizeof(float) * (size_t)len);
    rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(rows * 31 + cols * 7 + variant);
    for (int64_t i = 0; i < len; i++) X[i] = (float)(2.0 * urand() - 1.0);
    if (variant >= 1)
        for (int64_t i = 0; i < len; i += 5) X[i] *= 1e-6f;
    if (variant == 2)
        for (int64_t j = 0; j < cols; j++) X[off + 7 + j * ld] *= 1e-6f;
    if (variant == 3) X[off + rows - 1 + (cols - 1) * ld] = 7e4f;
    if (variant == 4) X[off + rows / 2 + (cols / 2) * ld] = NAN;
    CK(cudaMemcpy(dbuf, X, sizeof(float) * (size_t)len, cudaMemcpyHostToDevice));
    free(X);
    tn_elem_kinds_t kk;
    memset(&kk, 0, sizeof kk);
    int tol[4] = {21, 10, 21, 0};
    kk.kind[0] = TN_RCHK_HALFHALF, kk.kind[1] = TN_RCHK_F16, kk.kind[2] = TN_RCHK_MARKIDIS;
    for (int j = 0; j < 3; j++) kk.scale[j] = ldexp(1.0, -tol[j]), kk.fast[j] = tn_rchk_fast(kk.kind[j], tol[j]);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float *t = (float *)malloc(sizeof(float) * (size_t)reps);
    for (int bounded = 1; bounded >= 0; bounded--) {
        kk.n = bounded ? 2 : 3;
        int hf[64];
        for (int r = -1; r < reps; r++) {
            CK(cudaMemsetAsync(dfl, 0, 64 * sizeof(int), 0));
            CK(cudaEventRecord(e0, 0));
            CK(tn_cu_trust_check(dbuf + off, ld, rows, cols, &kk, tol, bounded, dfl, scr, sm, 0));
            CK(cudaEventRecord(e1, 0));
            CK(cudaEventSynchronize(e1));
            if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
        }
        CK(cudaMemcpy(hf, dfl, sizeof hf, cudaMemcpyDeviceToHost));
        qsort(t, (size_t)reps, sizeof(float), cmpf);
        const double us = 1e3 * t[reps / 2];
        printf("trust %-8s %6lld x %6lld ld %6lld %-7s %9.1f us %7.1f GB/s flags", name,
               (long long)rows, (long long)cols, (long long)ld, bounded ? "bounded" : "exact", us,
               4.0 * rows * cols / us * 1e-3);
        for (int i = 0; i < 26; i++) printf("%d", hf[i] != 0);
        printf("\n");
        fprintf(out, "trust %s %lld %lld %d %d:", name, (long long)rows, (long long)cols, variant,
                bounded);
        for (int i = 0; i < 64; i++) fprintf(out, " %d", hf[i]);
        fprintf(out, "\n");
    }
    free(t);
    cudaEventDestroy(e0), cudaEventDestroy(e1);
}

static void potrf_case(int n, int dup, int reps, int sm) {
    const int m = 2 * n;
    double *Y = (double *)malloc(sizeof(double) * (size_t)m * n);
    double *G = (double *)malloc(sizeof(double) * (size_t)n * n);
    double *R = (double *)malloc(sizeof(double) * (size_t)n * n);
    double *dg = (double *)malloc(sizeof(double) * (size_t)n);
    rng_state = 0x2545f4914f6cdd1dULL ^ (uint64_t)(n * 3 + dup);
    for (int64_t i = 0; i < (int64_t)m * n; i++) Y[i] = 2.0 * urand() - 1.0;
    if (dup)
        for (int i = 0; i < m; i++) Y[i + 200 * (int64_t)m] = Y[i + 100 * (int64_t)m];
    for (int j = 0; j < n; j++) /* the upper triangle, zeros below */
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            if (i <= j)
                for (int p = 0; p < m; p++) s += Y[p + (int64_t)i * m] * Y[p + (int64_t)j * m];
            G[i + (int64_t)j * n] = s;
        }
    double *dG0, *dGw, *dR, *ddg;
    int *dinfo, info = 0;
    unsigned *dbar;
    const size_t nn = sizeof(double) * (size_t)n * n;
    CK(cudaMalloc((void **)&dG0, nn));
    CK(cudaMalloc((void **)&dGw, nn));
    CK(cudaMalloc((void **)&dR, nn));
    CK(cudaMalloc((void **)&ddg, sizeof(double) * (size_t)n));
    CK(cudaMalloc((void **)&dinfo, sizeof(int)));
    CK(cudaMalloc((void **)&dbar, sizeof(unsigned)));
    CK(cudaMemcpy(dG0, G, nn, cudaMemcpyHostToDevice));
    CK(cudaMemset(dR, 0, nn));
    CK(cudaMemset(ddg, 0, sizeof(double) * (size_t)n));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float *t = (float *)malloc(sizeof(float) * (size_t)reps);
    for (int r = -2; r < reps; r++) {
        CK(cudaMemcpyAsync(dGw, dG0, nn, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e0, 0));
        CK(tn_cu_potrf_upper(n, dGw, n, dR, ddg, dinfo, dbar, sm, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    CK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(R, dR, nn, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(dg, ddg, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost));
    qsort(t, (size_t)reps, sizeof(float), cmpf);
    uint64_t hsh = 1469598103934665603ULL; /* FNV-1a over R's upper triangle and diag */
    fprintf(out, "potrf %d %d info %d\n", n, dup, info);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i <= j; i++) {
            uint64_t b;
            memcpy(&b, &R[i + (int64_t)j * n], 8);
            fprintf(out, "%016llx\n", (unsigned long long)b);
            for (int k = 0; k < 8; k++) hsh = (hsh ^ ((b >> (8 * k)) & 255u)) * 1099511628211ULL;
        }
        uint64_t b;
        memcpy(&b, &dg[j], 8);
        fprintf(out, "d %016llx\n", (unsigned long long)b);
        for (int k = 0; k < 8; k++) hsh = (hsh ^ ((b >> (8 * k)) & 255u)) * 1099511628211ULL;
    }
    printf("potrf n %5d%s %9.1f us info %d hash %016llx\n", n, dup ? " (dup)" : "      ",
           1e3 * t[reps / 2], info, (unsigned long long)hsh);
    free(t), free(Y), free(G), free(R), free(dg);
    cudaFree(dG0), cudaFree(dGw), cudaFree(dR), cudaFree(ddg), cudaFree(dinfo), cudaFree(dbar);
    cudaEventDestroy(e0), cudaEventDestroy(e1);
}

int main(int argc, char **argv) {
    int reps = 20;
    if (argc < 2) {
        fprintf(stderr, "usage: fixed_costs_bits OUTFILE [--reps R]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
    if (reps < 1 || reps > 10000) {
        fprintf(stderr, "fixed_costs_bits: --reps 1..10000\n");
        return 2;
    }
    out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "fixed_costs_bits: cannot open %s\n", argv[1]);
        return 1;
    }
    int sm = 0;
    CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
    const int64_t big = 16384;
    float *dbuf;
    int *dfl;
    void *scr;
    CK(cudaMalloc((void **)&dbuf, sizeof(float) * (size_t)(big * big + 8)));
    CK(cudaMalloc((void **)&dfl, 64 * sizeof(int)));
    CK(cudaMalloc(&scr, tn_cu_trust_check_scratch(big, big)));
    trust_case("uniform", big, big, big, 0, 0, reps, sm, dbuf, dfl, scr);
    trust_case("small5", big, big, big, 0, 1, reps, sm, dbuf, dfl, scr);
    const int64_t sh[4][4] = {{2053, 301, 2056, 0}, {1500, 700, 1501, 1}, {64, 3000, 64, 0},
                              {3000, 40, 3001, 3}};
    const char *vn[5] = {"uniform", "small5", "smallrow", "big", "nan"};
    for (int s = 0; s < 4; s++)
        for (int v = 0; v < 5; v++)
            trust_case(vn[v], sh[s][0], sh[s][1], sh[s][2], sh[s][3], v, 3, sm, dbuf, dfl, scr);
    cudaFree(dbuf), cudaFree(dfl), cudaFree(scr);
    const int ns[] = {1, 31, 32, 33, 64, 100, 266, 300, 512, 1024};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        potrf_case(ns[i], 0, ns[i] >= 266 ? reps : 5, sm);
    potrf_case(300, 1, 5, sm);
    fclose(out);
    return 0;
}
