/* File formats: NumPy .npy (read and write) and Matrix Market .mtx (read).
 *
 * Internal API (tn_io_ prefix, hidden from the shared library); a public
 * tcnla_ wrapper is expected to map the statuses below onto its own codes.
 *
 * Every reader fills a tn_matrix: a dense column-major matrix (leading
 * dimension = rows) of float or double. The file variants load the file
 * (mmap for regular files) and call the buffer variants, which is what the
 * fuzzers (tests/fuzz/) drive.
 *
 * Errors: every function returns TN_IO_OK (0) or one of the negative
 * TN_IO_ERR_* codes, and writes a one-line message "NAME: problem" into the
 * caller's buffer `err` (errlen bytes, always NUL-terminated; err may be
 * NULL). NAME is the path, or the `name` given to a buffer variant. Bytes
 * of the file quoted in a message are sanitized (non-printable -> '?').
 * On failure *out is zeroed (data == NULL) and nothing is left allocated;
 * the readers never allocate more than `max_bytes` for the matrix, checked
 * before allocating, with overflow-safe size arithmetic.
 *
 * .npy (reading):
 *   - versions 1.0, 2.0 and 3.0 (3.0's UTF-8 header: the header of a
 *     float array is ASCII in practice, other bytes are reported as garbage);
 *   - descr '<f4' / '<f8' (little-endian), '=' / '|' / no prefix (native),
 *     and '>f4' / '>f8' (big-endian, byte-swapped on load); anything else,
 *     including structured dtypes, is TN_IO_ERR_UNSUPPORTED;
 *   - fortran_order True or False (C order is transposed on load);
 *   - shape (n,) -> n x 1, (r, c) -> r x c; 0-D and >2-D are unsupported
 *     (read N-D arrays as tensors, below);
 *     Python 2's "3L" integers are accepted;
 *   - the dictionary must hold exactly the keys descr, fortran_order, shape;
 *     only whitespace may follow it inside the header;
 *   - the data must be exactly rows*cols*itemsize bytes: a shorter file is
 *     "truncated", a longer one has "trailing data".
 * .npy (writing): version 1.0 (2.0 when the header would exceed 65535
 *   bytes), '<f4' or '<f8', header padded to a multiple of 64 bytes as numpy
 *   does; Fortran order by default (the data as it is in memory), C order
 *   with TN_IO_NPY_C_ORDER, shape (n,) with TN_IO_NPY_1D (needs cols == 1).
 *
 * .npy tensors (tn_tensor: order-N arrays, 1 <= N <= TN_IO_MAX_NDIM): read
 *   with the same rules as matrices except that any number of dimensions
 *   from 1 to TN_IO_MAX_NDIM is accepted (0-D is TN_IO_ERR_UNSUPPORTED);
 *   in memory the first index is the fastest (Fortran order, the layout of
 *   tcnla_hosvd): a C-order file has its axes' order of storage reversed on
 *   load, so that element [i0, ..., iN-1] of the NumPy array is
 *   data[i0 + d0 * (i1 + d1 * (i2 + ...))] either way. Written as shape
 *   (d0, ..., dN-1) in Fortran order by default (the data as it is), in C
 *   order with TN_IO_NPY_C_ORDER (the only flag).
 *
 * .mtx (reading), following the NIST Matrix Market specification:
 *   - banner "%%MatrixMarket matrix FORMAT FIELD SYMMETRY" (case-insensitive)
 *     with FORMAT array | coordinate, FIELD real | integer | pattern
 *     (pattern: entries are 1; coordinate only), SYMMETRY general |
 *     symmetric | skew-symmetric (square only); complex and hermitian are
 *     TN_IO_ERR_UNSUPPORTED, as are objects other than "matrix";
 *   - '%' comment lines and blank lines anywhere after the banner; CRLF ok;
 *   - symmetric files store the lower triangle (skew-symmetric: strictly
 *     lower) and are expanded; an entry above the diagonal (or on it, for
 *     skew-symmetric) is an error;
 *   - coordinate indices are 1-based and bounds-checked; DUPLICATE
 *     coordinate entries are SUMMED (in the output precision), as in
 *     scipy.io.mmread followed by toarray();
 *   - one entry per line with exactly the expected number of fields; values
 *     must be decimal numbers ([+-]d[.d][e[+-]d]; integers for "integer"):
 *     NaN, Inf, hexadecimal and out-of-double-range values are errors;
 *     parsing is locale-independent;
 *   - exactly the announced number of entries: fewer is "truncated", any
 *     further non-comment line is "trailing data".
 *
 * Element type of the result (`want`): TN_IO_AS_FLOAT, TN_IO_AS_DOUBLE, or
 * TN_IO_AS_STORED (the file's type; double for Matrix Market). Narrowing to
 * float rounds to nearest; out->lost_precision is set when at least one
 * value changed doing so: a float64 .npy element, or a Matrix Market value,
 * compared with its float64 value. A finite value that would overflow to
 * +-Inf (|x| > FLT_MAX after rounding) or a nonzero one that would become 0
 * (|x| below FLT_TRUE_MIN after rounding; subnormals are kept) is
 * TN_IO_ERR_RANGE, the message naming the first such element (.npy: its
 * 0-based index [i, j] or [i0, ..., iN-1] in column-major order; .mtx: its
 * line and 1-based (row, column)) and its value. NaN and Inf pass through.
 * Widening is exact.
 *
 * Caveat: regular files are memory-mapped while parsed; a file truncated by
 * another process during the read can raise SIGBUS. A pipe, FIFO (or
 * socket) is read into memory as it comes: its first bytes must be those of
 * a .npy or Matrix Market file (the one the function or the extension
 * expects); a .npy is read up to its header, then exactly the data the
 * header announces (one more byte is "trailing data"); Matrix Market text is
 * checked line by line and reading stops after the first line holding a
 * byte no data line can (comment lines excepted), at most 4 * max_bytes +
 * 1 MiB in all. A named FIFO with no writer is waited on for at most 10 s
 * ($TCNLA_FIFO_WAIT seconds), then reported. Devices are refused.
 */
#ifndef TN_IO_H
#define TN_IO_H

#include <stddef.h>
#include <stdint.h>

/* Statuses (the public API will translate them). */
enum {
    TN_IO_OK = 0,
    TN_IO_ERR_ARG = -1,         /* invalid argument (NULL pointer, bad flag, inconsistent matrix) */
    TN_IO_ERR_OPEN = -2,        /* the file cannot be opened, inspected or read */
    TN_IO_ERR_WRITE = -3,       /* writing the file failed (disk full, ...) */
    TN_IO_ERR_FORMAT = -4,      /* malformed: garbage header, truncated, trailing data, bad number */
    TN_IO_ERR_UNSUPPORTED = -5, /* well-formed, but not handled: dtype, complex, hermitian, 3-D */
    TN_IO_ERR_TOO_LARGE = -6,   /* matrix bigger than max_bytes, or its size overflows */
    TN_IO_ERR_ALLOC = -7,       /* out of memory */
    TN_IO_ERR_RANGE = -8        /* a float64 value float32 cannot hold (read as float) */
};

/* Requested element type of a read. */
enum { TN_IO_AS_STORED = -1, TN_IO_AS_FLOAT = 0, TN_IO_AS_DOUBLE = 1 };

/* Flags of tn_io_write_npy / tn_io_encode_npy. */
enum {
    TN_IO_NPY_C_ORDER = 1u, /* fortran_order False: the data written row by row */
    TN_IO_NPY_1D = 2u       /* shape (rows,) for a rows x 1 matrix */
};

/* max_bytes == 0 means this default: 8 GiB (on 64-bit hosts). */
#if SIZE_MAX > 0xFFFFFFFFu
#define TN_IO_DEFAULT_MAX_BYTES ((size_t)8 << 30)
#else
#define TN_IO_DEFAULT_MAX_BYTES ((size_t)1 << 30)
#endif

/* A dense column-major matrix, leading dimension = rows. data is NULL when
 * rows * cols == 0; otherwise malloc'ed, freed by tn_matrix_free. */
typedef struct {
    int64_t rows, cols;
    int is_double;      /* 1: double elements, 0: float */
    int lost_precision; /* set by the readers, see above */
    void *data;
} tn_matrix;

/* Frees m->data and zeroes *m (m may be NULL). */
void tn_matrix_free(tn_matrix *m);

/* An order-N array (see the .npy tensor notes above): dims[0..ndim) with
 * the first index fastest. data is NULL when it has no elements; otherwise
 * malloc'ed, freed by tn_tensor_free. */
#define TN_IO_MAX_NDIM 32
typedef struct {
    int ndim;
    int64_t dims[TN_IO_MAX_NDIM];
    int is_double;      /* 1: double elements, 0: float */
    int lost_precision; /* as for tn_matrix */
    void *data;
} tn_tensor;

/* Frees t->data and zeroes *t (t may be NULL). */
void tn_tensor_free(tn_tensor *t);
/* Text of a TN_IO_* status (never NULL). */
const char *tn_io_strerror(int status);

/* Readers of a file. max_bytes caps the size of out->data (0: default). */
int tn_io_read_npy(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                   size_t errlen);
int tn_io_read_mtx(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                   size_t errlen);
/* Dispatches on the extension (.npy, .mtx, case-insensitive); any other
 * name is recognized by its first bytes ("\x93NUMPY" or "%%MatrixMarket"). */
int tn_io_read_matrix(const char *path, int want, size_t max_bytes, tn_matrix *out, char *err,
                      size_t errlen);

/* The same from a byte buffer; `name` (NULL: "<buffer>") is used in messages. */
int tn_io_parse_npy(const void *buf, size_t len, const char *name, int want, size_t max_bytes,
                    tn_matrix *out, char *err, size_t errlen);
int tn_io_parse_mtx(const void *buf, size_t len, const char *name, int want, size_t max_bytes,
                    tn_matrix *out, char *err, size_t errlen);

/* Writes m as a .npy file (flags: TN_IO_NPY_*). A partially written regular
 * file is removed on failure (other kinds of files are left alone). */
int tn_io_write_npy(const char *path, const tn_matrix *m, unsigned flags, char *err,
                    size_t errlen);
/* The same into a malloc'ed buffer (*buf, *len; free() it). */
int tn_io_encode_npy(const tn_matrix *m, unsigned flags, void **buf, size_t *len, char *err,
                     size_t errlen);

/* Order-N arrays: reading a .npy file or buffer (max_bytes caps out->data,
 * 0: default), writing a file or a malloc'ed buffer (flags: 0 or
 * TN_IO_NPY_C_ORDER). */
int tn_io_read_npy_tensor(const char *path, int want, size_t max_bytes, tn_tensor *out,
                          char *err, size_t errlen);
int tn_io_parse_npy_tensor(const void *buf, size_t len, const char *name, int want,
                           size_t max_bytes, tn_tensor *out, char *err, size_t errlen);
int tn_io_write_npy_tensor(const char *path, const tn_tensor *t, unsigned flags, char *err,
                           size_t errlen);
int tn_io_encode_npy_tensor(const tn_tensor *t, unsigned flags, void **buf, size_t *len,
                            char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * Blocks of a .npy matrix file read in place (the distributed command: each
 * rank reads its rows, by column slabs, never the whole file).
 *
 * tn_io_npy_layout checks a regular file's header as tn_io_read_npy would
 * (a 2-D or 1-D float32 / float64 array; the file exactly as long as the
 * header announces: "truncated" or "trailing data" otherwise) and fills
 * *l; pipes, FIFOs and devices are refused (positioned reads need a file).
 * tn_io_npy_read_block reads rows [row0, row0 + nrows) x columns [col0,
 * col0 + ncols) into the float matrix out (column-major, ld >= nrows) with
 * positioned reads (pread): in a Fortran-order file nrows elements per
 * column, in a C-order one ncols per row. float64 values float32 cannot
 * hold are TN_IO_ERR_RANGE with the element's index in the whole matrix;
 * NaN and Inf pass through (the caller checks them). */
typedef struct {
    int64_t rows, cols;
    int itemsize; /* 4 or 8 */
    int swap;     /* the file's byte order differs from the host's */
    int fortran;  /* the file's order (1-D arrays and single rows or columns: 1) */
    uint64_t data_offset;
} tn_npy_layout;
int tn_io_npy_layout(const char *path, tn_npy_layout *l, char *err, size_t errlen);
int tn_io_npy_read_block(const char *path, const tn_npy_layout *l, int64_t row0, int64_t nrows,
                         int64_t col0, int64_t ncols, float *out, int64_t ld, int *lost,
                         char *err, size_t errlen);
/* Rows [row0, row0 + nrows) of a C-order file (l->fortran == 0), all its
 * columns, into out as a cols x nrows column-major matrix (each row
 * contiguous, as in the file: one positioned read per 8 MiB), converted
 * and checked as tn_io_npy_read_block does. */
int tn_io_npy_read_rows_c(const char *path, const tn_npy_layout *l, int64_t row0, int64_t nrows,
                          float *out, int *lost, char *err, size_t errlen);
/* The header (magic to padding) of a rows x cols .npy file in Fortran
 * order, float32 ('<f4') or float64: as tn_io_write_npy writes it. Returns
 * its length (at most TN_IO_NPY_HEADER_MAX bytes), 0 on failure. */
#define TN_IO_NPY_HEADER_MAX 1024
size_t tn_io_npy_header(unsigned char *hdr, size_t cap, int64_t rows, int64_t cols,
                        int is_double);

/* ------------------------------------------------------------------------
 * Shared by npy.c and mtx.c (io.c). */

/* Formats "NAME: message" into err and returns status. */
int tn_io_fail(char *err, size_t errlen, const char *name, int status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Copies at most 40 bytes of s[0..n) into dst (>= 48 bytes) for quoting in a
 * message: non-printable bytes become '?', "..." marks a cut. Returns dst. */
char *tn_io_snippet(char *dst, const char *s, size_t n);
/* Parses s[0..n) as an optionally signed decimal integer (digits only). */
enum { TN_IO_INT_OK = 0, TN_IO_INT_BAD = 1, TN_IO_INT_OVERFLOW = 2 };
int tn_io_parse_int(const char *s, size_t n, int64_t *v);
/* Allocates out->data for a rows x cols matrix after checking the size
 * against max_bytes (0: default) without overflow; zeroed when `zero`.
 * Fills out->rows/cols/is_double; on failure *out is zeroed. */
int tn_io_alloc_matrix(tn_matrix *out, int64_t rows, int64_t cols, int is_double,
                       size_t max_bytes, int zero, const char *name, char *err, size_t errlen);
/* The size in bytes of the data section of the .npy whose magic, version,
 * length and header dictionary are buf[0..len) (exactly), in *data; the
 * header is checked as tn_io_parse_npy (tensor = 0) or
 * tn_io_parse_npy_tensor (1) would, and the result read as `want` against
 * max_bytes (0: default). Used to read a pipe no further than the file. */
int tn_io_npy_data_size(const void *buf, size_t len, const char *name, int tensor, int want,
                        size_t max_bytes, size_t *data, char *err, size_t errlen);
/* 1 on a little-endian host. */
int tn_io_host_little(void);

#endif
