// evring readers --named: the named readers' positions (docs/named-readers.md),
// with their lag when the ring they read is there.
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "cursor/named_position.hpp"
#include "open.hpp"
#include "ops/ops_cmd.hpp"
#include "output/escape.hpp"
#include "output/json.hpp"
#include "output/output.hpp"

namespace evring::cli {
namespace {

struct Lag {
    std::string state;  // "present", "new instance", "gone"
    std::optional<std::uint64_t> events;
};

// The ring's newest event, compared with the reader's position: only for the
// instance the position is of (a new one starts over, a gone one is gone).
Lag lag_of(const NamedPosition& p) {
    auto source = open_for_command(p.ring, {});
    if (!source) return {"gone", std::nullopt};
    if ((*source)->identity().instance != p.instance) return {"new instance", std::nullopt};
    if (!(*source)->seek(Position{Position::Kind::Back, 1})) return {"present", std::nullopt};
    SourceItem item;
    if ((*source)->next(item) != SourceStep::Event) return {"present", std::uint64_t{0}};
    const std::uint64_t newest = item.event.descriptor.seqno, last = p.last_seqno[0];
    return {"present", newest > last ? newest - last : 0};
}

}  // namespace

int run_named_readers(const ReadersOptions& options) {
    auto dir = reader_state_dir(false);
    if (!dir) {
        if (dir.error().errno_value() != ENOENT) return runtime_error(dir.error());
        if (!options.json) fmt::print("no named readers\n");
        return std::fflush(stdout) == 0 ? kExitOk : kExitRuntime;
    }
    std::string only;  // RING given: that ring's named readers
    if (!options.ring.empty()) {
        auto source = open_for_command(options.ring, {});
        only = source ? (*source)->identity().path : options.ring;
    }
    std::vector<std::string> problems;
    const auto all = list_named_positions(*dir, problems);
    std::size_t shown = 0;
    for (const NamedPosition& p : all) {
        if (!only.empty() && p.ring != only) continue;
        const Lag lag = lag_of(p);
        const std::string position = fmt::format("{}", p.last_seqno[0]);
        if (options.json) {
            JsonObject o;
            o.string("name", p.name).string("ring", p.ring).string("kind", to_string(p.kind));
            o.number("last_seqno", p.last_seqno[0]).string("ring_state", lag.state);
            if (lag.events) o.number("lag", *lag.events);
            else o.null("lag");
            o.boolean("instance_ended", p.instance_ended).string("committed", utc_time(p.commit_nanos));
            fmt::print("{}\n", o.text());
        } else {
            if (shown == 0) fmt::print("{:<20} {:>12} {:>12} {:<31} {}\n", "NAMED READER", "POSITION", "LAG", "COMMITTED", "RING");
            const std::string lag_text = lag.events ? fmt::format("{}", *lag.events) : lag.state;
            fmt::print("{:<20} {:>12} {:>12} {:<31} {}\n", printable(p.name), position, lag_text,
                       utc_time(p.commit_nanos), printable(p.ring));
        }
        ++shown;
    }
    if (shown == 0 && !options.json) fmt::print("no named readers\n");
    for (const auto& problem : problems) report_error(problem);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return kExitRuntime;
    return problems.empty() ? kExitOk : kExitRuntime;
}

}  // namespace evring::cli
