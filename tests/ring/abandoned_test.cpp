// Abandoned reservations: a writer that reserved and never committed must not
// stall readers for ever, and a merely slow writer must not be skipped.
// Deterministic: the bound is either zero (fires on the first poll that sees a
// later commit) or an hour (never fires during the test).
#include <chrono>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;

Reservation reserve_filled(Publisher& publisher) {
    Reservation r = publisher.reserve(16);
    EXPECT_TRUE(r);
    std::memset(r.payload(), 1, 16);
    return r;
}

TEST(Abandoned, ReservationNeverCommittedBehindACommittedEventIsSkippedWithItsSeqno) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation dead = reserve_filled(publisher);  // its writer "dies" here
    publisher.commit(reserve_filled(publisher));
    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(0ns);
    it.set_poll_style(PollStyle::Sleeping);
    EventDescriptor event{};
    EXPECT_EQ(it.try_next(event), NextResult::Abandoned);
    EXPECT_EQ(it.last_abandoned_seqno(), dead.seqno());
    EXPECT_EQ(it.total_abandoned(), 1u);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 2u);
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
}

TEST(Abandoned, SpinningReaderLooksForALaterCommitOnlyOnEvery64thPollOfAStall) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation dead = reserve_filled(publisher);
    publisher.commit(reserve_filled(publisher));
    Iterator it(*rings.reader);  // PollStyle::Spinning by default
    it.seek(1);
    it.set_abandon_after(0ns);
    EventDescriptor event{};
    for (int poll = 1; poll < 64; ++poll) ASSERT_EQ(it.try_next(event), NextResult::NotReady) << "poll " << poll;
    EXPECT_EQ(it.try_next(event), NextResult::Abandoned);
    EXPECT_EQ(it.last_abandoned_seqno(), dead.seqno());
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 2u);
}

TEST(Abandoned, SpinningReaderScansForConsecutiveDeadReservationsEvery4096Polls) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    std::vector<Reservation> dead;
    for (int i = 0; i < 2; ++i) dead.push_back(reserve_filled(publisher));
    publisher.commit(reserve_filled(publisher));  // seqno 3: slot 2 is empty too
    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(0ns);
    EventDescriptor event{};
    for (int poll = 1; poll < 64 * 64; ++poll) ASSERT_EQ(it.try_next(event), NextResult::NotReady) << "poll " << poll;
    EXPECT_EQ(it.try_next(event), NextResult::Abandoned);
    EXPECT_EQ(it.last_abandoned_seqno(), 1u);
    // At seqno 2 the next slot holds a committed event: the 64th poll sees it.
    for (int poll = 1; poll < 64; ++poll) ASSERT_EQ(it.try_next(event), NextResult::NotReady) << "poll " << poll;
    EXPECT_EQ(it.try_next(event), NextResult::Abandoned);
    EXPECT_EQ(it.last_abandoned_seqno(), 2u);
}

TEST(Abandoned, SlowWriterWithinTheBoundIsWaitedFor) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation slow = reserve_filled(publisher);
    publisher.commit(reserve_filled(publisher));
    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(1h);
    EventDescriptor event{};
    for (int i = 0; i < 10'000; ++i) ASSERT_EQ(it.try_next(event), NextResult::NotReady) << "poll " << i;
    publisher.commit(slow);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 1u);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 2u);
    EXPECT_EQ(it.total_abandoned(), 0u);
}

TEST(Abandoned, NewestReservationWithNothingCommittedAfterItIsNeverAbandoned) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    publisher.commit(reserve_filled(publisher));
    Reservation pending = reserve_filled(publisher);
    Iterator it(*rings.reader);
    it.seek(2);
    it.set_abandon_after(0ns);
    EventDescriptor event{};
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(it.try_next(event), NextResult::NotReady) << "poll " << i;
    publisher.commit(pending);
    EXPECT_EQ(it.try_next(event), NextResult::Success);
}

TEST(Abandoned, SeveralConsecutiveDeadReservationsAreEachReported) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    std::vector<Reservation> dead;
    for (int i = 0; i < 3; ++i) dead.push_back(reserve_filled(publisher));
    publisher.commit(reserve_filled(publisher));  // seqno 4
    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(0ns);
    it.set_poll_style(PollStyle::Sleeping);  // the scan comes on the 64th look: poll 64
    EventDescriptor event{};
    std::vector<std::uint64_t> abandoned;
    int polls = 0;
    while (it.next_seqno() <= 3) {
        ASSERT_LT(++polls, 1000) << "stuck at " << it.next_seqno();
        const NextResult result = it.try_next(event);
        ASSERT_NE(result, NextResult::Success);
        ASSERT_NE(result, NextResult::Gap);
        if (result == NextResult::Abandoned) abandoned.push_back(it.last_abandoned_seqno());
    }
    EXPECT_EQ(abandoned, (std::vector<std::uint64_t>{1, 2, 3}));
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 4u);
}

TEST(Abandoned, SuccessLostAndAbandonedAddUpToTheIteratorsAdvance) {
    test::RingPair rings(test::small_params(6, 16));  // 64 descriptors
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(0ns);
    // One dead reservation, then enough events to lap the reader once.
    Reservation dead = reserve_filled(publisher);
    (void)dead;
    for (int i = 0; i < 100; ++i) publisher.commit(reserve_filled(publisher));
    std::uint64_t success = 0;
    EventDescriptor event{};
    const std::uint64_t start = it.next_seqno();
    for (int polls = 0; polls < 1000; ++polls) {
        switch (it.try_next(event)) {
        case NextResult::Success: ++success; break;
        case NextResult::NotReady: break;
        case NextResult::Gap: break;
        case NextResult::Abandoned: break;
        }
    }
    EXPECT_EQ(it.next_seqno(), 102u);
    EXPECT_EQ(success + it.total_lost() + it.total_abandoned(), it.next_seqno() - start);
}

TEST(Abandoned, DefaultBoundIsOneSecond) {
    test::RingPair rings;
    Iterator it(*rings.reader);
    EXPECT_EQ(it.abandon_after(), std::chrono::nanoseconds(1s));
}

}  // namespace
}  // namespace evring
