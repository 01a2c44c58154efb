/* The folder dependencies of src/ (scripts/check_layers.sh): no include
 * cycle between its top-level folders, and core/ including only core/. */
#include "test.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(layers_no_include_cycle) {
    if (access("scripts/check_layers.sh", R_OK) != 0 || access("src/core/internal.h", R_OK) != 0)
        SKIP("not run from the source tree");
    char out[16384];
    FILE *p = popen("bash scripts/check_layers.sh -q 2>&1", "r");
    REQUIRE(p != NULL);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    const int st = pclose(p);
    const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    CHECK_MSG(rc == 0, "scripts/check_layers.sh exited %d:\n%s", rc, out);
}
