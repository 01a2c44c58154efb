/* tcnla hosvd: random-projection HOSVD ([Ootomo & Yokota 2023] Algorithm 2) of a generated
 * Tucker tensor (Algorithm 3) or of an order-N .npy array (--input, e.g.
 * written by `tcnla gen --kind tucker`); relative reconstruction error, time,
 * and the speedup over the plain FP32 pipeline. */
#include "cli.h"
#include "io/io.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXN TCNLA_HOSVD_MAX_ORDER


static void help(void) {
    printf(
        "usage: tcnla hosvd [options]\n\n"
        "Random-projection HOSVD ([Ootomo & Yokota 2023] Algorithm 2): A ~ core x_1 Q_1 ...\n"
        "x_N Q_N of a generated Tucker tensor ([Ootomo & Yokota 2023] Algorithm 3: a U(-1,1)\n"
        "core of J_1 x ... x J_N multiplied in every mode by products of uniform matrices,\n"
        "multilinear rank J_i - pad),\n"
        "or of a tensor read from a .npy file (--input).\n"
        "Prints the relative reconstruction error ||A - core x_1 Q_1 ... x_N Q_N||_F / ||A||_F\n"
        "(reconstructed on the host with FP32 BLAS), the time, and the same for the plain FP32\n"
        "pipeline (projections and mode products native_fp32, FP32 random matrix, the same\n"
        "--orth) with the speedup.\n\n"
        "options (defaults in brackets):\n"
        "  --input FILE.npy  the tensor: an order-N NumPy array (2 <= N <= 8, float32 or float64,\n"
        "                    C or Fortran order) of shape (I1, ..., IN), such as `tcnla gen\n"
        "                    --kind tucker` writes; mode i is axis i (.mtx holds matrices only);\n"
        "                    a pipe is read as it comes, a FIFO waited on for a writer at most\n"
        "                    10 s ($TCNLA_FIFO_WAIT); float64 values float32 cannot hold\n"
        "                    (overflow, or nonzero underflow to 0) are an error\n"
        "                    [none: generate the tensor from --dims, --ranks, --pad, --seed]\n"
        "  --dims I1,I2,...  tensor dimensions, 2 to 8 of them, first index fastest [256,256,256]\n"
        "  --ranks J1,J2,... target multilinear ranks, one per mode, J_i <= I_i [32,32,32]\n"
        "                    (with --input: [min(32, I_i) for every mode])\n"
        "  --pad P           the tensor's multilinear rank is J_i - P (>= 1) [4]\n"
        "  --proj M          GEMM of the random projections: shgemm_fp16, shgemm_tf32,\n"
        "                    tcec_fp16, tcec_tf32, native_fp32, ...\n"
        "                    [shgemm_fp16 on a GPU, native_fp32 on the CPU]\n"
        "  --gemm M          the core's mode products (not shgemm_*); products on the\n"
        "                    intermediate tensors run tcec_fp16's full-range partner\n"
        "                    tcec_tf32 [tcec_fp16 on a GPU, native_fp32 on the CPU]\n"
        "  --orth O          householder, cholqr_fp32, cholqr_fp64, cholqr2_fp64 [cholqr2_fp64]\n"
        "  --random-format F fp32, fp16, bf16, tf32, e4m3, e5m2 (shgemm_* needs fp16) [fp16]\n"
        "  --reps N          timed runs after a warm-up, median reported [3 on a GPU, 1 on the CPU]\n"
        "  --no-baseline     skip the FP32 pipeline\n"
        "  --backend auto|cpu|cuda [auto]   --seed N [1]   --json\n\n"
        "On the CPU, Tensor Core methods run on a bit-faithful but slow model of the Tensor Core,\n"
        "which is why the CPU defaults are native FP32.\n");
}

/* Declared in cli.h: "a,b,c" -> 2 to TCNLA_HOSVD_MAX_ORDER integers in [lo, hi]
 * (the dimensions or ranks of a tensor, for hosvd and gen); returns the count
 * or -1 (message printed, naming `cmd`). */
int cli_int_list(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                 int64_t *out) {
    int cnt = 0;
    const char *p = s;
    for (;;) {
        char tok[32];
        size_t len = strcspn(p, ",");
        if (cnt == MAXN || len == 0 || len >= sizeof tok) {
            fprintf(stderr, "tcnla %s: %s: '%s' is not a list of 2 to %d integers in [%lld, %lld]\n",
                    cmd, opt, s, MAXN, (long long)lo, (long long)hi);
            return -1;
        }
        memcpy(tok, p, len);
        tok[len] = 0;
        if (cli_int(opt, tok, lo, hi, &out[cnt])) return -1;
        cnt++;
        if (!p[len]) break;
        p += len + 1;
    }
    if (cnt < 2) {
        fprintf(stderr, "tcnla %s: %s: '%s': a tensor needs at least 2 modes\n", cmd, opt, s);
        return -1;
    }
    return cnt;
}

static void progress(int on, const char *msg) {
    if (on) fprintf(stderr, "tcnla hosvd: %s\n", msg);
}

static int timed_hosvd(tcnla_handle_t h, const tcnla_hosvd_opts_t *o, int order,
                       const int64_t *dims, const float *dA, float *dcore, float *const *dQ,
                       int reps, double *t) {
    double ts[64];
    int st = tcnla_hosvd(h, o, order, dims, dA, dcore, dQ); /* warm-up */
    if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
    for (int r = 0; r < reps && st == TCNLA_SUCCESS; r++) {
        double t0 = cli_now();
        st = tcnla_hosvd(h, o, order, dims, dA, dcore, dQ);
        if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
        ts[r] = cli_now() - t0;
    }
    if (st == TCNLA_SUCCESS) {
        qsort(ts, (size_t)reps, sizeof(double), cli_cmp_double);
        *t = ts[reps / 2];
    }
    return st;
}

/* ||A - core x_1 Q_1 ... x_N Q_N||_F / ||A||_F, expanding one mode at a time
 * with SGEMM over contiguous slabs (as src/randnla/hosvd.c does): for mode i
 * with L = cur_1 ... cur_{i-1}, T = cur_{i+1} ... cur_N, slab t of the output
 * (L x I_i) is slab t of the input (L x J_i) times Q_i^T. w1, w2 hold `total`
 * floats each. NAN when the sizes do not fit BLAS's integers. */
static double tucker_rel_error(int order, const int64_t *dims, const int64_t *ranks,
                               const float *A, const float *core, float *const *Q, float *w1,
                               float *w2) {
    int64_t cur[MAXN], total = 1, sz = 1;
    for (int i = 0; i < order; i++) cur[i] = ranks[i], sz *= ranks[i], total *= dims[i];
    memcpy(w1, core, sizeof(float) * (size_t)sz);
    float *in = w1, *out = w2;
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < order; i++) {
        int64_t L = 1, T = 1;
        for (int a = 0; a < i; a++) L *= cur[a];
        for (int a = i + 1; a < order; a++) T *= cur[a];
        const int iI = (int)dims[i], iJ = (int)ranks[i];
        if (L == 1) { /* Out (I x T) = Q (I x J) In (J x T) */
            const int iT = (int)T;
            sgemm_("N", "N", &iI, &iT, &iJ, &one, Q[i], &iI, in, &iJ, &zero, out, &iI);
        } else {
            const int iL = (int)L;
            for (int64_t t = 0; t < T; t++)
                sgemm_("N", "T", &iL, &iI, &iJ, &one, in + t * L * ranks[i], &iL, Q[i], &iI,
                       &zero, out + t * L * dims[i], &iL);
        }
        cur[i] = dims[i];
        float *x = in;
        in = out, out = x;
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < total; i++) {
        const double d = (double)in[i] - A[i];
        num += d * d;
        den += (double)A[i] * A[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void print_list(FILE *f, int order, const int64_t *v) {
    for (int i = 0; i < order; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)v[i]);
}

static const char *const value_opts[] = {"--input", "--dims", "--ranks", "--pad", "--reps",
                                         "--proj", "--gemm", "--orth", "--random-format", NULL};

int cmd_hosvd(int argc, char **argv) {
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    int64_t dims[MAXN] = {256, 256, 256}, ranks[MAXN] = {32, 32, 32}, pad = 4, reps = -1;
    int ndims = 3, nranks = 3, baseline = 1, proj_set = 0, gemm_set = 0, fmt_set = 0;
    int ranks_set = 0;
    const char *input = NULL, *gen_opt = NULL; /* gen_opt: --dims or --pad, given */
    tcnla_hosvd_opts_t o = tcnla_hosvd_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return EXIT_OK;
        } else if (!strcmp(a, "--no-baseline")) baseline = 0;
        else if (strncmp(a, "--", 2) || !a[2]) {
            fprintf(stderr, "tcnla hosvd: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        } else if (!cli_takes_value(a, value_opts)) return cli_unknown_opt("hosvd", a);
        else if (!(v = cli_value(argc, argv, &i))) return EXIT_USAGE;
        else if (!strcmp(a, "--input")) input = v;
        else if (!strcmp(a, "--dims")) {
            if ((ndims = cli_int_list("hosvd", a, v, 1, 1 << 24, dims)) < 0) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--ranks")) {
            if ((nranks = cli_int_list("hosvd", a, v, 1, 1 << 16, ranks)) < 0) return EXIT_USAGE;
            ranks_set = 1;
        } else if (!strcmp(a, "--pad")) {
            if (cli_int(a, v, 0, 1 << 16, &pad)) return EXIT_USAGE;
            gen_opt = a;
        } else if (!strcmp(a, "--reps")) {
            if (cli_int(a, v, 1, 64, &reps)) return EXIT_USAGE;
        } else if (!strcmp(a, "--proj") || !strcmp(a, "--gemm")) {
            tcnla_gemm_method_t mm;
            if (tcnla_gemm_method_from_name(v, &mm) || mm == TCNLA_GEMM_DEFAULT ||
                (a[2] == 'g' && (mm == TCNLA_GEMM_SHGEMM_FP16 || mm == TCNLA_GEMM_SHGEMM_TF32))) {
                fprintf(stderr, "tcnla hosvd: %s: unknown or unusable method '%s'\n", a, v);
                return EXIT_USAGE;
            }
            if (a[2] == 'p') o.proj_method = mm, proj_set = 1;
            else o.gemm_method = mm, gemm_set = 1;
        } else if (!strcmp(a, "--orth")) {
            int t = cli_name_arg("hosvd", a, v, cli_orth_names, 4, "method");
            if (t < 0) return EXIT_USAGE;
            o.orth = (tcnla_orth_t)t;
        } else if (!strcmp(a, "--random-format")) {
            int t = cli_name_arg("hosvd", a, v, cli_format_names, 6, "format");
            if (t < 0) return EXIT_USAGE;
            o.random_format = (tcnla_format_t)t, fmt_set = 1;
        } else {
            fprintf(stderr, "tcnla hosvd: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        }
    }
    o.seed = c.seed;
    if (input && gen_opt) {
        fprintf(stderr, "tcnla hosvd: %s describes the generated tensor; with --input the file "
                        "gives the tensor\n", gen_opt);
        return EXIT_USAGE;
    }
    float *Ain = NULL; /* the tensor read from --input */
    if (input) {
        tn_tensor t;
        if (tn_io_read_npy_tensor(input, TN_IO_AS_FLOAT, 0, &t, cli_errbuf, sizeof cli_errbuf)) {
            fprintf(stderr, "tcnla hosvd: %s\n", cli_errbuf);
            return EXIT_BADINPUT;
        }
        int bad = t.ndim < 2 || t.ndim > MAXN;
        int64_t cnt = 1;
        for (int i = 0; i < t.ndim && !bad; i++) cnt *= t.dims[i];
        if (bad || cnt == 0) {
            fprintf(stderr, "tcnla hosvd: %s: %s\n", input,
                    bad ? "not a tensor of 2 to 8 modes" : "the tensor has no elements");
            tn_tensor_free(&t);
            return EXIT_BADINPUT;
        }
        for (int64_t k = 0; k < cnt; k++)
            if (!isfinite(((const float *)t.data)[k])) {
                fprintf(stderr, "tcnla hosvd: %s: the tensor holds NaN or Inf (element %lld in "
                        "memory order, first index fastest)\n", input, (long long)k);
                tn_tensor_free(&t);
                return EXIT_BADINPUT;
            }
        ndims = t.ndim;
        for (int i = 0; i < ndims; i++) {
            dims[i] = t.dims[i];
            if (!ranks_set) ranks[i] = dims[i] < 32 ? dims[i] : 32;
        }
        if (!ranks_set) nranks = ndims;
        Ain = t.data; /* owned from here on */
    }
    const int order = ndims;
    if (nranks != ndims) {
        if (input)
            fprintf(stderr, "tcnla hosvd: %s: the tensor has %d modes but --ranks has %d\n",
                    input, ndims, nranks);
        else
            fprintf(stderr, "tcnla hosvd: --dims has %d modes but --ranks has %d\n", ndims, nranks);
        free(Ain);
        return input ? EXIT_BADINPUT : EXIT_USAGE;
    }
    int64_t total = 1, core_sz = 1;
    for (int i = 0; i < order; i++) {
        if (input && ranks[i] > dims[i]) {
            fprintf(stderr, "tcnla hosvd: %s: mode %d: rank J = %lld exceeds I = %lld\n", input,
                    i + 1, (long long)ranks[i], (long long)dims[i]);
            free(Ain);
            return EXIT_BADINPUT;
        }
        if (!input && (ranks[i] > dims[i] || ranks[i] - pad < 1)) {
            fprintf(stderr,
                    "tcnla hosvd: mode %d: need pad < J <= I, got I = %lld, J = %lld, pad = %lld\n",
                    i + 1, (long long)dims[i], (long long)ranks[i], (long long)pad);
            return EXIT_USAGE;
        }
        if (total > INT32_MAX / dims[i]) {
            fprintf(stderr, "tcnla hosvd: %s%sthe tensor has more than 2^31 - 1 elements\n",
                    input ? input : "", input ? ": " : "");
            free(Ain);
            return EXIT_BADINPUT;
        }
        total *= dims[i];
        core_sz *= ranks[i];
    }
    const int tty = isatty(2);
    tcnla_handle_t h;
    int rc = cli_open(&c, &h);
    if (rc) {
        free(Ain);
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
    if ((o.proj_method == TCNLA_GEMM_SHGEMM_FP16 || o.proj_method == TCNLA_GEMM_SHGEMM_TF32) &&
        o.random_format != TCNLA_FMT_FP16) {
        fprintf(stderr, "tcnla hosvd: --proj %s needs --random-format fp16%s\n",
                tcnla_gemm_method_name(o.proj_method), fmt_set ? "" : " (the default)");
        tcnla_destroy(h);
        free(Ain);
        return EXIT_USAGE;
    }
    if (reps < 0) reps = be == TCNLA_BACKEND_CUDA ? 3 : 1;

    float *A = input ? Ain : malloc(sizeof(float) * (size_t)total);
    float *core = malloc(sizeof(float) * (size_t)core_sz);
    float *w1 = malloc(sizeof(float) * (size_t)total), *w2 = malloc(sizeof(float) * (size_t)total);
    float *Q[MAXN] = {0}, *dQ[MAXN] = {0}, *dA = NULL, *dcore = NULL;
    int st = TCNLA_SUCCESS, qok = 1;
    for (int i = 0; i < order; i++)
        qok &= (Q[i] = malloc(sizeof(float) * (size_t)(dims[i] * ranks[i]))) != NULL;
    if (!A || !core || !w1 || !w2 || !qok) {
        fprintf(stderr, "tcnla hosvd: out of host memory for a tensor of %lld elements\n",
                (long long)total);
        rc = EXIT_BADINPUT;
        goto out;
    }
    if (!input) progress(tty, "generating the Tucker tensor");
    if (!input && tn_testmat_tucker(order, dims, ranks, pad, c.seed, A)) {
        fprintf(stderr, "tcnla hosvd: out of host memory generating the tensor\n");
        rc = EXIT_BADINPUT;
        goto out;
    }
    if ((st = tcnla_malloc(h, (void **)&dA, sizeof(float) * (size_t)total)) ||
        (st = tcnla_malloc(h, (void **)&dcore, sizeof(float) * (size_t)core_sz)) ||
        (st = tcnla_memcpy(h, dA, A, sizeof(float) * (size_t)total, TCNLA_MEMCPY_HOST_TO_HANDLE))) {
        rc = cli_fail("allocating device memory", st);
        goto out;
    }
    for (int i = 0; i < order; i++)
        if ((st = tcnla_malloc(h, (void **)&dQ[i], sizeof(float) * (size_t)(dims[i] * ranks[i])))) {
            rc = cli_fail("allocating device memory", st);
            goto out;
        }
    for (int i = 0; i < order; i++) o.ranks[i] = ranks[i];

    double t_base = -1, err_base = -1, t = 0, e;
#define FETCH()                                                                                   \
    do {                                                                                          \
        tcnla_memcpy(h, core, dcore, sizeof(float) * (size_t)core_sz,                             \
                     TCNLA_MEMCPY_HANDLE_TO_HOST);                                                \
        for (int i_ = 0; i_ < order; i_++)                                                        \
            tcnla_memcpy(h, Q[i_], dQ[i_], sizeof(float) * (size_t)(dims[i_] * ranks[i_]),        \
                         TCNLA_MEMCPY_HANDLE_TO_HOST);                                            \
    } while (0)
    if (baseline) {
        tcnla_hosvd_opts_t b = o;
        b.proj_method = b.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        b.random_format = TCNLA_FMT_FP32;
        progress(tty, "plain FP32 pipeline (SGEMM, FP32 random matrices)");
        if ((st = timed_hosvd(h, &b, order, dims, dA, dcore, dQ, (int)reps, &t_base))) {
            rc = cli_fail("FP32 baseline", st);
            goto out;
        }
        FETCH();
        err_base = tucker_rel_error(order, dims, ranks, A, core, Q, w1, w2);
    }
    progress(tty, "RP-HOSVD");
    if ((st = timed_hosvd(h, &o, order, dims, dA, dcore, dQ, (int)reps, &t))) {
        rc = cli_fail(tcnla_gemm_method_name(o.proj_method), st);
        goto out;
    }
    FETCH();
#undef FETCH
    progress(tty, "reconstruction error");
    e = tucker_rel_error(order, dims, ranks, A, core, Q, w1, w2);
    if (!isfinite(e)) {
        fprintf(stderr, "tcnla hosvd: the decomposition is not finite\n");
        rc = EXIT_NUMERICAL;
        goto out;
    }
    if (c.json) {
        char list[2][MAXN * 24 + 4];
        for (int q = 0; q < 2; q++) {
            size_t w = 0;
            list[q][w++] = '[';
            for (int i = 0; i < order; i++)
                w += (size_t)snprintf(list[q] + w, sizeof list[q] - w, "%s%lld", i ? "," : "",
                                      (long long)(q ? ranks[i] : dims[i]));
            snprintf(list[q] + w, sizeof list[q] - w, "]");
        }
        cli_json j;
        cli_jbegin(&j, stdout);
        cli_jstr(&j, "command", "hosvd");
        cli_jstr(&j, "backend", cli_backend_name(be));
        cli_jstr(&j, "device", dev);
        cli_jint(&j, "order", order);
        cli_jraw(&j, "dims", list[0]);
        cli_jraw(&j, "ranks", list[1]);
        cli_jstr(&j, "input", input);
        if (input) cli_jraw(&j, "pad", "null");
        else cli_jint(&j, "pad", pad);
        cli_jstr(&j, "proj", tcnla_gemm_method_name(o.proj_method));
        cli_jstr(&j, "gemm", tcnla_gemm_method_name(o.gemm_method));
        cli_jstr(&j, "orth", cli_orth_names[o.orth]);
        cli_jstr(&j, "random_format", cli_format_names[o.random_format]);
        cli_jerror_timing(&j, e, t, reps, baseline, t_base, err_base);
        cli_jend(&j);
    } else {
        printf("tcnla hosvd on %s (%s backend): ", dev, cli_backend_name(be));
        print_list(stdout, order, dims);
        if (input) printf(" tensor from %s, ranks ", input);
        else printf(" Tucker tensor of multilinear rank J - %lld, ranks ", (long long)pad);
        print_list(stdout, order, ranks);
        printf("\n  methods: projections %s (random matrix %s), mode products %s, orth %s\n",
               tcnla_gemm_method_name(o.proj_method), cli_format_names[o.random_format],
               tcnla_gemm_method_name(o.gemm_method), cli_orth_names[o.orth]);
        printf("  ||A - core x Q||_F / ||A||_F  %.4e\n", e);
        printf("  time (median of %lld)         %.4f s\n", (long long)reps, t);
        if (baseline)
            printf("  plain FP32 pipeline           %.4f s, error %.4e   speedup %.2fx\n", t_base,
                   err_base, t > 0 ? t_base / t : 0.0);
    }
out:
    for (int i = 0; i < order; i++) {
        free(Q[i]);
        tcnla_free(h, dQ[i]);
    }
    tcnla_free(h, dA);
    tcnla_free(h, dcore);
    free(A);
    free(core);
    free(w1);
    free(w2);
    tcnla_destroy(h);
    return rc;
}
