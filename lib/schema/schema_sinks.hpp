// lib/schema/schema_sinks.hpp — where rendered text goes, and how values are spelled
// (private to the JSON and text renderers).
//
// Two sinks with the same interface: SpanSink writes into a caller's buffer
// and keeps counting past its end (so a caller learns the exact size needed);
// StringSink appends to a std::string through a stack buffer, so a string
// reused across events stops allocating once it is large enough. Both hand
// out room for up to kSinkChunk characters at once (claim, then commit), so
// long values are formatted straight into place.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace evring::detail {

inline constexpr std::size_t kSinkChunk = 1024;

class SpanSink {
public:
    explicit SpanSink(std::span<char> out) noexcept : p_(out.data()), end_(out.data() + out.size()) {}
    // Room for n <= kSinkChunk characters: in place, or a scratch area whose
    // characters are copied as far as they fit.
    char* claim(std::size_t n) noexcept { return static_cast<std::size_t>(end_ - p_) >= n ? p_ : scratch_; }
    void commit(const char* claimed, std::size_t n) noexcept {
        if (claimed == p_) {
            p_ += n;
            total_ += n;
        } else {
            write(claimed, n);
        }
    }
    void put(char c) noexcept {
        if (p_ < end_) *p_++ = c;
        ++total_;
    }
    void write(const char* s, std::size_t n) noexcept {
        const std::size_t room = static_cast<std::size_t>(end_ - p_);
        const std::size_t k = n < room ? n : room;
        std::memcpy(p_, s, k);
        p_ += k;
        total_ += n;
    }
    void write(std::string_view s) noexcept { write(s.data(), s.size()); }
    std::size_t total() const noexcept { return total_; }

private:
    char* p_;
    char* end_;
    std::size_t total_ = 0;
    char scratch_[kSinkChunk];
};

class StringSink {
public:
    explicit StringSink(std::string& out) noexcept : out_(out), start_(out.size()) {}
    StringSink(const StringSink&) = delete;
    ~StringSink() { flush(); }
    void put(char c) {
        if (n_ == sizeof buffer_) flush();
        buffer_[n_++] = c;
    }
    char* claim(std::size_t n) {
        if (n > sizeof buffer_ - n_) flush();
        return buffer_ + n_;
    }
    void commit(const char*, std::size_t n) noexcept { n_ += n; }
    void write(const char* s, std::size_t n) {
        if (n > sizeof buffer_ - n_) {
            flush();
            if (n > sizeof buffer_) {
                out_.append(s, n);
                return;
            }
        }
        std::memcpy(buffer_ + n_, s, n);
        n_ += n;
    }
    void write(std::string_view s) { write(s.data(), s.size()); }
    void flush() {
        out_.append(buffer_, n_);
        n_ = 0;
    }
    // Characters written through this sink so far.
    std::size_t total() const noexcept { return out_.size() - start_ + n_; }

private:
    std::string& out_;
    std::size_t start_;
    char buffer_[4 * kSinkChunk];
    std::size_t n_ = 0;
};

template <class Sink>
void put_unsigned(Sink& out, std::uint64_t v) {
    char text[24];
    auto r = std::to_chars(text, text + sizeof text, v);
    out.write(text, static_cast<std::size_t>(r.ptr - text));
}

template <class Sink>
void put_signed(Sink& out, std::int64_t v) {
    char text[24];
    auto r = std::to_chars(text, text + sizeof text, v);
    out.write(text, static_cast<std::size_t>(r.ptr - text));
}

// Shortest round-trip form; non-finite values as the words nan, inf, -inf
// (quoted by `quote_words` for JSON, which has no such numbers).
template <class Sink>
void put_float(Sink& out, double v, bool is_f32, bool quote_words) {
    if (!std::isfinite(v)) {
        const std::string_view word = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        if (quote_words) out.put('"');
        out.write(word);
        if (quote_words) out.put('"');
        return;
    }
    char text[40];
    auto r = is_f32 ? std::to_chars(text, text + sizeof text, static_cast<float>(v))
                    : std::to_chars(text, text + sizeof text, v);
    out.write(text, static_cast<std::size_t>(r.ptr - text));
}

inline constexpr char kHexDigits[] = "0123456789abcdef";

// "00" "01" ... "ff": two characters per byte value.
inline constexpr auto kHexPairs = [] {
    std::array<char, 512> pairs{};
    for (int b = 0; b < 256; ++b) {
        pairs[2 * b] = kHexDigits[b >> 4];
        pairs[2 * b + 1] = kHexDigits[b & 15];
    }
    return pairs;
}();

// "0x" and two digits per byte, in byte order.
template <class Sink>
void put_hex_bytes(Sink& out, const std::byte* p, std::size_t n) {
    out.write("0x", 2);
    while (n > 0) {
        const std::size_t k = n < kSinkChunk / 2 ? n : kSinkChunk / 2;
        char* dst = out.claim(2 * k);
        for (std::size_t i = 0; i < k; ++i) std::memcpy(dst + 2 * i, &kHexPairs[2 * static_cast<unsigned>(p[i])], 2);
        out.commit(dst, 2 * k);
        p += k;
        n -= k;
    }
}

// Bytes as "0x" and their hex, cut after `max_bytes` of them (0: never) with
// the full size: "0x0011...(4096 bytes)". The one rule for shortened byte
// arrays (schema_render.hpp: text, JSON with JsonOptions, append_shown_bytes).
template <class Sink>
void put_shown_bytes(Sink& out, const std::byte* p, std::size_t n, std::size_t max_bytes) {
    const bool cut = max_bytes != 0 && n > max_bytes;
    put_hex_bytes(out, p, cut ? max_bytes : n);
    if (!cut) return;
    out.write("...(", 4);
    put_unsigned(out, n);
    out.write(" bytes)", 7);
}

// A little-endian integer as "0x" and its hex digits, no leading zeros ("0x0" for zero).
template <class Sink>
void put_hex_integer(Sink& out, const std::byte* le, std::size_t n) {
    out.write("0x", 2);
    std::size_t top = n;
    while (top > 0 && le[top - 1] == std::byte{0}) --top;
    if (top == 0) {
        out.put('0');
        return;
    }
    const auto first = static_cast<unsigned>(le[top - 1]);
    if (first >= 16) out.put(kHexDigits[first >> 4]);
    out.put(kHexDigits[first & 15]);
    for (std::size_t i = top - 1; i-- > 0;) {
        const auto b = static_cast<unsigned>(le[i]);
        out.put(kHexDigits[b >> 4]);
        out.put(kHexDigits[b & 15]);
    }
}

}  // namespace evring::detail
