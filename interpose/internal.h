/* Private declarations of libtcnla_cublas.so (interpose/): the LD_PRELOAD
 * library that takes FP32 / FP64 cuBLAS and cuBLASLt GEMMs to tcnla.
 *   hooks_blas.c  the cublas* entry points
 *   hooks_lt.c    cublasLtMatmul
 *   lt_desc.c     reading a cuBLASLt matmul descriptor and its layouts
 *   policy.c      TCNLA_CUBLAS_* and tcnla_cublas_set_policy / _get_policy
 *   real.c        the real cuBLAS / cuBLASLt functions, the caller check
 *   engine.c      libtcnla (dlopen'ed) and one tcnla handle per device
 *   stats.c       counts and times per entry point and path, the exit log
 *   epilogue.cu   the cuBLASLt epilogues (bias, ReLU, GELU) and C -> D */
#ifndef TCNLA_INTERPOSE_INTERNAL_H
#define TCNLA_INTERPOSE_INTERNAL_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "tcnla.h"
#include "tcnla_cublas.h"

#define TCI_EXPORT __attribute__((visibility("default")))
#define TCI_HIDDEN __attribute__((visibility("hidden")))

/* ------------------------------------------------------------- policy.c */
/* The policy in force (read from the environment on first use). */
TCI_HIDDEN tcnla_cublas_policy_t tci_policy(void);
/* 1: FP64 products with OZAKI_INT8 run in the Ozaki AUTO mode (the default),
 * 0: in DP mode (TCNLA_CUBLAS_FP64=ozaki_dp) */
TCI_HIDDEN int tci_fp64_auto(void);

/* --------------------------------------------------------------- real.c */
/* The real function `name` of cuBLAS (lt = 0) or cuBLASLt (lt = 1): by
 * dlsym(RTLD_NEXT) where the library is in the global scope, else in the
 * loaded library (dlopen RTLD_NOLOAD of libcublas.so.13 / .12 / .so), else
 * the library loaded. NULL when there is none. `self` is the hook itself,
 * never returned. Callers cache the result. */
TCI_HIDDEN void *tci_real(const char *name, int lt, const void *self);
/* The cuBLAS getters the hooks read the handle with (0 on success). */
TCI_HIDDEN int tci_get_stream(cublasHandle_t h, cudaStream_t *s);
TCI_HIDDEN int tci_get_pointer_mode(cublasHandle_t h, cublasPointerMode_t *m);
TCI_HIDDEN int tci_get_math_mode(cublasHandle_t h, cublasMath_t *m);
/* The cuBLASLt getters (lt_desc.c). */
typedef cublasStatus_t (*tci_lt_desc_get_t)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                            void *, size_t, size_t *);
typedef cublasStatus_t (*tci_lt_layout_get_t)(cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayoutAttribute_t, void *, size_t,
                                              size_t *);
TCI_HIDDEN tci_lt_desc_get_t tci_lt_desc_get(void);
TCI_HIDDEN tci_lt_layout_get_t tci_lt_layout_get(void);
/* 1 when the return address `ret` lies in one of NVIDIA's libraries
 * (libcublas*, libcusolver*, libcusparse*, libcudnn*, libcufft*, libnv*):
 * their calls to the hooked names go to the real functions. */
TCI_HIDDEN int tci_from_vendor(const void *ret);
/* The calling thread is inside a hook (nested calls go to cuBLAS). */
TCI_HIDDEN int tci_inside(void);
/* The path of a call made inside a hook, from return address ret:
 * TCNLA_CUBLAS_PATH_INNER (from NVIDIA's libraries) or _NESTED. */
TCI_HIDDEN int tci_nested_path(const void *ret);
TCI_HIDDEN void tci_enter(void);
TCI_HIDDEN void tci_leave(void);

/* ------------------------------------------------------------- engine.c */
/* Why a call may not go to tcnla before the product: the stream is being
 * captured (TCNLA_CUBLAS_PATH_CAPTURE), or tcnla's state is unusable
 * (TCNLA_CUBLAS_PATH_FAILED); -1: it may. */
TCI_HIDDEN int tci_stream_blocked(cudaStream_t s);
/* Reads `bytes` from the device pointers a and b (either may be NULL) into
 * out_a / out_b, ordered on s (the stream-ordered copy of device pointer
 * mode's alpha and beta). 0 on success. */
TCI_HIDDEN int tci_read_device(cudaStream_t s, const void *a, void *out_a, const void *b,
                               void *out_b, size_t bytes);
/* The products (column-major, cuBLAS's argument conventions, arguments
 * already checked). Each returns 0 when tcnla computed it (*fallback = 1
 * when by another method than asked), else a tcnla status: then C holds
 * what it held (or, for a CUDA error after the product began, what cuBLAS
 * will overwrite). tci_dgemm runs a batch product by product: *done
 * products were computed (C_b for b < *done holds its result), the caller
 * hands the others to cuBLAS. */
TCI_HIDDEN int tci_sgemm(cudaStream_t s, tcnla_gemm_method_t method, int ta, int tb, int64_t m,
                         int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                         int64_t sA, const float *B, int64_t ldb, int64_t sB, float beta,
                         float *C, int64_t ldc, int64_t sC, int64_t batch, int *fallback);
TCI_HIDDEN int tci_dgemm(cudaStream_t s, tcnla_gemm_method_t method, int ta, int tb, int64_t m,
                         int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                         int64_t sA, const double *B, int64_t ldb, int64_t sB, double beta,
                         double *C, int64_t ldc, int64_t sC, int64_t batch, int *fallback,
                         int64_t *done);

/* -------------------------------------------------------------- stats.c */
typedef enum {
    TCI_E_SGEMM = 0,
    TCI_E_SGEMM_64,
    TCI_E_SGEMM_STRIDED,
    TCI_E_SGEMM_STRIDED_64,
    TCI_E_SGEMM_BATCHED,
    TCI_E_SGEMM_BATCHED_64,
    TCI_E_GEMMEX,
    TCI_E_GEMMEX_64,
    TCI_E_GEMM_STRIDED_EX,
    TCI_E_GEMM_STRIDED_EX_64,
    TCI_E_DGEMM,
    TCI_E_DGEMM_64,
    TCI_E_DGEMM_STRIDED,
    TCI_E_DGEMM_STRIDED_64,
    TCI_E_LT_MATMUL,
    TCI_ENTRIES
} tci_entry_t;
/* Monotonic seconds. */
TCI_HIDDEN double tci_now(void);
/* One call of entry e that took path p, t0 = tci_now() at its start. */
TCI_HIDDEN void tci_count(tci_entry_t e, int path, double t0);

/* ------------------------------------------------------------ lt_desc.c */
/* What cublasLtMatmul is asked, as far as the hook takes it. */
typedef struct {
    int ta, tb;               /* 0 N, 1 T */
    int64_t m, n, k, batch;
    int64_t lda, ldb, ldc, ldd;
    int64_t sA, sB, sC, sD;   /* batch strides in elements */
    int device_scalars;       /* pointer mode DEVICE (else HOST) */
    int bias, relu, gelu;     /* the epilogue's parts */
    const float *bias_ptr;
    int64_t bias_stride;
} tci_lt_call_t;
/* Fills *c from the descriptors. Returns -1 when the call is taken,
 * else the path that sends it to cuBLASLt (TCNLA_CUBLAS_PATH_TYPE: types,
 * compute type; TCNLA_CUBLAS_PATH_ARGS: layout, epilogue, pointer mode, an
 * attribute that cannot be read). */
TCI_HIDDEN int tci_lt_read(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Ad,
                           cublasLtMatrixLayout_t Bd, cublasLtMatrixLayout_t Cd,
                           cublasLtMatrixLayout_t Dd, tci_lt_call_t *c);

/* ---------------------------------------------------------- epilogue.cu */
#ifdef __cplusplus
extern "C" {
#endif
/* D_b = act(D_b + bias_b 1^T) for b < batch, bias_b = bias + b * bias_stride
 * (bias NULL: no bias), act = ReLU (relu), GELU's tanh form (gelu) or none.
 * Returns a cudaError_t. */
TCI_HIDDEN int tci_epilogue(float *D, int64_t ldd, int64_t sD, int64_t m, int64_t n,
                            int64_t batch, const float *bias, int64_t bias_stride, int relu,
                            int gelu, cudaStream_t s);
/* D_b = C_b (m x n) for b < batch. Returns a cudaError_t. */
TCI_HIDDEN int tci_copy(const float *C, int64_t ldc, int64_t sC, float *D, int64_t ldd,
                        int64_t sD, int64_t m, int64_t n, int64_t batch, cudaStream_t s);
#ifdef __cplusplus
}
#endif

#endif
