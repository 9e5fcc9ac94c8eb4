// evring-paced-producer: writes the demo feed (schemas/demo.toml) into a new
// ring at an exact rate, for throughput measurements of a reader that must
// keep up (scripts/bench-where-rate: `watch --where ... --format jsonl` at
// 1 M events/s, issue 21).
//
//   evring-paced-producer <ring-config> --rate N --count N [--tick-us N]
//
// The command line is examples/producer's (producer_options.hpp), with
// --rate and --count required.
//
// examples/producer's --rate is an upper bound: a producer held up for more
// than 10 ms restarts its schedule rather than burst, which on a loaded
// machine gives far less than the rate asked. Here the schedule is fixed at
// the start: at every clock tick (--tick-us, default 100 µs, slept to on an
// absolute deadline) it publishes in one burst every event due by then, so a
// producer held up catches up, and over the run the rate is exact as long as
// it gets the CPU for it. It says how far behind the schedule it ever was
// (max_lag_ms), so a run where it was not held can be told apart.
//
// Prints one JSON object on stdout when done: asked_rate, events,
// elapsed_s, achieved_rate, max_lag_ms, ticks. The ring is removed on exit
// (a reader that has it open reads on to its end).
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>

#include "demo_events.hpp"
#include "producer_options.hpp"
#include "evring/config.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/typed_publish.hpp"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

std::uint64_t monotonic_nanos() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void sleep_until(std::uint64_t nanos) {
    timespec at{static_cast<time_t>(nanos / 1'000'000'000u), static_cast<long>(nanos % 1'000'000'000u)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR && !g_stop.load()) {
    }
}

// Events due in `nanos` at `rate`, and the time of event `n`, without
// overflow (whole seconds and the rest apart).
std::uint64_t events_in(std::uint64_t nanos, std::uint64_t rate) {
    return nanos / 1'000'000'000u * rate + nanos % 1'000'000'000u * rate / 1'000'000'000u;
}
std::uint64_t nanos_of(std::uint64_t n, std::uint64_t rate) {
    return n / rate * 1'000'000'000u + n % rate * 1'000'000'000u / rate;
}

// One demo event, numbered `n`: mostly quotes, one in sixteen a trade.
void publish_one(evring::Publisher& publisher, std::uint64_t n) {
    const std::size_t symbol = n % demo::kSymbols.size();
    demo::Tick tick{};
    tick.counter = n;
    tick.price = static_cast<std::int64_t>(1'000'000 + (n * 7919) % 50'000);
    tick.quantity = static_cast<std::uint32_t>(1 + (n * 104729) % 1000);
    demo::set_name(tick, demo::kSymbols[symbol]);
    tick.checksum = demo::tick_checksum(tick);
    const demo::Flow flow{.symbol = symbol + 1, .venue = 1 + n % 3};
    if (n % 16 == 0) demo::publish_trade(publisher, tick, flow);
    else demo::publish_quote(publisher, tick, flow);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Writes the demo feed into a new ring at an exact rate."};
    ProducerOptions args;
    add_producer_options(app, args);
    std::uint64_t tick_us = 100;
    const CLI::Range positive(std::uint64_t{1}, ~std::uint64_t{0});
    app.get_option("--rate")->description("exactly N events per second, on a schedule fixed at the start")->required()
        ->check(positive);
    app.get_option("--count")->description("N events, then exit")->required()->check(positive);
    app.add_option("--tick-us", tick_us, "publish what is due every N microseconds (default 100)")->check(positive);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help: 0; a usage error: 2
    }
    auto config = evring::parse_ring_config(args.ring);
    if (!config) {
        std::fprintf(stderr, "evring-paced-producer: %s\n", config.error().message().c_str());
        return 2;
    }
    const std::uint64_t rate = args.rate, count = args.count, tick_ns = tick_us * 1000;
    auto writer = evring::RingWriter::create({*config, demo::ring_content()}, {});
    if (!writer) {
        std::fprintf(stderr, "evring-paced-producer: %s\n", writer.error().message().c_str());
        return 1;
    }
    ::signal(SIGINT, on_signal);
    ::signal(SIGTERM, on_signal);
    // One thread holds the ring: reservations skip the atomic read-modify-writes.
    evring::Publisher publisher(writer->ring(), evring::WriterSharing::Exclusive);

    const std::uint64_t start = monotonic_nanos();
    std::uint64_t published = 0, ticks = 0, max_lag = 0;
    while (published < count && !g_stop.load(std::memory_order_relaxed)) {
        const std::uint64_t now = monotonic_nanos();
        // Due by now on the fixed schedule: event i at start + i / rate.
        const std::uint64_t due = std::min<std::uint64_t>(count, events_in(now - start, rate) + 1);
        if (due > published) max_lag = std::max(max_lag, now - (start + nanos_of(published, rate)));  // the burst's oldest
        for (; published < due; ++published) publish_one(publisher, published);
        ++ticks;
        if (published < count) sleep_until(start + ticks * tick_ns);
    }
    const double elapsed_s = static_cast<double>(monotonic_nanos() - start) / 1e9;
    std::printf("{\"asked_rate\":%llu,\"events\":%llu,\"elapsed_s\":%.3f,\"achieved_rate\":%.0f,"
                "\"max_lag_ms\":%.3f,\"ticks\":%llu}\n",
                static_cast<unsigned long long>(rate), static_cast<unsigned long long>(published), elapsed_s,
                static_cast<double>(published) / elapsed_s, static_cast<double>(max_lag) / 1e6,
                static_cast<unsigned long long>(ticks));
    return published == count ? 0 : 1;
}
