// The schema language: what parses, the layouts it gives (C rules), and the
// FILE:LINE:COLUMN errors for what does not.
#include "evring/schema/schema.hpp"

#include <string>

#include <gtest/gtest.h>

namespace evring {
namespace {

const std::string kHeader = "content_type = 1001\ncontent_name = \"t\"\n";  // lines 1-2

Schema parse_ok(const std::string& body) {
    auto schema = Schema::parse(kHeader + body, "t.toml");
    EXPECT_TRUE(schema.ok()) << schema.error().message();
    if (!schema) std::abort();
    return std::move(schema).value();
}

std::string error_of(const std::string& text) {
    auto schema = Schema::parse(text, "t.toml");
    EXPECT_FALSE(schema.ok()) << "parsed:\n" << text;
    return schema ? std::string() : schema.error().message();
}

// An error at LINE:COLUMN whose reason contains `reason`.
void expect_error(const std::string& body, int line, int column, const std::string& reason) {
    const std::string message = error_of(kHeader + body);
    const std::string where = "t.toml:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
    EXPECT_EQ(message.substr(0, where.size()), where) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
}

const SchemaStruct& payload(const Schema& s, const char* event) {
    return *s.payload_of(*s.event(event));
}

TEST(SchemaLayout, FollowsCRulesForScalarsPaddingAndTailPadding) {
    const Schema s = parse_ok(R"([[event]]
number = 2
name = "E"
fields = [
  { name = "a", type = "u8" },
  { name = "b", type = "u32" },
  { name = "c", type = "u16" },
  { name = "d", type = "f64" },
  { name = "e", type = "i8" },
]
)");
    const SchemaStruct& p = payload(s, "E");
    EXPECT_EQ(p.name, "e");  // an inline payload is named after its event
    ASSERT_EQ(p.fields.size(), 5u);
    EXPECT_EQ(p.fields[0].offset, 0u);
    EXPECT_EQ(p.fields[1].offset, 4u);
    EXPECT_EQ(p.fields[2].offset, 8u);
    EXPECT_EQ(p.fields[3].offset, 16u);
    EXPECT_EQ(p.fields[4].offset, 24u);
    EXPECT_EQ(p.align, 8u);
    EXPECT_EQ(p.size, 32u);  // 25 rounded up to the alignment
}

TEST(SchemaLayout, WideIntegersBytesAndOddSizedStructsMatchTheMonadLayouts) {
    const Schema s = parse_ok(R"([[event]]
number = 2
name = "E"
payload = "block"

[struct.pubkey]
fields = [{ name = "y_parity", type = "u8" }, { name = "x", type = "bytes32" }]

[struct.block]
fields = [
  { name = "n",      type = "u64" },
  { name = "time",   type = "u128" },
  { name = "chain",  type = "u256" },
  { name = "author", type = "pubkey" },
  { name = "parent", type = "bytes32" },
  { name = "who",    type = "address" },
  { name = "next",   type = "u64" },
]
)");
    const SchemaStruct& key = *s.find_struct("pubkey");
    EXPECT_EQ(key.size, 33u);
    EXPECT_EQ(key.align, 1u);
    const SchemaStruct& b = payload(s, "E");
    EXPECT_EQ(b.fields[1].offset, 16u);  // u128 is aligned to 16
    EXPECT_EQ(b.fields[2].offset, 32u);  // u256 is four u64 limbs: aligned to 8
    EXPECT_EQ(s.type(b.fields[2].type).align, 8u);
    EXPECT_EQ(b.fields[3].offset, 64u);
    EXPECT_EQ(b.fields[4].offset, 97u);
    EXPECT_EQ(b.fields[5].offset, 129u);
    EXPECT_EQ(b.fields[6].offset, 152u);
    EXPECT_EQ(b.align, 16u);
    EXPECT_EQ(b.size, 160u);
    EXPECT_EQ(s.type_name(b.fields[5].type), "address");
    EXPECT_EQ(s.type_name(b.fields[4].type), "bytes32");
}

TEST(SchemaLayout, ArraysEnumsAlignAndPaddingEntries) {
    const Schema s = parse_ok(R"([[event]]
number = 2
name = "E"
fields = [
  { name = "kind",  type = "k" },
  { name = "v",     type = "u16[3]" },
  { padding = 5 },
  { name = "w",     type = "u32", offset = 16 },
  { name = "x",     type = "u8", align = 8 },
  { name = "pairs", type = "pair[2]" },
]

[enum.k]
type = "i16"
values = { A = -1, B = 2 }

[struct.pair]
align = 4
fields = [{ name = "a", type = "u8" }, { name = "b", type = "u8" }]
)");
    const SchemaStruct& p = payload(s, "E");
    EXPECT_EQ(p.fields[1].offset, 2u);
    EXPECT_EQ(s.type(p.fields[1].type).size, 6u);
    EXPECT_EQ(p.fields[2].offset, 16u);  // 8 + 5 bytes of padding, aligned to 4
    EXPECT_EQ(p.fields[3].offset, 24u);  // align = 8
    EXPECT_EQ(s.find_struct("pair")->size, 4u);
    EXPECT_EQ(p.fields[4].offset, 28u);
    EXPECT_EQ(p.size, 40u);
    EXPECT_EQ(s.type_name(p.fields[4].type), "pair[2]");
    const SchemaEnum& k = *s.find_enum("k");
    EXPECT_EQ(k.name_of(static_cast<std::uint64_t>(-1)), "A");
    EXPECT_EQ(k.name_of(2), "B");
    EXPECT_EQ(k.name_of(3), "");
}

TEST(SchemaLayout, TrailingArraysReadTheirCountFromAnEarlierFieldByPath) {
    const Schema s = parse_ok(R"([[event]]
number = 2
name = "E"
fields = [
  { name = "h",    type = "hdr" },
  { name = "n",    type = "u8" },
  { name = "data", type = "bytes[h.len]" },
  { name = "more", type = "u32[n]" },
]

[struct.hdr]
fields = [{ name = "tag", type = "u16" }, { name = "len", type = "u64" }]
)");
    const SchemaStruct& p = payload(s, "E");
    ASSERT_EQ(p.trailing.size(), 2u);
    EXPECT_TRUE(p.trailing[0].bytes);
    EXPECT_EQ(p.trailing[0].count_offset, 8u);
    EXPECT_EQ(p.trailing[0].count_scalar, Scalar::U64);
    EXPECT_FALSE(p.trailing[1].bytes);
    EXPECT_EQ(p.trailing[1].count_offset, 16u);
    EXPECT_EQ(p.trailing[1].count_path, "n");
    EXPECT_EQ(p.size, 24u);
}

TEST(SchemaLookup, EventsFieldsFlowTagsAndHashes) {
    const std::string foreign = "8933f907c432c98ac0c8db62f9aa164c0c3f1672f41290e4ea3408df6c6723f3";
    const Schema s = parse_ok(R"(flow_tags = ["block", "", "txn"]
describes = [")" + foreign + R"("]

[[event]]
number = 7
name = "SEVEN"
payload = "outer"

[[event]]
number = 3
name = "THREE"

[struct.inner]
fields = [{ name = "a", type = "u32" }, { name = "b", type = "u64" }]

[struct.outer]
fields = [{ name = "x", type = "u8" }, { name = "in", type = "inner" }]
)");
    ASSERT_EQ(s.events().size(), 2u);
    EXPECT_EQ(s.events()[0].number, 3);  // by number, whatever the file order
    EXPECT_EQ(s.event(7)->name, "SEVEN");
    EXPECT_EQ(s.event("THREE")->number, 3);
    EXPECT_EQ(s.event(4), nullptr);
    EXPECT_EQ(s.event(60000), nullptr);
    EXPECT_EQ(s.event("NOPE"), nullptr);
    EXPECT_EQ(s.payload_of(*s.event(3)), nullptr);
    EXPECT_EQ(s.fixed_size(*s.event(3)), 0u);
    auto b = s.find_field(*s.event(7), "in.b");
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->offset, 16u);
    EXPECT_EQ(s.type(b->type).scalar, Scalar::U64);
    EXPECT_FALSE(s.find_field(*s.event(7), "in.c").has_value());
    EXPECT_FALSE(s.find_field(*s.event(7), "x.y").has_value());
    EXPECT_EQ(s.flow_tag("txn"), 2u);
    EXPECT_FALSE(s.flow_tag("").has_value());
    EXPECT_FALSE(s.flow_tag("nope").has_value());
    EXPECT_TRUE(s.matches(s.hash()));
    EXPECT_TRUE(s.matches(*parse_schema_hash(foreign)));
    SchemaHash other{};
    EXPECT_FALSE(s.matches(other));
    EXPECT_EQ(s.source_name(), "t.toml");
    EXPECT_EQ(schema_hash_hex(*parse_schema_hash(foreign)), foreign);
    EXPECT_FALSE(parse_schema_hash("12").has_value());
    EXPECT_FALSE(parse_schema_hash(std::string(63, '0') + "g").has_value());
}

// One rule for event type names everywhere (--type, --where, the C ABI,
// Python): exact, else the one name equal ignoring case.
TEST(SchemaLookup, EventNamesExactElseTheOneEqualIgnoringCase) {
    const Schema s = parse_ok(R"(
[[event]]
number = 1
name = "Trade"

[[event]]
number = 2
name = "TRADE"

[[event]]
number = 3
name = "QUOTE"
)");
    EXPECT_EQ(s.event("Trade")->number, 1u);
    EXPECT_EQ(s.event("TRADE")->number, 2u);
    EXPECT_EQ(s.event("trade"), nullptr);  // two names differ only in case: only exact ones match
    EXPECT_EQ(s.event("quote")->number, 3u);
    EXPECT_EQ(s.event("Quote")->number, 3u);
    EXPECT_EQ(s.event("QUOTES"), nullptr);
}

TEST(SchemaErrors, DuplicateNamesAndNumbersNameBothPlaces) {
    expect_error("[[event]]\nnumber = 2\nname = \"A\"\n[[event]]\nnumber = 2\nname = \"B\"\n", 7, 10,
                 "duplicate event number 2 (also at line 4)");
    expect_error("[[event]]\nnumber = 2\nname = \"A\"\n[[event]]\nnumber = 3\nname = \"A\"\n", 8, 8,
                 "duplicate event name 'A' (also at line 5)");
    expect_error("[[event]]\nnumber = 2\nname = \"A\"\nfields = [{ name = \"x\", type = \"u8\" }, "
                 "{ name = \"x\", type = \"u8\" }]\n",
                 6, 49, "duplicate field name 'x'");
    expect_error("[enum.e]\ntype = \"u8\"\nvalues = { A = 1, B = 1 }\n", 5, 23, "duplicate value 1 in enum 'e'");
    expect_error("[enum.x]\ntype = \"u8\"\nvalues = { A = 1 }\n[struct.x]\nfields = [{ name = \"a\", type = \"u8\" }]\n",
                 6, 1, "duplicate type name 'x'");
    expect_error("[struct.u64]\nfields = [{ name = \"a\", type = \"u8\" }]\n", 3, 1, "'u64' is a built-in type");
    // TOML itself refuses a key given twice, with its position.
    expect_error("[struct.s]\nfields = []\n[struct.s]\n", 5, 1, "");
}

TEST(SchemaErrors, OverlappingMisalignedAndUnexplainedGapsInPinnedOffsets) {
    const std::string start = "[[event]]\nnumber = 2\nname = \"E\"\nfields = [\n  { name = \"a\", type = \"u32\" },\n";
    expect_error(start + "  { name = \"b\", type = \"u32\", offset = 2 },\n]\n", 8, 40,
                 "field 'b' pins offset 2, overlapping field 'a' which ends at 4");
    expect_error(start + "  { name = \"b\", type = \"u32\", offset = 6 },\n]\n", 8, 40,
                 "field 'b' pins offset 6, which is misaligned: its alignment is 4");
    expect_error(start + "  { name = \"b\", type = \"u32\", offset = 8 },\n]\n", 8, 40,
                 "C layout puts it at 4 after field 'a'; write { padding = 4 }");
    expect_error(start + "  { name = \"b\", type = \"u32\", size = 8 },\n]\n", 8, 38,
                 "field 'b' is 4 bytes (u32), but pins size 8");
    expect_error(start + "  { name = \"b\", type = \"u64\", align = 2 },\n]\n", 8, 39, "packed");
    expect_error("[struct.s]\nsize = 12\nfields = [{ name = \"a\", type = \"u64\" }]\n", 4, 8,
                 "struct 's' is 8 bytes by C layout rules (fields end at 8, alignment 8), but pins size 12");
}

TEST(SchemaErrors, TrailingArraysNeedAnEarlierUnsignedCountAndComeLast) {
    const std::string start = "[[event]]\nnumber = 2\nname = \"E\"\nfields = [\n";
    expect_error(start + "  { name = \"d\", type = \"bytes[n]\" },\n]\n", 7, 24,
                 "the count field 'n' of trailing array 'd' is missing from struct 'e'");
    expect_error(start + "  { name = \"d\", type = \"bytes[n]\" },\n  { name = \"n\", type = \"u8\" },\n]\n", 7, 24,
                 "the count field 'n' of trailing array 'd' follows it");
    expect_error(start + "  { name = \"n\", type = \"u8\" },\n  { name = \"d\", type = \"bytes[n]\" },\n"
                         "  { name = \"z\", type = \"u8\" },\n]\n",
                 9, 3, "a fixed field follows trailing array 'd'");
    expect_error(start + "  { name = \"n\", type = \"i32\" },\n  { name = \"d\", type = \"bytes[n]\" },\n]\n", 8, 24,
                 "must be u8, u16, u32 or u64");
    expect_error(start + "  { name = \"h\", type = \"t\" },\n]\n[[event]]\nnumber = 3\nname = \"T\"\npayload = \"t\"\n"
                         "[struct.t]\nfields = [{ name = \"n\", type = \"u8\" }, { name = \"d\", type = \"bytes[n]\" }]\n",
                 7, 24, "struct 't' has trailing arrays, so it can only be an event's payload");
    expect_error(start + "  { name = \"n\", type = \"u8\" },\n  { name = \"d\", type = \"bytes[n]\", offset = 8 },\n]\n", 8,
                 36, "unknown key 'offset' in a trailing array");
}

TEST(SchemaErrors, SizesOver32BitsUnknownTypesAndBadTypeSyntax) {
    const std::string start = "[[event]]\nnumber = 2\nname = \"E\"\nfields = [\n";
    expect_error(start + "  { name = \"a\", type = \"u8[4294967296]\" },\n]\n", 7, 24, "is over 2^32-1");
    expect_error(start + "  { name = \"a\", type = \"u64[600000000]\" },\n]\n", 7, 24, "over 2^32-1 bytes");
    expect_error(start + "  { name = \"a\", type = \"bytes4294967295\" },\n  { name = \"b\", type = \"u8\" },\n]\n", 8, 24,
                 "larger than 2^32-1 bytes");
    expect_error(start + "  { name = \"a\", type = \"u9\" },\n]\n", 7, 24, "unknown type 'u9'");
    expect_error(start + "  { name = \"a\", type = \"u8[2][3]\" },\n]\n", 7, 24, "for arrays of arrays, use a struct");
    expect_error(start + "  { name = \"a\", type = \"u8[0]\" },\n]\n", 7, 24, "array length 0");
    expect_error(start + "  { name = \"a\", type = \"bytes\" },\n]\n", 7, 24, "'bytes' needs a length");
    expect_error(start + "  { name = \"a\", tpye = \"u8\" },\n]\n", 7, 17, "unknown key 'tpye' in a field");
    expect_error(start + "  { name = \"a\" },\n]\n", 7, 3, "a field has no 'type'");
}

TEST(SchemaErrors, StructsThatContainThemselvesOrNestTooDeep) {
    expect_error("[struct.a]\nfields = [{ name = \"b\", type = \"b\" }]\n[struct.b]\nfields = [{ name = \"a\", "
                 "type = \"a[2]\" }]\n",
                 6, 32, "struct 'a' contains itself");
    std::string deep;
    for (int i = 0; i < 40; ++i)
        deep += "[struct.s" + std::to_string(i) + "]\nfields = [{ name = \"x\", type = \"" +
                (i == 39 ? std::string("u8") : "s" + std::to_string(i + 1)) + "\" }]\n";
    const std::string message = error_of(kHeader + deep);
    EXPECT_NE(message.find("more than 32 levels deep"), std::string::npos) << message;
}

TEST(SchemaErrors, TopLevelValuesAreChecked) {
    expect_error("payload_alignment = 8\n[[event]]\nnumber = 2\nname = \"E\"\nfields = [{ name = \"a\", type = \"u128\" }]\n",
                 4, 1, "aligned to 16, more than payload_alignment 8");
    expect_error("payload_alignment = 12\n", 3, 21, "not a power of two");
    expect_error("[[event]]\nnumber = 0\nname = \"E\"\n", 4, 10, "event number 0 is out of range (1..65535)");
    expect_error("[[event]]\nnumber = 65536\nname = \"E\"\n", 4, 10, "out of range");
    expect_error("[[event]]\nnumber = 2\nname = \"2E\"\n", 5, 8, "event name '2E' is not a name");
    expect_error("[[event]]\nnumber = 2\nname = \"E\"\ndescription = \"two\\nlines\"\n", 6, 15, "must be one line");
    expect_error("[enum.e]\ntype = \"u8\"\nvalues = { A = 256 }\n", 5, 16, "value of A 256 is out of range (0..255)");
    expect_error("[enum.e]\ntype = \"f32\"\nvalues = { A = 1 }\n", 4, 8, "an enum's type is u8..u64 or i8..i64");
    expect_error("flow_tags = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n", 3, 34, "only four flow tags");
    expect_error("flow_tags = [\"a\", \"a\"]\n", 3, 19, "duplicate flow tag name 'a'");
    expect_error("describes = [\"1234\"]\n", 3, 14, "64 hex digits");
    expect_error("colour = 3\n", 3, 1, "unknown key 'colour' in the schema");
    expect_error("[[event]]\nnumber = 2\nname = \"E\"\n[span.s]\nbegin = \"E\"\nend = \"F\"\n", 8, 7, "unknown event 'F'");
    expect_error("[[event]]\nnumber = 2\nname = \"E\"\n[[event]]\nnumber = 3\nname = \"F\"\n[span.s]\nbegin = \"E\"\n"
                 "end = \"F\"\nkey = [\"nope\"]\n",
                 12, 8, "'nope' is not one of the schema's flow_tags");
    const std::string missing = error_of("content_name = \"t\"\n");
    EXPECT_NE(missing.find("t.toml:1:1: the schema has no 'content_type'"), std::string::npos) << missing;
}

TEST(SchemaErrors, ControlCharactersAreRefusedWhereTheyAre) {
    EXPECT_EQ(error_of(kHeader + "[[\x01]]\n"), "t.toml:3:3: control character U+0001 (TOML allows only tab, CR and LF)");
    EXPECT_EQ(error_of(kHeader + "# caf\xc3\xa9 \x7f\n"), "t.toml:3:8: control character U+007F (TOML allows only tab, CR and LF)");
    EXPECT_EQ(error_of(std::string("content_type = 1\0", 17)), "t.toml:1:17: control character U+0000 (TOML allows only tab, CR and LF)");
}

TEST(SchemaErrors, NonAsciiIsAllowedInStringsAndCommentsOnly) {
    // Descriptions in every string form, with quotes, escapes and # inside them.
    const Schema s = parse_ok("# caf\xc3\xa9 comment\ndescription = \"pr\xc3\xa9 \\\"#\\\" \xe2\x82\xac\"  # \xc3\xa9\n"
                              "[[event]]\nnumber = 2\nname = \"E\"\ndescription = '\xc3\xa9 # \"'\n"
                              "[[event]]\nnumber = 3\nname = \"F\"\ndescription = \"\"\n"
                              "[enum.e]\ntype = \"u8\"\ndescription = \"\"\"caf\xc3\xa9 \"quoted\"\"\"\"\"\n"
                              "values = { A = 1 }\n[enum.f]\ntype = \"u8\"\ndescription = '''x''y'''''\nvalues = { B = 1 }\n");
    EXPECT_EQ(s.description(), "pr\xc3\xa9 \"#\" \xe2\x82\xac");
    EXPECT_EQ(s.find_enum("e")->doc, "caf\xc3\xa9 \"quoted\"\"");
    EXPECT_EQ(s.find_enum("f")->doc, "x''y''");
    EXPECT_EQ(error_of(kHeader + "x = \xcb\x89\n"), "t.toml:3:5: a non-ASCII character outside a string or comment");
    EXPECT_EQ(error_of(kHeader + "[[ev\xc3\xa9nt]]\n"), "t.toml:3:5: a non-ASCII character outside a string or comment");
    EXPECT_EQ(error_of(kHeader + "d = \"\xc3\xa9\" \xc3\xa9\n"), "t.toml:3:9: a non-ASCII character outside a string or comment");
}

TEST(SchemaErrors, AQuoteWhereNoStringCanStartIsRefused) {
    EXPECT_EQ(error_of(kHeader + "x = 0\"a\xef\xbb\xbb\"\n"), "t.toml:3:6: a quote where no string can start");
    EXPECT_EQ(error_of(kHeader + "x = \"a\"\"b\"\n"), "t.toml:3:8: a quote where no string can start");
    // Quoted keys, dotted keys, arrays over lines with comments and inline tables are strings.
    const Schema s = parse_ok("\"description\" = \"d\"\nflow_tags = [ # first\n  \"a\",\n  'b' ]\n"
                              "[[event]]\nnumber = 2\nname = \"E\"\nfields = [{ \"name\" = \"x\", type = \"u8\" }]\n"
                              "[ struct . \"s\" ]\nfields = [{ name = \"a\", type = \"u8\" }]\n");
    EXPECT_EQ(s.description(), "d");
    EXPECT_EQ(s.flow_tags()[1], "b");
    EXPECT_NE(s.find_struct("s"), nullptr);
}

TEST(SchemaLayout, SixtyFourBitEnumsTakeTheWholeSignedRange) {
    const Schema s = parse_ok("[enum.e]\ntype = \"i64\"\nvalues = { MIN = -9223372036854775808, MAX = 9223372036854775807 }\n"
                              "[enum.u]\ntype = \"u64\"\nvalues = { TOP = 9223372036854775807 }\n");
    EXPECT_EQ(s.find_enum("e")->name_of(0x8000000000000000ull), "MIN");
    EXPECT_EQ(s.find_enum("e")->values.front().name, "MIN");  // by numeric value
    EXPECT_EQ(s.find_enum("u")->name_of(0x7fffffffffffffffull), "TOP");
    expect_error("[enum.e]\ntype = \"i8\"\nvalues = { A = -129 }\n", 5, 16, "out of range (-128..127)");
}

TEST(SchemaErrors, TomlSyntaxErrorsKeepTheirPosition) {
    const std::string message = error_of(kHeader + "[[event]]\nnumber = = 2\n");
    EXPECT_EQ(message.substr(0, 11), "t.toml:4:10") << message;
}

TEST(SchemaErrors, MissingFileNamesTheFile) {
    auto schema = Schema::parse_file("/nonexistent/schema.toml");
    ASSERT_FALSE(schema.ok());
    EXPECT_NE(schema.error().message().find("/nonexistent/schema.toml"), std::string::npos);
}

}  // namespace
}  // namespace evring
