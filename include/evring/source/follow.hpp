// evring/source/follow.hpp — the one follow loop: a source, a filter, a start and a
// stop, a sink.
//
//     struct Printer : evring::FollowSink {
//         bool event(const evring::SourceEvent& e) override { print(e); return true; }
//         bool idle() override { flush(); return true; }
//     } printer;
//     evring::FollowOptions options;
//     options.start = evring::Position::oldest();
//     options.stop_flag = &g_stop;                       // set by a signal handler
//     auto result = evring::follow(source, options, printer);
//
// Contract:
// - Positions the source (options.start, options.stop: position.hpp,
//   seek_source in span_seek.hpp), then hands every event that passes options.filter
//   (and options.where) to
//   sink.event(), every gap to sink.gap(), every notice to sink.notice(),
//   until one of: options.count events reached the sink; the stop position
//   (the event at the stop seqno was handed out, or an event, or a gap, lies
//   past it; on a live ring also once the clock passed a stop time with
//   nothing new); the source's end; *options.stop_flag became true (checked
//   before every item and at least every max_sleep; a library sink that
//   copies a plain ring's payloads itself takes up to 64 events as one item:
//   lib/source/follow_loop.hpp); a sink call returned false.
// - Caught up on a live source it calls sink.idle() (flush there) and sleeps
//   in EventSource::wait (the ring's doorbell) at most max_sleep at a time,
//   so the stop flag and the writer's exit are seen within max_sleep. It
//   never spins: an idle follower costs no CPU.
// - follow_name (like `tail -F`): when a ring source ends because its writer
//   exited, or while idle its name now leads to another ring file, the loop
//   says so, waits (polling the name every max_sleep) for a new ring under
//   the same name, reopens it (open_source with options.reopen), tells the
//   sink (sink.replaced), reports the new ring's events it can no longer see
//   (overwritten before it was opened) as a RingReplaced gap, and goes on
//   from the new ring's oldest event. Sequence numbers start again with the
//   new ring. Without it, the end of the source ends the loop. Before the
//   first ring exists, wait_for_name (below) waits for it the same way.
// - Failures of the source (a truncated ring file: a SIGBUS turned into an
//   error by the guard) end the loop with that error.
//
// Thread safety: one thread runs a loop; the stop flag may be set from any
// thread or a signal handler (std::atomic<bool> is lock-free here).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/flow_filter.hpp"
#include "evring/source/position.hpp"
#include "evring/source/source_open.hpp"
#include "evring/source/span_limit.hpp"

namespace evring {

class EventPredicate;  // lib/source/event_predicate.hpp (where.hpp implements it)
class Schema;
class SpanLabels;      // lib/source/span_labels.hpp

class FollowSink {
public:
    virtual ~FollowSink() = default;
    // Called once positioned, and again for each new ring (follow_name).
    virtual void started(const EventSource& source) { (void)source; }
    // An event that passed the filter. False stops the loop.
    virtual bool event(const SourceEvent& event) = 0;
    virtual bool gap(const SourceGap& gap) { (void)gap; return true; }
    virtual void notice(std::string_view text) { (void)text; }
    // Caught up: the loop is about to sleep. Flush buffered output here.
    virtual bool idle() { return true; }
    // follow_name switched to a new ring (started() follows).
    virtual void replaced(const EventSource& old_source, const EventSource& new_source) {
        (void)old_source;
        (void)new_source;
    }
};

struct FollowOptions {
    Position start = Position::latest();
    Position stop;                     // Kind::None: no stop position
    std::uint64_t count = 0;           // events handed to the sink; 0: no limit
    FlowFilter filter;
    // Then this test on whole events (`--where`, where.hpp); null: none.
    // With a filter or `where` the loop reads descriptors first and loads a
    // payload (EventSource::read_payload) only when `where` reaches a field
    // the descriptor left open, or for a kept event when `payloads` asks.
    const EventPredicate* where = nullptr;
    // Ring set members to keep (`--member`); empty: every member. Events
    // and gaps of the others are passed over before the filter and never
    // reach the sink, so `count` counts kept members' events only. Refused
    // (EINVAL) for a source that is not a ring set (or a recording of one).
    std::vector<std::uint32_t> members;
    // How the loop positions a source: EventSource::seek when null. Readers
    // that link the schema library set evring::seek_source (span_seek.hpp),
    // so span positions (`block:N`) work; it decodes them with `schema`, or
    // with the source's own schema when that is null. (A pointer keeps this
    // library free of the schema library's dependencies.)
    Result<std::string> (*seek)(EventSource&, const Position&, const Schema*) = nullptr;
    const Schema* schema = nullptr;
    // Span labels as reading goes (span_labels.hpp; null: none): the loop
    // notes every opening and stage event it reads, kept or not (loading
    // their payloads), so --where and the output see labels of events whose
    // opening the filter hides. With them, reading also ends by label:
    // `span_stop` (--until block:N, block.STAGE:N; a stop position of kind
    // Span needs it) and the top of a --where range (EventPredicate::
    // span_top): before an opening labelled above the top, once a stage event
    // has settled a label at or above the top (span_labels.hpp, settled()).
    SpanLabels* span_labels = nullptr;
    SpanLimit span_stop;
    PayloadRead payloads = PayloadRead::None;
    bool follow_name = false;
    SourceOptions reopen;              // how follow_name reopens the name
    const std::atomic<bool>* stop_flag = nullptr;
    std::chrono::nanoseconds max_sleep = std::chrono::milliseconds(100);
};

enum class FollowEnd : std::uint8_t {
    Count,    // options.count events were handed out
    Stop,     // the stop position was reached
    End,      // the source ended (FollowResult::why says how)
    Stopped,  // the stop flag
    Sink,     // a sink call returned false
};

struct FollowResult {
    FollowEnd end = FollowEnd::End;
    std::string why;           // "reached the stop position", "end of the snapshot", ...
    SourceCounters counters;   // of every source read (follow_name adds them up)
    std::uint64_t handed_out = 0;  // events given to sink.event()
    std::uint32_t rings = 1;   // sources read (more than one after follow_name switched)
    bool damaged = false;      // a source met damaged input
    bool range_passed = false; // Stop: the --where range of span labels has passed (span_top)
};

// The loop (see the contract). `source` may be replaced (follow_name).
Result<FollowResult> follow(std::unique_ptr<EventSource>& source, const FollowOptions& options, FollowSink& sink);

// Waiting for a ring that does not exist yet (`tail -F` before the file is
// created): returns true at once when `location` names something (or has a
// scheme: remote sources say for themselves); otherwise calls `notice` once
// ("waiting for ring 'NAME' to be created") and checks the name every
// options.max_sleep (resolved with options.reopen.directory) until it exists
// (true), or *options.stop_flag is set or `timeout` has passed (false). The
// caller then opens it as usual; a writer renames a ring into place only once
// it is complete (ring_writer.hpp), so what appears is whole.
bool wait_for_name(std::string_view location, const FollowOptions& options,
                   const std::function<void(std::string_view)>& notice,
                   std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max());

}  // namespace evring
