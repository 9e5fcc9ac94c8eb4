// What a recording's writer tells a caller about its file: on_block reports
// each records block just before and just after its write, in file order,
// with its last sequence number (per member for a ring set), and sync()
// returns only once everything appended is in the file. A named recorder
// builds its mark and its commits on these (lib/cursor/named_reader.hpp).
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/recording_files.hpp"

namespace evring {
namespace {

using namespace test;

struct Told {
    bool written;
    std::uint64_t last_seqno;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> members;
    bool operator==(const Told&) const = default;
};

// Collects on_block's calls (the worker thread's) for the test's thread.
struct Progress {
    std::mutex mutex;
    std::vector<Told> told;
    std::function<void(const BlockProgress&)> hook() {
        return [this](const BlockProgress& block) {
            Told t{block.written, block.last_seqno, {}};
            for (const auto& m : block.members) t.members.emplace_back(m.member, m.seqno);
            std::lock_guard lock(mutex);
            told.push_back(std::move(t));
        };
    }
    std::vector<Told> taken() {
        std::lock_guard lock(mutex);
        return told;
    }
};

TEST(RecordingProgress, EachRecordsBlockIsToldBeforeAndAfterItsWriteInFileOrder) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Progress progress;
    RecordingOptions options;
    options.on_block = progress.hook();
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (std::uint64_t s = 1; s <= 10; ++s) append_event(*writer, s, 16);
    ASSERT_TRUE(writer->flush().ok());
    for (std::uint64_t s = 11; s <= 20; ++s) append_event(*writer, s, 16, s != 20);  // an expired one counts too
    ASSERT_TRUE(writer->append_gap(21, 5, GapReason::FellBehind).ok());
    ASSERT_TRUE(writer->finish().ok());
    // The schema, index and end blocks hold no sequence number: not told.
    const std::vector<Told> expected{{false, 10, {}}, {true, 10, {}}, {false, 25, {}}, {true, 25, {}}};
    EXPECT_EQ(progress.taken(), expected);
}

TEST(RecordingProgress, ARingSetRecordingTellsEachMembersLastEvent) {
    TempDir dir;
    const std::string path = dir.file("s.evrec");
    Progress progress;
    RecordingOptions options;
    options.ring_set = true;
    options.on_block = progress.hook();
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    const std::vector<std::pair<std::uint32_t, std::uint64_t>> events{{0, 1}, {2, 7}, {0, 2}, {2, 8}, {0, 3}};
    for (const auto& [member, seqno] : events) {
        EventDescriptor event = event_with(seqno, 8);
        event.reserved = static_cast<std::uint16_t>(member);
        writer->begin_event(event);
        ASSERT_TRUE(writer->end_event(true).ok());
    }
    ASSERT_TRUE(writer->sync().ok());
    const std::vector<Told> told = progress.taken();
    ASSERT_EQ(told.size(), 2u);
    const std::vector<std::pair<std::uint32_t, std::uint64_t>> last{{0, 3}, {2, 8}};
    EXPECT_EQ(told[0], (Told{false, 8, last}));
    EXPECT_EQ(told[1], (Told{true, 8, last}));
    ASSERT_TRUE(writer->finish().ok());
}

TEST(RecordingProgress, SyncReturnsOnceEverythingAppendedIsInTheFile) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    auto writer = RecordingWriter::create(path, recording_source_header(), {});
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (std::uint64_t s = 1; s <= 3000; ++s) {
        append_event(*writer, s, 200);
        if (s % 1000 != 0) continue;
        // No flush before: sync ends the staged block itself, and waits for the worker.
        ASSERT_TRUE(writer->sync().ok());
        const Replay r = replay(path);
        std::size_t events = 0;
        for (const Record& record : r.records) events += record.kind == RecordKind::Event;
        EXPECT_EQ(events, s) << "after sync at seqno " << s << ": " << r.notice;
    }
    ASSERT_TRUE(writer->finish().ok());
    EXPECT_TRUE(writer->sync().ok());  // finished: nothing left to sync
}

}  // namespace
}  // namespace evring
