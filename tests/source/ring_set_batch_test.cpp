// Ring sets need no change for batches (Publisher::publish_batch): every
// event of a batch carries the batch's one timestamp, and the merge breaks
// equal times by member, then sequence number, so batches of several members
// (and single events stamped the same) come out in one deterministic order,
// whichever way the merge finds the earliest head (a scan, a heap, Auto).
// Deterministic, on one thread, as ring_set_merge_test.cpp.
#include <algorithm>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/set/ring_set.hpp"
#include "source/ring_set_source.hpp"
#include "support/ring_sets.hpp"

namespace evring {
namespace {

using MergeOrder = RingSetSourceOptions::MergeOrder;

struct BatchedSet : test::SetFixture, ::testing::WithParamInterface<MergeOrder> {};

// A batch of `n` events whose 8-byte payloads are tag, tag + 1, ...
std::uint64_t publish_tagged_batch(Publisher& publisher, std::uint64_t tag, std::size_t n) {
    std::vector<std::uint64_t> tags(n);
    std::vector<BatchEvent> batch(n);
    for (std::size_t i = 0; i < n; ++i) {
        tags[i] = tag + i;
        batch[i] = {&tags[i], {tags[i], 0, 0, 0}, 8, 7};
    }
    return publisher.publish_batch(batch);
}

TEST_P(BatchedSet, EqualTimesOfBatchesMergeByMemberThenSequenceNumber) {
    auto set = members(3);
    ASSERT_EQ(publish_tagged_batch(set[0], 100, 16), 1u);
    ASSERT_EQ(publish_tagged_batch(set[2], 300, 16), 1u);
    RingSetSourceOptions o;
    o.merge_order = GetParam();
    auto peek = open_at(Position::oldest(), o);
    const std::vector<test::Seen> batches = test::drain_all(*peek).events();
    ASSERT_EQ(batches.size(), 32u);
    const std::uint64_t t0 = batches.front().nanos;  // member 0's batch
    std::uint64_t t2 = 0;
    for (const test::Seen& s : batches) {
        if (s.member == 0) {
            EXPECT_EQ(s.nanos, t0) << "one timestamp per batch";
        } else if (t2 == 0) {
            t2 = s.nanos;
        } else {
            EXPECT_EQ(s.nanos, t2) << "one timestamp per batch";
        }
    }
    // Members 1 and 0 tie with the batches: member 1 with member 0's batch
    // (two events at t0), member 0 with member 2's (one event at t2).
    test::publish_at(set[1], t0);
    test::publish_at(set[1], t0);
    test::publish_at(set[0], t2);

    auto source = open_at(Position::oldest(), o);
    const std::vector<test::Seen> got = test::drain_all(*source).events();
    std::vector<test::Seen> want;
    for (std::uint64_t s = 1; s <= 16; ++s) want.push_back({0, t0, s});
    want.push_back({1, t0, 1});
    want.push_back({1, t0, 2});
    want.push_back({0, t2, 17});
    for (std::uint64_t s = 1; s <= 16; ++s) want.push_back({2, t2, s});
    // The rule itself: by time, then member, then seqno (t2 may equal t0).
    std::stable_sort(want.begin(), want.end(), [](const test::Seen& a, const test::Seen& b) {
        return a.nanos != b.nanos ? a.nanos < b.nanos : a.member != b.member ? a.member < b.member : a.seqno < b.seqno;
    });
    EXPECT_EQ(got, want);
    EXPECT_EQ(source->late_events(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Orders, BatchedSet, ::testing::Values(MergeOrder::Scan, MergeOrder::Tree, MergeOrder::Auto));

}  // namespace
}  // namespace evring
