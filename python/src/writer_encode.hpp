// python/src/writer_encode.hpp — a payload built from Python values with the
// ring's schema, for Writer.record("TRADE", price=..., name="ACME").
//
// Contract: `values` maps field names to values; a field left out is zero;
// a name the struct does not have raises. Integers must fit their type
// exactly, enums take a value's name or a number, char[N] takes a str of at
// most N UTF-8 bytes (NUL-padded), bytesN exactly N bytes, structs a dict,
// arrays a sequence of exactly N; a trailing array takes a sequence (bytes
// for bytes[...]) and its count field is set from its length (a count given
// as well must agree). Errors raise evring.Error naming the field's path.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <vector>

#include "evring/schema/schema.hpp"

namespace evring::python {

std::vector<std::byte> encode_payload(const Schema& schema, const SchemaEvent& event, const pybind11::dict& values);

}  // namespace evring::python
