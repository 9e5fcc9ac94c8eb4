/* tests/c/c_check.h: the checks the C tests share. CHECK counts a failure and
 * returns from the test function (each test is a void function); c_check_end
 * gives main's exit status and says how many checks failed. Plain C, so the C
 * tests stay free of C++ and of a test framework. */
#ifndef EVRING_TESTS_C_CHECK_H
#define EVRING_TESTS_C_CHECK_H

#include <stdio.h>

static int g_failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++g_failures;                                                            \
            return;                                                                  \
        }                                                                            \
    } while (0)

/* The exit status of a C test's main: 1 when any CHECK failed, else 0 after
 * printing `passed_line`. */
static inline int c_check_end(const char* passed_line) {
    if (g_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", g_failures);
        return 1;
    }
    printf("%s\n", passed_line);
    return 0;
}

#endif
