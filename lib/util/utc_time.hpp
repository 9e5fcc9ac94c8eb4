// lib/util/utc_time.hpp — an instant as evring prints it: ISO 8601 in UTC to
// the nanosecond, "2026-11-30T10:09:25.123456789Z" (30 characters: the years
// of 64-bit nanoseconds since 1970 have four digits). The one spelling behind `watch`'s times, the "time" keys
// of JSON lines and the assembled span JSON (query/event_json.hpp).
//
// Thread safety: pure function (gmtime_r).
#pragma once

#include <cstddef>
#include <cstdint>

namespace evring {

inline constexpr std::size_t kUtcTimeSize = 32;  // room for the 30 characters

// Writes the text into `out` (not terminated); returns its length.
std::size_t write_utc_time(std::uint64_t epoch_nanos, char (&out)[kUtcTimeSize]) noexcept;

}  // namespace evring
