// The parts every event source shares (event_source.hpp): the names of
// source kinds and gap reasons, counting, held notices, the default batch
// loop and stop resolution, and healing: a FellBehind gap that read()
// returns goes to the Healer (healer.hpp), which hands out what a recording
// holds of it; next() then reads the live source again.
#include "evring/source/event_source.hpp"

#include "evring/source/flow_filter.hpp"
#include "source/healer.hpp"

#include <algorithm>
#include <thread>

namespace evring {

std::string_view describe(SourceKind kind) noexcept {
    switch (kind) {
    case SourceKind::Ring: return "ring file";
    case SourceKind::Snapshot: return "snapshot";
    case SourceKind::Recording: return "recording";
    case SourceKind::Stream: return "stream";
    case SourceKind::RingSet: return "ring set";
    }
    return "source";
}

std::string_view describe(GapReason reason) noexcept {
    switch (reason) {
    case GapReason::Unrecorded: return "not recorded (a version 1 recording: the recorder fell behind or a writer abandoned them)";
    case GapReason::FellBehind: return "the reader (in a recording or a stream: its recorder or relay) fell behind the writer (lapped)";
    case GapReason::Abandoned: return "reserved but never committed while a writer lived (abandoned)";
    case GapReason::NeverCommitted: return "never committed (holes in a ring nobody writes, or in a snapshot)";
    case GapReason::WriterGone: return "reserved by a writer that exited before committing them";
    case GapReason::LostToDamage: return "lost in a damaged part of the recording";
    case GapReason::RingReplaced: return "a new ring under the same name overwrote them before it was opened";
    }
    return "an unknown reason";
}

const char* to_string(SourceKind kind) noexcept {
    switch (kind) {
    case SourceKind::Ring: return "ring";
    case SourceKind::Snapshot: return "snapshot";
    case SourceKind::Recording: return "recording";
    case SourceKind::Stream: return "stream";
    case SourceKind::RingSet: return "ring-set";
    }
    return "source";
}

void SourceCounters::count_gap(const SourceGap& gap) noexcept {
    switch (gap.reason) {
    case GapReason::Unrecorded:
    case GapReason::FellBehind:
        lost += gap.count;
        ++gaps;
        return;
    case GapReason::Abandoned: abandoned += gap.count; return;
    case GapReason::NeverCommitted:
    case GapReason::WriterGone: never_committed += gap.count; return;
    case GapReason::LostToDamage: damaged += gap.count; return;
    case GapReason::RingReplaced: replaced += gap.count; return;
    }
    never_committed += gap.count;  // a reason from a newer writer
}

EventSource::EventSource() = default;
EventSource::~EventSource() = default;

Batch EventSource::next_batch(std::span<EventDescriptor> out) {
    if (pending_) return Batch{0, 0, 0, SourceStep::Notice};
    if (healer_) return batch_loop(out, true);  // every gap must reach the healer
    return read_batch(out);
}

SourceStep EventSource::load_payload(SourceEvent& event) {
    event.payload_state = PayloadState::Expired;
    event.payload = {};
    return SourceStep::Event;
}

Batch EventSource::read_batch(std::span<EventDescriptor> out) { return batch_loop(out, false); }

// One event at a time: through read() (the default batch, counted here), or,
// while a healer is set, through next() (which counts, and lets every gap
// pass the healer).
Batch EventSource::batch_loop(std::span<EventDescriptor> out, bool through_next) {
    Batch batch;
    SourceItem item;
    while (batch.events < out.size()) {
        const SourceStep step = through_next ? next(item, PayloadRead::None) : read(item, PayloadRead::None);
        switch (step) {
        case SourceStep::Event:
            if (!through_next) ++counters_.events;
            out[batch.events++] = item.event.descriptor;
            continue;
        case SourceStep::Gap:
            if (!through_next) counters_.count_gap(item.gap);
            ++batch.gaps;
            batch.skipped += item.gap.count;
            continue;
        case SourceStep::Notice:
            hold(item);  // handed out by the next next()
            batch.stopped = step;
            return batch;
        case SourceStep::NotReady:
        case SourceStep::End:
        case SourceStep::Failed:
            batch.stopped = step;
            return batch;
        }
    }
    return batch;
}

Result<StopAt> EventSource::resolve_stop(const Position& stop) {
    StopAt at;
    if (stop.kind == Position::Kind::Seqno) at.seqno = stop.value;
    if (stop.kind == Position::Kind::AbsoluteTime) at.nanos = stop.value;
    if (stop.kind == Position::Kind::RelativeTime) {
        auto now = now_nanos();
        if (!now) return std::move(now).error();
        at.nanos = stop.time_at(*now);
    }
    return at;
}

std::string EventSource::end_text() const { return "end of the " + std::string(describe(kind())); }

void EventSource::narrow(const FlowFilter&) {}

void EventSource::hold(const SourceItem& item) { pending_ = std::string(item.notice); }

SourceStep EventSource::fail(Error error) {
    error_ = std::move(error);
    return SourceStep::Failed;
}

SourceStep EventSource::take_pending(SourceItem& item) {
    // The held text moves into a member that lives until the next call.
    held_text_ = std::move(*pending_);
    pending_.reset();
    item.notice = held_text_;
    return SourceStep::Notice;
}

// --- healing (heal_with) ---
void EventSource::heal_with(std::unique_ptr<detail::Healer> healer) { healer_ = std::move(healer); }

void EventSource::seeking() noexcept {
    if (!healing_) return;
    healing_ = false;
    healer_->abandon();
}

// A gap read() returned: the healer's to fill, or the caller's.
SourceStep EventSource::heal(SourceItem& item, PayloadRead payload) {
    std::string notice;
    if (healer_->start(item.gap, notice)) {
        healing_ = true;
        return next_held(item, payload);
    }
    counters_.count_gap(item.gap);
    if (!notice.empty()) pending_ = std::move(notice);  // after the gap it is about
    return SourceStep::Gap;
}

SourceStep EventSource::next_held(SourceItem& item, PayloadRead payload) {
    if (pending_) return take_pending(item);
    bool done = false;
    const SourceStep step = healer_->next(item, payload, done);
    if (done) healing_ = false;  // the live source again from the next call
    switch (step) {
    case SourceStep::Event:
        ++counters_.events;
        ++counters_.healed;
        if (item.event.payload_state != PayloadState::NotRead) ++counters_.payloads;
        break;
    case SourceStep::Gap: counters_.count_gap(item.gap); break;
    default: break;
    }
    return step;
}

SourceStep EventSource::load_payload_healed(SourceEvent& event) {
    return healer_->handed(event) ? healer_->load_payload(event) : load_payload(event);
}

bool EventSource::wait_for_recording(std::chrono::nanoseconds timeout) {
    if (!healing_) return false;
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(timeout, kHealPoll));
    return true;
}

}  // namespace evring
