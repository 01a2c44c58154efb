/* Shared pieces of the tcnla command's subcommands. */
#ifndef TCNLA_CLI_H
#define TCNLA_CLI_H
#include "tcnla.h"
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
/* qsort comparison of doubles. */
int cli_cmp_double(const void *a, const void *b);
/* "a,b,c" -> 2 to TCNLA_HOSVD_MAX_ORDER integers in [lo, hi] (a tensor's
 * dimensions or ranks); returns the count, or -1 with a message naming
 * "tcnla CMD" printed (defined in cmd_hosvd.c). */
int cli_int_list(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                 int64_t *out);

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
