// A stream reader as a named reader's position (DurableSource,
// lib/nats/reader_durable.cpp) against a real nats-server: a commit
// acknowledges what was handed out, a reader opened again under the name
// resumes after it, start_over forgets it, and names or consumers that are
// not evring's are refused and left alone.
#include <gtest/gtest.h>

#include "evring/source/position.hpp"
#include "nats/connection_impl.hpp"
#include "nats/nats_reader.hpp"
#include "support/nats_relay.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;
using test::publish_test_event;

// Reads at most `most` events, until none came for 300 ms (at most 10 s in all).
std::vector<std::uint64_t> read_seqnos(StreamReader& reader, std::size_t most = 1000,
                                       std::vector<std::uint32_t>* members = nullptr) {
    std::vector<std::uint64_t> out;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    auto quiet_until = std::chrono::steady_clock::now() + 300ms;
    SourceItem item;
    while (out.size() < most && std::chrono::steady_clock::now() < std::min(deadline, quiet_until)) {
        const SourceStep step = reader.next(item, PayloadRead::None);
        if (step == SourceStep::Event) {
            out.push_back(item.event.descriptor.seqno);
            if (members != nullptr) members->push_back(item.event.member);
            quiet_until = std::chrono::steady_clock::now() + 300ms;
        }
        if (step == SourceStep::NotReady) reader.wait(20ms);
        if (step == SourceStep::Failed) {
            ADD_FAILURE() << reader.error().message();
            break;
        }
    }
    return out;
}

class NatsDurable : public ::testing::Test {
protected:
    void SetUp() override {
        EVRING_START_NATS_SERVER(server_);
        publishing_ = std::make_unique<Connection>(test::connect_to(server_));
        publisher_ = std::make_unique<StreamPublisher>(
            test::open_publisher(*publishing_, test::publisher_options("DUR", test::test_ring_identity())));
        ASSERT_EQ(publisher_->announce_ring(1), PublishStatus::Ok);
        for (std::uint64_t s = 1; s <= 100; ++s) ASSERT_TRUE(publish_test_event(*publisher_, s, 16));
        ASSERT_TRUE(publisher_->flush(10s).ok());
    }
    // A reader on a connection of its own, under `name`.
    std::unique_ptr<StreamReader> named(std::string_view name, bool start_over, DurableResume& resume,
                                        const char* stream = "DUR") {
        ReaderOptions options;
        options.stream = stream;
        auto reader = StreamReader::open(std::make_unique<Connection>(test::connect_to(server_)), options);
        EXPECT_TRUE(reader.ok()) << reader.error().message();
        auto opened = (*reader)->durable_open(name, start_over);
        EXPECT_TRUE(opened.ok()) << opened.error().message();
        if (opened) resume = *opened;
        auto sought = (*reader)->seek(Position::oldest());
        EXPECT_TRUE(sought.ok()) << sought.error().message();
        return std::move(reader).value();
    }
    test::NatsServer server_;
    std::unique_ptr<Connection> publishing_;
    std::unique_ptr<StreamPublisher> publisher_;
};

TEST_F(NatsDurable, ACommitAcknowledgesWhatWasHandedOutAndTheNextReaderResumesAfterIt) {
    DurableResume resume;
    {
        auto reader = named("billing", false, resume);
        EXPECT_FALSE(resume.existed);
        EXPECT_EQ(read_seqnos(*reader, 40), test::iota_seqnos(1, 40));
        ASSERT_TRUE(reader->durable_commit(30, 0).ok());
    }
    {
        auto reader = named("billing", false, resume);
        EXPECT_TRUE(resume.existed);
        EXPECT_TRUE(resume.resumed);
        EXPECT_TRUE(resume.floor_known);
        EXPECT_EQ(resume.floor_seqno, 30u);
        EXPECT_GT(resume.unacked, 0u);  // the first reader was delivered more than it acknowledged
        EXPECT_EQ(read_seqnos(*reader), test::iota_seqnos(31, 100));
        ASSERT_TRUE(reader->durable_commit(100, 0).ok());
    }
    {
        auto reader = named("billing", false, resume);
        EXPECT_EQ(resume.floor_seqno, 100u);
        EXPECT_TRUE(read_seqnos(*reader).empty());
    }
    // start_over forgets the position: the next seek() decides.
    auto reader = named("billing", true, resume);
    EXPECT_TRUE(resume.existed);
    EXPECT_FALSE(resume.resumed);
    EXPECT_EQ(read_seqnos(*reader), test::iota_seqnos(1, 100));
}

TEST_F(NatsDurable, AReaderThatAcknowledgesNothingKeepsThePositionItResumedFrom) {
    DurableResume resume;
    {
        auto reader = named("idle", false, resume);
        EXPECT_EQ(read_seqnos(*reader, 30), test::iota_seqnos(1, 30));
        ASSERT_TRUE(reader->durable_commit(30, 0).ok());
    }
    {
        // Created again after stream sequence F: until it acknowledges, the
        // server reports an ack floor of 0, and the start must stand for it.
        auto reader = named("idle", false, resume);
        EXPECT_EQ(resume.floor_seqno, 30u);
        EXPECT_EQ(read_seqnos(*reader, 5), test::iota_seqnos(31, 35));
    }
    auto reader = named("idle", false, resume);
    EXPECT_TRUE(resume.floor_known);
    EXPECT_EQ(resume.floor_seqno, 30u);
    EXPECT_EQ(read_seqnos(*reader), test::iota_seqnos(31, 100));
}

// A ring set's stream: one event a message, every member its own seqnos.
// A commit names the last event handed out by its member, and acknowledges
// every message up to it, of every member; the next reader resumes each
// member after its own event at the floor.
TEST_F(NatsDurable, ARingSetsStreamResumesEveryMemberAfterItsOwnEvent) {
    nats::PublisherOptions options = test::publisher_options("DURSET", test::test_ring_identity());
    options.members = true;
    StreamPublisher set = test::open_publisher(*publishing_, options);
    ASSERT_EQ(set.announce_ring(1), PublishStatus::Ok);
    // m0:1, m1:1, m0:2, m1:2, ... m0:50, m1:50
    for (std::uint64_t s = 1; s <= 50; ++s)
        for (std::uint32_t m = 0; m < 2; ++m) {
            const EventDescriptor event = test::test_event(s, 3, 16);
            const std::vector<std::byte> payload = test::test_payload(s, 16);
            ASSERT_TRUE(test::publish_waiting(set, [&] { return set.publish_event(event, payload, m); }));
        }
    ASSERT_TRUE(set.flush(10s).ok());
    DurableResume resume;
    {
        auto reader = named("fleet", false, resume, "DURSET");
        std::vector<std::uint32_t> members;
        EXPECT_EQ(read_seqnos(*reader, 30, &members).size(), 30u);
        // Handed out through m0:15, m1:15; written through m0:10 (and so m1:9).
        ASSERT_TRUE(reader->durable_commit(10, 0).ok());
    }
    {
        auto reader = named("fleet", false, resume, "DURSET");
        EXPECT_TRUE(resume.resumed);
        EXPECT_EQ(resume.floor_members, (std::vector<std::uint64_t>{10, 9}));
        std::vector<std::uint32_t> members;
        const std::vector<std::uint64_t> seqnos = read_seqnos(*reader, 4, &members);
        EXPECT_EQ(seqnos, (std::vector<std::uint64_t>{10, 11, 11, 12}));
        EXPECT_EQ(members, (std::vector<std::uint32_t>{1, 0, 1, 0}));
        // Member 1's 10 is after member 0's 11 is not: committing m1:10
        // acknowledges up to it only.
        ASSERT_TRUE(reader->durable_commit(10, 1).ok());
    }
    auto reader = named("fleet", false, resume, "DURSET");
    EXPECT_EQ(resume.floor_members, (std::vector<std::uint64_t>{10, 10}));
    std::vector<std::uint32_t> members;
    const std::vector<std::uint64_t> seqnos = read_seqnos(*reader, 1000, &members);
    ASSERT_EQ(seqnos.size(), 80u);  // 11..50 of each, none twice, none lost
    EXPECT_EQ(seqnos.front(), 11u);
    EXPECT_EQ(members.front(), 0u);
    EXPECT_EQ(seqnos.back(), 50u);
    EXPECT_EQ(reader->stats().duplicates, 0u);
}

TEST_F(NatsDurable, NamesJetStreamRefusesAndConsumersEvringDidNotMakeAreRefusedAndLeftAlone) {
    ReaderOptions options;
    options.stream = "DUR";
    auto reader = StreamReader::open(std::make_unique<Connection>(test::connect_to(server_)), options);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    auto dotted = (*reader)->durable_open("a.b", false);
    ASSERT_FALSE(dotted.ok());
    EXPECT_NE(dotted.error().message().find("reader 'a.b' cannot name a JetStream durable consumer on stream 'DUR'"),
              std::string::npos)
        << dotted.error().message();

    jsConsumerConfig config;
    jsConsumerConfig_Init(&config);
    config.Durable = "other";
    config.AckPolicy = js_AckExplicit;
    jsErrCode code = static_cast<jsErrCode>(0);
    ASSERT_EQ(js_AddConsumer(nullptr, publishing_->impl().jetstream, "DUR", &config, nullptr, &code), NATS_OK);
    auto other = (*reader)->durable_open("other", true);
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().message().find("has a consumer 'other' that evring did not make"), std::string::npos)
        << other.error().message();
    jsConsumerInfo* info = nullptr;
    ASSERT_EQ(js_GetConsumerInfo(&info, publishing_->impl().jetstream, "DUR", "other", nullptr, &code), NATS_OK);
    EXPECT_EQ(info->Config->AckPolicy, js_AckExplicit);  // untouched
    jsConsumerInfo_Destroy(info);
}

}  // namespace
}  // namespace evring::nats
