// Subjects of the NATS encoding. See nats_encoding.hpp and docs/distributed.md.
#include <fmt/format.h>

#include <cerrno>

#include "nats/nats_encoding.hpp"
#include "wire_text.hpp"

namespace evring::nats {
namespace {

bool all_digits(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// A type name usable as a subject token and never mistaken for a number or
// for the control token: [A-Za-z0-9_-], not starting with '_', not all digits.
bool is_type_name_token(std::string_view name) {
    if (name.empty() || name.front() == '_' || all_digits(name)) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    return true;
}

std::string_view control_token_of(MessageKind kind) {
    switch (kind) {
    case MessageKind::Gap: return "gap";
    case MessageKind::Announcement: return "ring";
    case MessageKind::Schema: return "schema";
    case MessageKind::Batch: return "batch";
    case MessageKind::Event: break;
    }
    return "event";
}

}  // namespace

std::string_view describe(MessageKind kind) noexcept {
    switch (kind) {
    case MessageKind::Event: return "event";
    case MessageKind::Gap: return "gap";
    case MessageKind::Announcement: return "announcement";
    case MessageKind::Schema: return "schema";
    case MessageKind::Batch: return "batch";
    }
    return "unknown";
}

bool is_subject_token(std::string_view token) noexcept {
    if (token.empty()) return false;
    for (char c : token) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f || c == '.' || c == '*' || c == '>') return false;
    }
    return true;
}

Status validate_subject_layout(const SubjectLayout& layout) {
    const std::string& prefix = layout.prefix;
    if (prefix.empty()) return Error(EINVAL, "empty subject prefix");
    if (prefix.size() > kMaxPrefixSize)
        return Error(EINVAL, fmt::format("subject prefix of {} bytes is longer than {}", prefix.size(), kMaxPrefixSize));
    std::string_view rest = prefix;
    for (;;) {
        std::size_t dot = rest.find('.');
        std::string_view token = rest.substr(0, dot);
        if (!is_subject_token(token))
            return Error(EINVAL, fmt::format("subject prefix '{}' has an empty token or one holding a wildcard, "
                                             "a space or a control character",
                                             prefix));
        if (dot == std::string_view::npos) break;
        rest = rest.substr(dot + 1);
    }
    if (layout.flow_tag < -1 || layout.flow_tag > 3)
        return Error(EINVAL, fmt::format("flow tag {} in subjects: expected 0 to 3", layout.flow_tag));
    for (std::size_t type = 0; type < layout.type_names.size(); ++type) {
        const std::string& name = layout.type_names[type];
        if (!name.empty() && !is_type_name_token(name))
            return Error(EINVAL, fmt::format("event type {} name '{}' cannot be a subject token (letters, digits, "
                                             "'_' and '-', not starting with '_', not all digits)",
                                             type, name));
    }
    if (layout.type_names.size() > 65536)
        return Error(EINVAL, fmt::format("{} type names for 65536 event types", layout.type_names.size()));
    return {};
}

std::string stream_subject(std::string_view prefix) { return fmt::format("{}.>", prefix); }

void append_event_subject(std::string& out, const SubjectLayout& layout, const EventDescriptor& event) {
    out.append(layout.prefix);
    out.push_back('.');
    if (event.event_type < layout.type_names.size() && !layout.type_names[event.event_type].empty())
        out.append(layout.type_names[event.event_type]);
    else
        detail::append_decimal(out, event.event_type);
    if (layout.flow_tag >= 0) {
        out.push_back('.');
        detail::append_decimal(out, event.content_ext[static_cast<std::size_t>(layout.flow_tag)]);
    }
}

std::string control_subject(std::string_view prefix, MessageKind kind) {
    return fmt::format("{}.{}.{}", prefix, kControlToken, control_token_of(kind));
}

std::string control_filter(std::string_view prefix) { return fmt::format("{}.{}.>", prefix, kControlToken); }

std::optional<std::string> event_filter(const SubjectLayout& layout, std::optional<std::string_view> type_token,
                                        std::optional<std::uint64_t> flow_value) {
    if (flow_value && layout.flow_tag < 0) return std::nullopt;
    if (type_token && !is_subject_token(*type_token)) return std::nullopt;
    std::string subject = layout.prefix;
    subject += '.';
    subject += type_token ? *type_token : std::string_view("*");
    if (layout.flow_tag >= 0) {
        subject += '.';
        if (flow_value)
            detail::append_decimal(subject, *flow_value);
        else
            subject += '*';
    }
    return subject;
}

bool pattern_covers_prefix(std::string_view pattern, std::string_view prefix) noexcept {
    // Walk both token by token: '*' matches any one prefix token, '>' matches
    // the rest. The pattern covers PREFIX.> when it reaches '>' at or before
    // the end of the prefix's tokens.
    for (;;) {
        std::size_t pattern_dot = pattern.find('.');
        std::string_view pattern_token = pattern.substr(0, pattern_dot);
        if (pattern_token == ">") return pattern_dot == std::string_view::npos;
        if (prefix.empty()) return false;  // PREFIX.x needs more than a literal or '*'
        std::size_t prefix_dot = prefix.find('.');
        std::string_view prefix_token = prefix.substr(0, prefix_dot);
        if (pattern_token != "*" && pattern_token != prefix_token) return false;
        if (pattern_dot == std::string_view::npos) return false;  // pattern ends before the events
        pattern = pattern.substr(pattern_dot + 1);
        prefix = prefix_dot == std::string_view::npos ? std::string_view() : prefix.substr(prefix_dot + 1);
    }
}

}  // namespace evring::nats
