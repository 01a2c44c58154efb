/* libtcnla_cublas.so (interpose/, CUDA builds): its exports, its
 * dependencies, its policy from the environment, the API's bad input and
 * the hooks' pass-through statuses, by interpose/check_exports.sh (no GPU
 * needed). The build is the one whose command the tests run (TCNLA_BIN's
 * directory); nothing is rebuilt. */
#include "test.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(interpose_exports_policy_statuses) {
    if (access("interpose/check_exports.sh", R_OK) != 0) SKIP("not run from the source tree");
    if (!tu_have_bin()) SKIP("no tcnla command built");
    char build[4096], so[4200];
    snprintf(build, sizeof build, "%s", tu_bin());
    char *slash = strrchr(build, '/');
    if (slash) *slash = 0;
    else snprintf(build, sizeof build, ".");
    snprintf(so, sizeof so, "%s/libtcnla_cublas.so", build);
    if (access(so, R_OK) != 0) SKIP("no libtcnla_cublas.so in this build (CUDA=0)");
    char cmd[8192], out[16384];
    snprintf(cmd, sizeof cmd, "bash interpose/check_exports.sh '%s' 2>&1", build);
    FILE *p = popen(cmd, "r");
    REQUIRE(p != NULL);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    const int st = pclose(p);
    const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    CHECK_MSG(rc == 0, "interpose/check_exports.sh exited %d:\n%s", rc, out);
    CHECK_MSG(strstr(out, "check_exports: ok (20 exports") != NULL, "%s", out);
}
