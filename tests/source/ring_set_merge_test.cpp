// The merge's read-ahead (ring_set_source.cpp, lib/source/ring_set_member.hpp):
// members read a run of descriptors at a time, a gap met after a run, the
// earliest head found by a scan or a tournament tree (one member's burst, interleaved
// members, ties: each test runs with both, and Auto), and counters that
// count only what was handed out. Deterministic on one thread, as
// ring_set_test.cpp: each RingSetWriter object gives the calling thread its
// own member, timestamps are chosen.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "evring/set/ring_set.hpp"
#include "evring/source/wait_set.hpp"
#include "set/ring_set_format.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::publish_at;

using MergeOrder = RingSetSourceOptions::MergeOrder;

// Every test runs with each way the merge finds the earliest head (a scan,
// a tree, and Auto's choice by member count): the order must not depend on it.
struct MergeFixture : test::SetFixture, ::testing::WithParamInterface<MergeOrder> {
    // `n` members of 1024 descriptors, member i written through set[i].
    Members members(std::size_t n) { return SetFixture::members(n, false, 4, 10); }
    // The merged reader from the oldest events, in this test's order.
    std::unique_ptr<RingSetSource> open(std::chrono::nanoseconds abandon_after = std::chrono::seconds(1)) {
        RingSetSourceOptions o;
        o.abandon_after = abandon_after;
        o.merge_order = GetParam();
        return open_at(Position::oldest(), o);
    }
};

// "m:nanos" per event, "gap m:first+count" per gap, until NotReady or End.
std::vector<std::string> drain(EventSource& source, std::size_t limit = ~std::size_t{0}) {
    std::vector<std::string> out;
    SourceItem item;
    while (out.size() < limit) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event) {
            std::uint64_t payload = 0;
            EXPECT_EQ(item.event.payload_state, PayloadState::Ok);
            if (item.event.payload.size() == 8) std::memcpy(&payload, item.event.payload.data(), 8);
            EXPECT_EQ(payload, item.event.descriptor.record_epoch_nanos);  // the payload of that very event
            out.push_back(std::to_string(item.event.member) + ":" +
                          std::to_string(item.event.descriptor.record_epoch_nanos));
        } else if (step == SourceStep::Gap) {
            out.push_back("gap " + std::to_string(item.gap.member) + ":" + std::to_string(item.gap.first_seqno) + "+" +
                          std::to_string(item.gap.count));
        } else if (step != SourceStep::Notice) {
            break;
        }
    }
    return out;
}

TEST_P(MergeFixture, RunsLongerThanOneReadAheadKeepTheOrderAndTheirPayloads) {
    auto set = members(2);
    Publisher& pa = set[0];
    Publisher& pb = set[1];
    // 100 events each (several runs of read-ahead), alternating in time,
    // then a burst of 50 of member 0 with one event of member 1 inside it.
    std::vector<std::string> want;
    for (std::uint64_t i = 0; i < 100; ++i) {
        publish_at(pa, 10 * i + 1);
        publish_at(pb, 10 * i + 5);
        want.push_back("0:" + std::to_string(10 * i + 1));
        want.push_back("1:" + std::to_string(10 * i + 5));
    }
    for (std::uint64_t i = 0; i < 50; ++i) {
        publish_at(pa, 2000 + i);
        want.push_back("0:" + std::to_string(2000 + i));
        if (i == 39) want.push_back("1:2039");
    }
    publish_at(pb, 2039);  // ties with member 0's 2039: the lower member first
    auto source = open();
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 0u);
}

TEST_P(MergeFixture, MemberCountersCountWhatWasHandedOutNotWhatWasReadAhead) {
    auto set = members(2);
    Publisher& pa = set[0];
    Publisher& pb = set[1];
    for (std::uint64_t t = 1; t <= 40; ++t) publish_at(pa, t);
    for (std::uint64_t t = 100; t <= 140; ++t) publish_at(pb, t);
    auto source = open();
    ASSERT_EQ(drain(*source, 3).size(), 3u);  // member 1's first run is held, not handed out
    EXPECT_EQ(source->member_counters(0).events, 3u);
    EXPECT_EQ(source->member_counters(1).events, 0u);
    EXPECT_EQ(source->counters().events, 3u);
    EXPECT_EQ(drain(*source).size(), 78u);
    EXPECT_EQ(source->member_counters(0).events, 40u);
    EXPECT_EQ(source->member_counters(1).events, 41u);
}

TEST_P(MergeFixture, AGapMetAfterARunComesAfterItsEventsInItsMembersOrder) {
    auto set = members(2);
    Publisher& pa = set[0];
    Publisher& pb = set[1];
    publish_at(pa, 10);
    auto dead = pa.reserve(8);  // member 0's seqno 2: never committed
    ASSERT_TRUE(dead);
    publish_at(pa, 30);
    publish_at(pa, 40);
    publish_at(pb, 20);
    publish_at(pb, 35);
    // Abandoned at once: the run of member 0 stops at seqno 2 after seqno 1.
    auto source = open(std::chrono::nanoseconds(0));
    const std::vector<std::string> want{"0:10", "gap 0:2+1", "1:20", "0:30", "1:35", "0:40"};
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->member_counters(0).abandoned, 1u);
    EXPECT_EQ(source->counters().abandoned, 1u);
    pa.abort(dead);
}

TEST_P(MergeFixture, AMemberWritingDuringAnotherMembersBurstIsMergedInTime) {
    auto set = members(2);
    Publisher& pa = set[0];
    Publisher& pb = set[1];
    for (std::uint64_t t = 10; t <= 50; t += 10) publish_at(pa, t);
    auto source = open();
    EXPECT_EQ(drain(*source, 2), (std::vector<std::string>{"0:10", "0:20"}));  // member 1 idle
    publish_at(pb, 60);  // later than everything member 0 holds
    publish_at(pa, 70);
    const std::vector<std::string> want{"0:30", "0:40", "0:50", "1:60", "0:70"};
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 0u);
}

TEST_P(MergeFixture, FourInterleavedMembersWithTiesComeOutByTimeThenMember) {
    // The order (pick): members' heads interleave at every event, runs of 32
    // are used up and re-read many times, and members tie at one nanosecond.
    auto set = members(4);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> events;
    for (std::uint64_t i = 0; i < 150; ++i)
        for (std::uint32_t m = 0; m < 4; ++m) {
            // Strictly increasing per member; members 0 and 3 tie at every
            // event, member 2 ties with them at every third.
            const std::uint64_t t = 10 * i + 4 * ((i * (m + 1)) % 3) + 1;
            publish_at(set[m], t);
            events.emplace_back(t, m);
        }
    std::sort(events.begin(), events.end());
    std::vector<std::string> want;
    for (const auto& [t, m] : events) want.push_back(std::to_string(m) + ":" + std::to_string(t));
    auto source = open();
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 0u);
}

TEST_P(MergeFixture, SeekingAgainForgetsWhatWasReadAhead) {
    auto set = members(2);
    Publisher& pa = set[0];
    Publisher& pb = set[1];
    for (std::uint64_t t : {1, 3, 5, 7}) publish_at(pa, t);
    for (std::uint64_t t : {2, 4, 6, 8}) publish_at(pb, t);
    auto source = open();
    ASSERT_EQ(drain(*source).size(), 8u);
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    EXPECT_EQ(drain(*source, 3), (std::vector<std::string>{"0:1", "1:2", "0:3"}));
    ASSERT_TRUE(source->seek_member(1, 3).ok());  // member 1's seqno 3: time 6
    EXPECT_EQ(drain(*source), (std::vector<std::string>{"1:6", "0:7", "1:8"}));
}

TEST_P(MergeFixture, ANoticeFoundBetweenTwoReadsStopsTheOrderBeforeItsNextEvent) {
    // While the order holds, read() hands events out without looking at the
    // manifest (RingSetSource::fast_). A notice found between two reads, here
    // by a wait set's look at the manifest (its generation run backwards),
    // comes next, before any more of the order's events.
    auto set = members(4);
    for (std::uint64_t i = 0; i < 200; ++i)
        for (std::size_t m = 0; m < 4; ++m) publish_at(set[m], 10 * i + m + 1);
    auto source = open();
    ASSERT_EQ(drain(*source, 40).size(), 40u);
    const std::uint64_t lower = 0;  // the writers' member entries made it at least 4
    const int fd = ::open(dir.file("set/manifest").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &lower, 8, offsetof(SetManifestHeader, generation)), 8);
    ::close(fd);
    bool ready = false;
    for (int i = 0; i < 2000 && !ready; ++i) {  // the manifest is looked at every 10 ms at most
        WaitArm arm;
        source->arm_wait(arm);
        ready = arm.ready();  // only a notice makes it ready: every member holds events
        if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(ready);
    SourceItem item;
    ASSERT_EQ(source->next(item), SourceStep::Notice);
    EXPECT_NE(std::string(item.notice).find("ran backwards"), std::string::npos) << item.notice;
    EXPECT_EQ(drain(*source).size(), 760u);  // then the rest, in order (drain checks each payload)
}

TEST_P(MergeFixture, AnEventStampedBeforeOneHandedOutWhileTheOrderHoldsComesInItsMembersOrderCountedLate) {
    // Member 1's clock steps back to 12 after 25, within the order's span of
    // times (the tree keys it without a new full pass): its event comes next
    // in its member's order, and is counted late.
    auto set = members(3);
    for (std::uint64_t t : {10, 20, 30, 40}) publish_at(set[0], t);
    for (std::uint64_t t : {15, 25, 12, 35}) publish_at(set[1], t);
    for (std::uint64_t t : {11, 21, 31, 41}) publish_at(set[2], t);
    auto source = open();
    EXPECT_EQ(drain(*source), (std::vector<std::string>{"0:10", "2:11", "1:15", "0:20", "2:21", "1:25", "1:12",
                                                        "0:30", "2:31", "1:35", "0:40", "2:41"}));
    EXPECT_EQ(source->late_events(), 1u);
    EXPECT_EQ(source->counters().late, 1u);
}

TEST_P(MergeFixture, AnIdleMemberThatWritesDuringAnothersRunComesOutWhenThatRunIsUsedUp) {
    // Member 0 holds 100 events (runs of 32), members 1 and 2 none: the
    // order goes on from run to run of member 0 while nothing else is
    // reserved. Member 1 then writes an event older than member 0's run in
    // hand: it comes out (late) once that run is used up, not before and not
    // lost, as a full pass after every run would hand it out.
    auto set = members(3);
    for (std::uint64_t i = 1; i <= 100; ++i) publish_at(set[0], 10 * i);
    auto source = open();
    std::vector<std::string> want;
    for (std::uint64_t i = 1; i <= 40; ++i) want.push_back("0:" + std::to_string(10 * i));
    EXPECT_EQ(drain(*source, 40), want);
    publish_at(set[1], 405);
    want.clear();
    for (std::uint64_t i = 41; i <= 64; ++i) want.push_back("0:" + std::to_string(10 * i));  // the run in hand
    want.push_back("1:405");
    for (std::uint64_t i = 65; i <= 100; ++i) want.push_back("0:" + std::to_string(10 * i));
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 1u);
}

TEST_P(MergeFixture, ManyMembersWithEmptyOnesAGapBurstsAndTiesComeOutByTimeMemberAndSeqno) {
    // 12 members (Auto takes the tree): members 3 and 7 write nothing,
    // member 5 leaves a reservation uncommitted (abandoned at once: a gap
    // after its events before it), the others write bursts of 1 to 6 events
    // with ties; across many runs of read-ahead.
    constexpr std::uint32_t kMembers = 12;
    auto set = SetFixture::members(kMembers, false, kMembers, 10);
    std::vector<std::tuple<std::uint64_t, std::uint32_t, std::uint64_t>> events;  // time, member, seqno
    std::vector<std::uint64_t> seqnos(kMembers, 0);
    std::uint64_t clock = 1, lcg = 777;
    std::optional<Reservation> dead;
    for (int burst = 0; burst < 400; ++burst) {
        lcg = lcg * 6364136223846793005u + 1442695040888963407u;
        const auto m = static_cast<std::uint32_t>((lcg >> 33) % kMembers);
        if (m == 3 || m == 7) continue;
        if (m == 5 && !dead && seqnos[5] >= 20) {
            dead = set[5].reserve(8);
            ASSERT_TRUE(*dead);
            ++seqnos[5];
        }
        for (std::uint64_t k = 0; k <= (lcg >> 20) % 6; ++k) {
            if (((lcg >> (k + 8)) & 3) != 0) ++clock;
            publish_at(set[m], clock);
            events.emplace_back(clock, m, ++seqnos[m]);
        }
    }
    ASSERT_TRUE(dead.has_value());
    std::sort(events.begin(), events.end());
    std::vector<std::string> want;
    for (const auto& [t, m, seqno] : events) want.push_back(std::to_string(m) + ":" + std::to_string(t));
    auto source = open(std::chrono::nanoseconds(0));
    std::vector<std::string> got = drain(*source);
    const auto gap = std::find(got.begin(), got.end(), "gap 5:" + std::to_string(dead->seqno()) + "+1");
    ASSERT_NE(gap, got.end());
    got.erase(gap);
    EXPECT_EQ(got, want);
    EXPECT_EQ(source->late_events(), 0u);
    set[5].abort(*dead);
}

// Once, not per order: it compares the orders itself.
using ManyMembers = test::SetFixture;

TEST_F(ManyMembers, InBurstsAndTiesTheyGiveTheSameSequenceByScanByTreeAndAuto) {
    // 40 members written in bursts of 1 to 5 events by a member picked
    // pseudo-randomly, the clock standing still now and then so that
    // members tie; drained from the oldest with a scan, a tree and Auto
    // (which takes the tree from kMergeTreeFrom members).
    constexpr std::uint32_t kMembers = 40;
    auto set = members(kMembers, false, kMembers, 10);
    std::vector<test::Seen> want;
    std::vector<std::uint64_t> seqnos(kMembers, 0);
    std::uint64_t clock = 1, lcg = 12345;
    for (int burst = 0; burst < 600; ++burst) {
        lcg = lcg * 6364136223846793005u + 1442695040888963407u;
        const auto m = static_cast<std::uint32_t>((lcg >> 33) % kMembers);
        for (std::uint64_t k = 0; k <= (lcg >> 20) % 5; ++k) {
            if (((lcg >> (k + 8)) & 3) != 0) ++clock;  // a quarter of the events tie with the one before
            publish_at(set[m], clock);
            want.push_back({m, clock, ++seqnos[m]});
        }
    }
    std::stable_sort(want.begin(), want.end(), [](const test::Seen& a, const test::Seen& b) {
        return a.nanos != b.nanos ? a.nanos < b.nanos : a.member < b.member;
    });
    const auto merged = [&](MergeOrder order) {
        RingSetSourceOptions o;
        o.merge_order = order;
        auto source = open_at(Position::oldest(), o);
        SourceStep last = SourceStep::Event;
        auto seen = test::drain(*source, &last);
        EXPECT_EQ(last, SourceStep::NotReady);
        EXPECT_EQ(source->late_events(), 0u);
        return seen;
    };
    const auto by_scan = merged(MergeOrder::Scan);
    EXPECT_EQ(by_scan, want);
    EXPECT_EQ(merged(MergeOrder::Tree), by_scan);
    EXPECT_EQ(merged(MergeOrder::Auto), by_scan);
}

INSTANTIATE_TEST_SUITE_P(Orders, MergeFixture,
                         ::testing::Values(MergeOrder::Auto, MergeOrder::Scan, MergeOrder::Tree),
                         [](const ::testing::TestParamInfo<MergeOrder>& param) {
                             switch (param.param) {
                             case MergeOrder::Scan: return std::string("Scan");
                             case MergeOrder::Tree: return std::string("Tree");
                             default: return std::string("Auto");
                             }
                         });

// A named reader resuming (Position::after_members, named_reader.hpp): each
// member after its own last event when its ring is that instance; a member
// whose position is of another instance (re-created since) and one with no
// position (joined since) start at their oldest, and the notes say so.
using Resuming = test::SetFixture;
TEST_F(Resuming, EachMemberStartsAfterItsOwnLastEvent) {
    auto set = members(3);
    for (std::uint64_t t : {1, 4, 7}) publish_at(set[0], t);
    for (std::uint64_t t : {2, 5, 8}) publish_at(set[1], t);
    for (std::uint64_t t : {3, 6, 9}) publish_at(set[2], t);
    auto source = open_at(Position::oldest());
    const std::uint64_t m0 = source->member_source(0)->identity().instance;
    const std::uint64_t m1 = source->member_source(1)->identity().instance;
    auto notes = source->seek(Position::after_members({{2, m0}, {3, m1 + 1}}));
    ASSERT_TRUE(notes.ok()) << notes.error().message();
    EXPECT_NE(notes->find("member 1 ("), std::string::npos) << *notes;
    EXPECT_NE(notes->find("is a new ring instance: read from its oldest event; the instance read before was read "
                          "up to seqno 3"),
              std::string::npos)
        << *notes;
    EXPECT_NE(notes->find("joined the set since the commit"), std::string::npos) << *notes;
    const std::vector<test::Seen> want{{1, 2, 1}, {2, 3, 1}, {1, 5, 2}, {2, 6, 2}, {0, 7, 3}, {1, 8, 3}, {2, 9, 3}};
    EXPECT_EQ(test::drain(*source), want);
}

}  // namespace
}  // namespace evring
