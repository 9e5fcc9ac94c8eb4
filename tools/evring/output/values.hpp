// tools/evring/output/values.hpp — option values, checked with messages that name
// the option, the value and the reason.
//
// CLI11 only splits the command line; every value is parsed here or, for the
// values of a selection, in lib/read/selection_values.hpp, so each refusal is
// one line: "bad --count '-5': a count cannot be negative". Each
// returns an error with errno EINVAL (a usage error, exit 2).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/source/flow_filter.hpp"
#include "evring/source/follow.hpp"
#include "evring/schema/schema.hpp"
#include "read/selection_values.hpp"  // parse_count, parse_follow_range, compile_where_option, add_flow

namespace evring::cli {

// An integer in [low, high] (a compression level).
Result<int> parse_int_in(std::string_view option, std::string_view text, int low, int high);
// A size with an optional binary unit: 4096, 64K, 512M, 4G, 64KiB (CLI11's parser).
Result<std::uint64_t> parse_size(std::string_view option, std::string_view text);
// One of `choices` (comma-separated in the message).
Result<std::string> parse_choice(std::string_view option, std::string_view text,
                                 std::initializer_list<std::string_view> choices);
}  // namespace evring::cli
