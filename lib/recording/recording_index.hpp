// lib/recording/recording_index.hpp — the indexes of a version 3 recording.
//
//     evring::RecordingOptions options;
//     options.span_marker = evring::span_marker(schema);    // span index (optional; query/recording_span_marks.hpp)
//     ... write the recording (recording_writer.hpp) ...
//
//     auto reader = evring::RecordingReader::open("x.evrec");
//     auto found = reader->find(evring::IndexQuery::seqno(41692));
//     if (found && found->outcome == evring::IndexOutcome::Found) reader->jump(found->block);
//
// A version 3 recording carries index blocks (recording_format.hpp,
// docs/recording-format.md): for every records block its offset, sequence
// numbers and event times, and the span instances (block 15000009) whose
// opening or stage events it holds. RecordingSource::seek uses them for
// SEQNO and TIME positions, and span_seek.hpp for span positions, so a
// position in a recording of any size costs a few reads instead of a scan.
//
// Contract:
// - find() reads at most a handful of blocks: the end block (or, in a file
//   still being written or cut short, a backward search of at most
//   kIndexSearchBytes from its end for the newest index block), that index
//   block, and the earlier index block it leads to. The answer is a block to
//   jump to; everything after the newest index block is the unindexed tail,
//   which the caller reads on from `block` with Outcome::Tail.
// - An index is never trusted: an index block must decode and be
//   consistent (sorted offsets and sequence numbers, entries inside the
//   file, summaries agreeing with the blocks they name), and jump() checks
//   the block header at the offset against the entry. A Seqno or Time answer
//   (Found, or Tail: past the indexed part, or past a file that continues) is
//   also checked against the file (recording_index_check.cpp): the records
//   block the index lists just before it is read whole and must hold nothing
//   at or past the position, and only index blocks may lie between it and the
//   answer. Anything else is Outcome::Lies with the reason; the caller scans
//   instead and says so.
// - Nothing allocates what the file claims: index blocks are bounded by
//   kMaxIndexContent and by the bytes the file really holds.
// - Version 1 and 2 files have no index: Outcome::NoIndex. So has an id
//   lookup (SpanId) in a version 3 file written before span marks carried
//   id prefixes (kIndexMarkIds).
// - A SpanId answer is a candidate (span_id_digest keeps 32 bits of an id):
//   the caller checks the event and asks again below its seqno when it is
//   not the one (span_seek_index.cpp).
// - Cost: Seqno, Time and span labels read the newest index block and at
//   most one earlier one (labels: up to 16 whose ranges overlap); Seqno and
//   Time then the block before the answer and the few block headers after
//   it (and, when the answer is the first entry of its index block, the
//   index block before, for that block's entry). SpanLatest,
//   SpanId and Back read earlier index blocks newest first, one read each,
//   until they find their answer. MemberSeqno (ring set recordings, whose
//   seqnos are per member) binary-searches the index blocks (log2 of their
//   number reads), then reads back to the newest one listing the member
//   below the seqno (one more read unless the member was absent a while).
// - A ring set recording's index serves Time, Back, MemberSeqno, SpanLabel
//   and SpanLatest; Seqno and SpanId are NoIndex (a seqno is a member's own,
//   and a span mark does not say whose: SpanId's walk below a seqno would
//   mix members). A span answer there lists its `candidates` (the member
//   rows whose blocks may hold the marked event). MemberSeqno and span
//   queries need index blocks written with kIndexMembers (NoIndex, with
//   why, in older ones).
//
// Thread safety: as RecordingReader (one thread).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/format.hpp"
#include "recording/recording_format.hpp"

namespace evring {

// The key of a span (stage empty) or of a span's stage in SpanMark::key:
// FNV-1a of "span" or "span.stage". A reader checks the event it leads to,
// so a collision costs a scan, never a wrong answer.
std::uint32_t span_index_key(std::string_view span, std::string_view stage = {}) noexcept;

// What a span mark keeps of an event's id field (SpanMark::id_prefix): its
// first 2 bytes (bits 0..15) and a 16-bit hash of the whole field (bits
// 16..31). Ids that are hashes (Monad's block ids) differ in their first
// bytes; ids that are numbers padded with zeros differ in the hash. A
// lookup by a whole id compares all 32 bits, by a shorter prefix its first
// one or two bytes; either way the event is then checked, so a collision
// costs a read, never a wrong answer.
std::uint32_t span_id_digest(std::span<const std::uint8_t> id) noexcept;

// Called by the writer for every kept event with its payload: writes the
// span marks of the event into `out` (at most out.size()) and returns how
// many. span_marker(schema) makes one from a schema's [span.NAME] labels
// (query/recording_span_marks.hpp: the recording format knows no schemas).
using SpanMarker =
    std::function<std::size_t(const EventDescriptor&, std::span<const std::byte>, std::span<SpanMark>)>;
inline constexpr std::size_t kMaxSpanMarksPerEvent = 8;

// How far back from the end of a file without an end block a reader looks
// for the newest index block.
inline constexpr std::uint64_t kIndexSearchBytes = std::uint64_t{64} << 20;

struct IndexQuery {
    enum class Kind : std::uint8_t {
        Seqno,       // the block holding the first sequence number >= value
        Time,        // the block holding the first event stamped >= value
        SpanLabel,   // the event of span `key` labelled `value`
        SpanLatest,  // the newest event of span `key`
        SpanId,      // the newest event of span `key` whose SpanMark::id_prefix agrees with
                     // `id` on the bits of `id_mask` (a candidate, to be checked), and
                     // whose seqno is below `value` (0: any)
        Back,        // the newest block from which the index counts at least `value` events
                     // to the end of the indexed part (the file's first block when it counts fewer)
        MemberSeqno, // a ring set recording: the block holding member `key`'s newest event
                     // below seqno `value` (`seqno`: that event, to be checked); NotFound when
                     // the index lists none (read from the file's start); Tail when it lists
                     // none at or past `value` (`seqno` 0: none below it either)
    };
    Kind kind = Kind::Seqno;
    std::uint64_t value = 0;
    std::uint32_t key = 0;
    std::uint32_t id = 0;       // SpanId: as span_id_digest
    std::uint32_t id_mask = 0;  // SpanId: the bits of `id` that are known
    static IndexQuery seqno(std::uint64_t s) noexcept { return {Kind::Seqno, s, 0}; }
    static IndexQuery time(std::uint64_t nanos) noexcept { return {Kind::Time, nanos, 0}; }
    static IndexQuery span(std::uint32_t key, std::uint64_t label) noexcept { return {Kind::SpanLabel, label, key}; }
    static IndexQuery span_latest(std::uint32_t key) noexcept { return {Kind::SpanLatest, 0, key}; }
    static IndexQuery back(std::uint64_t events) noexcept { return {Kind::Back, events, 0}; }
    static IndexQuery member_seqno(std::uint32_t member, std::uint64_t s) noexcept {
        return {Kind::MemberSeqno, s, member};
    }
    // `prefix`: the first bytes of the id; `whole`: it is the whole id field.
    static IndexQuery span_id(std::uint32_t key, std::span<const std::uint8_t> prefix, bool whole,
                              std::uint64_t below = 0) noexcept;
};

enum class IndexOutcome : std::uint8_t {
    Found,     // `block` holds the answer (span queries: `seqno` is the event's; MemberSeqno:
               // the member's event just before it)
    Tail,      // not in the indexed part: read on from `block`, the first unindexed one
    NotFound,  // span queries: no such mark in an index that covers the whole file
    NoIndex,   // the file has no index (version 1 or 2, or none found): scan
    Lies,      // the index is inconsistent: `why`; scan
};

// A block to jump to. offset 0: the first block after the file header.
struct IndexedBlock {
    std::uint64_t offset = 0;
    std::uint32_t block_number = 0;
    std::uint64_t first_seqno = 0;  // 0: not known (a tail)
    std::uint64_t last_seqno = 0;
    // event_at in a ring set recording: the event of this member only.
    static constexpr std::uint32_t kAnyMember = ~std::uint32_t{0};
    std::uint32_t member = kAnyMember;
};

struct IndexAnswer {
    IndexOutcome outcome = IndexOutcome::NoIndex;
    IndexedBlock block;
    std::uint64_t seqno = 0;  // span queries: the marked event's sequence number
    // Span queries in a ring set recording: every member row of the mark's
    // index block whose block may hold `seqno` (a mark does not say whose
    // seqno it is), in file order (by block, then member), each with its
    // `member`; `block` is the first. The caller reads each (event_at) and
    // keeps the one that is the event asked for.
    std::vector<IndexedBlock> candidates;
    // Back: the events (Event and ExpiredPayload records) the index counts
    // from `block` to the end of its indexed part. A claim: the caller counts
    // them for itself before relying on it (RecordingSource does).
    std::uint64_t events = 0;
    // NoIndex and Lies: why, in words, naming the file. Empty for a version 3
    // file too young to have an index block (scanning it costs little).
    std::string why;
    // What the index covers: the whole file (its end block was found; its
    // End record says whether the recording continues in a next file), and
    // the newest sequence number and event time it lists.
    bool finished = false;
    bool continued = false;
    std::uint64_t newest_seqno = 0;
    std::uint64_t newest_nanos = 0;
};

}  // namespace evring
