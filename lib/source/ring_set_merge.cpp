// A ring set merged by time (ring_set_source.hpp): the release rule.
//
// Each member is read a run of descriptors at a time (RingSource::read_run,
// Member::run); payloads are copied when an event is handed out
// (RingSource::fill_payload), into that member's source, so they stay valid
// until the next read(). Invariant: read() reads a member's next run only
// when it holds none of that member's events and no Gap or Notice of it
// waits (Member::after), so a member's items keep its sequence order and the
// text a waiting item points to (in the member's source) stays valid.
#include <fmt/format.h>

#include <algorithm>

#include "source/ring_set_source.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/ring_set_member.hpp"

namespace evring {
namespace {

// Heads of two different members: a member holds one head, so the
// (time, member, seqno) order never needs the seqno here.
bool earlier(const RingSetSource::Member& a, const RingSetSource::Member& b) {
    const std::uint64_t x = a.head().record_epoch_nanos;
    const std::uint64_t y = b.head().record_epoch_nanos;
    return x != y ? x < y : a.index < b.index;
}

// The heap's order: std's heaps keep the greatest on top, so the greatest
// is the earliest head.
bool later(const RingSetSource::Member* a, const RingSetSource::Member* b) { return earlier(*b, *a); }

// The position of the earliest head in a non-empty list (0 when empty), the
// best one's key kept in registers: one load per member.
std::size_t earliest(const std::vector<RingSetSource::Member*>& list) {
    if (list.empty()) return 0;
    std::size_t best = 0;
    std::uint64_t time = list[0]->head().record_epoch_nanos;
    std::uint32_t index = list[0]->index;
    for (std::size_t i = 1; i < list.size(); ++i) {
        const std::uint64_t t = list[i]->head().record_epoch_nanos;
        if (t < time || (t == time && list[i]->index < index)) {
            best = i;
            time = t;
            index = list[i]->index;
        }
    }
    return best;
}

// Heads at which the order becomes a heap (MergeOrder::Auto). Below, a scan
// (one load per member, in order) costs less than the heap's sifts through
// member pointers: 8 to 23 % less from 2 to 24 members, 3 % at 32, 4 %
// more at 48 (evring-set-bench --readers --members N: both drained in the
// same round; docs/ring-sets.md, "Merge cost in the number of members").
constexpr std::size_t kMergeHeapFrom = 32;

}  // namespace

void probe_pending(std::vector<std::unique_ptr<RingSetSource::Member>>& members, std::uint64_t runs) {
    const auto wanted = [runs](const RingSetSource::Member& m) {
        return !m.has_head() && !m.ended && (m.pending || m.probed != runs);
    };
    if (std::none_of(members.begin(), members.end(), [&](const auto& m) { return wanted(*m); })) return;
    // Acquire: the reservation word is only compared with what this reader
    // has read (no data is read through it).
    const bool intact = guard_sigbus([&] {
        for (auto& m : members) {
            if (!wanted(*m)) continue;
            const MappedRing* ring = m->source->ring();
            m->pending = ring != nullptr &&
                         shared::load_acquire(ring->header().control.last_seqno) >= m->source->next_seqno();
            m->probed = runs;
        }
    });
    if (!intact)
        for (auto& m : members)
            if (wanted(*m)) m->pending = true;
}

SourceStep RingSetSource::pull(Member& m, SourceItem& item) {
    if (m.after != SourceStep::Event) {  // met after the run just handed out
        const SourceStep step = m.after;
        m.after = SourceStep::Event;
        return hand_out(m, step, item);
    }
    std::size_t filled = 0;
    const SourceStep step = m.source->read_run(m.run, filled, m.after_item);
    m.at = 0;
    m.end = static_cast<std::uint32_t>(filled);
    if (filled > 0) {
        m.idle = false;
        m.stuck_since = 0;
        ++runs_;
    }
    switch (step) {
    case SourceStep::Event: return step;
    case SourceStep::NotReady:
        m.idle = filled == 0;
        return filled > 0 ? SourceStep::Event : step;
    case SourceStep::End:
        m.ended = true;
        return filled > 0 ? SourceStep::Event : step;
    case SourceStep::Failed:
        m.ended = true;
        break;
    case SourceStep::Gap:
    case SourceStep::Notice: break;
    }
    if (filled > 0) {  // the run first
        m.after = step;
        return SourceStep::Event;
    }
    return hand_out(m, step, item);
}

// A Gap, Notice or failure a member's read stopped at (its text in
// m.after_item and the member's source), as the merge hands it out.
SourceStep RingSetSource::hand_out(Member& m, SourceStep step, SourceItem& item) {
    switch (step) {
    case SourceStep::Gap:
        item.gap = m.after_item.gap;
        item.gap.member = m.index;
        return step;
    case SourceStep::Failed: return member_failed(m, m.source->next_seqno(), item);
    default:
        notice_text_ = fmt::format("member {}: {}", m.index, m.after_item.notice);
        item.notice = notice_text_;
        return SourceStep::Notice;
    }
}

// The release rule (see the contract): false while a member without a held
// event has a reservation pending and the stall bound has not passed.
bool RingSetSource::may_release() {
    bool ok = true;
    std::uint64_t now = 0;  // read only when a member has a reservation pending
    for (auto& m : members_) {
        if (m->ended || m->has_head()) continue;
        if (!m->pending) {
            m->stuck_since = 0;
            continue;
        }
        if (now == 0) now = now_monotonic();
        if (m->stuck_since == 0) m->stuck_since = now;
        if (now - m->stuck_since < static_cast<std::uint64_t>(options_.stall_bound.count())) ok = false;
    }
    return ok;
}

std::uint64_t RingSetSource::now_monotonic() const { return options_.monotonic_nanos(); }

// Reads a run for every member that holds no event and may have one (see
// below). Returns a Gap or Notice to hand out first; Event otherwise;
// NotReady after a member was re-opened (read() starts over).
SourceStep RingSetSource::fill(SourceItem& item) {
    // An idle member is read again only when its writer has reserved
    // something new (phase 0), or when no member holds an event (phase 1:
    // its NotReady path then notices a writer that exited): a NotReady read
    // costs a liveness check, which must not be paid per event. Phase 0 runs
    // again while it read a run: a member probed before that run was read
    // may have reserved meanwhile, earlier than the run's events
    // (probe_pending); each pass reads only members that held nothing, so
    // this ends within one pass per member.
    for (int phase = 0; phase < 2;) {
        const std::uint64_t runs = runs_;
        if (phase == 0) probe_pending(members_, runs_);
        if (phase == 1 && std::any_of(members_.begin(), members_.end(), [](const auto& m) { return m->has_head(); }))
            break;
        for (std::size_t i = 0; i < members_.size(); ++i) {
            Member& m = *members_[i];
            if (m.has_head()) continue;
            if (m.after != SourceStep::Event) return pull(m, item);  // waits behind no event of its member
            if (m.ended) {
                if (!m.reopen || phase == 1) continue;
                const std::uint32_t index = m.index;
                const std::string name = m.name;
                order_ok_ = false;
                members_.erase(members_.begin() + static_cast<std::ptrdiff_t>(i));
                ++member_version_;
                open_member(index, name, Position::oldest());
                return SourceStep::NotReady;  // at most once per re-created member
            }
            const bool quiet = m.idle && !m.pending;
            if (quiet != (phase == 1)) continue;
            const SourceStep step = pull(m, item);
            if (step == SourceStep::Gap || step == SourceStep::Notice) return step;
        }
        if (phase == 1 || runs_ == runs) ++phase;
    }
    return SourceStep::Event;
}

// The order's next member (see order_ in ring_set_source.hpp), or nullptr
// when only a full pass can tell: a run was read, something reset the order,
// or the member released last used up its run (it may want a read). Both
// strategies hand out the same (time, member) order: a member holds one
// head at a time, and a burst of one writer stays first at the cost of one
// comparison.
RingSetSource::Member* RingSetSource::next_in_order() {
    if (!order_ok_ || order_runs_ != runs_ || released_ == nullptr || !released_->has_head()) return nullptr;
    return order_heap_ ? next_by_heap() : next_by_scan();
}

// O(log members): the released member goes back in with its next head.
RingSetSource::Member* RingSetSource::next_by_heap() {
    if (order_.empty() || earlier(*released_, *order_.front())) return released_;
    order_.push_back(released_);
    std::push_heap(order_.begin(), order_.end(), later);
    std::pop_heap(order_.begin(), order_.end(), later);
    released_ = order_.back();
    order_.pop_back();
    return released_;
}

// O(members): when the released member is no longer before the list's
// earliest head (order_[bound_]), that member is handed out and the released
// one takes its place in the list; one pass finds the list's new earliest.
RingSetSource::Member* RingSetSource::next_by_scan() {
    if (order_.empty() || earlier(*released_, *order_[bound_])) return released_;
    std::swap(released_, order_[bound_]);
    bound_ = earliest(order_);
    return released_;
}

// After a full pass that found no member wanting a read: `best` is handed
// out, every other member holding a head goes into the order.
void RingSetSource::start_order(Member* best) {
    order_.clear();
    for (auto& m : members_)
        if (m->has_head() && m.get() != best) order_.push_back(m.get());
    using Order = RingSetSourceOptions::MergeOrder;
    order_heap_ = options_.merge_order == Order::Heap ||
                  (options_.merge_order == Order::Auto && order_.size() + 1 >= kMergeHeapFrom);
    if (order_heap_) {
        std::make_heap(order_.begin(), order_.end(), later);
    } else {
        bound_ = earliest(order_);
    }
    order_ok_ = true;
    order_runs_ = runs_;
    released_ = best;
}

// The member whose head is handed out next; or nullptr with `step` to return
// instead, or with `again` when read() must start over.
RingSetSource::Member* RingSetSource::pick(SourceItem& item, SourceStep& step, bool& again) {
    if (Member* next = next_in_order()) return next;
    order_ok_ = false;
    released_ = nullptr;
    // The full pass: the earliest head, and whether a member holds no event
    // but may produce one (then read first). When every member still read
    // holds one (or cannot produce an earlier one), nothing else is looked at.
    Member* best = nullptr;
    bool wanting = false;
    for (auto& m : members_) {
        if (m->has_head()) {
            if (best == nullptr || earlier(*m, *best)) best = m.get();
        } else if (m->ended ? m->reopen || m->after != SourceStep::Event
                            : !m->idle || m->pending || m->probed != runs_) {
            // Not: an idle member probed since the last run was read and
            // found without a reservation (probe_pending): it can produce
            // nothing earlier than the heads, and reading it would only pay
            // a liveness check.
            wanting = true;
        }
    }
    if (!wanting && best != nullptr) {
        start_order(best);
        return best;
    }
    step = fill(item);
    if (step == SourceStep::NotReady) {  // a member was re-opened
        again = true;
        return nullptr;
    }
    if (step != SourceStep::Event) return nullptr;  // a Gap or Notice first
    best = nullptr;
    for (auto& m : members_)
        if (m->has_head() && (best == nullptr || earlier(*m, *best))) best = m.get();
    if (best != nullptr && may_release()) return best;
    step = SourceStep::NotReady;
    if (best != nullptr || !std::all_of(members_.begin(), members_.end(), [](const auto& m) { return m->ended; }))
        return nullptr;
    refresh_members(true);  // a member may have appeared since
    again = !notices_.empty() ||
            std::any_of(members_.begin(), members_.end(), [](const auto& m) { return !m->ended || m->reopen; });
    // A writer that holds the set but has no member yet (or none left) will
    // add one: the set has not ended, unless it was removed (note_removed).
    step = !again && !removed_ && writers_hold_set() ? SourceStep::NotReady : SourceStep::End;
    return nullptr;
}

SourceStep RingSetSource::read(SourceItem& item, PayloadRead payload) {
    last_ = nullptr;  // members may be dropped below
    for (;;) {
        // The clock is read once per 256 calls: a clock read per merged event
        // would cost more than the merge itself.
        if ((++refresh_calls_ & 255) == 0) refresh_members(false);
        if (!notices_.empty()) {
            notice_text_ = std::move(notices_.front());
            notices_.erase(notices_.begin());
            item.notice = notice_text_;
            return SourceStep::Notice;
        }
        SourceStep step = SourceStep::Event;
        bool again = false;
        Member* best = pick(item, step, again);
        if (best == nullptr) {
            if (again) continue;
            return step;
        }
        const std::uint64_t t = best->head().record_epoch_nanos;
        if (member_joined_before(t)) continue;  // its earlier events go first
        item.event.descriptor = best->head();
        item.event.member = best->index;
        ++best->at;
        const bool late = t < last_released_nanos_;
        if (!late) last_released_nanos_ = t;
        if (skip_ > 0) {
            --skip_;
            continue;
        }
        if (late) ++counters_.late;
        item.event.payload = {};
        item.event.payload_state = PayloadState::NotRead;
        if (payload == PayloadRead::Copy && best->source->fill_payload(item.event) == SourceStep::Failed) {
            // The member's file was cut short under the reader: as when its
            // descriptors cannot be read, the member is read no more.
            best->drop_run();
            best->ended = true;
            order_ok_ = false;
            return member_failed(*best, item.event.descriptor.seqno, item);
        }
        last_ = best;  // load_payload reads from it
        return SourceStep::Event;
    }
}

}  // namespace evring
