// Filter expressions (where.hpp) on crafted payloads: every kind of operand
// and literal, missing fields, trailing arrays bounds-checked, hostile text.
#include "evring/query/where.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace evring {
namespace {

const char* kSchema = R"(content_type = 1001
content_name = "t"
flow_tags = ["group", "item"]
[enum.side]
type = "u8"
values = { BUY = 1, SELL = 2 }
[[event]]
number = 1
name = "A"
fields = [
  { name = "n", type = "u32" },
  { name = "delta", type = "i32" },
  { name = "side", type = "side" },
  { name = "price", type = "f64" },
  { name = "big", type = "u256" },
  { name = "key", type = "bytes4" },
  { name = "count", type = "u32" },
  { name = "ids", type = "u64[count]" },
]
[[event]]
number = 2
name = "B"
fields = [{ name = "n", type = "u8" }]
)";

Schema schema() {
    auto s = Schema::parse(kSchema);
    EXPECT_TRUE(s.ok()) << s.error().message();
    return std::move(s).value();
}

struct Event {
    EventDescriptor d{};
    std::vector<std::byte> payload;
    SourceEvent view() const {
        SourceEvent e;
        e.descriptor = d;
        e.payload_state = PayloadState::Ok;
        e.payload = payload;
        return e;
    }
};

template <class T>
void put(std::vector<std::byte>& p, std::size_t at, T v) {
    if (p.size() < at + sizeof v) p.resize(at + sizeof v);
    std::memcpy(p.data() + at, &v, sizeof v);
}

// An A: n=7, delta=-3, side=SELL, price=2.5, big=2^200, key=de ad be ef, ids = {10, 20}.
Event event_a() {
    const Schema s = schema();
    const SchemaEvent& a = *s.event("A");
    Event e;
    e.d.event_type = 1;
    e.d.seqno = 42;
    e.d.content_ext[0] = 5;
    auto at = [&](const char* f) { return s.find_field(a, f)->offset; };
    put<std::uint32_t>(e.payload, at("n"), 7);
    put<std::int32_t>(e.payload, at("delta"), -3);
    put<std::uint8_t>(e.payload, at("side"), 2);
    put<double>(e.payload, at("price"), 2.5);
    put<std::uint64_t>(e.payload, at("big") + 24, std::uint64_t{1} << 8);
    const std::uint8_t key[4] = {0xde, 0xad, 0xbe, 0xef};
    e.payload.resize(std::max<std::size_t>(e.payload.size(), at("key") + 4));
    std::memcpy(e.payload.data() + at("key"), key, 4);
    put<std::uint32_t>(e.payload, at("count"), 2);
    const std::size_t fixed = s.fixed_size(a);
    e.payload.resize(fixed);
    put<std::uint64_t>(e.payload, fixed, 10);
    put<std::uint64_t>(e.payload, fixed + 8, 20);
    e.d.payload_size = static_cast<std::uint32_t>(e.payload.size());
    return e;
}

bool keeps(const std::string& text, const Event& e) {
    const Schema s = schema();
    auto w = compile_where(text, s);
    EXPECT_TRUE(w.ok()) << text << ": " << (w ? "" : w.error().message());
    return w && (*w)->matches(e.view());
}

TEST(Where, ComparesEveryKindOfField) {
    const Event a = event_a();
    for (const char* yes : {"type == A", "type in {B, A}", "seqno == 42", "group == 5", "ext[0] == 5", "item == 0",
                            "n == 7", "n > 6 && n < 8", "delta < 0", "delta == -3", "delta >= -3", "side == SELL",
                            "price > 2.25", "price <= 2.5", "big > 0xffffffffffffffffffffffff",
                            "big == 1606938044258990275541962092341162602522202993782792835301376",
                            "key == 0xdeadbeef", "key ^= 0xdead", "ids[0] == 10", "ids[1] == 20", "!(ids[2] == 0)",
                            "not ids[2] > 0", "n and key", "!(item)", "n == 1 || n == 7", "(n == 7)", "n in {1, 7}"})
        EXPECT_TRUE(keeps(yes, a)) << yes;
    for (const char* no : {"type == B", "n == 8", "delta > 0", "side == BUY", "key == 0xdead", "key ^= 0xbe",
                           "ids[2] == 0", "ids[99999999999] == 0", "big < 5", "n > 6 && item == 1", "price < 0"})
        EXPECT_FALSE(keeps(no, a)) << no;
}

TEST(Where, MissingFieldsAndPayloadsAreFalse) {
    Event b;
    b.d.event_type = 2;
    b.payload = {std::byte{9}};
    EXPECT_TRUE(keeps("n == 9", b));        // B has its own n (u8)
    EXPECT_FALSE(keeps("delta == 0", b));   // B has no delta
    EXPECT_TRUE(keeps("!(delta == 0)", b));
    Event a = event_a();
    a.payload.resize(4);  // too short for everything after n, and for the array's count
    EXPECT_TRUE(keeps("n == 7", a));
    EXPECT_FALSE(keeps("delta == -3", a));
    EXPECT_FALSE(keeps("ids[0] == 10", a));
    // An expired payload: descriptor tests still work, field tests are false.
    const Schema s = schema();
    auto w = compile_where("type == A && n == 7", s);
    ASSERT_TRUE(w.ok());
    const Event held = event_a();
    SourceEvent e = held.view();
    EXPECT_TRUE((*w)->matches(e));
    e.payload_state = PayloadState::Expired;
    e.payload = {};
    EXPECT_FALSE((*w)->matches(e));
    EXPECT_TRUE((*w)->needs_payload());
    auto d = compile_where("type == A || seqno > 3", s);
    ASSERT_TRUE(d.ok());
    EXPECT_FALSE((*d)->needs_payload());
}

TEST(Where, RefusesWithThePositionAndNearNames) {
    const Schema s = schema();
    const std::pair<const char*, const char*> cases[] = {
        {"nn == 1", "at 1: no event of schema t has a field 'nn'; nearest: n"},
        {"type == C", "at 9: 'C' is not an event type of schema t"},
        {"side == HOLD", "'HOLD' is not a value of 'side'; nearest:"},
        {"key < 0x01", "'key' is a byte array: compare it with ==, !=, in or ^="},
        {"n == \"x\"", "cannot equal text"},
        {"n ^= 0x01", "'^=' is for byte fields"},
        {"ids == 1", "'ids' is an array; give an element"},
        {"n == 1 &&", "at 10: expected a field, a flow tag or 'type' but found 'the end'"},
        {"n == 1 )", "unexpected ')'"},
        {"ext[4] == 1", "ext[I] takes I from 0 to 3"},
        {"n == 1 # 2", "at 8: unexpected character '#'"},
    };
    for (const auto& [text, reason] : cases) {
        auto w = compile_where(text, s);
        ASSERT_FALSE(w.ok()) << text;
        EXPECT_NE(w.error().message().find(reason), std::string::npos) << w.error().message();
        EXPECT_EQ(w.error().message().rfind("bad --where '", 0), 0u) << w.error().message();
    }
}

TEST(Where, HostileTextIsRefusedCheaply) {
    const Schema s = schema();
    auto huge = compile_where(std::string(1 << 20, '('), s);
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.error().message().find("at most 65536 bytes; this one is 1048576"), std::string::npos);
    auto deep = compile_where(std::string(60000, '('), s);
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.error().message().find("nested more than 64 deep"), std::string::npos);
    auto nots = compile_where(std::string(60000, '!') + "n", s);
    ASSERT_FALSE(nots.ok());
    std::string many = "n == 1";
    while (many.size() < 60000) many += " || n == 1";
    auto wide = compile_where(many, s);
    ASSERT_FALSE(wide.ok());
    EXPECT_NE(wide.error().message().find("more than 4096"), std::string::npos);
    auto past = compile_where("n == 0x1" + std::string(64, '0'), s);
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.error().message().find("past 2^256"), std::string::npos);
    // Long shown text is cut in the message.
    EXPECT_LT(huge.error().message().size(), 200u);
}

}  // namespace
}  // namespace evring
