/* Healing through the C ABI (evring_source_heal, docs/healing.md): a reader
 * of a live ring, lapped while `evring record` (EVRING_BIN; without it the
 * test says SKIP) records every event, reads each event once, in order, none
 * lost, and evring_counters.healed says how many came from the recording.
 * Sources that nothing overwrites are refused. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, kill */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

enum { kTotal = 400, kHeld = 60 /* a lapped reader of 64 slots goes on 4 past the oldest */ };

static char g_ring[128];
static char g_recording[160];
static const char* g_evring;

/* The line `evring readers --json` lists the reader of process `pid` on
 * (1), or none (0). */
static int reader_listing(pid_t pid, char* found, size_t size) {
    char command[512];
    snprintf(command, sizeof command, "'%s' readers '%s' --json 2>/dev/null", g_evring, g_ring);
    found[0] = '\0';
    FILE* out = popen(command, "r");
    if (out == NULL) return 0;
    char line[4096];
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "\"pid\":%ld,", (long)pid);
    while (fgets(line, sizeof line, out) != NULL)
        if (strstr(line, pid_text) != NULL) snprintf(found, size, "%s", line);
    pclose(out);
    return found[0] != '\0';
}

static uint64_t number_after(const char* line, const char* key) {
    const char* at = strstr(line, key);
    return at == NULL ? 0 : strtoull(at + strlen(key), NULL, 10);
}

/* The recorder's next seqno as listed (0: not listed). */
static uint64_t recorder_next(pid_t recorder) {
    char line[4096];
    return reader_listing(recorder, line, sizeof line) ? number_after(line, "\"next_seqno\":") : 0;
}

/* This process's reader as listed: its slot's registration time and heals
 * flag (0 when not listed). */
static uint64_t our_reader(int* heals) {
    char line[4096];
    if (!reader_listing(getpid(), line, sizeof line)) return 0;
    *heals = strstr(line, "\"heals\":true") != NULL;
    return number_after(line, "\"registered_ns\":");
}

/* Waits (up to 20 s) until the recorder has read up to `seqno`. */
static int recorder_reached(pid_t recorder, uint64_t seqno) {
    for (int i = 0; i < 2000; ++i) {
        if (recorder_next(recorder) > seqno) return 1;
        const struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

static void test_a_lapped_reader_is_healed(void) {
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = g_ring;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    evring_writer* w = evring_writer_create(&o);
    CHECK(w != NULL);
    uint64_t seqno = 1;
    CHECK(evring_writer_record(w, 3, &seqno, sizeof seqno, NULL, NULL) == EVRING_OK);
    const pid_t recorder = fork();
    CHECK(recorder >= 0);
    if (recorder == 0) {
        execl(g_evring, g_evring, "record", g_ring, "-o", g_recording, "--from", "oldest", (char*)NULL);
        _exit(127);
    }
    CHECK(recorder_reached(recorder, 1));
    evring_source* s = evring_source_open(g_ring, NULL);
    CHECK(s != NULL);
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    int heals = -1;
    const uint64_t registered = our_reader(&heals);
    CHECK(registered != 0 && heals == 0);
    CHECK(evring_source_heal(s, g_recording, 0, 5000000000ull) == EVRING_OK);
    /* The same slot says it heals now: not registered again. */
    CHECK(our_reader(&heals) == registered && heals == 1);
    /* The reader sleeps while the writer laps it; the recorder keeps up, 40 at a time. */
    for (seqno = 2; seqno <= kTotal; ++seqno) {
        CHECK(evring_writer_record(w, 3, &seqno, sizeof seqno, NULL, NULL) == EVRING_OK);
        if (seqno % 40 == 0) CHECK(recorder_reached(recorder, seqno));
    }
    evring_item item = {.struct_size = sizeof item};
    uint64_t expected = 1;
    for (int tries = 0; expected <= kTotal && tries < 100000;) {
        const int step = evring_source_next(s, &item, EVRING_READ_PAYLOAD);
        if (step == EVRING_STEP_NOT_READY) {
            evring_source_wait(s, 10 * 1000 * 1000);
            ++tries;
            continue;
        }
        CHECK(step != EVRING_STEP_GAP && step != EVRING_STEP_FAILED && step != EVRING_STEP_END);
        if (step != EVRING_STEP_EVENT) continue;
        uint64_t value = 0;
        CHECK(item.payload_state == EVRING_PAYLOAD_OK && item.payload_size == 8);
        memcpy(&value, item.payload, 8);
        CHECK(item.event.seqno == expected && value == expected);
        ++expected;
    }
    CHECK(expected == kTotal + 1);
    evring_counters c = {.struct_size = sizeof c};
    CHECK(evring_source_get_counters(s, &c) == EVRING_OK);
    CHECK(c.events == kTotal && c.lost == 0 && c.healed == kTotal - kHeld);
    /* A 0.1.0 caller's smaller struct still gets everything it knows. */
    evring_counters old = {.struct_size = offsetof(evring_counters, healed)};
    CHECK(evring_source_get_counters(s, &old) == EVRING_OK && old.events == kTotal && old.healed == 0);
    evring_source_close(s);
    kill(recorder, SIGINT);
    int status = 0;
    CHECK(waitpid(recorder, &status, 0) == recorder && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    evring_writer_close(w);
}

static void test_refusals(void) {
    evring_source* s = evring_source_open(g_recording, NULL);
    CHECK(s != NULL);
    CHECK(evring_source_heal(s, g_recording, 0, 0) == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "is for live rings and ring sets") != NULL);
    CHECK(evring_source_heal(s, NULL, 0, 0) == EVRING_E_INVALID);
    CHECK(strstr(evring_source_error(s), "give a recording, or find = 1") != NULL);
    CHECK(evring_source_heal(NULL, g_recording, 0, 0) == EVRING_E_INVALID);
    evring_source_close(s);
}

int main(void) {
    g_evring = getenv("EVRING_BIN");
    if (g_evring == NULL || access(g_evring, X_OK) != 0) {
        printf("SKIP: EVRING_BIN is not set\n");
        return 77;
    }
    char dir[] = "/tmp/evring-ctest-heal-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    snprintf(g_ring, sizeof g_ring, "/dev/shm/evring-ctest-%ld-heal", (long)getpid());
    snprintf(g_recording, sizeof g_recording, "%s/heal.evrec", dir);
    test_a_lapped_reader_is_healed();
    test_refusals();
    char readers[160];
    snprintf(readers, sizeof readers, "%s.readers", g_ring);
    unlink(g_ring);
    unlink(readers);
    unlink(g_recording);
    rmdir(dir);
    return c_check_end("c_healing_test: a lapped C reader healed from the recording; refusals");
}
