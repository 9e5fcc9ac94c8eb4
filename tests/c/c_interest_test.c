/* Interest through the C ABI (evring.h, docs/c-api.md "Interest"): a reader
 * opened with keywords and a level registers them; evring_writer_wants and
 * the checked evring_writer_record skip what no registered reader wants
 * (EVRING_NOT_WANTED, not an error), never an always_recorded type; a reader
 * that says nothing, and one built against the options before interest,
 * want everything. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"


static const char* kSchema =
    "content_type = 901\n"
    "content_name = \"market\"\n"
    "keywords = [\"trades\", \"quotes\"]\n"
    "[[event]]\nnumber = 2\nname = \"TRADE\"\nkeywords = [\"trades\"]\nlevel = 2\n"
    "fields = [ { name = \"price\", type = \"u64\" } ]\n"
    "[[event]]\nnumber = 3\nname = \"QUOTE\"\nkeywords = [\"quotes\"]\nlevel = 5\n"
    "fields = [ { name = \"price\", type = \"u64\" } ]\n"
    "[[event]]\nnumber = 4\nname = \"CHECKPOINT\"\nkeywords = [\"trades\"]\nlevel = 9\nalways_recorded = true\n"
    "fields = [ { name = \"block\", type = \"u64\" } ]\n";

enum { TRADE = 2, QUOTE = 3, CHECKPOINT = 4 };

static evring_writer* market_writer(char* path, size_t size) {
    snprintf(path, size, "/dev/shm/evring-ctest-interest-%ld", (long)getpid());
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    o.schema_text = kSchema;
    return evring_writer_create(&o);
}

static evring_source* open_with(const char* path, const char* keywords, int level) {
    evring_open_options o;
    evring_open_options_init(&o);
    o.keywords = keywords;
    o.level = level;
    return evring_source_open(path, &o);
}

static void test_a_reader_with_keywords_makes_typed_writes_skip_the_rest(void) {
    char path[256];
    evring_writer* w = market_writer(path, sizeof path);
    CHECK(w != NULL);
    const uint64_t price = 7;
    uint64_t seqno = 99;
    CHECK(evring_writer_wants(w, TRADE) == 1); /* nobody narrowed: everything */
    evring_source* s = open_with(path, "quotes", -1);
    CHECK(s != NULL);
    CHECK(evring_writer_wants(w, TRADE) == 0 && evring_writer_wants(w, QUOTE) == 1);
    CHECK(evring_writer_wants(w, CHECKPOINT) == 1); /* always_recorded */
    CHECK(evring_writer_wants(w, 99) == 1);         /* not the schema's: record refuses it */
    CHECK(evring_writer_record(w, TRADE, &price, sizeof price, NULL, &seqno) == EVRING_NOT_WANTED && seqno == 0);
    CHECK(strcmp(evring_status_name(EVRING_NOT_WANTED), "not wanted by any reader (skipped)") == 0);
    /* Checked before it is skipped: a bad TRADE is an error whoever listens. */
    CHECK(evring_writer_record(w, TRADE, &price, 3, NULL, NULL) == EVRING_E_DECODE);
    CHECK(evring_writer_record(w, QUOTE, &price, sizeof price, NULL, &seqno) == EVRING_OK && seqno == 1);
    CHECK(evring_writer_record(w, CHECKPOINT, &price, sizeof price, NULL, &seqno) == EVRING_OK && seqno == 2);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_seek_oldest(s) == EVRING_OK);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.event_type == QUOTE);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_EVENT && item.event.event_type == CHECKPOINT);
    CHECK(evring_source_next(s, &item, 0) == EVRING_STEP_NOT_READY);
    evring_source_close(s); /* its interest leaves with it */
    CHECK(evring_writer_wants(w, TRADE) == 1);
    CHECK(evring_writer_record(w, TRADE, &price, sizeof price, NULL, &seqno) == EVRING_OK && seqno == 3);
    evring_writer_close(w);
}

static void test_a_level_alone_and_old_options_structs(void) {
    char path[256];
    evring_writer* w = market_writer(path, sizeof path);
    CHECK(w != NULL);
    evring_source* s = open_with(path, NULL, 2);
    CHECK(s != NULL);
    CHECK(evring_writer_wants(w, TRADE) == 1 && evring_writer_wants(w, QUOTE) == 0); /* levels 2 and 5 */
    evring_source_close(s);
    /* A caller built before interest passes the struct without keywords and level: everything. */
    evring_open_options o;
    evring_open_options_init(&o);
    o.struct_size = offsetof(evring_open_options, keywords);
    o.keywords = "quotes"; /* beyond its struct_size: never read */
    o.level = 0;
    s = evring_source_open(path, &o);
    CHECK(s != NULL);
    evring_source_info info = {.struct_size = sizeof info};
    CHECK(evring_source_get_info(s, &info) == EVRING_OK && info.registered == 1);
    CHECK(evring_writer_wants(w, TRADE) == 1 && evring_writer_wants(w, QUOTE) == 1);
    evring_source_close(s);
    evring_writer_close(w);
}

static void test_bad_interest_is_refused_at_open(void) {
    char path[256];
    evring_writer* w = market_writer(path, sizeof path);
    CHECK(w != NULL);
    CHECK(open_with(path, "trade", -1) == NULL);
    CHECK(strstr(evring_last_error(), "unknown keyword 'trade' (schema 'market' has: trades, quotes)") != NULL);
    CHECK(open_with(path, NULL, 16) == NULL && strstr(evring_last_error(), "level 16 is not in 0..15") != NULL);
    CHECK(open_with(path, "", -1) == NULL && strstr(evring_last_error(), "name at least one keyword") != NULL);
    evring_open_options o;
    evring_open_options_init(&o);
    o.keywords = "trades";
    o.register_reader = 0;
    CHECK(evring_source_open(path, &o) == NULL && strstr(evring_last_error(), "register") != NULL);
    CHECK(evring_writer_wants(w, TRADE) == 1 && evring_writer_wants(NULL, TRADE) == 0);
    evring_writer_close(w);
}

static void test_a_writer_without_a_schema_wants_everything(void) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-ctest-interest-raw-%ld", (long)getpid());
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    evring_writer* w = evring_writer_create(&o);
    CHECK(w != NULL);
    evring_source* s = open_with(path, NULL, 0); /* narrows, but the writer knows no keywords or levels */
    CHECK(s != NULL);
    CHECK(evring_writer_wants(w, TRADE) == 1 && evring_writer_record(w, TRADE, "x", 1, NULL, NULL) == EVRING_OK);
    evring_source_close(s);
    evring_writer_close(w);
}

int main(void) {
    test_a_reader_with_keywords_makes_typed_writes_skip_the_rest();
    test_a_level_alone_and_old_options_structs();
    test_bad_interest_is_refused_at_open();
    test_a_writer_without_a_schema_wants_everything();
    return c_check_end("all C interest tests passed");
}
