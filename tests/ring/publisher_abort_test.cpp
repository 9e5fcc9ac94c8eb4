// Publisher::abort: a writer that gives up on a reservation publishes the slot
// at once as a RECORD_ERROR, so no reader waits out the abandon bound; commit
// and abort of a failed reservation do nothing. Deterministic: readers use an
// abandon bound of an hour, so anything they skip was published.
#include <chrono>
#include <cstring>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/schema/typed_publish.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;

RecordErrorPayload record_error_of(const MappedRing& ring, const EventDescriptor& event) {
    RecordErrorPayload error{};
    EXPECT_EQ(event.payload_size, sizeof error);
    EXPECT_EQ(copy_payload(ring, event, &error, sizeof error), PayloadResult::Ok);
    return error;
}

TEST(PublisherAbort, PublishesARecordErrorNamingTheDroppedEventAtOnce) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation r = publisher.reserve(40);
    ASSERT_TRUE(r);
    const std::uint64_t seqno = r.seqno();
    r.descriptor().event_type = 9;
    r.descriptor().content_ext = {5, 6, 7, 8};
    std::memset(r.payload(), 0xee, 40);  // half-written bytes the writer gives up on
    publisher.abort(r);
    EXPECT_FALSE(r) << "an aborted reservation is empty";

    Iterator it(*rings.reader);
    it.seek(seqno);
    it.set_abandon_after(1h);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, seqno);
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    EXPECT_EQ(event.content_ext, (std::array<std::uint64_t, 4>{5, 6, 7, 8}));
    const RecordErrorPayload error = record_error_of(*rings.reader, event);
    EXPECT_EQ(error.error_type, static_cast<std::uint16_t>(RecordErrorKind::MissingEvent));
    EXPECT_EQ(error.dropped_event_type, 9);
    EXPECT_EQ(error.truncated_payload_size, 0u);
    EXPECT_EQ(error.requested_payload_size, 40u);
}

TEST(PublisherAbort, EmptyReservationBecomesARecordErrorWithoutPayload) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation r = publisher.reserve(0);
    ASSERT_TRUE(r);
    r.descriptor().event_type = 4;
    const std::uint64_t seqno = r.seqno();
    publisher.abort(r);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(seqno, event));
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    EXPECT_EQ(event.payload_size, 0u) << "no reserved space to hold the description";
}

TEST(PublisherAbort, ReaderWaitingOnTheSlotMovesOnWithoutTheAbandonBound) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation given_up = publisher.reserve(24);  // seqno 1
    ASSERT_TRUE(given_up);
    given_up.descriptor().event_type = 3;
    Reservation later = publisher.reserve(8);  // seqno 2
    ASSERT_TRUE(later);
    publisher.commit(later);

    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(1h);
    EventDescriptor event{};
    for (int i = 0; i < 100; ++i) ASSERT_EQ(it.try_next(event), NextResult::NotReady);
    publisher.abort(given_up);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 1u);
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    EXPECT_EQ(record_error_of(*rings.reader, event).dropped_event_type, 3);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 2u);
    EXPECT_EQ(it.total_abandoned(), 0u);
    EXPECT_EQ(it.total_lost(), 0u);
}

TEST(PublisherAbort, CommitAndAbortOfAFailedReservationDoNothing) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation failed = publisher.reserve(publisher.max_payload_size() + 1);
    ASSERT_FALSE(failed);
    publisher.commit(failed);
    publisher.abort(failed);
    Reservation never_made;
    publisher.commit(never_made);
    publisher.abort(never_made);
    Iterator it(*rings.reader);
    EXPECT_EQ(it.newest_seqno(), 0u) << "nothing was reserved, so nothing was published";
    EXPECT_EQ(rings.reader->header().control.next_payload_byte, 0u);
}

TEST(PublisherAbort, AbortingTwiceOrCommittingAfterAbortPublishesOnce) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation r = publisher.reserve(16);
    ASSERT_TRUE(r);
    publisher.abort(r);
    publisher.abort(r);
    publisher.commit(r);
    Reservation next = publisher.reserve(16);
    EXPECT_EQ(next.seqno(), 2u);
    publisher.commit(next);
    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 2u);
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
}

TEST(PublisherAbort, TypedHandleAbortReplacesTheEvent) {
    struct Sample {
        std::uint64_t value;
    };
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    {
        auto event = reserve_typed<Sample>(publisher, 12);
        ASSERT_TRUE(event);
        event->value = 99;
        event.abort();
    }  // the destructor does not commit an aborted handle
    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    const RecordErrorPayload error = record_error_of(*rings.reader, event);
    EXPECT_EQ(error.dropped_event_type, 12);
    EXPECT_EQ(error.requested_payload_size, sizeof(Sample));
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
}

}  // namespace
}  // namespace evring
