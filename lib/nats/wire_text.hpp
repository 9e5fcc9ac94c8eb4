// Header values of the NATS encoding: decimal and hex fields separated by
// single spaces, written and read strictly (no signs, no leading zeros but
// "0" itself, no spaces around, no overflow).
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace evring::nats::detail {

inline void append_decimal(std::string& out, std::uint64_t value) {
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    out.append(digits, end);
}

inline void append_hex(std::string& out, const std::array<std::uint8_t, 32>& bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (std::uint8_t b : bytes) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 15]);
    }
}

// Reads space-separated fields from a header value, left to right.
class Fields {
public:
    explicit Fields(std::string_view text) : rest_(text) {}

    // The next field as a decimal number of at most `max`.
    bool next_number(std::uint64_t& value, std::uint64_t max = UINT64_MAX) {
        std::string_view field;
        if (!next_field(field)) return false;
        if (field.size() > 1 && field.front() == '0') return false;
        auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
        return ec == std::errc() && end == field.data() + field.size() && value <= max;
    }

    // The next field as exactly 64 lowercase hex digits.
    bool next_hash(std::array<std::uint8_t, 32>& bytes) {
        std::string_view field;
        if (!next_field(field) || field.size() != 64) return false;
        for (std::size_t i = 0; i < 32; ++i) {
            int high = hex_value(field[2 * i]), low = hex_value(field[2 * i + 1]);
            if (high < 0 || low < 0) return false;
            bytes[i] = static_cast<std::uint8_t>(high << 4 | low);
        }
        return true;
    }

    bool next_field(std::string_view& field) {
        if (done_) return false;
        std::size_t space = rest_.find(' ');
        field = rest_.substr(0, space);
        if (space == std::string_view::npos) {
            done_ = true;
            rest_ = {};
        } else {
            rest_ = rest_.substr(space + 1);
        }
        return !field.empty();
    }

    // True when every field has been read.
    bool at_end() const { return done_; }

private:
    static int hex_value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    }

    std::string_view rest_;
    bool done_ = false;
};

}  // namespace evring::nats::detail
