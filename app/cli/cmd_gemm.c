/* tcnla gemm: one FP32 GEMM by a chosen method on generated inputs, its
 * relative Frobenius error against the FP64 product of the same inputs
 * ([Ootomo & Yokota 2021] eq. 6), the same for NATIVE_FP32 as a yardstick, and the time. */
#include "cli.h"
#include "testmat/testdata.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int kind; /* 0 uniform(lo,hi), 1 normal(0,1), 2 exp_rand(a,b), 3 phi [Mukunoki et al. 2020] */
    double lo, hi;
    int ea, eb;
    char text[64];
} dist_t;

#define TN_MAX(a, b) ((a) > (b) ? (a) : (b))

/* The methods the CPU backend computes with its Tensor Core model (the
 * Ozaki schemes' slice products are exact: no model parameters apply). */
static int tc_model_method(tcnla_gemm_method_t m) {
    return m >= TCNLA_GEMM_TF32 && m <= TCNLA_GEMM_SHGEMM_TF32;
}

static int parse_dist(const char *s, dist_t *d) {
    memset(d, 0, sizeof *d);
    snprintf(d->text, sizeof d->text, "%s", s);
    if (!strcmp(s, "uniform")) {
        d->kind = 0, d->lo = -1, d->hi = 1;
        return 0;
    }
    if (!strcmp(s, "normal")) {
        d->kind = 1;
        return 0;
    }
    if (sscanf(s, "uniform:%lf:%lf", &d->lo, &d->hi) == 2 && d->lo < d->hi &&
        isfinite((float)d->lo) && isfinite((float)d->hi)) {
        d->kind = 0;
        return 0;
    }
    if (sscanf(s, "exp_rand:%d:%d", &d->ea, &d->eb) == 2 && d->ea < d->eb && d->ea >= -149 &&
        d->eb <= 128) {
        d->kind = 2;
        return 0;
    }
    if (sscanf(s, "phi:%lf", &d->lo) == 1 && d->lo >= 0 && d->lo <= 20) {
        d->kind = 3;
        return 0;
    }
    fprintf(stderr,
            "tcnla gemm: --dist '%s': expected uniform, uniform:LO:HI, normal, "
            "exp_rand:A:B (integers, -149 <= A < B <= 128) or phi:P (0 <= P <= 20)\n",
            s);
    return -1;
}

/* FP64 data for --precision double: phi in full FP64, the others as FP32 */
static void fill_d(const dist_t *d, uint64_t seed, uint64_t stream, int64_t n, double *x) {
    if (d->kind == 3) {
        tn_rand_phi(seed, stream, d->lo, n, x);
        return;
    }
    float *t = (float *)x + n; /* the upper half of x, read before it is overwritten */
    if (d->kind == 0) tcnla_rand_uniform(seed, stream, (float)d->lo, (float)d->hi, n, t);
    else if (d->kind == 1) tcnla_rand_normal(seed, stream, 0.0f, 1.0f, n, t);
    else tn_rand_exp(seed, stream, d->ea, d->eb, n, t);
    for (int64_t i = 0; i < n; i++) x[i] = t[i];
}

static void fill(const dist_t *d, uint64_t seed, uint64_t stream, int64_t n, float *x) {
    if (d->kind == 0) tcnla_rand_uniform(seed, stream, (float)d->lo, (float)d->hi, n, x);
    else if (d->kind == 1) tcnla_rand_normal(seed, stream, 0.0f, 1.0f, n, x);
    else if (d->kind == 2) tn_rand_exp(seed, stream, d->ea, d->eb, n, x);
    else {
        double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
        if (!t) {
            for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
            return;
        }
        tn_rand_phi(seed, stream, d->lo, n, t);
        for (int64_t i = 0; i < n; i++) x[i] = (float)t[i];
        free(t);
    }
}

/* ||C - R||_F / ||R||_F; with vs (--vector-scale: vs[i], vs[m + j] the
 * exponents of row i and column j) on C and R times 2^-(e_i + f_j), exact,
 * so that every element counts and not the few of the largest scale */
static double rel_err(const float *C, const double *R, int64_t n, const int *vs, int64_t m) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const int s = vs ? -(vs[i % m] + vs[m + i / m]) : 0;
        double e = ldexp((double)C[i] - R[i], s);
        const double r = ldexp(R[i], s);
        num += e * e;
        den += r * r;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void help(void) {
    printf(
        "usage: tcnla gemm [options]\n\n"
        "Computes C = alpha*op(A)*op(B) + beta*C in FP32 with one method on generated inputs\n"
        "and prints its relative Frobenius error ||C - C64||_F / ||C64||_F against the FP64\n"
        "product of the same inputs, the NATIVE_FP32 error on the same inputs and the ratio of\n"
        "the two, and the time (median of --reps runs).\n\n"
        "options (defaults in brackets):\n"
        "  --method M        native_fp32, native_fp64, tf32, fp16, markidis_fp16, tcec_fp16,\n"
        "                    tcec_tf32, shgemm_fp16, shgemm_tf32, ozaki_fp16, ozaki_int8\n"
        "                    [tcec_fp16] (with --precision double: [ozaki_int8])\n"
        "  --precision P     single (tcnla_sgemm) or double (tcnla_dgemm: native_fp64,\n"
        "                    ozaki_fp16, ozaki_int8; errors against the correctly rounded\n"
        "                    product, the yardstick is native_fp64) [single]\n"
        "  --mode M          Ozaki scheme: dp, cr, auto (dp's accuracy; the native GEMM where\n"
        "                    the cost model predicts it faster) or fixed:N (N slices, or N\n"
        "                    moduli with --scheme 2) [dp]\n"
        "  --scheme S        Ozaki scheme: auto, 1 (slices) or 2 (INT8 moduli, CRT) [auto]\n"
        "  --m N --n N --k N sizes [256 256 1024]\n"
        "  --dist D          uniform (= uniform:-1:1), uniform:LO:HI, normal, exp_rand:A:B\n"
        "                    (random sign, exponent uniform in A..B-1, 23 random fraction bits),\n"
        "                    phi:P ((rand - 0.5) exp(P randn), [Mukunoki et al. 2020])\n"
        "                    [uniform]\n"
        "  --dist-b D        distribution of B [same as --dist]\n"
        "  --transa, --transb  use op = transpose (A stored k x m, B stored n x k)\n"
        "  --alpha X --beta X  [1 0]; with beta != 0, C starts as uniform(-1,1); in single\n"
        "                    precision they must be float32 values (not Inf or 0 once\n"
        "                    rounded)\n"
        "  --reps N          timed runs after one warm-up [1]\n"
        "  --vector-scale E  multiply each row of op(A) by 2^e and each column of op(B) by\n"
        "                    2^f, e and f random integers in -E..E (0..126; single precision)\n"
        "                    [0]: FP16 methods scale such operands back exactly (rows of op(A),\n"
        "                    columns of op(B) by powers of two), reported as 'exact scaling';\n"
        "                    errors are then measured on C and the FP64 product times\n"
        "                    2^-(e+f) (exact), where every element counts\n"
        "  --range-fallback  where an FP16 method cannot scale its operands (docs/api.md,\n"
        "                    TCNLA_EXACT_SCALING=0), fall back to the TF32 variant instead of\n"
        "                    failing (exit status 3)\n"
        "  --no-compare      skip the NATIVE_FP32 comparison\n"
        "  --tc-bits B --tc-k K --tc-chunk C   CPU Tensor Core model: accumulator bits (24|25),\n"
        "                    products per instruction (8|16), hi*hi chunk [25 16 16]\n"
        "  --backend auto|cpu|cuda [auto]   --seed N [1]   --json\n\n"
        "The CPU backend runs the Tensor Core methods on an instruction-exact model: expect\n"
        "about 10 ns per modelled product (keep m*n*k small there).\n");
}

/* Row i of op(A) times 2^e_i, column j of op(B) times 2^f_j, e and f
 * uniform integers in -E..E (Philox stream 4 of the seed) */
static void scale_vectors(uint64_t seed, int64_t E, int64_t m, int64_t n, int64_t k, int ta,
                          int tb, float *A, int64_t lda, float *B, int64_t ldb, int *vs) {
    float *u = malloc(sizeof(float) * (size_t)(m + n) + 1);
    if (!u) return;
    tcnla_rand_uniform(seed, 4, 0.0f, 1.0f, m + n, u);
    for (int64_t i = 0; i < m; i++) {
        const int e = (int)floorf(u[i] * (float)(2 * E + 1)) - (int)E;
        vs[i] = e > E ? (int)E : e;
        for (int64_t p = 0; p < k; p++) {
            float *x = ta ? &A[p + i * lda] : &A[i + p * lda];
            *x = ldexpf(*x, e > E ? (int)E : e);
        }
    }
    for (int64_t j = 0; j < n; j++) {
        const int f = (int)floorf(u[m + j] * (float)(2 * E + 1)) - (int)E;
        vs[m + j] = f > E ? (int)E : f;
        for (int64_t p = 0; p < k; p++) {
            float *x = tb ? &B[j + p * ldb] : &B[p + j * ldb];
            *x = ldexpf(*x, f > E ? (int)E : f);
        }
    }
    free(u);
}

static double max_rel_d(const double *C, const double *R, int64_t n) {
    double e = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(C[i] - R[i]) / (R[i] != 0 ? fabs(R[i]) : 1.0);
        if (d > e) e = d;
    }
    return e;
}
static double rel_err_d(const double *C, const double *R, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) num += (C[i] - R[i]) * (C[i] - R[i]), den += R[i] * R[i];
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* --precision double: tcnla_dgemm with the method and Ozaki options, errors
 * (relative Frobenius and largest elementwise) against the correctly
 * rounded product (scheme 1 CR on the CPU), NATIVE_FP64 as the yardstick */
static int gemm_double(const cli_common *c, tcnla_gemm_method_t method, int64_t m, int64_t n,
                       int64_t k, int ta, int tb, double alpha, double beta, const dist_t *da,
                       const dist_t *db, int64_t reps, const tcnla_ozaki_opts_t *oz,
                       int compare) {
    tcnla_handle_t h, ref;
    int rc = cli_open(c, &h);
    if (rc) return rc;
    if (tcnla_create(&ref, TCNLA_BACKEND_CPU)) {
        tcnla_destroy(h);
        fprintf(stderr, "tcnla gemm: cannot create a CPU handle for the reference\n");
        return EXIT_BADINPUT;
    }
    int st = tcnla_set_ozaki_opts(h, oz);
    tcnla_ozaki_opts_t ro = tcnla_ozaki_opts_default();
    ro.mode = TCNLA_OZAKI_CR;
    ro.scheme = TCNLA_OZAKI_SCHEME_1;
    if (!st) st = tcnla_set_ozaki_opts(ref, &ro);
    if (st) {
        tcnla_destroy(h), tcnla_destroy(ref);
        return cli_fail("--mode / --scheme", st);
    }
    tcnla_backend_t be;
    char dev[256];
    tcnla_get_backend(h, &be);
    tcnla_device_name(h, dev, sizeof dev);
    const int64_t lda = ta ? TN_MAX(1, k) : TN_MAX(1, m), ldb = tb ? TN_MAX(1, n) : TN_MAX(1, k);
    const size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    double *A = malloc(sizeof(double) * (na + nb + 3 * nc) + 8);
    void *dA = NULL, *dB = NULL, *dC = NULL;
    double times[1000], err = 0, emax = 0, err_n = -1, emax_n = -1, t_n = -1;
    int scheme = 0, slices = 0;
    tcnla_gemm_method_t used = method;
    tcnla_info_t info = {0};
    if (!A) {
        tcnla_destroy(h), tcnla_destroy(ref);
        fprintf(stderr, "tcnla gemm: out of host memory\n");
        return EXIT_BADINPUT;
    }
    double *B = A + na, *C0 = B + nb, *C = C0 + nc, *R = C + nc;
    fill_d(da, c->seed, 1, (int64_t)na, A);
    fill_d(db, c->seed, 2, (int64_t)nb, B);
    tn_rand_phi(c->seed, 3, 0.0, (int64_t)nc, C0);
    memcpy(R, C0, sizeof(double) * nc);
    if (m && n &&
        (st = tcnla_dgemm(ref, TCNLA_GEMM_OZAKI_INT8, ta ? TCNLA_OP_T : TCNLA_OP_N,
                          tb ? TCNLA_OP_T : TCNLA_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, R,
                          TN_MAX(1, m)))) {
        rc = cli_fail("the reference", st);
        goto out;
    }
    if ((st = tcnla_malloc(h, &dA, sizeof(double) * na + 8)) ||
        (st = tcnla_malloc(h, &dB, sizeof(double) * nb + 8)) ||
        (st = tcnla_malloc(h, &dC, sizeof(double) * nc + 8)) ||
        (st = tcnla_memcpy(h, dA, A, sizeof(double) * na, TCNLA_MEMCPY_HOST_TO_HANDLE)) ||
        (st = tcnla_memcpy(h, dB, B, sizeof(double) * nb, TCNLA_MEMCPY_HOST_TO_HANDLE))) {
        rc = cli_fail("allocating the inputs", st);
        goto out;
    }
    for (int pass = compare && method != TCNLA_GEMM_NATIVE_FP64 ? 0 : 1; pass < 2; pass++) {
        tcnla_gemm_method_t mm = pass == 0 ? TCNLA_GEMM_NATIVE_FP64 : method;
        int64_t runs = reps + (reps > 1 ? 1 : 0);
        for (int64_t r = 0; r < runs && !st; r++) {
            if ((st = tcnla_memcpy(h, dC, C0, sizeof(double) * nc, TCNLA_MEMCPY_HOST_TO_HANDLE)))
                break;
            tcnla_synchronize(h);
            double t0 = cli_now();
            st = tcnla_dgemm_ex(h, mm, ta ? TCNLA_OP_T : TCNLA_OP_N, tb ? TCNLA_OP_T : TCNLA_OP_N,
                                m, n, k, alpha, dA, lda, dB, ldb, beta, dC, TN_MAX(1, m), &info);
            if (!st) st = tcnla_synchronize(h);
            if (!st && r >= runs - reps) times[r - (runs - reps)] = cli_now() - t0;
        }
        if (!st) st = tcnla_memcpy(h, C, dC, sizeof(double) * nc, TCNLA_MEMCPY_HANDLE_TO_HOST);
        if (st) {
            rc = cli_fail(tcnla_gemm_method_name(mm), st);
            goto out;
        }
        qsort(times, (size_t)reps, sizeof(double), cli_cmp_double);
        if (pass == 0) {
            err_n = rel_err_d(C, R, (int64_t)nc), emax_n = max_rel_d(C, R, (int64_t)nc);
            t_n = times[reps / 2];
        } else {
            err = rel_err_d(C, R, (int64_t)nc), emax = max_rel_d(C, R, (int64_t)nc);
            used = info.method;
            if (used == TCNLA_GEMM_OZAKI_FP16 || used == TCNLA_GEMM_OZAKI_INT8) {
                scheme = info.ozaki_scheme;
                slices = info.ozaki_d;
            }
        }
    }
    {
        const double t = times[reps / 2], flops = 2.0 * (double)m * (double)n * (double)k;
        const char *md = oz->mode == TCNLA_OZAKI_DP     ? "dp"
                         : oz->mode == TCNLA_OZAKI_CR   ? "cr"
                         : oz->mode == TCNLA_OZAKI_AUTO ? "auto"
                                                        : "fixed";
        if (c->json) {
            cli_json j;
            cli_jbegin(&j, stdout);
            cli_jstr(&j, "command", "gemm");
            cli_jstr(&j, "precision", "double");
            cli_jstr(&j, "backend", cli_backend_name(be));
            cli_jstr(&j, "device", dev);
            cli_jstr(&j, "method", tcnla_gemm_method_name(method));
            cli_jstr(&j, "computed_with", tcnla_gemm_method_name(used));
            cli_jstr(&j, "mode", md);
            cli_jint(&j, "scheme", scheme);
            cli_jint(&j, "slices", slices);
            cli_jint(&j, "m", m);
            cli_jint(&j, "n", n);
            cli_jint(&j, "k", k);
            cli_jstr(&j, "dist_a", da->text);
            cli_jstr(&j, "dist_b", db->text);
            cli_jint(&j, "seed", (long long)c->seed);
            cli_jnum(&j, "rel_err", "%.6e", err);
            cli_jnum(&j, "max_rel_err", "%.6e", emax);
            /* not measured without the comparison: null */
            cli_jnum(&j, "native_fp64_rel_err", "%.6e", err_n >= 0 ? err_n : NAN);
            cli_jnum(&j, "native_fp64_max_rel_err", "%.6e", emax_n >= 0 ? emax_n : NAN);
            cli_jnum(&j, "seconds", "%.6e", t);
            cli_jnum(&j, "tflops", "%.4f", flops / t * 1e-12);
            cli_jnum(&j, "native_fp64_seconds", "%.6e", t_n >= 0 ? t_n : NAN);
            cli_jend(&j);
        } else {
            printf("tcnla gemm: %s (double) on %s (%s backend), m=%lld n=%lld k=%lld, A ~ %s, "
                   "B ~ %s, seed %llu\n",
                   tcnla_gemm_method_name(method), dev, cli_backend_name(be), (long long)m,
                   (long long)n, (long long)k, da->text, db->text, (unsigned long long)c->seed);
            if (used != method)
                printf("  note: computed with %s (%s)\n", tcnla_gemm_method_name(used),
                       oz->mode == TCNLA_OZAKI_AUTO ? "mode auto: the native GEMM predicted faster"
                                                    : "NaN/Inf input");
            if (scheme)
                printf("  Ozaki mode %s, scheme %d, %d %s\n", md, scheme, slices,
                       scheme == 2 ? "moduli" : "slices per operand");
            printf("  vs the correctly rounded product: rel. Frobenius %.3e, largest rel. %.3e\n",
                   err, emax);
            if (err_n >= 0)
                printf("  native_fp64, same input:         rel. Frobenius %.3e, largest rel. %.3e\n",
                       err_n, emax_n);
            printf("  time (median of %lld)          %.4f s   %.3f TFLOP/s", (long long)reps, t,
                   flops / t * 1e-12);
            if (t_n > 0) printf("   (native_fp64 %.4f s)", t_n);
            printf("\n");
        }
    }
out:
    tcnla_free(h, dA);
    tcnla_free(h, dB);
    tcnla_free(h, dC);
    free(A);
    tcnla_destroy(h);
    tcnla_destroy(ref);
    return rc;
}

static const char *const value_opts[] = {"--method", "--precision", "--mode", "--scheme", "--m",
                                         "--n", "--k", "--reps", "--dist", "--dist-b", "--alpha",
                                         "--beta", "--tc-bits", "--tc-k", "--tc-chunk", "--vector-scale",
                                         NULL};

int cmd_gemm(int argc, char **argv) {
    const char *alpha_s = NULL, *beta_s = NULL;
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    tcnla_gemm_method_t method = TCNLA_GEMM_TCEC_FP16;
    int64_t m = 256, n = 256, k = 1024, reps = 1, vscale = 0;
    int ta = 0, tb = 0, compare = 1, fallback = 0, have_db = 0;
    double alpha = 1, beta = 0;
    dist_t da, db;
    parse_dist("uniform", &da);
    tcnla_tc_model_t model = tcnla_tc_model_default();
    tcnla_ozaki_opts_t oz = tcnla_ozaki_opts_default();
    int dbl = 0, have_method = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int64_t t;
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return EXIT_OK;
        } else if (!strcmp(a, "--transa")) ta = 1;
        else if (!strcmp(a, "--transb")) tb = 1;
        else if (!strcmp(a, "--no-compare")) compare = 0;
        else if (!strcmp(a, "--range-fallback")) fallback = 1;
        else if (!cli_takes_value(a, value_opts)) return cli_unknown_opt("gemm", a);
        else if (!(v = cli_value(argc, argv, &i))) return EXIT_USAGE;
        else if (!strcmp(a, "--method")) {
            if (tcnla_gemm_method_from_name(v, &method) || method == TCNLA_GEMM_DEFAULT) {
                fprintf(stderr, "tcnla gemm: unknown method '%s' (see --help)\n", v);
                return EXIT_USAGE;
            }
            have_method = 1;
        } else if (!strcmp(a, "--precision")) {
            if (strcmp(v, "single") && strcmp(v, "double")) {
                fprintf(stderr, "tcnla gemm: --precision '%s': expected single or double\n", v);
                return EXIT_USAGE;
            }
            dbl = !strcmp(v, "double");
        } else if (!strcmp(a, "--mode")) {
            int nfix = 0;
            char extra;
            if (!strcmp(v, "dp")) oz.mode = TCNLA_OZAKI_DP;
            else if (!strcmp(v, "cr")) oz.mode = TCNLA_OZAKI_CR;
            else if (!strcmp(v, "auto")) oz.mode = TCNLA_OZAKI_AUTO;
            else if (sscanf(v, "fixed:%d%c", &nfix, &extra) == 1 && nfix >= 1 && nfix <= 64)
                oz.mode = TCNLA_OZAKI_FIXED, oz.slices = nfix;
            else {
                fprintf(stderr, "tcnla gemm: --mode '%s': expected dp, cr, auto or fixed:N (1..64)\n",
                        v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--scheme")) {
            if (!strcmp(v, "auto")) oz.scheme = TCNLA_OZAKI_SCHEME_AUTO;
            else if (!strcmp(v, "1")) oz.scheme = TCNLA_OZAKI_SCHEME_1;
            else if (!strcmp(v, "2")) oz.scheme = TCNLA_OZAKI_SCHEME_2;
            else {
                fprintf(stderr, "tcnla gemm: --scheme '%s': expected auto, 1 or 2\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--m")) {
            if (cli_int(a, v, 0, 1 << 20, &m)) return EXIT_USAGE;
        } else if (!strcmp(a, "--n")) {
            if (cli_int(a, v, 0, 1 << 20, &n)) return EXIT_USAGE;
        } else if (!strcmp(a, "--k")) {
            if (cli_int(a, v, 0, 1 << 24, &k)) return EXIT_USAGE;
        } else if (!strcmp(a, "--reps")) {
            if (cli_int(a, v, 1, 1000, &reps)) return EXIT_USAGE;
        } else if (!strcmp(a, "--dist")) {
            if (parse_dist(v, &da)) return EXIT_USAGE;
        } else if (!strcmp(a, "--dist-b")) {
            if (parse_dist(v, &db)) return EXIT_USAGE;
            have_db = 1;
        } else if (!strcmp(a, "--alpha")) {
            if (cli_double(a, v, &alpha)) return EXIT_USAGE;
            alpha_s = v;
        } else if (!strcmp(a, "--beta")) {
            if (cli_double(a, v, &beta)) return EXIT_USAGE;
            beta_s = v;
        } else if (!strcmp(a, "--vector-scale")) {
            if (cli_int(a, v, 0, 126, &vscale)) return EXIT_USAGE;
        } else if (!strcmp(a, "--tc-bits")) {
            if (cli_int(a, v, 24, 25, &t)) return EXIT_USAGE;
            model.acc_bits = (int)t;
        } else if (!strcmp(a, "--tc-k")) {
            if (cli_int(a, v, 4, 16, &t)) return EXIT_USAGE;
            model.k_per_mma = (int)t;
        } else if (!strcmp(a, "--tc-chunk")) {
            if (cli_int(a, v, 4, 1 << 24, &t)) return EXIT_USAGE;
            model.tcec_chunk = (int)t;
        } else {
            fprintf(stderr, "tcnla gemm: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        }
    }
    if (!have_db) db = da;
    if (oz.mode == TCNLA_OZAKI_FIXED && oz.scheme == TCNLA_OZAKI_SCHEME_2 && oz.slices > 20) {
        fprintf(stderr, "tcnla gemm: --scheme 2 takes fixed:N with N <= 20 moduli\n");
        return EXIT_USAGE;
    }
    if (oz.mode == TCNLA_OZAKI_CR && oz.scheme == TCNLA_OZAKI_SCHEME_2) {
        fprintf(stderr, "tcnla gemm: --mode cr is scheme 1 only\n");
        return EXIT_USAGE;
    }
    if (dbl && vscale) {
        fprintf(stderr, "tcnla gemm: --vector-scale is for --precision single\n");
        return EXIT_USAGE;
    }
    if (dbl) {
        if (!have_method) method = TCNLA_GEMM_OZAKI_INT8;
        if (method != TCNLA_GEMM_NATIVE_FP64 && method != TCNLA_GEMM_OZAKI_FP16 &&
            method != TCNLA_GEMM_OZAKI_INT8) {
            fprintf(stderr, "tcnla gemm: --precision double takes native_fp64, ozaki_fp16 or "
                            "ozaki_int8, not %s\n", tcnla_gemm_method_name(method));
            return EXIT_USAGE;
        }
        if ((double)m * (double)k + (double)k * (double)n + 4.0 * (double)m * (double)n > 2e9) {
            fprintf(stderr, "tcnla gemm: matrices this large (m=%lld n=%lld k=%lld) are not "
                            "supported by this command\n", (long long)m, (long long)n, (long long)k);
            return EXIT_BADINPUT;
        }
        return gemm_double(&c, method, m, n, k, ta, tb, alpha, beta, &da, &db, reps, &oz, compare);
    }
    /* single precision: alpha and beta are passed as float */
    if ((alpha_s && cli_float32("--alpha", alpha_s, &alpha)) ||
        (beta_s && cli_float32("--beta", beta_s, &beta)))
        return EXIT_USAGE;
    if (model.tcec_chunk % model.k_per_mma) {
        fprintf(stderr, "tcnla gemm: --tc-chunk must be a multiple of --tc-k\n");
        return EXIT_USAGE;
    }
    if ((double)m * (double)k + (double)k * (double)n + 3.0 * (double)m * (double)n > 4e9) {
        fprintf(stderr, "tcnla gemm: matrices this large (m=%lld n=%lld k=%lld) are not supported "
                        "by this command\n", (long long)m, (long long)n, (long long)k);
        return EXIT_BADINPUT;
    }

    tcnla_handle_t h;
    int rc = cli_open(&c, &h);
    if (rc) return rc;
    int st = tcnla_set_tc_model(h, &model);
    if (st) {
        tcnla_destroy(h);
        return cli_fail("--tc-*", st);
    }
    if (fallback) tcnla_set_range_policy(h, TCNLA_RANGE_FALLBACK);
    if ((st = tcnla_set_ozaki_opts(h, &oz))) { /* for ozaki_fp16 / ozaki_int8 in FP32 */
        tcnla_destroy(h);
        return cli_fail("--mode / --scheme", st);
    }
    tcnla_backend_t be;
    char dev[256];
    tcnla_get_backend(h, &be);
    tcnla_device_name(h, dev, sizeof dev);

    /* host data: A, B, C0 (FP32), reference R (FP64) */
    int64_t lda = ta ? TN_MAX(1, k) : TN_MAX(1, m), ldb = tb ? TN_MAX(1, n) : TN_MAX(1, k);
    size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    float *A = malloc(sizeof(float) * (na + nb + 2 * nc) + 1);
    double *R = malloc(sizeof(double) * (nc + na + nb) + 1);
    if (!A || !R) {
        fprintf(stderr, "tcnla gemm: out of host memory\n");
        return EXIT_BADINPUT;
    }
    float *B = A + na, *C0 = B + nb, *C = C0 + nc;
    fill(&da, c.seed, 1, (int64_t)na, A);
    fill(&db, c.seed, 2, (int64_t)nb, B);
    tcnla_rand_uniform(c.seed, 3, -1.0f, 1.0f, (int64_t)nc, C0);
    const int shgemm = method == TCNLA_GEMM_SHGEMM_FP16 || method == TCNLA_GEMM_SHGEMM_TF32;
    if (shgemm) /* SHGEMM multiplies by an FP16 B: error is measured against A * fp16(B) */
        for (size_t i = 0; i < nb; i++)
            B[i] = tcnla_f16_to_f32(tcnla_f32_to_f16(B[i], TCNLA_ROUND_RN));
    int *vs = NULL; /* exponents of op(A)'s rows and op(B)'s columns */
    if (vscale) { /* (after SHGEMM's rounding: a power of two keeps B's FP16 values exact) */
        if (!(vs = malloc(sizeof(int) * (size_t)(m + n) + 1))) {
            fprintf(stderr, "tcnla gemm: out of host memory\n");
            free(A), free(R);
            tcnla_destroy(h);
            return EXIT_BADINPUT;
        }
        scale_vectors(c.seed, vscale, m, n, k, ta, tb, A, lda, B, ldb, vs);
    }
    {   /* FP64 reference of the same (FP32) inputs */
        double *Ad = R + nc, *Bd = Ad + na, one = alpha, zero = 0;
        for (size_t i = 0; i < na; i++) Ad[i] = A[i];
        for (size_t i = 0; i < nb; i++) Bd[i] = B[i];
        int im = (int)m, in = (int)n, ik = (int)k, ila = (int)lda, ilb = (int)ldb;
        if (m && n) {
            if (k) dgemm_(ta ? "T" : "N", tb ? "T" : "N", &im, &in, &ik, &one, Ad, &ila, Bd, &ilb,
                          &zero, R, &im);
            else memset(R, 0, sizeof(double) * nc);
            if (beta != 0)
                for (size_t i = 0; i < nc; i++) R[i] += beta * (double)C0[i];
        }
    }

    /* device copies */
    float *dA = NULL, *dB = NULL, *dC = NULL;
    if ((st = tcnla_malloc(h, (void **)&dA, sizeof(float) * na)) ||
        (st = tcnla_malloc(h, (void **)&dB, sizeof(float) * nb)) ||
        (st = tcnla_malloc(h, (void **)&dC, sizeof(float) * nc)) ||
        (st = tcnla_memcpy(h, dA, A, sizeof(float) * na, TCNLA_MEMCPY_HOST_TO_HANDLE)) ||
        (st = tcnla_memcpy(h, dB, B, sizeof(float) * nb, TCNLA_MEMCPY_HOST_TO_HANDLE))) {
        rc = cli_fail("allocating the inputs", st);
        goto out;
    }
    double times[1000], err = 0, err_native = -1, t_native = -1;
    tcnla_gemm_method_t used = method;
    tcnla_info_t info = {0};
    int scaled = 0;
    for (int pass = compare && method != TCNLA_GEMM_NATIVE_FP32 ? 0 : 1; pass < 2; pass++) {
        tcnla_gemm_method_t mm = pass == 0 ? TCNLA_GEMM_NATIVE_FP32 : method;
        int64_t runs = reps + (reps > 1 ? 1 : 0); /* one warm-up when timing several */
        for (int64_t r = 0; r < runs; r++) {
            if ((st = tcnla_memcpy(h, dC, C0, sizeof(float) * nc, TCNLA_MEMCPY_HOST_TO_HANDLE)))
                break;
            tcnla_synchronize(h);
            double t0 = cli_now();
            st = tcnla_sgemm_ex(h, mm, ta ? TCNLA_OP_T : TCNLA_OP_N, tb ? TCNLA_OP_T : TCNLA_OP_N,
                                m, n, k, (float)alpha, dA, lda, dB, ldb, (float)beta, dC,
                                TN_MAX(1, m), &info);
            if (st == TCNLA_SUCCESS) st = tcnla_synchronize(h);
            if (st) break;
            if (r >= runs - reps) times[r - (runs - reps)] = cli_now() - t0;
        }
        if (st) {
            rc = cli_fail(tcnla_gemm_method_name(mm), st);
            goto out;
        }
        if ((st = tcnla_memcpy(h, C, dC, sizeof(float) * nc, TCNLA_MEMCPY_HANDLE_TO_HOST))) {
            rc = cli_fail("copying C back", st);
            goto out;
        }
        qsort(times, (size_t)reps, sizeof(double), cli_cmp_double);
        if (pass == 0) {
            err_native = rel_err(C, R, (int64_t)nc, vs, m);
            t_native = times[reps / 2];
        } else {
            err = rel_err(C, R, (int64_t)nc, vs, m);
            used = info.method;
            scaled = info.scaled > 0;
        }
    }
    double t = times[reps / 2], flops = 2.0 * (double)m * (double)n * (double)k;
    if (c.json) {
        cli_json j;
        cli_jbegin(&j, stdout);
        cli_jstr(&j, "command", "gemm");
        cli_jstr(&j, "backend", cli_backend_name(be));
        cli_jstr(&j, "device", dev);
        cli_jstr(&j, "method", tcnla_gemm_method_name(method));
        cli_jstr(&j, "computed_with", tcnla_gemm_method_name(used));
        cli_jint(&j, "exact_scaling", scaled);
        cli_jint(&j, "vector_scale", vscale);
        cli_jint(&j, "m", m);
        cli_jint(&j, "n", n);
        cli_jint(&j, "k", k);
        cli_jstr(&j, "dist_a", da.text);
        cli_jstr(&j, "dist_b", db.text);
        cli_jint(&j, "seed", (long long)c.seed);
        cli_jnum(&j, "rel_err", "%.6e", err);
        /* not measured without the comparison: null */
        cli_jnum(&j, "native_fp32_rel_err", "%.6e", err_native >= 0 ? err_native : NAN);
        cli_jnum(&j, "ratio", "%.4f", err_native > 0 ? err / err_native : NAN);
        cli_jnum(&j, "seconds", "%.6e", t);
        cli_jnum(&j, "tflops", "%.4f", flops / t * 1e-12);
        cli_jnum(&j, "native_fp32_seconds", "%.6e", t_native >= 0 ? t_native : NAN);
        cli_jend(&j);
    } else {
        printf("tcnla gemm: %s on %s (%s backend), m=%lld n=%lld k=%lld, A ~ %s, B ~ %s, seed "
               "%llu\n",
               tcnla_gemm_method_name(method), dev, cli_backend_name(be), (long long)m,
               (long long)n, (long long)k, da.text, db.text, (unsigned long long)c.seed);
        if (shgemm) printf("  B rounded to FP16 first: errors are against the FP64 product A*fp16(B)\n");
        if (vscale)
            printf("  rows of op(A), columns of op(B) multiplied by 2^e, e in %lld..%lld\n",
                   (long long)-vscale, (long long)vscale);
        if (scaled)
            printf("  exact scaling: computed on operands scaled back by powers of two (rows of\n"
                   "  op(A), columns of op(B)), outside the FP16 split's range as given\n");
        if (used != method)
            printf("  note: computed with %s (%s)\n", tcnla_gemm_method_name(used),
                   oz.mode == TCNLA_OZAKI_AUTO &&
                           (method == TCNLA_GEMM_OZAKI_INT8 || method == TCNLA_GEMM_OZAKI_FP16)
                       ? "mode auto: the native GEMM predicted faster"
                       : "NaN/Inf input or range fallback");
        if (be == TCNLA_BACKEND_CPU && tc_model_method(method))
            printf("  Tensor Core model: %d-bit accumulation, %d products/instruction, hi*hi "
                   "chunk %d\n",
                   model.acc_bits, model.k_per_mma, model.tcec_chunk);
        printf("  rel. Frobenius error vs FP64   %.3e\n", err);
        if (err_native >= 0)
            printf("  native_fp32 error, same input  %.3e   ratio %.3f\n", err_native,
                   err_native > 0 ? err / err_native : 0.0);
        printf("  time (median of %lld)          %.4f s   %.3f TFLOP/s\n", (long long)reps, t,
               flops / t * 1e-12);
    }
out:
    tcnla_free(h, dA);
    tcnla_free(h, dB);
    tcnla_free(h, dC);
    free(A);
    free(R);
    free(vs);
    tcnla_destroy(h);
    return rc;
}
