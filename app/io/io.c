/* The shared part of the file-format layer (see io.h): messages, integer
 * parsing, checked allocation, loading a file into memory, the file
 * variants of the readers and the dispatch on the extension. */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ messages */

const char *tn_io_strerror(int status) {
    switch (status) {
    case TN_IO_OK: return "success";
    case TN_IO_ERR_ARG: return "invalid argument";
    case TN_IO_ERR_OPEN: return "cannot open or read the file";
    case TN_IO_ERR_WRITE: return "cannot write the file";
    case TN_IO_ERR_FORMAT: return "malformed file";
    case TN_IO_ERR_UNSUPPORTED: return "unsupported file contents";
    case TN_IO_ERR_TOO_LARGE: return "matrix too large";
    case TN_IO_ERR_ALLOC: return "out of memory";
    default: return "unknown status";
    }
}

int tn_io_fail(char *err, size_t errlen, const char *name, int status, const char *fmt, ...) {
    if (!err || errlen == 0) return status;
    int k = snprintf(err, errlen, "%s: ", name ? name : "<buffer>");
    if (k >= 0 && (size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    /* One line, whatever the file name holds. */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return status;
}

char *tn_io_snippet(char *dst, const char *s, size_t n) {
    size_t k = n < 40 ? n : 40, i;
    for (i = 0; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (k < n) memcpy(dst + i, "...", 3), i += 3;
    dst[i] = '\0';
    return dst;
}

/* ------------------------------------------------------------- helpers */

int tn_io_parse_int(const char *s, size_t n, int64_t *v) {
    size_t i = 0;
    int neg = 0;
    uint64_t acc = 0, lim;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return TN_IO_INT_BAD;
    lim = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return TN_IO_INT_BAD;
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (lim - d) / 10u) {
            /* Keep validating, so that "99999999999999999999x" is BAD. */
            for (i++; i < n; i++)
                if (s[i] < '0' || s[i] > '9') return TN_IO_INT_BAD;
            return TN_IO_INT_OVERFLOW;
        }
        acc = acc * 10u + d;
    }
    *v = neg ? (acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
    return TN_IO_INT_OK;
}

int tn_io_host_little(void) {
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

void tn_matrix_free(tn_matrix *m) {
    if (!m) return;
    free(m->data);
    memset(m, 0, sizeof *m);
}

int tn_io_alloc_matrix(tn_matrix *out, int64_t rows, int64_t cols, int is_double,
                       size_t max_bytes, int zero, const char *name, char *err, size_t errlen) {
    const size_t es = is_double ? sizeof(double) : sizeof(float);
    uint64_t elems;
    size_t bytes;
    memset(out, 0, sizeof *out);
    if (max_bytes == 0) max_bytes = TN_IO_DEFAULT_MAX_BYTES;
    if (rows < 0 || cols < 0)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT, "negative dimension (%lld x %lld)",
                          (long long)rows, (long long)cols);
    if (__builtin_mul_overflow((uint64_t)rows, (uint64_t)cols, &elems) ||
        elems > (uint64_t)(SIZE_MAX / es) || elems > (uint64_t)INT64_MAX)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE,
                          "matrix of %lld x %lld elements is too large to address",
                          (long long)rows, (long long)cols);
    bytes = (size_t)elems * es;
    if (bytes > max_bytes)
        return tn_io_fail(err, errlen, name, TN_IO_ERR_TOO_LARGE,
                          "%lld x %lld %s matrix needs %zu bytes, above the limit of %zu",
                          (long long)rows, (long long)cols, is_double ? "double" : "float",
                          bytes, max_bytes);
    void *p = NULL;
    if (bytes) {
        p = zero ? calloc((size_t)elems, es) : malloc(bytes);
        if (!p)
            return tn_io_fail(err, errlen, name, TN_IO_ERR_ALLOC,
                              "out of memory allocating %zu bytes for a %lld x %lld matrix",
                              bytes, (long long)rows, (long long)cols);
    }
    out->rows = rows;
    out->cols = cols;
    out->is_double = is_double;
    out->data = p;
    return TN_IO_OK;
}

/* ---------------------------------------------------------- file input */

/* A file's bytes: mapped (regular files) or read into the heap. */
typedef struct {
    const unsigned char *data;
    size_t len;
    void *map;  /* munmap(map, len) */
    void *heap; /* free(heap) */
} tn_blob;

static void blob_free(tn_blob *b) {
    if (b->map) munmap(b->map, b->len);
    free(b->heap);
    memset(b, 0, sizeof *b);
}

/* Reads fd to its end into the heap, failing beyond max_read bytes. */
static int blob_read_all(tn_blob *b, int fd, size_t max_read, const char *path, char *err,
                         size_t errlen) {
    size_t cap = 0, len = 0;
    unsigned char *buf = NULL;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > max_read + 1 || ncap < cap) ncap = max_read + 1;
            if (ncap <= cap) {
                free(buf);
                return tn_io_fail(err, errlen, path, TN_IO_ERR_TOO_LARGE,
                                  "input larger than %zu bytes", max_read);
            }
            unsigned char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                return tn_io_fail(err, errlen, path, TN_IO_ERR_ALLOC,
                                  "out of memory reading the file");
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "read error: %s", strerror(e));
        }
        if (r == 0) break;
        len += (size_t)r;
        if (len > max_read) {
            free(buf);
            return tn_io_fail(err, errlen, path, TN_IO_ERR_TOO_LARGE,
                              "input larger than %zu bytes", max_read);
        }
    }
    b->heap = buf;
    b->data = buf;
    b->len = len;
    return TN_IO_OK;
}

static int blob_load(tn_blob *b, const char *path, size_t max_bytes, char *err, size_t errlen) {
    struct stat st;
    int fd, st_ok;
    memset(b, 0, sizeof *b);
    if (max_bytes == 0) max_bytes = TN_IO_DEFAULT_MAX_BYTES;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot open: %s", strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN, "is a directory");
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
        close(fd); /* /dev/zero and the like would never end */
        return tn_io_fail(err, errlen, path, TN_IO_ERR_OPEN,
                          "is a device, not a regular file or a pipe");
    }
    if (S_ISREG(st.st_mode) && st.st_size >= 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        size_t n = (size_t)st.st_size;
        if (n == 0) {
            close(fd);
            return TN_IO_OK; /* empty: the parsers say so */
        }
        void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            b->map = p;
            b->data = p;
            b->len = n;
            return TN_IO_OK;
        }
        /* Not mappable (some file systems): read it below. */
    }
    /* Pipes and the like: 4 * max_bytes + 1 MiB at most (saturating). */
    size_t max_read = max_bytes > (SIZE_MAX - ((size_t)1 << 20)) / 4
                          ? SIZE_MAX - 1
                          : 4 * max_bytes + ((size_t)1 << 20);
    st_ok = blob_read_all(b, fd, max_read, path, err, errlen);
    close(fd);
    return st_ok;
}

typedef int (*tn_parser)(const void *, size_t, const char *, int, size_t, tn_matrix *, char *,
                         size_t);

static int read_with(tn_parser parse, const char *path, int want, size_t max_bytes,
                     tn_matrix *out, char *err, size_t errlen) {
    tn_blob b;
    int st;
    if (err && errlen) err[0] = '\0';
    if (!out) return tn_io_fail(err, errlen, path, TN_IO_ERR_ARG, "no output matrix given");
    memset(out, 0, sizeof *out);
    if (!path) return tn_io_fail(err, errlen, "(null)", TN_IO_ERR_ARG, "no file name given");
    st = blob_load(&b, path, max_bytes, err, errlen);
    if (st) return st;
    st = parse(b.data, b.len, path, want, max_bytes, out, err, errlen);
    blob_free(&b);
    return st;
}

int tn_io_read_npy(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                   size_t errlen) {
    return read_with(tn_io_parse_npy, path, want, max_bytes, out, err, errlen);
}

int tn_io_read_npy_tensor(const char *path, int want, size_t max_bytes, tn_tensor *out,
                          char *err, size_t errlen) {
    tn_blob b;
    int st;
    if (err && errlen) err[0] = '\0';
    if (!out) return tn_io_fail(err, errlen, path, TN_IO_ERR_ARG, "no output array given");
    memset(out, 0, sizeof *out);
    if (!path) return tn_io_fail(err, errlen, "(null)", TN_IO_ERR_ARG, "no file name given");
    st = blob_load(&b, path, max_bytes, err, errlen);
    if (st) return st;
    st = tn_io_parse_npy_tensor(b.data, b.len, path, want, max_bytes, out, err, errlen);
    blob_free(&b);
    return st;
}

int tn_io_read_mtx(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                   size_t errlen) {
    return read_with(tn_io_parse_mtx, path, want, max_bytes, out, err, errlen);
}

/* Chooses the parser from the first bytes; an unknown format is reported. */
static int parse_sniffed(const void *buf, size_t len, const char *name, int want,
                         size_t max_bytes, tn_matrix *out, char *err, size_t errlen) {
    static const char npy_magic[] = "\x93NUMPY", mm_banner[] = "%%MatrixMarket";
    if (len >= 6 && memcmp(buf, npy_magic, 6) == 0)
        return tn_io_parse_npy(buf, len, name, want, max_bytes, out, err, errlen);
    if (len >= 14 && strncasecmp(buf, mm_banner, 14) == 0)
        return tn_io_parse_mtx(buf, len, name, want, max_bytes, out, err, errlen);
    memset(out, 0, sizeof *out);
    return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                      "unrecognized file format (expected .npy or Matrix Market .mtx)");
}

int tn_io_read_matrix(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                      size_t errlen) {
    const char *base, *dot;
    if (!path) return read_with(tn_io_parse_npy, path, want, max_bytes, out, err, errlen);
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (dot && strcasecmp(dot, ".npy") == 0)
        return tn_io_read_npy(path, want, max_bytes, out, err, errlen);
    if (dot && strcasecmp(dot, ".mtx") == 0)
        return tn_io_read_mtx(path, want, max_bytes, out, err, errlen);
    if (dot && (strcasecmp(dot, ".gz") == 0 || strcasecmp(dot, ".bz2") == 0 ||
                strcasecmp(dot, ".xz") == 0 || strcasecmp(dot, ".zst") == 0 ||
                strcasecmp(dot, ".npz") == 0)) {
        if (out) memset(out, 0, sizeof *out);
        return tn_io_fail(err, errlen, path, TN_IO_ERR_UNSUPPORTED,
                          "compressed or archived files (%s) are not supported; extract the "
                          ".npy or .mtx first", dot);
    }
    return read_with(parse_sniffed, path, want, max_bytes, out, err, errlen);
}
