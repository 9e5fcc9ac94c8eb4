/* The C ABI's assembled spans (evring.h, "Assembled spans"): on the real
 * snapshots, every block the assembler hands out holds what a plain scan of
 * the events finds (its events, its transactions, its stage transitions);
 * on a live ring, a gap inside an instance breaks it naming the lost seqnos,
 * and a rival the stage did not take comes out abandoned; and the refusals,
 * each with its reason. Plain C11 against libevring.so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

enum { kMaxBlocks = 1024 };

/* What a scan of the events says of one block. */
struct scanned {
    uint64_t label, start_seqno, events, txn_headers, end_seqno, finalized_seqno;
};

struct scan {
    struct scanned blocks[kMaxBlocks];
    size_t count;
    uint16_t start, end, header, finalized;
};

static uint16_t type_number(evring_source* s, const char* name) {
    evring_event_type_info t = {.struct_size = sizeof t};
    if (evring_schema_event_by_name(evring_source_schema(s), name, &t) != EVRING_OK) return 0xffff;
    return t.number;
}

static struct scanned* block_opened_by(struct scan* scan, uint64_t seqno) {
    for (size_t i = 0; i < scan->count; ++i)
        if (scan->blocks[i].start_seqno == seqno) return &scan->blocks[i];
    return NULL;
}

static struct scanned* block_labelled(struct scan* scan, uint64_t label) {
    for (size_t i = 0; i < scan->count; ++i)
        if (scan->blocks[i].label == label) return &scan->blocks[i];
    return NULL;
}

static uint64_t u64_at(const void* payload, size_t offset) {
    uint64_t v = 0;
    memcpy(&v, (const char*)payload + offset, 8);
    return v;
}

/* Every event of the snapshot, as evring_source_next hands them out. Both
 * BLOCK_START and BLOCK_FINALIZED carry the block number after a 32-byte id. */
static int scan_events(evring_source* s, struct scan* scan) {
    evring_item item = {.struct_size = sizeof item};
    for (int step; (step = evring_source_next(s, &item, EVRING_READ_PAYLOAD)) != EVRING_STEP_END;) {
        if (step == EVRING_STEP_NOTICE) continue;
        if (step != EVRING_STEP_EVENT || item.payload_state != EVRING_PAYLOAD_OK) return 0;
        const evring_descriptor* d = &item.event;
        if (d->event_type == scan->start) {
            if (scan->count == kMaxBlocks) return 0;
            struct scanned b = {.label = u64_at(item.payload, 32), .start_seqno = d->seqno};
            scan->blocks[scan->count++] = b;
        }
        if (d->event_type == scan->finalized) {
            struct scanned* b = block_labelled(scan, u64_at(item.payload, 32));
            if (b != NULL) b->finalized_seqno = d->seqno;
        }
        struct scanned* b = block_opened_by(scan, d->content_ext[0]);
        if (b == NULL) continue;
        ++b->events;
        if (d->event_type == scan->header) ++b->txn_headers;
        if (d->event_type == scan->end) b->end_seqno = d->seqno;
    }
    return 1;
}

/* One nested instance: a transaction whose events all carry its key, one of
 * them its header (TXN_HEADER_START; TXN_START in the older schema). */
static int is_transaction(const evring_span* b, const evring_span_nested* n, uint16_t header) {
    int has_header = 0;
    for (size_t j = 0; j < n->event_count; ++j) {
        if (n->events[j] >= b->event_count) return 0;
        const evring_descriptor* d = &b->events[n->events[j]].event;
        if (d->content_ext[1] != n->key) return 0;
        has_header |= d->event_type == header;
    }
    return strcmp(n->span, "txn") == 0 && has_header;
}

static void check_blocks_of(const char* path, const char* stage) {
    evring_source* s = evring_source_open(path, NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    static struct scan scan;
    memset(&scan, 0, sizeof scan);
    scan.start = type_number(s, "BLOCK_START");
    scan.end = type_number(s, "BLOCK_END");
    scan.header = type_number(s, "TXN_HEADER_START");
    if (scan.header == 0xffff) scan.header = type_number(s, "TXN_START"); /* the older schema's */
    scan.finalized = type_number(s, "BLOCK_FINALIZED");
    CHECK(scan_events(s, &scan) && scan.count > 0);
    size_t want = 0;
    for (size_t i = 0; i < scan.count; ++i)
        want += scan.blocks[i].end_seqno != 0 && (*stage == 0 || scan.blocks[i].finalized_seqno != 0);

    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    evring_assembler* a = evring_assembler_open(s, "block", stage);
    CHECK(a != NULL);
    evring_span b = {.struct_size = sizeof b};
    size_t got = 0;
    uint64_t previous = 0;
    for (int step; (step = evring_assembler_next(a, &b, NULL)) != EVRING_STEP_END;) {
        CHECK(step == EVRING_STEP_EVENT);
        const struct scanned* x = block_labelled(&scan, b.label);
        CHECK(x != NULL && x->end_seqno != 0 && b.label > previous);
        previous = b.label;
        ++got;
        CHECK(b.state == EVRING_SPAN_COMPLETE && strcmp(b.span, "block") == 0);
        CHECK(b.id_size == 32 && b.id != NULL && *b.reassembly_error == 0);
        CHECK(b.event_count == x->events && b.events[0].event.seqno == x->start_seqno);
        CHECK(b.events[b.event_count - 1].event.seqno == x->end_seqno);
        CHECK(b.nested_count == x->txn_headers);
        for (size_t i = 0; i < b.nested_count; ++i) CHECK(is_transaction(&b, &b.nested[i], scan.header));
        size_t in_nested = 0;
        for (size_t i = 0; i < b.nested_count; ++i) in_nested += b.nested[i].event_count;
        CHECK(in_nested + b.outside_count == b.event_count);
        /* The stage transitions a scan finds: ended at BLOCK_END, finalized at BLOCK_FINALIZED. */
        CHECK(b.stage_count >= 1 && strcmp(b.stages[0].name, "ended") == 0 && b.stages[0].seqno == x->end_seqno);
        if (*stage != 0)
            CHECK(b.stage_count == 2 && strcmp(b.stages[1].name, "finalized") == 0 &&
                  b.stages[1].seqno == x->finalized_seqno);
    }
    CHECK(got == want);
    evring_assembler_counts c = {.struct_size = sizeof c};
    CHECK(evring_assembler_get_counts(a, &c) == EVRING_OK);
    CHECK(c.handed_out == want && c.abandoned == 0 && c.broken == 0);
    CHECK(c.unfinished == scan.count - want && c.unassembled == 0);
    CHECK(evring_assembler_next(a, &b, NULL) == EVRING_STEP_END);  /* and again */
    printf("%s, stage '%s': %zu blocks of %zu equal the scan\n", path, stage, got, scan.count);
    evring_assembler_close(a);
    evring_source_close(s);
}

static void test_blocks_of_the_real_snapshots_equal_a_scan(void) {
    const char* dir = getenv("EVRING_CONFORMANCE_DIR");
    if (dir == NULL) {
        printf("SKIP test_blocks_of_the_real_snapshots_equal_a_scan: EVRING_CONFORMANCE_DIR is not set\n");
        return;
    }
    const char* names[] = {"emn-30b-15m.snapshot.zst", "emn-1b-15m.snapshot.zst", "mdn-500b-genesis.snapshot.zst"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        check_blocks_of(path, "");
        check_blocks_of(path, "finalized");
    }
}

/* Rounds: OPEN (round number and id) begins one, WORK events inside it are
 * its steps (flow tag `step`), CLOSE ends it, SETTLED marks a round number
 * and id as taken. */
static const char* kSchema =
    "content_type = 4662\n"
    "content_name = \"rounds\"\n"
    "flow_tags = [\"round\", \"step\"]\n"
    "[[event]]\nnumber = 1\nname = \"OPEN\"\npayload = \"round\"\n"
    "[[event]]\nnumber = 2\nname = \"WORK\"\n"
    "[[event]]\nnumber = 3\nname = \"CLOSE\"\n"
    "[[event]]\nnumber = 4\nname = \"SETTLED\"\npayload = \"round\"\n"
    "[struct.round]\n"
    "fields = [{ name = \"id\", type = \"bytes4\" }, { name = \"number\", type = \"u64\" }]\n"
    "[span.round]\n"
    "begin = \"OPEN\"\nend = \"CLOSE\"\nkey = [\"round\"]\nlabel = \"number\"\nid = \"id\"\nopener = \"round\"\n"
    "stages = [{ name = \"settled\", event = \"SETTLED\", label = \"number\", id = \"id\" }]\n"
    "[span.step]\n"
    "begin = \"WORK\"\nend = \"CLOSE\"\nkey = [\"round\", \"step\"]\n";

static evring_writer* rounds_writer(const char* what, const char* schema_text) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-cspans-%ld-%s", (long)getpid(), what);
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6; /* 64 events: easy to lap */
    o.payload_shift = 16;
    o.schema_text = schema_text;
    return evring_writer_create(&o);
}

static evring_source* reader_of(evring_writer* w) {
    evring_open_options o;
    evring_open_options_init(&o);
    o.register_reader = 0;
    return evring_source_open(evring_writer_path(w), &o);
}

/* OPEN: its own seqno in the `round` tag (the opener), as a block's BLOCK_START. */
static uint64_t open_round(evring_writer* w, uint64_t number, uint8_t id) {
    evring_reservation r = {.struct_size = sizeof r};
    if (evring_writer_reserve(w, 16, &r) != EVRING_OK) return 0;
    memset(r.payload, 0, 16);
    memcpy(r.payload, &id, 1);
    memcpy((char*)r.payload + 8, &number, 8);
    r.event_type = 1;
    r.content_ext[0] = r.seqno;
    const uint64_t seqno = r.seqno;
    return evring_writer_commit(w, &r) == EVRING_OK ? seqno : 0;
}

static int put(evring_writer* w, uint16_t type, uint64_t round, uint64_t step) {
    const uint64_t flow[4] = {round, step, 0, 0};
    return evring_writer_record(w, type, NULL, 0, flow, NULL) == EVRING_OK;
}

static int settle(evring_writer* w, uint64_t number, uint8_t id) {
    unsigned char p[16] = {0};
    memcpy(p, &id, 1);
    memcpy(p + 8, &number, 8);
    return evring_writer_record(w, 4, p, sizeof p, NULL, NULL) == EVRING_OK;
}

/* A reader lapped inside a round: GAP first (into the item), then the round
 * BROKEN, naming the seqnos lost, with the events read before the gap. */
static void test_a_gap_inside_a_round_breaks_it(void) {
    evring_writer* w = rounds_writer("gap", kSchema);
    CHECK(w != NULL);
    evring_source* s = reader_of(w);
    CHECK(s != NULL);
    evring_assembler* a = evring_assembler_open(s, "round", NULL);
    CHECK(a != NULL);
    const uint64_t opened = open_round(w, 5, 1);
    CHECK(opened != 0 && put(w, 2, opened, 1));
    evring_span b = {.struct_size = sizeof b};
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_assembler_next(a, &b, &item) == EVRING_STEP_NOT_READY);  /* OPEN and WORK read */
    for (int i = 0; i < 200; ++i) CHECK(put(w, 2, opened, 1));
    CHECK(put(w, 3, opened, 0));
    CHECK(evring_assembler_next(a, &b, &item) == EVRING_STEP_GAP);
    CHECK(item.gap_first_seqno == opened + 2 && item.gap_reason == EVRING_GAP_FELL_BEHIND);
    CHECK(evring_assembler_next(a, &b, &item) == EVRING_STEP_EVENT);
    CHECK(b.state == EVRING_SPAN_BROKEN && b.label == 5 && b.event_count == 2);
    CHECK(b.lost_first == item.gap_first_seqno && b.lost_count == item.gap_count);
    char want[96];
    snprintf(want, sizeof want, "seqno %llu..%llu lost", (unsigned long long)b.lost_first,
             (unsigned long long)(b.lost_first + b.lost_count - 1));
    CHECK(strcmp(b.reassembly_error, want) == 0);
    CHECK(evring_assembler_next(a, &b, &item) == EVRING_STEP_NOT_READY);
    evring_assembler_counts c = {.struct_size = sizeof c};
    CHECK(evring_assembler_get_counts(a, &c) == EVRING_OK && c.broken == 1 && c.handed_out == 0);
    CHECK(c.unassembled > 0);  /* the round's events after the gap */
    evring_assembler_close(a);
    evring_source_close(s);
    evring_writer_close(w);
}

/* Two rounds numbered 7; SETTLED takes id B: A comes out abandoned, B
 * complete with its stages, its steps nested and OPEN, CLOSE outside. */
static void test_a_rival_is_abandoned_and_the_taken_one_complete(void) {
    evring_writer* w = rounds_writer("rival", kSchema);
    CHECK(w != NULL);
    evring_source* s = reader_of(w);
    CHECK(s != NULL);
    evring_assembler* a = evring_assembler_open(s, "round", "settled");
    CHECK(a != NULL);
    const uint64_t first = open_round(w, 7, 0xA);
    CHECK(first != 0 && put(w, 2, first, 1) && put(w, 2, first, 2) && put(w, 3, first, 0));
    const uint64_t second = open_round(w, 7, 0xB);
    CHECK(second != 0 && put(w, 2, second, 1) && put(w, 3, second, 0));
    evring_span b = {.struct_size = sizeof b};
    CHECK(evring_assembler_next(a, &b, NULL) == EVRING_STEP_NOT_READY);  /* both wait for the stage */
    CHECK(settle(w, 7, 0xB));
    CHECK(evring_assembler_next(a, &b, NULL) == EVRING_STEP_EVENT);
    CHECK(b.struct_size == sizeof b); /* the bytes the library filled: all of them */
    CHECK(b.state == EVRING_SPAN_ABANDONED && b.label == 7 && b.id_size == 4 && b.id[0] == 0xA);
    CHECK(b.event_count == 4 && b.nested_count == 2 && b.nested[1].key == 2 && strcmp(b.nested[1].span, "step") == 0);
    CHECK(b.outside_count == 2 && b.outside[0] == 0 && b.outside[1] == 3);
    CHECK(evring_assembler_next(a, &b, NULL) == EVRING_STEP_EVENT);
    CHECK(b.state == EVRING_SPAN_COMPLETE && b.id[0] == 0xB && b.events[0].event.seqno == second);
    CHECK(b.events[0].payload_size == 16 && b.events[0].payload_state == EVRING_PAYLOAD_OK);
    CHECK(b.stage_count == 2 && strcmp(b.stages[0].name, "ended") == 0 && strcmp(b.stages[1].name, "settled") == 0);
    CHECK(b.stages[1].seqno == second + 3 && b.stages[1].nanos != 0);
    evring_assembler_counts c = {.struct_size = sizeof c};
    CHECK(evring_assembler_get_counts(a, &c) == EVRING_OK && c.handed_out == 1 && c.abandoned == 1);
    evring_assembler_close(a);
    evring_source_close(s);
    evring_writer_close(w);
}

static int last_error_has(const char* part) {
    if (strstr(evring_last_error(), part) != NULL) return 1;
    fprintf(stderr, "evring_last_error: %s (wanted: %s)\n", evring_last_error(), part);
    return 0;
}

static void test_refusals_name_the_reason(void) {
    CHECK(evring_assembler_open(NULL, "round", NULL) == NULL && last_error_has("no source"));
    evring_writer* bare = rounds_writer("bare", NULL);
    CHECK(bare != NULL);
    evring_source* none = reader_of(bare);
    CHECK(none != NULL);
    CHECK(evring_assembler_open(none, "round", NULL) == NULL && last_error_has("has no schema"));
    evring_source_close(none);
    evring_writer_close(bare);

    evring_writer* w = rounds_writer("refusals", kSchema);
    CHECK(w != NULL);
    evring_source* s = reader_of(w);
    CHECK(s != NULL);
    CHECK(evring_assembler_open(s, NULL, NULL) == NULL && last_error_has("no span given"));
    CHECK(evring_assembler_open(s, "step", NULL) == NULL && last_error_has("no span 'step' with a label"));
    CHECK(evring_assembler_open(s, "round", "final") == NULL &&
          last_error_has("span 'round' has no stage 'final' (its stages: ended, settled)"));
    CHECK(evring_source_set_where(s, "type == WORK") == EVRING_OK);
    CHECK(evring_assembler_open(s, "round", NULL) == NULL && last_error_has("where filter"));
    CHECK(evring_source_set_where(s, NULL) == EVRING_OK);

    evring_assembler* a = evring_assembler_open(s, "round", "");
    CHECK(a != NULL && *evring_assembler_error(a) == 0);
    CHECK(evring_assembler_next(a, NULL, NULL) == EVRING_STEP_FAILED);
    CHECK(strstr(evring_assembler_error(a), "no span given") != NULL);
    evring_span small = {.struct_size = 8};
    CHECK(evring_assembler_next(a, &small, NULL) == EVRING_STEP_FAILED);
    CHECK(strstr(evring_assembler_error(a), "evring_span.struct_size is 8") != NULL);
    evring_span b = {.struct_size = sizeof b};
    evring_item tiny = {.struct_size = 4};
    CHECK(evring_assembler_next(a, &b, &tiny) == EVRING_STEP_FAILED);
    CHECK(strstr(evring_assembler_error(a), "evring_item.struct_size is 4") != NULL);
    evring_assembler_counts c = {.struct_size = 0};
    CHECK(evring_assembler_get_counts(a, &c) == EVRING_E_INVALID);
    CHECK(evring_assembler_get_counts(NULL, &c) == EVRING_E_INVALID);
    CHECK(evring_source_set_where(s, "type == WORK") == EVRING_OK);  /* after the open */
    CHECK(evring_assembler_next(a, &b, NULL) == EVRING_STEP_FAILED);
    CHECK(strstr(evring_assembler_error(a), "where filter") != NULL);
    CHECK(evring_assembler_next(NULL, &b, NULL) == EVRING_STEP_FAILED);
    CHECK(strstr(evring_assembler_error(NULL), "NULL") != NULL);
    evring_assembler_close(a);
    evring_assembler_close(NULL);
    evring_source_close(s);
    evring_writer_close(w);
}

int main(void) {
    test_refusals_name_the_reason();
    test_a_rival_is_abandoned_and_the_taken_one_complete();
    test_a_gap_inside_a_round_breaks_it();
    test_blocks_of_the_real_snapshots_equal_a_scan();
    return c_check_end("all C assembled span tests passed");
}
