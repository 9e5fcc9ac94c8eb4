// The merge's tournament tree (lib/source/ring_set_tree.hpp), alone: per slot a
// stream of event times, replayed as the merge replays it (the winner's slot
// takes its next key, or kNoHead when it has no more), must come out in the
// merge's order, by time, ties to the lower slot (member), and within a slot
// in its own order (seqno). Slots with no events (empty members), slots that
// end early, bursts of one slot (play's shortcut), slot counts that are not
// powers of two, and keys the tree cannot place. Deterministic, one thread.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "source/ring_set_tree.hpp"

namespace evring {
namespace {

using Streams = std::vector<std::vector<std::uint64_t>>;  // [slot]: its times, ascending
using Handed = std::tuple<std::uint64_t, std::uint32_t, std::size_t>;  // time, slot, index in the slot
using Out = std::vector<Handed>;

// What the merge must hand out: by time, then slot, then the slot's order.
Out expected(const Streams& streams) {
    Out out;
    for (std::uint32_t s = 0; s < streams.size(); ++s)
        for (std::size_t i = 0; i < streams[s].size(); ++i) out.emplace_back(streams[s][i], s, i);
    std::sort(out.begin(), out.end());
    return out;
}

// The tree replayed as the merge does it: each slot's head and next key set
// and sealed, then the winner handed out and its slot given its next key.
Out replayed(const Streams& streams) {
    std::uint64_t first = ~std::uint64_t{0}, last = 0;
    for (const auto& s : streams)
        if (!s.empty()) first = std::min(first, s.front()), last = std::max(last, s.back());
    MergeTree tree;
    EXPECT_TRUE(tree.reset(static_cast<std::uint32_t>(streams.size()), first, last));
    const auto key = [&](std::uint32_t slot, std::size_t at) {
        return at < streams[slot].size() ? tree.key(streams[slot][at], slot) : MergeTree::kNoHead;
    };
    std::vector<std::size_t> at(streams.size(), 0);
    for (std::uint32_t s = 0; s < streams.size(); ++s)
        if (!streams[s].empty()) tree.set_leaf(s, key(s, 0), key(s, 1));
    Out out;
    std::uint64_t top = tree.seal();
    while (top != MergeTree::kNoHead) {
        const std::uint32_t slot = tree.winner();
        EXPECT_EQ(top, key(slot, at[slot]));  // the winner's key is its head's
        EXPECT_EQ(tree.next(slot), key(slot, at[slot] + 1));
        out.emplace_back(streams[slot][at[slot]], slot, at[slot]);
        ++at[slot];
        tree.next(slot) = key(slot, at[slot] + 1);
        top = tree.play(key(slot, at[slot]));
    }
    return out;
}

// `slots` streams of `count` pseudo-random bursts: a slot picked at random
// writes 1 to `max_burst` events, the clock standing still for about a
// quarter of them; slots in `empty` write nothing.
Streams bursts(std::uint32_t slots, int count, std::uint64_t max_burst, std::uint64_t seed,
               const std::vector<std::uint32_t>& empty = {}) {
    Streams streams(slots);
    std::uint64_t clock = 1000, lcg = seed;
    for (int b = 0; b < count; ++b) {
        lcg = lcg * 6364136223846793005u + 1442695040888963407u;
        const auto slot = static_cast<std::uint32_t>((lcg >> 33) % slots);
        if (std::find(empty.begin(), empty.end(), slot) != empty.end()) continue;
        for (std::uint64_t k = 0; k <= (lcg >> 20) % max_burst; ++k) {
            if (((lcg >> (k % 40 + 8)) & 3) != 0) ++clock;  // a quarter tie with the event before
            streams[slot].push_back(clock);
        }
    }
    return streams;
}

TEST(MergeTree, TiesGoToTheLowerSlotThenTheSlotsOwnOrder) {
    // Every slot holds the same times, slot 1 twice each.
    const Streams streams{{5, 7, 9}, {5, 5, 7, 7, 9, 9}, {5, 7, 9}};
    const Out got = replayed(streams);
    EXPECT_EQ(got, expected(streams));
    ASSERT_EQ(got.size(), 12u);
    EXPECT_EQ(got[0], (Handed{5, 0, 0}));
    EXPECT_EQ(got[1], (Handed{5, 1, 0}));
    EXPECT_EQ(got[2], (Handed{5, 1, 1}));
    EXPECT_EQ(got[3], (Handed{5, 2, 0}));
}

TEST(MergeTree, EmptySlotsAndSlotsThatEndEarlyAreLeftOut) {
    const Streams streams{{}, {1, 2, 3, 100}, {}, {4}, {}, {2, 50, 51, 52, 53, 54, 55}, {}};
    EXPECT_EQ(replayed(streams), expected(streams));
}

TEST(MergeTree, OneSlotAndNoEventsAtAll) {
    EXPECT_EQ(replayed({{3, 3, 4}}), expected({{3, 3, 4}}));
    MergeTree tree;
    ASSERT_TRUE(tree.reset(5, ~std::uint64_t{0}, 0));  // no head anywhere: any base
    EXPECT_EQ(tree.seal(), MergeTree::kNoHead);
}

TEST(MergeTree, ABurstOfOneSlotStaysFirstUntilItPassesTheNextHead) {
    // Slot 2's burst passes slot 0's head at 50 and ties slot 1's at 60.
    const Streams streams{{50, 70}, {60, 80}, {10, 20, 30, 40, 50, 51, 60, 61}, {}};
    EXPECT_EQ(replayed(streams), expected(streams));
}

TEST(MergeTree, InterleavedAndBurstyStreamsAtManySlotCounts) {
    for (const std::uint32_t slots : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 33u, 64u, 100u, 1024u})
        for (const std::uint64_t max_burst : {1u, 5u, 40u}) {
            const Streams streams = bursts(slots, 3000, max_burst, slots * 131 + max_burst, {slots / 2});
            EXPECT_EQ(replayed(streams), expected(streams)) << slots << " slots, bursts up to " << max_burst;
        }
}

TEST(MergeTree, KeysOutsideTheBaseAndSpanCannotBePlaced) {
    MergeTree tree;
    ASSERT_TRUE(tree.reset(4, 1000, 2000));
    EXPECT_LT(tree.key(1000, 3), tree.key(1001, 0));  // time first, then slot
    EXPECT_LT(tree.key(1000, 1), tree.key(1000, 2));
    EXPECT_EQ(tree.key(999, 0), MergeTree::kUnplaced);  // before the base: a clock stepped back
    EXPECT_EQ(tree.key(~std::uint64_t{0}, 0), MergeTree::kUnplaced);  // past the span
    EXPECT_LT(tree.key(1000 + (std::uint64_t{1} << 60), 3), MergeTree::kUnplaced);  // 4 slots: 2 bits
    // Heads further apart than a key holds: refused (the merge scans then).
    EXPECT_FALSE(tree.reset(4, 0, ~std::uint64_t{0} >> 1));
    EXPECT_FALSE(tree.reset(MergeTree::kMaxSlots + 1, 0, 0));
    // 1024 slots: 10 bits of slot, about 2^54 ns of span.
    ASSERT_TRUE(tree.reset(1024, 0, std::uint64_t{1} << 53));
    EXPECT_LT(tree.key(std::uint64_t{1} << 53, 1023), MergeTree::kUnplaced);
}

}  // namespace
}  // namespace evring
