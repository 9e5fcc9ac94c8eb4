// lib/schema_sinks.hpp — where rendered text goes, and how values are spelled
// (private to the JSON and text renderers).
//
// Two sinks with the same interface: SpanSink writes into a caller's buffer
// and keeps counting past its end (so a caller learns the exact size needed);
// StringSink appends to a std::string through a small stack buffer, so a
// string reused across events stops allocating once it is large enough.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace evring::detail {

class SpanSink {
public:
    explicit SpanSink(std::span<char> out) noexcept : p_(out.data()), end_(out.data() + out.size()) {}
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
};

class StringSink {
public:
    explicit StringSink(std::string& out) noexcept : out_(out) {}
    StringSink(const StringSink&) = delete;
    ~StringSink() { flush(); }
    void put(char c) {
        if (n_ == sizeof buffer_) flush();
        buffer_[n_++] = c;
    }
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

private:
    std::string& out_;
    char buffer_[2048];
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

// "0x" and two digits per byte, in byte order.
template <class Sink>
void put_hex_bytes(Sink& out, const std::byte* p, std::size_t n) {
    out.write("0x", 2);
    char chunk[128];
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = static_cast<unsigned>(p[i]);
        chunk[k++] = kHexDigits[b >> 4];
        chunk[k++] = kHexDigits[b & 15];
        if (k == sizeof chunk) {
            out.write(chunk, k);
            k = 0;
        }
    }
    out.write(chunk, k);
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
