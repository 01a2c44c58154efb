// The cuBLASLt epilogues the hook computes after tcnla's product (bias,
// ReLU, GELU in its tanh form, as cuBLASLt's CUBLASLT_EPILOGUE_GELU), and
// the copy of C into D where they differ. FP32, column-major, strided
// batches; grid-stride loops over the elements of each matrix.
#include "internal.h"

namespace {

__device__ __forceinline__ float gelu_tanh(float x) {
    const float k0 = 0.7978845608028654f; // sqrt(2 / pi)
    const float k1 = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
}

__global__ void epilogue_kernel(float *D, int64_t ldd, int64_t sD, int64_t m, int64_t n,
                                const float *bias, int64_t bias_stride, int relu, int gelu) {
    const int64_t b = blockIdx.y;
    float *Db = D + b * sD;
    const float *bb = bias ? bias + b * bias_stride : nullptr;
    const int64_t total = m * n;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = t % m, j = t / m;
        float x = Db[i + j * ldd];
        if (bb) x = x + bb[i];
        if (relu) x = x > 0.0f ? x : 0.0f;
        if (gelu) x = gelu_tanh(x);
        Db[i + j * ldd] = x;
    }
}

__global__ void copy_kernel(const float *C, int64_t ldc, int64_t sC, float *D, int64_t ldd,
                            int64_t sD, int64_t m, int64_t n) {
    const int64_t b = blockIdx.y;
    const int64_t total = m * n;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = t % m, j = t / m;
        D[b * sD + i + j * ldd] = C[b * sC + i + j * ldc];
    }
}

dim3 grid_for(int64_t m, int64_t n, int64_t batch) {
    int64_t blocks = (m * n + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    if (blocks < 1) blocks = 1;
    return dim3((unsigned)blocks, (unsigned)batch, 1);
}

} // namespace

extern "C" int tci_epilogue(float *D, int64_t ldd, int64_t sD, int64_t m, int64_t n,
                            int64_t batch, const float *bias, int64_t bias_stride, int relu,
                            int gelu, cudaStream_t s) {
    if (m <= 0 || n <= 0 || batch <= 0) return (int)cudaSuccess;
    if (batch > 65535) return (int)cudaErrorInvalidConfiguration;
    epilogue_kernel<<<grid_for(m, n, batch), 256, 0, s>>>(D, ldd, sD, m, n, bias, bias_stride,
                                                          relu, gelu);
    return (int)cudaGetLastError();
}

extern "C" int tci_copy(const float *C, int64_t ldc, int64_t sC, float *D, int64_t ldd,
                        int64_t sD, int64_t m, int64_t n, int64_t batch, cudaStream_t s) {
    if (m <= 0 || n <= 0 || batch <= 0) return (int)cudaSuccess;
    if (batch > 65535) return (int)cudaErrorInvalidConfiguration;
    copy_kernel<<<grid_for(m, n, batch), 256, 0, s>>>(C, ldc, sC, D, ldd, sD, m, n);
    return (int)cudaGetLastError();
}
