// lib/schema/schema_parse_support.hpp — shared by the schema parser's files (private).
//
// The parser validates a tree of TOML nodes several levels deep; rather than
// thread a Result through every helper, a helper that finds an error throws a
// SchemaSyntaxError carrying "SOURCE:LINE:COLUMN: reason", and Schema::parse
// (schema_parse.cpp) turns it into an Error. The exception never leaves the
// library.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "schema/schema_data.hpp"

namespace evring::detail {

struct SchemaSyntaxError {
    std::string message;
};

// Where the parser is, and how it reports errors.
class ParseContext {
public:
    explicit ParseContext(std::string source_name) : source_name_(std::move(source_name)) {}

    const std::string& source_name() const noexcept { return source_name_; }
    std::string position(const toml::source_region& where) const;
    std::string line_of(const toml::node& node) const;  // "line N" for "also at line N"

    [[noreturn]] void fail(const toml::source_region& where, std::string_view reason) const;
    [[noreturn]] void fail(const toml::node& where, std::string_view reason) const {
        fail(where.source(), reason);
    }

    // Rejects keys of `table` outside `allowed` (typos must not pass silently).
    void check_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                    std::string_view what) const;
    const toml::node& required(const toml::table& table, std::string_view key, std::string_view what) const;
    const toml::table& as_table(const toml::node& node, std::string_view what) const;
    const toml::array& as_array(const toml::node& node, std::string_view what) const;
    std::int64_t integer(const toml::node& node, std::string_view what) const;
    std::int64_t integer_in(const toml::node& node, std::string_view what, std::int64_t min, std::int64_t max) const;
    std::string string(const toml::node& node, std::string_view what) const;
    // A name: [A-Za-z_][A-Za-z0-9_]*, at most 128 characters.
    std::string identifier(const toml::node& node, std::string_view what) const;
    std::string identifier_key(const toml::key& key, std::string_view what) const;
    // A one-line description.
    std::string one_line(const toml::node& node, std::string_view what) const;
    // An optional key's value as a one-line description ("" when absent).
    std::string optional_text(const toml::table& table, std::string_view key, std::string_view what) const;

private:
    std::string source_name_;
};

// "LINE:COLUMN: reason" for the first character TOML does not allow where it
// is (schema_characters.cpp): a control character other than tab, CR and LF
// anywhere, or a non-ASCII character outside strings and comments.
std::optional<std::string> check_characters(std::string_view text);

// Adds RECORD_ERROR (event type 1, its struct and enum) to a schema that does
// not declare event type 1, those names, or foreign hashes (schema_record_error.cpp).
void imply_record_error(toml::table& root);

}  // namespace evring::detail
