// evring readers: a ring's reader registry as a table or JSON lines.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "commands.hpp"
#include "output/escape.hpp"
#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "schema/schema_interest.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/ring/ring_reader.hpp"
#include "source/ring_source.hpp"
#include "source/source_renamed.hpp"
#include "output/json.hpp"
#include "open.hpp"
#include "ops/ops_cmd.hpp"
#include "ops/ring_set_view.hpp"

namespace evring::cli {
namespace {

std::string lag_events(const ReaderEntry& r) {
    if (!r.lag) return "-";
    if (r.lag->ahead) return "ahead";
    return std::to_string(r.lag->events) + (r.lag->lapped ? " (lapped)" : "");
}

std::string lag_bytes(const ReaderEntry& r) {
    return r.lag && r.lag->bytes ? std::to_string(*r.lag->bytes) : "-";
}

std::string lag_time(const ReaderEntry& r) {
    return r.lag && r.lag->nanos ? duration_text(*r.lag->nanos) : "-";
}

std::string state_text(const ReaderEntry& r) {
    std::string text = to_string(r.liveness);
    if (r.heals) text += ", heals";  // its overwritten events come from a recording: not lost
    if (r.reclaimed) text += ", reclaimed";
    if (!r.consistent) text += ", inconsistent";
    if (!r.problem.empty()) text += ", bad: " + r.problem;
    return text;
}

void print_table(const ReaderListing& listing, const Schema* schema) {
    fmt::print("registry {} ({}, {} slots{})\n", printable(listing.registry_path), to_string(listing.state),
               listing.capacity, listing.writable ? "" : ", read-only: dead entries are left");
    fmt::print("interest: {}\n", interest_text(listing.interest, schema));
    if (listing.readers.empty()) {
        std::puts("no readers registered");
        return;
    }
    fmt::print("{:>4}  {:<16} {:<11} {:>8}  {:>12} {:>12} {:>9} {:>8} {:>9}  {:<8} {}\n", "SLOT", "NAME", "KIND",
               "PID", "LAG-EVENTS", "LAG-BYTES", "LAG-TIME", "LOST", "ABANDONED", "STATE", "DETAIL");
    for (const ReaderEntry& r : listing.readers) {
        const std::string pid = r.pid_in_our_namespace ? std::to_string(r.pid) : fmt::format("{}*", r.pid);
        fmt::print("{:>4}  {:<16} {:<11} {:>8}  {:>12} {:>12} {:>9} {:>8} {:>9}  {:<8} {}\n", r.slot,
                   printable(r.name), reader_kinds::name(r.kind), pid, lag_events(r), lag_bytes(r), lag_time(r), r.lost,
                   r.abandoned, state_text(r), printable(r.detail));
        if (interest_narrows(r.interest)) fmt::print("{:>4}  wants {}\n", "", describe_interest(r.interest, schema));
    }
    if (std::any_of(listing.readers.begin(), listing.readers.end(),
                    [](const ReaderEntry& r) { return !r.pid_in_our_namespace; }))
        std::puts("* pid in another pid namespace");
}

// `member`: the ring set member whose registry lists the reader (-1: a ring).
void print_json(const ReaderEntry& r, const Schema* schema, std::int64_t member = -1) {
    JsonObject o;
    if (member >= 0) o.number("member", static_cast<std::uint64_t>(member));
    o.number("slot", r.slot).string("name", r.name).string("kind", reader_kinds::name(r.kind)).string("detail", r.detail);
    o.string("interest", describe_interest(r.interest, schema)).string("interest_word", fmt::format("{:016x}", r.interest));
    o.number("pid", r.pid).boolean("pid_in_our_namespace", r.pid_in_our_namespace).number("uid", r.uid);
    o.string("liveness", to_string(r.liveness)).boolean("reclaimed", r.reclaimed).boolean("consistent", r.consistent);
    if (!r.problem.empty()) o.string("problem", r.problem);
    o.number("next_seqno", r.next_seqno).number("lost", r.lost).number("lost_reported", r.lost_reported);
    o.number("abandoned", r.abandoned).boolean("heals", r.heals);
    o.number("heartbeat_ns", r.heartbeat_ns).number("heartbeat_age_ns", r.heartbeat_age_ns);
    o.number("registered_ns", r.registered_ns);
    if (r.lag) {
        o.number("lag_events", r.lag->events).boolean("lapped", r.lag->lapped).boolean("ahead", r.lag->ahead);
        o.number("lag_overwritten", r.lag->overwritten);
        if (r.lag->bytes) o.number("lag_bytes", *r.lag->bytes);
        else o.null("lag_bytes");
        if (r.lag->nanos) o.number("lag_ns", *r.lag->nanos);
        else o.null("lag_ns");
    } else {
        o.null("lag_events");
    }
    std::printf("%s\n", o.text().c_str());
}

// A name given to yet another ring while we look is looked at again, this
// many times at most (writers restarting in a loop cannot keep us here).
constexpr int kNameMoves = 3;

int finish_output() {
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return kExitRuntime;
    return kExitOk;
}

bool registry_usable(RegistryState state) {
    return state == RegistryState::Valid || state == RegistryState::Missing;
}

// A ring set: each member's registry in turn (a member is a ring with its
// own registry), labelled with its member index; then the set's total.
int list_set_readers(RingSetView& set, const ReadersOptions& options, const ListingOptions& listing_options) {
    int code = kExitOk;
    std::size_t total = 0;
    if (!options.json)
        fmt::print("ring set {} ({}): {} members\n", printable(set.location()), printable(set.directory()),
                   set.members().size());
    for (RingSetView::Member& m : set.members()) {
        if (!m.view) {
            report_error(fmt::format("ring set '{}': member {}: {}", set.location(), m.index, m.error));
            code = kExitRuntime;
            continue;
        }
        auto listing = list_readers(m.view->reader(), listing_options);
        if (!listing) {
            report_error(fmt::format("ring set '{}': member {}: {}", set.location(), m.index, listing.error().message()));
            code = kExitRuntime;
            continue;
        }
        if (listing->state == RegistryState::OtherRing) {
            if (!options.json)
                fmt::print("member {}: registry {} belongs to an earlier instance of the member: no reader of this "
                           "one has registered yet\n", m.index, printable(listing->registry_path));
            continue;
        }
        if (!registry_usable(listing->state)) {
            report_error(fmt::format("cannot list the readers of member {} of '{}': registry '{}' is {}: {}", m.index,
                                     set.location(), listing->registry_path, to_string(listing->state),
                                     listing->problem));
            code = kExitRuntime;
            continue;
        }
        total += listing->readers.size();
        if (options.json) {
            for (const ReaderEntry& r : listing->readers) print_json(r, nullptr, m.index);
        } else {
            fmt::print("member {}: ", m.index);
            print_table(*listing, nullptr);
        }
    }
    if (!options.json) fmt::print("total: {} readers registered in {} members\n", total, set.members().size());
    const int written = finish_output();
    return code != kExitOk ? code : written;
}

}  // namespace

std::string duration_text(std::uint64_t nanos) {
    if (nanos < 1000) return fmt::format("{} ns", nanos);
    if (nanos < 1'000'000) return fmt::format("{:.0f} us", static_cast<double>(nanos) / 1e3);
    if (nanos < 1'000'000'000) return fmt::format("{:.0f} ms", static_cast<double>(nanos) / 1e6);
    if (nanos < 120'000'000'000ULL) return fmt::format("{:.1f} s", static_cast<double>(nanos) / 1e9);
    if (nanos < 7'200'000'000'000ULL) return fmt::format("{:.1f} min", static_cast<double>(nanos) / 60e9);
    return fmt::format("{:.1f} h", static_cast<double>(nanos) / 3600e9);
}

std::string interest_text(std::uint64_t word, const Schema* schema) {
    if (!interest_narrows(word)) return "everything (no registered reader narrowed it)";
    return describe_interest(word, schema) + ": writers skip the rest (docs/interest.md)";
}

std::string readers_summary(const ReaderListing& listing) {
    if (!registry_usable(listing.state))
        return fmt::format("registry {} ({})", to_string(listing.state), listing.problem);
    if (listing.readers.empty()) return "none registered";
    std::size_t alive = 0, stale = 0, dead = 0;
    const ReaderEntry* behind = nullptr;
    for (const ReaderEntry& r : listing.readers) {
        (r.liveness == ReaderLiveness::Alive ? alive : r.liveness == ReaderLiveness::Stale ? stale : dead)++;
        if (r.liveness != ReaderLiveness::Dead && r.lag && (behind == nullptr || r.lag->events > behind->lag->events))
            behind = &r;
    }
    std::string text = fmt::format("{} registered: {} alive, {} stale, {} dead", listing.readers.size(), alive, stale,
                                   dead);
    if (behind != nullptr)
        text += fmt::format("; most behind: {} (pid {}), {} events", behind->name, behind->pid, behind->lag->events);
    return text;
}

int run_readers(const ReadersOptions& options) {
    if (options.named) return run_named_readers(options);
    if (options.ring.empty())
        return usage_error(Error(EINVAL, "readers: RING is required (or --named: the named readers of every ring)"));
    ListingOptions listing_options;
    listing_options.reclaim_dead = !options.no_reclaim;
    if (auto set = RingSetView::open_if_set(options.ring); set && *set)
        return list_set_readers(**set, options, listing_options);
    auto source = open_for_command(options.ring, {});
    if (!source) return runtime_error(source.error());
    for (int attempt = 0;; ++attempt) {
        const auto* ring_source = dynamic_cast<const RingSource*>(source->get());
        if (ring_source == nullptr || ring_source->reader() == nullptr) {
            report_error(fmt::format("'{}' is a {}, not a live ring: nobody reads it through a registry",
                                     printable(options.ring), describe((*source)->kind())));
            return kExitRuntime;
        }
        const RingReader& ring = *ring_source->reader();
        auto listing = list_readers(ring, listing_options);
        if (!listing) return runtime_error(listing.error());
        if (listing->state == RegistryState::OtherRing) {
            // Another instance's registry: a later ring's when the name moved
            // since we opened ours (look again at the one there now, as
            // `watch --follow-name` would), else an earlier ring's, left by a
            // writer that restarted: no reader of this one registered yet.
            auto moved = reopen_if_renamed((*source)->identity(), {});
            if (moved && *moved && attempt < kNameMoves) {
                *source = std::move(*moved);
                continue;
            }
            if (!options.json)
                fmt::print("registry {} belongs to an earlier instance of the ring: no reader of this one has "
                           "registered yet\n", printable(listing->registry_path));
            return finish_output();
        }
        if (!registry_usable(listing->state)) {
            report_error(fmt::format("cannot list the readers of '{}': registry '{}' is {}: {}", ring.path(),
                                     listing->registry_path, to_string(listing->state), listing->problem));
            return kExitRuntime;
        }
        // Keyword names come from the ring's schema, when it has one.
        auto found = resolve_schema(**source, {});
        const Schema* schema = found && found->schema ? &*found->schema : nullptr;
        if (options.json) {
            for (const ReaderEntry& r : listing->readers) print_json(r, schema);
        } else {
            print_table(*listing, schema);
        }
        return finish_output();
    }
}

Command add_readers(CLI::App& app) {
    auto o = std::make_shared<ReadersOptions>();
    auto* c = app.add_subcommand("readers", "List a ring's registered readers: lag, losses, liveness");
    c->add_option("RING", o->ring, "Ring name or path (with --named: only that ring's named readers)");
    c->add_flag("--json", o->json, "One JSON object per reader");
    c->add_flag("--no-reclaim", o->no_reclaim, "Show dead readers but leave their slots for the next registrant");
    c->add_flag("--named", o->named,
                "The named readers instead (--name): position, lag, last commit (docs/named-readers.md)");
    return {c, [o] { return run_readers(*o); }};
}

}  // namespace evring::cli
