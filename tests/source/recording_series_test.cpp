// A rotated recording replayed as one stream (recording_source.hpp) when one
// of its files is missing, cut short, unreadable or foreign: every event of
// the intact files is handed out exactly once, the loss between them is one
// LostToDamage gap naming the file, and nothing after the bad file is hidden.
// Also the start positions a recording shares with rings and snapshots.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/follow.hpp"
#include "source/recording_source.hpp"
#include "recording/recording_writer.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::TempDir;

constexpr std::uint64_t kEvents = 640;

struct Replayed {
    std::vector<std::uint64_t> seqnos;
    std::vector<SourceGap> gaps;
    std::vector<std::string> gap_details;
    std::vector<std::string> notices;
    FollowResult result;
    bool noticed(const std::string& part) const {
        return std::any_of(notices.begin(), notices.end(),
                           [&](const std::string& n) { return n.find(part) != std::string::npos; });
    }
};

struct Collect : FollowSink {
    Replayed& out;
    explicit Collect(Replayed& r) : out(r) {}
    bool event(const SourceEvent& e) override {
        out.seqnos.push_back(e.descriptor.seqno);
        return true;
    }
    bool gap(const SourceGap& g) override {
        out.gaps.push_back(g);
        out.gap_details.emplace_back(g.detail);
        return true;
    }
    void notice(std::string_view text) override { out.notices.emplace_back(text); }
};

Replayed follow_path(const std::string& path, Position start = Position::oldest()) {
    Replayed out;
    auto source = open_source(path, {});
    EXPECT_TRUE(source.ok()) << source.error().message();
    if (!source.ok()) return out;
    Collect sink(out);
    FollowOptions options;
    options.start = start;
    auto result = follow(*source, options, sink);
    EXPECT_TRUE(result.ok()) << result.error().message();
    if (result.ok()) out.result = *result;
    return out;
}

// Writes seqnos 1..kEvents rotated into ~17 files; returns how many.
std::uint32_t write_series(const std::string& path) {
    RecordingOptions options;
    options.rotate_bytes = 4096;
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    EXPECT_TRUE(writer.ok());
    for (std::uint64_t s = 1; s <= kEvents; ++s) test::append_event(*writer, s, 40);
    EXPECT_TRUE(writer->finish().ok());
    return writer->totals().files;
}

std::vector<std::uint64_t> events_of(const std::string& file) {
    return test::replay(file).event_seqnos();
}

// Every seqno 1..kEvents is an event or inside exactly one gap, in order.
void expect_each_seqno_accounted_once(const Replayed& r) {
    std::vector<std::uint64_t> seen = r.seqnos;
    for (const SourceGap& g : r.gaps)
        for (std::uint64_t s = g.first_seqno; s <= g.last_seqno(); ++s) seen.push_back(s);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, test::range(1, kEvents));
    EXPECT_TRUE(std::is_sorted(r.seqnos.begin(), r.seqnos.end()));
}

TEST(RecordingSeries, MissingMiddleFileHidesNothingAfterIt) {
    TempDir dir;
    const std::string path = dir.file("s.evrec");
    const std::uint32_t files = write_series(path);
    ASSERT_GE(files, 12u);
    const std::string second = rotated_path(path, 2);
    const std::vector<std::uint64_t> lost = events_of(second);
    ASSERT_FALSE(lost.empty());
    ASSERT_EQ(::unlink(second.c_str()), 0);

    const Replayed r = follow_path(path);
    std::vector<std::uint64_t> expected;
    for (std::uint64_t s = 1; s <= kEvents; ++s)
        if (!std::binary_search(lost.begin(), lost.end(), s)) expected.push_back(s);
    EXPECT_EQ(r.seqnos, expected);
    ASSERT_EQ(r.gaps.size(), 1u);
    EXPECT_EQ(r.gaps[0].reason, GapReason::LostToDamage);
    EXPECT_EQ(r.gaps[0].first_seqno, lost.front());
    EXPECT_EQ(r.gaps[0].last_seqno(), lost.back());
    EXPECT_NE(r.gap_details[0].find("'" + second + "' (missing)"), std::string::npos)
        << r.gap_details[0];
    EXPECT_TRUE(r.noticed("going on with '" + rotated_path(path, 3) + "'"));
    EXPECT_TRUE(r.result.damaged);
    EXPECT_EQ(r.result.counters.damaged, lost.size());
    EXPECT_EQ(r.result.counters.damage_reports, 1u);
    EXPECT_EQ(r.result.end, FollowEnd::End);
    expect_each_seqno_accounted_once(r);
}

TEST(RecordingSeries, TruncatedMiddleFileGivesWhatItHoldsThenGoesOn) {
    TempDir dir;
    const std::string path = dir.file("s.evrec");
    ASSERT_GE(write_series(path), 12u);
    const std::string second = rotated_path(path, 2);
    struct stat st {};
    ASSERT_EQ(::stat(second.c_str(), &st), 0);
    ASSERT_EQ(::truncate(second.c_str(), st.st_size / 2), 0);

    const Replayed r = follow_path(path);
    std::vector<std::uint64_t> expected;
    for (std::uint32_t i = 0; ::access(rotated_path(path, i).c_str(), F_OK) == 0; ++i)
        for (std::uint64_t s : events_of(rotated_path(path, i))) expected.push_back(s);
    EXPECT_EQ(r.seqnos, expected);
    EXPECT_EQ(r.seqnos.back(), kEvents);
    EXPECT_TRUE(
        r.noticed("'" + second + "' was cut short; going on with '" + rotated_path(path, 3) + "'"));
    EXPECT_TRUE(r.result.damaged);
    // The cut block and the rest of the file: reported as damage, not hidden.
    ASSERT_FALSE(r.gaps.empty());
    EXPECT_EQ(r.gaps.back().reason, GapReason::LostToDamage);
    EXPECT_EQ(r.gaps.back().last_seqno(), events_of(rotated_path(path, 3)).front() - 1);
    EXPECT_GE(r.result.counters.damaged, 1u);
    expect_each_seqno_accounted_once(r);
}

TEST(RecordingSeries, SeveralBadFilesInARowAreSkippedTogether) {
    TempDir dir;
    const std::string path = dir.file("s.evrec");
    ASSERT_GE(write_series(path), 12u);
    const std::vector<std::uint64_t> first_lost = events_of(rotated_path(path, 4));
    const std::vector<std::uint64_t> after = events_of(rotated_path(path, 7));
    ASSERT_EQ(::unlink(rotated_path(path, 4).c_str()), 0);
    test::write_file(rotated_path(path, 5), test::Bytes(10, std::byte{0}));  // not a recording
    {
        // A file of another recording in its place.
        auto other =
            RecordingWriter::create(dir.file("other"), test::recording_source_header(), {});
        ASSERT_TRUE(other.ok());
        test::append_event(*other, 1, 40);
        ASSERT_TRUE(other->finish().ok());
    }
    ASSERT_EQ(::rename(dir.file("other").c_str(), rotated_path(path, 6).c_str()), 0);

    const Replayed r = follow_path(path);
    ASSERT_EQ(r.gaps.size(), 1u);
    EXPECT_EQ(r.gaps[0].first_seqno, first_lost.front());
    EXPECT_EQ(r.gaps[0].last_seqno(), after.front() - 1);
    EXPECT_TRUE(r.noticed("skipping 3 file(s) and going on with '" + rotated_path(path, 7) + "'"));
    EXPECT_TRUE(r.noticed("belongs to another recording"));
    EXPECT_EQ(r.seqnos.back(), kEvents);
    expect_each_seqno_accounted_once(r);
}

TEST(RecordingSeries, MissingLastFileEndsTheReplayWithTheNotice) {
    TempDir dir;
    const std::string path = dir.file("s.evrec");
    const std::uint32_t files = write_series(path);
    const std::string last = rotated_path(path, files - 1);
    ASSERT_EQ(::unlink(last.c_str()), 0);
    const Replayed r = follow_path(path);
    EXPECT_TRUE(r.noticed("continues in '" + last + "', which cannot be read"));
    EXPECT_TRUE(r.result.damaged);
    EXPECT_TRUE(r.gaps.empty());
    EXPECT_EQ(r.result.why, "end of the recording ('" + last + "' cannot be read)");
}

TEST(RecordingSeries, StartBeforeTheFirstEventIsANoticeAndPastTheNewestAnError) {
    TempDir dir;
    const std::string path = dir.file("rec");
    {
        auto writer = RecordingWriter::create(path, test::recording_source_header(), {});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 100; s <= 150; ++s) test::append_event(*writer, s, 40);
        ASSERT_TRUE(writer->finish().ok());
    }
    auto source = open_source(path, {});
    ASSERT_TRUE(source.ok());
    auto early = (*source)->seek(Position::seqno(5));
    ASSERT_TRUE(early.ok());
    EXPECT_EQ(*early, "seqno 5 is not in recording '" + path + "'; starting at the oldest, 100");
    const Replayed from_early = follow_path(path, Position::seqno(5));
    EXPECT_EQ(from_early.seqnos, test::range(100, 150));
    EXPECT_TRUE(from_early.noticed("starting at the oldest, 100"));

    auto exact = open_source(path, {});
    ASSERT_TRUE(exact.ok());
    auto inside = (*exact)->seek(Position::seqno(150));
    ASSERT_TRUE(inside.ok());
    EXPECT_EQ(*inside, "");

    auto past = open_source(path, {});
    ASSERT_TRUE(past.ok());
    auto beyond = (*past)->seek(Position::seqno(151));
    ASSERT_FALSE(beyond.ok());
    EXPECT_EQ(beyond.error().errno_value(), ERANGE);
    EXPECT_EQ(beyond.error().message(),
              "seqno 151 is beyond the newest event (150) of recording '" + path + "'");
}

}  // namespace
}  // namespace evring
