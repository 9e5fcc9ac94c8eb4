// evring/text_escape.hpp — untrusted text made safe for the text formats
// evring produces.
//
// Ring names and paths come from directories anyone can write to, schema
// descriptions from files, option values from the command line: any of them
// may hold bytes that are not UTF-8, terminal escape sequences or a megabyte
// of text. Everything evring writes as JSON, Prometheus text, protobuf
// strings or terminal text goes through one of these:
// - append_json_string(): a JSON string literal that is valid UTF-8 whatever
//   the input: quotes, backslashes and control characters escaped as JSON
//   requires (\u00XX), each byte that is not valid UTF-8 as \ufffd. The one
//   JSON escaper (the CLI's JSON, Chrome traces, json_string_literal).
// - printable(): for terminals and messages: control characters (below 0x20,
//   and 0x7f) and bytes that are not valid UTF-8 become \xNN; a backslash
//   stays as it is.
// - valid_utf8(): the text with each byte that is not valid UTF-8 replaced by
//   U+FFFD, nothing else changed (protobuf strings, Prometheus label values).
// - shortened(): a value echoed in an error, cut after `max_bytes` (at a
//   character boundary) and followed by "...(N bytes)" with its full size.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace evring {

void append_json_string(std::string& out, std::string_view text);
std::string printable(std::string_view text);
std::string valid_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text) noexcept;

inline constexpr std::size_t kMaxEchoedBytes = 200;
std::string shortened(std::string_view text, std::size_t max_bytes = kMaxEchoedBytes);

// The length of the valid UTF-8 sequence starting text[at] (1..4), or 0 when
// the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept;

}  // namespace evring
