// lib/read/selection_values.hpp — the values of a selection (selection.hpp),
// parsed with messages that name the option, the value and the reason:
// "bad --count '-5': a count cannot be negative". Each refusal is an error
// with errno EINVAL (a usage error). The CLI's other option values
// (tools/evring/output/values.hpp) are refused in the same words.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/flow_filter.hpp"
#include "evring/source/follow.hpp"
#include "source/event_predicate.hpp"

namespace evring {

// "bad OPTION 'TEXT': WHY", TEXT made printable and shortened; errno EINVAL.
Error bad_value(std::string_view option, std::string_view text, std::string_view why);
// Decimal digits only, at least one.
bool digits_only(std::string_view text);

// A count: decimal digits, 0 to 2^64 - 1.
Result<std::uint64_t> parse_count(std::string_view option, std::string_view text);
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

// Event type numbers without a schema: a decimal number, or RECORD_ERROR;
// nullopt when the text is neither.
std::optional<std::uint16_t> parse_event_type(std::uint16_t content_type, std::string_view text);
// --type: with a schema, a name of the schema (one rule everywhere: exact,
// else ignoring case, Schema::event) or a number; else an error listing the
// schema's names. Without a schema, as parse_event_type.
Result<std::uint16_t> parse_type_option(const Schema* schema, std::string_view text);

}  // namespace evring
