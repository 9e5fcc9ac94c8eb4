// consumer: reads the producer's market feed from another process.
//
//   consumer <ring-config> [--from latest|oldest] [--symbol NAME] [--trades-only]
//            [--count N] [--print N]
//
// Filters on flow tags (the symbol) and event types without touching the
// payloads of events it skips, verifies every payload it reads, counts lost
// events exactly, and stops at --count, on Ctrl-C, or once the writer has
// exited and everything it wrote has been read.
#include <poll.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include <CLI/CLI.hpp>

#include "demo_events.hpp"
#include "evring/ring_reader.hpp"
#include "evring/flow_filter.hpp"
#include "evring/iterator.hpp"
#include "evring/payload.hpp"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

struct Tally {
    std::uint64_t received = 0;  // events read, before filtering
    std::uint64_t matched = 0;   // passed the filter
    std::uint64_t verified = 0;  // payload copied and checksum right
    std::uint64_t expired = 0;   // payload overwritten before it could be read
    std::uint64_t bad = 0;       // payload copied intact but wrong: a bug
    std::uint64_t gaps = 0;
};

bool writer_gone(const evring::RingReader& reader) {
    if (int fd = reader.writer_exit_fd(); fd >= 0) {
        pollfd p{fd, POLLIN, 0};
        return ::poll(&p, 1, 0) > 0;
    }
    return !reader.writer_alive();
}

void check_tick(const evring::MappedRing& ring, const evring::EventDescriptor& event, Tally& tally,
                std::uint64_t print_limit) {
    alignas(16) unsigned char buffer[sizeof(demo::Tick) + 64];
    const auto result = evring::copy_payload(ring, event, buffer, sizeof buffer);
    if (result == evring::PayloadResult::Expired) {
        ++tally.expired;
        return;
    }
    demo::Tick tick{};
    if (result != evring::PayloadResult::Ok || event.payload_size < sizeof tick) {
        ++tally.bad;
        return;
    }
    std::memcpy(&tick, buffer, sizeof tick);
    const std::string_view name(reinterpret_cast<const char*>(buffer) + sizeof tick,
                                event.payload_size - sizeof tick);
    if (tick.name_length != name.size() || tick.checksum != demo::tick_checksum(tick, name)) {
        ++tally.bad;
        return;
    }
    ++tally.verified;
    if (tally.verified <= print_limit)
        std::printf("%llu %s %.*s %u @ %.4f (venue %llu)\n",
                    static_cast<unsigned long long>(event.seqno),
                    event.event_type == demo::kTrade ? "TRADE" : "quote", static_cast<int>(name.size()),
                    name.data(), tick.quantity, static_cast<double>(tick.price) / 1e4,
                    static_cast<unsigned long long>(event.content_ext[demo::kFlowVenue]));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Reads the producer's market feed from an event ring."};
    std::string config_text, from = "latest", symbol;
    bool trades_only = false;
    std::uint64_t count = 0, print_limit = 0;
    double wait_seconds = 0;
    app.add_option("ring", config_text, "<name-or-path>[:...] as given to the producer")->required();
    app.add_option("--from", from, "where to start: latest or oldest")->check(CLI::IsMember({"latest", "oldest"}));
    app.add_option("--symbol", symbol, "only this symbol (a flow-tag filter)");
    app.add_flag("--trades-only", trades_only, "only trades (an event-type filter)");
    app.add_option("--count", count, "stop after N matching events");
    app.add_option("--print", print_limit, "print the first N matching events");
    app.add_option("--wait", wait_seconds, "wait up to this many seconds for the ring to appear");
    CLI11_PARSE(app, argc, argv);

    auto config = evring::parse_ring_config(config_text);
    if (!config) {
        std::fprintf(stderr, "consumer: %s\n", config.error().message().c_str());
        return 2;
    }
    evring::FlowFilter filter;
    if (!symbol.empty()) {
        std::size_t index = 0;
        while (index < demo::kSymbols.size() && demo::kSymbols[index] != symbol) ++index;
        if (index == demo::kSymbols.size()) {
            std::fprintf(stderr, "consumer: unknown symbol '%s' (known: ACME GLOBEX INITECH UMBRELLA)\n",
                         symbol.c_str());
            return 2;
        }
        filter.require_flow(demo::kFlowSymbol, index + 1);
    }
    if (trades_only) filter.types.add(demo::kTrade);

    auto reader = evring::RingReader::open(config->name_or_path);
    for (double waited = 0; !reader && waited < wait_seconds; waited += 0.05) {
        timespec pause{0, 50'000'000};
        ::nanosleep(&pause, nullptr);
        reader = evring::RingReader::open(config->name_or_path);
    }
    if (!reader) {
        std::fprintf(stderr, "consumer: %s\n", reader.error().message().c_str());
        return 1;
    }
    const evring::MappedRing& ring = reader->ring();
    if (auto s = ring.check_content_type(demo::kContentType, demo::kSchemaHash); !s) {
        std::fprintf(stderr, "consumer: %s\n", s.error().message().c_str());
        return 1;
    }
    ::signal(SIGINT, on_signal);
    ::signal(SIGTERM, on_signal);

    evring::Iterator it(ring);
    if (from == "oldest") it.seek(it.oldest_seqno());
    Tally tally;
    evring::EventDescriptor event{};
    unsigned idle_polls = 0;
    while (!g_stop.load(std::memory_order_relaxed) && (count == 0 || tally.matched < count)) {
        switch (it.try_next(event)) {
        case evring::NextResult::Success:
            idle_polls = 0;
            ++tally.received;
            if (!filter.matches(event)) continue;  // decided from the descriptor alone
            ++tally.matched;
            check_tick(ring, event, tally, print_limit);
            continue;
        case evring::NextResult::Gap:
            ++tally.gaps;
            std::fprintf(stderr, "consumer: fell behind, lost %llu events\n",
                         static_cast<unsigned long long>(it.last_gap_lost()));
            continue;
        case evring::NextResult::Abandoned:
            std::fprintf(stderr, "consumer: event %llu was reserved but never committed (writer died?)\n",
                         static_cast<unsigned long long>(it.last_abandoned_seqno()));
            continue;
        case evring::NextResult::NotReady:
            break;
        }
        // Nothing new: spin briefly, then sleep a little; every ~100 polls
        // see whether the writer is still there.
        if (++idle_polls < 256) continue;
        if (idle_polls % 100 == 0 && writer_gone(*reader) && it.next_seqno() > it.newest_seqno()) break;
        timespec pause{0, 100'000};
        ::nanosleep(&pause, nullptr);
    }
    std::printf("consumer: %llu events received, %llu matched the filter, %llu verified, "
                "%llu lost in %llu gaps, %llu expired, %llu bad\n",
                static_cast<unsigned long long>(tally.received), static_cast<unsigned long long>(tally.matched),
                static_cast<unsigned long long>(tally.verified), static_cast<unsigned long long>(it.total_lost()),
                static_cast<unsigned long long>(tally.gaps), static_cast<unsigned long long>(tally.expired),
                static_cast<unsigned long long>(tally.bad));
    return tally.bad == 0 ? 0 : 1;
}
