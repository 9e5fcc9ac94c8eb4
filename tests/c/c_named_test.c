/* C tests of named readers in the C ABI (evring.h, "named readers";
 * docs/c-api.md): a durable position by name, committed by the application.
 * Every test uses its own ring under /dev/shm (this process's pid in the
 * name) and positions in a private temporary EVRING_STATE_DIR. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

static char g_state[256];
static long g_pid; /* the test's, also in a forked child */

static void ring_path(char* out, size_t size, const char* what) {
    snprintf(out, size, "/dev/shm/evring-cnamed-%ld-%s", g_pid, what);
}

static evring_writer* writer_of(const char* what, int keep) {
    char path[256];
    ring_path(path, sizeof path, what);
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 8; /* 256 descriptors: the tests never lap */
    o.payload_shift = 16;
    o.keep = keep;
    return evring_writer_create(&o);
}

static int write_events(evring_writer* w, int n) {
    for (int i = 0; i < n; ++i) {
        uint64_t v = (uint64_t)i;
        if (evring_writer_record(w, 1, &v, sizeof v, NULL, NULL) != EVRING_OK) return 0;
    }
    return 1;
}

static evring_source* open_ring(const char* what) {
    char path[256];
    ring_path(path, sizeof path, what);
    evring_open_options o;
    evring_open_options_init(&o);
    o.register_reader = 0;
    return evring_source_open(path, &o);
}

/* What one run of a named reader saw. */
typedef struct run {
    uint64_t seqnos[256];
    size_t events;
    char notices[4096];
    evring_named_info info;  /* its pointers copied below: the handle is closed */
    char info_notices[4096];
    char info_file[512];
} run;

/* Reads what is there now (to NOT_READY or END), committing after `commit_after`
 * events (0: never; SIZE_MAX: at the end). The run's info is taken before close. */
static int read_named(const char* what, const char* name, int flags, size_t commit_after, run* r) {
    memset(r, 0, sizeof *r);
    evring_source* src = open_ring(what);
    if (src == NULL) return EVRING_E_INVALID;
    int rc = evring_source_resume_named(src, name, "oldest", flags);
    if (rc != EVRING_OK) {
        snprintf(r->notices, sizeof r->notices, "%s", evring_source_error(src));
        evring_source_close(src);
        return rc;
    }
    evring_item item = {.struct_size = sizeof item};
    for (;;) {
        const int step = evring_source_next(src, &item, 0);
        if (step == EVRING_STEP_EVENT) {
            if (r->events < 256) r->seqnos[r->events] = item.event.seqno;
            if (++r->events == commit_after && (rc = evring_source_commit(src)) != EVRING_OK) break;
        } else if (step == EVRING_STEP_NOTICE) {
            strncat(r->notices, item.text, sizeof r->notices - strlen(r->notices) - 2);
            strcat(r->notices, "\n");
        } else if (step == EVRING_STEP_NOT_READY || step == EVRING_STEP_END) {
            break;
        } else {
            rc = EVRING_E_FAILED;
            break;
        }
    }
    if (rc == EVRING_OK && commit_after == SIZE_MAX) rc = evring_source_commit(src);
    r->info.struct_size = sizeof r->info;
    if (rc == EVRING_OK) rc = evring_source_get_named_info(src, &r->info);
    if (rc == EVRING_OK) {
        snprintf(r->info_notices, sizeof r->info_notices, "%s", r->info.notices);
        snprintf(r->info_file, sizeof r->info_file, "%s", r->info.file);
    }
    r->info.notices = r->info.file = r->info.name = NULL;
    evring_source_close(src);
    return rc;
}

static int consecutive(const run* r, uint64_t first, size_t count) {
    if (r->events != count) return 0;
    for (size_t i = 0; i < count; ++i)
        if (r->seqnos[i] != first + i) return 0;
    return 1;
}

/* Run 1 commits after 8 of 20; run 2 starts at 9, and says the 12 events the
 * first run was handed after its commit come again; run 3 has nothing new. */
static void test_a_second_run_resumes_after_the_commit(void) {
    evring_writer* w = writer_of("resume", 0);
    CHECK(w != NULL && write_events(w, 20));
    static run r;
    CHECK(read_named("resume", "resume", 0, 8, &r) == EVRING_OK);
    CHECK(consecutive(&r, 1, 20));
    CHECK(strstr(r.notices, "no position yet") != NULL);
    CHECK(r.info.committed_seqno == 8 && r.info.handed_seqno == 20 && r.info.redelivered == 0);
    CHECK(read_named("resume", "resume", 0, SIZE_MAX, &r) == EVRING_OK);
    CHECK(consecutive(&r, 9, 12));
    CHECK(strstr(r.notices, "resumes after seqno 8") != NULL);
    CHECK(r.info.redelivered == 12 && r.info.redelivery_first == 9 && r.info.redelivery_last == 20);
    CHECK(strstr(r.info_notices, "resumes after seqno 8") != NULL);
    CHECK(read_named("resume", "resume", 0, SIZE_MAX, &r) == EVRING_OK);
    CHECK(r.events == 0 && r.info.committed_seqno == 20 && r.info.redelivered == 0);
    CHECK(strstr(r.notices, "nothing was written after that commit") != NULL);
    evring_writer_close(w);
}

/* A batch is handed whole: a commit after it covers its last event. */
static void test_a_commit_after_a_batch_covers_the_batch(void) {
    evring_writer* w = writer_of("batch", 0);
    CHECK(w != NULL && write_events(w, 30));
    evring_source* src = open_ring("batch");
    CHECK(src != NULL);
    CHECK(evring_source_resume_named(src, "batch", "oldest", 0) == EVRING_OK);
    evring_item item = {.struct_size = sizeof item};
    while (evring_source_next(src, &item, 0) == EVRING_STEP_NOTICE) {
    }
    CHECK(item.event.seqno == 1); /* the first event, handed by next */
    evring_descriptor out[7];
    evring_batch b = {.struct_size = sizeof b};
    CHECK(evring_source_next_batch(src, out, 7, &b) == EVRING_OK && b.events == 7 && out[6].seqno == 8);
    CHECK(evring_source_commit(src) == EVRING_OK);
    evring_source_close(src);
    static run r;
    CHECK(read_named("batch", "batch", 0, SIZE_MAX, &r) == EVRING_OK);
    CHECK(consecutive(&r, 9, 22));
    evring_writer_close(w);
}

/* A child killed with SIGKILL after committing 10 and being handed 5 more:
 * the restart loses nothing, gets exactly those 5 again and says so. */
static void test_a_reader_killed_after_a_commit_loses_nothing(void) {
    evring_writer* w = writer_of("kill", 0);
    CHECK(w != NULL && write_events(w, 20));
    int ready[2];
    CHECK(pipe(ready) == 0);
    const pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        evring_source* src = open_ring("kill");
        if (src == NULL || evring_source_resume_named(src, "kill", "oldest", 0) != EVRING_OK) {
            fprintf(stderr, "child: %s\n", src == NULL ? evring_last_error() : evring_source_error(src));
            _exit(2);
        }
        evring_item item = {.struct_size = sizeof item};
        int handed = 0;
        while (handed < 15) {
            const int step = evring_source_next(src, &item, 0);
            if (step == EVRING_STEP_NOTICE) continue;
            if (step != EVRING_STEP_EVENT) _exit(3);
            if (++handed == 10 && evring_source_commit(src) != EVRING_OK) _exit(4);
        }
        if (write(ready[1], "k", 1) != 1) _exit(5);
        for (;;) pause(); /* killed here, the handle open */
    }
    close(ready[1]);
    struct pollfd p = {.fd = ready[0], .events = POLLIN};
    const int polled = poll(&p, 1, 20000); /* bounded: 20 s */
    char c = 0;
    const ssize_t got = polled == 1 ? read(ready[0], &c, 1) : -1;
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    close(ready[0]);
    if (!(got == 1 && WIFSIGNALED(status))) fprintf(stderr, "child: status %d\n", status);
    CHECK(got == 1 && WIFSIGNALED(status));
    static run r;
    CHECK(read_named("kill", "kill", 0, SIZE_MAX, &r) == EVRING_OK);
    CHECK(consecutive(&r, 11, 10));
    CHECK(r.info.redelivered == 5 && r.info.redelivery_first == 11 && r.info.redelivery_last == 15);
    CHECK(strstr(r.notices, "seqno 11..15") != NULL);
    evring_writer_close(w);
}

/* A ring re-created at the same path is read from its new instance's oldest
 * event, and the notice says how far the old instance was read. */
static void test_a_new_ring_instance_starts_at_its_oldest(void) {
    evring_writer* w = writer_of("instance", 0);
    CHECK(w != NULL && write_events(w, 10));
    static run r;
    CHECK(read_named("instance", "instance", 0, 6, &r) == EVRING_OK);
    evring_writer_close(w);
    w = writer_of("instance", 0);
    CHECK(w != NULL && write_events(w, 4));
    CHECK(read_named("instance", "instance", 0, SIZE_MAX, &r) == EVRING_OK);
    CHECK(consecutive(&r, 1, 4));
    CHECK(strstr(r.notices, "new ring instance") != NULL);
    CHECK(strstr(r.notices, "read up to seqno 6") != NULL);
    evring_writer_close(w);
}

static int write_file(const char* path, const void* bytes, size_t size, mode_t mode) {
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0) return 0;
    const int ok = write(fd, bytes, size) == (ssize_t)size;
    close(fd);
    return ok && chmod(path, mode) == 0;
}

/* Damaged and forged position files are refused with the file and the reason. */
static void test_damaged_and_forged_positions_are_refused_by_name(void) {
    evring_writer* w = writer_of("forged", 0);
    CHECK(w != NULL && write_events(w, 5));
    static run r;
    CHECK(read_named("forged", "forged", 0, SIZE_MAX, &r) == EVRING_OK);
    char file[512];
    snprintf(file, sizeof file, "%s/forged.pos", g_state);
    CHECK(strcmp(r.info_file, file) == 0);
    unsigned char saved[512];
    const int fd = open(file, O_RDONLY);
    CHECK(fd >= 0);
    const ssize_t size = read(fd, saved, sizeof saved);
    close(fd);
    CHECK(size > 44);
    unsigned char bytes[512];
    memcpy(bytes, saved, (size_t)size);
    bytes[size - 10] ^= 0x40; /* the ring path: the checksum no longer matches */
    CHECK(write_file(file, bytes, (size_t)size, 0600));
    CHECK(read_named("forged", "forged", 0, SIZE_MAX, &r) == EVRING_E_FORMAT);
    CHECK(strstr(r.notices, file) != NULL && strstr(r.notices, "checksum") != NULL);
    CHECK(write_file(file, "not a position", 14, 0600));
    CHECK(read_named("forged", "forged", 0, SIZE_MAX, &r) < 0);
    CHECK(strstr(r.notices, file) != NULL);
    CHECK(write_file(file, saved, (size_t)size, 0666)); /* others may write it */
    CHECK(read_named("forged", "forged", 0, SIZE_MAX, &r) < 0);
    CHECK(strstr(r.notices, file) != NULL && strstr(r.notices, "mode") != NULL);
    /* Copied to another name: it names the reader it belongs to. */
    char other[512];
    snprintf(other, sizeof other, "%s/copied.pos", g_state);
    CHECK(write_file(other, saved, (size_t)size, 0600));
    CHECK(read_named("forged", "copied", 0, SIZE_MAX, &r) < 0);
    CHECK(strstr(r.notices, other) != NULL);
    /* Reset forgets a damaged position and starts over. */
    CHECK(write_file(file, saved, (size_t)size, 0600));
    CHECK(read_named("forged", "forged", EVRING_NAMED_RESET, SIZE_MAX, &r) == EVRING_OK);
    CHECK(consecutive(&r, 1, 5));
    CHECK(strstr(r.notices, "position forgotten") != NULL);
    evring_writer_close(w);
}

/* Bad calls are refused with a message naming what is wrong. */
static void test_bad_calls_are_refused(void) {
    evring_writer* w = writer_of("bad", 0);
    CHECK(w != NULL && write_events(w, 3));
    evring_source* a = open_ring("bad");
    evring_source* b = open_ring("bad");
    CHECK(a != NULL && b != NULL);
    CHECK(evring_source_commit(a) == EVRING_E_INVALID && strstr(evring_source_error(a), "not a named reader"));
    CHECK(evring_source_resume_named(a, "bad", NULL, 4) == EVRING_E_INVALID &&
          strstr(evring_source_error(a), "unknown flags"));
    CHECK(evring_source_resume_named(a, "no/slash", NULL, 0) == EVRING_E_INVALID &&
          strstr(evring_source_error(a), "no/slash"));
    CHECK(evring_source_resume_named(a, "bad", "nowhere", 0) == EVRING_E_INVALID &&
          strstr(evring_source_error(a), "nowhere"));
    CHECK(evring_source_resume_named(a, "bad", NULL, 0) == EVRING_OK);
    CHECK(evring_source_resume_named(b, "bad", NULL, 0) < 0 && strstr(evring_source_error(b), "in use"));
    evring_item item = {.struct_size = sizeof item};
    while (evring_source_next(b, &item, 0) == EVRING_STEP_NOTICE) {
    }
    CHECK(evring_source_resume_named(b, "other", NULL, 0) == EVRING_E_INVALID &&
          strstr(evring_source_error(b), "before the first event"));
    evring_named_info info = {.struct_size = 0};
    CHECK(evring_source_get_named_info(a, &info) == EVRING_E_INVALID);
    evring_source_close(a);
    evring_source_close(b);
    evring_writer_close(w);
}

static void remove_state(void) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", g_state);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_state);
}

int main(void) {
    g_pid = (long)getpid();
    snprintf(g_state, sizeof g_state, "/tmp/evring-cnamed-XXXXXX");
    if (mkdtemp(g_state) == NULL) return 1;
    setenv("EVRING_STATE_DIR", g_state, 1);
    test_a_second_run_resumes_after_the_commit();
    test_a_commit_after_a_batch_covers_the_batch();
    test_a_reader_killed_after_a_commit_loses_nothing();
    test_a_new_ring_instance_starts_at_its_oldest();
    test_damaged_and_forged_positions_are_refused_by_name();
    test_bad_calls_are_refused();
    remove_state();
    return c_check_end("c_named_test: all passed");
}
