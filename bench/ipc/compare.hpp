// The same-run comparison with the classic RING01 peer (issue 15): classic,
// evring Shared, evring Exclusive and the plain-stores floor, run interleaved
// (classic, Shared, Exclusive, floor, classic, ...) for each figure, the
// writer on cpu 0 and the reader on cpu 1, medians over the runs, and each
// evring figure as the median of its same-run ratios to the classic peer.
// Single-threaded orchestrator use only.
#pragma once

#include <map>
#include <string>

namespace evring::ipc {

struct CompareOptions {
    int runs = 3;                      // interleaved rounds
    std::uint64_t flat_events = 4'000'000;  // 64 B flat-out runs (1 KiB: a quarter)
    double latency_rate = 500'000;     // one 64 B event every 2 µs
    double latency_seconds = 0.6;      // per latency run
    std::string only;                  // run only figures whose key contains this (empty: all)
    // Experiments on the two evring rows: "mixed" runs them as an evring
    // writer with the classic reader (row "Shared") and the classic writer
    // with the evring reader (row "Exclusive"); "nodoorbell" clears the
    // ring's doorbell feature (no doorbell, no membarrier registration);
    // "doublemap" runs row "Shared" as the classic pair with its reader
    // mapping the payload buffer twice, as evring does; "ntcopy" has every
    // evring writer copy its payloads with streaming stores; "aa" runs row
    // "Shared" as a second classic pair, a control.
    std::string variant;
};

// Runs the comparison on rings in `dir`, prints its table under `title`, and
// returns the JSON keys (ratio_vs_classic_* and the medians as
// compare_classic_*, compare_shared_*, compare_exclusive_*, compare_floor_*)
// with `suffix` appended to each name.
std::map<std::string, double> run_classic_comparison(const std::string& dir, const std::string& title,
                                                     const CompareOptions& options, const std::string& suffix);

}  // namespace evring::ipc
