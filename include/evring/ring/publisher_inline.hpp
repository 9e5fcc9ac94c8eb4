// evring/ring/publisher_inline.hpp — the writer's hot path. Included by publisher.hpp.
//
// The protocol, writer and reader side by side with the fence pairs, is
// drawn in docs/format.md ("The protocol"); each shared-memory access below
// carries its step label (W1..W9) and goes through shared_word.hpp.
//
// Invariants (who writes which word, which ordering protects whom):
//
// Control words (RingControl, shared by all writers of a ring):
//   - last_seqno (W1): bumped by fetch_add by every reservation. Relaxed: the
//     number only has to be unique; publication happens through the slot.
//   - next_payload_byte (W2): bumped by fetch_add by every reservation,
//     relaxed for the same reason. Virtual offsets never wrap; bytes live at
//     offset mod size.
//   - W1 and W2 may be one step: a Shared publisher on a CPU with
//     CMPXCHG16B advances both words (adjacent, 16-byte aligned) with one
//     `lock cmpxchg16b` (shared::fetch_add_pair_relaxed). Each word still
//     changes only by an atomic read-modify-write, so sequence numbers and
//     payload ranges stay unique among any mix of writers, ours or other
//     implementations' fetch_adds; it saves one of the two locked
//     instructions (docs/performance.md). Under ThreadSanitizer, and without
//     the instruction, the two fetch_adds below.
//   - An Exclusive publisher is by contract the only writer, so it bumps both
//     with a relaxed load and a relaxed store: the values readers see are the
//     same, and it saves the two locked instructions (each of which also
//     waits for the previous event's stores to drain; docs/performance.md).
//   - buffer_window_start (W3): raised (never lowered) by the writer whose
//     payload would overwrite bytes below it, with a CAS loop, in steps of the
//     window increment so the line changes rarely. Invariant: every virtual
//     byte below it may have been overwritten; every payload at offset >= it
//     is intact. The writer orders its window update (or the load that showed
//     it was already high enough) before its payload stores with a release
//     fence (W4); a reader's acquire fence after copying (P2), then a load of
//     the window (P3), therefore sees a window that covers any bytes it saw
//     overwritten.
//   - W3' (the publisher's own word unchecked_end_, not shared memory): the
//     window a publisher last loaded or raised, plus the buffer size. A
//     reservation ending at or below it needs no W3: the window only rises,
//     so it still covers the bytes the reservation overwrites. Written with
//     release after that W3, read with acquire: the W3 load or raise happens
//     before the reading thread's W4 and its payload stores, as above, even
//     when another thread of the same publisher made it. A lower value
//     written late by a racing thread only sends a reservation to W3 again.
//
// Descriptor slot of sequence number s: slot (s - 1) & mask. Written only by
// the writer holding reservation s. Two writers share a slot only when one of
// them is a whole ring of events behind (descheduled between reserve and
// commit); their commits can then interleave (old writer's W5, the new
// writer's whole commit, the old writer's W7) so that a reader sees the new
// seqno over the old event's fields. RING01 has no spare word to detect
// that: it is the "lapped writers" limit in docs/format.md.
//   W5. word 0 (seqno) := 0, relaxed — marks the slot as being rewritten;
//   W6. release fence                — pairs with R3: a reader that copied any
//                                      word of W7 sees word 0 != s at R4;
//   W7. words 1..7, relaxed;
//   W8. word 0 := s, release         — pairs with R1: publishes words 1..7 and
//                                      the payload bytes;
//   W9. ring the doorbell (doorbell.hpp).
// The reader side is in iterator_inline.hpp and payload.hpp.
#pragma once

#include <algorithm>
#include <cstring>

#include "evring/clock.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/ring/writer_claim.hpp"

namespace evring {

// I7 (lib/registry/registry_interest.hpp, docs/interest.md): relaxed; the fence that orders it after this
// writer's earlier reservations is W9 of its last commit.
inline std::uint64_t Publisher::interest() const noexcept { return shared::load_relaxed(*interest_); }

inline Publisher::Publisher(const MappedRing& ring, WriterSharing sharing) noexcept
    : ring_(&ring),
      control_(&ring.header().control),
      descriptors_(ring.descriptors()),
      payload_(ring.payload_buffer()),
      descriptor_mask_(ring.descriptor_mask()),
      payload_buf_size_(ring.layout().size.payload_buf_size),
      payload_mask_(ring.payload_mask()),
      window_increment_(window_increment_for(ring.layout().size.payload_buf_size)),
      // payload_size is 32 bits: one compare in reserve() tests both limits.
      max_payload_size_(std::min<std::uint64_t>(max_payload_size_for(ring.layout().size.payload_buf_size),
                                                UINT32_MAX)),
      unchecked_end_(ring.layout().size.payload_buf_size),  // W3': a window of at least 0
      exclusive_(sharing == WriterSharing::Exclusive),
      pair_rmw_(shared::has_pair_rmw() &&
                reinterpret_cast<std::uintptr_t>(&ring.header().control.last_seqno) % 16 == 0) {
    // Setup, not the hot path: may make system calls (writer_claim.hpp).
    if (sharing == WriterSharing::Auto) {
        if (claim_or_revoke(ring)) claim_ = writer_claim_of(ring);
    } else if (sharing == WriterSharing::Shared) {
        revoke_writer_claim(ring);
    }
}

// The claimed path, on the claim's owner thread: W1 and W2 with plain
// stores, guarded by X1..X4 (writer_claim.hpp). False once the claim is
// revoked.
inline bool Publisher::reserve_plain_if_claimed(std::uint64_t aligned, std::uint64_t& seqno,
                                                std::uint64_t& offset) noexcept {
    // Locals: the compiler cannot tell that the stores below leave this
    // object alone, and reloaded both pointers after each of them.
    WriterClaim* const claim = claim_;
    RingControl* const control = control_;
    shared::store_relaxed(claim->busy, 1u);  // X1
    shared::compiler_fence();                // X2, the other half is the revoker's X6
    if (shared::load_relaxed(claim->revoked) != 0) [[unlikely]] {  // X3
        shared::store_release(claim->busy, 0u);  // X4
        return false;
    }
    seqno = shared::load_relaxed(control->last_seqno) + 1;             // W1
    shared::store_relaxed(control->last_seqno, seqno);                 // W1
    offset = shared::load_relaxed(control->next_payload_byte);         // W2
    shared::store_relaxed(control->next_payload_byte, offset + aligned);  // W2
    shared::store_release(claim->busy, 0u);  // X4, pairs with the revoker's X7
    return true;
}

inline Reservation Publisher::reserve(std::uint64_t payload_size) noexcept {
    // max_payload_size_ is at most UINT32_MAX (the constructor).
    if (payload_size > max_payload_size_) [[unlikely]]
        return Reservation();
    const std::uint64_t aligned = (payload_size + kPayloadAlignment - 1) & ~(kPayloadAlignment - 1);

    // Timestamp first, as the reference does: with several writers, times are
    // therefore close to, but not strictly, increasing in seqno order.
    const std::uint64_t now = wall_clock_nanos();
    std::uint64_t seqno, offset;
    bool locked = false;  // W1 and W2 took a locked instruction
    // H: the claim's owner thread, by one thread-local load and one compare.
    // The raw token: a thread that never reserved reads 0, which is never
    // claim_owner_, and gets its token in adopt_or_revoke.
    bool owner = shared::load_relaxed(claim_owner_) == t_writer_thread_token;
    if (!owner && !exclusive_ && claim_ != nullptr) [[unlikely]]
        owner = adopt_or_revoke();
    if (owner && reserve_plain_if_claimed(aligned, seqno, offset)) [[likely]] {
        // W1 and W2 taken on the claimed path.
    } else if (exclusive_) {
        // The only writer of both words (header comment): load and store.
        seqno = shared::load_relaxed(control_->last_seqno) + 1;  // W1
        shared::store_relaxed(control_->last_seqno, seqno);      // W1
        offset = shared::load_relaxed(control_->next_payload_byte);           // W2
        shared::store_relaxed(control_->next_payload_byte, offset + aligned);  // W2
    } else if (pair_rmw_) {
        // W1 and W2 as one atomic step (header comment).
        const shared::WordPair old = shared::fetch_add_pair_relaxed(control_->last_seqno, 1, aligned);
        seqno = old.first + 1;
        offset = old.second;
        locked = true;
    } else {
        seqno = shared::fetch_add_relaxed(control_->last_seqno, 1) + 1;         // W1
        offset = shared::fetch_add_relaxed(control_->next_payload_byte, aligned);  // W2
        locked = true;
    }

    const std::uint64_t end = offset + aligned;
    // Shared only: the next event's slot and payload start, most likely
    // ours again (a single writer), fetched for writing now, so that the next
    // reserve's locked instruction does not wait for this event's stores to
    // miss (docs/performance.md). Hints only; a wrong guess costs one line.
    // The plain paths have no locked instruction to wait, and the hint would
    // take the next slot from a reader polling it one event early.
    if (locked) {
        __builtin_prefetch(&descriptors_[seqno & descriptor_mask_], 1, 3);
        __builtin_prefetch(payload_ + (end & payload_mask_), 1, 3);
    }
    // Our bytes overwrite virtual bytes below end - payload_buf_size_: the
    // window must say so before we store any of them (W3, out of line), unless
    // the window this publisher knows already does (W3').
    if (end > shared::load_acquire(unchecked_end_)) [[unlikely]]
        cover_window(end);
    shared::fence_release();  // W4, pairs with P2: W3 or W3' before our payload stores

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
    // A mapped ring's: lets the compiler drop commit()'s test of the slot
    // for a reservation it sees succeed.
    if (descriptors_ == nullptr) __builtin_unreachable();
    return Reservation(staged, &descriptors_[(seqno - 1) & descriptor_mask_],
                       payload_ + (offset & payload_mask_));
}

inline void Publisher::commit(const Reservation& r) noexcept {
    if (r.slot_ == nullptr) [[unlikely]]
        return;  // a failed reservation: nothing was reserved
    const EventDescriptor& d = r.staged_;
    std::uint64_t* slot = r.slot_->words;
    shared::store_relaxed(slot[0], 0);  // W5: a reader re-checking word 0 (R4) sees 0
    shared::fence_release();            // W6, pairs with R3
    // W7, one store per word, each built from the fields: wide loads of
    // bytes just written by narrower stores cannot be store-forwarded and
    // stall (~10 ns); and a loop over a staged array of the words was neither
    // unrolled (atomic stores) nor free of the array's stores and reloads:
    // 151 instructions per reserve + 64 B copy + commit, 112 written out
    // (docs/performance.md, "Deterministic counts").
    shared::store_relaxed(slot[1], std::uint64_t{d.event_type} | std::uint64_t{d.reserved} << 16 |
                                       std::uint64_t{d.payload_size} << 32);  // offsets 8, 10, 12: little-endian
    shared::store_relaxed(slot[2], d.record_epoch_nanos);
    shared::store_relaxed(slot[3], d.payload_buf_offset);
    shared::store_relaxed(slot[4], d.content_ext[0]);
    shared::store_relaxed(slot[5], d.content_ext[1]);
    shared::store_relaxed(slot[6], d.content_ext[2]);
    shared::store_relaxed(slot[7], d.content_ext[3]);
    // W8, pairs with R1; also publishes the payload bytes written before.
    shared::store_release(slot[0], d.seqno);
    // W9: wake sleeping readers, if any (doorbell.hpp's ring_doorbell, with
    // the case decided at construction: doorbell_watch_). W9 here is the
    // registered process's compiler fence; in any other the watched word
    // sends every commit to ring_doorbell_slow, which makes the full fence
    // before it loads the doorbell.
    shared::compiler_fence();                                           // W9
    const std::uint32_t seen = shared::load_relaxed(*doorbell_watch_);  // W10
    if ((seen & 1u) != 0) [[unlikely]]
        ring_doorbell_slow(seen);
}

}  // namespace evring
