/* One C writer handle shared by several threads (evring.h: "a writer handle
 * may be used by any number of threads at once"): every seqno is handed out
 * once, the ring holds exactly the events written, and each thread reads its
 * own failure's message. Issue 32, defect 1: the handle's publisher made plain
 * stores from every thread, and 4 x 50,000 records gave up to 33,040
 * duplicate seqnos. Half of the bursts are batches (evring_writer_record_batch). */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

enum { kThreads = 4, kPerThread = 50000, kTotal = kThreads * kPerThread };

struct shared_writer {
    evring_writer* writer;
    pthread_barrier_t start;
    uint64_t seqnos[kThreads][kPerThread];
    int failures[kThreads]; /* calls that did not return what they should have */
    int bad_messages[kThreads];
};

struct thread_arg {
    struct shared_writer* shared;
    uint32_t index;
};

/* The threads record in bursts, each burst started by all of them at once
 * (a spinning barrier): on a busy machine, threads released only once would
 * mostly run one after another, and the race needs two at the same time. */
enum { kBurst = 1000, kChunk = 10 }; /* kChunk divides kBurst */
static atomic_uint g_arrived;
static atomic_uint g_generation;

static void start_burst_together(void) {
    const unsigned generation = atomic_load(&g_generation);
    if (atomic_fetch_add(&g_arrived, 1) + 1 == kThreads) {
        atomic_store(&g_arrived, 0);
        atomic_fetch_add(&g_generation, 1);
        return;
    }
    /* Spinning keeps this thread on its CPU, so that it starts with the last
       one to arrive; yielding now and then lets a thread without one arrive. */
    for (unsigned spins = 1; atomic_load(&g_generation) == generation; ++spins)
        if (spins % 100000 == 0) sched_yield();
}

/* Each payload says who wrote it: (thread << 32) | i. Each burst starts with
 * one record too large for the ring: its message must be this thread's. */
static void* record_all(void* p) {
    const struct thread_arg* arg = p;
    struct shared_writer* s = arg->shared;
    const uint64_t max = evring_writer_max_payload(s->writer);
    static const char big[256]; /* a RECORD_ERROR keeps at most 256 bytes of the start */
    pthread_barrier_wait(&s->start);
    for (uint32_t i = 0; i < kPerThread;) {
        if (i % kBurst == 0) {
            start_burst_together();
            if (evring_writer_record(s->writer, 5, big, max + 1 + arg->index, NULL, NULL) != EVRING_E_TOO_LARGE)
                ++s->failures[arg->index];
            char expected[64];
            snprintf(expected, sizeof expected, "a payload of %llu bytes", (unsigned long long)(max + 1 + arg->index));
            if (strstr(evring_writer_error(s->writer), expected) == NULL) ++s->bad_messages[arg->index];
        }
        if ((i / kBurst) % 2 == 1) {
            /* Every other burst in batches (evring_writer_record_batch): a batch's
               one reservation shares the handle's publisher with the single records. */
            evring_batch_event events[kChunk];
            uint64_t payloads[kChunk];
            for (uint32_t j = 0; j < kChunk; ++j) {
                payloads[j] = (uint64_t)arg->index << 32 | (i + j);
                events[j] = (evring_batch_event){.struct_size = sizeof events[0], .event_type = 3,
                                                 .payload = &payloads[j], .payload_size = sizeof payloads[j],
                                                 .content_ext = {arg->index, i + j, 0, 0}};
            }
            if (evring_writer_record_batch(s->writer, events, kChunk, &s->seqnos[arg->index][i]) != EVRING_OK)
                ++s->failures[arg->index];
            i += kChunk;
            continue;
        }
        const uint64_t payload = (uint64_t)arg->index << 32 | i;
        const uint64_t flow[4] = {arg->index, i, 0, 0};
        if (evring_writer_record(s->writer, 3, &payload, sizeof payload, flow, &s->seqnos[arg->index][i]) != EVRING_OK)
            ++s->failures[arg->index];
        ++i;
    }
    return NULL;
}

static void test_threads_sharing_one_writer_get_every_seqno_once(void) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-ctest-%ld-threads", (long)getpid());
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 18; /* 262,144 slots: nothing is overwritten */
    o.payload_shift = 24;    /* 16 MiB: 16 bytes an event, plus the RECORD_ERRORs' starts */
    static struct shared_writer s;
    s.writer = evring_writer_create(&o);
    CHECK(s.writer != NULL);
    CHECK(pthread_barrier_init(&s.start, NULL, kThreads) == 0);
    pthread_t threads[kThreads];
    struct thread_arg args[kThreads];
    for (uint32_t t = 0; t < kThreads; ++t) {
        args[t] = (struct thread_arg){&s, t};
        CHECK(pthread_create(&threads[t], NULL, record_all, &args[t]) == 0);
    }
    for (uint32_t t = 0; t < kThreads; ++t) CHECK(pthread_join(threads[t], NULL) == 0);
    pthread_barrier_destroy(&s.start);
    for (uint32_t t = 0; t < kThreads; ++t) CHECK(s.failures[t] == 0 && s.bad_messages[t] == 0);

    /* Each too-large record left a RECORD_ERROR in its place: one per thread and burst. */
    const uint64_t record_errors = kThreads * (kPerThread / kBurst);
    const uint64_t expected = kTotal + record_errors;
    unsigned char* handed_out = calloc(expected + 1, 1);
    CHECK(handed_out != NULL);
    uint64_t duplicates = 0, out_of_range = 0;
    for (uint32_t t = 0; t < kThreads; ++t)
        for (uint32_t i = 0; i < kPerThread; ++i) {
            const uint64_t seqno = s.seqnos[t][i];
            if (seqno == 0 || seqno > expected) ++out_of_range;
            else if (handed_out[seqno]++ != 0) ++duplicates;
        }
    if (duplicates != 0 || out_of_range != 0)
        fprintf(stderr, "%llu seqnos handed out twice, %llu out of 1..%llu\n", (unsigned long long)duplicates,
                (unsigned long long)out_of_range, (unsigned long long)expected);
    CHECK(duplicates == 0 && out_of_range == 0);

    /* The ring holds exactly those events: seqnos 1..expected, each thread's in its order. */
    evring_source* source = evring_source_open(path, NULL);
    CHECK(source != NULL);
    CHECK(evring_source_seek_oldest(source) == EVRING_OK);
    uint32_t next_of[kThreads] = {0};
    uint64_t events = 0, errors = 0, wrong = 0;
    evring_item item = {.struct_size = sizeof item};
    int step;
    while ((step = evring_source_next(source, &item, EVRING_READ_PAYLOAD)) == EVRING_STEP_EVENT) {
        ++events;
        if (item.event.seqno != events) ++wrong;
        if (item.event.event_type == 1) {
            ++errors;
            continue;
        }
        uint64_t payload = 0;
        if (item.payload_size != sizeof payload) {
            ++wrong;
            continue;
        }
        memcpy(&payload, item.payload, sizeof payload);
        const uint64_t t = payload >> 32, i = payload & 0xffffffffu;
        if (t >= kThreads || i != next_of[t] || item.event.content_ext[0] != t || item.event.content_ext[1] != i) {
            ++wrong;
            continue;
        }
        if (s.seqnos[t][i] != item.event.seqno) ++wrong;
        ++next_of[t];
    }
    fprintf(stderr, "read %llu events (%llu RECORD_ERRORs), %llu wrong, stopped at step %d\n",
            (unsigned long long)events, (unsigned long long)errors, (unsigned long long)wrong, step);
    CHECK(step == EVRING_STEP_NOT_READY);
    CHECK(events == expected && errors == record_errors && wrong == 0);
    for (uint32_t t = 0; t < kThreads; ++t) CHECK(next_of[t] == kPerThread);
    evring_counters c = {.struct_size = sizeof c};
    CHECK(evring_source_get_counters(source, &c) == EVRING_OK && c.lost == 0 && c.gaps == 0);
    evring_source_close(source);
    free(handed_out);
    evring_writer_close(s.writer);
}

/* A failure's message belongs to the thread that failed: another thread's
 * later failure on the same handle does not replace it. */
static void* fail_once(void* p) {
    evring_writer* w = p;
    static const char big[256];
    (void)evring_writer_record(w, 5, big, evring_writer_max_payload(w) + 7, NULL, NULL);
    return NULL;
}

static void test_a_writer_message_is_the_calling_threads(void) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-ctest-%ld-thread-message", (long)getpid());
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    evring_writer* w = evring_writer_create(&o);
    CHECK(w != NULL);
    evring_reservation r = {.struct_size = sizeof r};
    CHECK(evring_writer_reserve(w, evring_writer_max_payload(w) + 1, &r) == EVRING_E_TOO_LARGE);
    char mine[64];
    snprintf(mine, sizeof mine, "a payload of %llu bytes", (unsigned long long)(evring_writer_max_payload(w) + 1));
    CHECK(strstr(evring_writer_error(w), mine) != NULL);
    pthread_t other;
    CHECK(pthread_create(&other, NULL, fail_once, w) == 0);
    CHECK(pthread_join(other, NULL) == 0);
    CHECK(strstr(evring_writer_error(w), mine) != NULL);
    evring_writer_close(w);
}

int main(void) {
    test_threads_sharing_one_writer_get_every_seqno_once();
    test_a_writer_message_is_the_calling_threads();
    return c_check_end("all C writer thread tests passed");
}
