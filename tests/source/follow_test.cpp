// The follow loop (follow.hpp) and recordings as event sources
// (recording_source.hpp): count, stop positions, filters, the stop flag,
// rotated series replayed as one stream, damage as gaps, and following a ring
// name across writer restarts (writers are child processes, so their exit is
// real).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/follow.hpp"
#include "evring/ring/publisher.hpp"
#include "source/recording_source.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::TempDir;

struct Collector : FollowSink {
    std::vector<std::uint64_t> seqnos;
    std::vector<SourceGap> gaps;
    std::vector<std::string> notices;
    std::size_t stop_after = 0;  // 0: never
    int idles = 0;
    bool event(const SourceEvent& event) override {
        seqnos.push_back(event.descriptor.seqno);
        return stop_after == 0 || seqnos.size() < stop_after;
    }
    bool gap(const SourceGap& gap) override {
        gaps.push_back(gap);
        return true;
    }
    void notice(std::string_view text) override { notices.emplace_back(text); }
    bool idle() override {
        ++idles;
        return true;
    }
    bool noticed(const std::string& part) const {
        for (const auto& n : notices)
            if (n.find(part) != std::string::npos) return true;
        return false;
    }
};

std::unique_ptr<EventSource> open(const std::string& path) {
    auto source = open_source(path, {});
    EXPECT_TRUE(source.ok()) << source.error().message();
    return std::move(source).value();
}

// --- Recordings ------------------------------------------------------------

TEST(RecordingSource, RotatedSeriesIsReplayedAsOneStream) {
    TempDir dir;
    const std::string path = dir.file("rec");
    RecordingOptions options;
    options.rotate_bytes = 4096;
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    ASSERT_TRUE(writer.ok());
    for (std::uint64_t s = 1; s <= 300; ++s) test::append_event(*writer, s, 40);
    ASSERT_TRUE(writer->finish().ok());
    ASSERT_GE(writer->totals().files, 3u);
    auto source = open(path);
    Collector sink;
    FollowOptions follow_options;
    follow_options.start = Position::oldest();
    auto result = follow(source, follow_options, sink);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(sink.seqnos, test::range(1, 300));
    EXPECT_TRUE(sink.noticed("continues in '" + path + ".1'"));
    EXPECT_EQ(result->end, FollowEnd::End);
    EXPECT_FALSE(result->damaged);

    // A missing last continuation is damage: said, and the replay ends there
    // (missing files in the middle: recording_series_test.cpp).
    const std::string last = rotated_path(path, writer->totals().files - 1);
    ASSERT_EQ(::unlink(last.c_str()), 0);
    auto cut = open(path);
    Collector cut_sink;
    auto cut_result = follow(cut, follow_options, cut_sink);
    ASSERT_TRUE(cut_result.ok());
    EXPECT_TRUE(cut_result->damaged);
    EXPECT_TRUE(cut_sink.noticed(last + "', which cannot be read"));
}

TEST(RecordingSource, GapReasonsAndDamageComeBackAsGaps) {
    TempDir dir;
    const std::string path = dir.file("rec");
    {
        RecordingOptions options;
        options.compress = false;
        auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
        for (std::uint64_t s = 1; s <= 10; ++s) test::append_event(*writer, s, 40);
        ASSERT_TRUE(writer->append_gap(11, 3, GapReason::WriterGone).ok());
        ASSERT_TRUE(writer->flush().ok());
        for (std::uint64_t s = 14; s <= 20; ++s) test::append_event(*writer, s, 40);
        ASSERT_TRUE(writer->flush().ok());
        for (std::uint64_t s = 21; s <= 30; ++s) test::append_event(*writer, s, 40);
        ASSERT_TRUE(writer->finish().ok());
    }
    test::Bytes bytes = test::read_file(path);
    const auto blocks = test::list_blocks(bytes);
    ASSERT_GE(blocks.size(), 3u);
    test::flip_bit(bytes, blocks[1].offset + sizeof(RecordingBlockHeader) + 20);  // block holding 14..20
    test::write_file(path, bytes);
    auto source = open(path);
    Collector sink;
    FollowOptions options;
    options.start = Position::oldest();
    auto result = follow(source, options, sink);
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(sink.gaps.size(), 2u);
    EXPECT_EQ(sink.gaps[0].reason, GapReason::WriterGone);
    EXPECT_EQ(sink.gaps[1].reason, GapReason::LostToDamage);
    EXPECT_EQ(sink.gaps[1].first_seqno, 14u);
    EXPECT_EQ(sink.gaps[1].count, 7u);
    EXPECT_NE(sink.gaps[1].detail.find("checksum mismatch"), std::string_view::npos);
    EXPECT_TRUE(result->damaged);
    EXPECT_EQ(result->counters.damaged, 7u);
    EXPECT_EQ(sink.seqnos.size(), 20u);
}

TEST(RecordingSource, PositionsBackSeqnoAndTime) {
    TempDir dir;
    const std::string path = dir.file("rec");
    test::write_blocks(path, 100, 10, true);
    auto last = [&](Position start) {
        auto source = open(path);
        Collector sink;
        FollowOptions options;
        options.start = start;
        EXPECT_TRUE(follow(source, options, sink).ok());
        return sink.seqnos;
    };
    EXPECT_EQ(last({Position::Kind::Back, 3}), test::range(98, 100));
    EXPECT_EQ(last(Position::latest()), test::range(100, 100));
    EXPECT_EQ(last(Position::seqno(95)), test::range(95, 100));
    // event_with stamps seqno s at 1.7e18 + s.
    EXPECT_EQ(last({Position::Kind::AbsoluteTime, 1'700'000'000'000'000'097}), test::range(97, 100));
    EXPECT_EQ(last({Position::Kind::RelativeTime, 2}), test::range(98, 100));
}

// --- The loop --------------------------------------------------------------

TEST(Follow, CountStopPositionAndFilter) {
    TempDir dir;
    const std::string path = dir.file("rec");
    test::write_blocks(path, 50, 10, false);
    auto run = [&](FollowOptions options) {
        auto source = open(path);
        Collector sink;
        auto result = follow(source, options, sink);
        EXPECT_TRUE(result.ok());
        return std::make_pair(sink.seqnos, result->end);
    };
    FollowOptions options;
    options.start = Position::oldest();
    options.count = 5;
    EXPECT_EQ(run(options), std::make_pair(test::range(1, 5), FollowEnd::Count));
    options.count = 0;
    options.stop = Position::seqno(7);
    EXPECT_EQ(run(options), std::make_pair(test::range(1, 7), FollowEnd::Stop));
    options.stop = {};
    options.filter.types.add(3);  // event_with: type seqno % 5 + 1
    const auto filtered = run(options).first;
    EXPECT_EQ(filtered, (std::vector<std::uint64_t>{2, 7, 12, 17, 22, 27, 32, 37, 42, 47}));
}

TEST(Follow, StopFlagEndsAnIdleLiveFollowWithinTheSleepBound) {
    TempDir dir;
    CreateOptions create;
    create.keep_on_close = true;
    auto writer = RingWriter::create(test::small_spec(dir.file("ring"), 6, 16), create);
    ASSERT_TRUE(writer.ok());
    auto source = open(dir.file("ring"));
    std::atomic<bool> stop{false};
    // The stop comes once the follow has gone idle (waited for events), not
    // after a fixed delay, which a loaded machine can spend before the follow
    // even starts: then it never idles and the check below fails.
    struct IdleCollector : Collector {
        std::atomic<bool> went_idle{false};
        bool idle() override {
            went_idle.store(true);
            return Collector::idle();
        }
    } sink;
    FollowOptions options;
    options.stop_flag = &stop;
    options.max_sleep = std::chrono::milliseconds(20);
    std::thread stopper([&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!sink.went_idle.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        stop.store(true);
    });
    auto result = follow(source, options, sink);
    stopper.join();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->end, FollowEnd::Stopped);
    EXPECT_GT(sink.idles, 0) << "the sink was told it could flush";
}

// A child process that creates the ring `path`, commits `events` events, then
// exits when told (a byte on `go`), removing the ring.
pid_t start_writer(const std::string& path, int events, int go_fd, int ready_fd) {
    const pid_t child = ::fork();
    if (child != 0) return child;
    {
        auto writer = RingWriter::create(test::small_spec(path, 8, 16));
        if (!writer) ::_exit(1);
        Publisher publisher(writer->ring());
        for (int i = 0; i < events; ++i) publisher.commit(publisher.reserve(8));
        char c = 1;
        if (::write(ready_fd, &c, 1) != 1 || ::read(go_fd, &c, 1) != 1) ::_exit(2);
    }  // closes the ring (and removes the file) before exiting
    ::_exit(0);
}

TEST(Follow, FollowNameContinuesOnTheRingANewWriterCreatesUnderTheSameName) {
    TempDir dir;
    const std::string path = dir.file("ring");
    int ready[2], go[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(go), 0);
    char c = 0;
    const pid_t first = start_writer(path, 5, go[0], ready[1]);
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    auto source = open(path);
    Collector sink;
    sink.stop_after = 12;  // 5 from the first ring, 7 from the second
    FollowOptions options;
    options.start = Position::oldest();
    options.follow_name = true;
    options.max_sleep = std::chrono::milliseconds(20);
    Result<FollowResult> result = Error(0, "not run");
    std::thread loop([&] { result = follow(source, options, sink); });
    ASSERT_EQ(::write(go[1], &c, 1), 1);  // the first writer exits
    int status = 0;
    ASSERT_EQ(::waitpid(first, &status, 0), first);
    const pid_t second = start_writer(path, 7, go[0], ready[1]);
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    loop.join();
    ASSERT_EQ(::write(go[1], &c, 1), 1);
    ASSERT_EQ(::waitpid(second, &status, 0), second);
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result->end, FollowEnd::Sink);
    EXPECT_EQ(result->rings, 2u);
    std::vector<std::uint64_t> expected = test::range(1, 5);
    for (std::uint64_t s = 1; s <= 7; ++s) expected.push_back(s);
    EXPECT_EQ(sink.seqnos, expected);
    EXPECT_TRUE(sink.noticed("the writer exited"));
    EXPECT_TRUE(sink.noticed("a new writer created ring"));
    EXPECT_TRUE(sink.gaps.empty()) << "nothing of the new ring was overwritten";
}

}  // namespace
}  // namespace evring
