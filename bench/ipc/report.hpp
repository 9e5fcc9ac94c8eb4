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
};

// Runs everything, prints the table; returns the process exit code.
int run_comparison(const Options& options);

}  // namespace evring::ipc
