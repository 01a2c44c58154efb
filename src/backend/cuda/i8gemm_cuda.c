/* Exact INT8 products for Ozaki scheme II: C (m x n, int32) = A^T B with A
 * (k x m) and B (k x n) int8, column-major, through cuBLASLt with the
 * algorithm picked by measurement.
 *
 * Why: cuBLAS's default choice for the TN INT8 GEMM is far from its best on
 * some shapes. Measured on an H200 (a throwaway probe, constant data):
 * 16384^3 runs at 1211 TOPS through cublasGemmEx, while the third of
 * cuBLASLt's heuristic candidates runs it at 1802 TOPS (16384 x 8192 x 16384
 * reaches 1798 through cublasGemmEx); on scheme II's residues the 8
 * candidates took 5.7 to 8.1 ms (tn_cuda_i8gemm_choice gives them). Scheme II calls one such product per modulus, so the first
 * products of a new shape try the candidates in turn, each between two
 * events, and the rest use the fastest. The products are exact integers
 * (|partial sums| < 2^31 for k <= TN_OZ2_KBLOCK), so whichever algorithm
 * runs, C is the same bit for bit: the choice changes only the time.
 *
 * State (per handle, h->cuda->i8): the cuBLASLt handle, a 32 MiB workspace
 * and the last TN_I8_SHAPES shapes with their candidates and choice. Small
 * products (m n k < 2^33) take the first candidate without trying. */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h" /* cuBLASLt through cuda_libs.h */

#include <stdlib.h>
#include <string.h>

#define TN_I8_CAND 8
#define TN_I8_SHAPES 8
#define TN_I8_WS ((size_t)32 << 20)
#define TN_I8_TUNE_MIN ((double)(1ull << 33)) /* m n k below which nothing is tried */

typedef struct {
    int m, n, k, lda, ldb, ldc, used;
    int ncand, next, best; /* best < 0 while trying */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t cand[TN_I8_CAND];
    float ms[TN_I8_CAND];
    cudaEvent_t ev[2 * TN_I8_CAND];
} i8_shape;

struct tn_i8_state {
    cublasLtHandle_t lt;
    void *ws;
    int victim; /* next entry to replace */
    i8_shape sh[TN_I8_SHAPES];
};

static void shape_clear(i8_shape *e) {
    if (!e->used) return;
    for (int i = 0; i < 2 * TN_I8_CAND; i++)
        if (e->ev[i]) cudaEventDestroy(e->ev[i]);
    if (e->desc) cublasLtMatmulDescDestroy(e->desc);
    if (e->la) cublasLtMatrixLayoutDestroy(e->la);
    if (e->lb) cublasLtMatrixLayoutDestroy(e->lb);
    if (e->lc) cublasLtMatrixLayoutDestroy(e->lc);
    memset(e, 0, sizeof *e);
}

void tn_cuda_i8_release(struct tn_cuda_ctx *c) {
    struct tn_i8_state *s = c->i8;
    if (!s) return;
    for (int i = 0; i < TN_I8_SHAPES; i++) shape_clear(&s->sh[i]);
    if (s->ws) cudaFree(s->ws);
    if (s->lt) cublasLtDestroy(s->lt);
    free(s);
    c->i8 = NULL;
}

/* the entry of this shape, set up (descriptors, candidates) when new;
 * NULL when cuBLASLt offers nothing (the caller falls back to GemmEx) */
static i8_shape *shape_of(struct tn_i8_state *s, int m, int n, int k, int lda, int ldb,
                          int ldc) {
    for (int i = 0; i < TN_I8_SHAPES; i++) {
        i8_shape *e = &s->sh[i];
        if (e->used && e->m == m && e->n == n && e->k == k && e->lda == lda && e->ldb == ldb &&
            e->ldc == ldc)
            return e->ncand > 0 ? e : NULL;
    }
    i8_shape *e = &s->sh[s->victim];
    s->victim = (s->victim + 1) % TN_I8_SHAPES;
    shape_clear(e);
    e->used = 1, e->m = m, e->n = n, e->k = k, e->lda = lda, e->ldb = ldb, e->ldc = ldc;
    e->best = -1;
    const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    const size_t wsb = TN_I8_WS;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res[TN_I8_CAND];
    int nres = 0;
    if (cublasLtMatmulDescCreate(&e->desc, CUBLAS_COMPUTE_32I, CUDA_R_32I) ||
        cublasLtMatmulDescSetAttribute(e->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT) ||
        cublasLtMatmulDescSetAttribute(e->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN) ||
        cublasLtMatrixLayoutCreate(&e->la, CUDA_R_8I, (uint64_t)k, (uint64_t)m, lda) ||
        cublasLtMatrixLayoutCreate(&e->lb, CUDA_R_8I, (uint64_t)k, (uint64_t)n, ldb) ||
        cublasLtMatrixLayoutCreate(&e->lc, CUDA_R_32I, (uint64_t)m, (uint64_t)n, ldc) ||
        cublasLtMatmulPreferenceCreate(&pref) ||
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
                                             sizeof wsb) ||
        cublasLtMatmulAlgoGetHeuristic(s->lt, e->desc, e->la, e->lb, e->lc, e->lc, pref,
                                       TN_I8_CAND, res, &nres))
        nres = 0;
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    for (int i = 0; i < nres; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS) e->cand[e->ncand++] = res[i].algo;
    if (e->ncand > 1 && (double)m * n * k >= TN_I8_TUNE_MIN) {
        for (int i = 0; i < 2 * e->ncand; i++)
            if (cudaEventCreate(&e->ev[i]) != cudaSuccess) {
                e->ev[i] = NULL;
                e->best = 0; /* no events: no trying */
            }
    } else {
        e->best = 0;
    }
    return e->ncand > 0 ? e : NULL;
}

/* After the last candidate ran: wait for it, keep the fastest. */
static void pick(i8_shape *e) {
    int best = 0;
    if (cudaEventSynchronize(e->ev[2 * e->ncand - 1]) != cudaSuccess) {
        (void)cudaGetLastError();
    } else {
        for (int i = 0; i < e->ncand; i++) {
            float t = 0.0f;
            if (e->ms[i] >= 0.0f &&
                cudaEventElapsedTime(&t, e->ev[2 * i], e->ev[2 * i + 1]) == cudaSuccess)
                e->ms[i] = t;
            else
                e->ms[i] = -1.0f; /* failed: never chosen */
            if (e->ms[i] >= 0.0f && (e->ms[best] < 0.0f || e->ms[i] < e->ms[best])) best = i;
        }
        (void)cudaGetLastError();
    }
    e->best = best;
}

int tn_cuda_i8gemm(struct tn_cuda_ctx *c, int m, int n, int k, const signed char *A, int lda,
                   const signed char *B, int ldb, int *C, int ldc) {
    const int32_t one = 1, zero = 0;
    struct tn_i8_state *s = c->i8;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) return TCNLA_ERR_ALLOC;
        c->i8 = s;
        if (cublasLtCreate(&s->lt) != CUBLAS_STATUS_SUCCESS) s->lt = NULL;
        if (cudaMalloc(&s->ws, TN_I8_WS) != cudaSuccess) {
            (void)cudaGetLastError();
            s->ws = NULL;
        }
    }
    i8_shape *e = s->lt && s->ws ? shape_of(s, m, n, k, lda, ldb, ldc) : NULL;
    if (e) {
        const int trying = e->best < 0;
        const int a = trying ? e->next : e->best;
        if (trying) cudaEventRecord(e->ev[2 * a], c->stream);
        cublasStatus_t r = cublasLtMatmul(s->lt, e->desc, &one, A, e->la, B, e->lb, &zero, C,
                                          e->lc, C, e->lc, &e->cand[a], s->ws, TN_I8_WS,
                                          c->stream);
        if (trying) {
            cudaEventRecord(e->ev[2 * a + 1], c->stream);
            e->ms[a] = r == CUBLAS_STATUS_SUCCESS ? 0.0f : -1.0f;
            if (++e->next == e->ncand) pick(e);
        }
        if (r == CUBLAS_STATUS_SUCCESS || r == CUBLAS_STATUS_ALLOC_FAILED || !trying)
            return tn_cublas_st(r);
        /* a candidate that refuses to run: this product through GemmEx */
    }
    cublasStatus_t r = cublasGemmEx(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, A,
                                    CUDA_R_8I, lda, B, CUDA_R_8I, ldb, &zero, C, CUDA_R_32I, ldc,
                                    CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
    return tn_cublas_st(r);
}

/* the algorithm chosen for a shape: its index among the candidates and the
 * candidates' times (ms, -1 for failed ones); -1 while still trying or
 * unknown. For diagnostics: no caller in the library. */
int tn_cuda_i8gemm_choice(struct tn_cuda_ctx *c, int m, int n, int k, int *ncand,
                          float *ms) {
    struct tn_i8_state *s = c->i8;
    if (!s) return -1;
    for (int i = 0; i < TN_I8_SHAPES; i++) {
        i8_shape *e = &s->sh[i];
        if (e->used && e->m == m && e->n == n && e->k == k) {
            *ncand = e->ncand;
            for (int j = 0; j < e->ncand && ms; j++) ms[j] = e->ms[j];
            return e->best;
        }
    }
    return -1;
}
