// The gaps a snapshot hands out (ring_source.hpp): slots a writer lapped
// while the snapshot was copied are lost to lapping (FellBehind, saying so),
// never "never committed"; holes a snapshot really holds stay holes. First
// on crafted snapshots, then against a writer that laps a tiny ring.
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/event_source.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "ring/snapshot.hpp"
#include "evring/source/source_open.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;
using test::small_params;

void publish(const MappedRing& ring, int count) {
    Publisher publisher(ring);
    for (int i = 0; i < count; ++i) {
        Reservation r = publisher.reserve(16);
        ASSERT_TRUE(r);
        std::memset(r.payload(), 1, 16);
        publisher.commit(r);
    }
}

std::vector<char> read_all(const std::string& path) {
    std::vector<char> bytes;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char buffer[1 << 16];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
        bytes.insert(bytes.end(), buffer, buffer + n);
    ::close(fd);
    return bytes;
}

// Writes `ring_bytes` (a ring file's bytes) as a snapshot file.
void write_as_snapshot(const std::vector<char>& ring_bytes, const std::string& out) {
    std::vector<char> compressed(ZSTD_compressBound(ring_bytes.size()));
    const std::size_t n = ZSTD_compress(compressed.data(), compressed.size(), ring_bytes.data(),
                                        ring_bytes.size(), 1);
    ASSERT_FALSE(ZSTD_isError(n));
    int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_EQ(::write(fd, compressed.data(), n), static_cast<ssize_t>(n));
    ::close(fd);
}

struct Read {
    std::vector<std::uint64_t> seqnos;
    std::vector<SourceGap> gaps;
    std::vector<std::string> details;
};

Read read_from_oldest(const std::string& path) {
    Read out;
    auto source = open_source(path, {});
    EXPECT_TRUE(source.ok()) << source.error().message();
    if (!source.ok()) return out;
    EXPECT_TRUE((*source)->seek(Position::oldest()).ok());
    SourceItem item;
    for (;;) {
        const SourceStep step = (*source)->next(item);
        if (step == SourceStep::Event) out.seqnos.push_back(item.event.descriptor.seqno);
        if (step == SourceStep::Gap) {
            out.gaps.push_back(item.gap);
            out.details.emplace_back(item.gap.detail);
        }
        if (step == SourceStep::End || step == SourceStep::Failed || step == SourceStep::NotReady)
            break;
    }
    return out;
}

// A 64-descriptor ring holding seqnos 1..100 (the window is 37..100), with
// the slots of 37..40 zeroed: as a snapshot that lapped them leaves it.
std::vector<char> ring_with_leading_holes(RingPair& rings) {
    publish(*rings.writer, 100);
    std::vector<char> bytes = read_all(rings.path);
    const RingLayout& layout = rings.writer->layout();
    for (std::uint64_t s = 37; s <= 40; ++s)
        std::memset(
            bytes.data() + layout.descriptors_offset + ((s - 1) & 63) * sizeof(EventDescriptor), 0,
            sizeof(EventDescriptor));
    return bytes;
}

TEST(SnapshotGaps, SeqnosLappedWhileCopyingAreLostToLappingNotNeverCommitted) {
    RingPair rings(small_params(6, 16));
    std::vector<char> bytes = ring_with_leading_holes(rings);
    auto* extension = extension_in(bytes.data());
    ASSERT_TRUE(has_ring_extension(*extension));
    extension->snapshot_lapped = 40;
    const std::string path = rings.dir.file("lapped.zst");
    write_as_snapshot(bytes, path);

    const Read r = read_from_oldest(path);
    ASSERT_EQ(r.gaps.size(), 1u);
    EXPECT_EQ(r.gaps[0].first_seqno, 37u);
    EXPECT_EQ(r.gaps[0].count, 4u);
    EXPECT_EQ(r.gaps[0].reason, GapReason::FellBehind);
    EXPECT_EQ(r.details[0], "seqno 37..40 were overwritten by the writer while snapshot '" + path +
                                "' was taken (lapped); skipping them");
    ASSERT_EQ(r.seqnos.size(), 60u);
    EXPECT_EQ(r.seqnos.front(), 41u);
}

TEST(SnapshotGaps, HolesTheSnapshotReallyHoldsStayNeverCommitted) {
    RingPair rings(small_params(6, 16));
    const std::string path = rings.dir.file("holes.zst");
    write_as_snapshot(ring_with_leading_holes(rings), path);  // no lapped seqno recorded
    const Read r = read_from_oldest(path);
    ASSERT_EQ(r.gaps.size(), 1u);
    EXPECT_EQ(r.gaps[0].reason, GapReason::NeverCommitted);
    EXPECT_EQ(r.gaps[0].count, 4u);
}

TEST(SnapshotGaps, SnapshotOfAQuietRingRecordsNothingLapped) {
    RingPair rings(small_params(6, 16));
    publish(*rings.writer, 100);
    const std::string path = rings.dir.file("quiet.zst");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_TRUE(write_snapshot(*rings.reader, fd, path).ok());
    ::close(fd);
    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok());
    const auto* extension = reinterpret_cast<const RingExtension*>(
        loaded->ring.header_section().data() + kRingExtensionOffset);
    EXPECT_EQ(extension->snapshot_lapped, 0u);
    const Read r = read_from_oldest(path);
    EXPECT_TRUE(r.gaps.empty());
    EXPECT_EQ(r.seqnos.size(), 64u);
}

// One writer lapping a 64-descriptor ring as fast as it can: whatever a
// snapshot caught, reading it from its oldest seqno gives events and
// lapped gaps only (one writer commits in order, so it leaves no holes).
TEST(SnapshotGapsWhileWriting, LappedSlotsAreNeverReportedAsNeverCommitted) {
    RingPair rings(small_params(6, 16));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        Publisher publisher(*rings.writer);
        while (!stop.load(std::memory_order_relaxed)) {  // relaxed: a stop flag only
            Reservation r = publisher.reserve(16);
            std::memset(r.payload(), 1, 16);
            publisher.commit(r);
        }
    });
    int lapped_snapshots = 0;
    for (int round = 0; round < 20; ++round) {
        const std::string path = rings.dir.file("w.zst");
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        auto stats = write_snapshot(*rings.reader, fd, path);
        ::close(fd);
        ASSERT_TRUE(stats.ok()) << stats.error().message();
        const Read r = read_from_oldest(path);
        for (const SourceGap& gap : r.gaps) {
            EXPECT_EQ(gap.reason, GapReason::FellBehind)
                << "round " << round << ": seqno " << gap.first_seqno;
            EXPECT_LT(gap.last_seqno(), r.seqnos.empty() ? ~0ull : r.seqnos.front());
        }
        lapped_snapshots += !r.gaps.empty();
    }
    stop.store(true, std::memory_order_relaxed);
    writer.join();
    std::printf("%d of 20 snapshots were lapped while copied\n", lapped_snapshots);
}

}  // namespace
}  // namespace evring
