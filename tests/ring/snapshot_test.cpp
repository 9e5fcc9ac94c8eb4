// Snapshots: consistent copies of a ring, and loading them back (padding and limits).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
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
using test::small_params;
using test::TempDir;

// A varying payload size: the writer's next seqno, read through the ring.
std::uint64_t r_size_step(const Publisher& publisher) {
    Iterator it(publisher.ring());
    return it.newest_seqno();
}

// Records `count` events whose payload is `size` bytes of (seqno & 0xff).
void record_events(const MappedRing& ring, int count, std::uint32_t size) {
    Publisher publisher(ring);
    for (int i = 0; i < count; ++i) {
        Reservation r = publisher.reserve(size);
        ASSERT_TRUE(r);
        r.descriptor().event_type = 7;
        r.descriptor().content_ext[1] = r.seqno() * 10;
        std::memset(r.payload(), static_cast<int>(r.seqno() & 0xff), size);
        publisher.commit(r);
    }
}

std::string snapshot_of(const MappedRing& ring, const std::string& path,
                        SnapshotStats* stats_out = nullptr) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    auto stats = write_snapshot(ring, fd, path);
    ::close(fd);
    EXPECT_TRUE(stats.ok()) << stats.error().message();
    if (stats && stats_out != nullptr) *stats_out = *stats;
    return path;
}

// Compresses the first `keep` bytes of a ring file as one zstd frame.
void compress_prefix(const std::string& ring_path, std::uint64_t keep, const std::string& out) {
    std::vector<char> bytes(keep);
    int fd = ::open(ring_path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_EQ(::pread(fd, bytes.data(), keep, 0), static_cast<ssize_t>(keep));
    ::close(fd);
    std::vector<char> compressed(ZSTD_compressBound(keep));
    std::size_t n = ZSTD_compress(compressed.data(), compressed.size(), bytes.data(), keep, 1);
    ASSERT_FALSE(ZSTD_isError(n));
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_EQ(::write(o, compressed.data(), n), static_cast<ssize_t>(n));
    ::close(o);
}

TEST(Snapshot, LoadedSnapshotHoldsEveryCommittedEventWithItsPayload) {
    RingPair rings;
    record_events(*rings.writer, 50, 40);
    SnapshotStats stats;
    auto path = snapshot_of(*rings.reader, rings.dir.file("s.zst"), &stats);
    EXPECT_EQ(stats.kept_events, 50u);
    EXPECT_EQ(stats.dropped_descriptors, 0u);
    EXPECT_EQ(stats.expired_payloads, 0u);
    EXPECT_TRUE(is_zstd_file(path).value());

    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    EXPECT_EQ(loaded->padded_bytes, 0u);
    const MappedRing& ring = loaded->ring;
    EXPECT_EQ(ring.header().control.last_seqno, 50u);
    Iterator it(ring);
    it.seek(1);
    EventDescriptor event;
    std::vector<std::uint8_t> payload(40);
    for (std::uint64_t s = 1; s <= 50; ++s) {
        ASSERT_EQ(it.try_next(event), NextResult::Success);
        EXPECT_EQ(event.seqno, s);
        EXPECT_EQ(event.content_ext[1], s * 10);
        ASSERT_EQ(copy_payload(ring, event, payload.data(), payload.size()), PayloadResult::Ok);
        EXPECT_EQ(payload[0], s & 0xff);
        EXPECT_EQ(payload[39], s & 0xff);
    }
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
}

TEST(Snapshot, UncommittedReservationsAreZeroedAndControlWordsEndAtNewestKept) {
    RingPair rings;
    record_events(*rings.writer, 3, 16);
    Publisher publisher(*rings.writer);
    Reservation stalled = publisher.reserve(16);  // seqno 4, never committed
    ASSERT_TRUE(stalled);
    record_events(*rings.writer, 1, 16);  // seqno 5
    Reservation tail = publisher.reserve(32);  // seqno 6, never committed
    ASSERT_TRUE(tail);

    SnapshotStats stats;
    auto path = snapshot_of(*rings.reader, rings.dir.file("s.zst"), &stats);
    EXPECT_EQ(stats.kept_events, 4u);
    EXPECT_EQ(stats.dropped_descriptors, 2u);
    EXPECT_EQ(stats.newest_seqno, 5u);

    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    const RingHeader& header = loaded->ring.header();
    EXPECT_EQ(header.control.last_seqno, 5u);
    EventDescriptor fifth;
    Iterator it(loaded->ring);
    ASSERT_TRUE(it.read_descriptor(5, fifth));
    EXPECT_EQ(header.control.next_payload_byte, fifth.payload_buf_offset + fifth.payload_size);
    EXPECT_FALSE(it.read_descriptor(4, fifth));
    EXPECT_EQ(loaded->ring.descriptors()[3].words[0], 0u);
    EXPECT_EQ(loaded->ring.descriptors()[5].words[0], 0u);
}

TEST(Snapshot, OverwrittenPayloadsAreKeptAsExpiredNeverAsValid) {
    RingPair rings(small_params(8, 12));  // 256 descriptors, 4 KiB of payload
    record_events(*rings.writer, 100, 100);  // 11200 bytes: the buffer wrapped
    SnapshotStats stats;
    auto path = snapshot_of(*rings.reader, rings.dir.file("s.zst"), &stats);
    EXPECT_EQ(stats.kept_events, 100u);
    EXPECT_GT(stats.expired_payloads, 0u);

    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    Iterator it(loaded->ring);
    it.seek(1);
    EventDescriptor event;
    std::uint64_t expired = 0;
    std::vector<std::uint8_t> payload(100);
    while (it.try_next(event) == NextResult::Success) {
        const auto result = copy_payload(loaded->ring, event, payload.data(), payload.size());
        if (result == PayloadResult::Expired) {
            ++expired;
            continue;
        }
        ASSERT_EQ(result, PayloadResult::Ok);
        EXPECT_EQ(payload[0], event.seqno & 0xff) << event.seqno;
        EXPECT_EQ(payload[99], event.seqno & 0xff) << event.seqno;
    }
    EXPECT_EQ(expired, stats.expired_payloads);
}

TEST(Snapshot, LoadRefusesARingLargerThanTheLimitAndSaysWhy) {
    RingPair rings;
    auto path = snapshot_of(*rings.reader, rings.dir.file("s.zst"));
    auto loaded = load_snapshot(path, SnapshotLoadOptions{1 << 20});
    ASSERT_FALSE(loaded.ok());
    const std::string& message = loaded.error().message();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("limit of 1048576 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(rings.reader->layout().file_size)), std::string::npos)
        << message;
}

TEST(Snapshot, ShortFileIsPaddedWhenMissingBytesWereNeverWritten) {
    RingPair rings;
    record_events(*rings.writer, 10, 64);
    const std::uint64_t size = rings.reader->layout().file_size;
    auto path = rings.dir.file("short.zst");
    compress_prefix(rings.path, size - 8, path);
    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    EXPECT_EQ(loaded->padded_bytes, 8u);
    EXPECT_EQ(loaded->decompressed_size, size - 8);
    EXPECT_EQ(loaded->ring.header().control.last_seqno, 10u);
}

TEST(Snapshot, ShortFileIsRefusedWhenMissingBytesCouldHoldData) {
    RingPair rings(small_params(8, 12));
    record_events(*rings.writer, 100, 100);  // wrapped: every payload byte may matter
    auto path = rings.dir.file("short.zst");
    compress_prefix(rings.path, rings.reader->layout().file_size - 8, path);
    auto loaded = load_snapshot(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message().find("wrapped"), std::string::npos)
        << loaded.error().message();
}

TEST(Snapshot, MissingTailInsideWrittenPayloadOrContextAreaIsRefused) {
    RingHeader header{};
    header.size = RingSize{256, 1 << 16, 0};
    header.control.next_payload_byte = 1000;
    const RingLayout layout = RingLayout::of(header.size);
    EXPECT_TRUE(check_missing_tail(header, layout.file_size - 8).ok());
    EXPECT_TRUE(check_missing_tail(header, layout.payload_offset + 1000).ok());
    EXPECT_FALSE(check_missing_tail(header, layout.payload_offset + 999).ok());
    EXPECT_FALSE(check_missing_tail(header, 100).ok());
    header.size.context_area_size = kSectionAlignment;
    const RingLayout with_context = RingLayout::of(header.size);
    EXPECT_FALSE(check_missing_tail(header, with_context.file_size - 8).ok());
}

TEST(Snapshot, FrameThatIsNotARingIsRefused) {
    TempDir dir;
    auto path = dir.file("junk.zst");
    const char text[] = "this is not a ring at all, just some text that is long enough for a "
                        "header check to have something to look at, more than 192 bytes in all "
                        "so that the magic test is the one that fails: padding padding padding.";
    static_assert(sizeof text > sizeof(RingHeader));
    std::vector<char> compressed(ZSTD_compressBound(sizeof text));
    std::size_t n = ZSTD_compress(compressed.data(), compressed.size(), text, sizeof text, 1);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_EQ(::write(fd, compressed.data(), n), static_cast<ssize_t>(n));
    ::close(fd);
    auto loaded = load_snapshot(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message().find("not a RING01"), std::string::npos)
        << loaded.error().message();
}

TEST(Snapshot, TruncatedCompressedFileIsRefused) {
    RingPair rings;
    record_events(*rings.writer, 10, 64);
    auto path = snapshot_of(*rings.reader, rings.dir.file("s.zst"));
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    const off_t size = ::lseek(fd, 0, SEEK_END);
    ASSERT_EQ(::ftruncate(fd, size / 2), 0);
    ::close(fd);
    auto loaded = load_snapshot(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message().find("truncated"), std::string::npos)
        << loaded.error().message();
}

// Concurrency: whatever the interleaving, a snapshot holds one range of
// events whose payloads are intact or reported expired, never torn.
TEST(SnapshotWhileWriting, EverySnapshotHoldsOneRangeOfIntactOrExpiredEvents) {
    // 256 descriptors lap every few milliseconds at the paced rate below, so
    // snapshots are taken mid-lap; the 64 KiB payload buffer holds about 1800
    // events, so kept events usually have intact payloads. (Flat out, the
    // writer refills the buffer faster than a snapshot copies the file, and
    // every payload would be expired.)
    RingPair rings(small_params(8, 16));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        Publisher publisher(*rings.writer);
        while (!stop.load(std::memory_order_relaxed)) {  // relaxed: a stop flag only
            Reservation r = publisher.reserve(8 + 8 * (r_size_step(publisher) % 8));
            const std::uint64_t seqno = r.seqno();
            for (std::uint32_t i = 0; i < r.descriptor().payload_size; i += 8)
                std::memcpy(r.payload() + i, &seqno, 8);
            publisher.commit(r);
            if (seqno % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    });
    std::uint64_t checked = 0, expired = 0;
    for (int round = 0; round < 30; ++round) {
        SnapshotStats stats;
        auto path = snapshot_of(*rings.reader, rings.dir.file("s.zst"), &stats);
        auto loaded = load_snapshot(path);
        ASSERT_TRUE(loaded.ok()) << loaded.error().message();
        const MappedRing& ring = loaded->ring;
        if (stats.kept_events == 0) {  // e.g. taken before the writer's first event
            EXPECT_EQ(ring.header().control.last_seqno, 0u);
            continue;
        }
        Iterator it(ring);
        it.seek(stats.oldest_seqno);
        EventDescriptor event;
        std::uint64_t expected = stats.oldest_seqno;
        std::vector<std::uint64_t> words(64);
        while (it.try_next(event) == NextResult::Success) {
            ASSERT_EQ(event.seqno, expected++) << "round " << round;
            const auto result = copy_payload(ring, event, words.data(), words.size() * 8);
            if (result == PayloadResult::Expired) {
                ++expired;
                continue;
            }
            ASSERT_EQ(result, PayloadResult::Ok);
            for (std::uint32_t i = 0; i < event.payload_size / 8; ++i)
                ASSERT_EQ(words[i], event.seqno) << "torn payload in round " << round;
            ++checked;
        }
        EXPECT_EQ(expected, stats.newest_seqno + 1) << "round " << round;
        EXPECT_EQ(expected - stats.oldest_seqno, stats.kept_events) << "round " << round;
    }
    stop.store(true, std::memory_order_relaxed);
    writer.join();
    EXPECT_GT(checked, 0u);
    std::printf("checked %llu payloads, %llu expired\n", static_cast<unsigned long long>(checked),
                static_cast<unsigned long long>(expired));
}

}  // namespace
}  // namespace evring
