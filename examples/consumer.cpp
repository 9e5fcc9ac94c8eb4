// consumer: reads the producer's market feed from another process.
//
//   consumer <ring-config> [--from latest|oldest] [--symbol NAME] [--trades-only]
//            [--count N] [--print N] [--generic]
//
// Built on the library's follow loop (evring/source/follow.hpp): it filters on flow
// tags (the symbol) and event types without touching the payloads of events
// it skips, verifies every payload it reads, counts lost events exactly, and
// stops at --count, on Ctrl-C, or once the writer has exited and everything
// it wrote has been read. When it has caught up it sleeps on the ring's
// doorbell, so an idle consumer costs no CPU (tests/cli/cli_test.sh,
// consumer_is_idle_when_no_events_come, measures it).
//
// Decoding, two ways: by default with the header the build generates from
// schemas/demo.toml (demo::unpack into demo::Tick, demo::event_name, the
// schema hash checked against the ring's); with --generic, the events it prints are decoded by
// the library's generic decoder with the schema the ring embeds, found by
// evring::resolve_schema as `evring watch` finds it (no generated code).
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "demo_events.hpp"
#include "evring/config.hpp"
#include "evring/source/follow.hpp"
#include "evring/ring/ring.hpp"
#include "evring/schema/schema_render.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

struct Tally {
    std::uint64_t matched = 0;   // passed the filter
    std::uint64_t verified = 0;  // payload copied and checksum right
    std::uint64_t expired = 0;   // payload overwritten before it could be read
    std::uint64_t bad = 0;       // payload copied intact but wrong: a bug
};

// The tick of a QUOTE or TRADE through the generated header's unpack, which
// checks the event type and the payload's layout; nullopt for anything else.
std::optional<demo::Tick> tick_of(std::uint16_t type, std::span<const std::byte> payload) {
    if (auto trade = demo::unpack<demo::EventType::TRADE>(type, payload)) return trade.payload;
    if (auto quote = demo::unpack<demo::EventType::QUOTE>(type, payload)) return quote.payload;
    return std::nullopt;
}

// Checks each tick the loop hands over (its payload already copied and
// checked against the writer's window by the event source).
class TickChecker final : public evring::FollowSink {
public:
    // `generic`: print with this schema's generic decoder instead of the generated struct.
    TickChecker(Tally& tally, std::uint64_t print_limit, const evring::Schema* generic)
        : tally_(tally), print_limit_(print_limit), generic_(generic) {}

    bool event(const evring::SourceEvent& event) override {
        ++tally_.matched;
        if (event.payload_state == evring::PayloadState::Expired) {
            ++tally_.expired;
            return true;
        }
        const evring::EventDescriptor& d = event.descriptor;
        const std::optional<demo::Tick> unpacked =
            event.payload_state == evring::PayloadState::Ok ? tick_of(d.event_type, event.payload) : std::nullopt;
        if (!unpacked) {
            ++tally_.bad;
            return true;
        }
        const demo::Tick& tick = *unpacked;
        const std::string_view name = demo::name_of(tick);
        if (tick.checksum != demo::tick_checksum(tick)) {
            ++tally_.bad;
            return true;
        }
        ++tally_.verified;
        if (tally_.verified > print_limit_) return true;
        if (generic_ != nullptr) {
            line_.clear();  // reused: no allocation once it has grown
            const evring::DecodeError e = evring::append_event_text(*generic_, d.event_type, event.payload, line_);
            if (!e.ok()) line_ = evring::describe_decode_error(*generic_, e);
            std::printf("%llu %s\n", static_cast<unsigned long long>(d.seqno), line_.c_str());
            return true;
        }
        const std::string_view type = demo::event_name(static_cast<demo::EventType>(d.event_type));
        std::printf("%llu %.*s %.*s %u @ %.4f (venue %llu)\n", static_cast<unsigned long long>(d.seqno),
                    static_cast<int>(type.size()), type.data(), static_cast<int>(name.size()), name.data(),
                    tick.quantity, static_cast<double>(tick.price) / 1e4,
                    static_cast<unsigned long long>(d.content_ext[demo::kFlowVenue]));
        return true;
    }
    bool gap(const evring::SourceGap& gap) override {
        std::fprintf(stderr, "consumer: lost %llu events (seqno %llu..): %.*s\n",
                     static_cast<unsigned long long>(gap.count), static_cast<unsigned long long>(gap.first_seqno),
                     static_cast<int>(evring::describe(gap.reason).size()), evring::describe(gap.reason).data());
        return true;
    }
    void notice(std::string_view text) override {
        std::fprintf(stderr, "consumer: %.*s\n", static_cast<int>(text.size()), text.data());
    }
    bool idle() override {
        std::fflush(stdout);
        return true;
    }

private:
    Tally& tally_;
    std::uint64_t print_limit_;
    const evring::Schema* generic_;
    std::string line_;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Reads the producer's market feed from an event ring."};
    std::string config_text, from = "latest", symbol;
    bool trades_only = false, generic = false;
    std::uint64_t count = 0, print_limit = 0;
    double wait_seconds = 0;
    app.add_option("ring", config_text, "<name-or-path>[:...] as given to the producer")->required();
    app.add_option("--from", from, "where to start: latest or oldest")->check(CLI::IsMember({"latest", "oldest"}));
    app.add_option("--symbol", symbol, "only this symbol (a flow-tag filter)");
    app.add_flag("--trades-only", trades_only, "only trades (an event-type filter)");
    app.add_option("--count", count, "stop after N matching events");
    app.add_option("--print", print_limit, "print the first N matching events");
    app.add_flag("--generic", generic, "print with the generic decoder and the ring's embedded schema");
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

    auto source = evring::open_source(config->name_or_path, {});
    for (double waited = 0; !source && waited < wait_seconds; waited += 0.05) {
        timespec pause{0, 50'000'000};
        ::nanosleep(&pause, nullptr);
        source = evring::open_source(config->name_or_path, {});
    }
    if (!source) {
        std::fprintf(stderr, "consumer: %s\n", source.error().message().c_str());
        return 1;
    }
    const evring::MappedRing* ring = (*source)->ring();
    if (ring == nullptr) {
        std::fprintf(stderr, "consumer: '%s' is not a ring\n", config->name_or_path.c_str());
        return 1;
    }
    if (auto s = ring->check_content_type(demo::kContentType, demo::kSchemaHash); !s) {
        std::fprintf(stderr, "consumer: %s\n", s.error().message().c_str());
        return 1;
    }
    std::optional<evring::Schema> schema;
    if (generic) {
        auto found = evring::resolve_schema(**source);  // the ring embeds schemas/demo.toml
        if (!found || !found->schema) {
            std::fprintf(stderr, "consumer: no schema for '%s': %s\n", config->name_or_path.c_str(),
                         found ? found->warning.c_str() : found.error().message().c_str());
            return 1;
        }
        schema = std::move(found->schema);
    }
    ::signal(SIGINT, on_signal);
    ::signal(SIGTERM, on_signal);

    evring::FollowOptions options;
    options.start = from == "oldest" ? evring::Position::oldest() : evring::Position::latest();
    options.filter = filter;  // decided from the descriptor alone
    options.count = count;
    options.payloads = evring::PayloadRead::Copy;
    options.stop_flag = &g_stop;
    Tally tally;
    TickChecker checker(tally, print_limit, schema ? &*schema : nullptr);
    auto result = evring::follow(*source, options, checker);
    if (!result) {
        std::fprintf(stderr, "consumer: %s\n", result.error().message().c_str());
        return 1;
    }
    const evring::SourceCounters& c = result->counters;
    std::printf("consumer: %llu events received, %llu matched the filter, %llu verified, "
                "%llu lost in %llu gaps, %llu expired, %llu bad\n",
                static_cast<unsigned long long>(c.events), static_cast<unsigned long long>(tally.matched),
                static_cast<unsigned long long>(tally.verified), static_cast<unsigned long long>(c.lost),
                static_cast<unsigned long long>(c.gaps), static_cast<unsigned long long>(tally.expired),
                static_cast<unsigned long long>(tally.bad));
    return tally.bad == 0 ? 0 : 1;
}
