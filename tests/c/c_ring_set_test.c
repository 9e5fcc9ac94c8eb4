/* C tests of reading what other programs write, through the C ABI alone:
 * a ring set merged in time order with its member column (docs/ring-sets.md),
 * and a C reader listed in its ring's reader registry (`evring readers`).
 * The set is written by examples/producer (PRODUCER_BIN), the listing read
 * with the evring program (EVRING_BIN); without them a test says SKIP. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"


enum { kThreads = 3, kPerThread = 200 };

static const char* program(const char* variable) {
    const char* path = getenv(variable);
    return path != NULL && access(path, X_OK) == 0 ? path : NULL;
}

/* A set directory: its files, then itself (a set holds no subdirectories). */
static void remove_set(const char* directory) {
    DIR* dir = opendir(directory);
    if (dir == NULL) return;
    struct dirent* entry;
    while ((entry = readdir(dir)) != NULL)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
            unlinkat(dirfd(dir), entry->d_name, 0);
    closedir(dir);
    rmdir(directory);
}

/* Writes a set of kThreads members, kPerThread events each; its directory into `path`. */
static int write_set(const char* producer, const char* name, char* path, size_t size) {
    char command[1024];
    snprintf(command, sizeof command, "'%s' '%s:10:16' --threads %d --count %d 2>/dev/null", producer, name,
             kThreads, kPerThread);
    if (system(command) != 0) return 0;
    evring_source* s = evring_source_open(name, NULL);
    if (s == NULL) return 0;
    evring_source_info info = {.struct_size = sizeof info};
    const int ok = evring_source_get_info(s, &info) == EVRING_OK;
    if (ok) snprintf(path, size, "%s", info.path);
    evring_source_close(s);
    return ok;
}

static void test_a_ring_set_reads_merged_in_time_order_with_each_events_member(const char* producer) {
    char name[128], path[1024];
    snprintf(name, sizeof name, "/dev/shm/evring-ctest-set-%ld", (long)getpid()); /* tmpfs: small members */
    if (!write_set(producer, name, path, sizeof path)) {
        remove_set(name);
        CHECK(!"the producer wrote the set");
    }
    evring_source* s = evring_source_open(name, NULL);
    CHECK(s != NULL);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK);
    CHECK(info.kind == EVRING_KIND_RING_SET && info.member_ids == 1 && info.members == kThreads);
    CHECK(info.registered == 1); /* a set's merged reader is in every member's registry */
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    uint64_t next_seqno[kThreads] = {1, 1, 1};
    uint64_t last_nanos = 0, events = 0;
    evring_item item = {.struct_size = sizeof item};
    int step;
    while ((step = evring_source_next(s, &item, EVRING_READ_PAYLOAD)) != EVRING_STEP_END) {
        CHECK(step == EVRING_STEP_EVENT || step == EVRING_STEP_NOTICE);
        if (step != EVRING_STEP_EVENT) continue;
        CHECK(item.member < kThreads);
        CHECK(item.event.seqno == next_seqno[item.member]); /* each member in its own order, no gap */
        ++next_seqno[item.member];
        CHECK(item.event.record_epoch_nanos >= last_nanos); /* merged by time */
        last_nanos = item.event.record_epoch_nanos;
        CHECK(item.payload_state == EVRING_PAYLOAD_OK && item.payload_size == item.event.payload_size);
        ++events;
    }
    CHECK(events == kThreads * kPerThread);
    evring_counters c = {.struct_size = sizeof c};
    CHECK(evring_source_get_counters(s, &c) == EVRING_OK && c.events == events && c.lost == 0 && c.late_events == 0);

    /* The same stream in batches: the member column matches event by event. */
    CHECK(evring_source_seek(s, "oldest") == EVRING_OK);
    static evring_descriptor out[kThreads * kPerThread + 8];
    static uint32_t members[kThreads * kPerThread + 8];
    memset(members, 0xff, sizeof members);
    evring_batch batch = {.struct_size = sizeof batch};
    size_t got = 0;
    do {
        CHECK(evring_source_next_batch_members(s, out + got, members + got, 64, &batch) == EVRING_OK);
        got += batch.events;
        if (batch.stopped == EVRING_STEP_NOTICE) CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_NOTICE);
    } while (batch.stopped == EVRING_STEP_EVENT || batch.stopped == EVRING_STEP_NOTICE);
    CHECK(batch.stopped == EVRING_STEP_END && got == events && batch.gaps == 0);
    uint64_t per_member[kThreads] = {0, 0, 0};
    for (size_t i = 0; i < got; ++i) {
        CHECK(members[i] < kThreads);
        CHECK(out[i].seqno == ++per_member[members[i]]);
        CHECK(i == 0 || out[i].record_epoch_nanos >= out[i - 1].record_epoch_nanos);
    }

    /* Positions are the set's: MEMBER:SEQNO starts there; a bare sequence number is refused. */
    CHECK(evring_source_seek(s, "1:150") == EVRING_OK);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.member == 1 && item.event.seqno == 150);
    CHECK(evring_source_seek(s, "150") != EVRING_OK && strlen(evring_source_error(s)) > 0);
    evring_source_close(s);

    /* One member alone is an ordinary ring. */
    char member[1200];
    snprintf(member, sizeof member, "%s/m1", path);
    s = evring_source_open(member, NULL);
    CHECK(s != NULL);
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.kind == EVRING_KIND_RING && info.member_ids == 0);
    evring_source_close(s);
    remove_set(path);
}

/* `evring readers RING --json` has a line of this process naming `name`. */
static int listed(const char* evring, const char* ring, const char* name) {
    char command[1024], line[4096], pid[32], named[160];
    snprintf(command, sizeof command, "'%s' readers '%s' --json", evring, ring);
    snprintf(pid, sizeof pid, "\"pid\":%ld,", (long)getpid());
    snprintf(named, sizeof named, "\"name\":\"%s\"", name);
    FILE* out = popen(command, "r");
    if (out == NULL) return -1;
    int found = 0;
    while (fgets(line, sizeof line, out) != NULL)
        if (strstr(line, pid) != NULL && strstr(line, named) != NULL) ++found;
    return pclose(out) == 0 ? found : -1;
}

static void test_a_c_reader_is_listed_in_its_rings_registry_while_open(const char* evring) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-ctest-%ld-listed", (long)getpid());
    evring_writer_options w_options;
    evring_writer_options_init(&w_options);
    w_options.name = path;
    w_options.descriptor_shift = 6;
    w_options.payload_shift = 16;
    evring_writer* w = evring_writer_create(&w_options);
    CHECK(w != NULL);
    for (uint64_t i = 1; i <= 5; ++i) CHECK(evring_writer_record(w, 3, &i, sizeof i, NULL, NULL) == EVRING_OK);

    evring_open_options o;
    evring_open_options_init(&o);
    o.reader_name = "ctest-reader";
    o.reader_detail = "c_ring_set_test";
    evring_source* s = evring_source_open(path, &o);
    CHECK(s != NULL);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.registered == 1);
    CHECK(listed(evring, path, "ctest-reader") == 1);
    /* Reading publishes the position: all five read, then idle. */
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    evring_item item = {.struct_size = sizeof item};
    int events = 0;
    while (evring_source_next(s, &item, 0) == EVRING_STEP_EVENT) ++events;
    CHECK(events == 5);
    char command[1024], line[4096];
    snprintf(command, sizeof command, "'%s' readers '%s' --json", evring, path);
    FILE* out = popen(command, "r");
    CHECK(out != NULL);
    int at_six = 0;
    while (fgets(line, sizeof line, out) != NULL)
        if (strstr(line, "ctest-reader") != NULL && strstr(line, "\"next_seqno\":6,") != NULL &&
            strstr(line, "\"detail\":\"c_ring_set_test\"") != NULL)
            ++at_six;
    pclose(out);
    CHECK(at_six == 1);
    evring_source_close(s);
    CHECK(listed(evring, path, "ctest-reader") == 0);

    /* register_reader = 0 stays out. */
    o.register_reader = 0;
    o.reader_name = "ctest-unlisted";
    s = evring_source_open(path, &o);
    CHECK(s != NULL);
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.registered == 0);
    CHECK(listed(evring, path, "ctest-unlisted") == 0);
    evring_source_close(s);
    evring_writer_close(w); /* removes the ring and its registry */
    struct stat st;
    char registry[300];
    snprintf(registry, sizeof registry, "%s.readers", path);
    CHECK(stat(registry, &st) != 0);
}

int main(void) {
    const char* producer = program("PRODUCER_BIN");
    const char* evring = program("EVRING_BIN");
    if (producer != NULL) test_a_ring_set_reads_merged_in_time_order_with_each_events_member(producer);
    else printf("SKIP ring set test: PRODUCER_BIN is not set (run through meson test)\n");
    if (evring != NULL) test_a_c_reader_is_listed_in_its_rings_registry_while_open(evring);
    else printf("SKIP registry test: EVRING_BIN is not set (run through meson test)\n");
    return c_check_end("all C ring set and registry tests passed");
}
