// evring/schema/schema_resolve.hpp — which schema decodes a source's events, and where it came from.
//
// Every reader that shows events by name (the CLI's watch, info and schema
// show, the C ABI, Python, relays, exporters) finds its schema here, so they
// all agree:
//
//     auto source = evring::open_source(location, {});                 // source_open.hpp
//     auto found = evring::resolve_schema(**source, {.schema_file = flag_value});
//     if (!found) fail(found.error().message());     // unreadable file, or not this source's
//     if (!found->warning.empty()) warn(found->warning);                 // once
//     if (found->schema) decode_with(*found->schema);                    // else raw bytes
//     note(found->from);          // "embedded in ring file '/dev/shm/feed'"
//
// Resolution order (docs/schema.md, "Which schema a reader uses"):
//   1. The schema the source carries: a ring's or snapshot's embedded blob, a
//      recording's schema block. Used only when trusted (schema_embed.hpp:
//      intact, and describing the source's content type and schema hash). A
//      blob that is damaged or describes something else is ignored, never
//      used, and named in `warning` (one line).
//   2. The schema file given (`--schema FILE`), when it describes the source:
//      the same content type, and the source's schema hash is the file's own
//      hash or one it declares in `describes`.
//   3. A built-in schema for the content type and hash (schema_builtin.hpp).
//   4. None: the caller shows raw bytes.
// A schema file that is given is always read and checked, even when step 1
// wins: a file that cannot be parsed is an error (FILE:LINE:COLUMN: reason),
// and so is a file that does not describe the source (the message shows both
// content types and hashes). An asked-for file is never silently ignored.
//
// Thread safety: free functions; the result is a value (a Schema may be
// shared between threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

class EventSource;

enum class SchemaOrigin : std::uint8_t {
    None,       // no schema: raw bytes
    Embedded,   // embedded in the ring file or snapshot (or carried by a stream)
    Recording,  // the recording's schema block
    File,       // the schema file the caller gave
    Builtin,    // compiled into evring (schema_builtin.hpp)
};

// "none", "embedded", "recording", "file", "built-in": stable, for --json
// (a token: to_string; docs/architecture.md, "Names").
const char* to_string(SchemaOrigin origin) noexcept;

// What a source says about its events, for resolve_schema. schema_subject()
// fills it from an EventSource; code that holds a header and a blob of its
// own (a relay's stream, a C ABI caller) fills it by hand.
struct SchemaSubject {
    std::string name;  // for messages: "ring file '/dev/shm/feed'"
    std::uint16_t content_type = 0;
    SchemaHash schema_hash{};
    std::span<const std::byte> blob;  // the schema the source carries, unverified; may be empty
    SchemaOrigin blob_origin = SchemaOrigin::Embedded;  // Embedded or Recording
};

// The subject of an opened source: its identity's content type and hash, its
// schema() blob (valid while the source lives), named by kind and path.
SchemaSubject schema_subject(const EventSource& source);

struct SchemaResolveOptions {
    std::string schema_file;  // `--schema FILE`; empty: none given
};

struct ResolvedSchema {
    std::optional<Schema> schema;  // empty: none found (origin None)
    SchemaOrigin origin = SchemaOrigin::None;
    // Where it came from, for people: "embedded in ring file '/dev/shm/feed'",
    // "recording 'x.evrec'", "schema file 'demo.toml'", "built-in schema
    // monad-exec-v1"; "no schema" when none.
    std::string from;
    // One line when the source carried a schema that was ignored (damaged, or
    // describing another content type or hash); empty otherwise. The caller
    // prints it once.
    std::string warning;
};

// Resolves as described above. Errors: the schema file cannot be read or
// parsed, or does not describe the subject.
Result<ResolvedSchema> resolve_schema(const SchemaSubject& subject, const SchemaResolveOptions& options = {});
Result<ResolvedSchema> resolve_schema(const EventSource& source, const SchemaResolveOptions& options = {});

}  // namespace evring
