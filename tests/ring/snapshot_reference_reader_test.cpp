// A snapshot read by a reader that knows only the RING01 format
// (docs/format.md, "Snapshots"; the byte tables of "Layout"): it starts at
// the oldest slot of the window, max(1, last_seqno - capacity + 1); a slot
// whose seqno is below the one expected is not ready (in a snapshot: the
// end), above it is a gap (skipped), equal is an event. It must read the
// events evring's own reader reads, and evring's reader must still report
// the seqnos a writer lapped during the copy as lost to lapping. First on a
// ring with a reservation in flight (deterministic), then against a writer
// lapping a small ring as fast as it can.
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/source_open.hpp"
#include "ring/snapshot.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;
using test::small_params;

// ---- the reader written from the format documentation alone ----

struct ReferenceRead {
    std::vector<std::uint64_t> events;        // seqnos of events of any type but 1
    std::vector<std::uint64_t> record_errors; // seqnos of type 1 (RECORD_ERROR) events
    std::uint64_t gaps = 0;
    bool stopped_not_ready = false;  // stopped at a slot not written yet before last_seqno
};

std::uint64_t u64_at(const std::vector<unsigned char>& bytes, std::size_t offset) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | bytes.at(offset + static_cast<std::size_t>(i));  // little-endian
    return v;
}

std::uint16_t u16_at(const std::vector<unsigned char>& bytes, std::size_t offset) {
    return static_cast<std::uint16_t>(bytes.at(offset) | (bytes.at(offset + 1) << 8));
}

// The snapshot file: one zstd frame holding the ring file.
std::vector<unsigned char> decompress_snapshot(const std::string& path) {
    std::vector<unsigned char> compressed;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    unsigned char buffer[1 << 16];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) compressed.insert(compressed.end(), buffer, buffer + n);
    ::close(fd);
    const unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
    EXPECT_NE(size, ZSTD_CONTENTSIZE_ERROR);
    EXPECT_NE(size, ZSTD_CONTENTSIZE_UNKNOWN);
    std::vector<unsigned char> ring(static_cast<std::size_t>(size));
    const std::size_t got = ZSTD_decompress(ring.data(), ring.size(), compressed.data(), compressed.size());
    EXPECT_FALSE(ZSTD_isError(got));
    return ring;
}

ReferenceRead read_as_reference(const std::string& path) {
    const std::vector<unsigned char> ring = decompress_snapshot(path);
    ReferenceRead out;
    constexpr std::size_t kDescriptors = std::size_t{2} << 20;  // the descriptor array starts at 2 MiB
    const std::uint64_t capacity = u64_at(ring, 40);
    const std::uint64_t last = u64_at(ring, 64);
    std::uint64_t expected = last >= capacity ? last - capacity + 1 : 1;
    while (expected <= last) {
        const std::size_t slot = kDescriptors + static_cast<std::size_t>((expected - 1) % capacity) * 64;
        const std::uint64_t seqno = u64_at(ring, slot);
        if (seqno < expected) {  // not written yet: in a snapshot, nothing more comes
            out.stopped_not_ready = true;
            break;
        }
        if (seqno > expected) {  // the ring wrapped past us: a gap, skipped
            ++out.gaps;
            expected = seqno;
            continue;
        }
        (u16_at(ring, slot + 8) == 1 ? out.record_errors : out.events).push_back(seqno);
        ++expected;
    }
    return out;
}

// ---- evring's own reader ----

struct EvringRead {
    std::vector<std::uint64_t> events;
    std::vector<SourceGap> gaps;
};

EvringRead read_with_evring(const std::string& path) {
    EvringRead out;
    auto source = open_source(path, {});
    EXPECT_TRUE(source.ok()) << source.error().message();
    if (!source.ok()) return out;
    EXPECT_TRUE((*source)->seek(Position::oldest()).ok());
    SourceItem item;
    for (;;) {
        const SourceStep step = (*source)->next(item);
        if (step == SourceStep::Event) out.events.push_back(item.event.descriptor.seqno);
        if (step == SourceStep::Gap) out.gaps.push_back(item.gap);
        if (step == SourceStep::End || step == SourceStep::Failed || step == SourceStep::NotReady) break;
    }
    return out;
}

void publish(Publisher& publisher, int count) {
    for (int i = 0; i < count; ++i) {
        Reservation r = publisher.reserve(16);
        ASSERT_TRUE(r);
        std::memset(r.payload(), 1, 16);
        publisher.commit(r);
    }
}

Status snapshot_to(const MappedRing& ring, const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    auto stats = write_snapshot(ring, fd, path);
    ::close(fd);
    if (!stats) return std::move(stats).error();
    return {};
}

// Both readers agree on one snapshot: the same events; what evring reports
// lapped is exactly what the reference reader meets as RECORD_ERROR
// placeholders, ahead of the events.
void expect_readers_agree(const std::string& path, const std::string& what) {
    const ReferenceRead reference = read_as_reference(path);
    const EvringRead evring = read_with_evring(path);
    EXPECT_EQ(reference.events, evring.events) << what;
    EXPECT_EQ(reference.gaps, 0u) << what;
    std::vector<std::uint64_t> lapped;
    for (const SourceGap& gap : evring.gaps) {
        EXPECT_EQ(gap.reason, GapReason::FellBehind) << what << ": seqno " << gap.first_seqno;
        for (std::uint64_t s = gap.first_seqno; s <= gap.last_seqno(); ++s) lapped.push_back(s);
    }
    EXPECT_EQ(reference.record_errors, lapped) << what;
    if (!reference.record_errors.empty() && !reference.events.empty()) {
        EXPECT_LT(reference.record_errors.back(), reference.events.front()) << what;
    }
}

// One writer reserved seqno 101 of a 64-slot ring and has not committed it
// (a writer is always between reserve and commit when it writes flat out):
// its slot, seqno 37's, holds no committed event, so the copy keeps
// 38..100 and the window starts at 37, a lapped slot.
TEST(SnapshotReferenceReader, ReadsPastTheSlotTakenByAReservationInFlight) {
    RingPair rings(small_params(6, 16));
    Publisher publisher(*rings.writer);
    publish(publisher, 100);
    Reservation in_flight = publisher.reserve(16);
    ASSERT_TRUE(in_flight);
    const std::string path = rings.dir.file("in-flight.zst");
    ASSERT_TRUE(snapshot_to(*rings.reader, path).ok());
    publisher.abort(in_flight);

    const ReferenceRead reference = read_as_reference(path);
    EXPECT_EQ(reference.record_errors, std::vector<std::uint64_t>{37});
    ASSERT_EQ(reference.events.size(), 63u);
    EXPECT_EQ(reference.events.front(), 38u);
    EXPECT_EQ(reference.events.back(), 100u);
    EXPECT_FALSE(reference.stopped_not_ready);

    const EvringRead evring = read_with_evring(path);
    ASSERT_EQ(evring.gaps.size(), 1u);
    EXPECT_EQ(evring.gaps[0].first_seqno, 37u);
    EXPECT_EQ(evring.gaps[0].count, 1u);
    EXPECT_EQ(evring.gaps[0].reason, GapReason::FellBehind);
    expect_readers_agree(path, "in flight");
}

// A writer lapping a 1024-slot ring as fast as it can: every snapshot reads
// the same to both readers, and the reference reader reads events from each
// one evring reads events from.
TEST(SnapshotReferenceReaderWhileWriting, ReadsEverySnapshotOfARingWrittenFlatOut) {
    RingPair rings(small_params(10, 16));
    std::atomic<bool> stop{false};
    std::atomic<bool> started{false};
    std::thread writer([&] {
        Publisher publisher(*rings.writer);
        started.store(true, std::memory_order_relaxed);  // relaxed: a start flag only
        while (!stop.load(std::memory_order_relaxed)) {   // relaxed: a stop flag only
            Reservation r = publisher.reserve(16);
            std::memset(r.payload(), 1, 16);
            publisher.commit(r);
        }
    });
    while (!started.load(std::memory_order_relaxed)) std::this_thread::yield();
    int with_placeholders = 0;
    constexpr int kRounds = 20;
    for (int round = 0; round < kRounds; ++round) {
        const std::string path = rings.dir.file("flat-out.zst");
        ASSERT_TRUE(snapshot_to(*rings.reader, path).ok());
        const ReferenceRead reference = read_as_reference(path);
        const EvringRead evring = read_with_evring(path);
        if (!evring.events.empty()) {
            EXPECT_FALSE(reference.events.empty()) << "round " << round;
        }
        expect_readers_agree(path, "round " + std::to_string(round));
        with_placeholders += !reference.record_errors.empty();
    }
    stop.store(true, std::memory_order_relaxed);
    writer.join();
    std::printf("%d of %d snapshots had lapped slots, each read past by the reference reader\n", with_placeholders,
                kRounds);
}

}  // namespace
}  // namespace evring
