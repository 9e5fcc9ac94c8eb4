// python/src/arguments.hpp — Python arguments turned into C++ values, each
// refusal an evring.Error that names the argument and says why.
//
// pybind11's own conversions refuse with "Unable to cast Python instance to
// C++ type", naming neither (issue 32: lone surrogates, None as a type name,
// flow tags of -1 and 2^64, levels of 2^70, 3.5 and '3'), and accept what
// they should not (True as a level). Every argument the extension takes as
// a py::object goes through one of these instead:
// - utf8_of: a str, as UTF-8; a lone surrogate (U+D800..U+DFFF) is refused.
// - path_of: a str or bytes naming a file: a str is encoded as os.fsencode
//   does (a name read from a directory keeps its undecodable bytes, carried
//   as U+DC80..U+DCFF), so only other lone surrogates are refused.
// - unsigned_of: an int, or an object with __index__ (numpy's integers),
//   in 0..max; a bool, a float or a str is refused.
// - seconds_of: a number of seconds, an int or a float (not a bool or a
//   str), 0 or more (infinity too); NaN is refused.
// - shown: a value as a message echoes it: repr(), at most 64 characters
//   (then "...(N characters)"), control characters escaped; whatever the
//   value, the message stays short.
// - event_type_of: a number or a name from the ring's schema.
// `what` names the argument in the message: "level", "flow[2]", "event type".
//
// Thread safety: with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "evring/schema/schema.hpp"

namespace evring::python {

namespace py = pybind11;

std::string shown(py::handle value);
// The name of the value's type: "NoneType", "float".
std::string type_name_of(py::handle value);
// The value's type and shown(): "float 3.5", "str '3'"; "None" for None.
std::string described(py::handle value);

std::string utf8_of(py::handle value, std::string_view what);
std::string path_of(py::handle value, std::string_view what);
std::uint64_t unsigned_of(py::handle value, std::string_view what, std::uint64_t max);
double seconds_of(py::handle value, std::string_view what);
// An event type: a number (an int or __index__, 0..65535) or a name from
// `schema` (null: the ring has none, and a name is refused saying so).
std::uint16_t event_type_of(py::handle value, const Schema* schema);

}  // namespace evring::python
