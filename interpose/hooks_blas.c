/* The cuBLAS entry points libtcnla_cublas.so exports, each defined with
 * cuBLAS's own prototype (cublas_api.h):
 *   cublasSgemm_v2, cublasSgemmStridedBatched, cublasSgemmBatched,
 *   cublasGemmEx, cublasGemmStridedBatchedEx (FP32 A, B, C; compute type
 *   CUBLAS_COMPUTE_32F, _32F_PEDANTIC or the legacy CUDA_R_32F): the
 *   policy's FP32 method (TCEC);
 *   cublasDgemm_v2, cublasDgemmStridedBatched: the policy's FP64 method
 *   (the Ozaki scheme, DP mode);
 * each with its _64 form. A call goes to the real function unchanged,
 * with its status, when any check below says so (the path counted in
 * stats.c), and when tcnla fails: nothing the caller sees changes then. */
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One request in cuBLAS's terms (strides 0 and batch 1 for a single product). */
typedef struct {
    cublasOperation_t ta, tb;
    int64_t m, n, k;
    const void *alpha, *beta;
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc, sA, sB, sC, batch;
} req_t;

static int is_op(cublasOperation_t t) {
    return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
}

static int64_t max1(int64_t x) { return x > 1 ? x : 1; }

/* The arguments cuBLAS accepts, in the ranges tcnla takes (else cuBLAS
 * answers: its status is the caller's). `ptrs`: A, B, C given directly. */
static int args_ok(const req_t *r, int ptrs) {
    if (!is_op(r->ta) || !is_op(r->tb) || r->m < 0 || r->n < 0 || r->k < 0 || r->batch < 0)
        return 0;
    const int64_t arows = r->ta == CUBLAS_OP_N ? r->m : r->k;
    const int64_t brows = r->tb == CUBLAS_OP_N ? r->k : r->n;
    if (r->lda < max1(arows) || r->ldb < max1(brows) || r->ldc < max1(r->m)) return 0;
    if (r->m > INT_MAX || r->n > INT_MAX || r->k > INT_MAX || r->lda > INT_MAX ||
        r->ldb > INT_MAX || r->ldc > INT_MAX)
        return 0; /* (tcnla's CUDA backend takes 32-bit sizes) */
    if (!r->alpha || !r->beta) return 0;
    if (ptrs && (!r->A || !r->B || !r->C)) return 0;
    if (r->batch > 1) {
        if (r->sA < 0 || r->sB < 0 || r->sC < 0) return 0;
        /* the products' C must not overlap */
        if (r->sC < r->ldc * (r->n - 1) + r->m) return 0;
    }
    return 1;
}

/* The checks every hook makes, in order of cost; -1: the call may go to
 * tcnla, with its stream in *s and alpha, beta (host values, elem bytes
 * each) in a_out, b_out; else the path that sends it to cuBLAS. */
static int gate(cublasHandle_t h, int fp64, const req_t *r, int ptrs, int math_applies,
                const void *ret, cudaStream_t *s, void *a_out, void *b_out) {
    if (tci_inside()) return tci_nested_path(ret);
    const tcnla_cublas_policy_t p = tci_policy();
    if (fp64 ? p.fp64_method == TCNLA_GEMM_NATIVE_FP64 : p.fp32_method == TCNLA_GEMM_NATIVE_FP32)
        return TCNLA_CUBLAS_PATH_POLICY;
    cublasMath_t mm;
    if (tci_get_math_mode(h, &mm)) return TCNLA_CUBLAS_PATH_ARGS; /* (an invalid handle) */
    const int mode = (int)mm & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (fp64 ? (mode & CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH) != 0
             : math_applies && mode != CUBLAS_DEFAULT_MATH && mode != CUBLAS_PEDANTIC_MATH)
        return TCNLA_CUBLAS_PATH_TYPE; /* TF32, FP16 or emulated math asked for */
    if (!args_ok(r, ptrs)) return TCNLA_CUBLAS_PATH_ARGS;
    const int64_t md = fp64 ? p.fp64_min_dim : p.fp32_min_dim;
    const double mf = fp64 ? p.fp64_min_flops : p.fp32_min_flops;
    int64_t mn = r->m < r->n ? r->m : r->n;
    mn = mn < r->k ? mn : r->k;
    if (r->batch == 0 || mn == 0 || mn < md ||
        2.0 * (double)r->m * (double)r->n * (double)r->k * (double)r->batch < mf)
        return TCNLA_CUBLAS_PATH_SIZE;
    if (tci_from_vendor(ret)) return TCNLA_CUBLAS_PATH_INNER;
    if (tci_get_stream(h, s)) return TCNLA_CUBLAS_PATH_ARGS;
    int b = tci_stream_blocked(*s);
    if (b >= 0) return b;
    cublasPointerMode_t pm;
    if (tci_get_pointer_mode(h, &pm)) return TCNLA_CUBLAS_PATH_ARGS;
    const size_t es = fp64 ? 8 : 4;
    if (pm == CUBLAS_POINTER_MODE_DEVICE) {
        if (tci_read_device(*s, r->alpha, a_out, r->beta, b_out, es))
            return TCNLA_CUBLAS_PATH_FAILED;
    } else {
        memcpy(a_out, r->alpha, es);
        memcpy(b_out, r->beta, es);
    }
    return -1;
}

static int is_t(cublasOperation_t t) { return t != CUBLAS_OP_N; }

/* FP32: the path taken; *done products computed by tcnla. */
static int take_f32(cublasHandle_t h, const req_t *r, int math_applies, const void *ret,
                    int64_t *done) {
    *done = 0;
    cudaStream_t s;
    float alpha, beta;
    int path = gate(h, 0, r, 1, math_applies, ret, &s, &alpha, &beta);
    if (path >= 0) return path;
    int fb = 0;
    tci_enter();
    int st = tci_sgemm(s, tci_policy().fp32_method, is_t(r->ta), is_t(r->tb), r->m, r->n, r->k,
                       alpha, (const float *)r->A, r->lda, r->sA, (const float *)r->B, r->ldb,
                       r->sB, beta, (float *)r->C, r->ldc, r->sC, r->batch, &fb);
    tci_leave();
    if (st != TCNLA_SUCCESS) return TCNLA_CUBLAS_PATH_FAILED;
    *done = r->batch;
    return fb ? TCNLA_CUBLAS_PATH_FALLBACK : TCNLA_CUBLAS_PATH_TCNLA;
}

static int take_f64(cublasHandle_t h, const req_t *r, const void *ret, int64_t *done) {
    *done = 0;
    cudaStream_t s;
    double alpha, beta;
    int path = gate(h, 1, r, 1, 1, ret, &s, &alpha, &beta);
    if (path >= 0) return path;
    int fb = 0;
    tci_enter();
    int st = tci_dgemm(s, tci_policy().fp64_method, is_t(r->ta), is_t(r->tb), r->m, r->n, r->k,
                       alpha, (const double *)r->A, r->lda, r->sA, (const double *)r->B, r->ldb,
                       r->sB, beta, (double *)r->C, r->ldc, r->sC, r->batch, &fb, done);
    tci_leave();
    if (st != TCNLA_SUCCESS) return TCNLA_CUBLAS_PATH_FAILED;
    return fb ? TCNLA_CUBLAS_PATH_FALLBACK : TCNLA_CUBLAS_PATH_TCNLA;
}

/* The pointer arrays of cublasSgemmBatched (device memory): copied to the
 * host on the stream; products whose pointers advance by constant strides
 * go to tcnla as one strided batch, others one by one. */
static int take_f32_arrays(cublasHandle_t h, req_t *r, const float *const *Aa,
                           const float *const *Ba, float *const *Ca, const void *ret,
                           int64_t *done) {
    *done = 0;
    cudaStream_t s;
    float alpha, beta;
    req_t g = *r;
    g.batch = r->batch > 0 ? 1 : 0; /* (the arrays' strides are checked below) */
    if (!Aa || !Ba || !Ca) return TCNLA_CUBLAS_PATH_ARGS;
    int path = gate(h, 0, &g, 0, 1, ret, &s, &alpha, &beta);
    if (path >= 0) return path;
    const double work = 2.0 * (double)r->m * (double)r->n * (double)r->k * (double)r->batch;
    if (work < tci_policy().fp32_min_flops) return TCNLA_CUBLAS_PATH_SIZE;
    const size_t nb = (size_t)r->batch;
    if (nb > ((size_t)1 << 26)) return TCNLA_CUBLAS_PATH_ARGS;
    void **hp = malloc(3 * nb * sizeof(void *));
    if (!hp) return TCNLA_CUBLAS_PATH_FAILED;
    tci_enter();
    int rd = tci_read_device(s, Aa, hp, Ba, hp + nb, nb * sizeof(void *));
    if (!rd) rd = tci_read_device(s, Ca, hp + 2 * nb, NULL, NULL, nb * sizeof(void *));
    tci_leave();
    if (rd) {
        free(hp);
        return TCNLA_CUBLAS_PATH_FAILED;
    }
    /* constant strides (in floats, >= 0, C's products apart)? */
    int64_t st3[3] = {0, 0, 0};
    int strided = 1;
    for (int a = 0; a < 3; a++) {
        for (size_t i = 0; i < nb; i++)
            if (!hp[a * nb + i]) {
                free(hp);
                return TCNLA_CUBLAS_PATH_ARGS;
            }
        if (nb < 2) continue;
        const intptr_t d = (intptr_t)hp[a * nb + 1] - (intptr_t)hp[a * nb];
        if (d < 0 || d % (intptr_t)sizeof(float)) strided = 0;
        st3[a] = d / (intptr_t)sizeof(float);
        for (size_t i = 1; i < nb && strided; i++)
            if ((intptr_t)hp[a * nb + i] - (intptr_t)hp[a * nb + i - 1] != d) strided = 0;
    }
    if (nb > 1 && st3[2] < r->ldc * (r->n - 1) + r->m) strided = 0;
    const tcnla_gemm_method_t method = tci_policy().fp32_method;
    int fb = 0, any_fb = 0, st = TCNLA_SUCCESS;
    tci_enter();
    if (strided) {
        st = tci_sgemm(s, method, is_t(r->ta), is_t(r->tb), r->m, r->n, r->k, alpha,
                       (const float *)hp[0], r->lda, st3[0], (const float *)hp[nb], r->ldb,
                       st3[1], beta, (float *)hp[2 * nb], r->ldc, st3[2], r->batch, &any_fb);
        if (st == TCNLA_SUCCESS) *done = r->batch;
    } else {
        for (size_t i = 0; i < nb && st == TCNLA_SUCCESS; i++) {
            st = tci_sgemm(s, method, is_t(r->ta), is_t(r->tb), r->m, r->n, r->k, alpha,
                           (const float *)hp[i], r->lda, 0, (const float *)hp[nb + i], r->ldb, 0,
                           beta, (float *)hp[2 * nb + i], r->ldc, 0, 1, &fb);
            any_fb |= fb;
            if (st == TCNLA_SUCCESS) *done = (int64_t)i + 1;
        }
    }
    tci_leave();
    free(hp);
    if (st != TCNLA_SUCCESS) return TCNLA_CUBLAS_PATH_FAILED;
    return any_fb ? TCNLA_CUBLAS_PATH_FALLBACK : TCNLA_CUBLAS_PATH_TCNLA;
}

static int computed(int path) {
    return path == TCNLA_CUBLAS_PATH_TCNLA || path == TCNLA_CUBLAS_PATH_FALLBACK;
}

/* The real function of the hook `self` (one lookup, cached in `slot`). */
#define TCI_REAL(type, name, self)                                                                 \
    static type real_;                                                                             \
    type real = __atomic_load_n(&real_, __ATOMIC_ACQUIRE);                                         \
    if (!real) {                                                                                   \
        real = (type)tci_real(name, 0, (const void *)(self));                                      \
        __atomic_store_n(&real_, real, __ATOMIC_RELEASE);                                          \
    }                                                                                              \
    if (!real) return CUBLAS_STATUS_NOT_INITIALIZED;

/* Calls the real function inside the hook's scope (its own nested calls
 * to hooked names go straight through). */
#define TCI_CALL_REAL(st, call)                                                                    \
    do {                                                                                           \
        tci_enter();                                                                               \
        st = call;                                                                                 \
        tci_leave();                                                                               \
    } while (0)

/* The body of a hook on one request r (its initializer given last): the
 * decision `decide` (an expression of r, done and the caller's return
 * address), cuBLAS's own call `real_call` where tcnla did not compute the
 * product (after a failure in a batch, on the products it did not compute:
 * `done` of them were), and the count under `entry`. */
#define TCI_HOOK(entry, decide, real_call, ...)                                                    \
    const double t0 = tci_now();                                                                   \
    req_t r = {__VA_ARGS__};                                                                       \
    int64_t done;                                                                                  \
    int path = decide;                                                                             \
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;                                                     \
    if (!computed(path)) TCI_CALL_REAL(st, real_call);                                             \
    tci_count(entry, path, t0);                                                                    \
    return st

/* The same for the GemmEx entry points: a request only for FP32 data and
 * compute type (ex_types), else cuBLAS, or inside another hook that hook's
 * path. */
#define TCI_HOOK_EX(entry, real_call, ...)                                                         \
    const double t0 = tci_now();                                                                   \
    int ma = 1, path = TCNLA_CUBLAS_PATH_TYPE;                                                     \
    int64_t done = 0;                                                                              \
    if (ex_types(Atype, Btype, Ctype, computeType, &ma)) {                                         \
        req_t r = {__VA_ARGS__};                                                                   \
        path = take_f32(handle, &r, ma, __builtin_return_address(0), &done);                       \
    } else if (tci_inside()) {                                                                     \
        path = tci_nested_path(__builtin_return_address(0));                                       \
    }                                                                                              \
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;                                                     \
    if (!computed(path)) TCI_CALL_REAL(st, real_call);                                             \
    tci_count(entry, path, t0);                                                                    \
    return st

/* ------------------------------------------------------------ SGEMM */
typedef cublasStatus_t (*sgemm_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const float *, const float *, int, const float *, int,
                                  const float *, float *, int);
TCI_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         const float *B, int ldb, const float *beta, float *C,
                                         int ldc) {
    TCI_REAL(sgemm_t, "cublasSgemm_v2", cublasSgemm_v2)
    TCI_HOOK(TCI_E_SGEMM, take_f32(handle, &r, 1, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), transa,
             transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, 0, 0, 0, 1);
}

typedef cublasStatus_t (*sgemm64_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                    int64_t, int64_t, int64_t, const float *, const float *,
                                    int64_t, const float *, int64_t, const float *, float *,
                                    int64_t);
TCI_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n,
                                            int64_t k, const float *alpha, const float *A,
                                            int64_t lda, const float *B, int64_t ldb,
                                            const float *beta, float *C, int64_t ldc) {
    TCI_REAL(sgemm64_t, "cublasSgemm_v2_64", cublasSgemm_v2_64)
    TCI_HOOK(TCI_E_SGEMM_64, take_f32(handle, &r, 1, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), transa,
             transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, 0, 0, 0, 1);
}

typedef cublasStatus_t (*sgemm_sb_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const float *, const float *, int, long long int,
                                     const float *, int, long long int, const float *, float *,
                                     int, long long int, int);
TCI_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float *alpha, const float *A, int lda, long long int strideA, const float *B, int ldb,
    long long int strideB, const float *beta, float *C, int ldc, long long int strideC,
    int batchCount) {
    TCI_REAL(sgemm_sb_t, "cublasSgemmStridedBatched", cublasSgemmStridedBatched)
    TCI_HOOK(TCI_E_SGEMM_STRIDED, take_f32(handle, &r, 1, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
                  ldc, strideC, batchCount),
             transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB,
             strideC, batchCount);
}

typedef cublasStatus_t (*sgemm_sb64_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                       int64_t, int64_t, int64_t, const float *, const float *,
                                       int64_t, long long int, const float *, int64_t,
                                       long long int, const float *, float *, int64_t,
                                       long long int, int64_t);
TCI_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda, long long int strideA,
    const float *B, int64_t ldb, long long int strideB, const float *beta, float *C, int64_t ldc,
    long long int strideC, int64_t batchCount) {
    TCI_REAL(sgemm_sb64_t, "cublasSgemmStridedBatched_64", cublasSgemmStridedBatched_64)
    TCI_HOOK(TCI_E_SGEMM_STRIDED_64, take_f32(handle, &r, 1, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
                  ldc, strideC, batchCount),
             transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB,
             strideC, batchCount);
}

typedef cublasStatus_t (*sgemm_b_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const float *, const float *const[], int,
                                    const float *const[], int, const float *, float *const[], int,
                                    int);
TCI_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const float *alpha, const float *const Aarray[],
                                             int lda, const float *const Barray[], int ldb,
                                             const float *beta, float *const Carray[], int ldc,
                                             int batchCount) {
    TCI_REAL(sgemm_b_t, "cublasSgemmBatched", cublasSgemmBatched)
    TCI_HOOK(
        TCI_E_SGEMM_BATCHED,
        take_f32_arrays(handle, &r, Aarray, Barray, Carray, __builtin_return_address(0), &done),
        real(handle, transa, transb, m, n, k, alpha, Aarray + done, lda, Barray + done, ldb, beta,
             Carray + done, ldc, batchCount - (int)done),
        transa, transb, m, n, k, alpha, beta, NULL, NULL, NULL, lda, ldb, ldc, 0, 0, 0, batchCount);
}

typedef cublasStatus_t (*sgemm_b64_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                      int64_t, int64_t, int64_t, const float *,
                                      const float *const[], int64_t, const float *const[],
                                      int64_t, const float *, float *const[], int64_t, int64_t);
TCI_EXPORT cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int64_t m, int64_t n,
                                                int64_t k, const float *alpha,
                                                const float *const Aarray[], int64_t lda,
                                                const float *const Barray[], int64_t ldb,
                                                const float *beta, float *const Carray[],
                                                int64_t ldc, int64_t batchCount) {
    TCI_REAL(sgemm_b64_t, "cublasSgemmBatched_64", cublasSgemmBatched_64)
    TCI_HOOK(
        TCI_E_SGEMM_BATCHED_64,
        take_f32_arrays(handle, &r, Aarray, Barray, Carray, __builtin_return_address(0), &done),
        real(handle, transa, transb, m, n, k, alpha, Aarray + done, lda, Barray + done, ldb, beta,
             Carray + done, ldc, batchCount - done),
        transa, transb, m, n, k, alpha, beta, NULL, NULL, NULL, lda, ldb, ldc, 0, 0, 0, batchCount);
}

/* ------------------------------------------------------------ GemmEx */
/* FP32 data and an FP32 compute type (-1: not taken); *math_applies: the
 * handle's math mode may still lower the precision (CUBLAS_COMPUTE_32F and
 * the legacy CUDA_R_32F), not for _PEDANTIC. */
static int ex_types(cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t cmp,
                    int *math_applies) {
    if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F) return 0;
    *math_applies = cmp != CUBLAS_COMPUTE_32F_PEDANTIC;
    return cmp == CUBLAS_COMPUTE_32F || cmp == CUBLAS_COMPUTE_32F_PEDANTIC ||
           (int)cmp == (int)CUDA_R_32F;
}

TCI_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                       cublasOperation_t transb, int m, int n, int k,
                                       const void *alpha, const void *A, cudaDataType Atype,
                                       int lda, const void *B, cudaDataType Btype, int ldb,
                                       const void *beta, void *C, cudaDataType Ctype, int ldc,
                                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    TCI_REAL(__typeof__(&cublasGemmEx), "cublasGemmEx", cublasGemmEx)
    TCI_HOOK_EX(TCI_E_GEMMEX,
                real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                     Ctype, ldc, computeType, algo),
                transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, 0, 0, 0, 1);
}

TCI_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int64_t m, int64_t n,
                                          int64_t k, const void *alpha, const void *A,
                                          cudaDataType Atype, int64_t lda, const void *B,
                                          cudaDataType Btype, int64_t ldb, const void *beta,
                                          void *C, cudaDataType Ctype, int64_t ldc,
                                          cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
    TCI_REAL(__typeof__(&cublasGemmEx_64), "cublasGemmEx_64", cublasGemmEx_64)
    TCI_HOOK_EX(TCI_E_GEMMEX_64,
                real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                     Ctype, ldc, computeType, algo),
                transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, 0, 0, 0, 1);
}

TCI_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long int strideA,
    const void *B, cudaDataType Btype, int ldb, long long int strideB, const void *beta, void *C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    TCI_REAL(__typeof__(&cublasGemmStridedBatchedEx), "cublasGemmStridedBatchedEx",
             cublasGemmStridedBatchedEx)
    TCI_HOOK_EX(TCI_E_GEMM_STRIDED_EX,
                real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                     strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo),
                transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB,
                strideC, batchCount);
}

TCI_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void *B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void *beta, void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    TCI_REAL(__typeof__(&cublasGemmStridedBatchedEx_64), "cublasGemmStridedBatchedEx_64",
             cublasGemmStridedBatchedEx_64)
    TCI_HOOK_EX(TCI_E_GEMM_STRIDED_EX_64,
                real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                     strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo),
                transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB,
                strideC, batchCount);
}

/* ------------------------------------------------------------ DGEMM */
typedef cublasStatus_t (*dgemm_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const double *, const double *, int, const double *, int,
                                  const double *, double *, int);
TCI_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const double *alpha, const double *A, int lda,
                                         const double *B, int ldb, const double *beta, double *C,
                                         int ldc) {
    TCI_REAL(dgemm_t, "cublasDgemm_v2", cublasDgemm_v2)
    TCI_HOOK(TCI_E_DGEMM, take_f64(handle, &r, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), transa,
             transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, 0, 0, 0, 1);
}

typedef cublasStatus_t (*dgemm64_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                    int64_t, int64_t, int64_t, const double *, const double *,
                                    int64_t, const double *, int64_t, const double *, double *,
                                    int64_t);
TCI_EXPORT cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n,
                                            int64_t k, const double *alpha, const double *A,
                                            int64_t lda, const double *B, int64_t ldb,
                                            const double *beta, double *C, int64_t ldc) {
    TCI_REAL(dgemm64_t, "cublasDgemm_v2_64", cublasDgemm_v2_64)
    TCI_HOOK(TCI_E_DGEMM_64, take_f64(handle, &r, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), transa,
             transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, 0, 0, 0, 1);
}

typedef cublasStatus_t (*dgemm_sb_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const double *, const double *, int, long long int,
                                     const double *, int, long long int, const double *, double *,
                                     int, long long int, int);
TCI_EXPORT cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const double *alpha, const double *A, int lda, long long int strideA, const double *B,
    int ldb, long long int strideB, const double *beta, double *C, int ldc,
    long long int strideC, int batchCount) {
    TCI_REAL(dgemm_sb_t, "cublasDgemmStridedBatched", cublasDgemmStridedBatched)
    TCI_HOOK(TCI_E_DGEMM_STRIDED, take_f64(handle, &r, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A + done * strideA, lda, strideA,
                  B + done * strideB, ldb, strideB, beta, C + done * strideC, ldc, strideC,
                  batchCount - (int)done),
             transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB,
             strideC, batchCount);
}

typedef cublasStatus_t (*dgemm_sb64_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                       int64_t, int64_t, int64_t, const double *, const double *,
                                       int64_t, long long int, const double *, int64_t,
                                       long long int, const double *, double *, int64_t,
                                       long long int, int64_t);
TCI_EXPORT cublasStatus_t cublasDgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const double *alpha, const double *A, int64_t lda,
    long long int strideA, const double *B, int64_t ldb, long long int strideB,
    const double *beta, double *C, int64_t ldc, long long int strideC, int64_t batchCount) {
    TCI_REAL(dgemm_sb64_t, "cublasDgemmStridedBatched_64", cublasDgemmStridedBatched_64)
    TCI_HOOK(TCI_E_DGEMM_STRIDED_64, take_f64(handle, &r, __builtin_return_address(0), &done),
             real(handle, transa, transb, m, n, k, alpha, A + done * strideA, lda, strideA,
                  B + done * strideB, ldb, strideB, beta, C + done * strideC, ldc, strideC,
                  batchCount - done),
             transa, transb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, strideA, strideB,
             strideC, batchCount);
}
