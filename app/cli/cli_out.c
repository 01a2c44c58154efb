/* Shared pieces of the subcommands' output: JSON reports and the files of
 * --output (checked before the computation, written under temporary names
 * in their directory, renamed into place at the end). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char cli_errbuf[CLI_ERR_MAX];

/* ------------------------------------------------------------ options */

int cli_takes_value(const char *a, const char *const *opts) {
    for (; *opts; opts++)
        if (!strcmp(a, *opts)) return 1;
    return 0;
}

int cli_unknown_opt(const char *cmd, const char *a) {
    fprintf(stderr, "tcnla %s: unknown option '%s' (see --help)\n", cmd, a);
    return EXIT_USAGE;
}

int cli_float32(const char *opt, const char *s, double *out) {
    double v;
    if (cli_double(opt, s, &v)) return -1;
    const float f = (float)v;
    if (isinf(f) || (f == 0.0f && v != 0.0)) {
        fprintf(stderr,
                "tcnla: %s: '%s' is outside float32's range: it would become %s (float32 holds "
                "%.9g <= |x| <= %.9g, and 0)\n",
                opt, s, isinf(f) ? "Inf" : "0", (double)FLT_TRUE_MIN, (double)FLT_MAX);
        return -1;
    }
    *out = v;
    return 0;
}

/* ------------------------------------------------------------ JSON */

static void jkey(cli_json *j, const char *key) {
    fputs(j->n++ ? "," : "{", j->f);
    cli_json_str(j->f, key);
    fputc(':', j->f);
}

void cli_jbegin(cli_json *j, FILE *f) {
    j->f = f;
    j->n = 0;
}

void cli_jstr(cli_json *j, const char *key, const char *v) {
    jkey(j, key);
    if (v) cli_json_str(j->f, v);
    else fputs("null", j->f);
}

void cli_jnum(cli_json *j, const char *key, const char *fmt, double v) {
    jkey(j, key);
    if (isfinite(v)) fprintf(j->f, fmt, v);
    else fputs("null", j->f);
}

void cli_jint(cli_json *j, const char *key, long long v) {
    jkey(j, key);
    fprintf(j->f, "%lld", v);
}

void cli_jraw(cli_json *j, const char *key, const char *raw) {
    jkey(j, key);
    fputs(raw, j->f);
}

void cli_jend(cli_json *j) {
    fputs(j->n ? "}\n" : "{}\n", j->f);
}

/* ------------------------------------------------------------ outputs */

static void outs_free(cli_outputs *o) {
    for (int i = 0; i < o->n; i++) {
        free(o->path[i]);
        free(o->tmp[i]);
        o->path[i] = o->tmp[i] = NULL;
    }
    o->n = 0;
}

void cli_outputs_abort(cli_outputs *o) {
    for (int i = 0; i < o->n; i++)
        if (o->tmp[i]) unlink(o->tmp[i]);
    outs_free(o);
}

int cli_outputs_open(cli_outputs *o, const char *cmd, const char *prefix,
                     const char *const *suffixes, int n, const char *input) {
    struct stat si, so;
    const int have_in = input && stat(input, &si) == 0;
    memset(o, 0, sizeof *o);
    if (n > CLI_MAX_OUTPUTS) n = CLI_MAX_OUTPUTS;
    const mode_t um = umask(0);
    umask(um);
    for (int i = 0; i < n; i++) {
        const size_t lp = strlen(prefix), ls = strlen(suffixes[i]);
        if (lp + ls + 1 > PATH_MAX) {
            fprintf(stderr,
                    "tcnla %s: --output: the name %.40s...%s is too long (%zu bytes; PATH_MAX "
                    "is %d)\n",
                    cmd, prefix, suffixes[i], lp + ls, PATH_MAX);
            cli_outputs_abort(o);
            return EXIT_USAGE;
        }
        char *p = malloc(lp + ls + 1);
        if (!p) {
            cli_outputs_abort(o);
            return cli_fail("--output", TCNLA_ERR_ALLOC);
        }
        memcpy(p, prefix, lp);
        memcpy(p + lp, suffixes[i], ls + 1);
        o->path[o->n++] = p;
        const char *slash = strrchr(p, '/'), *base = slash ? slash + 1 : p;
        if (strlen(base) > NAME_MAX) {
            fprintf(stderr, "tcnla %s: --output: the file name %.40s... is too long (%zu bytes; "
                    "NAME_MAX is %d)\n", cmd, base, strlen(base), NAME_MAX);
            cli_outputs_abort(o);
            return EXIT_USAGE;
        }
        /* the directory: "." or the text before the last '/' ("/" for "/x") */
        const size_t ld = slash ? (size_t)(slash - p) : 1;
        char *t = malloc(ld + 16);
        if (!t) {
            cli_outputs_abort(o);
            return cli_fail("--output", TCNLA_ERR_ALLOC);
        }
        if (slash) memcpy(t, p, ld ? ld : 1);
        else t[0] = '.';
        t[ld ? ld : 1] = 0;
        struct stat sd;
        if (stat(t, &sd) != 0 || !S_ISDIR(sd.st_mode)) {
            int e = errno;
            fprintf(stderr, "tcnla %s: --output: %s: %s\n", cmd, t,
                    stat(t, &sd) != 0 ? strerror(e) : "not a directory");
            free(t);
            cli_outputs_abort(o);
            return EXIT_BADINPUT;
        }
        if (stat(p, &so) == 0) {
            if (have_in && so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
                fprintf(stderr, "tcnla %s: --output: %s is the input file %s; choose another "
                        "prefix\n", cmd, p, input);
                free(t);
                cli_outputs_abort(o);
                return EXIT_USAGE;
            }
            if (!S_ISREG(so.st_mode)) {
                fprintf(stderr, "tcnla %s: --output: %s exists and is not a regular file\n", cmd,
                        p);
                free(t);
                cli_outputs_abort(o);
                return EXIT_BADINPUT;
            }
        }
        /* the temporary name, created now: the directory is writable */
        strcpy(t + (ld ? ld : 1), "/.tcnla-XXXXXX");
        int fd = mkstemp(t);
        if (fd < 0) {
            int e = errno;
            t[ld ? ld : 1] = 0;
            fprintf(stderr, "tcnla %s: --output: cannot create a file in %s: %s\n", cmd, t,
                    strerror(e));
            free(t);
            cli_outputs_abort(o);
            return EXIT_BADINPUT;
        }
        fchmod(fd, 0666 & ~um);
        close(fd);
        o->tmp[i] = t;
    }
    return EXIT_OK;
}

int cli_outputs_write(cli_outputs *o, int i, const char *cmd, const tn_matrix *m,
                      unsigned flags) {
    if (!tn_io_write_npy(o->tmp[i], m, flags, cli_errbuf, sizeof cli_errbuf)) return EXIT_OK;
    fprintf(stderr, "tcnla %s: %s (writing %s)\n", cmd, cli_errbuf, o->path[i]);
    cli_outputs_abort(o);
    return EXIT_BADINPUT;
}

int cli_outputs_commit(cli_outputs *o, const char *cmd) {
    for (int i = 0; i < o->n; i++)
        if (rename(o->tmp[i], o->path[i]) != 0) {
            int e = errno;
            fprintf(stderr, "tcnla %s: cannot rename %s to %s: %s\n", cmd, o->tmp[i], o->path[i],
                    strerror(e));
            for (int k = 0; k < i; k++) unlink(o->path[k]); /* no partial set of outputs */
            cli_outputs_abort(o);
            return EXIT_BADINPUT;
        } else {
            free(o->tmp[i]);
            o->tmp[i] = NULL;
        }
    outs_free(o);
    return EXIT_OK;
}

void cli_jerror_timing(cli_json *j, double err, double t, long long reps, int baseline,
                       double t_base, double err_base) {
    cli_jnum(j, "rel_error", "%.6e", err);
    cli_jnum(j, "seconds", "%.6e", t);
    cli_jint(j, "reps", reps);
    cli_jnum(j, "fp32_seconds", "%.6e", baseline ? t_base : NAN);
    cli_jnum(j, "fp32_rel_error", "%.6e", baseline ? err_base : NAN);
    cli_jnum(j, "speedup", "%.4f", baseline && t > 0 ? t_base / t : NAN);
}
