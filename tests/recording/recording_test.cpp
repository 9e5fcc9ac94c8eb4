// Recordings: what is written is replayed in order (compressed and raw),
// blocks are cut where the writer says, rotation splits files, the schema
// blob and gap reasons survive, a writer killed at any moment leaves every
// completed block readable, and bad options and bad paths are refused.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/event_source.hpp"  // describe(GapReason)
#include "support/recording_files.hpp"

namespace evring {
namespace {

using namespace test;

class RecordingRoundTrip : public ::testing::TestWithParam<bool> {};

TEST_P(RecordingRoundTrip, ReplaysEventsGapsAndExpiredMarkersInOrder) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {GetParam(), 1, 0, {}});
        ASSERT_TRUE(writer.ok()) << writer.error().message();
        append_event(*writer, 1, 24);
        append_event(*writer, 2, 0);
        ASSERT_TRUE(writer->append_gap(3, 7, GapReason::FellBehind).ok());
        append_event(*writer, 10, 100, false);
        append_event(*writer, 11, 5000);
        EXPECT_EQ(writer->totals().events, 3u);
        EXPECT_EQ(writer->totals().lost, 7u);
        EXPECT_EQ(writer->totals().expired, 1u);
        ASSERT_TRUE(writer->finish().ok());
    }
    const Replay r = replay(path);
    EXPECT_EQ(r.status, ReadStatus::CleanEnd) << r.notice;
    EXPECT_TRUE(r.notice.empty());
    ASSERT_EQ(r.records.size(), 6u);
    EXPECT_EQ(r.records[0].kind, RecordKind::Event);
    EXPECT_EQ(r.records[0].event.seqno, 1u);
    EXPECT_EQ(r.records[0].event.content_ext[0], 1u);
    ASSERT_EQ(r.payloads[0].size(), 24u);
    EXPECT_EQ(r.payloads[0][23], std::byte{1});
    EXPECT_EQ(r.records[1].event.payload_size, 0u);
    EXPECT_EQ(r.records[2].kind, RecordKind::Gap);
    EXPECT_EQ(r.records[2].gap.first_lost_seqno, 3u);
    EXPECT_EQ(r.records[2].gap.lost_count, 7u);
    EXPECT_EQ(r.records[2].gap.reason, GapReason::FellBehind);
    EXPECT_EQ(r.records[3].kind, RecordKind::ExpiredPayload);
    EXPECT_EQ(r.records[3].event.seqno, 10u);
    EXPECT_EQ(r.records[4].event.seqno, 11u);
    ASSERT_EQ(r.payloads[4].size(), 5000u);
    EXPECT_EQ(r.payloads[4][4999], std::byte{11});
    EXPECT_EQ(r.records[5].kind, RecordKind::End);
    EXPECT_EQ(r.records[5].end.events, 3u);
    EXPECT_EQ(r.records[5].end.lost, 7u);
    EXPECT_EQ(r.records[5].end.expired, 1u);
    EXPECT_EQ(r.records[5].end.gaps, 1u);
    EXPECT_EQ(r.records[5].end.flags, 0u);
    EXPECT_EQ(r.totals.events, 3u);
    EXPECT_EQ(r.totals.damage_reports, 0u);
}

TEST_P(RecordingRoundTrip, EveryFlushEndsABlockThatNamesItsSequenceNumbers) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_blocks(path, 1000, 100, GetParam());
    const Bytes file = read_file(path);
    const auto blocks = list_blocks(file);
    // Ten blocks of 100 events, then the block holding only the end record.
    ASSERT_EQ(blocks.size(), 11u);
    for (std::size_t i = 0; i < 10; ++i) {
        EXPECT_EQ(blocks[i].header.block_number, i);
        EXPECT_EQ(blocks[i].header.first_seqno, i * 100 + 1);
        EXPECT_EQ(blocks[i].header.last_seqno, i * 100 + 100);
        EXPECT_EQ(blocks[i].header.record_count, 100u);
        EXPECT_EQ(blocks[i].header.flags & kBlockZstd, GetParam() ? kBlockZstd : 0);
        EXPECT_EQ(blocks[i].header.series_id, series_of(file));
    }
    EXPECT_EQ(blocks[10].header.flags & kBlockHoldsEnd, kBlockHoldsEnd);
    EXPECT_EQ(blocks[10].header.record_count, 1u);
    EXPECT_EQ(blocks.back().offset + sizeof(RecordingBlockHeader) + blocks.back().header.stored_size, file.size());
    const Replay r = replay(path);
    EXPECT_EQ(r.status, ReadStatus::CleanEnd);
    expect_events(r, range(1, 1000));
    EXPECT_EQ(r.totals.blocks, 11u);
}

INSTANTIATE_TEST_SUITE_P(CompressedAndRaw, RecordingRoundTrip, ::testing::Bool());

TEST(Recording, BlocksAreCutAtAbout256KiBWithoutFlushes) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_blocks(path, 20'000, UINT64_MAX, true, 100);  // 172 bytes a record: 3.4 MB
    const auto blocks = list_blocks(read_file(path));
    ASSERT_GE(blocks.size(), 13u);
    for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
        EXPECT_GE(blocks[i].header.content_size, detail::kBlockTarget);
        EXPECT_LT(blocks[i].header.content_size, detail::kBlockTarget + 172);
        EXPECT_LT(blocks[i].header.stored_size, blocks[i].header.content_size);  // payloads repeat a byte
    }
    expect_events(replay(path), range(1, 20'000));
}

TEST(Recording, IncompressibleBlocksAreNeverStoredLargerThanTheirContent) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {});
        ASSERT_TRUE(writer.ok());
        std::uint64_t x = 88172645463325252u;  // xorshift: payloads zstd cannot shrink
        for (std::uint64_t s = 1; s <= 300; ++s) {
            std::byte* dst = writer->begin_event(event_with(s, 1024));
            for (int i = 0; i < 1024; i += 8) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                std::memcpy(dst + i, &x, 8);
            }
            ASSERT_TRUE(writer->end_event(true).ok());
        }
        ASSERT_TRUE(writer->finish().ok());
    }
    // (BlockEncoder.CompressesWhatShrinksAndStoresTheRestRaw shows the raw choice.)
    for (const BlockAt& b : list_blocks(read_file(path)))
        EXPECT_LE(b.header.stored_size, b.header.content_size);
    EXPECT_EQ(replay(path).event_seqnos(), range(1, 300));
}

TEST(Recording, HeaderDescribesTheSourceRingAndIsChecksummed) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {});
        ASSERT_TRUE(writer.ok());
        ASSERT_TRUE(writer->finish().ok());
    }
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(reader->header().version, kRecordingVersion);
    EXPECT_EQ(reader->header().content_type, 1u);
    EXPECT_EQ(reader->header().schema_hash, recording_source_header().schema_hash);
    EXPECT_EQ(reader->header().ring_size.payload_buf_size, 1u << 20);
    EXPECT_EQ(reader->header().flags, kRecordingZstd);
    EXPECT_NE(reader->header().series_id, 0u);
    EXPECT_EQ(reader->header().header_crc, detail::file_header_crc(reader->header()));
    EXPECT_TRUE(reader->header_trusted());
    EXPECT_TRUE(reader->schema().empty());
    EXPECT_TRUE(is_recording_file(path).value());
}

TEST(Recording, SchemaBlobIsKeptOpaqueAndExposedByTheReader) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    Bytes schema(70'000);
    for (std::size_t i = 0; i < schema.size(); ++i) schema[i] = std::byte(i * 7 % 251);
    {
        RecordingOptions options;
        options.schema = schema;
        auto writer = RecordingWriter::create(path, recording_source_header(), options);
        ASSERT_TRUE(writer.ok()) << writer.error().message();
        append_event(*writer, 1, 8);
        ASSERT_TRUE(writer->finish().ok());
    }
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(reader->header().flags & kRecordingHasSchema, kRecordingHasSchema);
    EXPECT_EQ(reader->header().schema_size, schema.size());
    ASSERT_EQ(reader->schema().size(), schema.size());
    EXPECT_TRUE(std::equal(schema.begin(), schema.end(), reader->schema().begin()));
    const auto blocks = list_blocks(read_file(path));
    ASSERT_EQ(blocks.size(), 4u);  // the schema block, the events, the index, the end record
    EXPECT_EQ(blocks[0].header.content, static_cast<std::uint16_t>(BlockContent::Schema));
    EXPECT_EQ(blocks[0].header.block_number, 0u);
    EXPECT_EQ(blocks[1].header.block_number, 1u);
    EXPECT_EQ(blocks[2].header.content, static_cast<std::uint16_t>(BlockContent::Index));
    EXPECT_EQ(blocks[3].header.block_number, 3u);
    const Replay r = replay(path);
    EXPECT_EQ(r.status, ReadStatus::CleanEnd);
    EXPECT_EQ(r.event_seqnos(), range(1, 1));
}

TEST(Recording, SchemaOverTheLimitIsRefused) {
    TempDir dir;
    Bytes schema(kMaxRecordingSchemaSize + 1);
    RecordingOptions options;
    options.schema = schema;
    auto writer = RecordingWriter::create(dir.file("r.evrec"), recording_source_header(), options);
    ASSERT_FALSE(writer.ok());
    EXPECT_NE(writer.error().message().find("schema of 1048577 bytes is over the limit of 1048576"),
              std::string::npos)
        << writer.error().message();
    EXPECT_NE(writer.error().message().find("r.evrec"), std::string::npos);
    schema.resize(kMaxRecordingSchemaSize);
    options.schema = schema;
    EXPECT_TRUE(RecordingWriter::create(dir.file("ok.evrec"), recording_source_header(), options).ok());
}

TEST(Recording, CompressionLevelOutOfRangeIsRefused) {
    TempDir dir;
    auto writer = RecordingWriter::create(dir.file("r.evrec"), recording_source_header(), {true, 99, 0, {}});
    ASSERT_FALSE(writer.ok());
    EXPECT_NE(writer.error().message().find("compression level 99 is out of range"), std::string::npos);
}

TEST(Recording, GapRecordsCarryTheirReason) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    const GapReason reasons[] = {GapReason::FellBehind, GapReason::Abandoned, GapReason::NeverCommitted,
                                 GapReason::WriterGone};
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {});
        ASSERT_TRUE(writer.ok());
        std::uint64_t seqno = 1;
        for (GapReason reason : reasons) {
            append_event(*writer, seqno++, 8);
            ASSERT_TRUE(writer->append_gap(seqno, 3, reason).ok());
            seqno += 3;
        }
        ASSERT_TRUE(writer->finish().ok());
    }
    const Replay r = replay(path);
    EXPECT_EQ(r.status, ReadStatus::CleanEnd);
    std::vector<GapReason> seen;
    for (const Record& rec : r.records)
        if (rec.kind == RecordKind::Gap) seen.push_back(rec.gap.reason);
    EXPECT_EQ(seen, std::vector<GapReason>(std::begin(reasons), std::end(reasons)));
    EXPECT_EQ(r.totals.lost, 12u);
    EXPECT_NE(describe(GapReason::FellBehind).find("fell behind"), std::string_view::npos);
    EXPECT_NE(describe(GapReason::WriterGone).find("exited"), std::string_view::npos);
    EXPECT_NE(describe(static_cast<GapReason>(77)).find("unknown"), std::string_view::npos);
}

TEST(Recording, AppendGapRefusesZeroCountsWrappedRangesAndUnknownReasons) {
    TempDir dir;
    auto writer = RecordingWriter::create(dir.file("r.evrec"), recording_source_header(), {});
    ASSERT_TRUE(writer.ok());
    EXPECT_FALSE(writer->append_gap(5, 0, GapReason::FellBehind).ok());
    EXPECT_FALSE(writer->append_gap(UINT64_MAX, 2, GapReason::FellBehind).ok());
    EXPECT_TRUE(writer->append_gap(UINT64_MAX, 1, GapReason::FellBehind).ok());
    auto bad = writer->append_gap(1, 1, static_cast<GapReason>(9));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message().find("reason 9"), std::string::npos);
    EXPECT_EQ(writer->totals().gaps, 1u);
}

TEST(Recording, CreateRefusesToOverwriteAnExistingFile) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    ASSERT_TRUE(RecordingWriter::create(path, recording_source_header(), {}).ok());
    auto again = RecordingWriter::create(path, recording_source_header(), {});
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().message().find(path), std::string::npos);
}

TEST(Recording, UnfinishedRecordingReplaysEverythingThenReportsTruncation) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 100; ++s) append_event(*writer, s, 48);
        ASSERT_TRUE(writer->flush().ok());
        for (std::uint64_t s = 101; s <= 150; ++s) append_event(*writer, s, 48);
        // Destroyed without finish(): the staged events are written, no end record.
    }
    const Replay r = replay(path);
    EXPECT_EQ(r.status, ReadStatus::Truncated);
    expect_events(r, range(1, 150));
    EXPECT_NE(r.notice.find("without an end record"), std::string::npos) << r.notice;
    EXPECT_NE(r.notice.find("the recorder did not finish"), std::string::npos) << r.notice;
    EXPECT_TRUE(r.damage().empty());
}

TEST(Recording, FlushWithNothingStagedWritesNoBlock) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {});
        ASSERT_TRUE(writer.ok());
        for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer->flush().ok());
        append_event(*writer, 1, 8);
        for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer->flush().ok());
        ASSERT_TRUE(writer->finish().ok());
    }
    EXPECT_EQ(list_blocks(read_file(path)).size(), 3u);  // the event, the index, the end record
}

TEST(Recording, RotationContinuesInNumberedFilesEachWithAnEndRecordAndTheSchema) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    const Bytes schema(100, std::byte{0x5a});
    std::uint32_t files = 0;
    {
        RecordingOptions options{false, 1, 4096, schema};
        auto writer = RecordingWriter::create(path, recording_source_header(), options);
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 100; ++s) append_event(*writer, s, 200);
        ASSERT_TRUE(writer->finish().ok());
        files = writer->totals().files;
    }
    ASSERT_GE(files, 4u);
    std::uint64_t next_seqno = 1;
    std::uint64_t series = 0;
    for (std::uint32_t i = 0; i < files; ++i) {
        const Replay r = replay(rotated_path(path, i));
        EXPECT_EQ(r.status, ReadStatus::CleanEnd) << r.notice;
        ASSERT_FALSE(r.records.empty());
        EXPECT_EQ(r.records.back().kind, RecordKind::End);
        EXPECT_EQ(r.records.back().end.flags, i + 1 < files ? kEndContinued : 0u);
        for (std::size_t k = 0; k + 1 < r.records.size(); ++k) EXPECT_EQ(r.records[k].event.seqno, next_seqno++);
        auto reader = RecordingReader::open(rotated_path(path, i));
        EXPECT_EQ(reader->header().file_index, i);
        EXPECT_EQ(reader->schema().size(), schema.size());
        if (i == 0) series = reader->header().series_id;
        EXPECT_EQ(reader->header().series_id, series);
        struct stat st {};
        ASSERT_EQ(::stat(rotated_path(path, i).c_str(), &st), 0);
        EXPECT_LE(st.st_size, 4096 + 8 + 64 + 200 + 8 + 48 + 64);  // the limit, one record, the end block
    }
    EXPECT_EQ(next_seqno, 101u);
}

TEST(Recording, CompressedRotationKeepsEveryEventAcrossFiles) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    std::uint32_t files = 0;
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {true, 1, 256 << 10, {}});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 3000; ++s) append_event(*writer, s, 1024);
        ASSERT_TRUE(writer->finish().ok());
        files = writer->totals().files;
    }
    // Records of 8 + 64 + 1024 bytes in blocks of 64-byte headers after a
    // 128-byte file header: 239 per 256 KiB file (counted before
    // compression), so 3000 events make 13 files.
    ASSERT_EQ(files, 13u);
    std::uint64_t next_seqno = 1;
    for (std::uint32_t i = 0; i < files; ++i) {
        const Replay r = replay(rotated_path(path, i));
        EXPECT_EQ(r.status, ReadStatus::CleanEnd) << i << ": " << r.notice;
        for (std::uint64_t s : r.event_seqnos()) EXPECT_EQ(s, next_seqno++);
    }
    EXPECT_EQ(next_seqno, 3001u);
}

// A recorder killed at any moment: the file at every length it can have had
// replays every complete block, then reports truncation, never an error.
TEST_P(RecordingRoundTrip, FileCutAtAnyByteReplaysItsCompleteBlocks) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, recording_source_header(), {GetParam(), 1, 0, {}});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 40; ++s) {
            append_event(*writer, s, static_cast<std::uint32_t>(s * 7));
            ASSERT_TRUE(writer->flush().ok());  // one block per event
        }
        ASSERT_TRUE(writer->finish().ok());
    }
    const Bytes full = read_file(path);
    const auto blocks = list_blocks(full);
    ASSERT_EQ(blocks.size(), 42u);  // 40 events, the index, the end record
    const std::string cut = dir.file("cut.evrec");
    for (std::size_t size = sizeof(RecordingFileHeader); size < full.size(); size += 7) {
        write_file(cut, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size)));
        const Replay r = replay(cut);
        ASSERT_TRUE(r.error.empty()) << r.error;
        EXPECT_EQ(r.status, ReadStatus::Truncated) << size;
        std::uint64_t complete = 0;  // blocks wholly inside the cut
        for (const BlockAt& b : blocks)
            complete += b.offset + sizeof(RecordingBlockHeader) + b.header.stored_size <= size;
        expect_events(r, range(1, std::min<std::uint64_t>(complete, 40)));
        // A cut inside a block names the block's sequence number.
        const auto damage = r.damage();
        if (size > blocks[complete].offset) {
            ASSERT_EQ(damage.size(), 1u) << size;
            EXPECT_EQ(damage[0].kind, DamageKind::Truncated);
            if (size >= blocks[complete].offset + sizeof(RecordingBlockHeader) && complete < 40) {
                EXPECT_EQ(damage[0].first_lost_seqno, complete + 1) << damage[0].message;
            }
        } else {
            EXPECT_TRUE(damage.empty()) << size;
        }
    }
}

TEST(Recording, WriterKilledMidRecordingLeavesEveryCompletedBlockReadable) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto writer = RecordingWriter::create(path, recording_source_header(), {});
        if (!writer) ::_exit(2);
        for (std::uint64_t s = 1;; ++s) {
            std::byte* dst = writer->begin_event(event_with(s, 100));
            std::memset(dst, static_cast<int>(s & 0xff), 100);
            if (!writer->end_event(true)) ::_exit(3);
            if (s % 97 == 0 && !writer->flush()) ::_exit(4);
        }
    }
    // Kill it once at least 1 MB is on disk (whatever the machine's speed;
    // the deadline only bounds a test that would otherwise hang).
    struct stat st {};
    for (int i = 0; i < 30'000 && (::stat(path.c_str(), &st) != 0 || st.st_size < (1 << 20)); ++i) ::usleep(1000);
    ::kill(child, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "the writer stopped by itself: " << WEXITSTATUS(wstatus);
    ASSERT_GE(st.st_size, 1 << 20);
    const Replay r = replay(path);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.status, ReadStatus::Truncated);
    const auto seqnos = r.event_seqnos();
    ASSERT_GE(seqnos.size(), 1000u);
    expect_events(r, range(1, seqnos.size()));
    // At most the block being written when the kill came is cut short.
    EXPECT_LE(r.damage().size(), 1u);
}

TEST(Recording, ReaderRefusesWhatIsNotARegularFile) {
    TempDir dir;
    const std::string fifo = dir.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto reader = RecordingReader::open(fifo);  // must not block
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("is a FIFO, not a regular file"), std::string::npos)
        << reader.error().message();
    EXPECT_NE(reader.error().message().find(fifo), std::string::npos);
    auto probe = is_recording_file(fifo);
    ASSERT_FALSE(probe.ok());
    EXPECT_NE(probe.error().message().find("FIFO"), std::string::npos);
    auto directory = RecordingReader::open(dir.path());
    ASSERT_FALSE(directory.ok());
    EXPECT_NE(directory.error().message().find("a directory"), std::string::npos);
    const std::string sock = dir.file("sock");
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    auto socket_reader = RecordingReader::open(sock);
    ::close(fd);
    ASSERT_FALSE(socket_reader.ok());
    EXPECT_NE(socket_reader.error().message().find("a socket"), std::string::npos);
}

TEST(Recording, FileWithoutTheMagicOrWithAnUnknownVersionIsRefused) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    write_blocks(path, 3, 10, true);
    Bytes file = read_file(path);
    const std::uint16_t newer = kRecordingVersion + 1;
    std::memcpy(file.data() + 8, &newer, 2);
    write_file(path, file);
    auto reader = RecordingReader::open(path);
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("format version 4; this evring reads versions 1 to 3"),
              std::string::npos)
        << reader.error().message();
    write_file(path, Bytes(file.begin(), file.begin() + 100));
    reader = RecordingReader::open(path);
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("cut short inside its file header (100 of 128 bytes)"),
              std::string::npos)
        << reader.error().message();
    write_file(path, Bytes(64, std::byte{'x'}));
    reader = RecordingReader::open(path);
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("not an evring recording"), std::string::npos);
    EXPECT_FALSE(is_recording_file(path).value());
}

}  // namespace
}  // namespace evring
