// evring/publisher_inline.hpp — the writer's hot path. Included by publisher.hpp.
//
// Invariants (who writes which word, which ordering protects whom):
//
// Control words (RingControl, shared by all writers of a ring):
//   - last_seqno: bumped by fetch_add by every reservation. Relaxed: the
//     number only has to be unique; publication happens through the slot.
//   - next_payload_byte: bumped by fetch_add by every reservation, relaxed for
//     the same reason. Virtual offsets never wrap; bytes live at offset mod size.
//   - An Exclusive publisher is by contract the only writer, so it bumps both
//     with a relaxed load and a relaxed store: the values readers see are the
//     same, and it saves the two locked instructions (each of which also
//     waits for the previous event's stores to drain; docs/performance.md).
//   - buffer_window_start: raised (never lowered) by the writer whose payload
//     would overwrite bytes below it, with a CAS loop, in steps of the window
//     increment so the line changes rarely. Invariant: every virtual byte
//     below it may have been overwritten; every payload at offset >= it is
//     intact. The writer orders its window update (or the load that showed it
//     was already high enough) before its payload stores with a release fence;
//     a reader's acquire fence after copying, then a load of the window,
//     therefore sees a window that covers any bytes it saw overwritten.
//
// Descriptor slot of sequence number s: slot (s - 1) & mask. Written only by
// the writer holding reservation s. Two writers share a slot only when one of
// them is a whole ring of events behind (descheduled between reserve and
// commit); their commits can then interleave (old writer's step 1, the new
// writer's whole commit, the old writer's step 3) so that a reader sees the
// new seqno over the old event's fields. RING01 has no spare word to detect
// that: it is the "lapped writers" limit in docs/format.md.
//   1. word 0 (seqno) := 0, relaxed  — marks the slot as being rewritten;
//   2. release fence                 — a reader that sees any of the words of
//                                      step 3 then sees word 0 != its s;
//   3. words 1..7, relaxed;
//   4. word 0 := s, release          — publishes words 1..7 to a reader that
//                                      acquire-loads word 0 and sees s.
// The reader side is in iterator_inline.hpp.
#pragma once

#include <atomic>
#include <bit>
#include <cstring>

#include "evring/clock.hpp"

namespace evring {

inline Publisher::Publisher(const MappedRing& ring, WriterSharing sharing) noexcept
    : ring_(&ring),
      control_(&ring.header().control),
      descriptors_(ring.descriptors()),
      payload_(ring.payload_buffer()),
      descriptor_mask_(ring.descriptor_mask()),
      payload_buf_size_(ring.layout().size.payload_buf_size),
      payload_mask_(ring.payload_mask()),
      window_increment_(window_increment_for(ring.layout().size.payload_buf_size)),
      max_payload_size_(max_payload_size_for(ring.layout().size.payload_buf_size)),
      exclusive_(sharing == WriterSharing::Exclusive) {}

inline Reservation Publisher::reserve(std::uint64_t payload_size) noexcept {
    if (payload_size > max_payload_size_ || payload_size > UINT32_MAX) [[unlikely]]
        return Reservation();
    const std::uint64_t aligned = (payload_size + kPayloadAlignment - 1) & ~(kPayloadAlignment - 1);

    // Timestamp first, as the reference does: with several writers, times are
    // therefore close to, but not strictly, increasing in seqno order.
    const std::uint64_t now = wall_clock_nanos();
    std::atomic_ref<std::uint64_t> last_seqno(control_->last_seqno);
    std::atomic_ref<std::uint64_t> next_payload_byte(control_->next_payload_byte);
    std::uint64_t seqno, offset;
    if (exclusive_) {
        // Relaxed: we are the only writer of both words (header comment).
        seqno = last_seqno.load(std::memory_order_relaxed) + 1;
        last_seqno.store(seqno, std::memory_order_relaxed);
        offset = next_payload_byte.load(std::memory_order_relaxed);
        next_payload_byte.store(offset + aligned, std::memory_order_relaxed);
    } else {
        // Relaxed: uniqueness is all we need here; see the header comment.
        seqno = last_seqno.fetch_add(1, std::memory_order_relaxed) + 1;
        offset = next_payload_byte.fetch_add(aligned, std::memory_order_relaxed);
    }

    const std::uint64_t end = offset + aligned;
    if (end > payload_buf_size_) {
        // Our bytes overwrite virtual bytes below `needed`: make sure the
        // window says so before we store any of them.
        const std::uint64_t needed = end - payload_buf_size_;
        // Relaxed load: the release fence below orders it before our stores.
        if (std::atomic_ref<std::uint64_t>(control_->buffer_window_start)
                .load(std::memory_order_relaxed) < needed) [[unlikely]]
            advance_window(needed);
        std::atomic_thread_fence(std::memory_order_release);
    }

    // Every field is set here, so no zeroing pass over the whole reservation
    // runs first (it cost a `rep stos` per event; docs/performance.md).
    EventDescriptor staged;
    staged.seqno = seqno;
    staged.event_type = 0;
    staged.reserved = 0;
    staged.payload_size = static_cast<std::uint32_t>(payload_size);
    staged.record_epoch_nanos = now;
    staged.payload_buf_offset = offset;
    staged.content_ext = {};
    return Reservation(staged, &descriptors_[(seqno - 1) & descriptor_mask_],
                       payload_ + (offset & payload_mask_));
}

inline void Publisher::commit(const Reservation& r) noexcept {
    if (r.slot_ == nullptr) [[unlikely]]
        return;  // a failed reservation: nothing was reserved
    const EventDescriptor& d = r.staged_;
    // Words built from the fields rather than std::bit_cast of the staged
    // struct: the bit_cast's wide loads of bytes just written by narrower
    // stores cannot be store-forwarded and stall (~10 ns, docs/performance.md).
    const std::uint64_t words[8] = {
        0,
        std::uint64_t{d.event_type} | std::uint64_t{d.reserved} << 16 |
            std::uint64_t{d.payload_size} << 32,  // offsets 8, 10, 12: little-endian
        d.record_epoch_nanos,
        d.payload_buf_offset,
        d.content_ext[0],
        d.content_ext[1],
        d.content_ext[2],
        d.content_ext[3]};
    std::uint64_t* slot = r.slot_->words;
    // Step 1: invalidate; a reader re-checking word 0 after copying sees 0.
    std::atomic_ref<std::uint64_t>(slot[0]).store(0, std::memory_order_relaxed);
    // Step 2: pairs with the reader's acquire fence between copy and re-check.
    std::atomic_thread_fence(std::memory_order_release);
    // Step 3: the fields.
    for (int i = 1; i < 8; ++i)
        std::atomic_ref<std::uint64_t>(slot[i]).store(words[i], std::memory_order_relaxed);
    // Step 4: publish; pairs with the reader's acquire load of word 0. Also
    // publishes the payload bytes written before commit().
    std::atomic_ref<std::uint64_t>(slot[0]).store(r.staged_.seqno, std::memory_order_release);
    // Step 5: wake sleeping readers, if any (one fence and one load otherwise).
    if (doorbell_ != nullptr) ring_doorbell(doorbell_, doorbell_light_);
}

}  // namespace evring
