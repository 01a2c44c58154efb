/* cuBLAS, cuBLASLt and cuSOLVER through one table of entry points
 * (src/backend/cuda/cuda_libs.c). libtcnla does not link these libraries:
 * every function it uses is looked up once, with dlsym on the handle of a
 * dlopen'ed libcublas.so.N / libcublasLt.so.N / libcusolver.so.N, which
 * finds the library's own definition. So a library preloaded to interpose
 * cuBLAS (LD_PRELOAD of a library exporting cublasSgemm_v2, ...) never
 * receives tcnla's own calls.
 *
 * Included by tn_cuda.h, so by every file of the CUDA backend (C and, for
 * nvcc, C++). After the vendor headers it redirects each name in the table
 * to the table's entry (#define cublasSgemm_v2 (tn_cuda_libs()->...)), so
 * the call sites keep the vendor's names, including cublas_v2.h's
 * cublasSgemm -> cublasSgemm_v2. A function missing from the table is a
 * link error of libtcnla.so (-Wl,--no-undefined; nm -u of the objects
 * shows it): add it to the lists below, both the TN_*_FUNCS list and its
 * #define. The vendor headers must not be
 * included after this one (their include guards keep them out). */
#ifndef TCNLA_CUDA_LIBS_H
#define TCNLA_CUDA_LIBS_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The entry points, by library (the names after cublas_v2.h's macros). */
#define TN_CUBLAS_FUNCS(X)                                                                         \
    X(cublasCreate_v2)                                                                             \
    X(cublasDestroy_v2)                                                                            \
    X(cublasSetStream_v2)                                                                          \
    X(cublasSetPointerMode_v2)                                                                     \
    X(cublasDgemm_v2)                                                                              \
    X(cublasDgemmStridedBatched)                                                                   \
    X(cublasDsymm_v2)                                                                              \
    X(cublasDsyrk_v2)                                                                              \
    X(cublasDtrmm_v2)                                                                              \
    X(cublasDtrsm_v2)                                                                              \
    X(cublasDdgmm)                                                                                 \
    X(cublasDgeam)                                                                                 \
    X(cublasSsyrk_v2)                                                                              \
    X(cublasStrsm_v2)
/* cublas_api.h overloads these in C++ (inline wrappers taking a
 * cudaDataType compute type), so their types are spelled out below */
#define TN_CUBLAS_FUNCS_OVERLOADED(X)                                                              \
    X(cublasGemmEx)                                                                                \
    X(cublasGemmStridedBatchedEx)
#define TN_CUBLASLT_FUNCS(X)                                                                       \
    X(cublasLtCreate)                                                                              \
    X(cublasLtDestroy)                                                                             \
    X(cublasLtMatmul)                                                                              \
    X(cublasLtMatmulAlgoGetHeuristic)                                                              \
    X(cublasLtMatmulDescCreate)                                                                    \
    X(cublasLtMatmulDescDestroy)                                                                   \
    X(cublasLtMatmulDescSetAttribute)                                                              \
    X(cublasLtMatmulPreferenceCreate)                                                              \
    X(cublasLtMatmulPreferenceDestroy)                                                             \
    X(cublasLtMatmulPreferenceSetAttribute)                                                        \
    X(cublasLtMatrixLayoutCreate)                                                                  \
    X(cublasLtMatrixLayoutDestroy)
#define TN_CUSOLVER_FUNCS(X)                                                                       \
    X(cusolverDnCreate)                                                                            \
    X(cusolverDnDestroy)                                                                           \
    X(cusolverDnSetStream)                                                                         \
    X(cusolverDnSgeqrf_bufferSize)                                                                 \
    X(cusolverDnSgeqrf)                                                                            \
    X(cusolverDnSorgqr_bufferSize)                                                                 \
    X(cusolverDnSorgqr)                                                                            \
    X(cusolverDnDsyevd_bufferSize)                                                                 \
    X(cusolverDnDsyevd)                                                                            \
    X(cusolverDnCreateGesvdjInfo)                                                                  \
    X(cusolverDnDestroyGesvdjInfo)                                                                 \
    X(cusolverDnDgesvdj_bufferSize)                                                                \
    X(cusolverDnDgesvdj)

/* The C functions of TN_CUBLAS_FUNCS_OVERLOADED (cuda_libs.c checks that
 * these types are the prototypes' own). */
typedef cublasStatus_t (*tn_pfn_cublasGemmEx)(cublasHandle_t, cublasOperation_t,
                                              cublasOperation_t, int, int, int, const void *,
                                              const void *, cudaDataType, int, const void *,
                                              cudaDataType, int, const void *, void *,
                                              cudaDataType, int, cublasComputeType_t,
                                              cublasGemmAlgo_t);
typedef cublasStatus_t (*tn_pfn_cublasGemmStridedBatchedEx)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *, const void *,
    cudaDataType, int, long long int, const void *, cudaDataType, int, long long int, const void *,
    void *, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);

/* Typed pointers to the real functions (their prototypes' types). */
#define TN_CUDA_LIBS_MEMBER(f) __typeof__(&f) f;
#define TN_CUDA_LIBS_MEMBER_OVERLOADED(f) tn_pfn_##f f;
struct tn_cuda_libs {
    TN_CUBLAS_FUNCS(TN_CUDA_LIBS_MEMBER)
    TN_CUBLAS_FUNCS_OVERLOADED(TN_CUDA_LIBS_MEMBER_OVERLOADED)
    TN_CUBLASLT_FUNCS(TN_CUDA_LIBS_MEMBER)
    TN_CUSOLVER_FUNCS(TN_CUDA_LIBS_MEMBER)
};
#undef TN_CUDA_LIBS_MEMBER
#undef TN_CUDA_LIBS_MEMBER_OVERLOADED

/* Loads the libraries and resolves the table, once for the process
 * (pthread_once): TCNLA_SUCCESS, TCNLA_ERR_NO_BACKEND when a library is
 * not found, TCNLA_ERR_CUBLAS / TCNLA_ERR_CUSOLVER when one lacks a
 * function. Every later call returns the same status. The CUDA handle's
 * creation calls it first and fails with it. */
int tn_cuda_libs_load(void);
/* The table (loaded on first use). Its entries are NULL unless
 * tn_cuda_libs_load() succeeded, which holds wherever a CUDA handle exists. */
const struct tn_cuda_libs *tn_cuda_libs(void);

#ifdef __cplusplus
}
#endif

/* The redirection of the call sites (not in cuda_libs.c, which fills the
 * table by these names). */
#ifndef TN_CUDA_LIBS_NO_REDIRECT
#define cublasCreate_v2 (tn_cuda_libs()->cublasCreate_v2)
#define cublasDestroy_v2 (tn_cuda_libs()->cublasDestroy_v2)
#define cublasSetStream_v2 (tn_cuda_libs()->cublasSetStream_v2)
#define cublasSetPointerMode_v2 (tn_cuda_libs()->cublasSetPointerMode_v2)
#define cublasDgemm_v2 (tn_cuda_libs()->cublasDgemm_v2)
#define cublasDgemmStridedBatched (tn_cuda_libs()->cublasDgemmStridedBatched)
#define cublasDsymm_v2 (tn_cuda_libs()->cublasDsymm_v2)
#define cublasDsyrk_v2 (tn_cuda_libs()->cublasDsyrk_v2)
#define cublasDtrmm_v2 (tn_cuda_libs()->cublasDtrmm_v2)
#define cublasDtrsm_v2 (tn_cuda_libs()->cublasDtrsm_v2)
#define cublasDdgmm (tn_cuda_libs()->cublasDdgmm)
#define cublasDgeam (tn_cuda_libs()->cublasDgeam)
#define cublasSsyrk_v2 (tn_cuda_libs()->cublasSsyrk_v2)
#define cublasStrsm_v2 (tn_cuda_libs()->cublasStrsm_v2)
#define cublasGemmEx (tn_cuda_libs()->cublasGemmEx)
#define cublasGemmStridedBatchedEx (tn_cuda_libs()->cublasGemmStridedBatchedEx)
#define cublasLtCreate (tn_cuda_libs()->cublasLtCreate)
#define cublasLtDestroy (tn_cuda_libs()->cublasLtDestroy)
#define cublasLtMatmul (tn_cuda_libs()->cublasLtMatmul)
#define cublasLtMatmulAlgoGetHeuristic (tn_cuda_libs()->cublasLtMatmulAlgoGetHeuristic)
#define cublasLtMatmulDescCreate (tn_cuda_libs()->cublasLtMatmulDescCreate)
#define cublasLtMatmulDescDestroy (tn_cuda_libs()->cublasLtMatmulDescDestroy)
#define cublasLtMatmulDescSetAttribute (tn_cuda_libs()->cublasLtMatmulDescSetAttribute)
#define cublasLtMatmulPreferenceCreate (tn_cuda_libs()->cublasLtMatmulPreferenceCreate)
#define cublasLtMatmulPreferenceDestroy (tn_cuda_libs()->cublasLtMatmulPreferenceDestroy)
#define cublasLtMatmulPreferenceSetAttribute                                                       \
    (tn_cuda_libs()->cublasLtMatmulPreferenceSetAttribute)
#define cublasLtMatrixLayoutCreate (tn_cuda_libs()->cublasLtMatrixLayoutCreate)
#define cublasLtMatrixLayoutDestroy (tn_cuda_libs()->cublasLtMatrixLayoutDestroy)
#define cusolverDnCreate (tn_cuda_libs()->cusolverDnCreate)
#define cusolverDnDestroy (tn_cuda_libs()->cusolverDnDestroy)
#define cusolverDnSetStream (tn_cuda_libs()->cusolverDnSetStream)
#define cusolverDnSgeqrf_bufferSize (tn_cuda_libs()->cusolverDnSgeqrf_bufferSize)
#define cusolverDnSgeqrf (tn_cuda_libs()->cusolverDnSgeqrf)
#define cusolverDnSorgqr_bufferSize (tn_cuda_libs()->cusolverDnSorgqr_bufferSize)
#define cusolverDnSorgqr (tn_cuda_libs()->cusolverDnSorgqr)
#define cusolverDnDsyevd_bufferSize (tn_cuda_libs()->cusolverDnDsyevd_bufferSize)
#define cusolverDnDsyevd (tn_cuda_libs()->cusolverDnDsyevd)
#define cusolverDnCreateGesvdjInfo (tn_cuda_libs()->cusolverDnCreateGesvdjInfo)
#define cusolverDnDestroyGesvdjInfo (tn_cuda_libs()->cusolverDnDestroyGesvdjInfo)
#define cusolverDnDgesvdj_bufferSize (tn_cuda_libs()->cusolverDnDgesvdj_bufferSize)
#define cusolverDnDgesvdj (tn_cuda_libs()->cusolverDnDgesvdj)
#endif

#endif
