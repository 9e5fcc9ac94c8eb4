// The comparison the harness runs: which runs, in which order, the table it
// prints and the JSON headline object.
#pragma once

#include <string>

namespace evring::ipc {

struct Options {
    bool quick = false;
    std::string json_path;
    std::string shm_dir = "/dev/shm";
    std::string hugetlbfs = "auto";
    bool fifo = false;  // peers run SCHED_FIFO (see Peer::set_fifo)
    // The classic-peer comparison (compare.hpp): rounds (0: the default for
    // quick or full), latency run length (0: default), whether it runs
    // SCHED_FIFO too (by default it uses ordinary scheduling, like the
    // independent harness of issue 15), and whether it is all that runs.
    int compare_runs = 0;
    double latency_seconds = 0;
    bool compare_fifo = false;
    bool compare_only = false;
    std::string compare_figure;
    std::string compare_variant;  // CompareOptions::variant  // run only the comparison figures whose key contains this
};

// Runs everything, prints the table; returns the process exit code.
int run_comparison(const Options& options);

}  // namespace evring::ipc
