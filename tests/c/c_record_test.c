/* evring_source_record (evring.h, "Recording"; issue 33 item 3): what a
 * source hands out, written into a recording by the library's one record
 * pipeline, read back through evring_source_open. Covers: a count from where
 * the source stands (and the source reading on after it), an until position,
 * a lapped reader's gap marker, a stop flag set before and by another thread,
 * re-recording a recording to its end, and the refusals. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

static char g_dir[64];
static int g_rings = 0;

/* A live ring (512 slots) in /dev/shm; the caller writes and closes it. */
static evring_writer* make_ring(char* name, size_t size) {
    snprintf(name, size, "/dev/shm/evring-ctest-%ld-record-%d", (long)getpid(), ++g_rings);
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = name;
    o.descriptor_shift = 9;
    o.payload_shift = 16;
    return evring_writer_create(&o);
}

/* Events first..last, each payload its seqno 8 times. */
static int write_events(evring_writer* w, uint64_t first, uint64_t last) {
    for (uint64_t i = first; i <= last; ++i) {
        uint64_t payload[8];
        for (int k = 0; k < 8; ++k) payload[k] = i;
        if (evring_writer_record(w, 3, payload, sizeof payload, NULL, NULL) != EVRING_OK) return 0;
    }
    return 1;
}

static void path_of(char* out, size_t size, const char* name) { snprintf(out, size, "%s/%s", g_dir, name); }

/* A recording read back: events (each payload checked against its seqno),
 * seqnos first..; lost sequence numbers in gap markers. */
typedef struct readback {
    uint64_t events, first, last, lost, gaps;
    int payloads_ok;
} readback;

static readback read_back(const char* path) {
    readback r = {0, 0, 0, 0, 0, 1};
    evring_source* s = evring_source_open(path, NULL);
    if (s == NULL) {
        r.payloads_ok = 0;
        return r;
    }
    evring_item item = {.struct_size = sizeof item};
    int step;
    while ((step = evring_source_next(s, &item, EVRING_READ_PAYLOAD)) != EVRING_STEP_END) {
        if (step == EVRING_STEP_FAILED || step == EVRING_STEP_NOT_READY) {
            r.payloads_ok = 0;
            break;
        }
        if (step == EVRING_STEP_GAP) {
            r.lost += item.gap_count;
            ++r.gaps;
        }
        if (step != EVRING_STEP_EVENT) continue;
        uint64_t value = 0;
        if (item.payload_size == 64) memcpy(&value, item.payload, sizeof value);
        if (value != item.event.seqno) r.payloads_ok = 0;
        if (r.events++ == 0) r.first = item.event.seqno;
        r.last = item.event.seqno;
    }
    evring_source_close(s);
    return r;
}

static uint64_t next_seqno_read(evring_source* s) {
    evring_item item = {.struct_size = sizeof item};
    for (;;) {
        const int step = evring_source_next(s, &item, EVRING_READ_DESCRIPTOR);
        if (step == EVRING_STEP_EVENT) return item.event.seqno;
        if (step != EVRING_STEP_NOTICE) return 0;
    }
}

static void test_count_from_where_the_source_stands(void) {
    char ring[128], out[128];
    evring_writer* w = make_ring(ring, sizeof ring);
    CHECK(w != NULL && write_events(w, 1, 400));
    evring_source* s = evring_source_open(ring, NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek(s, "101") == EVRING_OK);
    evring_record_options o;
    evring_record_options_init(&o);
    o.count = 250;
    o.threads = 3;
    evring_record_result r = {.struct_size = sizeof r};
    path_of(out, sizeof out, "count.evrec");
    CHECK(evring_source_record(s, out, &o, &r) == EVRING_OK);
    CHECK(r.ended == EVRING_RECORD_COUNT && r.events == 250 && r.lost == 0 && r.gaps == 0 && r.files == 1);
    CHECK(next_seqno_read(s) == 351); /* the source reads on after the recording */
    readback b = read_back(out);
    CHECK(b.payloads_ok && b.events == 250 && b.first == 101 && b.last == 350 && b.lost == 0);
    evring_source_close(s);
    evring_writer_close(w);
}

static void test_until_and_no_compression(void) {
    char ring[128], out[128];
    evring_writer* w = make_ring(ring, sizeof ring);
    CHECK(w != NULL && write_events(w, 1, 300));
    evring_source* s = evring_source_open(ring, NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    evring_record_options o;
    evring_record_options_init(&o);
    o.until = "120";
    o.compress = 0;
    evring_record_result r = {.struct_size = sizeof r};
    path_of(out, sizeof out, "until.evrec");
    CHECK(evring_source_record(s, out, &o, &r) == EVRING_OK);
    CHECK(r.ended == EVRING_RECORD_UNTIL && r.events == 120);
    readback b = read_back(out);
    CHECK(b.payloads_ok && b.events == 120 && b.first == 1 && b.last == 120);
    evring_source_close(s);
    evring_writer_close(w);
}

/* A reader lapped before it records: the recording says what it lost. */
static void test_a_lapped_reader_records_a_gap_marker(void) {
    char ring[128], out[128];
    evring_writer* w = make_ring(ring, sizeof ring);
    CHECK(w != NULL && write_events(w, 1, 10));
    evring_source* s = evring_source_open(ring, NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    CHECK(write_events(w, 11, 1500)); /* 512 slots: seqno 1.. overwritten */
    evring_record_options o;
    evring_record_options_init(&o);
    o.until = "1500";
    evring_record_result r = {.struct_size = sizeof r};
    path_of(out, sizeof out, "lapped.evrec");
    CHECK(evring_source_record(s, out, &o, &r) == EVRING_OK);
    CHECK(r.ended == EVRING_RECORD_UNTIL && r.lost > 0 && r.gaps >= 1 && r.events + r.lost == 1500);
    readback b = read_back(out);
    CHECK(b.payloads_ok && b.events == r.events && b.lost == r.lost && b.last == 1500);
    evring_source_close(s);
    evring_writer_close(w);
}

typedef struct stopper {
    evring_writer* writer;
    volatile int stop;
} stopper;

static void* write_then_stop(void* arg) {
    stopper* st = arg;
    write_events(st->writer, 1, 200);
    __atomic_store_n(&st->stop, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void test_the_stop_flag(void) {
    char ring[128], out[128];
    evring_writer* w = make_ring(ring, sizeof ring);
    CHECK(w != NULL);
    evring_source* s = evring_source_open(ring, NULL);
    CHECK(s != NULL);
    /* Set before: a live ring with nothing new ends at the first look. */
    stopper st = {w, 1};
    evring_record_options o;
    evring_record_options_init(&o);
    o.stop = &st.stop;
    evring_record_result r = {.struct_size = sizeof r};
    path_of(out, sizeof out, "stopped.evrec");
    CHECK(evring_source_record(s, out, &o, &r) == EVRING_OK);
    CHECK(r.ended == EVRING_RECORD_STOPPED && r.events == 0);
    /* Set by another thread once it has written 200 events. */
    st.stop = 0;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, write_then_stop, &st) == 0);
    path_of(out, sizeof out, "stopped-by-thread.evrec");
    const int status = evring_source_record(s, out, &o, &r);
    pthread_join(thread, NULL);
    CHECK(status == EVRING_OK && r.ended == EVRING_RECORD_STOPPED && r.events <= 200);
    readback b = read_back(out);
    CHECK(b.payloads_ok && b.events == r.events);
    evring_source_close(s);
    evring_writer_close(w);
}

/* A recording recorded again: to its end, everything, with its gaps. */
static void test_a_recording_recorded_again(void) {
    char from[128], out[128];
    path_of(from, sizeof from, "lapped.evrec");
    evring_source* s = evring_source_open(from, NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    evring_record_result r = {.struct_size = sizeof r};
    path_of(out, sizeof out, "again.evrec");
    CHECK(evring_source_record(s, out, NULL, &r) == EVRING_OK);
    readback a = read_back(from), b = read_back(out);
    CHECK(r.ended == EVRING_RECORD_END && r.events == a.events && r.lost == a.lost);
    CHECK(b.payloads_ok && b.events == a.events && b.first == a.first && b.last == a.last && b.lost == a.lost);
    evring_source_close(s);
}

static void test_refusals(void) {
    char ring[128], out[128];
    evring_writer* w = make_ring(ring, sizeof ring);
    CHECK(w != NULL && write_events(w, 1, 5));
    evring_source* s = evring_source_open(ring, NULL);
    CHECK(s != NULL);
    evring_record_options o;
    evring_record_options_init(&o);
    o.count = 1;
    path_of(out, sizeof out, "count.evrec"); /* exists */
    CHECK(evring_source_record(s, out, &o, NULL) == EVRING_E_SYSTEM && evring_source_errno(s) == EEXIST);
    CHECK(strstr(evring_source_error(s), "count.evrec") != NULL);
    path_of(out, sizeof out, "refused.evrec");
    CHECK(evring_source_record(s, NULL, &o, NULL) == EVRING_E_INVALID);
    o.level = 20;
    CHECK(evring_source_record(s, out, &o, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "level 20") != NULL);
    o.level = 1;
    o.threads = 0;
    CHECK(evring_source_record(s, out, &o, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "threads 0") != NULL);
    o.threads = 1;
    o.until = "soon";
    CHECK(evring_source_record(s, out, &o, NULL) == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "soon") != NULL);
    o.until = NULL;
    evring_record_options zero = {0};
    CHECK(evring_source_record(s, out, &zero, NULL) == EVRING_E_INVALID);
    evring_record_result small = {.struct_size = 4};
    CHECK(evring_source_record(s, out, &o, &small) == EVRING_E_INVALID);
    CHECK(access(out, F_OK) != 0); /* nothing refused was created */
    CHECK(evring_source_record(NULL, out, &o, NULL) == EVRING_E_INVALID);
    evring_source_close(s);
    evring_writer_close(w);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/evring-c-record-XXXXXX");
    if (mkdtemp(g_dir) == NULL) return 1;
    test_count_from_where_the_source_stands();
    test_until_and_no_compression();
    test_a_lapped_reader_records_a_gap_marker();
    test_the_stop_flag();
    test_a_recording_recorded_again();
    test_refusals();
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", g_dir);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return c_check_end("c_record_test: all checks passed");
}
