// lib/record/record_ring_loop.hpp — the recorder's direct path: a plain ring
// recorded with one copy per payload, straight from the ring into the
// recording writer's staging buffer (issue 35, item 2).
//
// The general path (follow.hpp's loop over EventSource::next) copies each
// payload into the source's scratch buffer, then hands the event through two
// sinks' virtual calls into the writer, which copies it again: about 486
// instructions per 64 B event in `evring record`'s follow thread. This loop
// reads descriptors by runs (RingSource::read_run: one SIGBUS guard and no
// call per event), then copies each payload into the space its record will
// have in the writer's staging buffer (RecordingWriter::inline_payload_space)
// under one guard per stretch of events, checks it after the copy
// (payload.hpp, P1..P3) as the reader's copy_payload does, and only then
// stages the event (stage_copied_event): 127.9 instructions per event
// (scripts/bench-record-counts, docs/recording-format.md).
//
// Contract: what record_source records and reports through this loop is what
// it would through follow() with the same sinks:
// - every event, with its descriptor's reserved field 0 (a plain ring: no
//   member), its payload checked after the copy; a payload overwritten
//   meanwhile is recorded as the general path records it (an expired
//   record, descriptor only), and so is one whose size cannot fit the ring
//   (RecordSink::event, to which those events go);
// - every gap (lapped, abandoned; a hole of a ring whose writer left) as a
//   gap record with its reason, through the sinks' gap();
// - the reader's registration sees every event's position (on_event, after
//   each stretch) and idles as with follow(), so `evring readers` shows the
//   same lag and losses;
// - stops as follow() does: count, stop seqno or time, the writer's exit,
//   the stop flag (checked before every run of at most kRun events: a few
//   microseconds apart), a sink returning false (keep_going, a failed write);
// - a ring file cut short under the copy ends the loop with the error the
//   ring source gives ("copying a payload"), and the event being copied is
//   not recorded.
//
// Where it applies (direct_record_applies): a live or snapshot ring source
// that does not heal, with nothing that looks at events one by one before the
// recorder: no filter, --where, members, span labels or span stop,
// follow_name; and a writer whose inline path is on (no span marks, no
// rotation, not a ring set: the writer does more per record then,
// recording_writer_inline.hpp). record_source also keeps the general path
// for a named reader's commits and a binding's registration, sinks that sit
// between the two this loop updates. Anything else keeps the general path,
// which gives the same guarantees at its own pace.
//
// Thread safety: one thread, the recording's.
#pragma once

#include <memory>

#include "evring/error.hpp"
#include "evring/source/follow.hpp"
#include "recording/recording_writer.hpp"
#include "sink/record_sink.hpp"
#include "sink/registering_sink.hpp"

namespace evring {

// Whether the direct path can record `source` under `options` into a writer
// made with `recording` (see "Where it applies").
bool direct_record_applies(const EventSource& source, const FollowOptions& options,
                           const RecordingOptions& recording) noexcept;

// The loop (see the contract), with the sinks record_source gives follow():
// `registration`, whose inner sink is `recorder`. It updates both itself for
// events it stages inline, and hands every other item to `registration`.
// Call only when direct_record_applies said so.
Result<FollowResult> follow_ring_direct(EventSource& source, const FollowOptions& options,
                                        RegisteringSink& registration, RecordSink& recorder);

}  // namespace evring
