/* Shared pieces of the tcnla command's subcommands. */
#ifndef TCNLA_CLI_H
#define TCNLA_CLI_H
#include "tcnla.h"
#include "io/io.h"
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of every subcommand. */
enum { EXIT_OK = 0, EXIT_BADINPUT = 1, EXIT_USAGE = 2, EXIT_NUMERICAL = 3 };

/* Options every subcommand takes. */
typedef struct {
    tcnla_backend_t backend;
    uint64_t seed;
    int json;
} cli_common;

/* Parses --backend / --seed / --json at argv[*i] (advancing *i past a value).
 * Returns 1 when it consumed the option, 0 when it is not a common one, -1
 * on a bad value (message printed). */
int cli_common_opt(cli_common *c, int argc, char **argv, int *i);
/* Integer / real option values with range checks; print an error and
 * return -1 on bad input. */
int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);
int cli_double(const char *opt, const char *s, double *out);
/* Fetches the value of option argv[*i]; prints an error when missing. */
const char *cli_value(int argc, char **argv, int *i);
double cli_now(void);
/* Maps a library status to an exit status with a one-line message. */
int cli_fail(const char *what, int status);
/* Opens a handle of the requested backend, printing why it failed. */
int cli_open(const cli_common *c, tcnla_handle_t *h);
const char *cli_backend_name(tcnla_backend_t b);

/* Index of s in names[0..count-1], or -1. */
int cli_parse_name(const char *s, const char *const *names, int count);
/* The same for the value v of option opt of command cmd; -1 after
 * "tcnla CMD: OPT: unknown WHAT 'V'" on stderr. */
int cli_name_arg(const char *cmd, const char *opt, const char *v, const char *const *names,
                 int count, const char *what);
/* Names of tcnla_orth_t (4) and tcnla_format_t (6) values, in enum order. */
extern const char *const cli_orth_names[4];
extern const char *const cli_format_names[6];
/* s as a JSON string: quotes, backslashes and control characters escaped. */
void cli_json_str(FILE *f, const char *s);
/* tcnla rsvd's power iterations' method as it ran (info: the call's): the
 * option, or the defaults' choice from the data, "auto:fp16" or
 * "auto:shgemm_fp16" (defined in cmd_rsvd.c). */
const char *cli_rsvd_power(const tcnla_rsvd_opts_t *o, const tcnla_info_t *info);
/* the projection's method: proj_method, or (0) "auto:..." from info (may be NULL) */
const char *cli_rsvd_proj(const tcnla_rsvd_opts_t *o, const tcnla_info_t *info);
/* qsort comparison of doubles. */
int cli_cmp_double(const void *a, const void *b);
/* "a,b,c" -> 2 to TCNLA_HOSVD_MAX_ORDER integers in [lo, hi] (a tensor's
 * dimensions or ranks); returns the count, or -1 with a message naming
 * "tcnla CMD" printed (defined in cmd_hosvd.c). */
int cli_int_list(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                 int64_t *out);

/* 1 when a is one of the NULL-terminated opts (the options that take a
 * value); cli_unknown_opt prints "tcnla CMD: unknown option 'A'" and
 * returns EXIT_USAGE. */
int cli_takes_value(const char *a, const char *const *opts);
int cli_unknown_opt(const char *cmd, const char *a);
/* cli_double, and the value must not become Inf or (nonzero) 0 in float32. */
int cli_float32(const char *opt, const char *s, double *out);

/* A buffer for one message of the file layer: a file name (one argument,
 * at most 128 KiB on Linux) and at most 1 KiB of text. */
#define CLI_ERR_MAX (131072 + 1024)
extern char cli_errbuf[CLI_ERR_MAX];

/* One JSON object on one line: keys in the order given; numbers that are
 * not finite, and NULL strings, are null. */
typedef struct {
    FILE *f;
    int n;
} cli_json;
void cli_jbegin(cli_json *j, FILE *f);
void cli_jstr(cli_json *j, const char *key, const char *v);
void cli_jnum(cli_json *j, const char *key, const char *fmt, double v);
void cli_jint(cli_json *j, const char *key, long long v);
void cli_jraw(cli_json *j, const char *key, const char *raw); /* raw JSON text */
void cli_jend(cli_json *j);
/* The closing fields of lra / hosvd: rel_error, seconds, reps, and the FP32
 * baseline's fp32_seconds, fp32_rel_error, speedup (null without one). */
void cli_jerror_timing(cli_json *j, double err, double t, long long reps, int baseline,
                       double t_base, double err_base);

/* The files of --output PREFIX: PREFIX + suffix[i]. cli_outputs_open checks
 * them before any computation (names within PATH_MAX / NAME_MAX, the
 * directory exists, no name is the input file (device and inode) or an
 * existing non-regular file) and creates a temporary file for each in the
 * same directory; cli_outputs_write writes output i there; commit renames
 * them all into place (none left on failure); abort removes them. Each
 * returns EXIT_OK or an exit status after a message on stderr (and on
 * failure has aborted). */
#define CLI_MAX_OUTPUTS 4
typedef struct {
    int n;
    char *path[CLI_MAX_OUTPUTS], *tmp[CLI_MAX_OUTPUTS];
} cli_outputs;
int cli_outputs_open(cli_outputs *o, const char *cmd, const char *prefix,
                     const char *const *suffixes, int n, const char *input);
int cli_outputs_write(cli_outputs *o, int i, const char *cmd, const tn_matrix *m,
                      unsigned flags);
void cli_outputs_abort(cli_outputs *o);
int cli_outputs_commit(cli_outputs *o, const char *cmd);

int cmd_info(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_rsvd(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_lra(int argc, char **argv);
int cmd_hosvd(int argc, char **argv);
int cmd_gen(int argc, char **argv);

/* Reference BLAS (Fortran interface, 32-bit integers) for the error checks. */
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc);
#endif
