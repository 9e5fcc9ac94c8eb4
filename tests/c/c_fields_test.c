/* The C ABI's field lookups (evring.h, "Fields"): event types and payload
 * fields found by name through a writer's and a source's schema, the same
 * answers from both; a payload built and read by those answers alone that
 * the library's own decoder agrees with; and the refusals, each with its
 * reason in evring_last_error. Plain C11 against libevring.so. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evring/evring.h"
#include "c_check.h"

/* Every kind of field: a scalar, an enum, a nested struct, a fixed array,
 * bytes, text, and two trailing arrays (structs, then bytes). Laid out by the
 * C rules: id 0, side 8, px 16 (size 16), levels 32, owner 44, sym 64,
 * n_legs 72, n_note 74; the fixed part is 80 bytes; a leg is 8. */
static const char* kSchema =
    "content_type = 4661\n"
    "content_name = \"cfields\"\n"
    "[[event]]\n"
    "number = 2\n"
    "name = \"ORDER\"\n"
    "fields = [\n"
    "  { name = \"id\", type = \"u64\" },\n"
    "  { name = \"side\", type = \"side\" },\n"
    "  { name = \"px\", type = \"px\" },\n"
    "  { name = \"levels\", type = \"u32[3]\" },\n"
    "  { name = \"owner\", type = \"address\" },\n"
    "  { name = \"sym\", type = \"char[8]\" },\n"
    "  { name = \"n_legs\", type = \"u8\" },\n"
    "  { name = \"n_note\", type = \"u16\" },\n"
    "  { name = \"legs\", type = \"leg[n_legs]\" },\n"
    "  { name = \"note\", type = \"bytes[n_note]\" },\n"
    "]\n"
    "[[event]]\n"
    "number = 3\n"
    "name = \"PING\"\n"
    "[enum.side]\n"
    "type = \"u8\"\n"
    "values = { BUY = 0, SELL = 1 }\n"
    "[struct.px]\n"
    "fields = [ { name = \"mantissa\", type = \"i64\" }, { name = \"exponent\", type = \"i8\" } ]\n"
    "[struct.leg]\n"
    "fields = [ { name = \"qty\", type = \"u32\" }, { name = \"venue\", type = \"u16\" } ]\n";

static evring_writer* writer_with(const char* what, const char* schema_text) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/evring-cfields-%ld-%s", (long)getpid(), what);
    evring_writer_options o;
    evring_writer_options_init(&o);
    o.name = path;
    o.descriptor_shift = 6;
    o.payload_shift = 16;
    o.schema_text = schema_text;
    return evring_writer_create(&o);
}

static int field_of(const evring_schema* schema, const char* path, evring_field* f) {
    memset(f, 0xab, sizeof *f); /* nothing left over from before */
    f->struct_size = sizeof *f;
    return evring_schema_field(schema, 2, path, f);
}

/* Where each kind of field is and what it holds, as the schema lays it out. */
static void check_fields(const evring_schema* schema) {
    evring_field f;
    CHECK(field_of(schema, "id", &f) == EVRING_OK && f.kind == EVRING_FIELD_SCALAR && f.scalar == EVRING_SCALAR_U64);
    CHECK(f.offset == 0 && f.size == 8 && f.trailing == -1 && strcmp(f.type_name, "u64") == 0);
    CHECK(field_of(schema, "side", &f) == EVRING_OK && f.kind == EVRING_FIELD_ENUM && f.scalar == EVRING_SCALAR_U8);
    CHECK(f.offset == 8 && f.size == 1 && strcmp(f.type_name, "side") == 0);
    CHECK(field_of(schema, "px", &f) == EVRING_OK && f.kind == EVRING_FIELD_STRUCT && f.scalar == -1);
    CHECK(f.offset == 16 && f.size == 16 && strcmp(f.type_name, "px") == 0);
    CHECK(field_of(schema, "px.exponent", &f) == EVRING_OK && f.scalar == EVRING_SCALAR_I8 && f.offset == 24);
    CHECK(field_of(schema, "levels", &f) == EVRING_OK && f.kind == EVRING_FIELD_ARRAY && f.count == 3);
    CHECK(f.element_size == 4 && f.scalar == EVRING_SCALAR_U32 && f.size == 12 && strcmp(f.type_name, "u32[3]") == 0);
    CHECK(field_of(schema, "levels[2]", &f) == EVRING_OK && f.kind == EVRING_FIELD_SCALAR && f.offset == 40);
    CHECK(field_of(schema, "owner", &f) == EVRING_OK && f.kind == EVRING_FIELD_BYTES && f.count == 20);
    CHECK(f.offset == 44 && strcmp(f.type_name, "address") == 0);
    CHECK(field_of(schema, "sym", &f) == EVRING_OK && f.kind == EVRING_FIELD_STRING && f.count == 8 && f.offset == 64);
    CHECK(field_of(schema, "n_note", &f) == EVRING_OK && f.scalar == EVRING_SCALAR_U16 && f.offset == 74);

    /* Trailing arrays: named whole, their count fields and elements; an element's field. */
    CHECK(field_of(schema, "legs", &f) == EVRING_OK && f.kind == EVRING_FIELD_TRAILING && f.trailing == 0);
    CHECK(f.count_offset == 72 && f.count_size == 1 && f.element_size == 8 && f.trailing_element_size == 8);
    CHECK(f.scalar == -1 && f.size == 0 && strcmp(f.type_name, "leg[n_legs]") == 0);
    CHECK(field_of(schema, "legs[1].venue", &f) == EVRING_OK && f.kind == EVRING_FIELD_SCALAR);
    CHECK(f.scalar == EVRING_SCALAR_U16 && f.trailing == 0 && f.element_index == 1 && f.offset == 4);
    CHECK(f.trailing_element_size == 8 && f.count_offset == 72);
    CHECK(field_of(schema, "note", &f) == EVRING_OK && f.kind == EVRING_FIELD_TRAILING && f.trailing == 1);
    CHECK(f.count_offset == 74 && f.count_size == 2 && f.element_size == 1 && f.scalar == EVRING_SCALAR_U8);
    CHECK(strcmp(f.type_name, "bytes[n_note]") == 0);
    evring_field by_index = {.struct_size = sizeof by_index};
    CHECK(evring_schema_trailing(schema, 2, 1, &by_index) == EVRING_OK);
    CHECK(by_index.kind == f.kind && by_index.count_offset == f.count_offset && strcmp(by_index.type_name, f.type_name) == 0);

    /* What is not a field, each refused with its reason. */
    CHECK(field_of(schema, "levels[3]", &f) == EVRING_E_INVALID);
    CHECK(strstr(evring_last_error(), "has no field 'levels[3]'") != NULL);
    CHECK(field_of(schema, "prce", &f) == EVRING_E_INVALID);
    CHECK(strstr(evring_last_error(), "ORDER (2) of schema 'cfields' has no field 'prce' (its fields: id, side, px,") != NULL);
    CHECK(field_of(schema, "note.x", &f) == EVRING_E_INVALID && strstr(evring_last_error(), "no field 'note.x'") != NULL);
    CHECK(field_of(schema, "id == 3", &f) == EVRING_E_INVALID);
    CHECK(strncmp(evring_last_error(), "bad field path 'id == 3'", 24) == 0);
    CHECK(field_of(schema, "levels[", &f) == EVRING_E_INVALID && strstr(evring_last_error(), "bad field path") != NULL);
    f.struct_size = sizeof f;
    CHECK(evring_schema_field(schema, 9, "id", &f) == EVRING_E_INVALID);
    CHECK(strstr(evring_last_error(), "schema 'cfields' has no event type 9 (its types: 1 RECORD_ERROR, 2 ORDER, 3 PING)") != NULL);
    CHECK(evring_schema_trailing(schema, 2, 2, &f) == EVRING_E_INVALID);
    CHECK(strstr(evring_last_error(), "has 2 trailing arrays; there is no array 2") != NULL);
    evring_field zero;
    memset(&zero, 0, sizeof zero);
    CHECK(evring_schema_field(schema, 2, "id", &zero) == EVRING_E_INVALID);
    CHECK(strstr(evring_last_error(), "evring_field.struct_size is 0") != NULL);
}

static void check_event_types(const evring_schema* schema) {
    evring_event_type_info t = {.struct_size = sizeof t};
    CHECK(evring_schema_event_by_name(schema, "ORDER", &t) == EVRING_OK);
    CHECK(t.number == 2 && t.fixed_size == 80 && t.trailing_arrays == 2 && strcmp(t.name, "ORDER") == 0);
    CHECK(t.struct_size == sizeof t);
    CHECK(evring_schema_event_by_number(schema, 3, &t) == EVRING_OK);
    CHECK(t.number == 3 && t.fixed_size == 0 && t.trailing_arrays == 0 && strcmp(t.name, "PING") == 0);
    CHECK(evring_schema_event_by_name(schema, "ORDR", &t) == EVRING_E_INVALID);
    CHECK(strstr(evring_last_error(), "has no event type 'ORDR' (its types: 1 RECORD_ERROR, 2 ORDER, 3 PING)") != NULL);
    CHECK(evring_schema_event_by_number(schema, 7, &t) == EVRING_E_INVALID);
    CHECK(evring_schema_event_by_name(NULL, "ORDER", &t) == EVRING_E_INVALID);
}

static void put(unsigned char* payload, const evring_schema* schema, const char* path, const void* value, size_t size) {
    evring_field f = {.struct_size = sizeof f};
    if (evring_schema_field(schema, 2, path, &f) != EVRING_OK || f.size != size) abort();
    memcpy(payload + f.offset, value, size);
}

/* A payload built from the writer's answers alone is accepted by the checked
 * write and decodes, by the library's decoder, to the values put in; read back
 * through the source's answers (a trailing element placed by the counts) it
 * gives them again. */
static void test_a_payload_built_and_read_by_field_lookups(void) {
    evring_writer* w = writer_with("build", kSchema);
    CHECK(w != NULL);
    const evring_schema* ws = evring_writer_schema(w);
    CHECK(ws != NULL);
    check_event_types(ws);
    check_fields(ws);

    unsigned char payload[80 + 2 * 8 + 3];
    memset(payload, 0, sizeof payload);
    const uint64_t id = 77;
    const int8_t exponent = -4;
    const uint32_t level2 = 9000;
    const uint8_t legs = 2;
    const uint16_t note = 3;
    put(payload, ws, "id", &id, 8);
    put(payload, ws, "px.exponent", &exponent, 1);
    put(payload, ws, "levels[2]", &level2, 4);
    put(payload, ws, "sym", "ACME\0\0\0\0", 8);
    put(payload, ws, "n_legs", &legs, 1);
    put(payload, ws, "n_note", &note, 2);
    const uint16_t venue = 31;
    memcpy(payload + 80 + 8 + 4, &venue, 2); /* legs[1].venue */
    memcpy(payload + 80 + 16, "hi!", 3);
    uint64_t seqno = 0;
    CHECK(evring_writer_record(w, 2, payload, sizeof payload, NULL, &seqno) == EVRING_OK && seqno == 1);

    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    const evring_schema* rs = evring_source_schema(s);
    CHECK(rs != NULL && rs != ws); /* the ring's own (embedded) schema, with the same answers */
    check_fields(rs);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT && item.payload_size == sizeof payload);
    static char json[4096];
    size_t needed = 0;
    CHECK(evring_source_decode_json(s, 2, item.payload, item.payload_size, json, sizeof json, &needed) == EVRING_OK);
    CHECK(strstr(json, "\"id\":77") != NULL && strstr(json, "\"exponent\":-4") != NULL);
    CHECK(strstr(json, "\"levels\":[0,0,9000]") != NULL && strstr(json, "\"sym\":\"ACME\"") != NULL);
    CHECK(strstr(json, "{\"qty\":0,\"venue\":31}]") != NULL && strstr(json, "\"note\":\"0x686921\"") != NULL);

    evring_field venue_field = {.struct_size = sizeof venue_field};
    evring_field legs_array = {.struct_size = sizeof legs_array};
    CHECK(evring_schema_field(rs, 2, "legs[1].venue", &venue_field) == EVRING_OK);
    CHECK(evring_schema_trailing(rs, 2, 0, &legs_array) == EVRING_OK);
    const unsigned char* bytes = item.payload;
    uint8_t count = 0;
    memcpy(&count, bytes + legs_array.count_offset, legs_array.count_size);
    CHECK(count == 2 && venue_field.element_index < count);
    uint16_t got = 0;
    memcpy(&got, bytes + 80 + venue_field.element_index * venue_field.trailing_element_size + venue_field.offset, 2);
    CHECK(got == 31);
    evring_source_close(s);
    evring_writer_close(w);
}

/* No schema, no handle: a writer or source without a schema answers NULL. */
static void test_without_a_schema_there_is_no_schema_handle(void) {
    evring_writer* w = writer_with("none", NULL);
    CHECK(w != NULL && evring_writer_schema(w) == NULL);
    evring_source* s = evring_source_open(evring_writer_path(w), NULL);
    CHECK(s != NULL && evring_source_schema(s) == NULL);
    CHECK(evring_source_schema(NULL) == NULL && evring_writer_schema(NULL) == NULL);
    evring_source_close(s);
    evring_writer_close(w);
}

/* A real execution ring: BLOCK_START's block number and gas limit through
 * the built-in schema (the values tests/python/test_snapshots.py checks). */
static void test_fields_of_a_real_snapshot(void) {
    const char* dir = getenv("EVRING_CONFORMANCE_DIR");
    if (dir == NULL) {
        printf("SKIP test_fields_of_a_real_snapshot: EVRING_CONFORMANCE_DIR is not set\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/emn-1b-15m.snapshot.zst", dir);
    evring_source* s = evring_source_open(path, NULL);
    CHECK(s != NULL && evring_source_seek_oldest(s) == EVRING_OK);
    const evring_schema* schema = evring_source_schema(s);
    CHECK(schema != NULL);
    evring_event_type_info start = {.struct_size = sizeof start};
    CHECK(evring_schema_event_by_name(schema, "BLOCK_START", &start) == EVRING_OK);
    evring_field number = {.struct_size = sizeof number};
    evring_field gas = {.struct_size = sizeof gas};
    CHECK(evring_schema_field(schema, start.number, "block_tag.block_number", &number) == EVRING_OK);
    CHECK(evring_schema_field(schema, start.number, "eth_block_input.gas_limit", &gas) == EVRING_OK);
    CHECK(number.scalar == EVRING_SCALAR_U64 && gas.scalar == EVRING_SCALAR_U64);
    evring_item item = {.struct_size = sizeof item};
    CHECK(evring_source_next(s, &item, EVRING_READ_PAYLOAD) == EVRING_STEP_EVENT);
    CHECK(item.event.event_type == start.number && item.payload_size >= start.fixed_size);
    uint64_t n = 0, g = 0;
    memcpy(&n, (const char*)item.payload + number.offset, 8);
    memcpy(&g, (const char*)item.payload + gas.offset, 8);
    CHECK(n == 15000001 && g == 30000000);
    evring_source_close(s);
}

int main(void) {
    test_a_payload_built_and_read_by_field_lookups();
    test_without_a_schema_there_is_no_schema_handle();
    test_fields_of_a_real_snapshot();
    return c_check_end("all C field lookup tests passed");
}
