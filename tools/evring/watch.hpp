// tools/evring/watch.hpp — the pieces of `evring watch` shared by its ring
// and recording loops.
//
// Stderr, never stdout, carries everything that is not an event: one line per
// gap ("evring: lost N events (seqno A..B) ..."), one per expired payload or
// never-committed sequence number, and a final summary line.
#pragma once

#include <cstdint>
#include <string>

#include "event_format.hpp"
#include "evring/flow_filter.hpp"
#include "input.hpp"
#include "position.hpp"

namespace evring::cli {

struct WatchPlan {
    Format format = Format::Text;
    FlowFilter filter;
    Position from;
    Position until;
    std::uint64_t count = 0;
};

struct WatchSummary {
    std::uint64_t printed = 0;
    std::uint64_t read = 0;     // events read, before filtering
    std::uint64_t lost = 0;     // sequence numbers skipped by gaps
    std::uint64_t gaps = 0;
    std::uint64_t expired = 0;  // printed events whose payload was gone
    std::uint64_t missing = 0;  // never-committed sequence numbers in a static ring
};

// Prints the summary line to stderr; `ended` says why watching stopped.
void print_summary(const WatchSummary& summary, const std::string& ended);

// Both return an exit code (commands.hpp).
int watch_ring(Input& input, const WatchPlan& plan);
int watch_recording(Input& input, const WatchPlan& plan);

// Exit code for a failed stdout: a closed pipe is a normal way to stop.
int output_failure(int error);

}  // namespace evring::cli
