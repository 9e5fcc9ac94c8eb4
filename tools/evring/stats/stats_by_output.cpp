// `evring stats --by` as a table, one JSON object or CSV (stats_by.hpp).
// Every output is built from the same columns: the key, then the figures of
// a group, then (text and JSON) p50/p99/max of each figure over the groups.
#include <fmt/format.h>

#include <algorithm>

#include "output/escape.hpp"
#include "output/json.hpp"
#include "stats/stats_by.hpp"

namespace evring::cli {
namespace {

using detail::FieldKind;
using Values = GroupedStats::Values;

constexpr std::uint32_t kQuantiles[] = {50, 99};

// Nearest rank: the smallest value with at least `percent`% of the values
// at or below it (integer arithmetic: no rounding of p * n).
template <class T>
const T& nearest_rank(const std::vector<T>& sorted, std::uint32_t percent) {
    const std::size_t n = sorted.size();
    const std::size_t rank = std::clamp<std::size_t>((percent * n + 99) / 100, 1, n);
    return sorted[rank - 1];
}

std::string int128_text(detail::Int128 v) {
    if (v == 0) return "0";
    const bool negative = v < 0;
    detail::UInt128 u = negative ? -static_cast<detail::UInt128>(v) : static_cast<detail::UInt128>(v);
    std::string out;
    while (u != 0) {
        out.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
        u /= 10;
    }
    if (negative) out.push_back('-');
    std::reverse(out.begin(), out.end());
    return out;
}

std::string sum_text(const Values& v) {
    return v.kind == FieldKind::Float ? fmt::format("{}", v.float_sum) : int128_text(v.sum);
}

std::string micros(std::uint64_t nanos) { return fmt::format("{:.3f}us", static_cast<double>(nanos) / 1e3); }

std::string csv_cell(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + '"';
}

// A figure over the groups: its values, sorted once.
struct Spread {
    std::string name;
    bool nanos = false;              // a duration (text shows microseconds)
    bool floating = false;
    std::vector<detail::Int128> whole;
    std::vector<double> real;
    std::size_t size() const { return floating ? real.size() : whole.size(); }
    std::string at(std::uint32_t percent) const {
        if (floating) return fmt::format("{}", nearest_rank(real, percent));
        const detail::Int128 v = nearest_rank(whole, percent);
        return nanos ? micros(static_cast<std::uint64_t>(v)) : int128_text(v);
    }
    std::string max() const {
        if (floating) return fmt::format("{}", real.back());
        return nanos ? micros(static_cast<std::uint64_t>(whole.back())) : int128_text(whole.back());
    }
    std::string max_json() const { return floating ? fmt::format("{}", real.back()) : int128_text(whole.back()); }
    std::string at_json(std::uint32_t percent) const {
        return floating ? fmt::format("{}", nearest_rank(real, percent)) : int128_text(nearest_rank(whole, percent));
    }
};

// Plain text tables: the first column to the left, the others to the right.
std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width;
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], row[i].size());
        }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i)
            line += i == 0 ? fmt::format("{:<{}}", row[i], width[i]) : fmt::format("  {:>{}}", row[i], width[i]);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + '\n';
    }
    return out;
}

}  // namespace

// The text of a group's key, as the schema names it.
std::string GroupedStats::key_text(const Key& key) const {
    switch (kind_) {
    case KeyKind::Type: {
        const SchemaEvent* e = schema_ != nullptr ? schema_->event(static_cast<std::uint16_t>(key.word)) : nullptr;
        return e != nullptr ? e->name : std::to_string(key.word);
    }
    case KeyKind::Span:
    case KeyKind::Tag: return std::to_string(key.word);
    case KeyKind::Field:
        if (key_field_.kind != FieldKind::Bytes) return word_text(key_field_.kind, key.word);
        if (!key_field_.places.empty() && key_field_.places.access[0].text) return printable(key.bytes);
        {
            std::string hex = "0x";
            for (unsigned char c : key.bytes) hex += fmt::format("{:02x}", c);
            return hex;
        }
    }
    return {};
}

// The figures of a group, by column; `csv`: durations in nanoseconds, with counts of field values.
std::vector<std::string> GroupedStats::header(bool csv) const {
    std::vector<std::string> h = {by_, "events", "bytes"};
    if (csv) h.insert(h.end(), {"first_nanos", "last_nanos"});
    if (span_ != nullptr) h.push_back(csv ? "duration_nanos" : "duration");
    for (const Counted& c : counted_) h.push_back(c.name);
    for (const Field& f : fields_) {
        if (csv) h.push_back(f.path + ".count");
        for (const char* s : {".sum", ".p50", ".p99", ".max"}) h.push_back(f.path + s);
    }
    return h;
}

std::vector<std::string> GroupedStats::cells(const std::optional<Key>& key, const Group& g, bool csv) const {
    std::vector<std::string> row = {key ? key_text(*key) : std::string("-"), std::to_string(g.events),
                                    std::to_string(g.bytes)};
    if (csv) {
        row[0] = key ? csv_cell(row[0]) : std::string();
        row.push_back(std::to_string(g.first_nanos));
        row.push_back(std::to_string(g.last_nanos));
    }
    if (span_ != nullptr) {
        const bool both = g.begin_nanos && g.end_nanos && *g.end_nanos >= *g.begin_nanos;
        const std::uint64_t took = both ? *g.end_nanos - *g.begin_nanos : 0;
        row.push_back(!both ? std::string(csv ? "" : "-") : csv ? std::to_string(took) : micros(took));
    }
    for (std::uint64_t n : g.counted) row.push_back(std::to_string(n));
    for (const Values& v : g.fields) {
        if (csv) row.push_back(std::to_string(v.words.size()));
        if (v.words.empty()) {
            row.insert(row.end(), {csv ? "" : "-", csv ? "" : "-", csv ? "" : "-", csv ? "" : "-"});
            continue;
        }
        row.push_back(sum_text(v));
        for (std::uint32_t p : kQuantiles) row.push_back(word_text(v.kind, nearest_rank(v.words, p)));
        row.push_back(word_text(v.kind, v.words.back()));
    }
    return row;
}

std::vector<GroupedStats::SpreadRow> GroupedStats::spreads() const {
    std::vector<Spread> all;
    auto spread = [&all](std::string name, bool nanos = false, bool floating = false) {
        all.push_back(Spread{std::move(name), nanos, floating, {}, {}});
    };
    spread("events");
    spread("bytes");
    if (span_ != nullptr) spread("duration", true);
    for (const Counted& c : counted_) spread(c.name);
    for (const Field& f : fields_) spread(f.path + ".sum", false, f.kind == FieldKind::Float);
    for (const auto& [key, g] : groups_) {
        std::size_t i = 0;
        all[i++].whole.push_back(g.events);
        all[i++].whole.push_back(g.bytes);
        if (span_ != nullptr) {
            Spread& d = all[i++];
            if (g.begin_nanos && g.end_nanos && *g.end_nanos >= *g.begin_nanos) d.whole.push_back(*g.end_nanos - *g.begin_nanos);
        }
        for (std::uint64_t n : g.counted) all[i++].whole.push_back(n);
        for (const Values& v : g.fields) {
            Spread& s = all[i++];
            if (v.words.empty()) continue;
            if (s.floating) s.real.push_back(v.float_sum);
            else s.whole.push_back(v.sum);
        }
    }
    std::vector<SpreadRow> rows;
    for (Spread& s : all) {
        std::sort(s.whole.begin(), s.whole.end());
        std::sort(s.real.begin(), s.real.end());
        if (s.size() == 0) continue;
        SpreadRow r;
        r.name = s.name;
        r.groups = s.size();
        r.text = {s.at(50), s.at(99), s.max()};
        r.json = {s.at_json(50), s.at_json(99), s.max_json()};
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string GroupedStats::text() const {
    std::vector<std::vector<std::string>> rows = {header(false)};
    for (const auto& [key, g] : groups_) rows.push_back(cells(key, g, false));
    if (unkeyed_) rows.push_back(cells(std::nullopt, *unkeyed_, false));
    std::string out = table(rows);
    if (groups_.size() < 2) return out;
    std::vector<std::vector<std::string>> over = {
        {fmt::format("over {} {} groups", groups_.size(), by_), "p50", "p99", "max"}};
    for (const SpreadRow& r : spreads()) over.push_back({r.name, r.text[0], r.text[1], r.text[2]});
    return out + '\n' + table(over);
}

std::string GroupedStats::csv() const {
    std::string out;
    auto line = [&out](const std::vector<std::string>& cells) {
        for (std::size_t i = 0; i < cells.size(); ++i) out += (i > 0 ? "," : "") + cells[i];
        out += '\n';
    };
    std::vector<std::string> h = header(true);
    for (std::string& c : h) c = csv_cell(c);
    line(h);
    for (const auto& [key, g] : groups_) line(cells(key, g, true));
    if (unkeyed_) line(cells(std::nullopt, *unkeyed_, true));
    return out;
}

std::string GroupedStats::json_group(const std::optional<Key>& key, const Group& g) const {
    std::string out = "{\"key\":";
    if (!key) out += "null";
    else if (kind_ == KeyKind::Field && key_field_.kind == FieldKind::Bytes) out += json_quote(key_text(*key));
    else if (kind_ == KeyKind::Field) out += word_text(key_field_.kind, key->word);
    else out += std::to_string(key->word);
    if (kind_ == KeyKind::Type && key) out += ",\"name\":" + json_quote(key_text(*key));
    out += fmt::format(",\"events\":{},\"bytes\":{},\"first_nanos\":\"{}\",\"last_nanos\":\"{}\"", g.events, g.bytes,
                       g.first_nanos, g.last_nanos);
    if (span_ != nullptr) {
        const bool both = g.begin_nanos && g.end_nanos && *g.end_nanos >= *g.begin_nanos;
        out += ",\"duration_nanos\":" + (both ? std::to_string(*g.end_nanos - *g.begin_nanos) : std::string("null"));
    }
    if (!counted_.empty()) {
        JsonObject counts;
        for (std::size_t i = 0; i < counted_.size(); ++i) counts.number(counted_[i].name, g.counted[i]);
        out += ",\"counts\":" + counts.text();
    }
    if (!fields_.empty()) {
        std::string fields;
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            const Values& v = g.fields[i];
            fields += fmt::format("{}{}:{{\"count\":{}", i > 0 ? "," : "", json_quote(fields_[i].path), v.words.size());
            if (!v.words.empty())
                fields += fmt::format(",\"sum\":{},\"p50\":{},\"p99\":{},\"max\":{}", sum_text(v),
                                      word_text(v.kind, nearest_rank(v.words, 50)),
                                      word_text(v.kind, nearest_rank(v.words, 99)), word_text(v.kind, v.words.back()));
            fields += '}';
        }
        out += ",\"fields\":{" + fields + '}';
    }
    return out + '}';
}

std::string GroupedStats::json() const {
    std::string groups;
    for (const auto& [key, g] : groups_) groups += (groups.empty() ? "" : ",") + json_group(key, g);
    std::string over;
    for (const SpreadRow& r : spreads())
        over += fmt::format("{}{}:{{\"groups\":{},\"p50\":{},\"p99\":{},\"max\":{}}}", over.empty() ? "" : ",",
                            json_quote(r.name), r.groups, r.json[0], r.json[1], r.json[2]);
    return fmt::format("{{\"by\":{},\"groups\":[{}],\"unkeyed\":{},\"over_groups\":{{{}}}}}", json_quote(by_), groups,
                       unkeyed_ ? json_group(std::nullopt, *unkeyed_) : std::string("null"), over);
}

}  // namespace evring::cli
