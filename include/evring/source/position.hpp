// evring/source/position.hpp — where reading starts and stops, as a user writes it.
//
//   start: latest | oldest | SEQNO | MEMBER:SEQNO | -N | TIME | SPAN
//   (MEMBER:SEQNO: a ring set member's sequence number, ring_set_source.hpp;
//   other sources refuse it)
//   stop:  SEQNO | TIME | SPAN:LABEL | SPAN.STAGE:LABEL
//          (a span stop ends after the instance's end event, or after the
//          stage's event for that label: span_limit.hpp)
//   SPAN:  block:15000009      the opening event of that span instance (its label)
//          block:latest        the newest opening event
//          block:0x5a...       the instance whose id starts with these hex digits
//          block.finalized:N   the event that marks stage "finalized" of block N
//                              (spans, labels, ids and stages: the schema's
//                              [span.NAME], docs/schema.md; resolved by
//                              seek_source, span_seek.hpp)
//   TIME:  2026-11-22T01:45:00[.fraction][Z]   (UTC; the date must exist)
//          @1700000000[.fraction]              (seconds since the Unix epoch)
//          -5s -250ms -10us -3m -1h -100ns     (relative: before "now", which is the
//                                               wall clock for a live ring and the
//                                               newest event for anything else)
//
// Parsing is pure; every event source resolves a Position itself
// (EventSource::seek and EventSource::resolve_until in event_source.hpp),
// except a SPAN, which seek_source (span_seek.hpp) turns into a sequence
// number first, through the schema:
// a ring by binary search on timestamps, a recording by its index
// (recording_index.hpp: sequence numbers, times, the last N events and span
// marks; a scan without one), a stream by its server's start positions.
// Sequence numbers past kMaxSeqno (2^62), which no ring reaches, and times
// past 2^64 nanoseconds (the year 2554) are refused, so no resolution can
// wrap.
//
// Errors name the option (`option`, e.g. "--from") and the value:
// "bad --from '2026-02-30': February 2026 has 28 days".
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring {

// A span position as written: SPAN[.STAGE]:(LABEL | latest | 0xID).
struct SpanRef {
    enum class Pick : std::uint8_t { Label, Latest, Id };
    std::string span;   // "block"
    std::string stage;  // "finalized"; empty: the span's opening event
    Pick pick = Pick::Label;
    std::uint64_t label = 0;
    std::vector<std::uint8_t> id;  // Id: a prefix of the id, 1 to 32 bytes
    std::string text;              // as written, for messages
};

struct Position {
    enum class Kind : std::uint8_t {
        None,          // not given: a start means Latest, a stop means never
        Latest,        // the newest event
        Oldest,        // the oldest event still held
        Seqno,         // value: a sequence number
        Back,          // value: N, that many events back from the newest
        AbsoluteTime,  // value: nanoseconds since the Unix epoch
        RelativeTime,  // value: nanoseconds before the source's "now"
        Span,          // span: an instance of a schema span (span_seek.hpp)
    };
    Kind kind = Kind::None;
    std::uint64_t value = 0;
    // Seqno of a ring set member (MEMBER:SEQNO); kAnyMember otherwise.
    static constexpr std::uint32_t kAnyMember = 0xffffffffu;
    std::uint32_t member = kAnyMember;
    // Seqno only: a named reader resuming after the event before `value`
    // (docs/named-readers.md). A source that has ended at `value - 1` is
    // then at its end rather than refusing a seqno past its newest event.
    bool resume = false;
    // A named reader of a ring set resuming (Seqno, resume, kAnyMember;
    // docs/named-readers.md): by member index, the last event consumed of
    // each member and the ring instance it came from. A member resumes after
    // its `last` when its ring is still that instance; a member re-created
    // since, one not listed (joined since) and one with nothing consumed
    // start at their oldest event (ring_set_source.hpp).
    struct MemberAfter {
        std::uint64_t last = 0;
        std::uint64_t instance = 0;
    };
    std::vector<MemberAfter> members_after;
    SpanRef span;  // Span only

    Position() = default;
    Position(Kind k, std::uint64_t v) : kind(k), value(v) {}
    Position(Kind k, std::uint64_t v, std::uint32_t m) : kind(k), value(v), member(m) {}

    static Position latest() noexcept { return {Kind::Latest, 0}; }
    static Position oldest() noexcept { return {Kind::Oldest, 0}; }
    static Position seqno(std::uint64_t s) noexcept { return {Kind::Seqno, s}; }
    static Position member_seqno(std::uint32_t m, std::uint64_t s) noexcept { return {Kind::Seqno, s, m}; }
    // Where a named reader resumes: the event after `last`.
    static Position after(std::uint64_t last) noexcept {
        Position p{Kind::Seqno, last + 1};
        p.resume = true;
        return p;
    }

    // Where a named reader of a ring set resumes (members_after above).
    static Position after_members(std::vector<MemberAfter> members) {
        Position p{Kind::Seqno, 0};
        p.resume = true;
        p.members_after = std::move(members);
        return p;
    }

    // The time in nanoseconds since the epoch; a relative time counts back from `now_nanos`.
    std::uint64_t time_at(std::uint64_t now_nanos) const noexcept {
        if (kind == Kind::RelativeTime) return now_nanos > value ? now_nanos - value : 0;
        return value;
    }
};

// A start position (all forms above). `option` names the option in errors.
Result<Position> parse_start(std::string_view text, std::string_view option = "--from");
// A stop position: a sequence number, a time, or a span by its label.
Result<Position> parse_stop(std::string_view text, std::string_view option = "--until");

// What EventSource::seek returns for a span position: only seek_source
// (span_seek.hpp), which has the schema, resolves those.
Error unresolved_span(const Position& position);

// Where a resolved stop position ends reading: after the event `seqno`, or at
// the first event stamped after `nanos`. kNever means no bound.
struct StopAt {
    static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t seqno = kNever;
    std::uint64_t nanos = kNever;
    bool bounded() const noexcept { return seqno != kNever || nanos != kNever; }
};

}  // namespace evring
