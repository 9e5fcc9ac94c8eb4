// tools/evring/escape.hpp — text from files and command lines, made safe to show.
//
// Names come from users and from directories anyone can write to: a ring
// name may hold an escape sequence that would reprogram the terminal, or
// bytes that are not UTF-8. Everything the CLI shows that it did not write
// itself goes through these:
// - printable(): control characters (below 0x20, and 0x7f) and bytes that are
//   not valid UTF-8 become \xNN; a backslash stays as it is. For messages and
//   text output.
// - append_json_string(): a JSON string literal that is valid UTF-8 whatever
//   the input: quotes, backslashes and control characters escaped as JSON
//   requires, each byte that is not valid UTF-8 replaced by U+FFFD.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace evring::cli {

std::string printable(std::string_view text);
void append_json_string(std::string& out, std::string_view text);

// The length of the valid UTF-8 sequence starting text[at] (1..4), or 0 when
// the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept;

}  // namespace evring::cli
