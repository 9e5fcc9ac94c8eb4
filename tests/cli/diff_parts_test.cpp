// evring diff's comparison (tools/evring/diff/diff_compare.hpp): how two
// events differ, the join of two streams on (member, seqno), and the field a
// differing byte lies in.
#include "diff/diff_compare.hpp"

#include <string>
#include <thread>
#include <vector>

#include "diff/event_channel.hpp"

#include <gtest/gtest.h>

namespace evring::cli {
namespace {

ComparedEvent event(std::uint64_t seqno, std::vector<std::uint8_t> payload = {1, 2, 3, 4}, std::uint32_t member = 0) {
    ComparedEvent e;
    e.member = member;
    e.key = seqno;
    e.descriptor.seqno = seqno;
    e.descriptor.event_type = 5;
    e.descriptor.payload_size = static_cast<std::uint32_t>(payload.size());
    e.payload_state = PayloadState::Ok;
    for (auto b : payload) e.payload.push_back(static_cast<std::byte>(b));
    return e;
}

TEST(DiffCompare, EqualEventsHaveNoDifference) {
    EXPECT_FALSE(compare_events(event(3), event(3)).has_value());
}

TEST(DiffCompare, NamesTheFirstDifferingPayloadByte) {
    auto d = compare_events(event(3, {1, 2, 3, 4}), event(3, {1, 2, 9, 4}));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->aspects, unsigned(kPayload));
    EXPECT_EQ(d->first_byte, 2u);
}

TEST(DiffCompare, APayloadThatIsAPrefixDiffersWhereItEnds) {
    auto d = compare_events(event(3, {1, 2, 3, 4}), event(3, {1, 2}));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->aspects, unsigned(kPayload));
    EXPECT_EQ(d->first_byte, 2u);
}

TEST(DiffCompare, TypeFlowTagsTimeOffsetAndPayloadState) {
    ComparedEvent a = event(3), b = event(3);
    b.descriptor.event_type = 6;
    b.descriptor.content_ext[2] = 77;
    b.descriptor.record_epoch_nanos = 1;
    b.descriptor.payload_buf_offset = 16;
    auto d = compare_events(a, b);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->aspects, unsigned(kType | kFlow | kTime | kOffset));
    EXPECT_EQ(d->flows, 1u << 2);
    b = event(3);
    b.payload_state = PayloadState::Expired;
    b.payload.clear();
    d = compare_events(a, b);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->aspects, unsigned(kPayloadState));
}

struct Joined {
    std::vector<Difference> found;
    DiffJoin join;
    explicit Joined(bool ordinal = false, std::size_t max_pending = 1000)
        : join(ordinal, max_pending, [this](const Difference& d) { found.push_back(d); }) {}
};

TEST(DiffJoin, IdenticalStreamsInAnyInterleavingAreEqual) {
    Joined j;
    for (std::uint64_t s = 1; s <= 5; ++s) ASSERT_TRUE(j.join.add(0, event(s)));
    for (std::uint64_t s = 1; s <= 5; ++s) ASSERT_TRUE(j.join.add(1, event(s)));
    j.join.end(0);
    j.join.end(1);
    EXPECT_TRUE(j.found.empty());
    EXPECT_EQ(j.join.events(0), 5u);
    EXPECT_EQ(j.join.pending(0) + j.join.pending(1), 0u);
}

TEST(DiffJoin, AMissingEventIsOnlyInTheOtherSide) {
    Joined j;
    for (std::uint64_t s : {1, 2, 3, 4}) ASSERT_TRUE(j.join.add(0, event(s)));
    for (std::uint64_t s : {1, 3, 4, 5}) ASSERT_TRUE(j.join.add(1, event(s)));
    j.join.end(0);
    j.join.end(1);
    ASSERT_EQ(j.found.size(), 2u);
    EXPECT_EQ(j.found[0].aspects, unsigned(kOnlyInA));
    EXPECT_EQ(j.found[0].key, 2u);
    EXPECT_EQ(j.found[1].aspects, unsigned(kOnlyInB));
    EXPECT_EQ(j.found[1].key, 5u);
}

TEST(DiffJoin, ASideThatEndsEarlyLeavesTheRestOnlyInTheOther) {
    Joined j;
    ASSERT_TRUE(j.join.add(0, event(1)));
    ASSERT_TRUE(j.join.add(1, event(1)));
    j.join.end(1);
    ASSERT_TRUE(j.join.add(0, event(2)));
    ASSERT_TRUE(j.join.add(0, event(3)));
    j.join.end(0);
    ASSERT_EQ(j.found.size(), 2u);
    EXPECT_EQ(j.found[0].key, 2u);
    EXPECT_EQ(j.found[1].key, 3u);
    EXPECT_EQ(j.found[1].aspects, unsigned(kOnlyInA));
}

TEST(DiffJoin, MembersInterleavedDifferentlyMatchAndAreCountedApart) {
    Joined j;
    // A hands out member 0 then member 1; B the other way round.
    for (std::uint64_t s : {1, 2}) ASSERT_TRUE(j.join.add(0, event(s, {1}, 0)));
    for (std::uint64_t s : {1, 2}) ASSERT_TRUE(j.join.add(0, event(s, {1}, 1)));
    for (std::uint64_t s : {1, 2}) ASSERT_TRUE(j.join.add(1, event(s, {1}, 1)));
    ASSERT_TRUE(j.join.add(1, event(1, {1}, 0)));
    ASSERT_TRUE(j.join.add(1, event(2, {7}, 0)));
    j.join.end(0);
    j.join.end(1);
    ASSERT_EQ(j.found.size(), 1u);
    EXPECT_EQ(j.found[0].member, 0u);
    EXPECT_EQ(j.found[0].key, 2u);
    EXPECT_EQ(j.found[0].aspects, unsigned(kPayload));
    EXPECT_EQ(j.join.members().at(0).differ, 1u);
    EXPECT_EQ(j.join.members().at(1).differ, 0u);
}

TEST(DiffJoin, AMemberOnlyOneSideHasIsOnlyInIt) {
    Joined j;
    ASSERT_TRUE(j.join.add(0, event(1, {1}, 0)));
    ASSERT_TRUE(j.join.add(0, event(1, {1}, 1)));
    ASSERT_TRUE(j.join.add(1, event(1, {1}, 0)));
    j.join.end(1);
    j.join.end(0);
    ASSERT_EQ(j.found.size(), 1u);
    EXPECT_EQ(j.found[0].member, 1u);
    EXPECT_EQ(j.found[0].aspects, unsigned(kOnlyInA));
    EXPECT_EQ(j.join.members().at(1).events_b, 0u);
}

TEST(DiffJoin, OrdinalKeysIgnoreSequenceNumbers) {
    Joined j(true);
    for (std::uint64_t s : {10, 11, 12}) ASSERT_TRUE(j.join.add(0, event(s)));
    for (std::uint64_t s : {1, 2}) ASSERT_TRUE(j.join.add(1, event(s)));
    j.join.end(0);
    j.join.end(1);
    ASSERT_EQ(j.found.size(), 1u);
    EXPECT_EQ(j.found[0].key, 3u);  // the third event
    EXPECT_EQ(j.found[0].aspects, unsigned(kOnlyInA));
}

TEST(DiffJoin, UnmatchedEventsAreBounded) {
    Joined j(false, 3);
    EXPECT_TRUE(j.join.add(0, event(1, {1}, 0)));
    EXPECT_TRUE(j.join.add(0, event(1, {1}, 1)));
    EXPECT_TRUE(j.join.add(0, event(1, {1}, 2)));
    EXPECT_FALSE(j.join.add(0, event(1, {1}, 3)));
}

TEST(DiffFieldAt, NamesNestedFieldsArrayElementsAndALoneTrailingArray) {
    auto parsed = Schema::parse(R"(content_type = 1001
content_name = "t"

[[event]]
number = 7
name = "SEVEN"
payload = "outer"

[struct.inner]
fields = [{ name = "a", type = "u32" }, { name = "b", type = "u64" }]

[struct.outer]
fields = [
  { name = "x", type = "u8" },
  { name = "in", type = "inner" },
  { name = "pairs", type = "inner[2]" },
  { name = "n", type = "u8" },
  { name = "data", type = "bytes[n]" },
]
)", "t.toml");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    const Schema& s = *parsed;
    EXPECT_EQ(field_at(s, 7, 0), "x");
    EXPECT_EQ(field_at(s, 7, 3), "");  // padding after x
    EXPECT_EQ(field_at(s, 7, 8), "in.a");
    EXPECT_EQ(field_at(s, 7, 17), "in.b");
    EXPECT_EQ(field_at(s, 7, 24 + 16 + 8), "pairs[1].b");
    EXPECT_EQ(field_at(s, 7, 56), "n");
    EXPECT_EQ(field_at(s, 7, 64), "data");  // past the fixed part
    EXPECT_EQ(field_at(s, 8, 0), "");        // no such event
}

TEST(EventChannel, OneEventThenEndOnOneThread) {
    EventChannel channel(2);
    ASSERT_TRUE(channel.push(event(1)));
    channel.end();
    auto e = channel.pop();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->key, 1u);
    EXPECT_FALSE(channel.pop().has_value());
    channel.close();
    EXPECT_FALSE(channel.push(event(2)));
}

TEST(EventChannel, AProducerThreadHandsEveryEventInOrderThroughASmallQueue) {
    EventChannel channel(4);
    std::thread producer([&channel] {
        for (std::uint64_t s = 1; s <= 5000; ++s)
            if (!channel.push(event(s))) return;
        channel.end();
    });
    std::uint64_t expected = 1;
    while (auto e = channel.pop()) {
        EXPECT_EQ(e->key, expected);
        ++expected;
    }
    producer.join();
    EXPECT_EQ(expected, 5001u);
}

TEST(EventChannel, ClosingReleasesAProducerWaitingOnAFullQueue) {
    EventChannel channel(1);
    ASSERT_TRUE(channel.push(event(1)));
    bool second = true;
    std::thread producer([&] { second = channel.push(event(2)); });  // waits: the queue is full
    channel.close();
    producer.join();  // returns once close() woke it
    EXPECT_FALSE(second);
}

}  // namespace
}  // namespace evring::cli
