// Micro-benchmarks of filter expressions (where.hpp): the cost per event of a
// compiled --where over events already in memory (a follow loop's view), for
// a descriptor-only test, a payload-field test and a mix, against no test.
// The events: the built-in Monad schema's TXN_HEADER_START and TXN_LOG
// payloads, alternating, so half the events pass `type == TXN_HEADER_START`.
// BM_PayloadFieldLazy runs the follow loop's way: descriptors only, the
// predicate copying the payloads it needs (copies_per_event: 0.5, the
// headers; the descriptor rules the logs out before any copy).
// scripts/bench prints and stores where_*_ns_over_read: each figure less
// BM_NoFilter's (a plain pass over the same events).
//
//     build/release/bench/evring-where-bench --benchmark_min_time=0.2
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "schema/schema_builtin.hpp"
#include "query/where.hpp"

namespace {

struct Events {
    std::vector<std::vector<std::byte>> payloads;
    std::vector<evring::SourceEvent> events;
};

const Events& events() {
    static const Events all = [] {
        Events e;
        const evring::Schema schema = evring::builtin_schema("monad-exec-v1").value();
        const evring::SchemaEvent& header = *schema.event("TXN_HEADER_START");
        const evring::SchemaEvent& log = *schema.event("TXN_LOG");
        const auto gas = schema.find_field(header, "txn_header.gas_limit")->offset;
        constexpr std::size_t kEvents = 4096;
        e.payloads.resize(kEvents);
        for (std::size_t i = 0; i < kEvents; ++i) {
            const bool is_header = i % 2 == 0;
            auto& p = e.payloads[i];
            p.resize(schema.fixed_size(is_header ? header : log));
            if (is_header) {
                const std::uint64_t limit = (i % 4 == 0) ? 21000 : 3000000;
                std::memcpy(p.data() + gas, &limit, 8);
            }
        }
        for (std::size_t i = 0; i < kEvents; ++i) {
            evring::SourceEvent ev;
            ev.descriptor.seqno = i + 1;
            ev.descriptor.event_type = (i % 2 == 0) ? header.number : log.number;
            ev.descriptor.payload_size = static_cast<std::uint32_t>(e.payloads[i].size());
            ev.descriptor.content_ext[1] = i / 8 + 1;
            ev.payload_state = evring::PayloadState::Ok;
            ev.payload = e.payloads[i];
            e.events.push_back(ev);
        }
        return e;
    }();
    return all;
}

void run(benchmark::State& state, const char* text) {
    const evring::Schema schema = evring::builtin_schema("monad-exec-v1").value();
    std::unique_ptr<evring::EventPredicate> where;
    if (text != nullptr) where = std::move(evring::compile_where(text, schema).value());
    const auto& all = events().events;
    std::size_t kept = 0;
    for (auto _ : state) {
        for (const auto& e : all) kept += where ? where->matches(e) : (e.descriptor.seqno != 0);
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(kept);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * all.size()));
    state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(state.iterations() * all.size()),
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// As the follow loop runs it: events come with descriptors only, and the
// predicate loads (copies, as from a ring) the payloads it needs.
struct CopyLoader final : evring::PayloadLoader {
    std::vector<std::byte> scratch = std::vector<std::byte>(4096);
    std::size_t copies = 0;
    void load(evring::SourceEvent& e) noexcept override {
        const std::size_t i = static_cast<std::size_t>(e.descriptor.seqno - 1);
        const auto& p = events().payloads[i];
        std::memcpy(scratch.data(), p.data(), p.size());
        e.payload = {scratch.data(), p.size()};
        e.payload_state = evring::PayloadState::Ok;
        ++copies;
    }
};

void run_lazy(benchmark::State& state, const char* text) {
    const evring::Schema schema = evring::builtin_schema("monad-exec-v1").value();
    auto where = std::move(evring::compile_where(text, schema).value());
    std::vector<evring::SourceEvent> all = events().events;
    for (auto& e : all) e.payload_state = evring::PayloadState::NotRead, e.payload = {};
    CopyLoader loader;
    std::size_t kept = 0;
    for (auto _ : state) {
        for (const auto& e : all) {
            evring::SourceEvent copy = e;
            kept += where->matches(copy, loader);
        }
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(kept);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * all.size()));
    state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(state.iterations() * all.size()),
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["copies_per_event"] =
        static_cast<double>(loader.copies) / static_cast<double>(state.iterations() * all.size());
}

void BM_NoFilter(benchmark::State& state) { run(state, nullptr); }
void BM_DescriptorOnly(benchmark::State& state) { run(state, "type == TXN_HEADER_START && txn != 3"); }
void BM_PayloadField(benchmark::State& state) { run(state, "type == TXN_HEADER_START && txn_header.gas_limit > 1000000"); }
void BM_PayloadFieldNoTypeTest(benchmark::State& state) { run(state, "txn_header.gas_limit > 1000000"); }
void BM_InSetAndOr(benchmark::State& state) {
    run(state, "txn in {1, 5, 9, 13} || (type == TXN_LOG && !(topic_count == 0))");
}
void BM_PayloadFieldLazy(benchmark::State& state) {
    run_lazy(state, "type == TXN_HEADER_START && txn_header.gas_limit > 1000000");
}
BENCHMARK(BM_NoFilter);
BENCHMARK(BM_PayloadFieldLazy);
BENCHMARK(BM_DescriptorOnly);
BENCHMARK(BM_PayloadField);
BENCHMARK(BM_PayloadFieldNoTypeTest);
BENCHMARK(BM_InSetAndOr);

}  // namespace

BENCHMARK_MAIN();
