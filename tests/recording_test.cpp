// Recordings: what is written is replayed in order, truncated files replay
// their complete prefix, rotation splits files, corrupt files are refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/recording.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

RingHeader source_header() {
    RingHeader header{};
    header.magic = kRingMagic;
    header.content_type = 1;
    for (unsigned i = 0; i < 32; ++i) header.schema_hash[i] = static_cast<std::uint8_t>(i * 3);
    header.size = RingSize{1024, 1 << 20, 0};
    return header;
}

EventDescriptor event_with(std::uint64_t seqno, std::uint32_t payload_size) {
    EventDescriptor event{};
    event.seqno = seqno;
    event.event_type = static_cast<std::uint16_t>(seqno % 5 + 1);
    event.payload_size = payload_size;
    event.record_epoch_nanos = 1'700'000'000'000'000'000 + seqno;
    event.payload_buf_offset = seqno * 64;
    event.content_ext = {seqno, 2, 3, 4};
    return event;
}

void append_event(RecordingWriter& writer, std::uint64_t seqno, std::uint32_t size,
                  bool intact = true) {
    std::byte* dst = writer.begin_event(event_with(seqno, size));
    std::memset(dst, static_cast<int>(seqno & 0xff), size);
    ASSERT_TRUE(writer.end_event(intact).ok());
}

std::vector<Record> replay(const std::string& path, ReadStatus& final_status,
                           std::vector<std::vector<std::byte>>* payloads = nullptr) {
    std::vector<Record> records;
    auto reader = RecordingReader::open(path);
    EXPECT_TRUE(reader.ok()) << reader.error().message();
    if (!reader) return records;
    for (;;) {
        Record record;
        auto status = reader->next(record);
        EXPECT_TRUE(status.ok()) << status.error().message();
        if (!status || *status != ReadStatus::Record) {
            final_status = status ? *status : ReadStatus::Truncated;
            return records;
        }
        records.push_back(record);
        if (payloads) payloads->emplace_back(record.payload.begin(), record.payload.end());
    }
}

void copy_prefix(const std::string& from, std::size_t size, const std::string& to) {
    std::vector<char> bytes(size);
    int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_EQ(::read(in, bytes.data(), size), static_cast<ssize_t>(size));
    ::close(in);
    int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_EQ(::write(out, bytes.data(), size), static_cast<ssize_t>(size));
    ::close(out);
}

class RecordingRoundTrip : public ::testing::TestWithParam<bool> {};

TEST_P(RecordingRoundTrip, ReplaysEventsGapsAndExpiredMarkersInOrder) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, source_header(), {GetParam(), 1, 0});
        ASSERT_TRUE(writer.ok()) << writer.error().message();
        append_event(*writer, 1, 24);
        append_event(*writer, 2, 0);
        ASSERT_TRUE(writer->append_gap(3, 7).ok());
        append_event(*writer, 10, 100, false);
        append_event(*writer, 11, 5000);
        EXPECT_EQ(writer->totals().events, 3u);
        EXPECT_EQ(writer->totals().lost, 7u);
        EXPECT_EQ(writer->totals().expired, 1u);
        ASSERT_TRUE(writer->finish().ok());
    }
    ReadStatus status{};
    std::vector<std::vector<std::byte>> payloads;
    auto records = replay(path, status, &payloads);
    EXPECT_EQ(status, ReadStatus::CleanEnd);
    ASSERT_EQ(records.size(), 6u);
    EXPECT_EQ(records[0].kind, RecordKind::Event);
    EXPECT_EQ(records[0].event.seqno, 1u);
    EXPECT_EQ(records[0].event.content_ext[0], 1u);
    ASSERT_EQ(payloads[0].size(), 24u);
    EXPECT_EQ(payloads[0][23], std::byte{1});
    EXPECT_EQ(records[1].event.payload_size, 0u);
    EXPECT_EQ(records[2].kind, RecordKind::Gap);
    EXPECT_EQ(records[2].gap.first_lost_seqno, 3u);
    EXPECT_EQ(records[2].gap.lost_count, 7u);
    EXPECT_EQ(records[3].kind, RecordKind::ExpiredPayload);
    EXPECT_EQ(records[3].event.seqno, 10u);
    EXPECT_EQ(records[4].event.seqno, 11u);
    ASSERT_EQ(payloads[4].size(), 5000u);
    EXPECT_EQ(payloads[4][4999], std::byte{11});
    EXPECT_EQ(records[5].kind, RecordKind::End);
    EXPECT_EQ(records[5].end.events, 3u);
    EXPECT_EQ(records[5].end.lost, 7u);
    EXPECT_EQ(records[5].end.expired, 1u);
    EXPECT_EQ(records[5].end.flags, 0u);
}

INSTANTIATE_TEST_SUITE_P(CompressedAndRaw, RecordingRoundTrip, ::testing::Bool());

TEST(Recording, HeaderDescribesTheSourceRing) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, source_header(), {});
        ASSERT_TRUE(writer.ok());
        ASSERT_TRUE(writer->finish().ok());
    }
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(reader->header().version, kRecordingVersion);
    EXPECT_EQ(reader->header().content_type, 1u);
    EXPECT_EQ(reader->header().schema_hash, source_header().schema_hash);
    EXPECT_EQ(reader->header().ring_size.payload_buf_size, 1u << 20);
    EXPECT_EQ(reader->header().flags, kRecordingZstd);
    EXPECT_TRUE(is_recording_file(path).value());
}

TEST(Recording, CreateRefusesToOverwriteAnExistingFile) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    ASSERT_TRUE(RecordingWriter::create(path, source_header(), {}).ok());
    auto again = RecordingWriter::create(path, source_header(), {});
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().message().find(path), std::string::npos);
}

TEST(Recording, UnfinishedRecordingReplaysEverythingFlushedThenReportsTruncation) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, source_header(), {});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 100; ++s) append_event(*writer, s, 48);
        ASSERT_TRUE(writer->flush().ok());
        // Destroyed without finish(): like a recorder killed after a flush.
    }
    ReadStatus status{};
    auto records = replay(path, status);
    EXPECT_EQ(status, ReadStatus::Truncated);
    ASSERT_EQ(records.size(), 100u);
    EXPECT_EQ(records.back().event.seqno, 100u);
    auto reader = RecordingReader::open(path);
    Record record;
    while (reader->next(record).value() == ReadStatus::Record) {
    }
    EXPECT_NE(reader->notice().find("without an end marker"), std::string::npos)
        << reader->notice();
}

TEST_P(RecordingRoundTrip, FileCutAtAnyByteReplaysAPrefixWithoutError) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, source_header(), {GetParam(), 1, 0});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 40; ++s) {
            append_event(*writer, s, static_cast<std::uint32_t>(s * 7));
            ASSERT_TRUE(writer->flush().ok());
        }
        ASSERT_TRUE(writer->finish().ok());
    }
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    const std::string cut = dir.file("cut.evrec");
    std::uint64_t previous = 0;
    for (off_t size = sizeof(RecordingFileHeader); size < st.st_size; size += 13) {
        copy_prefix(path, static_cast<std::size_t>(size), cut);
        ReadStatus status{};
        auto records = replay(cut, status);
        // Only the zstd frame's 4-byte checksum follows the end marker.
        if (status == ReadStatus::CleanEnd)
            EXPECT_GE(size + 4, st.st_size) << size;
        else
            EXPECT_EQ(status, ReadStatus::Truncated) << size;
        EXPECT_GE(records.size(), previous) << size;
        previous = records.size();
        for (std::size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].event.seqno, i + 1);
    }
    EXPECT_GE(previous, 39u);
}

TEST(Recording, RotationContinuesInNumberedFilesEachWithAnEndMarker) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    std::uint32_t files = 0;
    {
        auto writer = RecordingWriter::create(path, source_header(), {false, 1, 4096});
        ASSERT_TRUE(writer.ok());
        for (std::uint64_t s = 1; s <= 100; ++s) append_event(*writer, s, 200);
        ASSERT_TRUE(writer->finish().ok());
        files = writer->totals().files;
    }
    ASSERT_GE(files, 4u);
    std::uint64_t next_seqno = 1;
    for (std::uint32_t i = 0; i < files; ++i) {
        ReadStatus status{};
        auto records = replay(rotated_path(path, i), status);
        EXPECT_EQ(status, ReadStatus::CleanEnd);
        ASSERT_FALSE(records.empty());
        EXPECT_EQ(records.back().kind, RecordKind::End);
        EXPECT_EQ(records.back().end.flags, i + 1 < files ? kEndContinued : 0u);
        for (std::size_t r = 0; r + 1 < records.size(); ++r)
            EXPECT_EQ(records[r].event.seqno, next_seqno++);
        auto reader = RecordingReader::open(rotated_path(path, i));
        EXPECT_EQ(reader->header().file_index, i);
    }
    EXPECT_EQ(next_seqno, 101u);
}

TEST(Recording, CompressedRotationKeepsEveryEventAcrossFiles) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    std::uint32_t files = 0;
    {
        auto writer = RecordingWriter::create(path, source_header(), {true, 1, 256 << 10});
        ASSERT_TRUE(writer.ok());
        std::uint64_t x = 88172645463325252u;  // xorshift: payloads zstd cannot shrink
        for (std::uint64_t s = 1; s <= 3000; ++s) {
            std::byte* dst = writer->begin_event(event_with(s, 1024));
            for (int i = 0; i < 1024; i += 8) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                std::memcpy(dst + i, &x, 8);
            }
            ASSERT_TRUE(writer->end_event(true).ok());
        }
        ASSERT_TRUE(writer->finish().ok());
        files = writer->totals().files;
    }
    // Records of 16 + 64 + 1024 bytes after a 128-byte header: 238 per 256 KiB
    // file (counted before compression), so 3000 events make 13 files.
    ASSERT_EQ(files, 13u);
    std::uint64_t next_seqno = 1;
    for (std::uint32_t i = 0; i < files; ++i) {
        ReadStatus status{};
        auto records = replay(rotated_path(path, i), status);
        EXPECT_EQ(status, ReadStatus::CleanEnd) << i;
        for (std::size_t r = 0; r + 1 < records.size(); ++r)
            EXPECT_EQ(records[r].event.seqno, next_seqno++);
    }
    EXPECT_EQ(next_seqno, 3001u);
}

TEST(Recording, ImpossibleRecordSizeIsReportedAsCorruption) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, source_header(), {false, 1, 0});
        append_event(*writer, 1, 16);
        ASSERT_TRUE(writer->finish().ok());
    }
    // Give the first record an absurd body size.
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    const std::uint64_t absurd = std::uint64_t{1} << 40;
    ASSERT_EQ(::pwrite(fd, &absurd, 8, sizeof(RecordingFileHeader) + 8), 8);
    ::close(fd);
    auto reader = RecordingReader::open(path);
    ASSERT_TRUE(reader.ok());
    Record record;
    auto status = reader->next(record);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message().find("corrupt"), std::string::npos);
}

TEST(Recording, FileWithoutTheMagicOrWithANewerVersionIsRefused) {
    TempDir dir;
    const std::string path = dir.file("r.evrec");
    {
        auto writer = RecordingWriter::create(path, source_header(), {});
        ASSERT_TRUE(writer->finish().ok());
    }
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    const std::uint16_t newer = kRecordingVersion + 1;
    ASSERT_EQ(::pwrite(fd, &newer, 2, 8), 2);
    ::close(fd);
    auto reader = RecordingReader::open(path);
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("version"), std::string::npos);
    ASSERT_EQ(::truncate(path.c_str(), 10), 0);
    EXPECT_FALSE(RecordingReader::open(path).ok());
}

}  // namespace
}  // namespace evring
