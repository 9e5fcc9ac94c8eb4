// The stream reader against a real nats-server: what the publisher stored
// comes back once, in order, with identical fields; gaps are exact; start
// positions, subject filters, chunked events, the schema; a server restart
// and a stream deleted under the reader.
#include <gtest/gtest.h>

#include <cstring>

#include "nats/nats_reader.hpp"
#include "support/nats_relay.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;
using test::publish_test_event;
using test::test_payload;

struct Read {
    std::vector<EventDescriptor> events;
    std::vector<std::vector<std::byte>> payloads;
    std::vector<SourceGap> gaps;
    std::vector<std::string> notices;
    std::vector<std::string> order;  // "e5", "g6+3", "n"
};

// Reads until `events` events arrived (or `timeout`), then a little more to
// catch anything extra.
Read read_events(StreamReader& reader, std::size_t events, std::chrono::milliseconds timeout = 20s) {
    Read read;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto settle = std::chrono::steady_clock::time_point::max();
    SourceItem item;
    while (std::chrono::steady_clock::now() < std::min(deadline, settle)) {
        switch (reader.next(item, PayloadRead::Copy)) {
        case SourceStep::Event:
            read.events.push_back(item.event.descriptor);
            read.payloads.emplace_back(item.event.payload.begin(), item.event.payload.end());
            read.order.push_back("e" + std::to_string(item.event.descriptor.seqno));
            break;
        case SourceStep::Gap:
            read.gaps.push_back(item.gap);
            read.order.push_back("g" + std::to_string(item.gap.first_seqno) + "+" + std::to_string(item.gap.count));
            break;
        case SourceStep::Notice:
            read.notices.emplace_back(item.notice);
            read.order.push_back("n");
            break;
        case SourceStep::NotReady: reader.wait(20ms); break;
        case SourceStep::End: ADD_FAILURE() << "a stream never ends"; return read;
        case SourceStep::Failed: ADD_FAILURE() << reader.error().message(); return read;
        }
        if (read.events.size() >= events && settle == std::chrono::steady_clock::time_point::max())
            settle = std::chrono::steady_clock::now() + 200ms;
    }
    EXPECT_EQ(read.events.size(), events);
    return read;
}

ReaderOptions reader_options(std::string stream, StartAt start = StartAt::oldest(), std::string event_subject = {}) {
    ReaderOptions options;
    options.stream = std::move(stream);
    options.start = start;
    options.event_subject = std::move(event_subject);
    return options;
}

std::unique_ptr<StreamReader> open_reader(const Connection& connection, ReaderOptions options) {
    auto reader = StreamReader::open(connection, std::move(options));
    if (!reader) {
        ADD_FAILURE() << reader.error().message();
        std::abort();
    }
    return std::move(reader).value();
}

std::vector<std::uint64_t> seqnos(const Read& read) {
    std::vector<std::uint64_t> out;
    for (const auto& e : read.events) out.push_back(e.seqno);
    return out;
}

class NatsReader : public ::testing::Test {
protected:
    void SetUp() override { EVRING_START_NATS_SERVER(server_); }
    test::NatsServer server_;
};

TEST_F(NatsReader, EveryPublishedEventComesBackOnceInOrderWithIdenticalFields) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("RD", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    const std::vector<std::byte> schema = test_payload(77, 300);
    ASSERT_EQ(publisher.publish_schema(schema), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 2000; ++s) ASSERT_TRUE(publish_test_event(publisher, s, s % 257, static_cast<std::uint16_t>(s % 5)));
    ASSERT_TRUE(publisher.flush(10s).ok());

    auto reader = open_reader(connection, reader_options("RD"));
    EXPECT_EQ(reader->options().prefix, "evring.RD");
    ASSERT_TRUE(reader->announcement().has_value());
    EXPECT_EQ(reader->announcement()->ring.name, "/dev/shm/test");
    Read read = read_events(*reader, 2000);
    ASSERT_EQ(read.events.size(), 2000u);
    for (std::uint64_t s = 1; s <= 2000; ++s) {
        const EventDescriptor expected = test::test_event(s, static_cast<std::uint16_t>(s % 5),
                                                          static_cast<std::uint32_t>(s % 257));
        ASSERT_EQ(std::memcmp(&read.events[s - 1], &expected, sizeof expected), 0) << s;
        ASSERT_EQ(read.payloads[s - 1], test_payload(s, s % 257)) << s;
    }
    EXPECT_TRUE(read.gaps.empty());
    ASSERT_EQ(read.notices.size(), 1u);
    EXPECT_NE(read.notices[0].find("ring '/dev/shm/test' (instance inst-1) relayed from sequence number 1"),
              std::string::npos)
        << read.notices[0];
    EXPECT_EQ(std::vector<std::byte>(reader->schema().begin(), reader->schema().end()), schema);
    EXPECT_EQ(reader->next_seqno(), 2001u);
    EXPECT_EQ(reader->stats().duplicates, 0u);
    auto newest = reader->newest_source_seqno();
    ASSERT_TRUE(newest.ok());
    EXPECT_EQ(*newest, 2000u);

    // Live: what is published after the reader caught up comes too.
    for (std::uint64_t s = 2001; s <= 2010; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 8));
    ASSERT_EQ(publisher.send_pending(), PublishStatus::Ok);
    EXPECT_EQ(seqnos(read_events(*reader, 10)), test::iota_seqnos(2001, 2010));
}

TEST_F(NatsReader, GapMessagesAndHolesInTheStreamAreExactGaps) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("GP", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 1, 8));
    ASSERT_EQ(publisher.publish_gap(2, 10, GapReason::FellBehind), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 12, 8));
    ASSERT_TRUE(publish_test_event(publisher, 20, 8));  // 13..19: never published, no gap message
    ASSERT_TRUE(publish_test_event(publisher, 20, 8));  // a copy beyond the window would be dropped
    ASSERT_TRUE(publisher.flush(10s).ok());

    auto reader = open_reader(connection, reader_options("GP"));
    Read read = read_events(*reader, 3);
    EXPECT_EQ(read.order, (std::vector<std::string>{"n", "e1", "g2+10", "e12", "g13+7", "e20"}));
    ASSERT_EQ(read.gaps.size(), 2u);
    EXPECT_EQ(read.gaps[0].reason, GapReason::FellBehind);
    EXPECT_TRUE(read.gaps[0].detail.empty());
    EXPECT_EQ(read.gaps[1].reason, kGapNotInStream);
    EXPECT_EQ(reader->stats().lost, 17u);
}

TEST_F(NatsReader, StartsAtASourceSeqnoAStreamSequenceOrOnlyNewMessages) {
    auto connection = test::connect_to(server_);
    auto options = test::publisher_options("POS", test::test_ring_identity());
    options.events_per_message = 7;  // the start may fall inside a batch
    auto publisher = test::open_publisher(connection, options);
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 500; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 4));
    ASSERT_TRUE(publisher.flush(10s).ok());

    auto from_seqno = open_reader(connection, reader_options("POS", StartAt::source_seqno(333)));
    Read read = read_events(*from_seqno, 168);
    EXPECT_EQ(seqnos(read), test::iota_seqnos(333, 500));
    EXPECT_TRUE(read.gaps.empty());
    EXPECT_EQ(from_seqno->stats().duplicates, 0u);

    auto from_sequence = open_reader(connection, reader_options("POS", StartAt::stream_sequence(2)));
    EXPECT_EQ(seqnos(read_events(*from_sequence, 500)), test::iota_seqnos(1, 500));

    auto only_new = open_reader(connection, reader_options("POS", StartAt::newest_only()));
    SourceItem item;
    EXPECT_EQ(only_new->next(item, PayloadRead::Copy), SourceStep::NotReady);
    for (std::uint64_t s = 501; s <= 505; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 4));
    ASSERT_TRUE(publisher.flush(10s).ok());
    EXPECT_EQ(seqnos(read_events(*only_new, 5)), test::iota_seqnos(501, 505));
}

TEST_F(NatsReader, AnEventSubjectFilterDeliversThoseEventsWithTheGapsInStreamOrder) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("FLT", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 300; ++s) {
        if (s == 150) {
            ASSERT_EQ(publisher.publish_gap(150, 50, GapReason::FellBehind), PublishStatus::Ok);
            s = 199;
            continue;
        }
        ASSERT_TRUE(publish_test_event(publisher, s, 4, s % 3 == 0 ? 7 : 2));
    }
    ASSERT_TRUE(publisher.flush(10s).ok());
    SubjectLayout layout;
    layout.prefix = "evring.FLT";
    auto filter = event_filter(layout, "7", std::nullopt);
    ASSERT_TRUE(filter.has_value());
    auto reader = open_reader(connection, reader_options("FLT", StartAt::oldest(), *filter));
    std::vector<std::uint64_t> expected;
    std::vector<std::string> order = {"n"};
    for (std::uint64_t s = 1; s <= 300; ++s) {
        if (s == 150) order.push_back("g150+50");
        if (s >= 150 && s < 200) continue;
        if (s % 3 != 0) continue;
        expected.push_back(s);
        order.push_back("e" + std::to_string(s));
    }
    Read read = read_events(*reader, expected.size());
    EXPECT_EQ(seqnos(read), expected);
    EXPECT_EQ(read.order, order);
}

TEST_F(NatsReader, EventsLargerThanTheServersMaxPayloadArriveInChunksAndComeBackWhole) {
    test::NatsServer small(8192);
    EVRING_START_NATS_SERVER(small);
    auto connection = test::connect_to(small);
    EXPECT_EQ(connection.max_payload(), 8192u);
    auto publisher = test::open_publisher(connection, test::publisher_options("BIG", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    ASSERT_TRUE(publish_test_event(publisher, 1, 100));
    ASSERT_TRUE(publish_test_event(publisher, 2, 100'000));  // 14 chunks
    ASSERT_TRUE(publish_test_event(publisher, 3, 7000));
    ASSERT_TRUE(publisher.flush(10s).ok());
    EXPECT_EQ(publisher.stats().chunked_events, 1u);

    auto reader = open_reader(connection, reader_options("BIG"));
    Read read = read_events(*reader, 3);
    ASSERT_EQ(read.events.size(), 3u);
    EXPECT_EQ(read.payloads[1], test_payload(2, 100'000));
    EXPECT_EQ(read.payloads[2], test_payload(3, 7000));
    EXPECT_TRUE(read.gaps.empty());
}

TEST_F(NatsReader, PublisherAndReaderCarryOnThroughAServerRestartWithoutLossOrDuplicates) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("RST", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 1000; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 16));
    ASSERT_TRUE(publisher.flush(10s).ok());
    auto reader_connection = test::connect_to(server_);
    auto reader = open_reader(reader_connection, reader_options("RST"));
    Read before = read_events(*reader, 1000);

    server_.kill();  // a crash: nothing flushed politely
    std::uint64_t s = 1001;
    for (; s <= 1100; ++s) {  // taken into the window until the publisher notices the outage
        const EventDescriptor event = test::test_event(s, 3, 16);
        const auto payload = test_payload(s, 16);
        PublishStatus status = publisher.publish_event(event, payload);
        ASSERT_NE(status, PublishStatus::Failed) << publisher.failure()->message();
        if (status != PublishStatus::Ok) break;
    }
    std::string error;
    ASSERT_TRUE(server_.start(error)) << error;
    for (; s <= 2000; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 16));
    ASSERT_TRUE(publisher.flush(30s).ok());
    EXPECT_EQ(test::stored_event_seqnos(test::stored_messages(connection, "RST")), test::iota_seqnos(1, 2000));

    Read after = read_events(*reader, 1000, 60s);
    EXPECT_EQ(seqnos(after), test::iota_seqnos(1001, 2000));
    EXPECT_TRUE(after.gaps.empty());
}

TEST_F(NatsReader, MessagesThatAreNotEvringsAreSkippedCountedAndReportedOnce) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("STRAY", test::test_ring_identity()));
    ASSERT_EQ(publisher.announce_ring(1), PublishStatus::Ok);
    for (std::uint64_t s = 1; s <= 100; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 8));
    ASSERT_TRUE(publisher.flush(10s).ok());
    for (int i = 0; i < 3; ++i) test::publish_foreign(connection, "evring.STRAY.orders", "{\"id\":1}");
    test::publish_foreign(connection, "evring.STRAY._evring.batch", "junk", "1 not-a-ring-header");
    test::publish_foreign(connection, "evring.STRAY.3", "", "2 a-future-version");
    for (std::uint64_t s = 101; s <= 200; ++s) ASSERT_TRUE(publish_test_event(publisher, s, 8));
    ASSERT_TRUE(publisher.flush(10s).ok());
    test::publish_foreign(connection, "evring.STRAY.orders", "at the end");

    auto reader = open_reader(connection, reader_options("STRAY"));
    Read read = read_events(*reader, 200);
    EXPECT_EQ(seqnos(read), test::iota_seqnos(1, 200));
    EXPECT_TRUE(read.gaps.empty());
    // The announcement, then the first foreign message and the first invalid one, once each.
    ASSERT_EQ(read.notices.size(), 3u);
    EXPECT_NE(read.notices[1].find("stream 'STRAY' holds messages that are not evring's (the first: message 102 on "
                                   "'evring.STRAY.orders'); skipping them"),
              std::string::npos)
        << read.notices[1];
    EXPECT_NE(read.notices[2].find("message 105 of stream 'STRAY' on 'evring.STRAY._evring.batch' is not a valid "
                                   "evring message"),
              std::string::npos)
        << read.notices[2];
    EXPECT_EQ(reader->stats().foreign, 4u);
    EXPECT_EQ(reader->stats().invalid, 2u);

    // Positions are found past them too.
    auto newest = reader->newest_source_seqno();
    ASSERT_TRUE(newest.ok()) << newest.error().message();
    EXPECT_EQ(*newest, 200u);
    auto from = open_reader(connection, reader_options("STRAY", StartAt::source_seqno(101)));
    EXPECT_EQ(seqnos(read_events(*from, 100)), test::iota_seqnos(101, 200));

    // The reader is an EventSource: its counters, and seek() to a Position.
    EXPECT_EQ(reader->counters().events, 200u);
    EXPECT_EQ(reader->counters().foreign, 6u);
    auto sought = reader->seek(Position::seqno(150));
    ASSERT_TRUE(sought.ok()) << sought.error().message();
    EXPECT_EQ(seqnos(read_events(*reader, 51)), test::iota_seqnos(150, 200));
    EXPECT_EQ(reader->counters().foreign, 7u);  // the one at the end, passed over again
}

TEST_F(NatsReader, AStreamDeletedUnderTheReaderIsAFailureNamingIt) {
    auto connection = test::connect_to(server_);
    auto publisher = test::open_publisher(connection, test::publisher_options("DEL", test::test_ring_identity()));
    ASSERT_TRUE(publish_test_event(publisher, 1, 4));
    ASSERT_TRUE(publisher.flush(10s).ok());
    auto reader = open_reader(connection, reader_options("DEL"));
    read_events(*reader, 1);
    ASSERT_TRUE(connection.delete_stream("DEL").ok());
    SourceItem item;
    SourceStep step = SourceStep::NotReady;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (step == SourceStep::NotReady && std::chrono::steady_clock::now() < deadline) {
        step = reader->next(item, PayloadRead::Copy);
        if (step == SourceStep::NotReady) reader->wait(50ms);
    }
    ASSERT_EQ(step, SourceStep::Failed);
    EXPECT_NE(reader->error().message().find("stream 'DEL'"), std::string::npos) << reader->error().message();

    auto missing = StreamReader::open(connection, reader_options("DEL"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().errno_value(), ENOENT);
}

}  // namespace
}  // namespace evring::nats
