/* The C ABI in event loops (evring.h, "Event loops"; docs/event-loops.md):
 * a source's descriptor with poll, select and epoll, a wait set over two
 * rings written by another thread, sources and wait sets closed while their
 * descriptors are registered, and bad arguments. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

enum { kBoundMillis = 20000 }; /* what a wake may take on a loaded machine, at most */

static void ring_name(char* out, size_t size, const char* tag) {
    snprintf(out, size, "/dev/shm/evring-ctest-wait-%ld-%s", (long)getpid(), tag);
}

static evring_writer* create_ring(const char* path) {
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 10;
    o.payload_shift = 16;
    return evring_writer_create(&o);
}

static int commit(evring_writer* w) {
    evring_reservation r = {.struct_size = sizeof r};
    if (evring_writer_reserve(w, 8, &r) != EVRING_OK) return 0;
    memset(r.payload, 7, 8);
    return evring_writer_commit(w, &r) == EVRING_OK;
}

static evring_source* open_oldest(const char* path) {
    evring_source* s = evring_source_open(path, NULL);
    if (s != NULL && evring_source_seek_oldest(s) != EVRING_OK) {
        evring_source_close(s);
        return NULL;
    }
    return s;
}

static int readable(int fd, int millis) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, millis) == 1;
}

/* Events read until NOT_READY (or the end); -1 on failure. */
static int drain(evring_source* s) {
    evring_item item = {.struct_size = sizeof item};
    int events = 0;
    for (;;) {
        const int step = evring_source_next(s, &item, 0);
        if (step == EVRING_STEP_EVENT) ++events;
        else if (step == EVRING_STEP_NOT_READY || step == EVRING_STEP_END) return events;
        else if (step == EVRING_STEP_FAILED) return -1;
    }
}

static void test_a_sources_descriptor_is_readable_exactly_while_events_are_pending(void) {
    char path[256];
    ring_name(path, sizeof path, "one");
    evring_writer* w = create_ring(path);
    CHECK(w != NULL);
    evring_source* s = open_oldest(path);
    CHECK(s != NULL);
    const int fd = evring_source_fd(s);
    CHECK(fd >= 0);
    CHECK(evring_source_fd(s) == fd);
    CHECK(!readable(fd, 0));
    CHECK(commit(w) && commit(w));
    CHECK(readable(fd, kBoundMillis));
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT);
    CHECK(readable(fd, 0)); /* one more is pending */
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_NOT_READY);
    CHECK(!readable(fd, 0)); /* read to NOT_READY */
    CHECK(commit(w));
    /* select() works on it as well */
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    struct timeval bound = {kBoundMillis / 1000, 0};
    CHECK(select(fd + 1, &set, NULL, NULL, &bound) == 1 && FD_ISSET(fd, &set));
    evring_descriptor batch[8];
    evring_batch got = {.struct_size = sizeof got};
    CHECK(evring_source_next_batch(s, batch, 8, &got) == EVRING_OK);
    CHECK(got.events == 1 && got.stopped == EVRING_STEP_NOT_READY);
    CHECK(!readable(fd, 0)); /* a batch that stops at NOT_READY arms it too */
    evring_source_close(s);
    evring_writer_close(w);
}

struct two_writers {
    evring_writer* a;
    evring_writer* b;
    int events;
};

static void* write_both(void* arg) {
    struct two_writers* t = arg;
    for (int i = 0; i < t->events; ++i) {
        if (!commit(i % 3 == 0 ? t->b : t->a)) return NULL;
        if (i % 50 == 0) {
            struct timespec pause = {0, 300000};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

static void test_a_wait_set_in_epoll_gets_every_event_of_two_rings(void) {
    char pa[256], pb[256];
    ring_name(pa, sizeof pa, "a");
    ring_name(pb, sizeof pb, "b");
    struct two_writers t = {create_ring(pa), create_ring(pb), 900};
    CHECK(t.a != NULL && t.b != NULL);
    evring_source* a = open_oldest(pa);
    evring_source* b = open_oldest(pb);
    CHECK(a != NULL && b != NULL);
    evring_waitset* set = evring_waitset_create();
    CHECK(set != NULL);
    CHECK(evring_waitset_add(set, a) == EVRING_OK);
    CHECK(evring_waitset_add(set, b) == EVRING_OK);
    const int fd = evring_waitset_fd(set);
    CHECK(fd >= 0);
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
    pthread_t writer;
    CHECK(pthread_create(&writer, NULL, write_both, &t) == 0);
    int read_a = 0, read_b = 0, rounds = 0;
    const time_t give_up = time(NULL) + kBoundMillis / 1000;
    while (read_a + read_b < t.events && time(NULL) < give_up) {
        if (epoll_wait(ep, &ev, 1, 100) != 1) continue;
        evring_source* ready[2];
        const int n = evring_waitset_wait(set, 0, ready, 2);
        CHECK(n >= 0 && n <= 2);
        for (int i = 0; i < n; ++i) {
            const int got = drain(ready[i]);
            CHECK(got >= 0);
            if (ready[i] == a) read_a += got;
            else read_b += got;
        }
        ++rounds;
    }
    pthread_join(writer, NULL);
    CHECK(read_a == 600 && read_b == 300);
    CHECK(rounds > 0);
    evring_source* none[2];
    CHECK(evring_waitset_wait(set, 0, none, 2) == 0);
    CHECK(epoll_wait(ep, &ev, 1, 0) == 0); /* nothing pending: not readable */
    close(ep);
    evring_waitset_close(set); /* before its sources */
    evring_source_close(a);
    evring_source_close(b);
    evring_writer_close(t.a);
    evring_writer_close(t.b);
}

static void test_a_source_closed_while_registered_leaves_epoll_and_its_wait_sets(void) {
    char path[256];
    ring_name(path, sizeof path, "closed");
    evring_writer* w = create_ring(path);
    CHECK(w != NULL);
    evring_source* s = open_oldest(path);
    evring_source* other = open_oldest(path);
    CHECK(s != NULL && other != NULL);
    evring_waitset* set = evring_waitset_create();
    CHECK(evring_waitset_add(set, s) == EVRING_OK);
    CHECK(evring_waitset_add(set, other) == EVRING_OK);
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, evring_source_fd(s), &ev) == 0);
    evring_source_close(s); /* its descriptor with it: out of the epoll set; out of the wait set */
    CHECK(commit(w));
    CHECK(epoll_wait(ep, &ev, 1, 50) == 0);
    evring_source* ready[2] = {NULL, NULL};
    CHECK(evring_waitset_wait(set, (uint64_t)kBoundMillis * 1000000, ready, 2) == 1);
    CHECK(ready[0] == other);
    close(ep);
    evring_source_close(other); /* a source closed before its wait set */
    CHECK(evring_waitset_wait(set, 0, ready, 2) == 0);
    evring_waitset_close(set);
    evring_writer_close(w);
}

/* More ready than the array holds: the count says so, the array holds the
 * first added, and the rest are listed once the first are read. */
static void test_a_wait_with_a_short_array_counts_every_ready_source(void) {
    char pa[256], pb[256];
    ring_name(pa, sizeof pa, "short-a");
    ring_name(pb, sizeof pb, "short-b");
    evring_writer* wa = create_ring(pa);
    evring_writer* wb = create_ring(pb);
    CHECK(wa != NULL && wb != NULL);
    evring_source* a = open_oldest(pa);
    evring_source* b = open_oldest(pb);
    CHECK(a != NULL && b != NULL);
    evring_waitset* set = evring_waitset_create();
    CHECK(evring_waitset_add(set, a) == EVRING_OK && evring_waitset_add(set, b) == EVRING_OK);
    CHECK(commit(wb) && commit(wa));
    evring_source* ready[1] = {NULL};
    CHECK(evring_waitset_wait(set, 0, ready, 1) == 2);
    CHECK(ready[0] == a); /* the order they were added, not of their commits */
    CHECK(drain(a) == 1);
    CHECK(evring_waitset_wait(set, 0, ready, 1) == 1);
    CHECK(ready[0] == b);
    CHECK(drain(b) == 1);
    CHECK(evring_waitset_wait(set, 0, ready, 1) == 0);
    evring_waitset_close(set);
    evring_source_close(a);
    evring_source_close(b);
    evring_writer_close(wa);
    evring_writer_close(wb);
}

static void test_bad_arguments_are_refused_with_a_message(void) {
    char path[256];
    ring_name(path, sizeof path, "bad");
    evring_writer* w = create_ring(path);
    CHECK(w != NULL);
    evring_source* s = open_oldest(path);
    CHECK(s != NULL);
    evring_waitset* set = evring_waitset_create();
    CHECK(evring_waitset_add(set, s) == EVRING_OK);
    CHECK(evring_waitset_add(set, s) == EVRING_E_INVALID);
    CHECK(strstr(evring_waitset_error(set), "in this wait set already") != NULL);
    CHECK(evring_waitset_remove(set, s) == EVRING_OK);
    CHECK(evring_waitset_remove(set, s) == EVRING_E_INVALID);
    CHECK(strstr(evring_waitset_error(set), "is not in this wait set") != NULL);
    CHECK(evring_waitset_add(set, NULL) == EVRING_E_INVALID);
    CHECK(evring_waitset_wait(set, 0, NULL, 1) == EVRING_E_INVALID);
    CHECK(evring_waitset_wait(set, 0, NULL, 0) == 0);
    CHECK(evring_source_fd(NULL) == EVRING_E_INVALID);
    CHECK(evring_waitset_fd(NULL) == EVRING_E_INVALID);
    CHECK(evring_waitset_wait(NULL, 0, NULL, 0) == EVRING_E_INVALID);
    evring_waitset_close(NULL);
    evring_waitset_close(set);
    evring_source_close(s);
    evring_writer_close(w);
}

int main(void) {
    test_a_sources_descriptor_is_readable_exactly_while_events_are_pending();
    test_a_wait_set_in_epoll_gets_every_event_of_two_rings();
    test_a_source_closed_while_registered_leaves_epoll_and_its_wait_sets();
    test_a_wait_with_a_short_array_counts_every_ready_source();
    test_bad_arguments_are_refused_with_a_message();
    return c_check_end("c_wait_test: all passed");
}
