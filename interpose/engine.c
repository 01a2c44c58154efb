/* libtcnla behind the hooks: loaded at the first product the hooks take,
 * with dlopen(RTLD_LOCAL) from the directory of libtcnla_cublas.so (where
 * `make` and `make install` put both), so that libtcnla's own dependencies
 * (LAPACK, BLAS, libgomp, the CUDA runtime) never enter the program's
 * global symbol scope, where they would bind the program's own references
 * (a preloaded library's dependencies come before everything the program
 * loads). TCNLA_CUBLAS_LIBTCNLA names another file.
 *
 * One tcnla handle per device (created on first use, range policy
 * FALLBACK: a product FP16's split cannot hold runs TCEC_TF32; kept for
 * the process), one lock per device: the hooks' products on a device run
 * one at a time, each on the stream of the cuBLAS handle (or cuBLASLt
 * call) it came from (tcnla_set_stream only where the stream changes: it
 * waits for the old one). */
#include "internal.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCI_STR2(x) #x
#define TCI_STR(x) TCI_STR2(x)
#define TCI_LIBTCNLA "libtcnla.so." TCI_STR(TCNLA_VERSION_MAJOR)

#define TCI_TCNLA_FUNCS(X)                                                                         \
    X(tcnla_create_on_device)                                                                      \
    X(tcnla_set_stream)                                                                            \
    X(tcnla_set_range_policy)                                                                      \
    X(tcnla_sgemm_ex)                                                                              \
    X(tcnla_sgemm_strided_batched)                                                                 \
    X(tcnla_dgemm_ex)                                                                              \
    X(tcnla_ozaki_opts_default)                                                                    \
    X(tcnla_set_ozaki_opts)
#define TCI_MEMBER(f) __typeof__(&f) f;
static struct {
    TCI_TCNLA_FUNCS(TCI_MEMBER)
} T;
static int t_ok;
static pthread_once_t t_once = PTHREAD_ONCE_INIT;

static void *open_tcnla(void) {
    const char *env = getenv("TCNLA_CUBLAS_LIBTCNLA");
    if (env && *env) return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    Dl_info di;
    char path[4096];
    if (dladdr((void *)&open_tcnla, &di) && di.dli_fname) {
        const char *slash = strrchr(di.dli_fname, '/');
        if (slash && (size_t)(slash - di.dli_fname) + sizeof TCI_LIBTCNLA + 1 < sizeof path) {
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - di.dli_fname), di.dli_fname,
                     TCI_LIBTCNLA);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h) return h;
        }
    }
    return dlopen(TCI_LIBTCNLA, RTLD_NOW | RTLD_LOCAL);
}

static void load_tcnla(void) {
    void *h = open_tcnla();
    if (!h) {
        fprintf(stderr, "libtcnla_cublas: cannot load %s (%s): every call goes to cuBLAS\n",
                TCI_LIBTCNLA, dlerror());
        return;
    }
#define TCI_RESOLVE(f)                                                                             \
    {                                                                                              \
        void *p = dlsym(h, #f);                                                                    \
        if (!p) return;                                                                            \
        memcpy(&T.f, &p, sizeof p);                                                                \
    }
    TCI_TCNLA_FUNCS(TCI_RESOLVE)
    t_ok = 1;
}

#define TCI_MAX_DEVICES 64
static struct dev {
    pthread_mutex_t mu;
    tcnla_handle_t h;
    cudaStream_t stream;
    int tried, failed;
    int oz_mode; /* the handle's Ozaki mode as last set (-1: not yet) */
} devs[TCI_MAX_DEVICES];
static pthread_once_t devs_once = PTHREAD_ONCE_INIT;
static void devs_init(void) {
    for (int i = 0; i < TCI_MAX_DEVICES; i++) pthread_mutex_init(&devs[i].mu, NULL);
}

/* The current device's state, locked, with its handle on stream s; NULL
 * (nothing locked) when there is none. */
static struct dev *acquire(cudaStream_t s) {
    pthread_once(&t_once, load_tcnla);
    if (!t_ok) return NULL;
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess || d < 0 || d >= TCI_MAX_DEVICES) {
        (void)cudaGetLastError();
        return NULL;
    }
    pthread_once(&devs_once, devs_init);
    struct dev *v = &devs[d];
    pthread_mutex_lock(&v->mu);
    if (!v->tried) {
        v->tried = 1;
        if (T.tcnla_create_on_device(&v->h, TCNLA_BACKEND_CUDA, d) != TCNLA_SUCCESS ||
            T.tcnla_set_range_policy(v->h, TCNLA_RANGE_FALLBACK) != TCNLA_SUCCESS) {
            v->failed = 1;
            fprintf(stderr, "libtcnla_cublas: no tcnla handle on device %d: its calls go to "
                            "cuBLAS\n", d);
        }
        /* (no stream yet: the first call sets the caller's, the legacy
         * default stream NULL included; the handle starts on a stream of its
         * own, which the caller's work is not ordered with) */
        v->stream = (cudaStream_t)~(uintptr_t)0;
        v->oz_mode = -1;
    }
    if (v->failed) {
        pthread_mutex_unlock(&v->mu);
        return NULL;
    }
    if (v->stream != s) {
        if (T.tcnla_set_stream(v->h, (void *)s) != TCNLA_SUCCESS) {
            pthread_mutex_unlock(&v->mu);
            return NULL;
        }
        v->stream = s;
    }
    return v;
}

static void release(struct dev *v) { pthread_mutex_unlock(&v->mu); }

/* The capture query goes to the driver (libcuda.so.1, loaded by the
 * program): the first call of this library's CUDA runtime initializes it,
 * which must not happen inside a capture. */
typedef CUresult (*cu_is_capturing_t)(CUstream, CUstreamCaptureStatus *);
static cu_is_capturing_t cu_is_capturing;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static void cu_load(void) {
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h) *(void **)&cu_is_capturing = dlsym(h, "cuStreamIsCapturing");
}

int tci_stream_blocked(cudaStream_t s) {
    pthread_once(&cu_once, cu_load);
    if (cu_is_capturing) {
        CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
        if (cu_is_capturing((CUstream)s, &cs) != CUDA_SUCCESS)
            return TCNLA_CUBLAS_PATH_CAPTURE; /* (the legacy stream while another captures) */
        return cs == CU_STREAM_CAPTURE_STATUS_NONE ? -1 : TCNLA_CUBLAS_PATH_CAPTURE;
    }
    enum cudaStreamCaptureStatus rs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &rs) != cudaSuccess) {
        (void)cudaGetLastError();
        return TCNLA_CUBLAS_PATH_CAPTURE;
    }
    return rs == cudaStreamCaptureStatusNone ? -1 : TCNLA_CUBLAS_PATH_CAPTURE;
}

int tci_read_device(cudaStream_t s, const void *a, void *out_a, const void *b, void *out_b,
                    size_t bytes) {
    cudaError_t e = cudaSuccess;
    if (a) e = cudaMemcpyAsync(out_a, a, bytes, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess && b) e = cudaMemcpyAsync(out_b, b, bytes, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e == cudaSuccess ? 0 : -1;
}

static tcnla_op_t op(int t) { return t ? TCNLA_OP_T : TCNLA_OP_N; }

int tci_sgemm(cudaStream_t s, tcnla_gemm_method_t method, int ta, int tb, int64_t m, int64_t n,
              int64_t k, float alpha, const float *A, int64_t lda, int64_t sA, const float *B,
              int64_t ldb, int64_t sB, float beta, float *C, int64_t ldc, int64_t sC,
              int64_t batch, int *fallback) {
    *fallback = 0;
    struct dev *v = acquire(s);
    if (!v) return TCNLA_ERR_NO_BACKEND;
    int st;
    if (batch == 1) {
        tcnla_info_t info;
        memset(&info, 0, sizeof info);
        st = T.tcnla_sgemm_ex(v->h, method, op(ta), op(tb), m, n, k, alpha, A, lda, B, ldb, beta,
                              C, ldc, &info);
        *fallback = st == TCNLA_SUCCESS && info.method != method;
    } else {
        st = T.tcnla_sgemm_strided_batched(v->h, method, op(ta), op(tb), m, n, k, alpha, A, lda,
                                           sA, B, ldb, sB, beta, C, ldc, sC, batch);
    }
    release(v);
    return st;
}

int tci_dgemm(cudaStream_t s, tcnla_gemm_method_t method, int ta, int tb, int64_t m, int64_t n,
              int64_t k, double alpha, const double *A, int64_t lda, int64_t sA,
              const double *B, int64_t ldb, int64_t sB, double beta, double *C, int64_t ldc,
              int64_t sC, int64_t batch, int *fallback, int64_t *done) {
    *fallback = 0;
    *done = 0;
    struct dev *v = acquire(s);
    if (!v) return TCNLA_ERR_NO_BACKEND;
    int st = TCNLA_SUCCESS;
    /* OZAKI_INT8: AUTO mode (cuBLAS DGEMM where the model predicts the scheme
     * slower) unless TCNLA_CUBLAS_FP64=ozaki_dp; other methods: DP */
    const int mode = method == TCNLA_GEMM_OZAKI_INT8 && tci_fp64_auto() ? TCNLA_OZAKI_AUTO
                                                                        : TCNLA_OZAKI_DP;
    if (v->oz_mode != mode) {
        tcnla_ozaki_opts_t o = T.tcnla_ozaki_opts_default();
        o.mode = (tcnla_ozaki_mode_t)mode;
        st = T.tcnla_set_ozaki_opts(v->h, &o);
        if (st == TCNLA_SUCCESS) v->oz_mode = mode;
    }
    for (int64_t b = 0; b < batch && st == TCNLA_SUCCESS; b++) {
        tcnla_info_t info;
        memset(&info, 0, sizeof info);
        st = T.tcnla_dgemm_ex(v->h, method, op(ta), op(tb), m, n, k, alpha, A + b * sA, lda,
                              B + b * sB, ldb, beta, C + b * sC, ldc, &info);
        if (st == TCNLA_SUCCESS) {
            if (info.method != method) *fallback = 1;
            *done = b + 1;
        }
    }
    release(v);
    return st;
}
