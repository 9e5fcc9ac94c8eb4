// tools/evring/capture/capture_options.hpp — the options of flight-recorder
// captures (`evring record --trigger`, capture.hpp), as typed and as checked.
//
// Thread safety: plain values and a pure function (it stats the output path).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "evring/error.hpp"

namespace evring::cli {

// The options as typed (CLI11 fills them in).
struct CaptureOptions {
    std::optional<std::string> trigger;
    std::optional<std::string> before;
    std::optional<std::string> after;
    std::optional<std::string> cooldown;
    std::optional<std::string> max_captures;
};

struct CapturePlan {
    std::string dir;
    std::uint64_t before_nanos = 10'000'000'000ull;
    std::uint64_t after_nanos = 5'000'000'000ull;
    std::uint64_t cooldown_nanos = 0;
    std::uint64_t max_captures = 0;  // 0: no limit
};

// nullopt without --trigger (then --before, --after, --cooldown and
// --max-captures are refused); usage errors name the option and the value.
Result<std::optional<CapturePlan>> plan_captures(const CaptureOptions& options, const std::string& output);

}  // namespace evring::cli
