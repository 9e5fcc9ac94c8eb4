// python/src/writer_batch.hpp — Writer.record_many: many events in one call
// (writer_batch.cpp), over the bindings' record_batch (the C ABI's
// evring_writer_record_batch does the same checks).
//
// record_many(event_type, events, flow=()):
// - events: a list or tuple of payloads (bytes-like objects, or dicts of
//   field values encoded with the ring's schema, as record() takes), or a
//   C-contiguous numpy array with one event per row (a structured array: one
//   record per event; a 2-D uint8 array: one row of bytes per event).
// - event_type: one type (a number or a schema name) for every event, or a
//   sequence of one per event.
// - flow: a tuple of up to 4 flow tags for every event, or a sequence (or a
//   2-D integer array) of one such row per event.
// - Returns a numpy uint64 array of the events' seqnos, 0 for an event no
//   registered reader wants (skipped after the checks, as record() returns
//   None). With a schema every event is checked before any is published: a
//   refused event raises evring.Error naming its index, and nothing is
//   published. An event larger than the ring allows is recorded as a
//   RECORD_ERROR in its place; the others are published, then evring.Error
//   is raised naming the first such event.
// - Events are published in batches of up to 64 that share one timestamp,
//   one reservation and one doorbell check (docs/format.md, "Batches").
//
// Thread safety: as Writer.record (writer.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include "bindings/handles.hpp"

namespace evring::python {

namespace py = pybind11;

py::object record_many(evring_writer& writer, const py::object& event_type, const py::object& events,
                       const py::object& flow);

inline constexpr const char* kRecordManyDoc =
    "record_many(event_type, events, flow=()): records many events in batches of up to 64 (one timestamp, "
    "reservation and doorbell check per batch). events: a list or tuple of payloads (bytes, or dicts of fields) or "
    "a numpy array with one event per row (a structured array: one record per event). event_type: one number or "
    "name, or one per event. flow: up to 4 tags for every event, or one row per event. Returns a numpy uint64 "
    "array of seqnos (0: no registered reader wanted it). With a schema a refused event raises evring.Error "
    "before anything is published.";

}  // namespace evring::python
