// The characters of a schema file, checked before toml++ parses it.
//
// TOML allows no control characters but tab, CR and LF (strings spell others
// as escapes), and non-ASCII characters only inside strings and comments
// (keys, numbers, booleans and dates are ASCII). Refusing anything else here
// gives the user a clear position, and keeps such bytes away from toml++
// 3.3's character classification, which a fuzzer found to reach
// TOML_UNREACHABLE (undefined behaviour) for some non-ASCII characters
// outside strings (e.g. U+02C9) and to debug-assert on a table header that
// starts with a control character.
#include <fmt/format.h>

#include "schema/schema_parse_support.hpp"

namespace evring::detail {

namespace {

enum class Where { Outside, Comment, Basic, Literal, MultiBasic, MultiLiteral };

// Length of the run of `quote` characters starting at text[i].
std::size_t run_of(std::string_view text, std::size_t i, char quote) {
    std::size_t n = 0;
    while (i + n < text.size() && text[i + n] == quote) ++n;
    return n;
}

}  // namespace

std::optional<std::string> check_characters(std::string_view text) {
    Where where = Where::Outside;
    unsigned line = 1, column = 1;
    // The last character outside strings and comments other than a space or
    // tab ('\n' at the start of a line). A string can only start after one of
    // "\n=[,{." (a key, a value, an array element, a dotted key part); a quote
    // anywhere else is invalid TOML, and is refused here so that this scan and
    // toml++ always agree on where strings are.
    char last = '\n';
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f)
            return fmt::format("{}:{}: control character U+{:04X} (TOML allows only tab, CR and LF)", line, column, u);
        if (u >= 0x80 && where == Where::Outside)
            return fmt::format("{}:{}: a non-ASCII character outside a string or comment", line, column);
        std::size_t skip = 0;  // further bytes that belong to this token
        switch (where) {
        case Where::Outside:
            if (c == '#') {
                where = Where::Comment;
            } else if ((c == '"' || c == '\'') && std::string_view("\n=[,{.").find(last) == std::string_view::npos) {
                return fmt::format("{}:{}: a quote where no string can start", line, column);
            } else if (c == '"' || c == '\'') {
                const std::size_t n = run_of(text, i, c);
                if (n >= 3) where = c == '"' ? Where::MultiBasic : Where::MultiLiteral, skip = 2;
                else if (n == 2) skip = 1;  // an empty string
                else where = c == '"' ? Where::Basic : Where::Literal;
            }
            break;
        case Where::Comment:
            if (c == '\n') where = Where::Outside, last = '\n';
            break;
        case Where::Basic:
            if (c == '\\') skip = 1;
            else if (c == '"' || c == '\n') where = Where::Outside;  // a newline: toml++ reports it
            break;
        case Where::Literal:
            if (c == '\'' || c == '\n') where = Where::Outside;
            break;
        case Where::MultiBasic:
        case Where::MultiLiteral: {
            const char quote = where == Where::MultiBasic ? '"' : '\'';
            if (c == '\\' && where == Where::MultiBasic) {
                skip = 1;
            } else if (c == quote) {
                // Up to two quotes may sit right before the closing three.
                const std::size_t n = run_of(text, i, quote);
                if (n >= 3) where = Where::Outside;
                skip = n - 1;
            }
            break;
        }
        }
        if (where == Where::Outside && c != ' ' && c != '\t' && c != '\r') last = c;
        for (std::size_t k = 0; k <= skip && i < text.size(); ++k, ++i) {
            const auto b = static_cast<unsigned char>(text[i]);
            if (k > 0 && ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f))
                return fmt::format("{}:{}: control character U+{:04X} (TOML allows only tab, CR and LF)", line,
                                   column, b);
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else if ((b & 0xc0) != 0x80) {  // count characters, not UTF-8 continuation bytes
                ++column;
            }
        }
        --i;  // the loop's ++i moves past the last byte taken
    }
    return std::nullopt;
}

}  // namespace evring::detail
