// One measured run of the harness: a writer process and its reader
// processes over evring or over a baseline transport, with the results each
// peer reported. The writer is pinned to core 0 and every reader to core 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ipc/spawn.hpp"

namespace evring::ipc {

struct RunSpec {
    std::size_t payload_size = 64;
    std::uint64_t events = 1'000'000;
    double rate = 0;       // events per second; 0: flat out
    int readers = 1;
    bool latency = false;  // readers record per-event latency (use a paced rate)
    bool exclusive = false;  // evring: the writer uses WriterSharing::Exclusive
    // evring: the writer creates the ring itself through RingWriter (held
    // exclusively) and publishes with the default publisher, which claims it
    // (writer_claim.hpp): what an application gets without choosing a mode.
    bool owned = false;
    bool streaming_copy = false;  // evring: the writer copies payloads with streaming stores
    int backoff = 0;         // evring: pause instructions a reader spins after NotReady
    // Experiments (compare.cpp --compare-variant): the peer kinds that write
    // and read, when not the ones the run is named after (e.g. an evring
    // writer with the classic reader).
    std::string writer_peer, reader_peer;
    bool classic_double_map = false;  // the classic reader maps the payload twice
    bool floor_clock = false;  // floor: the writer stamps each event with the wall clock (the clock's control)
    bool doorbell = true;    // evring: false clears the ring's doorbell feature bit, as in a
                             // ring made by another RING01 writer (commit then has no fence)
    std::size_t batch = 1;   // evring owned: events per Publisher::publish_batch (1: reserve/commit)
};

// The spec of a plain run: these five fields, defaults for the rest.
inline RunSpec make_spec(std::size_t size, std::uint64_t events, double rate, int readers, bool latency) {
    RunSpec s;
    s.payload_size = size;
    s.events = events;
    s.rate = rate;
    s.readers = readers;
    s.latency = latency;
    return s;
}

struct RunResult {
    Results writer;
    std::vector<Results> readers;
};

// evring over a fresh ring file in `dir` (default ring size), removed afterwards.
RunResult run_evring(const std::string& dir, const RunSpec& spec);

// The plain-stores floor over a fresh ring file in `dir` (spec.readers 0 or 1).
RunResult run_floor(const std::string& dir, const RunSpec& spec);

// The classic RING01 peer (classic_peer.cpp) over a fresh ring file in `dir`,
// made exactly like evring's (so the same file system and size); spec.readers
// 0 or 1.
RunResult run_classic(const std::string& dir, const RunSpec& spec);

// transport: pipe | unix | posixmq | boostmq. One reader.
RunResult run_baseline(const std::string& transport, const RunSpec& spec);

// iceoryx through the evring-ipc-iceoryx peer beside this executable, with a
// RouDi daemon started for the run; an empty result with "skipped" set when
// the peer or iox-roudi is missing.
RunResult run_iceoryx(const RunSpec& spec, std::string& skipped);

}  // namespace evring::ipc
