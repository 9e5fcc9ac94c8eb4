// Micro-benchmarks of the wall clock: evring's TSC clock against
// clock_gettime(CLOCK_REALTIME) and the bare counter read, plus its error
// against CLOCK_REALTIME reported as counters (err_p50_ns, err_p99_ns, err_max_ns).
#include <algorithm>
#include <vector>

#include <benchmark/benchmark.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "evring/clock.hpp"

namespace {

void BM_WallClockNanos(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(evring::wall_clock_nanos());
    state.SetLabel(evring::to_string(evring::wall_clock_source()));
}
BENCHMARK(BM_WallClockNanos);

void BM_ClockGettimeRealtime(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(evring::realtime_nanos());
}
BENCHMARK(BM_ClockGettimeRealtime);

void BM_Rdtsc(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(evring::detail::read_tsc());
}
BENCHMARK(BM_Rdtsc);

#if defined(__x86_64__)
// The other ways to read the counter, for the choice clock.hpp made (issue
// 25): rdtscp waits for earlier instructions to finish, lfence + rdtsc for
// earlier ones to issue; both cost more than rdtsc and order nothing a
// timestamp taken at reserve needs.
void BM_Rdtscp(benchmark::State& state) {
    unsigned aux = 0;
    for (auto _ : state) benchmark::DoNotOptimize(__rdtscp(&aux));
}
BENCHMARK(BM_Rdtscp);

void BM_LfenceRdtsc(benchmark::State& state) {
    for (auto _ : state) {
        _mm_lfence();
        benchmark::DoNotOptimize(__rdtsc());
    }
}
BENCHMARK(BM_LfenceRdtsc);
#endif

// Each iteration: CLOCK_REALTIME, evring, CLOCK_REALTIME. The error is how far
// evring's value lies outside that bracket (0 inside), so preemption can only
// hide error, never invent it; the signed offset is evring minus the midpoint.
void BM_ClockErrorVsRealtime(benchmark::State& state) {
    std::vector<double> errors;
    std::vector<double> offsets;
    errors.reserve(1 << 20);
    offsets.reserve(1 << 20);
    for (auto _ : state) {
        const std::uint64_t before = evring::realtime_nanos();
        const std::uint64_t value = evring::wall_clock_nanos();
        const std::uint64_t after = evring::realtime_nanos();
        const double outside = value < before ? double(before - value)
                               : value > after ? double(value - after)
                                               : 0.0;
        if (errors.size() < errors.capacity()) {
            errors.push_back(outside);
            offsets.push_back(double(value) - (double(before) + double(after)) / 2);
        }
    }
    if (errors.empty()) return;
    auto at = [](std::vector<double>& v, double q) {
        const auto k = static_cast<std::size_t>(q * double(v.size() - 1));
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
        return v[k];
    };
    state.counters["err_p50_ns"] = at(errors, 0.5);
    state.counters["err_p99_ns"] = at(errors, 0.99);
    state.counters["err_max_ns"] = *std::max_element(errors.begin(), errors.end());
    state.counters["offset_p50_ns"] = at(offsets, 0.5);
    state.SetLabel(evring::to_string(evring::wall_clock_source()));
}
BENCHMARK(BM_ClockErrorVsRealtime)->MinTime(2.0);

}  // namespace
