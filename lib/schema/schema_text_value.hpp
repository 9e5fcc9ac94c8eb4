// lib/schema/schema_text_value.hpp — how a char[N] field's text is written in
// watch's text lines (private to the renderers; JSON takes text_escape.hpp's
// put_json_string_body, the one JSON escaper).
//
// The text is the field's bytes before the first NUL (schema_walk.hpp's
// text_of). Valid UTF-8 passes through; every byte that does not start a
// valid UTF-8 sequence is shown as U+FFFD in JSON and as \xNN in text, and
// control characters (C0, DEL) are escaped, so no byte of a payload reaches
// a terminal or a JSON parser raw.
#pragma once

#include <cstddef>
#include <string_view>

#include "util/text_escape.hpp"  // utf8_sequence_length: one UTF-8 rule for every text format
#include "schema/schema_sinks.hpp"

namespace evring::detail {

using evring::utf8_sequence_length;

template <class Sink>
void put_escaped_byte(Sink& out, unsigned char c) {  // \xNN
    out.put('\\');
    out.put('x');
    out.put(kHexDigits[c >> 4]);
    out.put(kHexDigits[c & 15]);
}

// The text as a quoted value of a text line: "ACME", with \" \\ and \xNN.
template <class Sink>
void put_quoted_text(Sink& out, std::string_view text) {
    out.put('"');
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t n = utf8_sequence_length(text, i);
        if (n == 0 || c < 0x20 || c == 0x7f) put_escaped_byte(out, c);
        else if (c == '"' || c == '\\') out.put('\\'), out.put(static_cast<char>(c));
        else out.write(text.data() + i, n);
        i += n == 0 ? 1 : n;
    }
    out.put('"');
}

}  // namespace evring::detail
