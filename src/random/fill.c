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

/* The CPU backend's random fill (src/core/backend.h): draws, rounds and
 * stores (f16: FP16 bits, else FP32 values). */
int tn_cpu_random_fill(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                       uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                       int64_t ld) {
    tcnla_handle_t h = cl->h;
    const size_t esz = f16 ? 2 : 4;
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
    (void)h;
    for (int64_t j = 0; j < cols; j++) /* host memory: the CPU backend's */
        memcpy((char *)X + esz * (size_t)(j * ld), src + esz * (size_t)(j * rows),
               esz * (size_t)rows);
    free(v);
    free(packed);
    return TCNLA_SUCCESS;
}

int tn_random_fill(tn_call_t *cl, tcnla_rand_dist_t dist, tcnla_format_t fmt, int f16,
                   uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, void *X,
                   int64_t ld) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
    return cl->h->ops->random_fill(cl, dist, f16 ? TCNLA_FMT_FP16 : fmt, f16, seed, stream, rows,
                                   cols, X, ld);
}

int tcnla_random_fill(tcnla_handle_t h, tcnla_rand_dist_t dist, tcnla_format_t fmt, uint64_t seed,
                      uint64_t stream, int64_t rows, int64_t cols, float *X, int64_t ld) {
    int st = check(h, dist, rows, cols, X, ld, 6);
    if (st) return st;
    if ((int)fmt < 0 || (int)fmt > (int)TCNLA_FMT_E5M2) return -3;
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    return tn_random_fill(&cl, dist, fmt, 0, seed, stream, rows, cols, X, ld);
}

int tcnla_random_fill_f16(tcnla_handle_t h, tcnla_rand_dist_t dist, uint64_t seed,
                          uint64_t stream, int64_t rows, int64_t cols, uint16_t *X, int64_t ld) {
    int st = check(h, dist, rows, cols, X, ld, 5);
    if (st) return st;
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    return tn_random_fill(&cl, dist, TCNLA_FMT_FP16, 1, seed, stream, rows, cols, X, ld);
}

int tn_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols, float *X,
                     int64_t ld) {
    if (fmt == TCNLA_FMT_FP32 || rows == 0 || cols == 0) return TCNLA_SUCCESS;
    return h->ops->round_inplace(h, fmt, rows, cols, X, ld);
}

int tn_to_f16(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
              uint16_t *Y, int64_t ldy) {
    return tn_to_f16_scaled(h, rows, cols, X, ld, 1.0f, Y, ldy, NULL);
}

int tn_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A, int64_t lda,
                  const float *E, int64_t lde, float *D, uint16_t *D16, int64_t ldd) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
    return h->ops->add_matrix(h, rows, cols, A, lda, E, lde, D, D16, ldd);
}

int tn_to_f16_scaled(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                     float scale, uint16_t *Y, int64_t ldy, float *maxabs) {
    if (maxabs) *maxabs = 0.0f;
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
    return h->ops->to_f16_scaled(h, rows, cols, X, ld, scale, Y, ldy, maxabs);
}

int tn_scale_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                    int64_t ld) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
    return h->ops->scale_matrix(h, rows, cols, alpha, X, ld);
}

int tn_copy_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src, int64_t lds,
                   float *dst, int64_t ldd) {
    if (rows == 0 || cols == 0) return TCNLA_SUCCESS;
    return h->ops->copy_matrix(h, rows, cols, src, lds, dst, ldd);
}

/* ---- the CPU backend's element-wise operations (src/core/backend.h) */
int tn_cpu_round_inplace(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                         float *X, int64_t ld) {
    (void)h;
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) X[i + j * ld] = round_to(fmt, X[i + j * ld]);
    return TCNLA_SUCCESS;
}

int tcnla_round_matrix(tcnla_handle_t h, tcnla_format_t fmt, int64_t rows, int64_t cols,
                       float *X, int64_t ld) {
    if (!h) return -1;
    if ((int)fmt < 0 || (int)fmt > (int)TCNLA_FMT_E5M2) return -2;
    if (rows < 0) return -3;
    if (cols < 0) return -4;
    if (!X && rows > 0 && cols > 0) return -5;
    if (ld < TN_MAX(1, rows)) return -6;
    TN_GUARD(h);
    return tn_round_inplace(h, fmt, rows, cols, X, ld);
}

int tn_cpu_to_f16_scaled(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                         int64_t ld, float scale, uint16_t *Y, int64_t ldy, float *maxabs) {
    (void)h;
    /* max |X| by the bits of |x| (non-negative floats order as their bits;
     * NaN above them all), as the CUDA backend takes it */
    uint32_t mx = 0;
#pragma omp parallel for schedule(static) reduction(max : mx)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            const float x = X[i + j * ld], a = fabsf(x);
            uint32_t b;
            memcpy(&b, &a, sizeof b);
            if (b > mx) mx = b;
            Y[i + j * ldy] = tcnla_f32_to_f16(x * scale, TCNLA_ROUND_RN);
        }
    if (maxabs) memcpy(maxabs, &mx, sizeof *maxabs);
    return TCNLA_SUCCESS;
}

int tn_cpu_scale_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, float alpha, float *X,
                        int64_t ld) {
    (void)h;
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) X[i + j * ld] *= alpha;
    return TCNLA_SUCCESS;
}

int tn_cpu_add_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *A, int64_t lda,
                      const float *E, int64_t lde, float *D, uint16_t *D16, int64_t ldd) {
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

int tn_cpu_copy_matrix(tcnla_handle_t h, int64_t rows, int64_t cols, const float *src,
                       int64_t lds, float *dst, int64_t ldd) {
    (void)h;
    for (int64_t j = 0; j < cols; j++)
        memmove(dst + j * ldd, src + j * lds, sizeof(float) * (size_t)rows);
    return TCNLA_SUCCESS;
}
