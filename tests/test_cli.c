/* The tcnla command, run as a user would: help, exit statuses, output. */
#include "test.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char buf[1 << 16];

TEST(cli_help_and_usage) {
    FILE *f = fopen(tu_bin(), "rb");
    if (!f) SKIP("build/tcnla not built");
    fclose(f);
    CHECK_EQ_INT(tu_run("--help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "gemm") && strstr(buf, "info"));
    CHECK_EQ_INT(tu_run("gemm --help", buf, sizeof buf), 0);
    CHECK(strstr(buf, "--method") && strstr(buf, "[tcec_fp16]"));
    CHECK_EQ_INT(tu_run("info --help", buf, sizeof buf), 0);
    CHECK_EQ_INT(tu_run("", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("frobnicate", buf, sizeof buf), 2);
    CHECK(strstr(buf, "unknown command"));
}

TEST(cli_bad_options_exit_2) {
    FILE *f = fopen(tu_bin(), "rb");
    if (!f) SKIP("build/tcnla not built");
    fclose(f);
    CHECK_EQ_INT(tu_run("gemm --m -3", buf, sizeof buf), 2);
    CHECK(strstr(buf, "--m"));
    CHECK_EQ_INT(tu_run("gemm --method tcec_fp17", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --dist exp_rand:5:1", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --k", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("gemm --bogus", buf, sizeof buf), 2);
    CHECK_EQ_INT(tu_run("info --backend tpu", buf, sizeof buf), 2);
}

TEST(cli_info_and_gemm_run) {
    FILE *f = fopen(tu_bin(), "rb");
    if (!f) SKIP("build/tcnla not built");
    fclose(f);
    CHECK_EQ_INT(tu_run("info --backend cpu", buf, sizeof buf), 0);
    CHECK(strstr(buf, "tcnla ") && strstr(buf, "cpu backend"));
    CHECK_EQ_INT(tu_run("info --json --backend cpu", buf, sizeof buf), 0);
    CHECK(buf[0] == '{' && strstr(buf, "\"backend\":\"cpu\""));
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method tcec_tf32 --m 32 --n 24 --k 256 --json", buf,
                     sizeof buf), 0);
    char *p = strstr(buf, "\"rel_err\":");
    REQUIRE(p != NULL);
    double e = atof(p + 10);
    CHECK_MSG(e > 0 && e < 1e-6, "rel_err %g", e);
    CHECK(strstr(buf, "\"computed_with\":\"tcec_tf32\""));
}

TEST(cli_range_problem_exit_3_and_fallback) {
    FILE *f = fopen(tu_bin(), "rb");
    if (!f) SKIP("build/tcnla not built");
    fclose(f);
    /* exact scaling: computed in TCEC_FP16, and said so */
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method tcec_fp16 --m 8 --n 8 --k 64 "
                     "--dist exp_rand:-45:-35", buf, sizeof buf), 0);
    CHECK(strstr(buf, "exact scaling") && !strstr(buf, "computed with"));
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method tcec_fp16 --m 32 --n 32 --k 1024 "
                     "--vector-scale 40 --json", buf, sizeof buf), 0);
    CHECK(strstr(buf, "\"exact_scaling\":1") && tu_jnum(buf, "ratio") <= 1.0);
    /* without it (TCNLA_EXACT_SCALING=0): exit 3, or the fallback */
    setenv("TCNLA_EXACT_SCALING", "0", 1);
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method tcec_fp16 --m 8 --n 8 --k 64 "
                     "--dist exp_rand:-45:-35", buf, sizeof buf), 3);
    CHECK(strstr(buf, "range"));
    CHECK_EQ_INT(tu_run("gemm --backend cpu --method tcec_fp16 --m 8 --n 8 --k 64 "
                     "--dist exp_rand:-45:-35 --range-fallback", buf, sizeof buf), 0);
    CHECK(strstr(buf, "computed with tcec_tf32"));
    unsetenv("TCNLA_EXACT_SCALING");
}
