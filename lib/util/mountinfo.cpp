// Parsing the mount table and meminfo, with no line-length limit. See
// mountinfo.hpp.
#include "util/mountinfo.hpp"

#include <charconv>

namespace evring::detail {
namespace {

std::string decode_octal_escapes(std::string_view field) {
    std::string out;
    out.reserve(field.size());
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && field.size() - i >= 4) {
            auto digit = [](char c) { return c >= '0' && c <= '7'; };
            if (digit(field[i + 1]) && digit(field[i + 2]) && digit(field[i + 3])) {
                out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                         (field[i + 3] - '0'));
                i += 3;
                continue;
            }
        }
        out += field[i];
    }
    return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t at = 0;
    while (at < line.size()) {
        std::size_t end = line.find(' ', at);
        if (end == std::string_view::npos) end = line.size();
        if (end > at) fields.push_back(line.substr(at, end - at));
        at = end + 1;
    }
    return fields;
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
    std::vector<MountEntry> entries;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::vector<std::string_view> f = split_spaces(text.substr(at, end - at));
        at = end + 1;
        // id parent major:minor root mount-point mount-options [optional...] - type source super-options
        std::size_t dash = 6;
        while (dash < f.size() && f[dash] != "-") ++dash;
        if (f.size() < 7 || dash + 2 >= f.size()) continue;
        MountEntry entry;
        entry.mount_point = decode_octal_escapes(f[4]);
        entry.mount_options = decode_octal_escapes(f[5]);
        entry.fs_type = decode_octal_escapes(f[dash + 1]);
        entry.source = decode_octal_escapes(f[dash + 2]);
        if (dash + 3 < f.size()) entry.super_options = decode_octal_escapes(f[dash + 3]);
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::optional<std::uint64_t> mount_page_size(const MountEntry& entry) {
    std::string_view options = entry.super_options;
    std::size_t at = options.find("pagesize=");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view value = options.substr(at + 9);
    value = value.substr(0, value.find(','));
    std::uint64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || number == 0) return std::nullopt;
    std::string_view suffix(end, static_cast<std::size_t>(value.data() + value.size() - end));
    if (suffix == "K" || suffix == "k") return number << 10;
    if (suffix == "M" || suffix == "m") return number << 20;
    if (suffix == "G" || suffix == "g") return number << 30;
    if (suffix.empty()) return number;
    return std::nullopt;
}

std::optional<std::uint64_t> parse_default_huge_page_size(std::string_view meminfo_text) {
    std::size_t at = meminfo_text.find("Hugepagesize:");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = meminfo_text.substr(at + 13);
    std::size_t digits = rest.find_first_not_of(' ');
    if (digits == std::string_view::npos) return std::nullopt;
    rest = rest.substr(digits);
    std::uint64_t kib = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
    if (ec != std::errc() || kib == 0) return std::nullopt;
    return kib << 10;
}

}  // namespace evring::detail
