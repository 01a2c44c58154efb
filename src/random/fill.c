/* tcnla_random_fill: random matrices for random projections ([Ootomo & Yokota 2023]
 * section 3), drawn as FP32/FP64 and rounded to a storage format. */
#include "core/internal.h"
#include "random/random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float round_to(tcnla_format_t fmt, float x) {
    switch (fmt) {
    case TCNLA_FMT_FP16: return tcnla_f16_to_f32(tcnla_f32_to_f16(x, TCNLA_ROUND_RN));
    case TCNLA_FMT_BF16: return tcnla_bf16_to_f32(tcnla_f32_to_bf16(x, TCNLA_ROUND_RN));
    case TCNLA_FMT_TF32: return tcnla_f32_to_tf32(x, TCNLA_ROUND_RN);
    case TCNLA_FMT_E4M3: return tcnla_e4m3_to_f32(tcnla_f32_to_e4m3(x, TCNLA_ROUND_RN, 1));
    case TCNLA_FMT_E5M2: return tcnla_e5m2_to_f32(tcnla_f32_to_e5m2(x, TCNLA_ROUND_RN, 1));
    case TCNLA_FMT_FP32:
    default: return x;
    }
}

/* The n = rows * cols values in linear order (element i + j * rows). */
static void draw(tcnla_rand_dist_t dist, uint64_t seed, uint64_t stream, int64_t rows, int64_t n,
                 float *out) {
    if (dist == TCNLA_RAND_GAUSSIAN) {
        tn_rand_normal(seed, stream, 0.0f, 1.0f, n, out);
        return;
    }
    if (dist == TCNLA_RAND_UNIFORM) {
        tn_rand_uniform(seed, stream, -1.0f, 1.0f, n, out);
        return;
    }
    /* sparse: P(+1) = P(-1) = 1 / (2s) */
    double s = dist == TCNLA_RAND_SPARSE3 ? 3.0 : sqrt((double)(rows > 1 ? rows : 1));
    double p = 1.0 / (2.0 * s);
    tn_rand_uniform(seed, stream, 0.0f, 1.0f, n, out);
    for (int64_t i = 0; i < n; i++) {
        double u = out[i];
        out[i] = u < p ? 1.0f : u < 2 * p ? -1.0f : 0.0f;
    }
}

/* Argument checks; `rows_arg` is the position of `rows` in the caller. */
static int check(tcnla_handle_t h, tcnla_rand_dist_t dist, int64_t rows, int64_t cols,
                 const void *X, int64_t ld, int rows_arg) {
    if (!h) return -1;
    if ((int)dist < 0 || (int)dist > (int)TCNLA_RAND_SPARSE_SQRT) return -2;
    if (rows < 0) return -rows_arg;
    if (cols < 0) return -(rows_arg + 1);
    if (!X && rows > 0 && cols > 0) return -(rows_arg + 2);
    if (ld < TN_MAX(1, rows)) return -(rows_arg + 3);
    return 0;
}

/* Draws, rounds and stores (element size esz: 4 = FP32 values, 2 = FP16 bits). */
static int fill(tcnla_handle_t h, tcnla_rand_dist_t dist, tcnla_format_t fmt, uint64_t seed,
                uint64_t stream, int64_t rows, int64_t cols, void *X, int64_t ld, size_t esz) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA)
        return tn_cuda_random_fill(h, dist, fmt, esz == 2, seed, stream, rows, cols, X, ld);
#endif
    size_t n = (size_t)rows * (size_t)cols;
    float *v = malloc(sizeof(float) * n);
    void *packed = esz == 2 ? malloc(2 * n) : NULL;
    if (!v || (esz == 2 && !packed)) {
        free(v);
        free(packed);
        return TCNLA_ERR_ALLOC;
    }
    draw(dist, seed, stream, rows, (int64_t)n, v);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) v[i] = round_to(fmt, v[i]);
    if (esz == 2) {
        uint16_t *p16 = packed;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) p16[i] = tcnla_f32_to_f16(v[i], TCNLA_ROUND_RN);
    }
    const char *src = esz == 2 ? (const char *)packed : (const char *)v;
    int st = TCNLA_SUCCESS;
    /* into the handle's memory (host memory here: the CPU backend) */
    if (ld == rows) {
        st = tcnla_memcpy(h, X, src, esz * n, TCNLA_MEMCPY_HOST_TO_HANDLE);
    } else {
        for (int64_t j = 0; j < cols && !st; j++)
            st = tcnla_memcpy(h, (char *)X + esz * (size_t)(j * ld), src + esz * (size_t)(j * rows),
                              esz * (size_t)rows, TCNLA_MEMCPY_HOST_TO_HANDLE);
    }
    free(v);
    free(packed);
    return st;
}

int tcnla_random_fill(tcnla_handle_t h, tcnla_rand_dist_t dist, tcnla_format_t fmt, uint64_t seed,
                      uint64_t stream, int64_t rows, int64_t cols, float *X, int64_t ld) {
    int st = check(h, dist, rows, cols, X, ld, 6);
    if (st) return st;
    if ((int)fmt < 0 || (int)fmt > (int)TCNLA_FMT_E5M2) return -3;
    return fill(h, dist, fmt, seed, stream, rows, cols, X, ld, 4);
}

int tcnla_random_fill_f16(tcnla_handle_t h, tcnla_rand_dist_t dist, uint64_t seed,
                          uint64_t stream, int64_t rows, int64_t cols, uint16_t *X, int64_t ld) {
    int st = check(h, dist, rows, cols, X, ld, 5);
    if (st) return st;
    return fill(h, dist, TCNLA_FMT_FP16, seed, stream, rows, cols, X, ld, 2);
}

int tn_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols, float *X,
                     int64_t ld) {
    if (fmt == TCNLA_FMT_FP32 || rows == 0 || cols == 0) return TCNLA_SUCCESS;
    (void)h;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA) return tn_cuda_round_inplace(h, fmt, rows, cols, X, ld);
#endif
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) X[i + j * ld] = round_to(fmt, X[i + j * ld]);
    return TCNLA_SUCCESS;
}

int tn_to_f16(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
              uint16_t *Y, int64_t ldy) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA) return tn_cuda_to_f16(h, rows, cols, X, ld, Y, ldy);
#endif
    (void)h;
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            Y[i + j * ldy] = tcnla_f32_to_f16(X[i + j * ld], TCNLA_ROUND_RN);
    return TCNLA_SUCCESS;
}

int tn_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A, int64_t lda,
                  const float *E, int64_t lde, float *D, uint16_t *D16, int64_t ldd) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
#ifdef TCNLA_HAVE_CUDA
    if (h->backend == TCNLA_BACKEND_CUDA)
        return tn_cuda_add_matrix(h, rows, cols, A, lda, E, lde, D, D16, ldd);
#endif
    (void)h;
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            const float v = A[i + j * lda] + E[i + j * lde];
            if (D16) D16[i + j * ldd] = tcnla_f32_to_f16(v, TCNLA_ROUND_RN);
            else D[i + j * ldd] = v;
        }
    return TCNLA_SUCCESS;
}

int tn_copy_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src, int64_t lds,
                   float *dst, int64_t ldd) {
    int st = TCNLA_SUCCESS;
    if (lds == rows && ldd == rows)
        return tcnla_memcpy(h, dst, src, sizeof(float) * (size_t)(rows * cols),
                            TCNLA_MEMCPY_HANDLE_TO_HANDLE);
    for (int64_t j = 0; j < cols && !st; j++)
        st = tcnla_memcpy(h, dst + j * ldd, src + j * lds, sizeof(float) * (size_t)rows,
                          TCNLA_MEMCPY_HANDLE_TO_HANDLE);
    return st;
}
