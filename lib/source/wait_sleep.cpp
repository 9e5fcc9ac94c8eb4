// The sleep of a wait set (wait_plan.hpp): doorbell.hpp's D1-D5 over every
// ring of a plan at once, with the plan's control word in the same
// futex_waitv so that the owner thread can interrupt it.
#include <linux/futex.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <ctime>

#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/wait_plan.hpp"
#include "util/membarrier.hpp"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

namespace evring::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kWaitvMax = 128;      // FUTEX_WAITV_MAX
constexpr std::uint32_t kFutex32 = 2;       // FUTEX2_SIZE_U32
constexpr std::uint32_t kFutexPrivate = 128;  // FUTEX2_PRIVATE

// steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux), which futex_waitv
// and FUTEX_WAIT_BITSET take as absolute deadlines.
timespec to_timespec(Clock::time_point at) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    return ts;
}

// Runs `read` under the SIGBUS guard: false when the ring's file was cut
// short under it (its source reports that; the set just wakes).
template <class F>
bool guarded(F&& read) {
    const void* fault = nullptr;
    return run_under_sigbus_frame(std::forward<F>(read), fault);
}

// D4 for one ring, and the first look of every sleep: the event is there
// (committed or overwritten), or its file faulted.
bool ring_ready(const PlanRing& ring) {
    if (!ring.bell->doorbell) return true;
    bool ready = true;
    if (!guarded([&] { ready = ring.bell->doorbell->event_ready(ring.next_seqno); })) return true;
    return ready;
}

// As RingSource::writer_gone: the writer's pidfd, else its lock.
bool writer_gone(const RingReader& reader) {
    if (const int pidfd = reader.writer_exit_fd(); pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        return ::poll(&p, 1, 0) > 0;
    }
    return !reader.writer_alive();
}

bool control_changed(const std::uint32_t& control, std::uint32_t seen) {
    // Acquire: pairs with the owner's release store (wait_set.cpp), so the
    // plan it posted under the mutex is there once the change is seen.
    return shared::load_acquire(control) != seen;
}

}  // namespace

void wake_control(std::uint32_t* control) noexcept {
    ::syscall(SYS_futex, control, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void wait_control(const std::uint32_t* control, std::uint32_t seen,
                  std::optional<Clock::time_point> deadline) noexcept {
    const timespec ts = deadline ? to_timespec(*deadline) : timespec{};
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. Returns
    // at once when the word differs (EAGAIN); a wake, a signal or the
    // deadline end it too: the caller looks again either way.
    ::syscall(SYS_futex, const_cast<std::uint32_t*>(control), FUTEX_WAIT_BITSET_PRIVATE, seen,
              deadline ? &ts : nullptr, nullptr, FUTEX_BITSET_MATCH_ANY);
}

bool Sleeper::liveness_due(const WaitPlan& plan, Clock::time_point now) {
    if (plan.rings.empty() || now < next_liveness_) return false;
    next_liveness_ = now + kLivenessInterval;
    return std::any_of(plan.rings.begin(), plan.rings.end(),
                       [](const PlanRing& r) { return writer_gone(*r.bell->reader); });
}

// Everything that can be looked at without sleeping; true: wake the owner.
bool Sleeper::look(const WaitPlan& plan, Clock::time_point now) {
    if (plan.ready) return true;
    if (plan.wake_by && now >= *plan.wake_by) return true;
    if (std::any_of(plan.rings.begin(), plan.rings.end(), ring_ready)) return true;
    if (liveness_due(plan, now)) return true;
    if (probes_of_ != plan.serial) {  // a new plan: its probes are first due a period from now
        probes_of_ = plan.serial;
        probe_due_.clear();
        for (const auto& probe : plan.probes) probe_due_.push_back(now + probe.period);
    }
    for (std::size_t i = 0; i < plan.probes.size() && i < probe_due_.size(); ++i) {
        if (now < probe_due_[i]) continue;
        probe_due_[i] = now + plan.probes[i].period;
        if (plan.probes[i].changed()) return true;
    }
    return false;
}

bool Sleeper::can_futex(const WaitPlan& plan) const {
    if (no_waitv_ || no_membarrier_ || plan.rings.empty() || plan.rings.size() >= kWaitvMax) return false;
    return std::all_of(plan.rings.begin(), plan.rings.end(), [](const PlanRing& r) {
        return r.bell->doorbell && r.bell->doorbell->mode() == Doorbell::Mode::Futex;
    });
}

SleepEnd Sleeper::sleep(const WaitPlan& plan, const std::uint32_t& control, std::uint32_t control_seen,
                        Clock::time_point until) {
    for (;;) {
        const auto now = Clock::now();
        if (control_changed(control, control_seen)) return SleepEnd::Control;
        if (look(plan, now)) return SleepEnd::Woken;
        if (now >= until) return SleepEnd::Timeout;
        auto deadline = until;
        if (plan.wake_by) deadline = std::min(deadline, *plan.wake_by);
        if (!plan.rings.empty()) deadline = std::min(deadline, next_liveness_);
        if (probes_of_ == plan.serial)
            for (const auto due : probe_due_) deadline = std::min(deadline, due);
        if (can_futex(plan)) {
            const SleepEnd end = futex_sleep(plan, control, control_seen, deadline);
            if (end != SleepEnd::Timeout) return end;
            continue;  // the deadline (or a pause): look again
        }
        // Nothing to sleep on but time: the control word alone, at most a
        // poll interval when rings must be looked at.
        if (!plan.rings.empty()) deadline = std::min(deadline, now + kPollInterval);
        sleeps_.fetch_add(1, std::memory_order_relaxed);
        wait_control(&control, control_seen,
                     deadline == Clock::time_point::max() ? std::nullopt : std::optional(deadline));
    }
}

// D1-D4 for every ring of the plan; fills announced_ with the words and the
// values announced. Woken when a ring is ready (or faulted) meanwhile.
SleepEnd Sleeper::announce(const WaitPlan& plan) {
    announced_.clear();
    announced_serial_ = kNoPlan;
    for (const PlanRing& ring : plan.rings) {
        std::uint32_t expected = 0;
        std::uint32_t* word = nullptr;
        // D1, announce (a seq_cst RMW on the word, in the ring's file).
        if (!guarded([&] { word = ring.bell->doorbell->announce_sleep(expected); }) || word == nullptr)
            return SleepEnd::Woken;
        announced_.push_back({expected, reinterpret_cast<std::uint64_t>(word), kFutex32, 0});
    }
    shared::fence_seq_cst();  // D2, Dekker: pairs with each writer's W9
    if (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0) {  // D3, for writers with the light W9
        no_membarrier_ = true;  // as Doorbell: without it, poll
        return SleepEnd::Timeout;
    }
    if (std::any_of(plan.rings.begin(), plan.rings.end(), ring_ready)) return SleepEnd::Woken;  // D4
    announced_serial_ = plan.serial;
    return SleepEnd::Control;  // (not returned to callers: "announced")
}

SleepEnd Sleeper::futex_sleep(const WaitPlan& plan, const std::uint32_t& control, std::uint32_t control_seen,
                              Clock::time_point deadline) {
    // A sleep of the same plan that timed out left its announcements in
    // place: a word still holding the value announced has seen no writer's
    // W11 since, so sleeping on it again with that value loses nothing
    // (futex_waitv compares), and the look every 100 ms costs no membarrier.
    if (announced_serial_ != plan.serial) {
        const auto now = Clock::now();
        // The doorbell's rate bound: asked to sleep again within the
        // interval, wait it out (the owner may still interrupt), then look.
        if (now - last_futex_sleep_ < kMinSleepInterval) {
            wait_control(&control, control_seen, std::min(deadline, last_futex_sleep_ + kMinSleepInterval));
            return control_changed(control, control_seen) ? SleepEnd::Control : SleepEnd::Timeout;
        }
        last_futex_sleep_ = now;
        if (const SleepEnd end = announce(plan); end != SleepEnd::Control) return end;
    }
    WaitvEntry entries[kWaitvMax];
    const std::size_t rings = announced_.size();
    std::copy(announced_.begin(), announced_.end(), entries);
    entries[rings] = {control_seen, reinterpret_cast<std::uint64_t>(&control), kFutex32 | kFutexPrivate, 0};
    const timespec at = to_timespec(deadline);
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    // D5: returns when any word is woken or differs from its value, or at the deadline.
    const long woken = ::syscall(SYS_futex_waitv, entries, rings + 1, 0,
                                 deadline == Clock::time_point::max() ? nullptr : &at, CLOCK_MONOTONIC);
    if (woken < 0 && (errno == ETIMEDOUT || errno == EINTR)) return SleepEnd::Timeout;  // announcements stand
    announced_serial_ = kNoPlan;
    if (woken >= 0) {
        if (static_cast<std::size_t>(woken) != rings) return SleepEnd::Woken;
        return control_changed(control, control_seen) ? SleepEnd::Control : SleepEnd::Timeout;
    }
    switch (errno) {
    case EAGAIN:  // a word differed: the control word, or a ring's (a writer's W11 since D1)
        return control_changed(control, control_seen) ? SleepEnd::Control : SleepEnd::Woken;
    case EFAULT:  // a ring's word is no longer mapped: its source will say why
        return SleepEnd::Woken;
    default:  // ENOSYS before Linux 5.16 (or a kernel refusing it): poll from now on
        no_waitv_ = true;
        return SleepEnd::Timeout;
    }
}

}  // namespace evring::detail
