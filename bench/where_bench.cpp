// Micro-benchmarks of filter expressions (where.hpp): the cost per event of a
// compiled --where over events already in memory (a follow loop's view), for
// a descriptor-only test, a payload-field test and a mix, against no test.
// The events: the built-in Monad schema's TXN_HEADER_START and TXN_LOG
// payloads, alternating, so half the events pass `type == TXN_HEADER_START`.
//
//     build/release/bench/evring-where-bench --benchmark_min_time=0.2
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "evring/schema/schema_builtin.hpp"
#include "evring/query/where.hpp"

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

void BM_NoFilter(benchmark::State& state) { run(state, nullptr); }
void BM_DescriptorOnly(benchmark::State& state) { run(state, "type == TXN_HEADER_START && txn != 3"); }
void BM_PayloadField(benchmark::State& state) { run(state, "type == TXN_HEADER_START && txn_header.gas_limit > 1000000"); }
void BM_PayloadFieldNoTypeTest(benchmark::State& state) { run(state, "txn_header.gas_limit > 1000000"); }
void BM_InSetAndOr(benchmark::State& state) {
    run(state, "txn in {1, 5, 9, 13} || (type == TXN_LOG && !(topic_count == 0))");
}
BENCHMARK(BM_NoFilter);
BENCHMARK(BM_DescriptorOnly);
BENCHMARK(BM_PayloadField);
BENCHMARK(BM_PayloadFieldNoTypeTest);
BENCHMARK(BM_InSetAndOr);

}  // namespace

BENCHMARK_MAIN();
