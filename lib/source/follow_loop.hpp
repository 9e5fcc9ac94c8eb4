// Private to lib/: the state of one follow loop (follow.cpp; re-opening by
// name in follow_name.cpp), and the sinks it hands a plain ring by runs.
//
// Thread safety: one thread (the loop's).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "evring/source/follow.hpp"
#include "source/event_predicate.hpp"
#include "source/span_labels.hpp"

namespace evring {

void add_counters(SourceCounters& total, const SourceCounters& more) noexcept;

class RingSource;

namespace detail {

// A follow sink that also takes a plain ring's events by runs of
// descriptors and copies their payloads itself, straight from the ring to
// where it keeps them (the recorder's direct path: lib/record/
// record_run_sink.hpp). follow() finds it on its sink (dynamic_cast) and
// hands it runs when nothing looks at events one by one before the sink:
// a ring source that does not heal, without a filter, --where, members,
// span labels or stop, or follow_name (FollowLoop::runs_apply), and when
// takes_runs says the sink can take them. Everything else of the loop is
// the same: positioning, gaps, notices, idling, the stop flag (between
// runs), count and stop seqno (a run ends at them), and the end.
class RingRunSink {
public:
    struct Taken {
        std::size_t looked = 0;  // events from the front looked at (one that ended it included)
        std::uint64_t kept = 0;  // of which handed out as sink.event() would have been
        std::optional<FollowEnd> end;
    };
    // Whether this sink can take runs now (asked once, of a plain ring).
    virtual bool takes_runs() const noexcept = 0;
    // The loop chose runs (called once, before the first).
    virtual void taking_runs() noexcept {}
    // Takes the events of `run`, read from `source` in order, with no gap
    // among them, each payload read from the ring and checked after the copy
    // as copy_payload does (an overwritten one kept as sink.event() would get
    // it: Expired). Stops at an event later than `stop_nanos` (looked at,
    // not kept: end Stop), or when the sink refuses (Sink). An error ends
    // the loop: the ring cut short under the copy ("copying a payload").
    virtual Result<Taken> take_run(RingSource& source, std::span<EventDescriptor> run,
                                   std::uint64_t stop_nanos) = 0;

protected:
    ~RingRunSink() = default;
};

class FollowLoop {
public:
    FollowLoop(std::unique_ptr<EventSource>& source, const FollowOptions& options, FollowSink& sink);
    Result<FollowResult> run();

private:
    bool stop_requested() const noexcept;
    bool member_kept(std::uint32_t member) const noexcept;  // options.members
    Status position(const Position& start);
    std::optional<FollowEnd> on_event(SourceEvent& event);
    std::optional<FollowEnd> on_gap(const SourceGap& gap);
    // Span labels (span_labels.hpp): notes an opening or stage event; says
    // whether reading ends before the event (`before`) or after it.
    struct LabelStop {
        bool before = false, after = false;
    };
    LabelStop on_labels(SourceEvent& event, SourcePayloadLoader& loader);
    bool past_top(const SpanLimit& limit, const SpanNote& note) const noexcept;
    std::optional<FollowEnd> on_idle();
    FollowResult finish(FollowEnd end);

    // Runs of a plain ring to a RingRunSink (see there).
    RingRunSink* run_sink() const noexcept;
    std::size_t run_length(const RingSource& ring) const noexcept;
    Result<FollowResult> run_by_runs(RingSource& ring, RingRunSink& runs);
    std::optional<FollowEnd> after_run(const RingRunSink::Taken& taken, std::span<const EventDescriptor> run);
    // Descriptors per run: its SIGBUS guard and checks are paid once for
    // this many events, and the stop flag is looked at between runs.
    static constexpr std::size_t kRunLength = 64;

    // follow_name (follow_name.cpp).
    // Waits for a new ring under the name and switches to it; nullopt once
    // switched, Stopped when the stop flag was set meanwhile.
    Result<std::optional<FollowEnd>> wait_for_new_ring();
    // While idle, at most once a second: has the name been given to another
    // ring file? Switches to it when it has.
    bool name_moved();
    // Opens the ring now at the name when it is another file than ours.
    std::unique_ptr<EventSource> try_reopen(std::string& problem);
    Status switch_to(std::unique_ptr<EventSource> fresh);

    std::unique_ptr<EventSource>& source_;
    const FollowOptions& options_;
    FollowSink& sink_;
    StopAt stop_at_;
    bool stop_resolved_ = false;
    FollowResult result_;
    bool load_failed_ = false;
    SpanLimit where_top_;  // the --where range's top (EventPredicate::span_top)
    SourceCounters extra_;  // gaps the loop itself reports (RingReplaced)
    std::chrono::steady_clock::time_point next_name_check_{};
    bool by_runs_ = false;
    std::uint64_t unread_ = 0;  // read by a run, never looked at: the loop stopped before them
};

}  // namespace detail
}  // namespace evring
