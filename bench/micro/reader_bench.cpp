// Micro-benchmarks of the read path on one thread: try_next over committed
// events, try_next + copy_payload across payload sizes, and flow-tag
// filtering. The ring is pre-filled, so these measure the reader's own cost
// with the data in the local cache hierarchy (cross-core figures come from
// the ipc harness).
#include <cstring>
#include <memory>

#include <benchmark/benchmark.h>

#include "evring/source/flow_filter.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/bench_ring.hpp"

namespace {

using evring::bench::ScratchRing;

constexpr std::uint64_t kMaxEvents = 1 << 14;  // fewer than the ring holds: no gaps
constexpr std::uint64_t kPayloadBuffer = std::uint64_t{1} << 28;

// As many events as fit in half the payload buffer, so none has expired.
constexpr std::uint64_t events_for(std::size_t payload_size) {
    const std::uint64_t fit = kPayloadBuffer / 2 / ((payload_size + 15) & ~std::size_t{15});
    return fit < kMaxEvents ? fit : kMaxEvents;
}

struct Filled {
    Filled(std::size_t payload_size)
        : ring("/dev/shm", evring::bench::bench_params(16, 28)),
          reader(evring::bench::map_ring(ring.path(), evring::Access::ReadOnly)) {
        evring::Publisher publisher(ring.writer());
        std::byte bytes[65536] = {};
        for (std::uint64_t i = 0; i < events_for(payload_size); ++i) {
            evring::Reservation r = publisher.reserve(payload_size);
            r.descriptor().event_type = static_cast<std::uint16_t>(i % 4);
            r.descriptor().content_ext[1] = i % 16;
            std::memcpy(r.payload(), bytes, payload_size);
            publisher.commit(r);
        }
    }
    ScratchRing ring;
    evring::MappedRing reader;
};

void BM_TryNext(benchmark::State& state) {
    Filled filled(64);
    evring::Iterator it(filled.reader);
    evring::EventDescriptor event{};
    it.seek(1);
    for (auto _ : state) {
        if (it.try_next(event) != evring::NextResult::Success) it.seek(1);
        benchmark::DoNotOptimize(event);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TryNext);

void BM_TryNextCopyPayload(benchmark::State& state) {
    const auto size = static_cast<std::size_t>(state.range(0));
    Filled filled(size);
    evring::Iterator it(filled.reader);
    evring::EventDescriptor event{};
    alignas(64) static std::byte out[65536];
    it.seek(1);
    for (auto _ : state) {
        if (it.try_next(event) != evring::NextResult::Success) {
            it.seek(1);
            continue;
        }
        benchmark::DoNotOptimize(evring::copy_payload(filled.reader, event, out, sizeof out));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TryNextCopyPayload)->RangeMultiplier(4)->Range(16, 65536);

void BM_TryNextFlowFilter(benchmark::State& state) {
    Filled filled(64);
    evring::Iterator it(filled.reader);
    evring::FlowFilter filter;
    filter.types.add(2);
    filter.require_flow(1, 6);
    evring::EventDescriptor event{};
    std::uint64_t matched = 0;
    it.seek(1);
    for (auto _ : state) {
        if (it.try_next(event) != evring::NextResult::Success) {
            it.seek(1);
            continue;
        }
        matched += filter.matches(event) ? 1 : 0;
    }
    benchmark::DoNotOptimize(matched);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_TryNextFlowFilter);

}  // namespace
