#include "output/values.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>

#include "output/escape.hpp"

namespace evring::cli {
namespace {

Error bad(std::string_view option, std::string_view text, std::string_view why) {
    return bad_value(option, text, why);
}

}  // namespace

Result<int> parse_int_in(std::string_view option, std::string_view text, int low, int high) {
    const bool negative = !text.empty() && text[0] == '-';
    if (!digits_only(negative ? text.substr(1) : text)) return bad(option, text, "expected a whole number");
    long long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high)
        return bad(option, text, fmt::format("must be {} to {}", low, high));
    return static_cast<int>(value);
}

Result<std::uint64_t> parse_size(std::string_view option, std::string_view text) {
    // CLI11's own size parser (units, overflow); it reads "-5" as 2^64 - 5,
    // so a sign is refused first.
    if (!text.empty() && text[0] == '-') return bad(option, text, "a size cannot be negative");
    if (text.empty() || text[0] < '0' || text[0] > '9')
        return bad(option, text, "expected a size such as 4096, 64K, 512M or 4G");
    std::string converted(text);
    CLI::AsSizeValue binary_units(false);
    std::string why;
    try {
        why = binary_units(converted);
    } catch (const CLI::Error&) {  // CLI11 throws for an unknown unit or an overflow
        why = "refused";
    }
    if (!why.empty()) return bad(option, text, "expected a size such as 4096, 64K, 512M or 4G (binary units)");
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(converted.data(), converted.data() + converted.size(), value);
    if (ec != std::errc() || end != converted.data() + converted.size())
        return bad(option, text, "too large (at most 2^64 - 1 bytes)");
    return value;
}

Result<std::string> parse_choice(std::string_view option, std::string_view text,
                                 std::initializer_list<std::string_view> choices) {
    std::string listed;
    for (std::string_view c : choices) {
        if (c == text) return std::string(text);
        listed += (listed.empty() ? "" : ", ") + std::string(c);
    }
    return bad(option, text, "expected one of " + listed);
}

}  // namespace evring::cli
