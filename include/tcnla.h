/*
 * tcnla.h -- Tensor-Core Numerical Linear Algebra: the one public header.
 *
 * Conventions (docs/design.md):
 *  - every symbol is prefixed tcnla_ / TCNLA_; matrices are column-major;
 *    sizes are int64_t; BLAS argument order (transa, transb, m, n, k, alpha,
 *    A, lda, B, ldb, beta, C, ldc).
 *  - every entry point returns a status: 0 on success, -i when argument i
 *    (1-based, the handle counting as argument 1) is invalid, and the library
 *    errors below -100. tcnla_strerror() gives the text. The library never
 *    exits, aborts or prints on its own.
 *  - threads: a handle may be shared between threads. Every call that takes
 *    a handle holds that handle's (recursive) lock for its whole duration,
 *    so calls on one handle run one after another, never interleaved, and
 *    each gives the result it gives alone (settings one thread changes,
 *    tcnla_set_gemm_method, tcnla_set_tuning and the like, hold for every
 *    thread's later calls); only tcnla_get_backend, tcnla_get_device and
 *    tcnla_device_name, which read what tcnla_create_on_device fixed, take
 *    no lock. The lock guards the
 *    handle, not the caller's data: buffers one thread writes must not be
 *    passed by another meanwhile, and tcnla_destroy must be the last call
 *    on a handle in every thread. On the CUDA backend a call may return
 *    with its work still queued on the handle's stream: later calls on the
 *    handle are ordered after it, and tcnla_memcpy to the host and
 *    tcnla_synchronize wait for it. For work in parallel, create one handle
 *    per thread: handles hold no state in common (the library has no global
 *    state besides the once-per-process lookup of the CUDA libraries and
 *    driver entry points).
 *  - devices: a CUDA handle runs on the device it was created on
 *    (tcnla_create_on_device; tcnla_create takes the caller's current
 *    device), and its memory (tcnla_malloc, the workspace) lives there.
 *    Every call, tcnla_create* and tcnla_destroy included, makes the
 *    handle's device current while it runs and leaves the calling thread's
 *    current device as it found it, failing calls included. A stream given
 *    to tcnla_set_stream must belong to the handle's device.
 *  - what a call computed with (the method after fallbacks, the Ozaki slice
 *    or moduli counts, the products a driver ran) is reported per call in a
 *    tcnla_info_t the caller passes (tcnla_sgemm_ex, the drivers' opts->info),
 *    never read back from the handle afterwards.
 *  - one opaque handle owns the backend, the CUDA stream, a grow-only
 *    workspace and the model parameters; there is no other global state
 *    than the lookups named under threads.
 *  - data passed to a handle lives in that handle's memory: host memory for
 *    the CPU backend, device memory for the CUDA backend. tcnla_malloc /
 *    tcnla_free / tcnla_memcpy allocate and move it without the caller
 *    knowing which.
 */
#ifndef TCNLA_H
#define TCNLA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TCNLA_BUILDING) && defined(__GNUC__)
#define TCNLA_API __attribute__((visibility("default")))
#else
#define TCNLA_API
#endif

#define TCNLA_VERSION_MAJOR 0
#define TCNLA_VERSION_MINOR 1
#define TCNLA_VERSION_PATCH 0
#define TCNLA_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------ status */
/* 0 success; -1..-99: argument i is invalid; below -100: library errors. */
enum {
    TCNLA_SUCCESS = 0,
    TCNLA_ERR_ALLOC = -101,           /* host or device allocation failed */
    TCNLA_ERR_NO_BACKEND = -102,      /* backend not compiled in or no device present */
    TCNLA_ERR_NOT_SUPPORTED = -103,   /* method / backend combination not implemented */
    TCNLA_ERR_RANGE = -104,           /* an input is outside what the method's split can represent */
    TCNLA_ERR_CUDA = -105,            /* a CUDA runtime call failed */
    TCNLA_ERR_CUBLAS = -106,          /* a cuBLAS call failed */
    TCNLA_ERR_CUSOLVER = -107,        /* a cuSOLVER call failed */
    TCNLA_ERR_NUMERICAL = -108,       /* numerical breakdown (e.g. Cholesky of a non-SPD matrix) */
    TCNLA_ERR_INTERNAL = -109,        /* an internal invariant failed: a bug, please report */
    TCNLA_ERR_COMM = -110             /* a collective failed: NCCL missing or failing, ranks
                                         disagreeing on the call's sizes or options */
};

/* Text for any status (never NULL). */
TCNLA_API const char *tcnla_strerror(int status);
TCNLA_API const char *tcnla_version(void);

/* ---------------------------------------------------------------- backends */
typedef enum {
    TCNLA_BACKEND_AUTO = 0, /* CUDA when a GPU is present at run time, else CPU */
    TCNLA_BACKEND_CPU = 1,  /* BLAS/LAPACK plus the reference Tensor Core model */
    TCNLA_BACKEND_CUDA = 2  /* cuBLAS/cuSOLVER plus the library's own kernels */
} tcnla_backend_t;

typedef struct tcnla_handle_s *tcnla_handle_t;

/* Creates a handle. AUTO never fails for want of a GPU: it falls back to
 * the CPU. Asking for CUDA explicitly when none is usable returns
 * TCNLA_ERR_NO_BACKEND. *handle is NULL after a failure. */
TCNLA_API int tcnla_create(tcnla_handle_t *handle, tcnla_backend_t backend);
/* The same on a chosen CUDA device (0 .. count - 1): backend CUDA or AUTO
 * (AUTO with no usable GPU: the CPU backend, device ignored); a device
 * that does not exist gives -3. On the CPU backend device must be 0. */
TCNLA_API int tcnla_create_on_device(tcnla_handle_t *handle, tcnla_backend_t backend, int device);
/* The CUDA device ordinal the handle runs on (-1 on the CPU backend). */
TCNLA_API int tcnla_get_device(tcnla_handle_t handle, int *device);
/* Releases the handle with everything it holds: the backend's resources,
 * the workspace and the tcnla_malloc blocks not yet freed (their pointers
 * are invalid afterwards). NULL: success, nothing done. */
TCNLA_API int tcnla_destroy(tcnla_handle_t handle);
/* The backend actually in use (never AUTO). */
TCNLA_API int tcnla_get_backend(tcnla_handle_t handle, tcnla_backend_t *backend);
/* Whether this build has the CUDA backend, and how many GPUs the runtime
 * sees (0 when none or when the driver is missing). Never fails. */
TCNLA_API int tcnla_cuda_available(int *compiled_in, int *device_count);
/* Name of the device the handle runs on ("CPU" for the CPU backend). */
TCNLA_API int tcnla_device_name(tcnla_handle_t handle, char *buf, size_t len);
/* CUDA stream (a cudaStream_t) for all work of the handle; NULL = default
 * stream. Returns TCNLA_ERR_NOT_SUPPORTED on a CPU handle. */
TCNLA_API int tcnla_set_stream(tcnla_handle_t handle, void *stream);
/* Waits until all work queued on the handle is done (no-op on the CPU). */
TCNLA_API int tcnla_synchronize(tcnla_handle_t handle);

/* ------------------------------------------------------------------ memory */
typedef enum {
    TCNLA_MEMCPY_HOST_TO_HANDLE = 0, /* from host memory to the handle's memory */
    TCNLA_MEMCPY_HANDLE_TO_HOST = 1,
    TCNLA_MEMCPY_HANDLE_TO_HANDLE = 2
} tcnla_memcpy_kind_t;

/* Memory in the handle's space (device memory on CUDA). bytes == 0 gives
 * *ptr == NULL and success. The handle records every block it hands out:
 * tcnla_free(NULL) succeeds; tcnla_free of a pointer that is not a live
 * block of tcnla_malloc on this handle (from elsewhere, from another handle,
 * or freed already) returns -2 and frees nothing. tcnla_destroy frees the
 * blocks still live. */
TCNLA_API int tcnla_malloc(tcnla_handle_t handle, void **ptr, size_t bytes);
TCNLA_API int tcnla_free(tcnla_handle_t handle, void *ptr);
TCNLA_API int tcnla_memcpy(tcnla_handle_t handle, void *dst, const void *src, size_t bytes,
                           tcnla_memcpy_kind_t kind);

/* Memory the handle holds in its own space: `current` = live tcnla_malloc
 * allocations + the grow-only workspace + (CUDA) the buffers that the
 * drivers tcnla_rsvd / tcnla_lra / tcnla_hosvd freed into the handle's pool
 * for their next call (returned with the handle); `peak` = the largest
 * total of live allocations and driver buffers seen at any allocation since
 * the last reset, plus the workspace (an upper bound of the true peak: the
 * workspace only grows). cuBLAS / cuSOLVER handle-internal memory is not
 * counted. */
TCNLA_API int tcnla_memory_stats(tcnla_handle_t handle, size_t *current, size_t *peak);
TCNLA_API int tcnla_reset_peak_memory(tcnla_handle_t handle);

/* ------------------------------------------------------------ GEMM methods */
typedef enum {
    TCNLA_GEMM_DEFAULT = 0,       /* use the handle's method (tcnla_set_gemm_method) */
    TCNLA_GEMM_NATIVE_FP32 = 1,   /* FP32 FMA units (BLAS sgemm / cuBLAS pedantic SGEMM) */
    TCNLA_GEMM_NATIVE_FP64 = 2,   /* inputs widened to FP64, result rounded to FP32 */
    TCNLA_GEMM_TF32 = 3,          /* inputs rounded to TF32 (RNA), one product on Tensor Cores */
    TCNLA_GEMM_FP16 = 4,          /* inputs rounded to FP16 (RN), one product, FP32 accumulate */
    TCNLA_GEMM_MARKIDIS_FP16 = 5, /* Markidis split, 4 products, accumulated inside the TC (RZ) */
    TCNLA_GEMM_TCEC_FP16 = 6,     /* halfhalf split (2^11), 3 products, hi*hi accumulated RN outside */
    TCNLA_GEMM_TCEC_TF32 = 7,     /* tf32tf32 split (2^11, RNA), 3 products, hi*hi RN outside */
    TCNLA_GEMM_SHGEMM_FP16 = 8,   /* A FP32 split halfhalf x B FP16, 2 products */
    TCNLA_GEMM_SHGEMM_TF32 = 9,   /* A FP32 split tf32tf32 x B FP16 (exact in TF32), 2 products */
    TCNLA_GEMM_OZAKI_FP16 = 10,   /* Ozaki scheme on FP16 Tensor Cores [Mukunoki et al. 2020] */
    TCNLA_GEMM_OZAKI_INT8 = 11,   /* Ozaki scheme on INT8 Tensor Cores, exact INT32 accumulation */
    TCNLA_GEMM_METHOD_COUNT = 12
} tcnla_gemm_method_t;

/* Name ("tcec_fp16", ...) and parse (case-insensitive; "-" and "_" alike).
 * tcnla_gemm_method_from_name returns -1 for an unknown name. */
TCNLA_API const char *tcnla_gemm_method_name(tcnla_gemm_method_t method);
TCNLA_API int tcnla_gemm_method_from_name(const char *name, tcnla_gemm_method_t *method);

/* Handle-wide default method (initially TCNLA_GEMM_NATIVE_FP32). */
TCNLA_API int tcnla_set_gemm_method(tcnla_handle_t handle, tcnla_gemm_method_t method);
TCNLA_API int tcnla_get_gemm_method(tcnla_handle_t handle, tcnla_gemm_method_t *method);

/* FP16-based methods (TCEC_FP16, SHGEMM_FP16, FP16; not the Markidis
 * baseline) whose operands the split cannot represent as given (an element
 * would overflow FP16, or lose more than the split's own rounding relative
 * to the largest element of its row of op(A) / column of op(B),
 * [Ootomo & Yokota 2021] Fig. 7/8) first compute on copies whose rows of
 * op(A) and columns of op(B) are scaled by powers of two 2^e_i, 2^f_j that
 * bring each vector's largest magnitude into [2^14, 2^15), and multiply
 * C's element (i, j) by 2^-(e_i + f_j) at the end: exact (no rounding but
 * the method's own; elements below 2^-149 after a downward scaling, far
 * below the split's tolerance, flush to zero) and independent of the
 * operands' scale. The scaled operands always pass the check, so what
 * follows applies only where the copies cannot be made (memory; inside
 * tcnla_rsvd / _lra / _hosvd, which keep to about size(A) of memory, an
 * operand larger than the product's C) or the tuning's exact_scaling = 0:
 *   ERROR    return TCNLA_ERR_RANGE and leave C untouched (default);
 *   FALLBACK compute with the full-range TF32 variant instead
 *            (TCEC_FP16 -> TCEC_TF32, SHGEMM_FP16 -> SHGEMM_TF32,
 *            MARKIDIS_FP16 / FP16 -> TCEC_TF32). */
typedef enum { TCNLA_RANGE_ERROR = 0, TCNLA_RANGE_FALLBACK = 1 } tcnla_range_policy_t;
TCNLA_API int tcnla_set_range_policy(tcnla_handle_t handle, tcnla_range_policy_t policy);

/* Inputs holding NaN or Inf are computed with NATIVE_FP32 so that NaN and
 * Inf propagate exactly as in SGEMM (a split of Inf would turn Inf*0 terms
 * into NaN). This is reported in tcnla_info_t.method. */

/* What one call computed with, filled by the calls that take a
 * tcnla_info_t * (NULL: not wanted). For a single product: `method` is the
 * method that computed it (after the range fallback, the native path for
 * NaN / Inf, the Ozaki scheme's FP64 fallback), products = 1. For a driver
 * (tcnla_rsvd, tcnla_lra, tcnla_hosvd) or a batch: every product counted,
 * `method` the last product's. */
typedef struct {
    tcnla_gemm_method_t method; /* the (last) product's method as run */
    int products;               /* matrix products run */
    int fallbacks;              /* products run with another method than asked */
    uint32_t methods;           /* bit m set: method m computed some product */
    int ozaki_scheme;           /* the last Ozaki product: 1 or 2 (0: none) */
    int ozaki_d;                /* its slice count d (scheme 1) or moduli count (scheme 2) */
    int ozaki_slices_a, ozaki_slices_b; /* scheme 1: slices used for A and B (scheme 2: moduli) */
    int path;                   /* backend-specific kernel path of the last product (0: the
                                   generic one; on Hopper 1 in-kernel split, 2 pre-split, 4 wide
                                   tiles, 5 FP16 with op(A) rounded inside) */
    int scaled;                 /* products computed on operands scaled exactly, row by row of
                                   op(A) and column by column of op(B), by powers of two (FP16
                                   methods whose unscaled operands the split cannot hold) */
    tcnla_gemm_method_t proj_method;  /* tcnla_rsvd: the method its projection Y = A Omega ran
                                         with (proj_method 0 resolved; 0 for other calls) */
    tcnla_gemm_method_t power_method; /* tcnla_rsvd: the power iterations' method, as chosen
                                         from the data where power_method is 0 (0: no power
                                         iterations, or another call) */
} tcnla_info_t;

typedef enum { TCNLA_OP_N = 0, TCNLA_OP_T = 1 } tcnla_op_t;

/* C = alpha * op(A) * op(B) + beta * C, FP32 in and out.
 * op(A) is m x k, op(B) is k x n, C is m x n. When beta == 0, C is not
 * read (NaN in C is ignored). method TCNLA_GEMM_DEFAULT uses the handle's
 * method. SHGEMM_* methods round B to FP16 (RN) first: use tcnla_shgemm
 * to pass B already in FP16. */
TCNLA_API int tcnla_sgemm(tcnla_handle_t handle, tcnla_gemm_method_t method, tcnla_op_t transa,
                          tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                          float *C, int64_t ldc);

/* C = alpha * op(A) * op(B) + beta * C with A FP32 and B given as IEEE
 * binary16 bit patterns. method must be SHGEMM_FP16, SHGEMM_TF32,
 * NATIVE_FP32 or NATIVE_FP64 (B widened exactly), or DEFAULT (= SHGEMM_FP16). */
TCNLA_API int tcnla_shgemm(tcnla_handle_t handle, tcnla_gemm_method_t method, tcnla_op_t transa,
                           tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                           const float *A, int64_t lda, const uint16_t *B, int64_t ldb,
                           float beta, float *C, int64_t ldc);

/* tcnla_sgemm and tcnla_shgemm with what ran reported in *info (may be
 * NULL; written on success and on failure). */
TCNLA_API int tcnla_sgemm_ex(tcnla_handle_t handle, tcnla_gemm_method_t method, tcnla_op_t transa,
                             tcnla_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                             const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                             float *C, int64_t ldc, tcnla_info_t *info);
TCNLA_API int tcnla_shgemm_ex(tcnla_handle_t handle, tcnla_gemm_method_t method,
                              tcnla_op_t transa, tcnla_op_t transb, int64_t m, int64_t n,
                              int64_t k, float alpha, const float *A, int64_t lda,
                              const uint16_t *B, int64_t ldb, float beta, float *C, int64_t ldc,
                              tcnla_info_t *info);
/* batch products C_t = alpha * op(A_t) * op(B_t) + beta * C_t, t = 0 ..
 * batch-1, in cuBLAS's strided-batched argument order: A_t = A + t *
 * strideA, B_t = B + t * strideB, C_t = C + t * strideC (strides in
 * elements, >= 0; a stride of 0 repeats one operand, e.g. one B for every
 * product; the C_t must not overlap). Each product gives the bits of the
 * tcnla_sgemm call it stands for (the method resolved, range checks and
 * NaN / Inf handling per product); the CUDA backend runs the batch in one
 * launch where it can. batch == 0, m == 0 or n == 0 leave C alone.
 * Statuses: as tcnla_sgemm by position (A 9, lda 10, strideA 11, B 12,
 * ldb 13, strideB 14, C 16, ldc 17, strideC 18, batch 19). */
TCNLA_API int tcnla_sgemm_strided_batched(tcnla_handle_t handle, tcnla_gemm_method_t method,
                                          tcnla_op_t transa, tcnla_op_t transb, int64_t m,
                                          int64_t n, int64_t k, float alpha, const float *A,
                                          int64_t lda, int64_t strideA, const float *B,
                                          int64_t ldb, int64_t strideB, float beta, float *C,
                                          int64_t ldc, int64_t strideC, int64_t batch);

/* ------------------------------------------------------------ Ozaki scheme */
/* DGEMM / SGEMM from error-free slices [Mukunoki et al. 2020]. Used by tcnla_dgemm and
 * tcnla_sgemm with TCNLA_GEMM_OZAKI_FP16 / TCNLA_GEMM_OZAKI_INT8. */
typedef enum {
    TCNLA_OZAKI_DP = 0,   /* slice count from the probabilistic bound ([Mukunoki et al.
                             2020] Alg. 3): as accurate as the native GEMM of the output
                             precision */
    TCNLA_OZAKI_CR = 1,   /* split until every slice is zero, sum the exact slice products in
                             an exact fixed-point accumulator, round once: every element is the
                             correctly-rounded exact product (then alpha, beta applied in FP64) */
    TCNLA_OZAKI_FIXED = 2, /* `slices` slices per operand, set by the caller */
    TCNLA_OZAKI_AUTO = 3   /* DP's accuracy, and the native GEMM of the output precision
                              (NATIVE_FP64 for tcnla_dgemm, NATIVE_FP32 for tcnla_sgemm,
                              reported in tcnla_info_t.method) for the shapes where a
                              measured cost model (tcnla_ozaki_auto_predict) predicts it
                              faster than scheme 2: small, skinny and short-k products.
                              The choice depends on m, n, k and the GPU architecture only,
                              never on the data; the CPU backend makes the reference GPU's
                              (sm_90) choices. OZAKI_FP16 and SCHEME_1: always native */
} tcnla_ozaki_mode_t;

/* Scheme 1 [Mukunoki et al. 2020] splits each operand into slices and sums the slice
 * products; scheme 2 (OZAKI_INT8 only; Ozaki, Uchino and Imamura's scheme
 * II) scales every row of op(A) and column of op(B) to integers, multiplies
 * them modulo n pairwise coprime moduli <= 256 (one INT8 GEMM each) and
 * recombines by the Chinese remainder theorem: n GEMMs instead of about
 * d (d + 1) / 2, at the price of one rounding per element (to the nearest
 * integer after the scaling). AUTO uses scheme 2 for OZAKI_INT8 in DP mode
 * (scheme 1 when more than 20 moduli would be needed, or a scaled element
 * would reach 2^80) and scheme 1 otherwise. CR mode is scheme 1 only. */
typedef enum {
    TCNLA_OZAKI_SCHEME_AUTO = 0,
    TCNLA_OZAKI_SCHEME_1 = 1, /* error-free slices [Mukunoki et al. 2020] */
    TCNLA_OZAKI_SCHEME_2 = 2  /* integer moduli and the Chinese remainder theorem (INT8) */
} tcnla_ozaki_scheme_t;

typedef struct {
    tcnla_ozaki_mode_t mode; /* default TCNLA_OZAKI_DP */
    int slices;              /* FIXED mode: slices per operand (scheme 1) or moduli (scheme 2,
                                1..20), >= 1 (default 0: unused) */
    int fast;                /* skip slice products with p + q > d + 1 (DP/FIXED; default 1) */
    size_t workspace_cap;    /* bytes of workspace the scheme may use; blocking in m and n keeps
                                it below without changing a bit of the result (default 0: no
                                cap). A cap below one row plus one column of slices gives
                                TCNLA_ERR_ALLOC */
    tcnla_ozaki_scheme_t scheme; /* default TCNLA_OZAKI_SCHEME_AUTO. SCHEME_2 with OZAKI_FP16
                                    gives TCNLA_ERR_NOT_SUPPORTED; in DP mode, needing more
                                    than 20 moduli (or a scaled element of 2^80 or more:
                                    operands whose needs are far apart) gives
                                    TCNLA_ERR_RANGE */
} tcnla_ozaki_opts_t;

TCNLA_API tcnla_ozaki_opts_t tcnla_ozaki_opts_default(void);
TCNLA_API int tcnla_set_ozaki_opts(tcnla_handle_t handle, const tcnla_ozaki_opts_t *opts);
TCNLA_API int tcnla_get_ozaki_opts(tcnla_handle_t handle, tcnla_ozaki_opts_t *opts);

/* The slice counts and the scheme of an Ozaki product are reported in
 * tcnla_info_t (ozaki_scheme, ozaki_d, ozaki_slices_a / _b). */

/* The model behind TCNLA_OZAKI_AUTO for an m x n x k product of out_bits-bit
 * output (64: tcnla_dgemm, 32: tcnla_sgemm) on the handle's GPU (NULL or a
 * CPU handle: the reference GPU, sm_90): *native = 1 when it takes the
 * native GEMM (also for an architecture without constants, and m, n or k
 * = 0), 0 when scheme 2; the predicted seconds of both (scheme 2: +Inf
 * where unknown). Each output may be NULL. Statuses: -2 out_bits not 32 or
 * 64, -3 m < 0, -4 n < 0, -5 k < 0. */
TCNLA_API int tcnla_ozaki_auto_predict(tcnla_handle_t handle, int out_bits, int64_t m, int64_t n,
                                       int64_t k, int *native, double *native_seconds,
                                       double *ozaki_seconds);

/* C = alpha * op(A) * op(B) + beta * C in FP64. method: NATIVE_FP64 (BLAS
 * dgemm / cuBLAS DGEMM), OZAKI_FP16, OZAKI_INT8, or DEFAULT (= NATIVE_FP64). */
TCNLA_API int tcnla_dgemm(tcnla_handle_t handle, tcnla_gemm_method_t method, tcnla_op_t transa,
                          tcnla_op_t transb, int64_t m, int64_t n, int64_t k, double alpha,
                          const double *A, int64_t lda, const double *B, int64_t ldb,
                          double beta, double *C, int64_t ldc);
TCNLA_API int tcnla_dgemm_ex(tcnla_handle_t handle, tcnla_gemm_method_t method,
                             tcnla_op_t transa, tcnla_op_t transb, int64_t m, int64_t n, int64_t k,
                             double alpha, const double *A, int64_t lda, const double *B,
                             int64_t ldb, double beta, double *C, int64_t ldc, tcnla_info_t *info);

/* ---------------------------------------------------------- random matrices */
typedef enum {
    TCNLA_RAND_GAUSSIAN = 0,   /* N(0, 1) */
    TCNLA_RAND_UNIFORM = 1,    /* U(-1, 1) */
    TCNLA_RAND_SPARSE3 = 2,    /* Achlioptas: +1, 0, -1 with probabilities 1/6, 2/3, 1/6 (s = 3) */
    TCNLA_RAND_SPARSE_SQRT = 3 /* Li et al. very sparse: s = sqrt(rows), +-1 w.p. 1/(2s) each */
} tcnla_rand_dist_t;

/* Storage formats a random matrix is rounded to (RN). */
typedef enum {
    TCNLA_FMT_FP32 = 0,
    TCNLA_FMT_FP16 = 1,
    TCNLA_FMT_BF16 = 2,
    TCNLA_FMT_TF32 = 3,
    TCNLA_FMT_E4M3 = 4, /* OCP FP8, saturating */
    TCNLA_FMT_E5M2 = 5  /* OCP FP8, saturating */
} tcnla_format_t;

/* Fills the rows x cols matrix X (column-major, leading dimension ld, in the
 * handle's memory) with `dist` drawn by Philox4x32-10 and rounded (RN) to
 * `fmt`, stored as FP32 values. Element (i, j) depends only on (seed,
 * stream, i + j * rows): the CPU and the GPU give the same matrix. The
 * sparse distributions are unscaled (+-1, 0: the sqrt(s) factor of
 * Achlioptas only scales the projection). */
TCNLA_API int tcnla_random_fill(tcnla_handle_t handle, tcnla_rand_dist_t dist, tcnla_format_t fmt,
                                uint64_t seed, uint64_t stream, int64_t rows, int64_t cols,
                                float *X, int64_t ld);
/* The same matrix with fmt = FP16, stored as binary16 bits (for tcnla_shgemm). */
TCNLA_API int tcnla_random_fill_f16(tcnla_handle_t handle, tcnla_rand_dist_t dist, uint64_t seed,
                                    uint64_t stream, int64_t rows, int64_t cols, uint16_t *X,
                                    int64_t ld);

/* ----------------------------------------------------- host random numbers */
/* The generator behind tcnla_random_fill, on host memory (no handle):
 * Philox4x32-10 (Random123), counter-based, so element i of (seed, stream)
 * depends only on (seed, stream, i), whatever the thread count; the Gaussian
 * and uniform matrices of tcnla_random_fill (FP32, either backend) are
 * these sequences with i = row + col * rows. */

/* The 4 x 32 random bits of counter block `counter` of (seed, stream):
 * key (seed low, seed high word), counter words (counter low, counter high,
 * stream low, stream high). Returns 0, or -4 when out is NULL. */
TCNLA_API int tcnla_philox4x32(uint64_t seed, uint64_t stream, uint64_t counter, uint32_t out[4]);
/* out[0 .. n) uniform in (lo, hi): element i takes word i % 4 of counter
 * block i / 4, u = ((word >> 8) + 0.5) 2^-24, lo + (hi - lo) u in double,
 * rounded to FP32 (never exactly lo for lo < hi). tcnla_random_fill's
 * TCNLA_RAND_UNIFORM is lo = -1, hi = 1. Returns 0, -3 / -4 for a
 * non-finite lo / hi, -5 for n < 0, -6 for out NULL with n > 0. */
TCNLA_API int tcnla_rand_uniform(uint64_t seed, uint64_t stream, float lo, float hi, int64_t n,
                                 float *out);
/* out[0 .. n) Normal(mean, sd): counter block b gives elements 4b .. 4b + 3,
 * by a Box-Muller transform in FP32 (the same operations on the CPU and the
 * GPU) of the word pairs (0, 1) and (2, 3); mean + sd z is taken in double
 * and rounded to FP32. tcnla_random_fill's TCNLA_RAND_GAUSSIAN is mean 0,
 * sd 1. Returns 0, -3 for a non-finite mean, -4 for sd negative or not
 * finite, -5 for n < 0, -6 for out NULL with n > 0. */
TCNLA_API int tcnla_rand_normal(uint64_t seed, uint64_t stream, float mean, float sd, int64_t n,
                                float *out);

/* -------------------------------------------------------- orthonormalization */
typedef enum {
    TCNLA_ORTH_HOUSEHOLDER = 0,  /* Householder QR in FP32 (LAPACK sgeqrf/sorgqr, cuSOLVER) */
    TCNLA_ORTH_CHOLQR_FP32 = 1,  /* CholeskyQR in FP32: only for nearly orthogonal columns
                                    (its Q loses O(kappa^2 2^-24) orthogonality): a condition
                                    estimate of Y with unit columns above 8 sqrt(n) is a
                                    breakdown */
    TCNLA_ORTH_CHOLQR_FP64 = 2,  /* CholeskyQR with Gram matrix, Cholesky and solve in FP64
                                    ([Baboulin et al. 2024] Algorithm 3): an estimate of its
                                    loss of orthogonality (kappa of Y with unit columns,
                                    squared, times 2^-53) above 2^-12 is a breakdown */
    TCNLA_ORTH_CHOLQR2_FP64 = 3  /* CholeskyQR2: CholeskyQR in FP64 twice */
} tcnla_orth_t;

/* What a Cholesky breakdown does (the Gram matrix is not numerically
 * positive definite, or Y too ill-conditioned for an orthonormal Q: in
 * FP32 for TCNLA_ORTH_CHOLQR_FP32, to 2^-12 for TCNLA_ORTH_CHOLQR_FP64): ERROR returns TCNLA_ERR_NUMERICAL with Y untouched;
 * RETRY moves on to the next more robust method (FP32 -> FP64 ->
 * CholeskyQR2 in FP64 -> Householder), which never breaks down. */
typedef enum { TCNLA_BREAKDOWN_ERROR = 0, TCNLA_BREAKDOWN_RETRY = 1 } tcnla_breakdown_t;

/* Replaces the m x n (m >= n) matrix Y by an orthonormal basis Q of its
 * column space, Y = Q R. R (n x n, upper triangular, FP32) is returned when
 * R != NULL. *used (may be NULL) receives the method that succeeded. Input
 * holding NaN or Inf returns TCNLA_ERR_NUMERICAL. */
TCNLA_API int tcnla_orthonormalize(tcnla_handle_t handle, tcnla_orth_t method,
                                   tcnla_breakdown_t on_breakdown, int64_t m, int64_t n, float *Y,
                                   int64_t ldy, float *R, int64_t ldr, tcnla_orth_t *used);

/* ---------------------------------------------------------- randomized SVD */
typedef struct {
    int64_t rank;                    /* k, the target rank (required, >= 1) */
    int64_t oversampling;            /* p (default 10); l = k + p columns are sampled */
    int power_iters;                 /* q (default 2), re-orthonormalized at every step */
    tcnla_gemm_method_t proj_method; /* Y = A * Omega: any tcnla_sgemm method. Default 0:
                                        TCNLA_GEMM_FP16 where power iterations follow (they
                                        filter its rounding of A, about u16 ||A||_F, as they
                                        filter Omega's randomness) and FP16 needs no copy of A
                                        (Hopper, l + 6 <= 272, the CPU); else
                                        TCNLA_GEMM_SHGEMM_FP16 (only Omega in FP16: as accurate
                                        as TCEC_FP16). Both need random_format FP16. The info's
                                        proj_method says which ran */
    tcnla_gemm_method_t gemm_method; /* the other products: Q^T A, and the power iterations
                                        as power_method says (default TCNLA_GEMM_TCEC_FP16) */
    tcnla_gemm_method_t power_method; /* the power iterations' products, if not 0. They only
                                        shape the subspace, as Omega does: TCNLA_GEMM_FP16 (A
                                        and the basis rounded to FP16) adds about
                                        u16 sqrt(l / n) ||A||_F to the residual (docs/api.md);
                                        on Hopper without a copy of A, elsewhere with an FP16
                                        copy (m n / 2 floats). TCNLA_GEMM_SHGEMM_FP16 rounds
                                        only the orthonormal basis to FP16 (A split as by
                                        TCEC): its error along v_j is scaled by s_j, so as
                                        accurate as TCEC_FP16 here, in 2 products instead of
                                        3; not SHGEMM_TF32. Default 0: with gemm_method
                                        TCEC_FP16, where FP16 needs no copy of A (Hopper,
                                        l <= 272, the CPU), chosen from the data: FP16 where
                                        that error stays below a tenth of the first basis's
                                        residual, estimated from 6 more columns of the
                                        projection, else SHGEMM_FP16 (a tail below FP16's
                                        resolution; with q >= 2 its first product, A^T Q,
                                        in FP16: A filters that noise by s_i and a whole
                                        iteration follows; up to 1% more residual where
                                        that tail decays slowly, docs/results.md: set
                                        SHGEMM_FP16 there); SHGEMM_FP16 where FP16 would
                                        need a copy; with another gemm_method, gemm_method */
    tcnla_format_t random_format;    /* format of Omega (default FP16; SHGEMM methods need FP16) */
    tcnla_rand_dist_t random_dist;   /* default TCNLA_RAND_GAUSSIAN */
    tcnla_orth_t orth;               /* default TCNLA_ORTH_CHOLQR_FP64 (one pass: for FP32 data
                                        kappa^2 * 2^-53 stays far below 1 unless Y is nearly
                                        rank deficient, which the breakdown test and the loss
                                        guard catch) */
    tcnla_breakdown_t on_breakdown;  /* default TCNLA_BREAKDOWN_RETRY */
    uint64_t seed;                   /* default 1 */
    double *timings;                 /* optional (default NULL): TCNLA_RSVD_STEPS seconds per
                                        step (synchronizing after each; [Ootomo & Yokota
                                        2023] Fig. 8) */
    tcnla_info_t *info;              /* optional (default NULL): the products the call ran */
    int pass_efficient;              /* 0 (default): 2q + 2 passes over A, the last W = A^T Q
                                        after the last basis Q = orth(A Z). 1: 2q + 1 passes
                                        ([Bjarkason 2019]): the last power iteration stops at
                                        Y = A Z (its product gemm_method) with Z = orth(A^T Q)
                                        orthonormal, and A ~ Y Z^T; one orthonormalization
                                        fewer too. Its residual is at most that of q - 1
                                        iterations with the default (the same Omega; exact
                                        arithmetic), above that of q by one power of the
                                        singular values fewer in the filter
                                        (bench/results/rsvd_pass_model.csv: slow decay 1.031
                                        against 1.020x optimal at q = 2). Needs q >= 1 */
} tcnla_rsvd_opts_t;

/* The steps tcnla_rsvd times when opts->timings is set. */
enum {
    TCNLA_RSVD_STEP_RANDOM = 0, /* Omega */
    TCNLA_RSVD_STEP_PROJ = 1,   /* Y = A Omega */
    TCNLA_RSVD_STEP_ORTH = 2,   /* Q = orth(Y) */
    TCNLA_RSVD_STEP_POWER = 3,  /* the power iterations, their products and orthonormalizations */
    TCNLA_RSVD_STEP_BT = 4,     /* the last product: W = A^T Q (pass_efficient: Y = A Z) */
    TCNLA_RSVD_STEP_SVD = 5,    /* the l x l SVD of B = W^T (from W's QR, or on the GPU
                                 * from W^T W; pass_efficient: of Y), U and VT */
    TCNLA_RSVD_STEPS = 6
};

TCNLA_API tcnla_rsvd_opts_t tcnla_rsvd_opts_default(void);

/* Rank-k randomized SVD ([Ootomo & Yokota 2023] Algorithm 1) of the m x n matrix A:
 * A ~ U diag(S) VT with U m x k, S k, VT k x n, singular values in
 * decreasing order. A is not modified and not copied. The small SVD is
 * done on the l x l problem, not on a tall matrix: QR of B^T, then SVD of
 * R (CPU; GPU fallback), or on the GPU, where s_k >= 1e-4 s_1, from the
 * eigensolution of the FP64 Gram matrix B B^T (the same conditioning as
 * R's SVD by the eigensolution of R R^T, without the QR), below that from
 * further eigensolutions on the trailing columns (deflated Gram path,
 * tuning small_svd_deflate). Requires
 * k + p <= min(m, n). Finite input never fails for want of FP16's range:
 * a product whose operands an FP16-based method cannot represent runs the
 * method's TF32 variant (TCEC_TF32, SHGEMM_TF32), whatever the handle's
 * range policy, and opts->info counts it among the fallbacks. */
TCNLA_API int tcnla_rsvd(tcnla_handle_t handle, const tcnla_rsvd_opts_t *opts, int64_t m,
                         int64_t n, const float *A, int64_t lda, float *U, int64_t ldu, float *S,
                         float *VT, int64_t ldvt);

/* ------------------------------------------- randomized low-rank approximation */
/* The GEMM variants of [Baboulin et al. 2024] section 3.1 (FP16 Tensor Cores, FP32 accumulate):
 *   32|32: A, B, C in FP32, inputs rounded to FP16 inside the GEMM (TCNLA_GEMM_FP16);
 *   16|16: A, B rounded to FP16 explicitly, C rounded to FP16 too;
 *   16|32: A, B rounded to FP16 explicitly (A once, reused), C in FP32;
 *   NONE:  every product uses `gemm_method` (e.g. NATIVE_FP32 = the FP32 baseline,
 *          TCEC_FP16, SHGEMM_FP16 for the sketch). */
typedef enum {
    TCNLA_TGEMM_NONE = 0,
    TCNLA_TGEMM_32_32 = 1,
    TCNLA_TGEMM_16_16 = 2,
    TCNLA_TGEMM_16_32 = 3
} tcnla_tgemm_t;

typedef struct {
    int64_t rank;                    /* k (required, >= 1) */
    int64_t oversampling;            /* p (default 10) */
    tcnla_tgemm_t tgemm;             /* default TCNLA_TGEMM_16_32 */
    tcnla_gemm_method_t gemm_method; /* used when tgemm == NONE (default NATIVE_FP32) */
    tcnla_orth_t orth;               /* default TCNLA_ORTH_CHOLQR_FP64 ([Baboulin et al. 2024]
                                        Algorithm 3) */
    tcnla_breakdown_t on_breakdown;  /* default TCNLA_BREAKDOWN_RETRY */
    int refine;                      /* iterative refinement ([Baboulin et al. 2024] Algorithm
                                        5): a second pass of rank 2k on E = A - X Y^T
                                        (default 1) */
    int recompress;                  /* recompress the rank-3k refined result to rank k (QR of
                                        both factors, SVD of the small core; default 0) */
    uint64_t seed;                   /* default 1 */
    tcnla_info_t *info;              /* optional (default NULL): the products the call ran */
} tcnla_lra_opts_t;

TCNLA_API tcnla_lra_opts_t tcnla_lra_opts_default(void);
/* Columns of X and Y that tcnla_lra writes: k, or 3k with refinement and no
 * recompression. */
TCNLA_API int64_t tcnla_lra_out_rank(const tcnla_lra_opts_t *opts);

/* A (m x n) ~ X Y^T with X m x r, Y n x r, r = tcnla_lra_out_rank(opts)
 * ([Baboulin et al. 2024] Algorithms 1, 4, 5). With 16|16 and 16|32 the FP16 copy
 * of A is taken at a power of two chosen from max |A| (exact: A's scale
 * never matters), and the factors hold FP16 values times that power's
 * inverse (FP16 values, as in the paper, for max |A| in [2^-2, 2^(14 -
 * log2 sqrt(max(m, n))))). Products of other methods that FP16 cannot hold
 * run their TF32 variant, as in tcnla_rsvd. Refinement needs one m x n
 * workspace for E (in the handle's memory). Requires (2k when refining) + p
 * <= min(m, n). */
TCNLA_API int tcnla_lra(tcnla_handle_t handle, const tcnla_lra_opts_t *opts, int64_t m, int64_t n,
                        const float *A, int64_t lda, float *X, int64_t ldx, float *Y, int64_t ldy);

/* -------------------------------------------------------------- RP-HOSVD */
#define TCNLA_HOSVD_MAX_ORDER 8
typedef struct {
    int64_t ranks[TCNLA_HOSVD_MAX_ORDER]; /* J_i, 1 <= J_i <= dims[i] (required) */
    tcnla_gemm_method_t proj_method;      /* the random projections (default SHGEMM_FP16) */
    tcnla_gemm_method_t gemm_method;      /* the core's mode products (default TCEC_FP16). The
                                             intermediates of a rank-deficient tensor have rows of
                                             rounding noise outside FP16's range: products on them
                                             run the method's full-range partner (TCEC_TF32);
                                             so do the projections and the first core product where
                                             FP16 cannot hold A (finite input never fails for
                                             want of FP16's range; opts->info counts them) */
    tcnla_format_t random_format;         /* default FP16 (SHGEMM needs FP16) */
    tcnla_orth_t orth;                    /* default TCNLA_ORTH_CHOLQR2_FP64 */
    tcnla_breakdown_t on_breakdown;       /* default TCNLA_BREAKDOWN_RETRY */
    uint64_t seed;                        /* default 1 */
    tcnla_info_t *info;                   /* optional (default NULL): the products the call ran */
} tcnla_hosvd_opts_t;

TCNLA_API tcnla_hosvd_opts_t tcnla_hosvd_opts_default(void);

/* Random-projection HOSVD ([Ootomo & Yokota 2023] Algorithm 2) of the order-N tensor A
 * (dims[0] x ... x dims[N-1], first index fastest, 2 <= N <= 8):
 * A ~ core x_1 Q_1 x_2 Q_2 ... x_N Q_N with Q_i dims[i] x J_i orthonormal
 * (Q[i], leading dimension dims[i]) and core J_1 x ... x J_N. Mode-i
 * unfoldings are never materialized: each projection and each mode product
 * is a sequence of GEMMs over the tensor's contiguous slabs (on Hopper, with
 * the default methods, mode 2's projection and the core's first mode
 * product share one read of A). Device memory beside A, Q and the core:
 * the core's first two intermediates (dims[1] .. dims[N-1] x J_1 floats
 * and the next) and, where that pass runs, the largest random matrix. */
TCNLA_API int tcnla_hosvd(tcnla_handle_t handle, const tcnla_hosvd_opts_t *opts, int order,
                          const int64_t *dims, const float *A, float *core, float *const *Q);

/* ------------------------------------------------------ distributed drivers */
/* The randomized SVD and low-rank approximation of a matrix distributed by
 * blocks of rows over several ranks (GPUs, or in-process CPU ranks), one
 * handle per rank. Rank r owns the contiguous rows A_r (m_r x n, its own
 * leading dimension, in its handle's memory); rank 0 owns the first rows.
 * Every rank calls the same driver with the same options; the collectives
 * are a sum of an l x l FP64 Gram matrix per CholeskyQR (docs/distributed.md)
 * and of an n x l block per product with A^T.
 *
 * A communicator binds one handle per rank. Its collectives run on the
 * handle's backend: NCCL for CUDA handles (libnccl.so.2 is loaded when the
 * first communicator is made, or $TCNLA_NCCL_LIBRARY; a build or a machine
 * without NCCL gives TCNLA_ERR_NO_BACKEND there, and everything else works),
 * shared memory between threads for CPU handles. The drivers block in their
 * collectives until every rank joins: each rank calls them from its own
 * thread or process. Every rank returns the same status: where one rank
 * fails (a bad argument, an allocation), all return the most negative of
 * the ranks' statuses, and no rank waits forever for one that failed. */
typedef struct tcnla_comm_s *tcnla_comm_t;

/* The bytes of an identifier that tcnla_comm_init_rank's ranks share */
#define TCNLA_COMM_ID_BYTES 128

/* One communicator per handle for `nranks` handles of this process
 * (comms[i] is rank i, bound to handles[i]): all CPU handles (shared
 * memory; the ranks' calls must come from different threads) or all CUDA
 * handles on distinct devices (NCCL's ncclCommInitAll). Returns 0, or -1
 * (comms NULL), -2 (handles NULL, a NULL handle, mixed backends, a device
 * twice), -3 (nranks < 1), TCNLA_ERR_NO_BACKEND (CUDA handles, no NCCL). */
TCNLA_API int tcnla_comm_create_local(tcnla_comm_t *comms, const tcnla_handle_t *handles,
                                      int nranks);
/* Multi-process (one process per GPU, e.g. under mpirun): rank 0 makes an
 * identifier (ncclGetUniqueId), the caller hands it to every rank (e.g.
 * MPI_Bcast), and each rank creates its communicator on its CUDA handle.
 * tcnla_comm_init_rank blocks until all nranks ranks have joined. */
TCNLA_API int tcnla_comm_unique_id(unsigned char id[TCNLA_COMM_ID_BYTES]);
TCNLA_API int tcnla_comm_init_rank(tcnla_comm_t *comm, tcnla_handle_t handle, int nranks,
                                   int rank, const unsigned char id[TCNLA_COMM_ID_BYTES]);
/* A communicator over the caller's own ncclComm_t (passed as void *), whose
 * rank r's device is the handle's device; the caller keeps it and destroys
 * it after tcnla_comm_destroy. */
TCNLA_API int tcnla_comm_from_nccl(tcnla_comm_t *comm, tcnla_handle_t handle, void *nccl_comm);
TCNLA_API int tcnla_comm_size(tcnla_comm_t comm, int *size);
TCNLA_API int tcnla_comm_rank(tcnla_comm_t comm, int *rank);
/* The handle a communicator was created on (the caller still owns it). */
TCNLA_API int tcnla_comm_handle(tcnla_comm_t comm, tcnla_handle_t *handle);
/* x[0 .. count) (host memory) <- its sum over the ranks, taken in rank
 * order (the same bits on every rank): for the caller's own reductions,
 * e.g. a residual's sum of squares. Collective. */
TCNLA_API int tcnla_comm_sum_host(tcnla_comm_t comm, double *x, int64_t count);
/* Destroys the communicator (not its handle). Not collective for
 * shared-memory communicators once every rank has stopped calling them. */
TCNLA_API int tcnla_comm_destroy(tcnla_comm_t comm);

/* The block of rows rank `rank` of `nranks` owns in the drivers' usual
 * split of m rows: the first m % nranks ranks one row more than the rest
 * (*row0: its first row, *rows: how many). Returns 0, or -1 (m < nranks),
 * -2 (nranks < 1), -3 (rank outside 0 .. nranks - 1), -4 / -5 (NULL). */
TCNLA_API int tcnla_dist_rows(int64_t m, int nranks, int rank, int64_t *row0, int64_t *rows);

/* tcnla_orthonormalize of the m x n matrix whose rows are distributed:
 * Y_r (m_r x n) becomes rank r's rows of Q. CHOLQR_FP64 and CHOLQR2_FP64
 * (FP64 Gram matrix summed over the ranks, Cholesky and the loss guard on
 * every rank alike, as in tcnla_orthonormalize); HOUSEHOLDER and
 * CHOLQR_FP32 give TCNLA_ERR_NOT_SUPPORTED, and RETRY ends with CholeskyQR2
 * in FP64 (a breakdown there is TCNLA_ERR_NUMERICAL). R (n x n, every rank) when not
 * NULL. m_r >= 1 on every rank, the sum of the m_r >= n. */
TCNLA_API int tcnla_dist_orthonormalize(tcnla_comm_t comm, tcnla_orth_t method,
                                        tcnla_breakdown_t on_breakdown, int64_t m_local,
                                        int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                                        tcnla_orth_t *used);

/* tcnla_rsvd of the m x n matrix A whose rank r holds rows A_r (m_local x
 * n, lda): the same algorithm, methods and options (opts identical on
 * every rank; m = the sum of the m_local >= k + p), with Omega the same on
 * every rank (Philox: drawn, not sent). U is distributed like A (rank r
 * gets its m_local rows, ldu >= m_local); S and VT are written on every
 * rank (the same values). opts->orth: CHOLQR_FP64 or CHOLQR2_FP64 (else
 * TCNLA_ERR_NOT_SUPPORTED). opts->timings: per step, collectives included.
 * W = A^T Q's rows are split over the ranks (a reduce-scatter, the
 * orthonormalizations on the blocks, an all-gather). Device memory beside
 * A_r per rank: that of tcnla_rsvd with m = m_local, plus n x l floats for
 * W's packed rows and ceil(n / P) x l for this rank's block. */
TCNLA_API int tcnla_dist_rsvd(tcnla_comm_t comm, const tcnla_rsvd_opts_t *opts, int64_t m_local,
                              int64_t n, const float *A, int64_t lda, float *U, int64_t ldu,
                              float *S, float *VT, int64_t ldvt);
/* tcnla_lra distributed the same way: X (m_local x r rows of the m x r
 * factor) distributed like A, Y (n x r) on every rank. Refinement needs
 * m_local x n of workspace per rank. opts->orth as for tcnla_dist_rsvd;
 * opts->recompress gives TCNLA_ERR_NOT_SUPPORTED (it orthonormalizes the
 * factors by Householder QR). */
TCNLA_API int tcnla_dist_lra(tcnla_comm_t comm, const tcnla_lra_opts_t *opts, int64_t m_local,
                             int64_t n, const float *A, int64_t lda, float *X, int64_t ldx,
                             float *Y, int64_t ldy);

/* The squared Frobenius norms of A - U diag(S) VT and of A (m x n, lda; U
 * m x k, S k, VT k x n, all in the handle's memory), accumulated in FP64
 * (the product in FP32, by column slabs of A: no copy of A, m x 1024
 * floats of workspace): the relative residual of a factorization is
 * sqrt(*diff2 / *a2). For a distributed A, each rank's rows (U's rows
 * alike) give its part of both sums (tcnla_comm_sum_host adds them).
 * Returns 0, or -i for argument i (a2 or diff2 NULL: -12 / -13). */
TCNLA_API int tcnla_lowrank_residual(tcnla_handle_t handle, int64_t m, int64_t n, int64_t k,
                                     const float *A, int64_t lda, const float *U, int64_t ldu,
                                     const float *S, const float *VT, int64_t ldvt,
                                     double *diff2, double *a2);

/* ------------------------------------------------- Tensor Core model (CPU) */
/* One MMA instruction as [Fasi et al. 2021] and [Ootomo & Yokota 2021] section 3.2
 * describe it: the products are exact, every addend is aligned to the
 * largest one and truncated (RZ) to `acc_bits` significant bits, the exact
 * sum of those is normalised and truncated (RZ) to FP32. The accumulator C
 * is either one more addend inside the instruction (c_inside = 1, RZ) or
 * added to the instruction's FP32 result outside it with an RN FP32 add.
 * The CPU backend computes every Tensor Core method with this model. */
typedef struct {
    int acc_bits;      /* significant bits kept by the aligned sum: 24 or 25 (default 25) */
    int k_per_mma;     /* products per instruction: 8 or 16 (default 16) */
    int tcec_chunk;    /* TCEC/SHGEMM: products per fresh hi*hi accumulator, a multiple
                          of k_per_mma (default 16 = every instruction) */
} tcnla_tc_model_t;

TCNLA_API tcnla_tc_model_t tcnla_tc_model_default(void);
TCNLA_API int tcnla_set_tc_model(tcnla_handle_t handle, const tcnla_tc_model_t *model);
TCNLA_API int tcnla_get_tc_model(tcnla_handle_t handle, tcnla_tc_model_t *model);

/* One modelled instruction: *result = the FP32 result of sum_i a[i]*b[i]
 * (+ c), 0 <= n <= 64 products, a[i]*b[i] taken exactly (inputs are FP32
 * values holding FP16/TF32/BF16 numbers; any FP32 values work as long as
 * their products are exact in FP64). c_inside = 1: c is an addend inside the
 * instruction (RZ); 0: *result = fl_RN(c + RZ_fp32(sum)). Returns
 * TCNLA_SUCCESS, or -1 (model NULL or acc_bits outside 1..53), -2 / -3 (a / b
 * NULL with n > 0), -4 (n outside 0..64), -6 (c_inside not 0 or 1), -7
 * (result NULL), leaving *result untouched. */
TCNLA_API int tcnla_tc_mma(const tcnla_tc_model_t *model, const float *a, const float *b, int n,
                           float c, int c_inside, float *result);

/* ------------------------------------------------------------------ tuning */
/* Switches of the CUDA backend's paths, per handle. None is needed: the
 * defaults (tcnla_tuning_default) are the fast paths, and the switches turn
 * them off, or force them where the backend would not choose them, to
 * compare paths in tests and benchmarks. tcnla_create starts from the
 * defaults and applies the environment variables of docs/api.md ("Tuning"),
 * read once there and never later; tcnla_set_tuning changes them for the
 * calls that follow. The CPU backend ignores them. Fields of 0 / 1 are off
 * / on; TCNLA_TUNING_AUTO (-1) leaves the choice to the backend's rule. */
#define TCNLA_TUNING_AUTO (-1)
typedef struct {
    int sm90;             /* Hopper: TCEC / SHGEMM on the wgmma + TMA kernels (1, default), or
                             on the mma.sync kernels (0; env TCNLA_DISABLE_SM90=1) */
    int sm90_presplit;    /* Hopper: the operands split in a pass of their own before the
                             product: AUTO (default: min(m, n) >= 512, max(m, n) >= 1024,
                             k >= 1024), 0 never, 1 wherever chunk and split-K lengths allow.
                             Up to (m + n) k x 4 bytes (FP16 methods) or x 8 (TF32) of
                             workspace; never inside tcnla_rsvd / _lra / _hosvd. Bitwise the
                             same result (env TCNLA_SM90_PRESPLIT=0 / 1) */
    int sm90_wide;        /* Hopper, TCEC_FP16 / SHGEMM_FP16: the 64 x 256-tile kernels with
                             op(A) split in the consumers: AUTO (default: 192 <= n <= 512,
                             m, k >= 1024), 0 never, 1 wherever they can run (env
                             TCNLA_SM90_WIDE=0 / 1) */
    int sm90_f16;         /* Hopper, TCNLA_GEMM_FP16 with op(B) = B: op(A) rounded inside the
                             product (no FP16 copy of A) instead of FP16 copies and cuBLAS:
                             AUTO (default: n <= 272, m >= 64 x the SM count, k >= 512), 0
                             never, 1 always. Another order of the sum (env TCNLA_SM90_F16) */
    int lr_sm90;          /* Hopper: tcnla_lra's residual A - X Y^T in FP16 on the wgmma
                             kernel (1, default) or the generic one (0; env TCNLA_LR_SM90=0) */
    int trust_bounded;    /* tcnla_rsvd, tcnla_hosvd: A's check once per call by the pass over
                             the magnitudes alone where that decides (1, default), or the exact
                             pass always (0; env TCNLA_TRUST_BOUNDED=0). The same decisions */
    int defer;            /* tcnla_rsvd, tcnla_hosvd: the verdicts of the checks and CholeskyQR
                             breakdown tests collected on the GPU and read once per call (1,
                             default), or waited for each (0; env TCNLA_DEFER=0). Bitwise the
                             same result */
    int hosvd_fuse;       /* tcnla_hosvd on Hopper: the mode-2 projection and the core's first
                             mode product in one pass over the tensor (1, default), or two
                             products (0; env TCNLA_HOSVD_FUSE=0) */
    int rsvd_gram;        /* tcnla_rsvd: the small SVD from the eigensolution of the Gram
                             matrix B B^T where s_k >= 1e-4 s_1 (1, default), or from B^T's QR
                             (0; env TCNLA_RSVD_GRAM=0) */
    int syev_fast;        /* the small SVD's symmetric eigensolutions by tcnla's own solver
                             where it applies (1, default), or by cuSOLVER's syevd (0; env
                             TCNLA_SYEV_FAST=0) */
    int small_svd_jacobi; /* tcnla_rsvd, tcnla_lra: the small SVD by the relatively accurate
                             one-sided Jacobi path after B^T's QR always (1; gesvdj where it
                             fails or l > 1024), instead of an eigensolution where s_k >=
                             1e-4 s_1 (0, default; env TCNLA_SMALL_SVD_JACOBI=1) */
    int exact_scaling;    /* FP16-based products whose operands fail the range check as given:
                             exact power-of-two scaling by rows of op(A) and columns of op(B)
                             (1, default), or the range policy at once (0; env
                             TCNLA_EXACT_SCALING=0). Honoured by the CPU backend too */
    int oz2_fused;        /* Hopper, Ozaki scheme II with k <= 131056: the INT8 products of all
                             moduli and their reduction modulo p_l in one wgmma kernel (1,
                             default), or cuBLASLt's INT8 GEMM and a reduction pass per modulus
                             (0; env TCNLA_OZ2_FUSED=0). Bitwise the same result */
    int small_svd_deflate; /* tcnla_rsvd, tcnla_lra on the GPU: where s_k < 1e-4 s_1, the
                             small SVD by deflated Gram eigensolutions (a second eigensolution
                             on the trailing columns, and so on; relative accuracy about
                             eps s_1 / s_k; gesvdj where its checks fail) (1, default), or
                             gesvdj at once (0; env TCNLA_SMALL_SVD_DEFLATE=0) */
} tcnla_tuning_t;

/* The defaults, without the environment. */
TCNLA_API tcnla_tuning_t tcnla_tuning_default(void);
/* -1: NULL handle; -2: NULL tuning or a field out of its range. */
TCNLA_API int tcnla_set_tuning(tcnla_handle_t handle, const tcnla_tuning_t *tuning);
TCNLA_API int tcnla_get_tuning(tcnla_handle_t handle, tcnla_tuning_t *tuning);

/* ----------------------------------------------------------- number formats */
typedef enum {
    TCNLA_ROUND_RN = 0,  /* to nearest, ties to even */
    TCNLA_ROUND_RNA = 1, /* to nearest, ties away from zero */
    TCNLA_ROUND_RZ = 2   /* toward zero (truncation) */
} tcnla_round_t;

/* FP32 -> narrower formats, bit-exact, with IEEE 754 semantics for
 * subnormals, overflow (RN/RNA: Inf; RZ: largest finite), NaN (quiet,
 * sign kept) and Inf. FP8 follows the OCP 8-bit floating point spec:
 * e4m3 has no Inf (overflow -> NaN 0x7f/0xff unless `saturate`, Inf -> NaN
 * or max when saturating), e5m2 is IEEE-like. With `saturate`, finite
 * overflow gives the largest finite value of the format in any mode. */
TCNLA_API uint16_t tcnla_f32_to_f16(float x, tcnla_round_t mode);
TCNLA_API float tcnla_f16_to_f32(uint16_t h);
TCNLA_API uint16_t tcnla_f32_to_bf16(float x, tcnla_round_t mode);
TCNLA_API float tcnla_bf16_to_f32(uint16_t h);
/* TF32: 1 sign, 8 exponent, 10 fraction bits, returned as the FP32 value
 * whose 13 low fraction bits are zero. */
TCNLA_API float tcnla_f32_to_tf32(float x, tcnla_round_t mode);
TCNLA_API uint8_t tcnla_f32_to_e4m3(float x, tcnla_round_t mode, int saturate);
TCNLA_API float tcnla_e4m3_to_f32(uint8_t v);
TCNLA_API uint8_t tcnla_f32_to_e5m2(float x, tcnla_round_t mode, int saturate);
TCNLA_API float tcnla_e5m2_to_f32(uint8_t v);
/* FP64 -> FP32 with the given rounding (overflow as above). */
TCNLA_API float tcnla_f64_to_f32(double x, tcnla_round_t mode);
/* Rounds the rows x cols FP32 matrix X (leading dimension ld, in the
 * handle's memory) in place to `fmt` (RN; E4M3 / E5M2 saturating), stored
 * as FP32 values: the rounding tcnla_random_fill applies. The CUDA backend
 * takes TCNLA_FMT_FP32 and TCNLA_FMT_FP16 (others: TCNLA_ERR_NOT_SUPPORTED).
 * Returns 0 or -i for argument i (fmt 2, rows 3, cols 4, X 5, ld 6). */
TCNLA_API int tcnla_round_matrix(tcnla_handle_t handle, tcnla_format_t fmt, int64_t rows,
                                 int64_t cols, float *X, int64_t ld);

/* ---------------------------------------------------------------- splitting */
typedef enum {
    TCNLA_SPLIT_MARKIDIS = 0, /* hi = f16(x), lo = f16(x - hi), no scaling */
    TCNLA_SPLIT_HALFHALF = 1, /* hi = f16(x), lo = f16((x - hi) * 2^11) */
    TCNLA_SPLIT_TF32TF32 = 2  /* hi = tf32_rna(x), lo = tf32_rna((x - hi) * 2^11) */
} tcnla_split_t;

/* Splits x into hi + lo * scale (scale = 1 for MARKIDIS, 2^-11 otherwise).
 * hi and lo are returned as FP32 values (exactly the FP16 / TF32 numbers).
 * Non-finite x gives hi = x, lo = 0. */
TCNLA_API void tcnla_split(tcnla_split_t kind, float x, float *hi, float *lo);
/* The scale factor of lo (1 or 2^-11). */
TCNLA_API float tcnla_split_scale(tcnla_split_t kind);

#ifdef __cplusplus
}
#endif
#endif /* TCNLA_H */
