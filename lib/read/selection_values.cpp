// The values of a selection (selection_values.hpp).
#include "read/selection_values.hpp"

#include <fmt/format.h>

#include <charconv>

#include "evring/format.hpp"
#include "query/span_seek.hpp"
#include "query/where.hpp"
#include "util/text_escape.hpp"

namespace evring {

Error bad_value(std::string_view option, std::string_view text, std::string_view why) {
    return Error(EINVAL, fmt::format("bad {} '{}': {}", option, printable(shortened(text)), why));
}

bool digits_only(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text)
        if (c < '0' || c > '9') return false;
    return true;
}

Result<std::uint64_t> parse_count(std::string_view option, std::string_view text) {
    if (!text.empty() && text[0] == '-') return bad_value(option, text, "a count cannot be negative");
    if (!digits_only(text)) return bad_value(option, text, "expected a whole number (decimal digits)");
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return bad_value(option, text, "too large (at most 18446744073709551615)");
    return value;
}

Status parse_follow_range(FollowOptions& follow, std::string_view from, const std::optional<std::string>& until,
                          const std::optional<std::string>& count) {
    auto start = parse_start(from, "--from");
    if (!start) return std::move(start).error();
    follow.start = *start;
    follow.seek = &seek_source;  // span positions (block:N) for every command
    if (until) {
        auto stop = parse_stop(*until, "--until");
        if (!stop) return std::move(stop).error();
        follow.stop = *stop;
    }
    if (count) {
        auto n = parse_count("--count", *count);
        if (!n) return std::move(n).error();
        follow.count = *n;
    }
    return {};
}

Status compile_where_option(FollowOptions& follow, const std::optional<std::string>& where, const Schema* schema,
                            std::unique_ptr<EventPredicate>& holder, EventSource* source, std::string_view option) {
    if (!where) return {};
    if (schema == nullptr)
        return Error(EINVAL,
                     fmt::format("bad {}: the source has no schema to name fields by (give --schema FILE)", option));
    SpanLabelResolver labels;
    if (source != nullptr)
        labels = [&](const SchemaSpan& span, std::uint64_t label) {
            SpanRef ref;
            ref.span = span.name;
            ref.label = label;
            ref.text = fmt::format("{}:{}", span.name, label);
            return resolve_span(*source, ref, *schema);
        };
    auto compiled = compile_where(*where, *schema, option, labels, follow.span_labels);
    if (!compiled) return std::move(compiled).error();
    holder = std::move(*compiled);
    follow.where = holder.get();
    return {};
}

namespace {

// The content_ext index a --flow names: digits, or a flow tag of the schema.
Result<std::uint64_t> flow_index(std::string_view option_text, std::string_view name, const Schema* schema) {
    if (digits_only(name)) {
        std::uint64_t index = 0;
        auto r = std::from_chars(name.data(), name.data() + name.size(), index);
        if (r.ec != std::errc() || index > 3) return bad_value("--flow", option_text, "INDEX is 0 to 3 (content_ext has 4 words)");
        return index;
    }
    if (schema == nullptr)
        return bad_value("--flow", option_text, "expected INDEX=VALUE, e.g. 1=42 (no schema describes this source, so "
                                          "flow tags have no names)");
    if (auto index = schema->flow_tag(name)) return *index;
    std::string names;
    for (const std::string& tag : schema->flow_tags())
        if (!tag.empty()) names += (names.empty() ? "" : ", ") + tag;
    return bad_value("--flow", option_text,
               names.empty() ? fmt::format("schema {} names no flow tags; expected INDEX=VALUE, e.g. 1=42",
                                           schema->content_name())
                             : fmt::format("not a flow tag of schema {}; expected INDEX=VALUE or NAME=VALUE with "
                                           "NAME one of {}", schema->content_name(), names));
}

}  // namespace

Status add_flow(FlowFilter& filter, std::string_view text, const Schema* schema) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || !digits_only(text.substr(eq + 1)))
        return bad_value("--flow", text, schema ? "expected NAME=VALUE or INDEX=VALUE, e.g. 1=42" : "expected INDEX=VALUE, e.g. 1=42");
    auto index = flow_index(text, text.substr(0, eq), schema);
    if (!index) return std::move(index).error();
    std::uint64_t value = 0;
    auto r2 = std::from_chars(text.data() + eq + 1, text.data() + text.size(), value);
    if (r2.ec != std::errc()) return bad_value("--flow", text, "a number is too large");
    if (!filter.require_flow(*index, value)) return bad_value("--flow", text, "at most 8 --flow conditions");
    return {};
}

std::optional<std::uint16_t> parse_event_type(std::uint16_t /*content_type*/, std::string_view text) {
    if (text == "RECORD_ERROR" || text == "record_error") return kRecordErrorEventType;
    std::uint16_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

Result<std::uint16_t> parse_type_option(const Schema* schema, std::string_view text) {
    if (schema == nullptr) {
        if (auto parsed = parse_event_type(0, text)) return *parsed;
        return Error(EINVAL, fmt::format("bad --type '{}': expected an event type number (0-65535) or RECORD_ERROR "
                                         "(no schema describes this source, so there are no other names)",
                                         printable(shortened(text))));
    }
    if (const SchemaEvent* type = schema->event(text)) return type->number;  // exact, else ignoring case
    if (!text.empty() && text[0] >= '0' && text[0] <= '9')
        if (auto number = parse_event_type(0, text)) return *number;
    std::string names;
    for (const SchemaEvent& e : schema->events()) names += (names.empty() ? "" : ", ") + e.name;
    return Error(EINVAL, fmt::format("bad --type '{}': not an event type of schema {}; expected a number (0-65535) "
                                     "or one of {}", printable(shortened(text)), schema->content_name(), names));
}

}  // namespace evring
