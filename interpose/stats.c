/* Counts and host times of the hooked calls, per entry point and path
 * (tcnla_cublas.h's tcnla_cublas_path_t), and the summary written at exit
 * when TCNLA_CUBLAS_LOG is set: "1" or "stderr" for standard error, any
 * other value a file the summary is appended to (processes without a
 * hooked call write none). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const entry_names[TCI_ENTRIES] = {
    "cublasSgemm_v2",        "cublasSgemm_v2_64",         "cublasSgemmStridedBatched",
    "cublasSgemmStridedBatched_64", "cublasSgemmBatched", "cublasSgemmBatched_64",
    "cublasGemmEx",          "cublasGemmEx_64",           "cublasGemmStridedBatchedEx",
    "cublasGemmStridedBatchedEx_64", "cublasDgemm_v2",    "cublasDgemm_v2_64",
    "cublasDgemmStridedBatched", "cublasDgemmStridedBatched_64", "cublasLtMatmul"};
static const char *const path_names[TCNLA_CUBLAS_PATHS] = {
    "tcnla", "fallback", "policy", "type", "size", "args", "capture", "inner", "failed", "nested"};

static uint64_t calls[TCI_ENTRIES][TCNLA_CUBLAS_PATHS];
static uint64_t nanos[TCI_ENTRIES][TCNLA_CUBLAS_PATHS];

double tci_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tci_count(tci_entry_t e, int path, double t0) {
    if ((int)e < 0 || e >= TCI_ENTRIES || path < 0 || path >= TCNLA_CUBLAS_PATHS) return;
    double dt = tci_now() - t0;
    __atomic_fetch_add(&calls[e][path], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&nanos[e][path], (uint64_t)(dt > 0 ? dt * 1e9 : 0), __ATOMIC_RELAXED);
}

TCI_EXPORT const char *tcnla_cublas_path_name(int path) {
    return path >= 0 && path < TCNLA_CUBLAS_PATHS ? path_names[path] : "?";
}

TCI_EXPORT int tcnla_cublas_get_stats(tcnla_cublas_stats_t *stats) {
    if (!stats) return -1;
    memset(stats, 0, sizeof *stats);
    for (int e = 0; e < TCI_ENTRIES; e++)
        for (int p = 0; p < TCNLA_CUBLAS_PATHS; p++) {
            stats->calls[p] += __atomic_load_n(&calls[e][p], __ATOMIC_RELAXED);
            stats->seconds[p] += 1e-9 * (double)__atomic_load_n(&nanos[e][p], __ATOMIC_RELAXED);
        }
    return 0;
}

TCI_EXPORT int tcnla_cublas_reset_stats(void) {
    for (int e = 0; e < TCI_ENTRIES; e++)
        for (int p = 0; p < TCNLA_CUBLAS_PATHS; p++) {
            __atomic_store_n(&calls[e][p], 0, __ATOMIC_RELAXED);
            __atomic_store_n(&nanos[e][p], 0, __ATOMIC_RELAXED);
        }
    return 0;
}

static void write_log(void) {
    const char *v = getenv("TCNLA_CUBLAS_LOG");
    if (!v || !*v || !strcmp(v, "0")) return;
    uint64_t any = 0; /* (processes that made no hooked call write nothing: the preload
                            reaches every child process of the program too) */
    for (int e = 0; e < TCI_ENTRIES; e++)
        for (int q = 0; q < TCNLA_CUBLAS_PATHS; q++)
            any += __atomic_load_n(&calls[e][q], __ATOMIC_RELAXED);
    if (!any) return;
    const int to_err = !strcmp(v, "1") || !strcmp(v, "stderr");
    FILE *f = to_err ? stderr : fopen(v, "a");
    if (!f) return;
    const tcnla_cublas_policy_t p = tci_policy();
    fprintf(f, "libtcnla_cublas: fp32 %s (min dim %lld, min flops %.3g), fp64 %s (min dim %lld, "
               "min flops %.3g)\n",
            p.fp32_method == TCNLA_GEMM_NATIVE_FP32 ? "native"
            : p.fp32_method == TCNLA_GEMM_TCEC_TF32 ? "tcec_tf32"
                                                    : "tcec_fp16",
            (long long)p.fp32_min_dim, p.fp32_min_flops,
            p.fp64_method == TCNLA_GEMM_NATIVE_FP64 ? "native"
            : p.fp64_method == TCNLA_GEMM_OZAKI_FP16 ? "ozaki_fp16"
            : tci_fp64_auto()                        ? "ozaki_int8 auto"
                                                     : "ozaki_int8 dp",
            (long long)p.fp64_min_dim, p.fp64_min_flops);
    fprintf(f, "libtcnla_cublas: %-30s %-9s %10s %12s\n", "entry point", "path", "calls",
            "host s");
    uint64_t total = 0;
    for (int e = 0; e < TCI_ENTRIES; e++)
        for (int q = 0; q < TCNLA_CUBLAS_PATHS; q++) {
            const uint64_t c = __atomic_load_n(&calls[e][q], __ATOMIC_RELAXED);
            if (!c) continue;
            total += c;
            fprintf(f, "libtcnla_cublas: %-30s %-9s %10llu %12.6f\n", entry_names[e],
                    path_names[q], (unsigned long long)c,
                    1e-9 * (double)__atomic_load_n(&nanos[e][q], __ATOMIC_RELAXED));
        }
    fprintf(f, "libtcnla_cublas: %llu hooked calls\n", (unsigned long long)total);
    if (!to_err) fclose(f);
}

__attribute__((constructor)) static void tci_stats_init(void) { atexit(write_log); }
