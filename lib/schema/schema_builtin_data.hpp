// lib/schema/schema_builtin_data.hpp — the schema texts compiled into the library
// (private; the table is generated at build time by schema_builtin_gen).
#pragma once

#include <cstddef>

#include "schema/schema_builtin.hpp"

namespace evring::detail {

extern const BuiltinSchema kBuiltinSchemas[];
extern const std::size_t kBuiltinSchemaCount;

}  // namespace evring::detail
