// The relay's follow sink (relay_sink.hpp).
#include "relay_sink.hpp"

#include <fmt/format.h>

#include <chrono>

namespace evring::nats::detail {
namespace {

constexpr std::chrono::milliseconds kWaitStep{100};

bool stop_requested(const RelayOptions& options) {
    return options.stop_flag != nullptr && options.stop_flag->load(std::memory_order_relaxed);
}

}  // namespace

void RelaySink::log(std::string_view text) const {
    if (options_.log) options_.log(text);
}

// What a publisher call's status means for the relay, wherever it came from:
// Failed is final (kept in failure_: false); an outage is counted and told
// once as it begins, and told over once the server takes messages again (for
// a caught-up relay, once every message is acknowledged).
bool RelaySink::handle_status(PublishStatus status, bool caught_up) {
    switch (status) {
    case PublishStatus::Failed:
        failure_ = *publisher_.failure();
        return false;
    case PublishStatus::Outage:
        if (!in_outage_) {
            in_outage_ = true;
            ++outages_;
            log(fmt::format("the NATS server at {} is unavailable; retrying with back-off{}",
                            options_.url.display(),
                            caught_up ? "" : " (the ring keeps the events meanwhile)"));
        }
        return true;
    case PublishStatus::Ok:
        if (in_outage_ && (!caught_up || publisher_.stats().window_messages == 0)) {
            in_outage_ = false;
            log(caught_up ? "the NATS server is back; caught up"
                          : "the NATS server is back; catching up from the ring");
        }
        return true;
    case PublishStatus::WindowFull:
        return true;
    }
    return true;
}

// Publishes one message, waiting in the publisher while its window is full or
// the server is away: the follow loop does not read on meanwhile, so the ring
// (not the relay) holds what is not yet published, and what it overwrites
// comes back from the loop as an exact gap. The follow loop does not call
// idle() meanwhile either, so the wait keeps the registration's heartbeat
// itself. False on a permanent failure or when stopped (the stream's resume
// point covers what was not published).
template <class Publish>
bool RelaySink::publish_waiting(Publish publish) {
    for (;;) {
        const PublishStatus status = publish();
        if (!handle_status(status, false)) return false;
        if (status == PublishStatus::Ok) return true;
        if (stop_requested(options_)) return false;
        if (keep_alive_) keep_alive_();
        publisher_.wait_ready(kWaitStep);
    }
}

bool RelaySink::announce(const EventSource& source) {
    const std::uint64_t first = source.next_seqno();
    if (!publish_waiting([&] { return publisher_.announce_ring(first); })) return false;
    const auto blob = source.schema();
    if (!blob.empty() && !publish_waiting([&] { return publisher_.publish_schema(blob); })) return false;
    return true;
}

void RelaySink::started(const EventSource& source) {
    if (!first_start_) return;  // a replaced ring: replaced() announced it
    first_start_ = false;
    first_seqno_ = source.next_seqno();
    members_ = source.identity().members;
    if (members_) {
        // A ring set: sequence numbers are per member, and a resumed relay
        // starts every member at the last relayed event (run_relay).
        if (!resume_next_ && announce(source)) log(fmt::format("relaying ring set '{}'", source.identity().path));
        else if (resume_next_) log(fmt::format("resuming ring set '{}'", source.identity().path));
        return;
    }
    if (!resume_next_) {
        if (announce(source)) log(fmt::format("relaying '{}' from seqno {}", source.identity().path, first_seqno_));
        return;
    }
    // Resumed: the stream ends just before *resume_next_. The events between it
    // and where the ring now starts were overwritten while no relay ran.
    if (first_seqno_ > *resume_next_) {
        resume_gap_ = first_seqno_ - *resume_next_;
        log(fmt::format("seqno {}..{} left the ring while no relay ran; published as a gap", *resume_next_,
                        first_seqno_ - 1));
        publish_waiting([&] { return publisher_.publish_gap(*resume_next_, resume_gap_, GapReason::FellBehind); });
    }
    log(fmt::format("resuming '{}' at seqno {}", source.identity().path, first_seqno_));
}

void RelaySink::replaced(const EventSource& old_source, const EventSource& new_source) {
    (void)old_source;
    if (!release_gap()) return;
    // follow_name reads a new ring from its first event, and reports what the
    // writer overwrote before the ring was opened as a gap (RingReplaced), so
    // the new instance is relayed from seqno 1. new_source is not positioned
    // yet (started() comes after this): its next_seqno() was where the ring
    // happened to be when opened, and the events before it reached neither the
    // stream nor a gap (found by scripts/soak).
    const std::uint64_t first = 1;
    if (!publish_waiting([&] { return publisher_.switch_ring(ring_identity(new_source, new_source.identity().path),
                                                             first); }))
        return;
    const auto blob = new_source.schema();
    if (!blob.empty()) publish_waiting([&] { return publisher_.publish_schema(blob); });
    log(fmt::format("a new ring instance under '{}': announced, relaying from seqno {}", new_source.identity().path,
                    first));
}

bool RelaySink::hold_gap(std::uint64_t first, std::uint64_t count, GapReason reason, std::uint32_t member) {
    if (held_gap_ && held_gap_->reason == reason && held_gap_->member == member &&
        held_gap_->first + held_gap_->count == first) {
        held_gap_->count += count;
        return true;
    }
    if (!release_gap()) return false;
    held_gap_ = HeldGap{first, count, reason, member};
    return true;
}

bool RelaySink::release_gap() {
    if (!held_gap_) return failure_ == std::nullopt;
    const HeldGap gap = *held_gap_;
    held_gap_.reset();
    return publish_waiting(
        [&] { return publisher_.publish_gap(gap.first, gap.count, gap.reason, member_of(gap.member)); });
}

bool RelaySink::event(const SourceEvent& event) {
    if (skip_ && skip_->first == event.member && skip_->second == event.descriptor.seqno) {
        skip_.reset();
        return true;
    }
    if (event.payload_state == PayloadState::Expired)
        return hold_gap(event.descriptor.seqno, 1, GapReason::FellBehind, event.member);
    if (event.payload_state == PayloadState::Invalid)
        return hold_gap(event.descriptor.seqno, 1, GapReason::LostToDamage, event.member);
    if (!release_gap()) return false;
    return publish_waiting(
        [&] { return publisher_.publish_event(event.descriptor, event.payload, member_of(event.member)); });
}

bool RelaySink::gap(const SourceGap& gap) {
    if (gap.reason == GapReason::FellBehind)
        log(fmt::format("seqno {}..{} overwritten before the relay read them; published as a gap", gap.first_seqno,
                        gap.last_seqno()));
    return hold_gap(gap.first_seqno, gap.count, gap.reason, gap.member);
}

void RelaySink::notice(std::string_view text) { log(text); }

bool RelaySink::idle() {
    // Caught up: a partial batch goes out now, not when the next events come.
    if (!release_gap()) return false;
    return handle_status(publisher_.send_pending(), true);
}

Status RelaySink::finish() {
    if (failure_) return *failure_;
    if (held_gap_) {
        const HeldGap gap = *held_gap_;
        held_gap_.reset();
        // Stopping: one try, the resume point covers it otherwise.
        if (publisher_.publish_gap(gap.first, gap.count, gap.reason, member_of(gap.member)) == PublishStatus::Failed)
            return *publisher_.failure();
    }
    return publisher_.flush(options_.flush_timeout);
}

}  // namespace evring::nats::detail
