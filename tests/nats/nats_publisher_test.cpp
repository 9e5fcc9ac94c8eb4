// The relay's publisher against a real nats-server: what it stores, exactly
// once and in order, through restarts of the publisher and of the server;
// gaps, announcements, the schema; streams it must refuse.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "nats/nats_publisher.hpp"
#include "support/nats_relay.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;
using test::iota_seqnos;
using test::publish_test_event;
using test::stored_event_seqnos;
using test::stored_messages;
using test::test_payload;

class NatsPublisher : public ::testing::Test {
protected:
    void SetUp() override { EVRING_START_NATS_SERVER(server_); }
    test::NatsServer server_;
};

TEST_F(NatsPublisher, StoresEveryEventOnceWithItsDescriptorAndPayload) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("RT", test::test_ring_identity()));
    auto resume = publisher.resume_point();
    ASSERT_TRUE(resume.ok()) << resume.error().message();
    EXPECT_EQ(resume->state, ResumeState::Empty);
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 500; ++s) ASSERT_TRUE(publish_test_event(publisher, s, s % 200));
    ASSERT_TRUE(publisher.flush(10s).ok());

    auto messages = stored_messages(connection, "RT");
    ASSERT_EQ(messages.size(), 501u);
    EXPECT_EQ(messages[0].decoded.kind, MessageKind::Announcement);
    EXPECT_EQ(messages[0].decoded.announcement.ring.name, "/dev/shm/test");
    EXPECT_EQ(messages[0].wire.subject, "evring.RT._evring.ring");
    for (std::uint64_t s = 1; s <= 500; ++s) {
        const auto& m = messages[s];
        ASSERT_EQ(m.decoded.kind, MessageKind::Event);
        const EventDescriptor expected = test::test_event(s, 3, static_cast<std::uint32_t>(s % 200));
        EXPECT_EQ(std::memcmp(&m.decoded.event, &expected, sizeof expected), 0) << s;
        EXPECT_EQ(std::vector<std::byte>(m.decoded.part.begin(), m.decoded.part.end()), test_payload(s, s % 200));
        EXPECT_EQ(m.wire.subject, "evring.RT.3");
        EXPECT_EQ(m.wire.msg_id, "inst-1:" + std::to_string(s));
    }
    auto stats = publisher.stats();
    EXPECT_EQ(stats.events, 500u);
    EXPECT_EQ(stats.window_messages, 0u);
    EXPECT_EQ(stats.recoveries, 0u);
}

TEST_F(NatsPublisher, PublishingTheSameSequenceNumbersTwiceStoresThemOnce) {
    auto connection = test::connect_to(server_);
    {
        auto publisher = test::open_publisher(connection, test::publisher_options("DUP", test::test_ring_identity()));
        for (std::uint64_t s = 1; s <= 100; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 16));
        ASSERT_TRUE(publisher.flush(10s).ok());
    }
    // A second relay that ignores the resume point and starts over: every
    // message is a duplicate by its Nats-Msg-Id.
    auto again = test::open_publisher(connection, test::publisher_options("DUP", test::test_ring_identity()));
    for (std::uint64_t s = 1; s <= 100; ++s) ASSERT_TRUE(publish_test_event(again, s, 16));
    ASSERT_TRUE(publish_test_event(again, 101, 16));
    ASSERT_TRUE(again.flush(10s).ok());
    EXPECT_EQ(stored_event_seqnos(stored_messages(connection, "DUP")), iota_seqnos(1, 101));
}

TEST_F(NatsPublisher, ARestartedPublisherResumesAtTheNextSequenceNumberWithoutDuplicates) {
    auto connection = test::connect_to(server_);
    {
        auto publisher = test::open_publisher(connection, test::publisher_options("RES", test::test_ring_identity()));
        ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
        for (std::uint64_t s = 1; s <= 3000; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 32));
        // Destroyed mid-stream, without flush: some messages may still be on the way.
    }
    auto publisher = test::open_publisher(connection, test::publisher_options("RES", test::test_ring_identity()));
    auto resume = publisher.resume_point();
    ASSERT_TRUE(resume.ok()) << resume.error().message();
    ASSERT_EQ(resume->state, ResumeState::ThisInstance);
    ASSERT_TRUE(resume->latest_announcement.has_value());
    EXPECT_GE(resume->next_seqno, 1u);
    EXPECT_LE(resume->next_seqno, 3001u);
    for (std::uint64_t s = resume->next_seqno; s <= 5000; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 32));
    ASSERT_TRUE(publisher.flush(10s).ok());
    EXPECT_EQ(stored_event_seqnos(stored_messages(connection, "RES")), iota_seqnos(1, 5000));
    auto after = publisher.resume_point();
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->next_seqno, 5001u);
}

TEST_F(NatsPublisher, AnotherClientsMessagesInTheStreamAreChainedPastAndResumedPast) {
    auto connection = test::connect_to(server_);
    {
        auto publisher = test::open_publisher(connection, test::publisher_options("FGN", test::test_ring_identity()));
        ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
        for (std::uint64_t s = 1; s <= 100; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 16));
        ASSERT_TRUE(publisher.flush(10s).ok());
        // Stored between two of ours: the chain breaks, and recovery goes on after them.
        test::publish_foreign(connection, "evring.FGN.orders", "{\"id\":1}");
        test::publish_foreign(connection, "evring.FGN._evring.batch", "junk", "1 not-a-ring-header");
        for (std::uint64_t s = 101; s <= 200; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 16));
        ASSERT_TRUE(publisher.flush(10s).ok());
    }
    // The stream now ends with another client's messages: a new publisher opens and resumes past them.
    test::publish_foreign(connection, "evring.FGN.orders", "{\"id\":2}");
    test::publish_foreign(connection, "evring.FGN.orders", "{\"id\":3}");
    auto publisher = StreamPublisher::open(connection, test::publisher_options("FGN", test::test_ring_identity()));
    ASSERT_TRUE(publisher.ok()) << publisher.error().message();
    auto resume = publisher->resume_point();
    ASSERT_TRUE(resume.ok()) << resume.error().message();
    EXPECT_EQ(resume->state, ResumeState::ThisInstance);
    EXPECT_EQ(resume->next_seqno, 201u);
    EXPECT_EQ(resume->skipped, 2u);
    for (std::uint64_t s = 201; s <= 300; ++s) ASSERT_TRUE(publish_test_event(*publisher, s, 16));
    ASSERT_TRUE(publisher->flush(10s).ok());
    EXPECT_EQ(stored_event_seqnos(stored_messages(connection, "FGN", true)), iota_seqnos(1, 300));
}

TEST_F(NatsPublisher, AGapMessageCarriesTheExactLostRangeAndReason) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("GAP", test::test_ring_identity()));
    ASSERT_TRUE(publish_test_event(publisher, 1, 8));
    ASSERT_EQ(publisher.publish_gap(2, 998, GapReason::FellBehind), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 1000, 8));
    ASSERT_TRUE(publisher.flush(10s).ok());
    auto messages = stored_messages(connection, "GAP");
    ASSERT_EQ(messages.size(), 3u);
    ASSERT_EQ(messages[1].decoded.kind, MessageKind::Gap);
    EXPECT_EQ(messages[1].decoded.gap.first_lost_seqno, 2u);
    EXPECT_EQ(messages[1].decoded.gap.lost_count, 998u);
    EXPECT_EQ(messages[1].decoded.gap.reason, GapReason::FellBehind);
    EXPECT_EQ(messages[1].wire.subject, "evring.GAP._evring.gap");
    auto resume = publisher.resume_point();
    ASSERT_TRUE(resume.ok());
    EXPECT_EQ(resume->next_seqno, 1001u);
    EXPECT_EQ(publisher.stats().lost_in_gaps, 998u);
}

TEST_F(NatsPublisher, TheSchemaAndANewRingInstanceAreMessagesOfTheirOwn) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("INST", test::test_ring_identity()));
    const std::vector<std::byte> schema = test_payload(9, 5000);
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    ASSERT_EQ(publisher.publish_schema(schema), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 1, 8));
    ASSERT_EQ(publisher.switch_ring(test::test_ring_identity("inst-2"), 1), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 1, 8));
    ASSERT_TRUE(publisher.flush(10s).ok());
    auto messages = stored_messages(connection, "INST");
    ASSERT_EQ(messages.size(), 5u);
    EXPECT_EQ(messages[1].decoded.kind, MessageKind::Schema);
    EXPECT_EQ(std::vector<std::byte>(messages[1].decoded.part.begin(), messages[1].decoded.part.end()), schema);
    EXPECT_EQ(messages[3].decoded.kind, MessageKind::Announcement);
    EXPECT_EQ(messages[3].decoded.announcement.ring.instance, "inst-2");
    EXPECT_EQ(messages[4].decoded.instance, "inst-2");
    // A relay of the first instance, restarted now, finds another instance at the end.
    auto old = test::open_publisher(connection, test::publisher_options("INST", test::test_ring_identity()));
    auto resume = old.resume_point();
    ASSERT_TRUE(resume.ok());
    EXPECT_EQ(resume->state, ResumeState::OtherInstance);
    EXPECT_EQ(resume->latest_announcement->ring.instance, "inst-2");
}

TEST_F(NatsPublisher, AStreamHoldingAnotherRingsEventsIsRefusedUnlessAllowed) {
    auto connection = test::connect_to(server_);
    {
        auto first = test::open_publisher(connection, test::publisher_options("OTHER", test::test_ring_identity()));
        ASSERT_EQ(first.announce_ring(1), PublishStatus::Ok);
        ASSERT_TRUE(first.flush(10s).ok());
    }
    auto options = test::publisher_options("OTHER", test::test_ring_identity("x1", "/dev/shm/another"));
    auto refused = StreamPublisher::open(connection, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("holds the events of ring '/dev/shm/test', not '/dev/shm/another'"),
              std::string::npos)
        << refused.error().message();
    options.allow_other_ring = true;
    auto allowed = StreamPublisher::open(connection, options);
    ASSERT_TRUE(allowed.ok()) << allowed.error().message();
}

TEST_F(NatsPublisher, AStreamOfOtherMessagesOrSubjectsIsRefused) {
    auto connection = test::connect_to(server_);
    StreamSpec spec;
    spec.name = "FOREIGN";
    spec.prefix = "orders";
    ASSERT_TRUE(connection.ensure_stream(spec).ok());
    natsConnection_PublishString(connection.impl().connection, "orders.new", "{\"id\":1}");
    natsConnection_Flush(connection.impl().connection);
    auto options = test::publisher_options("FOREIGN", test::test_ring_identity());
    options.subjects.prefix = "orders";
    for (int i = 0; i < 100 && connection.stream_info("FOREIGN")->messages == 0; ++i) std::this_thread::sleep_for(10ms);
    auto refused = StreamPublisher::open(connection, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("holds messages that are not evring's"), std::string::npos)
        << refused.error().message();
    options.subjects.prefix = "elsewhere";
    refused = StreamPublisher::open(connection, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("do not cover 'elsewhere.>'"), std::string::npos)
        << refused.error().message();
}

TEST_F(NatsPublisher, TheWindowBoundsWhatWaitsForAcknowledgement) {
    auto connection = test::connect_to(server_);
    auto options = test::publisher_options("WIN", test::test_ring_identity());
    options.max_unacked_messages = 8;
    options.ack_every = 1000;  // no acknowledgement asked for until the window is full
    auto publisher = test::open_publisher(connection, options);
    const EventDescriptor event = test::test_event(1, 3, 0);
    std::uint64_t s = 1;
    for (; s <= 8; ++s) {
        EventDescriptor e = event;
        e.seqno = s;
        ASSERT_EQ(publisher.publish_event(e, {}), PublishStatus::Ok);
    }
    EventDescriptor ninth = event;
    ninth.seqno = 9;
    EXPECT_EQ(publisher.publish_event(ninth, {}), PublishStatus::WindowFull);
    EXPECT_EQ(publisher.stats().window_messages, 8u);
    EXPECT_EQ(publisher.wait_ready(10s), PublishStatus::Ok);  // asks for the acknowledgement it needs
    EXPECT_EQ(publisher.publish_event(ninth, {}), PublishStatus::Ok);
    ASSERT_TRUE(publisher.flush(10s).ok());
    EXPECT_EQ(stored_event_seqnos(stored_messages(connection, "WIN")), iota_seqnos(1, 9));
}

TEST_F(NatsPublisher, BatchesCarryManyEventsPerMessageInOrder) {
    auto connection = test::connect_to(server_);
    auto options = test::publisher_options("BATCH", test::test_ring_identity());
    options.events_per_message = 32;
    auto publisher = test::open_publisher(connection, options);
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 1000; ++s) ASSERT_TRUE(publish_test_event(publisher, s, s % 300));
    ASSERT_EQ(publisher.publish_gap(1001, 5, GapReason::Abandoned), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 1006, 10));
    ASSERT_TRUE(publisher.flush(10s).ok());
    auto messages = stored_messages(connection, "BATCH");
    auto seqnos = stored_event_seqnos(messages);
    auto expected = iota_seqnos(1, 1000);
    expected.push_back(1006);
    EXPECT_EQ(seqnos, expected);
    EXPECT_LE(messages.size(), 1u + 1000 / 32 + 2 + 2);
    EXPECT_TRUE(messages[0].decoded.announcement.flags & kAnnounceBatched);
    auto resume = publisher.resume_point();
    ASSERT_TRUE(resume.ok());
    EXPECT_EQ(resume->next_seqno, 1007u);
}

// The relay the next test kills: run in a process of its own (this test
// binary again, started with EVRING_NATS_CHILD_RELAY=URL), since a process
// forked from one that already used libnats lacks libnats' threads.
TEST(NatsPublisherChild, PublishesUntilKilled) {
    const char* url_text = std::getenv("EVRING_NATS_CHILD_RELAY");
    if (url_text == nullptr) GTEST_SKIP() << "the relay process of the test below; runs only when it starts it";
    auto url = parse_url(url_text);
    ASSERT_TRUE(url.ok());
    auto connection = Connection::connect(*url);
    ASSERT_TRUE(connection.ok()) << connection.error().message();
    auto publisher = test::open_publisher(*connection, test::publisher_options("KILL", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    const auto deadline = std::chrono::steady_clock::now() + 60s;  // killed long before
    for (std::uint64_t s = 1; std::chrono::steady_clock::now() < deadline; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 24));
}

TEST_F(NatsPublisher, ARelayKilledMidStreamAndRestartedLeavesNoDuplicateAndNoMissingSequenceNumber) {
    const std::string url = server_.url();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::setenv("EVRING_NATS_CHILD_RELAY", url.c_str(), 1);
        ::execl("/proc/self/exe", "nats_publisher_test", "--gtest_filter=NatsPublisherChild.PublishesUntilKilled",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    struct Reaper {  // kills the child relay on every way out of the test
        pid_t pid;
        ~Reaper() {
            if (pid > 0) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, nullptr, 0);
            }
        }
    } reaper{child};
    auto connection = test::connect_to(server_);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    for (;;) {  // until the child's relay is well under way
        auto info = connection.stream_info("KILL");
        if (info && info->messages >= 3000) break;
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the child relay published too little";
        std::this_thread::sleep_for(10ms);
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    reaper.pid = 0;
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child relay exited with " << WEXITSTATUS(status);
    // What the dead relay had sent lands (or not) before its replacement starts.
    std::uint64_t last = 0;
    for (;;) {
        std::this_thread::sleep_for(200ms);
        auto info = connection.stream_info("KILL");
        ASSERT_TRUE(info.ok());
        if (info->last_sequence == last) break;
        last = info->last_sequence;
    }

    auto publisher = test::open_publisher(connection, test::publisher_options("KILL", test::test_ring_identity()));
    auto resume = publisher.resume_point();
    ASSERT_TRUE(resume.ok()) << resume.error().message();
    ASSERT_EQ(resume->state, ResumeState::ThisInstance);
    ASSERT_GT(resume->next_seqno, 2000u);
    const std::uint64_t end = resume->next_seqno + 999;
    for (std::uint64_t s = resume->next_seqno; s <= end; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 24));
    ASSERT_TRUE(publisher.flush(10s).ok());
    EXPECT_EQ(stored_event_seqnos(stored_messages(connection, "KILL")), iota_seqnos(1, end));
}

}  // namespace
}  // namespace evring::nats
