// Where a RingSource starts (ring_source.hpp, "Positions"): the one resolver
// of start positions over a mapped ring, and the time search.
#include <fmt/format.h>

#include "source/ring_source.hpp"
#include "source/ring_source_state.hpp"

namespace evring {
namespace {

// The timestamp of the first readable event at or after `seqno` (within 64
// slots and not past `limit`); sets `found` to its seqno.
bool probe(const Iterator& it, std::uint64_t seqno, std::uint64_t limit, std::uint64_t& found,
           std::uint64_t& nanos) {
    for (std::uint64_t s = seqno; s <= limit && s < seqno + 64; ++s) {
        EventDescriptor event;
        if (it.read_descriptor(s, event)) {
            found = s;
            nanos = event.record_epoch_nanos;
            return true;
        }
    }
    return false;
}

// Binary search, then the step back over events stamped at or after the
// target but sequenced earlier (ring_source.hpp). Reads only; every loop is
// bounded by newest <= kMaxSeqno and by counts.
std::uint64_t first_at_or_after(const Iterator& it, std::uint64_t target_nanos) {
    std::uint64_t lo = it.oldest_seqno();
    std::uint64_t hi = it.newest_seqno() + 1;  // answer in [lo, hi]; hi: "none yet"
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        std::uint64_t found = 0, nanos = 0;
        if (!probe(it, mid, hi - 1, found, nanos)) {
            const std::uint64_t oldest = it.oldest_seqno();
            if (mid < oldest) {
                lo = oldest;  // overwritten while we searched
                if (hi < lo) hi = lo;
            } else {
                hi = mid;  // nothing readable after mid: treat as the end
            }
            continue;
        }
        if (nanos < target_nanos)
            lo = found + 1;
        else
            hi = mid;
    }
    // Land on a readable event rather than on a hole when one follows.
    std::uint64_t found = 0, nanos = 0;
    if (probe(it, lo, it.newest_seqno(), found, nanos)) lo = found;
    std::uint64_t start = lo;
    unsigned below = 0;
    const std::uint64_t oldest = it.oldest_seqno();
    for (std::uint64_t s = lo; s > oldest && below < 256 && lo - s < 65536; --s) {
        EventDescriptor event;
        if (!it.read_descriptor(s - 1, event)) continue;
        if (event.record_epoch_nanos >= target_nanos) {
            start = s - 1;
            below = 0;
        } else {
            ++below;
        }
    }
    return start;
}

}  // namespace

Result<std::uint64_t> RingSource::seek_time(std::uint64_t target_nanos) {
    std::uint64_t start = 0;
    if (!state_->guard([&] { start = first_at_or_after(*it_, target_nanos); }, "searching for a time"))
        return std::move(state_->fault);
    return start;
}

Result<std::string> RingSource::seek(const Position& start) {
    seeking();
    std::uint64_t newest = 0, oldest = 0;
    if (!state_->guard([&] { newest = it_->newest_seqno(); oldest = it_->oldest_seqno(); }, "reading the header"))
        return std::move(state_->fault);
    switch (start.kind) {
    case Position::Kind::None:
    case Position::Kind::Latest:
        if (!state_->guard([&] { it_->reset(); }, "finding the newest event")) return std::move(state_->fault);
        return std::string();
    case Position::Kind::Oldest:
        it_->seek(oldest);
        return std::string();
    case Position::Kind::Back:
        it_->seek(std::max(oldest, newest >= start.value ? newest - start.value + 1 : 1));
        return std::string();
    case Position::Kind::Seqno:
        // A healing source starts where it was asked: the first read is then
        // a lapped gap up to the oldest, which the healer reads from the
        // recording (healer.hpp) - a named reader resuming past the ring's
        // oldest event skips nothing.
        if (start.value < oldest && (heals() || keep_overwritten_starts_)) {
            it_->seek(start.value);
            return fmt::format("seqno {} is no longer in {} '{}' (its oldest is {}): those up to the oldest are "
                               "read from the recording (healing)", start.value, describe(kind()), identity_.path,
                               oldest);
        }
        if (start.value < oldest) {
            it_->seek(oldest);
            return fmt::format("seqno {} is no longer in {} '{}'; starting at the oldest, {}", start.value,
                               describe(kind()), identity_.path, oldest);
        }
        if (!live_ && start.value > newest && start.resume && start.value == newest + 1) {
            it_->seek(start.value);  // read to its end before: nothing new
            return std::string();
        }
        if (!live_ && start.value > newest)
            return Error(ERANGE, fmt::format("seqno {} is beyond the newest event ({}) of {} '{}'", start.value,
                                             newest, describe(kind()), identity_.path));
        it_->seek(start.value);
        return std::string();
    case Position::Kind::Span: return unresolved_span(start);
    case Position::Kind::AbsoluteTime:
    case Position::Kind::RelativeTime: {
        auto now = now_nanos();
        if (!now) return std::move(now).error();
        auto first = seek_time(start.time_at(*now));
        if (!first) return std::move(first).error();
        it_->seek(*first);
        return std::string();
    }
    }
    return std::string();
}

}  // namespace evring
