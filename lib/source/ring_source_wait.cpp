// A ring's answer to a wait set (wait_set.hpp, EventSource::prepare_wait):
// what RingSource::wait sleeps on, handed to the set instead.
#include "evring/source/wait_set.hpp"
#include "source/ring_source.hpp"
#include "source/ring_source_state.hpp"

namespace evring {

void RingSource::prepare_wait(WaitArm& arm) {
    // A snapshot, a ring whose writer is gone (read to its end, then End):
    // next() always has something. So does a ring that faulted (Failed).
    if (!live_ || !state_->reader || !state_->doorbell) return arm.set_ready();
    // The set's thread wakes the set when it sees the writer gone; the
    // source must then see it too (the check not_ready() makes), or the set
    // would find nothing ready and sleep again.
    if (writer_gone()) return arm.set_ready();
    const std::uint64_t next = it_->next_seqno();
    bool ready = true;
    std::uint64_t newest = 0;
    if (!state_->guard(
            [&] {
                ready = state_->doorbell->event_ready(next);
                newest = it_->newest_seqno();
            },
            "looking for the next event"))
        return arm.set_ready();  // next() meets the same fault and reports it
    if (ready) return arm.set_ready();
    // The set's own doorbell on this ring; the set's thread also looks at
    // the writer's liveness every 100 ms.
    arm.watch_ring(state_->reader, next);
    // Reserved and not committed yet: a commit wakes the set, but a
    // reservation its writer abandons is only found by looking again (the
    // iterator's abandon bound), as the follow loop does every 100 ms.
    if (newest >= next) arm.recheck_within(std::chrono::milliseconds(100));
}

}  // namespace evring
