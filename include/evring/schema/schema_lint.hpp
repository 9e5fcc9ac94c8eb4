// lib/schema/schema_lint.hpp — what is legal in a schema but probably a mistake.
//
// `evring schema check` prints these after "ok" (they do not make the check
// fail):
// - a content type evring reserves (format.hpp's ContentType: 1 for tests and
//   examples, 2 for the execution events of the reference system, 3) in a
//   schema that describes no foreign hash;
// - an event type 1 other than RECORD_ERROR in such a schema: event type 1 is
//   RECORD_ERROR in every ring evring writes (a publisher records it in place
//   of an event too large for the ring);
// - a name spelled like a macro of the C or C++ standard library (EOF, NULL,
//   errno, INT_MAX, ...): a generated header renames it with a trailing '_'.
//
// Thread safety: a free function.
#pragma once

#include <string>
#include <vector>

#include "evring/schema/schema.hpp"

namespace evring {

// One line per finding, in the order above.
std::vector<std::string> schema_warnings(const Schema& schema);

}  // namespace evring
