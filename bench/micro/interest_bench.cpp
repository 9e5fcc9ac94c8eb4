// Micro-benchmarks of interest (docs/interest.md): today's typed publish of a
// 48-byte struct (evring::publish), the same behind the interest check a
// generated publish helper makes (publisher_wants with the type's constants:
// one relaxed load of the ring's word and a few register operations) when a
// reader wants the event, and the check alone when nobody does (the event is
// skipped). Same ring, same run: a cache-resident ring (2^12 descriptors,
// 1 MiB), exclusive writer, so the check is not hidden behind memory traffic.
// scripts/bench turns the three into interest_* keys of its JSON.
#include <memory>

#include <benchmark/benchmark.h>

#include "evring/ring/interest.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/schema/typed_publish.hpp"
#include "support/bench_ring.hpp"

namespace {

struct Tick {
    std::uint64_t counter;
    std::int64_t price;
    std::uint32_t quantity;
    std::uint64_t checksum;
    char name[16];
};
static_assert(sizeof(Tick) == 48);

// The constants a generated header has for a type with keyword bit 1 at level 2.
constexpr std::uint64_t kTickKeywords = 2;
constexpr unsigned kTickLevel = 2;

std::unique_ptr<evring::bench::ScratchRing> g_ring;
std::unique_ptr<evring::Publisher> g_publisher;

template <std::uint64_t Word>
void setup(const benchmark::State&) {
    g_ring = std::make_unique<evring::bench::ScratchRing>("/dev/shm", evring::bench::bench_params(12, 20));
    evring::shared::store_relaxed(evring::extension_in(&g_ring->writer().header())->interest, Word);
    g_publisher = std::make_unique<evring::Publisher>(g_ring->writer(), evring::WriterSharing::Exclusive);
}
void teardown(const benchmark::State&) {
    g_publisher.reset();
    g_ring.reset();
}

// A reader wants keyword bit 1 up to level 3: the tick is wanted.
constexpr std::uint64_t kWanting = evring::interest_word(2, 3);
// Readers want keyword bit 0 only: the tick is skipped.
constexpr std::uint64_t kNotWanting = evring::interest_word(1, 15);

enum class Check { None, Interest };

template <Check How>
void BM_InterestTick(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    Tick tick{1, 1000, 5, 0, {'A', 'C', 'M', 'E'}};
    for (auto _ : state) {
        ++tick.counter;
        if constexpr (How == Check::Interest) {
            if (!evring::publisher_wants(publisher, kTickKeywords, kTickLevel)) {
                benchmark::DoNotOptimize(tick);
                continue;
            }
        }
        benchmark::DoNotOptimize(evring::publish(publisher, 2, {tick.counter, 0, 0, 0}, tick));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_InterestTick<Check::None>)
    ->Name("BM_InterestTick/TypedPublish")->Setup(setup<kWanting>)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_InterestTick<Check::Interest>)
    ->Name("BM_InterestTick/CheckedWanted")->Setup(setup<kWanting>)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_InterestTick<Check::Interest>)
    ->Name("BM_InterestTick/Skipped")->Setup(setup<kNotWanting>)->Teardown(teardown)->UseRealTime();

}  // namespace
