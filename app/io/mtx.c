/* Matrix Market .mtx reading into a dense column-major matrix. See io.h for
 * what is accepted; the format is the NIST one:
 *
 *   %%MatrixMarket matrix <array|coordinate> <real|integer|pattern>
 *                         <general|symmetric|skew-symmetric>
 *   % comments
 *   M N [NNZ]                 (NNZ for coordinate only)
 *   entries, one per line:    value           (array, column by column)
 *                             i j [value]     (coordinate, 1-based)
 *
 * The parser works on the bytes in place (no NUL terminator needed): lines
 * are cut at '\n', fields at blanks, and each number is checked against the
 * decimal grammar before being copied into a small local buffer for strtod. */
#include "io/io.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MM_REAL, MM_INTEGER, MM_PATTERN };
enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW };
#define MM_MAX_FIELDS 8    /* more fields than any valid line has */
#define MM_MAX_NUMBER 255 /* longest number token accepted */

typedef struct {
    const char *s;
    size_t n;
} mm_tok;

typedef struct {
    const char *p, *end; /* unread bytes */
    long long line;      /* 1-based number of the line last read */
    /* message context */
    const char *name;
    char *err;
    size_t errlen;
    /* value parsing */
    int field, symmetry, coordinate, out_double, lost;
    locale_t loc; /* "C" numeric locale, or 0 to use the current one */
} mm_parser;

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Next line [*b, *e) without its '\n'; 0 at the end of the buffer. */
static int next_line(mm_parser *x, const char **b, const char **e) {
    if (x->p >= x->end) return 0;
    const char *nl = memchr(x->p, '\n', (size_t)(x->end - x->p));
    *b = x->p;
    *e = nl ? nl : x->end;
    x->p = nl ? nl + 1 : x->end;
    x->line++;
    return 1;
}

/* Splits [b, e) at blanks into at most max fields; returns how many there
 * are, max + 1 meaning "more than max". */
static int split(const char *b, const char *e, mm_tok *t, int max) {
    int n = 0;
    for (;;) {
        while (b < e && is_blank(*b)) b++;
        if (b == e) return n;
        if (n == max) return max + 1;
        t[n].s = b;
        while (b < e && !is_blank(*b)) b++;
        t[n].n = (size_t)(b - t[n].s);
        n++;
    }
}

/* The next line that is neither blank nor a '%' comment, split into t;
 * returns its field count, or -1 at the end of the buffer. */
static int next_data_line(mm_parser *x, mm_tok *t, int max) {
    const char *b, *e;
    while (next_line(x, &b, &e)) {
        int n = split(b, e, t, max);
        if (n > 0 && t[0].s[0] != '%') return n;
    }
    return -1;
}

static int tok_is(const mm_tok *t, const char *word) {
    return t->n == strlen(word) && strncasecmp(t->s, word, t->n) == 0;
}

/* A message about the current line. */
#define MM_FAIL(x, status, fmt, ...)                                                         \
    tn_io_fail((x)->err, (x)->errlen, (x)->name, status, "line %lld: " fmt, (x)->line,      \
               __VA_ARGS__)

/* Is s[0..n) [+-]digits (integer_only), or [+-]digits[.digits][(e|E)[+-]digits]
 * with at least one mantissa digit ("1.", ".5" and "-2e3" are fine)? This
 * rejects nan, inf, hexadecimal and anything strtod would stop early on. */
static int is_decimal(const char *s, size_t n, int integer_only) {
    size_t i = 0, mant = 0, ex = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, mant++;
    if (integer_only) return mant > 0 && i == n;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) mant++;
    if (mant == 0) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, ex++;
        if (ex == 0) return 0;
    }
    return i == n;
}

/* Parses a value field into *d (and *f when the output is float), the entry
 * at (i, j) (0-based): a value that float32 turns into Inf or 0 is an error. */
static int parse_value(mm_parser *x, const mm_tok *t, int64_t i, int64_t j, double *d,
                       float *f) {
    char buf[MM_MAX_NUMBER + 1], q[48];
    if (!is_decimal(t->s, t->n, x->field == MM_INTEGER)) {
        size_t k = t->n && (t->s[0] == '+' || t->s[0] == '-'), r = t->n - k;
        const char *w = t->s + k;
        int naninf = (r == 3 && (!strncasecmp(w, "nan", 3) || !strncasecmp(w, "inf", 3))) ||
                     (r == 8 && !strncasecmp(w, "infinity", 8)) ||
                     (r > 4 && !strncasecmp(w, "nan(", 4));
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "value '%s' is not %s", tn_io_snippet(q, t->s, t->n),
                       naninf ? "finite (NaN and Inf are not allowed in Matrix Market files)"
                       : x->field == MM_INTEGER ? "an integer"
                                                : "a decimal number");
    }
    if (t->n > MM_MAX_NUMBER)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "value '%s' is longer than %d characters",
                       tn_io_snippet(q, t->s, t->n), MM_MAX_NUMBER);
    memcpy(buf, t->s, t->n);
    buf[t->n] = '\0';
    errno = 0;
    *d = x->loc ? strtod_l(buf, NULL, x->loc) : strtod(buf, NULL);
    if (errno == ERANGE && fabs(*d) > 1.0)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "value '%s' is outside the range of double",
                       tn_io_snippet(q, t->s, t->n));
    if (!x->out_double) {
        /* Rounded once from the decimal text, not twice through double. */
        *f = x->loc ? strtof_l(buf, NULL, x->loc) : strtof(buf, NULL);
        if ((double)*f != *d) x->lost = 1;
        if ((isinf(*f) && isfinite(*d)) || (*f == 0.0f && *d != 0.0))
            return MM_FAIL(x, TN_IO_ERR_RANGE,
                           "entry (%lld, %lld) = %s is outside float32's range: it would become "
                           "%s (|x| %s); scale the data into [%.9g, %.9g] first",
                           (long long)i + 1, (long long)j + 1, tn_io_snippet(q, t->s, t->n),
                           isinf(*f) ? "Inf" : "0",
                           isinf(*f) ? "> 3.4028235e+38" : "< 1.4e-45 after rounding",
                           (double)FLT_TRUE_MIN, (double)FLT_MAX);
    }
    return 0;
}

/* Parses a 1-based index field against 1..limit into a 0-based *v. */
static int parse_index(mm_parser *x, const mm_tok *t, int64_t limit, const char *what,
                       int64_t *v) {
    char q[48];
    int r = tn_io_parse_int(t->s, t->n, v);
    if (r == TN_IO_INT_BAD)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "%s index '%s' is not an integer", what,
                       tn_io_snippet(q, t->s, t->n));
    if (r == TN_IO_INT_OVERFLOW || *v < 1 || *v > limit)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "%s index %s out of range 1..%lld", what,
                       tn_io_snippet(q, t->s, t->n), (long long)limit);
    (*v)--;
    return 0;
}

/* Parses a size field of the size line. */
static int parse_size(mm_parser *x, const mm_tok *t, const char *what, int64_t *v) {
    char q[48];
    int r = tn_io_parse_int(t->s, t->n, v);
    if (r == TN_IO_INT_BAD)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "%s '%s' is not an integer", what,
                       tn_io_snippet(q, t->s, t->n));
    if (r == TN_IO_INT_OVERFLOW)
        return MM_FAIL(x, TN_IO_ERR_TOO_LARGE, "%s '%s' is out of range", what,
                       tn_io_snippet(q, t->s, t->n));
    if (*v < 0) return MM_FAIL(x, TN_IO_ERR_FORMAT, "negative %s %lld", what, (long long)*v);
    return 0;
}

/* Element (i, j) of m (0-based): set to, or incremented by, the value. */
static void put(tn_matrix *m, int64_t i, int64_t j, double d, float f, int add) {
    int64_t k = i + j * m->rows;
    if (m->is_double)
        ((double *)m->data)[k] = add ? ((double *)m->data)[k] + d : d;
    else
        ((float *)m->data)[k] = add ? ((float *)m->data)[k] + f : f;
}

/* Stores entry (i, j) and, for the symmetric kinds, its mirror. */
static void put_sym(mm_parser *x, tn_matrix *m, int64_t i, int64_t j, double d, float f) {
    int add = x->coordinate; /* coordinate duplicates are summed */
    put(m, i, j, d, f, add);
    if (i != j && x->symmetry != MM_GENERAL) {
        if (x->symmetry == MM_SKEW) d = -d, f = -f;
        put(m, j, i, d, f, add);
    }
}

/* The banner's keywords. */
static int parse_banner(mm_parser *x) {
    const char *b, *e;
    mm_tok t[6];
    char q[48];
    if (!next_line(x, &b, &e))
        return tn_io_fail(x->err, x->errlen, x->name, TN_IO_ERR_FORMAT, "empty file");
    int n = split(b, e, t, 5);
    if (n < 1 || !tok_is(&t[0], "%%MatrixMarket"))
        return tn_io_fail(x->err, x->errlen, x->name, TN_IO_ERR_FORMAT,
                          "not a Matrix Market file (the first line must start with "
                          "%%%%MatrixMarket)");
    if (n != 5)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "%s", "the banner must be '%%MatrixMarket matrix "
                                                  "FORMAT FIELD SYMMETRY'");
    if (tok_is(&t[1], "vector"))
        return MM_FAIL(x, TN_IO_ERR_UNSUPPORTED, "%s", "'vector' objects are not supported");
    if (!tok_is(&t[1], "matrix"))
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "unknown object '%s' (expected matrix)",
                       tn_io_snippet(q, t[1].s, t[1].n));
    if (tok_is(&t[2], "coordinate"))
        x->coordinate = 1;
    else if (tok_is(&t[2], "array"))
        x->coordinate = 0;
    else
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "unknown format '%s' (expected coordinate or array)",
                       tn_io_snippet(q, t[2].s, t[2].n));
    if (tok_is(&t[3], "real"))
        x->field = MM_REAL;
    else if (tok_is(&t[3], "integer"))
        x->field = MM_INTEGER;
    else if (tok_is(&t[3], "pattern"))
        x->field = MM_PATTERN;
    else if (tok_is(&t[3], "complex"))
        return MM_FAIL(x, TN_IO_ERR_UNSUPPORTED, "%s",
                       "complex matrices are not supported (real, integer, pattern only)");
    else
        return MM_FAIL(x, TN_IO_ERR_FORMAT,
                       "unknown field '%s' (expected real, integer or pattern)",
                       tn_io_snippet(q, t[3].s, t[3].n));
    if (tok_is(&t[4], "general"))
        x->symmetry = MM_GENERAL;
    else if (tok_is(&t[4], "symmetric"))
        x->symmetry = MM_SYMMETRIC;
    else if (tok_is(&t[4], "skew-symmetric"))
        x->symmetry = MM_SKEW;
    else if (tok_is(&t[4], "hermitian"))
        return MM_FAIL(x, TN_IO_ERR_UNSUPPORTED, "%s", "hermitian matrices are not supported");
    else
        return MM_FAIL(x, TN_IO_ERR_FORMAT,
                       "unknown symmetry '%s' (expected general, symmetric or skew-symmetric)",
                       tn_io_snippet(q, t[4].s, t[4].n));
    if (x->field == MM_PATTERN && !x->coordinate)
        return MM_FAIL(x, TN_IO_ERR_FORMAT, "%s", "'pattern' is only valid with 'coordinate'");
    return 0;
}

/* Array entries: column by column, the lower triangle (strictly lower for
 * skew-symmetric) of each column for the symmetric kinds. */
static int read_array(mm_parser *x, tn_matrix *m, int64_t *count) {
    const int64_t r = m->rows, c = m->cols;
    const int64_t skip = x->symmetry == MM_SKEW; /* start of column j: j + skip */
    mm_tok t[MM_MAX_FIELDS];
    int64_t i, j = 0, done, expect;
    int st;
    if (x->symmetry == MM_GENERAL)
        expect = r * c;
    else if (x->symmetry == MM_SYMMETRIC)
        expect = r % 2 ? (r + 1) / 2 * r : r / 2 * (r + 1);
    else
        expect = r % 2 ? (r - 1) / 2 * r : r / 2 * (r - 1);
    *count = expect;
    i = x->symmetry == MM_GENERAL ? 0 : skip;
    for (done = 0; done < expect; done++) {
        /* (i, j): next stored position; skip columns with none. */
        while (i >= r) j++, i = x->symmetry == MM_GENERAL ? 0 : j + skip;
        int n = next_data_line(x, t, MM_MAX_FIELDS);
        if (n < 0)
            return tn_io_fail(x->err, x->errlen, x->name, TN_IO_ERR_FORMAT,
                              "truncated: %lld array entries expected, %lld found",
                              (long long)expect, (long long)done);
        if (n != 1)
            return MM_FAIL(x, TN_IO_ERR_FORMAT, "expected one value, found %s%d fields",
                           n > MM_MAX_FIELDS ? "more than " : "",
                           n > MM_MAX_FIELDS ? MM_MAX_FIELDS : n);
        double d;
        float f = 0;
        if ((st = parse_value(x, &t[0], i, j, &d, &f))) return st;
        put_sym(x, m, i, j, d, f);
        i++;
    }
    return 0;
}

/* Coordinate entries: "i j value" ("i j" for pattern), nnz of them. */
static int read_coordinate(mm_parser *x, tn_matrix *m, int64_t nnz) {
    const int want = x->field == MM_PATTERN ? 2 : 3;
    mm_tok t[MM_MAX_FIELDS];
    int st;
    char q1[48], q2[48];
    for (int64_t done = 0; done < nnz; done++) {
        int n = next_data_line(x, t, MM_MAX_FIELDS);
        if (n < 0)
            return tn_io_fail(x->err, x->errlen, x->name, TN_IO_ERR_FORMAT,
                              "truncated: %lld entries announced, %lld found", (long long)nnz,
                              (long long)done);
        if (n != want)
            return MM_FAIL(x, TN_IO_ERR_FORMAT, "expected %s, found %s%d fields",
                           want == 2 ? "'row col'" : "'row col value'",
                           n > MM_MAX_FIELDS ? "more than " : "",
                           n > MM_MAX_FIELDS ? MM_MAX_FIELDS : n);
        int64_t i, j;
        double d = 1.0;
        float f = 1.0f;
        if ((st = parse_index(x, &t[0], m->rows, "row", &i))) return st;
        if ((st = parse_index(x, &t[1], m->cols, "column", &j))) return st;
        if (want == 3 && (st = parse_value(x, &t[2], i, j, &d, &f))) return st;
        if (x->symmetry != MM_GENERAL && (i < j || (i == j && x->symmetry == MM_SKEW)))
            return MM_FAIL(x, TN_IO_ERR_FORMAT,
                           "entry (%s, %s) is %s the diagonal; a %s file stores only the %s",
                           tn_io_snippet(q1, t[0].s, t[0].n), tn_io_snippet(q2, t[1].s, t[1].n),
                           i == j ? "on" : "above",
                           x->symmetry == MM_SKEW ? "skew-symmetric" : "symmetric",
                           x->symmetry == MM_SKEW ? "strictly lower triangle"
                                                  : "lower triangle");
        put_sym(x, m, i, j, d, f);
    }
    return 0;
}

int tn_io_parse_mtx(const void *buf, size_t len, const char *name, int want, size_t max_bytes,
                    tn_matrix *out, char *err, size_t errlen) {
    mm_parser x;
    mm_tok t[MM_MAX_FIELDS];
    int64_t rows, cols, nnz = 0, count = 0;
    int st, n;

    if (!name) name = "<buffer>";
    if (err && errlen) err[0] = '\0';
    if (!out) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "no output matrix given");
    memset(out, 0, sizeof *out);
    if (!buf && len) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "NULL buffer");
    if (want < TN_IO_AS_STORED || want > TN_IO_AS_DOUBLE)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "invalid element type %d", want);
    memset(&x, 0, sizeof x);
    x.p = buf;
    x.end = len ? x.p + len : x.p; /* no arithmetic on a NULL buffer */
    x.name = name;
    x.err = err;
    x.errlen = errlen;
    x.out_double = want != TN_IO_AS_FLOAT;

    if ((st = parse_banner(&x))) return st;

    /* Size line. */
    n = next_data_line(&x, t, MM_MAX_FIELDS);
    if (n < 0)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT, "truncated: no size line");
    if (n != (x.coordinate ? 3 : 2))
        return MM_FAIL(&x, TN_IO_ERR_FORMAT, "the size line must be '%s'",
                       x.coordinate ? "rows cols nonzeros" : "rows cols");
    if ((st = parse_size(&x, &t[0], "row count", &rows)) ||
        (st = parse_size(&x, &t[1], "column count", &cols)) ||
        (x.coordinate && (st = parse_size(&x, &t[2], "nonzero count", &nnz))))
        return st;
    if (x.symmetry != MM_GENERAL && rows != cols)
        return MM_FAIL(&x, TN_IO_ERR_FORMAT, "a %s matrix must be square, this one is %lld x %lld",
                       x.symmetry == MM_SKEW ? "skew-symmetric" : "symmetric", (long long)rows,
                       (long long)cols);

    /* The dense result, zeroed, within the cap. */
    if ((st = tn_io_alloc_matrix(out, rows, cols, x.out_double, max_bytes, 1, name, err, errlen)))
        return st;

    x.loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    st = x.coordinate ? read_coordinate(&x, out, nnz) : read_array(&x, out, &count);
    if (x.coordinate) count = nnz;
    if (!st && next_data_line(&x, t, MM_MAX_FIELDS) >= 0)
        st = MM_FAIL(&x, TN_IO_ERR_FORMAT, "trailing data (the size line announced %lld %s)",
                     (long long)count, count == 1 ? "entry" : "entries");
    if (x.loc) freelocale(x.loc);
    if (st) {
        tn_matrix_free(out);
        return st;
    }
    out->lost_precision = x.lost;
    return TN_IO_OK;
}
