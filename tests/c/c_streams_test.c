/* NATS streams through the C ABI (docs/c-api.md): a libevring.so built with
 * libnats registers the nats:// scheme when it loads, so evring_source_open
 * tries the server a stream URL names instead of refusing the scheme. No
 * server is needed here: 127.0.0.1 port 1 answers nothing, and the failure
 * says so. Reading a relayed stream end to end is rust/tests/streams.rs's
 * (a server, `evring relay`, a reader of the stream). */
#include <stdio.h>
#include <string.h>

#include "evring/evring.h"
#include "c_check.h"

static void test_a_stream_url_is_opened_not_refused(void) {
    evring_source* s = evring_source_open("nats://127.0.0.1:1/DEMO", NULL);
    CHECK(s == NULL);
    CHECK(strstr(evring_last_error(), "reads no 'nats://' sources") == NULL);
    CHECK(strstr(evring_last_error(), "connecting to nats://127.0.0.1:1") != NULL);
}

int main(void) {
    test_a_stream_url_is_opened_not_refused();
    return c_check_end("all C stream tests passed");
}
