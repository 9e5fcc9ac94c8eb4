// tools/evring/stats_cmd.hpp — `evring stats SOURCE`: what a ring, snapshot,
// recording or stream holds, in one pass of the follow loop: events and
// payload bytes by type, the time range and rate, span instances and their
// durations (from the schema's [span.NAME]), gaps. docs/cli.md, "evring stats".
//
// Thread safety: one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace evring::cli {

struct StatsOptions {
    std::string source;
    std::string from = "oldest";
    std::optional<std::string> until;
    std::optional<std::string> count;
    std::vector<std::string> types;
    std::optional<std::string> where;
    std::string schema_file;
    bool json = false;
};

// The exit code (commands.hpp); add_stats registers the command.
int run_stats(const StatsOptions& options);

}  // namespace evring::cli
