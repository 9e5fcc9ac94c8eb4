// lib/schema/schema_blob.hpp — where a ring file carries its schema: the byte layout.
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
// This header is the format layer: placing and finding an opaque blob, with
// no parsing, so ring creation, snapshots and recordings can carry a blob
// without the schema library. Making and verifying blobs, and deciding whether
// to trust one, is schema_embed.hpp.
//
// Thread/process safety: the blob is written once at ring creation, before
// the ring's magic, like the extension block, and only read afterwards.
#pragma once

#include <algorithm>
#include <cerrno>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/ring/ring_extension.hpp"

namespace evring {

inline constexpr std::uint64_t kEmbeddedSchemaOffset = 8192;
inline constexpr std::uint64_t kEmbeddedSchemaMaxSize = kSectionAlignment - kEmbeddedSchemaOffset;
inline constexpr std::size_t kSchemaBlobHeaderSize = 128;
inline constexpr std::array<char, 8> kSchemaBlobMagic = {'E', 'V', 'R', 'G', 'S', 'C', 'H', '1'};
inline constexpr std::uint32_t kSchemaBlobVersion = 1;
inline constexpr std::uint32_t kSchemaBlobSourceEncoding = 1;
inline constexpr std::size_t kSchemaBlobLengthOffset = 16;
inline constexpr std::size_t kSchemaBlobHashOffset = 24;

// Extension feature bit: the header section holds a schema blob at kEmbeddedSchemaOffset.
inline constexpr std::uint64_t kRingFeatureEmbeddedSchema = 2;
static_assert((kRingFeatureEmbeddedSchema & kRingFeatureDoorbell) == 0);
static_assert(kEmbeddedSchemaOffset >= kRingExtensionOffset + sizeof(RingExtension));

namespace detail {
inline constexpr std::size_t kRingFeaturesOffset = kRingExtensionOffset + offsetof(RingExtension, features);

inline bool has_ring_extension(std::span<const std::byte> section) noexcept {
    return section.size() >= kRingExtensionOffset + sizeof(RingExtension) &&
           std::memcmp(section.data() + kRingExtensionOffset, kRingExtensionMagic.data(),
                       kRingExtensionMagic.size()) == 0;
}

inline std::uint64_t section_features(std::span<const std::byte> section) noexcept {
    if (!has_ring_extension(section)) return 0;
    std::uint64_t features;
    std::memcpy(&features, section.data() + kRingFeaturesOffset, sizeof features);
    return features;
}
}  // namespace detail

// Checks, without parsing, a blob a writer is about to embed in a ring whose
// header carries `schema_hash`: a blob header with the magic, version and
// encoding, a body length equal to what follows, a size that fits the header
// section, and a recorded schema hash equal to `schema_hash` (the blob's
// checksum and the schema inside are the reader's to verify: serialize_schema_blob
// makes them right). This is what keeps a writer from embedding a schema that
// is not the one its header names.
inline Status check_schema_blob_for_ring(std::span<const std::byte> blob, const std::array<std::uint8_t, 32>& schema_hash) {
    if (blob.size() > kEmbeddedSchemaMaxSize)
        return Error(EFBIG, "embedding a schema: its blob is " + std::to_string(blob.size()) +
                                " bytes, more than the " + std::to_string(kEmbeddedSchemaMaxSize) +
                                " bytes the ring's header section has room for (2 MiB - " +
                                std::to_string(kEmbeddedSchemaOffset) + ")");
    if (blob.size() < kSchemaBlobHeaderSize || std::memcmp(blob.data(), kSchemaBlobMagic.data(), 8) != 0)
        return Error(EINVAL, "embedding a schema: the bytes given are not a schema blob (no EVRGSCH1 header)");
    std::uint32_t version, encoding;
    std::uint64_t length;
    std::memcpy(&version, blob.data() + 8, sizeof version);
    std::memcpy(&encoding, blob.data() + 12, sizeof encoding);
    std::memcpy(&length, blob.data() + kSchemaBlobLengthOffset, sizeof length);
    if (version != kSchemaBlobVersion || encoding != kSchemaBlobSourceEncoding)
        return Error(EINVAL, "embedding a schema: blob version " + std::to_string(version) + ", encoding " +
                                 std::to_string(encoding) + " is not one this evring writes");
    if (length != blob.size() - kSchemaBlobHeaderSize)
        return Error(EINVAL, "embedding a schema: the blob's header claims a " + std::to_string(length) +
                                 "-byte body, but " + std::to_string(blob.size() - kSchemaBlobHeaderSize) +
                                 " bytes follow it");
    if (std::memcmp(blob.data() + kSchemaBlobHashOffset, schema_hash.data(), schema_hash.size()) != 0)
        return Error(EINVAL, "embedding a schema: the blob is of another schema than the ring header's schema "
                             "hash names (make the content with evring::ring_content(schema))");
    return {};
}

// Copies `blob` (made by serialize_schema_blob) into a ring file's header
// section (`header_section` is the file from offset 0, at least
// kEmbeddedSchemaOffset + blob.size() bytes) and sets
// kRingFeatureEmbeddedSchema in its extension block, which must be there.
// The caller's buffer need not be aligned: words are written with memcpy.
inline Status write_schema_blob(std::span<std::byte> header_section, std::span<const std::byte> blob) {
    if (!detail::has_ring_extension(header_section))
        return Error(0, "embedding a schema: the ring has no evring extension block");
    const std::uint64_t room = header_section.size() <= kEmbeddedSchemaOffset
                                   ? 0
                                   : std::min<std::uint64_t>(kEmbeddedSchemaMaxSize,
                                                             header_section.size() - kEmbeddedSchemaOffset);
    if (blob.size() > room)
        return Error(0, "embedding a schema: its blob is " + std::to_string(blob.size()) + " bytes, more than the " +
                            std::to_string(room) + " bytes available in the header section");
    if (blob.size() < kSchemaBlobHeaderSize || std::memcmp(blob.data(), kSchemaBlobMagic.data(), 8) != 0)
        return Error(0, "embedding a schema: the bytes given are not a schema blob");
    std::memcpy(header_section.data() + kEmbeddedSchemaOffset, blob.data(), blob.size());
    const std::uint64_t features = detail::section_features(header_section) | kRingFeatureEmbeddedSchema;
    std::memcpy(header_section.data() + detail::kRingFeaturesOffset, &features, sizeof features);
    return {};
}

// The blob of a header section (to copy into a snapshot's or recording's
// metadata), or an empty span when the feature bit is not set or its length
// reaches past the section. The bytes are not verified: parse_schema_blob does.
inline std::span<const std::byte> embedded_schema_blob(std::span<const std::byte> header_section) noexcept {
    if ((detail::section_features(header_section) & kRingFeatureEmbeddedSchema) == 0) return {};
    if (header_section.size() < kEmbeddedSchemaOffset + kSchemaBlobHeaderSize) return {};
    const std::uint64_t room =
        std::min<std::uint64_t>(kEmbeddedSchemaMaxSize, header_section.size() - kEmbeddedSchemaOffset);
    std::uint64_t length;
    std::memcpy(&length, header_section.data() + kEmbeddedSchemaOffset + kSchemaBlobLengthOffset, sizeof length);
    if (length > room - kSchemaBlobHeaderSize) return {};
    return header_section.subspan(kEmbeddedSchemaOffset, kSchemaBlobHeaderSize + length);
}

}  // namespace evring
