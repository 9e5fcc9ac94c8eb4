// Parsing --from / --until positions (position.hpp). Every number is checked
// before arithmetic: a date that does not exist, a time past 2^64
// nanoseconds, a sequence number no ring reaches are refused by name.
#include "evring/source/position.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>
#include <string>

#include "evring/format.hpp"
#include "util/text_escape.hpp"

namespace evring {
namespace {

constexpr std::uint64_t kNanosPerSecond = 1'000'000'000;
// The last second representable in nanoseconds within 64 bits (2554-07-21).
constexpr std::uint64_t kMaxSeconds = std::numeric_limits<std::uint64_t>::max() / kNanosPerSecond - 1;

bool parse_uint(std::string_view text, std::uint64_t& value) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

bool all_digits(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text)
        if (c < '0' || c > '9') return false;
    return true;
}

Error bad(std::string_view option, std::string_view text, std::string_view why) {
    // A value may be a megabyte of text: the message echoes its start only.
    return Error(EINVAL, fmt::format("bad {} '{}': {}", option, shortened(text), why));
}

// "123" or "123.456" seconds as nanoseconds.
Result<std::uint64_t> seconds_to_nanos(std::string_view option, std::string_view text, std::string_view whole) {
    const auto dot = whole.find('.');
    std::uint64_t seconds = 0, fraction = 0;
    if (!parse_uint(whole.substr(0, dot), seconds)) {
        if (all_digits(whole.substr(0, dot))) return bad(option, text, "too far in the future (past the year 2554)");
        return bad(option, text, "expected @SECONDS[.FRACTION] since the Unix epoch");
    }
    if (dot != std::string_view::npos) {
        const std::string_view digits = whole.substr(dot + 1);
        if (digits.empty() || digits.size() > 9 || !parse_uint(digits, fraction))
            return bad(option, text, "the fraction of a second must be 1 to 9 digits");
        for (std::size_t i = digits.size(); i < 9; ++i) fraction *= 10;
    }
    if (seconds > kMaxSeconds) return bad(option, text, "too far in the future (past the year 2554)");
    return seconds * kNanosPerSecond + fraction;
}

// -5s, -250ms, ...
Result<Position> parse_relative(std::string_view option, std::string_view text) {
    const std::string_view body = text.substr(1);
    std::size_t digits = 0;
    while (digits < body.size() && body[digits] >= '0' && body[digits] <= '9') ++digits;
    std::uint64_t amount = 0;
    if (digits == 0) return bad(option, text, "expected a number after '-'");
    if (!parse_uint(body.substr(0, digits), amount)) return bad(option, text, "the number is too large");
    const std::string_view unit = body.substr(digits);
    std::uint64_t scale = 0;
    if (unit == "ns") scale = 1;
    else if (unit == "us") scale = 1'000;
    else if (unit == "ms") scale = 1'000'000;
    else if (unit == "s") scale = kNanosPerSecond;
    else if (unit == "m") scale = 60 * kNanosPerSecond;
    else if (unit == "h") scale = 3600 * kNanosPerSecond;
    else return bad(option, text, fmt::format("unknown time unit '{}' (use ns, us, ms, s, m or h)", unit));
    if (amount > std::numeric_limits<std::uint64_t>::max() / scale) return bad(option, text, "too far back");
    return Position{Position::Kind::RelativeTime, amount * scale};
}

bool leap(std::uint64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

std::uint64_t days_in_month(std::uint64_t year, std::uint64_t month) {
    static constexpr std::uint8_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && leap(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to the given (valid) date.
std::uint64_t days_since_epoch(std::uint64_t year, std::uint64_t month, std::uint64_t day) {
    std::uint64_t days = 0;
    for (std::uint64_t y = 1970; y < year; ++y) days += leap(y) ? 366 : 365;
    for (std::uint64_t m = 1; m < month; ++m) days += days_in_month(year, m);
    return days + day - 1;
}

constexpr std::string_view kIsoShape = "expected a time like 2026-11-22T01:45:00.5Z (UTC)";

// 2026-11-22T01:45:00[.fraction][Z], always UTC.
Result<Position> parse_iso(std::string_view option, std::string_view text) {
    std::string_view body = text;
    if (!body.empty() && body.back() == 'Z') body.remove_suffix(1);
    const auto fraction_at = body.find('.');
    const std::string_view whole = body.substr(0, fraction_at);
    if (whole.size() != 19 || whole[4] != '-' || whole[7] != '-' || (whole[10] != 'T' && whole[10] != ' ') ||
        whole[13] != ':' || whole[16] != ':')
        return bad(option, text, kIsoShape);
    std::uint64_t year, month, day, hour, minute, second;
    if (!parse_uint(whole.substr(0, 4), year) || !parse_uint(whole.substr(5, 2), month) ||
        !parse_uint(whole.substr(8, 2), day) || !parse_uint(whole.substr(11, 2), hour) ||
        !parse_uint(whole.substr(14, 2), minute) || !parse_uint(whole.substr(17, 2), second))
        return bad(option, text, kIsoShape);
    if (year < 1970 || year > 2554) return bad(option, text, "the year must be 1970 to 2554");
    if (month < 1 || month > 12) return bad(option, text, fmt::format("there is no month {}", month));
    if (day < 1 || day > days_in_month(year, month))
        return bad(option, text, fmt::format("{}-{:02} has {} days", year, month, days_in_month(year, month)));
    if (hour > 23 || minute > 59 || second > 59)
        return bad(option, text, "the time of day must be 00:00:00 to 23:59:59");
    std::uint64_t fraction = 0;
    if (fraction_at != std::string_view::npos) {
        const std::string_view digits = body.substr(fraction_at + 1);
        if (digits.empty() || digits.size() > 9 || !parse_uint(digits, fraction))
            return bad(option, text, "the fraction of a second must be 1 to 9 digits");
        for (std::size_t i = digits.size(); i < 9; ++i) fraction *= 10;
    }
    const std::uint64_t seconds = days_since_epoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
    if (seconds > kMaxSeconds) return bad(option, text, "past the last time evring can represent (2554)");
    return Position{Position::Kind::AbsoluteTime, seconds * kNanosPerSecond + fraction};
}

Result<Position> parse_seqno_or_time(std::string_view option, std::string_view text) {
    if (text.empty()) return bad(option, text, "empty");
    std::uint64_t value = 0;
    if (all_digits(text)) {
        if (!parse_uint(text, value) || value > kMaxSeqno)
            return bad(option, text, fmt::format("sequence numbers go up to {} (2^62)", kMaxSeqno));
        return Position::seqno(value);
    }
    if (text[0] == '@') {
        auto nanos = seconds_to_nanos(option, text, text.substr(1));
        if (!nanos) return std::move(nanos).error();
        return Position{Position::Kind::AbsoluteTime, *nanos};
    }
    if (text[0] == '-' && text.size() > 1 && !all_digits(text.substr(1))) return parse_relative(option, text);
    if (text.size() >= 19 && text[4] == '-') return parse_iso(option, text);
    return bad(option, text,
               "expected latest, oldest, a sequence number, -N, a time such as 2026-11-22T01:45:00Z or "
               "@1700000000.5, a relative time such as -5s, or a span position such as block:15000009");
}

bool is_name(std::string_view text) {
    if (text.empty() || text.size() > 128 || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
        return false;
    for (char c : text)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// SPAN[.STAGE]:(LABEL | latest | 0xID); nullopt when `text` is not of that shape.
std::optional<Result<Position>> parse_span(std::string_view option, std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string_view head = text.substr(0, colon), value = text.substr(colon + 1);
    const auto dot = head.find('.');
    const std::string_view span = head.substr(0, dot);
    const std::string_view stage = dot == std::string_view::npos ? std::string_view() : head.substr(dot + 1);
    if (!is_name(span) || (dot != std::string_view::npos && !is_name(stage))) return std::nullopt;
    Position p{Position::Kind::Span, 0};
    p.span.span = span;
    p.span.stage = stage;
    p.span.text = text;
    if (value == "latest") {
        p.span.pick = SpanRef::Pick::Latest;
    } else if (value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
        const std::string_view hex = value.substr(2);
        if (hex.size() % 2 != 0 || hex.size() > 64)
            return Result<Position>(bad(option, text, "an id is 0x and 2 to 64 hex digits (whole bytes)"));
        for (std::size_t i = 0; i < hex.size(); i += 2) {
            const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
            if (hi < 0 || lo < 0) return Result<Position>(bad(option, text, "an id is 0x and hex digits"));
            p.span.id.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
        }
        p.span.pick = SpanRef::Pick::Id;
    } else if (!parse_uint(value, p.span.label)) {
        return Result<Position>(bad(option, text, fmt::format("expected {}:NUMBER, {}:latest or {}:0xID", head, head, head)));
    }
    return Result<Position>(std::move(p));
}

}  // namespace

Result<Position> parse_start(std::string_view text, std::string_view option) {
    if (text == "latest") return Position::latest();
    if (text == "oldest") return Position::oldest();
    if (text.size() > 1 && text[0] == '-' && all_digits(text.substr(1))) {
        std::uint64_t n = 0;
        if (!parse_uint(text.substr(1), n)) return bad(option, text, "-N: N is too large");
        if (n == 0) return bad(option, text, "-N needs N >= 1");
        return Position{Position::Kind::Back, n};
    }
    if (const auto colon = text.find(':'); colon != std::string_view::npos && colon > 0 &&
                                          all_digits(text.substr(0, colon)) && all_digits(text.substr(colon + 1)) &&
                                          colon + 1 < text.size()) {
        std::uint64_t member = 0;
        if (!parse_uint(text.substr(0, colon), member) || member >= Position::kAnyMember)
            return bad(option, text, "MEMBER:SEQNO: the member number is too large");
        auto seqno = parse_seqno_or_time(option, text.substr(colon + 1));
        if (!seqno) return std::move(seqno).error();
        return Position::member_seqno(static_cast<std::uint32_t>(member), seqno->value);
    }
    if (auto span = parse_span(option, text)) return std::move(*span);
    return parse_seqno_or_time(option, text);
}

Result<Position> parse_stop(std::string_view text, std::string_view option) {
    if (text.size() > 1 && text[0] == '-' && all_digits(text.substr(1)))
        return bad(option, text, "-N is only for a start position; give a sequence number or a time");
    if (text == "latest" || text == "oldest")
        return bad(option, text, "give a sequence number or a time");
    if (auto span = parse_span(option, text)) {
        if (*span && (*span)->span.pick != SpanRef::Pick::Label)
            return bad(option, text, "a stop names an instance by its label (block:15000010); latest and 0xID "
                                     "are only for a start");
        return std::move(*span);
    }
    return parse_seqno_or_time(option, text);
}

Error unresolved_span(const Position& position) {
    return Error(EINVAL, fmt::format("{}: a span position is resolved through the schema by seek_source "
                                     "(span_seek.hpp), not by a source's seek", position.span.text));
}

}  // namespace evring
