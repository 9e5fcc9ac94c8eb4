// The decoder: the order of visitor calls, the JSON and text renderings, and
// the reasons given for payloads that do not fit their layout.
#include "evring/schema/schema_decode.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/schema/schema_render.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

using test::PayloadBytes;
using test::load_test_schema;

const Schema& orders() {
    static const Schema schema = load_test_schema("orders.toml");
    return schema;
}

PayloadBytes order_new() {
    PayloadBytes p(64);
    p.put<std::uint64_t>(0, 42);
    p.put<std::int64_t>(8, -12345);
    p.put<std::int8_t>(16, -2);
    p.put<std::uint32_t>(24, 100);
    p.put<std::uint8_t>(28, 1);
    for (int i = 0; i < 20; ++i) p.put<std::uint8_t>(29 + i, static_cast<std::uint8_t>(i + 1));
    p.put<std::uint16_t>(50, 7);
    p.put<std::uint16_t>(52, 8);
    p.put<std::uint16_t>(54, 9);
    p.put<std::uint16_t>(56, 5);
    p.append("hello");
    return p;
}

PayloadBytes fill() {
    PayloadBytes p(112);
    p.put<std::uint64_t>(0, 42);
    p.put<std::int64_t>(8, 1);
    p.put<std::uint32_t>(24, 3);
    p.put<std::uint8_t>(28, 1);
    p.put<float>(32, 0.25f);
    p.put<std::uint64_t>(48, 5);  // notional = 2^64 + 5: low limb, then high limb
    p.put<std::uint64_t>(56, 1);
    p.put<std::uint8_t>(96, 2);
    PayloadBytes leg(16);
    leg.put<std::uint16_t>(0, 1);
    leg.put<std::uint32_t>(4, 10);
    leg.put<double>(8, 1.5);
    p.append(leg);
    leg.put<std::uint16_t>(0, 2);
    leg.put<std::uint32_t>(4, 20);
    leg.put<double>(8, -0.5);
    p.append(leg);
    return p;
}

PayloadBytes cancel(std::int16_t reason) {
    PayloadBytes p(16);
    p.put<std::uint64_t>(0, 7);
    p.put<std::int16_t>(8, reason);
    return p;
}

std::string json(std::uint16_t type, const PayloadBytes& p) {
    std::string out;
    const DecodeError e = append_fields_json(orders(), type, p.span(), out);
    EXPECT_TRUE(e.ok()) << describe_decode_error(orders(), e);
    return out;
}

std::string text(std::uint16_t type, const PayloadBytes& p, TextOptions options = {}) {
    std::string out;
    const DecodeError e = append_event_text(orders(), type, p.span(), out, options);
    EXPECT_TRUE(e.ok()) << describe_decode_error(orders(), e);
    return out;
}

// Writes every visitor call as a token, to check their order.
struct Trace : FieldVisitor {
    std::string out;
    void begin_struct(std::string_view name, const SchemaStruct* s) override {
        out += "{" + std::string(name) + ":" + (s ? s->name : "-") + " ";
    }
    void end_struct() override { out += "} "; }
    void begin_array(std::string_view name, std::uint64_t count) override {
        out += "[" + std::string(name) + ":" + std::to_string(count) + " ";
    }
    void end_array() override { out += "] "; }
    void scalar(std::string_view name, const ScalarValue& v) override {
        out += std::string(name) + "=" + std::string(scalar_name(v.type)) + " ";
    }
    void enumeration(std::string_view name, const SchemaEnum& e, const ScalarValue&, std::string_view value) override {
        out += std::string(name) + "=" + e.name + "." + std::string(value) + " ";
    }
    void bytes(std::string_view name, std::span<const std::byte> b) override {
        out += std::string(name) + "=bytes" + std::to_string(b.size()) + " ";
    }
    void wide_integer(std::string_view name, Scalar t, std::span<const std::byte> b) override {
        out += std::string(name) + "=" + std::string(scalar_name(t)) + "/" + std::to_string(b.size()) + " ";
    }
};

TEST(SchemaDecode, VisitsFieldsInOrderWithNestedStructsArraysAndTrailingArrays) {
    Trace trace;
    ASSERT_TRUE(visit_payload(orders(), 4, fill().span(), trace).ok());
    EXPECT_EQ(trace.out,
              "{:fill order_id=u64 {price:price mantissa=i64 exponent=i8 } quantity=u32 is_final=bool "
              "fee_ratio=f32 notional=u128/16 venue_fees=u256/32 legs_count=u8 [legs:2 {:leg venue=u16 "
              "quantity=u32 rate=f64 } {:leg venue=u16 quantity=u32 rate=f64 } ] } ");
    Trace empty;
    ASSERT_TRUE(visit_payload(orders(), 5, {}, empty).ok());
    EXPECT_EQ(empty.out, "{:- } ");
    Trace order;
    ASSERT_TRUE(visit_payload(orders(), 2, order_new().span(), order).ok());
    EXPECT_EQ(order.out,
              "{:order_new order_id=u64 {price:price mantissa=i64 exponent=i8 } quantity=u32 side=side.SELL "
              "trader=bytes20 [tags:3 =u16 =u16 =u16 ] note_length=u16 note=bytes5 } ");
}

TEST(SchemaDecode, JsonFollowsTheIssueRules) {
    EXPECT_EQ(json(2, order_new()),
              R"({"order_id":42,"price":{"mantissa":-12345,"exponent":-2},"quantity":100,"side":"SELL",)"
              R"("trader":"0x0102030405060708090a0b0c0d0e0f1011121314","tags":[7,8,9],"note_length":5,)"
              R"("note":"0x68656c6c6f"})");
    EXPECT_EQ(json(4, fill()),
              R"({"order_id":42,"price":{"mantissa":1,"exponent":0},"quantity":3,"is_final":true,)"
              R"("fee_ratio":0.25,"notional":"0x10000000000000005","venue_fees":"0x0","legs_count":2,)"
              R"("legs":[{"venue":1,"quantity":10,"rate":1.5},{"venue":2,"quantity":20,"rate":-0.5}]})");
    EXPECT_EQ(json(3, cancel(-1)), R"({"order_id":7,"reason":"NO_FUNDS"})");
    EXPECT_EQ(json(3, cancel(-5)), R"({"order_id":7,"reason":-5})");  // a value the enum does not name
    EXPECT_EQ(json(5, PayloadBytes(0)), "{}");
}

TEST(SchemaDecode, JsonSpellsOddValuesSafely) {
    PayloadBytes p = fill();
    p.put<std::uint8_t>(28, 2);  // a bool that is neither 0 nor 1 shows its byte
    p.put<float>(32, std::numeric_limits<float>::quiet_NaN());
    p.put<std::uint64_t>(64 + 24, 0xff00000000000000ull);  // the top byte of a u256
    const std::string out = json(4, p);
    EXPECT_NE(out.find(R"("is_final":2,"fee_ratio":"nan")"), std::string::npos) << out;
    EXPECT_NE(out.find(R"("venue_fees":"0xff00000000000000000000000000000000000000000000000000000000000000")"),
              std::string::npos)
        << out;
    p.put<float>(32, -std::numeric_limits<float>::infinity());
    EXPECT_NE(json(4, p).find(R"("fee_ratio":"-inf")"), std::string::npos);
}

TEST(SchemaDecode, TextIsNameThenFieldsWithDottedPaths) {
    EXPECT_EQ(text(2, order_new()),
              "ORDER_NEW order_id=42 price.mantissa=-12345 price.exponent=-2 quantity=100 side=SELL "
              "trader=0x0102030405060708090a0b0c0d0e0f1011121314 tags=[7,8,9] note_length=5 note=0x68656c6c6f");
    EXPECT_EQ(text(4, fill()),
              "FILL order_id=42 price.mantissa=1 price.exponent=0 quantity=3 is_final=true fee_ratio=0.25 "
              "notional=0x10000000000000005 venue_fees=0x0 legs_count=2 "
              "legs=[{venue=1 quantity=10 rate=1.5},{venue=2 quantity=20 rate=-0.5}]");
    EXPECT_EQ(text(5, PayloadBytes(0)), "HEARTBEAT");
    EXPECT_EQ(text(3, cancel(-2)), "ORDER_CANCEL order_id=7 reason=HALTED");
}

TEST(SchemaDecode, TextCutsLongByteArraysUnlessToldNotTo) {
    PayloadBytes p = order_new();
    EXPECT_NE(text(2, p, {4}).find("trader=0x01020304...(20 bytes)"), std::string::npos);
    EXPECT_NE(text(2, p, {0}).find("trader=0x0102030405060708090a0b0c0d0e0f1011121314"), std::string::npos);
}

TEST(SchemaDecode, ArraysOfStructsAndExplicitPaddingDecode) {
    PayloadBytes p(120);
    for (int i = 0; i < 4; ++i) {
        p.put<std::int64_t>(24 * i, 100 + i);
        p.put<std::uint32_t>(24 * i + 16, static_cast<std::uint32_t>(i));
    }
    p.put<std::uint32_t>(96, 0xefbeadde);
    p.put<std::uint64_t>(100, 0x5555555555555555ull);  // padding: not shown
    p.put<std::uint64_t>(112, 99);
    EXPECT_EQ(json(6, p),
              R"({"levels":[{"price":{"mantissa":100,"exponent":0},"size":0},{"price":{"mantissa":101,"exponent":0},"size":1},)"
              R"({"price":{"mantissa":102,"exponent":0},"size":2},{"price":{"mantissa":103,"exponent":0},"size":3}],)"
              R"("checksum":"0xdeadbeef","sequence":99})");
    EXPECT_EQ(text(6, p),
              "BOOK_SNAPSHOT levels=[{price={mantissa=100 exponent=0} size=0},{price={mantissa=101 exponent=0} size=1},"
              "{price={mantissa=102 exponent=0} size=2},{price={mantissa=103 exponent=0} size=3}] checksum=0xdeadbeef "
              "sequence=99");
}

TEST(SchemaDecode, PayloadsAtAnyAddressDecodeTheSame) {
    const PayloadBytes p = fill();
    std::vector<std::byte> shifted(p.bytes.size() + 3);
    std::memcpy(shifted.data() + 3, p.bytes.data(), p.bytes.size());
    std::string out;
    ASSERT_TRUE(append_fields_json(orders(), 4, {shifted.data() + 3, p.bytes.size()}, out).ok());
    EXPECT_EQ(out, json(4, p));
}

TEST(SchemaDecodeErrors, UnknownTypeSizeMismatchAndCountOverflowAreReasonsNotCrashes) {
    DecodeError e = check_payload(orders(), 99, cancel(0).span());
    EXPECT_EQ(e.status, DecodeStatus::UnknownEventType);
    EXPECT_EQ(describe_decode_error(orders(), e), "unknown event type 99 (schema 'orders' declares no such number)");

    PayloadBytes short_fixed = cancel(0);
    short_fixed.bytes.pop_back();
    e = check_payload(orders(), 3, short_fixed.span());
    EXPECT_EQ(e.status, DecodeStatus::SizeMismatch);
    EXPECT_EQ(describe_decode_error(orders(), e),
              "size mismatch: ORDER_CANCEL payload is 15 bytes, shorter than its 16-byte fixed part");

    PayloadBytes long_trailing = order_new();
    long_trailing.append("!");
    e = check_payload(orders(), 2, long_trailing.span());
    EXPECT_EQ(e.status, DecodeStatus::SizeMismatch);
    EXPECT_EQ(e.expected_size, 69u);
    EXPECT_EQ(e.payload_size, 70u);
    EXPECT_EQ(describe_decode_error(orders(), e), "size mismatch: ORDER_NEW payload is 70 bytes, its layout needs 69");

    PayloadBytes hostile(20);
    hostile.put<std::uint32_t>(4, 0xffffffffu);  // RECORD_ERROR's truncated_payload_size
    e = check_payload(orders(), 1, hostile.span());
    EXPECT_EQ(e.status, DecodeStatus::CountOverflow);
    EXPECT_EQ(e.count, 0xffffffffu);
    EXPECT_EQ(e.available, 4u);
    EXPECT_EQ(describe_decode_error(orders(), e),
              "count overflow: RECORD_ERROR trailing array 'truncated_payload' claims 4294967295 elements (count "
              "field truncated_payload_size), more than the 4 bytes left in the 20-byte payload hold");

    PayloadBytes legs = fill();
    legs.put<std::uint8_t>(96, 255);  // 255 legs of 16 bytes in a payload with room for 2
    e = check_payload(orders(), 4, legs.span());
    EXPECT_EQ(e.status, DecodeStatus::CountOverflow);
    EXPECT_EQ(e.array->name, "legs");

    // Nothing is written when the payload is refused.
    std::string out = "kept";
    EXPECT_FALSE(append_fields_json(orders(), 4, legs.span(), out).ok());
    EXPECT_FALSE(append_event_text(orders(), 99, legs.span(), out).ok());
    EXPECT_EQ(out, "kept");
    Trace trace;
    EXPECT_FALSE(visit_payload(orders(), 4, legs.span(), trace).ok());
    EXPECT_EQ(trace.out, "");
}

TEST(SchemaDecodeErrors, SixtyFourBitCountsCannotOverflowTheArithmetic) {
    auto schema = Schema::parse(R"(content_type = 9
content_name = "x"
[[event]]
number = 2
name = "E"
fields = [
  { name = "a", type = "u64" },
  { name = "b", type = "u64" },
  { name = "xs", type = "bytes32[a]" },
  { name = "ys", type = "u64[b]" },
]
)");
    ASSERT_TRUE(schema.ok()) << schema.error().message();
    const std::pair<std::uint64_t, std::uint64_t> counts[] = {
        {~0ull, 0}, {~0ull / 32 + 1, 0}, {1ull << 59, 1ull << 61}, {1, ~0ull}, {0, (~0ull >> 3) + 1}};
    for (auto [a, b] : counts) {
        PayloadBytes p(16 + 32 + 8);
        p.put<std::uint64_t>(0, a);
        p.put<std::uint64_t>(8, b);
        const DecodeError e = check_payload(*schema, 2, p.span());
        EXPECT_EQ(e.status, DecodeStatus::CountOverflow) << a << " " << b;
    }
    PayloadBytes fits(16 + 32 + 8);
    fits.put<std::uint64_t>(0, 1);
    fits.put<std::uint64_t>(8, 1);
    EXPECT_TRUE(check_payload(*schema, 2, fits.span()).ok());
}

TEST(SchemaDecode, SpanOutputReportsTheExactSizeNeeded) {
    const PayloadBytes p = fill();
    const std::string expected = json(4, p);
    std::vector<char> small(10);
    std::size_t written = 99;
    DecodeError e = write_fields_json(orders(), 4, p.span(), small, written);
    EXPECT_EQ(e.status, DecodeStatus::OutputTooSmall);
    EXPECT_EQ(e.needed, expected.size());
    EXPECT_EQ(written, 0u);
    std::vector<char> exact(e.needed);
    ASSERT_TRUE(write_fields_json(orders(), 4, p.span(), exact, written).ok());
    EXPECT_EQ(std::string(exact.data(), written), expected);

    const std::string line = text(4, p);
    e = write_event_text(orders(), 4, p.span(), small, written);
    EXPECT_EQ(e.needed, line.size());
    std::vector<char> room(line.size());
    ASSERT_TRUE(write_event_text(orders(), 4, p.span(), room, written).ok());
    EXPECT_EQ(std::string(room.data(), written), line);
}

TEST(SchemaDecode, ErrorReasonsFitACallersBuffer) {
    PayloadBytes p = cancel(0);
    p.bytes.pop_back();
    const DecodeError e = check_payload(orders(), 3, p.span());
    const std::string full = describe_decode_error(orders(), e);
    char buffer[16];
    const std::size_t n = format_decode_error(orders(), e, buffer);
    EXPECT_EQ(n, sizeof buffer);
    EXPECT_EQ(std::string(buffer, n), full.substr(0, sizeof buffer));
    char big[256];
    EXPECT_EQ(std::string(big, format_decode_error(orders(), e, big)), full);
}

}  // namespace
}  // namespace evring
