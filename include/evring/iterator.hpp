// evring/iterator.hpp — reading events in sequence order.
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
//         }
//     }
//
// Contract:
// - try_next returns Success only with a consistent copy of a committed
//   descriptor whose seqno is exactly the one expected, then advances.
// - NotReady: the expected event is not committed yet; nothing changed.
// - Gap: the writer overwrote the expected event before it was read. The
//   iterator moves past the lost events and last_gap_lost() says exactly how
//   many sequence numbers it skipped; nothing is counted twice or dropped
//   silently (Success count + lost count == advance of next_seqno()).
// - No system call, allocation or blocking; the ring is only read.
//
// Thread safety: an Iterator is single-threaded; any number of iterators, in
// any number of processes, may read one ring concurrently with its writers.
#pragma once

#include <cstdint>

#include "evring/format.hpp"
#include "evring/ring.hpp"

namespace evring {

enum class NextResult { Success, NotReady, Gap };

class Iterator {
public:
    // Positioned at the newest event (see reset()). `ring` must outlive it.
    explicit Iterator(const MappedRing& ring) noexcept;

    [[nodiscard]] NextResult try_next(EventDescriptor& out) noexcept;

    // The sequence number try_next will look for.
    std::uint64_t next_seqno() const noexcept { return next_seqno_; }
    // Events skipped by the most recent Gap, and by all Gaps so far.
    std::uint64_t last_gap_lost() const noexcept { return last_gap_lost_; }
    std::uint64_t total_lost() const noexcept { return total_lost_; }

    // The next try_next returns the newest event reserved so far (or the first
    // event of an empty ring).
    void reset() noexcept;
    // The next try_next looks for `seqno` (1 is the first event ever).
    void seek(std::uint64_t seqno) noexcept { next_seqno_ = seqno == 0 ? 1 : seqno; }

    // Last sequence number handed to a writer (0: nothing written yet). It may
    // not be committed yet.
    std::uint64_t newest_seqno() const noexcept;
    // The smallest sequence number whose descriptor is still in the ring, or
    // newest_seqno() + 1 when the ring is empty.
    std::uint64_t oldest_seqno() const noexcept;

    // Copies the descriptor of `seqno` if it is committed and still in the
    // ring; a torn copy is never returned. Does not move the iterator.
    [[nodiscard]] bool read_descriptor(std::uint64_t seqno, EventDescriptor& out) const noexcept;

    const MappedRing& ring() const noexcept { return *ring_; }

private:
    enum class SlotRead { Match, Older, Newer };
    SlotRead read_slot(std::uint64_t seqno, EventDescriptor& out) const noexcept;
    NextResult take_gap() noexcept;

    const MappedRing* ring_;
    const RingControl* control_;
    const DescriptorSlot* descriptors_;
    std::uint64_t descriptor_mask_;
    std::uint64_t capacity_;
    std::uint64_t next_seqno_ = 1;
    std::uint64_t last_gap_lost_ = 0;
    std::uint64_t total_lost_ = 0;
};

}  // namespace evring

#include "evring/iterator_inline.hpp"
