/* The CPU backend of every GEMM method. NATIVE_FP32 / NATIVE_FP64 go
 * through BLAS; the Tensor Core methods run on the instruction model of
 * src/numerics/tcmodel.c, so that CPU tests see the same rounding effects
 * the GPU has (RZ inside the Tensor Core, RN outside).
 *
 * Layout: op(A) is packed row by row (Ap[i*k + p]) and op(B) column by
 * column (Bp[j*k + p]) so that every dot product runs over contiguous data. */
#include "core/internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- packing */
static void pack_a(const float *A, int64_t lda, tcnla_op_t ta, int64_t m, int64_t k, float *Ap) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++)
            Ap[i * k + p] = ta == TCNLA_OP_N ? A[i + p * lda] : A[p + i * lda];
}

static void pack_b(const float *B, const uint16_t *B16, int64_t ldb, tcnla_op_t tb, int64_t k,
                   int64_t n, float *Bp) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; j++)
        for (int64_t p = 0; p < k; p++) {
            int64_t idx = tb == TCNLA_OP_N ? p + j * ldb : j + p * ldb;
            Bp[j * k + p] = B16 ? tcnla_f16_to_f32(B16[idx]) : B[idx];
        }
}

/* Converts a packed operand into the Tensor Core inputs of the method. */
static void convert(const tn_method_info *mi, const float *x, int64_t len, float *hi, float *lo) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < len; i++) {
        if (mi->uses_split) {
            tcnla_split(mi->split, x[i], &hi[i], &lo[i]);
        } else if (mi->conv == TN_CONV_F16) {
            hi[i] = tcnla_f16_to_f32(tcnla_f32_to_f16(x[i], TCNLA_ROUND_RN));
        } else {
            hi[i] = tcnla_f32_to_tf32(x[i], TCNLA_ROUND_RNA);
        }
    }
}

/* --------------------------------------------------- modelled products */
typedef struct {
    const tcnla_tc_model_t *model;
    int64_t k;
} dot_ctx;

/* One Tensor Core product, accumulated inside the Tensor Core. */
static float dot_inside(const dot_ctx *d, const float *a, const float *b) {
    const int kpm = d->model->k_per_mma;
    float acc = 0.0f;
    for (int64_t p = 0; p < d->k; p += kpm)
        (void)tcnla_tc_mma(d->model, a + p, b + p, (int)TN_MIN(kpm, d->k - p), acc, 1, &acc);
    return acc;
}

/* Markidis: four products into one accumulator inside the Tensor Core. */
static float dot_markidis(const dot_ctx *d, const float *ah, const float *al, const float *bh,
                          const float *bl) {
    const int kpm = d->model->k_per_mma;
    float acc = 0.0f;
    for (int64_t p = 0; p < d->k; p += kpm) {
        int nn = (int)TN_MIN(kpm, d->k - p);
        (void)tcnla_tc_mma(d->model, al + p, bl + p, nn, acc, 1, &acc);
        (void)tcnla_tc_mma(d->model, al + p, bh + p, nn, acc, 1, &acc);
        (void)tcnla_tc_mma(d->model, ah + p, bl + p, nn, acc, 1, &acc);
        (void)tcnla_tc_mma(d->model, ah + p, bh + p, nn, acc, 1, &acc);
    }
    return acc;
}

/* TCEC / SHGEMM ([Ootomo & Yokota 2021] Fig. 4, [Ootomo & Yokota 2023] eq. 40): hi*hi from a fresh
 * accumulator every `tcec_chunk` products, added with RN outside the
 * Tensor Core; the correction terms accumulate inside; dA*dB is dropped.
 * bl == NULL for SHGEMM (B is exact in the Tensor Core input format). */
static float dot_tcec(const dot_ctx *d, const float *ah, const float *al, const float *bh,
                      const float *bl, float lo_scale) {
    const int kpm = d->model->k_per_mma, chunk = d->model->tcec_chunk;
    float hh = 0.0f, t = 0.0f, corr = 0.0f;
    for (int64_t p = 0; p < d->k; p += kpm) {
        int nn = (int)TN_MIN(kpm, d->k - p);
        (void)tcnla_tc_mma(d->model, ah + p, bh + p, nn, t, 1, &t);
        if ((p + kpm) % chunk == 0 || p + kpm >= d->k) {
            hh = hh + t; /* FP32 add, round to nearest */
            t = 0.0f;
        }
        (void)tcnla_tc_mma(d->model, al + p, bh + p, nn, corr, 1, &corr);
        if (bl) (void)tcnla_tc_mma(d->model, ah + p, bl + p, nn, corr, 1, &corr);
    }
    return hh + corr * lo_scale;
}

static int blas_int_ok(int64_t m, int64_t n, int64_t k, int64_t ldc) {
    return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && ldc <= INT_MAX;
}

/* C = alpha * R + beta * C, R m x n with leading dimension m. */
static void update_c(int64_t m, int64_t n, float alpha, const float *R, float beta, float *C,
                     int64_t ldc) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            float r = alpha * R[i + j * m];
            C[i + j * ldc] = beta == 0.0f ? r : r + beta * C[i + j * ldc];
        }
}

int tn_cpu_gemm(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                int64_t ldc) {
    tcnla_handle_t h = cl->h;
    if (!blas_int_ok(m, n, k, ldc)) return TCNLA_ERR_NOT_SUPPORTED;
    if (k == 0 || alpha == 0.0f) { /* C = beta * C; C not read when beta == 0 */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                C[i + j * ldc] = beta == 0.0f ? 0.0f : beta * C[i + j * ldc];
        cl->info.method = method;
        return TCNLA_SUCCESS;
    }
    /* Workspace: Ap, Bp, then hi/lo of each, then R (m x n). */
    size_t na = (size_t)m * (size_t)k, nb = (size_t)n * (size_t)k, nc = (size_t)m * (size_t)n;
    size_t bytes = sizeof(float) * (3 * na + 3 * nb + nc);
    float *ws = tn_host_workspace(h, bytes);
    if (!ws) return TCNLA_ERR_ALLOC;
    float *Ap = ws, *Bp = Ap + na, *Ah = Bp + nb, *Al = Ah + na, *Bh = Al + na, *Bl = Bh + nb,
          *R = Bl + nb;
    pack_a(A, lda, ta, m, k, Ap);
    pack_b(B, B16, ldb, tb, k, n, Bp);

    const int shgemm = method == TCNLA_GEMM_SHGEMM_FP16 || method == TCNLA_GEMM_SHGEMM_TF32;
    if (shgemm && !B16) { /* SHGEMM through tcnla_sgemm: B is rounded to FP16 */
        for (size_t i = 0; i < nb; i++) {
            float v = tcnla_f16_to_f32(tcnla_f32_to_f16(Bp[i], TCNLA_ROUND_RN));
            if (isinf(v) && isfinite(Bp[i]))
                return tn_call_may_scale(cl, method) ? TN_NEEDS_SCALE : TCNLA_ERR_RANGE;
            Bp[i] = v;
        }
    }
    /* NaN / Inf: computed natively so that they propagate as in SGEMM
     * (exactly scaled copies, cl->scaling 2: finite and in range) */
    const int checked = cl->scaling == 2;
    if (tn_method(method)->tensor_core && !checked &&
        (tn_has_nonfinite(Ap, k, m, k) || tn_has_nonfinite(Bp, k, n, k)))
        method = TCNLA_GEMM_NATIVE_FP32;
    const tn_method_info *mi = tn_method(method);
    if (mi->fp16_range && !checked && !(tn_range_ok(Ap, m, k, k, method) &&
                            (shgemm || tn_range_ok(Bp, n, k, k, method)))) {
        if (tn_call_may_scale(cl, method)) return TN_NEEDS_SCALE;
        if (!tn_call_range_fallback(cl)) return TCNLA_ERR_RANGE;
        method = mi->fallback;
        mi = tn_method(method);
    }
    cl->info.method = method;

    const int im = (int)m, in = (int)n, ik = (int)k, ildc = (int)ldc;
    if (method == TCNLA_GEMM_NATIVE_FP32) {
        sgemm_("T", "N", &im, &in, &ik, &alpha, Ap, &ik, Bp, &ik, &beta, C, &ildc);
        return TCNLA_SUCCESS;
    }
    if (method == TCNLA_GEMM_NATIVE_FP64) {
        double *Ad = malloc(sizeof(double) * (na + nb + nc));
        if (!Ad) return TCNLA_ERR_ALLOC;
        double *Bd = Ad + na, *Cd = Bd + nb, one = 1.0, zero = 0.0;
        for (size_t i = 0; i < na; i++) Ad[i] = Ap[i];
        for (size_t i = 0; i < nb; i++) Bd[i] = Bp[i];
        dgemm_("T", "N", &im, &in, &ik, &one, Ad, &ik, Bd, &ik, &zero, Cd, &im);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double r = (double)alpha * Cd[i + j * m];
                if (beta != 0.0f) r += (double)beta * (double)C[i + j * ldc];
                C[i + j * ldc] = (float)r;
            }
        free(Ad);
        return TCNLA_SUCCESS;
    }

    convert(mi, Ap, (int64_t)na, Ah, Al);
    if (shgemm) {
        /* B holds FP16 values: exact in FP16 and in TF32 */
        memcpy(Bh, Bp, sizeof(float) * nb);
    } else {
        convert(mi, Bp, (int64_t)nb, Bh, Bl);
    }
    dot_ctx d = {&h->model, k};
    const float scale = mi->uses_split ? tcnla_split_scale(mi->split) : 1.0f;
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t i = 0; i < m; i++) {
        const float *ah = Ah + i * k, *al = Al + i * k;
        for (int64_t j = 0; j < n; j++) {
            const float *bh = Bh + j * k, *bl = Bl + j * k;
            float r;
            if (!mi->uses_split) r = dot_inside(&d, ah, bh);
            else if (method == TCNLA_GEMM_MARKIDIS_FP16) r = dot_markidis(&d, ah, al, bh, bl);
            else r = dot_tcec(&d, ah, al, bh, shgemm ? NULL : bl, scale);
            R[i + j * m] = r;
        }
    }
    update_c(m, n, alpha, R, beta, C, ldc);
    return TCNLA_SUCCESS;
}

/* ------------------------------------------- exact scaling (scaling.c) */
int tn_cpu_scale_exponents(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X,
                           int64_t ld, int by_col, int *e) {
    (void)h;
    const int64_t nv = by_col ? cols : rows, len = by_col ? rows : cols;
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < nv; v++) {
        float mx = 0.0f;
        int bad = 0;
        for (int64_t t = 0; t < len; t++) {
            const float x = by_col ? X[t + v * ld] : X[v + t * ld];
            if (!isfinite(x)) bad = 1;
            mx = fmaxf(mx, fabsf(x));
        }
        int E = 0;
        if (!bad && mx > 0.0f) (void)frexpf(mx, &E);
        e[v] = bad || mx == 0.0f ? 0 : TN_SCALE_TOP - E;
    }
    return TCNLA_SUCCESS;
}

int tn_cpu_scale_copy(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                      const int *er, const int *ec, float *Y, int64_t ldy) {
    (void)h;
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            Y[i + j * ldy] = ldexpf(X[i + j * ld], (er ? er[i] : 0) + (ec ? ec[j] : 0));
    return TCNLA_SUCCESS;
}

int tn_cpu_unscale_update(tcnla_handle_t h, int64_t m, int64_t n, float alpha, const float *T,
                          int64_t ldt, const int *er, const int *ec, float beta, float *C,
                          int64_t ldc) {
    (void)h;
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const float u = ldexpf(T[i + j * ldt], -(er[i] + (ec ? ec[j] : 0)));
            const float r = alpha * u;
            C[i + j * ldc] = beta == 0.0f ? r : r + beta * C[i + j * ldc];
        }
    return TCNLA_SUCCESS;
}

int tn_cpu_sumsq(tcnla_handle_t h, int64_t rows, int64_t cols, const float *X, int64_t ld,
                 double *out) {
    (void)h;
    double s = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) s += (double)X[i + j * ld] * (double)X[i + j * ld];
    *out = s;
    return TCNLA_SUCCESS;
}

/* TCNLA_GEMM_FP16 on FP16 operands (tn_gemm_f16): the operands widened
 * (exactly) and the FP16 method, whose conversion then changes nothing. */
int tn_cpu_gemm_f16(tn_call_t *cl, tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n,
                    int64_t k, float alpha, const uint16_t *A, int64_t lda, const uint16_t *B,
                    int64_t ldb, float beta, float *C, int64_t ldc) {
    const int64_t ar = ta == TCNLA_OP_N ? m : k, ac = ta == TCNLA_OP_N ? k : m;
    const int64_t br = tb == TCNLA_OP_N ? k : n, bc = tb == TCNLA_OP_N ? n : k;
    float *Aw = malloc(sizeof(float) * (size_t)(ar * ac));
    float *Bw = malloc(sizeof(float) * (size_t)(br * bc));
    int st = TCNLA_ERR_ALLOC;
    if (Aw && Bw) {
        for (int64_t j = 0; j < ac; j++)
            for (int64_t i = 0; i < ar; i++) Aw[i + j * ar] = tcnla_f16_to_f32(A[i + j * lda]);
        for (int64_t j = 0; j < bc; j++)
            for (int64_t i = 0; i < br; i++) Bw[i + j * br] = tcnla_f16_to_f32(B[i + j * ldb]);
        st = tn_cpu_gemm(cl, TCNLA_GEMM_FP16, ta, tb, m, n, k, alpha, Aw, ar, Bw, NULL, br, beta,
                         C, ldc);
    }
    free(Aw), free(Bw);
    return st;
}

/* The Ozaki scheme and FP64 products on the host (the backend's ozaki):
 * FP64 data (out_prec 64: native DGEMM through BLAS, or the scheme), or
 * FP32 data widened to FP64 (exactly), the scheme run for FP32 accuracy
 * and the result rounded once (out_prec 32). */
int tn_cpu_ozaki_op(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                    int64_t m, int64_t n, int64_t k, double alpha, const void *Av, int64_t lda,
                    const void *Bv, int64_t ldb, double beta, void *Cv, int64_t ldc,
                    int out_prec) {
    if (out_prec == 64) {
        const double *A = Av, *B = Bv;
        double *C = Cv;
        if (k == 0 || alpha == 0.0) { /* C = beta * C; C not read when beta == 0 */
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < m; i++)
                    C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
            return TCNLA_SUCCESS;
        }
        if (method != TCNLA_GEMM_NATIVE_FP64)
            return tn_cpu_ozaki(cl, method, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                                64);
        if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
            ldc > INT_MAX)
            return TCNLA_ERR_NOT_SUPPORTED;
        const int im = (int)m, in = (int)n, ik = (int)k, ia = (int)lda, ib = (int)ldb,
                  ic = (int)ldc;
        dgemm_(ta == TCNLA_OP_N ? "N" : "T", tb == TCNLA_OP_N ? "N" : "T", &im, &in, &ik, &alpha,
               A, &ia, B, &ib, &beta, C, &ic);
        return TCNLA_SUCCESS;
    }
    const float *A = Av, *B = Bv;
    float *C = Cv;
    const int64_t acols = ta == TCNLA_OP_N ? k : m, bcols = tb == TCNLA_OP_N ? n : k;
    const int64_t arows = ta == TCNLA_OP_N ? m : k, brows = tb == TCNLA_OP_N ? k : n;
    /* exactly the elements of op(A) and op(B): A's last column may end at lda - arows
     * elements before what lda * acols would read */
    const size_t na = acols ? (size_t)lda * (size_t)(acols - 1) + (size_t)arows : 0;
    const size_t nb = bcols ? (size_t)ldb * (size_t)(bcols - 1) + (size_t)brows : 0;
    const size_t nc = (size_t)m * (size_t)n;
    double *Ad = malloc(sizeof(double) * (na + nb + nc + 1));
    if (!Ad) return TCNLA_ERR_ALLOC;
    double *Bd = Ad + na, *Cd = Bd + nb;
    for (size_t i = 0; i < na; i++) Ad[i] = A[i];
    for (size_t i = 0; i < nb; i++) Bd[i] = B[i];
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) Cd[i + j * m] = beta == 0.0 ? 0.0 : C[i + j * ldc];
    int st = tn_cpu_ozaki(cl, method, ta, tb, m, n, k, alpha, Ad, lda, Bd, ldb, beta, Cd, m, 32);
    if (st == TCNLA_SUCCESS) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) C[i + j * ldc] = (float)Cd[i + j * m];
    }
    free(Ad);
    return st;
}
