// The NATS encoding without a server: every kind of message round-trips,
// subjects follow the grammar of docs/distributed.md, chunks and batches
// reassemble, and hostile headers and bodies are refused with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "nats/nats_encoding.hpp"
#include "support/nats_wire.hpp"

namespace evring::nats {
namespace {

using test::OwnedWire;
using test::test_event;
using test::test_payload;
using test::test_ring_identity;

SubjectLayout layout(int flow_tag = -1) {
    SubjectLayout l;
    l.prefix = "evring.test";
    l.flow_tag = flow_tag;
    return l;
}

DecodedMessage decode_ok(const OwnedWire& wire) {
    DecodedMessage out;
    auto status = decode_message(wire.view(), out);
    EXPECT_TRUE(status.ok()) << status.error().message();
    return out;
}

std::string refusal(const OwnedWire& wire) {
    DecodedMessage out;
    auto status = decode_message(wire.view(), out);
    EXPECT_FALSE(status.ok()) << "accepted a hostile message";
    return status.ok() ? std::string() : status.error().message();
}

TEST(NatsEncoding, AnEventRoundTripsWithItsDescriptorAndPayload) {
    Encoder encoder(test_ring_identity(), layout(), 1 << 20);
    auto event = test_event(17, 9, 40);
    auto payload = test_payload(17, 40);
    OutgoingMessage message;
    encoder.encode_event(event, payload, 0, message);
    EXPECT_EQ(message.subject, "evring.test.9");
    EXPECT_EQ(message.msg_id, "inst-1:17");
    EXPECT_EQ(message.first_seqno, 17u);
    auto wire = OwnedWire::from(message);
    EXPECT_EQ(wire.header(kEventHeader), "17 9 2 17 42 0");
    EXPECT_EQ(wire.header(kRingHeader).substr(0, 11), "1 inst-1 1 ");
    auto decoded = decode_ok(wire);
    EXPECT_EQ(decoded.kind, MessageKind::Event);
    EXPECT_EQ(decoded.instance, "inst-1");
    EXPECT_EQ(decoded.content_type, 1);
    EXPECT_EQ(decoded.schema_hash, test_ring_identity().schema_hash);
    EXPECT_EQ(std::memcmp(&decoded.event, &event, sizeof event), 0);
    ASSERT_EQ(decoded.part.size(), payload.size());
    EXPECT_EQ(std::memcmp(decoded.part.data(), payload.data(), payload.size()), 0);
    EXPECT_EQ(decoded.chunk_count, 1u);
}

TEST(NatsEncoding, SubjectsCarryTheTypeNumberOrNameAndTheChosenFlowTag) {
    SubjectLayout named = layout(1);
    named.type_names = {"", "", "BLOCK_START"};
    Encoder encoder(test_ring_identity(), named, 1 << 20);
    OutgoingMessage message;
    encoder.encode_event(test_event(5, 2, 0), {}, 0, message);
    EXPECT_EQ(message.subject, "evring.test.BLOCK_START.5");
    encoder.encode_event(test_event(6, 3, 0), {}, 0, message);
    EXPECT_EQ(message.subject, "evring.test.3.6");
    EXPECT_EQ(control_subject("p", MessageKind::Gap), "p._evring.gap");
    EXPECT_EQ(control_subject("p", MessageKind::Announcement), "p._evring.ring");
    EXPECT_EQ(control_subject("p", MessageKind::Schema), "p._evring.schema");
    EXPECT_EQ(control_subject("p", MessageKind::Batch), "p._evring.batch");
    EXPECT_EQ(event_filter(named, std::string_view("7"), 12), "evring.test.7.12");
    EXPECT_EQ(event_filter(named, std::nullopt, 12), "evring.test.*.12");
    EXPECT_EQ(event_filter(layout(), std::string_view("7"), std::nullopt), "evring.test.7");
    EXPECT_EQ(event_filter(layout(), std::string_view("7"), 3), std::nullopt);  // no flow token
}

TEST(NatsEncoding, LayoutsWithUnusableTokensAreRefused) {
    SubjectLayout l = layout();
    EXPECT_TRUE(validate_subject_layout(l).ok());
    for (const char* prefix : {"", "a..b", "a.*", "a.>", "a b", ".a", "a."}) {
        l.prefix = prefix;
        EXPECT_FALSE(validate_subject_layout(l).ok()) << prefix;
    }
    l = layout(4);
    EXPECT_FALSE(validate_subject_layout(l).ok());
    for (const char* name : {"_evring", "12", "a.b", "a b", "x*"}) {
        l = layout();
        l.type_names = {name};
        EXPECT_FALSE(validate_subject_layout(l).ok()) << name;
    }
}

TEST(NatsEncoding, StreamSubjectPatternsCoverAPrefixOnlyWhenTheyMatchAllOfIt) {
    EXPECT_TRUE(pattern_covers_prefix(">", "a.b"));
    EXPECT_TRUE(pattern_covers_prefix("a.>", "a.b"));
    EXPECT_TRUE(pattern_covers_prefix("a.b.>", "a.b"));
    EXPECT_TRUE(pattern_covers_prefix("*.b.>", "a.b"));
    EXPECT_FALSE(pattern_covers_prefix("a.b.*", "a.b"));
    EXPECT_FALSE(pattern_covers_prefix("a.b", "a.b"));
    EXPECT_FALSE(pattern_covers_prefix("a.b.c.>", "a.b"));
    EXPECT_FALSE(pattern_covers_prefix("x.>", "a.b"));
}

TEST(NatsEncoding, AGapCarriesItsExactRangeAndReason) {
    Encoder encoder(test_ring_identity(), layout(), 1 << 20);
    OutgoingMessage message;
    encoder.encode_gap(100, 25, GapReason::FellBehind, 77, message);
    EXPECT_EQ(message.subject, "evring.test._evring.gap");
    EXPECT_EQ(message.msg_id, "inst-1:gap:100");
    auto wire = OwnedWire::from(message);  // the decoded spans point into it
        auto decoded = decode_ok(wire);
    EXPECT_EQ(decoded.kind, MessageKind::Gap);
    EXPECT_EQ(decoded.gap.first_lost_seqno, 100u);
    EXPECT_EQ(decoded.gap.lost_count, 25u);
    EXPECT_EQ(decoded.gap.reason, GapReason::FellBehind);
    EXPECT_EQ(decoded.gap.detected_epoch_nanos, 77u);
    EXPECT_EQ(decoded.first_seqno(), 100u);
    EXPECT_EQ(decoded.last_seqno(), 124u);
}

TEST(NatsEncoding, AnAnnouncementNamesTheRingAndTheSubjectLayout) {
    SubjectLayout named = layout(2);
    named.type_names = {"", "START"};
    Encoder encoder(test_ring_identity("inst-9", "/dev/shm/orders"), named, 1 << 20);
    OutgoingMessage message;
    encoder.encode_announcement(500, kAnnounceFiltered, 99, message);
    auto wire = OwnedWire::from(message);  // the decoded spans point into it
        auto decoded = decode_ok(wire);
    ASSERT_EQ(decoded.kind, MessageKind::Announcement);
    const Announcement& a = decoded.announcement;
    EXPECT_EQ(a.ring.name, "/dev/shm/orders");
    EXPECT_EQ(a.ring.instance, "inst-9");
    EXPECT_EQ(a.ring.size.descriptor_capacity, 1024u);
    EXPECT_EQ(a.first_seqno, 500u);
    EXPECT_EQ(a.announced_epoch_nanos, 99u);
    EXPECT_EQ(a.flow_token, 2);
    EXPECT_EQ(a.flags, kAnnounceFiltered | kAnnounceTypeNames);
}

TEST(NatsEncoding, AnEventLargerThanOneMessageTravelsInChunksThatReassemble) {
    Encoder encoder(test_ring_identity(), layout(), 4096);
    auto event = test_event(3, 4, 10'000);
    auto payload = test_payload(3, 10'000);
    const std::uint32_t chunks = encoder.event_chunks(payload.size());
    EXPECT_EQ(chunks, 3u);  // 10064 bytes in 4096-byte pieces
    std::vector<std::byte> whole;
    for (std::uint32_t i = 0; i < chunks; ++i) {
        OutgoingMessage message;
        encoder.encode_event(event, payload, i, message);
        EXPECT_LE(message.body.size(), 4096u);
        EXPECT_EQ(message.msg_id, i == 0 ? "inst-1:3" : "inst-1:3:" + std::to_string(i));
        auto wire = OwnedWire::from(message);  // the decoded spans point into it
        auto decoded = decode_ok(wire);
        EXPECT_EQ(decoded.chunk, i);
        EXPECT_EQ(decoded.chunk_count, chunks);
        EXPECT_EQ(decoded.event.seqno, 3u);
        whole.insert(whole.end(), decoded.part.begin(), decoded.part.end());
    }
    ASSERT_EQ(whole.size(), payload.size());
    EXPECT_EQ(std::memcmp(whole.data(), payload.data(), payload.size()), 0);
}

TEST(NatsEncoding, ASchemaTravelsWholeOrInChunks) {
    std::vector<std::byte> blob = test_payload(1, 9000);
    for (std::size_t max_body : {std::size_t{1} << 20, std::size_t{4096}}) {
        Encoder encoder(test_ring_identity(), layout(), max_body);
        std::vector<std::byte> whole;
        for (std::uint32_t i = 0; i < encoder.schema_chunks(blob.size()); ++i) {
            OutgoingMessage message;
            encoder.encode_schema(blob, i, message);
            auto wire = OwnedWire::from(message);  // the decoded spans point into it
        auto decoded = decode_ok(wire);
            EXPECT_EQ(decoded.kind, MessageKind::Schema);
            EXPECT_EQ(decoded.schema_size, blob.size());
            whole.insert(whole.end(), decoded.part.begin(), decoded.part.end());
        }
        EXPECT_EQ(whole, blob) << max_body;
    }
}

TEST(NatsEncoding, ABatchCarriesConsecutiveEventsThatTheCursorWalks) {
    Encoder encoder(test_ring_identity(), layout(), 4096);
    OutgoingMessage message;
    encoder.begin_batch(message);
    std::uint64_t seqno = 10;
    while (encoder.add_to_batch(test_event(seqno, 1, 100), test_payload(seqno, 100), message)) ++seqno;
    encoder.finish_batch(message);
    EXPECT_EQ(message.batch_count, seqno - 10);  // 4096 / 164 = 24 events
    EXPECT_EQ(message.batch_count, 24u);
    auto wire = OwnedWire::from(message);  // the decoded spans point into it
        auto decoded = decode_ok(wire);
    ASSERT_EQ(decoded.kind, MessageKind::Batch);
    EXPECT_EQ(decoded.batch_first, 10u);
    EXPECT_EQ(decoded.batch_last, 33u);
    BatchCursor cursor(decoded);
    EventDescriptor event;
    std::span<const std::byte> payload;
    std::uint64_t expect = 10;
    while (cursor.next(event, payload)) {
        EXPECT_EQ(event.seqno, expect);
        EXPECT_EQ(std::vector<std::byte>(payload.begin(), payload.end()), test_payload(expect, 100));
        ++expect;
    }
    EXPECT_EQ(expect, 34u);
}

// Hostile messages: each tampering is refused with a reason.

OwnedWire event_wire() {
    Encoder encoder(test_ring_identity(), layout(), 1 << 20);
    OutgoingMessage message;
    encoder.encode_event(test_event(5, 2, 16), test_payload(5, 16), 0, message);
    return OwnedWire::from(message);
}

TEST(NatsEncodingHostile, AMessageWithoutTheRingHeaderIsNotAnEvringMessage) {
    auto wire = event_wire();
    wire.headers.erase(kRingHeader);
    EXPECT_FALSE(is_evring_message(wire.view()));
    EXPECT_NE(refusal(wire).find("not an evring message"), std::string::npos);
}

TEST(NatsEncodingHostile, BadRingHeadersAreRefused) {
    const std::string hash(64, 'a');
    for (std::string value : {"2 inst 1 " + hash, "1 inst 1 " + hash + " extra", "1 inst 70000 " + hash,
                              "1 inst 1 " + hash.substr(1), "1 in/st 1 " + hash, "1  inst 1 " + hash,
                              "1 inst 01 " + hash, "1 inst -1 " + hash, "1 inst 1 " + std::string(64, 'G'),
                              std::string("1"), "01 inst 1 " + hash, "1 " + std::string(65, 'x') + " 1 " + hash}) {
        auto wire = event_wire();
        wire.headers[kRingHeader] = value;
        refusal(wire);
    }
}

TEST(NatsEncodingHostile, EventHeadersThatDisagreeWithTheBodyOrOverflowAreRefused) {
    for (std::string value : {"6 2 2 5 42 0", "5 3 2 5 42 0", "5 2 2 5 42 1", "0 2 2 5 42 0", "5 2 2 5 42",
                              "5 65536 2 5 42 0", "5 2 2 5 42 0 0", "18446744073709551616 2 2 5 42 0",
                              "4611686018427387905 2 2 5 42 0", "5 2 2 5 42 0 ", " 5 2 2 5 42 0", "x"}) {
        auto wire = event_wire();
        wire.headers[kEventHeader] = value;
        refusal(wire);
    }
}

TEST(NatsEncodingHostile, BodiesOfTheWrongSizeAreRefused) {
    auto wire = event_wire();
    wire.body.resize(63);
    refusal(wire);
    wire = event_wire();
    wire.body.push_back(std::byte{0});  // payload_size says 16
    EXPECT_NE(refusal(wire).find("claims a 16-byte payload"), std::string::npos);
    wire = event_wire();
    EventDescriptor descriptor;
    std::memcpy(&descriptor, wire.body.data(), sizeof descriptor);
    descriptor.payload_size = 0xffffffffu;  // claims 4 GiB: refused, nothing allocated
    std::memcpy(wire.body.data(), &descriptor, sizeof descriptor);
    refusal(wire);
}

TEST(NatsEncodingHostile, NoKindOrSeveralKindsAreRefused) {
    auto wire = event_wire();
    wire.headers.erase(kEventHeader);
    EXPECT_NE(refusal(wire).find("without a kind"), std::string::npos);
    wire = event_wire();
    wire.headers[kGapHeader] = "1 1 1";
    EXPECT_NE(refusal(wire).find("more than one kind"), std::string::npos);
}

TEST(NatsEncodingHostile, ImpossibleChunksAreRefused) {
    for (std::string value : {"0 1", "2 2", "0 0", "1 99999999", "a b", "0 2"}) {
        auto wire = event_wire();
        wire.headers[kChunkHeader] = value;  // "0 2": chunk 0 holds the whole event already
        refusal(wire);
    }
    auto wire = event_wire();
    wire.headers[kChunkHeader] = "1 2";
    wire.body.clear();
    refusal(wire);
}

TEST(NatsEncodingHostile, GapsAnnouncementsAndBatchesWithImpossibleValuesAreRefused) {
    Encoder encoder(test_ring_identity(), layout(), 1 << 20);
    OutgoingMessage message;
    encoder.encode_gap(10, 5, GapReason::Abandoned, 1, message);
    for (std::string value : {"10 5 9", "10 0 1", "0 5 2", "10 5 2 1", "4611686018427387904 2 1", "10 6 2"}) {
        auto wire = OwnedWire::from(message);
        wire.headers[kGapHeader] = value;
        refusal(wire);
    }
    encoder.encode_announcement(7, 0, 1, message);
    auto wire = OwnedWire::from(message);
    wire.body.resize(wire.body.size() - 1);  // name_size says one byte more
    refusal(wire);
    wire = OwnedWire::from(message);
    AnnouncementBody body;
    std::memcpy(&body, wire.body.data(), sizeof body);
    body.name_size = 0xffffffffu;
    std::memcpy(wire.body.data(), &body, sizeof body);
    refusal(wire);

    encoder.begin_batch(message);
    for (std::uint64_t s = 1; s <= 3; ++s) encoder.add_to_batch(test_event(s, 1, 8), test_payload(s, 8), message);
    encoder.finish_batch(message);
    for (std::string value : {"1 3 4", "2 3 3", "1 4 3", "1 3 0", "3 1 3"}) {
        wire = OwnedWire::from(message);
        wire.headers[kBatchHeader] = value;
        refusal(wire);
    }
    wire = OwnedWire::from(message);
    wire.body.resize(wire.body.size() - 1);
    refusal(wire);
}

TEST(NatsEncodingHostile, RandomBodiesAndHeadersNeverCrashTheDecoder) {
    std::mt19937_64 rng(11);
    auto base = event_wire();
    for (int round = 0; round < 20'000; ++round) {
        OwnedWire wire = base;
        wire.body.resize(rng() % 300);
        for (auto& b : wire.body) b = std::byte(rng() & 0xff);
        const char* names[] = {kEventHeader, kGapHeader, kAnnounceHeader, kSchemaHeader, kBatchHeader, kChunkHeader};
        wire.headers.erase(kEventHeader);
        const char* kind = names[rng() % 6];
        std::string value;
        for (auto i = rng() % 40; i > 0; --i) value.push_back("0123456789 a-"[rng() % 13]);
        wire.headers[kind] = value;
        DecodedMessage out;
        (void)decode_message(wire.view(), out);
    }
}

}  // namespace
}  // namespace evring::nats
