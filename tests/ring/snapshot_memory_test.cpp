// Snapshots loaded from memory: the same ring as from the file, the buffer
// only needed during the call, and the same errors for damaged bytes.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "ring/snapshot.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;

std::vector<std::byte> snapshot_bytes(const MappedRing& ring, const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    auto stats = write_snapshot(ring, fd, path);
    ::close(fd);
    EXPECT_TRUE(stats.ok()) << stats.error().message();
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

void publish_events(const MappedRing& ring, int count) {
    Publisher publisher(ring);
    for (int i = 0; i < count; ++i) {
        Reservation r = publisher.reserve(24);
        ASSERT_TRUE(r);
        r.descriptor().event_type = 5;
        std::memset(r.payload(), static_cast<int>(r.seqno()), 24);
        publisher.commit(r);
    }
}

TEST(SnapshotFromMemory, HoldsTheSameRingAsTheFile) {
    RingPair rings;
    publish_events(*rings.writer, 20);
    const std::string path = rings.dir.file("s.zst");
    std::vector<std::byte> bytes = snapshot_bytes(*rings.reader, path);
    EXPECT_TRUE(is_zstd_frame(bytes));

    auto from_file = load_snapshot(path);
    ASSERT_TRUE(from_file.ok()) << from_file.error().message();
    auto from_memory = load_snapshot(bytes, "mailed.zst");
    ASSERT_TRUE(from_memory.ok()) << from_memory.error().message();
    std::fill(bytes.begin(), bytes.end(), std::byte{0});  // needed only during the call

    EXPECT_EQ(from_memory->ring.path(), "mailed.zst");
    EXPECT_EQ(from_memory->compressed_size, from_file->compressed_size);
    EXPECT_EQ(from_memory->decompressed_size, from_file->decompressed_size);
    EXPECT_EQ(std::memcmp(&from_memory->ring.header(), &from_file->ring.header(), sizeof(RingHeader)), 0);
    Iterator it(from_memory->ring);
    it.seek(1);
    EventDescriptor event{};
    std::byte payload[24];
    for (std::uint64_t s = 1; s <= 20; ++s) {
        ASSERT_EQ(it.try_next(event), NextResult::Success);
        EXPECT_EQ(event.seqno, s);
        ASSERT_EQ(copy_payload(from_memory->ring, event, payload, sizeof payload), PayloadResult::Ok);
        EXPECT_EQ(payload[23], static_cast<std::byte>(s));
    }
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
}

TEST(SnapshotFromMemory, DamagedBytesGetTheSameErrorsAsAFile) {
    RingPair rings;
    publish_events(*rings.writer, 3);
    std::vector<std::byte> bytes = snapshot_bytes(*rings.reader, rings.dir.file("s.zst"));
    std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2));
    auto truncated = load_snapshot(cut, "cut.zst");
    ASSERT_FALSE(truncated.ok());
    EXPECT_NE(truncated.error().message().find("snapshot 'cut.zst'"), std::string::npos)
        << truncated.error().message();
    EXPECT_NE(truncated.error().message().find("truncated"), std::string::npos)
        << truncated.error().message();

    std::vector<std::byte> extra = bytes;
    extra.push_back(std::byte{1});
    auto trailing = load_snapshot(extra, "extra.zst");
    ASSERT_FALSE(trailing.ok());
    EXPECT_NE(trailing.error().message().find("data after its zstd frame"), std::string::npos)
        << trailing.error().message();

    auto empty = load_snapshot(std::span<const std::byte>(), "empty.zst");
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.error().message().find("empty.zst"), std::string::npos);
}

TEST(SnapshotFromMemory, LimitAppliesAsForAFile) {
    RingPair rings;
    publish_events(*rings.writer, 3);
    std::vector<std::byte> bytes = snapshot_bytes(*rings.reader, rings.dir.file("s.zst"));
    auto refused = load_snapshot(bytes, "big.zst", SnapshotLoadOptions{1 << 20});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().errno_value(), EFBIG) << refused.error().message();
}

}  // namespace
}  // namespace evring
