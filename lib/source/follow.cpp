// The follow loop (follow.hpp), and its runs of a plain ring for a sink
// that copies payloads itself (follow_loop.hpp, RingRunSink). Re-opening a
// ring by name is in follow_name.cpp.
#include "evring/source/follow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "evring/clock.hpp"
#include "source/source_renamed.hpp"
#include "source/event_predicate.hpp"
#include "source/follow_loop.hpp"
#include "source/ring_source.hpp"
#include "source/span_labels.hpp"

namespace evring {

void add_counters(SourceCounters& total, const SourceCounters& more) noexcept {
    total.events += more.events;
    total.lost += more.lost;
    total.gaps += more.gaps;
    total.abandoned += more.abandoned;
    total.never_committed += more.never_committed;
    total.damaged += more.damaged;
    total.replaced += more.replaced;
    total.damage_reports += more.damage_reports;
    total.records_lost_to_damage += more.records_lost_to_damage;
    total.foreign += more.foreign;
    total.payloads += more.payloads;
    total.late += more.late;
    total.healed += more.healed;
}

namespace detail {

FollowLoop::FollowLoop(std::unique_ptr<EventSource>& source, const FollowOptions& options, FollowSink& sink)
    : source_(source), options_(options), sink_(sink) {}

bool FollowLoop::member_kept(std::uint32_t member) const noexcept {
    const auto& kept = options_.members;
    return kept.empty() || std::find(kept.begin(), kept.end(), member) != kept.end();
}

bool FollowLoop::stop_requested() const noexcept {
    return options_.stop_flag != nullptr && options_.stop_flag->load(std::memory_order_relaxed);
}

Status FollowLoop::position(const Position& start) {
    // A remote source may filter on its server; the loop still filters.
    if (!options_.filter.accepts_everything()) source_->narrow(options_.filter);
    if (!options_.members.empty() && !source_->identity().members)
        return Error(EINVAL, fmt::format("--member picks members of a ring set; '{}' is a {}",
                                         source_->identity().location, describe(source_->kind())));
    if (start.member != Position::kAnyMember && !source_->identity().members)
        return Error(EINVAL, fmt::format("--from {}:{}: MEMBER:SEQNO is for ring sets; '{}' is a {}", start.member,
                                         start.value, source_->identity().location, describe(source_->kind())));
    auto notice = options_.seek ? options_.seek(*source_, start, options_.schema) : source_->seek(start);
    if (!notice) return std::move(notice).error();
    if (!notice->empty()) sink_.notice(*notice);
    if (options_.stop.kind == Position::Kind::Span && options_.span_stop.kind == SpanLimit::Kind::None)
        return unresolved_span(options_.stop);
    if (options_.stop.kind != Position::Kind::None && options_.stop.kind != Position::Kind::Span && !stop_resolved_) {
        auto at = source_->resolve_stop(options_.stop);
        if (!at) return std::move(at).error();
        stop_at_ = *at;
        stop_resolved_ = true;  // a stop time stays the same across rings
    }
    sink_.started(*source_);
    return {};
}

// A Top limit has passed at an opening labelled above it, once a stage event
// has settled a label at or above it: no instance at or below the top opens
// after that (span_labels.hpp, settled()).
bool FollowLoop::past_top(const SpanLimit& limit, const SpanNote& note) const noexcept {
    if (note.kind != SpanNote::Kind::Opening || note.tag != limit.tag || note.label <= limit.label) return false;
    const auto settled = options_.span_labels->settled(limit.tag);
    return settled && *settled >= limit.label;
}

FollowLoop::LabelStop FollowLoop::on_labels(SourceEvent& event, SourcePayloadLoader& loader) {
    LabelStop stop;
    SpanLabels& labels = *options_.span_labels;
    const EventDescriptor& d = event.descriptor;
    SpanNote note;
    if (labels.wants(d)) {
        // Openings and stage events are few (one or a few per block): their
        // payloads are loaded whatever the filter keeps.
        if (event.payload_state == PayloadState::NotRead) loader.load(event);
        if (event.payload_state == PayloadState::Ok) note = labels.note(d, event.payload);
    }
    const SpanLimit& until = options_.span_stop;
    switch (until.kind) {
    case SpanLimit::Kind::None: break;
    case SpanLimit::Kind::Top: stop.before = past_top(until, note); break;
    case SpanLimit::Kind::End:
        stop.before = past_top({SpanLimit::Kind::Top, until.tag, until.label, 0}, note);
        if (const SpanTrack* track = labels.track(until.tag))
            for (std::uint16_t end : track->ends)
                if (end == d.event_type && labels.label_of(d, until.tag) == until.label) stop.after = true;
        break;
    case SpanLimit::Kind::Stage:
        if (note.kind == SpanNote::Kind::Stage && d.event_type == until.stage_event && note.tag == until.tag) {
            stop.before = note.label > until.label;  // stages mark labels in order: N was passed
            stop.after = note.label == until.label;
        }
        break;
    }
    if (where_top_.kind == SpanLimit::Kind::Top && past_top(where_top_, note)) {
        stop.before = true;
        result_.range_passed = true;
    }
    return stop;
}

std::optional<FollowEnd> FollowLoop::on_event(SourceEvent& event) {
    const EventDescriptor& d = event.descriptor;
    if (d.seqno > stop_at_.seqno || d.record_epoch_nanos > stop_at_.nanos) return FollowEnd::Stop;
    // Read descriptor-first (run()): a payload is loaded only for what the
    // descriptor tests keep, and by the predicate only when it needs a field.
    SourcePayloadLoader loader(*source_);
    LabelStop by_label;
    if (options_.span_labels != nullptr) {
        by_label = on_labels(event, loader);
        if (loader.failed()) {
            load_failed_ = true;
            return std::nullopt;
        }
        if (by_label.before) return FollowEnd::Stop;
    }
    // --- the filter: descriptor tests, then the whole-event predicate (where.hpp) ---
    const bool keep = member_kept(event.member) &&
                      keep_event(event, options_.filter.matches(d), options_.where, options_.payloads, loader);
    if (loader.failed()) {
        load_failed_ = true;  // run() reports the source's failure
        return std::nullopt;
    }
    if (keep) {
        if (!sink_.event(event)) return FollowEnd::Sink;
        ++result_.handed_out;
        if (options_.count != 0 && result_.handed_out >= options_.count) return FollowEnd::Count;
    }
    if (d.seqno == stop_at_.seqno || by_label.after) return FollowEnd::Stop;
    return std::nullopt;
}

std::optional<FollowEnd> FollowLoop::on_gap(const SourceGap& gap) {
    if (gap.first_seqno > stop_at_.seqno) return FollowEnd::Stop;
    if (member_kept(gap.member) && !sink_.gap(gap)) return FollowEnd::Sink;
    if (gap.last_seqno() >= stop_at_.seqno) return FollowEnd::Stop;
    return std::nullopt;
}

// Caught up. Returns why to stop, or nullopt after sleeping.
std::optional<FollowEnd> FollowLoop::on_idle() {
    if (stop_at_.nanos != StopAt::kNever && wall_clock_nanos() > stop_at_.nanos) return FollowEnd::Stop;
    if (!sink_.idle()) return FollowEnd::Sink;
    if (options_.follow_name && name_moved()) return std::nullopt;  // switched; read the new ring
    source_->wait(options_.max_sleep);
    return std::nullopt;
}

Result<FollowResult> FollowLoop::run() {
    if (auto s = position(options_.start); !s) return std::move(s).error();
    if (options_.where != nullptr && options_.span_labels != nullptr)
        if (auto top = options_.where->span_top()) where_top_ = *top;
    SourceItem item;
    // With a filter, descriptors first and payloads of kept events only
    // (on_event); a --where that reads fields loads them whatever the sink
    // asked for.
    const bool lazy = options_.where != nullptr || !options_.filter.accepts_everything();
    const PayloadRead payloads = lazy ? PayloadRead::None : options_.payloads;
    if (RingRunSink* runs = run_sink()) return run_by_runs(static_cast<RingSource&>(*source_), *runs);
    for (;;) {
        if (stop_requested()) return finish(FollowEnd::Stopped);
        std::optional<FollowEnd> end;
        switch (source_->next(item, payloads)) {
        case SourceStep::Event:
            end = on_event(item.event);
            if (load_failed_) return source_->error();  // loading a payload failed
            break;
        case SourceStep::Gap: end = on_gap(item.gap); break;
        case SourceStep::Notice: sink_.notice(item.notice); break;
        case SourceStep::NotReady: end = on_idle(); break;
        case SourceStep::End: {
            if (!options_.follow_name || !follows_names(*source_)) return finish(FollowEnd::End);
            auto next = wait_for_new_ring();
            if (!next) return std::move(next).error();
            end = *next;
            break;
        }
        case SourceStep::Failed: return source_->error();
        }
        if (end) return finish(*end);
    }
}

// The sink takes runs when it is a RingRunSink that can take them now, and
// nothing looks at events one by one before it (follow_loop.hpp). A span
// stop needs span labels, and a member start a ring set: position() has
// refused both for a plain ring already.
RingRunSink* FollowLoop::run_sink() const noexcept {
    auto* runs = dynamic_cast<RingRunSink*>(&sink_);
    const auto* ring = dynamic_cast<const RingSource*>(source_.get());
    if (runs == nullptr || ring == nullptr || ring->ring() == nullptr || ring->heals()) return nullptr;
    const FollowOptions& o = options_;
    const bool plain = o.filter.accepts_everything() && o.where == nullptr && o.members.empty() &&
                       o.span_labels == nullptr && o.span_stop.kind == SpanLimit::Kind::None && !o.follow_name;
    return plain && runs->takes_runs() ? runs : nullptr;
}

// A run reads no further than the count or the stop seqno allow, so that the
// source stands where one event at a time would leave it, and either ends a
// run only at its last event.
std::size_t FollowLoop::run_length(const RingSource& ring) const noexcept {
    std::uint64_t n = kRunLength;
    if (options_.count != 0) n = std::min(n, options_.count - result_.handed_out);
    if (stop_at_.seqno != StopAt::kNever) {
        const std::uint64_t next = ring.next_seqno();
        n = std::min(n, stop_at_.seqno >= next ? stop_at_.seqno - next + 1 : 1);
    }
    return static_cast<std::size_t>(n);
}

// The loop of run() for a RingRunSink: a run of descriptors at a time
// (RingSource::read_run: one SIGBUS guard and no call per event), the sink
// takes it, then whatever stopped the run is handled as run() handles it.
Result<FollowResult> FollowLoop::run_by_runs(RingSource& ring, RingRunSink& runs) {
    by_runs_ = true;
    runs.taking_runs();
    std::array<EventDescriptor, kRunLength> descriptors;
    SourceItem item;
    for (;;) {
        if (stop_requested()) return finish(FollowEnd::Stopped);
        std::size_t filled = 0;
        const SourceStep step = ring.read_run(std::span(descriptors).first(run_length(ring)), filled, item);
        if (filled > 0) {
            const std::span<EventDescriptor> run = std::span(descriptors).first(filled);
            auto taken = runs.take_run(ring, run, stop_at_.nanos);
            if (!taken) return std::move(taken).error();
            if (auto end = after_run(*taken, run)) return finish(*end);  // a Gap after the run stays counted
        }
        std::optional<FollowEnd> end;
        switch (step) {
        case SourceStep::Event: break;  // a full run, or all that was ready
        case SourceStep::Gap: end = on_gap(item.gap); break;
        case SourceStep::Notice: sink_.notice(item.notice); break;
        case SourceStep::NotReady: end = on_idle(); break;
        case SourceStep::End: return finish(FollowEnd::End);
        case SourceStep::Failed: return source_->error();
        }
        if (end) return finish(*end);
    }
}

// After the sink took a run: on_event's count and stop seqno, which
// run_length put at the run's last event.
std::optional<FollowEnd> FollowLoop::after_run(const RingRunSink::Taken& taken, std::span<const EventDescriptor> run) {
    unread_ += run.size() - taken.looked;
    result_.handed_out += taken.kept;
    if (taken.end) return taken.end;
    if (options_.count != 0 && result_.handed_out >= options_.count) return FollowEnd::Count;
    if (run.back().seqno == stop_at_.seqno) return FollowEnd::Stop;
    return std::nullopt;
}

FollowResult FollowLoop::finish(FollowEnd end) {
    result_.end = end;
    add_counters(result_.counters, source_->counters());
    add_counters(result_.counters, extra_);
    if (by_runs_) {
        // read_run counts what it reads, and no payloads: every event looked
        // at had its payload read, as with PayloadRead::Copy.
        result_.counters.events -= unread_;
        result_.counters.payloads = result_.counters.events;
    }
    result_.damaged = result_.damaged || source_->damaged();
    switch (end) {
    case FollowEnd::Count: result_.why = "reached the count"; break;
    case FollowEnd::Stop:
        result_.why = result_.range_passed ? "the --where range of span labels has passed" : "reached the stop position";
        break;
    case FollowEnd::End: result_.why = source_->end_text(); break;
    case FollowEnd::Stopped: result_.why = "interrupted"; break;
    case FollowEnd::Sink: result_.why = "the output stopped"; break;
    }
    return result_;
}

}  // namespace detail

Result<FollowResult> follow(std::unique_ptr<EventSource>& source, const FollowOptions& options, FollowSink& sink) {
    detail::FollowLoop loop(source, options, sink);
    return loop.run();
}

}  // namespace evring
