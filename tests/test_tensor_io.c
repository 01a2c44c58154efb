/* Order-N .npy arrays (app/io/npy.c tensors), `tcnla gen --kind tucker` and
 * `tcnla hosvd --input`: round trips through the writer and the reader in
 * both orders, malformed tensor files, and the gen -> NumPy / gen -> hosvd
 * round trips on small tensors (CPU). */
#include "test.h"
#include "util.h"

#include "io/io.h"
#include "testmat/testmat.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[1 << 16];

/* A value that identifies its multi-index (exact in float and double). */
static double tval(int64_t lin) { return (double)lin * 0.25 - 17.0; }

static void fill_tensor(tn_tensor *t, int ndim, const int64_t *dims, int dbl) {
    memset(t, 0, sizeof *t);
    t->ndim = ndim, t->is_double = dbl;
    int64_t n = 1;
    for (int a = 0; a < ndim; a++) t->dims[a] = dims[a], n *= dims[a];
    t->data = n ? malloc((size_t)n * (dbl ? 8 : 4)) : NULL;
    for (int64_t k = 0; k < n; k++) {
        if (dbl) ((double *)t->data)[k] = tval(k);
        else ((float *)t->data)[k] = (float)tval(k);
    }
}

static int64_t numel(const tn_tensor *t) {
    int64_t n = 1;
    for (int a = 0; a < t->ndim; a++) n *= t->dims[a];
    return n;
}

TEST(tensor_npy_roundtrip_both_orders) {
    static const int64_t shapes[][5] = {{7}, {3, 4}, {2, 3, 4}, {1, 5, 1, 2}, {3, 1, 2, 2, 3},
                                        {2, 0, 3}};
    static const int nds[] = {1, 2, 3, 4, 5, 3};
    char err[512];
    for (size_t s = 0; s < sizeof nds / sizeof nds[0]; s++)
        for (int dbl = 0; dbl < 2; dbl++)
            for (int corder = 0; corder < 2; corder++) {
                tn_tensor a, b;
                fill_tensor(&a, nds[s], shapes[s], dbl);
                void *buf;
                size_t len;
                unsigned fl = corder ? TN_IO_NPY_C_ORDER : 0u;
                REQUIRE(tn_io_encode_npy_tensor(&a, fl, &buf, &len, err, sizeof err) == 0);
                CHECK(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
                CHECK((10 + (((unsigned char *)buf)[8] | ((unsigned char *)buf)[9] << 8)) % 64 == 0);
                CHECK(memmem(buf, 128, corder ? "'fortran_order': False" : "'fortran_order': True",
                             corder ? 22 : 21) != NULL);
                int st = tn_io_parse_npy_tensor(buf, len, "mem", TN_IO_AS_STORED, 0, &b, err,
                                                sizeof err);
                CHECK_MSG(st == 0, "shape %zu dbl %d corder %d: %s", s, dbl, corder, err);
                if (st == 0) {
                    CHECK(b.ndim == a.ndim && b.is_double == dbl && !b.lost_precision);
                    CHECK(memcmp(b.dims, a.dims, sizeof(int64_t) * (size_t)a.ndim) == 0);
                    int64_t n = numel(&a);
                    CHECK(n == 0 || memcmp(a.data, b.data, (size_t)n * (dbl ? 8 : 4)) == 0);
                }
                tn_tensor_free(&b);
                /* narrowing / widening on the way in */
                st = tn_io_parse_npy_tensor(buf, len, "mem", !dbl, 0, &b, err, sizeof err);
                CHECK(st == 0 && b.is_double == !dbl && !b.lost_precision);
                for (int64_t k = 0; st == 0 && k < numel(&b); k++)
                    CHECK((b.is_double ? ((double *)b.data)[k] : ((float *)b.data)[k]) == tval(k));
                tn_tensor_free(&b);
                free(buf);
                tn_tensor_free(&a);
            }
}

TEST(tensor_npy_c_order_layout) {
    /* shape (2, 3, 4) in C order: the file's k-th value is element [i, j, l]
     * with k = (i * 3 + j) * 4 + l, which is data[i + 2 * (j + 3 * l)] in memory */
    const int64_t dims[3] = {2, 3, 4};
    tn_tensor a, b;
    char err[256];
    void *buf;
    size_t len;
    fill_tensor(&a, 3, dims, 1);
    REQUIRE(tn_io_encode_npy_tensor(&a, TN_IO_NPY_C_ORDER, &buf, &len, err, sizeof err) == 0);
    CHECK(len == 128 + 24 * 8);
    CHECK(memmem(buf, 128, "'shape': (2, 3, 4)", 18) != NULL);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < 4; l++) {
                double v;
                memcpy(&v, (const char *)buf + 128 + 8 * ((i * 3 + j) * 4 + l), 8);
                CHECK(v == tval(i + 2 * (j + 3 * l)));
            }
    /* the matrix reader still refuses it, the tensor reader takes it */
    tn_matrix m;
    CHECK(tn_io_parse_npy(buf, len, "mem", TN_IO_AS_STORED, 0, &m, err, sizeof err) ==
          TN_IO_ERR_UNSUPPORTED);
    CHECK(strstr(err, "3-dimensional") != NULL);
    CHECK(tn_io_parse_npy_tensor(buf, len, "mem", TN_IO_AS_STORED, 0, &b, err, sizeof err) == 0);
    CHECK(b.ndim == 3 && memcmp(b.data, a.data, 24 * 8) == 0);
    tn_tensor_free(&b);
    free(buf);
    /* a 1-D header is "(7,)", as numpy writes it */
    const int64_t d1 = 7;
    tn_tensor_free(&a);
    fill_tensor(&a, 1, &d1, 0);
    REQUIRE(tn_io_encode_npy_tensor(&a, 0, &buf, &len, err, sizeof err) == 0);
    CHECK(memmem(buf, 128, "'shape': (7,)", 13) != NULL);
    free(buf);
    tn_tensor_free(&a);
}

/* A .npy image with the dictionary `dict` padded to 64 bytes, then dlen bytes of data. */
static void *npy_image(const char *dict, size_t dlen, size_t *len) {
    size_t hl = strlen(dict), total = (10 + hl + 1 + 63) / 64 * 64;
    unsigned char *b = calloc(1, total + dlen + 1);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)((total - 10) & 255), b[9] = (unsigned char)((total - 10) >> 8);
    memcpy(b + 10, dict, hl);
    memset(b + 10 + hl, ' ', total - 10 - hl - 1);
    b[total - 1] = '\n';
    *len = total + dlen;
    return b;
}

TEST(tensor_npy_malformed) {
    static const struct {
        const char *dict;
        size_t dlen;
        int status;
        const char *msg;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, TN_IO_ERR_UNSUPPORTED,
         "0-dimensional"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", 95, TN_IO_ERR_FORMAT,
         "truncated .npy data: shape (2, 3, 4) float32 needs 96 bytes"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", 100, TN_IO_ERR_FORMAT,
         "4 bytes of trailing data"},
        {"{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", 96,
         TN_IO_ERR_UNSUPPORTED, "dtype"},
        {"{'descr': '<f8', 'fortran_order': True, 'shape': (100000, 100000, 100000, 100000, "
         "100000), }", 0, TN_IO_ERR_TOO_LARGE, "too large to address"},
        {"{'descr': '<f8', 'fortran_order': True, 'shape': (2, -3, 4), }", 0, TN_IO_ERR_FORMAT,
         "negative"},
        {"{'descr': '<f8', 'fortran_order': True, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
         "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }", 8, TN_IO_ERR_FORMAT,
         "too many dimensions"},
    };
    char err[512];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t len;
        void *b = npy_image(cases[k].dict, cases[k].dlen, &len);
        tn_tensor t;
        int st = tn_io_parse_npy_tensor(b, len, "bad.npy", TN_IO_AS_FLOAT, 0, &t, err, sizeof err);
        CHECK_MSG(st == cases[k].status, "case %zu: status %d, expected %d (%s)", k, st,
                  cases[k].status, err);
        CHECK_MSG(strstr(err, cases[k].msg) && !strncmp(err, "bad.npy: ", 9),
                  "case %zu: message '%s'", k, err);
        CHECK(t.data == NULL && t.ndim == 0);
        free(b);
    }
    /* the size cap is checked before allocating */
    size_t len;
    void *b = npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 4, 4), }", 256, &len);
    tn_tensor t;
    CHECK(tn_io_parse_npy_tensor(b, len, "cap.npy", TN_IO_AS_DOUBLE, 300, &t, err, sizeof err) ==
          TN_IO_ERR_TOO_LARGE);
    CHECK(strstr(err, "above the limit of 300 bytes") != NULL);
    CHECK(tn_io_parse_npy_tensor(b, len, "cap.npy", TN_IO_AS_FLOAT, 300, &t, err, sizeof err) == 0);
    tn_tensor_free(&t);
    free(b);
    /* bad arguments of the writer */
    tn_tensor z;
    memset(&z, 0, sizeof z);
    void *buf;
    CHECK(tn_io_encode_npy_tensor(&z, 0, &buf, &len, err, sizeof err) == TN_IO_ERR_ARG);
    z.ndim = 2, z.dims[0] = 2, z.dims[1] = 2;
    CHECK(tn_io_encode_npy_tensor(&z, 0, &buf, &len, err, sizeof err) == TN_IO_ERR_ARG); /* NULL data */
    CHECK(tn_io_encode_npy_tensor(&z, TN_IO_NPY_1D, &buf, &len, err, sizeof err) == TN_IO_ERR_ARG);
    CHECK(tn_io_read_npy_tensor("/nonexistent/x.npy", TN_IO_AS_FLOAT, 0, &t, err, sizeof err) ==
          TN_IO_ERR_OPEN);
}

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

TEST(tensor_gen_tucker_file_matches_generator) {
    if (!tu_have_bin()) SKIP("tcnla binary not built");
    char dir[64], args[1024], err[512], path[256];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "tensor"));
    const int64_t dims[4] = {9, 8, 7, 6}, ranks[4] = {4, 4, 3, 3};
    snprintf(path, sizeof path, "%s/T.npy", dir);
    snprintf(args, sizeof args, "gen --kind tucker --dims 9,8,7,6 --ranks 4,4,3,3 --pad 1 --seed 5 "
             "--output %s --json", path);
    CHECK_EQ_INT(tu_run(args, out, sizeof out), 0);
    CHECK(strstr(out, "\"kind\":\"tucker\"") && strstr(out, "\"order\":4") &&
          strstr(out, "\"dims\":[9,8,7,6]") && strstr(out, "\"multilinear_rank\":[3,3,2,2]"));
    /* the file holds exactly the generator's values, first index fastest */
    float *A = malloc(sizeof(float) * 9 * 8 * 7 * 6);
    REQUIRE(A && tn_testmat_tucker(4, dims, ranks, 1, 5, A) == 0);
    tn_tensor t;
    int st = tn_io_read_npy_tensor(path, TN_IO_AS_STORED, 0, &t, err, sizeof err);
    CHECK_MSG(st == 0, "%s", err);
    if (st == 0) {
        CHECK(t.ndim == 4 && !t.is_double);
        CHECK(memcmp(t.dims, dims, sizeof dims) == 0);
        CHECK(memcmp(t.data, A, sizeof(float) * 9 * 8 * 7 * 6) == 0);
        double fro = 0;
        for (int k = 0; k < 9 * 8 * 7 * 6; k++) fro += (double)A[k] * A[k];
        CHECK(fabs(sqrt(fro) - tu_jnum(out, "fro_norm")) <= 1e-8 * sqrt(fro));
    }
    tn_tensor_free(&t);
    free(A);
    /* --double widens exactly */
    snprintf(args, sizeof args, "gen --kind tucker --dims 5,4 --ranks 3,2 --pad 1 --double "
             "--output %s/D.npy", dir);
    CHECK_EQ_INT(tu_run(args, out, sizeof out), 0);
    CHECK(strstr(out, "5 x 4 float64 Tucker tensor") != NULL);
    /* usage errors */
    static const char *bad[] = {
        "gen --kind tucker --m 5 --output $TMPDIR/never_written_t.npy",
        "gen --kind tucker --rank 5 --output $TMPDIR/never_written_t.npy",
        "gen --dims 5,5 --output $TMPDIR/never_written_t.npy",
        "gen --kind tucker --dims 5,5 --ranks 3,3,3 --output $TMPDIR/never_written_t.npy",
        "gen --kind tucker --dims 5,5 --ranks 3,6 --pad 1 --output $TMPDIR/never_written_t.npy",
        "gen --kind tucker --dims 5,5 --ranks 3,3 --pad 3 --output $TMPDIR/never_written_t.npy",
        "gen --kind tucker --dims 5 --output $TMPDIR/never_written_t.npy",
        "hosvd --input $TMPDIR/never_written_t.npy --dims 5,5",
        "hosvd --input $TMPDIR/never_written_t.npy --pad 2",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        st = tu_run(bad[k], out, sizeof out);
        CHECK_MSG(st == 2, "'tcnla %s' exited %d, expected 2: %s", bad[k], st, out);
    }
    FILE *f = fopen(tu_tmppath("never_written_t.npy"), "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    tu_rm_dir(dir);
}

TEST(tensor_gen_numpy_hosvd_round_trip) {
    if (!tu_have_bin()) SKIP("tcnla binary not built");
    const char *py = python_with_numpy();
    if (!py) SKIP("python3 with numpy not found");
    char dir[64], args[1024], cmd[2048], line[512];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "tensor"));
    snprintf(args, sizeof args, "gen --kind tucker --dims 12,10,8 --ranks 5,4,4 --pad 1 --seed 3 "
             "--output %s/T.npy --json", dir);
    REQUIRE(tu_run(args, out, sizeof out) == 0);
    const double fro = tu_jnum(out, "fro_norm");
    /* NumPy: the shape, Fortran order, the norm, the multilinear rank (J - pad) of every
     * unfolding, and the mode-1 fibres as the first index; then a C-order copy */
    static const char script[] =
        "import sys, os, numpy as np\n"
        "d, fro = sys.argv[1], float(sys.argv[2])\n"
        "A = np.load(os.path.join(d, 'T.npy'))\n"
        "assert A.shape == (12, 10, 8) and A.dtype == np.float32, (A.shape, A.dtype)\n"
        "assert A.flags.f_contiguous, 'not Fortran order'\n"
        "assert abs(np.linalg.norm(A.astype(np.float64)) - fro) < 1e-6 * fro, 'norm'\n"
        "for k, r in enumerate((4, 3, 3)):\n"
        "    s = np.linalg.svd(np.moveaxis(A, k, 0).reshape(A.shape[k], -1).astype(np.float64), compute_uv=False)\n"
        "    assert s[r - 1] > 1e-3 * s[0] and s[r] < 1e-5 * s[0], 'mode %d rank: %s' % (k, s)\n"
        "raw = np.fromfile(os.path.join(d, 'T.npy'), dtype='<f4')[-A.size:]\n"
        "assert np.array_equal(raw, A.ravel(order='F')), 'first index fastest'\n"
        "np.save(os.path.join(d, 'C.npy'), np.ascontiguousarray(A))\n"
        "np.save(os.path.join(d, 'M.npy'), np.ones(5, np.float32))\n"
        "print('OK')\n";
    FILE *f = fopen(strcat(strcpy(cmd, dir), "/check.py"), "w");
    REQUIRE(f);
    fputs(script, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s/check.py %s %.9e 2>&1", py, dir, dir, fro);
    FILE *pp = popen(cmd, "r");
    REQUIRE(pp);
    int ok = 0;
    while (fgets(line, sizeof line, pp)) {
        if (!strncmp(line, "OK", 2)) ok = 1;
        else CHECK_MSG(0, "numpy: %s", line);
    }
    CHECK(pclose(pp) == 0);
    CHECK(ok);
    /* hosvd on the generated tensor, on the file, and on NumPy's C-order copy: the same
     * tensor, so the same decomposition and error */
    CHECK_EQ_INT(tu_run("hosvd --backend cpu --dims 12,10,8 --ranks 5,4,4 --pad 1 --seed 3 "
                        "--no-baseline --json", out, sizeof out), 0);
    const double e0 = tu_jnum(out, "rel_error");
    CHECK_MSG(e0 > 0 && e0 < 1e-5, "generated: rel_error %g", e0);
    static const char *files[] = {"T.npy", "C.npy"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "hosvd --backend cpu --input %s/%s --ranks 5,4,4 --seed 3 "
                 "--no-baseline --json", dir, files[k]);
        CHECK_EQ_INT(tu_run(args, out, sizeof out), 0);
        CHECK(strstr(out, "\"dims\":[12,10,8]") && strstr(out, "\"pad\":null") &&
              strstr(out, files[k]));
        CHECK_MSG(tu_jnum(out, "rel_error") == e0, "%s: rel_error %g, generated %g", files[k],
                  tu_jnum(out, "rel_error"), e0);
    }
    /* default ranks min(32, I): every mode kept, FP32-level error */
    snprintf(args, sizeof args, "hosvd --backend cpu --input %s/T.npy --no-baseline --json", dir);
    CHECK_EQ_INT(tu_run(args, out, sizeof out), 0);
    CHECK(strstr(out, "\"ranks\":[12,10,8]") != NULL);
    /* bad files: exit 1 with a message naming the file */
    static const struct { const char *args, *msg; } bad[] = {
        {"--input %s/M.npy", "not a tensor of 2 to 8 modes"},
        {"--input %s/T.npy --ranks 5,4", "the tensor has 3 modes but --ranks has 2"},
        {"--input %s/T.npy --ranks 5,4,9", "rank J = 9 exceeds I = 8"},
        {"--input %s/missing.npy", "cannot open"},
        {"--input %s/check.py", "no \\x93NUMPY magic"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char a2[512];
        snprintf(a2, sizeof a2, bad[k].args, dir);
        snprintf(args, sizeof args, "hosvd --backend cpu --no-baseline %s", a2);
        int st = tu_run(args, out, sizeof out);
        CHECK_MSG(st == 1 && strstr(out, bad[k].msg) && strstr(out, dir),
                  "'%s': exit %d: %s", a2, st, out);
    }
    tu_rm_dir(dir);
}
