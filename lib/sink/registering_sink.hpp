// lib/sink/registering_sink.hpp — a follow loop's reader seen in the ring's
// reader registry (reader_registration.hpp, docs/operations.md): a FollowSink
// that registers the reader when the loop starts on a live ring, publishes
// its position as events pass, and hands everything on to the program's sink.
//
//     evring::RegisteringSink seen(printer, {"watch", evring::reader_kinds::kWatch, "--format text"});
//     auto result = evring::follow(source, options, seen);
//
// What `evring watch`, `record`, `mirror` and `relay` (nats_relay.hpp) run.
//
// Contract:
// - Registration never fails the loop: when the reader cannot be registered
//   (no write permission, a full registry, ...) the library prints why once
//   and the loop goes on unregistered. Snapshots, recordings and streams are
//   not registered (nobody writes them, so nobody falls behind). With
//   follow_name each new ring gets a fresh registration; the old one is
//   freed first. The source already registered, started again (told to heal
//   after it registered), keeps its slots.
// - A live ring set (ring_set_source.hpp) is registered member by member: in
//   each member's own registry, with that member's position and counts and
//   the reader's interest (set_interest), so `evring readers SET` lists the
//   merged reader under every member and each member's writer skips only
//   what no reader of that member wants. Members
//   that join later, or are re-created, are registered when the source's
//   member_version() changes (checked per event and when idle).
// - The position published is the source's: events the loop's filter drops
//   still move it (published when idle), so a filtered reader is not shown
//   as lagging.
// - A reader alive but held up inside the program's sink (a relay waiting
//   out a server outage, which takes no events meanwhile) calls keep_alive()
//   as it waits, so listings keep showing it alive rather than stale.
// - The per-event cost is the registration's (a decrement and two compares;
//   a publication every so many events): the position is the event's own
//   sequence number plus one, taken from the event the loop hands over, so
//   no virtual call is made per event.
//
// Thread safety: one thread, the follow loop's.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "evring/source/follow.hpp"
#include "registry/reader_registration.hpp"

namespace evring {

class RingSetSource;
class RingSource;

class RegisteringSink final : public FollowSink {
public:
    // `enabled` false (--no-register, register=False): a plain pass-through.
    RegisteringSink(FollowSink& inner, ReaderInfo info, bool enabled = true)
        : inner_(inner), info_(std::move(info)), enabled_(enabled) {}

    void started(const EventSource& source) override;
    bool event(const SourceEvent& event) override {
        // The loop hands out events of the registered source only, in order:
        // after this one the source stands at its seqno + 1.
        if (source_ != nullptr) {
            const SourceCounters& c = source_->counters();
            registration_.on_event(event.descriptor.record_epoch_nanos, event.descriptor.seqno + 1, c.lost,
                                   c.abandoned);
        } else if (set_ != nullptr) {
            on_member_event(event);
        }
        return inner_.event(event);
    }
    bool gap(const SourceGap& gap) override { return inner_.gap(gap); }
    void notice(std::string_view text) override { inner_.notice(text); }
    bool idle() override;
    void replaced(const EventSource& old_source, const EventSource& new_source) override;

    // For the inner sink while it waits inside one of its calls: what idle()
    // does for the registration (the source's position when it moved, else a
    // heartbeat at most every update_every). Nothing when not registered.
    void keep_alive();

    bool registered() const noexcept;
    // What the reader registers wanting (RegistrationOptions::interest,
    // docs/interest.md); everything unless set before the loop starts.
    void set_interest(std::uint64_t interest) noexcept { options_.interest = interest; }
    // Whether a reader that cannot register says so on stderr (true by
    // default; the bindings hand the reason on as a notice instead).
    void set_print_warning(bool print) noexcept { options_.print_warning = print; }
    // A ring set's member registrations made so far (0 for other sources).
    std::size_t member_registrations() const noexcept { return members_.size(); }
    const ReaderRegistration& registration() const noexcept { return registration_; }
    // The registration of a plain ring source, for a loop that publishes
    // each event's position itself, as event() would, without calling it
    // (lib/record/record_run_sink.hpp); null when that source is not
    // registered.
    ReaderRegistration* ring_registration() noexcept { return source_ != nullptr ? &registration_ : nullptr; }
    // Replaces the detail text shown in listings (a relay reconnecting, say).
    void set_detail(std::string_view detail) noexcept { registration_.set_detail(detail); }
    // Lists the reader as `kind` with `detail` from now on, in every
    // registry it is in (a ring set's members too) and in those it joins
    // later: a reader handle recording for a while is listed as a recorder,
    // so lapped readers find the recording to heal from (record_source.hpp).
    void describe(std::uint32_t kind, std::string detail);
    const ReaderInfo& info() const noexcept { return info_; }

private:
    FollowSink& inner_;
    ReaderInfo info_;
    bool enabled_;
    RegistrationOptions options_;
    const EventSource* source_ = nullptr;  // the registered source; null when not registered
    ReaderRegistration registration_;

    // A ring set: one registration per member read.
    struct MemberRegistration {
        std::uint32_t index = 0;
        std::uint64_t serial = 0;             // RingSetSource::member_source's
        const RingSource* source = nullptr;   // valid while set_version_ is current
        ReaderRegistration registration;
    };
    void sync_members();
    void on_member_event(const SourceEvent& event);
    const RingSetSource* set_ = nullptr;
    std::uint64_t set_version_ = 0;
    std::vector<MemberRegistration> members_;
};

}  // namespace evring
