// tools/evring/stats_cmd.hpp — `evring stats SOURCE`: what a ring, snapshot,
// recording or stream holds, in one pass of the follow loop: events and
// payload bytes by type, the time range and rate, span instances and their
// durations (from the schema's [span.NAME]), gaps. docs/cli.md, "evring stats".
//
// Thread safety: one thread.
#pragma once

#include <string>

#include "event_selection.hpp"
#include "heal_option.hpp"

namespace evring::cli {

struct StatsOptions {
    std::string source;
    EventSelection select{"oldest"};  // --from, --until, --count, --type, --flow, --where
    std::string schema_file;
    HealOption heal;  // --heal, --heal-from, --heal-wait
    bool json = false;
};

// The exit code (commands.hpp); add_stats registers the command.
int run_stats(StatsOptions& options);

}  // namespace evring::cli
