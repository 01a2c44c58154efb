/* The tcnla command against careless and hostile use: float64 input outside
 * float32's range, option values float32 cannot hold, JSON output, --output
 * prefixes, input from pipes and FIFOs, generator and analysis bounds, and
 * the wording of its messages. */
#include "test.h"
#include "util.h"
#include "io/io.h"
#include "testmat/testmat.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

/* Runs `sh -c CMD` (stdout and stderr into buf); exit status, -1 on a signal. */
static int sh(const char *cmd) {
    char full[16384];
    snprintf(full, sizeof full, "( %s ) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* An r x c float64 (or float32) Fortran-order .npy holding v[k] = base * (1 + k / 8). */
static int write_npy_val(const char *path, int64_t r, int64_t c, int dbl, double base) {
    tn_matrix m = {r, c, dbl, 0, NULL};
    size_t n = (size_t)(r * c);
    m.data = malloc(n * (dbl ? 8 : 4));
    for (size_t k = 0; k < n; k++) {
        double v = base * (1.0 + (double)(k % 8) / 8.0);
        if (dbl) ((double *)m.data)[k] = v;
        else ((float *)m.data)[k] = (float)v;
    }
    int st = tn_io_write_npy(path, &m, 0u, NULL, 0);
    free(m.data);
    return st;
}

/* ------------------------------------------------ float64 outside float32 */

TEST(cli3_float64_out_of_float32_range_rejected) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[64], p[256], args[1024];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    /* values near 1e-300 would all become 0 in float32 */
    snprintf(p, sizeof p, "%s/tiny.npy", dir);
    REQUIRE(write_npy_val(p, 30, 20, 1, 1e-300) == 0);
    static const char *cmds[] = {"rsvd --backend cpu --rank 2 --oversampling 0 --no-baseline",
                                 "lra --backend cpu --rank 2 --oversampling 0 --no-baseline"};
    for (int c = 0; c < 2; c++) {
        snprintf(args, sizeof args, "%s --input %s", cmds[c], p);
        int st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 1, "%s tiny: exit %d: %s", cmds[c], st, buf);
        CHECK_MSG(strstr(buf, p) && strstr(buf, "float32") && strstr(buf, "[0, 0]") &&
                      strstr(buf, "1e-300"),
                  "%s tiny: message %s", cmds[c], buf);
    }
    /* near 1e300: out of range, not "NaN or Inf" */
    snprintf(p, sizeof p, "%s/huge.npy", dir);
    REQUIRE(write_npy_val(p, 30, 20, 1, 1e300) == 0);
    snprintf(args, sizeof args, "%s --input %s", cmds[0], p);
    int st = tu_run(args, buf, sizeof buf);
    CHECK_MSG(st == 1 && !strstr(buf, "NaN or Inf") && strstr(buf, "float32") &&
                  strstr(buf, "1e+300"),
              "huge: exit %d: %s", st, buf);
    /* one element out of range, named by its position */
    {
        tn_matrix m = {6, 5, 1, 0, calloc(30, 8)};
        for (int k = 0; k < 30; k++) ((double *)m.data)[k] = 1.0 + k;
        ((double *)m.data)[3 + 4 * 6] = -5e-46; /* rounds to -0 in float32 */
        snprintf(p, sizeof p, "%s/one.npy", dir);
        REQUIRE(tn_io_write_npy(p, &m, TN_IO_NPY_C_ORDER, NULL, 0) == 0);
        free(m.data);
        snprintf(args, sizeof args, "%s --input %s", cmds[0], p);
        st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 1 && strstr(buf, "[3, 4]") && strstr(buf, "-5e-46"), "one: %d %s", st,
                  buf);
    }
    /* float32 subnormals are representable: accepted */
    snprintf(p, sizeof p, "%s/sub.npy", dir);
    REQUIRE(write_npy_val(p, 30, 20, 1, 1e-40) == 0);
    snprintf(args, sizeof args, "%s --input %s", cmds[1], p);
    st = tu_run(args, buf, sizeof buf);
    CHECK_MSG(st == 0, "subnormal float64 input: exit %d: %s", st, buf);
    /* Matrix Market: 1e-50 */
    snprintf(p, sizeof p, "%s/tiny.mtx", dir);
    static const char mtx[] = "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1.0\n"
                              "2 3 1e-50\n4 4 2.0\n";
    REQUIRE(write_file(p, mtx, strlen(mtx)) == 0);
    snprintf(args, sizeof args, "%s --input %s", cmds[1], p);
    st = tu_run(args, buf, sizeof buf);
    CHECK_MSG(st == 1 && strstr(buf, "(2, 3)") && strstr(buf, "1e-50") && strstr(buf, "float32"),
              "mtx 1e-50: exit %d: %s", st, buf);
    /* hosvd: a float64 tensor near 1e-300 */
    {
        tn_tensor t;
        memset(&t, 0, sizeof t);
        t.ndim = 3, t.dims[0] = 6, t.dims[1] = 5, t.dims[2] = 4, t.is_double = 1;
        t.data = malloc(120 * 8);
        for (int k = 0; k < 120; k++) ((double *)t.data)[k] = 1e-300 * (1 + k % 3);
        snprintf(p, sizeof p, "%s/tiny_t.npy", dir);
        REQUIRE(tn_io_write_npy_tensor(p, &t, 0u, NULL, 0) == 0);
        free(t.data);
        snprintf(args, sizeof args, "hosvd --backend cpu --ranks 2,2,2 --no-baseline --input %s", p);
        st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 1 && strstr(buf, "float32") && strstr(buf, "[0, 0, 0]"),
                  "hosvd tiny: exit %d: %s", st, buf);
    }
    /* a real NaN is still called one */
    {
        float f[20];
        for (int k = 0; k < 20; k++) f[k] = (float)k;
        f[7] = NAN;
        tn_matrix m = {5, 4, 0, 0, f};
        snprintf(p, sizeof p, "%s/nan.npy", dir);
        REQUIRE(tn_io_write_npy(p, &m, 0u, NULL, 0) == 0);
        snprintf(args, sizeof args, "%s --input %s", cmds[0], p);
        st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 1 && strstr(buf, "NaN or Inf"), "nan: exit %d: %s", st, buf);
    }
    tu_rm_dir(dir);
}

/* ------------------------------------------------------------ --alpha, JSON */

TEST(cli3_gemm_alpha_beta_outside_float32_exit_2) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    static const char *bad[] = {"--alpha 1e39", "--alpha -1e39", "--alpha 1e-50", "--beta 1e39",
                                "--beta 1e-46", "--alpha 3.5e38"};
    char args[256];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(args, sizeof args, "gemm --backend cpu --method native_fp32 --m 4 --n 4 --k 4 %s",
                 bad[k]);
        int st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 2 && strstr(buf, "float32"), "%s: exit %d: %s", bad[k], st, buf);
    }
    /* the edges float32 holds */
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method native_fp32 --m 4 --n 4 --k 4 --alpha 1e-40 "
                        "--beta 3.4e38", buf, sizeof buf), 0);
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method native_fp32 --m 4 --n 4 --k 4 --alpha 0",
                        buf, sizeof buf), 0);
}

/* A python3 (any, the json module is all it needs), or NULL. */
static const char *python(void) {
    static const char *cands[] = {"python3", "/usr/bin/python3"};
    char cmd[256];
    for (size_t k = 0; k < sizeof cands / sizeof cands[0]; k++) {
        snprintf(cmd, sizeof cmd, "%s -c \"import json\" >/dev/null 2>&1", cands[k]);
        FILE *p = popen(cmd, "r");
        if (p && pclose(p) == 0) return cands[k];
    }
    return NULL;
}

/* The JSON text in file `path` parses strictly (no NaN / Infinity); checks
 * run as python assertions on the object d. 0 when all holds. */
static int json_ok(const char *py, const char *dir, const char *path, const char *checks) {
    char script[4096], spath[256];
    snprintf(spath, sizeof spath, "%s/j.py", dir);
    snprintf(script, sizeof script,
             "import json, sys\n"
             "def bad(x): raise ValueError('non-finite ' + x)\n"
             "t = open(sys.argv[1], encoding='utf-8').read()\n"
             "d = json.loads(t, parse_constant=bad)\n"
             "%s\n",
             checks);
    if (write_file(spath, script, strlen(script))) return -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s %s", py, spath, path);
    return sh(cmd);
}

TEST(cli3_json_null_for_unknown_and_nonfinite_escaped_strings) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    const char *py = python();
    if (!py) SKIP("python3 not found");
    char dir[64], p[512], out[256], cmd[2048];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    snprintf(out, sizeof out, "%s/out.json", dir);
    /* a zero matrix, in a file whose name holds a quote, a backslash and a tab */
    snprintf(p, sizeof p, "%s/zero \"q\\b\tt.npy", dir);
    REQUIRE(write_npy_val(p, 20, 12, 0, 0.0) == 0);
    struct {
        const char *args, *checks;
    } runs[] = {
        {"rsvd --backend cpu --rank 2 --oversampling 1 --json --input '%s'",
         "assert d['input'].endswith('zero \"q\\\\b\\tt.npy'), d['input']\n"
         "assert d['optimal'] is None\n"
         "assert d['rel_residual'] in (0, None), d['rel_residual']"},
        {"rsvd --backend cpu --rank 2 --oversampling 1 --no-baseline --json --input '%s'",
         "assert d['fp32_seconds'] is None and d['speedup'] is None and "
         "d['fp32_rel_residual'] is None"},
        {"lra --backend cpu --rank 2 --oversampling 1 --json --input '%s'",
         "assert d['true_rank'] is None and d['noise'] is None\n"
         "assert d['rel_error'] in (0, None), d['rel_error']"},
        {"lra --backend cpu --m 30 --n 20 --rank 2 --no-baseline --json",
         "assert d['fp32_seconds'] is None and d['speedup'] is None"},
        {"hosvd --backend cpu --dims 8,7,6 --ranks 3,3,3 --pad 1 --no-baseline --json",
         "assert d['fp32_seconds'] is None and d['speedup'] is None"},
        {"gemm --backend cpu --method native_fp32 --m 4 --n 4 --k 4 --dist 'uniform:0:1\"x' "
         "--json",
         "assert d['dist_a'] == 'uniform:0:1\"x', d['dist_a']\n"
         "assert d['native_fp32_rel_err'] is None and d['ratio'] is None"},
        {"gemm --backend cpu --method tcec_tf32 --m 4 --n 4 --k 4 --no-compare --json",
         "assert d['native_fp32_rel_err'] is None and d['ratio'] is None"},
        {"gemm --backend cpu --method native_fp32 --m 0 --n 4 --k 4 --json", "assert d['m'] == 0"},
        {"gemm --backend cpu --precision double --method native_fp64 --m 4 --n 4 --k 4 --dist "
         "'uniform:0:1\\x' --json",
         "assert d['dist_a'] == 'uniform:0:1\\\\x'\n"
         "assert d['native_fp64_rel_err'] is None"},
        {"gen --kind cauchy --m 6 --n 5 --json --output '%s.gen.npy'",
         "assert d['output'].endswith('.gen.npy') and d['tail'] is None"},
        {"info --backend cpu --json", "assert d['backend'] == 'cpu'"},
        {"analyze formats --format fp16 --json", "assert d['formats'][0]['format']"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        char a[1024];
        snprintf(a, sizeof a, runs[k].args, p);
        snprintf(cmd, sizeof cmd, "%s %s > %s", tu_bin(), a, out);
        int st = sh(cmd);
        CHECK_MSG(st == 0, "tcnla %s: exit %d: %s", a, st, buf);
        if (st) continue;
        st = json_ok(py, dir, out, runs[k].checks);
        CHECK_MSG(st == 0, "tcnla %s: JSON check failed: %s", a, buf);
    }
    tu_rm_dir(dir);
}

/* ------------------------------------------------------------ --output */

/* The names in dir, sorted, joined by ' ' into s. */
static void list_dir(const char *dir, char *s, size_t n) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A %s | sort | tr '\\n' ' '", dir);
    sh(cmd);
    size_t k = strlen(buf) < n ? strlen(buf) : n - 1;
    memcpy(s, buf, k);
    s[k] = 0;
}

TEST(cli3_output_prefix_checked_before_computing) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[64], in[256], args[8192], names[4096], before[4096];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    snprintf(in, sizeof in, "%s/io_U.npy", dir);
    REQUIRE(write_npy_val(in, 40, 30, 0, 1.0) == 0);
    FILE *f = fopen(in, "rb");
    REQUIRE(f);
    size_t blen = fread(before, 1, sizeof before, f);
    fclose(f);
    /* the input would be overwritten with U: by name, by another spelling, by a link */
    static const char *outs[] = {"%s/io", "%s/./io", "%s/link"};
    char lnk[256];
    snprintf(lnk, sizeof lnk, "%s/link_U.npy", dir);
    REQUIRE(symlink("io_U.npy", lnk) == 0);
    for (int k = 0; k < 3; k++) {
        char o[256];
        snprintf(o, sizeof o, outs[k], dir);
        snprintf(args, sizeof args, "rsvd --backend cpu --rank 3 --input %s --output %s", in, o);
        int st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 2 && strstr(buf, "input"), "output %s over the input: exit %d: %s", o, st,
                  buf);
    }
    f = fopen(in, "rb");
    REQUIRE(f);
    char after[4096];
    size_t alen = fread(after, 1, sizeof after, f);
    fclose(f);
    CHECK_MSG(alen == blen && !memcmp(before, after, blen), "the input file was changed");
    /* lra likewise */
    snprintf(args, sizeof args, "lra --backend cpu --rank 3 --input %s/io_U.npy --output %s/io_U.npy/..",
             dir, dir);
    CHECK(tu_run(args, buf, sizeof buf) != 0);
    snprintf(lnk, sizeof lnk, "%s/l_X.npy", dir);
    REQUIRE(link(in, lnk) == 0);
    snprintf(args, sizeof args, "lra --backend cpu --rank 3 --input %s --output %s/l", in, dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 2);
    unlink(lnk);
    snprintf(lnk, sizeof lnk, "%s/link_U.npy", dir);
    unlink(lnk);
    /* a later output that cannot be written: nothing is written at all */
    char vt[256];
    snprintf(vt, sizeof vt, "%s/p_VT.npy", dir);
    REQUIRE(mkdir(vt, 0700) == 0);
    snprintf(args, sizeof args, "rsvd --backend cpu --rank 3 --input %s --output %s/p", in, dir);
    int st = tu_run(args, buf, sizeof buf);
    CHECK_MSG(st != 0 && strstr(buf, "p_VT.npy"), "exit %d: %s", st, buf);
    list_dir(dir, names, sizeof names);
    CHECK_MSG(!strcmp(names, "io_U.npy p_VT.npy "), "left behind: %s", names);
    rmdir(vt);
    /* a prefix whose names exceed PATH_MAX: refused, not cut */
    {
        size_t n = (size_t)snprintf(args, sizeof args, "%s rsvd --backend cpu --rank 3 --input "
                                    "%s --output %s/", tu_bin(), in, dir);
        size_t plen = strlen(dir) + 1;
        while (plen < 4090) n += (size_t)snprintf(args + n, sizeof args - n, "./"), plen += 2;
        snprintf(args + n, sizeof args - n, "q");
        st = sh(args);
        CHECK_MSG(st == 2 && strstr(buf, "too long"), "long prefix: exit %d: %.300s", st, buf);
        list_dir(dir, names, sizeof names);
        CHECK_MSG(!strcmp(names, "io_U.npy "), "long prefix wrote: %s", names);
    }
    /* a directory that does not exist: said at once, before the computation */
    {
        double t0 = now();
        snprintf(args, sizeof args, "rsvd --backend cpu --m 3000 --n 3000 --rank 200 --output "
                 "%s/nodir/x", dir);
        st = tu_run(args, buf, sizeof buf);
        double t = now() - t0;
        CHECK_MSG(st == 1 && strstr(buf, "nodir"), "no directory: exit %d: %s", st, buf);
        CHECK_MSG(t < 2.0, "the missing directory was found after %.1f s", t);
    }
    /* success: the three files and nothing else (no temporary names left) */
    snprintf(args, sizeof args, "rsvd --backend cpu --rank 3 --input %s --output %s/r", in, dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    list_dir(dir, names, sizeof names);
    CHECK_MSG(!strcmp(names, "io_U.npy r_S.npy r_U.npy r_VT.npy "), "after rsvd: %s", names);
    struct stat s;
    snprintf(vt, sizeof vt, "%s/r_VT.npy", dir);
    CHECK(stat(vt, &s) == 0 && (s.st_mode & 0444) == 0444);
    /* gen too */
    snprintf(args, sizeof args, "gen --m 20 --n 10 --output %s/g.npy", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 0);
    snprintf(args, sizeof args, "gen --m 20 --n 10 --output %s/nodir/g.npy", dir);
    CHECK_EQ_INT(tu_run(args, buf, sizeof buf), 1);
    list_dir(dir, names, sizeof names);
    CHECK_MSG(!strcmp(names, "g.npy io_U.npy r_S.npy r_U.npy r_VT.npy "), "after gen: %s", names);
    tu_rm_dir(dir);
}

/* ------------------------------------------------------------ pipes, FIFOs */

TEST(cli3_pipe_input_stops_at_the_first_bad_byte) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[64], cmd[2048], st_file[256], in[256];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    snprintf(st_file, sizeof st_file, "%s/writer_status", dir);
    /* 300 MB of zeros, of random bytes, a valid header followed by far too
     * much data, a Matrix Market banner then zeros: the writer must be cut off
     * (SIGPIPE) because tcnla stopped reading and exited 1 */
    static const char *streams[] = {
        "head -c 300000000 /dev/zero",
        "head -c 300000000 /dev/urandom",
        "{ printf '\\223NUMPY\\001\\000\\166\\000'; printf \"{'descr': '<f4', 'fortran_order': "
        "True, 'shape': (4, 4), }%*s\\n\" 59 ''; head -c 300000000 /dev/zero; }",
        "{ printf '%%%%MatrixMarket matrix array real general\\n'; head -c 300000000 /dev/zero; }",
    };
    static const char *cmds[] = {"rsvd --rank 2 --oversampling 0 --input /dev/stdin --backend cpu",
                                 "lra --rank 1 --oversampling 0 --input /dev/stdin --backend cpu",
                                 "hosvd --ranks 2,2 --input /dev/stdin --backend cpu"};
    for (size_t k = 0; k < sizeof streams / sizeof streams[0]; k++)
        for (int c = 0; c < 3; c++) {
            if (c == 2 && k == 3) continue; /* hosvd reads .npy only */
            unlink(st_file);
            snprintf(cmd, sizeof cmd,
                     "{ %s; echo $? > %s; } | timeout 60 %s %s", streams[k],
                     st_file, tu_bin(), cmds[c]);
            double t0 = now();
            int st = sh(cmd);
            double t = now() - t0;
            char ws[32] = "";
            FILE *f = fopen(st_file, "r");
            if (f) {
                if (!fgets(ws, sizeof ws, f)) ws[0] = 0;
                fclose(f);
            }
            CHECK_MSG(st == 1, "stream %zu, %s: exit %d (%.1f s): %s", k, cmds[c], st, t, buf);
            CHECK_MSG(atoi(ws) != 0, "stream %zu, %s: the writer was read to its end (%s)", k,
                      cmds[c], ws);
            CHECK_MSG(strchr(buf, '\n') == buf + strlen(buf) - 1, "stream %zu: %s", k, buf);
        }
    /* valid files through a pipe */
    snprintf(in, sizeof in, "%s/a.npy", dir);
    REQUIRE(write_npy_val(in, 30, 20, 1, 2.0) == 0);
    snprintf(cmd, sizeof cmd, "cat %s | %s rsvd --backend cpu --rank 2 --input /dev/stdin", in,
             tu_bin());
    int st = sh(cmd);
    CHECK_MSG(st == 0, "npy through a pipe: exit %d: %s", st, buf);
    snprintf(cmd, sizeof cmd,
             "printf '%%%%%%%%MatrixMarket matrix coordinate real general\\n%%%% c\\n\\n5 4 2\\n1 1 "
             "1.5\\n5 4 -2\\n' | %s lra --backend cpu --rank 1 --oversampling 0 --no-refine "
             "--input /dev/stdin", tu_bin());
    st = sh(cmd);
    CHECK_MSG(st == 0, "mtx through a pipe: exit %d: %s", st, buf);
    /* a truncated one: its message, and the trailing data case */
    snprintf(cmd, sizeof cmd, "head -c 300 %s | %s rsvd --backend cpu --rank 2 --input /dev/stdin",
             in, tu_bin());
    CHECK_MSG(sh(cmd) == 1 && strstr(buf, "truncated"), "truncated through a pipe: %s", buf);
    snprintf(cmd, sizeof cmd, "{ cat %s; echo x; } | %s rsvd --backend cpu --rank 2 --input "
             "/dev/stdin", in, tu_bin());
    CHECK_MSG(sh(cmd) == 1 && strstr(buf, "trailing data"), "trailing through a pipe: %s", buf);
    tu_rm_dir(dir);
}

TEST(cli3_fifo_without_writer_bounded_wait) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char dir[64], fifo[256], in[256], cmd[2048];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    snprintf(fifo, sizeof fifo, "%s/f.npy", dir);
    REQUIRE(mkfifo(fifo, 0600) == 0);
    double t0 = now();
    snprintf(cmd, sizeof cmd, "TCNLA_FIFO_WAIT=1 timeout 15 %s rsvd --backend cpu --rank 2 "
             "--input %s", tu_bin(), fifo);
    int st = sh(cmd);
    double t = now() - t0;
    CHECK_MSG(st == 1 && strstr(buf, "writer") && t < 10, "FIFO with no writer: exit %d after "
              "%.1f s: %s", st, t, buf);
    /* a writer that comes within the wait */
    snprintf(in, sizeof in, "%s/a.npy", dir);
    REQUIRE(write_npy_val(in, 30, 20, 0, 2.0) == 0);
    snprintf(cmd, sizeof cmd, "(sleep 1; cat %s > %s) & TCNLA_FIFO_WAIT=5 timeout 15 %s rsvd "
             "--backend cpu --rank 2 --input %s; st=$?; wait; exit $st", in, fifo, tu_bin(), fifo);
    st = sh(cmd);
    CHECK_MSG(st == 0, "FIFO with a late writer: exit %d: %s", st, buf);
    /* the wait is said in --help */
    CHECK_EQ_INT(tu_run("rsvd --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "FIFO") && strstr(buf, "10 s"));
    tu_rm_dir(dir);
}

/* ------------------------------------------------------------ gen, analyze */

/* The generator as it was: A = (C C^T) C through an m x m Gram matrix. */
extern void ssyrk_(const char *, const char *, const int *, const int *, const float *,
                   const float *, const int *, const float *, float *, const int *);
extern void sgemm_(const char *, const char *, const int *, const int *, const int *,
                   const float *, const float *, const int *, const float *, const int *,
                   const float *, float *, const int *);
static void cauchy_gram(int64_t m, int64_t n, uint64_t seed, float *A) {
    float *x = malloc(sizeof(float) * (size_t)(m + n)), *C = malloc(sizeof(float) * (size_t)(m * n));
    float *G = malloc(sizeof(float) * (size_t)(m * m)), *y = x + m;
    tcnla_rand_uniform(seed, 11, -1e-3f, 1e-3f, m, x);
    tcnla_rand_uniform(seed, 12, -1e-3f, 1e-3f, n, y);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            C[i + j * m] = (float)(1.0 / (fabs((double)x[i] - y[j]) + 1e-3));
    int im = (int)m, in = (int)n;
    const float one = 1.0f, zero = 0.0f;
    ssyrk_("U", "N", &im, &in, &one, C, &im, &zero, G, &im);
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = j + 1; i < m; i++) G[i + j * m] = G[j + i * m];
    sgemm_("N", "N", &im, &in, &im, &one, G, &im, C, &im, &zero, A, &im);
    free(x), free(C), free(G);
}

TEST(cli3_cauchy_without_m_by_m_same_values) {
    /* bit for bit the Gram generator's where that took at most 64 MiB or
     * m <= n; a rounding apart for the tall ones */
    static const int64_t shapes[][2] = {{5, 3}, {3, 5}, {40, 7}, {7, 40}, {64, 64}, {100, 1},
                                        {1, 9}, {300, 2}, {130, 129}, {4096, 3}, {5000, 3},
                                        {4500, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t m = shapes[s][0], n = shapes[s][1];
        float *A = malloc(sizeof(float) * (size_t)(m * n)), *R = malloc(sizeof(float) * (size_t)(m * n));
        cauchy_gram(m, n, 7, R);
        REQUIRE(tn_testmat_cauchy(m, n, 7, A, m) == 0);
        if (m <= 4096 || m <= n) {
            CHECK_MSG(!memcmp(A, R, sizeof(float) * (size_t)(m * n)), "%lld x %lld: not bitwise",
                      (long long)m, (long long)n);
        } else {
            double e = 0;
            for (int64_t k = 0; k < m * n; k++) e = fmax(e, fabs((double)A[k] - R[k]) / fabs(R[k]));
            CHECK_MSG(e < 1e-5, "%lld x %lld: largest relative difference %g", (long long)m,
                      (long long)n, e);
        }
        free(A), free(R);
    }
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    if (getenv("ASAN_OPTIONS")) SKIP("a sanitizer's binary reserves more address space");
    /* 20000 x 1 within 400 MB of address space (the m x m Gram matrix alone is 1.6 GB) */
    char dir[64], cmd[1024];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    snprintf(cmd, sizeof cmd, "ulimit -v 400000; OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 %s gen "
             "--kind cauchy --m 20000 --n 1 --output %s/c.npy", tu_bin(), dir);
    int st = sh(cmd);
    CHECK_MSG(st == 0, "gen cauchy 20000 x 1: exit %d: %s", st, buf);
    tu_rm_dir(dir);
}

TEST(cli3_analyze_samples_bounded) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "timeout 20 %s analyze formats --samples 100000000000", tu_bin());
    int st = sh(cmd);
    CHECK_MSG(st == 2 && strstr(buf, "--samples"), "--samples 1e11: exit %d: %s", st, buf);
    CHECK_EQ_INT(tu_run("analyze formats --format fp16 --samples 1000", buf, sizeof buf), 0);
    CHECK_EQ_INT(tu_run("analyze --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "--samples N"));
}

/* ------------------------------------------------------------ messages */

TEST(cli3_messages_name_the_problem) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    static const char *last[] = {"rsvd --backend cpu --bogus", "lra --backend cpu --bogus",
                                 "hosvd --backend cpu --bogus", "gen --output x.npy --bogus",
                                 "gemm --backend cpu --bogus", "analyze formats --bogus"};
    for (size_t k = 0; k < sizeof last / sizeof last[0]; k++) {
        int st = tu_run(last[k], buf, sizeof buf);
        CHECK_MSG(st == 2 && strstr(buf, "unknown option") && strstr(buf, "--bogus") &&
                      !strstr(buf, "needs a value"),
                  "'%s': exit %d: %s", last[k], st, buf);
    }
    CHECK_EQ_INT(tu_run("rsvd --backend cpu --rank", buf, sizeof buf), 2);
    CHECK(strstr(buf, "--rank needs a value"));
    /* conflicting options: which, and why */
    int st = tu_run("rsvd --backend cpu --m 64 --n 64 --rank 4 --random-format e4m3 --proj "
                    "shgemm_fp16", buf, sizeof buf);
    CHECK_MSG(st == 2 && strstr(buf, "--proj shgemm_fp16") && strstr(buf, "--random-format") &&
                  !strstr(buf, "invalid argument"),
              "exit %d: %s", st, buf);
    /* --m, --n, --spectrum with --input */
    char dir[64], p[256], args[8192];
    REQUIRE(tu_tmp_dir(dir, sizeof dir, "cli3"));
    snprintf(p, sizeof p, "%s/a.npy", dir);
    REQUIRE(write_npy_val(p, 30, 20, 0, 2.0) == 0);
    static const char *conflict[] = {"rsvd --m 10", "rsvd --n 10", "rsvd --spectrum poly",
                                     "lra --m 10", "lra --n 10", "lra --true-rank 3",
                                     "lra --noise 0.1"};
    for (size_t k = 0; k < sizeof conflict / sizeof conflict[0]; k++) {
        snprintf(args, sizeof args, "%s --backend cpu --rank 2 --input %s", conflict[k], p);
        st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 2 && strstr(buf, "--input"), "'%s --input': exit %d: %s", conflict[k], st,
                  buf);
    }
    /* a range failure in the power iterations names --power */
    {
        tn_matrix m = {40, 30, 1, 0, malloc(40 * 30 * 8)};
        for (int k = 0; k < 1200; k++) ((double *)m.data)[k] = 1e-12 * (1 + (k * 7) % 13);
        snprintf(p, sizeof p, "%s/small.npy", dir);
        REQUIRE(tn_io_write_npy(p, &m, 0u, NULL, 0) == 0);
        free(m.data);
        snprintf(args, sizeof args, "rsvd --backend cpu --rank 2 --proj native_fp32 --gemm "
                 "native_fp32 --power fp16 --power-iters 1 --no-baseline --input %s", p);
        st = tu_run(args, buf, sizeof buf);
        /* 0 where the drivers fall back on their own; a failure must name --power */
        CHECK_MSG(st == 0 || (st == 3 && strstr(buf, "--power fp16")), "exit %d: %s", st, buf);
    }
    /* a long path: the message keeps the reason */
    {
        size_t n = (size_t)snprintf(args, sizeof args, "rsvd --backend cpu --input %s/", dir);
        while (n < 3000) n += (size_t)snprintf(args + n, sizeof args - n, "d/");
        snprintf(args + n, sizeof args - n, "missing.npy");
        st = tu_run(args, buf, sizeof buf);
        CHECK_MSG(st == 1 && strstr(buf, "missing.npy") && strstr(buf, "No such file"),
                  "long path: exit %d: %.200s ... %s", st, buf,
                  strlen(buf) > 200 ? buf + strlen(buf) - 200 : buf);
    }
    tu_rm_dir(dir);
}

/* ------------------------------------------------------------ rsvd --power */

/* The value of "key" in one line of --json output (a string without its
 * quotes, or a number as printed); "" when absent. */
static void json_field(const char *s, const char *key, char *v, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(s, pat);
    v[0] = 0;
    if (!p) return;
    p += strlen(pat);
    if (*p == '"') p++;
    size_t i = 0;
    while (p[i] && p[i] != '"' && p[i] != ',' && p[i] != '}' && i + 1 < n) v[i] = p[i], i++;
    v[i] = 0;
}

/* tcnla rsvd's power iterations: --power shgemm_fp16 taken, shgemm_tf32
 * (and SHGEMM for --gemm) refused naming the option; the defaults' choice
 * from the data reported as it ran: "auto:fp16" on a slowly decaying
 * spectrum, "auto:shgemm_fp16" on a fast one (with --proj native_fp32, the
 * CPU's default, and fp16), and the run with --power set to what it says
 * gives the same residual (the probe columns beside the projection's do
 * not change it) where the other method does not. */
TEST(cli3_rsvd_power_reported_as_run) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    int st = tu_run("rsvd --backend cpu --m 64 --n 64 --rank 4 --power shgemm_tf32", buf,
                    sizeof buf);
    CHECK_MSG(st == 2 && strstr(buf, "--power shgemm_tf32") && !strstr(buf, "invalid argument"),
              "exit %d: %s", st, buf);
    st = tu_run("rsvd --backend cpu --m 64 --n 64 --rank 4 --gemm shgemm_fp16", buf, sizeof buf);
    CHECK_MSG(st == 2 && strstr(buf, "--gemm shgemm_fp16"), "exit %d: %s", st, buf);
    static const char *spec[2] = {"linear", "exp"}, *proj[2] = {"native_fp32", "fp16"};
    static const char *want[2] = {"fp16", "shgemm_fp16"};
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 2; j++) {
            char args[512], power[64], res[64], v[64];
            const char *base = "rsvd --backend cpu --m 96 --n 64 --rank 4 --gemm tcec_fp16 "
                               "--power-iters 1 --no-baseline --json";
            snprintf(args, sizeof args, "%s --spectrum %s --proj %s", base, spec[s], proj[j]);
            REQUIRE(tu_run(args, buf, sizeof buf) == 0);
            json_field(buf, "power", power, sizeof power);
            json_field(buf, "rel_residual", res, sizeof res);
            CHECK_MSG(!strncmp(power, "auto:", 5) && !strcmp(power + 5, want[s]),
                      "%s, --proj %s: power '%s', expected auto:%s", spec[s], proj[j], power,
                      want[s]);
            for (int o = 0; o < 2; o++) { /* the reported method, then the other one */
                snprintf(args, sizeof args, "%s --spectrum %s --proj %s --power %s", base,
                         spec[s], proj[j], want[o ? 1 - s : s]);
                REQUIRE(tu_run(args, buf, sizeof buf) == 0);
                json_field(buf, "power", power, sizeof power);
                CHECK(!strcmp(power, want[o ? 1 - s : s]));
                json_field(buf, "rel_residual", v, sizeof v);
                CHECK_MSG(o ? strcmp(v, res) != 0 : strcmp(v, res) == 0,
                          "%s, --proj %s, --power %s: residual %s, defaults' %s", spec[s],
                          proj[j], power, v, res);
            }
        }
}

/* tcnla rsvd --pass-efficient: refused without power iterations (naming
 * the options, exit 2); with them reported ("pass_efficient": 1 in --json,
 * the text run says so, its last product named) and between the residuals
 * of Q - 1 and Q iterations of the default on the same generated matrix
 * and seed; over two ranks (--ranks 2) reported the same way. */
TEST(cli3_rsvd_pass_efficient) {
    if (!tu_have_bin()) SKIP("build/tcnla not built");
    int st = tu_run("rsvd --backend cpu --m 64 --n 64 --rank 4 --pass-efficient --power-iters 0",
                    buf, sizeof buf);
    CHECK_MSG(st == 2 && strstr(buf, "--pass-efficient") && strstr(buf, "--power-iters"),
              "exit %d: %s", st, buf);
    const char *base = "rsvd --backend cpu --m 160 --n 128 --rank 8 --oversampling 2 "
                       "--spectrum poly --no-baseline";
    char args[512], v[64];
    double res[3];
    for (int r = 0; r < 3; r++) { /* q = 1, pass-efficient q = 2, q = 2 */
        snprintf(args, sizeof args, "%s --json --power-iters %d%s", base, r ? 2 : 1,
                 r == 1 ? " --pass-efficient" : "");
        REQUIRE(tu_run(args, buf, sizeof buf) == 0);
        json_field(buf, "pass_efficient", v, sizeof v);
        CHECK_MSG(!strcmp(v, r == 1 ? "1" : "0"), "run %d: pass_efficient '%s'", r, v);
        json_field(buf, "rel_residual", v, sizeof v);
        res[r] = atof(v);
    }
    printf("    residual q = 1 %.6e, pass-efficient q = 2 %.6e, q = 2 %.6e\n", res[0], res[1],
           res[2]);
    CHECK(res[1] <= res[0] * (1 + 1e-6) && res[1] >= res[2] * (1 - 1e-6));
    snprintf(args, sizeof args, "%s --power-iters 2 --pass-efficient", base);
    REQUIRE(tu_run(args, buf, sizeof buf) == 0);
    CHECK_MSG(strstr(buf, "pass-efficient: 2q + 1 passes") && strstr(buf, "the last A Z"), "%s",
              buf);
    REQUIRE(tu_run("rsvd --backend cpu --ranks 2 --m 160 --n 128 --rank 8 --oversampling 2 "
                   "--power-iters 2 --pass-efficient --json", buf, sizeof buf) == 0);
    json_field(buf, "pass_efficient", v, sizeof v);
    CHECK_MSG(!strcmp(v, "1"), "--ranks 2: pass_efficient '%s'", v);
}
