// evring/clock.hpp — the wall clock used for record_epoch_nanos.
//
// Contract: nanoseconds since the Unix epoch (CLOCK_REALTIME). On Linux this
// is a vDSO call, not a system call.
#pragma once

#include <time.h>

#include <cstdint>

namespace evring {

inline std::uint64_t wall_clock_nanos() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace evring
