/* The checks of libtcnla_cublas.so that need no GPU (run by
 * interpose/check_exports.sh, so by `make test`):
 *   cpu_check SO default|env|badenv|disable
 * loads SO (dlopen, as a preload would), checks the policy the
 * environment gives (the script sets it per mode), the API's answers to
 * bad input, and that every hooked entry point, called with a NULL handle
 * and with invalid sizes, returns exactly the status of the real cuBLAS /
 * cuBLASLt function (the hooks pass such calls through). Exit status 0
 * when every check passes. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tcnla_cublas.h"

#define STR2(x) #x
#define STR(x) STR2(x)
#define CUBLAS_VER_MAJOR_STR STR(CUBLAS_VER_MAJOR)

static int fails;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "cpu_check: %s:%d: %s\n", __FILE__, __LINE__, #c);                    \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

typedef int (*getp_t)(tcnla_cublas_policy_t *);
typedef int (*setp_t)(const tcnla_cublas_policy_t *);
typedef int (*gets_t)(tcnla_cublas_stats_t *);
typedef const char *(*name_t)(int);

static void *so, *blas, *lt;

static void *sym(void *h, const char *n) {
    void *p = dlsym(h, n);
    if (!p) {
        fprintf(stderr, "cpu_check: %s missing\n", n);
        fails++;
    }
    return p;
}

/* Both the hook and the real function, called alike, give the same status. */
#define SAME_STATUS(type, name, ...)                                                               \
    do {                                                                                           \
        type h_ = (type)sym(so, name), r_ = (type)sym(name[6] == 'L' ? lt : blas, name);           \
        if (h_ && r_) {                                                                            \
            cublasStatus_t a_ = h_(__VA_ARGS__), b_ = r_(__VA_ARGS__);                             \
            if (a_ != b_) {                                                                        \
                fprintf(stderr, "cpu_check: %s: hook %d, cuBLAS %d (line %d)\n", name, (int)a_,    \
                        (int)b_, __LINE__);                                                        \
                fails++;                                                                           \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void statuses(void) {
    float fa = 1, fb = 0, *fp = &fa;
    double da = 1, db = 0, *dp = &da;
    const float *fpa[1] = {&fa};
    float *fpc[1] = {&fa};
    const cublasOperation_t N = CUBLAS_OP_N;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: NULL handle, sane sizes; pass 1: NULL handle, m < 0 */
        const int m = pass ? -1 : 256, n = 256, k = 256;
        SAME_STATUS(__typeof__(&cublasSgemm_v2), "cublasSgemm_v2", NULL, N, N, m, n, k, &fa, fp,
                    256, fp, 256, &fb, fp, 256);
        SAME_STATUS(__typeof__(&cublasSgemm_v2_64), "cublasSgemm_v2_64", NULL, N, N, m, n, k, &fa,
                    fp, 256, fp, 256, &fb, fp, 256);
        SAME_STATUS(__typeof__(&cublasSgemmStridedBatched), "cublasSgemmStridedBatched", NULL, N,
                    N, m, n, k, &fa, fp, 256, 0, fp, 256, 0, &fb, fp, 256, 65536, 2);
        SAME_STATUS(__typeof__(&cublasSgemmStridedBatched_64), "cublasSgemmStridedBatched_64",
                    NULL, N, N, m, n, k, &fa, fp, 256, 0, fp, 256, 0, &fb, fp, 256, 65536, 2);
        SAME_STATUS(__typeof__(&cublasSgemmBatched), "cublasSgemmBatched", NULL, N, N, m, n, k,
                    &fa, fpa, 256, fpa, 256, &fb, fpc, 256, 1);
        SAME_STATUS(__typeof__(&cublasSgemmBatched_64), "cublasSgemmBatched_64", NULL, N, N, m, n,
                    k, &fa, fpa, 256, fpa, 256, &fb, fpc, 256, 1);
        SAME_STATUS(__typeof__(&cublasGemmEx), "cublasGemmEx", NULL, N, N, m, n, k, &fa, fp,
                    CUDA_R_32F, 256, fp, CUDA_R_32F, 256, &fb, fp, CUDA_R_32F, 256,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        SAME_STATUS(__typeof__(&cublasGemmEx_64), "cublasGemmEx_64", NULL, N, N, m, n, k, &fa, fp,
                    CUDA_R_32F, 256, fp, CUDA_R_32F, 256, &fb, fp, CUDA_R_32F, 256,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        SAME_STATUS(__typeof__(&cublasGemmStridedBatchedEx), "cublasGemmStridedBatchedEx", NULL,
                    N, N, m, n, k, &fa, fp, CUDA_R_32F, 256, 0, fp, CUDA_R_32F, 256, 0, &fb, fp,
                    CUDA_R_32F, 256, 65536, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        SAME_STATUS(__typeof__(&cublasGemmStridedBatchedEx_64), "cublasGemmStridedBatchedEx_64",
                    NULL, N, N, m, n, k, &fa, fp, CUDA_R_32F, 256, 0, fp, CUDA_R_32F, 256, 0, &fb,
                    fp, CUDA_R_32F, 256, 65536, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        SAME_STATUS(__typeof__(&cublasDgemm_v2), "cublasDgemm_v2", NULL, N, N, m, n, k, &da, dp,
                    256, dp, 256, &db, dp, 256);
        SAME_STATUS(__typeof__(&cublasDgemm_v2_64), "cublasDgemm_v2_64", NULL, N, N, m, n, k, &da,
                    dp, 256, dp, 256, &db, dp, 256);
        SAME_STATUS(__typeof__(&cublasDgemmStridedBatched), "cublasDgemmStridedBatched", NULL, N,
                    N, m, n, k, &da, dp, 256, 0, dp, 256, 0, &db, dp, 256, 65536, 2);
        SAME_STATUS(__typeof__(&cublasDgemmStridedBatched_64), "cublasDgemmStridedBatched_64",
                    NULL, N, N, m, n, k, &da, dp, 256, 0, dp, 256, 0, &db, dp, 256, 65536, 2);
    }
    SAME_STATUS(__typeof__(&cublasLtMatmul), "cublasLtMatmul", NULL, NULL, &fa, fp, NULL, fp,
                NULL, &fb, fp, NULL, fp, NULL, NULL, NULL, 0, NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: cpu_check SO default|env|badenv|disable\n");
        return 2;
    }
    so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fprintf(stderr, "cpu_check: %s\n", dlerror());
        return 1;
    }
    blas = dlopen("libcublas.so." CUBLAS_VER_MAJOR_STR, RTLD_NOW | RTLD_LOCAL);
    lt = dlopen("libcublasLt.so." CUBLAS_VER_MAJOR_STR, RTLD_NOW | RTLD_LOCAL);
    if (!blas || !lt) /* (the statuses need the real functions) */
        printf("cpu_check: cuBLAS not loadable here (%s): statuses not compared\n", dlerror());
    getp_t getp = (getp_t)sym(so, "tcnla_cublas_get_policy");
    setp_t setp = (setp_t)sym(so, "tcnla_cublas_set_policy");
    gets_t gets = (gets_t)sym(so, "tcnla_cublas_get_stats");
    name_t pname = (name_t)sym(so, "tcnla_cublas_path_name");
    if (!getp || !setp || !gets || !pname) return 1;

    tcnla_cublas_policy_t p;
    CHECK(getp(&p) == 0);
    const char *mode = argv[2];
    if (!strcmp(mode, "default") || !strcmp(mode, "badenv")) {
        CHECK(p.fp32_method == TCNLA_GEMM_TCEC_FP16);
        CHECK(p.fp64_method == TCNLA_GEMM_OZAKI_INT8);
        CHECK(p.fp32_min_dim == 128 && p.fp64_min_dim == 0);
        CHECK(p.fp32_min_flops == 2.0 * 2048 * 2048 * 2048);
        CHECK(p.fp64_min_flops == 0); /* (FP64: the Ozaki AUTO mode's model decides) */
    } else if (!strcmp(mode, "env")) {
        CHECK(p.fp32_method == TCNLA_GEMM_TCEC_TF32);
        CHECK(p.fp64_method == TCNLA_GEMM_OZAKI_FP16);
        CHECK(p.fp32_min_dim == 7 && p.fp32_min_flops == 1e6);
        CHECK(p.fp64_min_dim == 9 && p.fp64_min_flops == 5);
    } else if (!strcmp(mode, "disable")) {
        CHECK(p.fp32_method == TCNLA_GEMM_NATIVE_FP32);
        CHECK(p.fp64_method == TCNLA_GEMM_NATIVE_FP64);
    } else {
        fprintf(stderr, "cpu_check: unknown mode %s\n", mode);
        return 2;
    }

    /* bad input: refused, nothing changed */
    const tcnla_cublas_policy_t before = p;
    CHECK(getp(NULL) == -1);
    CHECK(setp(NULL) == -1);
    CHECK(gets(NULL) == -1);
    tcnla_cublas_policy_t q = p;
    q.fp32_method = TCNLA_GEMM_OZAKI_INT8;
    CHECK(setp(&q) == -1);
    q = p, q.fp64_method = TCNLA_GEMM_TCEC_FP16;
    CHECK(setp(&q) == -1);
    q = p, q.fp32_method = (tcnla_gemm_method_t)99;
    CHECK(setp(&q) == -1);
    q = p, q.fp32_min_dim = -1;
    CHECK(setp(&q) == -1);
    q = p, q.fp64_min_flops = NAN;
    CHECK(setp(&q) == -1);
    q = p, q.fp32_min_flops = -1;
    CHECK(setp(&q) == -1);
    CHECK(getp(&q) == 0 && !memcmp(&q, &before, sizeof q));
    q = p, q.fp32_method = TCNLA_GEMM_NATIVE_FP32, q.fp64_min_dim = 3;
    CHECK(setp(&q) == 0);
    tcnla_cublas_policy_t r;
    CHECK(getp(&r) == 0 && r.fp32_method == TCNLA_GEMM_NATIVE_FP32 && r.fp64_min_dim == 3);
    CHECK(setp(&before) == 0);
    CHECK(!strcmp(pname(TCNLA_CUBLAS_PATH_TCNLA), "tcnla"));
    CHECK(!strcmp(pname(TCNLA_CUBLAS_PATH_CAPTURE), "capture"));
    CHECK(!strcmp(pname(TCNLA_CUBLAS_PATH_NESTED), "nested"));
    CHECK(!strcmp(pname(-1), "?") && !strcmp(pname(TCNLA_CUBLAS_PATHS), "?"));

    /* the statuses of the real functions, through the hooks */
    if (blas && lt) statuses();
    tcnla_cublas_stats_t st;
    CHECK(gets(&st) == 0);
    uint64_t total = 0;
    for (int i = 0; i < TCNLA_CUBLAS_PATHS; i++) total += st.calls[i];
    CHECK(total == (blas && lt ? 29u : 0u)); /* every hooked call counted, none computed */
    CHECK(st.calls[TCNLA_CUBLAS_PATH_TCNLA] == 0 && st.calls[TCNLA_CUBLAS_PATH_FALLBACK] == 0);
    if (fails) fprintf(stderr, "cpu_check %s: %d failed\n", mode, fails);
    else printf("cpu_check %s: ok\n", mode);
    return fails ? 1 : 0;
}
