/* A recording read twice in one C reader (issue 32, defect 16): after its
 * end, evring_source_seek_oldest, evring_source_seek ("-N", a seqno) and
 * evring_source_next_batch found 0 events. The recording is a rotated series
 * of 12 files made by `evring record` (EVRING_BIN; without it the test says
 * SKIP), so the first read ends in a later file than the one opened. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

enum { kEvents = 300 };

static char g_dir[64];
static char g_recording[128];

/* A ring of kEvents events (each payload: its number, 8 times), recorded
 * into g_recording, 4 KiB a file. */
static int make_recording(const char* evring) {
    char ring[128];
    snprintf(ring, sizeof ring, "/dev/shm/evring-ctest-%ld-reread", (long)getpid());
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = ring;
    o.descriptor_shift = 9;
    o.payload_shift = 16;
    o.keep = 1; /* recorded after the writer is gone: the recorder ends at the ring's end */
    evring_writer* w = evring_writer_create(&o);
    if (w == NULL) return 0;
    for (uint64_t i = 1; i <= kEvents; ++i) {
        uint64_t payload[8];
        for (int k = 0; k < 8; ++k) payload[k] = i;
        if (evring_writer_record(w, 3, payload, sizeof payload, NULL, NULL) != EVRING_OK) return 0;
    }
    evring_writer_close(w);
    char command[1024];
    snprintf(command, sizeof command,
             "'%s' record '%s' -o '%s' --from oldest --rotate-size 4K --no-compress --no-register 2>/dev/null", evring,
             ring, g_recording);
    const int status = system(command);
    unlink(ring);
    return status == 0;
}

/* Events from here to the end: how many, and whether they were kEvents - first + 1 in order from `first`. */
static uint64_t read_to_end(evring_source* s, uint64_t first, int* in_order) {
    evring_item item = {.struct_size = sizeof item};
    uint64_t events = 0;
    int step;
    *in_order = 1;
    while ((step = evring_source_next(s, &item, EVRING_READ_PAYLOAD)) != EVRING_STEP_END) {
        if (step == EVRING_STEP_FAILED || step == EVRING_STEP_NOT_READY) {
            *in_order = 0;
            return events;
        }
        if (step != EVRING_STEP_EVENT) continue;
        uint64_t value = 0;
        if (item.payload_size == 64) memcpy(&value, item.payload, sizeof value);
        if (item.event.seqno != first + events || value != item.event.seqno) *in_order = 0;
        ++events;
    }
    return events;
}

static void test_a_recording_is_read_again_after_its_end(void) {
    evring_source* s = evring_source_open(g_recording, NULL);
    CHECK(s != NULL);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.kind == EVRING_KIND_RECORDING);
    int in_order = 0;
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    CHECK(read_to_end(s, 1, &in_order) == kEvents && in_order);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    CHECK(read_to_end(s, 1, &in_order) == kEvents && in_order);
    CHECK(evring_source_seek(s, "-10") == EVRING_OK);
    CHECK(read_to_end(s, kEvents - 9, &in_order) == 10 && in_order);
    CHECK(evring_source_seek_seqno(s, 100) == EVRING_OK);
    CHECK(read_to_end(s, 100, &in_order) == kEvents - 99 && in_order);
    CHECK(evring_source_seek(s, "oldest") == EVRING_OK);
    CHECK(read_to_end(s, 1, &in_order) == kEvents && in_order);
    evring_counters c = {.struct_size = sizeof c};
    CHECK(evring_source_get_counters(s, &c) == EVRING_OK && c.events == 3 * kEvents + 10 + kEvents - 99);
    evring_source_close(s);
}

static void test_batches_read_a_recording_again(void) {
    evring_source* s = evring_source_open(g_recording, NULL);
    CHECK(s != NULL);
    static evring_descriptor out[2 * kEvents];
    for (int round = 0; round < 3; ++round) {
        CHECK(evring_source_seek_oldest(s) == EVRING_OK);
        evring_batch batch = {.struct_size = sizeof batch};
        uint64_t events = 0;
        do {
            int status;
            /* A notice (the next file of the series) stops a batch: next hands it out. */
            while ((status = evring_source_next_batch(s, out + events, 2 * kEvents - events, &batch)) == EVRING_OK &&
                   batch.stopped == EVRING_STEP_NOTICE && batch.events == 0) {
                evring_item item = {.struct_size = sizeof item};
                CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_NOTICE);
            }
            CHECK(status == EVRING_OK);
            events += batch.events;
        } while (batch.stopped != EVRING_STEP_END && events < 2 * kEvents);
        CHECK(events == kEvents);
        CHECK(out[0].seqno == 1 && out[kEvents - 1].seqno == kEvents);
    }
    evring_source_close(s);
}

int main(void) {
    const char* evring = getenv("EVRING_BIN");
    if (evring == NULL) {
        printf("SKIP c_recording_reread_test: EVRING_BIN is not set (run through meson test)\n");
        return 0;
    }
    strcpy(g_dir, "/tmp/evring-ctest-reread-XXXXXX");
    if (mkdtemp(g_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(g_recording, sizeof g_recording, "%s/ticks.evrec", g_dir);
    if (!make_recording(evring)) {
        fprintf(stderr, "could not make the recording %s\n", g_recording);
        ++g_failures;
    } else {
        test_a_recording_is_read_again_after_its_end();
        test_batches_read_a_recording_again();
    }
    char command[256];
    snprintf(command, sizeof command, "rm -rf '%s'", g_dir);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return c_check_end("all C recording re-read tests passed");
}
