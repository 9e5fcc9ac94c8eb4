// lib/schema/schema_builtin.hpp — schemas compiled into the library.
//
// evring carries schema files for rings other implementations write (today
// the two Monad execution-event schemas, schemas/monad-exec-*.toml), so that
// their rings decode with no option. Each declares the foreign schema hash it
// describes (`describes`), which is what find_builtin_schema matches.
//
// Thread safety: the built-in schemas are parsed once, on first use, under
// the C++ static-initialisation guarantee; afterwards every call only reads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

struct BuiltinSchema {
    std::string_view name;    // the file's stem, "monad-exec-v1"
    std::string_view source;  // the file's text
};

std::span<const BuiltinSchema> builtin_schemas() noexcept;

// The built-in schema for a ring with this content type and schema hash (its
// own hash or one it describes), or nullopt.
std::optional<Schema> find_builtin_schema(std::uint16_t content_type, const SchemaHash& hash);

// A built-in schema by name ("monad-exec-v1").
Result<Schema> builtin_schema(std::string_view name);

}  // namespace evring
