// lib/bindings/source_schema.hpp — which schema decodes a source, found once at open.
//
// The order is the one resolver's (schema_resolve.hpp, docs/schema.md): the
// schema the source carries when trusted; else a schema file the caller names,
// which must describe the source (an error shows both hashes, and a named file
// is checked even when the carried schema wins); else a built-in schema; else
// none. A carried schema that is damaged or not this source's is ignored and
// the reason kept in `warning`.
//
// Shared by the C ABI (lib/bindings) and the Python package (python/).
// Thread safety: free functions.
#pragma once

#include <optional>
#include <string>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/schema/schema.hpp"
#include "evring/schema/schema_resolve.hpp"

namespace evring::bindings {

struct SourceSchema {
    std::optional<Schema> schema;
    std::string origin;   // "embedded", "recording", "built-in schema NAME", a file path; "" without one
    std::string warning;  // a carried schema that was not trusted, and why
};

// What the read pipeline's resolution found (Reading::find_schema), named the
// way the C ABI and Python report it; `schema_path` as given (may be empty).
SourceSchema source_schema_of(ResolvedSchema resolved, const std::string& schema_path);

// A schema given as a file path or as its text (text contains a newline).
Result<Schema> load_schema(const std::string& path_or_text);

}  // namespace evring::bindings
