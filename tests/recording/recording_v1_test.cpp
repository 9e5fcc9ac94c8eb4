// Version 1 recordings stay readable: raw and zstd files written the way the
// version 1 writer did replay their events, gaps (reason unrecorded) and end
// record; damage ends the replay with a report naming the record and the
// loss; end totals, trailing bytes and memory bombs are handled as in v2.

#include <cstring>

#include <gtest/gtest.h>

#include "support/recording_files.hpp"

namespace evring {
namespace {

using namespace test;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class RecordingV1 : public ::testing::TestWithParam<bool> {
protected:
    std::string write(const V1File& v1) {
        write_file(path_, v1.bytes());
        return path_;
    }
    TempDir dir_;
    std::string path_ = dir_.file("v1.evrec");
};

TEST_P(RecordingV1, ReplaysEventsGapsAndTheEndRecord) {
    V1File v1(GetParam());
    for (std::uint64_t s = 1; s <= 50; ++s) v1.event(s, static_cast<std::uint32_t>(s * 3));
    v1.gap(51, 4);
    v1.event(55, 10);
    v1.end();
    const Replay r = replay(write(v1));
    ASSERT_TRUE(r.error.empty()) << r.error;
    auto expected = range(1, 50);
    expected.push_back(55);
    expect_events(r, expected);
    ASSERT_EQ(r.count(RecordKind::Gap), 1u);
    const Record& gap = r.records[50];
    EXPECT_EQ(gap.gap.first_lost_seqno, 51u);
    EXPECT_EQ(gap.gap.lost_count, 4u);
    EXPECT_EQ(gap.gap.reason, GapReason::Unrecorded);
    EXPECT_EQ(r.records.back().kind, RecordKind::End);
    EXPECT_EQ(r.records.back().end.events, 51u);
    EXPECT_EQ(r.records.back().end.gaps, 0u);  // v1 did not count them
    EXPECT_EQ(r.status, ReadStatus::CleanEnd) << r.notice;
    auto reader = RecordingReader::open(path_);
    EXPECT_EQ(reader->header().version, kRecordingVersion1);
    EXPECT_TRUE(reader->schema().empty());
}

TEST_P(RecordingV1, WithoutAnEndRecordItIsTruncated) {
    V1File v1(GetParam());
    for (std::uint64_t s = 1; s <= 10; ++s) v1.event(s, 16);
    const Replay r = replay(write(v1));
    expect_events(r, range(1, 10));
    EXPECT_EQ(r.status, ReadStatus::Truncated);
    EXPECT_TRUE(has(r.notice, "without an end record after 10 complete records (the recorder did not finish"))
        << r.notice;
}

TEST_P(RecordingV1, EndTotalsThatLieAreReported) {
    V1File v1(GetParam());
    v1.event(1, 8);
    v1.event(2, 8);
    v1.end(99);
    const Replay r = replay(write(v1));
    expect_events(r, range(1, 2));
    EXPECT_EQ(r.status, ReadStatus::DamagedEnd);
    ASSERT_EQ(r.damage().size(), 1u);
    EXPECT_EQ(r.damage()[0].kind, DamageKind::TotalsMismatch);
    EXPECT_TRUE(has(r.damage()[0].message, "counts 99 events")) << r.damage()[0].message;
    EXPECT_TRUE(has(r.damage()[0].message, "the replay found 2 events")) << r.damage()[0].message;
}

TEST_P(RecordingV1, RecordsAfterTheEndRecordAreReported) {
    V1File v1(GetParam());
    v1.event(1, 8);
    v1.end();
    v1.event(2, 8);
    const Replay r = replay(write(v1));
    expect_events(r, range(1, 1));
    EXPECT_EQ(r.status, ReadStatus::DamagedEnd);
    ASSERT_EQ(r.damage().size(), 1u);
    EXPECT_EQ(r.damage()[0].kind, DamageKind::TrailingData);
}

TEST_P(RecordingV1, ImpossibleRecordSizeEndsTheReplayWithAReport) {
    V1File v1(GetParam());
    for (std::uint64_t s = 1; s <= 5; ++s) v1.event(s, 8);
    const detail::RecordHeaderV1 head{1, 0, std::uint64_t{1} << 40};
    v1.append(&head, sizeof head);
    v1.append(std::string(200, 'x').data(), 200);
    const Replay r = replay(write(v1));
    expect_events(r, range(1, 5));
    EXPECT_EQ(r.status, ReadStatus::Truncated);
    ASSERT_EQ(r.damage().size(), 1u);
    EXPECT_EQ(r.damage()[0].kind, DamageKind::Undecodable);
    EXPECT_TRUE(has(r.damage()[0].message, "record 6")) << r.damage()[0].message;
    EXPECT_TRUE(has(r.damage()[0].message, "impossible size")) << r.damage()[0].message;
    EXPECT_TRUE(has(r.damage()[0].message, "seqno 6 and after lost")) << r.damage()[0].message;
    EXPECT_TRUE(has(r.damage()[0].message, "cannot resynchronise")) << r.damage()[0].message;
}

TEST_P(RecordingV1, CutInsideARecordIsTruncation) {
    V1File v1(GetParam());
    for (std::uint64_t s = 1; s <= 20; ++s) {
        v1.event(s, 100);
        v1.flush();
    }
    v1.end();
    Bytes file = v1.bytes();
    file.resize(file.size() - (GetParam() ? 40 : 300));
    write_file(path_, file);
    const Replay r = replay(path_);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.status, ReadStatus::Truncated);
    const auto seqnos = r.event_seqnos();
    ASSERT_GE(seqnos.size(), 15u);
    expect_events(r, range(1, seqnos.size()));
}

INSTANTIATE_TEST_SUITE_P(CompressedAndRaw, RecordingV1, ::testing::Bool());

TEST(RecordingV1Zstd, CorruptByteEndsTheReplayWithAReport) {
    V1File v1(true);
    for (std::uint64_t s = 1; s <= 2000; ++s) {
        v1.event(s, 64);
        if (s % 100 == 0) v1.flush();
    }
    v1.end();
    Bytes file = v1.bytes();
    // Overwrite a run in the middle of the frame.
    for (std::size_t i = file.size() / 2; i < file.size() / 2 + 16; ++i) file[i] = std::byte{0xff};
    TempDir dir;
    write_file(dir.file("v1.evrec"), file);
    const Replay r = replay(dir.file("v1.evrec"));
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.status, ReadStatus::Truncated);
    const auto seqnos = r.event_seqnos();
    expect_events(r, range(1, seqnos.size()));
    // The flushed zstd blocks before the damaged one, less at most 4 KiB of
    // output (28 events) that zstd withholds when it meets the damage: here
    // the damage is about a third of the way in.
    ASSERT_GE(seqnos.size(), 500u);
    ASSERT_LT(seqnos.size(), 2000u);
    ASSERT_EQ(r.damage().size(), 1u);
    EXPECT_EQ(r.damage()[0].first_lost_seqno, seqnos.size() + 1);
    EXPECT_TRUE(has(r.damage()[0].message, "version 1 recordings cannot resynchronise")) << r.damage()[0].message;
}

// A 130 KB v1 file whose one record decompresses to gigabytes of zeros: the
// reader refuses the record's size before inflating it.
TEST(RecordingV1Zstd, RecordClaimingGigabytesIsRefusedBeforeAnyAllocation) {
    V1File v1(true);
    v1.header().ring_size.payload_buf_size = std::uint64_t{1} << 40;
    v1.event(1, 8);
    const std::uint64_t body = std::uint64_t{4} << 30;
    const detail::RecordHeaderV1 head{1, 0, body};
    v1.append(&head, sizeof head);
    v1.append(Bytes(std::size_t{8} << 20).data(), std::size_t{8} << 20);  // zeros: they compress to nothing
    TempDir dir;
    write_file(dir.file("v1.evrec"), v1.bytes());
    Replay r;
    EXPECT_LT(max_rss_growth_kib([&] { r = replay(dir.file("v1.evrec")); }), 64 * 1024) << "KiB";
    expect_events(r, range(1, 1));
    ASSERT_EQ(r.damage().size(), 1u);
    EXPECT_TRUE(has(r.damage()[0].message, "a record of 4294967296 bytes, over the 67108864 bytes")) << r.damage()[0].message;
}

TEST(RecordingV1Raw, RecordLargerThanTheFileIsRefusedBeforeAnyAllocation) {
    V1File v1(false);
    v1.event(1, 8);
    const detail::RecordHeaderV1 head{1, 0, std::uint64_t{3} << 30};
    v1.append(&head, sizeof head);
    v1.append(Bytes(1000).data(), 1000);
    TempDir dir;
    write_file(dir.file("v1.evrec"), v1.bytes());
    const Replay r = replay(dir.file("v1.evrec"));
    expect_events(r, range(1, 1));
    ASSERT_EQ(r.damage().size(), 1u);
    EXPECT_TRUE(has(r.damage()[0].message, "a record of 3221225472 bytes where the file holds 1000 more"))
        << r.damage()[0].message;
}

TEST(RecordingV1Raw, UnknownFlagsAreRefused) {
    V1File v1(false);
    v1.header().flags = 0x80;
    v1.end();
    TempDir dir;
    write_file(dir.file("v1.evrec"), v1.bytes());
    auto reader = RecordingReader::open(dir.file("v1.evrec"));
    ASSERT_FALSE(reader.ok());
    EXPECT_TRUE(has(reader.error().message(), "unknown flags 0x80")) << reader.error().message();
}

// The v1 files committed to the fuzz corpus, made by the version 1 writer.
TEST(RecordingV1Corpus, FilesOfTheVersion1WriterReplay) {
    const std::string corpus = EVRING_SOURCE_DIR "/fuzz/corpus/recording/";
    for (const char* name : {"four_events_raw", "four_events_zstd"}) {
        const Replay r = replay(corpus + name);
        ASSERT_TRUE(r.error.empty()) << name << ": " << r.error;
        EXPECT_EQ(r.status, ReadStatus::CleanEnd) << name << ": " << r.notice;
        EXPECT_EQ(r.count(RecordKind::Event) + r.count(RecordKind::ExpiredPayload), 4u) << name;
        auto reader = RecordingReader::open(corpus + name);
        EXPECT_EQ(reader->header().version, 1u) << name;
    }
}

}  // namespace
}  // namespace evring
