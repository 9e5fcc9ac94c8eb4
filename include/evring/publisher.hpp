// evring/publisher.hpp — writing events: reserve, fill, commit.
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
// Contract:
// - reserve() takes the timestamp, hands out the next sequence number and
//   16-byte-aligned payload space with one atomic read-modify-write of both
//   words (x86-64: lock cmpxchg16b; elsewhere one atomic fetch-add each; an
//   Exclusive publisher: a plain load and store each), and never blocks, waits
//   for readers, allocates or makes a system call. (With other writers
//   contending, the read-modify-write is retried until it wins: lock-free.)
// - The caller fills event_type, content_ext and the payload; seqno,
//   payload_size, payload_buf_offset and record_epoch_nanos are set by
//   reserve() and must not be changed.
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
//
// Thread safety: a Publisher may be shared by any number of threads, and any
// number of processes may publish into one ring, each with its own Publisher.
// The exception is WriterSharing::Exclusive: the caller promises that this
// publisher, used from one thread at a time, is the ring's only writer (for
// instance a RingWriter holding the ring exclusively); the ring stays
// readable by every reader, but a second writer would corrupt it.
// The protocol is documented in publisher_inline.hpp and docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evring/doorbell.hpp"
#include "evring/format.hpp"
#include "evring/ring.hpp"

namespace evring {

class Publisher;

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

// Whether a Publisher shares its ring with other writers.
enum class WriterSharing {
    Shared,     // any number of writers: reserve() uses atomic read-modify-writes
    Exclusive,  // the only writer, one thread at a time: plain loads and stores
};

class Publisher {
public:
    // `ring` must be mapped ReadWrite and outlive the publisher.
    explicit Publisher(const MappedRing& ring, WriterSharing sharing = WriterSharing::Shared) noexcept;

    [[nodiscard]] Reservation reserve(std::uint64_t payload_size) noexcept;
    void commit(const Reservation& reservation) noexcept;
    // Publishes the reservation as a RECORD_ERROR (see the contract) and
    // empties it, so a later commit or abort of it does nothing.
    void abort(Reservation& reservation) noexcept;

    // Records a RECORD_ERROR event describing a payload that could not be
    // recorded, with as much of its start as fits. Returns its seqno.
    std::uint64_t publish_record_error(RecordErrorKind kind, std::uint16_t dropped_event_type,
                                       std::uint64_t requested_payload_size,
                                       const void* payload_start, std::uint64_t available_bytes,
                                       const std::array<std::uint64_t, 4>& content_ext) noexcept;

    std::uint64_t max_payload_size() const noexcept { return max_payload_size_; }
    const MappedRing& ring() const noexcept { return *ring_; }

private:
    void advance_window(std::uint64_t needed) noexcept;

    const MappedRing* ring_;
    RingControl* control_;
    DescriptorSlot* descriptors_;
    std::byte* payload_;
    std::uint64_t descriptor_mask_;
    std::uint64_t payload_buf_size_;
    std::uint64_t payload_mask_;
    std::uint64_t window_increment_;
    std::uint64_t max_payload_size_;
    bool exclusive_;
    bool pair_rmw_;  // Shared: W1 and W2 as one lock cmpxchg16b (publisher_inline.hpp)
    // Rung after every commit when the ring announces a doorbell (doorbell.hpp);
    // null otherwise. Initialised from ring_, which is declared first.
    std::uint32_t* doorbell_ = writer_doorbell_word(*ring_);
    // True when this process registered for membarrier: commit then needs no fence.
    bool doorbell_light_ = doorbell_ != nullptr && register_doorbell_writer();
};

}  // namespace evring

#include "evring/publisher_inline.hpp"
