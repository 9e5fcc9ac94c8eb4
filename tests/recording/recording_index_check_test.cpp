// Index answers checked against the file (recording_index_check.cpp,
// recording_source_index.cpp): an index block forged with fresh checksums
// that moves a time later, or that makes a rotated file look as if it ended
// before a seqno, is caught by reading the block before the answer, and the
// source falls back to a scan that finds the right event, saying so once;
// -N reaching back past the last file of a series goes back file by file
// through their indexes instead of counting the series from its start.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "recording/recording_index.hpp"
#include "recording/recording_writer.hpp"
#include "source/recording_source.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::append_event;
using test::BlockAt;
using test::Bytes;
using test::list_blocks;
using test::read_file;
using test::recording_source_header;
using test::reseal_block;
using test::TempDir;
using test::write_file;

constexpr std::uint64_t kEvents = 3000;
constexpr std::uint64_t kPerBlock = 7;
constexpr std::uint64_t kBaseNanos = 1'700'000'000'000'000'000;  // test::event_with's times: base + seqno

// `kEvents` raw events from seqno 1, a block every kPerBlock, rotated at
// `rotate` bytes when not 0.
void write_indexed(const std::string& path, std::uint64_t rotate = 0) {
    RecordingOptions options;
    options.compress = false;
    options.rotate_bytes = rotate;
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (std::uint64_t s = 1; s <= kEvents; ++s) {
        append_event(*writer, s, 40);
        if (s % kPerBlock == 0) {
            ASSERT_TRUE(writer->flush().ok());
        }
    }
    ASSERT_TRUE(writer->finish().ok());
}

// Where, in `file`, the index entry for the records block at `offset` is,
// and the index block holding it (and whether it is that block's last entry).
struct EntryAt {
    std::uint64_t at = 0;
    BlockAt index;
    bool last_of_its_block = false;
};

std::optional<EntryAt> entry_for(const Bytes& file, std::uint64_t offset) {
    for (const BlockAt& b : list_blocks(file)) {
        if (b.header.content != static_cast<std::uint16_t>(BlockContent::Index)) continue;
        const std::uint64_t content = b.offset + sizeof(RecordingBlockHeader);
        IndexHead head;
        std::memcpy(&head, file.data() + content, sizeof head);
        const std::uint64_t entries = content + sizeof head + std::uint64_t{head.summaries} * sizeof(IndexSummary);
        for (std::uint32_t i = 0; i < head.entries; ++i) {
            IndexEntry e;
            std::memcpy(&e, file.data() + entries + i * sizeof e, sizeof e);
            if (e.offset == offset) return EntryAt{entries + i * sizeof e, b, i + 1 == head.entries};
        }
    }
    return std::nullopt;
}

IndexEntry entry_at(const Bytes& file, std::uint64_t at) {
    IndexEntry e;
    std::memcpy(&e, file.data() + at, sizeof e);
    return e;
}

struct Start {
    std::uint64_t seqno = 0;
    std::string notice;
    std::uint32_t files = 0;
    std::uint64_t events = 0;
};

// The first event from `position`, the seek's notice, and (read to the end)
// how many events and files the source went through.
Start start_at(const std::string& path, const Position& position) {
    Start out;
    auto source = RecordingSource::open(path, path);
    EXPECT_TRUE(source.ok());
    if (!source) return out;
    auto notice = (*source)->seek(position);
    EXPECT_TRUE(notice.ok()) << notice.error().message();
    if (!notice) return out;
    out.notice = *notice;
    SourceItem item;
    for (;;) {
        const SourceStep step = (*source)->next(item, PayloadRead::None);
        if (step == SourceStep::End || step == SourceStep::Failed) break;
        if (step != SourceStep::Event) continue;
        if (out.events++ == 0) out.seqno = item.event.descriptor.seqno;
    }
    out.files = (*source)->files();
    return out;
}

IndexAnswer find(const std::string& path, const IndexQuery& query) {
    auto reader = RecordingReader::open(path);
    EXPECT_TRUE(reader.ok());
    auto answer = reader->find(query);
    EXPECT_TRUE(answer.ok()) << answer.error().message();
    return *answer;
}

// Issue 32, defect 3: the entry of the block holding seqno 1234 claims its
// events are all stamped before event 1234's time (its checksums
// recomputed). The index then names the next block for that time, which
// jump() finds intact: without reading the block before it, the start moved
// later, silently, past events 1234 and on.
TEST(RecordingIndexCheck, AForgedEarlierTimeIsCaughtAndTheStartIsTheScans) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_indexed(path);
    Bytes file = read_file(path);
    const IndexAnswer by_seqno = find(path, IndexQuery::seqno(1234));
    ASSERT_EQ(by_seqno.outcome, IndexOutcome::Found);
    ASSERT_LT(by_seqno.block.first_seqno, 1234u);
    ASSERT_GT(by_seqno.block.last_seqno, 1234u);
    const auto entry = entry_for(file, by_seqno.block.offset);
    ASSERT_TRUE(entry);
    ASSERT_FALSE(entry->last_of_its_block);  // its index block's summary (the maximum) stays true
    const std::uint64_t t = kBaseNanos + 1234;
    IndexEntry e = entry_at(file, entry->at);
    e.max_nanos = t - 1;
    std::memcpy(file.data() + entry->at, &e, sizeof e);
    reseal_block(file, entry->index.offset);
    write_file(path, file);

    const IndexAnswer a = find(path, IndexQuery::time(t));
    EXPECT_EQ(a.outcome, IndexOutcome::Lies);
    EXPECT_NE(a.why.find("seqno 1234 stamped"), std::string::npos) << a.why;
    const Start start = start_at(path, Position{Position::Kind::AbsoluteTime, t});
    EXPECT_EQ(start.seqno, 1234u);
    EXPECT_EQ(start.events, kEvents - 1233);
    EXPECT_NE(start.notice.find("the index is not trusted); finding a time reads it from the start"),
              std::string::npos)
        << start.notice;
    // Times the forged entry does not touch still go through the index.
    EXPECT_EQ(find(path, IndexQuery::time(kBaseNanos + 2500)).outcome, IndexOutcome::Found);
    EXPECT_EQ(start_at(path, Position{Position::Kind::AbsoluteTime, kBaseNanos + 2500}).notice, "");
}

// An index that leaves a records block out: the newest index block
// rewritten without one of its entries (fresh checksums, the end block moved
// to stay last). A seqno of the block left out is answered with the block
// after it, intact; the blocks between the entry before and the answer are
// read header by header, and the records block the index does not list is
// found.
TEST(RecordingIndexCheck, ARecordsBlockTheIndexLeavesOutIsFound) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_indexed(path);
    const Bytes file = read_file(path);
    const std::vector<BlockAt> blocks = list_blocks(file);
    const BlockAt index = blocks[blocks.size() - 2];
    const BlockAt end = blocks.back();
    ASSERT_EQ(index.header.content, static_cast<std::uint16_t>(BlockContent::Index));
    const std::uint64_t content = index.offset + sizeof(RecordingBlockHeader);
    IndexHead head;
    std::memcpy(&head, file.data() + content, sizeof head);
    ASSERT_GE(head.entries, 10u);
    ASSERT_EQ(head.marks, 0u);
    const std::uint64_t entries = content + sizeof head + std::uint64_t{head.summaries} * sizeof(IndexSummary);
    const IndexEntry dropped = entry_at(file, entries + 5 * sizeof(IndexEntry));
    // The index block's content without entry 5, and one entry fewer in its head.
    Bytes stored(file.begin() + static_cast<std::ptrdiff_t>(content),
                 file.begin() + static_cast<std::ptrdiff_t>(content + index.header.stored_size));
    const std::size_t cut = entries - content + 5 * sizeof(IndexEntry);
    stored.erase(stored.begin() + static_cast<std::ptrdiff_t>(cut),
                 stored.begin() + static_cast<std::ptrdiff_t>(cut + sizeof(IndexEntry)));
    head.entries -= 1;
    std::memcpy(stored.data(), &head, sizeof head);
    RecordingBlockHeader h = index.header;
    h.content_size = static_cast<std::uint32_t>(stored.size());
    Bytes forged(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(index.offset));
    const Bytes block = test::make_block(stored, h);
    forged.insert(forged.end(), block.begin(), block.end());
    forged.insert(forged.end(), file.begin() + static_cast<std::ptrdiff_t>(end.offset), file.end());
    write_file(path, forged);

    const std::uint64_t wanted = dropped.first_seqno + 1;
    const IndexAnswer a = find(path, IndexQuery::seqno(wanted));
    EXPECT_EQ(a.outcome, IndexOutcome::Lies);
    EXPECT_NE(a.why.find(fmt::format("block {} at offset {} holds records its index does not list",
                                     dropped.block_number, dropped.offset)),
              std::string::npos)
        << a.why;
    const Start start = start_at(path, Position::seqno(wanted));
    EXPECT_EQ(start.seqno, wanted);
    EXPECT_NE(start.notice.find("not trusted"), std::string::npos) << start.notice;
}

// Issue 32, defect 4: in a rotated series, the first file's last entry
// claims its block ends below the seqno asked for, which that block holds:
// the index answers "past this file", and the file was skipped unread, the
// start one file too late. The block's own header says otherwise.
TEST(RecordingIndexCheck, AForgedLastSeqnoDoesNotSkipAFileUnread) {
    TempDir dir;
    const std::string path = dir.file("rot.evrec");
    write_indexed(path, 40'000);
    ASSERT_TRUE(RecordingReader::open(path + ".1").ok());
    Bytes file = read_file(path);
    // The first file's last records block: the one before its last index block.
    const std::vector<BlockAt> blocks = list_blocks(file);
    ASSERT_GE(blocks.size(), 3u);
    const BlockAt& last_records = blocks[blocks.size() - 3];
    ASSERT_EQ(last_records.header.content, static_cast<std::uint16_t>(BlockContent::Records));
    const std::uint64_t wanted = last_records.header.last_seqno;
    const auto entry = entry_for(file, last_records.offset);
    ASSERT_TRUE(entry);
    ASSERT_TRUE(entry->last_of_its_block);
    // It ends one seqno lower, says the lie; a block of one seqno holds
    // none (0..0: seqnos still in order).
    IndexEntry e = entry_at(file, entry->at);
    if (e.first_seqno < wanted) {
        e.last_seqno = wanted - 1;
    } else {
        e.first_seqno = e.last_seqno = 0;
    }
    std::memcpy(file.data() + entry->at, &e, sizeof e);
    reseal_block(file, entry->index.offset);
    write_file(path, file);

    const IndexAnswer a = find(path, IndexQuery::seqno(wanted));
    EXPECT_EQ(a.outcome, IndexOutcome::Lies);
    EXPECT_NE(a.why.find("but the block holds"), std::string::npos) << a.why;
    const Start start = start_at(path, Position::seqno(wanted));
    EXPECT_EQ(start.seqno, wanted);
    EXPECT_EQ(start.events, kEvents - wanted + 1);
    EXPECT_NE(start.notice.find("not trusted"), std::string::npos) << start.notice;
}

// Issue 32, defect 17: -N larger than the series' last file holds goes back
// file by file through their indexes: the same events as before, from the
// file holding the first of them, without a pass over the series from its
// start (the source then goes through the files from that one on only).
TEST(RecordingIndexCheck, LastNPastTheLastFileGoesBackFileByFile) {
    TempDir dir;
    const std::string path = dir.file("rot.evrec");
    write_indexed(path, 40'000);
    std::uint32_t files = 0;
    while (RecordingReader::open(path + "." + std::to_string(files + 1)).ok()) ++files;
    ASSERT_GE(files, 5u);
    const std::string last_file = path + "." + std::to_string(files);
    const std::uint64_t in_last = test::replay(last_file).event_seqnos().size();
    const std::string before_last = path + "." + std::to_string(files - 1);
    const std::uint64_t in_before = test::replay(before_last).event_seqnos().size();
    for (const std::uint64_t n : {in_last + 1, in_last + in_before, in_last + in_before + 10}) {
        const Start start = start_at(path, Position{Position::Kind::Back, n});
        EXPECT_EQ(start.seqno, kEvents - n + 1) << n;
        EXPECT_EQ(start.events, n);
        EXPECT_EQ(start.notice, "") << n;
        // The file it was opened as, then the file holding the first event
        // and those after it: not every file from the first on.
        const std::uint32_t spanned = n > in_last + in_before ? 3 : 2;
        EXPECT_EQ(start.files, 1 + spanned) << n;
    }
    // More than the series holds: all of them, said.
    const Start all = start_at(path, Position{Position::Kind::Back, 5000});
    EXPECT_EQ(all.seqno, 1u);
    EXPECT_EQ(all.events, kEvents);
    EXPECT_NE(all.notice.find("-5000 is more than the 3000 events of recording"), std::string::npos) << all.notice;
}

}  // namespace
}  // namespace evring
