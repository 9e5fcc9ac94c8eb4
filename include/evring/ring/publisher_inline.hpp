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
//
// Batches (publish_batch): N events published by one call, each an ordinary
// event to every reader. What keeps each invariant above:
//   - W1/W2 once for the batch: N consecutive sequence numbers and one
//     contiguous range of the N payloads' rounded sizes, by the same path as
//     one event (claimed: plain, inside X1..X4; Exclusive: plain; Shared: one
//     cmpxchg16b of the pair, or one fetch_add of each word). Each word still
//     changes by one read-modify-write (or by its only writer's store), so
//     numbers and ranges stay unique among any mix of writers. Event i gets
//     seqno s + i and offset o_i = o_0 + the rounded sizes before it: what N
//     reservations by a lone writer would get.
//   - W3/W3' once, for the batch's end, then one W4 before any payload store.
//     A batch holds at most max_batch_payload() bytes (the buffer less one
//     window increment, the limit of one payload), so the window it raises
//     stays at or below o_0: no event of a batch expires another of it.
//   - Each event is then committed in sequence order as commit() does: its
//     payload bytes (the array form stores every payload first), then W5,
//     W6, W7, W8 of its own slot. Pair A holds per slot, so
//     a reader never sees seqno k+1 committed before its descriptor and
//     payload are complete, whatever it saw of seqno k.
//   - W9..W11 once, after the last W8: every W8 of the batch comes before
//     W9 in program order, so the doorbell's Dekker argument (doorbell.hpp)
//     covers each event of it: a sleeper's re-check (D4) sees the event it
//     waits for, or W10 sees its announce and wakes it.
//   - A writer that dies inside the call leaves at most kMaxBatchEvents
//     consecutive reservations uncommitted (the later ones of its batch);
//     readers look that far ahead for a later commit, so once any later
//     event is committed they report each of them Abandoned.
//   - One wall-clock read: every event of a batch has the same
//     record_epoch_nanos. Ring sets break ties by member, then seqno.
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
inline bool Publisher::reserve_plain_if_claimed(std::uint64_t events, std::uint64_t bytes, std::uint64_t& seqno,
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
    const std::uint64_t last = shared::load_relaxed(control->last_seqno);  // W1
    shared::store_relaxed(control->last_seqno, last + events);             // W1
    seqno = last + 1;
    offset = shared::load_relaxed(control->next_payload_byte);             // W2
    shared::store_relaxed(control->next_payload_byte, offset + bytes);     // W2
    shared::store_release(claim->busy, 0u);  // X4, pairs with the revoker's X7
    return true;
}

inline bool Publisher::reserve_words(std::uint64_t events, std::uint64_t bytes, std::uint64_t& seqno,
                                     std::uint64_t& offset) noexcept {
    // H: the claim's owner thread, by one thread-local load and one compare.
    // The raw token: a thread that never reserved reads 0, which is never
    // claim_owner_, and gets its token in adopt_or_revoke.
    bool owner = shared::load_relaxed(claim_owner_) == t_writer_thread_token;
    if (!owner && !exclusive_ && claim_ != nullptr) [[unlikely]]
        owner = adopt_or_revoke();
    if (owner && reserve_plain_if_claimed(events, bytes, seqno, offset)) [[likely]]
        return false;  // W1 and W2 taken on the claimed path
    if (exclusive_) {
        // The only writer of both words (header comment): load and store.
        const std::uint64_t last = shared::load_relaxed(control_->last_seqno);  // W1
        shared::store_relaxed(control_->last_seqno, last + events);             // W1
        seqno = last + 1;
        offset = shared::load_relaxed(control_->next_payload_byte);             // W2
        shared::store_relaxed(control_->next_payload_byte, offset + bytes);     // W2
        return false;
    }
    if (pair_rmw_) {
        // W1 and W2 as one atomic step (header comment).
        const shared::WordPair old = shared::fetch_add_pair_relaxed(control_->last_seqno, events, bytes);
        seqno = old.first + 1;
        offset = old.second;
        return true;
    }
    seqno = shared::fetch_add_relaxed(control_->last_seqno, events) + 1;      // W1
    offset = shared::fetch_add_relaxed(control_->next_payload_byte, bytes);  // W2
    return true;
}

inline void Publisher::cover_before_payload(std::uint64_t end) noexcept {
    // Our bytes overwrite virtual bytes below end - payload_buf_size_: the
    // window must say so before we store any of them (W3, out of line), unless
    // the window this publisher knows already does (W3').
    if (end > shared::load_acquire(unchecked_end_)) [[unlikely]]
        cover_window(end);
    shared::fence_release();  // W4, pairs with P2: W3 or W3' before our payload stores
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
    const bool locked = reserve_words(1, aligned, seqno, offset);  // W1 and W2 took a locked instruction
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
    cover_before_payload(end);  // W3 or W3', W4

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

inline void Publisher::write_slot(std::uint64_t* slot, std::uint64_t seqno, std::uint64_t word1,
                                  std::uint64_t nanos, std::uint64_t offset,
                                  const std::array<std::uint64_t, 4>& content_ext) noexcept {
    shared::store_relaxed(slot[0], 0);  // W5: a reader re-checking word 0 (R4) sees 0
    shared::fence_release();            // W6, pairs with R3
    // W7, one store per word: a loop over a staged array of the words was
    // neither unrolled (atomic stores) nor free of the array's stores and
    // reloads: 151 instructions per reserve + 64 B copy + commit, 112
    // written out (docs/performance.md, "Deterministic counts").
    shared::store_relaxed(slot[1], word1);
    shared::store_relaxed(slot[2], nanos);
    shared::store_relaxed(slot[3], offset);
    shared::store_relaxed(slot[4], content_ext[0]);
    shared::store_relaxed(slot[5], content_ext[1]);
    shared::store_relaxed(slot[6], content_ext[2]);
    shared::store_relaxed(slot[7], content_ext[3]);
    // W8, pairs with R1; also publishes the payload bytes written before.
    shared::store_release(slot[0], seqno);
}

inline void Publisher::ring_doorbell_after_commit() noexcept {
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

inline void Publisher::commit(const Reservation& r) noexcept {
    if (r.slot_ == nullptr) [[unlikely]]
        return;  // a failed reservation: nothing was reserved
    const EventDescriptor& d = r.staged_;
    // Word 1 built from the fields: a wide load of bytes just written by
    // narrower stores cannot be store-forwarded and stalls (~10 ns).
    write_slot(r.slot_->words, d.seqno,
               std::uint64_t{d.event_type} | std::uint64_t{d.reserved} << 16 |
                   std::uint64_t{d.payload_size} << 32,  // offsets 8, 10, 12: little-endian
               d.record_epoch_nanos, d.payload_buf_offset, d.content_ext);
    ring_doorbell_after_commit();
}

namespace detail {
// A batch's payload copy: 16..64 bytes as two fixed-size pieces that overlap
// in the middle (inlined vector moves), anything else through memcpy; the
// reader's racy_copy (payload.hpp) does the same for the same reason: the
// call, and the registers its loop saves around it, cost more than the copy.
// The pieces stay within [src, src + n) and [dst, dst + n).
inline void copy_into_ring(std::byte* dst, const void* source, std::size_t n) noexcept {
    const auto* src = static_cast<const std::byte*>(source);
    if (n > 64 || n < 16) [[unlikely]] {
        if (n != 0) std::memcpy(dst, src, n);  // an empty payload may come with no buffer at all
    } else if (n > 32) {
        std::memcpy(dst, src, 32);
        std::memcpy(dst + n - 32, src + n - 32, 32);
    } else {
        std::memcpy(dst, src, 16);
        std::memcpy(dst + n - 16, src + n - 16, 16);
    }
}
}  // namespace detail

inline Publisher::BatchStart Publisher::start_batch(std::size_t count, std::uint64_t bytes) noexcept {
    BatchStart b;
    b.now = wall_clock_nanos();  // one timestamp for the batch
    (void)reserve_words(count, bytes, b.seqno, b.offset);  // W1, W2 (header comment, "Batches")
    cover_before_payload(b.offset + bytes);                // W3 or W3', W4
    b.payload = payload_ + (b.offset & payload_mask_);
    b.slot = &descriptors_[(b.seqno - 1) & descriptor_mask_];
    return b;
}

inline std::uint64_t Publisher::publish_batch(std::span<const BatchEvent> events) noexcept {
    const std::size_t count = events.size();
    std::uint64_t bytes = 0;
    for (const BatchEvent& e : events) bytes += RingLayout::align_up(e.payload_size, kPayloadAlignment);
    // count - 1 wraps for an empty batch: one compare for both limits.
    if (count - 1 >= kMaxBatchEvents || bytes > max_batch_payload()) [[unlikely]]
        return 0;
    BatchStart b = start_batch(count, bytes);
    const std::uint64_t first = b.seqno;
    // Locals: the compiler cannot tell that the stores below leave this
    // object alone, and would reload each member after each of them.
    DescriptorSlot* const slots = descriptors_;
    DescriptorSlot* const slots_end = descriptors_ + descriptor_mask_ + 1;
    for (const BatchEvent& e : events) {
        const std::uint64_t size = e.payload_size;
        detail::copy_into_ring(b.payload, e.payload, size);
        write_slot(b.slot->words, b.seqno, std::uint64_t{e.event_type} | size << 32, b.now, b.offset,
                   e.content_ext);  // W5..W8
        const std::uint64_t aligned = RingLayout::align_up(size, kPayloadAlignment);
        b.offset += aligned;
        b.payload += aligned;  // within the second mapping: a batch is smaller than the buffer
        ++b.seqno;
        if (++b.slot == slots_end) b.slot = slots;
    }
    ring_doorbell_after_commit();  // W9..W11, once
    return first;
}

inline std::uint64_t Publisher::publish_batch(std::uint16_t event_type, const void* payloads,
                                              std::uint32_t payload_size, std::size_t count,
                                              std::span<const std::array<std::uint64_t, 4>> content_ext) noexcept {
    static constexpr std::array<std::uint64_t, 4> kNoFlow{};
    const std::uint64_t stride = RingLayout::align_up(payload_size, kPayloadAlignment);
    // count - 1 wraps for an empty batch; count <= 64 keeps the product small.
    if (count - 1 >= kMaxBatchEvents || stride * count > max_batch_payload() ||
        (content_ext.size() > 1 && content_ext.size() != count)) [[unlikely]]
        return 0;
    // Flow tags: each event's (step 1) or one set for every event (step 0).
    const std::array<std::uint64_t, 4>* flow = content_ext.empty() ? &kNoFlow : content_ext.data();
    const std::size_t flow_step = content_ext.size() > 1 ? 1 : 0;
    BatchStart b = start_batch(count, stride * count);
    const std::uint64_t first = b.seqno;
    // Every payload first: when the ring's stride is the caller's, one copy
    // (the range is contiguous: the buffer is mapped twice). Each W8 below
    // comes after all of them, which pair A needs.
    const auto* src = static_cast<const std::byte*>(payloads);
    if (stride == payload_size) {
        if (stride != 0) std::memcpy(b.payload, src, stride * count);
    } else {
        for (std::size_t i = 0; i < count; ++i)
            detail::copy_into_ring(b.payload + i * stride, src + i * payload_size, payload_size);
    }
    DescriptorSlot* const slots = descriptors_;
    DescriptorSlot* const slots_end = descriptors_ + descriptor_mask_ + 1;
    const std::uint64_t word1 = std::uint64_t{event_type} | std::uint64_t{payload_size} << 32;
    for (std::size_t i = 0; i < count; ++i) {
        write_slot(b.slot->words, b.seqno, word1, b.now, b.offset, *flow);  // W5..W8
        flow += flow_step;
        b.offset += stride;
        ++b.seqno;
        if (++b.slot == slots_end) b.slot = slots;
    }
    ring_doorbell_after_commit();  // W9..W11, once
    return first;
}

}  // namespace evring
