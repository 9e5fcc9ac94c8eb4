// The slow side of evring/clock.hpp: choosing the source, calibrating the
// TSC against CLOCK_REALTIME and re-anchoring it.
//
// Writer side of the anchor seqlock (the reader side, c1..c4, is
// wall_clock_nanos()):
//   C1. seq := seq + 1 (odd), relaxed;
//   C2. release fence      — pairs with c3: a reader that sees any field of C3
//                            then sees seq changed when it re-checks (c4);
//   C3. fields, relaxed;
//   C4. seq := seq + 1 (even), release — pairs with c1: publishes the fields.
// Only the holder of g_busy writes the anchor or g_state, so there is one
// writer at a time. Callers that find g_busy taken do not wait: they return
// CLOCK_REALTIME for that one call.
#include "evring/clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace evring {
namespace detail {
ClockAnchor g_clock_anchor{};  // due_ticks == 0: every call takes the slow path
}  // namespace detail

namespace {

using detail::g_clock_anchor;
using detail::scale_ticks;
using detail::Uint128;

enum Mode : int { kUnknown, kCalibrating, kTsc, kRealtime };

constexpr std::uint64_t kCalibrationSpanNs = 3'000'000;      // first frequency estimate
constexpr std::uint64_t kReanchorIntervalNs = 50'000'000;    // steady-state re-anchor period
constexpr std::uint64_t kDisagreementNs = 20'000;            // a re-anchor this far off is "bad"
constexpr int kBadReanchorsBeforeFallback = 3;
constexpr std::uint64_t kMaxAnchorBracketTicks = 20'000;     // ~8 µs at 2.6 GHz: reject slower reads

// Read outside the lock to short-cut the CLOCK_REALTIME mode.
std::atomic<int> g_mode{kUnknown};
// The try-lock that makes the holder the only writer of the anchor and g_state.
std::atomic<bool> g_busy{false};

struct Anchor {
    std::uint64_t tsc = 0;
    std::uint64_t ns = 0;
};

// Owned by the holder of g_busy.
struct State {
    Anchor last;         // the anchor published most recently (or the calibration start)
    int bad_in_row = 0;  // consecutive re-anchors that disagreed by more than kDisagreementNs
} g_state;

std::uint64_t ordered_tsc() noexcept {
#if defined(__x86_64__)
    _mm_lfence();  // do not read the counter before earlier instructions finish
    const std::uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return 0;
#endif
}

// The CLOCK_REALTIME reading bracketed most tightly by two counter reads, of
// five tries; false if even the best bracket was too wide (we were preempted).
bool take_anchor(Anchor& out) noexcept {
    std::uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 5; ++i) {
        const std::uint64_t before = ordered_tsc();
        const std::uint64_t ns = realtime_nanos();
        const std::uint64_t after = ordered_tsc();
        if (after >= before && after - before < best_width) {
            best_width = after - before;
            out = Anchor{before + (after - before) / 2, ns};
        }
    }
    return best_width <= kMaxAnchorBracketTicks;
}

void publish(const Anchor& anchor, std::uint64_t mult, std::uint64_t due_ticks) noexcept {
    std::uint64_t& seq = g_clock_anchor.seq;
    // Relaxed: only the lock holder writes seq.
    const std::uint64_t s = shared::load_relaxed(seq);
    shared::store_relaxed(seq, s + 1);  // C1: C2 orders it before the field stores
    shared::fence_release();            // C2, pairs with c3
    shared::store_relaxed(g_clock_anchor.tsc0, anchor.tsc);  // C3
    shared::store_relaxed(g_clock_anchor.ns0, anchor.ns);    // C3
    shared::store_relaxed(g_clock_anchor.mult, mult);        // C3
    shared::store_relaxed(g_clock_anchor.due_ticks, due_ticks);  // C3
    shared::store_release(seq, s + 2);  // C4, pairs with c1
}

bool cpu_has_invariant_tsc() noexcept {
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
    __cpuid(0x80000007u, eax, ebx, ecx, edx);
    return (edx & (1u << 8)) != 0;
#else
    return false;
#endif
}

bool kernel_clocksource_is_tsc() noexcept {
    const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                          O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char text[32] = {};
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    return n >= 3 && std::strncmp(text, "tsc", 3) == 0 && (n == 3 || text[3] == '\n');
}

// EVRING_CLOCK: "realtime" forces clock_gettime; "tsc" trusts an invariant TSC
// even when the kernel uses another clocksource; anything else means auto.
bool tsc_is_trustworthy() noexcept {
    const char* choice = std::getenv("EVRING_CLOCK");
    if (choice != nullptr && std::strcmp(choice, "realtime") == 0) return false;
    if (!cpu_has_invariant_tsc()) return false;
    if (choice != nullptr && std::strcmp(choice, "tsc") == 0) return true;
    return kernel_clocksource_is_tsc();
}

std::uint64_t ticks_for(std::uint64_t ns, std::uint64_t mult) noexcept {
    return static_cast<std::uint64_t>((static_cast<Uint128>(ns) << 32) / mult);
}

std::uint64_t nanos_per_tick_fixed(const Anchor& from, const Anchor& to) noexcept {
    return static_cast<std::uint64_t>((static_cast<Uint128>(to.ns - from.ns) << 32) /
                                      (to.tsc - from.tsc));
}

void fall_back_to_realtime() noexcept {
    g_mode.store(kRealtime, std::memory_order_relaxed);  // relaxed: a hint; the anchor says the same
    publish(Anchor{}, 0, 0);
}

// Called with g_busy held. Returns the current time.
std::uint64_t locked_step(std::uint64_t tsc) noexcept {
    switch (g_mode.load(std::memory_order_relaxed)) {  // relaxed: we are the only writer
    case kUnknown: {
        if (!tsc_is_trustworthy()) {
            fall_back_to_realtime();
            return realtime_nanos();
        }
        Anchor start;
        take_anchor(start);
        g_state = State{start, 0};
        g_mode.store(kCalibrating, std::memory_order_relaxed);
        return start.ns;
    }
    case kCalibrating: {
        const std::uint64_t now = realtime_nanos();
        Anchor end;
        if (now - g_state.last.ns < kCalibrationSpanNs || !take_anchor(end) ||
            end.tsc <= g_state.last.tsc || end.ns <= g_state.last.ns)
            return now;
        const std::uint64_t mult = nanos_per_tick_fixed(g_state.last, end);
        if (mult == 0) {  // more than 2^32 ticks per ns: not a TSC we understand
            fall_back_to_realtime();
            return now;
        }
        publish(end, mult, 4 * (end.tsc - g_state.last.tsc));
        g_state.last = end;
        g_mode.store(kTsc, std::memory_order_relaxed);
        return end.ns;
    }
    case kTsc:
        break;
    default:
        return realtime_nanos();
    }

    // Re-anchor. We are the only writer, so the published fields are stable
    // (relaxed: our own stores).
    const std::uint64_t tsc0 = shared::load_relaxed(g_clock_anchor.tsc0);
    const std::uint64_t ns0 = shared::load_relaxed(g_clock_anchor.ns0);
    const std::uint64_t mult = shared::load_relaxed(g_clock_anchor.mult);
    if (tsc >= tsc0 && tsc - tsc0 < shared::load_relaxed(g_clock_anchor.due_ticks))
        return ns0 + scale_ticks(tsc - tsc0, mult);  // another thread re-anchored meanwhile
    Anchor now;
    if (!take_anchor(now) || now.tsc <= tsc0) return realtime_nanos();  // retry on a later call

    const std::uint64_t predicted = ns0 + scale_ticks(now.tsc - tsc0, mult);
    const std::uint64_t disagreement = predicted > now.ns ? predicted - now.ns : now.ns - predicted;
    std::uint64_t new_mult = mult;
    if (disagreement > kDisagreementNs) {
        // A clock step, or a counter that is not what we thought. Keep the old
        // rate (a step would poison a new estimate); give up after a few.
        if (++g_state.bad_in_row >= kBadReanchorsBeforeFallback) {
            fall_back_to_realtime();
            return now.ns;
        }
    } else {
        g_state.bad_in_row = 0;
        if (now.ns > g_state.last.ns && now.tsc > g_state.last.tsc) {
            const std::uint64_t estimate = nanos_per_tick_fixed(g_state.last, now);
            // Accept rate changes of up to 1 % (NTP slews by at most 0.05 %).
            if (estimate > mult - mult / 100 && estimate < mult + mult / 100) new_mult = estimate;
        }
    }
    const std::uint64_t span = now.tsc - g_state.last.tsc;
    const std::uint64_t steady = ticks_for(kReanchorIntervalNs, new_mult);
    publish(now, new_mult, span < steady / 4 ? 4 * span : steady);
    g_state.last = now;
    return now.ns;
}

}  // namespace

namespace detail {

std::uint64_t wall_clock_slow(std::uint64_t tsc) noexcept {
    // Relaxed: once Realtime, the anchor also sends every call here.
    if (g_mode.load(std::memory_order_relaxed) == kRealtime) return realtime_nanos();
    // Acquire: see the previous holder's g_state and g_mode writes.
    if (g_busy.exchange(true, std::memory_order_acquire)) return realtime_nanos();
    const std::uint64_t now = locked_step(tsc);
    // Release: hand g_state and g_mode to the next holder.
    g_busy.store(false, std::memory_order_release);
    return now;
}

std::uint64_t wall_clock_untimed() noexcept {
    // Relaxed: as in wall_clock_slow; once Realtime, always Realtime until a restart.
    if (g_mode.load(std::memory_order_relaxed) == kRealtime) return realtime_nanos();
    return wall_clock_slow(read_tsc());
}

}  // namespace detail

ClockSource wall_clock_source() noexcept {
    if (g_mode.load(std::memory_order_relaxed) == kUnknown) (void)wall_clock_nanos();
    // Relaxed: a report, not a synchronisation point.
    switch (g_mode.load(std::memory_order_relaxed)) {
    case kTsc:
        return ClockSource::Tsc;
    case kRealtime:
        return ClockSource::Realtime;
    default:
        return ClockSource::Calibrating;
    }
}

const char* to_string(ClockSource source) noexcept {
    switch (source) {
    case ClockSource::Calibrating:
        return "tsc (calibrating)";
    case ClockSource::Tsc:
        return "tsc";
    case ClockSource::Realtime:
        return "realtime";
    }
    return "unknown";
}

void restart_wall_clock() noexcept {
    // Acquire: as in wall_clock_slow; spin, this is not a hot path.
    while (g_busy.exchange(true, std::memory_order_acquire)) {
    }
    publish(Anchor{}, 0, 0);
    g_state = State{};
    g_mode.store(kUnknown, std::memory_order_relaxed);  // relaxed: ordered by the release below
    g_busy.store(false, std::memory_order_release);
}

}  // namespace evring
