// Ring sets over NATS (docs/distributed.md, "Ring sets"): the Evring-Member
// header encoded and decoded (old messages without it: no member), a stream
// reader counting sequence numbers per member, and run_relay of a set read
// back merged, against a real nats-server on 127.0.0.1.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "nats/nats_encoding.hpp"
#include "nats/nats_reader.hpp"
#include "nats/nats_relay.hpp"
#include "evring/nats/nats_source.hpp"
#include "evring/set/ring_set.hpp"
#include "support/nats_relay.hpp"
#include "support/nats_server.hpp"
#include "support/nats_wire.hpp"
#include "support/relay_thread.hpp"
#include "support/temp_ring.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;

// The wire view of an outgoing message, as a receiver would see it.
struct Received {
    OutgoingMessage message;
    WireMessage wire() const {
        WireMessage w;
        w.subject = message.subject;
        w.msg_id = message.msg_id;
        for (const auto& h : message.headers) {
            const std::string_view name = h.name;
            if (name == kRingHeader) w.ring = h.value;
            else if (name == kEventHeader) w.event = h.value;
            else if (name == kGapHeader) w.gap = h.value;
            else if (name == kChunkHeader) w.chunk = h.value;
            else if (name == kMemberHeader) w.member = h.value;
        }
        w.body = message.body;
        return w;
    }
};

Encoder test_encoder() {
    SubjectLayout layout;
    layout.prefix = "evring.SET";
    return Encoder(test::test_ring_identity(), layout, 1 << 20);
}

TEST(NatsSetEncoding, EventsAndGapsCarryTheirMemberAndOldMessagesNone) {
    const Encoder encoder = test_encoder();
    EventDescriptor event{};
    event.seqno = 7;
    event.event_type = 3;
    Received with, without, gap;
    encoder.encode_event(event, {}, 0, with.message, 5);
    encoder.encode_event(event, {}, 0, without.message);
    encoder.encode_gap(7, 3, GapReason::FellBehind, 1, gap.message, 2);
    EXPECT_NE(with.message.msg_id, without.message.msg_id);  // seqno 7 of member 5 is another event
    EXPECT_NE(with.message.msg_id.find(":m5:7"), std::string::npos) << with.message.msg_id;

    DecodedMessage decoded;
    ASSERT_TRUE(decode_message(with.wire(), decoded).ok());
    EXPECT_EQ(decoded.member, std::optional<std::uint32_t>(5));
    ASSERT_TRUE(decode_message(without.wire(), decoded).ok());
    EXPECT_EQ(decoded.member, std::nullopt);
    ASSERT_TRUE(decode_message(gap.wire(), decoded).ok());
    EXPECT_EQ(decoded.member, std::optional<std::uint32_t>(2));
    EXPECT_EQ(decoded.gap.reserved, 0u);  // the record stays as version 1 readers check it

    for (const char* bad : {"1024", "-1", "x", "1 2", ""}) {
        Received hostile = with;
        for (auto& h : hostile.message.headers)
            if (std::string_view(h.name) == kMemberHeader) h.value = bad;
        const Status s = decode_message(hostile.wire(), decoded);
        if (std::string_view(bad).empty()) EXPECT_TRUE(s.ok());  // an empty header is no header
        else EXPECT_FALSE(s.ok()) << bad;
    }
}

class NatsSet : public ::testing::Test {
protected:
    void SetUp() override { EVRING_START_NATS_SERVER(server_); }

    struct Read {
        std::vector<std::string> order;  // "mM:sS@T" per event, "gM:F+C" per gap
        bool members = false;
    };
    Read read_back(const std::string& stream, std::size_t items, const Position& from = Position::oldest()) {
        Read read;
        // The relay creates the stream: wait for it (and its announcement).
        Result<std::unique_ptr<EventSource>> source = Error(ENOENT, "not opened");
        test::eventually(
            [&] {
                source = open_stream_source(server_.url() + "/" + stream);
                return source.ok() && (*source)->identity().instance != 0;
            },
            20s);
        EXPECT_TRUE(source.ok()) << source.error().message();
        if (!source) return read;
        const auto sought = (*source)->seek(from);
        EXPECT_TRUE(sought.ok()) << sought.error().message();
        SourceItem item;
        test::eventually(
            [&] {
                for (;;) {
                    const SourceStep step = (*source)->next(item);
                    if (step == SourceStep::Event)
                        read.order.push_back("m" + std::to_string(item.event.member) + ":s" +
                                             std::to_string(item.event.descriptor.seqno) + "@" +
                                             std::to_string(item.event.descriptor.record_epoch_nanos));
                    else if (step == SourceStep::Gap)
                        read.order.push_back("g" + std::to_string(item.gap.member) + ":" +
                                             std::to_string(item.gap.first_seqno) + "+" +
                                             std::to_string(item.gap.count));
                    else if (step != SourceStep::Notice)
                        break;
                }
                return read.order.size() >= items;
            },
            20s);
        read.members = (*source)->identity().members;
        return read;
    }

    test::NatsServer server_;
};

TEST_F(NatsSet, AReaderCountsSequenceNumbersPerMemberAndGapsKeepTheirMember) {
    auto connection = test::connect_to(server_);
    auto options = test::publisher_options("PM", test::test_ring_identity());
    options.members = true;
    auto publisher = test::open_publisher(connection, options);
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    auto event = [&](std::uint32_t member, std::uint64_t seqno, std::uint64_t nanos) {
        EventDescriptor d{};
        d.seqno = seqno;
        d.record_epoch_nanos = nanos;
        return test::publish_waiting(publisher, [&] { return publisher.publish_event(d, {}, member); });
    };
    ASSERT_TRUE(event(0, 1, 10));
    ASSERT_TRUE(event(1, 1, 20));
    ASSERT_TRUE(event(0, 2, 30));
    ASSERT_EQ(publisher.publish_gap(2, 3, GapReason::FellBehind, 1), PublishStatus::Ok);
    ASSERT_TRUE(event(1, 5, 40));
    ASSERT_TRUE(event(0, 4, 50));  // member 0's seqno 3 never published: a hole of member 0
    ASSERT_TRUE(publisher.flush(10s).ok());
    const Read read = read_back("PM", 7);
    const std::vector<std::string> want{"m0:s1@10", "m1:s1@20", "m0:s2@30", "g1:2+3",
                                        "m1:s5@40", "g0:3+1",   "m0:s4@50"};
    EXPECT_EQ(read.order, want);
    EXPECT_TRUE(read.members);
}

TEST_F(NatsSet, MemberSeqnoStartsAtThatMembersEventAndTheOthersFromThere) {
    auto connection = test::connect_to(server_);
    auto options = test::publisher_options("PS", test::test_ring_identity());
    options.members = true;
    auto publisher = test::open_publisher(connection, options);
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    // Member 1 is ahead in seqnos and member 0 has more events: a seqno alone
    // would name an event of each member.
    std::uint64_t nanos = 0;
    auto event = [&](std::uint32_t member, std::uint64_t seqno) {
        EventDescriptor d{};
        d.seqno = seqno;
        d.record_epoch_nanos = nanos += 10;
        return test::publish_waiting(publisher, [&] { return publisher.publish_event(d, {}, member); });
    };
    for (std::uint64_t i = 1; i <= 40; ++i) {
        ASSERT_TRUE(event(0, i));
        if (i % 2 == 0) {
            ASSERT_TRUE(event(1, 100 + i / 2));
        }
    }
    ASSERT_TRUE(publisher.flush(10s).ok());
    // 60 events at times 10..600: member 0's seqno i at its place in that order.
    const Read one = read_back("PS", 31, Position::member_seqno(1, 110));
    ASSERT_EQ(one.order.size(), 31u);  // from the 30th of 60 on
    const std::vector<std::string> first_one(one.order.begin(), one.order.begin() + 3);
    EXPECT_EQ(first_one, (std::vector<std::string>{"m1:s110@300", "m0:s21@310", "m0:s22@320"}));
    const Read zero = read_back("PS", 9, Position::member_seqno(0, 35));
    // (read_back reads what is there: 9 events from 0:35 before the tie below is published)
    const std::vector<std::string> want_zero{"m0:s35@520", "m0:s36@530", "m1:s118@540", "m0:s37@550",
                                             "m0:s38@560", "m1:s119@570", "m0:s39@580", "m0:s40@590",
                                             "m1:s120@600"};
    EXPECT_EQ(zero.order, want_zero);

    // A tie: member 0's seqno 41 and member 1's 121 at one nanosecond, member
    // 0 first in the merge. From 1:121, as on the set itself (every other
    // member from that event's time), member 0's event at that time comes too.
    nanos = 990;  // event() adds 10 first
    ASSERT_TRUE(event(0, 41));
    nanos = 990;
    ASSERT_TRUE(event(1, 121));
    ASSERT_TRUE(event(0, 42));
    ASSERT_TRUE(publisher.flush(10s).ok());
    const Read tie = read_back("PS", 3, Position::member_seqno(1, 121));
    EXPECT_EQ(tie.order, (std::vector<std::string>{"m0:s41@1000", "m1:s121@1000", "m0:s42@1010"}));
    // latest and -N count events of every member back from the newest.
    EXPECT_EQ(read_back("PS", 1, Position::latest()).order, (std::vector<std::string>{"m0:s42@1010"}));
    EXPECT_EQ(read_back("PS", 3, Position(Position::Kind::Back, 3)).order,
              (std::vector<std::string>{"m0:s41@1000", "m1:s121@1000", "m0:s42@1010"}));
    EXPECT_EQ(read_back("PS", 5, Position(Position::Kind::Back, 5)).order,
              (std::vector<std::string>{"m0:s40@590", "m1:s120@600", "m0:s41@1000", "m1:s121@1000", "m0:s42@1010"}));

    auto source = open_stream_source(server_.url() + "/PS");
    ASSERT_TRUE(source.ok()) << source.error().message();
    const auto plain = (*source)->seek(Position::seqno(5));
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.error().message().find("MEMBER:SEQNO"), std::string::npos) << plain.error().message();
}

TEST_F(NatsSet, MemberSeqnoOnARingsStreamIsRefused) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("PR", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    ASSERT_TRUE(publisher.flush(10s).ok());
    auto source = open_stream_source(server_.url() + "/PR");
    ASSERT_TRUE(source.ok()) << source.error().message();
    const auto sought = (*source)->seek(Position::member_seqno(1, 5));
    ASSERT_FALSE(sought.ok());
    EXPECT_NE(sought.error().message().find("not a ring set"), std::string::npos) << sought.error().message();
}

TEST_F(NatsSet, ARelayedSetIsReadBackMergedWithItsMembers) {
    test::TempDir dir;
    SetCreateOptions create;
    create.directory.read_environment = false;
    create.directory.ring_dir_override = dir.path();
    create.directory.print_warning = false;
    RingConfig config;
    config.name_or_path = "set";
    config.descriptor_shift = 8;
    config.payload_buf_shift = 16;
    const RingSetSpec spec(config, test::test_content(), 4);
    auto a = RingSetWriter::create(spec, create);
    auto b = RingSetWriter::create(spec, create);
    ASSERT_TRUE(a.ok() && b.ok());
    auto pa = a->publisher();
    auto pb = b->publisher();
    ASSERT_TRUE(pa.ok() && pb.ok());
    auto publish_at = [](Publisher& p, std::uint64_t nanos) {
        auto r = p.reserve(8);
        r.descriptor().record_epoch_nanos = nanos;
        std::memcpy(r.payload(), &nanos, 8);
        p.commit(r);
    };
    for (std::uint64_t t : {10, 30, 50}) publish_at(**pa, t);
    for (std::uint64_t t : {20, 40, 60}) publish_at(**pb, t);

    RelayOptions options;
    options.source = dir.file("set");
    auto url = parse_url(server_.url());
    ASSERT_TRUE(url.ok());
    options.url = *url;
    options.stream = "SET";
    options.start = Position::oldest();
    options.events_per_message = 8;  // asked for, but a set's events travel one per message
    options.flush_timeout = 200ms;
    {
        test::RelayThread relay(options);
        const Read read = read_back("SET", 6);
        const std::vector<std::string> want{"m0:s1@10", "m1:s1@20", "m0:s2@30",
                                            "m1:s2@40", "m0:s3@50", "m1:s3@60"};
        EXPECT_EQ(read.order, want) << relay.log();
        EXPECT_TRUE(read.members);
        EXPECT_TRUE(relay.logged("relaying ring set")) << relay.log();
    }
    // A relay started again resumes after the last relayed event: nothing twice.
    publish_at(**pa, 70);
    publish_at(**pb, 80);
    test::RelayThread relay(options);
    const Read read = read_back("SET", 8);
    ASSERT_EQ(read.order.size(), 8u) << relay.log();
    EXPECT_EQ(read.order[6], "m0:s4@70");
    EXPECT_EQ(read.order[7], "m1:s4@80");
    EXPECT_TRUE(relay.logged("resuming ring set")) << relay.log();
    // Stored once each: the event that positioned the resumed merge was not published again.
    auto connection = test::connect_to(server_);
    EXPECT_EQ(test::stored_event_seqnos(test::stored_messages(connection, "SET", true)).size(), 8u);
}

}  // namespace
}  // namespace evring::nats
