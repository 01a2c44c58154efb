/* The tcnla command over several ranks (CPU ranks in one process): the
 * same results for 1, 2 and 3 ranks on the generated matrix (whose row
 * chunks straddle the ranks' blocks), a .npy read by rows and the factors
 * written by rows (C and Fortran order files), against the single-rank
 * command; and the bad inputs: rank counts, GPUs that are not there, files
 * that cannot be read by rows, an MPI launch without an MPI library. */
#include "test.h"
#include "util.h"
#include "io/io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[1 << 16];

/* `ENV tcnla ARGS` (stdout and stderr into buf) under a time limit: no
 * rank may wait for ever. Exit status, -1 on a signal. */
static int run_env(const char *env, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s timeout 300 %s %s 2>&1", env ? env : "", tu_bin(), args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static float *load(const char *path, int64_t *r, int64_t *c) {
    tn_matrix m;
    if (tn_io_read_npy(path, TN_IO_AS_FLOAT, 0, &m, NULL, 0)) return NULL;
    *r = m.rows, *c = m.cols;
    return m.data;
}

/* The largest |a - s b| over columns (s = the sign that matches column j
 * best), relative to the largest |b| (singular vectors have a sign each). */
static double col_sign_diff(const float *a, const float *b, int64_t m, int64_t k) {
    double worst = 0, big = 0;
    for (int64_t j = 0; j < k; j++) {
        double dot = 0;
        for (int64_t i = 0; i < m; i++) dot += (double)a[i + j * m] * b[i + j * m];
        const double s = dot < 0 ? -1 : 1;
        for (int64_t i = 0; i < m; i++) {
            worst = fmax(worst, fabs(a[i + j * m] - s * b[i + j * m]));
            big = fmax(big, fabs(b[i + j * m]));
        }
    }
    return big > 0 ? worst / big : worst;
}

/* ||A - U diag(S) VT||_F / ||A||_F in double (A m x n, U m x k, VT k x n). */
static double resid(const float *A, int64_t m, int64_t n, const float *U, const float *S,
                    const float *VT, int64_t k) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) s += (double)U[i + p * m] * (S ? S[p] : 1.0) * VT[p + j * k];
            const double e = A[i + j * m] - s;
            num += e * e;
            den += (double)A[i + j * m] * A[i + j * m];
        }
    return sqrt(num / den);
}

/* ------------------------------------------------ the generated matrix */

TEST(cli_dist_rsvd_ranks_agree_on_generated) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[128], args[1024], p[256];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "dist"));
    /* m = 9000: chunks [0, 4096) [4096, 8192) [8192, 9000) of the generator, the
     * second split between the ranks for P = 2 and 3 */
    const int64_t m = 9000, n = 200, k = 10;
    double res[4] = {0}, opt[4] = {0};
    float *U[4] = {0}, *S[4] = {0}, *VT[4] = {0};
    for (int P = 1; P <= 3; P++) {
        snprintf(args, sizeof args, "rsvd --backend cpu --ranks %d --m %lld --n %lld --rank %lld "
                 "--seed 5 --json --output %s/g%d", P, (long long)m, (long long)n, (long long)k,
                 dir, P);
        int st = run_env(NULL, args);
        CHECK_MSG(st == 0, "--ranks %d: exit %d: %s", P, st, buf);
        if (st) continue;
        res[P] = tu_jnum(buf, "rel_residual"), opt[P] = tu_jnum(buf, "optimal");
        CHECK_MSG(tu_jnum(buf, "ranks") == P && strstr(buf, "\"steps\":{\"random\""),
                  "--ranks %d: %s", P, buf);
        int64_t r = 0, c = 0;
        snprintf(p, sizeof p, "%s/g%d_U.npy", dir, P);
        U[P] = load(p, &r, &c);
        CHECK_MSG(U[P] && r == m && c == k, "%s: %lld x %lld", p, (long long)r, (long long)c);
        snprintf(p, sizeof p, "%s/g%d_S.npy", dir, P);
        S[P] = load(p, &r, &c);
        snprintf(p, sizeof p, "%s/g%d_VT.npy", dir, P);
        VT[P] = load(p, &r, &c);
        CHECK(S[P] && VT[P] && r == k && c == n);
    }
    for (int P = 1; P <= 3; P++) {
        if (!U[P] || !S[P] || !VT[P]) continue;
        /* the method's residual on this spectrum: the optimum (ratio 1.0000 measured) */
        CHECK_MSG(res[P] > 0 && res[P] <= 1.01 * opt[P], "P = %d: residual %.6e, optimal %.6e",
                  P, res[P], opt[P]);
        CHECK_MSG(fabs(res[P] - res[1]) <= 1e-6 * res[1], "P = %d: residual %.9e vs %.9e", P,
                  res[P], res[1]);
        for (int64_t i = 0; i < k; i++)
            CHECK_MSG(fabs(S[P][i] - S[1][i]) <= 1e-6 * S[1][i], "P = %d: s_%lld %.9g vs %.9g",
                      P, (long long)i, S[P][i], S[1][i]);
        /* U's rows: the generator's chunks and the file's rows in place for every P */
        const double du = col_sign_diff(U[P], U[1], m, k);
        CHECK_MSG(du <= 1e-4, "P = %d: U differs from P = 1's by %.3e", P, du);
        double dv = 0; /* VT's rows, each with its sign */
        for (int64_t q = 0; q < k * n; q++) dv = fmax(dv, fabs(fabs(VT[P][q]) - fabs(VT[1][q])));
        CHECK_MSG(dv <= 1e-4, "P = %d: |VT| differs by %.3e", P, dv);
        /* U assembled from the file is orthonormal */
        double defect = tu_orth_defect(U[P], (int)m, (int)k);
        CHECK_MSG(defect <= 1e-5, "P = %d: U^T U - I = %.3e", P, defect);
    }
    for (int P = 1; P <= 3; P++) free(U[P]), free(S[P]), free(VT[P]);
    tu_rm_dir(dir);
}

TEST(cli_dist_lra_ranks_agree_on_generated) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    double err[4] = {0}, opt[4] = {0};
    char args[512];
    for (int P = 1; P <= 3; P += 2) {
        snprintf(args, sizeof args, "lra --backend cpu --ranks %d --m 600 --n 200 --rank 10 "
                 "--gen-rank 60 --spectrum linear --json", P);
        int st = run_env(NULL, args);
        CHECK_MSG(st == 0, "--ranks %d: exit %d: %s", P, st, buf);
        err[P] = tu_jnum(buf, "rel_error"), opt[P] = tu_jnum(buf, "optimal");
        CHECK_MSG(tu_jnum(buf, "out_rank") == 30, "%s", buf);
    }
    /* rank 30 (refined) of a linear spectrum: near the optimum (ratio 1.06 measured) */
    CHECK_MSG(err[1] >= opt[1] * (1 - 1e-6) && err[1] <= 1.25 * opt[1], "error %.6e, optimal %.6e",
              err[1], opt[1]);
    CHECK_MSG(fabs(err[3] - err[1]) <= 1e-5 * err[1], "rel_error %.9e vs %.9e", err[3], err[1]);
}

/* ------------------------------------------------ a file read by rows */

/* A float64 (C order) or float32 (Fortran order) m x n file with singular
 * values 2^(-i/2): a Gaussian's orthonormalized columns, written by numpy's
 * rules through tn_io_write_npy. */
static int write_test_matrix(const char *path, int64_t m, int64_t n, int c_order, float **A_out) {
    const int64_t r = 40;
    float *G = malloc(sizeof(float) * (size_t)(m * r)), *H = malloc(sizeof(float) * (size_t)(n * r));
    double *A = calloc((size_t)(m * n), sizeof(double));
    if (!G || !H || !A) return -1;
    tcnla_rand_normal(7, 1, 0.0f, 1.0f, m * r, G);
    tcnla_rand_normal(7, 2, 0.0f, 1.0f, n * r, H);
    /* Gram-Schmidt twice in double on both, then A = G diag(s) H^T */
    float *Ms[2] = {G, H};
    const int64_t rows[2] = {m, n};
    for (int w = 0; w < 2; w++)
        for (int pass = 0; pass < 2; pass++)
            for (int64_t j = 0; j < r; j++) {
                float *X = Ms[w];
                const int64_t R = rows[w];
                for (int64_t q = 0; q < j; q++) {
                    double d = 0;
                    for (int64_t i = 0; i < R; i++) d += (double)X[i + q * R] * X[i + j * R];
                    for (int64_t i = 0; i < R; i++) X[i + j * R] = (float)(X[i + j * R] - d * X[i + q * R]);
                }
                double nn = 0;
                for (int64_t i = 0; i < R; i++) nn += (double)X[i + j * R] * X[i + j * R];
                for (int64_t i = 0; i < R; i++) X[i + j * R] = (float)(X[i + j * R] / sqrt(nn));
            }
    for (int64_t p = 0; p < r; p++) {
        const double s = pow(2.0, -0.5 * (double)p);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) A[i + j * m] += s * G[i + p * m] * H[j + p * n];
    }
    float *Af = malloc(sizeof(float) * (size_t)(m * n));
    for (int64_t q = 0; q < m * n; q++) Af[q] = (float)A[q];
    tn_matrix mat = {m, n, c_order ? 1 : 0, 0, NULL};
    mat.data = c_order ? (void *)A : (void *)Af;
    int st = tn_io_write_npy(path, &mat, c_order ? TN_IO_NPY_C_ORDER : 0u, NULL, 0);
    free(G), free(H), free(A);
    *A_out = Af;
    return st;
}

TEST(cli_dist_npy_rows_in_and_out) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[128], in[256], args[1024], p[300];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "distio"));
    const int64_t m = 401, n = 150, k = 8;
    for (int c_order = 0; c_order < 2; c_order++) {
        float *A = NULL;
        snprintf(in, sizeof in, "%s/a%d.npy", dir, c_order);
        REQUIRE(write_test_matrix(in, m, n, c_order, &A) == 0);
        /* the single-rank command on the same file */
        snprintf(args, sizeof args, "rsvd --backend cpu --input %s --rank %lld --no-baseline "
                 "--json --output %s/s%d", in, (long long)k, dir, c_order);
        int st = run_env(NULL, args);
        CHECK_MSG(st == 0, "single rank: exit %d: %s", st, buf);
        const double res1 = tu_jnum(buf, "rel_residual");
        int64_t r = 0, c = 0;
        snprintf(p, sizeof p, "%s/s%d_S.npy", dir, c_order);
        float *S1 = load(p, &r, &c);
        snprintf(p, sizeof p, "%s/s%d_U.npy", dir, c_order);
        float *U1 = load(p, &r, &c);
        for (int P = 2; P <= 3; P++) {
            snprintf(args, sizeof args, "rsvd --backend cpu --ranks %d --input %s --rank %lld "
                     "--json --output %s/d%d_%d", P, in, (long long)k, dir, c_order, P);
            st = run_env(NULL, args);
            CHECK_MSG(st == 0, "--ranks %d: exit %d: %s", P, st, buf);
            if (st) continue;
            const double res = tu_jnum(buf, "rel_residual");
            CHECK_MSG(fabs(res - res1) <= 1e-6 * res1, "%s P = %d: residual %.9e vs %.9e",
                      c_order ? "C order" : "Fortran", P, res, res1);
            float *U, *S, *VT;
            snprintf(p, sizeof p, "%s/d%d_%d_U.npy", dir, c_order, P);
            U = load(p, &r, &c);
            CHECK(U && r == m && c == k);
            snprintf(p, sizeof p, "%s/d%d_%d_S.npy", dir, c_order, P);
            S = load(p, &r, &c);
            snprintf(p, sizeof p, "%s/d%d_%d_VT.npy", dir, c_order, P);
            VT = load(p, &r, &c);
            CHECK(S && VT && r == k && c == n);
            if (U && S && VT && S1 && U1) {
                /* the files' factors give the residual the command printed */
                const double rf = resid(A, m, n, U, S, VT, k);
                CHECK_MSG(fabs(rf - res) <= 1e-4 * res, "P = %d: the files' residual %.6e, "
                          "printed %.6e", P, rf, res);
                for (int64_t i = 0; i < k; i++)
                    CHECK_MSG(fabs(S[i] - S1[i]) <= 1e-6 * S1[i], "P = %d: s_%lld %.9g vs %.9g",
                              P, (long long)i, S[i], S1[i]);
                const double du = col_sign_diff(U, U1, m, k);
                CHECK_MSG(du <= 1e-3, "P = %d: U differs from the single rank's by %.3e", P, du);
            }
            free(U), free(S), free(VT);
        }
        /* lra: X by rows, Y once */
        snprintf(args, sizeof args, "lra --backend cpu --ranks 3 --input %s --rank %lld --json "
                 "--output %s/x%d", in, (long long)k, dir, c_order);
        st = run_env(NULL, args);
        CHECK_MSG(st == 0, "lra --ranks 3: exit %d: %s", st, buf);
        if (!st) {
            const double e = tu_jnum(buf, "rel_error");
            float *X, *Y;
            snprintf(p, sizeof p, "%s/x%d_X.npy", dir, c_order);
            X = load(p, &r, &c);
            CHECK(X && r == m && c == 3 * k);
            snprintf(p, sizeof p, "%s/x%d_Y.npy", dir, c_order);
            Y = load(p, &r, &c);
            CHECK(Y && r == n && c == 3 * k);
            if (X && Y) {
                float *YT = malloc(sizeof(float) * (size_t)(3 * k * n));
                for (int64_t j = 0; j < n; j++)
                    for (int64_t q = 0; q < 3 * k; q++) YT[q + j * 3 * k] = Y[j + q * n];
                const double ef = resid(A, m, n, X, NULL, YT, 3 * k);
                CHECK_MSG(fabs(ef - e) <= 1e-3 * e, "lra: the files' error %.6e, printed %.6e",
                          ef, e);
                free(YT);
            }
            free(X), free(Y);
        }
        free(S1), free(U1), free(A);
    }
    /* a C-order file read by blocks of 1024 whole rows: 1250 rows a rank */
    {
        float *A = NULL;
        snprintf(in, sizeof in, "%s/tall.npy", dir);
        REQUIRE(write_test_matrix(in, 2500, 60, 1, &A) == 0);
        snprintf(args, sizeof args, "rsvd --backend cpu --input %s --rank 6 --no-baseline --json",
                 in);
        int st = run_env(NULL, args);
        const double res1 = tu_jnum(buf, "rel_residual");
        CHECK_MSG(st == 0 && res1 > 0, "tall, single rank: exit %d: %s", st, buf);
        snprintf(args, sizeof args, "rsvd --backend cpu --ranks 2 --input %s --rank 6 --json "
                 "--output %s/tall", in, dir);
        st = run_env(NULL, args);
        const double res = tu_jnum(buf, "rel_residual");
        CHECK_MSG(st == 0 && fabs(res - res1) <= 1e-6 * res1, "tall, 2 ranks: exit %d: %.9e vs "
                  "%.9e: %s", st, res, res1, buf);
        int64_t r = 0, c = 0;
        float *U, *S, *VT;
        snprintf(p, sizeof p, "%s/tall_U.npy", dir);
        U = load(p, &r, &c);
        snprintf(p, sizeof p, "%s/tall_S.npy", dir);
        S = load(p, &r, &c);
        snprintf(p, sizeof p, "%s/tall_VT.npy", dir);
        VT = load(p, &r, &c);
        CHECK(U && S && VT);
        if (U && S && VT) {
            const double rf = resid(A, 2500, 60, U, S, VT, 6);
            CHECK_MSG(fabs(rf - res) <= 1e-4 * res, "tall: the files' residual %.6e, printed "
                      "%.6e", rf, res);
        }
        free(U), free(S), free(VT), free(A);
    }
    /* no temporary files left behind */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c '^\\.tcnla-' ", dir);
    FILE *f = popen(cmd, "r");
    int left = -1;
    if (f) {
        if (fscanf(f, "%d", &left) != 1) left = -1;
        pclose(f);
    }
    CHECK_MSG(left == 0, "%d temporary files left in %s", left, dir);
    tu_rm_dir(dir);
}

/* ------------------------------------------------ bad inputs */

TEST(cli_dist_bad_inputs) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[128], p[300], args[1024];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "distbad"));
    const char *B = "--backend cpu --m 300 --n 200 --rank 10";
    int compiled = 0, gpus = 0;
    tcnla_cuda_available(&compiled, &gpus);
    struct {
        const char *args;
        int status;
        const char *says;
    } cases[] = {
        {"--ranks 0", 2, "--ranks: '0' is not an integer"},
        {"--ranks 301", 2, "301 ranks for 300 rows"},
        {"--ranks -2", 2, "--ranks"},
        {"--ranks two", 2, "--ranks"},
        {"--gpus 2 --backend cpu", 2, "--gpus runs on the CUDA backend"},
        {"--gen-rank 50", 2, "--gen-rank sets the rank of the distributed generator"},
        {"--ranks 2 --gen-rank 201", 2, "--gen-rank 201 exceeds min(m, n) = 200"},
        {"--ranks 2 --rank 195", 1, "rank + oversampling = 205 exceeds"},
        {"--ranks 2 --orth householder", 2, "over several ranks the bases are orthonormalized"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(args, sizeof args, "rsvd %s %s", B, cases[i].args);
        int st = run_env(NULL, args);
        CHECK_MSG(st == cases[i].status && strstr(buf, cases[i].says),
                  "%s: exit %d: %s", args, st, buf);
    }
    /* more GPUs than there are */
    snprintf(args, sizeof args, "rsvd --m 300 --n 200 --rank 10 --gpus %d", gpus + 1);
    int st = run_env(NULL, args);
    CHECK_MSG(st == 1 && strstr(buf, "GPU") && strstr(buf, "--gpus"), "%s: exit %d: %s", args, st,
              buf);
    snprintf(args, sizeof args, "lra --m 300 --n 200 --rank 10 --gpus %d", gpus + 1);
    st = run_env(NULL, args);
    CHECK_MSG(st == 1 && strstr(buf, "GPU"), "%s: exit %d: %s", args, st, buf);
    st = run_env(NULL, "lra --backend cpu --ranks 2 --m 300 --n 200 --rank 10 --noise 0.1");
    CHECK_MSG(st == 2 && strstr(buf, "--noise describes the single-rank generator"), "exit %d: %s",
              st, buf);

    /* files the ranks cannot read by rows */
    struct {
        const char *name, *bytes;
        size_t len;
        const char *says;
    } files[] = {
        {"trunc.npy", "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': True, "
                      "'shape': (300, 200), }", 0, "truncated"},
        {"garbage.npy", "not a numpy file at all", 0, "not a .npy file"},
        {"m.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 0,
         "over several ranks the input is a .npy file"},
        {"empty.npy", "", 0, "empty file"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i].name);
        FILE *f = fopen(p, "wb");
        REQUIRE(f);
        fwrite(files[i].bytes, 1, strlen(files[i].bytes), f);
        fclose(f);
        snprintf(args, sizeof args, "rsvd --backend cpu --ranks 3 --rank 2 --input %s", p);
        st = run_env(NULL, args);
        CHECK_MSG(st == 1 && strstr(buf, files[i].says), "%s: exit %d: %s", files[i].name, st,
                  buf);
    }
    /* a FIFO: refused before it is opened (no rank waits for a writer) */
    snprintf(p, sizeof p, "%s/fifo.npy", dir);
    REQUIRE(mkfifo(p, 0600) == 0);
    snprintf(args, sizeof args, "rsvd --backend cpu --ranks 2 --rank 2 --input %s", p);
    st = run_env(NULL, args);
    CHECK_MSG(st == 1 && strstr(buf, "not a regular file"), "FIFO: exit %d: %s", st, buf);
    /* NaN and float64 outside float32, found by the rank that owns the row */
    {
        const int64_t m = 60, n = 20;
        tn_matrix mat = {m, n, 1, 0, NULL};
        double *d = malloc(sizeof(double) * (size_t)(m * n));
        for (int64_t q = 0; q < m * n; q++) d[q] = 1.0 + (double)(q % 7);
        mat.data = d;
        d[47 + 3 * m] = NAN; /* row 47: the last rank's (3 ranks of 20 rows) */
        snprintf(p, sizeof p, "%s/nan.npy", dir);
        REQUIRE(tn_io_write_npy(p, &mat, TN_IO_NPY_C_ORDER, NULL, 0) == 0);
        snprintf(args, sizeof args, "rsvd --backend cpu --ranks 3 --rank 2 --input %s", p);
        st = run_env(NULL, args);
        CHECK_MSG(st == 1 && strstr(buf, "NaN or Inf (element [47, 3]"), "NaN: exit %d: %s", st,
                  buf);
        /* in two ranks' rows: one message, the first rank's */
        d[25 + 1 * m] = INFINITY;
        REQUIRE(tn_io_write_npy(p, &mat, 0u, NULL, 0) == 0);
        st = run_env(NULL, args);
        CHECK_MSG(st == 1 && strstr(buf, "(element [25, 1] = inf)") && !strstr(buf, "[47, 3]") &&
                      !strchr(strchr(buf, '\n') + 1, '\n'),
                  "NaN and Inf: exit %d: %s", st, buf);
        d[47 + 3 * m] = 1.0, d[25 + 1 * m] = 1.0;
        d[25 + 9 * m] = 1e300;
        snprintf(p, sizeof p, "%s/big.npy", dir);
        REQUIRE(tn_io_write_npy(p, &mat, 0u, NULL, 0) == 0);
        snprintf(args, sizeof args, "lra --backend cpu --ranks 3 --rank 2 --input %s", p);
        st = run_env(NULL, args);
        CHECK_MSG(st == 1 && strstr(buf, "[25, 9]") && strstr(buf, "float32"),
                  "1e300: exit %d: %s", st, buf);
        free(d);
    }
    /* --output into a directory that does not exist: nothing computed */
    snprintf(args, sizeof args, "rsvd %s --ranks 2 --output %s/no/such/dir/x", B, dir);
    st = run_env(NULL, args);
    CHECK_MSG(st == 1 && strstr(buf, "--output"), "output: exit %d: %s", st, buf);

    /* under an MPI launcher */
    st = run_env("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0 "
                 "TCNLA_MPI_LIBRARY=/nonexistent/libmpi.so.40",
                 "rsvd --m 300 --n 200 --rank 10");
    CHECK_MSG(st == 1 && strstr(buf, "cannot load the MPI library") &&
                  strstr(buf, "/nonexistent/libmpi.so.40"),
              "no MPI library: exit %d: %s", st, buf);
    st = run_env("PMI_SIZE=2 PMI_RANK=1 TCNLA_MPI_LIBRARY=libm.so.6",
                 "lra --m 300 --n 200 --rank 10");
    CHECK_MSG(st == 1 && strstr(buf, "is not an MPI library"), "libm: exit %d: %s", st, buf);
    st = run_env("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=7", "rsvd --m 300 --n 200");
    CHECK_MSG(st == 2 && strstr(buf, "OMPI_COMM_WORLD_RANK=7"), "bad rank: exit %d: %s", st, buf);
    st = run_env("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1",
                 "rsvd --backend cpu --ranks 2 --m 300 --n 200 --rank 10");
    CHECK_MSG(st == 2 && strstr(buf, "give either"), "--ranks under mpirun: exit %d: %s", st, buf);
    /* a world of one: the single-rank command */
    st = run_env("OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0",
                 "rsvd --backend cpu --m 300 --n 200 --rank 10 --no-baseline --json");
    CHECK_MSG(st == 0 && tu_jnum(buf, "rel_residual") > 0, "world of one: exit %d: %s", st, buf);
    tu_rm_dir(dir);
}

/* ------------------------------------------------ the readers by rows */

TEST(npy_rows_readers_layout_blocks_and_bad_arguments) {
    char dir[128], pf[256], pc[256], err[2048];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "npyrows"));
    const int64_t m = 7, n = 5;
    double v[35];
    for (int64_t q = 0; q < m * n; q++) v[q] = (double)q + 0.25; /* column-major: A[i, j] = i + 7 j + .25 */
    tn_matrix mat = {m, n, 1, 0, v};
    snprintf(pf, sizeof pf, "%s/f.npy", dir);
    snprintf(pc, sizeof pc, "%s/c.npy", dir);
    REQUIRE(tn_io_write_npy(pf, &mat, 0u, NULL, 0) == 0);
    REQUIRE(tn_io_write_npy(pc, &mat, TN_IO_NPY_C_ORDER, NULL, 0) == 0);
    tn_npy_layout lf, lc;
    REQUIRE(tn_io_npy_layout(pf, &lf, err, sizeof err) == 0);
    REQUIRE(tn_io_npy_layout(pc, &lc, err, sizeof err) == 0);
    CHECK(lf.rows == m && lf.cols == n && lf.itemsize == 8 && lf.fortran == 1);
    CHECK(lc.rows == m && lc.cols == n && lc.fortran == 0 && lc.data_offset == lf.data_offset);
    /* a block of either order: rows 2..5, columns 1..3 */
    float blk[4 * 3], rows[5 * 3];
    for (int k = 0; k < 2; k++) {
        memset(blk, 0, sizeof blk);
        CHECK(tn_io_npy_read_block(k ? pc : pf, k ? &lc : &lf, 2, 4, 1, 3, blk, 4, NULL, err,
                                   sizeof err) == 0);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 4; i++)
                CHECK_MSG(blk[i + 4 * j] == (float)(2 + i + 7 * (1 + j) + 0.25),
                          "order %d [%d, %d] = %g", k, i, j, blk[i + 4 * j]);
    }
    /* whole rows 4..6 of the C-order file, each row contiguous */
    CHECK(tn_io_npy_read_rows_c(pc, &lc, 4, 3, rows, NULL, err, sizeof err) == 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            CHECK(rows[j + 5 * i] == (float)(4 + i + 7 * j + 0.25));
    /* the header the writer writes */
    unsigned char h[TN_IO_NPY_HEADER_MAX], f[TN_IO_NPY_HEADER_MAX];
    tn_matrix fm = {m, n, 0, 0, blk};
    float fv[35] = {0};
    fm.data = fv;
    const size_t hn = tn_io_npy_header(h, sizeof h, m, n, 0);
    snprintf(pf, sizeof pf, "%s/w.npy", dir);
    REQUIRE(tn_io_write_npy(pf, &fm, 0u, NULL, 0) == 0);
    FILE *fp = fopen(pf, "rb");
    REQUIRE(fp);
    const size_t got = fread(f, 1, hn, fp);
    fclose(fp);
    CHECK(hn > 0 && hn % 64 == 0 && got == hn && !memcmp(h, f, hn));
    CHECK(tn_io_npy_header(h, 8, m, n, 0) == 0 && tn_io_npy_header(h, sizeof h, -1, n, 0) == 0);
    /* bad arguments: outside the matrix, NULL, the wrong order */
    CHECK(tn_io_npy_read_block(pc, &lc, 5, 3, 0, 1, blk, 4, NULL, err, sizeof err) ==
          TN_IO_ERR_ARG);
    CHECK(tn_io_npy_read_block(pc, &lc, 0, 2, 4, 2, blk, 4, NULL, err, sizeof err) ==
          TN_IO_ERR_ARG);
    CHECK(tn_io_npy_read_block(pc, &lc, 0, 4, 0, 1, blk, 3, NULL, err, sizeof err) ==
          TN_IO_ERR_ARG); /* ld < rows */
    CHECK(tn_io_npy_read_block(pc, &lc, 0, 1, 0, 1, NULL, 1, NULL, err, sizeof err) ==
          TN_IO_ERR_ARG);
    CHECK(tn_io_npy_read_block(pc, &lc, -1, 1, 0, 1, blk, 1, NULL, err, sizeof err) ==
          TN_IO_ERR_ARG);
    CHECK(tn_io_npy_read_rows_c(pc, &lf, 0, 1, rows, NULL, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_npy_read_rows_c(pc, &lc, 6, 2, rows, NULL, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_npy_read_rows_c(pc, &lc, 0, 1, NULL, NULL, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_npy_layout(NULL, &lc, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_npy_layout(pc, NULL, err, sizeof err) == TN_IO_ERR_ARG);
    snprintf(pf, sizeof pf, "%s/none.npy", dir);
    CHECK(tn_io_npy_layout(pf, &lc, err, sizeof err) == TN_IO_ERR_OPEN && strstr(err, pf));
    CHECK(tn_io_npy_layout(dir, &lc, err, sizeof err) == TN_IO_ERR_UNSUPPORTED); /* a directory */
    /* the file shortened after its layout was read: an error, not a crash */
    REQUIRE(tn_io_npy_layout(pc, &lc, err, sizeof err) == 0);
    REQUIRE(truncate(pc, (off_t)(lc.data_offset + 8 * 10)) == 0);
    CHECK(tn_io_npy_read_rows_c(pc, &lc, 4, 3, rows, NULL, err, sizeof err) == TN_IO_ERR_OPEN &&
          strstr(err, "the file changed"));
    CHECK(tn_io_npy_layout(pc, &lc, err, sizeof err) == TN_IO_ERR_FORMAT && strstr(err, "truncated"));
    tu_rm_dir(dir);
}
