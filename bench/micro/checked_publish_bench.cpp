// Micro-benchmarks of a checked typed write against an unchecked one: what
// the C ABI's evring_writer_record and Python's Writer.record add per event
// when the ring has a schema (check_payload, schema_write_check.hpp) over a
// plain evring::publish, and what a generated header's checked paths add:
// publish_<event> (the struct's layout is static_asserted and its counts set
// from spans, plus the interest check) and publish_checked (bytes checked by
// check_payload_size, the rule compiled in as constants, then the interest
// check). scripts/bench turns the medians into checked_* keys. Payloads: schemas/demo.toml's 48-byte tick, and a
// payload with a trailing array (a 16-byte fixed part and 32 bytes after it).
// A cache-resident ring (2^12 descriptors, 1 MiB), exclusive writer, so the
// check is not hidden behind memory traffic.
#include <array>
#include <cstring>
#include <memory>

#include <benchmark/benchmark.h>

#include "evring/ring/publisher.hpp"
#include "evring/schema/schema.hpp"
#include "evring/schema/schema_decode.hpp"
#include "evring/schema/typed_publish.hpp"
#include "schema/schema_write_check.hpp"
#include "checked_bench_schema.hpp"  // generated from micro/checked_bench.toml
#include "support/bench_ring.hpp"

namespace {


using checked_bench::Tick;
using checked_bench::Note;

std::unique_ptr<evring::bench::ScratchRing> g_ring;
std::unique_ptr<evring::Publisher> g_publisher;
std::unique_ptr<evring::Schema> g_schema;
std::unique_ptr<evring::WriteRules> g_rules;

// What the C ABI and Python check (lib/bindings/writer_handle.cpp's refusal):
// the rules table first, the schema walk only when it cannot decide.
bool runtime_admits(std::uint16_t type, std::span<const std::byte> bytes) {
    return g_rules->admits(type, bytes) || evring::check_payload(*g_schema, type, bytes).ok();
}

// The check each variant makes: none, the C ABI's (table, then walk), the
// schema walk alone (what the C ABI did before the table: /CheckedWalk), or
// the generated header's compiled-in rule.
enum class Check { None, Schema, Walk, Generated };

template <Check How>
bool admitted(std::uint16_t type, std::span<const std::byte> bytes) {
    if constexpr (How == Check::Schema) return runtime_admits(type, bytes);
    if constexpr (How == Check::Walk) return evring::check_payload(*g_schema, type, bytes).ok();
    if constexpr (How == Check::Generated) return bool(checked_bench::check_payload_size(type, bytes));
    return true;
}

void setup(const benchmark::State&) {
    g_ring = std::make_unique<evring::bench::ScratchRing>("/dev/shm", evring::bench::bench_params(12, 20));
    g_publisher = std::make_unique<evring::Publisher>(g_ring->writer(), evring::WriterSharing::Exclusive);
    g_schema = std::make_unique<evring::Schema>(evring::Schema::parse_file(CHECKED_BENCH_SCHEMA).value());
    g_rules = std::make_unique<evring::WriteRules>(*g_schema);
}
void teardown(const benchmark::State&) {
    g_publisher.reset();
    g_ring.reset();
    g_schema.reset();
}

template <Check How>
void BM_PublishTick(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    Tick tick{1, 1000, 5, 0, {'A', 'C', 'M', 'E'}};
    benchmark::DoNotOptimize(&tick);  // the event lives in memory in every variant, as an
    for (auto _ : state) {            // application's does: only the check differs
        ++tick.counter;
        benchmark::ClobberMemory();
        if (!admitted<How>(2, std::as_bytes(std::span(&tick, 1)))) state.SkipWithError("refused");
        benchmark::DoNotOptimize(evring::publish(publisher, 2, {tick.counter, 0, 0, 0}, tick));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
// The generated header's typed helper: what a C++ application calls.
void BM_PublishTickGenerated(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    Tick tick{1, 1000, 5, 0, {'A', 'C', 'M', 'E'}};
    benchmark::DoNotOptimize(&tick);  // the event lives in memory in every variant, as an
    for (auto _ : state) {            // application's does: only the check differs
        ++tick.counter;
        benchmark::ClobberMemory();
        benchmark::DoNotOptimize(checked_bench::publish_tick(publisher, tick, {tick.counter, 0, 0, 0}));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PublishTick<Check::None>)->Name("BM_PublishTick/Unchecked")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishTickGenerated)->Name("BM_PublishTick/Generated")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishTick<Check::Schema>)->Name("BM_PublishTick/Checked")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishTick<Check::Walk>)->Name("BM_PublishTick/CheckedWalk")->Setup(setup)->Teardown(teardown)->UseRealTime();

// The C ABI's shape: the caller's bytes, checked, then copied in.

template <Check How>
void BM_PublishNoteBytes(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    alignas(16) std::array<std::byte, 48> bytes{};
    const Note note{1, 32};
    std::memcpy(bytes.data(), &note, sizeof note);
    for (auto _ : state) {
        if (!admitted<How>(3, bytes)) state.SkipWithError("refused");
        evring::Reservation r = publisher.reserve(bytes.size());
        r.descriptor().event_type = 3;
        std::memcpy(r.payload(), bytes.data(), bytes.size());
        publisher.commit(r);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
// The generated header's publish_checked: check_payload_size, interest, copy, commit.
void BM_PublishNoteBytesGenerated(benchmark::State& state) {
    evring::Publisher& publisher = *g_publisher;
    alignas(16) std::array<std::byte, 48> bytes{};
    const Note note{1, 32};
    std::memcpy(bytes.data(), &note, sizeof note);
    for (auto _ : state) {
        if (!checked_bench::publish_checked(publisher, 3, bytes)) state.SkipWithError("refused");
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PublishNoteBytesGenerated)
    ->Name("BM_PublishNoteBytes/PublishChecked")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishNoteBytes<Check::None>)->Name("BM_PublishNoteBytes/Unchecked")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishNoteBytes<Check::Schema>)->Name("BM_PublishNoteBytes/Checked")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishNoteBytes<Check::Walk>)->Name("BM_PublishNoteBytes/CheckedWalk")->Setup(setup)->Teardown(teardown)->UseRealTime();
BENCHMARK(BM_PublishNoteBytes<Check::Generated>)
    ->Name("BM_PublishNoteBytes/CheckedGenerated")->Setup(setup)->Teardown(teardown)->UseRealTime();

}  // namespace
