// The index of a ring set recording (recording_index.hpp, IndexQuery::
// MemberSeqno; docs/recording-format.md): MEMBER:SEQNO found through the
// per-member rows of its index blocks, checked by reading the event they
// name; rows that lie and files written before the rows are read from the
// start, said once, with the same answer.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "recording/recording_index.hpp"
#include "recording/recording_writer.hpp"
#include "source/recording_source.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::Bytes;
using test::TempDir;

using Event = std::pair<std::uint32_t, std::uint64_t>;  // member, seqno

constexpr std::uint64_t kSteps = 900;
constexpr std::uint64_t kPerBlock = 4;  // about 510 blocks: 7 periodic index blocks and the last one

// Members 0 and 1 on every step, member 2 on every third, member 3 on steps
// 300..449 and from 700 on (index blocks without it between); each counts
// from its own base, member 2 from 5001, so that per-member seqnos differ
// from the blocks' mixed ranges. Times follow the merged order. `as_set` false
// writes the same events without kRecordingRingSet (no member rows).
std::vector<Event> write_set(const std::string& path, bool compress, bool as_set = true, std::uint64_t rotate = 0) {
    RecordingOptions options;
    options.compress = compress;
    options.ring_set = as_set;
    options.rotate_bytes = rotate;
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    EXPECT_TRUE(writer.ok());
    std::vector<Event> written;
    std::uint64_t next[4] = {1, 1, 5001, 1};
    for (std::uint64_t step = 0; step < kSteps; ++step)
        for (std::uint32_t member = 0; member < 4; ++member) {
            if (member == 2 && step % 3 != 0) continue;
            if (member == 3 && !((step >= 300 && step < 450) || step >= 700)) continue;
            EventDescriptor e = test::event_with(next[member]++, 16);
            e.reserved = static_cast<std::uint16_t>(member);
            e.record_epoch_nanos = 1'700'000'000'000'000'000 + written.size();
            std::memset(writer->begin_event(e), 0, 16);
            // Every 10th event of member 1 is kept without its payload (an ExpiredPayload record).
            EXPECT_TRUE(writer->end_event(!(member == 1 && e.seqno % 10 == 0)).ok());
            written.emplace_back(member, e.seqno);
            if (written.size() % kPerBlock == 0) {
                EXPECT_TRUE(writer->flush().ok());
            }
        }
    EXPECT_TRUE(writer->finish().ok());
    return written;
}

// Where a scan from the start would begin MEMBER:SEQNO: the first event of
// the member at or past the seqno (written.size(): none).
std::size_t expected_start(const std::vector<Event>& written, std::uint32_t member, std::uint64_t seqno) {
    std::size_t i = 0;
    while (i < written.size() && !(written[i].first == member && written[i].second >= seqno)) ++i;
    return i;
}

struct Start {
    Event first{~0u, 0};
    std::size_t events = 0;
    std::uint64_t blocks_for_first = 0;  // blocks read until the first event
    std::string notice;
};

Start start_at(const std::string& path, std::uint32_t member, std::uint64_t seqno, bool count_all = false) {
    Start out;
    auto source = RecordingSource::open(path, path);
    EXPECT_TRUE(source.ok());
    auto notice = (*source)->seek(Position::member_seqno(member, seqno));
    EXPECT_TRUE(notice.ok()) << notice.error().message();
    if (!notice) return out;
    out.notice = *notice;
    SourceItem item;
    for (SourceStep step; (step = (*source)->next(item, PayloadRead::None)) != SourceStep::End;) {
        EXPECT_NE(step, SourceStep::Failed);
        if (step == SourceStep::Failed) break;
        if (step != SourceStep::Event) continue;
        if (out.events++ == 0) {
            out.first = {item.event.member, item.event.descriptor.seqno};
            out.blocks_for_first = (*source)->reader().totals().blocks;
            if (!count_all) break;
        }
    }
    return out;
}

class RecordingSetIndex : public ::testing::TestWithParam<bool> {};

// Every 5th seqno of each member, one below its first and one past its
// last: the same first event as a scan, no notice, and at most 5 blocks
// read where a scan reads up to 510.
TEST_P(RecordingSetIndex, MemberSeqnoOfEveryMemberLeadsToItsEvent) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    const std::vector<Event> written = write_set(path, GetParam());
    for (std::uint32_t member = 0; member < 4; ++member) {
        const std::uint64_t first = member == 2 ? 5001 : 1;
        const std::uint64_t last = member == 2 ? 5300 : member == 3 ? 350 : kSteps;
        std::vector<std::uint64_t> seqnos{first - 1, last, last + 1};
        for (std::uint64_t s = first; s < last; s += 5) seqnos.push_back(s);
        for (const std::uint64_t seqno : seqnos) {
            const std::size_t at = expected_start(written, member, seqno);
            const Start got = start_at(path, member, seqno);
            EXPECT_EQ(got.notice, "") << member << ":" << seqno;
            if (at == written.size()) {
                EXPECT_EQ(got.events, 0u) << member << ":" << seqno;
                continue;
            }
            EXPECT_EQ(got.first, written[at]) << member << ":" << seqno;
            // From the block of the member's event before it: member 2's events are up to 12 apart,
            // 3 blocks; member 3's 151st is 250 steps after its 150th. At or below a member's first
            // event nothing is listed below it: read from the start (member 3 joins at block 150).
            if (seqno <= first) continue;
            EXPECT_LE(got.blocks_for_first, member == 3 && seqno == 151 ? 250u : 5u) << member << ":" << seqno;
        }
    }
    // The whole rest of the merged stream follows, as from a scan.
    const Start rest = start_at(path, 1, 600, true);
    EXPECT_EQ(rest.events, written.size() - expected_start(written, 1, 600));
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    auto found = reader->find(IndexQuery::seqno(600));
    ASSERT_TRUE(found.ok());
    const IndexAnswer& other = *found;
    EXPECT_EQ(other.outcome, IndexOutcome::NoIndex);
    EXPECT_NE(other.why.find("serves times and MEMBER:SEQNO only"), std::string::npos) << other.why;
}

// A bare seqno names no member: refused, as on a live set, rather than
// starting every member at its own event of that number.
TEST_P(RecordingSetIndex, PlainSeqnoIsRefusedAsOnALiveSet) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    write_set(path, GetParam());
    auto source = RecordingSource::open(path, path);
    ASSERT_TRUE(source.ok());
    auto moved = (*source)->seek(Position::seqno(600));
    ASSERT_FALSE(moved.ok());
    EXPECT_EQ(moved.error().errno_value(), EINVAL);
    EXPECT_NE(moved.error().message().find("needs its member (MEMBER:SEQNO)"), std::string::npos)
        << moved.error().message();
    EXPECT_NE(moved.error().message().find(path), std::string::npos) << moved.error().message();
}

INSTANTIATE_TEST_SUITE_P(CompressedAndRaw, RecordingSetIndex, ::testing::Bool());

// A rotated series: a file whose index lists nothing of the member at or
// past the seqno is passed for the next one, unread.
TEST(RecordingSetIndexSeries, MemberSeqnoGoesOnWithTheNextFilesIndex) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    const std::vector<Event> written = write_set(path, false, true, 60'000);
    ASSERT_TRUE(RecordingReader::open(path + ".2").ok());
    // The first file's last records block damaged: a source that reads the
    // file through reports it; one that passes it by its index does not.
    Bytes first = test::read_file(path);
    const std::vector<test::BlockAt> blocks = test::list_blocks(first);
    std::size_t last = blocks.size();
    while (last-- > 0 && (blocks[last].header.content != static_cast<std::uint16_t>(BlockContent::Records) ||
                          (blocks[last].header.flags & kBlockHoldsEnd) != 0)) {
    }
    ASSERT_LT(last, blocks.size());
    test::flip_bit(first, blocks[last].offset + sizeof(RecordingBlockHeader) + 8);
    test::write_file(path, first);
    for (const Event& want : {Event{0, 5}, Event{1, 450}, Event{2, 5290}, Event{3, 340}}) {
        auto source = RecordingSource::open(path, path);
        ASSERT_TRUE(source.ok());
        auto notice = (*source)->seek(Position::member_seqno(want.first, want.second));
        ASSERT_TRUE(notice.ok()) << notice.error().message();
        EXPECT_EQ(*notice, "");
        SourceItem item;
        SourceStep step;
        while ((step = (*source)->next(item, PayloadRead::None)) != SourceStep::Event && step != SourceStep::End &&
               step != SourceStep::Failed) {
        }
        ASSERT_EQ(step, SourceStep::Event);
        EXPECT_EQ(Event(item.event.member, item.event.descriptor.seqno),
                  written[expected_start(written, want.first, want.second)]);
        EXPECT_LE((*source)->reader().totals().blocks, 5u) << want.first << ":" << want.second;
        if (want.second > 300) {
            EXPECT_GT((*source)->files(), 1u) << want.first << ":" << want.second;
            EXPECT_EQ((*source)->counters().damage_reports, 0u) << want.first << ":" << want.second;
        }
    }
}

// A raw set recording and the member rows of the index block its end block names.
struct RawSet {
    std::vector<Event> written;
    Bytes file;
    std::uint64_t rows_at = 0;  // file offset of its first MemberSeqnos
    std::uint64_t entries_at = 0;
    std::uint64_t index_at = 0;
    IndexHead head{};
};

RawSet raw_set(const std::string& path) {
    RawSet r;
    r.written = write_set(path, false);
    r.file = test::read_file(path);
    const std::vector<test::BlockAt> blocks = test::list_blocks(r.file);
    r.index_at = blocks[blocks.size() - 2].offset;
    EXPECT_EQ(blocks[blocks.size() - 2].header.content, static_cast<std::uint16_t>(BlockContent::Index));
    const std::uint64_t content = r.index_at + sizeof(RecordingBlockHeader);
    std::memcpy(&r.head, r.file.data() + content, sizeof r.head);
    EXPECT_NE(r.head.flags & kIndexMembers, 0u);
    EXPECT_GT(r.head.member_rows, 0u);
    r.entries_at = content + sizeof(IndexHead) + r.head.summaries * sizeof(IndexSummary);
    r.rows_at = r.entries_at + r.head.entries * sizeof(IndexEntry) + r.head.marks * sizeof(SpanMark);
    return r;
}

MemberSeqnos row_at(const RawSet& r, std::size_t i) {
    MemberSeqnos row;
    std::memcpy(&row, r.file.data() + r.rows_at + i * sizeof row, sizeof row);
    return row;
}

void expect_scanned(const std::string& path, const std::vector<Event>& written, std::uint32_t member,
                    std::uint64_t seqno, const std::string& says) {
    const Start got = start_at(path, member, seqno, true);
    const std::size_t at = expected_start(written, member, seqno);
    ASSERT_LT(at, written.size());
    EXPECT_EQ(got.first, written[at]);
    EXPECT_EQ(got.events, written.size() - at);
    EXPECT_NE(got.notice.find(says), std::string::npos) << got.notice;
    EXPECT_NE(got.notice.find("reads it from the start"), std::string::npos) << got.notice;
    EXPECT_NE(got.notice.find(path), std::string::npos) << got.notice;
}

// A row that names an event its block does not hold passes read_index's
// checks; reading that event catches it.
TEST(RecordingSetIndexLies, RowNamingAnAbsentEventIsCaughtByReadingIt) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    RawSet r = raw_set(path);
    std::size_t i = 0;
    while (i < r.head.member_rows && row_at(r, i).member != 2) ++i;
    ASSERT_LT(i, r.head.member_rows);
    MemberSeqnos row = row_at(r, i);
    const std::uint64_t wanted = row.first_seqno + 1;  // this row is the newest below it
    row.first_seqno -= 1;                              // in an earlier block
    std::memcpy(r.file.data() + r.rows_at + i * sizeof row, &row, sizeof row);
    test::reseal_block(r.file, r.index_at);
    test::write_file(path, r.file);
    expect_scanned(path, r.written, 2, wanted, "as holding 2:");
}

// Counts past the bytes, rows naming no entry, rows out of order: the index
// block is not believed, nothing is allocated from the claim.
TEST(RecordingSetIndexLies, ImpossibleRowsAreNotTrusted) {
    struct Case {
        const char* says;
        void (*edit)(RawSet&);
    };
    const Case cases[] = {
        {"and 4294967295 member rows) in", [](RawSet& r) { r.head.member_rows = 0xffffffffu; }},
        {"member row 0 names entry", [](RawSet& r) {
             MemberSeqnos row = row_at(r, 0);
             row.entry = r.head.entries;
             std::memcpy(r.file.data() + r.rows_at, &row, sizeof row);
         }},
        {"member row 1 is out of order", [](RawSet& r) {
             const MemberSeqnos a = row_at(r, 0), b = row_at(r, 1);
             std::memcpy(r.file.data() + r.rows_at, &b, sizeof b);
             std::memcpy(r.file.data() + r.rows_at + sizeof a, &a, sizeof a);
         }},
    };
    for (const Case& c : cases) {
        TempDir dir;
        const std::string path = dir.file("set.evrec");
        RawSet r = raw_set(path);
        c.edit(r);
        std::memcpy(r.file.data() + r.index_at + sizeof(RecordingBlockHeader), &r.head, sizeof r.head);
        test::reseal_block(r.file, r.index_at);
        test::write_file(path, r.file);
        expect_scanned(path, r.written, 1, 850, c.says);
    }
}

// A set recording written before index blocks kept member rows: the same
// file without them, its header then marked as a ring set's.
TEST(RecordingSetIndexOld, IndexWithoutMemberRowsIsReadFromTheStartOnce) {
    TempDir dir;
    const std::string path = dir.file("old.evrec");
    const std::vector<Event> written = write_set(path, true, false);
    Bytes file = test::read_file(path);
    RecordingFileHeader header;
    std::memcpy(&header, file.data(), sizeof header);
    header.flags |= kRecordingRingSet;
    header.header_crc = detail::crc32c(&header, offsetof(RecordingFileHeader, header_crc));
    std::memcpy(file.data(), &header, sizeof header);
    test::write_file(path, file);
    expect_scanned(path, written, 1, 300, "was written before indexes kept sequence numbers per member");
}

}  // namespace
}  // namespace evring
