/* The tcnla lra / hosvd / gen subcommands, run as a user would: help, exit
 * statuses, small runs on the CPU backend, a gen -> rsvd -> numpy round trip,
 * and malformed input files fed to rsvd and lra. */
#include "test.h"
#include "util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs `tcnla ARGS` with stdout discarded and stderr captured into err;
 * returns the exit status, or -1 - signal when killed by a signal. */
static int run_stderr(const char *args, const char *errfile, char *err, size_t len) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>%s", tu_bin(), args, errfile);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    int st = pclose(p);
    err[0] = 0;
    FILE *f = fopen(errfile, "rb");
    if (f) {
        size_t n = fread(err, 1, len - 1, f);
        err[n] = 0;
        fclose(f);
    }
    if (WIFSIGNALED(st)) return -1 - WTERMSIG(st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

static char buf[1 << 16];

/* ------------------------------------------------------------ help, usage */

TEST(cli2_help_shows_defaults) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    CHECK_EQ_INT(tu_run("--help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "lra") && strstr(buf, "hosvd") && strstr(buf, "gen"));
    CHECK_EQ_INT(tu_run("lra --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "[2048 2048]") && strstr(buf, "[64]") && strstr(buf, "[10]") &&
          strstr(buf, "[16_32 on a GPU, none on the CPU]") && strstr(buf, "[native_fp32]") &&
          strstr(buf, "[cholqr_fp64]") && strstr(buf, "[= --rank]") && strstr(buf, "--no-refine") &&
          strstr(buf, "--recompress") && strstr(buf, "--no-baseline") && strstr(buf, "_X.npy"));
    CHECK_EQ_INT(tu_run("hosvd --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "[256,256,256]") && strstr(buf, "[32,32,32]") && strstr(buf, "[4]") &&
          strstr(buf, "[cholqr2_fp64]") && strstr(buf, "[fp16]") &&
          strstr(buf, "--input FILE.npy"));
    CHECK_EQ_INT(tu_run("gen --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "--output") && strstr(buf, "[exp]") && strstr(buf, "[512 512]") &&
          strstr(buf, "[32, or min(m, n) when smaller]") && strstr(buf, "--double"));
}

TEST(cli2_bad_options_exit_2) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    static const char *bad[] = {
        "lra --rank 0",
        "lra --rank",
        "lra --tgemm 8_8",
        "lra --gemm tcec_fp17",
        "lra --gemm shgemm_fp16",
        "lra --orth gram_schmidt",
        "lra --noise -1",
        "lra --m 12x",
        "lra --bogus",
        "lra stray",
        "lra --backend tpu",
        "hosvd --dims 24,20 --ranks 6,5,4",
        "hosvd --dims 24,,16",
        "hosvd --dims 24",
        "hosvd --dims 1,2,3,4,5,6,7,8,9",
        "hosvd --dims 24,20,16 --ranks 6,5,40",
        "hosvd --dims 24,20,16 --ranks 6,5,4 --pad 4",
        "hosvd --gemm shgemm_fp16",
        "hosvd --proj shgemm_fp16 --random-format fp32 --backend cpu",
        "hosvd --random-format fp12",
        "hosvd --orth qr",
        "hosvd --reps 0",
        "gen --m 10 --n 10",
        "gen --kind gaussian --output $TMPDIR/never_written.npy",
        "gen --rank 20 --m 10 --n 30 --output $TMPDIR/never_written.npy",
        "gen --alpha 0 --output $TMPDIR/never_written.npy",
        "gen --output",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int st = tu_run(bad[k], buf, sizeof buf);
        CHECK_MSG(st == 2, "'tcnla %s' exited %d, expected 2: %s", bad[k], st, buf);
        CHECK_MSG(strstr(buf, "tcnla"), "'tcnla %s': no message", bad[k]);
    }
    FILE *f = fopen(tu_tmppath("never_written.npy"), "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
}

/* ------------------------------------------------------------ small runs */

TEST(cli2_lra_small_runs) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    /* exactly rank 8: FP32-level error, refined output rank 3k */
    CHECK_EQ_INT(tu_run("lra --backend cpu --m 200 --n 150 --rank 8 --json", buf, sizeof buf), 0);
    CHECK(buf[0] == '{' && strstr(buf, "\"command\":\"lra\"") && strstr(buf, "\"tgemm\":\"none\""));
    double e = tu_jnum(buf, "rel_error"), eb = tu_jnum(buf, "fp32_rel_error");
    CHECK_MSG(e > 0 && e < 1e-5, "rel_error %g", e);
    CHECK_MSG(eb > 0 && eb < 1e-5, "fp32_rel_error %g", eb);
    CHECK_EQ_INT(tu_jnum(buf, "out_rank"), 24);
    CHECK(tu_jnum(buf, "seconds") > 0 && tu_jnum(buf, "fp32_seconds") > 0 &&
          tu_jnum(buf, "speedup") > 0);
    /* recompressed to rank k, with noise: the error is the noise level */
    CHECK_EQ_INT(tu_run("lra --backend cpu --m 200 --n 150 --rank 8 --recompress --noise 1e-2 "
                     "--no-baseline --json", buf, sizeof buf), 0);
    e = tu_jnum(buf, "rel_error");
    CHECK_EQ_INT(tu_jnum(buf, "out_rank"), 8);
    CHECK_MSG(e > 5e-3 && e < 1.5e-2, "rel_error %g with 1e-2 noise", e);
    CHECK(strstr(buf, "\"fp32_seconds\":null") && strstr(buf, "\"speedup\":null"));
    /* the Tensor Core model, asked for explicitly: refinement recovers FP32 accuracy */
    CHECK_EQ_INT(tu_run("lra --backend cpu --m 120 --n 100 --rank 6 --tgemm 16_32 --orth cholqr2_fp64 "
                     "--json", buf, sizeof buf), 0);
    e = tu_jnum(buf, "rel_error");
    CHECK(strstr(buf, "\"tgemm\":\"16_32\"") && strstr(buf, "\"orth\":\"cholqr2_fp64\""));
    CHECK_MSG(e > 0 && e < 1e-5, "16_32 refined rel_error %g", e);
    /* without refinement, FP16 inputs: about FP16's unit roundoff */
    CHECK_EQ_INT(tu_run("lra --backend cpu --m 120 --n 100 --rank 6 --tgemm 16_16 --no-refine --json",
                     buf, sizeof buf), 0);
    e = tu_jnum(buf, "rel_error");
    CHECK_MSG(e > 1e-5 && e < 1e-2, "16_16 unrefined rel_error %g", e);
    CHECK_EQ_INT(tu_jnum(buf, "out_rank"), 6);
    /* text report; --gemm alone selects tgemm none */
    CHECK_EQ_INT(tu_run("lra --backend cpu --m 100 --n 90 --rank 5 --gemm tcec_tf32", buf, sizeof buf), 0);
    CHECK(strstr(buf, "tgemm none (products: tcec_tf32)") && strstr(buf, "speedup"));
    /* too large a rank for the matrix: bad input */
    CHECK_EQ_INT(tu_run("lra --backend cpu --m 40 --n 30 --rank 12", buf, sizeof buf), 1);
    CHECK(strstr(buf, "exceeds min(m, n)"));
}

TEST(cli2_hosvd_small_runs) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    CHECK_EQ_INT(tu_run("hosvd --backend cpu --dims 24,20,16 --ranks 6,5,4 --pad 1 --json", buf,
                     sizeof buf), 0);
    CHECK(buf[0] == '{' && strstr(buf, "\"dims\":[24,20,16]") && strstr(buf, "\"ranks\":[6,5,4]"));
    double e = tu_jnum(buf, "rel_error"), eb = tu_jnum(buf, "fp32_rel_error");
    CHECK_MSG(e > 0 && e < 1e-5, "rel_error %g", e);
    CHECK_MSG(eb > 0 && eb < 1e-5, "fp32_rel_error %g", eb);
    CHECK(tu_jnum(buf, "seconds") > 0 && tu_jnum(buf, "speedup") > 0);
    /* Tensor Core methods on the model, order 4 */
    CHECK_EQ_INT(tu_run("hosvd --backend cpu --dims 10,9,8,7 --ranks 4,4,3,3 --pad 1 --proj "
                     "shgemm_fp16 --gemm tcec_tf32 --orth householder --json", buf, sizeof buf), 0);
    e = tu_jnum(buf, "rel_error");
    CHECK(strstr(buf, "\"proj\":\"shgemm_fp16\"") && strstr(buf, "\"order\":4"));
    CHECK_MSG(e > 0 && e < 1e-5, "order-4 rel_error %g", e);
    /* ranks below the tensor's multilinear rank: a real truncation error */
    CHECK_EQ_INT(tu_run("hosvd --backend cpu --dims 20,20,20 --ranks 8,8,8 --pad 0 --no-baseline",
                     buf, sizeof buf), 0);
    CHECK(strstr(buf, "||A - core x Q||_F / ||A||_F") && !strstr(buf, "speedup"));
}

TEST(cli2_gen_kinds) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[64], args[512];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli2"));
    static const char *kinds[] = {"exp", "linear", "poly", "cauchy", "lowrank"};
    for (int k = 0; k < 5; k++) {
        snprintf(args, sizeof args, "gen --kind %s --m 60 --n 40 --rank 5 --output %s/%s.npy --json",
                 kinds[k], dir, kinds[k]);
        CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
        CHECK(strstr(buf, "\"command\":\"gen\"") && strstr(buf, "\"m\":60"));
        double opt = tu_jnum(buf, "optimal_rel_residual");
        if (k < 3) CHECK_MSG(opt > 0 && opt < 1, "%s: optimal %g", kinds[k], opt);
        else if (k == 4) CHECK(opt == 0);
        else CHECK(strstr(buf, "\"optimal_rel_residual\":null"));
        /* what gen writes, rsvd reads */
        snprintf(args, sizeof args, "rsvd --backend cpu --input %s/%s.npy --rank 5 --oversampling 5 "
                 "--no-baseline --json", dir, kinds[k]);
        CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
        CHECK(strstr(buf, "\"m\":60,\"n\":40"));
    }
    /* large: the level-3 generator; float64 */
    snprintf(args, sizeof args, "gen --m 1500 --n 300 --rank 10 --double --output %s/big.npy", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    CHECK(strstr(buf, "1500 x 300 float64") && strstr(buf, "svd_fast") &&
          strstr(buf, "relative 1.000000e-03"));
    /* the default rank shrinks to a small matrix; cauchy has no rank */
    snprintf(args, sizeof args, "gen --m 10 --n 12 --output %s/small.npy --json", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    CHECK(strstr(buf, "\"rank\":10"));
    snprintf(args, sizeof args, "gen --kind cauchy --m 10 --n 12 --rank 50 --output %s/c.npy", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    snprintf(args, sizeof args, "gen --output %s/nodir/x.npy", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 1);
    tu_rm_dir(dir);
}

/* A python interpreter that has numpy, or NULL (as tests/test_io.c finds it). */
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

TEST(cli2_gen_rsvd_lra_numpy_round_trip) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    const char *py = python_with_numpy();
    if (!py) SKIP("python3 with numpy not found");
    char dir[64], args[1024], cmd[2048], line[512];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli2"));
    snprintf(args, sizeof args, "gen --kind exp --m 120 --n 80 --rank 8 --output %s/A.npy --json",
             dir);
    REQUIRE(tu_run(args, buf, sizeof buf) == 0);
    const double opt = tu_jnum(buf, "optimal_rel_residual");
    REQUIRE(opt > 0 && opt < 1);
    snprintf(args, sizeof args, "rsvd --input %s/A.npy --backend cpu --rank 8 --output %s/r", dir,
             dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    snprintf(args, sizeof args, "gen --kind lowrank --m 90 --n 70 --rank 4 --double "
             "--output %s/L.npy", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    snprintf(args, sizeof args, "lra --input %s/L.npy --backend cpu --rank 4 --recompress "
             "--output %s/l", dir, dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    static const char script[] =
        "import sys, os, numpy as np\n"
        "d, opt = sys.argv[1], float(sys.argv[2])\n"
        "A = np.load(os.path.join(d, 'A.npy')).astype(np.float64)\n"
        "U, S, VT = (np.load(os.path.join(d, 'r_%s.npy' % s)).astype(np.float64) for s in ('U', 'S', 'VT'))\n"
        "assert A.shape == (120, 80) and U.shape == (120, 8) and S.shape == (8,) and VT.shape == (8, 80), 'shapes'\n"
        "sv = np.linalg.svd(A, compute_uv=False)\n"
        "true_opt = np.sqrt((sv[8:] ** 2).sum() / (sv ** 2).sum())\n"
        "assert abs(true_opt - opt) < 1e-3 * opt, 'gen optimum %g, numpy %g' % (opt, true_opt)\n"
        "res = np.linalg.norm(A - U @ np.diag(S) @ VT) / np.linalg.norm(A)\n"
        "assert res < 2 * opt, 'rsvd residual %g vs optimal %g' % (res, opt)\n"
        "assert np.all(np.diff(S) <= 0) and np.allclose(S, sv[:8], rtol=1e-3), 'singular values'\n"
        "L = np.load(os.path.join(d, 'L.npy'))\n"
        "X, Y = np.load(os.path.join(d, 'l_X.npy')), np.load(os.path.join(d, 'l_Y.npy'))\n"
        "assert L.dtype == np.float64 and X.shape == (90, 4) and Y.shape == (70, 4), 'lra shapes'\n"
        "e = np.linalg.norm(L - X.astype(np.float64) @ Y.T.astype(np.float64)) / np.linalg.norm(L)\n"
        "assert e < 1e-5, 'lra error %g' % e\n"
        "print('OK %.3e %.3e %.3e' % (res, opt, e))\n";
    FILE *f = fopen(strcat(strcpy(cmd, dir), "/check.py"), "w");
    REQUIRE(f);
    fputs(script, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s/check.py %s %.9e 2>&1", py, dir, dir, opt);
    FILE *pp = popen(cmd, "r");
    REQUIRE(pp);
    int ok = 0;
    while (fgets(line, sizeof line, pp)) {
        if (!strncmp(line, "OK ", 3)) ok = 1;
        else CHECK_MSG(0, "numpy: %s", line);
    }
    CHECK(pclose(pp) == 0);
    CHECK(ok);
    tu_rm_dir(dir);
}

/* ------------------------------------------------------- malformed input */

/* A .npy image: magic, version `major`.0, `dict` padded with spaces and '\n'
 * to a multiple of 64 bytes (no padding when pad == 0), then `data`. */
static int write_npy(const char *path, int major, const char *dict, int pad, const void *data,
                     size_t dlen) {
    unsigned char b[1024];
    size_t pre = major == 1 ? 10 : 12, hl = strlen(dict);
    size_t total = pad ? (pre + hl + 1 + 63) / 64 * 64 : pre + hl;
    if (total - pre > 512 || total + dlen > sizeof b) return -1;
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major, b[7] = 0;
    size_t h = total - pre;
    for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (unsigned char)(h >> (8 * i));
    memcpy(b + pre, dict, hl);
    if (pad) {
        memset(b + pre + hl, ' ', total - pre - hl);
        b[total - 1] = '\n';
    }
    if (dlen) memcpy(b + total, data, dlen);
    return write_bytes(path, b, total + dlen);
}

/* Writes the malformed files into dir; returns their number, names in names[]. */
static int write_malformed(const char *dir, char names[][64], int max) {
    char p[4096];
    int n = 0;
    float f16[16] = {0}, f4[4] = {1, 2, 3, NAN};
    for (int i = 0; i < 16; i++) f16[i] = (float)i;
#define NAME(s) (snprintf(names[n], 64, "%s", s), snprintf(p, sizeof p, "%s/%s", dir, s), p)
#define NEXT(ok) \
    do {         \
        if ((ok) == 0 && n < max) n++; \
    } while (0)
    NEXT(write_bytes(NAME("empty.npy"), "", 0));
    NEXT(write_bytes(NAME("bad_magic.npy"), "\x93NUMPX\x01\x00\x06\x00{}    ", 16));
    NEXT(write_bytes(NAME("short_header.npy"), "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', ", 28));
    NEXT(write_npy(NAME("garbage_header.npy"), 1, "hello, world", 1, f16, 64));
    NEXT(write_npy(NAME("dtype_i4.npy"), 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4, 4), }",
                   1, f16, 64));
    NEXT(write_npy(NAME("dtype_c8.npy"), 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 4), }",
                   1, f16, 64));
    NEXT(write_npy(NAME("absurd_shape.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': True, 'shape': (100000000000, 100000000000), }",
                   1, f16, 64));
    NEXT(write_npy(NAME("huge_shape.npy"), 2,
                   "{'descr': '<f8', 'fortran_order': True, 'shape': (99999999999999999999999, 3), }",
                   1, f16, 64));
    NEXT(write_npy(NAME("negative_shape.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (-4, 4), }", 1, f16, 64));
    NEXT(write_npy(NAME("truncated_data.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 1, f16, 20));
    NEXT(write_npy(NAME("trailing_data.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 1, f16, 20));
    NEXT(write_npy(NAME("three_d.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4), }", 1, f16, 64));
    NEXT(write_npy(NAME("bad_version.npy"), 9,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 1, f16, 64));
    NEXT(write_npy(NAME("unterminated_dict.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4", 1, f16, 64));
    NEXT(write_npy(NAME("nan_value.npy"), 1,
                   "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 1, f4, 16));
    static const struct { const char *name, *text; } mtx[] = {
        {"empty.mtx", ""},
        {"bad_banner.mtx", "%%MatrixMarket tensor array real general\n2 2\n1\n2\n3\n4\n"},
        {"not_mtx.mtx", "hello world\n1 2 3\n"},
        {"bad_number.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n2 2 abc\n"},
        {"nan_number.mtx", "%%MatrixMarket matrix array real general\n2 1\nnan\n1\n"},
        {"overflow_number.mtx", "%%MatrixMarket matrix array real general\n2 1\n1e999\n1\n"},
        {"truncated.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n"},
        {"trailing.mtx", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n"},
        {"out_of_bounds.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n5 1 1.0\n"},
        {"zero_index.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1.0\n"},
        {"absurd_size.mtx", "%%MatrixMarket matrix array real general\n99999999999 99999999999\n1\n"},
        {"negative_size.mtx", "%%MatrixMarket matrix coordinate real general\n-3 3 1\n1 1 1\n"},
        {"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n"},
        {"extra_field.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0 7\n"},
        {"upper_symmetric.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n"},
        {"missing_size.mtx", "%%MatrixMarket matrix coordinate real general\n% only a comment\n"},
    };
    for (size_t k = 0; k < sizeof mtx / sizeof mtx[0]; k++)
        NEXT(write_bytes(NAME(mtx[k].name), mtx[k].text, strlen(mtx[k].text)));
    /* a directory, and a file that does not exist */
    NEXT(mkdir(NAME("a_directory.npy"), 0700));
    NAME("does_not_exist.npy");
    NEXT(0);
#undef NAME
#undef NEXT
    return n;
}

TEST(cli2_malformed_inputs_exit_1_with_one_line) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[64], names[64][64], args[4608], errfile[256], err[8192];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli2"));
    const int n = write_malformed(dir, names, 64);
    CHECK_MSG(n >= 30, "only %d malformed files written", n);
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
    static const char *cmds[] = {"rsvd --backend cpu --rank 2 --oversampling 0 --power-iters 0",
                                 "lra --backend cpu --rank 1 --oversampling 0"};
    for (int k = 0; k < n; k++)
        for (int c = 0; c < 2; c++) {
            char path[4352];
            snprintf(path, sizeof path, "%s/%s", dir, names[k]);
            snprintf(args, sizeof args, "%s --input %s", cmds[c], path);
            int st = run_stderr(args, errfile, err, sizeof err);
            int lines = 0;
            if (getenv("TCNLA_CLI2_VERBOSE")) printf("    %d %s", st, err);
            for (const char *q = err; *q; q++) lines += *q == '\n';
            CHECK_MSG(st == 1, "%s %s: exit %d, expected 1; stderr: %s", cmds[c], names[k], st, err);
            CHECK_MSG(lines == 1 && err[strlen(err) - 1] == '\n',
                      "%s %s: %d lines on stderr: %s", cmds[c], names[k], lines, err);
            CHECK_MSG(strstr(err, path), "%s %s: stderr does not name the file: %s", cmds[c],
                      names[k], err);
        }
    unlink(errfile);
    tu_rm_dir(dir);
}

/* tcnla gemm --precision double with the Ozaki options */
TEST(cli2_gemm_double_ozaki_modes) {
    char buf[4096];
    CHECK_EQ_INT(tu_run("gemm --precision double --m 24 --n 20 --k 300 --dist phi:1 --mode "
                        "fixed:12 --scheme 2 --json",
                        buf, sizeof buf),
                 0);
    CHECK(strstr(buf, "\"precision\":\"double\"") && strstr(buf, "\"scheme\":2") &&
          strstr(buf, "\"slices\":12") && strstr(buf, "\"max_rel_err\""));
    CHECK_EQ_INT(tu_run("gemm --precision double --m 16 --n 16 --k 64 --mode cr --json", buf,
                        sizeof buf),
                 0);
    CHECK(strstr(buf, "\"scheme\":1") && strstr(buf, "\"max_rel_err\":0.000000e+00"));
    CHECK_EQ_INT(tu_run("gemm --precision double --mode cr --scheme 2", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --precision double --mode fixed:0", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --precision double --method tcec_fp16", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --precision quad", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "--precision") && strstr(buf, "fixed:N") && strstr(buf, "--scheme"));
}
