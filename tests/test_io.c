/* Tests of the file-format layer (app/io/): .npy read/write round trips,
 * hand-made .npy headers of versions 1-3, Matrix Market files of each kind,
 * malformed inputs of both formats (a nonzero status and a message naming
 * the file, nothing allocated), the dispatch on the extension, and - when a
 * python3 with numpy is present - interoperability with numpy itself. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem, mkdtemp */
#endif
#include "test.h"
#include "util.h"
#include "io/io.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

static const char *path_in(char *buf, size_t n, const char *dir, const char *name) {
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

static int write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

static int write_text(const char *path, const char *s) { return write_bytes(path, s, strlen(s)); }

/* A .npy image: magic, version major.0, the dictionary padded with spaces to
 * a multiple of 64 bytes and ended by '\n', then `dlen` bytes of data
 * (copied from data, or zeros when data is NULL). Returns its length. */
static size_t make_npy(unsigned char *buf, size_t cap, int major, const char *dict,
                       const void *data, size_t dlen) {
    size_t pre = major == 1 ? 10 : 12, dn = strlen(dict);
    size_t total = (pre + dn + 1 + 63) / 64 * 64, hlen = total - pre;
    if (total + dlen > cap) return 0;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t k = 0; k < pre - 8; k++) buf[8 + k] = (unsigned char)(hlen >> (8 * k));
    memcpy(buf + pre, dict, dn);
    memset(buf + pre + dn, ' ', hlen - dn - 1);
    buf[total - 1] = '\n';
    if (data)
        memcpy(buf + total, data, dlen);
    else
        memset(buf + total, 0, dlen);
    return total + dlen;
}

/* The test pattern: exactly representable in float and double. */
static double val(int64_t i, int64_t j) { return (double)(i * 10 + j) + 0.25; }

static void fill(tn_matrix *m, int64_t r, int64_t c, int is_double) {
    m->rows = r;
    m->cols = c;
    m->is_double = is_double;
    m->lost_precision = 0;
    m->data = r * c != 0 ? malloc((size_t)(r * c) * (is_double ? 8 : 4)) : NULL;
    for (int64_t j = 0; j < c; j++)
        for (int64_t i = 0; i < r; i++) {
            if (is_double)
                ((double *)m->data)[i + j * r] = val(i, j);
            else
                ((float *)m->data)[i + j * r] = (float)val(i, j);
        }
}

/* Element (i, j) of m as a double. */
static double at(const tn_matrix *m, int64_t i, int64_t j) {
    int64_t k = i + j * m->rows;
    return m->is_double ? ((const double *)m->data)[k] : ((const float *)m->data)[k];
}

/* 1 when m is r x c and equals the r x c column-major values v. */
static int equals(const tn_matrix *m, int64_t r, int64_t c, const double *v) {
    if (m->rows != r || m->cols != c) return 0;
    for (int64_t k = 0; k < r * c; k++)
        if (at(m, k % r, k / r) != v[k]) return 0;
    return 1;
}

/* ------------------------------------------------------ .npy round trips */

TEST(io_npy_roundtrip) {
    char dir[64], p[256], err[512];
    static const int64_t shapes[][2] = {{3, 5}, {1, 4}, {4, 1}, {0, 3}, {2, 0}, {37, 41}};
    static const unsigned flagset[] = {0, TN_IO_NPY_C_ORDER, TN_IO_NPY_1D};
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    for (int dbl = 0; dbl < 2; dbl++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t fl = 0; fl < 3; fl++) {
                tn_matrix a, b;
                unsigned flags = flagset[fl];
                int64_t r = shapes[s][0], c = shapes[s][1];
                if ((flags & TN_IO_NPY_1D) && c != 1) continue;
                fill(&a, r, c, dbl);
                path_in(p, sizeof p, dir, "rt.npy");
                int st = tn_io_write_npy(p, &a, flags, err, sizeof err);
                CHECK_MSG(st == 0, "write %lldx%lld dbl=%d flags=%u: %s", (long long)r,
                          (long long)c, dbl, flags, err);
                /* The prefix numpy expects: magic, version 1.0, 64-byte aligned. */
                FILE *f = fopen(p, "rb");
                unsigned char pre[10] = {0};
                CHECK(f && fread(pre, 1, 10, f) == 10);
                if (f) fclose(f);
                CHECK(memcmp(pre, "\x93NUMPY\x01\x00", 8) == 0);
                CHECK((10 + (pre[8] | pre[9] << 8)) % 64 == 0);

                st = tn_io_read_npy(p, TN_IO_AS_STORED, 0, &b, err, sizeof err);
                CHECK_MSG(st == 0, "read back: %s", err);
                CHECK(b.rows == r && b.cols == c && b.is_double == dbl && !b.lost_precision);
                if (st == 0 && r * c != 0)
                    CHECK(memcmp(a.data, b.data, (size_t)(r * c) * (dbl ? 8 : 4)) == 0);
                tn_matrix_free(&b);

                /* Converted on the way in: exact values, no precision lost. */
                st = tn_io_read_npy(p, !dbl, 0, &b, err, sizeof err);
                CHECK(st == 0 && b.is_double == !dbl && !b.lost_precision);
                for (int64_t k = 0; st == 0 && k < r * c; k++)
                    CHECK(at(&b, k % r, k / r) == val(k % r, k / r));
                tn_matrix_free(&b);

                /* The buffer encoder gives the same bytes as the file. */
                void *buf;
                size_t len;
                st = tn_io_encode_npy(&a, flags, &buf, &len, err, sizeof err);
                CHECK(st == 0);
                if (!st) {
                    st = tn_io_parse_npy(buf, len, "mem", TN_IO_AS_STORED, 0, &b, err,
                                         sizeof err);
                    CHECK(st == 0 && b.rows == r && b.cols == c);
                    if (!st && r * c != 0)
                        CHECK(memcmp(a.data, b.data, (size_t)(r * c) * (dbl ? 8 : 4)) == 0);
                    tn_matrix_free(&b);
                    free(buf);
                }
                tn_matrix_free(&a);
            }
    tu_rm_dir(dir);
}

TEST(io_npy_c_order_layout) {
    /* A C-order file holds the rows one after the other. */
    tn_matrix a;
    void *buf;
    size_t len;
    char err[256];
    fill(&a, 2, 3, 1);
    REQUIRE(tn_io_encode_npy(&a, TN_IO_NPY_C_ORDER, &buf, &len, err, sizeof err) == 0);
    CHECK(len == 128 + 48);
    CHECK(memmem(buf, 128, "'fortran_order': False", 22) != NULL);
    CHECK(memmem(buf, 128, "'shape': (2, 3)", 15) != NULL);
    double v1;
    memcpy(&v1, (const char *)buf + 128 + 8, 8);
    CHECK(v1 == val(0, 1));
    free(buf);
    REQUIRE(tn_io_encode_npy(&a, 0, &buf, &len, err, sizeof err) == 0);
    CHECK(memmem(buf, 128, "'fortran_order': True", 21) != NULL);
    memcpy(&v1, (const char *)buf + 128 + 8, 8);
    CHECK(v1 == val(1, 0));
    free(buf);
    tn_matrix_free(&a);
}

/* ------------------------------------------------ hand-made .npy headers */

TEST(io_npy_versions) {
    /* A 2 x 3 C-order float64 array 1..6 (row-major) under versions 1, 2, 3. */
    const double rowmajor[6] = {1, 2, 3, 4, 5, 6}, colmajor[6] = {1, 4, 2, 5, 3, 6};
    unsigned char img[512];
    char err[256];
    for (int major = 1; major <= 3; major++) {
        tn_matrix m;
        size_t n = make_npy(img, sizeof img, major,
                            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                            rowmajor, sizeof rowmajor);
        int st = tn_io_parse_npy(img, n, "v.npy", TN_IO_AS_STORED, 0, &m, err, sizeof err);
        CHECK_MSG(st == 0, "version %d: %s", major, err);
        CHECK(m.is_double == 1);
        CHECK(equals(&m, 2, 3, colmajor));
        tn_matrix_free(&m);
    }
}

TEST(io_npy_header_variants) {
    const float v[6] = {1, 2, 3, 4, 5, 6};
    const double fort[6] = {1, 2, 3, 4, 5, 6}, corder[6] = {1, 4, 2, 5, 3, 6};
    static const struct {
        const char *dict;
        int64_t r, c;
        int c_order;
    } cases[] = {
        {"{\"descr\": \"<f4\", \"fortran_order\": True, \"shape\": (2, 3)}", 2, 3, 0},
        {"{'shape': (2, 3), 'fortran_order': True, 'descr': '|f4'}", 2, 3, 0},
        {"{'descr':'=f4','fortran_order':True,'shape':(2L,3L),}", 2, 3, 0},
        {"{'descr': 'f4', 'fortran_order': False, 'shape': (6,), }", 6, 1, 0},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 2, 3, 1},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 6), }", 1, 6, 0},
        {"{ 'descr' : '<f4' , 'fortran_order' : True , 'shape' : ( 2 , 3 , ) , }", 2, 3, 0},
    };
    unsigned char img[512];
    char err[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tn_matrix m;
        size_t n = make_npy(img, sizeof img, 1, cases[k].dict, v, sizeof v);
        int st = tn_io_parse_npy(img, n, "h.npy", TN_IO_AS_DOUBLE, 0, &m, err, sizeof err);
        CHECK_MSG(st == 0, "case %zu: %s", k, err);
        CHECK_MSG(st || equals(&m, cases[k].r, cases[k].c, cases[k].c_order ? corder : fort),
                  "case %zu: values", k);
        tn_matrix_free(&m);
    }
    /* Empty arrays: (0,) and (0, 3). */
    tn_matrix m;
    size_t n = make_npy(img, sizeof img, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
    CHECK(tn_io_parse_npy(img, n, "e.npy", TN_IO_AS_STORED, 0, &m, err, sizeof err) == 0);
    CHECK(m.rows == 0 && m.cols == 3 && m.data == NULL);
    tn_matrix_free(&m);
}

TEST(io_npy_big_endian_and_conversion) {
    /* '>f8': byte-swapped on load. */
    const double v[3] = {1.5, -2.0, 1e300};
    unsigned char be[24], img[256];
    char err[256];
    tn_matrix m;
    for (int k = 0; k < 3; k++) {
        unsigned char b[8];
        memcpy(b, &v[k], 8);
        for (int i = 0; i < 8; i++) be[8 * k + i] = b[tn_io_host_little() ? 7 - i : i];
    }
    size_t n = make_npy(img, sizeof img, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", be, 24);
    CHECK(tn_io_parse_npy(img, n, "be.npy", TN_IO_AS_STORED, 0, &m, err, sizeof err) == 0);
    CHECK(equals(&m, 3, 1, v) && m.is_double && !m.lost_precision);
    tn_matrix_free(&m);
    /* Narrowed to float: 1e300 would overflow, an error naming the element. */
    CHECK(tn_io_parse_npy(img, n, "be.npy", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) ==
          TN_IO_ERR_RANGE);
    CHECK_MSG(m.data == NULL && strstr(err, "be.npy: ") && strstr(err, "[2] (0-based) = 1e+300") &&
                  strstr(err, "float32"),
              "%s", err);
    /* float64 values exact in float: no loss reported; 0.1: loss. */
    const double exact[2] = {0.5, 3.0}, inexact[2] = {0.5, 0.1};
    n = make_npy(img, sizeof img, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", exact, 16);
    CHECK(tn_io_parse_npy(img, n, "x.npy", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == 0);
    CHECK(!m.lost_precision && equals(&m, 2, 1, exact));
    tn_matrix_free(&m);
    n = make_npy(img, sizeof img, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", inexact, 16);
    CHECK(tn_io_parse_npy(img, n, "x.npy", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == 0);
    CHECK(m.lost_precision && at(&m, 1, 0) == (double)0.1f);
    tn_matrix_free(&m);
    /* '>f4' to double. */
    const float fv[2] = {0.1f, -7.0f};
    unsigned char fbe[8];
    for (int k = 0; k < 2; k++) {
        unsigned char b[4];
        memcpy(b, &fv[k], 4);
        for (int i = 0; i < 4; i++) fbe[4 * k + i] = b[tn_io_host_little() ? 3 - i : i];
    }
    n = make_npy(img, sizeof img, 2, "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2), }", fbe, 8);
    CHECK(tn_io_parse_npy(img, n, "x.npy", TN_IO_AS_DOUBLE, 0, &m, err, sizeof err) == 0);
    CHECK(m.rows == 1 && m.cols == 2 && at(&m, 0, 0) == (double)0.1f && at(&m, 0, 1) == -7.0);
    tn_matrix_free(&m);
}

/* --------------------------------------------------- malformed .npy */

typedef struct {
    const char *label; /* also the file name */
    int major;         /* 0: raw bytes below; else make_npy(major, dict, dlen) */
    const char *dict;
    size_t dlen;
    const char *raw;
    size_t rawlen;
    size_t max_bytes;
    int status;
} npy_bad;

TEST(io_npy_malformed) {
    static const npy_bad cases[] = {
        {"empty.npy", 0, NULL, 0, "", 0, 0, TN_IO_ERR_FORMAT},
        {"magic.npy", 0, NULL, 0, "\x93NUMPX\x01\x00\x10\x00{}", 12, 0, TN_IO_ERR_FORMAT},
        {"short.npy", 0, NULL, 0, "\x93NUM", 4, 0, TN_IO_ERR_FORMAT},
        {"nolen.npy", 0, NULL, 0, "\x93NUMPY\x01\x00\x10", 9, 0, TN_IO_ERR_FORMAT},
        {"v4.npy", 0, NULL, 0, "\x93NUMPY\x04\x00\x10\x00", 10, 0, TN_IO_ERR_UNSUPPORTED},
        {"v11.npy", 0, NULL, 0, "\x93NUMPY\x01\x01\x10\x00", 10, 0, TN_IO_ERR_UNSUPPORTED},
        {"hlen.npy", 0, NULL, 0, "\x93NUMPY\x01\x00\xff\x7f{'descr'", 18, 0, TN_IO_ERR_FORMAT},
        {"hlen2.npy", 0, NULL, 0, "\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13, 0, TN_IO_ERR_FORMAT},
        {"notdict.npy", 1, "[1, 2]", 0, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"nokey.npy", 1, "{'descr': '<f8', 'fortran_order': False}", 0, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"extrakey.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"dupkey.npy", 1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"int.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, NULL, 0, 0, TN_IO_ERR_UNSUPPORTED},
        {"complex.npy", 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", 32, NULL, 0, 0, TN_IO_ERR_UNSUPPORTED},
        {"half.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 4, NULL, 0, 0, TN_IO_ERR_UNSUPPORTED},
        {"struct.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, NULL, 0, 0, TN_IO_ERR_UNSUPPORTED},
        {"3d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }", 64, NULL, 0, 0, TN_IO_ERR_UNSUPPORTED},
        {"0d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8, NULL, 0, 0, TN_IO_ERR_UNSUPPORTED},
        {"negdim.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 3), }", 0, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"nandim.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (nan, 3), }", 0, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"floatdim.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2.5, 3), }", 0, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"notuple.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3), }", 24, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"order.npy", 1, "{'descr': '<f8', 'fortran_order': maybe, 'shape': (3,), }", 24, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"order2.npy", 1, "{'descr': '<f8', 'fortran_order': Trueish, 'shape': (3,), }", 24, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"truncated.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 40, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"trailing.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 51, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"overflow.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }", 8, NULL, 0, 0, TN_IO_ERR_TOO_LARGE},
        {"bigint.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, NULL, 0, 0, TN_IO_ERR_TOO_LARGE},
        {"absurd.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", 8, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"cap.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100, 100), }", 80000, NULL, 0, 1000, TN_IO_ERR_TOO_LARGE},
        {"after.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } x", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"unterminated.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"nonascii.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), \xc3\xa9}", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"nokeyquote.npy", 1, "{descr: '<f8', 'fortran_order': False, 'shape': (2,), }", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"nocolon.npy", 1, "{'descr' '<f8', 'fortran_order': False, 'shape': (2,), }", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
        {"nobrace.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", 16, NULL, 0, 0, TN_IO_ERR_FORMAT},
    };
    char dir[64], p[256], err[512];
    unsigned char img[1 << 17];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const npy_bad *c = &cases[k];
        size_t n = c->major ? make_npy(img, sizeof img, c->major, c->dict, NULL, c->dlen)
                            : c->rawlen;
        if (!c->major) memcpy(img, c->raw, n);
        REQUIRE(write_bytes(path_in(p, sizeof p, dir, c->label), img, n) == 0);
        tn_matrix m;
        memset(&m, 0x5a, sizeof m);
        int st = tn_io_read_npy(p, TN_IO_AS_STORED, c->max_bytes, &m, err, sizeof err);
        CHECK_MSG(st == c->status, "%s: status %d, expected %d (%s)", c->label, st, c->status,
                  err);
        CHECK_MSG(strstr(err, p) == err, "%s: message does not name the file: %s", c->label,
                  err);
        CHECK_MSG(strchr(err, '\n') == NULL && strlen(err) > strlen(p) + 5, "%s: %s", c->label,
                  err);
        CHECK(m.data == NULL && m.rows == 0 && m.cols == 0);
        if (tt_failed_now() == 0 && getenv("TCNLA_IO_SHOW")) printf("    %s\n", err);
    }
    tu_rm_dir(dir);
}

/* ----------------------------------------------------- Matrix Market */

/* Parses text as an .mtx file named name; returns the status. */
static int mtx(const char *text, int want, tn_matrix *m, char *err, size_t errlen) {
    return tn_io_parse_mtx(text, strlen(text), "t.mtx", want, 0, m, err, errlen);
}

TEST(io_mtx_array) {
    tn_matrix m;
    char err[256];
    /* General real, column by column, with comments, blank lines, CRLF. */
    const double g[6] = {1, 2, 3.5, -4e-2, 5, 6};
    CHECK(mtx("%%MatrixMarket matrix array real general\r\n% a comment\r\n\r\n  2 3 \r\n"
              "1\r\n2\r\n3.5\r\n-4e-2\r\n% inside\r\n5\r\n6.\r\n\r\n",
              TN_IO_AS_STORED, &m, err, sizeof err) == 0);
    CHECK_MSG(equals(&m, 2, 3, g) && m.is_double, "%s", err);
    tn_matrix_free(&m);
    /* Symmetric integer: the lower triangle column by column. */
    const double s[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    CHECK(mtx("%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
              TN_IO_AS_FLOAT, &m, err, sizeof err) == 0);
    CHECK(equals(&m, 3, 3, s) && !m.is_double && !m.lost_precision);
    tn_matrix_free(&m);
    /* Skew-symmetric: the strictly lower triangle. */
    const double k[9] = {0, 1, 2, -1, 0, 3, -2, -3, 0};
    CHECK(mtx("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
              TN_IO_AS_DOUBLE, &m, err, sizeof err) == 0);
    CHECK(equals(&m, 3, 3, k));
    tn_matrix_free(&m);
    /* Empty 0 x 4 and 1 x 1 skew (no entries). */
    CHECK(mtx("%%MatrixMarket matrix array real general\n0 4\n", TN_IO_AS_DOUBLE, &m, err,
              sizeof err) == 0);
    CHECK(m.rows == 0 && m.cols == 4 && m.data == NULL);
    tn_matrix_free(&m);
    CHECK(mtx("%%MatrixMarket matrix array real skew-symmetric\n1 1\n", TN_IO_AS_DOUBLE, &m, err,
              sizeof err) == 0);
    CHECK(m.rows == 1 && ((double *)m.data)[0] == 0.0);
    tn_matrix_free(&m);
}

TEST(io_mtx_coordinate) {
    tn_matrix m;
    char err[256];
    /* General, duplicates summed, case-insensitive banner. */
    const double g[6] = {1, 0, 0, 2.5 + 0.5, 0, -7};
    CHECK(mtx("%%MatrixMarket MATRIX Coordinate Real General\n%\n2 3 4\n1 1 1.0\n2 2 2.5\n"
              "2 2 0.5\n2 3 -7\n",
              TN_IO_AS_STORED, &m, err, sizeof err) == 0);
    CHECK_MSG(equals(&m, 2, 3, g), "%s", err);
    tn_matrix_free(&m);
    /* Pattern symmetric: entries are 1, mirrored. */
    const double p[9] = {1, 1, 0, 1, 0, 1, 0, 1, 0};
    CHECK(mtx("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n",
              TN_IO_AS_FLOAT, &m, err, sizeof err) == 0);
    CHECK(equals(&m, 3, 3, p));
    tn_matrix_free(&m);
    /* Integer skew-symmetric. */
    const double k[4] = {0, 5, -5, 0};
    CHECK(mtx("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 5\n",
              TN_IO_AS_DOUBLE, &m, err, sizeof err) == 0);
    CHECK(equals(&m, 2, 2, k));
    tn_matrix_free(&m);
    /* Symmetric real with a diagonal entry and duplicates on the mirror. */
    const double s[4] = {2, 3, 3, 0};
    CHECK(mtx("%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2\n2 1 1\n2 1 2\n",
              TN_IO_AS_DOUBLE, &m, err, sizeof err) == 0);
    CHECK(equals(&m, 2, 2, s));
    tn_matrix_free(&m);
    /* 0 x 0, no entries; no final newline. */
    CHECK(mtx("%%MatrixMarket matrix coordinate real general\n0 0 0", TN_IO_AS_DOUBLE, &m, err,
              sizeof err) == 0);
    CHECK(m.rows == 0 && m.cols == 0 && m.data == NULL);
    tn_matrix_free(&m);
    /* Precision: 0.1 loses it as float, 0.5 does not; doubles never do. */
    CHECK(mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.5\n", TN_IO_AS_FLOAT,
              &m, err, sizeof err) == 0);
    CHECK(!m.lost_precision && at(&m, 0, 0) == 0.5);
    tn_matrix_free(&m);
    CHECK(mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.1\n", TN_IO_AS_FLOAT,
              &m, err, sizeof err) == 0);
    CHECK(m.lost_precision && at(&m, 0, 0) == (double)0.1f);
    tn_matrix_free(&m);
    CHECK(mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.1\n", TN_IO_AS_DOUBLE,
              &m, err, sizeof err) == 0);
    CHECK(!m.lost_precision && at(&m, 0, 0) == 0.1);
    tn_matrix_free(&m);
}

TEST(io_mtx_files) {
    /* The file variant, one file of each kind. */
    static const struct {
        const char *name, *text;
        int64_t r, c;
        double sum;
    } files[] = {
        {"ag.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 2, 2, 10},
        {"as.mtx", "%%MatrixMarket matrix array integer symmetric\n2 2\n1\n2\n3\n", 2, 2, 8},
        {"ak.mtx", "%%MatrixMarket matrix array real skew-symmetric\n2 2\n4\n", 2, 2, 0},
        {"cg.mtx", "%%MatrixMarket matrix coordinate real general\n3 2 2\n3 2 1.5\n1 1 1\n", 3, 2, 2.5},
        {"ci.mtx", "%%MatrixMarket matrix coordinate integer general\n1 3 2\n1 3 7\n1 3 -2\n", 1, 3, 5},
        {"cp.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n", 2, 2, 2},
        {"cs.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n3 1 2\n2 2 1\n", 3, 3, 5},
        {"ck.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n3 1 2\n", 3, 3, 0},
    };
    char dir[64], p[256], err[512];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        tn_matrix m;
        REQUIRE(write_text(path_in(p, sizeof p, dir, files[k].name), files[k].text) == 0);
        int st = tn_io_read_mtx(p, TN_IO_AS_DOUBLE, 0, &m, err, sizeof err);
        CHECK_MSG(st == 0, "%s: %s", files[k].name, err);
        double sum = 0;
        for (int64_t i = 0; st == 0 && i < m.rows * m.cols; i++) sum += ((double *)m.data)[i];
        CHECK_MSG(st || (m.rows == files[k].r && m.cols == files[k].c && sum == files[k].sum),
                  "%s: %lld x %lld, sum %g", files[k].name, (long long)m.rows,
                  (long long)m.cols, sum);
        tn_matrix_free(&m);
    }
    tu_rm_dir(dir);
}

TEST(io_mtx_malformed) {
    static const struct {
        const char *label, *text;
        size_t max_bytes;
        int status;
    } cases[] = {
        {"empty.mtx", "", 0, TN_IO_ERR_FORMAT},
        {"nobanner.mtx", "2 2 1\n1 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"banner4.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 0, TN_IO_ERR_FORMAT},
        {"banner6.mtx", "%%MatrixMarket matrix coordinate real general x\n1 1 0\n", 0, TN_IO_ERR_FORMAT},
        {"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 0, TN_IO_ERR_UNSUPPORTED},
        {"hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 0, TN_IO_ERR_UNSUPPORTED},
        {"vector.mtx", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 0, TN_IO_ERR_UNSUPPORTED},
        {"format.mtx", "%%MatrixMarket matrix dense real general\n1 1\n1\n", 0, TN_IO_ERR_FORMAT},
        {"field.mtx", "%%MatrixMarket matrix array double general\n1 1\n1\n", 0, TN_IO_ERR_FORMAT},
        {"patarray.mtx", "%%MatrixMarket matrix array pattern general\n1 1\n", 0, TN_IO_ERR_FORMAT},
        {"nosize.mtx", "%%MatrixMarket matrix array real general\n% only comments\n", 0, TN_IO_ERR_FORMAT},
        {"sizetext.mtx", "%%MatrixMarket matrix array real general\n3 x\n", 0, TN_IO_ERR_FORMAT},
        {"sizenan.mtx", "%%MatrixMarket matrix array real general\nNaN 3\n", 0, TN_IO_ERR_FORMAT},
        {"negsize.mtx", "%%MatrixMarket matrix coordinate real general\n-3 3 1\n1 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"negnnz.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 -1\n", 0, TN_IO_ERR_FORMAT},
        {"sizecount.mtx", "%%MatrixMarket matrix coordinate real general\n3 3\n1 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"few.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n", 0, TN_IO_ERR_FORMAT},
        {"fewarray.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 0, TN_IO_ERR_FORMAT},
        {"many.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n", 0, TN_IO_ERR_FORMAT},
        {"manyarray.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n2\n", 0, TN_IO_ERR_FORMAT},
        {"row0.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"colbig.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 4 1\n", 0, TN_IO_ERR_FORMAT},
        {"idxtext.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1.0 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"value.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", 0, TN_IO_ERR_FORMAT},
        {"nan.mtx", "%%MatrixMarket matrix array real general\n1 1\nNaN\n", 0, TN_IO_ERR_FORMAT},
        {"inf.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 -inf\n", 0, TN_IO_ERR_FORMAT},
        {"huge.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e999\n", 0, TN_IO_ERR_FORMAT},
        {"hex.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0x10\n", 0, TN_IO_ERR_FORMAT},
        {"exp.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e\n", 0, TN_IO_ERR_FORMAT},
        {"intfield.mtx", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n", 0, TN_IO_ERR_FORMAT},
        {"nonsquare.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 0, TN_IO_ERR_FORMAT},
        {"upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1\n", 0, TN_IO_ERR_FORMAT},
        {"skewdiag.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", 0, TN_IO_ERR_FORMAT},
        {"fields.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 9\n", 0, TN_IO_ERR_FORMAT},
        {"patfields.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"arrayfields.mtx", "%%MatrixMarket matrix array real general\n1 2\n1 2\n", 0, TN_IO_ERR_FORMAT},
        {"trailing.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\ngarbage\n", 0, TN_IO_ERR_FORMAT},
        {"cap.mtx", "%%MatrixMarket matrix array real general\n1000 1000\n1\n", 1000, TN_IO_ERR_TOO_LARGE},
        {"overflow.mtx", "%%MatrixMarket matrix coordinate real general\n9999999999 9999999999 0\n", 0, TN_IO_ERR_TOO_LARGE},
        {"overflow2.mtx", "%%MatrixMarket matrix coordinate real general\n4294967296 4294967296 0\n", 0, TN_IO_ERR_TOO_LARGE},
        {"bigsize.mtx", "%%MatrixMarket matrix coordinate real general\n99999999999999999999 1 0\n", 0, TN_IO_ERR_TOO_LARGE},
        {"absurdnnz.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1000000000000\n1 1 1\n", 0, TN_IO_ERR_FORMAT},
        {"nul.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\0002\n", 0, TN_IO_ERR_FORMAT},
    };
    char dir[64], p[256], err[512];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = strlen(cases[k].text);
        if (strcmp(cases[k].label, "nul.mtx") == 0) n += 3; /* the text goes on after the NUL */
        REQUIRE(write_bytes(path_in(p, sizeof p, dir, cases[k].label), cases[k].text, n) == 0);
        for (int want = -1; want <= 1; want++) {
            tn_matrix m;
            memset(&m, 0x5a, sizeof m);
            int st = tn_io_read_mtx(p, want, cases[k].max_bytes, &m, err, sizeof err);
            CHECK_MSG(st == cases[k].status, "%s: status %d, expected %d (%s)", cases[k].label,
                      st, cases[k].status, err);
            CHECK_MSG(strstr(err, p) == err, "%s: message does not name the file: %s",
                      cases[k].label, err);
            CHECK_MSG(strchr(err, '\n') == NULL && strlen(err) > strlen(p) + 5, "%s: %s",
                      cases[k].label, err);
            CHECK(m.data == NULL && m.rows == 0 && m.cols == 0);
            if (want == 1 && getenv("TCNLA_IO_SHOW")) printf("    %s\n", err);
        }
    }
    tu_rm_dir(dir);
}

/* ----------------------------------------------- dispatch and errors */

TEST(io_read_matrix_dispatch) {
    char dir[64], p[256], err[512];
    tn_matrix a, m;
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    fill(&a, 3, 2, 0);
    /* By extension, either case. */
    REQUIRE(tn_io_write_npy(path_in(p, sizeof p, dir, "a.NPY"), &a, 0, err, sizeof err) == 0);
    CHECK(tn_io_read_matrix(p, TN_IO_AS_STORED, 0, &m, err, sizeof err) == 0);
    CHECK(m.rows == 3 && m.cols == 2 && !m.is_double && at(&m, 2, 1) == val(2, 1));
    tn_matrix_free(&m);
    REQUIRE(write_text(path_in(p, sizeof p, dir, "b.mtx"),
                       "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 4\n") == 0);
    CHECK(tn_io_read_matrix(p, TN_IO_AS_STORED, 0, &m, err, sizeof err) == 0);
    CHECK(m.rows == 2 && m.is_double && at(&m, 1, 0) == 4);
    tn_matrix_free(&m);
    /* Other names: by contents. */
    REQUIRE(tn_io_write_npy(path_in(p, sizeof p, dir, "c.dat"), &a, TN_IO_NPY_C_ORDER, err,
                            sizeof err) == 0);
    CHECK(tn_io_read_matrix(p, TN_IO_AS_DOUBLE, 0, &m, err, sizeof err) == 0);
    CHECK(m.rows == 3 && m.cols == 2 && m.is_double && at(&m, 2, 1) == val(2, 1));
    tn_matrix_free(&m);
    REQUIRE(write_text(path_in(p, sizeof p, dir, "d"),
                       "%%MatrixMarket matrix array real general\n1 1\n3\n") == 0);
    CHECK(tn_io_read_matrix(p, TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == 0);
    CHECK(m.rows == 1 && at(&m, 0, 0) == 3);
    tn_matrix_free(&m);
    /* A .npy named .mtx is judged as Matrix Market: an error naming the file. */
    REQUIRE(tn_io_write_npy(path_in(p, sizeof p, dir, "e.mtx"), &a, 0, err, sizeof err) == 0);
    CHECK(tn_io_read_matrix(p, TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == TN_IO_ERR_FORMAT);
    CHECK(strstr(err, p) == err);
    /* Unknown contents, compressed files, missing files, directories. */
    REQUIRE(write_text(path_in(p, sizeof p, dir, "f.txt"), "1 2 3\n") == 0);
    CHECK(tn_io_read_matrix(p, TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == TN_IO_ERR_UNSUPPORTED);
    CHECK(strstr(err, p) == err);
    CHECK(tn_io_read_matrix(path_in(p, sizeof p, dir, "g.mtx.gz"), TN_IO_AS_FLOAT, 0, &m, err,
                            sizeof err) == TN_IO_ERR_UNSUPPORTED);
    CHECK(strstr(err, p) == err);
    CHECK(tn_io_read_matrix(path_in(p, sizeof p, dir, "missing.npy"), TN_IO_AS_FLOAT, 0, &m, err,
                            sizeof err) == TN_IO_ERR_OPEN);
    CHECK(strstr(err, p) == err && strstr(err, "No such file"));
    CHECK(tn_io_read_npy(dir, TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == TN_IO_ERR_OPEN);
    CHECK(strstr(err, dir) == err && strstr(err, "directory"));
    CHECK(m.data == NULL);
    CHECK(tn_io_read_matrix("/dev/zero", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) ==
          TN_IO_ERR_OPEN);
    CHECK(strstr(err, "/dev/zero") == err && strstr(err, "device"));
    /* Bad arguments. */
    CHECK(tn_io_read_npy(NULL, 0, 0, &m, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_read_mtx(p, 0, 0, NULL, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_parse_npy("x", 1, NULL, 7, 0, &m, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_parse_mtx("x", 1, NULL, -2, 0, &m, NULL, 0) == TN_IO_ERR_ARG);
    /* A tiny error buffer is still terminated. */
    char tiny[8];
    CHECK(tn_io_parse_mtx("", 0, "abcdefghijkl", 0, 0, &m, tiny, sizeof tiny) != 0);
    CHECK(strlen(tiny) == 7);
    tn_matrix_free(&a);
    tu_rm_dir(dir);
}

TEST(io_write_errors) {
    char dir[64], p[256], err[512];
    tn_matrix a, bad;
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    fill(&a, 2, 2, 1);
    CHECK(tn_io_write_npy("/nonexistent_dir_tcnla/x.npy", &a, 0, err, sizeof err) ==
          TN_IO_ERR_OPEN);
    CHECK(strstr(err, "/nonexistent_dir_tcnla/x.npy") == err);
    /* Bad arguments are refused before the file is created. */
    path_in(p, sizeof p, dir, "unused.npy");
    CHECK(tn_io_write_npy(p, &a, TN_IO_NPY_1D, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(strstr(err, p) == err);
    CHECK(tn_io_write_npy(p, &a, 0x80, err, sizeof err) == TN_IO_ERR_ARG);
    memset(&bad, 0, sizeof bad);
    bad.rows = -1;
    bad.cols = 2;
    CHECK(tn_io_write_npy(p, &bad, 0, err, sizeof err) == TN_IO_ERR_ARG);
    bad.rows = 2; /* 2 x 2 without data */
    CHECK(tn_io_write_npy(p, &bad, 0, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(access(p, F_OK) != 0);
    /* A full device: a write error, and the device is not removed. */
    struct stat sb;
    if (stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode) && access("/dev/full", W_OK) == 0) {
        CHECK(tn_io_write_npy("/dev/full", &a, 0, err, sizeof err) == TN_IO_ERR_WRITE);
        CHECK(strstr(err, "/dev/full") == err);
        CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));
    }
    tn_matrix_free(&a);
    tu_rm_dir(dir);
}

TEST(io_float64_outside_float32_range) {
    char err[512];
    unsigned char img[4096];
    tn_matrix m;
    tn_tensor t;
    /* C order 2 x 3: element [1, 2] underflows, [0, 1] is a float32 subnormal */
    const double v[6] = {1, 1e-40, 3, 4, 5, -1e-50};
    size_t n = make_npy(img, sizeof img, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", v, 48);
    CHECK(tn_io_parse_npy(img, n, "u.npy", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == TN_IO_ERR_RANGE);
    CHECK_MSG(strstr(err, "u.npy: float64 element [1, 2] (0-based) = -1e-50") && strstr(err, "0"),
              "%s", err);
    CHECK(m.data == NULL);
    CHECK(tn_io_parse_npy(img, n, "u.npy", TN_IO_AS_DOUBLE, 0, &m, err, sizeof err) == 0);
    tn_matrix_free(&m);
    const double ok[3] = {1e-40, -3e38, 0.0};
    n = make_npy(img, sizeof img, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }", ok, 24);
    CHECK(tn_io_parse_npy(img, n, "s.npy", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) == 0);
    CHECK(m.data && at(&m, 0, 0) == (double)1e-40f && at(&m, 1, 0) == (double)-3e38f);
    tn_matrix_free(&m);
    /* a tensor, C order (2, 2, 2): [1, 0, 1] overflows */
    const double tv[8] = {1, 2, 3, 4, 5, 1e39, 7, 8};
    n = make_npy(img, sizeof img, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }", tv, 64);
    CHECK(tn_io_parse_npy_tensor(img, n, "t.npy", TN_IO_AS_FLOAT, 0, &t, err, sizeof err) ==
          TN_IO_ERR_RANGE);
    CHECK_MSG(strstr(err, "[1, 0, 1] (0-based) = 1e+39") && strstr(err, "Inf"), "%s", err);
    CHECK(t.data == NULL);
    /* Matrix Market: line and 1-based entry */
    static const char mm[] = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n1e-46\n4\n";
    CHECK(tn_io_parse_mtx(mm, strlen(mm), "a.mtx", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) ==
          TN_IO_ERR_RANGE);
    CHECK_MSG(strstr(err, "a.mtx: line 5: entry (1, 2) = 1e-46") && strstr(err, "float32"), "%s", err);
    CHECK(m.data == NULL);
    static const char mc[] = "%%MatrixMarket matrix coordinate real general\n3 3 1\n3 2 -1e39\n";
    CHECK(tn_io_parse_mtx(mc, strlen(mc), "c.mtx", TN_IO_AS_FLOAT, 0, &m, err, sizeof err) ==
          TN_IO_ERR_RANGE);
    CHECK_MSG(strstr(err, "entry (3, 2) = -1e39") && strstr(err, "Inf"), "%s", err);
    CHECK(tn_io_parse_mtx(mc, strlen(mc), "c.mtx", TN_IO_AS_STORED, 0, &m, err, sizeof err) == 0);
    tn_matrix_free(&m);
    CHECK(strcmp(tn_io_strerror(TN_IO_ERR_RANGE), "unknown status") != 0);
}

TEST(io_read_pipe) {
    /* A FIFO is read into memory rather than mapped. */
    char dir[64], p[256], err[512];
    tn_matrix a, m;
    void *buf;
    size_t len;
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    fill(&a, 20, 30, 1);
    REQUIRE(tn_io_encode_npy(&a, TN_IO_NPY_C_ORDER, &buf, &len, err, sizeof err) == 0);
    path_in(p, sizeof p, dir, "fifo");
    REQUIRE(mkfifo(p, 0600) == 0);
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) { /* async-signal-safe calls only */
        int fd = open(p, O_WRONLY);
        for (size_t off = 0; fd >= 0 && off < len;) {
            ssize_t w = write(fd, (const char *)buf + off, len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        _exit(0);
    }
    int st = tn_io_read_matrix(p, TN_IO_AS_STORED, 0, &m, err, sizeof err);
    waitpid(pid, NULL, 0);
    CHECK_MSG(st == 0, "%s", err);
    CHECK(st || (m.rows == 20 && m.cols == 30 && memcmp(m.data, a.data, 20 * 30 * 8) == 0));
    tn_matrix_free(&m);
    free(buf);
    tn_matrix_free(&a);
    tu_rm_dir(dir);
}

/* ------------------------------------------------------- with numpy */

/* A python interpreter that has numpy, or NULL. */
static const char *python_with_numpy(void) {
    static const char *cands[] = {"python3", "/usr/bin/python3", "python"};
    char cmd[256];
    for (size_t k = 0; k < sizeof cands / sizeof cands[0]; k++) {
        snprintf(cmd, sizeof cmd, "%s -c \"import numpy\" >/dev/null 2>&1", cands[k]);
        FILE *p = popen(cmd, "r");
        if (p && pclose(p) == 0) return cands[k];
    }
    return NULL;
}

TEST(io_numpy_interop) {
    const char *py = python_with_numpy();
    if (!py) SKIP("python3 with numpy not found");
    char dir[64], p[256], err[512], cmd[1024], line[512];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "io"));
    /* Files we write, for numpy to check; files numpy writes, for us. */
    static const struct {
        const char *name;
        int64_t r, c;
        int dbl;
        unsigned flags;
    } ours[] = {
        {"ours_f4_F.npy", 5, 7, 0, 0},
        {"ours_f4_C.npy", 5, 7, 0, TN_IO_NPY_C_ORDER},
        {"ours_f8_F.npy", 6, 3, 1, 0},
        {"ours_f8_C.npy", 6, 3, 1, TN_IO_NPY_C_ORDER},
        {"ours_f8_1d.npy", 9, 1, 1, TN_IO_NPY_1D},
    };
    for (size_t k = 0; k < sizeof ours / sizeof ours[0]; k++) {
        tn_matrix a;
        fill(&a, ours[k].r, ours[k].c, ours[k].dbl);
        CHECK(tn_io_write_npy(path_in(p, sizeof p, dir, ours[k].name), &a, ours[k].flags, err,
                              sizeof err) == 0);
        tn_matrix_free(&a);
    }
    static const char script[] =
        "import sys, os, numpy as np\n"
        "d = sys.argv[1]\n"
        "def M(r, c, t): return (np.arange(r)[:, None] * 10 + np.arange(c)[None, :] + 0.25).astype(t)\n"
        "checks = [('ours_f4_F.npy', M(5, 7, np.float32), True),\n"
        "          ('ours_f4_C.npy', M(5, 7, np.float32), False),\n"
        "          ('ours_f8_F.npy', M(6, 3, np.float64), True),\n"
        "          ('ours_f8_C.npy', M(6, 3, np.float64), False),\n"
        "          ('ours_f8_1d.npy', M(9, 1, np.float64)[:, 0], None)]\n"
        "for name, want, fort in checks:\n"
        "    a = np.load(os.path.join(d, name))\n"
        "    ok = a.dtype == want.dtype and a.shape == want.shape and np.array_equal(a, want)\n"
        "    if fort is not None: ok = ok and bool(a.flags.f_contiguous) == fort and a.ndim == 2\n"
        "    print(('OK ' if ok else 'BAD ') + name)\n"
        "for t, s in ((np.float32, 'f4'), (np.float64, 'f8')):\n"
        "    m = M(4, 6, t)\n"
        "    np.save(os.path.join(d, 'np_%s_C.npy' % s), np.ascontiguousarray(m))\n"
        "    np.save(os.path.join(d, 'np_%s_F.npy' % s), np.asfortranarray(m))\n"
        "    np.save(os.path.join(d, 'np_%s_1d.npy' % s), M(8, 1, t)[:, 0])\n"
        "    np.save(os.path.join(d, 'np_%s_BE.npy' % s), m.astype('>' + s))\n"
        "print('DONE')\n";
    REQUIRE(write_text(path_in(p, sizeof p, dir, "check.py"), script) == 0);
    snprintf(cmd, sizeof cmd, "%s %s/check.py %s 2>&1", py, dir, dir);
    FILE *pp = popen(cmd, "r");
    REQUIRE(pp);
    int oks = 0, done = 0;
    while (fgets(line, sizeof line, pp)) {
        if (strncmp(line, "OK ", 3) == 0) oks++;
        else if (strncmp(line, "DONE", 4) == 0) done = 1;
        else CHECK_MSG(0, "numpy: %s", line);
    }
    CHECK(pclose(pp) == 0);
    CHECK_EQ_INT(oks, 5);
    CHECK(done);
    /* What numpy wrote. */
    static const char *theirs[] = {"C", "F", "1d", "BE"};
    for (int dbl = 0; dbl < 2 && done; dbl++)
        for (int k = 0; k < 4; k++) {
            char name[64];
            tn_matrix m;
            snprintf(name, sizeof name, "np_%s_%s.npy", dbl ? "f8" : "f4", theirs[k]);
            int st = tn_io_read_npy(path_in(p, sizeof p, dir, name), TN_IO_AS_STORED, 0, &m,
                                    err, sizeof err);
            CHECK_MSG(st == 0, "%s: %s", name, err);
            if (st) continue;
            int64_t r = k == 2 ? 8 : 4, c = k == 2 ? 1 : 6;
            CHECK_MSG(m.rows == r && m.cols == c && m.is_double == dbl, "%s: shape", name);
            for (int64_t j = 0; j < c && m.rows == r && m.cols == c; j++)
                for (int64_t i = 0; i < r; i++)
                    CHECK_MSG(at(&m, i, j) == val(i, j), "%s (%lld, %lld)", name, (long long)i,
                              (long long)j);
            tn_matrix_free(&m);
        }
    tu_rm_dir(dir);
}
