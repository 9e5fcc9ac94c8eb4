// tools/evring/follow.hpp — following a live ring: idle waits and stopping.
//
// Contract:
// - wait_for_more is the one place a reader that caught up with the writers
//   waits. On a ring whose writers ring the doorbell (evring/doorbell.hpp) it
//   sleeps on the ring's futex until a commit, at most 100 ms at a time (so
//   the callers' stop and writer checks keep running); otherwise it sleeps
//   with exponential backoff (20 us doubling to 5 ms, reset by
//   FollowState::made_progress).
// - install_stop_handlers makes SIGINT, SIGTERM and SIGHUP set a flag that
//   stop_requested() reports (the loops finish cleanly: flush, summary, end
//   marker). SIGPIPE is ignored so a closed pipe shows up as EPIPE on write.
// - WriterWatch answers "has the writer gone?" cheaply: it polls the pidfd
//   when there is one, otherwise asks RingReader::writer_alive() at most every
//   100 ms.
//
// Thread safety: single-threaded, except the signal flag.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "evring/doorbell.hpp"
#include "evring/ring_reader.hpp"
#include "evring/iterator.hpp"

namespace evring::cli {

struct FollowState {
    std::chrono::microseconds backoff{0};
    std::optional<Doorbell> doorbell;  // attached on the first wait
    void made_progress() noexcept { backoff = std::chrono::microseconds{0}; }
};

// Waits a little for `it.next_seqno()` to be committed (see the contract).
void wait_for_more(const Iterator& it, FollowState& state);

void install_stop_handlers();
bool stop_requested() noexcept;

class WriterWatch {
public:
    explicit WriterWatch(const RingReader& reader) : reader_(&reader) {}
    bool writer_gone();

private:
    const RingReader* reader_;
    std::chrono::steady_clock::time_point next_check_{};
    bool gone_ = false;
};

}  // namespace evring::cli
