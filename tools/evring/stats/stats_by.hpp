// tools/evring/stats/stats_by.hpp — `evring stats --by KEY [--field PATH]...`
// (docs/cli.md, "evring stats"): a source's events in groups, with figures
// per group and p50/p99/max of each figure over the groups.
//
// KEY is `type`; a span with a label (`block`: the span's label, the block
// number, read through the follow loop's span labels, its stage events
// placed by the label in their payload); a flow tag (its raw value); or a
// payload field path (its value: a number of at most 64 bits, or bytes).
// Per group: events, payload bytes, the first and last event's time, for a
// span the time from its begin event to its end event and how many of each
// other span's instances (a block's transactions) and of each stage event
// it holds; and for each --field (a number of at most 64 bits) how many
// events carry it, their sum, p50, p99 and max. Events with no key (a span
// whose opening was not read, a tag of 0, no such field) form one group of
// their own, shown last and left out of the figures over groups.
//
// Quantiles are exact, by nearest rank (the smallest value with at least p
// of the values at or below it): every value is kept (8 bytes) and sorted
// once, at the end, with the standard library. Exact figures over a bounded
// source need nothing more; Debian 12 packages t-digest and HdrHistogram
// only for Go and Java, and an approximation of our own is not wanted.
//
// Thread safety: one thread (the follow loop's).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "query/field_access.hpp"

namespace evring {
class SpanLabels;
}

namespace evring::cli {

struct StatsByOptions {
    std::string by;                   // empty: no grouping
    std::vector<std::string> fields;  // --field, in order
};

class GroupedStats {
public:
    // `labels`: the follow loop's span labels (null when the schema has none).
    static Result<GroupedStats> make(const Schema* schema, const StatsByOptions& options, const SpanLabels* labels);
    // Whether add() reads payloads (a field, a field key, stage labels).
    bool needs_payloads() const noexcept;
    void add(const SourceEvent& e);
    // Sorts what quantiles need; once, before the output.
    void finish();

    std::string text() const;      // stats_by_output.cpp
    std::string json() const;      // one JSON object
    std::string csv() const;       // a header line, then a line per group

    // A figure's values, sorted, as ordered words (see ordered_word).
    struct Values {
        detail::FieldKind kind = detail::FieldKind::Unsigned;
        std::vector<std::uint64_t> words;
        detail::Int128 sum = 0;       // Unsigned, Signed
        double float_sum = 0;   // Float
    };
    struct Group {
        std::uint64_t events = 0, bytes = 0;
        std::uint64_t first_nanos = ~std::uint64_t{0}, last_nanos = 0;
        std::optional<std::uint64_t> begin_nanos, end_nanos;  // a span's begin and end events
        std::vector<std::uint64_t> counted;  // per counted event set (nested spans, stages)
        std::vector<Values> fields;          // per --field
    };
    enum class KeyKind : std::uint8_t { Type, Span, Tag, Field };
    struct Key {
        std::uint64_t word = 0;  // a number as an ordered word
        std::string bytes;       // a bytes field's value
        bool operator<(const Key& o) const { return word != o.word ? word < o.word : bytes < o.bytes; }
    };
    // Events of some types counted per group ("txn": TXN_HEADER_START; "finalized": BLOCK_FINALIZED).
    struct Counted {
        std::string name;
        std::vector<std::uint16_t> types;
    };
    struct Field {
        std::string path;
        detail::FieldKind kind = detail::FieldKind::Unsigned;
        detail::FieldByType places;
        const detail::FieldAccess* in(std::uint16_t type) const noexcept { return places.in(type); }
    };

private:
    // Output (stats_by_output.cpp): a figure's p50, p99 and max over the groups.
    struct SpreadRow {
        std::string name;
        std::size_t groups = 0;
        std::array<std::string, 3> text, json;
    };
    std::string key_text(const Key& key) const;
    std::vector<std::string> header(bool csv) const;
    std::vector<std::string> cells(const std::optional<Key>& key, const Group& g, bool csv) const;
    std::vector<SpreadRow> spreads() const;
    std::string json_group(const std::optional<Key>& key, const Group& g) const;

    GroupedStats() = default;
    std::optional<Key> key_of(const SourceEvent& e) const;
    Group& group(const std::optional<Key>& key);

    const Schema* schema_ = nullptr;
    const SpanLabels* labels_ = nullptr;
    std::string by_;
    KeyKind kind_ = KeyKind::Type;
    std::uint8_t tag_ = 0;                 // Span (its opener), Tag
    const SchemaSpan* span_ = nullptr;     // Span
    std::vector<Field> stages_;            // Span: each stage's label field, by stage
    Field key_field_;                      // Field
    std::vector<Counted> counted_;
    std::vector<Field> fields_;
    std::map<Key, Group> groups_;
    std::optional<Group> unkeyed_;
};

// Numbers as 64-bit words whose unsigned order is the numbers' order, and back.
std::uint64_t ordered_word(detail::FieldKind kind, const std::byte* at, std::uint32_t size) noexcept;
std::string word_text(detail::FieldKind kind, std::uint64_t word);

}  // namespace evring::cli
