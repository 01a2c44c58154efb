/* A minimal test harness: TEST(name) { ... CHECK(cond); ... }.
 * Tests register themselves at load time; tests/runner.c runs them and
 * prints "N passed, N failed, N skipped" as its last line. */
#ifndef TCNLA_TEST_H
#define TCNLA_TEST_H
#include <stdio.h>
#include <math.h>

typedef void (*tt_fn)(void);
void tt_register(const char *name, const char *file, tt_fn fn);
void tt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tt_skip(const char *why);
int tt_failed_now(void);

#define TEST(name)                                                                     \
    static void name(void);                                                            \
    __attribute__((constructor)) static void name##_register(void) {                   \
        tt_register(#name, __FILE__, name);                                            \
    }                                                                                  \
    static void name(void)

/* Records a failure and continues. */
#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) tt_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                  \
    } while (0)
#define CHECK_MSG(cond, ...)                                                           \
    do {                                                                               \
        if (!(cond)) tt_fail(__FILE__, __LINE__, __VA_ARGS__);                         \
    } while (0)
/* Records a failure and leaves the test. */
#define REQUIRE(cond)                                                                  \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            tt_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond);                         \
            return;                                                                    \
        }                                                                              \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                             \
    do {                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                            \
        if (a_ != b_) tt_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld",   \
                              #a, a_, #b, b_);                                         \
    } while (0)
#define SKIP(why)                                                                      \
    do {                                                                               \
        tt_skip(why);                                                                  \
        return;                                                                        \
    } while (0)
#endif
