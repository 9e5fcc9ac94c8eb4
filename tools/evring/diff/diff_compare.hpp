// tools/evring/diff/diff_compare.hpp — the comparison behind `evring diff`:
// two streams of events (A and B, each as `digest` reads it: descriptors with
// the blanked words zeroed, payloads copied) joined on (member, key), where
// the key is the sequence number, or the event's ordinal within its member
// when sequence numbers are blanked (--blank-seqno).
//
// Contract:
// - compare_events() says how two events under the same key differ: event
//   type, payload (state, size, and the first differing byte), flow tags, the
//   descriptor's time and payload offset (unless blanked). Equal events give
//   nullopt. These are the parts `digest` hashes, so two sources with equal
//   digests have no difference (a diff of sets also accepts members
//   interleaved in another order, which a digest does not).
// - DiffJoin takes the events of each side in the order the side hands them
//   out; within one member the keys of a side must grow (they do in every
//   source: a member's sequence numbers only grow). Members may interleave
//   differently on the two sides (a set's merge order). An event whose key the
//   other side passed without it is "only in" its side; so are the events
//   left once a side ended. Pending events (handed out by one side, not yet
//   matched) are bounded: add() returns false past `max_pending`. Counts are
//   kept per member and per span label (ComparedEvent::label, when the
//   caller fills it).
// - Each difference goes to the sink in the order it is found, which is the
//   sources' order when the caller feeds the side with fewer pending events
//   first (diff.cpp does).
// - field_at() names the payload field holding a byte offset through the
//   schema's layout ("txn_header.gas_limit", "topics[1]"), or "" when none.
//
// Thread safety: plain values; one thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evring/format.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"

namespace evring::cli {

struct ComparedEvent {
    std::uint32_t member = 0;
    std::uint64_t key = 0;         // the seqno, or the ordinal in its member with --blank-seqno (set by DiffJoin)
    EventDescriptor descriptor{};  // blanked (digest_read.hpp)
    PayloadState payload_state = PayloadState::NotRead;
    std::vector<std::byte> payload;  // Ok only
    std::optional<std::uint64_t> label;  // diff --by SPAN: the span instance it is in (its label)
};

// What differs; a bit set.
enum DiffAspect : unsigned {
    kOnlyInA = 1u << 0,
    kOnlyInB = 1u << 1,
    kType = 1u << 2,
    kPayload = 1u << 3,        // size or bytes
    kPayloadState = 1u << 4,   // read in one, expired or invalid in the other
    kFlow = 1u << 5,
    kTime = 1u << 6,           // record_epoch_nanos
    kOffset = 1u << 7,         // payload_buf_offset
};

struct Difference {
    std::uint32_t member = 0;
    std::uint64_t key = 0;
    unsigned aspects = 0;
    EventDescriptor a{}, b{};  // the side an event is only in holds it; the other is zero
    PayloadState state_a = PayloadState::NotRead, state_b = PayloadState::NotRead;
    std::uint64_t first_byte = 0;  // kPayload: the first offset where the bytes (or the sizes) differ
    unsigned flows = 0;            // kFlow: bit i set when content_ext[i] differs
    std::optional<std::uint64_t> label;  // diff --by SPAN: A's event's span label (B's when only in B)
};

std::optional<Difference> compare_events(const ComparedEvent& a, const ComparedEvent& b);

// The words for an aspect ("payload", "flow", ...), for text and JSON.
const char* aspect_name(DiffAspect aspect) noexcept;

std::string field_at(const Schema& schema, std::uint16_t event_type, std::uint64_t offset);

struct MemberCounts {
    std::uint64_t events_a = 0, events_b = 0, differ = 0;
};

class DiffJoin {
public:
    using Sink = std::function<void(const Difference&)>;
    DiffJoin(bool ordinal_keys, std::size_t max_pending, Sink sink)
        : ordinal_keys_(ordinal_keys), max_pending_(max_pending), sink_(std::move(sink)) {}

    // An event of side 0 (A) or 1 (B); false when too many events wait for
    // their match (the sources' members interleave too differently).
    bool add(int side, ComparedEvent event);
    // Side `side` has no more events: what the other holds unmatched, and
    // all it hands out from now on, is only in the other.
    void end(int side);

    std::size_t pending(int side) const noexcept { return pending_count_[side]; }
    const std::map<std::uint32_t, MemberCounts>& members() const noexcept { return members_; }
    // diff --by SPAN: the counts per span label; events with no label under nullopt.
    const std::map<std::optional<std::uint64_t>, MemberCounts>& spans() const noexcept { return spans_; }
    std::uint64_t events(int side) const noexcept { return events_[side]; }

private:
    struct Queues {
        std::array<std::deque<ComparedEvent>, 2> side;
        std::array<std::uint64_t, 2> ordinal{};
    };
    void settle(std::uint32_t member);
    void flush(int side, Queues& q);  // q's events of `side`: only in it
    void only_in(int side, const ComparedEvent& event);
    void found(const Difference& d);
    bool ordinal_keys_;
    std::size_t max_pending_;
    Sink sink_;
    std::map<std::uint32_t, Queues> queues_;
    std::map<std::uint32_t, MemberCounts> members_;
    std::map<std::optional<std::uint64_t>, MemberCounts> spans_;
    std::array<std::size_t, 2> pending_count_{};
    std::array<std::uint64_t, 2> events_{};
    std::array<bool, 2> ended_{};
};

}  // namespace evring::cli
