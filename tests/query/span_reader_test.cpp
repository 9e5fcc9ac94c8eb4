// Whole span instances read from a source through the public SpanReader
// (evring/query/span_reader.hpp), with public headers only: a live ring's
// rounds handed out whole, NotReady while one is open, a lapped reader told
// of the gap and then handed the round it broke, naming the lost seqnos, End
// once the source ends (and again); on a real snapshot, every finalized block
// once, each with its "finalized" stage.
#include "evring/query/span_reader.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"
#include "support/schema_payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

class LiveRounds : public ::testing::Test {
protected:
    void SetUp() override {
        schema_.emplace(test::load_test_schema("rounds.toml"));  // rounds with steps nested in them
        path_ = dir_.file("ring");
        // 64 descriptors: a reader that waits while 64 more are written is lapped.
        CreateOptions keep;  // the file outlives the writer; the temporary directory goes
        keep.keep_on_close = true;
        auto made = RingWriter::create(test::small_spec(path_, 6, 16), keep);
        ASSERT_TRUE(made.ok()) << made.error().message();
        writer_.emplace(std::move(*made));
        publisher_.emplace(writer_->ring());
        open_reader();
    }
    void open_reader() {
        auto source = open_source(path_, {});
        ASSERT_TRUE(source.ok()) << source.error().message();
        source_ = std::move(*source);
        ASSERT_TRUE(source_->seek(Position::oldest()).ok());
    }
    // OPEN of round `number`: returns its seqno, the tag of the round's events.
    std::uint64_t open(std::uint64_t number) {
        Reservation r = publisher_->reserve(16);
        r.descriptor().event_type = 1;
        r.descriptor().content_ext[0] = r.descriptor().seqno;
        std::memset(r.payload(), 0, 16);
        std::memcpy(r.payload() + 8, &number, 8);
        const std::uint64_t seqno = r.descriptor().seqno;
        publisher_->commit(r);
        return seqno;
    }
    void event(std::uint16_t type, std::uint64_t round, std::uint64_t step = 0) {
        Reservation r = publisher_->reserve(0);
        r.descriptor().event_type = type;
        r.descriptor().content_ext[0] = round;
        r.descriptor().content_ext[1] = step;
        publisher_->commit(r);
    }
    test::TempDir dir_;
    std::string path_;
    std::optional<Schema> schema_;
    std::optional<RingWriter> writer_;
    std::optional<Publisher> publisher_;
    std::unique_ptr<EventSource> source_;
};

TEST_F(LiveRounds, HandsOutWholeRoundsAndSaysNotReadyWhileOneIsOpen) {
    auto rounds = SpanReader::make(*schema_, "round");
    ASSERT_TRUE(rounds.ok()) << rounds.error().message();
    AssembledSpan round;
    SourceItem item;
    const std::uint64_t seven = open(7);
    event(2, seven, 1);
    event(2, seven, 2);
    EXPECT_EQ(rounds->next_span(*source_, round, item), SourceStep::NotReady);  // round 7 is still open
    event(3, seven);
    ASSERT_EQ(rounds->next_span(*source_, round, item), SourceStep::Event);
    EXPECT_EQ(round.state, AssembledSpan::State::Complete);
    EXPECT_EQ(round.label, 7u);
    EXPECT_EQ(round.span->name, "round");
    ASSERT_EQ(round.events.size(), 4u);
    EXPECT_EQ(round.events[0].descriptor.seqno, seven);
    ASSERT_EQ(round.nested.size(), 2u);
    EXPECT_EQ(round.nested[0].key, 1u);
    EXPECT_EQ(round.nested[1].events, (std::vector<std::size_t>{2}));
    EXPECT_EQ(round.stages.at(0).name, "ended");
    EXPECT_EQ(rounds->next_span(*source_, round, item), SourceStep::NotReady);
    EXPECT_EQ(rounds->counts().handed_out, 1u);
}

TEST_F(LiveRounds, ALappedReaderIsToldOfTheGapThenHandedTheRoundItBrokeNamingTheLostSeqnos) {
    auto rounds = SpanReader::make(*schema_, "round");
    ASSERT_TRUE(rounds.ok());
    AssembledSpan round;
    SourceItem item;
    const std::uint64_t three = open(3);  // seqno 1
    event(2, three, 1);
    ASSERT_EQ(rounds->next_span(*source_, round, item), SourceStep::NotReady);  // both read, round 3 open
    for (int i = 0; i < 100; ++i) event(2, three, 2);  // seqnos 3..102 lap the reader's 64 slots
    event(3, three);                                   // 103
    ASSERT_EQ(rounds->next_span(*source_, round, item), SourceStep::Gap);
    EXPECT_EQ(item.gap.reason, GapReason::FellBehind);
    EXPECT_EQ(item.gap.first_seqno, 3u);
    ASSERT_EQ(rounds->next_span(*source_, round, item), SourceStep::Event);
    EXPECT_EQ(round.state, AssembledSpan::State::Broken);
    EXPECT_EQ(round.label, 3u);
    EXPECT_EQ(round.lost_first, item.gap.first_seqno);
    EXPECT_EQ(round.lost_count, item.gap.count);
    EXPECT_EQ(round.events.size(), 2u);  // what was read before the gap, never passed off as whole
    EXPECT_EQ(to_string(round.state), std::string("broken"));
    EXPECT_EQ(rounds->counts().broken, 1u);
}

TEST_F(LiveRounds, EndsWhenTheWriterIsGoneAndSaysSoAgain) {
    auto rounds = SpanReader::make(*schema_, "round");
    ASSERT_TRUE(rounds.ok());
    const std::uint64_t one = open(1);
    event(3, one);
    open(2);  // never closed
    publisher_.reset();
    writer_.reset();  // the writer is gone (the file stays): its ring ends where it stopped
    open_reader();
    AssembledSpan round;
    SourceItem item;
    auto past_notices = [&] {
        SourceStep step;
        while ((step = rounds->next_span(*source_, round, item)) == SourceStep::Notice) {
        }
        return step;
    };
    ASSERT_EQ(past_notices(), SourceStep::Event);
    EXPECT_EQ(round.label, 1u);
    EXPECT_EQ(past_notices(), SourceStep::End);
    EXPECT_EQ(rounds->next_span(*source_, round, item), SourceStep::End);
    EXPECT_EQ(rounds->counts().unfinished, 1u);  // round 2, open at the end
}

TEST_F(LiveRounds, PullsThroughTheCallersOwnStepAndNeverAfterFinish) {
    auto rounds = SpanReader::make(*schema_, "round");
    ASSERT_TRUE(rounds.ok());
    const std::uint64_t five = open(5);
    event(3, five);
    int pulls = 0;
    auto pull = [&](SourceItem& i) {
        ++pulls;
        return source_->next(i, PayloadRead::Copy);
    };
    AssembledSpan round;
    SourceItem item;
    ASSERT_EQ(rounds->next_span(pull, round, item), SourceStep::Event);
    EXPECT_EQ(pulls, 2);
    EXPECT_EQ(round.label, 5u);
    rounds->finish();
    event(3, five);
    EXPECT_EQ(rounds->next_span(pull, round, item), SourceStep::End);
    EXPECT_EQ(pulls, 2);
}

TEST(SpanReaderMake, RefusesASpanItDoesNotHaveNamingTheOnesItHas) {
    const Schema schema = test::load_test_schema("rounds.toml");
    auto made = SpanReader::make(schema, "block");
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().message(), "no span 'block' with a label in schema t (spans with labels: round)");
}

TEST(SpanReaderOnARealSnapshot, HandsOutEveryFinalizedBlockOnce) {
    const char* dir = std::getenv("EVRING_CONFORMANCE_DIR");
    if (dir == nullptr) GTEST_SKIP() << "EVRING_CONFORMANCE_DIR does not name the real snapshots";
    auto source = open_source(std::string(dir) + "/emn-30b-15m.snapshot.zst", {});
    ASSERT_TRUE(source.ok()) << source.error().message();
    auto found = resolve_schema(**source);
    ASSERT_TRUE(found.ok() && found->schema);
    auto blocks = SpanReader::make(*found->schema, "block", "finalized");
    ASSERT_TRUE(blocks.ok()) << blocks.error().message();
    ASSERT_TRUE((*source)->seek(Position::oldest()).ok());
    AssembledSpan block;
    SourceItem item;
    std::set<std::uint64_t> labels;
    SourceStep step;
    while ((step = blocks->next_span(**source, block, item)) != SourceStep::End) {
        ASSERT_NE(step, SourceStep::Failed) << (*source)->error().message();
        ASSERT_NE(step, SourceStep::Gap);
        if (step != SourceStep::Event) continue;
        EXPECT_EQ(block.state, AssembledSpan::State::Complete);
        EXPECT_TRUE(labels.insert(block.label).second) << "block " << block.label << " twice";
        ASSERT_FALSE(block.stages.empty());
        EXPECT_EQ(block.stages.back().name, "finalized");
    }
    EXPECT_FALSE(labels.empty());
    EXPECT_EQ(blocks->counts().handed_out, labels.size());
}

}  // namespace
}  // namespace evring
