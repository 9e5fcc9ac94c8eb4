/* A C program that writes events into a ring and reads them back through
 * the C ABI (include/evring/evring.h): a writer, a source over the same ring,
 * a batch of descriptors and zero-copy payload peeks.
 *
 *     c_reader_writer [RING]     (default: /dev/shm/evring-c-example)
 *
 * Build against an installed evring with:
 *     cc -std=c11 c_reader_writer.c $(pkg-config --cflags --libs evring) */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "evring/evring.h"

enum { kEvents = 1000, kPriceEvent = 5 };

struct price {
    uint64_t instrument;
    int64_t price_micros;
};

static int fail(const char* what, const char* why) {
    fprintf(stderr, "c_reader_writer: %s: %s\n", what, why);
    return 1;
}

static int write_prices(evring_writer* writer) {
    for (uint64_t i = 0; i < kEvents; ++i) {
        evring_reservation r = {.struct_size = sizeof r};
        if (evring_writer_reserve(writer, sizeof(struct price), &r) != EVRING_OK)
            return fail("reserve", evring_writer_error(writer));
        struct price p = {i % 8, (int64_t)(1000000 + i)};
        memcpy(r.payload, &p, sizeof p);
        r.event_type = kPriceEvent;
        r.content_ext[0] = p.instrument; /* a flow tag readers can filter on */
        evring_writer_commit(writer, &r);
    }
    return 0;
}

static int read_prices(evring_source* source) {
    evring_descriptor batch[256];
    evring_batch got = {.struct_size = sizeof got};
    uint64_t events = 0;
    int64_t sum = 0;
    do {
        if (evring_source_next_batch(source, batch, 256, &got) != EVRING_OK)
            return fail("next_batch", evring_source_error(source));
        for (size_t i = 0; i < got.events; ++i) {
            const void* bytes = evring_source_payload_peek(source, &batch[i]);
            struct price p;
            if (bytes == NULL) continue;
            memcpy(&p, bytes, sizeof p);
            if (!evring_source_payload_valid(source, &batch[i])) continue; /* overwritten meanwhile */
            sum += p.price_micros;
            ++events;
        }
    } while (got.stopped == EVRING_STEP_EVENT);
    evring_counters counters = {.struct_size = sizeof counters};
    evring_source_get_counters(source, &counters);
    printf("read %" PRIu64 " events (lost %" PRIu64 "), sum of prices %" PRId64 "\n", events, counters.lost, sum);
    return events == kEvents ? 0 : fail("read", "not every event came back");
}

int main(int argc, char** argv) {
    const char* ring = argc > 1 ? argv[1] : "/dev/shm/evring-c-example";
    printf("evring %s\n", evring_version());
    evring_writer_options options;
    evring_writer_options_init(&options);
    options.name = ring;
    options.descriptor_shift = 12; /* 4096 events */
    options.payload_shift = 20;    /* 1 MiB */
    evring_writer* writer = evring_writer_create(&options);
    if (writer == NULL) return fail(ring, evring_last_error());
    evring_source* source = evring_source_open(evring_writer_path(writer), NULL);
    if (source == NULL) {
        evring_writer_close(writer);
        return fail(ring, evring_last_error());
    }
    int status = evring_source_seek_oldest(source) == EVRING_OK ? 0 : fail("seek", evring_source_error(source));
    if (status == 0) status = write_prices(writer);
    if (status == 0) status = read_prices(source);
    evring_source_close(source);
    evring_writer_close(writer); /* removes the ring file */
    return status;
}
