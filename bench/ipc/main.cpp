// evring-ipc: the cross-process comparison. Without arguments it runs the
// whole comparison and prints a table; `--quick` runs a short version;
// `--json FILE` also writes the headline figures as one JSON object.
// `evring-ipc peer ...` is how the harness starts its own peer processes.
//
// Every figure comes from separate processes (fork + exec), the writer pinned
// to core 0 and readers to core 1, all in the same run.
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <string>

#include "ipc/hugepages.hpp"
#include "ipc/peers.hpp"
#include "ipc/report.hpp"
#include "support/bench_ring.hpp"

namespace {

int run_peer(int argc, char** argv) {
    using namespace evring::ipc;
    if (argc < 3) evring::bench::die("peer: missing kind");
    const std::string kind = argv[2];
    const PeerOptions options = parse_peer_options(argc, argv, 3);
    if (kind == "evring-writer") return run_evring_writer(options);
    if (kind == "evring-reader") return run_evring_reader(options);
    if (kind == "classic-writer") return run_classic_writer(options);
    if (kind == "classic-reader") return run_classic_reader(options);
    if (kind == "baseline") return run_baseline_peer(options);
    if (kind == "floor-writer") return run_floor_writer(options);
    if (kind == "floor-reader") return run_floor_reader(options);
    evring::bench::die("peer: unknown kind " + kind);
}

void usage() {
    std::printf(
        "usage: evring-ipc [--quick] [--json FILE] [--shm-dir DIR] [--hugetlbfs DIR|auto|off] [--fifo]\n"
        "                  [--compare-only] [--compare-runs N] [--compare-figure KEY]\n"
        "                  [--latency-seconds S] [--compare-fifo] [--compare-variant mixed|nodoorbell|doublemap|ntcopy|aa]\n"
        "Runs evring and the baselines (pipe, unix socket, POSIX mq, Boost.Interprocess\n"
        "message_queue, iceoryx when built) as separate pinned processes and prints a table.\n"
        "First, the classic RING01 peer against evring Shared/Exclusive, the floor and (64 B) the floor\n"
        "with one clock read per event, interleaved,\n"
        "on /dev/shm and hugetlbfs (ordinary scheduling unless --compare-fifo).\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "peer") == 0) return run_peer(argc, argv);
    evring::ipc::Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") {
            options.quick = true;
        } else if (arg == "--json" && i + 1 < argc) {
            options.json_path = argv[++i];
        } else if (arg == "--shm-dir" && i + 1 < argc) {
            options.shm_dir = argv[++i];
        } else if (arg == "--compare-runs" && i + 1 < argc) {
            options.compare_runs = std::atoi(argv[++i]);
        } else if (arg == "--latency-seconds" && i + 1 < argc) {
            options.latency_seconds = std::atof(argv[++i]);
        } else if (arg == "--compare-figure" && i + 1 < argc) {
            options.compare_figure = argv[++i];
        } else if (arg == "--compare-variant" && i + 1 < argc) {
            options.compare_variant = argv[++i];
            const std::string& v = options.compare_variant;
            if (v != "mixed" && v != "nodoorbell" && v != "doublemap" && v != "ntcopy" && v != "aa") {
                std::fprintf(stderr,
                             "evring-ipc: --compare-variant '%s' is not one of mixed, nodoorbell, doublemap, "
                             "ntcopy, aa\n",
                             v.c_str());
                return 2;
            }
        } else if (arg == "--compare-fifo") {
            options.compare_fifo = true;
        } else if (arg == "--compare-only") {
            options.compare_only = true;
        } else if (arg == "--fifo") {
            options.fifo = true;
        } else if (arg == "--hugetlbfs" && i + 1 < argc) {
            options.hugetlbfs = argv[++i];
        } else {
            usage();
            return arg == "--help" || arg == "-h" ? 0 : 2;
        }
    }
    return evring::ipc::run_comparison(options);
}
