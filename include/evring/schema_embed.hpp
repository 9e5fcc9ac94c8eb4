// evring/schema_embed.hpp — a schema carried inside a ring file, a snapshot or a recording.
//
// A ring written with a schema carries it in the unused part of its 2 MiB
// RING01 header section, where readers of other implementations never look:
// a self-checking blob at file offset kEmbeddedSchemaOffset (8192, its own
// base page after evring's extension block at 4096), announced by the
// extension block's feature bit kRingFeatureEmbeddedSchema. Recordings and
// relays carry the same blob as opaque bytes.
//
// Blob layout (all integers little-endian; docs/schema.md has the table):
//
//   offset  size  field
//   0       8     magic "EVRGSCH1"
//   8       4     version, 1
//   12      4     encoding, 1 = the schema's source text (evring schema language, UTF-8)
//   16      8     body length in bytes
//   24      32    the schema's hash (SHA-256 of its canonical form)
//   56      32    checksum: SHA-256 of bytes [0, 128) with this field zeroed, then the body
//   88      40    reserved, zero (covered by the checksum)
//   128     ...   body
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
// that span. Thread/process safety: the blob is written once at ring creation
// before the ring's magic, like the extension block, and only read afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/ring_extension.hpp"
#include "evring/schema.hpp"

namespace evring {

inline constexpr std::uint64_t kEmbeddedSchemaOffset = 8192;
inline constexpr std::uint64_t kEmbeddedSchemaMaxSize = kSectionAlignment - kEmbeddedSchemaOffset;
inline constexpr std::size_t kSchemaBlobHeaderSize = 128;
inline constexpr std::array<char, 8> kSchemaBlobMagic = {'E', 'V', 'R', 'G', 'S', 'C', 'H', '1'};
inline constexpr std::uint32_t kSchemaBlobVersion = 1;
inline constexpr std::uint32_t kSchemaBlobSourceEncoding = 1;

// Extension feature bit: the header section holds a schema blob at kEmbeddedSchemaOffset.
inline constexpr std::uint64_t kRingFeatureEmbeddedSchema = 2;
static_assert((kRingFeatureEmbeddedSchema & kRingFeatureDoorbell) == 0);
static_assert(kEmbeddedSchemaOffset >= kRingExtensionOffset + sizeof(RingExtension));

// The blob for `schema` (its source text as the body).
std::vector<std::byte> serialize_schema_blob(const Schema& schema);

// Verifies a blob (it may be followed by other bytes, which are ignored) and
// parses the schema it carries. The error says what is wrong with it.
Result<Schema> parse_schema_blob(std::span<const std::byte> blob);

// True when `schema` describes a ring with this header (the trust rule above).
bool schema_describes_ring(const Schema& schema, std::uint16_t content_type, const SchemaHash& schema_hash) noexcept;

// Writes the blob into a ring file's header section (`header_section` is the
// file from offset 0; at least kEmbeddedSchemaOffset + the blob's size bytes)
// and sets kRingFeatureEmbeddedSchema in its extension block, which must
// already be there. Refuses a schema that does not describe the header's
// content type and schema hash, or a blob larger than the section allows.
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

// Reads the blob of a header section (the first bytes of a ring file, at
// least sizeof(RingHeader)) and applies the trust rule.
EmbeddedSchema read_embedded_schema(std::span<const std::byte> header_section);

// The blob bytes of a header section (to copy into a recording), or an empty
// span when the feature bit is not set or the length is out of bounds.
std::span<const std::byte> embedded_schema_blob(std::span<const std::byte> header_section) noexcept;

}  // namespace evring
