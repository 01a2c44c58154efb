/* Opens the test library (gpu_check.c built with -DGPU_CHECK_LIB, linked
 * with cuBLAS) with dlopen(RTLD_LOCAL), as Python opens PyTorch's and
 * CuPy's extension modules: cuBLAS then sits in a local scope, the hooks
 * still receive the library's calls (the global scope comes first) and must
 * find the real functions without RTLD_NEXT.
 *   local_loader LIB   (exit status: gpu_check_main's) */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: local_loader LIB\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "local_loader: %s\n", dlerror());
        return 2;
    }
    int (*run)(void);
    *(void **)&run = dlsym(h, "gpu_check_main");
    if (!run) {
        fprintf(stderr, "local_loader: %s\n", dlerror());
        return 2;
    }
    /* cuBLAS is not in the global scope */
    if (dlsym(RTLD_DEFAULT, "cublasCreate_v2")) {
        fprintf(stderr, "local_loader: cuBLAS is in the global scope\n");
        return 2;
    }
    return run();
}
