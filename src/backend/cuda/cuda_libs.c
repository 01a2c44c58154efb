/* The table of cuBLAS / cuBLASLt / cuSOLVER entry points (cuda_libs.h):
 * each library dlopen'ed once (RTLD_NOW | RTLD_LOCAL) and every function
 * looked up with dlsym on its handle, so a preloaded library that exports
 * the same names is never called by tcnla. Also the status mappers of
 * those libraries (tn_cuda.h). */
#define TN_CUDA_LIBS_NO_REDIRECT
#include "backend/cuda/tn_cuda.h"
#include "core/internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the build's toolkit keeps its libraries (-DTCNLA_CUDA_LIBDIR, the
 * Makefile's $(CUDA_HOME)/lib64). */
#ifndef TCNLA_CUDA_LIBDIR
#define TCNLA_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

static struct tn_cuda_libs tab;
static int tab_status = TCNLA_ERR_NO_BACKEND;
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void *open_in(const char *dir, const char *name) {
    char path[4096];
    if (!dir || !dir[0]) return NULL;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return NULL;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* The directory of the CUDA runtime this library runs with (libcudart is
 * linked dynamically): the toolkit's other libraries usually sit beside it. */
static void cudart_dir(char *dir, size_t len) {
    Dl_info info;
    dir[0] = 0;
    if (!dladdr((void *)&cudaGetDeviceCount, &info) || !info.dli_fname) return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash || (size_t)(slash - info.dli_fname) >= len) return;
    memcpy(dir, info.dli_fname, (size_t)(slash - info.dli_fname));
    dir[slash - info.dli_fname] = 0;
}

/* libNAME.so.MAJOR, then libNAME.so, each by the loader's search (the
 * caller's RUNPATH, LD_LIBRARY_PATH, ld.so.cache), then in libcudart's
 * directory and the build's toolkit. */
static void *open_lib(const char *base, int major) {
    char names[2][64], rt[4096];
    snprintf(names[0], sizeof names[0], "lib%s.so.%d", base, major);
    snprintf(names[1], sizeof names[1], "lib%s.so", base);
    cudart_dir(rt, sizeof rt);
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) h = open_in(rt, names[i]);
        if (!h) h = open_in(TCNLA_CUDA_LIBDIR, names[i]);
        if (h) return h;
    }
    return NULL;
}

/* Resolves every name of one library's list; 0 when one is missing. */
static int resolve(void *lib, const char *const *names, void **slots, int n) {
    for (int i = 0; i < n; i++) {
        slots[i] = dlsym(lib, names[i]);
        if (!slots[i]) return 0;
    }
    return 1;
}

/* the spelled-out types of cuda_libs.h are the C prototypes' */
#define TN_SAME_TYPE(f)                                                                            \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&f), tn_pfn_##f), #f);
TN_CUBLAS_FUNCS_OVERLOADED(TN_SAME_TYPE)

#define TN_NAME(f) #f,
#define TN_SLOT(f) (void **)&t.f,
#define TN_COUNT(f) +1

static void load(void) {
    struct tn_cuda_libs t;
    memset(&t, 0, sizeof t);
    static const char *const n_blas[] = {TN_CUBLAS_FUNCS(TN_NAME)
                                             TN_CUBLAS_FUNCS_OVERLOADED(TN_NAME)};
    static const char *const n_lt[] = {TN_CUBLASLT_FUNCS(TN_NAME)};
    static const char *const n_sol[] = {TN_CUSOLVER_FUNCS(TN_NAME)};
    void **s_blas[] = {TN_CUBLAS_FUNCS(TN_SLOT) TN_CUBLAS_FUNCS_OVERLOADED(TN_SLOT)};
    void **s_lt[] = {TN_CUBLASLT_FUNCS(TN_SLOT)};
    void **s_sol[] = {TN_CUSOLVER_FUNCS(TN_SLOT)};
    const struct {
        const char *base;
        int major;
        const char *const *names;
        void ***slots;
        int n, err;
    } libs[3] = {
        {"cublas", CUBLAS_VER_MAJOR, n_blas, s_blas,
         0 TN_CUBLAS_FUNCS(TN_COUNT) TN_CUBLAS_FUNCS_OVERLOADED(TN_COUNT), TCNLA_ERR_CUBLAS},
        {"cublasLt", CUBLAS_VER_MAJOR, n_lt, s_lt, 0 TN_CUBLASLT_FUNCS(TN_COUNT), TCNLA_ERR_CUBLAS},
        {"cusolver", CUSOLVER_VER_MAJOR, n_sol, s_sol, 0 TN_CUSOLVER_FUNCS(TN_COUNT),
         TCNLA_ERR_CUSOLVER},
    };
    for (int l = 0; l < 3; l++) {
        /* the handles stay open for the process: the table points into them */
        void *lib = open_lib(libs[l].base, libs[l].major);
        if (!lib) {
            tab_status = TCNLA_ERR_NO_BACKEND;
            return;
        }
        void *slot[64];
        if (libs[l].n > (int)(sizeof slot / sizeof slot[0]) ||
            !resolve(lib, libs[l].names, slot, libs[l].n)) {
            tab_status = libs[l].err;
            return;
        }
        for (int i = 0; i < libs[l].n; i++) memcpy(libs[l].slots[i], &slot[i], sizeof slot[i]);
    }
    tab = t;
    tab_status = TCNLA_SUCCESS;
}

int tn_cuda_libs_load(void) {
    pthread_once(&tab_once, load);
    return tab_status;
}

const struct tn_cuda_libs *tn_cuda_libs(void) {
    pthread_once(&tab_once, load);
    return &tab;
}

int tn_cublas_st(cublasStatus_t s) {
    return s == CUBLAS_STATUS_SUCCESS        ? TCNLA_SUCCESS
           : s == CUBLAS_STATUS_ALLOC_FAILED ? TCNLA_ERR_ALLOC
                                             : TCNLA_ERR_CUBLAS;
}

int tn_cusolver_st(cusolverStatus_t s) {
    return s == CUSOLVER_STATUS_SUCCESS        ? TCNLA_SUCCESS
           : s == CUSOLVER_STATUS_ALLOC_FAILED ? TCNLA_ERR_ALLOC
                                               : TCNLA_ERR_CUSOLVER;
}
