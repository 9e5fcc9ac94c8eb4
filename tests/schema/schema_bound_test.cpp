// Bounded output (schema_render.hpp, issue 24 item 5): a schema of nested
// one-byte structs with long names used as a trailing array makes each
// payload byte thousands of characters; every rendering stops at its bound,
// closes what is open and says so.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"

namespace evring {
namespace {

// s0 { u8 }, s1 { s0 }, ..., s29 { s28 }, each field named with 120
// characters; event 9 is { u32 count; s29 items[count] }.
const Schema& amplifying() {
    static const Schema schema = [] {
        std::string text = "content_type = 4661\ncontent_name = \"amp\"\n";
        for (int level = 0; level < 30; ++level) {
            char number[16];  // room for any int: g++ checks at -O1
            std::snprintf(number, sizeof number, "%04d", level);
            text += "[struct.s" + std::to_string(level) + "]\nfields = [ { name = \"" + std::string(116, 'f') + number +
                    "\", type = \"" + (level == 0 ? std::string("u8") : "s" + std::to_string(level - 1)) + "\" } ]\n";
        }
        text += "[[event]]\nnumber = 9\nname = \"BIG\"\nfields = [\n  { name = \"count\", type = \"u32\" },\n"
                "  { name = \"items\", type = \"s29[count]\" },\n]\n";
        auto parsed = Schema::parse(text, "amplifying");
        if (!parsed) throw std::runtime_error(parsed.error().message());
        return std::move(*parsed);
    }();
    return schema;
}

std::vector<std::byte> big_event(std::uint32_t count) {
    std::vector<std::byte> p(4 + count);
    std::memcpy(p.data(), &count, 4);
    return p;
}

TEST(BoundedOutput, JsonStopsAtItsBoundClosesWhatIsOpenAndIsMarked) {
    const auto payload = big_event(100'000);
    std::string json;
    ASSERT_TRUE(append_fields_json(amplifying(), 9, payload, json).ok());
    const std::size_t bound = output_bound(kDefaultMaxOutput, payload.size());
    EXPECT_EQ(bound, std::size_t{1} << 20);
    EXPECT_GE(json.size(), bound);
    EXPECT_LT(json.size(), bound + 8192);  // one value and the closing brackets past it
    const std::string end = ",\"(truncated)\":true}";
    ASSERT_GT(json.size(), end.size());
    EXPECT_EQ(json.substr(json.size() - end.size()), end);
    int depth = 0;  // balanced: every { and [ closed (names hold neither)
    for (char c : json) depth += (c == '{' || c == '[') - (c == '}' || c == ']');
    EXPECT_EQ(depth, 0);

    // The span form agrees on the bounded size.
    std::vector<char> buffer(json.size());
    std::size_t written = 0;
    ASSERT_TRUE(write_fields_json(amplifying(), 9, payload, buffer, written).ok());
    EXPECT_EQ(std::string(buffer.data(), written), json);
}

TEST(BoundedOutput, TextEndsWithTheMarkerAndASmallEventIsWhole) {
    const auto payload = big_event(100'000);
    std::string text;
    ASSERT_TRUE(append_event_text(amplifying(), 9, payload, text).ok());
    EXPECT_LT(text.size(), (std::size_t{1} << 20) + 8192);
    EXPECT_EQ(text.substr(text.size() - 12), " (truncated)");

    const auto small = big_event(2);
    std::string whole;
    ASSERT_TRUE(append_event_text(amplifying(), 9, small, whole).ok());
    EXPECT_EQ(whole.find("(truncated)"), std::string::npos);
    std::string json;
    ASSERT_TRUE(append_fields_json(amplifying(), 9, small, json).ok());
    EXPECT_EQ(json.find("(truncated)"), std::string::npos);
}

TEST(BoundedOutput, ZeroLiftsTheBound) {
    const auto payload = big_event(400);  // 400 x 30 x 125 characters: 1.5 MB
    std::string bounded;
    ASSERT_TRUE(append_fields_json(amplifying(), 9, payload, bounded).ok());
    EXPECT_NE(bounded.find("(truncated)"), std::string::npos);
    std::string json;
    JsonOptions options;
    options.max_output = 0;
    ASSERT_TRUE(append_fields_json(amplifying(), 9, payload, json, options).ok());
    EXPECT_EQ(json.find("(truncated)"), std::string::npos);
    EXPECT_GT(json.size(), std::size_t{400} * 30 * 120);
}

// A visitor of one's own says full(): it gets no more values, only the calls
// that close what is open.
struct CountingVisitor : FieldVisitor {
    int values = 0, opened = 0, closed = 0;
    void begin_struct(std::string_view, const SchemaStruct*) override { ++opened; }
    void end_struct() override { ++closed; }
    void begin_array(std::string_view, std::uint64_t) override { ++opened; }
    void end_array() override { ++closed; }
    void scalar(std::string_view, const ScalarValue&) override { ++values; }
    void enumeration(std::string_view, const SchemaEnum&, const ScalarValue&, std::string_view) override { ++values; }
    void bytes(std::string_view, std::span<const std::byte>) override { ++values; }
    void wide_integer(std::string_view, Scalar, std::span<const std::byte>) override { ++values; }
    bool full() override { return values >= 10; }
};

TEST(BoundedOutput, AVisitorThatIsFullGetsOnlyTheClosingCalls) {
    const auto payload = big_event(1'000);
    CountingVisitor v;
    ASSERT_TRUE(visit_payload(amplifying(), 9, payload, v).ok());
    EXPECT_EQ(v.values, 10);  // count, then nine elements' leaves
    EXPECT_EQ(v.opened, v.closed);
    EXPECT_LT(v.opened, 1 + 1 + 10 * 30);
}

}  // namespace
}  // namespace evring
