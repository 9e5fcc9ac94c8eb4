// The event-loop descriptor as a way to wake a reader (issue 35, item 4:
// "commit to the event-loop file descriptor becoming readable").
//
// Shaped as a wake-up variant's reader half (perf-writer's bench/wakeup
// harness, wake_channel.hpp's WakeReader: sleep(const Iterator&) and
// sleeps()), so it joins that harness as one more entry of its table: the
// writer half does nothing, since the commit itself (its doorbell) makes the
// descriptor readable. Until then evring-wakeup-fd (main.cpp) runs it, with
// the futex doorbell beside it in the same run.
//
// The reader's Iterator stays the harness's; the wait set watches the same
// ring through a source of its own whose next sequence number is the
// iterator's (prepare_wait), so sleep() is exactly an application's: arm
// (ready()), then poll the set's descriptor.
//
// Single-threaded (the set's own thread aside).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "evring/ring/iterator.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/source/wait_set.hpp"

namespace evring::wakeup {

class FdWaitReader {
public:
    // The ring at `path`, opened again (read-only) for the set to watch.
    explicit FdWaitReader(const std::string& path);
    ~FdWaitReader();
    // Blocks until the event it.next_seqno() may be ready.
    void sleep(const Iterator& it);
    std::uint64_t sleeps() const noexcept { return sleeps_; }
    const WaitSet& set() const noexcept { return set_; }

private:
    class Watch;
    std::unique_ptr<Watch> watch_;
    WaitSet set_;
    int fd_ = -1;
    std::uint64_t sleeps_ = 0;
};

}  // namespace evring::wakeup
