#include "evring/ring/iterator.hpp"

#include <array>
#include <chrono>
#include <cstring>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;

// Ring with 64 descriptors: small enough to lap by hand.
RingParams tiny() { return test::small_params(6, 16); }

std::uint64_t write_events(Publisher& publisher, std::uint64_t count) {
    std::uint64_t last = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        Reservation r = publisher.reserve(8);
        r.descriptor().event_type = 3;
        std::memcpy(r.payload(), &i, 8);
        publisher.commit(r);
        last = r.seqno();
    }
    return last;
}

TEST(Iterator, EmptyRingIsNotReady) {
    RingPair rings;
    Iterator it(*rings.reader);
    EventDescriptor event{};
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
    EXPECT_EQ(it.next_seqno(), 1u);
    EXPECT_EQ(it.newest_seqno(), 0u);
    EXPECT_EQ(it.oldest_seqno(), 1u);
}

TEST(Iterator, ReadsEventsInOrderFromTheStart) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    write_events(publisher, 10);
    EventDescriptor event{};
    for (std::uint64_t s = 1; s <= 10; ++s) {
        ASSERT_EQ(it.try_next(event), NextResult::Success);
        EXPECT_EQ(event.seqno, s);
        EXPECT_EQ(event.event_type, 3);
    }
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
}

TEST(Iterator, StartsAtTheNewestEventWhenCreatedLate) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    write_events(publisher, 5);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 5u);
}

TEST(Iterator, ReservedButUncommittedEventIsNotReadyAndBlocksLaterOnes) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    Reservation first = publisher.reserve(0);
    write_events(publisher, 1);  // seqno 2 is committed before seqno 1
    EventDescriptor event{};
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
    publisher.commit(first);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 1u);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 2u);
}

TEST(Iterator, ReportsGapWithExactLostCountWhenLapped) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    it.seek(1);
    write_events(publisher, 200);  // capacity 64: events 1..136 are gone
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Gap);
    // Resumes 1/16 of the ring past the oldest slot (137 + 4).
    EXPECT_EQ(it.last_gap_lost(), 140u);
    EXPECT_EQ(it.next_seqno(), 141u);
    std::uint64_t read = 0;
    while (it.try_next(event) == NextResult::Success) {
        EXPECT_EQ(event.seqno, 141 + read);
        ++read;
    }
    EXPECT_EQ(read + it.total_lost(), 200u) << "every seqno is either read or counted lost";
}

TEST(Iterator, LostCountsAddUpOverRepeatedLaps) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    it.seek(1);
    std::uint64_t read = 0;
    EventDescriptor event{};
    for (int round = 0; round < 20; ++round) {
        write_events(publisher, 37 + static_cast<std::uint64_t>(round) * 11);
        for (int i = 0; i < 5; ++i) {
            NextResult r = it.try_next(event);
            if (r == NextResult::Success) ++read;
        }
    }
    while (true) {
        NextResult r = it.try_next(event);
        if (r == NextResult::NotReady) break;
        if (r == NextResult::Success) ++read;
    }
    EXPECT_EQ(read + it.total_lost(), it.newest_seqno());
    EXPECT_EQ(it.next_seqno(), it.newest_seqno() + 1);
}

TEST(IteratorRun, FillsTheRunWithCommittedEventsInOrder) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    write_events(publisher, 10);
    std::array<EventDescriptor, 4> run{};
    std::size_t filled = 99;
    ASSERT_EQ(it.try_next_run(run, filled), NextResult::Success);
    ASSERT_EQ(filled, 4u);
    for (std::uint64_t i = 0; i < 4; ++i) EXPECT_EQ(run[i].seqno, i + 1);
    EXPECT_EQ(it.next_seqno(), 5u);
}

TEST(IteratorRun, RunsAfterAFullOneReadTheSameEventsAcrossTheRingsEnd) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    it.seek(1);
    write_events(publisher, 50);
    std::array<EventDescriptor, 16> run{};
    std::size_t filled = 0;
    std::uint64_t expected = 1;
    for (int i = 0; i < 3; ++i) {  // full runs: each prefetches a run ahead
        ASSERT_EQ(it.try_next_run(run, filled), NextResult::Success);
        ASSERT_EQ(filled, run.size());
        for (const EventDescriptor& e : run) EXPECT_EQ(e.seqno, expected++);
    }
    write_events(publisher, 40);  // 90 in a ring of 64: the prefetched slots wrap
    ASSERT_EQ(it.try_next_run(run, filled), NextResult::Success);
    for (const EventDescriptor& e : run) EXPECT_EQ(e.seqno, expected++);
    ASSERT_EQ(it.try_next_run(run, filled), NextResult::Success);
    ASSERT_EQ(it.try_next_run(run, filled), NextResult::NotReady);  // short: stops prefetching
    EXPECT_EQ(filled, 10u);
    EXPECT_EQ(run[9].seqno, 90u);
}

TEST(IteratorRun, StopsAtAReservationInFlightWithWhatCameBefore) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    write_events(publisher, 3);
    Reservation fourth = publisher.reserve(0);
    write_events(publisher, 1);  // seqno 5 is committed before seqno 4
    std::array<EventDescriptor, 8> run{};
    std::size_t filled = 0;
    EXPECT_EQ(it.try_next_run(run, filled), NextResult::NotReady);
    EXPECT_EQ(filled, 3u);
    EXPECT_EQ(run[2].seqno, 3u);
    EXPECT_EQ(it.next_seqno(), 4u);
    publisher.commit(fourth);
    EXPECT_EQ(it.try_next_run(run, filled), NextResult::NotReady);
    ASSERT_EQ(filled, 2u);
    EXPECT_EQ(run[0].seqno, 4u);
    EXPECT_EQ(run[1].seqno, 5u);
}

TEST(IteratorRun, StopsAtAGapWithItsExactLostCountAsTryNextDoes) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    it.seek(1);
    write_events(publisher, 100);  // 64 slots: seqnos 1..36 are overwritten
    Iterator one(*rings.reader);
    one.seek(1);
    EventDescriptor event{};
    const NextResult expected = one.try_next(event);
    ASSERT_EQ(expected, NextResult::Gap);
    std::array<EventDescriptor, 4> run{};
    std::size_t filled = 9;
    EXPECT_EQ(it.try_next_run(run, filled), expected);
    EXPECT_EQ(filled, 0u);
    EXPECT_EQ(it.last_gap_lost(), one.last_gap_lost());
    EXPECT_EQ(it.next_seqno(), one.next_seqno());
}

TEST(Iterator, ResetJumpsToNewestAndSeekGoesAnywhereStillInTheRing) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    write_events(publisher, 100);
    it.reset();
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 100u);
    EXPECT_EQ(it.oldest_seqno(), 37u);
    it.seek(it.oldest_seqno());
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 37u);
    it.seek(36);
    EXPECT_EQ(it.try_next(event), NextResult::Gap);
}

TEST(Iterator, ResetLandsOnTheNewestCommittedEventNotOnAReservationInFlight) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    write_events(publisher, 5);
    Reservation in_flight = publisher.reserve(8);  // seqno 6: the newest reserved
    Reservation also_in_flight = publisher.reserve(8);  // seqno 7
    Iterator it(*rings.reader);
    it.set_abandon_after(std::chrono::hours(1));
    EXPECT_EQ(it.newest_seqno(), 7u);
    EXPECT_EQ(it.next_seqno(), 5u);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success) << "the first read does not wait";
    EXPECT_EQ(event.seqno, 5u);
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
    publisher.commit(in_flight);
    publisher.commit(also_in_flight);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 6u);
    it.reset();
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 7u);
}

TEST(Iterator, ResetWithNothingCommittedYetLandsOnTheFirstEvent) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Reservation first = publisher.reserve(8);
    Reservation second = publisher.reserve(8);
    Iterator it(*rings.reader);
    EXPECT_EQ(it.next_seqno(), 1u);
    publisher.commit(second);
    publisher.commit(first);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.seqno, 1u);
}

TEST(Iterator, ReadDescriptorOnlyReturnsTheExactCommittedEvent) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    write_events(publisher, 70);
    EventDescriptor event{};
    EXPECT_TRUE(it.read_descriptor(70, event));
    EXPECT_EQ(event.seqno, 70u);
    EXPECT_TRUE(it.read_descriptor(7, event));
    EXPECT_FALSE(it.read_descriptor(6, event)) << "overwritten by 70";
    EXPECT_FALSE(it.read_descriptor(71, event)) << "not written yet";
    EXPECT_FALSE(it.read_descriptor(0, event));
}

// Deterministic interleavings of the seqlock, driven by hand on one thread.
TEST(IteratorSeqlock, SlotBeingRewrittenIsNeverReturned) {
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    write_events(publisher, 1);
    // Simulate a writer of seqno 65 that has zeroed slot 0 (step 1 of commit).
    auto* words = rings.writer->descriptors()[0].words;
    words[0] = 0;
    it.seek(1);
    EventDescriptor event{};
    EXPECT_EQ(it.try_next(event), NextResult::NotReady) << "0 reads as not yet written";
    // ... and has now published 65: seqno 1 was lapped.
    words[0] = 65;
    rings.writer->header().control.last_seqno = 65;
    EXPECT_EQ(it.try_next(event), NextResult::Gap);
}

TEST(IteratorSeqlock, SlotFromALaterLapIsAGapNotTheEventAskedFor) {
    // (Torn copies need a concurrent writer: see concurrency_test.cpp.)
    RingPair rings(tiny());
    Publisher publisher(*rings.writer);
    write_events(publisher, 64 + 3);
    Iterator it(*rings.reader);
    it.seek(3);
    EventDescriptor event{};
    EXPECT_EQ(it.try_next(event), NextResult::Gap);
}

}  // namespace
}  // namespace evring
