// lib/source/wait_plan.hpp — what a wait set sleeps on, and the sleep itself
// (wait_set.hpp; docs/event-loops.md).
//
// A WaitPlan is made in the set's owner thread from its members' WaitArms
// (wait_set.cpp) and handed whole to whoever sleeps on it: the owner thread
// itself (WaitSet::wait without a descriptor) or the set's thread
// (wait_thread.cpp). It is immutable once made, shared by pointer, and holds
// shares of everything it touches (the rings' readers, the set's own
// doorbells on them), so the sleeper never touches a source, and a plan may
// outlive what the owner thread has since done to its sources. The probes
// are the exception: they run sources' code, which wait_set.hpp's contract
// restricts, and remove() waits until the sleeper has left every plan that
// holds them.
//
// The sleep (sleep_on_plan, wait_sleep.cpp) is doorbell.hpp's protocol for
// many rings at once, as RingSetSource::wait does it for a set's members:
//
//   sleeper (here)                                  each ring's writers
//   D1 announce on every ring's doorbell word       W8 commit store
//   D2 seq_cst fence, D3 membarrier (once)          W9 fence (light or full)
//   D4 event_ready(next_seqno) of every ring        W10 load doorbell
//   D5 futex_waitv on the announced words and the   W11 CAS clearing bit 0,
//      plan's control word (private futex)              FUTEX_WAKE
//
// Per ring the Dekker argument of doorbell.hpp holds: D1 of its word comes
// before D2/D3 and they before its D4, so either D4 sees the commit or that
// ring's writer sees the announcement and wakes the futex_waitv (which
// returns when any word is woken or differs from the value it was given).
// The control word is how the owner thread interrupts a sleep: it changes
// the word (under the set's mutex) and wakes it.
//
// Thread safety: a plan is read-only; a Sleeper belongs to one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/source/wait_set.hpp"

namespace evring::detail {

// The set's own doorbell on one ring (the source keeps its own for its own
// wait()): attached in the owner thread, used only by the sleeper.
struct WaitBell {
    std::shared_ptr<const RingReader> reader;
    // None when attaching would have faulted (a file truncated under the
    // reader): the ring's source reports that, so the set wakes at once.
    std::optional<Doorbell> doorbell;
};

// nullptr-free: a plan's rings always carry their bell.
struct PlanRing {
    std::shared_ptr<WaitBell> bell;
    std::uint64_t next_seqno = 0;
};

struct WaitPlan {
    std::uint64_t serial = 0;            // the owner's count of plans made
    bool ready = false;                  // a member is ready now: wake at once
    std::vector<PlanRing> rings;
    std::vector<WaitArm::Probe> probes;
    // Wake by then whatever happens (a member's recheck_within).
    std::optional<std::chrono::steady_clock::time_point> wake_by;
};

// How often the sleeper looks at writers' liveness and at most probes.
inline constexpr std::chrono::milliseconds kLivenessInterval{100};
// The doorbell's bound on a reader's futex sleeps (doorbell.hpp).
inline constexpr std::chrono::microseconds kMinSleepInterval{100};
// How often rings that cannot be slept on are looked at.
inline constexpr std::chrono::milliseconds kPollInterval{1};

enum class SleepEnd {
    Woken,    // something may be ready: a commit, a writer gone, a probe, wake_by
    Control,  // the control word changed: the owner has a new plan (or stops)
    Timeout,  // `until` passed with nothing
};

struct WaitvEntry {  // struct futex_waitv
    std::uint64_t val;
    std::uint64_t uaddr;
    std::uint32_t flags;
    std::uint32_t reserved;
};

// What one sleeping thread remembers across plans: when it last slept on a
// futex (the rate bound), when it last looked at liveness and each probe.
class Sleeper {
public:
    // Sleeps on `plan` until it may have something, `control` differs from
    // `control_seen`, or `until`.
    SleepEnd sleep(const WaitPlan& plan, const std::uint32_t& control, std::uint32_t control_seen,
                   std::chrono::steady_clock::time_point until);
    // Read by the owner thread while the sleeper sleeps (WaitSet::stats):
    // relaxed, a count with nothing ordered after it.
    std::uint64_t sleeps() const noexcept { return sleeps_.load(std::memory_order_relaxed); }

private:
    bool look(const WaitPlan& plan, std::chrono::steady_clock::time_point now);
    bool liveness_due(const WaitPlan& plan, std::chrono::steady_clock::time_point now);
    bool can_futex(const WaitPlan& plan) const;
    SleepEnd futex_sleep(const WaitPlan& plan, const std::uint32_t& control, std::uint32_t control_seen,
                         std::chrono::steady_clock::time_point deadline);
    SleepEnd announce(const WaitPlan& plan);

    static constexpr std::uint64_t kNoPlan = ~std::uint64_t{0};

    std::chrono::steady_clock::time_point last_futex_sleep_{};
    std::chrono::steady_clock::time_point next_liveness_{};
    std::vector<std::chrono::steady_clock::time_point> probe_due_;
    std::uint64_t probes_of_ = ~std::uint64_t{0};  // the serial of the plan probe_due_ is for
    // The words announced (D1-D4 done) for the plan `announced_serial_`,
    // until a sleep on them ends other than by its deadline.
    std::vector<WaitvEntry> announced_;
    std::uint64_t announced_serial_ = kNoPlan;
    bool no_waitv_ = false;       // futex_waitv: ENOSYS (before Linux 5.16)
    bool no_membarrier_ = false;  // membarrier refused: poll
    std::atomic<std::uint64_t> sleeps_{0};
};

// Control-word helpers (private futexes: the owner and the sleeper are
// threads of one process).
void wake_control(std::uint32_t* control) noexcept;
// Sleeps while *control == seen, until `deadline` (none: forever).
void wait_control(const std::uint32_t* control, std::uint32_t seen,
                  std::optional<std::chrono::steady_clock::time_point> deadline) noexcept;

}  // namespace evring::detail
