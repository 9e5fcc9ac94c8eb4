// An instant as evring prints it (utc_time.hpp).
#include "util/utc_time.hpp"

#include <fmt/format.h>

#include <ctime>

namespace evring {

std::size_t write_utc_time(std::uint64_t epoch_nanos, char (&out)[kUtcTimeSize]) noexcept {
    const auto seconds = static_cast<std::time_t>(epoch_nanos / 1'000'000'000u);
    std::tm tm{};
    ::gmtime_r(&seconds, &tm);
    const auto written = fmt::format_to_n(out, sizeof out, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z",
                                          tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                                          tm.tm_sec, epoch_nanos % 1'000'000'000u);
    return written.size < sizeof out ? written.size : sizeof out;
}

}  // namespace evring
