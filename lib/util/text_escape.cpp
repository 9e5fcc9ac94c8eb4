// Untrusted text made safe for evring's text formats (text_escape.hpp).
#include "util/text_escape.hpp"

#include <string>

namespace evring {
namespace {

constexpr char kDigits[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

bool continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

}  // namespace

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    const unsigned char c = byte(0);
    if (c < 0x80) return 1;
    std::size_t length = 0;
    unsigned char min_second = 0x80, max_second = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) length = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        length = 3;
        if (c == 0xe0) min_second = 0xa0;  // no overlong forms
        if (c == 0xed) max_second = 0x9f;  // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
        length = 4;
        if (c == 0xf0) min_second = 0x90;
        if (c == 0xf4) max_second = 0x8f;  // nothing past U+10FFFF
    } else {
        return 0;
    }
    if (at + length > text.size()) return 0;
    if (byte(1) < min_second || byte(1) > max_second) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if (!continuation(byte(i))) return 0;
    return length;
}

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t length = utf8_sequence_length(text, i);
        if (length == 0 || c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += kDigits[c >> 4];
            out += kDigits[c & 15];
            ++i;
            continue;
        }
        out.append(text.substr(i, length));
        i += length;
    }
    return out;
}

void append_json_string(std::string& out, std::string_view text) {
    struct Appender {
        std::string& out;
        void put(char c) { out += c; }
        void write(const char* p, std::size_t n) { out.append(p, n); }
    } appender{out};
    out += '"';
    put_json_string_body(appender, text);
    out += '"';
}

std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = utf8_sequence_length(text, i);
        if (length == 0) {
            out += kReplacement;
            ++i;
            continue;
        }
        out.append(text.substr(i, length));
        i += length;
    }
    return out;
}

bool is_valid_utf8(std::string_view text) noexcept {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = utf8_sequence_length(text, i);
        if (length == 0) return false;
        i += length;
    }
    return true;
}

std::string shortened(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return std::string(text);
    std::size_t cut = max_bytes;
    // Back to the start of a character, so the cut never splits one.
    while (cut > 0 && max_bytes - cut < 3 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "...(" + std::to_string(text.size()) + " bytes)";
}

}  // namespace evring
