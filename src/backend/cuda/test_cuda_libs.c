/* The table of cuBLAS / cuBLASLt / cuSOLVER entry points
 * (src/backend/cuda/cuda_libs.c): it loads, and every entry is the
 * definition inside its own library (dladdr), not whatever the process's
 * global scope would find first. Runs without a GPU. */
#include "test.h"

#ifdef TCNLA_HAVE_CUDA
#define TN_CUDA_LIBS_NO_REDIRECT /* the table's members by name */
#include "backend/cuda/tn_cuda.h"

#include <dlfcn.h>
#include <string.h>

/* 1 when p lies in a file named lib<base>.so* */
static int in_lib(void *p, const char *base) {
    Dl_info info;
    if (!p || !dladdr(p, &info) || !info.dli_fname) return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    const char *name = slash ? slash + 1 : info.dli_fname;
    char want[64];
    snprintf(want, sizeof want, "lib%s.so", base);
    return strncmp(name, want, strlen(want)) == 0;
}

TEST(cuda_libs_table) {
    const int st = tn_cuda_libs_load();
    if (st == TCNLA_ERR_NO_BACKEND) SKIP("libcublas / libcublasLt / libcusolver not found");
    CHECK_EQ_INT(st, TCNLA_SUCCESS);
    CHECK_EQ_INT(tn_cuda_libs_load(), st); /* once */
    const struct tn_cuda_libs *t = tn_cuda_libs();
#define IN(f, lib) CHECK_MSG(in_lib((void *)t->f, lib), "%s is not lib%s's own", #f, lib);
#define IN_BLAS(f) IN(f, "cublas")
#define IN_LT(f) IN(f, "cublasLt")
#define IN_SOLVER(f) IN(f, "cusolver")
    TN_CUBLAS_FUNCS(IN_BLAS)
    TN_CUBLAS_FUNCS_OVERLOADED(IN_BLAS)
    TN_CUBLASLT_FUNCS(IN_LT)
    TN_CUSOLVER_FUNCS(IN_SOLVER)
    CHECK_EQ_INT(tn_cublas_st(CUBLAS_STATUS_SUCCESS), TCNLA_SUCCESS);
    CHECK_EQ_INT(tn_cublas_st(CUBLAS_STATUS_ALLOC_FAILED), TCNLA_ERR_ALLOC);
    CHECK_EQ_INT(tn_cublas_st(CUBLAS_STATUS_EXECUTION_FAILED), TCNLA_ERR_CUBLAS);
    CHECK_EQ_INT(tn_cusolver_st(CUSOLVER_STATUS_SUCCESS), TCNLA_SUCCESS);
    CHECK_EQ_INT(tn_cusolver_st(CUSOLVER_STATUS_ALLOC_FAILED), TCNLA_ERR_ALLOC);
    CHECK_EQ_INT(tn_cusolver_st(CUSOLVER_STATUS_INTERNAL_ERROR), TCNLA_ERR_CUSOLVER);
}

/* tn_carve: aligned pieces in order, NULL past the capacity */
TEST(cuda_workspace_carve) {
    static char buf[4 * TN_WS_ALIGN];
    tn_carve_t cv = {buf, 0, tn_ws_align(1) + tn_ws_align(TN_WS_ALIGN + 1)};
    char *a = tn_carve(&cv, 1), *b = tn_carve(&cv, TN_WS_ALIGN + 1);
    CHECK(a == buf && b == buf + TN_WS_ALIGN);
    CHECK(tn_carve(&cv, 1) == NULL);
    CHECK(tn_ws_align(0) == 0 && tn_ws_align(TN_WS_ALIGN) == TN_WS_ALIGN);
}
#else
TEST(cuda_libs_table) { SKIP("built without CUDA"); }
#endif
