// How far behind a reader is, from its next sequence number and the ring's
// head. See reader_listing.hpp for the contract.
#include "evring/ring/iterator.hpp"
#include "registry/reader_listing.hpp"

namespace evring {

RingHead ring_head(const MappedRing& ring) noexcept {
    Iterator it(ring);  // positioned at the newest committed event
    RingHead head;
    head.newest_seqno = it.newest_seqno();
    head.oldest_seqno = it.oldest_seqno();
    EventDescriptor newest{};
    if (head.newest_seqno != 0 && it.read_descriptor(it.next_seqno(), newest))
        head.newest_committed = newest;
    return head;
}

ReaderLag reader_lag(const MappedRing& ring, const RingHead& head,
                     std::uint64_t next_seqno) noexcept {
    ReaderLag lag;
    if (next_seqno > head.newest_seqno + 1) {
        lag.ahead = true;
        return lag;
    }
    lag.events = head.newest_seqno + 1 - next_seqno;
    if (lag.events == 0) {
        lag.bytes = 0;
        lag.nanos = 0;
        return lag;
    }
    if (next_seqno < head.oldest_seqno) {
        lag.lapped = true;
        lag.overwritten = head.oldest_seqno - next_seqno;
        return lag;
    }
    Iterator it(ring);
    EventDescriptor next{};
    if (!it.read_descriptor(next_seqno, next)) {
        // Overwritten since the head was read, or reserved and not committed yet.
        const std::uint64_t oldest = it.oldest_seqno();
        lag.lapped = next_seqno < oldest;
        if (lag.lapped) lag.overwritten = oldest - next_seqno;
        return lag;
    }
    if (!head.newest_committed || head.newest_committed->seqno < next_seqno) return lag;
    const EventDescriptor& newest = *head.newest_committed;
    // Offsets come from the ring and are bounded only in a sound one: no
    // arithmetic here may wrap.
    if (newest.payload_buf_offset <= kMaxPayloadOffset &&
        next.payload_buf_offset <= newest.payload_buf_offset)
        lag.bytes = newest.payload_buf_offset + newest.payload_size - next.payload_buf_offset;
    lag.nanos = newest.record_epoch_nanos >= next.record_epoch_nanos
                    ? newest.record_epoch_nanos - next.record_epoch_nanos
                    : 0;
    return lag;
}

}  // namespace evring
