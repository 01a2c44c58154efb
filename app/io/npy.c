/* NumPy .npy files: reading (versions 1.0-3.0, float32/float64, either byte
 * order, C or Fortran order; matrices: 1-D and 2-D, tensors: 1-D to
 * TN_IO_MAX_NDIM-D) and writing. See io.h for what is accepted. Format
 * reference: numpy/lib/format.py.
 *
 *   "\x93NUMPY" major minor HEADER_LEN (uint16 LE for 1.x, uint32 LE for
 *   2.x/3.x) HEADER (a Python dict literal, space-padded, '\n'-terminated)
 *   DATA (rows*cols items, in C or Fortran order) */
#include "io/io.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_DIMS TN_IO_MAX_NDIM /* more is reported as garbage */

typedef struct {
    int itemsize;  /* 4 or 8 */
    int swap;      /* the file's byte order differs from the host's */
    int fortran;   /* fortran_order */
    int ndim;      /* matrices: 1 or 2 once validated; tensors: 1..NPY_MAX_DIMS */
    int64_t rows, cols;
    int64_t dims[NPY_MAX_DIMS];
} npy_info;

/* ------------------------------------------------- header dictionary */

/* A cursor over the header text; name/err for messages. */
typedef struct {
    const char *p, *end, *start;
    const char *name;
    char *err;
    size_t errlen;
} hscan;

static void hs_ws(hscan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t')) s->p++;
}

/* A malformed-header error quoting the text at the cursor. */
static int hs_bad(hscan *s, const char *what) {
    char q[48];
    const char *end = s->end; /* the padding is not worth quoting */
    while (end > s->p && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r')) end--;
    if (s->p >= end)
        return tn_io_fail(s->err, s->errlen, s->name, TN_IO_ERR_FORMAT,
                          "malformed .npy header: %s, found the end of the header", what);
    return tn_io_fail(s->err, s->errlen, s->name, TN_IO_ERR_FORMAT,
                      "malformed .npy header: %s at offset %td, found '%s'", what,
                      s->p - s->start, tn_io_snippet(q, s->p, (size_t)(end - s->p)));
}

static int hs_expect(hscan *s, char c, const char *what) {
    hs_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 0;
    }
    return hs_bad(s, what);
}

/* A Python string literal in '...' or "..." without escapes: [*str, +*n). */
static int hs_string(hscan *s, const char **str, size_t *n, const char *what) {
    hs_ws(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) return hs_bad(s, what);
    char q = *s->p;
    const char *b = s->p + 1, *e = b;
    while (e < s->end && *e != q) {
        if (*e == '\n' || *e == '\r') break; /* the string cannot go on */
        if (*e == '\\' || (unsigned char)*e < 0x20) {
            s->p = e;
            return hs_bad(s, "unsupported character in a string");
        }
        e++;
    }
    if (e >= s->end || *e != q) return hs_bad(s, "unterminated string");
    *str = b;
    *n = (size_t)(e - b);
    s->p = e + 1;
    return 0;
}

static int hs_bool(hscan *s, int *v) {
    hs_ws(s);
    size_t left = (size_t)(s->end - s->p);
    if (left >= 4 && memcmp(s->p, "True", 4) == 0) {
        *v = 1;
        s->p += 4;
    } else if (left >= 5 && memcmp(s->p, "False", 5) == 0) {
        *v = 0;
        s->p += 5;
    } else {
        return hs_bad(s, "fortran_order must be True or False");
    }
    if (s->p < s->end && (*s->p == '_' || (*s->p >= 'a' && *s->p <= 'z') ||
                          (*s->p >= 'A' && *s->p <= 'Z') || (*s->p >= '0' && *s->p <= '9')))
        return hs_bad(s, "fortran_order must be True or False");
    return 0;
}

/* A shape tuple "(d0, d1, ...)" of non-negative integers (Python 2's "3L"
 * suffix accepted). Python's "(3)" is an int, not a tuple: rejected. */
static int hs_shape(hscan *s, int64_t *dims, int *ndim) {
    int st = hs_expect(s, '(', "expected '(' starting the shape tuple");
    int comma_after_last = 0;
    if (st) return st;
    *ndim = 0;
    for (;;) {
        hs_ws(s);
        if (s->p < s->end && *s->p == ')') {
            s->p++;
            break;
        }
        if (*ndim && !comma_after_last) return hs_bad(s, "expected ',' or ')' in the shape");
        const char *b = s->p;
        while (s->p < s->end && ((*s->p >= '0' && *s->p <= '9') || *s->p == '-' || *s->p == '+'))
            s->p++;
        const char *e = s->p;
        if (s->p < s->end && (*s->p == 'L' || *s->p == 'l')) s->p++;
        int64_t v = 0;
        int r = tn_io_parse_int(b, (size_t)(e - b), &v);
        if (r == TN_IO_INT_BAD) {
            s->p = b;
            return hs_bad(s, "expected a dimension (a non-negative integer) in the shape");
        }
        if (r == TN_IO_INT_OVERFLOW || v < 0) {
            char q[48];
            return tn_io_fail(s->err, s->errlen, s->name,
                              r ? TN_IO_ERR_TOO_LARGE : TN_IO_ERR_FORMAT,
                              "%s dimension '%s' in the .npy shape",
                              r ? "out-of-range" : "negative",
                              tn_io_snippet(q, b, (size_t)(e - b)));
        }
        if (*ndim == NPY_MAX_DIMS) return hs_bad(s, "too many dimensions in the shape");
        dims[(*ndim)++] = v;
        hs_ws(s);
        comma_after_last = s->p < s->end && *s->p == ',';
        if (comma_after_last) s->p++;
    }
    if (*ndim == 1 && !comma_after_last)
        return tn_io_fail(s->err, s->errlen, s->name, TN_IO_ERR_FORMAT,
                          "malformed .npy header: shape (%lld) is not a tuple (expected (%lld,))",
                          (long long)dims[0], (long long)dims[0]);
    return 0;
}

/* The dtype string: [<>|=]?f[48]. */
static int parse_descr(const char *d, size_t n, npy_info *info, const char *name, char *err,
                       size_t errlen) {
    char q[48], order = '=';
    const char *t = d;
    size_t k = n;
    if (k && (t[0] == '<' || t[0] == '>' || t[0] == '|' || t[0] == '=')) order = *t++, k--;
    if (k != 2 || t[0] != 'f' || (t[1] != '4' && t[1] != '8'))
        return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                          "dtype '%s' is not supported (only float32 '<f4' and float64 '<f8', "
                          "either byte order)",
                          tn_io_snippet(q, d, n));
    int file_little = order == '<' || (order != '>' && tn_io_host_little());
    info->itemsize = t[1] - '0';
    info->swap = file_little != tn_io_host_little();
    return 0;
}

/* Parses the header dictionary hdr[0..n) into info. tensor = 0: only 1-D
 * and 2-D arrays (a matrix); 1: 1-D to NPY_MAX_DIMS-D. */
static int parse_dict(const char *hdr, size_t n, npy_info *info, int tensor, const char *name,
                      char *err, size_t errlen) {
    hscan s = {hdr, hdr + n, hdr, name, err, errlen};
    int have_descr = 0, have_order = 0, have_shape = 0, st, ndim = 0;
    int64_t dims[NPY_MAX_DIMS];
    char q[48];

    if ((st = hs_expect(&s, '{', "expected '{' starting the header dictionary"))) return st;
    for (;;) {
        const char *key;
        size_t klen;
        hs_ws(&s);
        if (s.p < s.end && *s.p == '}') {
            s.p++;
            break;
        }
        if ((st = hs_string(&s, &key, &klen, "expected a quoted key or '}'"))) return st;
        if ((st = hs_expect(&s, ':', "expected ':' after a key"))) return st;
        if (klen == 5 && memcmp(key, "descr", 5) == 0 && !have_descr) {
            const char *d;
            size_t dn;
            hs_ws(&s);
            if (s.p < s.end && (*s.p == '[' || *s.p == '('))
                return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                                  "structured dtypes are not supported (only float32 and "
                                  "float64 arrays)");
            if ((st = hs_string(&s, &d, &dn, "expected the dtype string after 'descr'")))
                return st;
            if ((st = parse_descr(d, dn, info, name, err, errlen))) return st;
            have_descr = 1;
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0 && !have_order) {
            if ((st = hs_bool(&s, &info->fortran))) return st;
            have_order = 1;
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0 && !have_shape) {
            if ((st = hs_shape(&s, dims, &ndim))) return st;
            have_shape = 1;
        } else {
            int dup = (klen == 5 && (!memcmp(key, "descr", 5) || !memcmp(key, "shape", 5))) ||
                      (klen == 13 && !memcmp(key, "fortran_order", 13));
            return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                              "malformed .npy header: %s key '%s'",
                              dup ? "duplicate" : "unexpected", tn_io_snippet(q, key, klen));
        }
        hs_ws(&s);
        if (s.p < s.end && *s.p == ',') {
            s.p++;
            continue;
        }
        if ((st = hs_expect(&s, '}', "expected ',' or '}' after a value"))) return st;
        break;
    }
    /* Only padding may follow. */
    while (s.p < s.end && (*s.p == ' ' || *s.p == '\t' || *s.p == '\n' || *s.p == '\r')) s.p++;
    if (s.p < s.end) return hs_bad(&s, "unexpected text after the header dictionary");
    if (!have_descr || !have_order || !have_shape)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "malformed .npy header: missing key '%s'",
                          !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (!tensor && ndim != 1 && ndim != 2)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                          "%d-dimensional arrays are not supported (only 1-D and 2-D)", ndim);
    if (tensor && ndim < 1)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                          "0-dimensional arrays (scalars) are not supported");
    info->ndim = ndim;
    memcpy(info->dims, dims, sizeof(int64_t) * (size_t)ndim);
    info->rows = dims[0];
    info->cols = ndim == 2 ? dims[1] : 1;
    return 0;
}

/* ------------------------------------------------------------ reading */

/* Copies one file element at src to dst, byte-swapping and converting;
 * sets *lost when narrowing changed the value. Returns 1 when narrowing to
 * float turned a finite value into Inf or a nonzero one into 0 (*bad holds
 * it), else 0. */
static inline int copy_elem(unsigned char *dst, int out_size, const unsigned char *src,
                            int in_size, int swap, int *lost, double *bad) {
    unsigned char b[8];
    if (swap)
        for (int k = 0; k < in_size; k++) b[k] = src[in_size - 1 - k];
    else
        memcpy(b, src, (size_t)in_size);
    if (in_size == out_size) {
        memcpy(dst, b, (size_t)out_size); /* bit-exact, NaN payloads included */
    } else if (in_size == 4) {
        float f;
        memcpy(&f, b, 4);
        double d = f;
        memcpy(dst, &d, 8);
    } else {
        double d;
        memcpy(&d, b, 8);
        float f = (float)d;
        memcpy(dst, &f, 4);
        if ((double)f != d && !isnan(d)) {
            *lost = 1;
            if ((isinf(f) && isfinite(d)) || (f == 0.0f && d != 0.0)) {
                *bad = d;
                return 1;
            }
        }
    }
    return 0;
}

/* The message of a float64 element outside float32's range, at idx[0..nd). */
static int range_fail(char *err, size_t errlen, const char *name, int nd, const int64_t *idx,
                      double v) {
    char pos[TN_IO_MAX_NDIM * 22 + 4];
    size_t k = 0;
    pos[0] = 0;
    for (int a = 0; a < nd && k + 1 < sizeof pos; a++) {
        int w = snprintf(pos + k, sizeof pos - k, "%s%lld", a ? ", " : "[", (long long)idx[a]);
        if (w < 0) break;
        k += (size_t)w;
    }
    if (k + 1 < sizeof pos) snprintf(pos + k, sizeof pos - k, "]");
    char num[32];
    for (int prec = 15; prec <= 17; prec++) { /* the shortest that reads back as v */
        snprintf(num, sizeof num, "%.*g", prec, v);
        if (strtod(num, NULL) == v) break;
    }
    return tn_io_fail(err, errlen, name, TN_IO_ERR_RANGE,
                      "float64 element %s (0-based) = %s is outside float32's range: it "
                      "would become %s (|x| %s); scale the data into [%.9g, %.9g] first",
                      pos, num, fabs(v) > 1 ? "Inf" : "0",
                      fabs(v) > 1 ? "> 3.4028235e+38" : "< 1.4e-45 after rounding",
                      (double)FLT_TRUE_MIN, (double)FLT_MAX);
}

/* Fills out (allocated) from the file's data section. Returns 0, or 1 when
 * an element is outside float32's range: *bad_k (column-major index of the
 * first such element) and *bad hold it. */
static int load_data(tn_matrix *out, const unsigned char *src, const npy_info *info,
                     int64_t *bad_k, double *bad) {
    const int is = info->itemsize, os = out->is_double ? 8 : 4;
    const int64_t r = out->rows, c = out->cols;
    unsigned char *dst = out->data;
    int lost = 0;
    double v;
    *bad_k = -1;
    /* The file's layout equals column-major unless it is a true C-order 2-D. */
    int colmajor = info->fortran || info->ndim == 1 || r == 1 || c == 1;
    if (colmajor && is == os && !info->swap) {
        memcpy(dst, src, (size_t)(r * c) * (size_t)os);
    } else if (colmajor) {
        for (int64_t k = 0; k < r * c; k++)
            if (copy_elem(dst + k * os, os, src + k * is, is, info->swap, &lost, &v) &&
                *bad_k < 0)
                *bad_k = k, *bad = v;
    } else {
        /* Row-major source: blocked transpose. */
        const int64_t B = 32;
        for (int64_t jb = 0; jb < c; jb += B)
            for (int64_t ib = 0; ib < r; ib += B)
                for (int64_t i = ib; i < r && i < ib + B; i++)
                    for (int64_t j = jb; j < c && j < jb + B; j++)
                        if (copy_elem(dst + (i + j * r) * os, os, src + (i * c + j) * is, is,
                                      info->swap, &lost, &v) &&
                            (*bad_k < 0 || i + j * r < *bad_k))
                            *bad_k = i + j * r, *bad = v;
    }
    out->lost_precision = lost;
    return *bad_k >= 0;
}

/* Magic, version, header length and dictionary of buf[0..len): fills info
 * and *off (where the data starts). */
static int parse_prefix(const unsigned char *b, size_t len, const char *name, int tensor,
                        npy_info *info, size_t *off, char *err, size_t errlen) {
    size_t hlen, pre;
    int st, major, minor;
    memset(info, 0, sizeof *info);
    if (len == 0) return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT, "empty file");
    if (len < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        if (len < NPY_MAGIC_LEN && memcmp(b, NPY_MAGIC, len) == 0)
            return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                              "truncated .npy file (%zu bytes)", len);
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "not a .npy file (no \\x93NUMPY magic)");
    }
    if (len < NPY_MAGIC_LEN + 2)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT, "truncated .npy file (%zu bytes)",
                          len);
    major = b[6];
    minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                          ".npy format version %d.%d is not supported (1.0, 2.0, 3.0)", major,
                          minor);
    pre = major == 1 ? 10 : 12;
    if (len < pre)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "truncated .npy file (%zu bytes, header length missing)", len);
    hlen = major == 1 ? (size_t)b[8] | (size_t)b[9] << 8
                      : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
                            (size_t)b[11] << 24;
    if (hlen > len - pre)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "truncated .npy header: %zu bytes announced, %zu present", hlen,
                          len - pre);
    if ((st = parse_dict((const char *)b + pre, hlen, info, tensor, name, err, errlen))) return st;
    *off = pre + hlen;
    return 0;
}

/* Checks the common arguments of the parsers; 0 or a status with a message. */
static int check_parse_args(const void *buf, size_t len, const char *name, int want, void *out,
                            char *err, size_t errlen) {
    if (!out) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "no output given");
    if (!buf && len) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "NULL buffer");
    if (want < TN_IO_AS_STORED || want > TN_IO_AS_DOUBLE)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "invalid element type %d", want);
    return 0;
}

int tn_io_parse_npy(const void *buf, size_t len, const char *name, int want, size_t max_bytes,
                    tn_matrix *out, char *err, size_t errlen) {
    const unsigned char *b = buf;
    npy_info info;
    size_t off = 0, data_len, need;
    uint64_t elems;
    int st;

    if (!name) name = "<buffer>";
    if (err && errlen) err[0] = '\0';
    if (out) memset(out, 0, sizeof *out);
    if ((st = check_parse_args(buf, len, name, want, out, err, errlen))) return st;

    /* Prefix and header dictionary, then the data's size against the file. */
    if ((st = parse_prefix(b, len, name, 0, &info, &off, err, errlen))) return st;
    need = (size_t)info.itemsize;
    if (__builtin_mul_overflow((uint64_t)info.rows, (uint64_t)info.cols, &elems) ||
        elems > SIZE_MAX / need)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE,
                          "shape (%lld, %lld) is too large to address", (long long)info.rows,
                          (long long)info.cols);
    need *= (size_t)elems;
    data_len = len - off;
    if (data_len < need)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "truncated .npy data: %lld x %lld float%d needs %zu bytes, %zu present",
                          (long long)info.rows, (long long)info.cols, 8 * info.itemsize, need,
                          data_len);
    if (data_len > need)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "%zu bytes of trailing data after the .npy array", data_len - need);
    /* Then the result's size against the cap, and the allocation. */
    int out_double = want == TN_IO_AS_STORED ? info.itemsize == 8 : want;
    if ((st = tn_io_alloc_matrix(out, info.rows, info.cols, out_double, max_bytes, 0, name, err,
                                 errlen)))
        return st;
    int64_t bad_k = 0;
    double bad = 0;
    if (need && load_data(out, b + off, &info, &bad_k, &bad)) {
        const int64_t idx[2] = {bad_k % info.rows, bad_k / info.rows};
        tn_matrix_free(out);
        return range_fail(err, errlen, name, info.ndim, idx, bad);
    }
    return TN_IO_OK;
}

int tn_io_npy_data_size(const void *buf, size_t len, const char *name, int tensor, int want,
                        size_t max_bytes, size_t *data, char *err, size_t errlen) {
    npy_info info;
    size_t off = 0;
    uint64_t elems = 1;
    int st, ovf = 0;
    if (!name) name = "<buffer>";
    if ((st = check_parse_args(buf, len, name, want, data, err, errlen))) return st;
    if ((st = parse_prefix(buf, len, name, tensor, &info, &off, err, errlen))) return st;
    for (int a = 0; a < info.ndim; a++)
        ovf |= __builtin_mul_overflow(elems, (uint64_t)info.dims[a], &elems);
    const int out_double = want == TN_IO_AS_STORED ? info.itemsize == 8 : want;
    const size_t es = out_double ? 8 : 4;
    if (max_bytes == 0) max_bytes = TN_IO_DEFAULT_MAX_BYTES;
    if (ovf || elems > SIZE_MAX / 8 || (size_t)elems * es > max_bytes)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE,
                          "the .npy array of %llu%s elements needs more than the limit of %zu "
                          "bytes",
                          (unsigned long long)elems, ovf ? " (overflowing)" : "", max_bytes);
    *data = (size_t)elems * (size_t)info.itemsize;
    return TN_IO_OK;
}

/* ------------------------------------------------------------ tensors */

/* "(2, 3, 4)" (numpy's spelling, "(5,)" for one dimension) into buf. */
static const char *shape_str(char *buf, size_t n, int ndim, const int64_t *dims) {
    size_t k = 0;
    buf[0] = 0;
    for (int a = 0; a < ndim && k + 1 < n; a++) {
        int w = snprintf(buf + k, n - k, "%s%lld", a ? ", " : "(", (long long)dims[a]);
        if (w < 0) break;
        k += (size_t)w;
    }
    if (k + 1 < n) snprintf(buf + k, n - k, "%s", ndim == 1 ? ",)" : ")");
    return buf;
}

/* Fills t->data (allocated, t->dims set) from the file's data section:
 * Fortran order as it is, C order with its axes reversed into Fortran
 * order (an odometer over the C-order index, last axis fastest). Returns 1
 * when an element is outside float32's range (the first in memory order:
 * offset *bad_k, value *bad), else 0. */
static int load_tensor(tn_tensor *t, const unsigned char *src, const npy_info *info,
                       int64_t total, int64_t *bad_k, double *bad) {
    const int is = info->itemsize, os = t->is_double ? 8 : 4, nd = t->ndim;
    unsigned char *dst = t->data;
    int lost = 0, big = 0;
    double v;
    *bad_k = -1;
    for (int a = 0; a < nd; a++) big += t->dims[a] > 1;
    if (info->fortran || big <= 1) { /* the file's layout is already first-index-fastest */
        if (is == os && !info->swap) memcpy(dst, src, (size_t)total * (size_t)os);
        else
            for (int64_t k = 0; k < total; k++)
                if (copy_elem(dst + k * os, os, src + k * is, is, info->swap, &lost, &v) &&
                    *bad_k < 0)
                    *bad_k = k, *bad = v;
    } else {
        int64_t idx[TN_IO_MAX_NDIM] = {0}, fs[TN_IO_MAX_NDIM], off = 0;
        fs[0] = 1;
        for (int a = 1; a < nd; a++) fs[a] = fs[a - 1] * t->dims[a - 1];
        for (int64_t k = 0; k < total; k++) {
            if (copy_elem(dst + off * os, os, src + k * is, is, info->swap, &lost, &v) &&
                (*bad_k < 0 || off < *bad_k))
                *bad_k = off, *bad = v;
            for (int a = nd - 1; a >= 0; a--) {
                off += fs[a];
                if (++idx[a] < t->dims[a]) break;
                off -= fs[a] * t->dims[a];
                idx[a] = 0;
            }
        }
    }
    t->lost_precision = lost;
    return *bad_k >= 0;
}

void tn_tensor_free(tn_tensor *t) {
    if (!t) return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

int tn_io_parse_npy_tensor(const void *buf, size_t len, const char *name, int want,
                           size_t max_bytes, tn_tensor *out, char *err, size_t errlen) {
    const unsigned char *b = buf;
    npy_info info;
    size_t off = 0, data_len, need, es;
    uint64_t elems = 1;
    char sh[TN_IO_MAX_NDIM * 22 + 4];
    int st, ovf = 0;

    if (!name) name = "<buffer>";
    if (err && errlen) err[0] = '\0';
    if (out) memset(out, 0, sizeof *out);
    if ((st = check_parse_args(buf, len, name, want, out, err, errlen))) return st;
    if ((st = parse_prefix(b, len, name, 1, &info, &off, err, errlen))) return st;
    shape_str(sh, sizeof sh, info.ndim, info.dims);
    for (int a = 0; a < info.ndim; a++)
        ovf |= __builtin_mul_overflow(elems, (uint64_t)info.dims[a], &elems);
    need = (size_t)info.itemsize;
    if (ovf || elems > SIZE_MAX / need || elems > (uint64_t)INT64_MAX)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE,
                          "shape %s is too large to address", sh);
    need *= (size_t)elems;
    data_len = len - off;
    if (data_len < need)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "truncated .npy data: shape %s float%d needs %zu bytes, %zu present", sh,
                          8 * info.itemsize, need, data_len);
    if (data_len > need)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT,
                          "%zu bytes of trailing data after the .npy array", data_len - need);
    const int out_double = want == TN_IO_AS_STORED ? info.itemsize == 8 : want;
    es = out_double ? 8 : 4;
    if (max_bytes == 0) max_bytes = TN_IO_DEFAULT_MAX_BYTES;
    if (elems > SIZE_MAX / es || (size_t)elems * es > max_bytes)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE,
                          "%s array of shape %s needs %llu elements of %zu bytes, above the "
                          "limit of %zu bytes",
                          out_double ? "double" : "float", sh, (unsigned long long)elems, es,
                          max_bytes);
    void *p = NULL;
    if (elems && !(p = malloc((size_t)elems * es)))
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ALLOC,
                          "out of memory allocating %zu bytes for an array of shape %s",
                          (size_t)elems * es, sh);
    out->ndim = info.ndim;
    memcpy(out->dims, info.dims, sizeof(int64_t) * (size_t)info.ndim);
    out->is_double = out_double;
    out->data = p;
    int64_t bad_k;
    double bad;
    if (elems && load_tensor(out, b + off, &info, (int64_t)elems, &bad_k, &bad)) {
        int64_t idx[TN_IO_MAX_NDIM];
        for (int a = 0; a < info.ndim; a++) idx[a] = bad_k % info.dims[a], bad_k /= info.dims[a];
        const int nd = info.ndim;
        tn_tensor_free(out);
        return range_fail(err, errlen, name, nd, idx, bad);
    }
    return TN_IO_OK;
}

/* ------------------------------------------------------------ writing */

typedef int (*npy_sink)(void *ctx, const void *p, size_t n);

/* Checks m and the flags; 0 or TN_IO_ERR_ARG with a message. */
static int check_matrix(const tn_matrix *m, unsigned flags, const char *name, char *err,
                        size_t errlen) {
    uint64_t elems;
    if (!m) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "no matrix given");
    if (flags & ~(unsigned)(TN_IO_NPY_C_ORDER | TN_IO_NPY_1D))
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "unknown flags 0x%x", flags);
    if (m->rows < 0 || m->cols < 0 ||
        __builtin_mul_overflow((uint64_t)m->rows, (uint64_t)m->cols, &elems) ||
        elems > SIZE_MAX / 8 || (elems && !m->data))
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG,
                          "invalid matrix (%lld x %lld, data %s)", (long long)m->rows,
                          (long long)m->cols, m->data ? "set" : "NULL");
    if ((flags & TN_IO_NPY_1D) && m->cols != 1)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG,
                          "a 1-D .npy needs a single column, the matrix has %lld",
                          (long long)m->cols);
    return 0;
}

#define NPY_HDR_CAP (128 + TN_IO_MAX_NDIM * 22) /* the largest header written */

/* Builds magic, version, length and padded dictionary of an array of shape
 * dims[0..ndim) into hdr; returns its length. Version 1.0 unless the header
 * needs more than 65535 bytes. */
static size_t build_header_shape(unsigned char *hdr, size_t cap, int is_double, int fortran,
                                 int ndim, const int64_t *dims) {
    char dict[NPY_HDR_CAP], sh[TN_IO_MAX_NDIM * 22 + 4];
    int dn = snprintf(dict, sizeof dict, "{'descr': '<f%d', 'fortran_order': %s, 'shape': %s, }",
                      is_double ? 8 : 4, fortran ? "True" : "False",
                      shape_str(sh, sizeof sh, ndim, dims));
    if (dn < 0 || (size_t)dn >= sizeof dict) return 0;
    /* Pad with spaces and a final '\n' to a multiple of 64 bytes in all. */
    size_t pre = 10, total = pre + (size_t)dn + 1;
    total = (total + 63) / 64 * 64;
    if (total - pre > 65535) { /* never for these dictionaries; kept for the format */
        pre = 12;
        total = (pre + (size_t)dn + 1 + 63) / 64 * 64;
    }
    size_t hlen = total - pre;
    if (total > cap) return 0;
    memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
    hdr[6] = pre == 10 ? 1 : 2;
    hdr[7] = 0;
    for (size_t k = 0; k < pre - 8; k++) hdr[8 + k] = (unsigned char)(hlen >> (8 * k));
    memcpy(hdr + pre, dict, (size_t)dn);
    memset(hdr + pre + dn, ' ', hlen - (size_t)dn - 1);
    hdr[total - 1] = '\n';
    return total;
}

/* The header of matrix m written with flags. */
static size_t build_header(unsigned char *hdr, size_t cap, const tn_matrix *m, unsigned flags) {
    const int64_t dims[2] = {m->rows, m->cols};
    if (flags & TN_IO_NPY_1D) return build_header_shape(hdr, cap, m->is_double, 0, 1, dims);
    return build_header_shape(hdr, cap, m->is_double, !(flags & TN_IO_NPY_C_ORDER), 2, dims);
}

/* Emits header and data (little-endian, in the file's order) to the sink. */
static int emit_npy(const tn_matrix *m, unsigned flags, npy_sink put, void *ctx) {
    unsigned char hdr[NPY_HDR_CAP], chunk[1 << 14];
    const size_t es = m->is_double ? 8 : 4;
    const int64_t r = m->rows, c = m->cols;
    const unsigned char *src = m->data;
    size_t hn = build_header(hdr, sizeof hdr, m, flags), fill = 0;
    int swap = !tn_io_host_little();
    int rowmajor = (flags & TN_IO_NPY_C_ORDER) && r > 1 && c > 1;
    if (!hn || put(ctx, hdr, hn)) return -1;
    if (r * c == 0) return 0;
    if (!rowmajor && !swap) return put(ctx, src, (size_t)(r * c) * es);
    for (int64_t i = 0; i < (rowmajor ? r : 1); i++) {
        int64_t n = rowmajor ? c : r * c;
        for (int64_t j = 0; j < n; j++) {
            const unsigned char *e = src + (size_t)(rowmajor ? i + j * r : j) * es;
            for (size_t k = 0; k < es; k++) chunk[fill + k] = e[swap ? es - 1 - k : k];
            fill += es;
            if (fill == sizeof chunk) {
                if (put(ctx, chunk, fill)) return -1;
                fill = 0;
            }
        }
    }
    return fill ? put(ctx, chunk, fill) : 0;
}

/* The same for an order-N array (Fortran order in memory): the file in
 * Fortran order, or in C order (the odometer of load_tensor backwards). */
static int emit_tensor(const tn_tensor *t, unsigned flags, npy_sink put, void *ctx) {
    unsigned char hdr[NPY_HDR_CAP], chunk[1 << 14];
    const size_t es = t->is_double ? 8 : 4;
    const int nd = t->ndim;
    const unsigned char *src = t->data;
    int64_t total = 1, idx[TN_IO_MAX_NDIM] = {0}, fs[TN_IO_MAX_NDIM], off = 0;
    int big = 0;
    for (int a = 0; a < nd; a++) total *= t->dims[a], big += t->dims[a] > 1;
    const int corder = (flags & TN_IO_NPY_C_ORDER) != 0, permute = corder && big > 1;
    const int swap = !tn_io_host_little();
    size_t hn = build_header_shape(hdr, sizeof hdr, t->is_double, !corder, nd, t->dims), fill = 0;
    if (!hn || put(ctx, hdr, hn)) return -1;
    if (total == 0) return 0;
    if (!permute && !swap) return put(ctx, src, (size_t)total * es);
    fs[0] = 1;
    for (int a = 1; a < nd; a++) fs[a] = fs[a - 1] * t->dims[a - 1];
    for (int64_t k = 0; k < total; k++) {
        const unsigned char *e = src + (size_t)(permute ? off : k) * es;
        for (size_t b = 0; b < es; b++) chunk[fill + b] = e[swap ? es - 1 - b : b];
        fill += es;
        if (fill == sizeof chunk) {
            if (put(ctx, chunk, fill)) return -1;
            fill = 0;
        }
        if (permute)
            for (int a = nd - 1; a >= 0; a--) {
                off += fs[a];
                if (++idx[a] < t->dims[a]) break;
                off -= fs[a] * t->dims[a];
                idx[a] = 0;
            }
    }
    return fill ? put(ctx, chunk, fill) : 0;
}

typedef struct {
    unsigned char *p;
    size_t len, cap;
} mem_sink;

static int put_mem(void *ctx, const void *p, size_t n) {
    mem_sink *s = ctx;
    if (n > s->cap - s->len) return -1;
    memcpy(s->p + s->len, p, n);
    s->len += n;
    return 0;
}

static int put_file(void *ctx, const void *p, size_t n) {
    return fwrite(p, 1, n, (FILE *)ctx) == n ? 0 : -1;
}

/* Writer of one kind of object (a matrix or a tensor) to a sink. */
typedef int (*npy_emitter)(const void *obj, unsigned flags, npy_sink put, void *ctx);
static int emit_matrix_cb(const void *obj, unsigned flags, npy_sink put, void *ctx) {
    return emit_npy(obj, flags, put, ctx);
}
static int emit_tensor_cb(const void *obj, unsigned flags, npy_sink put, void *ctx) {
    return emit_tensor(obj, flags, put, ctx);
}

/* Encodes obj (hn header bytes + data bytes) into a malloc'ed buffer. */
static int encode_with(npy_emitter emit, const void *obj, unsigned flags, size_t hn, size_t data,
                       void **buf, size_t *len, const char *name, char *err, size_t errlen) {
    if (!hn || data > SIZE_MAX - hn)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE, "array too large to encode");
    mem_sink s = {malloc(hn + data), 0, hn + data};
    if (!s.p)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ALLOC, "out of memory (%zu bytes)",
                          hn + data);
    if (emit(obj, flags, put_mem, &s) || s.len != s.cap) {
        free(s.p);
        return tn_io_fail(err, errlen, name, TN_IO_ERR_WRITE,
                          "internal error: encoded size mismatch");
    }
    *buf = s.p;
    *len = s.len;
    return TN_IO_OK;
}

/* Writes obj to path; a partially written regular file is removed. */
static int write_with(npy_emitter emit, const void *obj, unsigned flags, const char *path,
                      char *err, size_t errlen) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot create: %s", strerror(e));
    }
    /* Only a regular file is removed after a failure (never /dev/...). */
    struct stat sb;
    int regular = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    int bad = emit(obj, flags, put_file, f);
    int e = bad ? errno : 0;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        if (regular) remove(path);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_WRITE, "write failed: %s",
                          e ? strerror(e) : "short write");
    }
    return TN_IO_OK;
}

int tn_io_encode_npy(const tn_matrix *m, unsigned flags, void **buf, size_t *len, char *err,
                     size_t errlen) {
    const char *name = "<buffer>";
    int st;
    if (err && errlen) err[0] = '\0';
    if (!buf || !len) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "no output buffer");
    *buf = NULL;
    *len = 0;
    if ((st = check_matrix(m, flags, name, err, errlen))) return st;
    unsigned char hdr[NPY_HDR_CAP];
    size_t hn = build_header(hdr, sizeof hdr, m, flags);
    size_t data = (size_t)(m->rows * m->cols) * (m->is_double ? 8 : 4);
    return encode_with(emit_matrix_cb, m, flags, hn, data, buf, len, name, err, errlen);
}

int tn_io_write_npy(const char *path, const tn_matrix *m, unsigned flags, char *err,
                    size_t errlen) {
    int st;
    if (err && errlen) err[0] = '\0';
    if (!path) return tn_io_fail(err, errlen, "(null)", TN_IO_ERR_ARG, "no file name given");
    if ((st = check_matrix(m, flags, path, err, errlen))) return st;
    return write_with(emit_matrix_cb, m, flags, path, err, errlen);
}

/* Checks t and the flags; 0 or TN_IO_ERR_ARG with a message. Sets *bytes. */
static int check_tensor(const tn_tensor *t, unsigned flags, size_t *bytes, const char *name,
                        char *err, size_t errlen) {
    uint64_t elems = 1;
    int ovf = 0;
    if (!t) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "no array given");
    if (flags & ~(unsigned)TN_IO_NPY_C_ORDER)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "unknown flags 0x%x", flags);
    if (t->ndim < 1 || t->ndim > TN_IO_MAX_NDIM)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG,
                          "invalid array order %d (1 to %d)", t->ndim, TN_IO_MAX_NDIM);
    for (int a = 0; a < t->ndim; a++) {
        if (t->dims[a] < 0)
            return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "negative dimension %lld",
                              (long long)t->dims[a]);
        ovf |= __builtin_mul_overflow(elems, (uint64_t)t->dims[a], &elems);
    }
    if (ovf || elems > SIZE_MAX / 8 || elems > (uint64_t)INT64_MAX || (elems && !t->data))
        return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "invalid array (%llu elements, data %s)",
                          (unsigned long long)elems, t->data ? "set" : "NULL");
    *bytes = (size_t)elems * (t->is_double ? 8 : 4);
    return 0;
}

int tn_io_encode_npy_tensor(const tn_tensor *t, unsigned flags, void **buf, size_t *len,
                            char *err, size_t errlen) {
    const char *name = "<buffer>";
    size_t data = 0;
    int st;
    if (err && errlen) err[0] = '\0';
    if (!buf || !len) return tn_io_fail(err, errlen, name, TN_IO_ERR_ARG, "no output buffer");
    *buf = NULL;
    *len = 0;
    if ((st = check_tensor(t, flags, &data, name, err, errlen))) return st;
    unsigned char hdr[NPY_HDR_CAP];
    size_t hn = build_header_shape(hdr, sizeof hdr, t->is_double, !(flags & TN_IO_NPY_C_ORDER),
                                   t->ndim, t->dims);
    return encode_with(emit_tensor_cb, t, flags, hn, data, buf, len, name, err, errlen);
}

int tn_io_write_npy_tensor(const char *path, const tn_tensor *t, unsigned flags, char *err,
                           size_t errlen) {
    size_t data = 0;
    int st;
    if (err && errlen) err[0] = '\0';
    if (!path) return tn_io_fail(err, errlen, "(null)", TN_IO_ERR_ARG, "no file name given");
    if ((st = check_tensor(t, flags, &data, path, err, errlen))) return st;
    return write_with(emit_tensor_cb, t, flags, path, err, errlen);
}

/* ------------------------------------------------- blocks read in place */

size_t tn_io_npy_header(unsigned char *hdr, size_t cap, int64_t rows, int64_t cols,
                        int is_double) {
    const int64_t dims[2] = {rows, cols};
    if (!hdr || rows < 0 || cols < 0) return 0;
    return build_header_shape(hdr, cap, is_double, 1, 2, dims);
}

int tn_io_npy_layout(const char *path, tn_npy_layout *l, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!path || !l) return tn_io_fail(err, errlen, path ? path : "<null>", TN_IO_ERR_ARG,
                                       "no file or layout given");
    memset(l, 0, sizeof *l);
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot open: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) /* checked before open: a FIFO would wait for a writer */
        return tn_io_fail(err, errlen, path, TN_IO_ERR_UNSUPPORTED,
                          "not a regular file: each rank reads its own rows with positioned "
                          "reads, which a pipe, FIFO or device does not allow");
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot open: %s", strerror(e));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* replaced meanwhile */
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_UNSUPPORTED, "not a regular file");
    }
    /* the prefix, then the whole header (at most 4 GiB by the format; a
     * matrix's is far shorter: 1 MiB is plenty) */
    unsigned char pre[12];
    ssize_t got = pread(fd, pre, sizeof pre, 0);
    size_t want = 0;
    if (got >= 10 && !memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN)) {
        size_t hl = pre[6] == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8
                    : got >= 12 ? (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
                                      (size_t)pre[11] << 24
                                : 0;
        want = (pre[6] == 1 ? 10 : 12) + hl;
    }
    if (want == 0 || want > (size_t)st.st_size) want = (size_t)st.st_size < sizeof pre
                                                           ? (size_t)st.st_size : sizeof pre;
    if (want > ((size_t)1 << 20)) {
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_FORMAT,
                          "a .npy header of %zu bytes is not that of a matrix", want);
    }
    unsigned char *b = malloc(want ? want : 1);
    if (!b) {
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_ALLOC, "out of memory");
    }
    got = want ? pread(fd, b, want, 0) : 0;
    close(fd);
    if (got < 0 || (size_t)got != want) {
        free(b);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot read the header");
    }
    npy_info info;
    size_t off = 0;
    int s = parse_prefix(b, want, path, 0, &info, &off, err, errlen);
    free(b);
    if (s) return s;
    uint64_t elems, need;
    if (__builtin_mul_overflow((uint64_t)info.rows, (uint64_t)info.cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)info.itemsize, &need))
        return tn_io_fail(err, errlen, path, TN_IO_ERR_TOO_LARGE,
                          "shape (%lld, %lld) is too large to address", (long long)info.rows,
                          (long long)info.cols);
    const uint64_t have = (uint64_t)st.st_size - off;
    if (have < need)
        return tn_io_fail(err, errlen, path, TN_IO_ERR_FORMAT,
                          "truncated .npy data: %lld x %lld float%d needs %llu bytes, %llu "
                          "present",
                          (long long)info.rows, (long long)info.cols, 8 * info.itemsize,
                          (unsigned long long)need, (unsigned long long)have);
    if (have > need)
        return tn_io_fail(err, errlen, path, TN_IO_ERR_FORMAT,
                          "%llu bytes of trailing data after the .npy array",
                          (unsigned long long)(have - need));
    l->rows = info.rows;
    l->cols = info.cols;
    l->itemsize = info.itemsize;
    l->swap = info.swap;
    l->fortran = info.fortran || info.ndim == 1 || info.rows == 1 || info.cols == 1;
    l->data_offset = off;
    return TN_IO_OK;
}

/* pread of exactly n bytes at off (retrying short reads). */
static int pread_all(int fd, void *p, size_t n, uint64_t off) {
    unsigned char *c = p;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r, n -= (size_t)r, off += (uint64_t)r;
    }
    return 0;
}

int tn_io_npy_read_block(const char *path, const tn_npy_layout *l, int64_t row0, int64_t nrows,
                         int64_t col0, int64_t ncols, float *out, int64_t ld, int *lost,
                         char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!path || !l || row0 < 0 || nrows < 0 || col0 < 0 || ncols < 0 ||
        row0 + nrows > l->rows || col0 + ncols > l->cols || ld < (nrows > 1 ? nrows : 1) ||
        (nrows > 0 && ncols > 0 && !out) || (l->itemsize != 4 && l->itemsize != 8))
        return tn_io_fail(err, errlen, path ? path : "<null>", TN_IO_ERR_ARG,
                          "invalid block [%lld + %lld, %lld + %lld] of a %lld x %lld matrix",
                          (long long)row0, (long long)nrows, (long long)col0, (long long)ncols,
                          l ? (long long)l->rows : 0LL, l ? (long long)l->cols : 0LL);
    if (nrows == 0 || ncols == 0) return TN_IO_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot open: %s", strerror(e));
    }
    const int is = l->itemsize;
    /* one column (Fortran order) or one row (C order) of the block at a time */
    const int64_t run = l->fortran ? nrows : ncols, runs = l->fortran ? ncols : nrows;
    unsigned char *b = malloc((size_t)run * (size_t)is);
    if (!b) {
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_ALLOC, "out of memory");
    }
    int st = TN_IO_OK, lo = 0;
    for (int64_t q = 0; q < runs && st == TN_IO_OK; q++) {
        const int64_t i0 = l->fortran ? row0 : row0 + q, j0 = l->fortran ? col0 + q : col0;
        const uint64_t e0 = l->fortran ? (uint64_t)j0 * (uint64_t)l->rows + (uint64_t)i0
                                       : (uint64_t)i0 * (uint64_t)l->cols + (uint64_t)j0;
        if (pread_all(fd, b, (size_t)run * (size_t)is, l->data_offset + e0 * (uint64_t)is)) {
            st = tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN,
                            "reading %s %lld failed (the file changed?)",
                            l->fortran ? "column" : "row", (long long)(l->fortran ? j0 : i0));
            break;
        }
        for (int64_t t = 0; t < run; t++) {
            const int64_t i = l->fortran ? t : q, j = l->fortran ? q : t;
            double v;
            if (copy_elem((unsigned char *)(out + i + j * ld), 4, b + t * is, is, l->swap, &lo,
                          &v)) {
                const int64_t idx[2] = {row0 + i, col0 + j};
                st = range_fail(err, errlen, path, 2, idx, v);
                break;
            }
        }
    }
    free(b);
    close(fd);
    if (lost) *lost = lo;
    return st;
}

int tn_io_npy_read_rows_c(const char *path, const tn_npy_layout *l, int64_t row0, int64_t nrows,
                          float *out, int *lost, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!path || !l || l->fortran || row0 < 0 || nrows < 0 || row0 + nrows > l->rows ||
        (nrows > 0 && l->cols > 0 && !out) || (l->itemsize != 4 && l->itemsize != 8))
        return tn_io_fail(err, errlen, path ? path : "<null>", TN_IO_ERR_ARG,
                          "invalid rows %lld + %lld of a C-order %lld x %lld matrix",
                          (long long)row0, (long long)nrows, l ? (long long)l->rows : 0LL,
                          l ? (long long)l->cols : 0LL);
    const int64_t total = nrows * l->cols;
    if (total == 0) return TN_IO_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot open: %s", strerror(e));
    }
    const int is = l->itemsize;
    const int64_t piece = ((int64_t)8 << 20) / is; /* elements per read */
    unsigned char *b = malloc((size_t)(total < piece ? total : piece) * (size_t)is);
    if (!b) {
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_ALLOC, "out of memory");
    }
    const uint64_t e0 = (uint64_t)row0 * (uint64_t)l->cols;
    int st = TN_IO_OK, lo = 0;
    for (int64_t q0 = 0; q0 < total && st == TN_IO_OK; q0 += piece) {
        const int64_t w = total - q0 < piece ? total - q0 : piece;
        if (pread_all(fd, b, (size_t)w * (size_t)is, l->data_offset + (e0 + (uint64_t)q0) * (uint64_t)is)) {
            st = tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN,
                            "reading row %lld failed (the file changed?)",
                            (long long)(row0 + q0 / l->cols));
            break;
        }
        for (int64_t t = 0; t < w; t++) {
            double v;
            if (copy_elem((unsigned char *)(out + q0 + t), 4, b + t * is, is, l->swap, &lo, &v)) {
                const int64_t q = q0 + t, idx[2] = {row0 + q / l->cols, q % l->cols};
                st = range_fail(err, errlen, path, 2, idx, v);
                break;
            }
        }
    }
    free(b);
    close(fd);
    if (lost) *lost = lo;
    return st;
}
