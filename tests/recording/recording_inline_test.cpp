// RecordingWriter's inline begin_event/end_event (recording_writer_inline.hpp)
// against its out-of-line path: the same calls, mixed so that the inline
// path settles and re-arms at every kind of boundary (a gap, an expired
// payload begun inline, an event too big for the staging buffer, flushes,
// blocks ended by size, a writer moved and one destroyed without finish),
// give the same records, the same blocks and the same sizes, and with
// rotation the same files. A span marker without its types turns the inline
// path off: the reference.
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "recording/recording_reader.hpp"
#include "recording/recording_writer.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::TempDir;

// A span marker that marks nothing, without the types it marks, takes every
// event out of line and changes nothing in the file: the reference.
std::size_t marks_nothing(const EventDescriptor&, std::span<const std::byte>, std::span<SpanMark>) { return 0; }

RecordingOptions options_with(bool inline_path, std::uint64_t rotate_bytes = 0) {
    RecordingOptions options;
    options.compress = false;  // stored sizes comparable byte for byte
    options.rotate_bytes = rotate_bytes;
    if (!inline_path) options.span_marker = marks_nothing;
    return options;
}

// The script: every boundary the inline path must settle at. Returns
// current_file_bytes() after each step, which must match between the paths.
std::vector<std::uint64_t> write_script(RecordingWriter& w) {
    std::vector<std::uint64_t> sizes;
    std::uint64_t seq = 1;
    for (int i = 0; i < 100; ++i) test::append_event(w, seq++, 40);
    sizes.push_back(w.current_file_bytes());
    test::append_event(w, seq++, 40, false);  // begun inline, expired
    EXPECT_TRUE(w.append_gap(seq, 5, GapReason::FellBehind).ok());
    seq += 5;
    sizes.push_back(w.current_file_bytes());
    for (int i = 0; i < 3000; ++i) test::append_event(w, seq++, 200);  // past several block ends
    sizes.push_back(w.current_file_bytes());
    EXPECT_TRUE(w.flush().ok());
    sizes.push_back(w.current_file_bytes());
    test::append_event(w, seq++, 700 << 10);  // bigger than the staging buffer: out of line
    test::append_event(w, seq++, 64);
    sizes.push_back(w.current_file_bytes());
    RecordingWriter moved = std::move(w);
    for (int i = 0; i < 50; ++i) test::append_event(moved, seq++, 0);
    sizes.push_back(moved.current_file_bytes());
    w = std::move(moved);
    test::append_event(w, seq++, 16);
    sizes.push_back(w.current_file_bytes());
    return sizes;
}

struct Written {
    test::Replay replay;
    std::vector<test::BlockAt> blocks;
    std::vector<std::uint64_t> sizes;
    RecordingTotals totals;
};

Written write_with(const std::string& path, const RecordingOptions& options, bool finish) {
    Written out;
    {
        auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
        EXPECT_TRUE(writer.ok()) << writer.error().message();
        out.sizes = write_script(*writer);
        out.totals = writer->totals();
        if (finish) {
            EXPECT_TRUE(writer->finish().ok());
        }
    }  // without finish: the destructor writes what is staged
    out.replay = test::replay(path);
    out.blocks = test::list_blocks(test::read_file(path));
    return out;
}

Written write(const std::string& path, bool inline_path, bool finish) {
    return write_with(path, options_with(inline_path), finish);
}

void expect_same(const Written& a, const Written& b) {
    EXPECT_EQ(a.sizes, b.sizes);
    EXPECT_EQ(a.totals.events, b.totals.events);
    EXPECT_EQ(a.totals.expired, b.totals.expired);
    EXPECT_EQ(a.totals.lost, b.totals.lost);
    ASSERT_EQ(a.replay.records.size(), b.replay.records.size());
    for (std::size_t i = 0; i < a.replay.records.size(); ++i) {
        EXPECT_EQ(a.replay.records[i].kind, b.replay.records[i].kind) << "record " << i;
        EXPECT_EQ(a.replay.records[i].event.seqno, b.replay.records[i].event.seqno) << "record " << i;
        EXPECT_EQ(a.replay.payloads[i], b.replay.payloads[i]) << "record " << i;
    }
    ASSERT_EQ(a.blocks.size(), b.blocks.size());
    for (std::size_t i = 0; i < a.blocks.size(); ++i) {
        const RecordingBlockHeader &x = a.blocks[i].header, &y = b.blocks[i].header;
        EXPECT_EQ(x.first_seqno, y.first_seqno) << "block " << i;
        EXPECT_EQ(x.last_seqno, y.last_seqno) << "block " << i;
        EXPECT_EQ(x.content_size, y.content_size) << "block " << i;
        EXPECT_EQ(x.record_count, y.record_count) << "block " << i;
        EXPECT_EQ(x.content, y.content) << "block " << i;
        EXPECT_EQ(x.flags, y.flags) << "block " << i;
    }
}

TEST(RecordingInline, WritesWhatTheOutOfLinePathWrites) {
    TempDir dir;
    const Written fast = write(dir.file("inline.evrec"), true, true);
    const Written slow = write(dir.file("out_of_line.evrec"), false, true);
    expect_same(fast, slow);
    EXPECT_EQ(fast.totals.events, 100u + 3000u + 2u + 50u + 1u);
    EXPECT_EQ(fast.totals.expired, 1u);
    EXPECT_EQ(fast.replay.status, ReadStatus::CleanEnd) << fast.replay.notice;
    EXPECT_GT(fast.blocks.size(), 4u);  // blocks ended by size and by flush
}

TEST(RecordingInline, DestroyedWithoutFinishKeepsWhatWasStagedInline) {
    TempDir dir;
    const Written fast = write(dir.file("inline.evrec"), true, false);
    const Written slow = write(dir.file("out_of_line.evrec"), false, false);
    expect_same(fast, slow);
    EXPECT_EQ(fast.replay.event_seqnos().size(), fast.totals.events);
}

// Rotation keeps the inline path: the record that makes a file reach the
// limit ends the inline stretch, and each file of the series is the one the
// out-of-line path writes, record for record and block for block.
TEST(RecordingInline, RotatesAtTheRecordTheOutOfLinePathRotatesAt) {
    TempDir dir;
    constexpr std::uint64_t kRotate = 96 << 10;
    {
        auto probe = RecordingWriter::create(dir.file("probe.evrec"), test::recording_source_header(),
                                             options_with(true, kRotate));
        ASSERT_TRUE(probe.ok());
        EXPECT_TRUE(probe->inline_path());
    }
    const Written fast = write_with(dir.file("inline.evrec"), options_with(true, kRotate), true);
    const Written slow = write_with(dir.file("out_of_line.evrec"), options_with(false, kRotate), true);
    EXPECT_EQ(fast.sizes, slow.sizes);
    EXPECT_EQ(fast.totals.files, slow.totals.files);
    EXPECT_GT(fast.totals.files, 5u);
    for (std::uint32_t i = 0; i < fast.totals.files; ++i) {
        const std::string a = rotated_path(dir.file("inline.evrec"), i), b = rotated_path(dir.file("out_of_line.evrec"), i);
        const test::Bytes fa = test::read_file(a), fb = test::read_file(b);
        EXPECT_EQ(fa.size(), fb.size()) << "file " << i;
        EXPECT_LE(fa.size(), kRotate + (700 << 10) + 4096) << "file " << i << ": the limit plus one record (the script's largest)";
        Written x, y;
        x.replay = test::replay(a);
        y.replay = test::replay(b);
        x.blocks = test::list_blocks(fa);
        y.blocks = test::list_blocks(fb);
        x.sizes = y.sizes = {};
        expect_same(x, y);
    }
}

// Span marks on events of type 3 (test::event_with gives types 1..5 by
// seqno): labelled by their seqno.
constexpr std::uint32_t kMarkKey = 77;
std::size_t mark_type_3(const EventDescriptor& e, std::span<const std::byte>, std::span<SpanMark> out) {
    if (e.event_type != 3) return 0;
    out[0] = SpanMark{kMarkKey, 0, e.seqno, e.seqno};
    return 1;
}

// With the marked types given, the other types stay inline; the file is the
// one a writer that takes every event out of line for its marks writes,
// span index included.
TEST(RecordingInline, SpanMarkedTypesLeaveTheOtherTypesInlineWithTheSameMarks) {
    TempDir dir;
    RecordingOptions typed = options_with(true), untyped = options_with(true);
    typed.span_marker = untyped.span_marker = mark_type_3;
    typed.span_marked_types = {3};
    {
        auto a = RecordingWriter::create(dir.file("probe_a.evrec"), test::recording_source_header(), typed);
        auto b = RecordingWriter::create(dir.file("probe_b.evrec"), test::recording_source_header(), untyped);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_TRUE(a->inline_path());
        EXPECT_FALSE(b->inline_path()) << "a marker that may mark any type takes every event out of line";
    }
    const Written fast = write_with(dir.file("typed.evrec"), typed, true);
    const Written slow = write_with(dir.file("untyped.evrec"), untyped, true);
    expect_same(fast, slow);
    auto fast_reader = RecordingReader::open(dir.file("typed.evrec"));
    auto slow_reader = RecordingReader::open(dir.file("untyped.evrec"));
    ASSERT_TRUE(fast_reader.ok() && slow_reader.ok());
    std::uint64_t found = 0;
    for (const std::uint64_t seqno : fast.replay.event_seqnos()) {
        auto x = fast_reader->find(IndexQuery::span(kMarkKey, seqno));
        auto y = slow_reader->find(IndexQuery::span(kMarkKey, seqno));
        ASSERT_TRUE(x.ok() && y.ok());
        EXPECT_EQ(x->outcome, y->outcome) << "seqno " << seqno;
        if (seqno % 5 + 1 == 3) {
            ASSERT_EQ(x->outcome, IndexOutcome::Found) << "seqno " << seqno << " has a mark";
            EXPECT_EQ(x->seqno, seqno);
            EXPECT_EQ(x->block.offset, y->block.offset);
            ++found;
        } else {
            EXPECT_NE(x->outcome, IndexOutcome::Found) << "seqno " << seqno << " has none";
        }
    }
    EXPECT_GT(found, 600u);
}

}  // namespace
}  // namespace evring
