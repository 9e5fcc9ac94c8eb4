// Private to lib/: the state of one follow loop (follow.cpp; re-opening by
// name in follow_name.cpp).
//
// Thread safety: one thread (the loop's).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "evring/source/follow.hpp"
#include "source/event_predicate.hpp"
#include "source/span_labels.hpp"

namespace evring {

void add_counters(SourceCounters& total, const SourceCounters& more) noexcept;

namespace detail {

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
};

}  // namespace detail
}  // namespace evring
