// A member of a live ring set that cannot be read any more (its file cut
// short under the reader): what the merge hands out for it
// (ring_set_source.hpp, "Members").
#include <fmt/format.h>

#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/ring_set_member.hpp"

namespace evring {

// As a truncated ring ends its reader with an error, a failed member is
// damage: counted (damaged(), so `watch` and `record` exit 1), and read no
// more while the other members go on. The events it still held from
// `first_lost` on are a LostToDamage gap of that member when its header can
// still be read to say how many; otherwise a Notice says why it is no longer
// read.
SourceStep RingSetSource::member_failed(Member& m, std::uint64_t first_lost, SourceItem& item) {
    ++counters_.damage_reports;
    notice_text_ = fmt::format("member {}: {}; no longer read", m.index, m.source->error().message());
    std::uint64_t last = 0;
    const MappedRing* ring = m.source->ring();
    // Acquire: only compared with what was read; no data is read through it.
    const bool known = ring != nullptr && first_lost > 0 &&
                       guard_sigbus([&] { last = shared::load_acquire(ring->header().control.last_seqno); });
    if (known && last >= first_lost && last < kMaxSeqno) {
        const std::uint64_t count = last - first_lost + 1;
        notice_text_ = fmt::format("lost {} {} (member {} seqno {}..{}): {}; member {} is no longer read", count,
                                   count == 1 ? "event" : "events", m.index, first_lost, last,
                                   m.source->error().message(), m.index);
        item.gap = SourceGap{first_lost, count, GapReason::LostToDamage, notice_text_};
        item.gap.member = m.index;
        return SourceStep::Gap;
    }
    item.notice = notice_text_;
    return SourceStep::Notice;
}

}  // namespace evring
