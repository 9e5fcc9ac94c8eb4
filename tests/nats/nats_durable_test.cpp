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
std::vector<std::uint64_t> read_seqnos(StreamReader& reader, std::size_t most = 1000) {
    std::vector<std::uint64_t> out;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    auto quiet_until = std::chrono::steady_clock::now() + 300ms;
    SourceItem item;
    while (out.size() < most && std::chrono::steady_clock::now() < std::min(deadline, quiet_until)) {
        const SourceStep step = reader.next(item, PayloadRead::None);
        if (step == SourceStep::Event) {
            out.push_back(item.event.descriptor.seqno);
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
    std::unique_ptr<StreamReader> named(std::string_view name, bool start_over, DurableResume& resume) {
        ReaderOptions options;
        options.stream = "DUR";
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
        ASSERT_TRUE(reader->durable_commit(30).ok());
    }
    {
        auto reader = named("billing", false, resume);
        EXPECT_TRUE(resume.existed);
        EXPECT_TRUE(resume.resumed);
        EXPECT_TRUE(resume.floor_known);
        EXPECT_EQ(resume.floor_seqno, 30u);
        EXPECT_GT(resume.unacked, 0u);  // the first reader was delivered more than it acknowledged
        EXPECT_EQ(read_seqnos(*reader), test::iota_seqnos(31, 100));
        ASSERT_TRUE(reader->durable_commit(100).ok());
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
        ASSERT_TRUE(reader->durable_commit(30).ok());
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
