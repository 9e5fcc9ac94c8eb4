#include "output/values.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>

#include "output/escape.hpp"
#include "query/span_seek.hpp"
#include "query/where.hpp"

namespace evring::cli {
namespace {

Error bad(std::string_view option, std::string_view text, std::string_view why) {
    return Error(EINVAL, fmt::format("bad {} '{}': {}", option, printable(shortened(text)), why));
}

bool digits_only(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

Result<std::uint64_t> parse_count(std::string_view option, std::string_view text) {
    if (!text.empty() && text[0] == '-') return bad(option, text, "a count cannot be negative");
    if (!digits_only(text)) return bad(option, text, "expected a whole number (decimal digits)");
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return bad(option, text, "too large (at most 18446744073709551615)");
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

Result<int> parse_int_in(std::string_view option, std::string_view text, int low, int high) {
    const bool negative = !text.empty() && text[0] == '-';
    if (!digits_only(negative ? text.substr(1) : text)) return bad(option, text, "expected a whole number");
    long long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high)
        return bad(option, text, fmt::format("must be {} to {}", low, high));
    return static_cast<int>(value);
}

Result<std::uint64_t> parse_size(std::string_view option, std::string_view text) {
    // CLI11's own size parser (units, overflow); it reads "-5" as 2^64 - 5,
    // so a sign is refused first.
    if (!text.empty() && text[0] == '-') return bad(option, text, "a size cannot be negative");
    if (text.empty() || text[0] < '0' || text[0] > '9')
        return bad(option, text, "expected a size such as 4096, 64K, 512M or 4G");
    std::string converted(text);
    CLI::AsSizeValue binary_units(false);
    std::string why;
    try {
        why = binary_units(converted);
    } catch (const CLI::Error&) {  // CLI11 throws for an unknown unit or an overflow
        why = "refused";
    }
    if (!why.empty()) return bad(option, text, "expected a size such as 4096, 64K, 512M or 4G (binary units)");
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(converted.data(), converted.data() + converted.size(), value);
    if (ec != std::errc() || end != converted.data() + converted.size())
        return bad(option, text, "too large (at most 2^64 - 1 bytes)");
    return value;
}

Result<std::string> parse_choice(std::string_view option, std::string_view text,
                                 std::initializer_list<std::string_view> choices) {
    std::string listed;
    for (std::string_view c : choices) {
        if (c == text) return std::string(text);
        listed += (listed.empty() ? "" : ", ") + std::string(c);
    }
    return bad(option, text, "expected one of " + listed);
}

namespace {

// The content_ext index a --flow names: digits, or a flow tag of the schema.
Result<std::uint64_t> flow_index(std::string_view option_text, std::string_view name, const Schema* schema) {
    if (digits_only(name)) {
        std::uint64_t index = 0;
        auto r = std::from_chars(name.data(), name.data() + name.size(), index);
        if (r.ec != std::errc() || index > 3) return bad("--flow", option_text, "INDEX is 0 to 3 (content_ext has 4 words)");
        return index;
    }
    if (schema == nullptr)
        return bad("--flow", option_text, "expected INDEX=VALUE, e.g. 1=42 (no schema describes this source, so "
                                          "flow tags have no names)");
    if (auto index = schema->flow_tag(name)) return *index;
    std::string names;
    for (const std::string& tag : schema->flow_tags())
        if (!tag.empty()) names += (names.empty() ? "" : ", ") + tag;
    return bad("--flow", option_text,
               names.empty() ? fmt::format("schema {} names no flow tags; expected INDEX=VALUE, e.g. 1=42",
                                           schema->content_name())
                             : fmt::format("not a flow tag of schema {}; expected INDEX=VALUE or NAME=VALUE with "
                                           "NAME one of {}", schema->content_name(), names));
}

}  // namespace

Status add_flow(FlowFilter& filter, std::string_view text, const Schema* schema) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || !digits_only(text.substr(eq + 1)))
        return bad("--flow", text, schema ? "expected NAME=VALUE or INDEX=VALUE, e.g. 1=42" : "expected INDEX=VALUE, e.g. 1=42");
    auto index = flow_index(text, text.substr(0, eq), schema);
    if (!index) return std::move(index).error();
    std::uint64_t value = 0;
    auto r2 = std::from_chars(text.data() + eq + 1, text.data() + text.size(), value);
    if (r2.ec != std::errc()) return bad("--flow", text, "a number is too large");
    if (!filter.require_flow(*index, value)) return bad("--flow", text, "at most 8 --flow conditions");
    return {};
}

}  // namespace evring::cli
