// The indexes of version 3 recordings (recording_index.hpp): building them,
// looking sequence numbers, times and span labels up, jumping there, and
// never trusting an index that lies; version 2 files still open and say once
// that they are read from the start.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "recording/recording_index.hpp"
#include "source/recording_source.hpp"
#include "recording/recording_writer.hpp"
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
constexpr std::uint64_t kPerBlock = 7;  // about 430 blocks: 6 periodic index blocks and the last one
constexpr std::uint64_t kBaseNanos = 1'700'000'000'000'000'000;  // test::event_with's times: base + seqno
const std::uint32_t kBlockKey = span_index_key("block");
const std::uint32_t kFinalKey = span_index_key("block", "finalized");

// Block N's id: 8 bytes, N mod 8, a zero, then N; blocks 8 apart share their first 2 bytes.
std::array<std::uint8_t, 8> id_of(std::uint64_t label) {
    return {static_cast<std::uint8_t>(label % 8), 0, static_cast<std::uint8_t>(label), static_cast<std::uint8_t>(label >> 8),
            0, 0, 0, 0};
}
std::uint32_t id_prefix(std::uint64_t label) { return span_id_digest(id_of(label)); }

// Event 100k+1 opens "block" 1000+k; event 100k+50 finalizes it.
std::size_t marks(const EventDescriptor& e, std::span<const std::byte>, std::span<SpanMark> out) {
    if (e.seqno % 100 == 1) {
        const std::uint64_t label = 1000 + e.seqno / 100;
        return out[0] = SpanMark{kBlockKey, id_prefix(label), label, e.seqno}, 1;
    }
    if (e.seqno % 100 == 50) return out[0] = SpanMark{kFinalKey, 0, 1000 + e.seqno / 100, e.seqno}, 1;
    return 0;
}

// `kEvents` events from seqno 1; finished unless `finish` is false (then the
// writer is destroyed: no end block, as a recorder killed between blocks).
void write_indexed(const std::string& path, bool compress = true, bool index = true, bool finish = true,
                   std::uint64_t rotate = 0) {
    RecordingOptions options;
    options.compress = compress;
    options.index = index;
    options.rotate_bytes = rotate;
    options.span_marker = marks;
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (std::uint64_t s = 1; s <= kEvents; ++s) {
        append_event(*writer, s, 40);
        if (s % kPerBlock == 0) {
            ASSERT_TRUE(writer->flush().ok());
        }
    }
    if (finish) {
        ASSERT_TRUE(writer->finish().ok());
    }
}

IndexAnswer find(const std::string& path, const IndexQuery& query) {
    auto reader = RecordingReader::open(path);
    EXPECT_TRUE(reader.ok());
    auto answer = reader->find(query);
    EXPECT_TRUE(answer.ok()) << answer.error().message();
    return *answer;
}

// The first event a reader replays after jumping to `block`.
std::uint64_t first_event_after_jump(const std::string& path, const IndexedBlock& block) {
    auto reader = RecordingReader::open(path);
    EXPECT_TRUE(reader.ok());
    auto jumped = reader->jump(block);
    EXPECT_TRUE(jumped.ok() && *jumped);
    Record record;
    while (true) {
        auto status = reader->next(record);
        if (!status || *status != ReadStatus::Record) return 0;
        if (record.kind == RecordKind::Event) return record.event.seqno;
    }
}

struct Start {
    std::uint64_t seqno = 0;  // of the first event (0: none)
    std::string notice;       // of seek
    std::string error;
    std::uint64_t damage = 0;
};

Start start_at(RecordingSource& source, const Position& position) {
    Start out;
    auto notice = source.seek(position);
    if (!notice) {
        out.error = notice.error().message();
        return out;
    }
    out.notice = *notice;
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event) {
            out.seqno = item.event.descriptor.seqno;
            break;
        }
        if (step == SourceStep::End || step == SourceStep::Failed) break;
    }
    out.damage = source.counters().damage_reports;
    return out;
}

Start start_at(const std::string& path, const Position& position) {
    auto source = RecordingSource::open(path, path);
    EXPECT_TRUE(source.ok());
    return start_at(**source, position);
}

class RecordingIndex : public ::testing::TestWithParam<bool> {};

TEST_P(RecordingIndex, EverySeqnoTimeAndLabelLeadsToItsBlock) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_indexed(path, GetParam());
    const auto blocks = list_blocks(read_file(path));
    const auto indexes = std::count_if(blocks.begin(), blocks.end(), [](const BlockAt& b) {
        return b.header.content == static_cast<std::uint16_t>(BlockContent::Index);
    });
    EXPECT_EQ(indexes, 7);  // 429 records blocks: one index per 64, and the last one
    for (std::uint64_t s : {1ul, 2ul, 7ul, 8ul, 449ul, 450ul, 1234ul, 2999ul, 3000ul}) {
        const IndexAnswer a = find(path, IndexQuery::seqno(s));
        ASSERT_EQ(a.outcome, IndexOutcome::Found) << s << ": " << a.why;
        EXPECT_LE(a.block.first_seqno, s);
        EXPECT_GE(a.block.last_seqno, s);
        EXPECT_TRUE(a.finished);
        EXPECT_EQ(a.newest_seqno, kEvents);
        EXPECT_EQ(first_event_after_jump(path, a.block), a.block.first_seqno);
        const IndexAnswer t = find(path, IndexQuery::time(kBaseNanos + s));
        ASSERT_EQ(t.outcome, IndexOutcome::Found) << s;
        EXPECT_EQ(t.block.first_seqno, a.block.first_seqno) << s;
    }
    const IndexAnswer past = find(path, IndexQuery::seqno(kEvents + 1));
    EXPECT_EQ(past.outcome, IndexOutcome::Tail);
    EXPECT_TRUE(past.finished);
    EXPECT_FALSE(past.continued);
    // Spans: labels, stages, latest; a label no mark carries.
    const IndexAnswer block = find(path, IndexQuery::span(kBlockKey, 1012));
    ASSERT_EQ(block.outcome, IndexOutcome::Found);
    EXPECT_EQ(block.seqno, 1201u);
    EXPECT_LE(block.block.first_seqno, 1201u);
    EXPECT_GE(block.block.last_seqno, 1201u);
    EXPECT_EQ(find(path, IndexQuery::span(kFinalKey, 1012)).seqno, 1250u);
    EXPECT_EQ(find(path, IndexQuery::span_latest(kBlockKey)).seqno, 2901u);
    EXPECT_EQ(find(path, IndexQuery::span_latest(kFinalKey)).seqno, 2950u);
    EXPECT_EQ(find(path, IndexQuery::span(kBlockKey, 5)).outcome, IndexOutcome::NotFound);
    EXPECT_EQ(find(path, IndexQuery::span(span_index_key("txn"), 1012)).outcome, IndexOutcome::NotFound);
}

TEST_P(RecordingIndex, SourceStartsAtTheSameEventWithTheIndexAsWithoutIt) {
    TempDir dir;
    const std::string indexed = dir.file("v3.evrec"), old = dir.file("v2.evrec");
    write_indexed(indexed, GetParam());
    write_indexed(old, GetParam(), false);
    for (std::uint64_t s : {1ul, 8ul, 1234ul, 3000ul}) {
        const Start a = start_at(indexed, Position::seqno(s));
        const Start b = start_at(old, Position::seqno(s));
        EXPECT_EQ(a.seqno, s);
        EXPECT_EQ(b.seqno, s);
        EXPECT_EQ(a.notice, "");
        EXPECT_EQ(a.damage, 0u);  // a jump does not make the end totals disagree
        const Start ta = start_at(indexed, Position{Position::Kind::AbsoluteTime, kBaseNanos + s});
        EXPECT_EQ(ta.seqno, s);
        EXPECT_EQ(ta.notice, "");
    }
    const Start beyond = start_at(indexed, Position::seqno(kEvents + 1));
    EXPECT_NE(beyond.error.find("seqno 3001 is beyond the newest event (3000)"), std::string::npos) << beyond.error;
}

// What a source hands out from `position` on: the events, and how many
// blocks its reader read to get there and to the end.
struct Tail {
    std::uint64_t first = 0, events = 0, blocks = 0;
    std::string notice;
};

Tail read_from(const std::string& path, const Position& position) {
    Tail out;
    auto source = RecordingSource::open(path, path);
    EXPECT_TRUE(source.ok());
    auto notice = (*source)->seek(position);
    EXPECT_TRUE(notice.ok()) << notice.error().message();
    if (!notice) return out;
    out.notice = *notice;
    SourceItem item;
    for (;;) {
        const SourceStep step = (*source)->next(item, PayloadRead::None);
        if (step == SourceStep::End || step == SourceStep::Failed) break;
        if (step != SourceStep::Event) continue;
        if (out.events++ == 0) out.first = item.event.descriptor.seqno;
    }
    out.blocks = (*source)->reader().totals().blocks;
    return out;
}

// latest, -N and relative times: the index names the block, the source
// reads only from there (a version 2 file reads everything, and says so).
TEST_P(RecordingIndex, LatestLastNAndRelativeTimesReadOnlyTheLastBlocks) {
    TempDir dir;
    const std::string indexed = dir.file("v3.evrec"), old = dir.file("v2.evrec");
    write_indexed(indexed, GetParam());
    write_indexed(old, GetParam(), false);
    struct Case {
        Position position;
        std::uint64_t first, events, max_blocks;
    };
    // The last index block lists 45 blocks (the last of 4 events), -500 reads
    // an earlier one. Blocks read: records blocks, the index blocks between
    // them and the end block (the whole file: 429 + 7 + 1).
    const Case cases[] = {
        {Position::latest(), 3000, 1, 3},
        {Position{Position::Kind::Back, 1}, 3000, 1, 3},
        {Position{Position::Kind::Back, 10}, 2991, 10, 4},
        {Position{Position::Kind::Back, 500}, 2501, 500, 74},
        {Position{Position::Kind::Back, 5000}, 1, 3000, 437},
        {Position{Position::Kind::RelativeTime, 100}, 2900, 101, 17},
    };
    for (const Case& c : cases) {
        const Tail a = read_from(indexed, c.position);
        EXPECT_EQ(a.first, c.first) << static_cast<int>(c.position.kind) << " " << c.position.value;
        EXPECT_EQ(a.events, c.events) << c.position.value;
        EXPECT_LE(a.blocks, c.max_blocks) << c.position.value;
        // -5000 of 3000 events: all of them, said (as a seqno older than the first event is).
        if (c.position.kind == Position::Kind::Back && c.events < c.position.value)
            EXPECT_NE(a.notice.find("-5000 is more than the 3000 events of recording"), std::string::npos) << a.notice;
        else
            EXPECT_EQ(a.notice, "");
        const Tail b = read_from(old, c.position);
        EXPECT_EQ(b.first, c.first);
        EXPECT_EQ(b.events, c.events);
    }
    EXPECT_NE(read_from(old, Position::latest()).notice.find("finding the newest event reads it from the start"),
              std::string::npos);
    EXPECT_NE(read_from(old, Position{Position::Kind::Back, 10}).notice.find("finding the last 10 events"),
              std::string::npos);
    // The index's claim, for the record: -10 starts in the last block.
    const IndexAnswer a = find(indexed, IndexQuery::back(10));
    ASSERT_EQ(a.outcome, IndexOutcome::Found);
    EXPECT_EQ(a.events, 11u);
    EXPECT_EQ(a.block.first_seqno, 2990u);
}

// Without an end block the tail is read too; across a rotated series the end
// blocks lead to the last file, unread.
TEST(RecordingIndexGrowing, LatestInAnUnfinishedFileAndInASeries) {
    TempDir dir;
    const std::string cut = dir.file("cut.evrec"), rotated = dir.file("rot.evrec");
    write_indexed(cut, true, true, false);
    write_indexed(rotated, true, true, true, 40'000);
    for (const std::string& path : {cut, rotated}) {
        const Tail latest = read_from(path, Position::latest());
        EXPECT_EQ(latest.first, kEvents) << path;
        EXPECT_EQ(latest.events, 1u);
        EXPECT_EQ(latest.notice, "");
        const Tail back = read_from(path, Position{Position::Kind::Back, 5});
        EXPECT_EQ(back.first, kEvents - 4) << path;
        EXPECT_EQ(back.events, 5u);
    }
    auto source = RecordingSource::open(rotated, rotated);
    ASSERT_TRUE(source.ok());
    ASSERT_TRUE((*source)->seek(Position::latest()).ok());
    EXPECT_EQ((*source)->files(), 2u);  // the first file and the last, nothing between
    // -N past the last file: every file is counted, the same events.
    const Tail all = read_from(rotated, Position{Position::Kind::Back, 2500});
    EXPECT_EQ(all.first, 501u);
    EXPECT_EQ(all.events, 2500u);
}

IndexQuery id_query(std::uint64_t label, std::size_t bytes, std::uint64_t below = 0) {
    const auto id = id_of(label);
    return IndexQuery::span_id(kBlockKey, std::span<const std::uint8_t>(id.data(), bytes), bytes == id.size(), below);
}

// block:0xID: the index names the newest mark that agrees with the id (its
// first 2 bytes and, for a whole id, a hash), then older ones below a seqno;
// the event is read on its own to check it.
TEST_P(RecordingIndex, IdPrefixesLeadToTheirMarksNewestFirst) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_indexed(path, GetParam());
    for (std::uint64_t label : {1000ul, 1012ul, 1029ul}) {
        const IndexAnswer a = find(path, id_query(label, 8));
        ASSERT_EQ(a.outcome, IndexOutcome::Found) << label << ": " << a.why;
        EXPECT_EQ(a.seqno, (label - 1000) * 100 + 1);
        auto reader = RecordingReader::open(path);
        ASSERT_TRUE(reader.ok());
        Record record;
        std::vector<std::byte> payload;
        std::string why;
        auto read = reader->event_at(a.block, a.seqno, record, payload, &why);
        ASSERT_TRUE(read.ok() && *read) << why;
        EXPECT_EQ(record.event.seqno, a.seqno);
        EXPECT_EQ(payload.size(), 40u);
        auto missing = reader->event_at(a.block, a.block.last_seqno + 1, record, payload, &why);
        ASSERT_TRUE(missing.ok());
        EXPECT_FALSE(*missing);
    }
    // One byte (and two), shared by blocks 1001, 1009, 1017 and 1025: the newest, then older ones.
    EXPECT_EQ(find(path, id_query(1001, 2)).seqno, 2501u);
    EXPECT_EQ(find(path, id_query(1001, 1)).seqno, 2501u);
    EXPECT_EQ(find(path, id_query(1001, 1, 2501)).seqno, 1701u);
    EXPECT_EQ(find(path, id_query(1001, 1, 102)).seqno, 101u);
    // Below a seqno: the next older candidate, then none (NotFound: the index covers the file).
    EXPECT_EQ(find(path, id_query(1029, 8, 2901)).outcome, IndexOutcome::NotFound);
    EXPECT_EQ(find(path, id_query(1012, 8, 1202)).seqno, 1201u);
    EXPECT_EQ(find(path, id_query(1012, 8, 1201)).outcome, IndexOutcome::NotFound);
}

// A version 3 file written before marks carried ids: id lookups say so.
TEST(RecordingIndexOld, IndexWithoutIdsServesNoIdLookups) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_indexed(path, false);
    Bytes file = read_file(path);
    for (const BlockAt& b : list_blocks(file)) {
        if (b.header.content != static_cast<std::uint16_t>(BlockContent::Index)) continue;
        IndexHead head;
        std::memcpy(&head, file.data() + b.offset + sizeof(RecordingBlockHeader), sizeof head);
        head.flags = 0;
        std::memcpy(file.data() + b.offset + sizeof(RecordingBlockHeader), &head, sizeof head);
        reseal_block(file, b.offset);
    }
    write_file(path, file);
    const IndexAnswer a = find(path, id_query(1012, 8));
    EXPECT_EQ(a.outcome, IndexOutcome::NoIndex);
    EXPECT_NE(a.why.find("its index was written before span marks carried ids"), std::string::npos) << a.why;
    EXPECT_EQ(find(path, IndexQuery::span(kBlockKey, 1012)).seqno, 1201u);  // labels still work
}

// A version 2 file opens, is read from the start, and says so once per source.
TEST(RecordingIndexOld, VersionTwoFileSaysOnceThatItIsReadFromTheStart) {
    TempDir dir;
    const std::string path = dir.file("old.evrec");
    write_indexed(path, true, false);
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(reader->header().version, kRecordingVersion2);
    const IndexAnswer a = find(path, IndexQuery::seqno(5));
    EXPECT_EQ(a.outcome, IndexOutcome::NoIndex);
    EXPECT_NE(a.why.find("is a version 2 recording, written before recordings had indexes"), std::string::npos)
        << a.why;
    auto source = RecordingSource::open(path, path);
    ASSERT_TRUE(source.ok());
    auto first = (*source)->seek(Position::seqno(1234));
    ASSERT_TRUE(first.ok());
    EXPECT_NE(first->find("finding seqno 1234 reads it from the start"), std::string::npos) << *first;
    auto second = (*source)->seek(Position{Position::Kind::AbsoluteTime, kBaseNanos + 1500});
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(*second, "");  // said once
    EXPECT_EQ(start_at(path, Position::seqno(1234)).seqno, 1234u);
}

// A recorder that stopped without finishing leaves no end block: the newest
// index block is found from the end, the rest is the tail.
TEST(RecordingIndexGrowing, UnfinishedFileIsIndexedUpToItsNewestIndexBlock) {
    TempDir dir;
    const std::string path = dir.file("cut.evrec");
    write_indexed(path, true, true, false);
    const IndexAnswer early = find(path, IndexQuery::seqno(100));
    ASSERT_EQ(early.outcome, IndexOutcome::Found) << early.why;
    EXPECT_FALSE(early.finished);
    // 6 index blocks of 64 blocks of 7 events: seqnos up to 2688 are indexed.
    EXPECT_EQ(early.newest_seqno, 6u * 64 * kPerBlock);
    const IndexAnswer tail = find(path, IndexQuery::seqno(2900));
    ASSERT_EQ(tail.outcome, IndexOutcome::Tail);
    EXPECT_EQ(first_event_after_jump(path, tail.block), 6u * 64 * kPerBlock + 1);
    EXPECT_EQ(start_at(path, Position::seqno(2900)).seqno, 2900u);
    EXPECT_EQ(start_at(path, Position::seqno(100)).seqno, 100u);
    // Span marks after the newest index block are found by the scan of the tail.
    EXPECT_EQ(find(path, IndexQuery::span(kBlockKey, 1029)).outcome, IndexOutcome::Tail);
}

TEST(RecordingIndexSeries, RotatedFilesAreSkippedByTheirIndexes) {
    TempDir dir;
    const std::string path = dir.file("rot.evrec");
    write_indexed(path, true, true, true, 40'000);
    ASSERT_TRUE(RecordingReader::open(path + ".2").ok());
    for (std::uint64_t s : {5ul, 1500ul, 2999ul}) {
        auto source = RecordingSource::open(path, path);
        ASSERT_TRUE(source.ok());
        const Start start = start_at(**source, Position::seqno(s));
        EXPECT_EQ(start.seqno, s);
        EXPECT_EQ(start.notice, "");
        if (s > 2000) {
            EXPECT_GT((*source)->files(), 1u);
        }
    }
}

// --rotate-size counts index blocks and the end block too: every file of a
// raw series stays within the limit plus its last record (and that record's
// block header, index entry and marks).
TEST(RecordingIndexSeries, RotationCountsTheIndex) {
    TempDir dir;
    const std::string path = dir.file("rot.evrec");
    constexpr std::uint64_t kLimit = 40'000;
    write_indexed(path, false, true, true, kLimit);
    constexpr std::uint64_t kOneRecord =
        sizeof(RecordHeader) + sizeof(EventDescriptor) + 40 + sizeof(RecordingBlockHeader) + sizeof(IndexEntry) +
        sizeof(SpanMark);
    std::uint64_t events = 0;
    std::uint32_t files = 0;
    for (std::string file = path; RecordingReader::open(file).ok(); file = path + "." + std::to_string(++files)) {
        const Bytes bytes = read_file(file);
        EXPECT_LE(bytes.size(), kLimit + kOneRecord) << file;
        const std::uint64_t file_events = test::replay(file).event_seqnos().size();
        if (events + file_events < kEvents) {
            EXPECT_GT(bytes.size(), kLimit - 2000) << file;  // and the limit is used, not wasted
        }
        events += file_events;
    }
    EXPECT_GT(files, 5u);
    EXPECT_EQ(events, kEvents);
}

// A ring set recording: MEMBER:SEQNO starts the merged stream at that
// member's event (members 0 and 1 take turns, each counting from 1), found
// through the index's per-member rows (recording_set_index_test.cpp); latest
// and -N come from the index as for any recording.
TEST(RecordingIndexSet, MemberSeqnoStartsAtThatMembersEvent) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    RecordingOptions options;
    options.ring_set = true;
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok());
    for (std::uint64_t s = 1; s <= 500; ++s)
        for (const std::uint16_t member : {std::uint16_t{0}, std::uint16_t{1}}) {
            EventDescriptor e = test::event_with(s, 16);
            e.reserved = member;
            std::memset(writer->begin_event(e), 0, 16);
            ASSERT_TRUE(writer->end_event(true).ok());
            if (s % 7 == 0) {
                ASSERT_TRUE(writer->flush().ok());
            }
        }
    ASSERT_TRUE(writer->finish().ok());
    auto source = RecordingSource::open(path, path);
    ASSERT_TRUE(source.ok());
    auto notice = (*source)->seek(Position::member_seqno(1, 300));
    ASSERT_TRUE(notice.ok()) << notice.error().message();
    EXPECT_EQ(*notice, "");
    std::vector<std::pair<std::uint32_t, std::uint64_t>> got;
    SourceItem item;
    for (SourceStep step; (step = (*source)->next(item, PayloadRead::None)) != SourceStep::End;) {
        ASSERT_NE(step, SourceStep::Failed);
        if (step == SourceStep::Event) got.emplace_back(item.event.member, item.event.descriptor.seqno);
    }
    ASSERT_EQ(got.size(), 401u);  // 1:300, then both members from 301 on
    EXPECT_EQ(got[0], std::make_pair(std::uint32_t{1}, std::uint64_t{300}));
    EXPECT_EQ(got[1], std::make_pair(std::uint32_t{0}, std::uint64_t{301}));
    const Tail back = read_from(path, Position{Position::Kind::Back, 3});
    EXPECT_EQ(back.events, 3u);
    EXPECT_EQ(back.first, 499u);
    EXPECT_EQ(back.notice, "");
}

// `watch --follow`: a recording read while it is written, from a position
// its index blocks so far lead to (or a scan, when the writer's worker has
// not written them yet: the same events either way), to its end record.
TEST(RecordingIndexFollow, RecordingIsReadAsItIsWritten) {
    TempDir dir;
    const std::string path = dir.file("live.evrec");
    RecordingOptions options;
    options.span_marker = marks;
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok());
    auto append = [&](std::uint64_t from, std::uint64_t to) {
        for (std::uint64_t s = from; s <= to; ++s) {
            append_event(*writer, s, 40);
            if (s % kPerBlock == 0) {
                ASSERT_TRUE(writer->flush().ok());
            }
        }
        ASSERT_TRUE(writer->flush().ok());
    };
    append(1, 1000);
    auto source = RecordingSource::open(path, path, true, true);
    ASSERT_TRUE(source.ok()) << source.error().message();
    ASSERT_TRUE((*source)->seek(Position::seqno(500)).ok());
    EXPECT_TRUE((*source)->live());
    std::vector<std::uint64_t> seen;
    // Reads until `last` was seen (or the end); bounded: 30 s of 10 ms waits.
    auto read_until = [&](std::uint64_t last) {
        SourceItem item;
        for (int idle = 0; idle < 3000 && (seen.empty() || seen.back() < last);) {
            const SourceStep step = (*source)->next(item);
            if (step == SourceStep::Event) seen.push_back(item.event.descriptor.seqno);
            if (step == SourceStep::NotReady) {
                ++idle;
                (*source)->wait(std::chrono::milliseconds(10));
            }
            if (step == SourceStep::Notice) ADD_FAILURE() << item.notice;
            if (step == SourceStep::Gap) ADD_FAILURE() << item.gap.detail;
            if (step == SourceStep::End || step == SourceStep::Failed) return step;
        }
        return SourceStep::Event;
    };
    EXPECT_EQ(read_until(1000), SourceStep::Event);
    append(1001, 1500);
    ASSERT_TRUE(writer->finish().ok());
    SourceItem item;
    EXPECT_EQ(read_until(1500), SourceStep::Event);
    SourceStep step;
    while ((step = (*source)->next(item)) == SourceStep::Notice || step == SourceStep::NotReady) {
        if (step == SourceStep::NotReady) (*source)->wait(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(step, SourceStep::End);
    EXPECT_FALSE((*source)->live());
    EXPECT_EQ(seen, test::range(500, 1500));
    EXPECT_FALSE((*source)->damaged());
}

// ---- Indexes that lie -------------------------------------------------------

struct Indexed {
    Bytes file;
    std::vector<BlockAt> blocks;
    BlockAt last_index;  // the one the end block names
    std::uint64_t content_at(const BlockAt& b) const { return b.offset + sizeof(RecordingBlockHeader); }
};

Indexed raw_indexed(const std::string& path) {
    write_indexed(path, false);
    Indexed out;
    out.file = read_file(path);
    out.blocks = list_blocks(out.file);
    out.last_index = out.blocks[out.blocks.size() - 2];
    EXPECT_EQ(out.last_index.header.content, static_cast<std::uint16_t>(BlockContent::Index));
    return out;
}

// Every lie gives the same first event as a scan, and one notice naming it.
void expect_distrusted(const std::string& path, const std::string& says) {
    const IndexAnswer a = find(path, IndexQuery::seqno(1234));
    if (a.outcome == IndexOutcome::Found) {
        auto reader = RecordingReader::open(path);
        ASSERT_TRUE(reader.ok());
        auto jumped = reader->jump(a.block);
        ASSERT_TRUE(jumped.ok());
        EXPECT_FALSE(*jumped) << "the jump must check the block it lands on";
    } else {
        EXPECT_EQ(a.outcome, IndexOutcome::Lies);
        EXPECT_NE(a.why.find(says), std::string::npos) << a.why;
    }
    const Start start = start_at(path, Position::seqno(1234));
    EXPECT_EQ(start.seqno, 1234u);
    EXPECT_NE(start.notice.find("not trusted"), std::string::npos) << start.notice;
    EXPECT_NE(start.notice.find("reads it from the start"), std::string::npos) << start.notice;
}

TEST(RecordingIndexLies, EndBlockNamingAnotherBlockIsNotTrusted) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    const BlockAt& end = r.blocks.back();
    const std::uint64_t wrong = r.blocks[3].offset;  // a records block
    std::memcpy(r.file.data() + r.content_at(end) + sizeof(RecordHeader), &wrong, sizeof wrong);
    reseal_block(r.file, end.offset);
    write_file(path, r.file);
    expect_distrusted(path, "is not an index block");
}

TEST(RecordingIndexLies, EntryPointingElsewhereIsCaughtByTheJump) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    // The entries of the last index block: after its head and 6 summaries.
    const std::uint64_t entries = r.content_at(r.last_index) + sizeof(IndexHead) + 6 * sizeof(IndexSummary);
    IndexEntry e;
    std::memcpy(&e, r.file.data() + entries, sizeof e);
    e.block_number += 1;  // another block's number at this offset
    std::memcpy(r.file.data() + entries, &e, sizeof e);
    reseal_block(r.file, r.last_index.offset);
    write_file(path, r.file);
    // seqno 2700 is in the last index block's first entry.
    const IndexAnswer a = find(path, IndexQuery::seqno(2690));
    ASSERT_EQ(a.outcome, IndexOutcome::Found);
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    auto jumped = reader->jump(a.block);
    ASSERT_TRUE(jumped.ok());
    EXPECT_FALSE(*jumped);
    const Start start = start_at(path, Position::seqno(2690));
    EXPECT_EQ(start.seqno, 2690u);
    EXPECT_NE(start.notice.find("which is not there (block 390 is there; the index is not trusted)"), std::string::npos) << start.notice;
}

TEST(RecordingIndexLies, SummaryThatDisagreesWithItsIndexBlockIsNotTrusted) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    // The 3rd summary: the index block that lists seqno 1234.
    const std::uint64_t summary = r.content_at(r.last_index) + sizeof(IndexHead) + 2 * sizeof(IndexSummary);
    IndexSummary s;
    std::memcpy(&s, r.file.data() + summary, sizeof s);
    s.max_label += 1;
    std::memcpy(r.file.data() + summary, &s, sizeof s);
    reseal_block(r.file, r.last_index.offset);
    write_file(path, r.file);
    expect_distrusted(path, "disagrees with its summary");
}

TEST(RecordingIndexLies, ImpossibleCountsAllocateNothing) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    IndexHead head;
    std::memcpy(&head, r.file.data() + r.content_at(r.last_index), sizeof head);
    head.entries = 0xffffffffu;
    head.marks = 0xffffffffu;
    std::memcpy(r.file.data() + r.content_at(r.last_index), &head, sizeof head);
    reseal_block(r.file, r.last_index.offset);
    write_file(path, r.file);
    expect_distrusted(path, "counts 6 summaries, 4294967295 entries and 4294967295 marks");
}

TEST(RecordingIndexLies, EntriesOutOfOrderAreNotTrusted) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    const std::uint64_t entries = r.content_at(r.last_index) + sizeof(IndexHead) + 6 * sizeof(IndexSummary);
    IndexEntry a, b;
    std::memcpy(&a, r.file.data() + entries, sizeof a);
    std::memcpy(&b, r.file.data() + entries + sizeof a, sizeof b);
    std::memcpy(r.file.data() + entries, &b, sizeof b);
    std::memcpy(r.file.data() + entries + sizeof a, &a, sizeof a);
    reseal_block(r.file, r.last_index.offset);
    write_file(path, r.file);
    expect_distrusted(path, "entry 1 names offset");
}

// An index that claims more events than its blocks hold: -N counts them.
TEST(RecordingIndexLies, EventCountsThatLieAreCaughtByTheCount) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    // The last entry of the last index block (45 entries after 6 summaries).
    const std::uint64_t entry =
        r.content_at(r.last_index) + sizeof(IndexHead) + 6 * sizeof(IndexSummary) + 44 * sizeof(IndexEntry);
    IndexEntry e;
    std::memcpy(&e, r.file.data() + entry, sizeof e);
    ASSERT_EQ(e.last_seqno, kEvents);
    e.events = 1000;
    std::memcpy(r.file.data() + entry, &e, sizeof e);
    reseal_block(r.file, r.last_index.offset);
    write_file(path, r.file);
    const Tail back = read_from(path, Position{Position::Kind::Back, 10});
    EXPECT_EQ(back.first, 2991u);
    EXPECT_EQ(back.events, 10u);
    EXPECT_NE(back.notice.find("its index counts 1000 events from block"), std::string::npos) << back.notice;
    EXPECT_NE(back.notice.find("not trusted); finding the last 10 events reads it from the start"), std::string::npos)
        << back.notice;
}

TEST(RecordingIndexLies, DamagedIndexBlockIsNotTrustedAndTheReplayIsIntact) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Indexed r = raw_indexed(path);
    r.file[r.content_at(r.last_index) + 100] ^= std::byte{0x10};  // no reseal: a checksum mismatch
    write_file(path, r.file);
    expect_distrusted(path, "checksum mismatch");
    const test::Replay replay = test::replay(path);
    EXPECT_EQ(replay.status, ReadStatus::CleanEnd);  // an index block is not replayed
    EXPECT_EQ(replay.event_seqnos().size(), kEvents);
}

INSTANTIATE_TEST_SUITE_P(CompressedAndRaw, RecordingIndex, ::testing::Bool());

}  // namespace
}  // namespace evring
