// tools/evring/stats/stats_cmd.hpp — `evring stats SOURCE`: what a ring,
// snapshot, recording or stream holds, in one pass of the follow loop: events
// and payload bytes by type, the time range and rate, span instances and
// their durations (from the schema's [span.NAME]), gaps; with --by, figures
// per group (stats_by.hpp). docs/cli.md, "evring stats".
//
// Thread safety: one thread.
#pragma once

#include <string>

#include "event_selection.hpp"
#include "heal_option.hpp"
#include "stats/stats_by.hpp"

namespace evring::cli {

struct StatsOptions {
    std::string source;
    EventSelection select{"oldest"};  // --from, --until, --count, --type, --flow, --where
    std::string schema_file;
    HealOption heal;  // --heal, --heal-from, --heal-wait
    StatsByOptions by;  // --by, --field
    bool json = false;
    bool csv = false;
};

// The exit code (commands.hpp); add_stats registers the command.
int run_stats(StatsOptions& options);

}  // namespace evring::cli
