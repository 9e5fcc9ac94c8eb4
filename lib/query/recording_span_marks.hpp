// lib/query/recording_span_marks.hpp — a recording's span marks, from a schema.
//
//     evring::RecordingOptions options;
//     options.span_marker = evring::span_marker(schema);   // recording_writer.hpp
//
// Contract: span_marker(schema) returns the SpanMarker (recording_index.hpp)
// that writes an event's span marks from the schema's [span.NAME] labels: a
// mark for each span the event's type begins and each span stage it is,
// holding the label field (its first 8 bytes) and a digest of the id field
// when the span names one; a mark whose label field the payload is too short
// for is left out. An empty marker when the schema has no labels. The fields
// are found once, here; each event then costs a table lookup and
// bounds-checked reads of the payload. The marker keeps what it needs of the
// schema, which may go first.
//
// Thread safety: calls only read the marker's table; the recording writer
// calls it on its caller's thread (recording_writer.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "evring/schema/schema.hpp"
#include "recording/recording_index.hpp"

namespace evring {

SpanMarker span_marker(const Schema& schema);
// The event types span_marker(schema) may mark (RecordingOptions::
// span_marked_types): each span's opening types and stage events that have
// a label field. Events of the others stay on the writer's inline path.
std::vector<std::uint16_t> span_marked_types(const Schema& schema);

}  // namespace evring
