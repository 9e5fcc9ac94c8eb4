/* One C writer handle shared by threads, for scripts/soak (not a test of its
 * own; c_writer_threads_test is the deterministic one):
 *
 *     c_shared_writer RING SCHEMA THREADS RATE
 *
 * creates RING (65,536 slots, 4 MiB of payload) with SCHEMA embedded
 * (tests/schemas/interest.toml: TRADE is a "trades" event, QUOTE a "quotes"
 * one), then THREADS threads record through the one evring_writer handle,
 * each at most RATE events a second, TRADE and QUOTE in turn, until SIGTERM or
 * SIGINT. A typed write that no registered reader wants is skipped
 * (EVRING_NOT_WANTED: docs/interest.md), so a narrow reader's life shows as
 * QUOTEs not written. At the end it checks the seqnos the calls handed out
 * (1..N, each once), closes the writer (the ring is removed) and prints
 *
 *     c_shared_writer: committed N events (TRADE T, QUOTE Q), skipped S not wanted, seqnos 1..N once each
 *
 * Exit 0, or 1 with the first failure's message (a call that failed, a seqno
 * handed out twice or missing). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evring/evring.h"

enum { kTrade = 2, kQuote = 3, kMaxThreads = 64 };

static atomic_bool g_stop;
static void on_signal(int sig) {
    (void)sig;
    atomic_store(&g_stop, 1);
}

struct thread_state {
    evring_writer* writer;
    uint32_t index;
    uint64_t rate;
    uint32_t trade_size, quote_size;
    uint64_t* seqnos; /* handed out to this thread, in order */
    size_t count, capacity;
    uint64_t trades, quotes, skipped, failures;
    char failure[256];
};

static uint64_t now_nanos(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int keep_seqno(struct thread_state* t, uint64_t seqno) {
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? 2 * t->capacity : 65536;
        uint64_t* grown = realloc(t->seqnos, capacity * sizeof *grown);
        if (grown == NULL) return 0;
        t->seqnos = grown;
        t->capacity = capacity;
    }
    t->seqnos[t->count++] = seqno;
    return 1;
}

/* Paced by the clock every 16 events: an upper bound on the rate, never a burst to catch up. */
static void* write_feed(void* p) {
    struct thread_state* t = p;
    unsigned char payload[64] = {0};
    uint64_t start = now_nanos();
    for (uint64_t i = 0; !atomic_load(&g_stop); ++i) {
        const int quote = i % 2 == 1;
        const uint64_t price = (uint64_t)t->index << 40 | i;
        memcpy(payload, &price, sizeof price);
        const uint64_t flow[4] = {t->index, i, 0, 0};
        uint64_t seqno = 0;
        const int rc = evring_writer_record(t->writer, quote ? kQuote : kTrade, payload,
                                            quote ? t->quote_size : t->trade_size, flow, &seqno);
        if (rc == EVRING_NOT_WANTED) {
            ++t->skipped;
        } else if (rc != EVRING_OK || !keep_seqno(t, seqno)) {
            if (t->failures++ == 0)
                snprintf(t->failure, sizeof t->failure, "thread %u: %s", t->index,
                         rc != EVRING_OK ? evring_writer_error(t->writer) : "out of memory");
        } else if (quote) {
            ++t->quotes;
        } else {
            ++t->trades;
        }
        if (t->rate != 0 && i % 16 == 15) {
            const uint64_t due = start + (i + 1) * 1000000000u / t->rate, now = now_nanos();
            if (now > due + 10000000u) { /* held up (a starved core): restart the schedule */
                start = now - (i + 1) * 1000000000u / t->rate;
            } else if (due > now) {
                struct timespec pause = {(time_t)((due - now) / 1000000000u), (long)((due - now) % 1000000000u)};
                nanosleep(&pause, NULL);
            }
        }
    }
    return NULL;
}

static uint32_t fixed_size_of(const evring_writer* writer, uint16_t type) {
    evring_event_type_info info = {.struct_size = sizeof info};
    const evring_schema* schema = evring_writer_schema(writer);
    return schema != NULL && evring_schema_event_by_number(schema, type, &info) == EVRING_OK ? info.fixed_size : 0;
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: c_shared_writer RING SCHEMA THREADS RATE\n");
        return 2;
    }
    const unsigned threads = (unsigned)strtoul(argv[3], NULL, 10);
    const uint64_t rate = strtoull(argv[4], NULL, 10);
    if (threads == 0 || threads > kMaxThreads) {
        fprintf(stderr, "c_shared_writer: THREADS must be 1..%d\n", kMaxThreads);
        return 2;
    }
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = argv[1];
    o.schema_path = argv[2];
    o.descriptor_shift = 16;
    o.payload_shift = 22;
    evring_writer* writer = evring_writer_create(&o);
    if (writer == NULL) {
        fprintf(stderr, "c_shared_writer: %s\n", evring_last_error());
        return 1;
    }
    const uint32_t trade_size = fixed_size_of(writer, kTrade), quote_size = fixed_size_of(writer, kQuote);
    if (trade_size == 0 || quote_size == 0 || trade_size > 64 || quote_size > 64) {
        fprintf(stderr, "c_shared_writer: %s has no TRADE and QUOTE of at most 64 bytes\n", argv[2]);
        evring_writer_close(writer);
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    fprintf(stderr, "c_shared_writer: writing to %s with %u threads\n", evring_writer_path(writer), threads);

    static struct thread_state state[kMaxThreads];
    pthread_t ids[kMaxThreads];
    for (unsigned i = 0; i < threads; ++i) {
        state[i] = (struct thread_state){.writer = writer, .index = i, .rate = rate,
                                         .trade_size = trade_size, .quote_size = quote_size};
        if (pthread_create(&ids[i], NULL, write_feed, &state[i]) != 0) {
            fprintf(stderr, "c_shared_writer: cannot start thread %u\n", i);
            return 1;
        }
    }
    uint64_t trades = 0, quotes = 0, skipped = 0, failures = 0;
    const char* failure = NULL;
    for (unsigned i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        trades += state[i].trades;
        quotes += state[i].quotes;
        skipped += state[i].skipped;
        failures += state[i].failures;
        if (failure == NULL && state[i].failures != 0) failure = state[i].failure;
    }
    /* Every seqno handed out is one of 1..N, and none twice. */
    const uint64_t committed = trades + quotes;
    unsigned char* seen = calloc(committed + 1, 1);
    uint64_t twice = 0, outside = 0;
    for (unsigned i = 0; seen != NULL && i < threads; ++i)
        for (size_t k = 0; k < state[i].count; ++k) {
            const uint64_t s = state[i].seqnos[k];
            if (s == 0 || s > committed) ++outside;
            else if (seen[s]++ != 0) ++twice;
        }
    evring_writer_close(writer);
    printf("c_shared_writer: committed %llu events (TRADE %llu, QUOTE %llu), skipped %llu not wanted, ",
           (unsigned long long)committed, (unsigned long long)trades, (unsigned long long)quotes,
           (unsigned long long)skipped);
    if (seen == NULL || twice != 0 || outside != 0)
        printf("seqnos NOT 1..N once each: %llu twice, %llu outside\n", (unsigned long long)twice,
               (unsigned long long)outside);
    else
        printf("seqnos 1..%llu once each\n", (unsigned long long)committed);
    if (failures != 0) fprintf(stderr, "c_shared_writer: %llu calls failed; the first: %s\n",
                               (unsigned long long)failures, failure);
    free(seen);
    for (unsigned i = 0; i < threads; ++i) free(state[i].seqnos);
    return seen == NULL || twice != 0 || outside != 0 || failures != 0;
}
