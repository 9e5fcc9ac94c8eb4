// tools/evring/ops/ring_sample.hpp — what `top` and `metrics` know about a ring's
// traffic, from its descriptors alone (payloads are never read).
//
// Each sample() reads the control words and the descriptors of the events
// published since the previous sample, at most max_scan of them: when more
// were published, it reads the newest max_scan and scales their per-type
// counts up to the number published (`estimated` says so). Totals of events
// and payload bytes are exact (sequence numbers and the payload offset);
// only the split by type is then an estimate. The first sample scans the
// ring's window (at most max_scan descriptors), so the tallies start with
// what is in the ring.
//
// A descriptor not yet committed is looked at again next sample; one still
// not committed Iterator::kDefaultAbandonAfter (1 s) after it was first seen
// is counted as an abandoned reservation and passed.
//
// Every read runs under the SIGBUS guard; a truncated ring file is an error.
//
// Thread safety: one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>

#include "evring/error.hpp"
#include "source/event_predicate.hpp"
#include "evring/ring/ring.hpp"

namespace evring::cli {

struct TypeTally {
    double events = 0;  // estimates when sampled, so not integers
    double bytes = 0;
};

struct RingSample {
    std::uint64_t wall_ns = 0;         // when taken (monotonic clock, for rates)
    std::uint64_t newest_seqno = 0;
    std::uint64_t oldest_seqno = 0;    // 0: empty ring
    std::uint64_t next_payload_byte = 0;
    std::uint64_t window_start = 0;
    std::uint64_t payload_in_use = 0;  // bytes from the oldest event's payload to the newest's end
    std::uint64_t events_in_ring = 0;
    std::uint64_t new_events = 0;      // published since the previous sample
    std::uint64_t new_bytes = 0;
    std::uint64_t scanned = 0;         // descriptors read for this sample
    bool estimated = false;            // the split by type is scaled up from the newest `scanned`
    bool restarted = false;            // the ring's sequence numbers went back (a new ring instance)
    std::map<std::uint16_t, TypeTally> types;  // the new events by type
};

class RingSampler {
public:
    explicit RingSampler(const MappedRing& ring, std::uint64_t max_scan = 65536)
        : ring_(ring), max_scan_(max_scan) {}

    Result<RingSample> sample();
    // Count only the events `where` keeps (by type, in new_events and
    // new_bytes); payloads it needs are looked at in place (payload.hpp:
    // peek, then payload_valid; one overwritten meanwhile is Expired).
    void set_where(const EventPredicate* where) noexcept { where_ = where; }

    // Since the first sample.
    const std::map<std::uint16_t, TypeTally>& totals() const noexcept { return totals_; }
    std::uint64_t abandoned() const noexcept { return abandoned_; }

private:
    void scan(RingSample& s, std::uint64_t since, std::uint64_t from, std::uint64_t to);

    bool keeps(const EventDescriptor& d) const noexcept;

    const MappedRing& ring_;
    std::uint64_t max_scan_;
    const EventPredicate* where_ = nullptr;
    bool first_ = true;
    std::uint64_t next_ = 0;  // the first sequence number not yet counted
    std::uint64_t last_bytes_ = 0;
    std::uint64_t pending_seqno_ = 0;  // the first uncommitted descriptor seen last sample
    std::uint64_t pending_since_ns_ = 0;  // when it was first seen uncommitted
    std::uint64_t abandoned_ = 0;
    std::map<std::uint16_t, TypeTally> totals_;
};

}  // namespace evring::cli
