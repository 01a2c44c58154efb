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
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

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
    case TN_IO_ERR_RANGE: return "value outside float32's range";
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

/* ------------------------------------------------------ streams (pipes) */

/* What a stream is expected to hold. */
enum { KIND_NPY, KIND_MTX, KIND_SNIFF };

/* A blocking stream with one byte of push-back. */
typedef struct {
    int fd;
    int has_pb;
    unsigned char pb;
    const char *path;
    char *err;
    size_t errlen;
} tn_stream;

/* Reads up to n bytes (fewer only at the end of the stream) into dst. */
static int st_read(tn_stream *s, unsigned char *dst, size_t n, size_t *got) {
    *got = 0;
    if (n && s->has_pb) dst[0] = s->pb, s->has_pb = 0, *got = 1;
    while (*got < n) {
        ssize_t r = read(s->fd, dst + *got, n - *got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_OPEN, "read error: %s",
                              strerror(e));
        }
        if (r == 0) break;
        *got += (size_t)r;
    }
    return TN_IO_OK;
}

/* A growing heap buffer. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} tn_gbuf;

/* Room for `extra` more bytes, the total capped at max (TOO_LARGE beyond). */
static int gb_reserve(tn_gbuf *g, size_t extra, size_t max, tn_stream *s) {
    if (extra > max || g->len > max - extra)
        return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_TOO_LARGE,
                          "input larger than %zu bytes", max);
    size_t need = g->len + extra;
    if (need <= g->cap) return TN_IO_OK;
    size_t ncap = g->cap ? g->cap : 4096;
    while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : 2 * ncap;
    if (ncap > max) ncap = max;
    unsigned char *nb = realloc(g->p, ncap);
    if (!nb)
        return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_ALLOC,
                          "out of memory reading the file (%zu bytes)", ncap);
    g->p = nb;
    g->cap = ncap;
    return TN_IO_OK;
}

/* Reads exactly n more bytes into g (fewer at the end of the stream). */
static int gb_read(tn_gbuf *g, tn_stream *s, size_t n, size_t max, size_t *got) {
    int st = gb_reserve(g, n, max, s);
    if (st) return st;
    st = st_read(s, g->p + g->len, n, got);
    g->len += *got;
    return st;
}

static int mm_blank(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
static int mm_data_byte(unsigned char c) {
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E' ||
           mm_blank(c);
}

#define TN_STREAM_MAX_LINE 4096 /* a banner or data line longer than this is not valid */

/* Matrix Market text after its 14-byte banner prefix: read in chunks, each
 * line checked as it comes; reading stops after the first line holding a
 * byte no data line can hold (the parser then reports that line), or after
 * a banner or data line longer than any valid one. Comment lines pass. */
static int stream_mtx(tn_gbuf *g, tn_stream *s, size_t max) {
    long long line = 0; /* 0: the banner */
    size_t line_len = 14;
    int seen = 1, comment = 0, bad = 0;
    for (;;) {
        size_t got, from = g->len;
        int st = gb_read(g, s, 65536, max, &got);
        if (st) return st;
        for (size_t k = from; k < g->len; k++) {
            unsigned char c = g->p[k];
            if (c == '\n') {
                if (bad) {
                    g->len = k + 1;
                    return TN_IO_OK;
                }
                line++, line_len = 0, seen = 0, comment = 0;
                continue;
            }
            line_len++;
            if (line == 0 || comment) {
                if (line == 0 && line_len > TN_STREAM_MAX_LINE) bad = 1;
            } else if (!seen) {
                if (!mm_blank(c)) {
                    seen = 1;
                    if (c == '%') comment = 1;
                    else if (!mm_data_byte(c)) bad = 1;
                }
            } else if (!mm_data_byte(c)) {
                bad = 1;
            }
            if (bad && line_len > TN_STREAM_MAX_LINE) {
                g->len = k + 1;
                return TN_IO_OK;
            }
        }
        if (got < 65536) return TN_IO_OK; /* the end of the stream */
    }
}

/* A .npy after its magic: version, header length, header; its dictionary
 * gives the data's size, read exactly, then one more byte must not come. */
static int stream_npy(tn_gbuf *g, tn_stream *s, int tensor, int want, size_t max_bytes,
                      size_t max) {
    size_t got, data = 0;
    int st = gb_read(g, s, 2, max, &got);
    if (st || got < 2) return st;
    const int major = g->p[6];
    if (major < 1 || major > 3 || g->p[7] != 0) return TN_IO_OK; /* the parser says why */
    const size_t pre = major == 1 ? 10 : 12;
    if ((st = gb_read(g, s, pre - 8, max, &got)) || got < pre - 8) return st;
    size_t hlen = (size_t)g->p[8] | (size_t)g->p[9] << 8;
    if (major > 1) hlen |= (size_t)g->p[10] << 16 | (size_t)g->p[11] << 24;
    if (hlen > ((size_t)1 << 20))
        return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_FORMAT,
                          ".npy header of %zu bytes announced; at most 1 MiB is read from a pipe",
                          hlen);
    if ((st = gb_read(g, s, hlen, max, &got)) || got < hlen) return st;
    if ((st = tn_io_npy_data_size(g->p, g->len, s->path, tensor, want, max_bytes, &data, s->err,
                                  s->errlen)))
        return st;
    if (data > SIZE_MAX - g->len)
        return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_TOO_LARGE, "array too large");
    if ((st = gb_read(g, s, data, g->len + data, &got)) || got < data) return st;
    unsigned char extra;
    if ((st = st_read(s, &extra, 1, &got))) return st;
    if (got)
        return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_FORMAT,
                          "trailing data after the .npy array (a pipe is not read further)");
    return TN_IO_OK;
}

static unsigned char ascii_lower(unsigned char c) {
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* Reads a pipe, FIFO or socket: the first bytes decide the format (or must
 * be those of `kind`), reading stops at the first byte that cannot belong to
 * a valid file, and never more than max_read bytes are kept. */
static int blob_stream(tn_blob *b, tn_stream *s, int kind, int tensor, int want,
                       size_t max_bytes, size_t max_read) {
    static const char npy_magic[] = "\x93NUMPY", mm_banner[] = "%%MatrixMarket";
    tn_gbuf g = {NULL, 0, 0};
    int st = 0, npy_ok = kind != KIND_MTX, mm_ok = kind != KIND_NPY;
    /* byte by byte until the format is known (or cannot be) */
    while (npy_ok || mm_ok) {
        size_t got;
        if ((st = gb_read(&g, s, 1, max_read, &got))) goto fail;
        if (!got) break;
        const size_t i = g.len - 1;
        const unsigned char c = g.p[i];
        npy_ok = npy_ok && i < 6 && c == (unsigned char)npy_magic[i];
        mm_ok = mm_ok && i < 14 && ascii_lower(c) == ascii_lower((unsigned char)mm_banner[i]);
        if (npy_ok && g.len == 6) {
            st = stream_npy(&g, s, tensor, want, max_bytes, max_read);
            break;
        }
        if (mm_ok && g.len == 14) {
            st = stream_mtx(&g, s, max_read);
            break;
        }
    }
    if (st) goto fail;
    b->heap = g.p;
    b->data = g.p;
    b->len = g.len;
    return TN_IO_OK;
fail:
    free(g.p);
    return st;
}

/* Seconds a FIFO is waited on for a writer: $TCNLA_FIFO_WAIT or 10. */
static double fifo_wait_seconds(void) {
    const char *e = getenv("TCNLA_FIFO_WAIT");
    char *end;
    double v = e ? strtod(e, &end) : 0;
    return e && end != e && !*end && v >= 0 && v <= 86400 ? v : 10.0;
}

/* A named FIFO opened without blocking: waits (at most fifo_wait_seconds())
 * for a writer's first byte or its end. */
static int fifo_wait(tn_stream *s) {
#ifdef __linux__
    struct statfs fs; /* an anonymous pipe (pipefs) has its writer already */
    if (fstatfs(s->fd, &fs) == 0 && fs.f_type == 0x50495045) return TN_IO_OK;
#endif
    const double wait = fifo_wait_seconds();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double left = wait - ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        struct pollfd p = {s->fd, POLLIN, 0};
        int r = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
        if (r < 0 && errno == EINTR) continue;
        if (r != 0) return TN_IO_OK; /* data, the end, or an error: the reads say */
        /* timed out: a writer without data yet, or none at all */
        ssize_t k = read(s->fd, &s->pb, 1);
        if (k == 1) {
            s->has_pb = 1;
            return TN_IO_OK;
        }
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return TN_IO_OK;
        if (k < 0 && errno == EINTR) continue;
        return tn_io_fail(s->err, s->errlen, s->path, TN_IO_ERR_OPEN,
                          "a FIFO with no writer: none opened it within %g s "
                          "(TCNLA_FIFO_WAIT sets the wait)",
                          wait);
    }
}

static int blob_load(tn_blob *b, const char *path, int kind, int tensor, int want,
                     size_t max_bytes, char *err, size_t errlen) {
    struct stat st;
    int fd, st_ok;
    memset(b, 0, sizeof *b);
    if (max_bytes == 0) max_bytes = TN_IO_DEFAULT_MAX_BYTES;
    /* O_NONBLOCK: opening a FIFO does not wait for a writer (fifo_wait does, boundedly) */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    tn_stream s = {fd, 0, 0, path, err, errlen};
    if (S_ISFIFO(st.st_mode) && (st_ok = fifo_wait(&s))) {
        close(fd);
        return st_ok;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    /* 4 * max_bytes + 1 MiB at most (saturating): Matrix Market text. */
    size_t max_read = max_bytes > (SIZE_MAX - ((size_t)1 << 20)) / 4
                          ? SIZE_MAX - 1
                          : 4 * max_bytes + ((size_t)1 << 20);
    st_ok = blob_stream(b, &s, kind, tensor, want, max_bytes, max_read);
    close(fd);
    return st_ok;
}

typedef int (*tn_parser)(const void *, size_t, const char *, int, size_t, tn_matrix *, char *,
                         size_t);

static int read_with(tn_parser parse, int kind, const char *path, int want, size_t max_bytes,
                     tn_matrix *out, char *err, size_t errlen) {
    tn_blob b;
    int st;
    if (err && errlen) err[0] = '\0';
    if (!out) return tn_io_fail(err, errlen, path, TN_IO_ERR_ARG, "no output matrix given");
    memset(out, 0, sizeof *out);
    if (!path) return tn_io_fail(err, errlen, "(null)", TN_IO_ERR_ARG, "no file name given");
    st = blob_load(&b, path, kind, 0, want, max_bytes, err, errlen);
    if (st) return st;
    st = parse(b.data, b.len, path, want, max_bytes, out, err, errlen);
    blob_free(&b);
    return st;
}

int tn_io_read_npy(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                   size_t errlen) {
    return read_with(tn_io_parse_npy, KIND_NPY, path, want, max_bytes, out, err, errlen);
}

int tn_io_read_npy_tensor(const char *path, int want, size_t max_bytes, tn_tensor *out,
                          char *err, size_t errlen) {
    tn_blob b;
    int st;
    if (err && errlen) err[0] = '\0';
    if (!out) return tn_io_fail(err, errlen, path, TN_IO_ERR_ARG, "no output array given");
    memset(out, 0, sizeof *out);
    if (!path) return tn_io_fail(err, errlen, "(null)", TN_IO_ERR_ARG, "no file name given");
    st = blob_load(&b, path, KIND_NPY, 1, want, max_bytes, err, errlen);
    if (st) return st;
    st = tn_io_parse_npy_tensor(b.data, b.len, path, want, max_bytes, out, err, errlen);
    blob_free(&b);
    return st;
}

int tn_io_read_mtx(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                   size_t errlen) {
    return read_with(tn_io_parse_mtx, KIND_MTX, path, want, max_bytes, out, err, errlen);
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
    if (len == 0) return tn_io_fail(err, errlen, name, TN_IO_ERR_FORMAT, "empty file");
    return tn_io_fail(err, errlen, name, TN_IO_ERR_UNSUPPORTED,
                      "unrecognized file format (expected .npy or Matrix Market .mtx)");
}

int tn_io_read_matrix(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                      size_t errlen) {
    const char *base, *dot;
    if (!path) return read_with(tn_io_parse_npy, KIND_NPY, path, want, max_bytes, out, err, errlen);
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
    return read_with(parse_sniffed, KIND_SNIFF, path, want, max_bytes, out, err, errlen);
}
