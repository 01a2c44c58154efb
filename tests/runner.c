/* Runs every registered test (or those whose name contains argv[1]) and
 * ends with the line "N passed, N failed, N skipped". Exit status 1 when
 * any test failed. */
#include "test.h"
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

int main(int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    const char *filter = argc > 1 ? argv[1] : NULL;
    qsort(cases, (size_t)ncases, sizeof *cases, by_file_then_order);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < ncases; i++) {
        if (filter && !strstr(cases[i].name, filter)) continue;
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
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
