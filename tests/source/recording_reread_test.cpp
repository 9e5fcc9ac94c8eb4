// A recording read again in one source (recording_source.hpp: a seek may
// come at any time). Issue 32, defect 16: after a recording's end, a seek to
// the oldest event, to a seqno, or back N events found nothing, and a seek
// after another kept the first one's start (skip counts, a minimum seqno).
// Each kind of recording: one indexed file, one file without an index
// (version 2, read from the start), and a rotated series whose later files
// the first read went on to.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/position.hpp"
#include "recording/recording_writer.hpp"
#include "source/recording_source.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

constexpr std::uint64_t kEvents = 640;

enum class Kind { Indexed, Unindexed, Series };

std::string name_of(Kind kind) {
    switch (kind) {
    case Kind::Indexed: return "Indexed";
    case Kind::Unindexed: return "Unindexed";
    case Kind::Series: return "Series";
    }
    return "?";
}

void write_recording(const std::string& path, Kind kind) {
    if (kind == Kind::Unindexed) {
        test::write_blocks(path, kEvents, 64, true);
        return;
    }
    RecordingOptions options;
    if (kind == Kind::Series) options.rotate_bytes = 4096;  // about 17 files
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (std::uint64_t s = 1; s <= kEvents; ++s) test::append_event(*writer, s, 40);
    ASSERT_TRUE(writer->finish().ok());
    if (kind == Kind::Series) {
        ASSERT_GT(writer->totals().files, 3u);
    }
}

// The seqnos of the events from here to the end, each payload checked.
std::vector<std::uint64_t> read_to_end(EventSource& source) {
    std::vector<std::uint64_t> seqnos;
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::End) return seqnos;
        EXPECT_NE(step, SourceStep::Failed) << source.error().message();
        EXPECT_NE(step, SourceStep::NotReady);
        if (step == SourceStep::Failed || step == SourceStep::NotReady) return seqnos;
        if (step != SourceStep::Event) continue;
        const std::uint64_t s = item.event.descriptor.seqno;
        EXPECT_EQ(item.event.payload.size(), 40u);
        if (!item.event.payload.empty()) {
            EXPECT_EQ(item.event.payload[0], std::byte(s & 0xff)) << "seqno " << s;
        }
        seqnos.push_back(s);
    }
}

Position parsed(const std::string& text) {
    auto position = parse_start(text);
    EXPECT_TRUE(position.ok()) << position.error().message();
    return position.ok() ? *position : Position::oldest();
}

class RecordingReread : public ::testing::TestWithParam<Kind> {
protected:
    void SetUp() override {
        path_ = dir_.file("reread.evrec");
        write_recording(path_, GetParam());
        auto source = RecordingSource::open(path_, path_);
        ASSERT_TRUE(source.ok()) << source.error().message();
        source_ = std::move(*source);
    }
    std::vector<std::uint64_t> from(const Position& start) {
        auto sought = source_->seek(start);
        EXPECT_TRUE(sought.ok()) << sought.error().message();
        return read_to_end(*source_);
    }

    test::TempDir dir_;
    std::string path_;
    std::unique_ptr<RecordingSource> source_;
};

TEST_P(RecordingReread, TheOldestAgainAfterTheEndGivesEveryEventAgain) {
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
    EXPECT_EQ(read_to_end(*source_), std::vector<std::uint64_t>{});  // End repeats
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
    EXPECT_EQ(source_->counters().events, 3 * kEvents);  // the counters go on counting
}

TEST_P(RecordingReread, EveryPositionAfterTheEndIsReachedAgain) {
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
    EXPECT_EQ(from(Position::seqno(100)), test::range(100, kEvents));
    EXPECT_EQ(from(Position::seqno(5)), test::range(5, kEvents));  // before the last start
    EXPECT_EQ(from(parsed("-10")), test::range(kEvents - 9, kEvents));
    EXPECT_EQ(from(Position::latest()), std::vector<std::uint64_t>{kEvents});
    const std::uint64_t time_of_200 = test::event_with(200, 40).record_epoch_nanos;
    EXPECT_EQ(from(Position{Position::Kind::AbsoluteTime, time_of_200}), test::range(200, kEvents));
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
}

TEST_P(RecordingReread, ASeekReplacesTheStartOfTheSeekBefore) {
    // Without reading in between: "-10" passes over 630 events, a seqno sets a minimum.
    ASSERT_TRUE(source_->seek(parsed("-10")).ok());
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
    ASSERT_TRUE(source_->seek(Position::seqno(600)).ok());
    EXPECT_EQ(from(Position::seqno(3)), test::range(3, kEvents));
}

TEST_P(RecordingReread, ASeekInTheMiddleOfAReadStartsThere) {
    ASSERT_TRUE(source_->seek(Position::oldest()).ok());
    SourceItem item;
    std::uint64_t events = 0;
    while (events < 500) {
        const SourceStep step = source_->next(item, PayloadRead::None);
        ASSERT_TRUE(step == SourceStep::Event || step == SourceStep::Notice);
        events += step == SourceStep::Event;
    }
    EXPECT_EQ(from(Position::seqno(10)), test::range(10, kEvents));
}

TEST_P(RecordingReread, AReplacedRecordingIsRefusedByName) {
    EXPECT_EQ(from(Position::oldest()), test::range(1, kEvents));
    ASSERT_EQ(::unlink(path_.c_str()), 0);
    write_recording(path_, Kind::Indexed);  // another recording (another series id) at the same path
    auto sought = source_->seek(Position::oldest());
    ASSERT_FALSE(sought.ok());
    EXPECT_NE(sought.error().message().find("'" + path_ + "' was replaced since it was opened"), std::string::npos)
        << sought.error().message();
}

INSTANTIATE_TEST_SUITE_P(Kinds, RecordingReread, ::testing::Values(Kind::Indexed, Kind::Unindexed, Kind::Series),
                         [](const ::testing::TestParamInfo<Kind>& kind) { return name_of(kind.param); });

}  // namespace
}  // namespace evring
