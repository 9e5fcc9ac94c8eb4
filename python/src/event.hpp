// python/src/event.hpp — one event as Python sees it (evring.Event).
//
// evring.Event is a plain CPython type (not a pybind11 class): it is made once
// per event on the iteration path, and a native type costs one allocation
// and a few stores, where a pybind11 instance costs a type look-up, a holder
// and a C++ heap object. It holds only the descriptor's fields and the
// payload bytes; type_name and fields are computed when asked for (fields
// decodes the payload each time it is read: keep the dict if you need it
// twice).
//
// Thread safety: created and read under the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <span>

#include "evring/format.hpp"
#include "evring/schema/schema.hpp"

namespace evring::python {

namespace py = pybind11;

// What every event of one reader shares: the schema that decodes them. Held
// by a capsule that each event references.
struct DecodeContext {
    std::optional<Schema> schema;
};

// A capsule owning `context`.
py::object make_context_capsule(DecodeContext context);
// The DecodeContext a capsule made above owns.
const DecodeContext& decode_context(PyObject* capsule);

// `payload` of an event of `event_type` decoded with the context's schema,
// as Event.fields gives it (nested dicts, lists, enums as names, byte
// arrays as bytes), or None when there is no schema or it does not decode.
py::object decode_fields(const DecodeContext& context, std::uint16_t event_type, std::span<const std::byte> payload);

// A new evring.Event (a new reference), or nullptr with a Python error set.
// `payload` is bytes or None (borrowed; the event takes its own reference).
PyObject* new_event(const EventDescriptor& d, PyObject* payload, PyObject* context_capsule,
                    std::uint32_t member = 0) noexcept;

// Creates the Event type and adds it to the module.
void register_event(py::module_& m);

}  // namespace evring::python
