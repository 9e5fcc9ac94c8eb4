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
#include "ring/sigbus_guard.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "evring/ring/shared_word.hpp"

namespace evring::cli {
namespace {

struct Lag {
    std::string state;  // "present", "new instance", "gone"
    std::optional<std::uint64_t> events;
};

// A ring set's lag: per member, the events written after its position (a
// member re-created or added since: every event it wrote), summed.
std::uint64_t set_lag(const NamedPosition& p, const RingSetSource& set) {
    std::uint64_t lag = 0;
    for (const std::uint32_t index : set.members()) {
        const RingSource* member = set.member_source(index);
        if (member == nullptr || member->ring() == nullptr) continue;
        std::uint64_t newest = 0;
        if (!guard_sigbus([&] { newest = shared::load_acquire(member->ring()->header().control.last_seqno); }))
            continue;
        const bool same = index < p.last_seqno.size() && index < p.member_instance.size() &&
                          p.member_instance[index] == member->identity().instance;
        const std::uint64_t last = same ? p.last_seqno[index] : 0;
        lag += newest > last ? newest - last : 0;
    }
    return lag;
}

// The ring's newest event, compared with the reader's position: only for the
// instance the position is of (a new one starts over, a gone one is gone).
Lag lag_of(const NamedPosition& p) {
    auto source = open_for_command(p.ring, {});
    if (!source) return {"gone", std::nullopt};
    if ((*source)->identity().instance != p.instance) return {"new instance", std::nullopt};
    if (const auto* set = dynamic_cast<const RingSetSource*>(source->get())) return {"present", set_lag(p, *set)};
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
        const bool set = p.kind == SourceKind::RingSet;
        const std::string position =
            set ? fmt::format("{} members", p.last_seqno.size()) : fmt::format("{}", p.last_seqno[0]);
        if (options.json) {
            JsonObject o;
            o.string("name", p.name).string("ring", p.ring).string("kind", to_string(p.kind));
            if (set) o.numbers("member_last_seqno", p.last_seqno);  // by member index
            else o.number("last_seqno", p.last_seqno[0]);
            o.string("ring_state", lag.state);
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
