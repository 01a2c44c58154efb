/* The GPU test of libtcnla_cublas.so: an ordinary cuBLAS program (linked
 * with -lcublas -lcublasLt -lcudart, no tcnla) that calls every hooked
 * entry point and compares each result with an FP64 reference computed on
 * the host. tests/gpu/interpose_run.sh runs it twice: plain, and with
 * LD_PRELOAD=build/libtcnla_cublas.so (then also under compute-sanitizer).
 *
 * Under the preload (found by dlsym(RTLD_DEFAULT, "tcnla_cublas_set_policy"))
 * each case runs twice: once with the policy's methods set to native, which
 * sends the call to the real cuBLAS (the baseline), once with the default
 * methods; the thresholds are lowered so that the small test sizes are
 * taken. Checks:
 *  - the statuses agree; each call counted once by the hooks (besides
 *    cuBLAS's own calls to hooked names, path "inner"), and no hooked call
 *    made from inside a hook by other code than NVIDIA's (path "nested":
 *    tcnla's cuBLAS calls go through its own table of functions, never the
 *    hooks);
 *  - taken cases (path "tcnla" or "fallback" counted once): relative
 *    Frobenius error against the FP64 reference <= RATIO_FP32 = 2 x
 *    cuBLAS SGEMM's (TCEC is more accurate than SGEMM) and <= RATIO_FP64 =
 *    4 x cuBLAS DGEMM's (the Ozaki scheme in DP mode is as accurate as
 *    DGEMM);
 *  - pass-through cases (TF32 math mode, FP16 data, a TF32 compute type,
 *    row-major layouts, graph capture, sizes below the thresholds, invalid
 *    arguments): the expected path counted, the result bitwise cuBLAS's;
 *  - beta = 0 with NaN in C: no NaN in the result; NaN in A: the same
 *    rows NaN as the reference's;
 *  - cuBLAS's own error is at FP32 / FP64 level (1e-5 / 1e-12; GELU 1e-3,
 *    its tanh may be evaluated approximately), so that the reference's
 *    formulas are cuBLAS's; for GELU, cuBLASLt's result is nearer the tanh
 *    form (the hook's) than the erf form.
 * Without the preload only the error bound against the reference and the
 * statuses are checked (both runs are cuBLAS). Built with -DGPU_CHECK_LIB
 * as a shared library (gpu_check_main) that local_loader.c opens with
 * RTLD_LOCAL, cuBLAS comes into the process as in PyTorch and CuPy: not in
 * the global scope, where dlsym(RTLD_NEXT) would find it. Prints one line per case and
 * "gpu_check: N passed, M failed"; exit status 0 when none failed. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcnla_cublas.h"

#define RATIO_FP32 2.0
#define RATIO_FP64 4.0

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

static int (*p_set)(const tcnla_cublas_policy_t *);
static int (*p_get)(tcnla_cublas_policy_t *);
static int (*p_stats)(tcnla_cublas_stats_t *);
static const char *(*p_name)(int);
static int hooked;
static tcnla_cublas_policy_t pol_default;
static int passed, failed;

static void set_native(int on) {
    if (!hooked) return;
    tcnla_cublas_policy_t p = pol_default;
    if (on) p.fp32_method = TCNLA_GEMM_NATIVE_FP32, p.fp64_method = TCNLA_GEMM_NATIVE_FP64;
    if (p_set(&p)) {
        fprintf(stderr, "tcnla_cublas_set_policy failed\n");
        exit(2);
    }
}

/* ------------------------------------------------------------ data */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double urand(void) { /* (-1, 1) */
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(rng >> 11) * 0x1.0p-53) * 2.0 - 1.0;
}

/* IEEE binary16 bits of x (x a small integer: exact) */
static uint16_t to_half(float x) {
    if (x == 0) return 0;
    uint32_t u;
    memcpy(&u, &x, 4);
    const uint32_t s = (u >> 16) & 0x8000u;
    const int e = (int)((u >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(s | ((uint32_t)e << 10) | ((u >> 13) & 0x3ffu));
}

enum {
    E_SGEMM,
    E_SGEMM64,
    E_SSB,
    E_SSB64,
    E_SB,
    E_SB64,
    E_SB_PERM, /* cublasSgemmBatched with pointers in no constant stride */
    E_GEMMEX,
    E_GEMMEX64,
    E_GSBEX,
    E_GSBEX64,
    E_DGEMM,
    E_DGEMM64,
    E_DSB,
    E_DSB64,
    E_LT
};

#define TAKEN (-1)

typedef struct {
    const char *name;
    int entry;
    int ta, tb;
    int64_t m, n, k, pad, batch;
    double alpha, beta;
    int devptr;  /* pointer mode DEVICE */
    int c_nan;   /* C filled with NaN (beta must be 0) */
    int a_nan;   /* A(0, 0) = NaN */
    int wide;    /* rows of A scaled over 2^-60 .. 2^60 */
    int ex;      /* GemmEx compute: 0 32F, 1 32F_PEDANTIC, 2 legacy CUDA_R_32F, 3 FP16 data,
                    4 32F_FAST_TF32 */
    int tf32;    /* TF32 math mode on the handle */
    int capture; /* the call captured into a graph, then launched */
    int badld;   /* lda < rows: CUBLAS_STATUS_INVALID_VALUE */
    int lt_epi;  /* cuBLASLt epilogue */
    int lt_d;    /* D apart from C */
    int lt_row;  /* row-major order attribute on D, C: to cuBLASLt */
    int lt_tf32; /* compute type 32F_FAST_TF32: to cuBLASLt */
    int lt_algo; /* an algorithm and workspace from cublasLtMatmulAlgoGetHeuristic */
    int lt_nullh; /* a NULL cuBLASLt handle: cuBLASLt's status */
    int expect;  /* under the preload: TAKEN or the pass-through path */
} case_t;

typedef struct {
    int fp64;
    int64_t arows, acols, brows, bcols, lda, ldb, ldc, sA, sB, sC, na, nb, nc;
    double *A, *B, *C0, *bias; /* host values (FP32 values for FP32 cases) */
    void *dA, *dB, *dC, *dD, *dBias, *dAlpha, *dBeta, *dAh, *dBh;
    void **dAarr, **dBarr, **dCarr;
} data_t;

static size_t esz(const data_t *d) { return d->fp64 ? 8 : 4; }

static void upload(void *dst, const double *src, int64_t n, int fp64) {
    if (fp64) {
        CK(cudaMemcpy(dst, src, (size_t)n * 8, cudaMemcpyHostToDevice));
    } else {
        float *t = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) t[i] = (float)src[i];
        CK(cudaMemcpy(dst, t, (size_t)n * 4, cudaMemcpyHostToDevice));
        free(t);
    }
}

static void make_data(const case_t *c, data_t *d) {
    memset(d, 0, sizeof *d);
    d->fp64 = c->entry >= E_DGEMM && c->entry <= E_DSB64;
    d->arows = c->ta ? c->k : c->m, d->acols = c->ta ? c->m : c->k;
    d->brows = c->tb ? c->n : c->k, d->bcols = c->tb ? c->k : c->n;
    d->lda = d->arows + c->pad, d->ldb = d->brows + c->pad, d->ldc = c->m + c->pad;
    d->sA = d->lda * d->acols + 3 * c->pad, d->sB = d->ldb * d->bcols + c->pad;
    d->sC = d->ldc * c->n + 5 * c->pad;
    d->na = d->sA * c->batch, d->nb = d->sB * c->batch, d->nc = d->sC * c->batch;
    d->A = malloc((size_t)d->na * 8), d->B = malloc((size_t)d->nb * 8);
    d->C0 = malloc((size_t)d->nc * 8), d->bias = malloc((size_t)(c->m * c->batch + 1) * 8);
    const int ints = c->ex == 3; /* FP16 data: small integers, exact */
    for (int64_t i = 0; i < d->na; i++) d->A[i] = ints ? floor(4 * urand()) : urand();
    for (int64_t i = 0; i < d->nb; i++) d->B[i] = ints ? floor(3 * urand()) : urand();
    for (int64_t i = 0; i < d->nc; i++) d->C0[i] = c->c_nan ? NAN : urand();
    for (int64_t i = 0; i < c->m * c->batch + 1; i++) d->bias[i] = urand();
    if (!d->fp64)
        for (int64_t i = 0; i < d->na; i++) d->A[i] = (float)d->A[i];
    if (!d->fp64) {
        for (int64_t i = 0; i < d->nb; i++) d->B[i] = (float)d->B[i];
        for (int64_t i = 0; i < d->nc; i++) d->C0[i] = (float)d->C0[i];
        for (int64_t i = 0; i < c->m * c->batch + 1; i++) d->bias[i] = (float)d->bias[i];
    }
    if (c->wide) /* row i of op(A) scaled by 2^(-60 + 120 i / m) (exact) */
        for (int64_t b = 0; b < c->batch; b++)
            for (int64_t j = 0; j < d->acols; j++)
                for (int64_t i = 0; i < d->arows; i++) {
                    const int64_t row = c->ta ? j : i;
                    d->A[b * d->sA + i + j * d->lda] *=
                        ldexp(1.0, (int)(-60 + 120 * row / (c->m > 1 ? c->m - 1 : 1)));
                }
    if (c->a_nan) d->A[0] = NAN;
    const size_t e = esz(d);
    CK(cudaMalloc(&d->dA, (size_t)d->na * e));
    CK(cudaMalloc(&d->dB, (size_t)d->nb * e));
    CK(cudaMalloc(&d->dC, (size_t)d->nc * e));
    CK(cudaMalloc(&d->dD, (size_t)d->nc * e));
    CK(cudaMalloc(&d->dBias, (size_t)(c->m * c->batch + 1) * e));
    CK(cudaMalloc(&d->dAlpha, 8));
    CK(cudaMalloc(&d->dBeta, 8));
    upload(d->dA, d->A, d->na, d->fp64);
    upload(d->dB, d->B, d->nb, d->fp64);
    upload(d->dBias, d->bias, c->m * c->batch + 1, d->fp64);
    upload(d->dAlpha, &c->alpha, 1, d->fp64);
    upload(d->dBeta, &c->beta, 1, d->fp64);
    if (ints) {
        uint16_t *ha = malloc((size_t)d->na * 2), *hb = malloc((size_t)d->nb * 2);
        for (int64_t i = 0; i < d->na; i++) ha[i] = to_half((float)d->A[i]);
        for (int64_t i = 0; i < d->nb; i++) hb[i] = to_half((float)d->B[i]);
        CK(cudaMalloc(&d->dAh, (size_t)d->na * 2));
        CK(cudaMalloc(&d->dBh, (size_t)d->nb * 2));
        CK(cudaMemcpy(d->dAh, ha, (size_t)d->na * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d->dBh, hb, (size_t)d->nb * 2, cudaMemcpyHostToDevice));
        free(ha), free(hb);
    }
    /* pointer arrays (E_SB_PERM: the products in reverse order) */
    void **ha = malloc((size_t)c->batch * 3 * sizeof(void *));
    for (int64_t b = 0; b < c->batch; b++) {
        const int64_t q = c->entry == E_SB_PERM ? c->batch - 1 - b : b;
        ha[b] = (char *)d->dA + (size_t)(q * d->sA) * e;
        ha[c->batch + b] = (char *)d->dB + (size_t)(q * d->sB) * e;
        ha[2 * c->batch + b] = (char *)d->dC + (size_t)(q * d->sC) * e;
    }
    CK(cudaMalloc((void **)&d->dAarr, (size_t)c->batch * 3 * sizeof(void *)));
    CK(cudaMemcpy(d->dAarr, ha, (size_t)c->batch * 3 * sizeof(void *), cudaMemcpyHostToDevice));
    d->dBarr = d->dAarr + c->batch, d->dCarr = d->dAarr + 2 * c->batch;
    free(ha);
}

static void free_data(data_t *d) {
    free(d->A), free(d->B), free(d->C0), free(d->bias);
    cudaFree(d->dA), cudaFree(d->dB), cudaFree(d->dC), cudaFree(d->dD), cudaFree(d->dBias);
    cudaFree(d->dAlpha), cudaFree(d->dBeta), cudaFree(d->dAarr);
    if (d->dAh) cudaFree(d->dAh), cudaFree(d->dBh);
}

static double gelu_ref(double x) {
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double gelu_erf(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

/* R (m x n per batch, ld m) = epi(alpha op(A) op(B) + beta C (+ bias)) in
 * FP64; erf_gelu: GELU by its erf form instead of the tanh form */
static void reference(const case_t *c, const data_t *d, double *R, int erf_gelu) {
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t j = 0; j < c->n; j++)
            for (int64_t i = 0; i < c->m; i++) {
                long double s = 0; /* (80-bit: the FP64 cases' reference too) */
                for (int64_t l = 0; l < c->k; l++) {
                    const double a = c->ta ? d->A[b * d->sA + l + i * d->lda]
                                           : d->A[b * d->sA + i + l * d->lda];
                    const double x = c->tb ? d->B[b * d->sB + j + l * d->ldb]
                                           : d->B[b * d->sB + l + j * d->ldb];
                    s += (long double)a * x;
                }
                double v = (double)(c->alpha * s);
                if (c->beta != 0) v += c->beta * d->C0[b * d->sC + i + j * d->ldc];
                const int epi = c->lt_epi;
                if (epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS ||
                    epi == CUBLASLT_EPILOGUE_GELU_BIAS)
                    v += d->bias[b * c->m + i];
                if (epi == CUBLASLT_EPILOGUE_RELU || epi == CUBLASLT_EPILOGUE_RELU_BIAS)
                    v = v > 0 ? v : 0;
                if (epi == CUBLASLT_EPILOGUE_GELU || epi == CUBLASLT_EPILOGUE_GELU_BIAS)
                    v = erf_gelu ? gelu_erf(v) : gelu_ref(v);
                R[b * c->m * c->n + i + j * c->m] = v;
            }
}

/* ------------------------------------------------------------ the calls */
static cublasHandle_t H;
static cublasLtHandle_t LT;
static cudaStream_t S;

static cublasStatus_t lt_call(const case_t *c, data_t *d, void *out) {
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL, ld = NULL;
    cublasStatus_t st = cublasLtMatmulDescCreate(
        &desc, c->lt_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st) return st;
    cublasOperation_t ta = c->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = c->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    cublasLtEpilogue_t epi = c->lt_epi ? (cublasLtEpilogue_t)c->lt_epi : CUBLASLT_EPILOGUE_DEFAULT;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS ||
        epi == CUBLASLT_EPILOGUE_GELU_BIAS) {
        const void *bias = d->dBias;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                       sizeof bias);
        int64_t bstride = c->m;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bstride,
                                       sizeof bstride);
    }
    cublasLtPointerMode_t pm = c->devptr ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm);
    cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, (uint64_t)d->arows, (uint64_t)d->acols, d->lda);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, (uint64_t)d->brows, (uint64_t)d->bcols, d->ldb);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, (uint64_t)c->m, (uint64_t)c->n, d->ldc);
    cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, (uint64_t)c->m, (uint64_t)c->n, d->ldc);
    int32_t bc = (int32_t)c->batch;
    struct {
        cublasLtMatrixLayout_t l;
        int64_t s;
    } ls[4] = {{la, d->sA}, {lb, d->sB}, {lc, d->sC}, {ld, d->sC}};
    for (int i = 0; i < 4; i++) {
        cublasLtMatrixLayoutSetAttribute(ls[i].l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc);
        cublasLtMatrixLayoutSetAttribute(ls[i].l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                         &ls[i].s, sizeof ls[i].s);
    }
    if (c->lt_row) { /* row-major C and D: the same data read as C^T (m == n here) */
        cublasLtOrder_t o = CUBLASLT_ORDER_ROW;
        cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_ORDER, &o, sizeof o);
        cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_ORDER, &o, sizeof o);
    }
    float al = (float)c->alpha, be = (float)c->beta;
    void *D = c->lt_d ? d->dD : d->dC;
    static void *ws;
    const size_t ws_size = (size_t)32 << 20;
    cublasLtMatmulHeuristicResult_t res;
    int have_algo = 0;
    if (c->lt_algo) {
        if (!ws) CK(cudaMalloc(&ws, ws_size));
        cublasLtMatmulPreference_t pref;
        int found = 0;
        if (cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS) {
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws_size, sizeof ws_size);
            if (cublasLtMatmulAlgoGetHeuristic(LT, desc, la, lb, lc, ld, pref, 1, &res, &found) ==
                    CUBLAS_STATUS_SUCCESS &&
                found > 0)
                have_algo = 1;
            cublasLtMatmulPreferenceDestroy(pref);
        }
        if (!have_algo) fprintf(stderr, "gpu_check: no cuBLASLt heuristic for %s\n", c->name);
    }
    st = cublasLtMatmul(c->lt_nullh ? NULL : LT, desc, c->devptr ? d->dAlpha : (void *)&al, d->dA,
                        la, d->dB, lb, c->devptr ? d->dBeta : (void *)&be, d->dC, lc, D, ld,
                        have_algo ? &res.algo : NULL, have_algo ? ws : NULL,
                        have_algo ? ws_size : 0, S);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc), cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    (void)out;
    return st;
}

/* Runs the case's call once on C = C0 (D = garbage), leaves the result in out. */
static cublasStatus_t run_call(const case_t *c, data_t *d, void *out) {
    const size_t e = esz(d);
    upload(d->dC, d->C0, d->nc, d->fp64);
    CK(cudaMemset(d->dD, 0xff, (size_t)d->nc * e)); /* NaN pattern */
    CK(cudaDeviceSynchronize());
    cublasSetPointerMode(H, c->devptr ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
    cublasSetMathMode(H, c->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    float fa = (float)c->alpha, fb = (float)c->beta;
    double da = c->alpha, db = c->beta;
    const void *pa = c->devptr ? d->dAlpha : d->fp64 ? (void *)&da : (void *)&fa;
    const void *pb = c->devptr ? d->dBeta : d->fp64 ? (void *)&db : (void *)&fb;
    const cublasOperation_t ta = c->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = c->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = (int)c->m, n = (int)c->n, k = (int)c->k, bt = (int)c->batch;
    const int lda = c->badld ? (int)d->arows - 1 : (int)d->lda, ldb = (int)d->ldb,
              ldc = (int)d->ldc;
    const float *A = d->dA, *B = d->dB;
    float *C = d->dC;
    const double *DA = d->dA, *DB = d->dB;
    double *DC = d->dC;
    cudaGraph_t g = NULL;
    if (c->capture) CK(cudaStreamBeginCapture(S, cudaStreamCaptureModeThreadLocal));
    cudaDataType at = c->ex == 3 ? CUDA_R_16F : CUDA_R_32F;
    const void *exA = c->ex == 3 ? d->dAh : d->dA, *exB = c->ex == 3 ? d->dBh : d->dB;
    cublasComputeType_t ct = c->ex == 1   ? CUBLAS_COMPUTE_32F_PEDANTIC
                             : c->ex == 2 ? (cublasComputeType_t)CUDA_R_32F
                             : c->ex == 4 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    switch (c->entry) {
    case E_SGEMM: st = cublasSgemm_v2(H, ta, tb, m, n, k, pa, A, lda, B, ldb, pb, C, ldc); break;
    case E_SGEMM64:
        st = cublasSgemm_v2_64(H, ta, tb, m, n, k, pa, A, lda, B, ldb, pb, C, ldc);
        break;
    case E_SSB:
        st = cublasSgemmStridedBatched(H, ta, tb, m, n, k, pa, A, lda, d->sA, B, ldb, d->sB, pb, C,
                                       ldc, d->sC, bt);
        break;
    case E_SSB64:
        st = cublasSgemmStridedBatched_64(H, ta, tb, m, n, k, pa, A, lda, d->sA, B, ldb, d->sB, pb,
                                          C, ldc, d->sC, bt);
        break;
    case E_SB:
    case E_SB_PERM:
        st = cublasSgemmBatched(H, ta, tb, m, n, k, pa, (const float *const *)d->dAarr, lda,
                                (const float *const *)d->dBarr, ldb, pb,
                                (float *const *)d->dCarr, ldc, bt);
        break;
    case E_SB64:
        st = cublasSgemmBatched_64(H, ta, tb, m, n, k, pa, (const float *const *)d->dAarr, lda,
                                   (const float *const *)d->dBarr, ldb, pb,
                                   (float *const *)d->dCarr, ldc, bt);
        break;
    case E_GEMMEX:
        st = cublasGemmEx(H, ta, tb, m, n, k, pa, exA, at, lda, exB, at, ldb, pb, C, CUDA_R_32F,
                          ldc, ct, CUBLAS_GEMM_DEFAULT);
        break;
    case E_GEMMEX64:
        st = cublasGemmEx_64(H, ta, tb, m, n, k, pa, exA, at, lda, exB, at, ldb, pb, C, CUDA_R_32F,
                             ldc, ct, CUBLAS_GEMM_DEFAULT);
        break;
    case E_GSBEX:
        st = cublasGemmStridedBatchedEx(H, ta, tb, m, n, k, pa, exA, at, lda, d->sA, exB, at, ldb,
                                        d->sB, pb, C, CUDA_R_32F, ldc, d->sC, bt, ct,
                                        CUBLAS_GEMM_DEFAULT);
        break;
    case E_GSBEX64:
        st = cublasGemmStridedBatchedEx_64(H, ta, tb, m, n, k, pa, exA, at, lda, d->sA, exB, at,
                                           ldb, d->sB, pb, C, CUDA_R_32F, ldc, d->sC, bt, ct,
                                           CUBLAS_GEMM_DEFAULT);
        break;
    case E_DGEMM:
        st = cublasDgemm_v2(H, ta, tb, m, n, k, pa, DA, lda, DB, ldb, pb, DC, ldc);
        break;
    case E_DGEMM64:
        st = cublasDgemm_v2_64(H, ta, tb, m, n, k, pa, DA, lda, DB, ldb, pb, DC, ldc);
        break;
    case E_DSB:
        st = cublasDgemmStridedBatched(H, ta, tb, m, n, k, pa, DA, lda, d->sA, DB, ldb, d->sB, pb,
                                       DC, ldc, d->sC, bt);
        break;
    case E_DSB64:
        st = cublasDgemmStridedBatched_64(H, ta, tb, m, n, k, pa, DA, lda, d->sA, DB, ldb, d->sB,
                                          pb, DC, ldc, d->sC, bt);
        break;
    case E_LT: st = lt_call(c, d, out); break;
    }
    if (c->capture) {
        CK(cudaStreamEndCapture(S, &g));
        cudaGraphExec_t ge;
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, S));
        CK(cudaStreamSynchronize(S));
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
    }
    CK(cudaStreamSynchronize(S));
    CK(cudaGetLastError());
    const void *res = c->entry == E_LT && c->lt_d ? d->dD : d->dC;
    CK(cudaMemcpy(out, res, (size_t)d->nc * e, cudaMemcpyDeviceToHost));
    return st;
}

/* ------------------------------------------------------------ checking */
static double rel_err(const case_t *c, const data_t *d, const void *out, const double *R,
                      int *nan_rows_ok, int *any_nan) {
    double num = 0, den = 0;
    *any_nan = 0;
    *nan_rows_ok = 1;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t j = 0; j < c->n; j++)
            for (int64_t i = 0; i < c->m; i++) {
                const int64_t o = b * d->sC + i + j * d->ldc;
                const double v = d->fp64 ? ((const double *)out)[o] : ((const float *)out)[o];
                const double r = R[b * c->m * c->n + i + j * c->m];
                if (isnan(v) || isnan(r)) {
                    *any_nan |= isnan(v);
                    if (isnan(v) != isnan(r)) *nan_rows_ok = 0;
                    continue;
                }
                num += (v - r) * (v - r);
                den += r * r;
            }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void get_stats(tcnla_cublas_stats_t *s) {
    memset(s, 0, sizeof *s);
    if (hooked) p_stats(s);
}

static void check(const case_t *c) {
    data_t d;
    make_data(c, &d);
    const size_t bytes = (size_t)d.nc * esz(&d);
    void *outn = malloc(bytes), *outh = malloc(bytes);
    double *R = malloc((size_t)(c->m * c->n * c->batch) * 8);
    reference(c, &d, R, 0);
    set_native(1);
    cublasStatus_t stn = run_call(c, &d, outn);
    set_native(0);
    tcnla_cublas_stats_t s0, s1;
    get_stats(&s0);
    cublasStatus_t sth = run_call(c, &d, outh);
    get_stats(&s1);
    /* the call's own path, and the calls of cuBLAS itself to hooked names
     * while the hook passed the call through (path "inner") */
    int path = -2, ncalls = 0;
    const int inner = (int)(s1.calls[TCNLA_CUBLAS_PATH_INNER] - s0.calls[TCNLA_CUBLAS_PATH_INNER]);
    const int nested =
        (int)(s1.calls[TCNLA_CUBLAS_PATH_NESTED] - s0.calls[TCNLA_CUBLAS_PATH_NESTED]);
    for (int p = 0; p < TCNLA_CUBLAS_PATHS; p++)
        if (p != TCNLA_CUBLAS_PATH_INNER && p != TCNLA_CUBLAS_PATH_NESTED &&
            s1.calls[p] != s0.calls[p])
            path = p, ncalls += (int)(s1.calls[p] - s0.calls[p]);
    int ok = stn == sth;
    char why[256] = "";
    double en = 0, eh = 0;
    if (!ok) snprintf(why, sizeof why, "status %d vs cuBLAS %d", (int)sth, (int)stn);
    if (ok && stn == CUBLAS_STATUS_SUCCESS && !c->lt_row) { /* (row-major: not the reference's layout) */
        int nr_n, nr_h, an_n, an_h;
        en = rel_err(c, &d, outn, R, &nr_n, &an_n);
        eh = rel_err(c, &d, outh, R, &nr_h, &an_h);
        const double ratio = d.fp64 ? RATIO_FP64 : RATIO_FP32;
        const double floor = d.fp64 ? 1e-300 : 1e-30;
        if (!(eh <= ratio * en + floor)) ok = 0, snprintf(why, sizeof why, "error ratio > %.0f", ratio);
        /* cuBLAS itself agrees with the reference (its formulas are the
         * reference's), unless it was asked for TF32; GELU: cuBLASLt may
         * evaluate tanh approximately, but its result is nearer the tanh
         * form than the erf form */
        const int gelu = c->lt_epi == CUBLASLT_EPILOGUE_GELU || c->lt_epi == CUBLASLT_EPILOGUE_GELU_BIAS;
        const double sane = d.fp64 ? 1e-12 : gelu ? 1e-3 : 1e-5;
        if (!c->tf32 && c->ex != 4 && !c->lt_tf32 && !(en <= sane))
            ok = 0, snprintf(why, sizeof why, "cuBLAS's own error above %.0e", sane);
        if (gelu) {
            double *R2 = malloc((size_t)(c->m * c->n * c->batch) * 8);
            int x1, x2;
            reference(c, &d, R2, 1);
            const double en_erf = rel_err(c, &d, outn, R2, &x1, &x2);
            free(R2);
            if (!(en < en_erf))
                ok = 0, snprintf(why, sizeof why, "cuBLASLt's GELU nearer the erf form (%.2e)", en_erf);
        }
        if (c->c_nan && an_h) ok = 0, snprintf(why, sizeof why, "NaN of C (beta = 0) read");
        if (c->a_nan && !nr_h) ok = 0, snprintf(why, sizeof why, "NaN rows differ from FP64");
        if (!c->a_nan && !c->c_nan && an_h) ok = 0, snprintf(why, sizeof why, "NaN in result");
    }
    if (ok && hooked) {
        const int taken = path == TCNLA_CUBLAS_PATH_TCNLA || path == TCNLA_CUBLAS_PATH_FALLBACK;
        if (ncalls != 1) {
            ok = 0, snprintf(why, sizeof why, "%d hooked calls counted", ncalls);
        } else if (nested) {
            /* tcnla's own cuBLAS calls must never reach the hooks */
            ok = 0, snprintf(why, sizeof why, "%d hooked calls from inside a hook", nested);
        } else if (c->expect == TAKEN ? !taken : path != c->expect) {
            ok = 0, snprintf(why, sizeof why, "path %s, expected %s", p_name(path),
                             c->expect == TAKEN ? "tcnla" : p_name(c->expect));
        } else if (c->expect != TAKEN && memcmp(outn, outh, bytes) != 0 && !c->capture) {
            ok = 0, snprintf(why, sizeof why, "pass-through result differs from cuBLAS's");
        }
    }
    printf("%-4s %-44s err %.3e  cuBLAS %.3e  ratio %6.3f  path %-8s%s %s\n", ok ? "ok" : "FAIL",
           c->name, eh, en, en > 0 ? eh / en : 0.0, hooked ? p_name(path) : "-",
           inner ? " (+inner)" : "", why);
    if (ok) passed++;
    else failed++;
    free(outn), free(outh), free(R);
    free_data(&d);
}

/* ------------------------------------------------------------ threads */
typedef struct {
    int id, ok;
    double err;
} thr_t;

static void *thread_main(void *arg) {
    thr_t *t = arg;
    cublasHandle_t h;
    cudaStream_t s;
    t->ok = 0;
    if (cublasCreate(&h) || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) return NULL;
    cublasSetStream(h, s);
    const int m = 384, n = 256, k = 320;
    float *hA = malloc(sizeof(float) * m * k), *hB = malloc(sizeof(float) * k * n);
    float *hC = malloc(sizeof(float) * m * n);
    uint64_t r = 12345 + (uint64_t)t->id * 777;
    for (int i = 0; i < m * k; i++) r = r * 6364136223846793005ULL + 1, hA[i] = (float)((double)(r >> 40) / (1 << 24) - 0.5);
    for (int i = 0; i < k * n; i++) r = r * 6364136223846793005ULL + 1, hB[i] = (float)((double)(r >> 40) / (1 << 24) - 0.5);
    float *dA, *dB, *dC;
    cudaMalloc((void **)&dA, sizeof(float) * m * k);
    cudaMalloc((void **)&dB, sizeof(float) * k * n);
    cudaMalloc((void **)&dC, sizeof(float) * m * n);
    cudaMemcpy(dA, hA, sizeof(float) * m * k, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, sizeof(float) * k * n, cudaMemcpyHostToDevice);
    const float one = 1, zero = 0;
    int ok = 1;
    for (int rep = 0; rep < 4 && ok; rep++)
        ok = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m) ==
             CUBLAS_STATUS_SUCCESS;
    cudaStreamSynchronize(s);
    cudaMemcpy(hC, dC, sizeof(float) * m * n, cudaMemcpyDeviceToHost);
    double num = 0, den = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double v = 0;
            for (int l = 0; l < k; l++) v += (double)hA[i + l * m] * hB[l + j * k];
            num += (hC[i + j * m] - v) * (hC[i + j * m] - v), den += v * v;
        }
    t->err = sqrt(num / den);
    t->ok = ok && t->err < 1e-6; /* FP32-level accuracy (SGEMM gives ~1e-7 here) */
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(hA), free(hB), free(hC);
    cudaStreamDestroy(s);
    cublasDestroy(h);
    return NULL;
}

static void check_threads(int dev_count) {
    enum { NT = 4 };
    pthread_t th[NT];
    thr_t t[NT];
    tcnla_cublas_stats_t s0, s1;
    get_stats(&s0);
    for (int i = 0; i < NT; i++) t[i].id = i, pthread_create(&th[i], NULL, thread_main, &t[i]);
    for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
    get_stats(&s1);
    int ok = 1;
    double worst = 0;
    for (int i = 0; i < NT; i++) ok &= t[i].ok, worst = t[i].err > worst ? t[i].err : worst;
    const uint64_t taken = s1.calls[TCNLA_CUBLAS_PATH_TCNLA] + s1.calls[TCNLA_CUBLAS_PATH_FALLBACK] -
                           s0.calls[TCNLA_CUBLAS_PATH_TCNLA] - s0.calls[TCNLA_CUBLAS_PATH_FALLBACK];
    if (hooked && taken != 4 * NT) ok = 0;
    printf("%-4s %-44s err %.3e  (4 threads x 4 calls, own handles and streams; taken %llu)\n",
           ok ? "ok" : "FAIL", "threads", worst, (unsigned long long)taken);
    if (ok) passed++;
    else failed++;
    if (dev_count > 1) { /* the same on the last device */
        int prev;
        cudaGetDevice(&prev);
        cudaSetDevice(dev_count - 1);
        thr_t u = {0, 0, 0};
        thread_main(&u);
        cudaSetDevice(prev);
        printf("%-4s %-44s err %.3e\n", u.ok ? "ok" : "FAIL", "device (last)", u.err);
        if (u.ok) passed++;
        else failed++;
    }
}

/* The legacy default stream (cublasSetStream(H, NULL), as PyTorch's
 * default): the taken call is ordered after the work queued before it and
 * before the work queued after it on that stream. A hook that ran tcnla on a
 * stream of its own would read A and B before their copies landed, or have
 * C copied back before the product wrote it. Three rounds, 2048^3 (about a
 * millisecond per product, so that a missing order shows). */
static void check_legacy_stream(void) {
    const int n = 2048;
    const size_t bytes = sizeof(float) * (size_t)n * n;
    float *hA, *hB, *hC, *dA, *dB, *dC;
    CK(cudaMallocHost((void **)&hA, bytes));
    CK(cudaMallocHost((void **)&hB, bytes));
    CK(cudaMallocHost((void **)&hC, bytes));
    CK(cudaMalloc((void **)&dA, bytes));
    CK(cudaMalloc((void **)&dB, bytes));
    CK(cudaMalloc((void **)&dC, bytes));
    cublasSetStream(H, NULL);
    int bad = 0;
    double worst = 0;
    for (int r = 0; r < 3; r++) {
        for (size_t i = 0; i < (size_t)n * n; i++) hA[i] = (float)urand(), hB[i] = (float)urand();
        CK(cudaMemsetAsync(dC, 0xff, bytes, NULL)); /* NaN until the product writes C */
        CK(cudaMemcpyAsync(dA, hA, bytes, cudaMemcpyHostToDevice, NULL));
        CK(cudaMemcpyAsync(dB, hB, bytes, cudaMemcpyHostToDevice, NULL));
        const float one = 1.0f, zero = 0.0f;
        if (cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n) !=
            CUBLAS_STATUS_SUCCESS)
            bad++;
        CK(cudaMemcpyAsync(hC, dC, bytes, cudaMemcpyDeviceToHost, NULL));
        CK(cudaStreamSynchronize(NULL));
        for (int t = 0; t < 64; t++) { /* sampled elements against FP64 */
            const int i = (int)((urand() + 1) * 0.5 * n) % n, j = (int)((urand() + 1) * 0.5 * n) % n;
            double ref = 0, mag = 0;
            for (int p = 0; p < n; p++) {
                ref += (double)hA[i + (size_t)p * n] * hB[p + (size_t)j * n];
                mag += fabs((double)hA[i + (size_t)p * n] * hB[p + (size_t)j * n]);
            }
            const double e = fabs((double)hC[i + (size_t)j * n] - ref) / mag;
            if (!(e <= 1e-5)) bad++;
            if (!(e <= worst)) worst = e;
        }
    }
    cublasSetStream(H, S);
    printf("%-44s %s (worst sampled error %.2e)\n", "legacy default stream: ordered",
           bad ? "FAIL" : "ok", worst);
    if (bad) failed++;
    else passed++;
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    cudaFreeHost(hA), cudaFreeHost(hB), cudaFreeHost(hC);
}

int gpu_check_main(void);
int gpu_check_main(void) {
    *(void **)&p_set = dlsym(RTLD_DEFAULT, "tcnla_cublas_set_policy");
    *(void **)&p_get = dlsym(RTLD_DEFAULT, "tcnla_cublas_get_policy");
    *(void **)&p_stats = dlsym(RTLD_DEFAULT, "tcnla_cublas_get_stats");
    *(void **)&p_name = dlsym(RTLD_DEFAULT, "tcnla_cublas_path_name");
    hooked = p_set && p_get && p_stats && p_name;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        printf("gpu_check: no GPU\n");
        return 2;
    }
    if (hooked) { /* the test's sizes above the thresholds */
        p_get(&pol_default);
        pol_default.fp32_min_dim = 16, pol_default.fp32_min_flops = 0;
        pol_default.fp64_min_dim = 16, pol_default.fp64_min_flops = 0;
        set_native(0);
    }
    printf("gpu_check: %s\n", hooked ? "under libtcnla_cublas.so" : "plain cuBLAS");
    if (cublasCreate(&H) || cublasLtCreate(&LT)) return 2;
    CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
    cublasSetStream(H, S);

    const int T = TAKEN;
    const int P_TYPE = TCNLA_CUBLAS_PATH_TYPE, P_ARGS = TCNLA_CUBLAS_PATH_ARGS,
              P_CAP = TCNLA_CUBLAS_PATH_CAPTURE, P_SIZE = TCNLA_CUBLAS_PATH_SIZE;
    /* name, entry, ta, tb, m, n, k, pad, batch, alpha, beta, devptr, c_nan, a_nan, wide, ex,
       tf32, capture, badld, lt_epi, lt_d, lt_row, lt_tf32, expect */
    const case_t cases[] = {
        {"Sgemm_v2 NN", E_SGEMM, 0, 0, 300, 200, 500, 0, 1, 1.0, 0.0, .expect = T},
        {"Sgemm_v2 TN lda pad", E_SGEMM, 1, 0, 257, 129, 333, 5, 1, 0.75, 0.5, .expect = T},
        {"Sgemm_v2 NT ld pad", E_SGEMM, 0, 1, 200, 300, 256, 3, 1, -1.5, 1.0, .expect = T},
        {"Sgemm_v2 TT", E_SGEMM, 1, 1, 128, 160, 640, 1, 1, 1.0, -2.0, .expect = T},
        {"Sgemm_v2 beta=0, NaN in C", E_SGEMM, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0, .c_nan = 1,
         .expect = T},
        {"Sgemm_v2 NaN in A", E_SGEMM, 0, 0, 256, 192, 256, 0, 1, 1.0, 0.5, .a_nan = 1,
         .expect = T},
        {"Sgemm_v2 rows over 2^-60..2^60", E_SGEMM, 0, 0, 256, 256, 512, 0, 1, 1.0, 0.0, .wide = 1,
         .expect = T},
        {"Sgemm_v2 device pointer mode", E_SGEMM, 0, 1, 256, 200, 300, 2, 1, 2.0, 0.25,
         .devptr = 1, .expect = T},
        {"Sgemm_v2_64 TN", E_SGEMM64, 1, 0, 300, 200, 500, 1, 1, 1.0, 0.5, .expect = T},
        {"SgemmStridedBatched NN x3", E_SSB, 0, 0, 200, 160, 300, 2, 3, 1.0, 0.5, .expect = T},
        {"SgemmStridedBatched TT x2 devptr", E_SSB, 1, 1, 160, 200, 256, 1, 2, 0.5, 1.0,
         .devptr = 1, .expect = T},
        {"SgemmStridedBatched_64 NT x3", E_SSB64, 0, 1, 192, 128, 320, 0, 3, 1.0, 0.0,
         .expect = T},
        {"SgemmBatched strided arrays x3", E_SB, 0, 0, 200, 160, 300, 2, 3, 1.0, 0.5, .expect = T},
        {"SgemmBatched permuted arrays x3", E_SB_PERM, 1, 0, 160, 200, 256, 1, 3, 1.0, 0.5,
         .expect = T},
        {"SgemmBatched_64 x2", E_SB64, 0, 1, 128, 256, 256, 0, 2, 1.0, 0.0, .expect = T},
        {"GemmEx COMPUTE_32F", E_GEMMEX, 0, 0, 300, 200, 500, 1, 1, 1.0, 0.5, .expect = T},
        {"GemmEx COMPUTE_32F_PEDANTIC", E_GEMMEX, 1, 0, 256, 256, 256, 0, 1, 1.0, 0.0, .ex = 1,
         .expect = T},
        {"GemmEx legacy CUDA_R_32F", E_GEMMEX, 0, 1, 256, 128, 384, 0, 1, 1.0, 1.0, .ex = 2,
         .expect = T},
        {"GemmEx_64", E_GEMMEX64, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0, .expect = T},
        {"GemmStridedBatchedEx x3", E_GSBEX, 0, 0, 200, 160, 300, 2, 3, 1.0, 0.5, .expect = T},
        {"GemmStridedBatchedEx_64 x2", E_GSBEX64, 1, 1, 160, 160, 256, 0, 2, 1.0, 0.0,
         .expect = T},
        {"Dgemm_v2 NN", E_DGEMM, 0, 0, 300, 200, 500, 0, 1, 1.0, 0.0, .expect = T},
        {"Dgemm_v2 TN pad beta", E_DGEMM, 1, 0, 257, 129, 333, 3, 1, 0.5, 1.5, .expect = T},
        {"Dgemm_v2 device pointer mode", E_DGEMM, 0, 1, 200, 256, 256, 0, 1, 1.0, 0.5,
         .devptr = 1, .expect = T},
        {"Dgemm_v2_64", E_DGEMM64, 1, 1, 256, 256, 256, 1, 1, 1.0, 0.0, .expect = T},
        {"DgemmStridedBatched x3", E_DSB, 0, 0, 160, 200, 256, 2, 3, 1.0, 0.5, .expect = T},
        {"DgemmStridedBatched_64 x2", E_DSB64, 0, 1, 128, 128, 256, 0, 2, 1.0, 0.0, .expect = T},
        {"LtMatmul DEFAULT", E_LT, 0, 0, 300, 200, 500, 0, 1, 1.0, 0.0, .expect = T},
        {"LtMatmul BIAS (TN, D apart, beta)", E_LT, 1, 0, 256, 200, 320, 2, 1, 1.0, 0.5,
         .lt_epi = CUBLASLT_EPILOGUE_BIAS, .lt_d = 1, .expect = T},
        {"LtMatmul RELU", E_LT, 0, 1, 256, 256, 256, 0, 1, 1.0, 0.0,
         .lt_epi = CUBLASLT_EPILOGUE_RELU, .expect = T},
        {"LtMatmul RELU_BIAS devptr", E_LT, 0, 0, 256, 192, 256, 1, 1, 1.0, 1.0, .devptr = 1,
         .lt_epi = CUBLASLT_EPILOGUE_RELU_BIAS, .expect = T},
        {"LtMatmul GELU", E_LT, 1, 1, 192, 256, 256, 0, 1, 1.0, 0.0,
         .lt_epi = CUBLASLT_EPILOGUE_GELU, .expect = T},
        {"LtMatmul GELU_BIAS x3 batch", E_LT, 0, 1, 160, 128, 256, 1, 3, 1.0, 0.5,
         .lt_epi = CUBLASLT_EPILOGUE_GELU_BIAS, .expect = T},
        {"LtMatmul BIAS x2 batch, D apart", E_LT, 0, 0, 128, 160, 256, 2, 2, 0.5, 0.0,
         .lt_epi = CUBLASLT_EPILOGUE_BIAS, .lt_d = 1, .expect = T},
        {"LtMatmul BIAS, heuristic algo + workspace", E_LT, 1, 0, 256, 256, 512, 0, 1, 1.0, 0.0,
         .lt_epi = CUBLASLT_EPILOGUE_BIAS, .lt_algo = 1, .expect = T},
        /* to cuBLAS unchanged */
        {"pass: Sgemm_v2 TF32 math mode", E_SGEMM, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .tf32 = 1, .expect = P_TYPE},
        {"pass: GemmEx FP16 data", E_GEMMEX, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0, .ex = 3,
         .expect = P_TYPE},
        {"pass: GemmEx COMPUTE_32F_FAST_TF32", E_GEMMEX, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .ex = 4, .expect = P_TYPE},
        {"pass: GemmEx 32F under TF32 math mode", E_GEMMEX, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .tf32 = 1, .expect = P_TYPE},
        {"pass: LtMatmul FAST_TF32 compute", E_LT, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .lt_tf32 = 1, .expect = P_TYPE},
        {"pass: LtMatmul row-major C, D", E_LT, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0, .lt_row = 1,
         .expect = P_ARGS},
        {"pass: Sgemm_v2 in graph capture", E_SGEMM, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.5,
         .capture = 1, .expect = P_CAP},
        {"pass: LtMatmul in graph capture", E_LT, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .capture = 1, .expect = P_CAP},
        {"pass: Dgemm_v2 in graph capture", E_DGEMM, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .capture = 1, .expect = P_CAP},
        {"pass: Sgemm_v2 below the size threshold", E_SGEMM, 0, 0, 8, 8, 8, 0, 1, 1.0, 0.0,
         .expect = P_SIZE},
        {"pass: Sgemm_v2 lda < m (invalid)", E_SGEMM, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .badld = 1, .expect = P_ARGS},
        {"pass: Dgemm_v2 lda < m (invalid)", E_DGEMM, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .badld = 1, .expect = P_ARGS},
        {"pass: GemmEx lda < m (invalid)", E_GEMMEX, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0,
         .badld = 1, .expect = P_ARGS},
        {"pass: LtMatmul NULL handle", E_LT, 0, 0, 256, 256, 256, 0, 1, 1.0, 0.0, .lt_nullh = 1,
         .expect = P_ARGS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
    check_legacy_stream();
    check_threads(ndev);
    cudaStreamDestroy(S);
    cublasLtDestroy(LT);
    cublasDestroy(H);
    printf("gpu_check: %d passed, %d failed (%s)\n", passed, failed,
           hooked ? "under libtcnla_cublas.so" : "plain cuBLAS");
    return failed ? 1 : 0;
}

#ifndef GPU_CHECK_LIB
int main(void) { return gpu_check_main(); }
#endif
