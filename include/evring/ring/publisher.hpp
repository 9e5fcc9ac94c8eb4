// evring/ring/publisher.hpp — writing events: reserve, fill, commit.
//
// How to publish an event:
//
//     evring::Publisher publisher(ring);             // ring mapped ReadWrite
//     auto r = publisher.reserve(sizeof(Sample));
//     if (!r) { /* larger than max_payload_size(): nothing was reserved */ }
//     r.descriptor().event_type = 7;
//     r.descriptor().content_ext[0] = flow_tag;
//     std::memcpy(r.payload(), &sample, sizeof sample);
//     publisher.commit(r);
//
// (typed_publish.hpp does the same in one call for a payload struct plus
// trailing arrays, and records RECORD_ERROR for oversized payloads.)
//
// How to publish a burst of events at once:
//
//     evring::BatchEvent batch[16];
//     for (std::size_t i = 0; i < 16; ++i)
//         batch[i] = {&quotes[i], {flow_tag, 0, 0, 0}, sizeof quotes[i], kQuoteType};
//     std::uint64_t first = publisher.publish_batch(batch);  // seqnos first..first+15
//
// (typed_publish.hpp's publish_many takes any number of events, splits them
// into batches, and records RECORD_ERROR for oversized payloads.)
//
// Contract:
// - reserve() takes the timestamp, hands out the next sequence number and
//   16-byte-aligned payload space with one atomic read-modify-write of both
//   words (x86-64: lock cmpxchg16b; elsewhere one atomic fetch-add each; an
//   Exclusive publisher, and the claim's owner thread of an Auto one: a plain
//   load and store each), and never blocks, waits for readers, allocates or
//   makes a system call. (With other writers contending, the read-modify-write
//   is retried until it wins: lock-free.) The exceptions are set-up steps of
//   the claim (see Thread safety): the first reserve by a thread other than
//   the claim's owner revokes the claim, a system call, once.
// - The caller fills event_type, content_ext and the payload; seqno,
//   payload_size, payload_buf_offset and record_epoch_nanos are set by
//   reserve() and must not be changed.
// - Raw and unchecked: reserve/commit compare nothing with the ring's schema
//   and never look at interest (what readers want). The checked, typed
//   paths are a generated header's publish_<event> and publish_checked
//   (schema_write_check.hpp, docs/schema.md); wants() asks about interest.
// - commit() publishes the descriptor; until then readers see the event as
//   not ready. A reservation must be committed or aborted exactly once.
// - abort() gives a reservation up: it publishes the slot at once as a
//   RECORD_ERROR event (kind MissingEvent, with the dropped event type and
//   the requested size; payload_size is what the reserved space holds of that
//   16-byte description, so 0 for an empty reservation), so readers move on
//   at once and RING01 readers of other implementations see a well-formed
//   event. commit() and abort() of an empty (failed) reservation do nothing.
// - A reservation that is never committed nor aborted (its writer died)
//   holds readers at its sequence number until later events have been
//   committed for a while; iterators then report it as Abandoned and move on
//   (iterator.hpp).
// - publish_batch() publishes up to kMaxBatchEvents events in one call: one
//   timestamp (every event of the batch carries the same
//   record_epoch_nanos), one reservation of consecutive sequence numbers and
//   one contiguous payload range (the claim, the atomics and the window as
//   for one event), each event committed in sequence order as commit() does,
//   and one doorbell check after the last. Readers see ordinary events. It
//   publishes nothing and returns 0 for an empty batch, more than
//   kMaxBatchEvents events, or more than max_batch_payload() bytes.
//
// Thread safety: a Publisher may be shared by any number of threads, and any
// number of threads and processes may publish into one ring, each with its
// own Publisher (WriterSharing::Auto, the default, and Shared). How the two
// reservation words advance:
// - Auto: on a ring held exclusively by this process's RingWriter, the first
//   publisher claims the ring (writer_claim.hpp) and the first thread that
//   reserves through it advances them with a plain load and store, as fast as
//   Exclusive. Once a second publisher is made, or another thread reserves
//   through the claiming one, that writer revokes the claim (one system call,
//   once) and from then on every writer uses atomics, as Shared. On any other
//   ring, Auto is Shared.
// - Shared: always one atomic read-modify-write (revoking a claim first).
// - Exclusive: the caller promises that this publisher, used from one thread
//   at a time, is the ring's only writer; the ring stays readable by every
//   reader, but a second writer would corrupt it. (Auto gives the same speed
//   without the promise; Exclusive remains for rings not held by a
//   RingWriter.)
// The protocol is documented in publisher_inline.hpp and docs/format.md.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "evring/ring/doorbell.hpp"
#include "evring/format.hpp"
#include "evring/ring/interest.hpp"
#include "evring/ring/ring.hpp"

namespace evring {

class Publisher;

// The interest word a writer of `ring` honours: the extension block's on a
// ring that announces the doorbell (whose fence after every commit the
// ordering argument needs, docs/interest.md), else one that never narrows.
const std::uint64_t* interest_word_of(const MappedRing& ring) noexcept;

// A reserved, not yet published event.
class Reservation {
public:
    Reservation() = default;

    // False when the reservation failed (payload larger than the ring allows)
    // or was aborted.
    explicit operator bool() const noexcept { return slot_ != nullptr; }

    // The staged descriptor: fill event_type and content_ext here.
    EventDescriptor& descriptor() noexcept { return staged_; }
    const EventDescriptor& descriptor() const noexcept { return staged_; }
    std::uint64_t seqno() const noexcept { return staged_.seqno; }

    // Writable payload space of descriptor().payload_size bytes, 16-byte aligned
    // and contiguous even where it wraps the end of the buffer.
    std::byte* payload() const noexcept { return payload_; }

private:
    friend class Publisher;
    // Used by Publisher::reserve, which sets every field of `staged` itself.
    Reservation(const EventDescriptor& staged, DescriptorSlot* slot, std::byte* payload) noexcept
        : staged_(staged), slot_(slot), payload_(payload) {}

    EventDescriptor staged_{};
    DescriptorSlot* slot_ = nullptr;
    std::byte* payload_ = nullptr;
};

// One event of a batch (Publisher::publish_batch): what is copied into the
// ring. payload_size is 32 bits, as a descriptor's is.
struct BatchEvent {
    const void* payload = nullptr;  // payload_size bytes; may be null when 0
    std::array<std::uint64_t, 4> content_ext{};  // the flow tags
    std::uint32_t payload_size = 0;
    std::uint16_t event_type = 0;
};

// How a Publisher advances the ring's reservation words (see the contract).
// About publishers (threads and processes reserving); whether other writer
// processes may open the ring file at all is WriterProcesses (ring_writer.hpp).
enum class WriterSharing {
    Auto,       // plain stores while it is the only writer of a ring held exclusively, else Shared
    Shared,     // any number of writers: reserve() uses atomic read-modify-writes
    Exclusive,  // the caller's promise: the only writer, one thread at a time: plain loads and stores
};

class Publisher {
public:
    // `ring` must be mapped ReadWrite and outlive the publisher.
    explicit Publisher(const MappedRing& ring, WriterSharing sharing = WriterSharing::Auto) noexcept;
    // Movable (the claim, if any, moves along; a moved-from publisher must
    // not be used); not copyable: two copies of a claiming publisher would
    // both take the plain path.
    Publisher(Publisher&& other) noexcept;
    Publisher& operator=(Publisher&&) = delete;
    Publisher(const Publisher&) = delete;
    Publisher& operator=(const Publisher&) = delete;
    ~Publisher();

    [[nodiscard]] Reservation reserve(std::uint64_t payload_size) noexcept;
    void commit(const Reservation& reservation) noexcept;
    // Publishes the reservation as a RECORD_ERROR (see the contract) and
    // empties it, so a later commit or abort of it does nothing.
    void abort(Reservation& reservation) noexcept;

    // The most events one publish_batch takes. A writer that dies inside the
    // call leaves at most this many consecutive reservations uncommitted, and
    // readers find a committed event past that many (Iterator looks up to 64
    // slots ahead), so they still report them Abandoned.
    static constexpr std::size_t kMaxBatchEvents = 64;
    // The most payload bytes one batch holds, each payload rounded up to 16:
    // the buffer less one window increment, the limit of one payload, so no
    // event of a batch overwrites (expires) an earlier one of the same batch.
    std::uint64_t max_batch_payload() const noexcept { return payload_buf_size_ - window_increment_; }
    // Publishes `events` in order under consecutive sequence numbers with one
    // timestamp, one reservation and one doorbell check (see the contract).
    // Returns the first event's seqno (event i has first + i), or 0 when
    // nothing was published: no events, more than kMaxBatchEvents, or more
    // than max_batch_payload() bytes.
    [[nodiscard]] std::uint64_t publish_batch(std::span<const BatchEvent> events) noexcept;
    // The same for `count` events of one type and payload size whose
    // payloads lie back to back at `payloads` (event i's at i x payload_size:
    // an array of structs). content_ext holds each event's flow tags (count
    // entries), or one entry for every event, or none (all zero); any other
    // length publishes nothing. Limits and result as above.
    [[nodiscard]] std::uint64_t publish_batch(std::uint16_t event_type, const void* payloads,
                                              std::uint32_t payload_size, std::size_t count,
                                              std::span<const std::array<std::uint64_t, 4>> content_ext) noexcept;

    // Records a RECORD_ERROR event describing a payload that could not be
    // recorded, with as much of its start as fits. Returns its seqno.
    std::uint64_t publish_record_error(RecordErrorKind kind, std::uint16_t dropped_event_type,
                                       std::uint64_t requested_payload_size,
                                       const void* payload_start, std::uint64_t available_bytes,
                                       const std::array<std::uint64_t, 4>& content_ext) noexcept;

    // The ring's interest word (interest.hpp), one relaxed load: what the
    // ring's live registered readers want. kInterestEverything on a ring
    // without evring's doorbell (another implementation's, a snapshot).
    std::uint64_t interest() const noexcept;
    // This publisher when some reader wants an event of `event` (always when
    // it is always recorded), else null: `if (auto* p = publisher.wants(T))`
    // skips building an event nobody wants. Typed helpers check by
    // themselves; the raw reserve()/commit() never do.
    Publisher* wants(const EventInterest& event) noexcept {
        return interest_admits(interest(), event) ? this : nullptr;
    }
    // The same for a generated header's EventType (interest_of found by
    // argument-dependent lookup, constexpr, so the check folds to constants).
    template <class Type>
        requires requires(Type type) {
            { interest_of(type) } -> std::convertible_to<EventInterest>;
        }
    Publisher* wants(Type type) noexcept {
        return wants(EventInterest(interest_of(type)));
    }

    // The ring's limit (format.hpp's max_payload_size_for), and never more
    // than a descriptor's 32-bit payload_size can say.
    std::uint64_t max_payload_size() const noexcept { return max_payload_size_; }
    // True while reserve() from the claim's owner thread (or, before the first
    // reserve, from any thread) takes the plain path: this Auto publisher holds
    // the ring's writer claim and nobody revoked it. For tests and tools.
    bool holds_claim() const noexcept;
    const MappedRing& ring() const noexcept { return *ring_; }

private:
    // claim_owner_ of a publisher whose plain path has no owner thread (yet):
    // never a thread token, and not 0, which a thread that never reserved
    // reads as its token.
    static constexpr std::uint64_t kNoOwner = ~std::uint64_t{0};

    // W3 for a reservation ending at `end` past unchecked_end_ (out of line:
    // once per window increment of payload bytes).
    void cover_window(std::uint64_t end) noexcept;
    std::uint64_t advance_window(std::uint64_t needed) noexcept;
    // Cold half of the claimed path: the first reserve through a claiming
    // publisher makes its thread the owner (true); another thread revokes
    // the claim (false). Assigns the thread's token if it has none.
    bool adopt_or_revoke() noexcept;
    bool reserve_plain_if_claimed(std::uint64_t events, std::uint64_t bytes, std::uint64_t& seqno,
                                  std::uint64_t& offset) noexcept;
    // W1 and W2 for `events` sequence numbers and `bytes` payload bytes, by
    // this publisher's path; `seqno` is the first, `offset` the first byte.
    // True when it took a locked instruction.
    bool reserve_words(std::uint64_t events, std::uint64_t bytes, std::uint64_t& seqno,
                       std::uint64_t& offset) noexcept;
    // W3 (or W3') and W4 for reserved payload bytes ending at `end`.
    void cover_before_payload(std::uint64_t end) noexcept;
    // W5..W8 of one slot: the descriptor words, then the sequence number.
    static void write_slot(std::uint64_t* slot, std::uint64_t seqno, std::uint64_t word1, std::uint64_t nanos,
                           std::uint64_t offset, const std::array<std::uint64_t, 4>& content_ext) noexcept;
    // W9..W11 once, after the last commit's W8.
    void ring_doorbell_after_commit() noexcept;
    // A batch's reservation: the timestamp, W1/W2 for `count` events and
    // `bytes`, W3/W3' and W4; where its payloads go and its first slot.
    struct BatchStart {
        std::uint64_t now, seqno, offset;
        std::byte* payload;  // offset's bytes; the batch's are contiguous (the buffer is mapped twice)
        DescriptorSlot* slot;
    };
    BatchStart start_batch(std::size_t count, std::uint64_t bytes) noexcept;

    const MappedRing* ring_;
    // The ring's interest word, or a word that always says "everything".
    // Initialised from ring_, which is declared first.
    const std::uint64_t* interest_ = interest_word_of(*ring_);
    RingControl* control_;
    DescriptorSlot* descriptors_;
    std::byte* payload_;
    std::uint64_t descriptor_mask_;
    std::uint64_t payload_buf_size_;
    std::uint64_t payload_mask_;
    std::uint64_t window_increment_;
    std::uint64_t max_payload_size_;
    // A reservation ending at or below this overwrites no byte above the
    // window this publisher last saw (or raised) plus the buffer size, so it
    // needs no W3; the window only rises (publisher_inline.hpp, W3'). Read
    // and written by every thread that reserves through this publisher.
    std::uint64_t unchecked_end_;
    bool exclusive_;
    // Auto: the ring's claim words while this publisher holds the claim, else
    // null; claim_owner_ is the token of the thread that reserves on the plain
    // path (kNoOwner until the first reserve, and in a publisher without the
    // claim), read by every thread that reserves.
    WriterClaim* claim_ = nullptr;
    std::uint64_t claim_owner_ = kNoOwner;
    bool pair_rmw_;  // Shared: W1 and W2 as one lock cmpxchg16b (publisher_inline.hpp)
    // Rung after every commit when the ring announces a doorbell (doorbell.hpp);
    // null otherwise. Initialised from ring_, which is declared first.
    std::uint32_t* doorbell_ = writer_doorbell_word(*ring_);
    // True when this process registered for membarrier: commit then needs no
    // fence (W9 is a compiler fence).
    bool doorbell_light_ = doorbell_ != nullptr && register_doorbell_writer();
    // The word commit loads after W9 (W10), so that it tests one bit whatever
    // the case: doorbell_ when light; a word that always says "a reader
    // sleeps" when a full fence must come first (ring_doorbell_slow makes it,
    // then loads doorbell_); a word that never does on a ring without one.
    const std::uint32_t* doorbell_watch_ = doorbell_watch_for(doorbell_, doorbell_light_);

    static const std::uint32_t* doorbell_watch_for(std::uint32_t* doorbell, bool light) noexcept;
    // W10 saw bit 0 of doorbell_watch_ set (`seen`): wake the sleepers, or
    // make the full fence and ring doorbell_.
    void ring_doorbell_slow(std::uint32_t seen) noexcept;
};

}  // namespace evring

#include "evring/ring/publisher_inline.hpp"
