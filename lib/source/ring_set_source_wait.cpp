// A ring set's answer to a wait set (wait_set.hpp, EventSource::prepare_wait):
// what RingSetSource::wait (ring_set_wait.cpp) sleeps on, handed to the set
// instead: every member's doorbell, the stall bound, the manifest.
#include <chrono>

#include "evring/source/wait_set.hpp"
#include "set/ring_set_manifest.hpp"
#include "source/ring_set_member.hpp"
#include "source/ring_set_source.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;

// As RingSetSource::wait: new members are looked for every 100 ms, a merge
// held back by a member's pending reservation every millisecond (until the
// stall bound lets it go, or that member's commit wakes the set).
constexpr auto kManifestLook = 100ms;
constexpr auto kHeldLook = 1ms;

}  // namespace

void RingSetSource::prepare_wait(WaitArm& arm) {
    if (frozen_) return arm.set_ready();  // a set snapshot: its events, then End
    refresh_members(false);
    if (!notices_.empty()) return arm.set_ready();
    bool open = false;
    for (auto& m : members_) {
        if (m->ended) {
            if (m->reopen) return arm.set_ready();  // read() opens the new ring
            continue;
        }
        open = true;
        if (m->has_head()) {
            arm.recheck_within(kHeldLook);
            continue;
        }
        if (m->after != SourceStep::Event) return arm.set_ready();  // a gap or notice to hand out
        WaitArm member;
        m->source->arm_wait(member);
        if (member.ready()) return arm.set_ready();
        for (const WaitArm::Ring& ring : member.rings()) arm.watch_ring(ring.reader, ring.next_seqno);
        if (member.recheck() != std::chrono::nanoseconds::max()) arm.recheck_within(member.recheck());
    }
    // Every member read to its end: the set ends once no writer holds it.
    if (!open && !writers_hold_set()) return arm.set_ready();
    // Runs in the set's thread: the manifest's descriptor lives with this
    // source, and pread and the lock probe are safe beside its own reads.
    arm.watch(kManifestLook, [this, generation = generation_, open] {
        auto now = read_set_generation(manifest_fd_);
        if (now && *now != generation) return true;  // members came or went
        return !open && !writers_hold_set();         // the last writer left
    });
}

}  // namespace evring
