/* bench_proj_mantissa: [Ootomo & Yokota 2023] section 3.3 / Fig. 3, the accuracy of the
 * random projection ||A - Q Q^T A||_F when the Gaussian random matrix is
 * rounded to a short mantissa.
 *
 * As the paper: the two FP32 test matrices of Connolly, Higham and Pranesh
 * (its reference [9]), n x n,
 *   type 1  A = D + (xi / n) G G^T, D = diag(I_r, 0), G Gaussian n x n
 *           (the paper prints xi / epsilon; this is the "low rank + noise"
 *           matrix of Tropp et al., whose scaling is xi / n), xi = 1e-4;
 *   type 2  A = U D V^T, D = diag(phi I_r, 2^-alpha, 3^-alpha, ...,
 *           (n - r + 1)^-alpha), U, V Haar orthogonal (QR of a Gaussian
 *           matrix, signs fixed by diag(R) > 0), phi = 1e6, alpha = 3;
 * both built in FP64 and rounded to FP32. The n x l Gaussian Omega is drawn
 * in FP32 (tcnla_random_fill, Philox) and rounded with RN to e8mY (the
 * exponent of FP32, Y fraction bits: app/analysis/exmy.c); then A and Omega
 * are widened to FP64 and the projection is computed in FP64 (tcnla_dgemm
 * NATIVE_FP64, LAPACK dgeqrf/dorgqr): Y = A Omega, Q = qr(Y),
 * E = A - Q (Q^T A), error = ||E||_F. For one seed the same FP32 Gaussians
 * are rounded to every Y, and the first l columns are used for each l, so
 * that differences between mantissa lengths are not sampling noise.
 *
 * Runs on the CPU (no GPU needed). Rows appended to the CSV:
 *   gpu,matrix,n,r,l,mantissa_bits,format,seed,abs_err,rel_err,norm_a
 * (gpu: the device of the handle, "CPU"; rel_err = abs_err / ||A||_F).
 *
 *   build/bench_proj_mantissa --help */
#include "tcnla.h"
#include "analysis/exmy.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "bench_proj_mantissa"
#include "bench_util.h"

void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *beta, double *c, const int *ldc);

#define MAXL 64

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory (%zu bytes)\n", BENCH_NAME, n);
        exit(1);
    }
    return p;
}

/* "a,b,c" -> up to MAXL integers in [lo, hi]; returns the count (exits on bad input). */
static int parse_ints(const char *opt, const char *s, int lo, int hi, int *out) {
    int cnt = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < lo || v > hi || cnt == MAXL || (*end && *end != ',')) {
            fprintf(stderr, "%s: %s: '%s' is not a list of integers in [%d, %d]\n", BENCH_NAME,
                    opt, s, lo, hi);
            exit(2);
        }
        out[cnt++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (!cnt) {
        fprintf(stderr, "%s: %s: empty list\n", BENCH_NAME, opt);
        exit(2);
    }
    return cnt;
}

/* The FP32 Gaussian matrix (rows x cols) of (seed, stream), widened to FP64. */
static void gaussian64(tcnla_handle_t h, uint64_t seed, uint64_t stream, int64_t rows,
                       int64_t cols, double *X) {
    float *f = xmalloc(sizeof(float) * (size_t)(rows * cols));
    CHK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, seed, stream, rows, cols, f,
                          rows), "tcnla_random_fill");
    for (int64_t i = 0; i < rows * cols; i++) X[i] = f[i];
    free(f);
}

/* X (m x n, m >= n) <- the Q of its QR factorization; with sign_fix, column j
 * is multiplied by sign(R_jj) (Q R with diag(R) > 0: Haar for Gaussian X). */
static void qr_q(int64_t m, int64_t n, double *X, int sign_fix) {
    int im = (int)m, in = (int)n, info = 0, lwork = -1;
    double wq;
    dgeqrf_(&im, &in, X, &im, NULL, &wq, &lwork, &info);
    lwork = (int)wq + 64 * in;
    double *tau = xmalloc(sizeof(double) * (size_t)(n + lwork));
    char *sgn = xmalloc((size_t)n);
    dgeqrf_(&im, &in, X, &im, tau, tau + n, &lwork, &info);
    CHK(info, "dgeqrf");
    for (int64_t j = 0; j < n; j++) sgn[j] = X[j + j * m] < 0;
    dorgqr_(&im, &in, &in, X, &im, tau, tau + n, &lwork, &info);
    CHK(info, "dorgqr");
    if (sign_fix)
        for (int64_t j = 0; j < n; j++)
            if (sgn[j])
                for (int64_t i = 0; i < m; i++) X[i + j * m] = -X[i + j * m];
    free(tau);
    free(sgn);
}

/* A (n x n) as FP32 values in FP64 storage. */
static void round_to_fp32(int64_t n, double *A) {
    for (int64_t i = 0; i < n * n; i++) A[i] = (double)(float)A[i];
}

static void make_type1(tcnla_handle_t h, int64_t n, int64_t r, double xi, double *A) {
    double *G = xmalloc(sizeof(double) * (size_t)(n * n));
    gaussian64(h, 2026, 1, n, n, G);
    const int in = (int)n;
    const double scale = xi / (double)n, zero = 0.0;
    dsyrk_("U", "N", &in, &in, &scale, G, &in, &zero, A, &in); /* (xi / n) G G^T */
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = j + 1; i < n; i++) A[i + j * n] = A[j + i * n];
    for (int64_t i = 0; i < r; i++) A[i + i * n] += 1.0;
    round_to_fp32(n, A);
    free(G);
}

static void make_type2(tcnla_handle_t h, int64_t n, int64_t r, double alpha, double phi,
                       double *A) {
    double *U = xmalloc(sizeof(double) * (size_t)(n * n));
    double *V = xmalloc(sizeof(double) * (size_t)(n * n));
    gaussian64(h, 2026, 2, n, n, U);
    gaussian64(h, 2026, 3, n, n, V);
    qr_q(n, n, U, 1);
    qr_q(n, n, V, 1);
    for (int64_t j = 0; j < n; j++) { /* U <- U D */
        const double d = j < r ? phi : pow((double)(j - r + 2), -alpha);
        for (int64_t i = 0; i < n; i++) U[i + j * n] *= d;
    }
    CHK(tcnla_dgemm(h, TCNLA_GEMM_NATIVE_FP64, TCNLA_OP_N, TCNLA_OP_T, n, n, n, 1.0, U, n, V, n,
                    0.0, A, n), "A = U D V^T");
    round_to_fp32(n, A);
    free(U);
    free(V);
}

static double fro(int64_t len, const double *x) {
    double s = 0;
    for (int64_t i = 0; i < len; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* ||A - Q Q^T A||_F with Q = qr(A Om), Om n x l; W (n x l), B (l x n), E (n x n) scratch. */
static double proj_error(tcnla_handle_t h, int64_t n, int64_t l, const double *A,
                         const double *Om, double *W, double *B, double *E) {
    const tcnla_gemm_method_t D = TCNLA_GEMM_NATIVE_FP64;
    CHK(tcnla_dgemm(h, D, TCNLA_OP_N, TCNLA_OP_N, n, l, n, 1.0, A, n, Om, n, 0.0, W, n), "A Om");
    qr_q(n, l, W, 0);
    CHK(tcnla_dgemm(h, D, TCNLA_OP_T, TCNLA_OP_N, l, n, n, 1.0, W, n, A, n, 0.0, B, l), "Q^T A");
    memcpy(E, A, sizeof(double) * (size_t)(n * n));
    CHK(tcnla_dgemm(h, D, TCNLA_OP_N, TCNLA_OP_N, n, n, l, -1.0, W, n, B, l, 1.0, E, n),
        "A - Q Q^T A");
    return fro(n * n, E);
}

static void usage(void) {
    printf("usage: bench_proj_mantissa [options]\n"
           "[Ootomo & Yokota 2023] Fig. 3: ||A - Q Q^T A||_F for Gaussian random matrices rounded (RN) to e8mY,\n"
           "the projection in FP64, for the type-1 and type-2 matrices of [Ootomo & Yokota 2023] section 3.3.\n"
           "  --n N            matrix size, as the paper [4096] (about 75 s on 2 cores)\n"
           "  --r R            rank parameter r of both matrices, as the paper [20]\n"
           "  --ls L1,L2,...   projection sizes l (columns of Omega) [10,20,25,30,40,60]\n"
           "  --mantissas Y,.. fraction bits Y of e8mY; 23 = FP32, no rounding (7: the\n"
           "                   precision of BF16, 10: FP16 / TF32) [0,1,2,3,4,5,7,10,16,23]\n"
           "  --seeds S        random matrices per point, seeds 1..S [3]\n"
           "  --matrices LIST  type1,type2 [type1,type2]\n"
           "  --xi X           type 1 noise level [1e-4]\n"
           "  --alpha A --phi P  type 2 decay and plateau [3 1e6]\n"
           "  --csv FILE       CSV to append to [bench/results/ootomo2023_fig3.csv]\n");
}

int main(int argc, char **argv) {
    int64_t n = 4096, r = 20;
    int ls[MAXL] = {10, 20, 25, 30, 40, 60}, nl = 6;
    int ys[MAXL] = {0, 1, 2, 3, 4, 5, 7, 10, 16, 23}, ny = 10, seeds = 3;
    double xi = 1e-4, alpha = 3, phi = 1e6;
    const char *csv = "bench/results/ootomo2023_fig3.csv", *mats = "type1,type2";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: unknown option or missing value: %s (see --help)\n", BENCH_NAME, a);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--n")) n = atoll(v);
        else if (!strcmp(a, "--r")) r = atoll(v);
        else if (!strcmp(a, "--ls")) nl = parse_ints(a, v, 1, 1 << 20, ls);
        else if (!strcmp(a, "--mantissas")) ny = parse_ints(a, v, 0, 23, ys);
        else if (!strcmp(a, "--seeds")) seeds = atoi(v);
        else if (!strcmp(a, "--matrices")) mats = v;
        else if (!strcmp(a, "--xi")) xi = atof(v);
        else if (!strcmp(a, "--alpha")) alpha = atof(v);
        else if (!strcmp(a, "--phi")) phi = atof(v);
        else if (!strcmp(a, "--csv")) csv = v;
        else {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", BENCH_NAME, a);
            return 2;
        }
    }
    int lmax = 0;
    for (int k = 0; k < nl; k++) lmax = ls[k] > lmax ? ls[k] : lmax;
    const int want1 = strstr(mats, "type1") != NULL, want2 = strstr(mats, "type2") != NULL;
    if (n < 2 || n > 32768 || r < 1 || r >= n || lmax > n || seeds < 1 || seeds > 100 ||
        !(want1 || want2) || !(xi > 0) || !(alpha > 0) || !(phi > 0)) {
        fprintf(stderr, "%s: bad sizes or parameters (see --help)\n", BENCH_NAME);
        return 2;
    }
    tcnla_handle_t h;
    CHK(tcnla_create(&h, TCNLA_BACKEND_CPU), "tcnla_create(CPU)");
    char dev[128] = "CPU";
    tcnla_device_name(h, dev, sizeof dev);
    FILE *out = fopen(csv, "a");
    if (!out) {
        fprintf(stderr, "%s: cannot open %s\n", BENCH_NAME, csv);
        return 1;
    }
    fseek(out, 0, SEEK_END);
    if (ftell(out) == 0)
        fprintf(out, "gpu,matrix,n,r,l,mantissa_bits,format,seed,abs_err,rel_err,norm_a\n");

    double *A = xmalloc(sizeof(double) * (size_t)(n * n));
    double *E = xmalloc(sizeof(double) * (size_t)(n * n));
    double *Om = xmalloc(sizeof(double) * (size_t)(n * lmax));
    double *W = xmalloc(sizeof(double) * (size_t)(n * lmax));
    double *B = xmalloc(sizeof(double) * (size_t)(n * lmax));
    float *G = xmalloc(sizeof(float) * (size_t)(n * lmax));
    printf("%s: n = %lld, r = %lld, l in {", BENCH_NAME, (long long)n, (long long)r);
    for (int k = 0; k < nl; k++) printf("%s%d", k ? "," : "", ls[k]);
    printf("}, %d mantissa lengths, %d seeds, projection in FP64 on the %s\n", ny, seeds, dev);
    for (int t = 1; t <= 2; t++) {
        if ((t == 1 && !want1) || (t == 2 && !want2)) continue;
        const char *name = t == 1 ? "type1" : "type2";
        double t0 = bench_now();
        if (t == 1) make_type1(h, n, r, xi, A);
        else make_type2(h, n, r, alpha, phi, A);
        const double na = fro(n * n, A);
        printf("%s: ||A||_F = %.6e (generated in %.1f s)\n", name, na, bench_now() - t0);
        printf("  %4s %6s", "l", "Y");
        for (int s = 1; s <= seeds; s++) printf("   seed %-2d abs err ", s);
        printf("\n");
        t0 = bench_now();
        for (int yi = 0; yi < ny; yi++) {
            tn_exmy fmt;
            CHK(tn_exmy_init(&fmt, 8, ys[yi], 0), "tn_exmy_init");
            char fname[32];
            tn_exmy_name(&fmt, fname, sizeof fname);
            for (int k = 0; k < nl; k++) {
                printf("  %4d %6s", ls[k], fname);
                for (int s = 1; s <= seeds; s++) {
                    CHK(tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, (uint64_t)s, 0, n,
                                          ls[k], G, n), "tcnla_random_fill");
                    for (int64_t i = 0; i < n * ls[k]; i++)
                        Om[i] = tn_exmy_round((double)G[i], &fmt, TN_EXMY_RN);
                    const double e = proj_error(h, n, ls[k], A, Om, W, B, E);
                    printf("   %.10e", e);
                    fprintf(out, "%s,%s,%lld,%lld,%d,%d,%s,%d,%.10e,%.10e,%.10e\n", dev, name,
                            (long long)n, (long long)r, ls[k], ys[yi], fname, s, e, e / na, na);
                }
                printf("\n");
                fflush(out);
            }
        }
        printf("  %s done in %.1f s\n", name, bench_now() - t0);
    }
    fclose(out);
    free(A), free(E), free(Om), free(W), free(B), free(G);
    tcnla_destroy(h);
    return 0;
}
