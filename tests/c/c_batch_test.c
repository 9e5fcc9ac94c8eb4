/* evring_writer_record_batch from C (evring.h), linked against libevring.so
 * alone: events recorded in batches read back as evring_writer_record's
 * would, in order, each batch of up to 64 under one timestamp; the
 * struct_size rule for the array; with a schema, the checks of every event
 * before any is published, and interest; too large events recorded as
 * RECORD_ERRORs in their place. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

static const char* kSchema =
    "content_type = 902\n"
    "content_name = \"cbatch\"\n"
    "keywords = [\"trades\", \"quotes\"]\n"
    "[[event]]\nnumber = 2\nname = \"TRADE\"\nkeywords = [\"trades\"]\n"
    "fields = [ { name = \"price\", type = \"u64\" } ]\n"
    "[[event]]\nnumber = 3\nname = \"QUOTE\"\nkeywords = [\"quotes\"]\n"
    "fields = [ { name = \"price\", type = \"u64\" } ]\n";

static evring_writer* writer_of(const char* what, const char* schema_text, unsigned payload_shift) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-ctest-batch-%ld-%s", (long)getpid(), what);
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 10;
    o.payload_shift = payload_shift;
    o.schema_text = schema_text;
    return evring_writer_create(&o);
}

static evring_batch_event event_of(uint16_t type, const void* payload, uint64_t size, uint64_t flow0) {
    evring_batch_event e = {.struct_size = sizeof e, .event_type = type, .payload = payload, .payload_size = size};
    e.content_ext[0] = flow0;
    e.content_ext[3] = 77;
    return e;
}

static void test_a_batch_reads_back_in_order_one_timestamp_per_64_events(void) {
    evring_writer* w = writer_of("order", NULL, 16);
    CHECK(w != NULL);
    uint64_t values[100];
    evring_batch_event events[100];
    for (uint64_t i = 0; i < 100; ++i) {
        values[i] = 1000 + i;
        events[i] = event_of((uint16_t)(3 + i % 2), &values[i], sizeof values[i], i);
    }
    uint64_t seqnos[100];
    CHECK(evring_writer_record_batch(w, events, 100, seqnos) == EVRING_OK);
    for (uint64_t i = 0; i < 100; ++i) CHECK(seqnos[i] == i + 1);
    CHECK(evring_writer_record_batch(w, events, 0, NULL) == EVRING_OK); /* nothing to do */
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    evring_item item = {.struct_size = sizeof item};
    uint64_t first_time = 0;
    for (uint64_t i = 0; i < 100; ++i) {
        CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT);
        CHECK(item.event.seqno == i + 1 && item.event.event_type == 3 + i % 2);
        CHECK(item.event.content_ext[0] == i && item.event.content_ext[3] == 77);
        CHECK(item.payload_state == EVRING_PAYLOAD_OK && item.payload_size == 8);
        uint64_t value;
        memcpy(&value, item.payload, sizeof value);
        CHECK(value == 1000 + i);
        if (i == 0) first_time = item.event.record_epoch_nanos;
        if (i < 64) CHECK(item.event.record_epoch_nanos == first_time); /* one batch, one timestamp */
    }
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_NOT_READY);
    evring_source_close(s);
    evring_writer_close(w);
}

/* The array's element size is its elements' struct_size: 0 (never set) and
 * a mismatch are refused by name, with nothing published; a newer caller's
 * larger element works. */
static void test_the_struct_size_rule_holds_for_the_array(void) {
    evring_writer* w = writer_of("sizes", NULL, 16);
    CHECK(w != NULL);
    const uint64_t value = 5;
    evring_batch_event two[2] = {event_of(3, &value, 8, 0), event_of(3, &value, 8, 1)};
    two[0].struct_size = 0;
    CHECK(evring_writer_record_batch(w, two, 2, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_writer_error(w), "evring_batch_event.struct_size is 0") != NULL);
    two[0].struct_size = 0x7fffffff; /* garbage: never stepped by */
    CHECK(evring_writer_record_batch(w, two, 2, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_writer_error(w), "evring_batch_event.struct_size is 2147483647") != NULL);
    two[0].struct_size = sizeof two[0];
    two[1].struct_size = 64;
    CHECK(evring_writer_record_batch(w, two, 2, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_writer_error(w), "events[1].struct_size is 64") != NULL);
    two[1] = event_of(3, NULL, 8, 1);
    CHECK(evring_writer_record_batch(w, two, 2, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_writer_error(w), "events[1] has no payload") != NULL);
    uint64_t seqno = 0;
    CHECK(evring_writer_record(w, 3, &value, 8, NULL, &seqno) == EVRING_OK && seqno == 1); /* nothing before */

    struct newer { evring_batch_event event; uint64_t field_of_a_later_version; } bigger[3];
    for (int i = 0; i < 3; ++i) {
        bigger[i].event = event_of(3, &value, 8, (uint64_t)i);
        bigger[i].event.struct_size = sizeof bigger[i];
        bigger[i].field_of_a_later_version = 0xdead;
    }
    uint64_t seqnos[3];
    CHECK(evring_writer_record_batch(w, &bigger[0].event, 3, seqnos) == EVRING_OK);
    CHECK(seqnos[0] == 2 && seqnos[1] == 3 && seqnos[2] == 4);
    evring_writer_close(w);
}

/* With a schema every event is checked before any is published; then events
 * no registered reader wants are skipped. */
static void test_schema_checks_every_event_first_and_interest_skips(void) {
    evring_writer* w = writer_of("checked", kSchema, 16);
    CHECK(w != NULL);
    const uint64_t price = 9;
    const char five[5] = {0};
    evring_batch_event events[3] = {event_of(2, &price, 8, 0), event_of(3, &price, 8, 1), event_of(3, five, 5, 2)};
    uint64_t seqnos[3] = {7, 7, 7};
    CHECK(evring_writer_record_batch(w, events, 3, seqnos) == EVRING_E_DECODE);
    CHECK(strstr(evring_writer_error(w), "event 2 of the batch") != NULL);
    CHECK(strstr(evring_writer_error(w), "QUOTE") != NULL);
    CHECK(strstr(evring_writer_error(w), "nothing was published") != NULL);
    events[2] = event_of(3, &price, 8, 2);
    evring_open_options o;
    evring_open_options_init(&o);
    o.keywords = "quotes"; /* a registered reader that wants quotes only */
    evring_source* s = evring_source_open(evring_writer_path(w), &o);
    CHECK(s != NULL);
    CHECK(evring_writer_record_batch(w, events, 3, seqnos) == EVRING_OK);
    CHECK(seqnos[0] == 0 && seqnos[1] == 1 && seqnos[2] == 2); /* the TRADE skipped */
    evring_source_close(s);
    evring_writer_close(w);
}

static void test_too_large_events_are_record_errors_in_their_place(void) {
    evring_writer* w = writer_of("large", NULL, 12); /* 4 KiB: payloads of at most 3840 bytes */
    CHECK(w != NULL);
    static char big[5000];
    const uint64_t value = 1;
    evring_batch_event events[3] = {event_of(3, &value, 8, 0), event_of(4, big, sizeof big, 1), event_of(3, &value, 8, 2)};
    uint64_t seqnos[3];
    CHECK(evring_writer_record_batch(w, events, 3, seqnos) == EVRING_E_TOO_LARGE);
    CHECK(strstr(evring_writer_error(w), "event 1 of the batch") != NULL);
    CHECK(strstr(evring_writer_error(w), "RECORD_ERROR") != NULL);
    CHECK(seqnos[0] == 1 && seqnos[1] == 0 && seqnos[2] == 3);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.seqno == 1);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.seqno == 2);
    CHECK(item.event.event_type == 1); /* RECORD_ERROR */
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.seqno == 3);
    evring_source_close(s);
    evring_writer_close(w);
}

int main(void) {
    test_a_batch_reads_back_in_order_one_timestamp_per_64_events();
    test_the_struct_size_rule_holds_for_the_array();
    test_schema_checks_every_event_first_and_interest_skips();
    test_too_large_events_are_record_errors_in_their_place();
    return c_check_end("c_batch_test: all checks passed");
}
