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
#include <bit>

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

// Members from which the order is a tree (MergeOrder::Auto). Below, the
// scan of the other heads costs less than a tree's path; from here on the
// path's log2 comparisons win. Instructions per event under callgrind
// (scripts/bench-set-counts --order scan|tree, members written round robin):
// scan / tree 187 / 197 at 3 members, 198 / 197 at 4, 210 / 205 at 5,
// 220 / 204 at 6, 242 / 204 at 8; in bursts of 8 (--burst 8) 164 / 172 at 4
// and 169 / 175 at 8. From 8 members the tree's margin when members
// interleave at every event (16 %) outweighs the scan's in bursts (3 %)
// (docs/ring-sets.md, "Merge cost in the number of members").
constexpr std::size_t kMergeTreeFrom = 8;

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

// The order's next member once `released_` handed out its head (see order_
// in ring_set_source.hpp); nullptr when only a full pass can tell, with
// `step` a Gap or Notice to hand out first when the released member met one.
// The order holds what a full pass would find: every other member holds the
// same head as when the order was taken, or cannot produce an earlier one
// (ended, or quiet: probed again after every run read), so only the released
// member's next head needs placing. Both ways hand out the same (time, member)
// order; a burst of one writer stays first at one comparison by scan, a
// path of the tree by tree.
RingSetSource::Member* RingSetSource::next_in_order(SourceItem& item, SourceStep& step) {
    if (!released_->has_head() && !refill(*released_, item, step)) return nullptr;
    if (!order_tree_) return next_by_scan();
    std::uint64_t key = MergeTree::kNoHead;  // ended: its slot holds nothing from now on
    if (released_->has_head()) {
        const std::uint32_t slot = tree_.winner();
        key = key_at(*released_, released_->at, slot);
        if (key == MergeTree::kUnplaced) {  // a time the tree's keys cannot hold: a new base
            order_ok_ = false;
            return nullptr;
        }
        tree_.next(slot) = key_at(*released_, released_->at + 1, slot);
    }
    return play(key);
}

// The released member used up its run: its next run is read here, as the
// full pass would read it (fill: a member that held events is read before
// anything else is decided). False when the order cannot go on without a
// full pass: a Gap, Notice or failure met (then in `step`), nothing ready (an
// idle member's reservation must be probed), a re-created member, or a quiet
// member that reserved meanwhile (it may be earlier than the run just read).
bool RingSetSource::refill(Member& m, SourceItem& item, SourceStep& step) {
    if (m.after != SourceStep::Event || m.reopen) {
        order_ok_ = false;
        return false;
    }
    if (m.ended) return true;  // read to its end: holds nothing from now on
    const SourceStep got = pull(m, item);
    if (!m.has_head()) {
        order_ok_ = false;
        if (got == SourceStep::Gap || got == SourceStep::Notice) step = got;
        return false;
    }
    if (quiet_ == 0) return true;
    probe_pending(members_, runs_);
    if (std::any_of(members_.begin(), members_.end(),
                    [](const auto& q) { return !q->has_head() && !q->ended && q->pending; })) {
        order_ok_ = false;
        return false;
    }
    return true;
}

// O(members): when the released member is no longer before the list's
// earliest head (order_[bound_]), that member is handed out and the released
// one takes its place in the list (or, holding nothing, leaves it); one pass
// finds the list's new earliest.
inline RingSetSource::Member* RingSetSource::next_by_scan() {
    if (!released_->has_head()) {
        if (order_.empty()) {
            order_ok_ = false;
            return nullptr;
        }
        released_ = order_[bound_];
        order_[bound_] = order_.back();
        order_.pop_back();
        bound_ = earliest(order_);
        return released_;
    }
    if (order_.empty() || earlier(*released_, *order_[bound_])) return released_;
    std::swap(released_, order_[bound_]);
    bound_ = earliest(order_);
    return released_;
}

// The tree's winner once released_'s slot took `key` (ring_set_tree.hpp);
// nullptr when no member holds an event (the full pass decides).
inline RingSetSource::Member* RingSetSource::play(std::uint64_t key) {
    if (tree_.play(key) == MergeTree::kNoHead) {
        order_ok_ = false;
        return nullptr;
    }
    released_ = members_[tree_.winner()].get();
    return released_;
}

// The tree key of member `m`'s event run[at] in `slot`: kUnplaced past its
// run, or for a time the tree's keys cannot hold.
inline std::uint64_t RingSetSource::key_at(const Member& m, std::uint32_t at, std::uint32_t slot) const {
    return at < m.end ? tree_.key(m.run[at].record_epoch_nanos, slot) : MergeTree::kUnplaced;
}

// The tree over every member (slot i: members_[i]), keyed from the earliest
// head: O(members), once per full pass. False (the scan then) when the
// heads are further apart than a key can hold.
bool RingSetSource::build_tree() {
    std::uint64_t first = MergeTree::kNoHead, last = 0;
    for (const auto& m : members_)
        if (m->has_head()) {
            first = std::min(first, m->head().record_epoch_nanos);
            last = std::max(last, m->head().record_epoch_nanos);
        }
    if (!tree_.reset(static_cast<std::uint32_t>(members_.size()), first, last)) return false;
    for (std::uint32_t i = 0; i < members_.size(); ++i) {
        const Member& m = *members_[i];
        if (m.has_head()) tree_.set_leaf(i, key_at(m, m.at, i), key_at(m, m.at + 1, i));
    }
    (void)tree_.seal();  // its winner is the full pass's best: the same (time, member) order
    return true;
}

// After a full pass that found no member wanting a read: `best` is handed
// out, every other member holding a head goes into the order.
void RingSetSource::start_order(Member* best) {
    using Order = RingSetSourceOptions::MergeOrder;
    order_tree_ = options_.merge_order == Order::Tree ||
                  (options_.merge_order == Order::Auto && members_.size() >= kMergeTreeFrom);
    quiet_ = static_cast<std::size_t>(std::count_if(members_.begin(), members_.end(),
                                                    [](const auto& m) { return !m->has_head() && !m->ended; }));
    if (order_tree_) order_tree_ = build_tree() && members_[tree_.winner()].get() == best;
    if (!order_tree_) {
        order_.clear();
        for (auto& m : members_)
            if (m->has_head() && m.get() != best) order_.push_back(m.get());
        bound_ = earliest(order_);
    }
    order_ok_ = true;
    released_ = best;  // the tree's winner too: the same (time, member) order
}

// The full pass, when the order cannot tell (next_in_order): the member
// whose head is handed out next; or nullptr with `step` to return instead,
// or with `again` when read() must start over.
RingSetSource::Member* RingSetSource::pick(SourceItem& item, SourceStep& step, bool& again) {
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

// `m`'s head into `item`: it is handed out (or, from -N, passed over).
// True when it is late (before an event already handed out): counted once
// it is handed out (deliver), not when passed over.
inline bool RingSetSource::take_head(Member& m, SourceItem& item) {
    item.event.descriptor = m.head();
    item.event.member = m.index;
    ++m.at;
    const std::uint64_t t = item.event.descriptor.record_epoch_nanos;
    const bool late = t < last_released_nanos_;
    if (!late) last_released_nanos_ = t;
    return late;
}

// True when a member joined the set before `m`'s head was written and is
// open only now (member_joined_before): the order is dropped and the full
// pass decides, the joined member's earlier events first. One comparison
// while the head is older than the manifest's last look.
inline bool RingSetSource::joined_before_head(const Member& m) {
    const std::uint64_t t = m.head().record_epoch_nanos;
    if (t <= members_seen_nanos_ || !member_joined_before(t)) return false;
    order_ok_ = false;
    return true;
}

// After take_head of the tree's winner `m`: the key of its next head is
// known (next_key_), and the one after it is found now, off the merge's
// chain from one event to the next.
inline void RingSetSource::look_ahead(const Member& m) {
    const std::uint32_t slot = tree_.winner();
    next_key_ = tree_.next(slot);
    tree_.next(slot) = key_at(m, m.at + 1, slot);
}

inline SourceStep RingSetSource::deliver(Member& m, SourceItem& item, PayloadRead payload, bool late) {
    if (late) ++counters_.late;
    item.event.payload = {};
    item.event.payload_state = PayloadState::NotRead;
    last_ = &m;  // load_payload reads from it
    if (payload == PayloadRead::Copy) return deliver_payload(m, item);
    return SourceStep::Event;
}

// deliver's payload, out of read()'s way (see read).
SourceStep RingSetSource::deliver_payload(Member& m, SourceItem& item) {
    if (m.source->fill_payload(item.event) != SourceStep::Failed) return SourceStep::Event;
    // The member's file was cut short under the reader: as when its
    // descriptors cannot be read, the member is read no more.
    m.drop_run();
    m.ended = true;
    order_ok_ = false;
    fast_ = 0;
    last_ = nullptr;
    return member_failed(m, item.event.descriptor.seqno, item);
}

// The common case, the tree's, without a call: the order holds and the
// member released last still holds its next event. Everything else (a run
// to read, a notice, the -N surplus to pass over, the manifest's poll) is
// read_slowly's, which grants fast_ when none of them is due: one countdown
// stands for those four checks per event. What may call out (the scan, a
// look at the manifest, a payload) is a tail call, so that this path saves
// no registers: its frame was a tenth of its instructions.
SourceStep RingSetSource::read(SourceItem& item, PayloadRead payload) {
    if (fast_ == 0) return read_slowly(item, payload);
    --fast_;  // the order holds, nothing else waits (fast_)
    if (!order_tree_) return read_by_scan(item, payload);
    if (next_key_ >= MergeTree::kUnplaced) return read_slowly(item, payload);  // the winner used up its run
    tree_.play(next_key_);  // a real key: some member wins
    Member& best = *members_[tree_.winner()];
    released_ = &best;
    const std::uint64_t t = best.head().record_epoch_nanos;
    if (t > members_seen_nanos_ || t < last_released_nanos_) return read_joined(best, item, payload);
    last_released_nanos_ = t;  // take_head, for an event not late
    item.event.descriptor = best.head();
    item.event.member = best.index;
    ++best.at;
    look_ahead(best);
    return deliver(best, item, payload, false);
}

// read()'s winner stamped after the last look at the manifest (looked at
// again first: joined_before_head), or late (take_head).
SourceStep RingSetSource::read_joined(Member& best, SourceItem& item, PayloadRead payload) {
    if (joined_before_head(best)) return read_slowly(item, payload);
    const bool late = take_head(best, item);
    look_ahead(best);
    return deliver(best, item, payload, late);
}

// read()'s common case by scan (below kMergeTreeFrom members).
SourceStep RingSetSource::read_by_scan(SourceItem& item, PayloadRead payload) {
    if (!released_->has_head()) return read_slowly(item, payload);
    Member& best = *next_by_scan();  // released_ holds a head: never null
    if (joined_before_head(best)) return read_slowly(item, payload);
    const bool late = take_head(best, item);
    return deliver(best, item, payload, late);
}

SourceStep RingSetSource::read_slowly(SourceItem& item, PayloadRead payload) {
    last_ = nullptr;  // members may be dropped below
    until_poll_ += fast_;  // granted, not used
    fast_ = 0;
    for (;;) {
        if (--until_poll_ == 0) {
            until_poll_ = kPollEvery;
            refresh_members(false);
        }
        if (!notices_.empty()) {
            notice_text_ = std::move(notices_.front());
            notices_.erase(notices_.begin());
            item.notice = notice_text_;
            return SourceStep::Notice;
        }
        SourceStep step = SourceStep::Event;
        Member* best = order_ok_ ? next_in_order(item, step) : nullptr;
        if (best == nullptr) {
            if (step != SourceStep::Event) return step;  // met by the released member's next run
            bool again = false;
            best = pick(item, step, again);
            if (best == nullptr) {
                if (again) continue;
                return step;
            }
        }
        if (joined_before_head(*best)) continue;  // its earlier events go first
        const bool late = take_head(*best, item);
        if (order_ok_ && order_tree_) look_ahead(*best);
        if (skip_ > 0) {
            --skip_;
            continue;
        }
        if (order_ok_ && notices_.empty()) {  // read() may go on from the order until the poll's turn
            fast_ = until_poll_ - 1;
            until_poll_ = 1;
        }
        return deliver(*best, item, payload, late);
    }
}

}  // namespace evring
