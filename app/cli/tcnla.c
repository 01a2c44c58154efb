/* The tcnla command: subcommand dispatch and shared option handling. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"info", cmd_info, "version, backends found, GPU name"},
    {"gemm", cmd_gemm, "one FP32 GEMM by a chosen method: error against FP64 and time"},
    {"rsvd", cmd_rsvd, "randomized SVD: residual vs the optimum, time, speedup over FP32"},
    {"lra", cmd_lra, "randomized low-rank approximation X Y^T: error, time, speedup over FP32"},
    {"hosvd", cmd_hosvd, "RP-HOSVD of a Tucker tensor: error, time, speedup over FP32"},
    {"gen", cmd_gen, "write a test matrix (known spectrum, Cauchy, low-rank) to .npy"},
    {"bench", cmd_bench, "run a GPU benchmark (gemm, rsvd, lra, hosvd) built by make bench"},
    {"analyze", cmd_analyze, "formats: Table 1 and Fig. 2 of [Ootomo & Yokota 2023] for any eXmY"},
};

static void usage(FILE *f) {
    fprintf(f,
            "usage: tcnla <command> [options]   (tcnla <command> --help for its options)\n\n"
            "tcnla %s: FP32/FP64-accurate linear algebra on GPU Tensor Cores, with a CPU\n"
            "reference backend that models the Tensor Core's rounding.\n\ncommands:\n",
            tcnla_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\ncommon options: --backend auto|cpu|cuda (default auto), --seed N (default 1),\n"
               "  --json (one machine-readable report on stdout)\n"
               "exit status: 0 ok, 1 bad input, 2 usage, 3 numerical failure\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tcnla %s\n", tcnla_version());
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "tcnla: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}

/* ------------------------------------------------------------- helpers */
const char *cli_value(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) {
        fprintf(stderr, "tcnla: option %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "tcnla: %s: '%s' is not an integer in [%lld, %lld]\n", opt, s,
                (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_double(const char *opt, const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        fprintf(stderr, "tcnla: %s: '%s' is not a finite number\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_common_opt(cli_common *c, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    if (!strcmp(a, "--json")) {
        c->json = 1;
        return 1;
    }
    if (!strcmp(a, "--backend")) {
        const char *v = cli_value(argc, argv, i);
        if (!v) return -1;
        if (!strcmp(v, "auto")) c->backend = TCNLA_BACKEND_AUTO;
        else if (!strcmp(v, "cpu")) c->backend = TCNLA_BACKEND_CPU;
        else if (!strcmp(v, "cuda") || !strcmp(v, "gpu")) c->backend = TCNLA_BACKEND_CUDA;
        else {
            fprintf(stderr, "tcnla: --backend: '%s' is not auto, cpu or cuda\n", v);
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--seed")) {
        const char *v = cli_value(argc, argv, i);
        int64_t s;
        if (!v || cli_int("--seed", v, 0, INT64_MAX, &s)) return -1;
        c->seed = (uint64_t)s;
        return 1;
    }
    return 0;
}

double cli_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cli_fail(const char *what, int status) {
    fprintf(stderr, "tcnla: %s: %s\n", what, tcnla_strerror(status));
    if (status == TCNLA_ERR_RANGE || status == TCNLA_ERR_NUMERICAL) return EXIT_NUMERICAL;
    if (status == TCNLA_ERR_NO_BACKEND || status == TCNLA_ERR_NOT_SUPPORTED ||
        (status < 0 && status > -100))
        return EXIT_BADINPUT;
    return EXIT_NUMERICAL;
}

int cli_open(const cli_common *c, tcnla_handle_t *h) {
    int st = tcnla_create(h, c->backend);
    if (st) return cli_fail("cannot create a handle", st);
    return EXIT_OK;
}

const char *cli_backend_name(tcnla_backend_t b) {
    return b == TCNLA_BACKEND_CUDA ? "cuda" : b == TCNLA_BACKEND_CPU ? "cpu" : "auto";
}

const char *const cli_orth_names[4] = {"householder", "cholqr_fp32", "cholqr_fp64", "cholqr2_fp64"};
const char *const cli_format_names[6] = {"fp32", "fp16", "bf16", "tf32", "e4m3", "e5m2"};

int cli_parse_name(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

int cli_name_arg(const char *cmd, const char *opt, const char *v, const char *const *names,
                 int count, const char *what) {
    const int t = cli_parse_name(v, names, count);
    if (t < 0) fprintf(stderr, "tcnla %s: %s: unknown %s '%s'\n", cmd, opt, what, v);
    return t;
}

void cli_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

int cli_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
