/* Messages of the C ABI echo what the caller gave, safely (issue 32, "Bad
 * input gets a clear error"): evring_last_error, evring_source_error and
 * evring_writer_error never hand out a control byte (a terminal escape
 * sequence in a ring name was echoed raw) or bytes that are not UTF-8, and
 * stay bounded whatever was given (lib/bindings/error_text.hpp), while still
 * naming the value and the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

/* lib/bindings/error_text.hpp's kMaxErrorBytes, plus the "left out" note. */
enum { kMaxMessage = 1024 + 64 };

static int is_safe(const char* message) {
    for (const unsigned char* p = (const unsigned char*)message; *p != 0; ++p)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return 1;
}

static void test_an_escape_sequence_in_a_name_is_echoed_escaped(void) {
    CHECK(evring_source_open("/dev/shm/evring-ctest-\x1b[31mred\x07", NULL) == NULL);
    const char* message = evring_last_error();
    CHECK(is_safe(message));
    CHECK(strstr(message, "evring-ctest-\\x1b[31mred\\x07") != NULL);
    CHECK(strstr(message, "No such file or directory") != NULL);

    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = "/dev/shm/no-such-dir-\x1b]0;title\x07/ring";
    CHECK(evring_writer_create(&o) == NULL);
    CHECK(is_safe(evring_last_error()));
    CHECK(strstr(evring_last_error(), "no-such-dir-\\x1b]0;title\\x07") != NULL);
}

static void test_bytes_that_are_not_utf8_are_echoed_as_hex(void) {
    CHECK(evring_source_open("/dev/shm/evring-ctest-\xff\xfe-latin1-\xe9", NULL) == NULL);
    CHECK(strstr(evring_last_error(), "evring-ctest-\\xff\\xfe-latin1-\\xe9") != NULL);
}

static void test_a_huge_value_is_cut_but_the_reason_stays(void) {
    const size_t n = 1 << 20; /* 1 MiB of ring name */
    char* name = malloc(n + 32);
    CHECK(name != NULL);
    strcpy(name, "/dev/shm/");
    memset(name + 9, 'n', n);
    name[9 + n] = 0;
    CHECK(evring_source_open(name, NULL) == NULL);
    const char* message = evring_last_error();
    CHECK(strlen(message) <= kMaxMessage);
    CHECK(strstr(message, "/dev/shm/nnnn") != NULL);      /* the value, from its start */
    CHECK(strstr(message, "bytes left out") != NULL);     /* said to be cut */
    CHECK(strstr(message, "File name too long") != NULL); /* and the reason, at the end */
    free(name);
}

static void test_a_source_message_is_escaped_and_bounded_too(void) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-ctest-%ld-escaped", (long)getpid());
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    evring_writer* w = evring_writer_create(&o);
    CHECK(w != NULL);
    evring_source* s = evring_source_open(path, NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek(s, "\x1b[2Jsometime") != EVRING_OK);
    CHECK(is_safe(evring_source_error(s)));
    CHECK(strstr(evring_source_error(s), "\\x1b[2Jsometime") != NULL);
    const size_t n = 200000;
    char* where = malloc(n + 1);
    CHECK(where != NULL);
    memset(where, '(', n);
    where[n] = 0;
    CHECK(evring_source_set_where(s, where) != EVRING_OK);
    CHECK(strlen(evring_source_error(s)) <= kMaxMessage);
    free(where);
    evring_source_close(s);
    evring_writer_close(w);
}

int main(void) {
    test_an_escape_sequence_in_a_name_is_echoed_escaped();
    test_bytes_that_are_not_utf8_are_echoed_as_hex();
    test_a_huge_value_is_cut_but_the_reason_stays();
    test_a_source_message_is_escaped_and_bounded_too();
    return c_check_end("all C error text tests passed");
}
