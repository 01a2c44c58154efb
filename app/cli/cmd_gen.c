/* tcnla gen: writes a test matrix of the seeds to a .npy file (a known
 * spectrum, a Cauchy matrix or a low-rank product), and for the spectrum
 * kinds the optimal rank-k residual, so that any tool can be checked on it;
 * or a Tucker tensor ([Ootomo & Yokota 2023] Algorithm 3, the input of RP-HOSVD) as an
 * order-N .npy array that `tcnla hosvd --input` reads back. */
#include "cli.h"
#include "io/io.h"
#include "testmat/testmat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LATMS_MAX 1024 /* larger matrices use tn_testmat_svd_fast */

static const char *const kind_names[] = {"exp", "linear", "poly", "cauchy", "lowrank", "tucker"};
enum { K_EXP, K_LINEAR, K_POLY, K_CAUCHY, K_LOWRANK, K_TUCKER, K_COUNT };
#define MAXN TCNLA_HOSVD_MAX_ORDER

static void help(void) {
    printf(
        "usage: tcnla gen --output FILE.npy [options]\n\n"
        "Writes an m x n test matrix (column-major, Fortran-order .npy) and prints what it wrote.\n"
        "For the spectrum kinds it also prints the optimal rank-k residual (Eckart-Young):\n"
        "the Frobenius norm of the singular values from index k = --rank on, absolute and\n"
        "relative to ||A||_F. --kind tucker writes an order-N tensor instead.\n\n"
        "options (defaults in brackets):\n"
        "  --output FILE     the .npy file to write (required; its directory is checked\n"
        "                    first, the file written under a temporary name there and\n"
        "                    renamed at the end)\n"
        "  --kind K          exp:     s_i = 2^(-a i), s_p = 1e-3 ([Ootomo & Yokota 2023] 5.1.1)\n"
        "                    linear:  s_i = max(1 - a i, 1e-3), s_p = 1e-3\n"
        "                    poly:    s_i = 1 for i < p, then (i - p + 2)^-alpha\n"
        "                             ([Ootomo & Yokota 2023] 3.3)\n"
        "                    cauchy:  C C^T C, C_ij = 1 / (|x_i - y_j| + 1e-3)\n"
        "                             ([Ootomo & Yokota 2023] 5.1.1)\n"
        "                    lowrank: X Y^T, Gaussian X (m x p), Y (n x p)\n"
        "                             ([Baboulin et al. 2024] 4.1)\n"
        "                    tucker:  an I_1 x ... x I_N Tucker tensor ([Ootomo & Yokota\n"
        "                             2023] Algorithm 3, below), the input of `tcnla hosvd\n"
        "                             --input`\n"
        "                    [exp]\n"
        "  --m N --n N       size [512 512]\n"
        "  --rank P          the p of the spectra (and the k of the printed residual), the\n"
        "                    rank of lowrank; P <= min(m, n); unused by cauchy\n"
        "                    [32, or min(m, n) when smaller]\n"
        "  --alpha A         decay of poly [2]\n"
        "  --double          write float64 (the FP32 generator's values, widened exactly)\n"
        "                    [float32]\n"
        "  --seed N [1]      --json (one report on stdout)\n\n"
        "tucker only (instead of --m, --n, --rank, --alpha):\n"
        "  --dims I1,I2,...  tensor dimensions, 2 to %d of them [256,256,256]\n"
        "  --ranks J1,J2,... core dimensions, one per mode, J_i <= I_i [32,32,32]\n"
        "  --pad P           multilinear rank J_i - P (>= 1) [4]\n"
        "  A U(-1,1) core of J_1 x ... x J_N is multiplied in mode i by Oa Ob, Oa (J_i x\n"
        "  (J_i - P)) and Ob ((J_i - P) x I_i) uniform(-1,1): the tensor `tcnla hosvd` builds\n"
        "  from the same options and --seed. Written as a NumPy array of shape (I1, ..., IN)\n"
        "  in Fortran order: element [i1, ..., iN] is A(i1, ..., iN), first index fastest.\n\n"
        "Spectrum kinds are U diag(s) V^T with random orthogonal U, V: LAPACK slatms up to\n"
        "max(m, n) = %d (all min(m, n) singular values); above, orthonormal bases of rank\n"
        "r = min(min(m, n), 4 P + 64) and zero singular values beyond r (the residual printed\n"
        "is that of the matrix written). Values are rounded to FP32, which adds about 1e-7\n"
        "||A||_F to any residual.\n",
        MAXN, LATMS_MAX);
}

static void print_list(FILE *f, int order, const int64_t *v, const char *sep) {
    for (int i = 0; i < order; i++) fprintf(f, "%s%lld", i ? sep : "", (long long)v[i]);
}

/* --kind tucker: the tensor of [Ootomo & Yokota 2023] Algorithm 3 as an order-N .npy. */
static int gen_tucker(const cli_common *c, const char *output, int order, const int64_t *dims,
                      const int64_t *ranks, int64_t pad, int dbl) {
    int64_t total = 1;
    for (int i = 0; i < order; i++) {
        if (ranks[i] > dims[i] || ranks[i] - pad < 1) {
            fprintf(stderr,
                    "tcnla gen: mode %d: need pad < J <= I, got I = %lld, J = %lld, pad = %lld\n",
                    i + 1, (long long)dims[i], (long long)ranks[i], (long long)pad);
            return EXIT_USAGE;
        }
        if (total > INT32_MAX / dims[i]) {
            fprintf(stderr, "tcnla gen: the tensor has more than 2^31 - 1 elements\n");
            return EXIT_BADINPUT;
        }
        total *= dims[i];
    }
    float *A = malloc(sizeof(float) * (size_t)total);
    double *D = NULL;
    int rc = EXIT_OK;
    if (!A) {
        fprintf(stderr, "tcnla gen: out of memory for a tensor of %lld elements\n",
                (long long)total);
        return EXIT_BADINPUT;
    }
    if (isatty(2)) fprintf(stderr, "tcnla gen: generating\n");
    if (tn_testmat_tucker(order, dims, ranks, pad, c->seed, A)) {
        fprintf(stderr, "tcnla gen: out of memory generating the tensor\n");
        free(A);
        return EXIT_BADINPUT;
    }
    double fro = 0;
    for (int64_t i = 0; i < total; i++) fro += (double)A[i] * A[i];
    fro = sqrt(fro);
    tn_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = order, t.data = A;
    for (int i = 0; i < order; i++) t.dims[i] = dims[i];
    if (dbl) {
        if (!(D = malloc(sizeof(double) * (size_t)total))) {
            fprintf(stderr, "tcnla gen: out of memory for the float64 copy\n");
            free(A);
            return EXIT_BADINPUT;
        }
        for (int64_t i = 0; i < total; i++) D[i] = A[i];
        t.is_double = 1, t.data = D;
    }
    cli_outputs outs;
    static const char *const none[1] = {""};
    if ((rc = cli_outputs_open(&outs, "gen", output, none, 1, NULL))) {
        /* said */
    } else if (tn_io_write_npy_tensor(outs.tmp[0], &t, 0u, cli_errbuf, sizeof cli_errbuf)) {
        fprintf(stderr, "tcnla gen: %s (writing %s)\n", cli_errbuf, output);
        cli_outputs_abort(&outs);
        rc = EXIT_BADINPUT;
    } else if ((rc = cli_outputs_commit(&outs, "gen"))) {
        /* said */
    } else if (c->json) {
        int64_t mr[MAXN];
        for (int i = 0; i < order; i++) mr[i] = ranks[i] - pad;
        printf("{\"command\":\"gen\",\"output\":");
        cli_json_str(stdout, output);
        printf(",\"kind\":\"tucker\",\"order\":%d,\"dims\":[", order);
        print_list(stdout, order, dims, ",");
        printf("],\"ranks\":[");
        print_list(stdout, order, ranks, ",");
        printf("],\"pad\":%lld,\"multilinear_rank\":[", (long long)pad);
        print_list(stdout, order, mr, ",");
        printf("],\"dtype\":\"%s\",\"generator\":\"tucker\",\"seed\":%llu,\"fro_norm\":%.9e}\n",
               dbl ? "float64" : "float32", (unsigned long long)c->seed, fro);
    } else {
        printf("wrote %s: ", output);
        print_list(stdout, order, dims, " x ");
        printf(" %s Tucker tensor (Fortran order), core ", dbl ? "float64" : "float32");
        print_list(stdout, order, ranks, ",");
        printf(", pad %lld, seed %llu\n", (long long)pad, (unsigned long long)c->seed);
        printf("  ||A||_F = %.6e; multilinear rank J - %lld: a rank-(", fro, (long long)pad);
        for (int i = 0; i < order; i++) printf("%s%lld", i ? "," : "", (long long)(ranks[i] - pad));
        printf(") Tucker decomposition is exact up to FP32 rounding\n");
    }
    free(A);
    free(D);
    return rc;
}

static const char *const value_opts[] = {"--output", "--kind", "--m", "--n", "--rank",
                                         "--alpha", "--dims", "--ranks", "--pad", NULL};

int cmd_gen(int argc, char **argv) {
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    const char *output = NULL;
    int64_t m = 512, n = 512, p = 32;
    int64_t dims[MAXN] = {256, 256, 256}, ranks[MAXN] = {32, 32, 32}, pad = 4;
    double alpha = 2;
    int kind = K_EXP, dbl = 0, p_set = 0, ndims = 3, nranks = 3;
    const char *matrix_opt = NULL, *tensor_opt = NULL; /* an option of either kind, given */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return EXIT_OK;
        } else if (!strcmp(a, "--double")) dbl = 1;
        else if (strncmp(a, "--", 2) || !a[2]) {
            fprintf(stderr, "tcnla gen: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        } else if (!cli_takes_value(a, value_opts)) return cli_unknown_opt("gen", a);
        else if (!(v = cli_value(argc, argv, &i))) return EXIT_USAGE;
        else if (!strcmp(a, "--output")) output = v;
        else if (!strcmp(a, "--kind")) {
            kind = -1;
            for (int k = 0; k < K_COUNT; k++)
                if (!strcmp(v, kind_names[k])) kind = k;
            if (kind < 0) {
                fprintf(stderr, "tcnla gen: --kind: '%s' is not exp, linear, poly, cauchy, "
                                "lowrank or tucker\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--m")) {
            if (cli_int(a, v, 1, 1 << 20, &m)) return EXIT_USAGE;
            matrix_opt = a;
        } else if (!strcmp(a, "--n")) {
            if (cli_int(a, v, 1, 1 << 20, &n)) return EXIT_USAGE;
            matrix_opt = a;
        } else if (!strcmp(a, "--rank")) {
            if (cli_int(a, v, 1, 1 << 20, &p)) return EXIT_USAGE;
            p_set = 1, matrix_opt = a;
        } else if (!strcmp(a, "--alpha")) {
            if (cli_double(a, v, &alpha)) return EXIT_USAGE;
            if (alpha <= 0) {
                fprintf(stderr, "tcnla gen: --alpha: '%s' is not positive\n", v);
                return EXIT_USAGE;
            }
            matrix_opt = a;
        } else if (!strcmp(a, "--dims")) {
            if ((ndims = cli_int_list("gen", a, v, 1, 1 << 24, dims)) < 0) return EXIT_USAGE;
            tensor_opt = a;
        } else if (!strcmp(a, "--ranks")) {
            if ((nranks = cli_int_list("gen", a, v, 1, 1 << 16, ranks)) < 0) return EXIT_USAGE;
            tensor_opt = a;
        } else if (!strcmp(a, "--pad")) {
            if (cli_int(a, v, 0, 1 << 16, &pad)) return EXIT_USAGE;
            tensor_opt = a;
        } else {
            fprintf(stderr, "tcnla gen: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        }
    }
    if (!output) {
        fprintf(stderr, "tcnla gen: --output FILE.npy is required (see --help)\n");
        return EXIT_USAGE;
    }
    if (kind == K_TUCKER && matrix_opt) {
        fprintf(stderr, "tcnla gen: %s does not apply to --kind tucker (use --dims, --ranks, "
                        "--pad)\n", matrix_opt);
        return EXIT_USAGE;
    }
    if (kind != K_TUCKER && tensor_opt) {
        fprintf(stderr, "tcnla gen: %s is an option of --kind tucker\n", tensor_opt);
        return EXIT_USAGE;
    }
    if (kind == K_TUCKER) {
        if (nranks != ndims) {
            fprintf(stderr, "tcnla gen: --dims has %d modes but --ranks has %d\n", ndims, nranks);
            return EXIT_USAGE;
        }
        return gen_tucker(&c, output, ndims, dims, ranks, pad, dbl);
    }
    const int64_t mn = m < n ? m : n, mx = m > n ? m : n;
    if (!p_set && p > mn) p = mn;
    if (p > mn && kind != K_CAUCHY) {
        fprintf(stderr, "tcnla gen: --rank %lld exceeds min(m, n) = %lld\n", (long long)p,
                (long long)mn);
        return EXIT_USAGE;
    }
    if (m * n > INT32_MAX) {
        fprintf(stderr, "tcnla gen: %lld x %lld has more than 2^31 - 1 elements\n", (long long)m,
                (long long)n);
        return EXIT_BADINPUT;
    }
    const int spectral = kind <= K_POLY, latms = spectral && mx <= LATMS_MAX;
    const int64_t r = !spectral ? 0 : latms ? mn : (mn < 4 * p + 64 ? mn : 4 * p + 64);
    float *A = malloc(sizeof(float) * (size_t)(m * n));
    double *sigma = spectral ? malloc(sizeof(double) * (size_t)r) : NULL;
    int rc = EXIT_OK, st = 0;
    if (!A || (spectral && !sigma)) {
        fprintf(stderr, "tcnla gen: out of memory for a %lld x %lld matrix\n", (long long)m,
                (long long)n);
        rc = EXIT_BADINPUT;
        goto out;
    }
    if (isatty(2)) fprintf(stderr, "tcnla gen: generating\n");
    if (spectral) {
        if (kind == K_POLY) tn_spectrum(TN_SPEC_POLY, r, 0, 0, p, alpha, 1.0, sigma);
        else tn_spectrum(kind == K_EXP ? TN_SPEC_EXP : TN_SPEC_LINEAR, r, p, 1e-3, 0, 0, 0, sigma);
        st = latms ? tn_testmat_latms(m, n, sigma, c.seed, A, m)
                   : tn_testmat_svd_fast(m, n, r, sigma, c.seed, A, m);
    } else if (kind == K_CAUCHY) st = tn_testmat_cauchy(m, n, c.seed, A, m);
    else st = tn_testmat_lowrank(m, n, p, c.seed, A, m);
    if (st) {
        fprintf(stderr, "tcnla gen: generating the matrix failed (%s %d)\n",
                st == -1 ? "out of memory," : "LAPACK info", st);
        rc = st == -1 ? EXIT_BADINPUT : EXIT_NUMERICAL;
        goto out;
    }
    double tail = -1, rel = -1;
    if (spectral) { /* descending sigma: sum the tail from the smallest up */
        double t2 = 0, all2 = 0;
        for (int64_t i = r - 1; i >= 0; i--) {
            all2 += sigma[i] * sigma[i];
            if (i >= p) t2 += sigma[i] * sigma[i];
        }
        tail = sqrt(t2), rel = sqrt(t2 / all2);
    }
    double fro = 0;
    for (int64_t i = 0; i < m * n; i++) fro += (double)A[i] * A[i];
    fro = sqrt(fro);
    tn_matrix mat = {m, n, 0, 0, A};
    double *D = NULL;
    if (dbl) {
        D = malloc(sizeof(double) * (size_t)(m * n));
        if (!D) {
            fprintf(stderr, "tcnla gen: out of memory for the float64 copy\n");
            rc = EXIT_BADINPUT;
            goto out;
        }
        for (int64_t i = 0; i < m * n; i++) D[i] = A[i];
        mat.is_double = 1, mat.data = D;
    }
    cli_outputs outs;
    static const char *const none[1] = {""};
    if ((rc = cli_outputs_open(&outs, "gen", output, none, 1, NULL))) {
        free(D);
        goto out;
    }
    rc = cli_outputs_write(&outs, 0, "gen", &mat, 0u);
    free(D);
    if (rc || (rc = cli_outputs_commit(&outs, "gen"))) goto out;
    const char *gen = spectral ? (latms ? "latms" : "svd_fast") : kind == K_CAUCHY ? "cauchy" : "lowrank";
    if (c.json) {
        cli_json j;
        cli_jbegin(&j, stdout);
        cli_jstr(&j, "command", "gen");
        cli_jstr(&j, "output", output);
        cli_jstr(&j, "kind", kind_names[kind]);
        cli_jint(&j, "m", m);
        cli_jint(&j, "n", n);
        cli_jint(&j, "rank", p);
        cli_jstr(&j, "dtype", dbl ? "float64" : "float32");
        cli_jstr(&j, "generator", gen);
        cli_jint(&j, "seed", (long long)c.seed);
        cli_jnum(&j, "fro_norm", "%.9e", fro);
        if (spectral) {
            cli_jint(&j, "nonzero_sv", r);
            cli_jnum(&j, "sigma_1", "%.9e", sigma[0]);
            cli_jnum(&j, "sigma_k", "%.9e", p < r ? sigma[p] : 0.0);
            cli_jnum(&j, "tail", "%.9e", tail);
            cli_jnum(&j, "optimal_rel_residual", "%.9e", rel);
        } else { /* known for lowrank (0), not for cauchy */
            cli_jraw(&j, "tail", kind == K_LOWRANK ? "0" : "null");
            cli_jraw(&j, "optimal_rel_residual", kind == K_LOWRANK ? "0" : "null");
        }
        cli_jend(&j);
    } else {
        printf("wrote %s: %lld x %lld %s, kind %s, rank parameter %lld, seed %llu (%s)\n", output,
               (long long)m, (long long)n, dbl ? "float64" : "float32", kind_names[kind],
               (long long)p, (unsigned long long)c.seed, gen);
        printf("  ||A||_F = %.6e\n", fro);
        if (spectral)
            printf("  optimal rank-%lld residual: ||A - A_k||_F = %.6e, relative %.6e\n",
                   (long long)p, tail, rel);
        else if (kind == K_LOWRANK)
            printf("  rank %lld: the optimal rank-%lld residual is 0 (up to FP32 rounding)\n",
                   (long long)p, (long long)p);
    }
out:
    free(A);
    free(sigma);
    return rc;
}
