// evring/clock.hpp — the wall clock used for record_epoch_nanos.
//
// Contract:
// - wall_clock_nanos() returns nanoseconds since the Unix epoch, tracking
//   CLOCK_REALTIME to within 1 µs (measured: docs/performance.md, the
//   micro-benchmark BM_ClockErrorVsRealtime in bench/micro/clock_bench.cpp
//   and clock_error_max_ns of `scripts/bench --json`; checked by
//   tests/util/clock_test.cpp).
// - Where the time-stamp counter is trustworthy it is read directly (rdtsc)
//   and scaled by an anchor (tsc0, ns0, ns-per-tick) taken against
//   CLOCK_REALTIME. "Trustworthy" means all of: the CPU reports an invariant
//   TSC (cpuid 0x80000007 EDX bit 8), the kernel's current clocksource is
//   "tsc" (so the kernel itself checked that the counters agree across
//   cores), and EVRING_CLOCK is unset, "auto" or "tsc". Otherwise, or with
//   EVRING_CLOCK=realtime, every call is clock_gettime(CLOCK_REALTIME) (a vDSO
//   call on Linux, not a system call).
// - The anchor is re-taken every ~50 ms by whichever caller first notices it
//   is due, through clock_gettime in the vDSO: no system call, no allocation,
//   no lock that can block (other callers keep using the previous anchor
//   meanwhile). The first call of a process reads the environment, cpuid and
//   one sysfs file (system calls, once); until the first calibration span
//   (about 3 ms) has passed, calls return CLOCK_REALTIME directly.
// - Each re-anchor compares the extrapolated time with CLOCK_REALTIME; after
//   three re-anchors in a row that disagree by more than 20 µs the process
//   falls back to CLOCK_REALTIME for good (a single step of the system clock
//   only costs one re-anchor interval of offset).
// - Like CLOCK_REALTIME itself, values are not guaranteed monotonic: a
//   re-anchor can move the clock by up to its error (well under 1 µs), and a
//   step of the system clock shows up within one re-anchor interval.
//
// Thread safety: any thread, any number of threads. The anchor is published
// through a seqlock (lib/util/clock.cpp documents the writer side).
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "evring/ring/shared_word.hpp"

namespace evring {

enum class ClockSource {
    Calibrating,  // TSC chosen; the first calibration span has not passed yet
    Tsc,          // rdtsc scaled by an anchor
    Realtime,     // clock_gettime(CLOCK_REALTIME) on every call
};

// The source wall_clock_nanos() uses now (initialises the clock if needed).
ClockSource wall_clock_source() noexcept;
const char* to_string(ClockSource source) noexcept;

// Forgets the calibration: the next call re-reads EVRING_CLOCK and starts
// over. For tests, and for a process that knows the system clock was stepped.
// Safe to call concurrently with wall_clock_nanos().
void restart_wall_clock() noexcept;

// CLOCK_REALTIME in nanoseconds since the epoch.
inline std::uint64_t realtime_nanos() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

namespace detail {

// The published anchor. Written only by lib/util/clock.cpp under the seqlock; all
// fields are accessed through shared_word.hpp (steps C1..C4 there, c1..c4 in
// wall_clock_nanos below).
struct alignas(64) ClockAnchor {
    std::uint64_t seq;            // odd while being rewritten
    std::uint64_t tsc0;           // counter value at the anchor
    std::uint64_t ns0;            // CLOCK_REALTIME at the anchor
    std::uint64_t mult;           // nanoseconds per tick, times 2^32
    std::uint64_t due_ticks;      // re-anchor once tsc - tsc0 reaches this; 0: slow path always
};
extern ClockAnchor g_clock_anchor;

// Everything that is not "a fresh anchor is published and covers tsc":
// first use, calibration, re-anchoring, torn reads, the CLOCK_REALTIME mode.
std::uint64_t wall_clock_slow(std::uint64_t tsc) noexcept;
// The same for a caller that has not read the counter (no anchor published):
// CLOCK_REALTIME directly in Realtime mode, else wall_clock_slow(read_tsc()).
std::uint64_t wall_clock_untimed() noexcept;

inline std::uint64_t read_tsc() noexcept {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
}

__extension__ typedef unsigned __int128 Uint128;

inline std::uint64_t scale_ticks(std::uint64_t ticks, std::uint64_t mult) noexcept {
    return static_cast<std::uint64_t>((static_cast<Uint128>(ticks) * mult) >> 32);
}

}  // namespace detail

inline std::uint64_t wall_clock_nanos() noexcept {
    using detail::g_clock_anchor;
    // c1, pairs with C4: if seq is even and unchanged at c4, the fields are one anchor.
    const std::uint64_t seq1 = shared::load_acquire(g_clock_anchor.seq);
    // c2: validated by the re-check at c4.
    const std::uint64_t tsc0 = shared::load_relaxed(g_clock_anchor.tsc0);
    const std::uint64_t ns0 = shared::load_relaxed(g_clock_anchor.ns0);
    const std::uint64_t mult = shared::load_relaxed(g_clock_anchor.mult);
    const std::uint64_t due = shared::load_relaxed(g_clock_anchor.due_ticks);
    shared::fence_acquire();                                         // c3, pairs with C2
    const std::uint64_t seq2 = shared::load_relaxed(g_clock_anchor.seq);  // c4
    // No anchor (CLOCK_REALTIME mode, first use, calibration): the counter
    // is not read at all. rdtsc costs as much as the vDSO call on some
    // guests (10 ns here), and in CLOCK_REALTIME mode it was pure overhead
    // (docs/performance.md, "The clock").
    if (due == 0) [[unlikely]]
        return detail::wall_clock_untimed();
    // Read after the anchor: rdtsc is not ordered with loads anyway, and a
    // later count only extrapolates further from the same, validated anchor.
    const std::uint64_t tsc = detail::read_tsc();
    // tsc < tsc0 wraps to a huge difference and also takes the slow path.
    if (seq1 != seq2 || (seq1 & 1) != 0 || tsc - tsc0 >= due) [[unlikely]]
        return detail::wall_clock_slow(tsc);
    return ns0 + detail::scale_ticks(tsc - tsc0, mult);
}

}  // namespace evring
