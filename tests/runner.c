/* Runs every registered test, or those whose name contains one of the
 * arguments, and ends with the line "N passed, N failed, N skipped".
 * Exit status 1 when any test failed, 2 when no test was run (no test
 * matches the filters, or none is registered).
 *
 * The tests' files go to one private directory made at start,
 * $TMPDIR/tcnla_tests_XXXXXX (TMPDIR unset, not a directory or holding
 * characters a shell would split on: /tmp), removed with everything in it at
 * the end; TMPDIR points there for the tests and the programs they start
 * (tests/util.c: tu_tmp_dir, tu_tmppath). */
#include "test.h"
#include "util.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *name, *file;
    tt_fn fn;
} tt_case;

static tt_case *cases;
static int ncases, capcases;
static int cur_failed, cur_skipped;

void tt_register(const char *name, const char *file, tt_fn fn) {
    if (ncases == capcases) {
        capcases = capcases ? 2 * capcases : 64;
        cases = realloc(cases, (size_t)capcases * sizeof *cases);
        if (!cases) abort();
    }
    cases[ncases].name = name;
    cases[ncases].file = file;
    cases[ncases].fn = fn;
    ncases++;
}

void tt_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    if (cur_failed < 8) {
        printf("    %s:%d: ", file, line);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    } else if (cur_failed == 8) {
        printf("    (further failures of this test not shown)\n");
    }
    cur_failed++;
}

void tt_skip(const char *why) {
    printf("    skipped: %s\n", why);
    cur_skipped = 1;
}

int tt_failed_now(void) { return cur_failed; }

static int by_file_then_order(const void *a, const void *b) {
    const tt_case *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    if (c) return c;
    return (x < y) ? -1 : (x > y);
}

static int selected(const char *name, int argc, char **argv) {
    if (argc < 2) return 1;
    for (int a = 1; a < argc; a++)
        if (strstr(name, argv[a])) return 1;
    return 0;
}

int main(int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    qsort(cases, (size_t)ncases, sizeof *cases, by_file_then_order);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!tu_tmp_root()) {
        printf("error: cannot make a private temporary directory\n");
        return 2;
    }
    for (int i = 0; i < ncases; i++) {
        if (!selected(cases[i].name, argc, argv)) continue;
        struct timespec t0, t1;
        cur_failed = 0;
        cur_skipped = 0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cases[i].fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        const char *tag = cur_failed ? "FAIL" : cur_skipped ? "SKIP" : "ok  ";
        printf("%s %-52s %7.2fs\n", tag, cases[i].name, s);
        if (cur_failed) failed++;
        else if (cur_skipped) skipped++;
        else passed++;
    }
    free(cases);
    tu_tmp_cleanup();
    if (passed + failed + skipped == 0) {
        if (argc > 1) {
            printf("error: no test name contains");
            for (int a = 1; a < argc; a++) printf(" '%s'%s", argv[a], a + 1 < argc ? " or" : "");
            printf("\n");
        } else {
            printf("error: no test is registered\n");
        }
        printf("0 passed, 0 failed, 0 skipped\n");
        return 2;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
