// tools/evring/output/values.hpp — option values, checked with messages that name
// the option, the value and the reason.
//
// CLI11 only splits the command line; every value is parsed here, so each
// refusal is one line: "bad --count '-5': a count cannot be negative". Each
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

namespace evring::cli {

// A count: decimal digits, 0 to 2^64 - 1.
Result<std::uint64_t> parse_count(std::string_view option, std::string_view text);
// An integer in [low, high] (a compression level).
Result<int> parse_int_in(std::string_view option, std::string_view text, int low, int high);
// A size with an optional binary unit: 4096, 64K, 512M, 4G, 64KiB (CLI11's parser).
Result<std::uint64_t> parse_size(std::string_view option, std::string_view text);
// One of `choices` (comma-separated in the message).
Result<std::string> parse_choice(std::string_view option, std::string_view text,
                                 std::initializer_list<std::string_view> choices);
// --from, --until and --count into the follow loop's start, stop and count
// (--from through the one resolver, evring/source/position.hpp).
Status parse_follow_range(FollowOptions& follow, std::string_view from, const std::optional<std::string>& until,
                          const std::optional<std::string>& count);
// --where EXPR (`option`) compiled against the source's schema (lib/query/where.hpp), into
// follow.where; `holder` keeps it alive. Nothing when `where` is empty; an
// error (a usage error) when there is no schema or the expression is bad.
// Span labels in it (`block == 15000009`) are looked up in `source` (which
// may move its read position; the follow loop positions it afterwards).
// A label no event carries makes the expression bad, naming the label.
// Ordered comparisons of labels (`block >= N`) read follow.span_labels, and
// are refused without it.
Status compile_where_option(FollowOptions& follow, const std::optional<std::string>& where, const Schema* schema,
                            std::unique_ptr<EventPredicate>& holder, EventSource* source = nullptr,
                            std::string_view option = "--where");
// --flow INDEX=VALUE into `filter`; with a schema also NAME=VALUE, NAME one
// of its flow tags (an unknown name is refused with the names it has).
Status add_flow(FlowFilter& filter, std::string_view text, const Schema* schema = nullptr);

}  // namespace evring::cli
