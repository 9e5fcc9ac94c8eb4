// The recording a running recorder writes, from its registry entry
// (recorder_output.hpp): whole when the registry kept it whole; found again
// among the recorder's open files when the registry cut it (here the
// recorder is this process), the series' first file for a rotated one; what
// was kept when nothing open matches.
#include "registry/recorder_output.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "recording/recording_writer.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registry_format.hpp"
#include "support/seqno_ring.hpp"

namespace evring {
namespace {

// What the registry lists for a recorder of `path` in this process: "-> PATH"
// cut to the detail field, as reader_registration.hpp stores it.
ReaderEntry listed(const std::string& path) {
    ReaderEntry entry;
    entry.detail = ("-> " + path).substr(0, kReaderDetailBytes - 1);
    entry.pid = static_cast<std::uint64_t>(::getpid());
    entry.pid_in_our_namespace = true;
    return entry;
}

struct LongPath : ::testing::Test {
    void SetUp() override {
        dir = ring.dir.file("a-folder-whose-name-makes-the-recording-path-longer-than-the-registry-keeps");
        std::filesystem::create_directory(dir);
        path = dir + "/feed.evrec";
        ASSERT_GT(path.size(), kReaderDetailBytes) << "the path must not fit";
    }
    void record(std::uint64_t rotate_bytes) {
        RecordingOptions options;
        options.rotate_bytes = rotate_bytes;
        auto made = RecordingWriter::create(path, ring.writer->ring().header(), options);
        ASSERT_TRUE(made.ok()) << made.error().message();
        writer.emplace(std::move(*made));
        EventDescriptor d{};
        for (std::uint64_t seqno = 1; seqno <= 200; ++seqno) {
            d.seqno = seqno;
            d.payload_size = 8;
            std::memcpy(writer->begin_event(d), &seqno, 8);
            ASSERT_TRUE(writer->end_event(true).ok());
        }
        ASSERT_TRUE(writer->flush().ok());
    }
    test::SeqnoRing ring;
    std::string dir, path;
    std::optional<RecordingWriter> writer;
};

TEST_F(LongPath, ACutPathIsFoundWholeAmongTheRecordersOpenFiles) {
    record(0);
    EXPECT_EQ(detail::recorder_output(listed(path)), path);
}

TEST_F(LongPath, ARotatedSeriesIsNamedByItsFirstFile) {
    record(1024);
    ASSERT_TRUE(std::filesystem::exists(rotated_path(path, 2))) << "the recording rotated";
    EXPECT_EQ(detail::recorder_output(listed(path)), path);
}

TEST_F(LongPath, WithNothingOpenThatMatchesTheKeptPathIsTheAnswer) {
    const ReaderEntry entry = listed(path);  // no recorder of it is open
    EXPECT_EQ(detail::recorder_output(entry), entry.detail.substr(3));
}

TEST(RecorderOutput, APathTheRegistryKeptWholeIsTakenAsItIs) {
    ReaderEntry entry;
    entry.detail = "-> /dev/shm/feed.evrec";
    EXPECT_EQ(detail::recorder_output(entry), "/dev/shm/feed.evrec");
    entry.detail = "captures -> /dev/shm/c";  // a flight recorder's: not one recording
    EXPECT_EQ(detail::recorder_output(entry), "");
}

}  // namespace
}  // namespace evring
