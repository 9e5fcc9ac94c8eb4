// ParseContext: error positions and checked access to TOML nodes.
#include <fmt/format.h>

#include "schema/schema_parse_support.hpp"

namespace evring::detail {

namespace {

std::string_view type_word(const toml::node& node) {
    switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
    }
}

}  // namespace

bool is_identifier(std::string_view name) noexcept {
    if (name.empty() || name.size() > kMaxNameLength) return false;
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    if (!alpha(name[0])) return false;
    for (char c : name)
        if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
    return true;
}

std::string ParseContext::position(const toml::source_region& where) const {
    // Nodes toml++ made implicitly (the parent of [struct.x]) have no position.
    const auto line = where.begin.line == 0 ? 1u : where.begin.line;
    const auto column = where.begin.column == 0 ? 1u : where.begin.column;
    return fmt::format("{}:{}:{}", source_name_, line, column);
}

std::string ParseContext::line_of(const toml::node& node) const {
    return fmt::format("line {}", node.source().begin.line);
}

void ParseContext::fail(const toml::source_region& where, std::string_view reason) const {
    throw SchemaSyntaxError{fmt::format("{}: {}", position(where), reason)};
}

void ParseContext::check_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                              std::string_view what) const {
    for (auto&& [key, value] : table) {
        bool known = false;
        for (auto a : allowed) known = known || key.str() == a;
        if (known) continue;
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(key.source(), fmt::format("unknown key '{}' in {} (expected one of: {})", key.str(), what, list));
    }
}

const toml::node& ParseContext::required(const toml::table& table, std::string_view key,
                                         std::string_view what) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) fail(table, fmt::format("{} has no '{}'", what, key));
    return *node;
}

const toml::table& ParseContext::as_table(const toml::node& node, std::string_view what) const {
    if (const toml::table* t = node.as_table()) return *t;
    fail(node, fmt::format("{} must be a table, not {}", what, type_word(node)));
}

const toml::array& ParseContext::as_array(const toml::node& node, std::string_view what) const {
    if (const toml::array* a = node.as_array()) return *a;
    fail(node, fmt::format("{} must be an array, not {}", what, type_word(node)));
}

std::int64_t ParseContext::integer(const toml::node& node, std::string_view what) const {
    if (const auto* v = node.as_integer()) return v->get();
    fail(node, fmt::format("{} must be an integer, not {}", what, type_word(node)));
}

std::int64_t ParseContext::integer_in(const toml::node& node, std::string_view what, std::int64_t min,
                                      std::int64_t max) const {
    const std::int64_t value = integer(node, what);
    if (value < min || value > max)
        fail(node, fmt::format("{} {} is out of range ({}..{})", what, value, min, max));
    return value;
}

std::string ParseContext::string(const toml::node& node, std::string_view what) const {
    if (const auto* v = node.as_string()) return v->get();
    fail(node, fmt::format("{} must be a string, not {}", what, type_word(node)));
}

std::string ParseContext::identifier(const toml::node& node, std::string_view what) const {
    std::string name = string(node, what);
    if (!is_identifier(name))
        fail(node, fmt::format("{} '{}' is not a name (letters, digits and _, not starting with a digit, "
                               "at most {} characters)",
                               what, name, kMaxNameLength));
    return name;
}

std::string ParseContext::identifier_key(const toml::key& key, std::string_view what) const {
    if (!is_identifier(key.str()))
        fail(key.source(), fmt::format("{} '{}' is not a name (letters, digits and _, not starting with a "
                                       "digit, at most {} characters)",
                                       what, key.str(), kMaxNameLength));
    return std::string(key.str());
}

std::string ParseContext::one_line(const toml::node& node, std::string_view what) const {
    std::string text = string(node, what);
    if (text.find_first_of("\r\n") != std::string::npos) fail(node, fmt::format("{} must be one line", what));
    return text;
}

std::string ParseContext::optional_text(const toml::table& table, std::string_view key,
                                        std::string_view what) const {
    const toml::node* node = table.get(key);
    return node == nullptr ? std::string() : one_line(*node, what);
}

}  // namespace evring::detail
