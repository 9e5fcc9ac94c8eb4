// evring/schema/schema_embed.hpp — making, verifying and trusting an embedded schema.
//
// How a writer embeds its schema, and a reader finds it:
//
//     RingWriter::create({config, evring::ring_content(schema)});   // at ring creation
//     evring::EmbeddedSchema e = evring::read_embedded_schema(ring.header_section());
//     if (e.status == evring::EmbeddedSchemaStatus::Trusted) use(*e.schema);
//     else if (!e.problem.empty()) warn(e.problem);          // damaged or not this ring's
//
// The blob's byte layout and where it lives are in schema_blob.hpp (and
// docs/schema.md). `header_section` is a ring file from offset 0: a mapped
// ring's header (2 MiB, MappedRing::header_section), or the same bytes taken
// from a snapshot. Most readers want schema_resolve.hpp, which also looks at
// a --schema file and the built-in schemas.
//
// Trust rule: a reader uses an embedded schema only when the blob is intact
// (magic, version, length within bounds, checksum, the body parses, its hash
// is the recorded one) AND it describes the ring: the schema's content type
// equals the ring header's content_type, and the header's schema_hash is the
// schema's own hash or one of the foreign hashes it declares (`describes`).
// The second half lets a ring that carries another implementation's layout
// under that implementation's hash also carry the evring schema describing it.
//
// Contract: every function works on raw bytes and never reads outside the span
// it is given; nothing a blob claims is allocated before it is checked against
// that span. Thread safety: free functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "schema/schema_blob.hpp"

namespace evring {

// The blob for `schema` (its source text as the body; the layout in schema_blob.hpp).
std::vector<std::byte> serialize_schema_blob(const Schema& schema);

// What a writer puts in RingContent to create a ring that embeds `schema`:
// the schema's content type, its own hash (derived, so the header and the
// blob cannot disagree) and its blob.
//
//     auto writer = evring::RingWriter::create({config, evring::ring_content(schema)});
//
// A schema too large for the header section (a blob over
// kEmbeddedSchemaMaxSize) is refused by RingWriter::create with EFBIG.
RingContent ring_content(const Schema& schema);

// Verifies a blob (it may be followed by other bytes, which are ignored) and
// parses the schema it carries. The error says what is wrong with it.
Result<Schema> parse_schema_blob(std::span<const std::byte> blob);

// True when `schema` describes a ring with this header (the trust rule above).
bool schema_describes_ring(const Schema& schema, std::uint16_t content_type, const SchemaHash& schema_hash) noexcept;

// Serialises `schema` into a ring file's header section (write_schema_blob),
// refusing a schema that does not describe the header's content type and
// schema hash.
Status embed_schema(std::span<std::byte> header_section, const Schema& schema);

enum class EmbeddedSchemaStatus {
    Absent,    // no feature bit: the ring carries no schema
    Trusted,   // intact and describing this ring
    Damaged,   // the bit is set but the blob is not intact (problem says why)
    Mismatch,  // intact, but for another content type or schema hash
};

struct EmbeddedSchema {
    EmbeddedSchemaStatus status = EmbeddedSchemaStatus::Absent;
    std::optional<Schema> schema;  // set when Trusted
    std::string problem;           // Damaged, Mismatch: one line for a warning
};

// Reads the blob of a header section and applies the trust rule.
EmbeddedSchema read_embedded_schema(std::span<const std::byte> header_section);

// The trust rule for a blob found elsewhere (a recording's metadata, a relay
// stream): parse it, then check it describes a ring with this header.
EmbeddedSchema trusted_schema_blob(std::span<const std::byte> blob, std::uint16_t content_type,
                                   const SchemaHash& schema_hash);

}  // namespace evring
