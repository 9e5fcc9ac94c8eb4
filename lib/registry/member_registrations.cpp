// MemberRegistrations (member_registrations.hpp): one registration per member read.
#include "registry/member_registrations.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "evring/source/ring_source.hpp"

namespace evring {

void MemberRegistrations::attach(const RingSetSource& set, const ReaderInfo& info,
                                 const RegistrationOptions& options) {
    members_.clear();  // unregisters from the members of a previous set
    problem_.clear();
    set_ = set.frozen() ? nullptr : &set;
    info_ = info;
    options_ = options;
    if (set_ != nullptr) sync();
}

bool MemberRegistrations::registered() const noexcept {
    return std::any_of(members_.begin(), members_.end(),
                       [](const Member& m) { return m.registration.registered(); });
}

void MemberRegistrations::sync() {
    version_ = set_->member_version();
    std::vector<Member> next;
    for (std::uint32_t index : set_->members()) {
        std::uint64_t serial = 0;
        const RingSource* source = set_->member_source(index, &serial);
        if (source == nullptr || source->reader() == nullptr) continue;
        Member m;
        auto was = std::find_if(members_.begin(), members_.end(),
                                [&](const Member& r) { return r.index == index && r.serial == serial; });
        if (was != members_.end()) {
            m = std::move(*was);
        } else {
            // A member new to us, or re-created: its own registry.
            m.index = index;
            m.serial = serial;
            m.registration = ReaderRegistration::attach(*source->reader(), info_, options_);
            if (!m.registration.registered()) {
                if (problem_.empty())
                    problem_ = fmt::format("not registered in member {}'s reader registry: {}", index,
                                           m.registration.warning());
                continue;
            }
            m.registration.update(source->next_seqno(), source->counters().lost, source->counters().abandoned);
        }
        m.source = source;
        next.push_back(std::move(m));
    }
    members_ = std::move(next);  // the ones left behind unregister as they go
}

void MemberRegistrations::on_event(const EventDescriptor& event, std::uint32_t member) noexcept {
    if (set_ == nullptr) return;
    if (set_->member_version() != version_) {
        // Allocates (a member new to us); a failure leaves the old list, whose
        // members the source still reads or has just dropped: re-synced later.
        try {
            sync();
        } catch (...) {
            return;
        }
    }
    for (Member& m : members_) {
        if (m.index != member) continue;
        // The member's source stands at least after this event (the merge
        // reads ahead); its seqno + 1 is what the reader has consumed.
        const SourceCounters& c = m.source->counters();
        m.registration.on_event(event.record_epoch_nanos, event.seqno + 1, c.lost, c.abandoned);
        return;
    }
}

void MemberRegistrations::on_idle() {
    if (set_ == nullptr) return;
    if (set_->member_version() != version_) sync();
    for (Member& m : members_)
        m.registration.on_idle(m.source->next_seqno(), m.source->counters().lost, m.source->counters().abandoned);
}

void MemberRegistrations::update() {
    if (set_ == nullptr) return;
    if (set_->member_version() != version_) sync();
    for (Member& m : members_)
        m.registration.update(m.source->next_seqno(), m.source->counters().lost, m.source->counters().abandoned);
}

}  // namespace evring
