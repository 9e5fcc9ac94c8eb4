// tools/evring/register_sink.hpp — `watch` and `record` seen in the ring's
// reader registry (docs/operations.md): a FollowSink that registers the
// reader when the follow loop starts on a live ring and publishes its
// position as events pass, then hands everything on to the command's sink.
//
// Registration never fails the command: when it cannot register (no write
// permission, a full registry, ...) the library prints why once and the
// command goes on unregistered. Snapshots and recordings are not registered
// (nobody writes them, so nobody falls behind). With follow_name each new
// ring gets a fresh registration; the old one is freed first.
//
// The position published is the source's: events the command's filter drops
// still move it (published when idle), so a filtered `watch` is not shown as
// lagging.
//
// Thread safety: one thread, the follow loop's.
#pragma once

#include <string>

#include "evring/follow.hpp"
#include "evring/reader_registration.hpp"

namespace evring::cli {

class RegisteringSink final : public FollowSink {
public:
    // `enabled` false (--no-register): a plain pass-through.
    RegisteringSink(FollowSink& inner, ReaderInfo info, bool enabled)
        : inner_(inner), info_(std::move(info)), enabled_(enabled) {}

    void started(const EventSource& source) override;
    bool event(const SourceEvent& event) override {
        if (source_ != nullptr)
            registration_.on_event(event.descriptor.record_epoch_nanos, source_->next_seqno(),
                                   source_->counters().lost, source_->counters().abandoned);
        return inner_.event(event);
    }
    bool gap(const SourceGap& gap) override { return inner_.gap(gap); }
    void notice(std::string_view text) override { inner_.notice(text); }
    bool idle() override;
    void replaced(const EventSource& old_source, const EventSource& new_source) override;

    bool registered() const noexcept { return registration_.registered(); }

private:
    FollowSink& inner_;
    ReaderInfo info_;
    bool enabled_;
    const EventSource* source_ = nullptr;  // the registered source; null when not registered
    ReaderRegistration registration_;
};

}  // namespace evring::cli
