// lib/util/text_escape.hpp — untrusted text made safe for the text formats
// evring produces.
//
// Ring names and paths come from directories anyone can write to, schema
// descriptions from files, option values from the command line: any of them
// may hold bytes that are not UTF-8, terminal escape sequences or a megabyte
// of text. Everything evring writes as JSON, Prometheus text, protobuf
// strings or terminal text goes through one of these:
// - append_json_string(): a JSON string literal that is valid UTF-8 whatever
//   the input: quotes and backslashes escaped, control characters (below
//   0x20, and 0x7f) as \u00XX, each byte that is not valid UTF-8 as \ufffd.
//   The one JSON escaper (the CLI's JSON, Chrome traces, json_string_literal);
//   put_json_string_body() is the same escaper streaming into any writer with
//   put(char) and write(const char*, size_t) (the schema's JSON renderer).
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

// append_json_string's escaping without the quotes, into `out`.
template <class Out>
void put_json_string_body(Out& out, std::string_view text) {
    constexpr char kHex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t length = utf8_sequence_length(text, i);
        if (c == '"' || c == '\\') {
            out.put('\\');
            out.put(static_cast<char>(c));
        } else if (c < 0x20 || c == 0x7f) {
            const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            out.write(escaped, sizeof escaped);
        } else if (length == 0) {
            out.write("\\ufffd", 6);
        } else {
            out.write(text.data() + i, length);
        }
        i += length == 0 ? 1 : length;
    }
}

}  // namespace evring
