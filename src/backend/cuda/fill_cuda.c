/* tcnla_random_fill on the CUDA backend: one kernel, no host round trip; on
 * the side stream (one block per SM) while the call has one (tn_side_begin). */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"

#include <math.h>

int tn_cu_random_fill(int dist, int fmt, int f16, uint64_t seed, uint64_t stream, int64_t rows,
                      int64_t cols, double sparse_p, void *X, int64_t ld, int max_blocks,
                      cudaStream_t s);

int tn_cuda_random_fill(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                        uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                        int64_t ld) {
    double s = dist == TCNLA_RAND_SPARSE3 ? 3.0 : sqrt((double)(rows > 1 ? rows : 1));
    int e = tn_cu_random_fill((int)dist, (int)fmt, f16, seed, stream, rows, cols, 1.0 / (2.0 * s),
                              X, ld, cl->side ? cl->h->cuda->sm_count : 0,
                              tn_cuda_call_stream(cl));
    return tn_cuda_err((cudaError_t)e);
}
