// WriterSharing::Exclusive: the single-writer publisher must leave exactly the
// ring a shared publisher leaves (so every RING01 reader reads it), and a
// concurrent reader must see every event intact or counted as lost.
#include <atomic>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;

#if defined(__SANITIZE_THREAD__)
constexpr std::uint64_t kEvents = 20'000;
#else
constexpr std::uint64_t kEvents = 200'000;
#endif

void publish_numbered(Publisher& publisher, std::uint64_t n) {
    const std::size_t size = 8 + static_cast<std::size_t>(n % 13) * 8;
    Reservation r = publisher.reserve(size);
    r.descriptor().event_type = 3;
    r.descriptor().content_ext = {n, n * 2, 0, 0};
    for (std::size_t i = 0; i < size; i += 8) std::memcpy(r.payload() + i, &n, 8);
    publisher.commit(r);
}

TEST(ExclusivePublisher, LeavesTheSameControlWordsAndDescriptorsAsASharedPublisher) {
    RingPair shared_rings(test::small_params(8, 16));
    RingPair exclusive_rings(test::small_params(8, 16));
    Publisher shared(*shared_rings.writer, WriterSharing::Shared);
    Publisher exclusive(*exclusive_rings.writer, WriterSharing::Exclusive);
    for (std::uint64_t n = 1; n <= 5000; ++n) {  // wraps both buffers many times
        publish_numbered(shared, n);
        publish_numbered(exclusive, n);
    }
    const RingControl& a = shared_rings.reader->header().control;
    const RingControl& b = exclusive_rings.reader->header().control;
    EXPECT_EQ(a.last_seqno, b.last_seqno);
    EXPECT_EQ(a.next_payload_byte, b.next_payload_byte);
    EXPECT_EQ(a.buffer_window_start, b.buffer_window_start);
    Iterator ia(*shared_rings.reader);
    Iterator ib(*exclusive_rings.reader);
    for (std::uint64_t s = ia.oldest_seqno(); s <= ia.newest_seqno(); ++s) {
        EventDescriptor da{}, db{};
        ASSERT_TRUE(ia.read_descriptor(s, da));
        ASSERT_TRUE(ib.read_descriptor(s, db));
        EXPECT_EQ(da.payload_buf_offset, db.payload_buf_offset);
        EXPECT_EQ(da.payload_size, db.payload_size);
        EXPECT_EQ(da.content_ext, db.content_ext);
    }
}

TEST(ExclusivePublisher, ConcurrentReaderSeesEveryEventIntactOrCountedLost) {
    RingPair rings(test::small_params(10, 16));
    std::atomic<bool> done{false};
    std::thread writer([&] {
        Publisher publisher(*rings.writer, WriterSharing::Exclusive);
        for (std::uint64_t n = 1; n <= kEvents; ++n) publish_numbered(publisher, n);
        done.store(true, std::memory_order_release);  // release: the last commit is visible
    });
    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor event{};
    std::byte buffer[128];
    std::uint64_t read = 0, expired = 0, corrupt = 0;
    for (;;) {
        const NextResult result = it.try_next(event);
        if (result == NextResult::NotReady) {
            // Acquire: pairs with the writer's release; then drain what is left.
            if (done.load(std::memory_order_acquire) && it.next_seqno() > kEvents) break;
            continue;
        }
        if (result != NextResult::Success) continue;  // counted in total_lost() / total_abandoned()
        const std::uint64_t n = event.seqno;
        if (copy_payload(*rings.reader, event, buffer, sizeof buffer) != PayloadResult::Ok) {
            ++expired;
            continue;
        }
        ++read;
        for (std::size_t i = 0; i < event.payload_size; i += 8) {
            std::uint64_t word;
            std::memcpy(&word, buffer + i, 8);
            if (word != n) ++corrupt;
        }
        if (event.content_ext[0] != n) ++corrupt;
    }
    writer.join();
    EXPECT_EQ(corrupt, 0u);
    // Abandoned only if the writer thread stalled for a second mid-event.
    EXPECT_EQ(read + expired + it.total_lost() + it.total_abandoned(), kEvents);
    EXPECT_GT(read, 0u);
}

}  // namespace
}  // namespace evring
