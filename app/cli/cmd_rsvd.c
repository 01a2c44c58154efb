/* tcnla rsvd: randomized SVD of a generated matrix with a known spectrum (the
 * main job) or of a .npy / .mtx file; residual against the Eckart-Young
 * optimum, time, and the speedup over the plain FP32 pipeline. */
#include "cli.h"
#include "dist.h"
#include "io/io.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(void) {
    printf(
        "usage: tcnla rsvd [options]\n\n"
        "Rank-k randomized SVD A ~ U diag(S) V^T ([Ootomo & Yokota 2023] Algorithm 1).\n"
        "Without --input, A is a generated m x n matrix with a known spectrum, and the residual\n"
        "is printed next to the optimal (Eckart-Young) one. The same decomposition by the plain\n"
        "FP32 pipeline (SGEMM, FP32 random matrix, Householder QR) is timed on the same input\n"
        "for the speedup.\n\n"
        "options (defaults in brackets):\n"
        "  --input FILE      a .npy (float32/float64, C or Fortran order) or .mtx matrix; a\n"
        "                    pipe is read as it comes, a FIFO waited on for a writer at most\n"
        "                    10 s ($TCNLA_FIFO_WAIT); float64 values float32 cannot hold\n"
        "                    (overflow, or nonzero underflow to 0) are an error\n"
        "  --m N --n N       size of the generated matrix [4096 4096] (not with --input)\n"
        "  --spectrum S      exp (s_i = 2^(-a i), s_k = 1e-3), linear (s_i = max(1 - a i, 1e-3)),\n"
        "                    poly (s_i = (i+1)^-2) [exp] (not with --input)\n"
        "  --rank K          target rank [256]\n"
        "  --oversampling P  [10]\n"
        "  --power-iters Q   [2]\n"
        "  --pass-efficient  2Q + 1 passes over A instead of 2Q + 2 (needs Q >= 1): the last\n"
        "                    power iteration stops at Y = A Z, Z = orth(A^T Q), and A ~ Y Z^T,\n"
        "                    one product and one orthonormalization fewer; the residual lies\n"
        "                    between those of Q - 1 and Q iterations ([Bjarkason 2019]; slow\n"
        "                    decay at Q = 2: 1.031 against 1.020 x optimal)\n"
        "  --proj M          GEMM of A*Omega: shgemm_fp16, shgemm_tf32, tcec_fp16, tcec_tf32,\n"
        "                    native_fp32, tf32, fp16, ... [on a GPU: fp16 where power iterations\n"
        "                    follow (they filter its rounding of A) and it needs no copy of A,\n"
        "                    else shgemm_fp16 (printed as auto:...); native_fp32 on the CPU]\n"
        "  --gemm M          the other products [tcec_fp16 on a GPU, native_fp32 on the CPU]\n"
        "  --power M         the power iterations' products (fp16: A and the basis rounded\n"
        "                    to FP16; shgemm_fp16: only the basis rounded, as accurate as\n"
        "                    tcec_fp16 there in 2 products instead of 3; not shgemm_tf32)\n"
        "                    [with --gemm tcec_fp16: chosen from the data, fp16 where its\n"
        "                    error stays below a tenth of the first basis's residual, else\n"
        "                    shgemm_fp16, its first product fp16 where another iteration\n"
        "                    follows (printed as auto:...); else as --gemm]\n"
        "                    fp16 for --proj, --gemm or --power is the fastest (--proj fp16\n"
        "                    --gemm fp16 --pass-efficient at 16384^2, rank 256: 14.0x to\n"
        "                    16.8x cuSOLVER's gesvdr on five spectra on an H200, 12.7x to\n"
        "                    15.2x on an H100) but rounds A to FP16 in every product (a\n"
        "                    relative error of about 3e-4 per product): for residuals well\n"
        "                    above that only\n"
        "  --orth O          householder, cholqr_fp32, cholqr_fp64, cholqr2_fp64 [cholqr_fp64]\n"
        "  --random-format F fp32, fp16, bf16, tf32, e4m3, e5m2 [fp16]\n"
        "  --reps N          timed runs after a warm-up, median reported [3 on a GPU, 1 on the CPU]\n"
        "  --no-baseline     skip the FP32 pipeline\n"
        "  --output PREFIX   write PREFIX_U.npy, PREFIX_S.npy, PREFIX_VT.npy (checked before\n"
        "                    the computation; never the input file; written under temporary\n"
        "                    names in the same directory, renamed at the end)\n"
        "  --backend auto|cpu|cuda [auto]   --seed N [1]   --json\n\n"
        "On the CPU, Tensor Core methods run on a bit-faithful but slow model of the Tensor Core,\n"
        "which is why the CPU defaults are native FP32.\n");
    cli_dist_help("rsvd");
}

static void progress(int on, const char *msg) {
    if (on) fprintf(stderr, "tcnla rsvd: %s\n", msg);
}

/* Runs tcnla_rsvd `reps` times after a warm-up; median seconds in *t. */
static int timed_rsvd(tcnla_handle_t h, const tcnla_rsvd_opts_t *o, int64_t m, int64_t n,
                      const float *dA, float *dU, float *dS, float *dVT, int reps, double *t) {
    double ts[64];
    int st = tcnla_rsvd(h, o, m, n, dA, m, dU, m, dS, dVT, o->rank); /* warm-up */
    if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
    for (int r = 0; r < reps && st == TCNLA_SUCCESS; r++) {
        double t0 = cli_now();
        st = tcnla_rsvd(h, o, m, n, dA, m, dU, m, dS, dVT, o->rank);
        if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
        ts[r] = cli_now() - t0;
    }
    if (st == TCNLA_SUCCESS) {
        qsort(ts, (size_t)reps, sizeof(double), cli_cmp_double);
        *t = ts[reps / 2];
    }
    return st;
}

/* "auto:fp16" or "auto:shgemm_fp16" for a method the call chose (m, from
 * its info; "auto" where it did not say) */
static const char *auto_name(tcnla_gemm_method_t m) {
    return m == TCNLA_GEMM_FP16          ? "auto:fp16"
           : m == TCNLA_GEMM_SHGEMM_FP16 ? "auto:shgemm_fp16"
                                         : "auto";
}

const char *cli_rsvd_power(const tcnla_rsvd_opts_t *o, const tcnla_info_t *info) {
    if (o->power_method) return tcnla_gemm_method_name(o->power_method);
    if (o->gemm_method != TCNLA_GEMM_TCEC_FP16 || o->power_iters == 0)
        return tcnla_gemm_method_name(o->gemm_method);
    return auto_name(info->power_method);
}

const char *cli_rsvd_proj(const tcnla_rsvd_opts_t *o, const tcnla_info_t *info) {
    return o->proj_method ? tcnla_gemm_method_name(o->proj_method)
                          : auto_name(info ? info->proj_method : TCNLA_GEMM_DEFAULT);
}

/* ||A - U diag(S) VT||_F / ||A||_F on the host (BLAS SGEMM). */
static double residual(const float *A, int64_t m, int64_t n, int64_t k, const float *U,
                       const float *S, const float *VT) {
    float *E = malloc(sizeof(float) * (size_t)(m * n)), *W = malloc(sizeof(float) * (size_t)(m * k));
    if (!E || !W) {
        free(E), free(W);
        return NAN;
    }
    memcpy(E, A, sizeof(float) * (size_t)(m * n));
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < m; i++) W[i + j * m] = U[i + j * m] * S[j];
    int im = (int)m, in = (int)n, ik = (int)k;
    const float mone = -1.0f, one = 1.0f;
    sgemm_("N", "N", &im, &in, &ik, &mone, W, &im, VT, &ik, &one, E, &im);
    double num = 0, den = 0;
    for (int64_t i = 0; i < m * n; i++) {
        num += (double)E[i] * E[i];
        den += (double)A[i] * A[i];
    }
    free(E), free(W);
    return den > 0 ? sqrt(num / den) : sqrt(num); /* A = 0: the absolute residual */
}

/* "--proj M" etc. for the options whose methods split into FP16 (the ones
 * a range failure can come from), or all three when none does. */
static void fp16_methods(const tcnla_rsvd_opts_t *o, char *b, size_t n) {
    const struct { const char *opt; tcnla_gemm_method_t m; } u[3] = {
        {"--proj", o->proj_method}, {"--power", o->power_method ? o->power_method : o->gemm_method},
        {"--gemm", o->gemm_method}};
    size_t k = 0;
    b[0] = 0;
    for (int pass = 0; pass < 2 && !k; pass++)
        for (int i = 0; i < 3; i++) {
            /* (proj_method 0: FP16 or SHGEMM_FP16) */
            const tcnla_gemm_method_t m = u[i].m ? u[i].m : TCNLA_GEMM_FP16;
            const int fp16 = m == TCNLA_GEMM_FP16 || m == TCNLA_GEMM_MARKIDIS_FP16 ||
                             m == TCNLA_GEMM_TCEC_FP16 || m == TCNLA_GEMM_SHGEMM_FP16;
            if ((pass == 0 && !fp16) || k + 1 >= n) continue;
            int w = snprintf(b + k, n - k, "%s%s %s", k ? ", " : "", u[i].opt,
                             u[i].m ? tcnla_gemm_method_name(m) : "auto");
            if (w > 0) k += (size_t)w < n - k ? (size_t)w : n - k - 1;
        }
}

static const char *const value_opts[] = {"--input", "--output", "--spectrum", "--m", "--n",
                                         "--rank", "--oversampling", "--power-iters", "--reps",
                                         "--proj", "--gemm", "--power", "--orth",
                                         "--random-format", "--ranks", "--gpus", "--gen-rank",
                                         NULL};

int cmd_rsvd(int argc, char **argv) {
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    const char *input = NULL, *output = NULL, *spectrum = "exp", *gen_opt = NULL;
    cli_outputs outs = {0};
    int fmt_set = 0;
    int64_t m = 4096, n = 4096, reps = -1, ranks = 0, gen_rank = -1;
    int baseline = 1, proj_set = 0, gemm_set = 0, gpus = 0;
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = 256;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int64_t t;
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return EXIT_OK;
        } else if (!strcmp(a, "--no-baseline")) baseline = 0;
        else if (!strcmp(a, "--pass-efficient")) o.pass_efficient = 1;
        else if (!cli_takes_value(a, value_opts)) return cli_unknown_opt("rsvd", a);
        else if (!(v = cli_value(argc, argv, &i))) return EXIT_USAGE;
        else if (!strcmp(a, "--input")) input = v;
        else if (!strcmp(a, "--output")) output = v;
        else if (!strcmp(a, "--spectrum")) {
            if (strcmp(v, "exp") && strcmp(v, "linear") && strcmp(v, "poly")) {
                fprintf(stderr, "tcnla rsvd: --spectrum: '%s' is not exp, linear or poly\n", v);
                return EXIT_USAGE;
            }
            spectrum = v, gen_opt = a;
        } else if (!strcmp(a, "--m")) {
            if (cli_int(a, v, 1, 1 << 20, &m)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--n")) {
            if (cli_int(a, v, 1, 1 << 20, &n)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--rank")) {
            if (cli_int(a, v, 1, 1 << 16, &o.rank)) return EXIT_USAGE;
        } else if (!strcmp(a, "--oversampling")) {
            if (cli_int(a, v, 0, 1 << 16, &o.oversampling)) return EXIT_USAGE;
        } else if (!strcmp(a, "--power-iters")) {
            if (cli_int(a, v, 0, 100, &t)) return EXIT_USAGE;
            o.power_iters = (int)t;
        } else if (!strcmp(a, "--reps")) {
            if (cli_int(a, v, 1, 64, &reps)) return EXIT_USAGE;
        } else if (!strcmp(a, "--ranks") || !strcmp(a, "--gpus")) {
            if (cli_int(a, v, 1, CLI_DIST_MAX_RANKS, &ranks)) return EXIT_USAGE;
            gpus = a[2] == 'g';
        } else if (!strcmp(a, "--gen-rank")) {
            if (cli_int(a, v, 1, 1 << 20, &gen_rank)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--proj") || !strcmp(a, "--gemm") || !strcmp(a, "--power")) {
            tcnla_gemm_method_t mm;
            if (tcnla_gemm_method_from_name(v, &mm) || mm == TCNLA_GEMM_DEFAULT) {
                fprintf(stderr, "tcnla rsvd: %s: unknown method '%s'\n", a, v);
                return EXIT_USAGE;
            }
            if (!strcmp(a, "--proj")) o.proj_method = mm, proj_set = 1;
            else if (!strcmp(a, "--gemm")) o.gemm_method = mm, gemm_set = 1;
            else o.power_method = mm;
        } else if (!strcmp(a, "--orth")) {
            int t = cli_name_arg("rsvd", a, v, cli_orth_names, 4, "method");
            if (t < 0) return EXIT_USAGE;
            o.orth = (tcnla_orth_t)t;
        } else if (!strcmp(a, "--random-format")) {
            int t = cli_name_arg("rsvd", a, v, cli_format_names, 6, "format");
            if (t < 0) return EXIT_USAGE;
            o.random_format = (tcnla_format_t)t, fmt_set = 1;
        } else {
            fprintf(stderr, "tcnla rsvd: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        }
    }
    o.seed = c.seed;
    const int tty = isatty(2);
    if (input && gen_opt) {
        fprintf(stderr, "tcnla rsvd: %s describes the generated matrix; with --input the file "
                        "gives the matrix\n", gen_opt);
        return EXIT_USAGE;
    }
    /* what the library would refuse as "invalid argument": said with the options */
    if (o.gemm_method == TCNLA_GEMM_SHGEMM_FP16 || o.gemm_method == TCNLA_GEMM_SHGEMM_TF32) {
        fprintf(stderr, "tcnla rsvd: --gemm %s: SHGEMM needs an FP16 operand, which only the "
                "random matrix of --proj and the basis of --power are\n",
                tcnla_gemm_method_name(o.gemm_method));
        return EXIT_USAGE;
    }
    if (o.pass_efficient && o.power_iters < 1) {
        fprintf(stderr, "tcnla rsvd: --pass-efficient needs --power-iters 1 or more (it stops "
                "the last power iteration early)\n");
        return EXIT_USAGE;
    }
    if (o.power_method == TCNLA_GEMM_SHGEMM_TF32) {
        fprintf(stderr, "tcnla rsvd: --power shgemm_tf32: the power iterations take "
                "shgemm_fp16, not shgemm_tf32\n");
        return EXIT_USAGE;
    }
    /* several ranks: --ranks, --gpus, or this process one of an MPI launch */
    const int under_mpi = cli_dist_prepare("rsvd", gpus, &c);
    if (under_mpi < 0) return EXIT_USAGE;
    if (ranks > 0 || under_mpi > 0) {
        cli_dist_cfg dc = {0};
        dc.cmd = "rsvd", dc.c = c, dc.input = input, dc.output = output, dc.m = m, dc.n = n;
        dc.spectrum = !strcmp(spectrum, "exp") ? TN_SPEC_EXP
                      : !strcmp(spectrum, "linear") ? TN_SPEC_LINEAR : TN_SPEC_POLY;
        dc.spectrum_name = spectrum, dc.gen_rank = gen_rank, dc.reps = reps;
        dc.ranks = (int)ranks, dc.gpus = gpus, dc.rsvd = o;
        dc.proj_set = proj_set, dc.gemm_set = gemm_set, dc.fmt_set = fmt_set;
        return cli_dist_run(&dc);
    }
    if (gen_rank > 0) {
        fprintf(stderr, "tcnla rsvd: --gen-rank sets the rank of the distributed generator "
                        "(with --ranks, --gpus or under mpirun)\n");
        return EXIT_USAGE;
    }
    static const char *const suffixes[3] = {"_U.npy", "_S.npy", "_VT.npy"};
    int rc;
    if (output && (rc = cli_outputs_open(&outs, "rsvd", output, suffixes, 3, input))) return rc;

    /* the matrix, on the host */
    float *A = NULL;
    double *sigma = NULL;
    if (input) {
        tn_matrix mat;
        int st = tn_io_read_matrix(input, TN_IO_AS_FLOAT, 0, &mat, cli_errbuf, sizeof cli_errbuf);
        if (st) {
            fprintf(stderr, "tcnla rsvd: %s\n", cli_errbuf);
            cli_outputs_abort(&outs);
            return EXIT_BADINPUT;
        }
        A = mat.data, m = mat.rows, n = mat.cols;
        for (int64_t i = 0; i < m * n; i++)
            if (!isfinite(A[i])) {
                fprintf(stderr, "tcnla rsvd: %s: the matrix holds NaN or Inf (element [%lld, "
                        "%lld] = %g)\n", input, (long long)(i % m), (long long)(i / m), A[i]);
                free(A);
                cli_outputs_abort(&outs);
                return EXIT_BADINPUT;
            }
    }
    if (o.rank + o.oversampling > (m < n ? m : n)) {
        fprintf(stderr, "tcnla rsvd: %s%srank + oversampling = %lld exceeds min(m, n) = %lld\n",
                input ? input : "", input ? ": " : "", (long long)(o.rank + o.oversampling),
                (long long)(m < n ? m : n));
        free(A);
        cli_outputs_abort(&outs);
        return EXIT_BADINPUT;
    }
    tcnla_handle_t h;
    rc = cli_open(&c, &h);
    if (rc) {
        free(A);
        cli_outputs_abort(&outs);
        return rc;
    }
    tcnla_backend_t be;
    char dev[256];
    tcnla_get_backend(h, &be);
    tcnla_device_name(h, dev, sizeof dev);
    if (be == TCNLA_BACKEND_CPU) { /* the Tensor Core model is for accuracy studies, not speed */
        if (!proj_set) o.proj_method = TCNLA_GEMM_NATIVE_FP32;
        if (!gemm_set) o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
    }
    if (reps < 0) reps = be == TCNLA_BACKEND_CUDA ? 3 : 1;
    if ((o.proj_method == TCNLA_GEMM_DEFAULT || o.proj_method == TCNLA_GEMM_SHGEMM_FP16 ||
         o.proj_method == TCNLA_GEMM_SHGEMM_TF32) &&
        o.random_format != TCNLA_FMT_FP16) {
        fprintf(stderr, "tcnla rsvd: --proj %s%s multiplies A by the random matrix in FP16, so it "
                "needs --random-format fp16%s, not %s\n", cli_rsvd_proj(&o, NULL),
                proj_set ? "" : " (the default on a GPU)", fmt_set ? "" : " (the default)",
                cli_format_names[o.random_format]);
        rc = EXIT_USAGE;
        goto out;
    }

    if (!input) {
        int64_t mn = m < n ? m : n, r = mn < 4 * o.rank + 64 ? mn : 4 * o.rank + 64;
        sigma = malloc(sizeof(double) * (size_t)r);
        A = malloc(sizeof(float) * (size_t)(m * n));
        if (!sigma || !A) {
            fprintf(stderr, "tcnla rsvd: out of host memory for a %lld x %lld matrix\n",
                    (long long)m, (long long)n);
            rc = EXIT_BADINPUT;
            goto out;
        }
        tn_spectrum(!strcmp(spectrum, "exp") ? TN_SPEC_EXP : !strcmp(spectrum, "linear") ? TN_SPEC_LINEAR : TN_SPEC_POLY,
                    r, o.rank, 1e-3, 1, 2.0, 1.0, sigma);
        if (!strcmp(spectrum, "poly"))
            for (int64_t i = 0; i < r; i++) sigma[i] = pow((double)(i + 1), -2.0);
        progress(tty, "generating the input matrix");
        if (tn_testmat_svd_fast(m, n, r, sigma, c.seed, A, m)) {
            fprintf(stderr, "tcnla rsvd: generating the matrix failed\n");
            rc = EXIT_NUMERICAL;
            goto out;
        }
    }
    float *dA = NULL, *dU = NULL, *dS = NULL, *dVT = NULL;
    const int64_t k = o.rank;
    int st;
    if ((st = tcnla_malloc(h, (void **)&dA, sizeof(float) * (size_t)(m * n))) ||
        (st = tcnla_malloc(h, (void **)&dU, sizeof(float) * (size_t)(m * k))) ||
        (st = tcnla_malloc(h, (void **)&dS, sizeof(float) * (size_t)k)) ||
        (st = tcnla_malloc(h, (void **)&dVT, sizeof(float) * (size_t)(k * n))) ||
        (st = tcnla_memcpy(h, dA, A, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HOST_TO_HANDLE))) {
        rc = cli_fail("allocating device memory", st);
        goto out_dev;
    }
    double t_base = -1, res_base = -1, t = 0;
    float *U = malloc(sizeof(float) * (size_t)(m * k)), *S = malloc(sizeof(float) * (size_t)k);
    float *VT = malloc(sizeof(float) * (size_t)(k * n));
    if (!U || !S || !VT) {
        rc = cli_fail("host buffers", TCNLA_ERR_ALLOC);
        goto out_host;
    }
    if (baseline) {
        tcnla_rsvd_opts_t b = o;
        b.proj_method = b.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        b.power_method = TCNLA_GEMM_DEFAULT;
        b.random_format = TCNLA_FMT_FP32;
        b.orth = TCNLA_ORTH_HOUSEHOLDER;
        progress(tty, "plain FP32 pipeline (SGEMM, FP32 Omega, Householder QR)");
        if ((st = timed_rsvd(h, &b, m, n, dA, dU, dS, dVT, (int)reps, &t_base))) {
            rc = cli_fail("FP32 baseline", st);
            goto out_host;
        }
        tcnla_memcpy(h, U, dU, sizeof(float) * (size_t)(m * k), TCNLA_MEMCPY_HANDLE_TO_HOST);
        tcnla_memcpy(h, S, dS, sizeof(float) * (size_t)k, TCNLA_MEMCPY_HANDLE_TO_HOST);
        tcnla_memcpy(h, VT, dVT, sizeof(float) * (size_t)(k * n), TCNLA_MEMCPY_HANDLE_TO_HOST);
        res_base = residual(A, m, n, k, U, S, VT);
    }
    progress(tty, "randomized SVD");
    tcnla_info_t info = {0};
    o.info = &info;
    if ((st = timed_rsvd(h, &o, m, n, dA, dU, dS, dVT, (int)reps, &t))) {
        char what[256];
        fp16_methods(&o, what, sizeof what);
        if (st != TCNLA_ERR_RANGE) /* not a range failure: every product may have failed */
            snprintf(what, sizeof what, "--proj %s, --power %s, --gemm %s",
                     cli_rsvd_proj(&o, &info),
                     tcnla_gemm_method_name(o.power_method ? o.power_method : o.gemm_method),
                     tcnla_gemm_method_name(o.gemm_method));
        rc = cli_fail(what, st);
        goto out_host;
    }
    tcnla_memcpy(h, U, dU, sizeof(float) * (size_t)(m * k), TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_memcpy(h, S, dS, sizeof(float) * (size_t)k, TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_memcpy(h, VT, dVT, sizeof(float) * (size_t)(k * n), TCNLA_MEMCPY_HANDLE_TO_HOST);
    progress(tty, "residual");
    double res = residual(A, m, n, k, U, S, VT), opt = -1;
    if (sigma) {
        int64_t mn = m < n ? m : n, r = mn < 4 * k + 64 ? mn : 4 * k + 64;
        double tail = 0, all = 0;
        for (int64_t i = 0; i < r; i++) {
            all += sigma[i] * sigma[i];
            if (i >= k) tail += sigma[i] * sigma[i];
        }
        opt = sqrt(tail / all);
    }
    if (output) {
        const struct { float *x; int64_t r, c; } ov[3] = {{U, m, k}, {S, k, 1}, {VT, k, n}};
        for (int i = 0; i < 3; i++) {
            tn_matrix mm = {ov[i].r, ov[i].c, 0, 0, ov[i].x};
            if ((rc = cli_outputs_write(&outs, i, "rsvd", &mm, i == 1 ? TN_IO_NPY_1D : 0u)))
                goto out_host;
        }
        if ((rc = cli_outputs_commit(&outs, "rsvd"))) goto out_host;
    }
    if (c.json) {
        cli_json j;
        cli_jbegin(&j, stdout);
        cli_jstr(&j, "command", "rsvd");
        cli_jstr(&j, "backend", cli_backend_name(be));
        cli_jstr(&j, "device", dev);
        cli_jint(&j, "m", m);
        cli_jint(&j, "n", n);
        cli_jint(&j, "rank", k);
        cli_jint(&j, "oversampling", o.oversampling);
        cli_jint(&j, "power_iters", o.power_iters);
        cli_jint(&j, "pass_efficient", o.pass_efficient);
        cli_jstr(&j, "proj", cli_rsvd_proj(&o, &info));
        cli_jstr(&j, "gemm", tcnla_gemm_method_name(o.gemm_method));
        cli_jstr(&j, "power", cli_rsvd_power(&o, &info));
        cli_jstr(&j, "input", input ? input : spectrum);
        cli_jnum(&j, "rel_residual", "%.6e", res);
        cli_jnum(&j, "optimal", "%.6e", opt >= 0 ? opt : NAN); /* unknown for a file */
        cli_jnum(&j, "seconds", "%.6e", t);
        cli_jnum(&j, "fp32_seconds", "%.6e", baseline ? t_base : NAN);
        cli_jnum(&j, "fp32_rel_residual", "%.6e", baseline ? res_base : NAN);
        cli_jnum(&j, "speedup", "%.4f", baseline && t > 0 ? t_base / t : NAN);
        cli_jend(&j);
    } else {
        printf("tcnla rsvd on %s (%s backend): %lld x %lld %s, rank %lld, oversampling %lld, "
               "%d power iterations%s\n",
               dev, cli_backend_name(be), (long long)m, (long long)n,
               input ? input : (!strcmp(spectrum, "exp") ? "matrix, exponentially decaying spectrum"
                                : !strcmp(spectrum, "linear") ? "matrix, linearly decaying spectrum"
                                                              : "matrix, spectrum (i+1)^-2"),
               (long long)k, (long long)o.oversampling, o.power_iters,
               o.pass_efficient ? " (pass-efficient: 2q + 1 passes over A)" : "");
        printf("  methods: A*Omega %s, power iterations %s, %s %s, Omega in %s\n",
               cli_rsvd_proj(&o, &info), cli_rsvd_power(&o, &info),
               o.pass_efficient ? "the last A Z" : "Q^T A", tcnla_gemm_method_name(o.gemm_method),
               cli_format_names[o.random_format]);
        printf("  ||A - U S V^T||_F / ||A||_F   %.4e", res);
        if (opt > 0) printf("   (optimal rank-%lld: %.4e, ratio %.4f)", (long long)k, opt, res / opt);
        else if (opt == 0) printf("   (optimal rank-%lld: 0)", (long long)k);
        printf("\n  time (median of %lld)         %.4f s\n", (long long)reps, t);
        if (baseline)
            printf("  plain FP32 pipeline           %.4f s, residual %.4e   speedup %.2fx\n",
                   t_base, res_base, t_base / t);
    }
out_host:
    free(U);
    free(S);
    free(VT);
out_dev:
    tcnla_free(h, dA);
    tcnla_free(h, dU);
    tcnla_free(h, dS);
    tcnla_free(h, dVT);
out:
    cli_outputs_abort(&outs); /* after a failure: no output left behind */
    free(A);
    free(sigma);
    tcnla_destroy(h);
    return rc;
}
