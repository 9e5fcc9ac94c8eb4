// python/src/batch.hpp — evring.Batch, what Reader.read_batch returns, and
// evring.DESCRIPTOR_DTYPE, the numpy dtype of one descriptor (defined here
// only; the package re-exports it).
//
// A Batch holds numpy arrays, no Python object per event: `events` (an
// array of DESCRIPTOR_DTYPE), `members` (uint32, each event's ring set
// member; zeros for other sources), the payloads as one uint8 array
// `payload_data` with `payload_offsets` (event i's bytes are
// data[offsets[i]:offsets[i+1]]) and `payload_states` (1 ok, 2 expired,
// 3 invalid), why it stopped (`stopped`: "full", "not_ready", "end"), the
// gaps it passed over, and the reader's schema (a dict, or None).
//
// Thread safety: created and read under the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace evring::python {

namespace py = pybind11;

struct BatchData {
    py::object events;
    py::object members;
    py::object payload_data;     // None when read without payloads
    py::object payload_offsets;  // None when read without payloads
    py::object payload_states;   // None when read without payloads
    std::string stopped;
    std::uint64_t gaps = 0;
    std::uint64_t skipped = 0;
    py::object schema;       // the reader's schema dict, or None
    py::object context;      // the reader's DecodeContext capsule (event.hpp)
    bool member_ids = false;  // the source's events carry members: the frame gets a member column
};

// The numpy dtype of one descriptor: RING01's 64 bytes, field by field.
py::object descriptor_dtype();

// to_dataframe(fields=True): the payloads decoded into columns added to
// `frame` (batch_fields.cpp); `hex`: byte arrays as "0x..." text.
void add_field_columns(const BatchData& b, py::dict& frame, bool hex);

// Adds Batch and DESCRIPTOR_DTYPE to the module.
void register_batch(py::module_& m);

}  // namespace evring::python
