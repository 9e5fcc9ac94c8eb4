/* C tests of the C ABI (include/evring/evring.h), compiled as C11 and linked
 * against libevring.so alone: they prove the exported ABI is enough.
 * Each test is a function; a failed CHECK prints the line and the handle's
 * message and fails the run. Rings live under /dev/shm (tmpfs) with this
 * process's pid in their names and are removed by their writers. */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"


static const char* kSchema =
    "content_type = 4660\n"
    "content_name = \"ctest\"\n"
    "[[event]]\n"
    "number = 7\n"
    "name = \"TICK\"\n"
    "description = \"a tick\"\n"
    "fields = [ { name = \"count\", type = \"u64\" }, { name = \"price\", type = \"u32\" },\n"
    "           { name = \"pad\", type = \"u32\" } ]\n";

static void ring_path(char* out, size_t size, const char* what) {
    snprintf(out, size, "/dev/shm/evring-ctest-%ld-%s", (long)getpid(), what);
}

static evring_writer* small_writer(const char* what, const char* schema_text) {
    char path[256];
    ring_path(path, sizeof path, what);
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6; /* 64 descriptors */
    o.payload_shift = 16;
    o.schema_text = schema_text;
    return evring_writer_create(&o);
}

/* The version this program was built with is the library's (meson checks the
 * header against the project version); evring_version says it at run time. */
static void test_versions_agree_at_compile_and_run_time(void) {
    char built[32];
    snprintf(built, sizeof built, "%d.%d.%d", EVRING_VERSION_MAJOR, EVRING_VERSION_MINOR, EVRING_VERSION_PATCH);
    CHECK(strcmp(evring_version(), built) == 0);
    CHECK(evring_version_number() == EVRING_VERSION_NUMBER);
    CHECK(EVRING_ABI_VERSION >= 2);
}

/* The struct_size rule (evring.h, "How the ABI grows"): a struct that was
 * never initialised is refused by name; a newer caller's larger struct gets
 * the fields the library knows and says how many bytes it filled; options of
 * the layout before ABI 2 still open, with the fields they lack defaulted. */
static void test_structs_carry_their_size_and_the_library_honours_it(void) {
    evring_writer* w = small_writer("sizes", NULL);
    CHECK(w != NULL);
    CHECK(evring_writer_record(w, 3, "abcd", 4, NULL, NULL) == EVRING_OK);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);

    evring_counters zero;
    memset(&zero, 0, sizeof zero);
    CHECK(evring_source_get_counters(s, &zero) == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "evring_counters.struct_size is 0") != NULL);
    evring_item unset;
    memset(&unset, 0, sizeof unset);
    CHECK(evring_source_next(s, &unset, 0) == EVRING_STEP_FAILED);
    CHECK(strstr(evring_source_error(s), "evring_item.struct_size") != NULL);
    evring_reservation r;
    memset(&r, 0, sizeof r);
    CHECK(evring_writer_reserve(w, 8, &r) == EVRING_E_INVALID);
    CHECK(strstr(evring_writer_error(w), "evring_reservation.struct_size") != NULL);

    /* A caller whose header has 8 more bytes of counters: the library's part is
       filled, struct_size says how much, the tail is the caller's. */
    struct {
        evring_counters known;
        uint64_t newer;
    } bigger;
    memset(&bigger, 0xee, sizeof bigger);
    bigger.known.struct_size = (uint32_t)sizeof bigger;
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT && item.payload_size == 4);
    CHECK(item.struct_size == sizeof item && item.member == 0);
    CHECK(evring_source_get_counters(s, &bigger.known) == EVRING_OK);
    CHECK(bigger.known.struct_size == sizeof(evring_counters) && bigger.known.events == 1);
    CHECK(bigger.newer == 0xeeeeeeeeeeeeeeeeull);
    evring_source_close(s);

    /* Open options as 0.1.0's header laid them out: they end before register_reader. */
    evring_open_options old;
    evring_open_options_init(&old);
    CHECK(old.register_reader == 1);
    old.struct_size = (uint32_t)offsetof(evring_open_options, register_reader);
    old.register_reader = 0; /* beyond the old struct: not read, the default (register) holds */
    s = evring_source_open(evring_writer_path(w), &old);
    CHECK(s != NULL);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.registered == 1);
    evring_source_close(s);
    old.struct_size = 4;
    CHECK(evring_source_open(evring_writer_path(w), &old) == NULL);
    CHECK(strstr(evring_last_error(), "evring_open_options_init") != NULL);
    evring_writer_close(w);
}

static void test_open_of_missing_file_fails_with_its_name(void) {
    evring_source* s = evring_source_open("/dev/shm/evring-ctest-no-such-ring", NULL);
    CHECK(s == NULL);
    CHECK(strstr(evring_last_error(), "evring-ctest-no-such-ring") != NULL);
    CHECK(evring_source_open(NULL, NULL) == NULL);
    CHECK(strlen(evring_last_error()) > 0);
}

static void test_waiting_for_a_name_ends_at_its_time_or_at_once_when_it_exists(void) {
    CHECK(evring_wait_for_name("/dev/shm/evring-ctest-never-created", 50000000) == 0); /* 50 ms */
    CHECK(evring_wait_for_name(NULL, 0) == EVRING_E_INVALID);
    evring_writer* w = small_writer("waited", NULL);
    CHECK(w != NULL);
    CHECK(evring_wait_for_name(evring_writer_path(w), 0) == 1);
    evring_writer_close(w);
}

static void test_bad_writer_options_are_refused_with_a_reason(void) {
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = "/dev/shm/evring-ctest-bad";
    o.descriptor_shift = 3;
    CHECK(evring_writer_create(&o) == NULL);
    CHECK(strstr(evring_last_error(), "shift") != NULL);
    memset(&o, 0, sizeof o); /* not initialised */
    CHECK(evring_writer_create(&o) == NULL);
    CHECK(strstr(evring_last_error(), "evring_writer_options_init") != NULL);
}

static void test_written_events_read_back_in_order_with_payloads(void) {
    evring_writer* w = small_writer("order", NULL);
    CHECK(w != NULL);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    for (uint64_t i = 1; i <= 10; ++i) {
        uint64_t flow[4] = {i, 0, 0, 99};
        uint64_t seqno = 0;
        CHECK(evring_writer_record(w, 3, &i, sizeof i, flow, &seqno) == EVRING_OK);
        CHECK(seqno == i);
    }
    evring_item item = {.struct_size = sizeof item};
    for (uint64_t i = 1; i <= 10; ++i) {
        CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT);
        CHECK(item.event.seqno == i && item.event.event_type == 3 && item.event.content_ext[0] == i);
        CHECK(item.event.content_ext[3] == 99);
        CHECK(item.payload_state == EVRING_PAYLOAD_OK && item.payload_size == sizeof(uint64_t));
        uint64_t value;
        memcpy(&value, item.payload, sizeof value);
        CHECK(value == i);
        /* zero-copy: peek, then check it was intact */
        const void* p = evring_source_payload_peek(s, &item.event);
        CHECK(p != NULL && memcmp(p, &value, sizeof value) == 0);
        CHECK(evring_source_payload_valid(s, &item.event) == 1);
        char small[4];
        CHECK(evring_source_payload_copy(s, &item.event, small, sizeof small) == EVRING_E_TOO_SMALL);
        uint64_t copied = 0;
        CHECK(evring_source_payload_copy(s, &item.event, &copied, sizeof copied) == EVRING_OK && copied == i);
    }
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_NOT_READY);
    evring_source_wait(s, 1000000); /* 1 ms: returns with nothing to read */
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_NOT_READY);
    evring_counters c = {.struct_size = sizeof c};
    CHECK(evring_source_get_counters(s, &c) == EVRING_OK && c.events == 10 && c.lost == 0);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK);
    CHECK(info.kind == EVRING_KIND_RING && info.live == 1 && info.descriptor_capacity == 64);
    CHECK(strcmp(info.path, evring_writer_path(w)) == 0);
    evring_source_close(s);
    evring_writer_close(w);
}

static void test_reservations_commit_and_abort(void) {
    evring_writer* w = small_writer("reserve", NULL);
    CHECK(w != NULL);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    evring_reservation r = {.struct_size = sizeof r};
    CHECK(evring_writer_reserve(w, 24, &r) == EVRING_OK);
    CHECK(r.seqno == 1 && r.payload_size == 24 && ((uintptr_t)r.payload % 16) == 0);
    memset(r.payload, 0xab, 24);
    r.event_type = 9;
    r.content_ext[1] = 5;
    evring_reservation copy = r; /* the struct may be copied before committing */
    CHECK(evring_writer_commit(w, &copy) == EVRING_OK);
    CHECK(evring_writer_commit(w, &copy) == EVRING_E_INVALID); /* only once */
    CHECK(evring_writer_reserve(w, 8, &r) == EVRING_OK);
    CHECK(evring_writer_abort(w, &r) == EVRING_OK);
    CHECK(evring_writer_reserve(w, evring_writer_max_payload(w) + 1, &r) == EVRING_E_TOO_LARGE);
    CHECK(strstr(evring_writer_error(w), "larger than this ring allows") != NULL);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT);
    CHECK(item.event.event_type == 9 && item.event.content_ext[1] == 5 && item.payload_size == 24);
    CHECK(((const unsigned char*)item.payload)[23] == 0xab);
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT);
    CHECK(item.event.event_type == 1); /* RECORD_ERROR in the aborted event's place */
    evring_source_close(s);
    evring_writer_close(w);
}

static void test_batches_count_exactly_what_a_lapped_reader_lost(void) {
    evring_writer* w = small_writer("lapped", NULL);
    CHECK(w != NULL);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    for (uint64_t i = 1; i <= 200; ++i) CHECK(evring_writer_record(w, 2, &i, sizeof i, NULL, NULL) == EVRING_OK);
    evring_descriptor out[300];
    evring_batch batch = {.struct_size = sizeof batch};
    CHECK(evring_source_next_batch(s, out, 300, &batch) == EVRING_OK);
    CHECK(batch.stopped == EVRING_STEP_NOT_READY);
    CHECK(batch.events > 0 && batch.events <= 64);
    CHECK(batch.skipped == 200 - batch.events && batch.gaps == 1);
    CHECK(out[batch.events - 1].seqno == 200);
    for (size_t i = 1; i < batch.events; ++i) CHECK(out[i].seqno == out[i - 1].seqno + 1);
    evring_counters c = {.struct_size = sizeof c};
    CHECK(evring_source_get_counters(s, &c) == EVRING_OK);
    CHECK(c.lost == 200 - batch.events && c.gaps == 1 && c.events == batch.events);
    /* a full array stops with EVENT */
    CHECK(evring_source_seek_seqno(s, 190) == EVRING_OK);
    CHECK(evring_source_next_batch(s, out, 4, &batch) == EVRING_OK);
    CHECK(batch.events == 4 && batch.stopped == EVRING_STEP_EVENT && out[0].seqno == 190);
    CHECK(evring_source_seek_latest(s) == EVRING_OK && evring_source_next_seqno(s) == 200);
    /* The names before 0.1.0's still work for one release (deprecated: the compiler warns). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(evring_source_oldest(s) == EVRING_OK && evring_source_next_seqno(s) == 200 - 63);
    CHECK(evring_source_reset(s) == EVRING_OK && evring_source_next_seqno(s) == 200);
#pragma GCC diagnostic pop
    CHECK(evring_source_seek(s, "-3") == EVRING_OK && evring_source_next_seqno(s) == 198);
    CHECK(evring_source_seek(s, "sometime") != EVRING_OK);
    CHECK(strstr(evring_source_error(s), "sometime") != NULL);
    CHECK(evring_source_seek(s, "5") == EVRING_OK); /* overwritten: starts at the oldest, says so */
    CHECK(strlen(evring_source_notice(s)) > 0);
    evring_source_close(s);
    evring_writer_close(w);
}

static void test_schema_is_embedded_and_decodes_to_json(void) {
    evring_writer* w = small_writer("schema", kSchema);
    CHECK(w != NULL);
    struct {
        uint64_t count;
        uint32_t price;
        uint32_t pad;
    } tick = {42, 1234, 0};
    CHECK(evring_writer_record(w, 7, &tick, sizeof tick, NULL, NULL) == EVRING_OK);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    CHECK(strcmp(evring_source_schema_origin(s), "embedded") == 0);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.content_type == 4660);
    size_t needed = 0;
    CHECK(evring_source_schema_json(s, NULL, 0, &needed) == EVRING_E_TOO_SMALL && needed > 1);
    char* json = malloc(needed);
    CHECK(json != NULL);
    CHECK(evring_source_schema_json(s, json, needed, &needed) == EVRING_OK);
    CHECK(strstr(json, "\"TICK\"") != NULL);
    free(json);
    CHECK(strcmp(evring_source_type_name(s, 7), "TICK") == 0);
    CHECK(evring_source_type_name(s, 8) == NULL);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT);
    char fields[256];
    CHECK(evring_source_decode_json(s, item.event.event_type, item.payload, item.payload_size, fields,
                                    sizeof fields, &needed) == EVRING_OK);
    CHECK(strcmp(fields, "{\"count\":42,\"price\":1234,\"pad\":0}") == 0);
    CHECK(evring_source_decode_json(s, 7, item.payload, 3, fields, sizeof fields, &needed) == EVRING_E_DECODE);
    CHECK(strstr(evring_source_error(s), "size") != NULL);
    evring_source_close(s);
    evring_writer_close(w);
}

/* With a schema, evring_writer_record is the checked write; reserve/commit
 * is raw unless the writer asked for check_raw. */
static void test_schema_writes_refuse_what_the_schema_rules_out(void) {
    evring_writer* w = small_writer("checked", kSchema);
    CHECK(w != NULL);
    const char five[5] = {0};
    uint64_t seqno = 7;
    CHECK(evring_writer_record(w, 7, five, sizeof five, NULL, &seqno) == EVRING_E_DECODE);
    CHECK(seqno == 0);
    CHECK(strstr(evring_writer_error(w), "TICK") != NULL);
    CHECK(strstr(evring_writer_error(w), "5 bytes") != NULL);
    CHECK(strstr(evring_writer_error(w), "exactly 16 bytes") != NULL);
    const char sixteen[16] = {0};
    CHECK(evring_writer_record(w, 99, sixteen, sizeof sixteen, NULL, NULL) == EVRING_E_DECODE);
    CHECK(strstr(evring_writer_error(w), "event type 99") != NULL);
    CHECK(strstr(evring_writer_error(w), "7 TICK") != NULL);
    CHECK(evring_writer_record(w, 7, sixteen, sizeof sixteen, NULL, &seqno) == EVRING_OK && seqno == 1);
    evring_reservation r = {.struct_size = sizeof r};
    CHECK(evring_writer_reserve(w, 5, &r) == EVRING_OK);
    r.event_type = 7;
    CHECK(evring_writer_commit(w, &r) == EVRING_OK); /* raw: unchecked */
    evring_writer_close(w);

    char path[256];
    ring_path(path, sizeof path, "checkraw");
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    o.schema_text = kSchema;
    o.check_raw = 1;
    w = evring_writer_create(&o);
    CHECK(w != NULL);
    CHECK(evring_writer_reserve(w, 5, &r) == EVRING_OK);
    r.event_type = 7;
    CHECK(evring_writer_commit(w, &r) == EVRING_E_DECODE);
    CHECK(strstr(evring_writer_error(w), "RECORD_ERROR was recorded instead") != NULL);
    CHECK(evring_writer_commit(w, &r) == EVRING_E_INVALID); /* the reservation ended */
    CHECK(evring_writer_reserve(w, 16, &r) == EVRING_OK);
    r.event_type = 7;
    CHECK(evring_writer_commit(w, &r) == EVRING_OK);
    evring_writer_close(w);
}

static void test_a_source_without_schema_says_so(void) {
    evring_writer* w = small_writer("noschema", NULL);
    CHECK(w != NULL);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL);
    size_t needed = 0;
    CHECK(evring_source_schema_json(s, NULL, 0, &needed) == EVRING_E_NO_SCHEMA);
    CHECK(strstr(evring_source_error(s), "no schema") != NULL);
    CHECK(evring_source_decode_json(s, 1, NULL, 0, NULL, 0, &needed) == EVRING_E_NO_SCHEMA);
    evring_source_close(s);
    evring_writer_close(w);
}

/* A real execution ring: every event decodes with the built-in schema. */
static void test_real_snapshot_reads_and_decodes(void) {
    const char* dir = getenv("EVRING_CONFORMANCE_DIR");
    if (dir == NULL) {
        printf("SKIP test_real_snapshot_reads_and_decodes: EVRING_CONFORMANCE_DIR is not set\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/emn-1b-15m.snapshot.zst", dir);
    evring_source* s = evring_source_open(path, NULL);
    CHECK(s != NULL);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.kind == EVRING_KIND_SNAPSHOT);
    CHECK(strncmp(evring_source_schema_origin(s), "built-in", 8) == 0);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    static char fields[1 << 20];
    uint64_t events = 0;
    evring_item item = {.struct_size = sizeof item};
    int step;
    while ((step = evring_source_next(s, &item, EVRING_READ_PAYLOAD)) == EVRING_STEP_EVENT ||
           step == EVRING_STEP_GAP || step == EVRING_STEP_NOTICE) {
        if (step != EVRING_STEP_EVENT) continue;
        size_t needed = 0;
        CHECK(evring_source_type_name(s, item.event.event_type) != NULL);
        CHECK(evring_source_decode_json(s, item.event.event_type, item.payload, item.payload_size, fields,
                                        sizeof fields, &needed) == EVRING_OK);
        ++events;
    }
    CHECK(step == EVRING_STEP_END);
    CHECK(events > 1000);
    evring_source_close(s);

    /* A span position and a filter expression, through the source's schema: block 15000001's start,
       then only the 229 transaction headers (counted by `evring stats` on this snapshot). */
    s = evring_source_open(path, NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek(s, "block:15000001") == EVRING_OK);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.seqno == 1 && item.event.event_type == 2);
    CHECK(evring_source_seek(s, "block:12") != EVRING_OK && strstr(evring_source_error(s), "no block 12") != NULL);
    CHECK(evring_source_set_where(s, "type == TXN_HEADR_START") == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "nearest: TXN_HEADER_START") != NULL);
    CHECK(strncmp(evring_source_error(s), "bad where 'type == TXN_HEADR_START': at ", 40) == 0);
    CHECK(evring_source_set_where(s, "type == TXN_HEADER_START && txn_header.gas_limit > 0") == EVRING_OK);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    uint64_t kept = 0;
    while ((step = evring_source_next(s, &item, 0)) == EVRING_STEP_EVENT) {
        CHECK(item.event.event_type == 10 && item.payload == NULL);
        ++kept;
    }
    CHECK(step == EVRING_STEP_END && kept == 229);
    evring_batch batch = {.struct_size = sizeof batch};
    evring_descriptor d[4];
    CHECK(evring_source_next_batch(s, d, 4, &batch) == EVRING_E_INVALID);
    CHECK(evring_source_set_where(s, NULL) == EVRING_OK);
    evring_source_close(s);
}

/* `block == N` compares by the block's label, as the CLI's --where does: setting the filter does not
   move the reader, every event it keeps carries block 15000005's opener in its block tag (ext[0]),
   and it keeps exactly what the raw tag test `ext[0] == OPENER` keeps. */
static void test_where_compares_a_span_tag_by_its_label(void) {
    const char* dir = getenv("EVRING_CONFORMANCE_DIR");
    if (dir == NULL) {
        printf("SKIP test_where_compares_a_span_tag_by_its_label: EVRING_CONFORMANCE_DIR is not set\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/emn-30b-15m.snapshot.zst", dir);
    evring_source* s = evring_source_open(path, NULL);
    CHECK(s != NULL);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_seek(s, "block:15000005") == EVRING_OK);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.event_type == 2);
    const uint64_t opener = item.event.seqno;
    CHECK(evring_source_set_where(s, "block == 15000005") == EVRING_OK);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.seqno == opener + 1);
    uint64_t by_label = 1;
    int step;
    while ((step = evring_source_next(s, &item, 0)) == EVRING_STEP_EVENT) {
        CHECK(item.event.content_ext[0] == opener);
        ++by_label;
    }
    CHECK(step == EVRING_STEP_END && by_label > 100);
    char raw[64];
    snprintf(raw, sizeof raw, "ext[0] == %llu", (unsigned long long)opener);
    CHECK(evring_source_set_where(s, raw) == EVRING_OK);
    CHECK(evring_source_seek(s, "block:15000005") == EVRING_OK);
    uint64_t by_tag = 0;
    while ((step = evring_source_next(s, &item, 0)) == EVRING_STEP_EVENT) ++by_tag;
    CHECK(step == EVRING_STEP_END && by_tag == by_label + 1);
    /* A label no event carries is refused, naming it; the filter set before stays. */
    CHECK(evring_source_set_where(s, "block == 12") == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "no block 12") != NULL);
    evring_source_close(s);
}

int main(void) {
    test_where_compares_a_span_tag_by_its_label();
    test_versions_agree_at_compile_and_run_time();
    test_structs_carry_their_size_and_the_library_honours_it();
    test_open_of_missing_file_fails_with_its_name();
    test_waiting_for_a_name_ends_at_its_time_or_at_once_when_it_exists();
    test_bad_writer_options_are_refused_with_a_reason();
    test_written_events_read_back_in_order_with_payloads();
    test_reservations_commit_and_abort();
    test_batches_count_exactly_what_a_lapped_reader_lost();
    test_schema_is_embedded_and_decodes_to_json();
    test_a_source_without_schema_says_so();
    test_schema_writes_refuse_what_the_schema_rules_out();
    test_real_snapshot_reads_and_decodes();
    return c_check_end("all C ABI tests passed");
}
