// Whole span instances (query/span_assembler.hpp): on the real snapshots
// every block whose start and end were read is handed out once, with the
// transactions a scan of the events finds in it and its stages; on a schema
// of the test's own, a rival abandoned by the stage that marks another id, a
// gap breaking the open instance with the lost seqnos named, and an instance
// begun before reading started never handed out short.
#include "query/span_assembler.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

std::string snapshot(const char* name) {
    const char* dir = std::getenv("EVRING_CONFORMANCE_DIR");
    return dir == nullptr ? std::string() : std::string(dir) + "/" + name;
}

struct Scan {
    std::map<std::uint64_t, std::uint64_t> label_of_start;  // BLOCK_START seqno -> block number
    std::map<std::uint64_t, std::set<std::uint64_t>> txns;  // block number -> txn tags of TXN_HEADER_START
    std::set<std::uint64_t> ended, finalized;
    std::map<std::uint64_t, std::uint64_t> events;          // block number -> events tagged with it
};

TEST(SpanAssemblerOnRealSnapshots, HandsOutEveryBlockOnceWithTheTransactionsAScanFinds) {
    const std::string file = snapshot("emn-30b-15m.snapshot.zst");
    if (file.empty()) GTEST_SKIP() << "EVRING_CONFORMANCE_DIR does not name the real snapshots";
    for (const char* stage : {"", "finalized"}) {
        SCOPED_TRACE(stage);
        auto source = open_source(file, {});
        ASSERT_TRUE(source.ok()) << source.error().message();
        auto found = resolve_schema(**source);
        ASSERT_TRUE(found.ok() && found->schema);
        const Schema& schema = *found->schema;
        auto assembler = SpanAssembler::make(schema, "block", stage);
        ASSERT_TRUE(assembler.ok()) << assembler.error().message();
        const std::uint16_t start = schema.event("BLOCK_START")->number, end = schema.event("BLOCK_END")->number;
        const std::uint16_t header = schema.event("TXN_HEADER_START")->number;
        const std::uint16_t final_event = schema.event("BLOCK_FINALIZED")->number;
        Scan scan;
        std::vector<AssembledSpan> blocks;
        ASSERT_TRUE((*source)->seek(Position::oldest()).ok());
        SourceItem item;
        for (SourceStep step; (step = (*source)->next(item, PayloadRead::Copy)) != SourceStep::End;) {
            ASSERT_NE(step, SourceStep::Failed);
            ASSERT_NE(step, SourceStep::Gap);
            if (step != SourceStep::Event) continue;
            const EventDescriptor& d = item.event.descriptor;
            if (d.event_type == start) {
                std::uint64_t number = 0;  // block_tag.block_number: after the 32-byte id
                std::memcpy(&number, item.event.payload.data() + 32, 8);
                scan.label_of_start[d.seqno] = number;
            }
            if (auto it = scan.label_of_start.find(d.content_ext[0]); it != scan.label_of_start.end()) {
                ++scan.events[it->second];
                if (d.event_type == header) scan.txns[it->second].insert(d.content_ext[1]);
                if (d.event_type == end) scan.ended.insert(it->second);
            }
            if (d.event_type == final_event) {
                std::uint64_t number = 0;  // its block_number, after the 32-byte id
                std::memcpy(&number, item.event.payload.data() + 32, 8);
                scan.finalized.insert(number);
            }
            assembler->event(item.event);
            while (auto b = assembler->take()) blocks.push_back(std::move(*b));
        }
        assembler->end();
        while (auto b = assembler->take()) blocks.push_back(std::move(*b));
        std::set<std::uint64_t> want;
        for (std::uint64_t n : scan.ended)
            if (*stage == '\0' || scan.finalized.count(n) != 0) want.insert(n);
        ASSERT_EQ(blocks.size(), want.size());
        EXPECT_EQ(assembler->counts().handed_out, want.size());
        EXPECT_EQ(assembler->counts().unfinished, scan.label_of_start.size() - want.size());
        for (const AssembledSpan& b : blocks) {
            SCOPED_TRACE(b.label);
            EXPECT_EQ(b.state, AssembledSpan::State::Complete);
            EXPECT_EQ(want.count(b.label), 1u);
            EXPECT_EQ(b.events.size(), scan.events[b.label]);
            EXPECT_EQ(b.events.front().descriptor.event_type, start);
            std::set<std::uint64_t> txns;
            for (const AssembledNested& n : b.nested) {
                EXPECT_EQ(n.span->name, "txn");
                txns.insert(n.key);
            }
            // Every transaction with a header, and no other nested instance.
            EXPECT_EQ(txns, scan.txns[b.label]);
            ASSERT_FALSE(b.stages.empty());
            EXPECT_EQ(b.stages.front().name, "ended");
            if (*stage != 0) {
                EXPECT_EQ(b.stages.back().name, "finalized");
            }
        }
    }
}

class Rounds : public ::testing::Test {
protected:
    void SetUp() override {
        schema_.emplace(test::load_test_schema("rounds.toml"));
    }
    // An event of `type` in the instance opened by seqno `round` (0: none), `step` its nested key.
    void feed(SpanAssembler& a, std::uint16_t type, std::uint64_t round, std::uint64_t step = 0,
              std::uint64_t number = 0, std::uint8_t id = 0) {
        SourceEvent e;
        e.descriptor.seqno = ++seqno_;
        e.descriptor.event_type = type;
        e.descriptor.content_ext[0] = type == 1 ? seqno_ : round;
        e.descriptor.content_ext[1] = step;
        payload_.assign(16, std::byte{0});  // id at 0, number at 8 (aligned)
        payload_[0] = std::byte{id};
        std::memcpy(payload_.data() + 8, &number, 8);
        e.payload_state = PayloadState::Ok;
        e.payload = type == 1 || type == 4 ? std::span<const std::byte>(payload_) : std::span<const std::byte>();
        e.descriptor.payload_size = static_cast<std::uint32_t>(e.payload.size());
        a.event(e);
    }
    std::optional<Schema> schema_;
    std::vector<std::byte> payload_;
    std::uint64_t seqno_ = 0;
};

TEST_F(Rounds, ARivalIsAbandonedWhenTheStageMarksAnotherIdAndTheTakenOneComesOut) {
    auto a = SpanAssembler::make(*schema_, "round", "settled");
    ASSERT_TRUE(a.ok()) << a.error().message();
    feed(*a, 1, 0, 0, 7, 0xA);  // seqno 1: round 7, id A
    feed(*a, 2, 1, 1);
    feed(*a, 2, 1, 2);
    feed(*a, 3, 1);             // ended: waits for its stage
    feed(*a, 1, 0, 0, 7, 0xB);  // seqno 5: a rival round 7, id B
    feed(*a, 2, 5, 1);
    feed(*a, 3, 5);
    EXPECT_FALSE(a->take().has_value());
    feed(*a, 4, 0, 0, 7, 0xB);  // round 7 settled as id B
    auto first = a->take();
    auto second = a->take();
    ASSERT_TRUE(first && second);
    EXPECT_EQ(first->state, AssembledSpan::State::Abandoned);
    EXPECT_EQ(first->id, std::vector<std::byte>({std::byte{0xA}, std::byte{0}, std::byte{0}, std::byte{0}}));
    EXPECT_EQ(second->state, AssembledSpan::State::Complete);
    EXPECT_EQ(second->events.size(), 3u);
    ASSERT_EQ(second->stages.size(), 2u);
    EXPECT_EQ(second->stages[1].name, "settled");
    EXPECT_EQ(second->stages[1].seqno, 8u);
    ASSERT_EQ(first->nested.size(), 2u);
    EXPECT_EQ(first->nested[1].key, 2u);
    EXPECT_EQ(first->outside, (std::vector<std::size_t>{0, 3}));  // OPEN and CLOSE
    EXPECT_EQ(a->counts().abandoned, 1u);
    EXPECT_EQ(a->counts().handed_out, 1u);
}

TEST_F(Rounds, AGapBreaksTheOpenInstanceNamingTheLostSeqnos) {
    auto a = SpanAssembler::make(*schema_, "round", "");
    ASSERT_TRUE(a.ok());
    feed(*a, 1, 0, 0, 3);  // seqno 1
    feed(*a, 2, 1, 1);
    SourceGap g;
    g.first_seqno = 3;
    g.count = 4;
    a->gap(g);
    seqno_ = 6;
    feed(*a, 3, 1);  // its end, after the gap: nothing is open for it
    auto broken = a->take();
    ASSERT_TRUE(broken.has_value());
    EXPECT_EQ(broken->state, AssembledSpan::State::Broken);
    EXPECT_EQ(broken->lost_first, 3u);
    EXPECT_EQ(broken->lost_count, 4u);
    EXPECT_EQ(broken->events.size(), 2u);
    EXPECT_FALSE(a->take().has_value());
    EXPECT_EQ(a->counts().broken, 1u);
    EXPECT_EQ(a->counts().unassembled, 1u);
}

TEST_F(Rounds, AnInstanceBegunBeforeReadingIsNeverHandedOutShort) {
    auto a = SpanAssembler::make(*schema_, "round", "");
    ASSERT_TRUE(a.ok());
    seqno_ = 10;
    feed(*a, 2, 4, 1);  // of the round opened by seqno 4, not read
    feed(*a, 3, 4);
    feed(*a, 1, 0, 0, 9);  // seqno 13
    feed(*a, 3, 13);
    auto round = a->take();
    ASSERT_TRUE(round.has_value());
    EXPECT_EQ(round->label, 9u);
    EXPECT_FALSE(a->take().has_value());
    EXPECT_EQ(a->counts().unassembled, 2u);
    a->end();
    EXPECT_EQ(a->counts().unfinished, 0u);
}

TEST_F(Rounds, RefusesASpanOrStageItDoesNotHave) {
    auto no_span = SpanAssembler::make(*schema_, "step", "");
    ASSERT_FALSE(no_span.ok());
    EXPECT_EQ(no_span.error().message(), "no span 'step' with a label in schema t (spans with labels: round)");
    auto no_stage = SpanAssembler::make(*schema_, "round", "final");
    ASSERT_FALSE(no_stage.ok());
    EXPECT_EQ(no_stage.error().message(), "span 'round' has no stage 'final' (its stages: ended, settled)");
}

}  // namespace
}  // namespace evring
