// lib/record/record_run_sink.hpp — the recorder's direct path: a plain ring
// recorded with one copy per payload, straight from the ring into the
// recording writer's staging buffer (issue 35, item 2).
//
// Event by event, follow() copies each payload into the source's scratch
// buffer, then hands the event through two sinks' virtual calls into the
// writer, which copies it again: about 486 instructions per 64 B event in
// `evring record`'s follow thread. This sink takes runs of descriptors from
// the same follow loop instead (source/follow_loop.hpp, RingRunSink), then
// copies each payload into the space its record will have in the writer's
// staging buffer (RecordingWriter::inline_payload_space) under one SIGBUS
// guard per stretch of events, checks it after the copy (payload.hpp,
// P1..P3) as the reader's copy_payload does, and only then stages the event
// (stage_copied_event): about 126 instructions per 64 B event
// (scripts/bench-record-counts, docs/recording-format.md).
//
// Contract: what record_source records and reports through runs is what it
// records through follow()'s events with the same sinks:
// - every event, with its descriptor's reserved field 0 (a plain ring: no
//   member), its payload checked after the copy; a payload overwritten
//   meanwhile is recorded as the general path records it (an expired
//   record, descriptor only), and so is one whose size cannot fit the ring
//   (RecordSink::event, to which those events go);
// - gaps, notices, idling, started: through the sinks, as follow() calls
//   them;
// - the reader's registration sees every event's position (after each
//   stretch), so `evring readers` shows the same lag and losses;
// - a named recorder's position moves with every stretch, and it commits as
//   often as event by event (CommitSink::taken);
// - a sink refusing (keep_going, a failed write, a failed commit) ends the
//   loop (Sink);
// - a ring file cut short under the copy ends the loop with the error the
//   ring source gives ("copying a payload"), and the event being copied is
//   not recorded.
//
// When it takes runs: follow() gives them when nothing looks at events one
// by one before the sink (follow_loop.hpp), and this sink takes them when its
// writer's inline path is on (not a ring set: the writer does more per record
// then, recording_writer_inline.hpp). Span marks (a schema with span labels:
// Monad's blocks) and rotation leave it on: only the events of the types that
// get marks, and the one that makes a file reach its limit, go through the
// sinks, one at a time (record_one).
// record_source always gives follow() this sink: its own registration, or a
// binding's reader handle's (evring_source_record, Reader.record), is the
// one whose position it publishes per event, and a named reader's commits
// (CommitSink) are told of each stretch at once (CommitSink::taken), as of
// each of its events.
//
// Thread safety: one thread, the recording's.
#pragma once

#include <vector>

#include "cursor/named_reader.hpp"
#include "evring/source/follow.hpp"
#include "recording/recording_writer.hpp"
#include "sink/record_sink.hpp"
#include "sink/registering_sink.hpp"
#include "source/follow_loop.hpp"

namespace evring {

class RecordRunSink final : public FollowSink, public detail::RingRunSink {
public:
    // `first`: the head of the sinks the loop would call, which ends in
    // `recorder`; `registration`: the reader registration among them whose
    // position each staged event moves (RegisteringSink::event); `commits`,
    // when not null, a named reader's commits among them.
    RecordRunSink(FollowSink& first, RegisteringSink& registration, RecordSink& recorder, CommitSink* commits)
        : first_(first), registration_(registration), recorder_(recorder), commits_(commits) {}

    // Whether follow() gave it runs (the direct path ran).
    bool took_runs() const noexcept { return took_runs_; }

    void started(const EventSource& source) override { first_.started(source); }
    bool event(const SourceEvent& event) override { return first_.event(event); }
    bool gap(const SourceGap& gap) override { return first_.gap(gap); }
    void notice(std::string_view text) override { first_.notice(text); }
    bool idle() override { return first_.idle(); }
    void replaced(const EventSource& old_source, const EventSource& new_source) override {
        first_.replaced(old_source, new_source);
    }

    bool takes_runs() const noexcept override { return recorder_.writer().inline_path(); }
    void taking_runs() noexcept override { took_runs_ = true; }
    Result<Taken> take_run(RingSource& source, std::span<EventDescriptor> run, std::uint64_t stop_nanos) override;

private:
    [[gnu::noinline]] void stage_inline(const MappedRing& ring, std::span<EventDescriptor> run,
                                        std::uint64_t stop_nanos, Taken& taken);
    Result<bool> record_one(RingSource& source, const EventDescriptor& d);
    void publish(const RingSource& source, std::span<const EventDescriptor> kept) noexcept;

    FollowSink& first_;
    RegisteringSink& registration_;
    RecordSink& recorder_;
    CommitSink* commits_;
    bool took_runs_ = false;
    std::vector<std::byte> scratch_;  // record_one's copies
};

}  // namespace evring
