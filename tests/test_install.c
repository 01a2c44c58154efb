/* `make install` / `make uninstall` of this build into a temporary prefix
 * and a program built against the installed library with pkg-config
 * (tests/install_check.sh). The build is the one whose command the tests
 * run (TCNLA_BIN's directory); nothing is rebuilt. */
#include "test.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(install_uninstall_pkgconfig) {
    if (access("tests/install_check.sh", R_OK) != 0 || access("Makefile", R_OK) != 0)
        SKIP("not run from the source tree");
    if (!tu_have_bin()) SKIP("no tcnla command built");
    char build[4096];
    snprintf(build, sizeof build, "%s", tu_bin());
    char *slash = strrchr(build, '/');
    if (slash) *slash = 0;
    else snprintf(build, sizeof build, ".");
    char cmd[8192], out[16384];
    snprintf(cmd, sizeof cmd, "TCNLA_BUILD='%s' bash tests/install_check.sh 2>&1", build);
    FILE *p = popen(cmd, "r");
    REQUIRE(p != NULL);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    const int st = pclose(p);
    const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    CHECK_MSG(rc == 0, "tests/install_check.sh exited %d:\n%s", rc, out);
}
