// evring/ring/iterator_inline.hpp — the reader's hot path. Included by iterator.hpp.
//
// The reader's half of the seqlock (the writer's half is in
// publisher_inline.hpp; docs/format.md draws both side by side). Each
// shared-memory access goes through shared_word.hpp and carries its label:
//   R1. s1 := word 0, acquire — pairs with W8: if s1 == expected, everything
//                               the writer stored before publishing (words
//                               1..7 and the payload) is visible;
//   R2. copy words 1..7, relaxed atomic loads (never a data race);
//   R3. acquire fence         — pairs with W6 (the writer's release fence
//                               after it zeroed word 0): if any copied word
//                               came from a later rewrite of the slot, R4
//                               sees 0 or a newer seqno;
//   R4. s2 := word 0, relaxed; the copy is consistent iff s2 == s1.
//   H.  relaxed loads of last_seqno and of other slots' word 0: hints of
//       where the writers are, never trusted without R1..R4.
// A slot's word 0 only ever grows, except for the transient 0 of a rewrite, so
// s1 < expected means "not written yet" and s1 > expected means "lapped".
//
// Damaged rings: last_seqno is taken as at most kMaxSeqno and seek() clamps
// to it, so no sequence arithmetic here can wrap and no loop over sequence
// numbers (here or in a caller bounded by newest_seqno()) can run forever.
#pragma once

#include <time.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "evring/ring/shared_word.hpp"

namespace evring {

inline Iterator::Iterator(const MappedRing& ring) noexcept
    : ring_(&ring),
      control_(&ring.header().control),
      descriptors_(ring.descriptors()),
      descriptor_mask_(ring.descriptor_mask()),
      capacity_(ring.layout().size.descriptor_capacity) {
    reset();
}

// The copy goes word by word straight into `out`: a copy staged in a local
// array and then assigned to `out` made the compiler reload the eight 8-byte
// stores as 16-byte vectors, a store-forwarding stall on every event
// (docs/performance.md, "The 1 KiB reader"). `out` may hold a torn copy when
// the result is not Match.
inline Iterator::SlotRead Iterator::read_slot(std::uint64_t seqno,
                                              EventDescriptor& out) const noexcept {
    return read_slot(descriptors_, descriptor_mask_, seqno, out);
}

// The slots and mask as arguments, so that a loop keeps them in registers:
// the copy's stores into `out` may alias anything, members included.
inline Iterator::SlotRead Iterator::read_slot(const DescriptorSlot* slots, std::uint64_t mask, std::uint64_t seqno,
                                              EventDescriptor& out) noexcept {
    const std::uint64_t* words = slots[(seqno - 1) & mask].words;
    const std::uint64_t s1 = shared::load_acquire(words[0]);  // R1, pairs with W8
    if (s1 != seqno) return s1 < seqno ? SlotRead::Older : SlotRead::Newer;
    auto* to = reinterpret_cast<std::byte*>(&out);
    // R2, one load per word, written out: the loop over the words was not
    // unrolled (atomic loads): 95 instructions per try_next + 64 B
    // copy_payload, 63 written out (docs/performance.md, "Deterministic counts").
    const auto copy_word = [&](int i) {
        const std::uint64_t word = shared::load_relaxed(words[i]);  // R2
        std::memcpy(to + 8 * i, &word, 8);
    };
    std::memcpy(to, &s1, 8);
    copy_word(1);
    copy_word(2);
    copy_word(3);
    copy_word(4);
    copy_word(5);
    copy_word(6);
    copy_word(7);
    shared::fence_acquire();                                   // R3, pairs with W6
    const std::uint64_t s2 = shared::load_relaxed(words[0]);  // R4
    // A rewrite began during the copy: the event we wanted is gone.
    return s2 == s1 ? SlotRead::Match : SlotRead::Newer;
}

inline NextResult Iterator::try_next(EventDescriptor& out) noexcept {
    switch (read_slot(next_seqno_, out)) {
    case SlotRead::Match:
        ++next_seqno_;
        return NextResult::Success;
    case SlotRead::Older:
        return not_ready_or_abandoned();
    case SlotRead::Newer:
        break;
    }
    return take_gap();
}

// The committed case of each try_next, R1..R4 per slot exactly as read_slot
// does, in a loop that keeps the slots, the mask and the sequence number in
// registers; the first slot that is not a match goes through try_next itself
// (not ready, a gap, an abandoned reservation, or committed since the look).
// next_seqno_ and `filled` are stored after every event, together, so that a
// SIGBUS guard around the loop (RingSource::read_run) finds what was read
// and where the iterator stands in agreement, as with one try_next per event.
inline NextResult Iterator::try_next_run(std::span<EventDescriptor> out, std::size_t& filled) noexcept {
    const DescriptorSlot* const slots = descriptors_;
    const std::uint64_t mask = descriptor_mask_;
    const std::uint64_t ahead = run_ahead_ ? out.size() : 0;  // prefetch distance; 0: none (see the header)
    std::size_t n = 0;
    filled = 0;
    while (n < out.size()) {
        std::uint64_t seqno = next_seqno_;
        while (n < out.size() && read_slot(slots, mask, seqno, out[n]) == SlotRead::Match) {
            // H: a hint, never read. Low temporal locality (prefetcht2): the
            // line is wanted once, a run later; kept out of the way of the
            // merge's runs (2 KiB a member) in L1. It read faster than
            // prefetcht0 in alternated runs (docs/ring-sets.md).
            if (ahead != 0) __builtin_prefetch(&slots[(seqno - 1 + ahead) & mask], 0, 1);
            next_seqno_ = ++seqno;
            filled = ++n;
        }
        if (n == out.size()) break;
        const NextResult result = try_next(out[n]);
        if (result != NextResult::Success) {
            run_ahead_ = false;
            return result;
        }
        filled = ++n;
    }
    run_ahead_ = true;
    return NextResult::Success;
}

inline std::uint64_t Iterator::newest_seqno() const noexcept {
    // H: where the writers are; slots are validated by R1..R4. A damaged
    // header cannot take it past kMaxSeqno.
    return std::min(shared::load_relaxed(control_->last_seqno), kMaxSeqno);
}

inline std::uint64_t Iterator::oldest_seqno() const noexcept {
    const std::uint64_t newest = newest_seqno();
    return newest >= capacity_ ? newest - capacity_ + 1 : 1;
}

// Walks back from the newest reservation to the newest committed event, as
// RING01 readers of the reference do: reservations still in flight are
// skipped so the first try_next returns at once. The walk is bounded (a
// ring cannot have more reservations in flight than writers); past the
// bound, or in a ring with nothing committed yet, it lands on the oldest
// sequence number it looked at.
inline void Iterator::reset() noexcept {
    const std::uint64_t newest = newest_seqno();
    if (newest == 0) {
        next_seqno_ = 1;
        return;
    }
    const std::uint64_t span = std::min({newest, capacity_, kResetScanLimit});
    for (std::uint64_t s = newest; s > newest - span; --s) {
        const std::uint64_t word = slot_word(s);
        if (word == s) {
            next_seqno_ = s;  // the newest committed event
            return;
        }
        if (word > s) {
            // Overwritten since we loaded last_seqno: the writers lapped the
            // ring meanwhile, so s + 1 is at worst the next event to come.
            next_seqno_ = s + 1;
            return;
        }
    }
    next_seqno_ = newest - span + 1;
}

inline std::uint64_t Iterator::slot_word(std::uint64_t seqno) const noexcept {
    return shared::load_relaxed(descriptors_[(seqno - 1) & descriptor_mask_].words[0]);  // H
}

inline bool Iterator::read_descriptor(std::uint64_t seqno, EventDescriptor& out) const noexcept {
    return seqno != 0 && read_slot(seqno, out) == SlotRead::Match;
}

// The expected event was overwritten. Resume a little ahead of the oldest slot
// (1/16 of the ring, at most 1024 events): far enough that writers about to
// overwrite the oldest slots do not lap the reader again at once, near enough
// that a reader that stalled once loses few events that were still there.
inline NextResult Iterator::take_gap() noexcept {
    const std::uint64_t newest = newest_seqno();
    std::uint64_t resume = oldest_seqno() + std::min<std::uint64_t>(capacity_ / 16, 1024);
    if (resume > newest) resume = newest;  // tiny rings: stay within what exists
    if (resume <= next_seqno_) resume = next_seqno_ + 1;
    last_gap_lost_ = resume - next_seqno_;
    total_lost_ += last_gap_lost_;
    next_seqno_ = resume;
    return NextResult::Gap;
}

// Abandoned reservations. The bound is monotonic time (CLOCK_MONOTONIC, a
// vDSO read, no system call) rather than wall_clock_nanos(), so that a step of
// the system clock can neither fire it early nor hold it off.
namespace detail {
inline std::int64_t monotonic_nanos() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace detail

// True when some event after next_seqno_ is committed. Every look reads the
// next slot only; every 64th look of a stall also scans up to 64 slots towards
// the newest reservation, for when several writers died holding consecutive
// sequence numbers. (More than 64 consecutive dead
// reservations are never detected as abandoned: the reader then waits for them
// like for live ones.)
inline bool Iterator::later_event_committed() noexcept {
    auto committed = [this](std::uint64_t seqno) { return slot_word(seqno) >= seqno; };
    if (committed(next_seqno_ + 1)) return true;
    if ((++stall_looks_ & 63) != 0) return false;
    const std::uint64_t newest = newest_seqno();
    const std::uint64_t last = std::min(newest, next_seqno_ + std::min<std::uint64_t>(64, capacity_ - 1));
    for (std::uint64_t seqno = next_seqno_ + 2; seqno <= last; ++seqno)
        if (committed(seqno)) return true;
    return false;
}

// Spinning readers look on polls 64, 128, ... of a stall: a stall that short is
// a live writer between reserve and commit, and looking would only take the
// writer's next line from it (PollStyle).
inline NextResult Iterator::not_ready_or_abandoned() noexcept {
    if (stall_seqno_ != next_seqno_) {  // a new stall: forget the previous one
        stall_seqno_ = next_seqno_;
        stall_polls_ = 0;
        stall_looks_ = 0;
        stall_evidence_at_ = -1;
    }
    ++stall_polls_;
    if (stall_evidence_at_ < 0) {
        if ((stall_polls_ & look_mask_) != 0 || !later_event_committed()) return NextResult::NotReady;
        stall_evidence_at_ = detail::monotonic_nanos();
    }
    if (detail::monotonic_nanos() - stall_evidence_at_ < abandon_after_.count())
        return NextResult::NotReady;
    last_abandoned_seqno_ = next_seqno_;
    ++total_abandoned_;
    ++next_seqno_;
    return NextResult::Abandoned;
}

}  // namespace evring
