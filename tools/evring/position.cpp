#include "position.hpp"

#include <charconv>
#include <ctime>

namespace evring::cli {
namespace {

constexpr std::uint64_t kNanosPerSecond = 1'000'000'000;

bool parse_uint(std::string_view text, std::uint64_t& value) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

// "123" or "123.456" seconds as nanoseconds.
bool parse_seconds_fraction(std::string_view text, std::uint64_t& nanos) {
    const auto dot = text.find('.');
    std::uint64_t seconds = 0;
    if (!parse_uint(text.substr(0, dot), seconds)) return false;
    std::uint64_t fraction = 0;
    if (dot != std::string_view::npos) {
        std::string_view digits = text.substr(dot + 1);
        if (digits.empty() || digits.size() > 9 || !parse_uint(digits, fraction)) return false;
        for (std::size_t i = digits.size(); i < 9; ++i) fraction *= 10;
    }
    if (seconds > UINT64_MAX / kNanosPerSecond - 1) return false;
    nanos = seconds * kNanosPerSecond + fraction;
    return true;
}

Error bad(std::string_view option, std::string_view text, std::string_view why) {
    return Error(EINVAL, "bad " + std::string(option) + " '" + std::string(text) + "': " +
                             std::string(why));
}

// -5s, -250ms, ...
Result<Position> parse_relative(std::string_view option, std::string_view text) {
    std::string_view body = text.substr(1);
    std::size_t digits = 0;
    while (digits < body.size() && body[digits] >= '0' && body[digits] <= '9') ++digits;
    std::uint64_t amount = 0;
    if (!parse_uint(body.substr(0, digits), amount))
        return bad(option, text, "expected a number after '-'");
    const std::string_view unit = body.substr(digits);
    std::uint64_t scale = 0;
    if (unit == "ns") scale = 1;
    else if (unit == "us") scale = 1'000;
    else if (unit == "ms") scale = 1'000'000;
    else if (unit == "s") scale = kNanosPerSecond;
    else if (unit == "m") scale = 60 * kNanosPerSecond;
    else if (unit == "h") scale = 3600 * kNanosPerSecond;
    else return bad(option, text, "unknown time unit '" + std::string(unit) + "' (use ns, us, ms, s, m or h)");
    if (amount > UINT64_MAX / scale) return bad(option, text, "too far back");
    return Position{Position::Kind::RelativeTime, amount * scale};
}

// 2026-11-22T01:45:00[.fraction][Z], always UTC.
Result<Position> parse_iso(std::string_view option, std::string_view text) {
    std::string_view body = text;
    if (!body.empty() && body.back() == 'Z') body.remove_suffix(1);
    const auto fraction_at = body.find('.');
    std::string_view whole = body.substr(0, fraction_at);
    if (whole.size() != 19 || whole[4] != '-' || whole[7] != '-' || (whole[10] != 'T' && whole[10] != ' ') ||
        whole[13] != ':' || whole[16] != ':')
        return bad(option, text, "expected a time like 2026-11-22T01:45:00.5Z (UTC)");
    std::uint64_t year, month, day, hour, minute, second;
    if (!parse_uint(whole.substr(0, 4), year) || !parse_uint(whole.substr(5, 2), month) ||
        !parse_uint(whole.substr(8, 2), day) || !parse_uint(whole.substr(11, 2), hour) ||
        !parse_uint(whole.substr(14, 2), minute) || !parse_uint(whole.substr(17, 2), second))
        return bad(option, text, "expected a time like 2026-11-22T01:45:00.5Z (UTC)");
    if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
        second > 60)
        return bad(option, text, "a date or time field is out of range");
    std::tm tm{};
    tm.tm_year = static_cast<int>(year) - 1900;
    tm.tm_mon = static_cast<int>(month) - 1;
    tm.tm_mday = static_cast<int>(day);
    tm.tm_hour = static_cast<int>(hour);
    tm.tm_min = static_cast<int>(minute);
    tm.tm_sec = static_cast<int>(second);
    const std::time_t seconds = ::timegm(&tm);
    std::uint64_t fraction = 0;
    if (fraction_at != std::string_view::npos &&
        !parse_seconds_fraction("0" + std::string(body.substr(fraction_at)), fraction))
        return bad(option, text, "the fraction of a second must be 1 to 9 digits");
    return Position{Position::Kind::AbsoluteTime,
                    static_cast<std::uint64_t>(seconds) * kNanosPerSecond + fraction};
}

Result<Position> parse_common(std::string_view option, std::string_view text) {
    if (text.empty()) return bad(option, text, "empty");
    std::uint64_t value = 0;
    if (parse_uint(text, value)) return Position{Position::Kind::Seqno, value};
    if (text[0] == '@') {
        if (!parse_seconds_fraction(text.substr(1), value))
            return bad(option, text, "expected @SECONDS[.FRACTION] since the Unix epoch");
        return Position{Position::Kind::AbsoluteTime, value};
    }
    if (text[0] == '-') return parse_relative(option, text);
    if (text.size() >= 19 && text[4] == '-') return parse_iso(option, text);
    return bad(option, text,
               "expected latest, oldest, a sequence number, -N, a time such as "
               "2026-11-22T01:45:00Z or @1700000000.5, or a relative time such as -5s");
}

}  // namespace

Result<Position> parse_from(std::string_view text) {
    if (text == "latest") return Position{Position::Kind::Latest, 0};
    if (text == "oldest") return Position{Position::Kind::Oldest, 0};
    std::uint64_t n = 0;
    if (text.size() > 1 && text[0] == '-' && parse_uint(text.substr(1), n)) {
        if (n == 0) return bad("--from", text, "-N needs N >= 1");
        return Position{Position::Kind::Back, n};
    }
    return parse_common("--from", text);
}

Result<Position> parse_until(std::string_view text) {
    std::uint64_t n = 0;
    if (text.size() > 1 && text[0] == '-' && parse_uint(text.substr(1), n))
        return bad("--until", text, "-N is only for --from; give a sequence number or a time");
    return parse_common("--until", text);
}

namespace {

// The timestamp of the first readable event at or after `seqno` (within a
// few slots and not past `limit`); sets `found` to its seqno.
bool probe(const Iterator& it, std::uint64_t seqno, std::uint64_t limit, std::uint64_t& found,
           std::uint64_t& nanos) {
    for (std::uint64_t s = seqno; s <= limit && s < seqno + 64; ++s) {
        EventDescriptor event;
        if (it.read_descriptor(s, event)) {
            found = s;
            nanos = event.record_epoch_nanos;
            return true;
        }
    }
    return false;
}

}  // namespace

std::uint64_t seek_time(const Iterator& it, std::uint64_t target_nanos) {
    std::uint64_t lo = it.oldest_seqno();
    std::uint64_t hi = it.newest_seqno() + 1;  // answer in [lo, hi]; hi: "none yet"
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        std::uint64_t found = 0, nanos = 0;
        if (!probe(it, mid, hi - 1, found, nanos)) {
            const std::uint64_t oldest = it.oldest_seqno();
            if (mid < oldest) {
                lo = oldest;  // overwritten while we searched
                if (hi < lo) hi = lo;
            } else {
                hi = mid;  // nothing readable after mid: treat as the end
            }
            continue;
        }
        if (nanos < target_nanos)
            lo = found + 1;
        else
            hi = mid;
    }
    // Land on a readable event rather than on a hole (a reservation not
    // committed, or never to be) when one follows.
    std::uint64_t found = 0, nanos = 0;
    if (probe(it, lo, it.newest_seqno(), found, nanos)) lo = found;
    // Step back over events stamped at/after the target but sequenced earlier.
    std::uint64_t start = lo;
    unsigned below = 0;
    const std::uint64_t oldest = it.oldest_seqno();
    for (std::uint64_t s = lo; s > oldest && below < 256 && lo - s < 65536; --s) {
        EventDescriptor event;
        if (!it.read_descriptor(s - 1, event)) continue;
        if (event.record_epoch_nanos >= target_nanos) {
            start = s - 1;
            below = 0;
        } else {
            ++below;
        }
    }
    return start;
}

}  // namespace evring::cli
