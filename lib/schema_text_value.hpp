// lib/schema_text_value.hpp — how a char[N] field's text is written in JSON
// and in watch's text lines (private to the renderers).
//
// The text is the field's bytes before the first NUL (schema_walk.hpp's
// text_of). Valid UTF-8 passes through; every byte that does not start a
// valid UTF-8 sequence is shown as U+FFFD in JSON and as \xNN in text, and
// control characters (C0, DEL) are escaped, so no byte of a payload reaches
// a terminal or a JSON parser raw.
#pragma once

#include <cstddef>
#include <string_view>

#include "schema_sinks.hpp"

namespace evring::detail {

// The length of the valid UTF-8 sequence starting at text[i] (no overlongs,
// no surrogates, at most U+10FFFF), or 0 when it is not one.
inline std::size_t utf8_sequence(std::string_view text, std::size_t i) noexcept {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const unsigned char c = byte(0);
    if (c < 0x80) return 1;
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else return 0;
    if (text.size() - i < n || byte(1) < lo || byte(1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((byte(k) & 0xc0) != 0x80) return 0;
    return n;
}

template <class Sink>
void put_escaped_byte(Sink& out, char prefix, unsigned char c) {
    out.put('\\');
    out.put(prefix);
    if (prefix == 'u') out.write("00", 2);
    out.put(kHexDigits[c >> 4]);
    out.put(kHexDigits[c & 15]);
}

// The text as the inside of a JSON string.
template <class Sink>
void put_json_text(Sink& out, std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t n = utf8_sequence(text, i);
        if (n == 0) out.write("\\ufffd", 6);
        else if (c == '"' || c == '\\') out.put('\\'), out.put(static_cast<char>(c));
        else if (c < 0x20 || c == 0x7f) put_escaped_byte(out, 'u', c);
        else out.write(text.data() + i, n);
        i += n == 0 ? 1 : n;
    }
}

// The text as a quoted value of a text line: "ACME", with \" \\ and \xNN.
template <class Sink>
void put_quoted_text(Sink& out, std::string_view text) {
    out.put('"');
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t n = utf8_sequence(text, i);
        if (n == 0 || c < 0x20 || c == 0x7f) put_escaped_byte(out, 'x', c);
        else if (c == '"' || c == '\\') out.put('\\'), out.put(static_cast<char>(c));
        else out.write(text.data() + i, n);
        i += n == 0 ? 1 : n;
    }
    out.put('"');
}

}  // namespace evring::detail
