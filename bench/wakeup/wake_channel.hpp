// How a writer wakes a reader that sleeps until the writer's next event: the
// variants evring-wakeup measures side by side (bench/wakeup/main.cpp,
// docs/performance.md "Wake-up latency").
//
// Each variant is a writer half, run after every commit, and a reader half,
// which blocks until an event may be ready (the reader has drained the ring
// before it calls). The latency measured is from just before the writer's
// commit to the reader running with the event in hand; the writer's half is
// part of it.
//
// To add a variant (issue 31's file descriptor for event loops is the next:
// its reader half polls that descriptor until it is readable and its writer
// half does nothing, since commit itself makes the descriptor readable),
// write a WakeWriter and a WakeReader and add one entry to wake_variants()
// in wake_channels.cpp; descriptors the two processes share are made by
// `make_fds` in the orchestrator and reach each peer as options fd0=, fd1=.
//
// Single-threaded: each half lives in one peer process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "evring/ring/iterator.hpp"
#include "evring/ring/ring.hpp"
#include "ipc/common.hpp"

namespace evring::wakeup {

class WakeWriter {
public:
    virtual ~WakeWriter() = default;
    // After the commit of each event (the doorbell, if any, already rang).
    virtual void after_commit() = 0;
};

class WakeReader {
public:
    virtual ~WakeReader() = default;
    // Blocks until the event `it.next_seqno()` may be ready (it may return
    // early: the caller polls again).
    virtual void sleep(const Iterator& it) = 0;
    // How often sleep() blocked in the kernel (for the result line).
    virtual std::uint64_t sleeps() const = 0;
};

struct WakeVariant {
    std::string name;         // in keys: wakeup_latency_<name>_p50_ns
    std::string description;  // in the table
    // Descriptors both peers inherit, made once per run (empty: none).
    std::function<std::vector<int>()> make_fds;
    std::function<std::unique_ptr<WakeWriter>(const ipc::PeerOptions&)> writer;
    std::function<std::unique_ptr<WakeReader>(const MappedRing&, const ipc::PeerOptions&)> reader;
};

const std::vector<WakeVariant>& wake_variants();
// The variant called `name`; dies when there is none.
const WakeVariant& wake_variant(const std::string& name);

}  // namespace evring::wakeup
