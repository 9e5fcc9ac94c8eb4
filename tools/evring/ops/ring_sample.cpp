// RingSampler: bounded descriptor scans between control-word readings.
#include "ops/ring_sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"

namespace evring::cli {
namespace {

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The predicate's payloads: in place, zero-copy (checked after by keeps()).
struct PeekLoader final : PayloadLoader {
    explicit PeekLoader(const MappedRing& r) : ring(r) {}
    void load(SourceEvent& e) noexcept override {
        const std::byte* p = peek_payload(ring, e.descriptor);
        loaded = p != nullptr;
        e.payload_state = p != nullptr ? PayloadState::Ok : PayloadState::Invalid;
        if (p != nullptr) e.payload = {p, e.descriptor.payload_size};
    }
    const MappedRing& ring;
    bool loaded = false;
};

}  // namespace

bool RingSampler::keeps(const EventDescriptor& d) const noexcept {
    SourceEvent e;
    e.descriptor = d;
    PeekLoader loader(ring_);
    const bool kept = where_->matches(e, loader);
    if (!loader.loaded || payload_valid(ring_, d)) return kept;
    // Overwritten while it was looked at: what it said is not trusted.
    e.payload_state = PayloadState::Expired;
    e.payload = {};
    return where_->matches(static_cast<const SourceEvent&>(e));
}

// Counts [from, to] (the newest max_scan of them when more) as the events
// published since `since` (earlier ones left the ring before we saw them),
// leaving next_ at the first descriptor to look at again.
void RingSampler::scan(RingSample& s, std::uint64_t since, std::uint64_t from, std::uint64_t to) {
    const Iterator it(ring_);
    const std::uint64_t published = to - from + 1;
    std::uint64_t first = from;
    s.estimated = since < from;
    if (published > max_scan_) {
        first = to - max_scan_ + 1;
        s.estimated = true;
    }
    std::map<std::uint16_t, TypeTally> seen;
    std::uint64_t read = 0;
    std::uint64_t uncommitted_run = 0;  // trailing descriptors not committed yet
    EventDescriptor d{};
    for (std::uint64_t seqno = first; seqno <= to; ++seqno) {
        if (it.read_descriptor(seqno, d)) {
            ++read;
            uncommitted_run = 0;
            if (where_ != nullptr && !keeps(d)) continue;
            TypeTally& t = seen[d.event_type];
            t.events += 1;
            t.bytes += static_cast<double>(d.payload_size);
        } else if (seqno < it.oldest_seqno()) {
            continue;  // overwritten while we scanned: counted in the totals, not by type
        } else {
            if (uncommitted_run == 0 && seqno == pending_seqno_ &&
                s.wall_ns - pending_since_ns_ >= static_cast<std::uint64_t>(Iterator::kDefaultAbandonAfter.count())) {
                ++abandoned_;  // still empty abandon_after later (the iterator's bound): its writer gave it up
                continue;
            }
            ++uncommitted_run;
        }
    }
    // Come back for a trailing run of reservations not committed yet; what
    // was not committed in the middle of the range is passed now.
    const std::uint64_t counted_to = to - uncommitted_run;
    const std::uint64_t pending = uncommitted_run > 0 ? counted_to + 1 : 0;
    if (pending != pending_seqno_) pending_since_ns_ = s.wall_ns;
    pending_seqno_ = pending;
    next_ = counted_to + 1;
    s.scanned = read;
    const std::uint64_t counted = counted_to >= since ? counted_to - since + 1 : 0;
    s.new_events = counted;
    const double scale = read == 0 ? 0.0 : static_cast<double>(counted) / static_cast<double>(read);
    double kept_events = 0, kept_bytes = 0;
    for (auto& [type, tally] : seen) {
        TypeTally& out = s.types[type];
        out.events = s.estimated ? tally.events * scale : tally.events;
        out.bytes = s.estimated ? tally.bytes * scale : tally.bytes;
        kept_events += out.events;
        kept_bytes += out.bytes;
        totals_[type].events += out.events;
        totals_[type].bytes += out.bytes;
    }
    if (where_ != nullptr) {  // what the filter kept: the totals by seqno and offset count everything
        s.new_events = static_cast<std::uint64_t>(kept_events + 0.5);
        s.new_bytes = static_cast<std::uint64_t>(kept_bytes + 0.5);
    }
}

Result<RingSample> RingSampler::sample() {
    RingSample s;
    s.wall_ns = monotonic_ns();
    const bool whole = guard_sigbus([&] {
        const Iterator it(ring_);
        s.newest_seqno = it.newest_seqno();
        s.oldest_seqno = s.newest_seqno == 0 ? 0 : it.oldest_seqno();
        // H: relaxed reads are enough for a view; the ring moves on meanwhile.
        s.next_payload_byte = shared::load_relaxed(ring_.header().control.next_payload_byte);
        s.window_start = shared::load_relaxed(ring_.header().control.buffer_window_start);
        if (s.newest_seqno != 0) s.events_in_ring = s.newest_seqno - s.oldest_seqno + 1;
        EventDescriptor oldest{};
        if (s.oldest_seqno != 0 && it.read_descriptor(s.oldest_seqno, oldest) &&
            oldest.payload_buf_offset <= s.next_payload_byte)
            s.payload_in_use = s.next_payload_byte - std::max(oldest.payload_buf_offset, s.window_start);
        if (first_ || s.newest_seqno + 1 < next_) {
            s.restarted = !first_;
            next_ = s.oldest_seqno == 0 ? 1 : s.oldest_seqno;
            last_bytes_ = s.restarted ? 0 : s.next_payload_byte - std::min(s.payload_in_use, s.next_payload_byte);
            pending_seqno_ = 0;
        }
        first_ = false;
        s.new_bytes = s.next_payload_byte >= last_bytes_ ? s.next_payload_byte - last_bytes_ : s.next_payload_byte;
        last_bytes_ = s.next_payload_byte;
        if (s.newest_seqno >= next_) scan(s, next_, std::max(next_, s.oldest_seqno), s.newest_seqno);
    });
    if (!whole)
        return Error(EFAULT, fmt::format("bus error reading ring file '{}': the file was truncated while mapped",
                                         ring_.path()));
    return s;
}

}  // namespace evring::cli
