// lib/query/span_seek.hpp — positions by meaning: `--from block:15000009`.
//
//     auto notice = evring::seek_source(*source, *evring::parse_start("block:15000009"), schema);
//
// seek_source is how every command and binding positions a source: a span
// position (position.hpp, SPAN[.STAGE]:LABEL|latest|0xID) is turned into the
// sequence number of its event through the schema's [span.NAME] (its
// `label`, `id`, `opener` and `stages`, docs/schema.md), then handed to
// EventSource::seek like any other position; every other position goes
// straight to EventSource::seek.
//
// Contract:
// - SPAN:LABEL starts at the opening (begin) event whose `label` field holds
//   LABEL; SPAN:latest at the newest opening event; SPAN:0xID at the newest
//   opening event whose `id` field starts with those bytes (on every source:
//   a forward scan keeps the last match).
//   SPAN.STAGE:LABEL starts at the stage's event whose label field holds
//   LABEL (Monad: BLOCK_FINALIZED of block N); SPAN.STAGE:latest at the
//   newest such event.
// - On a ring or a snapshot the search walks back from the newest event
//   along the `opener` flow tag: one or two reads per span instance, so its
//   cost is O(instances back), not O(events back). A stage is then looked for
//   forward from its instance's opening event. A recording with a span index
//   (recording_index.hpp, written by `evring record` from the schema's
//   labels and ids) names the event (SPAN:0xID: a candidate, as the index
//   keeps 32 bits of an id; older candidates are tried, at most 16); the
//   event is read on its own through the recording's own reader
//   (RecordingSource::span_event) and checked (an index that lies costs a
//   scan, and a notice). In a ring set recording a mark's seqno is some
//   member's: each member that may hold it is read and checked, and the
//   position becomes MEMBER:SEQNO (an id there, and two members holding the
//   event in one block, are read from the start). On any ring set the
//   event's member goes with its seqno. SPAN:latest, and a label past the indexed part of a
//   file being written, are read on from the index's answer by a second
//   source. Other sources (streams, recordings without an index) are read from their
//   oldest event by such a second source, so the source handed in is
//   positioned only once.
// - Errors name the position as written and the source: a span or stage the
//   schema does not declare (with the ones it does), a span without a label
//   or id, no schema at all, and a label no event carries ("no block
//   15000099 in snapshot 'x' (it holds blocks 15000001 to 15000030)").
// - Payload fields are read bounds-checked against the payload's size; an
//   event whose payload is too short for the field does not match.
//
// Thread safety: as the source (one thread).
#pragma once

#include <cstdint>
#include <string>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/position.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

// Positions `source` at `start`. `schema` decodes span positions; when null,
// the source's own schema (resolve_schema, schema_resolve.hpp) is used.
// Returns EventSource::seek's notice.
Result<std::string> seek_source(EventSource& source, const Position& start, const Schema* schema = nullptr);

// The sequence number of the event a span position names in `source` (see
// the contract). Moves `source`'s read position when it is a ring or snapshot.
// `notice`, when given, gets what a person should be told about the search
// (a recording without an index, or whose index lies, read from the start).
Result<std::uint64_t> resolve_span(EventSource& source, const SpanRef& ref, const Schema& schema,
                                   std::string* notice = nullptr);

}  // namespace evring
