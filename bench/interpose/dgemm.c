/* An ordinary cuBLAS program (no tcnla): C = A B with cublasDgemm_v2 at
 * n x n x n, A and B with entries (u - 0.5) exp(phi g), u uniform, g
 * normal (phi = 0.5: the exponent spread of [Mukunoki et al. 2020]'s
 * tests). bench/interpose/run.sh runs it with and without
 * LD_PRELOAD=libtcnla_cublas.so. Prints one JSON line:
 *   {"program": "c_dgemm", "op": "cublasDgemm_v2", "m": n, "n": n, "k": n,
 *    "seconds": best of REPS, "rel_err": ...}
 * rel_err: relative Frobenius error over 512 sampled entries against
 * references summed in binary128 (__float128) on the host.
 *   bench_interpose_dgemm N [REPS] */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        if ((x) != 0) {                                                                            \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                         \
            return 2;                                                                              \
        }                                                                                          \
    } while (0)

static uint64_t s = 88172645463325252ULL;
static double u01(void) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return ((double)(s >> 11) + 0.5) * 0x1.0p-53;
}
static double entry(double phi) {
    const double g = sqrt(-2 * log(u01())) * cos(6.283185307179586 * u01());
    return (u01() - 0.5) * exp(phi * g);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_interpose_dgemm N [REPS]\n");
        return 2;
    }
    const int n = atoi(argv[1]), reps = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || reps < 1) return 2;
    const size_t nn = (size_t)n * n;
    double *A = malloc(nn * 8), *B = malloc(nn * 8), *C = malloc(nn * 8);
    if (!A || !B || !C) return 2;
    for (size_t i = 0; i < nn; i++) A[i] = entry(0.5);
    for (size_t i = 0; i < nn; i++) B[i] = entry(0.5);
    double *dA, *dB, *dC;
    CK(cudaMalloc((void **)&dA, nn * 8));
    CK(cudaMalloc((void **)&dB, nn * 8));
    CK(cudaMalloc((void **)&dC, nn * 8));
    CK(cudaMemcpy(dA, A, nn * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B, nn * 8, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    CK(cublasCreate(&h));
    const double one = 1, zero = 0;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n));
    CK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int r = 0; r < reps; r++) {
        float ms;
        CK(cudaEventRecord(e0, 0));
        CK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    CK(cudaMemcpy(C, dC, nn * 8, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int t = 0; t < 512; t++) {
        const int i = (int)(u01() * n), j = (int)(u01() * n);
        __float128 acc = 0;
        for (int l = 0; l < n; l++) acc += (__float128)A[i + (size_t)l * n] * B[l + (size_t)j * n];
        const double r = (double)acc, d = (double)((__float128)C[i + (size_t)j * n] - acc);
        num += d * d, den += r * r;
    }
    printf("{\"program\": \"c_dgemm\", \"op\": \"cublasDgemm_v2\", \"m\": %d, \"n\": %d, "
           "\"k\": %d, \"seconds\": %.6e, \"rel_err\": %.4e}\n",
           n, n, n, best * 1e-3, sqrt(num / den));
    cublasDestroy(h);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(A), free(B), free(C);
    return 0;
}
