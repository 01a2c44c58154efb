#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util.h"

#include <math.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <ftw.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

double tu_rel_err(const float *C, int64_t ldc, const double *R, int64_t m, int64_t n) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double e = (double)C[i + j * ldc] - R[i + j * m];
            num += e * e;
            den += R[i + j * m] * R[i + j * m];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

void tu_ref_gemm(tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k, double alpha,
                 const float *A, int64_t lda, const float *B, int64_t ldb, double beta,
                 const float *C, int64_t ldc, double *R) {
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                double a = ta == TCNLA_OP_N ? A[i + p * lda] : A[p + i * lda];
                double b = tb == TCNLA_OP_N ? B[p + j * ldb] : B[j + p * ldb];
                s += a * b;
            }
            R[i + j * m] = alpha * s + (beta != 0 ? beta * (double)C[i + j * ldc] : 0.0);
        }
}

int tu_method_err(tcnla_handle_t h, tcnla_gemm_method_t method, int64_t m, int64_t n, int64_t k,
                  const float *A, const float *B, double *err, double *err_native,
                  tcnla_info_t *info) {
    float *C = malloc(sizeof(float) * (size_t)(m * n));
    double *R = malloc(sizeof(double) * (size_t)(m * n));
    tu_ref_gemm(TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, NULL, m, R);
    int st = tcnla_sgemm_ex(h, method, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C,
                            m, info);
    if (st == 0) *err = tu_rel_err(C, m, R, m, n);
    if (st == 0 && err_native) {
        st = tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.0f, A, m, B,
                         k, 0.0f, C, m);
        *err_native = tu_rel_err(C, m, R, m, n);
    }
    free(C);
    free(R);
    return st;
}

const char *tu_bin(void) {
    const char *b = getenv("TCNLA_BIN");
    return b ? b : "./build/tcnla";
}

int tu_have_bin(void) {
    FILE *f = fopen(tu_bin(), "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}

int tu_run(const char *args, char *out, size_t len) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", tu_bin(), args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, len - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

double tu_orth_defect(const float *Q, int m, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < m; p++) s += (double)Q[p + i * m] * Q[p + j * m];
            worst = fmax(worst, fabs(s - (i == j)));
        }
    return worst;
}

static char tmp_root[512];

/* TMPDIR when it names a writable directory by a short path of characters
 * that a shell takes as one word (the tests put paths into command lines). */
static const char *tmp_base(void) {
    const char *t = getenv("TMPDIR");
    if (!t || !*t || strlen(t) > 200 || strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                 "0123456789/._+-") != strlen(t) ||
        access(t, W_OK | X_OK) != 0)
        return "/tmp";
    return t;
}

const char *tu_tmp_root(void) {
    if (tmp_root[0]) return tmp_root;
    const char *base = tmp_base();
    size_t b = strlen(base);
    while (b > 1 && base[b - 1] == '/') b--;
    snprintf(tmp_root, sizeof tmp_root, "%.*s/tcnla_tests_XXXXXX", (int)b, base);
    if (!mkdtemp(tmp_root)) {
        fprintf(stderr, "tests: mkdtemp %s failed\n", tmp_root);
        tmp_root[0] = 0;
        return NULL;
    }
    setenv("TMPDIR", tmp_root, 1);
    atexit(tu_tmp_cleanup);
    return tmp_root;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void tu_tmp_cleanup(void) {
    if (!tmp_root[0]) return;
    nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tmp_root[0] = 0;
}

const char *tu_tmppath(const char *name) {
    static char p[1024];
    const char *r = tu_tmp_root();
    snprintf(p, sizeof p, "%s/%s", r ? r : "/nonexistent", name);
    return p;
}

char *tu_tmp_dir(char *buf, size_t n, const char *tag) {
    const char *r = tu_tmp_root();
    if (!r) return NULL;
    if ((size_t)snprintf(buf, n, "%s/%s_XXXXXX", r, tag) >= n) {
        fprintf(stderr, "tests: temporary path %s/%s_XXXXXX longer than the test's %zu bytes "
                "(a shorter TMPDIR helps)\n", r, tag, n);
        return NULL;
    }
    return mkdtemp(buf);
}

void tu_rm_dir(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[4096];
    if (!d) return;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p)) rmdir(p);
        }
    closedir(d);
    rmdir(dir);
}

double tu_jnum(const char *json, const char *key) {
    char k[128];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(json, k);
    if (!p) return NAN;
    p += strlen(k);
    char *end;
    double v = strtod(p, &end);
    return end == p ? NAN : v;
}

static void (*run_fn)(tu_rank_job *);
static void *rank_main(void *p) {
    run_fn((tu_rank_job *)p);
    return NULL;
}

int tu_run_ranks(tcnla_backend_t backend, int P, void (*fn)(tu_rank_job *), void *ctx,
                 tu_rank_job *jobs) {
    tcnla_handle_t hs[TU_MAX_RANKS] = {0};
    tcnla_comm_t cs[TU_MAX_RANKS] = {0};
    int st = P >= 1 && P <= TU_MAX_RANKS ? 0 : -2;
    for (int r = 0; r < P && !st; r++)
        st = backend == TCNLA_BACKEND_CPU ? tcnla_create(&hs[r], TCNLA_BACKEND_CPU)
                                          : tcnla_create_on_device(&hs[r], backend, r);
    if (!st) st = tcnla_comm_create_local(cs, hs, P);
    if (!st) {
        pthread_t th[TU_MAX_RANKS];
        run_fn = fn;
        for (int r = 0; r < P; r++) {
            jobs[r].rank = r, jobs[r].nranks = P, jobs[r].comm = cs[r], jobs[r].h = hs[r];
            jobs[r].ctx = ctx, jobs[r].status = 12345;
            pthread_create(&th[r], NULL, rank_main, &jobs[r]);
        }
        for (int r = 0; r < P; r++) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 120;
            if (pthread_timedjoin_np(th[r], NULL, &ts) != 0) {
                fprintf(stderr, "rank %d of %d did not return in 120 s (a hang)\n", r, P);
                fflush(stderr);
                _exit(3);
            }
        }
    }
    for (int r = 0; r < P; r++) {
        tcnla_comm_destroy(cs[r]);
        tcnla_destroy(hs[r]);
    }
    return st;
}

float *tu_rows_of(const float *G, int64_t m, int64_t cols, int64_t r0, int64_t mr) {
    float *B = malloc(sizeof(float) * (size_t)(mr * cols > 0 ? mr * cols : 1));
    for (int64_t q = 0; B && q < cols; q++)
        memcpy(B + q * mr, G + r0 + q * m, sizeof(float) * (size_t)mr);
    return B;
}

void tu_put_rows(float *G, int64_t m, int64_t cols, int64_t r0, int64_t mr, const float *B) {
    for (int64_t q = 0; q < cols; q++)
        memcpy(G + r0 + q * m, B + q * mr, sizeof(float) * (size_t)mr);
}
