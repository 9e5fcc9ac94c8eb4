// char[N] strings (docs/schema.md, "Strings"): parsed, hashed canonically,
// shown as text in JSON and text lines with every unsafe byte escaped; and
// the hashes of the schemas evring ships, pinned so that no change to the
// language moves them unnoticed.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "evring/schema/schema.hpp"
#include "evring/schema/schema_render.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

Result<Schema> parse(const std::string& fields) {
    return Schema::parse("content_type = 600\ncontent_name = \"s\"\n[[event]]\nnumber = 2\nname = \"E\"\n"
                         "fields = [" + fields + "]\n", "s.toml");
}

std::string error_of(const std::string& fields) {
    auto s = parse(fields);
    return s ? std::string("(parsed)") : s.error().message();
}

TEST(SchemaString, CharArraysAreStringsOfTheirLength) {
    auto s = parse(R"({ name = "n", type = "u8" }, { name = "sym", type = "char[5]" }, { name = "x", type = "u16" })");
    ASSERT_TRUE(s) << s.error().message();
    const SchemaStruct* p = s->payload_of(*s->event("E"));
    ASSERT_EQ(p->fields.size(), 3u);
    EXPECT_EQ(s->type(p->fields[1].type).kind, TypeKind::String);
    EXPECT_EQ(p->fields[1].offset, 1u);
    EXPECT_EQ(p->fields[2].offset, 6u);  // alignment 1: the u16 follows at its own alignment
    EXPECT_EQ(s->type_name(p->fields[1].type), "char[5]");
    EXPECT_NE(s->canonical_form().find("field 1 sym char[5]\n"), std::string::npos) << s->canonical_form();
    auto other = parse(R"({ name = "n", type = "u8" }, { name = "sym", type = "bytes5" }, { name = "x", type = "u16" })");
    ASSERT_TRUE(other);
    EXPECT_NE(other->hash(), s->hash());  // a string is not the same bytes type
}

TEST(SchemaString, BadLengthsAreRefusedWithAReason) {
    EXPECT_NE(error_of(R"({ name = "a", type = "char" })").find("'char' needs a length: char[N]"), std::string::npos);
    EXPECT_NE(error_of(R"({ name = "a", type = "char[0]" })").find("array length 0"), std::string::npos);
    EXPECT_NE(error_of(R"({ name = "a", type = "char[4294967296]" })").find("over 2^32-1"), std::string::npos);
    EXPECT_EQ(error_of(R"({ name = "a", type = "char[2147483648]" })"), "(parsed)");  // 2^31: within the 32-bit size
}

// A trailing char[count] is a string of `count` bytes (evring_assembled's
// json field, lib/record/assembled_schema.hpp): its own canonical element,
// shown as text like char[N], refused as one value by field paths.
TEST(SchemaString, TrailingCharArraysAreStringsOfTheirCount) {
    auto s = parse(R"({ name = "n", type = "u32" }, { name = "text", type = "char[n]" })");
    ASSERT_TRUE(s) << s.error().message();
    const SchemaStruct* p = s->payload_of(*s->event("E"));
    ASSERT_EQ(p->trailing.size(), 1u);
    EXPECT_TRUE(p->trailing[0].text);
    EXPECT_FALSE(p->trailing[0].bytes);
    EXPECT_NE(s->canonical_form().find("trailing text char count n\n"), std::string::npos) << s->canonical_form();
    auto other = parse(R"({ name = "n", type = "u32" }, { name = "text", type = "bytes[n]" })");
    ASSERT_TRUE(other);
    EXPECT_NE(other->hash(), s->hash());
    auto render = [&](std::string body, bool json) {
        test::PayloadBytes payload(0);
        payload.put(0, static_cast<std::uint32_t>(body.size()));
        payload.append(body);
        std::string out;
        const DecodeError e = json ? append_fields_json(*s, 2, payload.span(), out)
                                   : append_event_text(*s, 2, payload.span(), out);
        EXPECT_TRUE(e.ok());
        return out;
    };
    EXPECT_EQ(render(R"({"a":[1,2]})", true), R"({"n":11,"text":"{\"a\":[1,2]}"})");
    EXPECT_EQ(render("ab", false), R"(E n=2 text="ab")");
    EXPECT_EQ(render("", true), R"({"n":0,"text":""})");
    EXPECT_EQ(render(std::string("a\0b", 3), true), R"({"n":3,"text":"a"})");  // up to the first NUL, as char[N]
}

TEST(SchemaString, DecodesAsTextWithUnsafeBytesEscaped) {
    auto s = parse(R"({ name = "sym", type = "char[8]" })");
    ASSERT_TRUE(s);
    auto json_of = [&](std::string bytes) {
        bytes.resize(8, '\0');
        test::PayloadBytes p(0);
        p.append(bytes);
        std::string out;
        EXPECT_TRUE(append_fields_json(*s, 2, p.span(), out).ok());
        return out;
    };
    auto text_of = [&](std::string bytes) {
        bytes.resize(8, '\0');
        test::PayloadBytes p(0);
        p.append(bytes);
        std::string out;
        EXPECT_TRUE(append_event_text(*s, 2, p.span(), out).ok());
        return out;
    };
    EXPECT_EQ(json_of("ACME"), R"({"sym":"ACME"})");
    EXPECT_EQ(text_of("ACME"), R"(E sym="ACME")");
    EXPECT_EQ(json_of("FULLNAME"), R"({"sym":"FULLNAME"})");     // no NUL: all 8 bytes
    EXPECT_EQ(json_of(std::string("A\0B", 3)), R"({"sym":"A"})");  // up to the first NUL
    EXPECT_EQ(json_of(""), R"({"sym":""})");
    EXPECT_EQ(json_of("a\"b\\c"), R"({"sym":"a\"b\\c"})");
    EXPECT_EQ(text_of("a\"b c"), R"(E sym="a\"b c")");
    EXPECT_EQ(json_of("\x1b[2J"), R"({"sym":"\u001b[2J"})");  // a terminal escape never goes out raw
    EXPECT_EQ(text_of("\x1b[2J\x7f"), R"(E sym="\x1b[2J\x7f")");
    EXPECT_EQ(json_of("\xc3\xa9t\xc3\xa9"), "{\"sym\":\"\xc3\xa9t\xc3\xa9\"}");  // valid UTF-8 passes
    EXPECT_EQ(json_of("\xff\xc3"), R"({"sym":"\ufffd\ufffd"})");             // invalid: U+FFFD each
    EXPECT_EQ(text_of("\xed\xa0\x80"), R"(E sym="\xed\xa0\x80")");            // a surrogate is not UTF-8
    EXPECT_EQ(json_of("\xf0\x9f\x98\x80"), "{\"sym\":\"\xf0\x9f\x98\x80\"}");  // 4 bytes, U+1F600
}

// The hashes of the schemas evring ships. The Monad schemas' and the tests'
// orders.toml did not change when char[N] came; demo.toml's did, with its
// layout; the Monad schemas' own hashes changed when their block span gained
// label, id, opener and stages (docs/schema.md says why, for both).
TEST(SchemaString, ShippedSchemasHashAsDocumented) {
    const char* dir = std::getenv("EVRING_SCHEMAS_DIR");
    if (dir == nullptr) GTEST_SKIP() << "EVRING_SCHEMAS_DIR is not set (meson sets it to schemas/)";
    const std::pair<const char*, const char*> expected[] = {
        {"monad-exec-v1.toml", "40599a273bf765a47146d3ad0937045bf8bf3c92e5ea3e9864b0ca522105b50d"},
        {"monad-exec-old.toml", "3163401190df4f40f26fd961373809a298bef6a1a20ac779789fe9179b62c2ae"},
        {"demo.toml", "aac3c0a02637f7fc8be91c64791e30a130e257ff2d3b6e985d692437e3b95df1"},
    };
    for (const auto& [file, hash] : expected) {
        auto s = Schema::parse_file(std::string(dir) + "/" + file);
        ASSERT_TRUE(s) << s.error().message();
        EXPECT_EQ(s->hash_hex(), hash) << file;
    }
    EXPECT_EQ(test::load_test_schema("orders.toml").hash_hex(),
              "b802891c8d4964ed865ebc7d1c7055222e453ef6e0a94ece3d9dbccdf23c9d7b");
}

}  // namespace
}  // namespace evring
