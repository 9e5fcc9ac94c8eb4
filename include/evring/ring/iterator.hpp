// evring/ring/iterator.hpp — reading events in sequence order.
//
// How to read events:
//
//     evring::Iterator it(ring);        // positioned at the newest event
//     evring::EventDescriptor event;
//     for (;;) {
//         switch (it.try_next(event)) {
//         case evring::NextResult::Success:  handle(event); break;
//         case evring::NextResult::NotReady: /* nothing new yet */ break;
//         case evring::NextResult::Gap:      lost += it.last_gap_lost(); break;
//         case evring::NextResult::Abandoned: skipped(it.last_abandoned_seqno()); break;
//         }
//     }
//
// Contract:
// - try_next returns Success only with a consistent copy of a committed
//   descriptor whose seqno is exactly the one expected, then advances.
// - NotReady: the expected event is not committed yet; the iterator did not
//   move. (On any result but Success the contents of `out` are unspecified:
//   the copy goes straight into it.)
// - Gap: the writer overwrote the expected event before it was read. The
//   iterator moves past the lost events and last_gap_lost() says exactly how
//   many sequence numbers it skipped; nothing is counted twice or dropped
//   silently (Success count + lost count == advance of next_seqno()).
// - Abandoned: the expected event was reserved but its writer never committed
//   it (typically it died between reserve and commit): a later event is
//   committed and the slot has stayed empty for abandon_after() of monotonic
//   time, measured from the first NotReady poll that saw the later event.
//   The iterator moves past it; last_abandoned_seqno() names it. Success +
//   lost + abandoned == advance of next_seqno(). The bound is wall time, not
//   a count of polls, so it means the same for a reader spinning a million
//   times a second and one that sleeps on a doorbell; it must exceed the
//   longest time a live writer may sit between reserve and commit (preempted
//   or stopped). A writer stopped longer than that (SIGSTOP, a debugger) looks
//   dead: its event, committed later, is not delivered to this iterator.
//   Only the NotReady path does this work, and only on some polls (see
//   PollStyle): one load of the next slot's seqno word, every 64th look a
//   scan of up to 64 slots, one vDSO clock read per poll once a later event
//   is seen; Success is unchanged.
// - No system call, allocation or blocking; the ring is only read.
//
// Thread safety: an Iterator is single-threaded; any number of iterators, in
// any number of processes, may read one ring concurrently with its writers.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "evring/format.hpp"
#include "evring/ring/ring.hpp"

namespace evring {

enum class NextResult { Success, NotReady, Gap, Abandoned };

// How the caller polls while nothing is ready; it decides on which NotReady
// polls of a stall the iterator looks at later slots for a committed event
// (the evidence that the expected reservation was abandoned). A look reads
// the slot the writer fills next, so each look takes that cache line from
// the writer just before it writes there: a reader spinning on a flat-out
// writer that looked on every poll halved the writer's rate at 1 KiB
// (docs/performance.md, "The 1 KiB reader").
enum class PollStyle {
    Spinning,  // polls back to back (the default): looks on every 64th poll of a stall
    Sleeping,  // waits between polls (a doorbell, a timer): looks on every poll
};

class Iterator {
public:
    // Positioned at the newest committed event (see reset()). `ring` must
    // outlive it.
    explicit Iterator(const MappedRing& ring) noexcept;

    [[nodiscard]] NextResult try_next(EventDescriptor& out) noexcept;
    // Fills `out` as out.size() calls of try_next would, stopping at the
    // first that does not return Success: returns Success when `out` is full,
    // else that call's result; `filled` counts the events read into the front
    // of `out`, and is kept equal to how far next_seqno() moved by them after
    // every event (a SIGBUS guard around it sees both agree). The committed
    // case is a loop of its own, inline: no call per event. After a call
    // that filled `out`, the next one prefetches, per event read, the slot
    // one run (out.size()) further on: the writer was a run ahead, so those
    // are likely written, and a reader of many rings (a ring set's merge)
    // reads too many streams for the hardware prefetcher to follow. A call
    // that stopped short (caught up with a live writer) turns it off, so a
    // reader that follows does not take lines its writer is about to fill
    // (as PollStyle's looks would).
    [[nodiscard]] NextResult try_next_run(std::span<EventDescriptor> out, std::size_t& filled) noexcept;

    // The sequence number try_next will look for.
    std::uint64_t next_seqno() const noexcept { return next_seqno_; }
    // Events skipped by the most recent Gap, and by all Gaps so far.
    std::uint64_t last_gap_lost() const noexcept { return last_gap_lost_; }
    std::uint64_t total_lost() const noexcept { return total_lost_; }
    // The sequence number skipped by the most recent Abandoned, and how many
    // have been skipped so far.
    std::uint64_t last_abandoned_seqno() const noexcept { return last_abandoned_seqno_; }
    std::uint64_t total_abandoned() const noexcept { return total_abandoned_; }
    // How long an empty slot must stay empty behind a committed later event
    // before it is reported Abandoned (default kDefaultAbandonAfter).
    static constexpr std::chrono::nanoseconds kDefaultAbandonAfter = std::chrono::seconds(1);
    void set_abandon_after(std::chrono::nanoseconds bound) noexcept { abandon_after_ = bound; }
    std::chrono::nanoseconds abandon_after() const noexcept { return abandon_after_; }
    void set_poll_style(PollStyle style) noexcept { look_mask_ = style == PollStyle::Spinning ? 63 : 0; }

    // The next try_next returns the newest committed event (reservations still
    // in flight after it are skipped, as RING01 readers of the reference do),
    // or the first event of a ring with nothing committed yet.
    void reset() noexcept;
    // How far back reset() looks for a committed event.
    static constexpr std::uint64_t kResetScanLimit = 4096;
    // The next try_next looks for `seqno` (1 is the first event ever; values
    // past kMaxSeqno, which no ring reaches, are taken as kMaxSeqno).
    void seek(std::uint64_t seqno) noexcept {
        next_seqno_ = std::clamp<std::uint64_t>(seqno, 1, kMaxSeqno);
    }

    // Last sequence number handed to a writer (0: nothing written yet). It may
    // not be committed yet. At most kMaxSeqno, even in a damaged ring.
    std::uint64_t newest_seqno() const noexcept;
    // The smallest sequence number whose descriptor is still in the ring, or
    // newest_seqno() + 1 when the ring is empty.
    std::uint64_t oldest_seqno() const noexcept;

    // Copies the descriptor of `seqno` if it is committed and still in the
    // ring and returns true; when it returns false, `out` may hold a torn
    // copy and must not be used. Does not move the iterator.
    [[nodiscard]] bool read_descriptor(std::uint64_t seqno, EventDescriptor& out) const noexcept;

    const MappedRing& ring() const noexcept { return *ring_; }

private:
    enum class SlotRead { Match, Older, Newer };
    SlotRead read_slot(std::uint64_t seqno, EventDescriptor& out) const noexcept;
    static SlotRead read_slot(const DescriptorSlot* slots, std::uint64_t mask, std::uint64_t seqno,
                              EventDescriptor& out) noexcept;
    NextResult take_gap() noexcept;
    NextResult not_ready_or_abandoned() noexcept;
    bool later_event_committed() noexcept;
    // The seqno word of `seqno`'s slot, relaxed: a hint, never a read.
    std::uint64_t slot_word(std::uint64_t seqno) const noexcept;

    const MappedRing* ring_;
    const RingControl* control_;
    const DescriptorSlot* descriptors_;
    std::uint64_t descriptor_mask_;
    std::uint64_t capacity_;
    std::uint64_t next_seqno_ = 1;
    bool run_ahead_ = false;  // the last try_next_run filled its run: prefetch the next
    std::uint64_t last_gap_lost_ = 0;
    std::uint64_t total_lost_ = 0;
    // Abandoned-reservation detection (NotReady path only).
    std::chrono::nanoseconds abandon_after_ = kDefaultAbandonAfter;
    std::uint64_t stall_seqno_ = 0;       // the seqno we are stuck on
    std::uint64_t stall_polls_ = 0;       // NotReady polls at stall_seqno_
    std::uint64_t stall_looks_ = 0;       // of which looked at later slots
    std::uint64_t look_mask_ = 63;        // look when (stall_polls_ & look_mask_) == 0
    std::int64_t stall_evidence_at_ = -1;  // monotonic ns when a later commit was first seen
    std::uint64_t last_abandoned_seqno_ = 0;
    std::uint64_t total_abandoned_ = 0;
};

}  // namespace evring

#include "evring/ring/iterator_inline.hpp"
