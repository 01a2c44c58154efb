/* tcnla lra: randomized low-rank approximation A ~ X Y^T [Baboulin et al. 2024] of a
 * generated low-rank matrix or of a .npy / .mtx file; relative error, output
 * rank, time, and the speedup over the plain FP32 pipeline. */
#include "cli.h"
#include "dist.h"
#include "io/io.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const tgemm_names[] = {"none", "32_32", "16_16", "16_32"};

static void help(void) {
    printf(
        "usage: tcnla lra [options]\n\n"
        "Randomized low-rank approximation A ~ X Y^T ([Baboulin et al. 2024] Algorithms 1, 4\n"
        "and 5) with the Tensor Core GEMM variants and iterative refinement. Prints the\n"
        "relative error ||A - X Y^T||_F / ||A||_F (computed on the host in FP32 BLAS), the\n"
        "output rank, the time, and the same for the plain FP32 pipeline (SGEMM, Householder\n"
        "QR, no refinement) with the speedup. Without --input, A is the m x n product X0 Y0^T\n"
        "of Gaussian X0 (m x r), Y0 (n x r), r = --true-rank ([Baboulin et al. 2024] section\n"
        "4.1).\n\n"
        "options (defaults in brackets):\n"
        "  --input FILE      a .npy (float32/float64, C or Fortran order) or .mtx matrix; a\n"
        "                    pipe is read as it comes, a FIFO waited on for a writer at most\n"
        "                    10 s ($TCNLA_FIFO_WAIT); float64 values float32 cannot hold\n"
        "                    (overflow, or nonzero underflow to 0) are an error\n"
        "  --m N --n N       size of the generated matrix [2048 2048]\n"
        "  --true-rank R     rank of the generated matrix [= --rank]\n"
        "  --noise EPS       add Gaussian noise of Frobenius norm EPS ||X0 Y0^T||_F to the\n"
        "                    generated matrix [0]\n"
        "                    (--m, --n, --true-rank, --noise: not with --input)\n"
        "  --rank K          target rank [64]\n"
        "  --oversampling P  [10]; needs (2K with refinement, else K) + P <= min(m, n)\n"
        "  --tgemm T         none, 32_32, 16_16, 16_32: the GEMM variant of\n"
        "                    [Baboulin et al. 2024] section 3.1\n"
        "                    [16_32 on a GPU, none on the CPU]\n"
        "  --gemm M          every product when --tgemm none (giving --gemm alone selects\n"
        "                    --tgemm none): native_fp32, tcec_fp16, tcec_tf32, fp16, tf32, ...\n"
        "                    (not shgemm_*) [native_fp32]\n"
        "  --orth O          householder, cholqr_fp32, cholqr_fp64, cholqr2_fp64 [cholqr_fp64]\n"
        "  --no-refine       skip the iterative refinement (output rank K instead of 3K)\n"
        "  --recompress      recompress the refined rank-3K result to rank K\n"
        "  --reps N          timed runs after a warm-up, median reported [3 on a GPU, 1 on the CPU]\n"
        "  --no-baseline     skip the FP32 pipeline\n"
        "  --output PREFIX   write PREFIX_X.npy (m x r) and PREFIX_Y.npy (n x r) (checked\n"
        "                    before the computation; never the input file; written under\n"
        "                    temporary names in the same directory, renamed at the end)\n"
        "  --backend auto|cpu|cuda [auto]   --seed N [1]   --json\n\n"
        "On the CPU, Tensor Core methods run on a bit-faithful but slow model of the Tensor Core,\n"
        "which is why the CPU default is --tgemm none with native_fp32 (ask for --tgemm 16_32\n"
        "explicitly to run the model, on small matrices).\n");
    cli_dist_help("lra");
}

static void progress(int on, const char *msg) {
    if (on) fprintf(stderr, "tcnla lra: %s\n", msg);
}

/* Runs tcnla_lra `reps` times after a warm-up; median seconds in *t. */
static int timed_lra(tcnla_handle_t h, const tcnla_lra_opts_t *o, int64_t m, int64_t n,
                     const float *dA, float *dX, float *dY, int reps, double *t) {
    double ts[64];
    int st = tcnla_lra(h, o, m, n, dA, m, dX, m, dY, n); /* warm-up */
    if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
    for (int r = 0; r < reps && st == TCNLA_SUCCESS; r++) {
        double t0 = cli_now();
        st = tcnla_lra(h, o, m, n, dA, m, dX, m, dY, n);
        if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
        ts[r] = cli_now() - t0;
    }
    if (st == TCNLA_SUCCESS) {
        qsort(ts, (size_t)reps, sizeof(double), cli_cmp_double);
        *t = ts[reps / 2];
    }
    return st;
}

/* ||A - X Y^T||_F / ||A||_F on the host (BLAS SGEMM); NAN when out of memory. */
static double rel_error(const float *A, int64_t m, int64_t n, int64_t r, const float *X,
                        const float *Y) {
    float *E = malloc(sizeof(float) * (size_t)(m * n));
    if (!E) return NAN;
    memcpy(E, A, sizeof(float) * (size_t)(m * n));
    int im = (int)m, in = (int)n, ir = (int)r;
    const float mone = -1.0f, one = 1.0f;
    sgemm_("N", "T", &im, &in, &ir, &mone, X, &im, Y, &in, &one, E, &im);
    double num = 0, den = 0;
    for (int64_t i = 0; i < m * n; i++) {
        num += (double)E[i] * E[i];
        den += (double)A[i] * A[i];
    }
    free(E);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Copies X (m x r) and Y (n x r) back to the host and measures the error. */
static double fetch_error(tcnla_handle_t h, const float *A, int64_t m, int64_t n, int64_t r,
                          const float *dX, const float *dY, float *X, float *Y) {
    tcnla_memcpy(h, X, dX, sizeof(float) * (size_t)(m * r), TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_memcpy(h, Y, dY, sizeof(float) * (size_t)(n * r), TCNLA_MEMCPY_HANDLE_TO_HOST);
    return rel_error(A, m, n, r, X, Y);
}

static const char *const value_opts[] = {"--input", "--output", "--m", "--n", "--rank",
                                         "--true-rank", "--noise", "--oversampling", "--reps",
                                         "--tgemm", "--gemm", "--orth", "--ranks", "--gpus",
                                         "--gen-rank", "--spectrum", NULL};

int cmd_lra(int argc, char **argv) {
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    const char *input = NULL, *output = NULL, *gen_opt = NULL;
    cli_outputs outs = {0};
    int64_t m = 2048, n = 2048, reps = -1, true_rank = -1, ranks = 0, gen_rank = -1;
    double noise = 0;
    int baseline = 1, tgemm_set = 0, gemm_set = 0, gpus = 0;
    const char *spectrum = NULL, *lowrank_opt = NULL;
    tcnla_lra_opts_t o = tcnla_lra_opts_default();
    o.rank = 64;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return EXIT_OK;
        } else if (!strcmp(a, "--no-baseline")) baseline = 0;
        else if (!strcmp(a, "--no-refine")) o.refine = 0;
        else if (!strcmp(a, "--recompress")) o.recompress = 1;
        else if (strncmp(a, "--", 2) || !a[2]) {
            fprintf(stderr, "tcnla lra: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        } else if (!cli_takes_value(a, value_opts)) return cli_unknown_opt("lra", a);
        else if (!(v = cli_value(argc, argv, &i))) return EXIT_USAGE;
        else if (!strcmp(a, "--input")) input = v;
        else if (!strcmp(a, "--output")) output = v;
        else if (!strcmp(a, "--m")) {
            if (cli_int(a, v, 1, 1 << 20, &m)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--n")) {
            if (cli_int(a, v, 1, 1 << 20, &n)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--rank")) {
            if (cli_int(a, v, 1, 1 << 16, &o.rank)) return EXIT_USAGE;
        } else if (!strcmp(a, "--true-rank")) {
            if (cli_int(a, v, 1, 1 << 20, &true_rank)) return EXIT_USAGE;
            gen_opt = lowrank_opt = a;
        } else if (!strcmp(a, "--ranks") || !strcmp(a, "--gpus")) {
            if (cli_int(a, v, 1, CLI_DIST_MAX_RANKS, &ranks)) return EXIT_USAGE;
            gpus = a[2] == 'g';
        } else if (!strcmp(a, "--gen-rank")) {
            if (cli_int(a, v, 1, 1 << 20, &gen_rank)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--spectrum")) {
            if (strcmp(v, "exp") && strcmp(v, "linear") && strcmp(v, "poly")) {
                fprintf(stderr, "tcnla lra: --spectrum: '%s' is not exp, linear or poly\n", v);
                return EXIT_USAGE;
            }
            spectrum = v, gen_opt = a;
        } else if (!strcmp(a, "--noise")) {
            gen_opt = lowrank_opt = a;
            if (cli_double(a, v, &noise)) return EXIT_USAGE;
            if (noise < 0) {
                fprintf(stderr, "tcnla lra: --noise: '%s' is negative\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--oversampling")) {
            if (cli_int(a, v, 0, 1 << 16, &o.oversampling)) return EXIT_USAGE;
        } else if (!strcmp(a, "--reps")) {
            if (cli_int(a, v, 1, 64, &reps)) return EXIT_USAGE;
        } else if (!strcmp(a, "--tgemm")) {
            int t = cli_parse_name(v, tgemm_names, 4);
            if (t < 0) {
                fprintf(stderr, "tcnla lra: --tgemm: '%s' is not none, 32_32, 16_16 or 16_32\n", v);
                return EXIT_USAGE;
            }
            o.tgemm = (tcnla_tgemm_t)t, tgemm_set = 1;
        } else if (!strcmp(a, "--gemm")) {
            tcnla_gemm_method_t mm;
            if (tcnla_gemm_method_from_name(v, &mm) || mm == TCNLA_GEMM_DEFAULT ||
                mm == TCNLA_GEMM_SHGEMM_FP16 || mm == TCNLA_GEMM_SHGEMM_TF32) {
                fprintf(stderr, "tcnla lra: --gemm: unknown or unusable method '%s'\n", v);
                return EXIT_USAGE;
            }
            o.gemm_method = mm, gemm_set = 1;
        } else if (!strcmp(a, "--orth")) {
            int t = cli_name_arg("lra", a, v, cli_orth_names, 4, "method");
            if (t < 0) return EXIT_USAGE;
            o.orth = (tcnla_orth_t)t;
        } else {
            fprintf(stderr, "tcnla lra: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        }
    }
    o.seed = c.seed;
    if (true_rank < 0) true_rank = o.rank;
    if (gemm_set && !tgemm_set) o.tgemm = TCNLA_TGEMM_NONE, tgemm_set = 1;
    const int tty = isatty(2);
    if (input && gen_opt) {
        fprintf(stderr, "tcnla lra: %s describes the generated matrix; with --input the file "
                        "gives the matrix\n", gen_opt);
        return EXIT_USAGE;
    }
    /* several ranks: --ranks, --gpus, or this process one of an MPI launch */
    const int under_mpi = cli_dist_prepare("lra", gpus, &c);
    if (under_mpi < 0) return EXIT_USAGE;
    if (ranks > 0 || under_mpi > 0) {
        if (lowrank_opt) {
            fprintf(stderr, "tcnla lra: %s describes the single-rank generator; over several "
                            "ranks the generated matrix has a known spectrum (--spectrum, "
                            "--gen-rank)\n", lowrank_opt);
            return EXIT_USAGE;
        }
        cli_dist_cfg dc = {0};
        dc.cmd = "lra", dc.is_lra = 1, dc.c = c, dc.input = input, dc.output = output;
        dc.m = m, dc.n = n, dc.spectrum_name = spectrum ? spectrum : "exp";
        dc.spectrum = !spectrum || !strcmp(spectrum, "exp") ? TN_SPEC_EXP
                      : !strcmp(spectrum, "linear") ? TN_SPEC_LINEAR : TN_SPEC_POLY;
        dc.gen_rank = gen_rank, dc.reps = reps, dc.ranks = (int)ranks, dc.gpus = gpus;
        dc.lra = o, dc.tgemm_set = tgemm_set, dc.gemm_set = gemm_set;
        return cli_dist_run(&dc);
    }
    if (gen_rank > 0 || spectrum) {
        fprintf(stderr, "tcnla lra: %s sets the distributed generator (with --ranks, --gpus or "
                        "under mpirun)\n", gen_rank > 0 ? "--gen-rank" : "--spectrum");
        return EXIT_USAGE;
    }
    static const char *const suffixes[2] = {"_X.npy", "_Y.npy"};
    int rc;
    if (output && (rc = cli_outputs_open(&outs, "lra", output, suffixes, 2, input))) return rc;

    /* the matrix, on the host */
    float *A = NULL;
    if (input) {
        tn_matrix mat;
        if (tn_io_read_matrix(input, TN_IO_AS_FLOAT, 0, &mat, cli_errbuf, sizeof cli_errbuf)) {
            fprintf(stderr, "tcnla lra: %s\n", cli_errbuf);
            cli_outputs_abort(&outs);
            return EXIT_BADINPUT;
        }
        A = mat.data, m = mat.rows, n = mat.cols;
        if (m < 1 || n < 1) {
            fprintf(stderr, "tcnla lra: %s: the matrix is empty (%lld x %lld)\n", input,
                    (long long)m, (long long)n);
            free(A);
            cli_outputs_abort(&outs);
            return EXIT_BADINPUT;
        }
        if (m > INT32_MAX || n > INT32_MAX) {
            fprintf(stderr, "tcnla lra: %s: %lld x %lld is too large for BLAS\n", input,
                    (long long)m, (long long)n);
            free(A);
            cli_outputs_abort(&outs);
            return EXIT_BADINPUT;
        }
        for (int64_t i = 0; i < m * n; i++)
            if (!isfinite(A[i])) {
                fprintf(stderr, "tcnla lra: %s: the matrix holds NaN or Inf (element [%lld, "
                        "%lld] = %g)\n", input, (long long)(i % m), (long long)(i / m), A[i]);
                free(A);
                cli_outputs_abort(&outs);
                return EXIT_BADINPUT;
            }
    } else if (true_rank > (m < n ? m : n)) {
        fprintf(stderr, "tcnla lra: --true-rank %lld exceeds min(m, n) = %lld\n",
                (long long)true_rank, (long long)(m < n ? m : n));
        cli_outputs_abort(&outs);
        return EXIT_BADINPUT;
    }
    const int64_t k = o.rank, mn = m < n ? m : n, need = (o.refine ? 2 * k : k) + o.oversampling;
    if (need > mn) {
        fprintf(stderr, "tcnla lra: %s%s%s + oversampling = %lld exceeds min(m, n) = %lld\n",
                input ? input : "", input ? ": " : "", o.refine ? "2 * rank (refinement)" : "rank",
                (long long)need, (long long)mn);
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
    if (be == TCNLA_BACKEND_CPU && !tgemm_set) /* the Tensor Core model is slow */
        o.tgemm = TCNLA_TGEMM_NONE;
    if (reps < 0) reps = be == TCNLA_BACKEND_CUDA ? 3 : 1;

    float *dA = NULL, *dX = NULL, *dY = NULL, *X = NULL, *Y = NULL;
    /* tcnla_lra uses 3k columns of X and Y while refining, even when it then
     * recompresses to k (src/randnla/lra.c): allocate them whatever r_out is */
    const int64_t r_out = tcnla_lra_out_rank(&o), r_max = o.refine ? 3 * k : k;
    int st;
    if (!input) {
        A = malloc(sizeof(float) * (size_t)(m * n));
        if (!A) {
            fprintf(stderr, "tcnla lra: out of host memory for a %lld x %lld matrix\n",
                    (long long)m, (long long)n);
            rc = EXIT_BADINPUT;
            goto out;
        }
        progress(tty, "generating the input matrix");
        if (tn_testmat_lowrank(m, n, true_rank, c.seed, A, m)) {
            fprintf(stderr, "tcnla lra: out of host memory generating the matrix\n");
            rc = EXIT_BADINPUT;
            goto out;
        }
        if (noise > 0) {
            float *G = malloc(sizeof(float) * (size_t)(m * n));
            if (!G) {
                fprintf(stderr, "tcnla lra: out of host memory for the noise\n");
                rc = EXIT_BADINPUT;
                goto out;
            }
            tcnla_rand_normal(c.seed, 23, 0.0f, 1.0f, m * n, G);
            double na = 0, ng = 0;
            for (int64_t i = 0; i < m * n; i++) {
                na += (double)A[i] * A[i];
                ng += (double)G[i] * G[i];
            }
            const double s = ng > 0 ? noise * sqrt(na / ng) : 0;
            for (int64_t i = 0; i < m * n; i++) A[i] = (float)((double)A[i] + s * G[i]);
            free(G);
        }
    }
    if ((st = tcnla_malloc(h, (void **)&dA, sizeof(float) * (size_t)(m * n))) ||
        (st = tcnla_malloc(h, (void **)&dX, sizeof(float) * (size_t)(m * r_max))) ||
        (st = tcnla_malloc(h, (void **)&dY, sizeof(float) * (size_t)(n * r_max))) ||
        (st = tcnla_memcpy(h, dA, A, sizeof(float) * (size_t)(m * n), TCNLA_MEMCPY_HOST_TO_HANDLE))) {
        rc = cli_fail("allocating device memory", st);
        goto out;
    }
    X = malloc(sizeof(float) * (size_t)(m * r_max));
    Y = malloc(sizeof(float) * (size_t)(n * r_max));
    if (!X || !Y) {
        rc = cli_fail("host buffers", TCNLA_ERR_ALLOC);
        goto out;
    }
    double t_base = -1, err_base = -1, t = 0;
    if (baseline) {
        tcnla_lra_opts_t b = o;
        b.tgemm = TCNLA_TGEMM_NONE;
        b.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        b.orth = TCNLA_ORTH_HOUSEHOLDER;
        b.refine = 0;
        b.recompress = 0;
        progress(tty, "plain FP32 pipeline (SGEMM, Householder QR, no refinement)");
        if ((st = timed_lra(h, &b, m, n, dA, dX, dY, (int)reps, &t_base))) {
            rc = cli_fail("FP32 baseline", st);
            goto out;
        }
        err_base = fetch_error(h, A, m, n, k, dX, dY, X, Y);
    }
    progress(tty, "randomized low-rank approximation");
    if ((st = timed_lra(h, &o, m, n, dA, dX, dY, (int)reps, &t))) {
        rc = cli_fail(o.tgemm == TCNLA_TGEMM_NONE ? tcnla_gemm_method_name(o.gemm_method)
                                                   : tgemm_names[o.tgemm],
                      st);
        goto out;
    }
    progress(tty, "error");
    const double e = fetch_error(h, A, m, n, r_out, dX, dY, X, Y);
    if (!isfinite(e)) {
        fprintf(stderr, "tcnla lra: the approximation is not finite\n");
        rc = EXIT_NUMERICAL;
        goto out;
    }
    if (output) {
        tn_matrix mx = {m, r_out, 0, 0, X}, my = {n, r_out, 0, 0, Y};
        if ((rc = cli_outputs_write(&outs, 0, "lra", &mx, 0u)) ||
            (rc = cli_outputs_write(&outs, 1, "lra", &my, 0u)) ||
            (rc = cli_outputs_commit(&outs, "lra")))
            goto out;
    }
    const char *gname = o.tgemm == TCNLA_TGEMM_NONE ? tcnla_gemm_method_name(o.gemm_method) : "fp16";
    if (c.json) {
        cli_json j;
        cli_jbegin(&j, stdout);
        cli_jstr(&j, "command", "lra");
        cli_jstr(&j, "backend", cli_backend_name(be));
        cli_jstr(&j, "device", dev);
        cli_jstr(&j, "input", input ? input : "lowrank");
        cli_jint(&j, "m", m);
        cli_jint(&j, "n", n);
        if (input) cli_jraw(&j, "true_rank", "null"); /* unknown for a file */
        else cli_jint(&j, "true_rank", true_rank);
        cli_jnum(&j, "noise", "%.6e", input ? NAN : noise);
        cli_jint(&j, "rank", k);
        cli_jint(&j, "oversampling", o.oversampling);
        cli_jstr(&j, "tgemm", tgemm_names[o.tgemm]);
        cli_jstr(&j, "gemm", gname);
        cli_jstr(&j, "orth", cli_orth_names[o.orth]);
        cli_jraw(&j, "refine", o.refine ? "true" : "false");
        cli_jraw(&j, "recompress", o.recompress ? "true" : "false");
        cli_jint(&j, "out_rank", r_out);
        cli_jerror_timing(&j, e, t, reps, baseline, t_base, err_base);
        cli_jend(&j);
    } else {
        printf("tcnla lra on %s (%s backend): %lld x %lld ", dev, cli_backend_name(be),
               (long long)m, (long long)n);
        if (input) printf("%s", input);
        else if (noise > 0) printf("rank-%lld matrix X Y^T + noise %.2e", (long long)true_rank, noise);
        else printf("rank-%lld matrix X Y^T", (long long)true_rank);
        printf(", rank %lld, oversampling %lld\n", (long long)k, (long long)o.oversampling);
        printf("  methods: tgemm %s (products: %s), orth %s, %s%s\n", tgemm_names[o.tgemm], gname,
               cli_orth_names[o.orth], o.refine ? "iterative refinement" : "no refinement",
               o.refine && o.recompress ? ", recompressed" : "");
        printf("  ||A - X Y^T||_F / ||A||_F     %.4e   (output rank %lld)\n", e, (long long)r_out);
        printf("  time (median of %lld)         %.4f s\n", (long long)reps, t);
        if (baseline)
            printf("  plain FP32 pipeline           %.4f s, error %.4e   speedup %.2fx\n", t_base,
                   err_base, t > 0 ? t_base / t : 0.0);
        if (output) printf("  wrote %s_X.npy, %s_Y.npy\n", output, output);
    }
out:
    cli_outputs_abort(&outs); /* after a failure: no output left behind */
    free(X);
    free(Y);
    tcnla_free(h, dA);
    tcnla_free(h, dX);
    tcnla_free(h, dY);
    free(A);
    tcnla_destroy(h);
    return rc;
}
