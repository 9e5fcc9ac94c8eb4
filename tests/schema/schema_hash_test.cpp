// The canonical form and the hash: every change that alters how bytes are
// read changes the hash; comments, descriptions, whitespace and order do not.
#include <openssl/sha.h>

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "evring/schema/schema.hpp"

namespace evring {
namespace {

const std::string kBase = R"(# base schema
content_type = 500
content_name = "feed"
description = "a feed"
payload_alignment = 16
flow_tags = ["symbol", "order"]
describes = ["8933f907c432c98ac0c8db62f9aa164c0c3f1672f41290e4ea3408df6c6723f3"]

[[event]]
number = 2
name = "TICK"
description = "a price"
payload = "tick"

[[event]]
number = 3
name = "PING"

[[event]]
number = 9
name = "PONG"

[enum.side]
type = "u8"
values = { BUY = 0, SELL = 1 }

[struct.tick]
fields = [
  { name = "price", type = "u64", doc = "in cents" },
  { name = "side",  type = "side" },
  { name = "who",   type = "address" },
  { name = "n",     type = "u16" },
  { name = "m",     type = "u16" },
  { name = "legs",  type = "u32[n]" },
]

[span.s]
begin = "TICK"
end = "PING"
key = ["symbol"]
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

SchemaHash hash_of(const std::string& text) {
    auto schema = Schema::parse(text, "h.toml");
    EXPECT_TRUE(schema.ok()) << schema.error().message() << "\n" << text;
    return schema ? schema->hash() : SchemaHash{};
}

struct Change {
    std::string what;
    std::string from;
    std::string to;
};

TEST(SchemaHash, IsSha256OfTheCanonicalForm) {
    auto schema = Schema::parse(kBase, "h.toml");
    ASSERT_TRUE(schema.ok());
    SchemaHash expected{};
    const std::string& canonical = schema->canonical_form();
    SHA256(reinterpret_cast<const unsigned char*>(canonical.data()), canonical.size(), expected.data());
    EXPECT_EQ(schema->hash(), expected);
    EXPECT_EQ(schema->hash_hex(), schema_hash_hex(expected));
}

TEST(SchemaHash, CanonicalFormIsTheDocumentedText) {
    auto schema = Schema::parse(kBase, "h.toml");
    ASSERT_TRUE(schema.ok());
    EXPECT_EQ(schema->canonical_form(),
              "evring-schema-canonical 1\n"
              "content_type 500 feed\n"
              "payload_alignment 16\n"
              "flow_tag 0 symbol\n"
              "flow_tag 1 order\n"
              "describes 8933f907c432c98ac0c8db62f9aa164c0c3f1672f41290e4ea3408df6c6723f3\n"
              "enum side u8\n"
              "value 0 BUY\n"
              "value 1 SELL\n"
              "struct tick size 40 align 8\n"
              "field 0 price u64\n"
              "field 8 side enum:side\n"
              "field 9 who bytes[20]\n"
              "field 30 n u16\n"
              "field 32 m u16\n"
              "trailing legs u32 count n\n"
              "event 2 TICK struct:tick\n"
              "event 3 PING -\n"
              "event 9 PONG -\n"
              "span s begin 2 end 3 key 0\n");
}

TEST(SchemaHash, EveryKindOfMeaningfulChangeChangesIt) {
    const SchemaHash base = hash_of(kBase);
    const Change changes[] = {
        {"content type number", "content_type = 500", "content_type = 501"},
        {"content type name", "content_name = \"feed\"", "content_name = \"feed2\""},
        {"payload alignment", "payload_alignment = 16", "payload_alignment = 8"},
        {"flow tag name", "[\"symbol\", \"order\"]", "[\"symbol\", \"orders\"]"},
        {"flow tag slot", "[\"symbol\", \"order\"]", "[\"symbol\", \"\", \"order\"]"},
        {"described hash", "6723f3\"]", "6723f3\", \"" + std::string(64, 'a') + "\"]"},
        {"event number", "number = 9", "number = 10"},
        {"event name", "name = \"PONG\"", "name = \"PANG\""},
        {"event payload", "name = \"PONG\"", "name = \"PONG\"\npayload = \"tick\""},
        {"enum value number", "SELL = 1", "SELL = 2"},
        {"enum value name", "SELL = 1", "SOLD = 1"},
        {"enum type", "type = \"u8\"", "type = \"i8\""},
        {"field name", "\"price\", type", "\"cost\", type"},
        {"field type", "type = \"u64\"", "type = \"i64\""},
        {"field alignment", "{ name = \"n\",     type = \"u16\" },", "{ name = \"n\", type = \"u16\", align = 4 },"},
        {"field order", "{ name = \"n\",     type = \"u16\" },\n  { name = \"m\",     type = \"u16\" },",
         "{ name = \"m\",     type = \"u16\" },\n  { name = \"n\",     type = \"u16\" },"},
        {"field offset", "{ name = \"n\",", "{ padding = 4 },\n  { name = \"n\","},
        {"array length", "type = \"address\"", "type = \"bytes21\""},
        {"trailing element", "u32[n]", "u16[n]"},
        {"trailing count", "u32[n]", "u32[m]"},
        {"trailing bytes", "u32[n]", "bytes[n]"},
        {"span events", "begin = \"TICK\"\nend = \"PING\"", "begin = \"PING\"\nend = \"TICK\""},
        {"span key", "key = [\"symbol\"]", "key = [\"symbol\", \"order\"]"},
        {"span name", "[span.s]", "[span.t]"},
    };
    std::set<SchemaHash> seen{base};
    for (const Change& c : changes) {
        SCOPED_TRACE(c.what);
        const SchemaHash h = hash_of(replaced(kBase, c.from, c.to));
        EXPECT_TRUE(seen.insert(h).second) << "the change left the hash equal to the base's or another change's";
    }
}

TEST(SchemaHash, RenamingAStructChangesIt) {
    std::string text = replaced(kBase, "[struct.tick]", "[struct.tock]");
    text = replaced(text, "payload = \"tick\"", "payload = \"tock\"");
    EXPECT_NE(hash_of(text), hash_of(kBase));
}

TEST(SchemaHash, CommentsWhitespaceOrderDescriptionsAndAgreeingPinsDoNotChangeIt) {
    const SchemaHash base = hash_of(kBase);
    const Change same[] = {
        {"comment", "[[event]]", "# a comment\n[[event]]  # another"},
        {"whitespace", "{ name = \"price\", type = \"u64\", doc = \"in cents\" }",
         "{name=\"price\",type=\"u64\",doc=\"in cents\"}"},
        {"key order", "{ name = \"price\", type = \"u64\", doc = \"in cents\" }",
         "{ doc = \"in cents\", type = \"u64\", name = \"price\" }"},
        {"event key order", "number = 2\nname = \"TICK\"", "name = \"TICK\"\nnumber = 2"},
        {"descriptions", "description = \"a price\"", "description = \"the latest price\""},
        {"schema description", "description = \"a feed\"", "description = \"another feed\""},
        {"field doc", "doc = \"in cents\"", "doc = \"in dollars\""},
        {"agreeing pins", "type = \"side\" }", "type = \"side\", offset = 8, size = 1 }"},
        {"struct size pin", "[struct.tick]\n", "[struct.tick]\nsize = 40\n"},
        {"address spelled bytes20", "type = \"address\"", "type = \"bytes20\""},
        {"address spelled bytes[20]", "type = \"address\"", "type = \"bytes[20]\""},
        {"enum values as a table", "values = { BUY = 0, SELL = 1 }", "[enum.side.values]\nSELL = 1\nBUY = 0"},
        {"hash in upper case", "8933f907", "8933F907"},
    };
    for (const Change& c : same) {
        SCOPED_TRACE(c.what);
        EXPECT_EQ(hash_of(replaced(kBase, c.from, c.to)), base);
    }
    // Events and tables in another order.
    const std::string ping = "[[event]]\nnumber = 3\nname = \"PING\"\n\n";
    std::string reordered = replaced(kBase, ping, "");
    reordered = replaced(reordered, "[[event]]\nnumber = 2", ping + "[[event]]\nnumber = 2");
    EXPECT_EQ(hash_of(reordered), base);
}

}  // namespace
}  // namespace evring
