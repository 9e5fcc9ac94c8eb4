// The C++ header generated from tests/schemas/orders.toml at build time (by
// `evring schema compile`, through the meson snippet of docs/schema.md):
// it compiles with the project's warnings, its static_asserts hold, and what
// its publish helpers write decodes with the schema to the values put in.
#include "orders_schema.hpp"
#include "hostile_names_schema.hpp"  // it compiles: nothing in it was injected

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/format.hpp"
#include "codegen/schema_codegen.hpp"
#include "evring/schema/schema_embed.hpp"
#include "ring/schema_blob.hpp"
#include "evring/schema/schema_render.hpp"
#include "schema/schema_write_check.hpp"
#include "support/schema_payload.hpp"
#if __has_include(<evring/schema/typed_publish.hpp>)
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"
#endif

// A publisher standing in for evring::Publisher: the helpers reach `publish`
// by argument-dependent lookup, and reserve/commit for empty payloads.
namespace mock {

struct Published {
    std::uint16_t type = 0;
    std::array<std::uint64_t, 4> flow{};
    std::vector<std::byte> payload;
};

struct Reservation {
    evring::EventDescriptor staged{};
    std::array<std::byte, 256> buffer{};  // publish_checked copies into it
    std::byte* payload() { return buffer.data(); }
    explicit operator bool() const { return true; }
    evring::EventDescriptor& descriptor() { return staged; }
    std::uint64_t seqno() const { return staged.seqno; }
};

struct Publisher {
    std::vector<Published> events;
    Reservation reserve(std::uint64_t size) {
        Reservation r;
        r.staged.payload_size = static_cast<std::uint32_t>(size);
        r.staged.seqno = events.size() + 1;
        return r;
    }
    void commit(const Reservation& r) {
        events.push_back({r.staged.event_type, r.staged.content_ext, {}});
    }
};

template <class T, class... Trailing>
std::uint64_t publish(Publisher& p, std::uint16_t type, const std::array<std::uint64_t, 4>& flow, const T& value,
                      const Trailing&... trailing) {
    Published e{type, flow, {}};
    const auto* bytes = reinterpret_cast<const std::byte*>(&value);
    e.payload.assign(bytes, bytes + sizeof value);
    (e.payload.insert(e.payload.end(), std::as_bytes(std::span(trailing)).begin(),
                      std::as_bytes(std::span(trailing)).end()),
     ...);
    p.events.push_back(std::move(e));
    return p.events.size();
}

}  // namespace mock

namespace evring {
namespace {

const Schema& schema() {
    static const Schema s = test::load_test_schema("orders.toml");
    return s;
}

std::string decoded(const mock::Published& e) {
    std::string out;
    const DecodeError error = append_fields_json(schema(), e.type, e.payload, out);
    EXPECT_TRUE(error.ok()) << describe_decode_error(schema(), error);
    return out;
}

TEST(SchemaCodegen, ConstantsMatchTheSchema) {
    static_assert(orders::kContentType == 1001);
    static_assert(orders::kPayloadAlignment == 16);
    static_assert(static_cast<std::uint16_t>(orders::EventType::FILL) == 4);
    static_assert(orders::event_name(orders::EventType::BOOK_SNAPSHOT) == "BOOK_SNAPSHOT");
    static_assert(std::is_same_v<orders::EventInfo<orders::EventType::FILL>::Payload, orders::Fill>);
    static_assert(orders::EventInfo<orders::EventType::FILL>::kHasTrailing);
    static_assert(std::is_void_v<orders::EventInfo<orders::EventType::HEARTBEAT>::Payload>);
    static_assert(orders::EventInfo<orders::EventType::ORDER_NEW>::kFixedSize == sizeof(orders::OrderNew));
    static_assert(alignof(orders::Fill) == 16 && sizeof(orders::Fill) == 112);
    static_assert(offsetof(orders::BookSnapshot, sequence) == 112);  // after the explicit padding
    static_assert(orders::kDescribedHashes.empty());
    EXPECT_EQ(orders::kSchemaHash, schema().hash());
    EXPECT_EQ(orders::kSchemaHashHex, schema().hash_hex());
    EXPECT_EQ(orders::kContentName, "orders");
    constexpr orders::Flow flow{.symbol = 5, .order = 9};
    EXPECT_EQ(flow.tags(), (std::array<std::uint64_t, 4>{5, 9, 0, 0}));
}

TEST(SchemaCodegen, TheEmbeddedBlobIsTheSchemasAndRingContentDerivesFromIt) {
    const std::vector<std::byte> blob = evring::serialize_schema_blob(schema());
    ASSERT_EQ(orders::kSchemaBlob.size(), blob.size());
    EXPECT_EQ(std::memcmp(orders::kSchemaBlob.data(), blob.data(), blob.size()), 0);
    const evring::RingContent content = orders::ring_content();
    EXPECT_EQ(content.content_type, orders::kContentType);
    EXPECT_EQ(content.schema_hash, orders::kSchemaHash);
    EXPECT_EQ(content.schema_blob, blob);
    auto parsed = evring::parse_schema_blob(content.schema_blob);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(parsed->hash(), schema().hash());
}

TEST(SchemaCodegen, PublishedStructsDecodeToTheValuesPutIn) {
    mock::Publisher publisher;
    orders::OrderNew order{};
    order.order_id = 42;
    order.price = {-12345, -2};
    order.quantity = 100;
    order.side = orders::Side::SELL;
    order.trader.fill(0xab);
    order.tags = {7, 8, 9};
    order.note_length = 999;  // the helper sets it from the span
    const std::string note = "hello";
    const std::vector<std::uint8_t> note_bytes(note.begin(), note.end());
    ASSERT_EQ(orders::publish_order_new(publisher, order, note_bytes, {.symbol = 5, .order = 42}), 1u);
    ASSERT_EQ(publisher.events.size(), 1u);
    EXPECT_EQ(publisher.events[0].type, 2);
    EXPECT_EQ(publisher.events[0].flow, (std::array<std::uint64_t, 4>{5, 42, 0, 0}));
    EXPECT_EQ(decoded(publisher.events[0]),
              R"({"order_id":42,"price":{"mantissa":-12345,"exponent":-2},"quantity":100,"side":"SELL",)"
              R"("trader":"0xabababababababababababababababababababab","tags":[7,8,9],"note_length":5,)"
              R"("note":"0x68656c6c6f"})");

    orders::Fill fill{};
    fill.order_id = 1;
    fill.is_final = true;
    fill.fee_ratio = 0.5f;
    fill.notional = Uint128{{5, 1}};
    fill.venue_fees = Uint256::from(255);
    const orders::Leg legs[] = {{1, 10, 1.5}, {2, 20, -0.5}};
    ASSERT_EQ(orders::publish_fill(publisher, fill, legs), 2u);
    EXPECT_EQ(decoded(publisher.events[1]),
              R"({"order_id":1,"price":{"mantissa":0,"exponent":0},"quantity":0,"is_final":true,"fee_ratio":0.5,)"
              R"("notional":"0x10000000000000005","venue_fees":"0xff","legs_count":2,)"
              R"("legs":[{"venue":1,"quantity":10,"rate":1.5},{"venue":2,"quantity":20,"rate":-0.5}]})");

    orders::BookSnapshot book{};
    book.levels[3].size = 7;
    book.checksum = {1, 2, 3, 4};
    book.sequence = 77;
    ASSERT_EQ(orders::publish_book_snapshot(publisher, book), 3u);
    EXPECT_NE(decoded(publisher.events[2]).find(R"("size":7}],"checksum":"0x01020304","sequence":77})"),
              std::string::npos);

    orders::OrderCancel cancel{};
    cancel.reason = orders::CancelReason::NO_FUNDS;
    ASSERT_EQ(orders::publish_order_cancel(publisher, cancel), 4u);
    EXPECT_EQ(decoded(publisher.events[3]), R"({"order_id":0,"reason":"NO_FUNDS"})");

    ASSERT_EQ(orders::publish_heartbeat(publisher, {.symbol = 3}), 5u);  // empty: reserve(0) + commit
    EXPECT_EQ(publisher.events[4].type, 5);
    EXPECT_EQ(publisher.events[4].flow[0], 3u);
    EXPECT_EQ(decoded(publisher.events[4]), "{}");
}

TEST(SchemaCodegen, HelpersRefuseSpansTooLongForTheirCountField) {
    mock::Publisher publisher;
    const std::vector<orders::Leg> legs(256);  // legs_count is a u8
    EXPECT_EQ(orders::publish_fill(publisher, orders::Fill{}, legs), 0u);
    EXPECT_TRUE(publisher.events.empty());
}

// check_payload_size decides what check_payload decides, for every event type and for sizes
// and counts around each layout's edges.
TEST(SchemaCodegen, CheckPayloadSizeAgreesWithTheSchemaLibrary) {
    int refused = 0;
    for (std::uint16_t type = 0; type <= 8; ++type) {
        for (std::size_t size : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 66u, 69u, 111u, 112u, 113u, 128u, 129u, 200u}) {
            for (std::uint64_t count : {0ull, 1ull, 2ull, 3ull, 0xffull, 0xffffull, 0xffffffffull}) {
                std::vector<std::byte> payload(size);
                const SchemaEvent* event = schema().event(type);
                const SchemaStruct* s = event != nullptr ? schema().payload_of(*event) : nullptr;
                for (const auto& t : s != nullptr ? s->trailing : std::vector<SchemaTrailing>{}) {
                    const std::size_t width = scalar_size(t.count_scalar);
                    if (t.count_offset + width <= size) std::memcpy(payload.data() + t.count_offset, &count, width);
                }
                const DecodeError e = check_payload(schema(), type, payload);
                const orders::PayloadCheck c = orders::check_payload_size(type, payload);
                ASSERT_EQ(bool(c), e.ok()) << "type " << type << " size " << size << " count " << count;
                if (e.status == DecodeStatus::UnknownEventType) {
                    EXPECT_EQ(c.status, orders::PayloadCheck::Status::UnknownType);
                } else if (!e.ok()) {
                    EXPECT_EQ(c.status, orders::PayloadCheck::Status::WrongSize);
                    EXPECT_EQ(c.rule, describe_payload_rule(schema(), *schema().event(type)));
                }
                refused += !e.ok();
            }
        }
    }
    EXPECT_GT(refused, 100);  // the loop reaches both answers
}

// The C ABI's and Python's fast path (WriteRules, schema_write_check.hpp) never
// admits what check_payload refuses, and decides every accepted event whose
// type has at most one trailing array, over the same sizes and counts.
TEST(SchemaWriteRules, AdmitOnlyWhatCheckPayloadAcceptsAndDecideTheCommonShapes) {
    const WriteRules rules(schema());
    int admitted = 0;
    for (std::uint16_t type = 0; type <= 8; ++type) {
        const SchemaEvent* event = schema().event(type);
        const SchemaStruct* s = event != nullptr ? schema().payload_of(*event) : nullptr;
        const bool simple = event != nullptr && (s == nullptr || s->trailing.size() <= 1);
        for (std::size_t size : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 66u, 69u, 111u, 112u, 113u, 128u, 129u, 200u}) {
            for (std::uint64_t count : {0ull, 1ull, 2ull, 3ull, 0xffull, 0xffffull, 0xffffffffull, ~0ull}) {
                std::vector<std::byte> payload(size);
                for (const auto& t : s != nullptr ? s->trailing : std::vector<SchemaTrailing>{}) {
                    const std::size_t width = scalar_size(t.count_scalar);
                    if (t.count_offset + width <= size) std::memcpy(payload.data() + t.count_offset, &count, width);
                }
                const bool ok = check_payload(schema(), type, payload).ok();
                const bool admits = rules.admits(type, payload);
                ASSERT_TRUE(!admits || ok) << "type " << type << " size " << size << " count " << count;
                if (ok && simple) {
                    EXPECT_TRUE(admits) << "type " << type << " size " << size << " count " << count;
                }
                admitted += admits;
            }
        }
    }
    EXPECT_GT(admitted, 10);  // the loop reaches the fast path
    EXPECT_FALSE(WriteRules().admits(1, {}));  // an empty table decides nothing
}

TEST(SchemaCodegen, PublishCheckedRefusesWhatTheSchemaRulesOut) {
    mock::Publisher publisher;
    const std::array<std::byte, 5> five{};
    std::uint64_t seqno = 1;
    const orders::PayloadCheck c = orders::publish_checked(publisher, 3, five, {}, &seqno);
    EXPECT_EQ(c.status, orders::PayloadCheck::Status::WrongSize);
    EXPECT_EQ(c.size, 5u);
    EXPECT_EQ(c.expected, 16u);
    EXPECT_EQ(c.rule, "exactly 16 bytes");
    EXPECT_EQ(seqno, 0u);
    EXPECT_EQ(orders::publish_checked(publisher, 99, {}).status, orders::PayloadCheck::Status::UnknownType);
    EXPECT_TRUE(publisher.events.empty());
}

Schema parse(const std::string& body) {
    auto s = Schema::parse("content_type = 7\ncontent_name = \"g\"\n" + body, "g.toml");
    if (!s) {
        ADD_FAILURE() << s.error().message();
        std::abort();
    }
    return std::move(s).value();
}

TEST(SchemaCodegen, NamesThatCollideInCppAreRefused) {
    const Schema camel = parse("[struct.a_b]\nfields = [{ name = \"x\", type = \"u8\" }]\n"
                               "[struct.aB]\nfields = [{ name = \"x\", type = \"u8\" }]\n");
    auto header = generate_cpp_header(camel);
    ASSERT_FALSE(header.ok());
    EXPECT_NE(header.error().message().find("would both be named AB in C++"), std::string::npos)
        << header.error().message();
    const Schema reserved = parse("[struct.flow]\nfields = [{ name = \"x\", type = \"u8\" }]\n");
    EXPECT_FALSE(generate_cpp_header(reserved).ok());
    const Schema ok = parse("[[event]]\nnumber = 2\nname = \"E\"\nfields = [{ name = \"class\", type = \"u8\" }]\n");
    auto named = generate_cpp_header(ok, {"not a namespace", ""});
    ASSERT_FALSE(named.ok());
    auto good = generate_cpp_header(ok, {"outer::inner", "g.toml"});
    ASSERT_TRUE(good.ok()) << good.error().message();
    EXPECT_NE(good->find("std::uint8_t class_;"), std::string::npos);  // keywords get a trailing _
    EXPECT_NE(good->find("namespace outer::inner {"), std::string::npos);
}

// hostile_names.toml: names that are standard macros get a trailing '_', descriptions with a
// newline, a NUL or a trailing backslash stay inside their comments (the header compiled).
TEST(SchemaCodegen, MacroNamesAndHostileTextsCompile) {
    hostile_names::EOF_ payload{};  // struct EOF
    payload.unix_ = 1;
    payload.INT_MAX_ = -1;
    EXPECT_EQ(payload.unix_ + static_cast<std::uint64_t>(-payload.INT_MAX_), 2u);
    EXPECT_EQ(static_cast<int>(hostile_names::Stdin::EOF_), 0);
    EXPECT_EQ(static_cast<int>(hostile_names::Stdin::errno_), 2);
    hostile_names::Eof event{};
    event.errno_ = 7;
    event.NULL_ = hostile_names::Stdin::linux_;
    event.EXIT_SUCCESS_ = {'A', 'B', 'C', 0};
    const hostile_names::Flow flow{.errno_ = 1, .EOF_ = 2};
    EXPECT_EQ(flow.tags()[1], 2u);
    EXPECT_EQ(hostile_names::event_name(hostile_names::EventType::EOF_), "EOF");
    EXPECT_EQ(hostile_names::event_name(hostile_names::EventType::NULL_), "NULL");
    mock::Publisher publisher;
    const std::uint8_t tail[] = {9};
    ASSERT_EQ(hostile_names::publish_eof(publisher, event, tail), 1u);
    EXPECT_EQ(publisher.events[0].payload.size(), hostile_names::EventInfo<hostile_names::EventType::EOF_>::kFixedSize + 1);
}

TEST(SchemaCodegen, FileNamesAndNamespacesCannotInjectCode) {
    const Schema s = parse("[[event]]\nnumber = 2\nname = \"E\"\n");
    auto header = generate_cpp_header(s, {"", "evil\n#error injected\r.toml\\"});
    ASSERT_TRUE(header.ok()) << header.error().message();
    EXPECT_EQ(header->find("\n#error"), std::string::npos);
    EXPECT_NE(header->find("from evil\\x0a#error injected\\x0d.toml\\.. Do not edit"), std::string::npos)
        << header->substr(0, 200);
    for (const char* ns : {"evring", "std", "EOF", "errno", "outer::NULL"}) {
        auto refused = generate_cpp_header(s, {ns, ""});
        ASSERT_FALSE(refused.ok()) << ns;
        EXPECT_NE(refused.error().message().find("--namespace"), std::string::npos) << refused.error().message();
    }
    const Schema named_evring = Schema::parse("content_type = 7\ncontent_name = \"evring\"\n", "e.toml").value();
    EXPECT_FALSE(generate_cpp_header(named_evring).ok());
}

#if __has_include(<evring/schema/typed_publish.hpp>)
// With evring's own publisher (evring/schema/typed_publish.hpp), into a real ring.
TEST(SchemaCodegen, HelpersPublishThroughEvringsPublisher) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    orders::OrderNew order{};
    order.order_id = 5;
    const std::uint8_t note[] = {'h', 'i'};
    const std::uint64_t seqno = orders::publish_order_new(publisher, order, note, {.symbol = 1});
    ASSERT_NE(seqno, 0u);
    ASSERT_EQ(orders::publish_heartbeat(publisher, {.order = 2}), seqno + 1);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(seqno, event));
    EXPECT_EQ(event.content_ext[0], 1u);
    std::vector<std::byte> payload(event.payload_size);
    ASSERT_EQ(copy_payload(*rings.reader, event, payload.data(), payload.size()), PayloadResult::Ok);
    std::string json;
    ASSERT_TRUE(append_fields_json(schema(), event.event_type, payload, json).ok());
    EXPECT_NE(json.find(R"("order_id":5,)"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("note_length":2,"note":"0x6869"})"), std::string::npos) << json;
    ASSERT_TRUE(it.read_descriptor(seqno + 1, event));
    EXPECT_EQ(event.event_type, static_cast<std::uint16_t>(orders::EventType::HEARTBEAT));
    EXPECT_EQ(event.payload_size, 0u);
    EXPECT_EQ(event.content_ext[1], 2u);
}

// The generated typed reads: a copy into the struct plus a caller's buffer, a view in place with a
// checked expiry, and unpack for bytes already copied; each refuses the wrong type or layout.
TEST(SchemaCodegen, TypedReadsCheckTypeLayoutAndExpiry) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    orders::OrderNew order{};
    order.order_id = 77;
    const std::uint8_t note[] = {'h', 'i', '!'};
    const std::uint64_t seqno = orders::publish_order_new(publisher, order, note);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(seqno, event));

    std::array<std::byte, 8> buffer{};
    const auto copied = orders::read<orders::EventType::ORDER_NEW>(*rings.reader, event, buffer);
    ASSERT_EQ(copied.status, orders::ReadStatus::Ok);
    EXPECT_EQ(copied.payload.order_id, 77u);
    EXPECT_EQ(copied.payload.note_length, 3u);
    ASSERT_EQ(copied.trailing.size(), 3u);
    EXPECT_EQ(copied.trailing[2], std::byte{'!'});
    std::array<std::byte, 2> small{};
    const auto too_small = orders::read<orders::EventType::ORDER_NEW>(*rings.reader, event, small);
    EXPECT_EQ(too_small.status, orders::ReadStatus::TooSmall);
    EXPECT_EQ(too_small.needed, 3u);
    EXPECT_EQ(orders::read<orders::EventType::FILL>(*rings.reader, event, buffer).status,
              orders::ReadStatus::WrongType);

    const auto in_place = orders::view<orders::EventType::ORDER_NEW>(*rings.reader, event);
    ASSERT_EQ(in_place.status(), orders::ReadStatus::Ok);
    EXPECT_EQ(in_place.fixed().order_id, 77u);
    EXPECT_EQ(in_place.trailing().size(), 3u);
    EXPECT_TRUE(in_place.valid());

    // A lying count (note_length 9 for 3 bytes) is WrongSize, with the rule.
    EventDescriptor lying = event;
    std::vector<std::byte> bytes(event.payload_size);
    ASSERT_EQ(copy_payload(*rings.reader, event, bytes.data(), bytes.size()), PayloadResult::Ok);
    const auto unpacked = orders::unpack<orders::EventType::ORDER_NEW>(event.event_type, bytes);
    ASSERT_TRUE(unpacked);
    EXPECT_EQ(unpacked.trailing.size(), 3u);
    bytes[offsetof(orders::OrderNew, note_length)] = std::byte{9};
    const auto bad = orders::unpack<orders::EventType::ORDER_NEW>(event.event_type, bytes);
    EXPECT_EQ(bad.status, orders::ReadStatus::WrongSize);
    EXPECT_EQ(bad.check.status, orders::PayloadCheck::Status::WrongSize);
    lying.payload_size = 10;  // shorter than the fixed part
    EXPECT_EQ(orders::read<orders::EventType::ORDER_NEW>(*rings.reader, lying, buffer).status,
              orders::ReadStatus::WrongSize);

    // Lapped: 2,000 more events overwrite the 64 KiB payload buffer; the copy and the view say so.
    for (int i = 0; i < 2000; ++i) orders::publish_order_new(publisher, order, note);
    EXPECT_EQ(orders::read<orders::EventType::ORDER_NEW>(*rings.reader, event, buffer).status,
              orders::ReadStatus::Expired);
    EXPECT_FALSE(in_place.valid());
    EXPECT_EQ(orders::view<orders::EventType::ORDER_NEW>(*rings.reader, event).status(), orders::ReadStatus::Expired);
}
#endif

}  // namespace
}  // namespace evring
