// Micro-benchmarks of the write path: reserve + payload copy + commit, the
// typed API, across payload sizes and 1-2 writer threads on one ring.
//
// Rings live on /dev/shm. Most runs use the default ring size (2^20
// descriptors, 256 MiB payload buffer), so the writer streams through memory
// as a real producer does; runs named .../CacheResident use 2^12 descriptors
// and a 1 MiB payload buffer, to separate protocol cost from memory traffic.
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include <benchmark/benchmark.h>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/typed_publish.hpp"
#include "support/bench_ring.hpp"

namespace {

using evring::bench::ScratchRing;

// One ring shared by all threads of a benchmark run; made by thread 0.
std::unique_ptr<ScratchRing> g_ring;
std::unique_ptr<evring::Publisher> g_publisher;

void make_ring(const benchmark::State& state, unsigned dshift, unsigned pshift, bool doorbell = true,
               evring::WriterSharing sharing = evring::WriterSharing::Shared) {
    if (state.thread_index() != 0) return;
    g_ring = std::make_unique<ScratchRing>("/dev/shm", evring::bench::bench_params(dshift, pshift));
    // Without the feature bit the publisher does not ring the doorbell, as for
    // a ring made by another RING01 implementation.
    if (!doorbell) evring::write_ring_extension(&g_ring->writer().header(), 0);
    g_publisher = std::make_unique<evring::Publisher>(g_ring->writer(), sharing);
}
void setup_ring(const benchmark::State& state) { make_ring(state, 20, 28); }
void setup_small_ring(const benchmark::State& state) { make_ring(state, 12, 20); }
void setup_ring_without_doorbell(const benchmark::State& state) { make_ring(state, 20, 28, false); }
void setup_exclusive(const benchmark::State& state) {
    make_ring(state, 20, 28, true, evring::WriterSharing::Exclusive);
}
void setup_exclusive_without_doorbell(const benchmark::State& state) {
    make_ring(state, 20, 28, false, evring::WriterSharing::Exclusive);
}

// The default publisher on a ring its RingWriter holds exclusively, as an
// application makes it: it claims the ring (writer_claim.hpp). With two
// threads the second one's first reserve revokes the claim.
std::unique_ptr<evring::RingWriter> g_owner;
void setup_auto(const benchmark::State& state) {
    if (state.thread_index() != 0) return;
    const std::string path = "/dev/shm/evring-bench-auto-" + std::to_string(::getpid());
    g_owner = std::make_unique<evring::RingWriter>(evring::bench::create_owned_ring(path, 20, 28));
    g_publisher = std::make_unique<evring::Publisher>(g_owner->ring());
}

void teardown_ring(const benchmark::State& state) {
    if (state.thread_index() != 0) return;
    g_publisher.reset();
    g_ring.reset();
    g_owner.reset();
}

void BM_ReserveCopyCommit(benchmark::State& state) {
    const auto size = static_cast<std::size_t>(state.range(0));
    alignas(64) static std::byte source[65536];
    evring::Publisher& publisher = *g_publisher;
    const auto flow = static_cast<std::uint64_t>(state.thread_index());
    for (auto _ : state) {
        evring::Reservation r = publisher.reserve(size);
        r.descriptor().event_type = 7;
        r.descriptor().content_ext[0] = flow;
        std::memcpy(r.payload(), source, size);
        publisher.commit(r);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ReserveCopyCommit)
    ->Setup(setup_ring)
    ->Teardown(teardown_ring)
    ->RangeMultiplier(4)
    ->Range(16, 65536)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK(BM_ReserveCopyCommit)
    ->Name("BM_ReserveCopyCommit/CacheResident")
    ->Setup(setup_small_ring)
    ->Teardown(teardown_ring)
    ->Arg(64)
    ->Threads(1)
    ->UseRealTime();

// reserve + commit with no payload bytes touched: the protocol's own cost.
void BM_ReserveCommitOnly(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    for (auto _ : state) {
        evring::Reservation r = publisher.reserve(64);
        r.descriptor().event_type = 7;
        publisher.commit(r);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ReserveCommitOnly)->Setup(setup_ring)->Teardown(teardown_ring)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_ReserveCommitOnly)
    ->Name("BM_ReserveCommitOnly/NoDoorbell")
    ->Setup(setup_ring_without_doorbell)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_ReserveCopyCommit)
    ->Name("BM_ReserveCopyCommit/NoDoorbell")
    ->Setup(setup_ring_without_doorbell)
    ->Teardown(teardown_ring)
    ->Arg(64)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_ReserveCommitOnly)
    ->Name("BM_ReserveCommitOnly/Exclusive")
    ->Setup(setup_exclusive)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_ReserveCopyCommit)
    ->Name("BM_ReserveCopyCommit/Exclusive")
    ->Setup(setup_exclusive)
    ->Teardown(teardown_ring)
    ->RangeMultiplier(4)
    ->Range(16, 65536)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_ReserveCommitOnly)
    ->Name("BM_ReserveCommitOnly/Auto")
    ->Setup(setup_auto)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK(BM_ReserveCopyCommit)
    ->Name("BM_ReserveCopyCommit/Auto")
    ->Setup(setup_auto)
    ->Teardown(teardown_ring)
    ->Arg(64)
    ->Arg(1024)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK(BM_ReserveCommitOnly)
    ->Name("BM_ReserveCommitOnly/CacheResident")
    ->Setup(setup_small_ring)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// The experiment that changed Publisher::commit, kept for comparison: the
// seqlock steps W5..W8 with each descriptor word built from the staged
// fields with loads of the widths they were stored with. commit() used to
// std::bit_cast the staged descriptor, and those 16-byte loads of bytes just
// written by narrower stores could not be forwarded from the store buffer (a
// stall of roughly ten cycles each on this CPU); commit() now builds its
// words the same way, so this and BM_ReserveCommitOnly should measure alike
// (docs/performance.md).
void commit_with_field_loads(const evring::MappedRing& ring, std::uint32_t* doorbell, bool light,
                             const evring::Reservation& r) {
    const evring::EventDescriptor& d = r.descriptor();
    std::uint64_t* slot = ring.descriptors()[(d.seqno - 1) & ring.descriptor_mask()].words;
    evring::shared::store_relaxed(slot[0], 0);  // W5
    evring::shared::fence_release();            // W6
    const std::uint64_t word1 = std::uint64_t{d.event_type} | std::uint64_t{d.reserved} << 16 |
                                std::uint64_t{d.payload_size} << 32;
    const std::uint64_t words[8] = {0, word1, d.record_epoch_nanos, d.payload_buf_offset,
                                    d.content_ext[0], d.content_ext[1], d.content_ext[2], d.content_ext[3]};
    for (int i = 1; i < 8; ++i) evring::shared::store_relaxed(slot[i], words[i]);  // W7
    evring::shared::store_release(slot[0], d.seqno);                              // W8
    if (doorbell != nullptr) evring::ring_doorbell(doorbell, light);  // as Publisher::commit
}

void BM_ReserveCommitFieldLoads(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    const evring::MappedRing& ring = g_ring->writer();
    std::uint32_t* doorbell = evring::writer_doorbell_word(ring);
    const bool light = doorbell != nullptr && evring::register_doorbell_writer();
    for (auto _ : state) {
        evring::Reservation r = publisher.reserve(64);
        r.descriptor().event_type = 7;
        commit_with_field_loads(ring, doorbell, light, r);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ReserveCommitFieldLoads)->Setup(setup_ring)->Teardown(teardown_ring)->Threads(1)->UseRealTime();
BENCHMARK(BM_ReserveCommitFieldLoads)
    ->Name("BM_ReserveCommitFieldLoads/NoDoorbell")
    ->Setup(setup_ring_without_doorbell)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_ReserveCommitFieldLoads)
    ->Name("BM_ReserveCommitFieldLoads/Exclusive")
    ->Setup(setup_exclusive)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->UseRealTime();
BENCHMARK(BM_ReserveCommitFieldLoads)
    ->Name("BM_ReserveCommitFieldLoads/Exclusive/NoDoorbell")
    ->Setup(setup_exclusive_without_doorbell)
    ->Teardown(teardown_ring)
    ->Threads(1)
    ->UseRealTime();

struct Sample {
    std::uint64_t a, b, c, d, e, f, g, h;  // 64 bytes
};

void BM_TypedRecord64(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    Sample sample{1, 2, 3, 4, 5, 6, 7, 8};
    for (auto _ : state) {
        ++sample.a;
        benchmark::DoNotOptimize(evring::publish(publisher, 7, {sample.a, 0, 0, 0}, sample));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TypedRecord64)->Setup(setup_ring)->Teardown(teardown_ring)->Threads(1)->Threads(2)->UseRealTime();

void BM_ReserveTyped64(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    std::uint64_t n = 0;
    for (auto _ : state) {
        auto event = evring::reserve_typed<Sample>(publisher, 7);
        event->a = ++n;
        event.flow(1) = n;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ReserveTyped64)->Setup(setup_ring)->Teardown(teardown_ring)->Threads(1)->UseRealTime();

// Batches of 16 events of 64 B (Publisher::publish_batch) by the default
// publisher, each event with its own flow tag: Array, one type's payloads
// back to back (typed publish_many's path); Events, BatchEvents. Items are
// events, so items/s compares with BM_ReserveCopyCommit's.
void BM_PublishBatch16(benchmark::State& state) {
    constexpr std::size_t kBatch = 16;
    alignas(64) static std::byte source[kBatch * 64];
    evring::Publisher& publisher = *g_publisher;
    std::array<std::uint64_t, 4> flows[kBatch] = {};
    evring::BatchEvent events[kBatch];
    for (std::size_t i = 0; i < kBatch; ++i) events[i] = {source + i * 64, {}, 64, 7};
    const bool array = state.range(0) == 1;
    std::uint64_t seq = 0;
    for (auto _ : state) {
        std::uint64_t first;
        if (array) {
            for (std::size_t i = 0; i < kBatch; ++i) flows[i][0] = seq + i;
            first = publisher.publish_batch(7, source, 64, kBatch, flows);
        } else {
            for (std::size_t i = 0; i < kBatch; ++i) events[i].content_ext[0] = seq + i;
            first = publisher.publish_batch(events);
        }
        benchmark::DoNotOptimize(first);
        seq += kBatch;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_PublishBatch16)->Name("BM_PublishBatch16/Array")->Arg(1)->Setup(setup_auto)->Teardown(teardown_ring)->UseRealTime();
BENCHMARK(BM_PublishBatch16)->Name("BM_PublishBatch16/Events")->Arg(0)->Setup(setup_auto)->Teardown(teardown_ring)->UseRealTime();

// The floor: the same stores into the same mapping, with no clock and no atomics.
void BM_FloorPlainStores64(benchmark::State& state) {
    const evring::MappedRing& ring = g_ring->writer();
    evring::DescriptorSlot* slots = ring.descriptors();
    std::byte* payload = ring.payload_buffer();
    const std::uint64_t dmask = ring.descriptor_mask();
    const std::uint64_t pmask = ring.payload_mask();
    alignas(64) static std::byte source[64];
    std::uint64_t seq = 0, offset = 0;
    for (auto _ : state) {
        ++seq;
        std::memcpy(payload + (offset & pmask), source, 64);
        evring::DescriptorSlot& slot = slots[(seq - 1) & dmask];
        slot.words[1] = 7;
        slot.words[2] = 0;
        slot.words[3] = offset;
        slot.words[0] = seq;
        offset += 64;
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_FloorPlainStores64)->Setup(setup_ring)->Teardown(teardown_ring)->UseRealTime();
BENCHMARK(BM_FloorPlainStores64)
    ->Name("BM_FloorPlainStores64/CacheResident")
    ->Setup(setup_small_ring)
    ->Teardown(teardown_ring)
    ->UseRealTime();

}  // namespace
