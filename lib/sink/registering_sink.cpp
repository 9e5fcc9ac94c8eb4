// RegisteringSink (registering_sink.hpp): attach on start, publish on idle,
// re-attach on a new ring.
#include "sink/registering_sink.hpp"

#include <algorithm>

#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace evring {

void RegisteringSink::started(const EventSource& source) {
    info_.heals = source.heals();  // its listing then counts no overwritten event as lost
    // The source registered started again (evring_source_heal made it heal):
    // its slots stay, and say so.
    if (enabled_ && ((source_ != nullptr && &source == source_) || (set_ != nullptr && &source == set_))) {
        registration_.set_heals(info_.heals);
        for (MemberRegistration& m : members_) m.registration.set_heals(info_.heals);
        inner_.started(source);
        return;
    }
    source_ = nullptr;
    registration_ = ReaderRegistration();
    set_ = nullptr;
    members_.clear();
    if (const auto* set = dynamic_cast<const RingSetSource*>(&source); enabled_ && set != nullptr && !set->frozen()) {
        set_ = set;
        sync_members();
    }
    if (enabled_ && source.kind() == SourceKind::Ring) {
        const auto* ring_source = dynamic_cast<const RingSource*>(&source);
        const RingReader* reader = ring_source != nullptr ? ring_source->reader() : nullptr;
        if (reader != nullptr) {
            registration_ = ReaderRegistration::attach(*reader, info_, options_);
            if (registration_.registered()) {
                source_ = &source;
                registration_.update(source.next_seqno(), source.counters().lost, source.counters().abandoned);
            }
        }
    }
    inner_.started(source);
}

bool RegisteringSink::idle() {
    keep_alive();
    return inner_.idle();
}

void RegisteringSink::keep_alive() {
    if (source_ != nullptr)
        registration_.on_idle(source_->next_seqno(), source_->counters().lost,
                              source_->counters().abandoned);
    if (set_ == nullptr) return;
    if (set_->member_version() != set_version_) sync_members();
    for (MemberRegistration& m : members_)
        m.registration.on_idle(m.source->next_seqno(), m.source->counters().lost, m.source->counters().abandoned);
}

void RegisteringSink::describe(std::uint32_t kind, std::string detail) {
    info_.kind = kind;
    info_.detail = std::move(detail);
    registration_.describe(kind, info_.detail);
    for (MemberRegistration& m : members_) m.registration.describe(kind, info_.detail);
}

bool RegisteringSink::registered() const noexcept {
    if (registration_.registered()) return true;
    for (const MemberRegistration& m : members_)
        if (m.registration.registered()) return true;
    return false;
}

void RegisteringSink::sync_members() {
    set_version_ = set_->member_version();
    std::vector<MemberRegistration> next;
    for (std::uint32_t index : set_->members()) {
        std::uint64_t serial = 0;
        const RingSource* source = set_->member_source(index, &serial);
        if (source == nullptr || source->reader() == nullptr) continue;
        MemberRegistration m;
        auto was = std::find_if(members_.begin(), members_.end(),
                                [&](const MemberRegistration& r) { return r.index == index && r.serial == serial; });
        if (was != members_.end()) {
            m = std::move(*was);
        } else {
            // A member new to us, or re-created: its own registry.
            m.index = index;
            m.serial = serial;
            m.registration = ReaderRegistration::attach(*source->reader(), info_, options_);
            if (!m.registration.registered()) continue;
            m.registration.update(source->next_seqno(), source->counters().lost, source->counters().abandoned);
        }
        m.source = source;
        next.push_back(std::move(m));
    }
    members_ = std::move(next);  // the ones left behind unregister as they go
}

void RegisteringSink::on_member_event(const SourceEvent& event) {
    if (set_->member_version() != set_version_) sync_members();
    for (MemberRegistration& m : members_) {
        if (m.index != event.member) continue;
        // The member's source stands after this event (the merge reads
        // ahead at most the one event it holds per member).
        const SourceCounters& c = m.source->counters();
        m.registration.on_event(event.descriptor.record_epoch_nanos, event.descriptor.seqno + 1, c.lost, c.abandoned);
        return;
    }
}

void RegisteringSink::replaced(const EventSource& old_source, const EventSource& new_source) {
    // The old source is about to go: stop reading it before started() registers the new one.
    source_ = nullptr;
    registration_.unregister();
    set_ = nullptr;
    members_.clear();
    inner_.replaced(old_source, new_source);
}

}  // namespace evring
