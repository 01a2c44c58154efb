/* The real cuBLAS / cuBLASLt functions behind the hooks, and the checks
 * that send a call straight to them.
 *
 * Where cuBLAS sits in the global scope (a program linked with -lcublas)
 * dlsym(RTLD_NEXT) finds it. PyTorch and CuPy load it RTLD_LOCAL: their
 * references still bind to the preloaded hooks (the global scope comes
 * first), but RTLD_NEXT finds nothing; then the library already loaded is
 * opened again by its soname with RTLD_NOLOAD and searched with dlsym on
 * its handle, which gives its own definition. Nothing here runs before the
 * first hooked call, when the caller has loaded cuBLAS already.
 *
 * libtcnla's own cuBLAS calls never come here: it looks its functions up
 * with dlsym on the handle of its own dlopen of libcublas, which finds the
 * library's definitions (src/backend/cuda/cuda_libs.c). cuBLAS itself calls
 * cublasLtMatmul through the global scope; such calls, and any call made
 * while the thread is inside a hook, go to the real function. */
#include "internal.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

static const char *const blas_libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
static const char *const lt_libs[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                      "libcublasLt.so"};

void *tci_real(const char *name, int lt, const void *self) {
    const char *const *libs = lt ? lt_libs : blas_libs;
    void *p = dlsym(RTLD_NEXT, name);
    if (p == self) p = NULL;
    for (int pass = 0; pass < 2 && !p; pass++) {
        for (int i = 0; i < 3 && !p; i++) {
            /* pass 0: only a library already loaded; pass 1 (none is):
             * load it, locally, as the caller would have had to */
            void *h = dlopen(libs[i], pass == 0 ? RTLD_LAZY | RTLD_NOLOAD : RTLD_LAZY | RTLD_LOCAL);
            if (!h) continue;
            p = dlsym(h, name);
            if (p == self) p = NULL;
            /* the handle stays open: the function lives in it */
        }
    }
    return p;
}

typedef cublasStatus_t (*get_stream_t)(cublasHandle_t, cudaStream_t *);
typedef cublasStatus_t (*get_pmode_t)(cublasHandle_t, cublasPointerMode_t *);
typedef cublasStatus_t (*get_math_t)(cublasHandle_t, cublasMath_t *);

/* one lookup per function (a race only repeats the same lookup) */
#define TCI_LOOKUP(type, var, name, lt)                                                            \
    static type var;                                                                               \
    type f_ = __atomic_load_n(&var, __ATOMIC_ACQUIRE);                                             \
    if (!f_) {                                                                                     \
        f_ = (type)tci_real(name, lt, NULL);                                                       \
        __atomic_store_n(&var, f_, __ATOMIC_RELEASE);                                              \
    }

int tci_get_stream(cublasHandle_t h, cudaStream_t *s) {
    TCI_LOOKUP(get_stream_t, fn, "cublasGetStream_v2", 0)
    return f_ && f_(h, s) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

int tci_get_pointer_mode(cublasHandle_t h, cublasPointerMode_t *m) {
    TCI_LOOKUP(get_pmode_t, fn, "cublasGetPointerMode_v2", 0)
    return f_ && f_(h, m) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

int tci_get_math_mode(cublasHandle_t h, cublasMath_t *m) {
    TCI_LOOKUP(get_math_t, fn, "cublasGetMathMode", 0)
    return f_ && f_(h, m) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

tci_lt_desc_get_t tci_lt_desc_get(void) {
    TCI_LOOKUP(tci_lt_desc_get_t, fn, "cublasLtMatmulDescGetAttribute", 1)
    return f_;
}

tci_lt_layout_get_t tci_lt_layout_get(void) {
    TCI_LOOKUP(tci_lt_layout_get_t, fn, "cublasLtMatrixLayoutGetAttribute", 1)
    return f_;
}

int tci_from_vendor(const void *ret) {
    static const char *const prefixes[] = {"libcublas",  "libcusolver", "libcusparse",
                                           "libcudnn",   "libcufft",    "libnv",
                                           "libcutensor"};
    Dl_info di;
    if (!ret || !dladdr(ret, &di) || !di.dli_fname) return 0;
    const char *b = strrchr(di.dli_fname, '/');
    b = b ? b + 1 : di.dli_fname;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(b, prefixes[i], strlen(prefixes[i]))) return 1;
    return 0;
}

static __thread int depth;
int tci_inside(void) { return depth > 0; }
int tci_nested_path(const void *ret) {
    return tci_from_vendor(ret) ? TCNLA_CUBLAS_PATH_INNER : TCNLA_CUBLAS_PATH_NESTED;
}
void tci_enter(void) { depth++; }
void tci_leave(void) { depth--; }
