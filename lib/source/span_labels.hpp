// Private to lib/: span labels as reading goes (`block` = 15000009, not the
// seqno 41692 of its BLOCK_START), for the follow loop, --where and output.
//
// A span with a label and an `opener` flow tag (the schema's [span.NAME],
// docs/schema.md) marks every event inside an instance with the seqno of the
// instance's opening event. The table remembers, for the newest openings it
// was shown, opening seqno -> label, so any later event's tag reads as a
// label; and, per span, the greatest label its stage events have marked
// (Monad: BLOCK_FINALIZED, BLOCK_VERIFIED of block N), which says that no
// instance labelled at or below it opens again (see SpanLabels::settled).
// It knows nothing of schemas: lib/query/span_labels_schema.hpp fills it.
//
// The follow loop applies a SpanLimit (span_limit.hpp) with it.
//
// Contract: note() reads a payload within its size only; nothing allocates
// after the tracks are added (a fixed table of the newest 64 openings per
// table: older openings' events show no label).
//
// Thread safety: one thread; the follow loop writes the table between events
// and a --where predicate or printer on that thread reads it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "evring/format.hpp"
#include "evring/source/span_limit.hpp"

namespace evring {

// Where an event type holds a label: an unsigned field of `size` (1 to 8) bytes at `offset`.
struct SpanLabelField {
    std::uint16_t event = 0;
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
};

// One labelled span (at most one per flow tag).
struct SpanTrack {
    std::uint8_t tag = 0;                 // the opener flow tag
    std::vector<SpanLabelField> openings;  // begin events
    std::vector<std::uint16_t> ends;       // end events
    std::vector<SpanLabelField> stages;    // stage events
};

// What an event said when noted.
struct SpanNote {
    enum class Kind : std::uint8_t { None, Opening, Stage };
    Kind kind = Kind::None;
    std::uint8_t tag = 0;
    std::uint64_t label = 0;
};

class SpanLabels {
public:
    void add(SpanTrack track);
    bool any() const noexcept { return !tracks_.empty(); }
    const SpanTrack* track(std::size_t tag) const noexcept;
    // Whether `d` is an opening or a stage event: its payload holds a label.
    bool wants(const EventDescriptor& d) const noexcept;
    // Remembers the label of an opening (once per seqno) or a stage event.
    SpanNote note(const EventDescriptor& d, std::span<const std::byte> payload) noexcept;
    // The label of the instance whose opening event is `seqno` (flow tag `tag`), if noted.
    std::optional<std::uint64_t> label(std::size_t tag, std::uint64_t seqno) const noexcept;
    // The label of the instance `d` belongs to through flow tag `tag`.
    std::optional<std::uint64_t> label_of(const EventDescriptor& d, std::size_t tag) const noexcept {
        return tag < 4 && d.content_ext[tag] != 0 ? label(tag, d.content_ext[tag]) : std::nullopt;
    }
    // The same, and an opening event's own label (an opening need not carry
    // its own seqno in the tag).
    std::optional<std::uint64_t> instance_label(const EventDescriptor& d, std::size_t tag) const noexcept {
        if (auto l = label_of(d, tag)) return l;
        return tag < 4 ? label(tag, d.seqno) : std::nullopt;
    }
    // The greatest label a stage event of the span on `tag` has marked since
    // reading started. Stages are commitments (Monad: finalized, verified):
    // once block F is finalized no block numbered F or lower is proposed
    // again, so no instance labelled at or below it opens after this.
    std::optional<std::uint64_t> settled(std::size_t tag) const noexcept;

private:
    struct Seen {
        std::uint64_t seqno = 0, label = 0;
        std::uint8_t tag = 0;
    };
    std::vector<SpanTrack> tracks_;
    std::array<Seen, 64> seen_{};
    std::size_t next_ = 0;
    std::array<std::optional<std::uint64_t>, 4> settled_{};
};

}  // namespace evring
