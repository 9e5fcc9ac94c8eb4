// lib/registry/member_registrations.hpp — a merged reader of a live ring set
// seen in every member's reader registry, for readers that are not a follow
// loop (the bindings' reader session: C and Python).
//
// The rule is RegisteringSink's (registering_sink.hpp, "A live ring set"):
// one registration per member read, in that member's own registry, with that
// member's position and counts; members that join later, or are re-created
// under their name, are registered when the source's member_version()
// changes (looked at per event, when idle and at every publication), and a
// member the source no longer reads is unregistered. A member whose registry
// refuses the reader is read anyway; the first reason is kept for the user.
//
// Thread safety: one thread, the reader's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evring/registry/reader_registration.hpp"
#include "evring/set/ring_set_source.hpp"

namespace evring {

class MemberRegistrations {
public:
    // Registers in every member's registry of `set` (nothing for a set
    // snapshot: nobody falls behind a file). `set` must outlive this object
    // or the next attach().
    void attach(const RingSetSource& set, const ReaderInfo& info, const RegistrationOptions& options = {});

    bool attached() const noexcept { return set_ != nullptr; }
    // True while registered in at least one member's registry.
    bool registered() const noexcept;
    std::size_t members_registered() const noexcept { return members_.size(); }
    // Why a member's registry refused the reader (the first one); "" when none did.
    const std::string& problem() const noexcept { return problem_; }

    // Per event handed out: publishes for the event's member, paced as
    // ReaderRegistration::on_event.
    void on_event(const EventDescriptor& event, std::uint32_t member) noexcept;
    // When the set had nothing to read.
    void on_idle();
    // Every member's position and counts now (after a seek or a batch).
    void update();

private:
    struct Member {
        std::uint32_t index = 0;
        std::uint64_t serial = 0;            // RingSetSource::member_source's
        const RingSource* source = nullptr;  // valid while version_ is current
        ReaderRegistration registration;
    };
    void sync();

    const RingSetSource* set_ = nullptr;
    ReaderInfo info_;
    RegistrationOptions options_;
    std::uint64_t version_ = 0;
    std::vector<Member> members_;
    std::string problem_;
};

}  // namespace evring
