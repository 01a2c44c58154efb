/* bench_ozaki: [Mukunoki et al. 2020] Table 1 on the GPU in one run.
 *
 * For every n and phi: A, B (n x n, op N) from tn_rand_phi ([Mukunoki et al. 2020]
 * section 5.1), then cuBLAS DGEMM, cuBLAS fixed-point emulation
 * (CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, EAGER strategy), tcnla_dgemm
 * with OZAKI_FP16 and OZAKI_INT8 in DP and CR modes (fast mode on, the
 * library default). Time: median of timed runs (after one warm-up) of the
 * whole call, host-synchronised (one cudaDeviceSynchronize after the run's
 * calls, the same for every row), including the plan and splits;
 * TFLOP/s = 2 n^3 / time. Errors |C - R| / |R| over a sample of
 * rows x cols elements, R the exact product correctly rounded (tcnla_dgemm
 * in CR mode on a CPU handle, on the sampled rows and columns).
 * ozaki_int8 is scheme 1 ([Mukunoki et al. 2020]'s slices), ozaki_int8_crt scheme 2
 * (moduli and the Chinese remainder theorem); "slices" is the slice count d
 * or the moduli count.
 * --precision single: the same for SGEMM: A, B rounded to FP32, cuBLAS
 * SGEMM (FP32 FMA units) against tcnla_sgemm OZAKI_INT8 scheme 2 DP, the
 * reference the exact product of the FP32 values.
 * ozaki_int8_crt/AUTO: the AUTO mode (scheme 2 in DP mode where the cost
 * model of src/gemm/ozaki_auto.c predicts it faster than the native GEMM,
 * the native GEMM elsewhere; "slices" is then "native").
 * --shapes MxNxK,..: products of these shapes (op N, A m x k, B k x n)
 * instead of the squares of --sizes.
 * --calls C: each timed run queues C calls back to back and waits once, and
 * the time is the run's over C (the per-call time of a loop of products,
 * where the host's part of a call overlaps the GPU's work); default 1.
 * --rounds: the timed runs in rounds, each timing every method once in turn
 * (round 0 the warm-up), instead of each method's runs together: the GPU's
 * drift over the runs (clock, temperature, power) then reaches every method
 * alike; for methods whose times differ by a few per cent at most (AUTO
 * against cuBLAS DGEMM at small sizes), where a method's place in the
 * order otherwise shows (H100, 4096^3 phi 2: AUTO, running cuBLAS DGEMM,
 * 4 % behind cuBLAS DGEMM timed just before it, in two runs; level with it
 * in rounds). Without it each method runs in its own steady state, as a
 * loop of products would.
 * --method-label L: the cuBLAS rows (cublas_dgemm, cublas_fixedpoint_emu,
 * cublas) are named L instead, for a run with another library preloaded
 * in cuBLAS's place (bench/ozaki/gemmul8.sh).
 * Rows gpu,method,mode,phi,m,n,k,slices,seconds,tflops,max_rel_err,
 * median_rel_err are appended to the CSV.
 *   build/bench_ozaki [--sizes 4096,8192 | --shapes MxNxK,..] [--phis 0.1,1,2]
 *                     [--reps 3] [--sample 32] [--methods NAME[/MODE],..]
 *                     [--calls C] [--rounds] [--method-label L]
 *                     [--precision double|single]
 *                     [--out bench/results/ozaki.csv] */
#include "tcnla.h"
#include "testmat/testdata.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "bench_ozaki"
#include "bench_util.h"

#ifdef TCNLA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>

typedef struct {
    const char *name, *mode;
    int kind; /* 0 cublas dgemm, 1 cublas emulated, 2 tcnla ozaki, 3 cublas sgemm, 4 tcnla
                 sgemm ozaki */
    tcnla_gemm_method_t meth;
    tcnla_ozaki_mode_t omode;
    int scheme;
} meth_t;

/* One call of method M on the device operands (C = A B); its status */
static int run_once(const meth_t *M, tcnla_handle_t g, cublasHandle_t cb, int64_t m, int64_t n,
                    int64_t k, void *dA, void *dB, void *dC, tcnla_info_t *info) {
    const double one = 1.0, zero = 0.0;
    const int im = (int)m, in = (int)n, ik = (int)k;
    if (M->kind == 2)
        return tcnla_dgemm_ex(g, M->meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, dA, m, dB, k, 0.0,
                              dC, m, info);
    if (M->kind == 3) {
        const float fone = 1.0f, fzero = 0.0f;
        return cublasSgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, im, in, ik, &fone, dA, im, dB, ik,
                           &fzero, dC, im);
    }
    if (M->kind == 4)
        return tcnla_sgemm_ex(g, M->meth, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, dA, m, dB, k,
                              0.0f, dC, m, info);
    cublasSetEmulationStrategy(cb, M->kind == 1 ? CUBLAS_EMULATION_STRATEGY_EAGER
                                                : CUBLAS_EMULATION_STRATEGY_DEFAULT);
    const int st = cublasGemmEx(
        cb, CUBLAS_OP_N, CUBLAS_OP_N, im, in, ik, &one, dA, CUDA_R_64F, im, dB, CUDA_R_64F, ik,
        &zero, dC, CUDA_R_64F, im,
        M->kind == 1 ? CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT : CUBLAS_COMPUTE_64F,
        CUBLAS_GEMM_DEFAULT);
    cublasSetEmulationStrategy(cb, CUBLAS_EMULATION_STRATEGY_DEFAULT);
    return st;
}

/* the handle's Ozaki options for method M */
static void set_opts(tcnla_handle_t g, const meth_t *M) {
    tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
    o.mode = M->omode;
    o.scheme = (tcnla_ozaki_scheme_t)M->scheme;
    tcnla_set_ozaki_opts(g, &o);
}

/* "name" or "name/mode" in a comma-separated list (NULL: everything) */
static int wanted(const char *list, const meth_t *M) {
    char full[64];
    snprintf(full, sizeof full, "%s/%s", M->name, M->mode);
    return bench_in_list(list, M->name) || bench_in_list(list, full);
}

static int parse_list(const char *s, double *out, int max) {
    int n = 0;
    while (*s && n < max) {
        char *e;
        out[n++] = strtod(s, &e);
        if (*e != ',') break;
        s = e + 1;
    }
    return n;
}

/* "MxNxK,MxNxK,.." into shp[3 * i ..]; the count, -1 on a malformed entry */
#define MAX_SHAPES 64
static int parse_shapes(const char *s, int64_t *shp) {
    int n = 0;
    while (*s) {
        if (n == MAX_SHAPES) return -1;
        for (int d = 0; d < 3; d++) {
            char *e;
            long long v = strtoll(s, &e, 10);
            if (e == s || v < 1 || v > (1LL << 31) - 1) return -1;
            shp[3 * n + d] = v;
            if (d < 2 && *e != 'x') return -1;
            s = d < 2 ? e + 1 : e;
        }
        n++;
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return n;
}

int main(int argc, char **argv) {
    tcnla_info_t info = {0};
    double sizes[8] = {4096, 8192}, phis[8] = {0.1, 1, 2};
    int64_t shp[3 * MAX_SHAPES];
    int nsz = 2, nphi = 3, reps = 3, sample = 32, nshapes = 0, calls = 1, rounds = 0;
    const char *out = "bench/results/ozaki.csv", *only = NULL, *label = NULL;
    int single = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsz = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
            nshapes = parse_shapes(argv[++i], shp);
            if (nshapes <= 0) {
                fprintf(stderr, "--shapes: expected MxNxK[,MxNxK..] (at most %d, sizes >= 1)\n",
                        MAX_SHAPES);
                return 2;
            }
        } else if (!strcmp(argv[i], "--method-label") && i + 1 < argc) {
            label = argv[++i];
            if (!*label || strpbrk(label, ", \n")) {
                fprintf(stderr, "--method-label: a non-empty name without ',' or spaces\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--phis") && i + 1 < argc) nphi = parse_list(argv[++i], phis, 8);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds")) rounds = 1;
        else if (!strcmp(argv[i], "--sample") && i + 1 < argc) sample = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) single = !strcmp(argv[++i], "single");
        else {
            printf("usage: %s [--sizes N,.. | --shapes MxNxK,..] [--phis P,..] [--reps R]\n"
                   "       [--calls C] [--rounds] [--sample S] [--methods NAME[/MODE],..]\n"
                   "       [--method-label L]\n"
                   "       [--precision double|single] [--out CSV]\n"
                   "methods: cublas_dgemm cublas_fixedpoint_emu ozaki_fp16/DP ozaki_fp16/CR\n"
                   "         ozaki_int8/DP ozaki_int8/CR ozaki_int8_crt/DP ozaki_int8_crt/AUTO\n"
                   "         (double); cublas ozaki_int8_crt/DP ozaki_int8_crt/AUTO (single;\n"
                   "         CSV names sgemm_*)\n",
                   argv[0]);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (reps < 1 || calls < 1 || calls > 10000) {
        fprintf(stderr, "--reps: at least 1; --calls: 1 .. 10000\n");
        return 2;
    }
    tcnla_handle_t g = NULL, c = NULL;
    if (tcnla_create(&g, TCNLA_BACKEND_CUDA) || tcnla_create(&c, TCNLA_BACKEND_CPU)) {
        fprintf(stderr, "no CUDA handle\n");
        return 1;
    }
    char gpu[256];
    tcnla_device_name(g, gpu, sizeof gpu);
    for (char *p = gpu; *p; p++)
        if (*p == ',') *p = ' ';
    cublasHandle_t cb;
    if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) return 1;
    FILE *f = fopen(out, "a");
    if (!f) {
        perror(out);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    if (ftell(f) == 0)
        fprintf(f, "gpu,method,mode,phi,m,n,k,slices,seconds,tflops,max_rel_err,median_rel_err\n");
    const meth_t md[] = {
        {"cublas_dgemm", "-", 0, TCNLA_GEMM_NATIVE_FP64, TCNLA_OZAKI_DP, 0},
        {"cublas_fixedpoint_emu", "-", 1, TCNLA_GEMM_NATIVE_FP64, TCNLA_OZAKI_DP, 0},
        {"ozaki_fp16", "DP", 2, TCNLA_GEMM_OZAKI_FP16, TCNLA_OZAKI_DP, 1},
        {"ozaki_fp16", "CR", 2, TCNLA_GEMM_OZAKI_FP16, TCNLA_OZAKI_CR, 1},
        {"ozaki_int8", "DP", 2, TCNLA_GEMM_OZAKI_INT8, TCNLA_OZAKI_DP, 1},
        {"ozaki_int8", "CR", 2, TCNLA_GEMM_OZAKI_INT8, TCNLA_OZAKI_CR, 1},
        {"ozaki_int8_crt", "DP", 2, TCNLA_GEMM_OZAKI_INT8, TCNLA_OZAKI_DP, 2},
        {"ozaki_int8_crt", "AUTO", 2, TCNLA_GEMM_OZAKI_INT8, TCNLA_OZAKI_AUTO, 0}};
    const meth_t msg[] = {
        {"cublas", "-", 3, TCNLA_GEMM_NATIVE_FP32, TCNLA_OZAKI_DP, 0},
        {"ozaki_int8_crt", "DP", 4, TCNLA_GEMM_OZAKI_INT8, TCNLA_OZAKI_DP, 2},
        {"ozaki_int8_crt", "AUTO", 4, TCNLA_GEMM_OZAKI_INT8, TCNLA_OZAKI_AUTO, 0}};
    const meth_t *ms = single ? msg : md;
    const int nm = single ? (int)(sizeof msg / sizeof msg[0]) : (int)(sizeof md / sizeof md[0]);
    if (!nshapes) {
        for (int si = 0; si < nsz; si++)
            shp[3 * si] = shp[3 * si + 1] = shp[3 * si + 2] = (int64_t)sizes[si];
        nshapes = nsz;
    }
    printf("%-22s %-4s %5s %6s %6s %6s %6s %10s %8s %10s %10s\n", "method", "md", "phi", "m", "n",
           "k", "slices", "seconds", "TFLOP/s", "max_rel", "med_rel");
    for (int si = 0; si < nshapes; si++) {
        const int64_t m = shp[3 * si], n = shp[3 * si + 1], k = shp[3 * si + 2];
        const size_t mk = (size_t)m * (size_t)k, kn = (size_t)k * (size_t)n,
                     mn = (size_t)m * (size_t)n;
        double *A = malloc(8 * mk), *B = malloc(8 * kn), *C = malloc(8 * mn);
        float *T = single ? malloc(4 * (mk > kn ? mk : kn)) : NULL;
        void *dA, *dB, *dC;
        if (!A || !B || !C || (single && !T) || tcnla_malloc(g, &dA, 8 * mk) ||
            tcnla_malloc(g, &dB, 8 * kn) || tcnla_malloc(g, &dC, 8 * mn)) {
            fprintf(stderr, "out of memory at %lld x %lld x %lld\n", (long long)m, (long long)n,
                    (long long)k);
            return 1;
        }
        int S = sample;
        if (S > m) S = (int)m;
        if (S > n) S = (int)n;
        double *As = malloc(8 * (size_t)S * k), *Bs = malloc(8 * (size_t)S * k);
        double *R = malloc(8 * (size_t)S * S), *err = malloc(8 * (size_t)S * S);
        int64_t *ri = malloc(8 * (size_t)S), *cj = malloc(8 * (size_t)S);
        for (int t = 0; t < S; t++)
            ri[t] = ((int64_t)t * m / S + 7) % m, cj[t] = ((int64_t)t * n / S + 3) % n;
        for (int pi = 0; pi < nphi; pi++) {
            const double phi = phis[pi];
            tn_rand_phi(1000 + (uint64_t)si, 1, phi, (int64_t)mk, A);
            tn_rand_phi(1000 + (uint64_t)si, 2, phi, (int64_t)kn, B);
            if (single) { /* FP32 data in the first half of dA / dB, R of the FP32 values */
                for (size_t i = 0; i < mk; i++) T[i] = (float)A[i], A[i] = T[i];
                tcnla_memcpy(g, dA, T, 4 * mk, TCNLA_MEMCPY_HOST_TO_HANDLE);
                for (size_t i = 0; i < kn; i++) T[i] = (float)B[i], B[i] = T[i];
                tcnla_memcpy(g, dB, T, 4 * kn, TCNLA_MEMCPY_HOST_TO_HANDLE);
            } else {
                tcnla_memcpy(g, dA, A, 8 * mk, TCNLA_MEMCPY_HOST_TO_HANDLE);
                tcnla_memcpy(g, dB, B, 8 * kn, TCNLA_MEMCPY_HOST_TO_HANDLE);
            }
            /* exact reference on the sample: CPU CR mode */
            for (int t = 0; t < S; t++)
                for (int64_t l = 0; l < k; l++) {
                    As[t + l * S] = A[ri[t] + l * m];
                    Bs[l + t * k] = B[l + cj[t] * k];
                }
            tcnla_ozaki_opts_t o = tcnla_ozaki_opts_default();
            o.mode = TCNLA_OZAKI_CR;
            o.scheme = TCNLA_OZAKI_SCHEME_1;
            tcnla_set_ozaki_opts(c, &o);
            if (tcnla_dgemm(c, TCNLA_GEMM_OZAKI_INT8, TCNLA_OP_N, TCNLA_OP_N, S, S, k, 1.0, As, S,
                            Bs, k, 0.0, R, S)) {
                fprintf(stderr, "reference failed\n");
                return 1;
            }
            /* the timed runs: each method's warm-up and reps in turn (its steady
             * state), or with --rounds in rounds that time every method once each
             * (round 0 the warm-up), so that the GPU's drift over the runs (clock,
             * temperature, power) reaches every method alike */
            double *ts = malloc(sizeof(double) * (size_t)nm * (size_t)(reps + 1));
            if (!ts) return 1;
            int bad[8] = {0}; /* (per method: at most 8) */
            _Static_assert(sizeof md / sizeof md[0] <= 8 && sizeof msg / sizeof msg[0] <= 8,
                           "bad[] holds every method");
            for (int it = 0; it < nm * (reps + 1); it++) {
                const int mi = rounds ? it % nm : it / (reps + 1);
                const int r = rounds ? it / nm : it % (reps + 1);
                const meth_t *M = &ms[mi];
                if (!wanted(only, M) || bad[mi]) continue;
                set_opts(g, M);
                cudaDeviceSynchronize();
                double t0 = bench_now();
                for (int q = 0; q < calls && !bad[mi]; q++)
                    bad[mi] = run_once(M, g, cb, m, n, k, dA, dB, dC, &info);
                cudaDeviceSynchronize(); /* (every stream, the handle's too: one wait for
                                            every method, so that they compare) */
                ts[(size_t)mi * (size_t)(reps + 1) + (size_t)r] = (bench_now() - t0) / calls;
            }
            for (int mi = 0; mi < nm; mi++) {
                const meth_t *M = &ms[mi];
                if (!wanted(only, M)) continue;
                const int cublas_row = M->kind == 0 || M->kind == 1 || M->kind == 3;
                const char *name = label && cublas_row ? label : M->name;
                /* the method's product (and info) once more, for its errors */
                if (!bad[mi]) {
                    set_opts(g, M);
                    bad[mi] = run_once(M, g, cb, m, n, k, dA, dB, dC, &info);
                    cudaDeviceSynchronize();
                }
                if (bad[mi]) {
                    printf("%-22s %-4s failed (%d)\n", name, M->mode, bad[mi]);
                    continue;
                }
                double *tm = ts + (size_t)mi * (size_t)(reps + 1);
                qsort(tm + 1, (size_t)reps, sizeof(double), cmp_d);
                double sec = tm[1 + reps / 2];
                tcnla_memcpy(g, C, dC, (single ? 4 : 8) * mn, TCNLA_MEMCPY_HANDLE_TO_HOST);
                for (int a = 0; a < S; a++)
                    for (int b = 0; b < S; b++) {
                        const size_t at = (size_t)ri[a] + (size_t)cj[b] * (size_t)m;
                        double r = R[a + b * S], x = single ? ((float *)C)[at] : C[at];
                        err[a + b * S] = r != 0 ? fabs(x - r) / fabs(r) : fabs(x);
                    }
                qsort(err, (size_t)S * S, sizeof(double), cmp_d);
                double emax = err[S * S - 1], emed = err[S * S / 2];
                double tf = 2.0 * (double)m * (double)n * (double)k / sec / 1e12;
                char sl[32] = "-";
                int dsl = 0;
                if (M->kind == 2 || M->kind == 4) {
                    dsl = info.ozaki_d;
                    if (info.method == TCNLA_GEMM_NATIVE_FP64 ||
                        info.method == TCNLA_GEMM_NATIVE_FP32)
                        snprintf(sl, sizeof sl, "native"), dsl = 0;
                }
                if (dsl > 0)
                    snprintf(sl, sizeof sl, "%d", dsl);
                printf("%-22s %-4s %5.1f %6lld %6lld %6lld %6s %10.4f %8.2f %10.3e %10.3e\n", name,
                       M->mode, phi, (long long)m, (long long)n, (long long)k, sl, sec, tf, emax,
                       emed);
                fflush(stdout);
                fprintf(f, "%s,%s%s,%s,%g,%lld,%lld,%lld,%s,%.6f,%.3f,%.3e,%.3e\n", gpu,
                        single ? "sgemm_" : "", name, M->mode, phi, (long long)m, (long long)n,
                        (long long)k, sl, sec, tf, emax, emed);
                fflush(f);
            }
            free(ts);
        }
        free(A), free(B), free(C), free(T), free(As), free(Bs), free(R), free(err), free(ri),
            free(cj);
        tcnla_free(g, dA), tcnla_free(g, dB), tcnla_free(g, dC);
    }
    fclose(f);
    cublasDestroy(cb);
    tcnla_destroy(g);
    tcnla_destroy(c);
    return 0;
}
#else
#include <stdio.h>
int main(void) {
    printf("bench_ozaki needs a CUDA build (make CUDA=1)\n");
    return 0;
}
#endif
