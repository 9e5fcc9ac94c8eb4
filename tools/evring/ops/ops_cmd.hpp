// tools/evring/ops/ops_cmd.hpp — the commands for the person on call
// (docs/operations.md): `evring readers`, `evring top`, `evring metrics`.
//
// add_readers, add_top and add_metrics (commands.hpp) register them; each
// run_* returns the exit code (0 success, 1 a missing ring, a damaged
// registry, a port in use, a failed write; 2 usage).
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evring/schema/schema.hpp"

namespace evring {
struct ReaderListing;
}

namespace evring::cli {

struct ReadersOptions {
    std::string ring;
    bool json = false;
    bool no_reclaim = false;  // list dead readers, but leave their slots
    bool named = false;       // --named: the named readers (docs/named-readers.md) instead
};

struct TopOptions {
    std::string ring;
    std::optional<std::string> interval;  // seconds between refreshes (default 1)
    std::optional<std::string> count;     // stop after N refreshes (default: until q / Ctrl-C)
    std::optional<std::string> where;     // count only what this filter expression keeps
};

struct MetricsOptions {
    std::vector<std::string> rings;
    std::string listen;  // empty: print once to stdout; else HOST:PORT
};

int run_readers(const ReadersOptions& options);
// --named: the named readers' positions, lags and commits (of RING when given).
int run_named_readers(const ReadersOptions& options);
int run_top(const TopOptions& options);
int run_metrics(const MetricsOptions& options);

// "2 registered: 1 alive, 1 dead; most behind: record, 12 events" (for info).
std::string readers_summary(const ReaderListing& listing);
// What the ring's interest word says writers publish, for people:
// "everything (no reader narrowed it)" or "keywords a,b, levels 0..3: writers skip the rest".
std::string interest_text(std::uint64_t word, const Schema* schema);
// "850 ms", "12.3 s", "4.0 min": a duration for people.
std::string duration_text(std::uint64_t nanos);

}  // namespace evring::cli
