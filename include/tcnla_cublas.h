/*
 * tcnla_cublas.h -- the control interface of libtcnla_cublas.so, the
 * LD_PRELOAD library that takes an unmodified program's FP32 and FP64
 * cuBLAS / cuBLASLt GEMMs and computes them with tcnla (docs/interpose.md).
 *
 * A program does not need this header to be accelerated: preloading the
 * library is enough, and the environment variables TCNLA_CUBLAS_* set the
 * policy (read once, at the first hooked call or the first call below).
 * These functions exist in libtcnla_cublas.so only; a program that wants
 * to work with and without the preload looks them up with
 * dlsym(RTLD_DEFAULT, "tcnla_cublas_set_policy") and the like.
 */
#ifndef TCNLA_CUBLAS_H
#define TCNLA_CUBLAS_H

#include <stdint.h>

#include "tcnla.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the hooked entry points do. */
typedef struct {
    /* FP32 GEMMs (cublasSgemm*, cublasGemm*Ex with FP32 data and compute,
     * cublasLtMatmul with FP32 data): TCNLA_GEMM_TCEC_FP16 (default; a
     * product whose operands FP16's split cannot hold runs TCEC_TF32),
     * TCNLA_GEMM_TCEC_TF32, or TCNLA_GEMM_NATIVE_FP32 = every call goes to
     * cuBLAS unchanged (env TCNLA_CUBLAS_FP32 = tcec_fp16 | tcec_tf32 | native) */
    tcnla_gemm_method_t fp32_method;
    /* FP64 GEMMs (cublasDgemm*): TCNLA_GEMM_OZAKI_INT8 (default, the
     * Ozaki scheme in DP mode), TCNLA_GEMM_OZAKI_FP16, or
     * TCNLA_GEMM_NATIVE_FP64 = cuBLAS unchanged (env TCNLA_CUBLAS_FP64 =
     * ozaki | ozaki_int8 | ozaki_fp16 | native) */
    tcnla_gemm_method_t fp64_method;
    /* a product goes to tcnla only when min(m, n, k) >= min_dim and
     * 2 m n k (times the batch) >= min_flops; smaller ones go to cuBLAS
     * (env TCNLA_CUBLAS_MIN_DIM, TCNLA_CUBLAS_MIN_FLOPS; FP64:
     * TCNLA_CUBLAS_FP64_MIN_DIM, TCNLA_CUBLAS_FP64_MIN_FLOPS) */
    int64_t fp32_min_dim;
    double fp32_min_flops;
    int64_t fp64_min_dim;
    double fp64_min_flops;
} tcnla_cublas_policy_t;

/* The policy in force (the environment's, or the last one set). Returns 0,
 * -1 when policy is NULL. */
int tcnla_cublas_get_policy(tcnla_cublas_policy_t *policy);
/* Sets the policy for the calls that follow (all threads). Returns 0, or
 * -1 when policy is NULL or a field is out of its range (a method not
 * listed above, a negative size, a NaN or negative flop count); nothing
 * changes then. */
int tcnla_cublas_set_policy(const tcnla_cublas_policy_t *policy);

/* What the hooked calls did, counted since the start or the last reset. */
typedef enum {
    TCNLA_CUBLAS_PATH_TCNLA = 0,     /* computed by tcnla with the policy's method */
    TCNLA_CUBLAS_PATH_FALLBACK = 1,  /* computed by tcnla, by another method (FP16's range:
                                        TCEC_TF32; NaN / Inf: native FP32) */
    TCNLA_CUBLAS_PATH_POLICY = 2,    /* to cuBLAS: the policy's method is native */
    TCNLA_CUBLAS_PATH_TYPE = 3,      /* to cuBLAS: data / compute type or math mode not taken */
    TCNLA_CUBLAS_PATH_SIZE = 4,      /* to cuBLAS: below the size thresholds */
    TCNLA_CUBLAS_PATH_ARGS = 5,      /* to cuBLAS: invalid or untaken arguments (leading
                                        dimensions, layouts, epilogues, pointer modes) */
    TCNLA_CUBLAS_PATH_CAPTURE = 6,   /* to cuBLAS: the stream is being captured into a graph */
    TCNLA_CUBLAS_PATH_INNER = 7,     /* to cuBLAS: called from NVIDIA's libraries (cuBLAS's own
                                        calls while a hook passes a call through, cuSOLVER) */
    TCNLA_CUBLAS_PATH_FAILED = 8,    /* to cuBLAS after tcnla could not run the product */
    TCNLA_CUBLAS_PATH_NESTED = 9,    /* to cuBLAS: called from inside a hook by other code than
                                        NVIDIA's (never expected: tcnla's own cuBLAS calls do not
                                        reach the hooks) */
    TCNLA_CUBLAS_PATHS = 10
} tcnla_cublas_path_t;

typedef struct {
    uint64_t calls[TCNLA_CUBLAS_PATHS];
    double seconds[TCNLA_CUBLAS_PATHS]; /* host time inside the hooks: for cuBLAS, the call
                                           (its launch); for tcnla, up to its return (after
                                           its checks' synchronisation, the product queued) */
} tcnla_cublas_stats_t;

/* Returns 0, -1 when stats is NULL. */
int tcnla_cublas_get_stats(tcnla_cublas_stats_t *stats);
int tcnla_cublas_reset_stats(void);
/* "tcnla", "fallback", "policy", ... (never NULL; "?" out of range). */
const char *tcnla_cublas_path_name(int path);

#ifdef __cplusplus
}
#endif
#endif /* TCNLA_CUBLAS_H */
