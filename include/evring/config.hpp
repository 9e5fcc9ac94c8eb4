// evring/config.hpp — ring configuration strings, size rules, and what a
// writer needs to create a ring (RingSpec).
//
// A configuration string is `<name-or-path>[:<descriptor-shift>:<payload-buffer-shift>]`.
// Empty shift fields mean the defaults. A name without '/' is resolved in the
// default ring directory (ring_directory.hpp); a path with '/' is used as written.
//
// Sizes are powers of two given by their "shift" (2^shift). Validation here
// checks the allowed ranges; whether each section is a whole number of the
// backing file system's pages is checked by `validate_ring_size` with the page
// size of the file system the ring lives on.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"

namespace evring {

inline constexpr unsigned kDefaultDescriptorShift = 20;   // 1 Mi descriptors, 64 MiB
inline constexpr unsigned kDefaultPayloadBufShift = 28;   // 256 MiB
inline constexpr unsigned kMinDescriptorShift = 6;        // 64 descriptors: 4 KiB
inline constexpr unsigned kMaxDescriptorShift = 32;
inline constexpr unsigned kMinPayloadBufShift = 12;       // 4 KiB
inline constexpr unsigned kMaxPayloadBufShift = 40;       // 1 TiB
inline constexpr std::uint64_t kMaxContextAreaSize = std::uint64_t{1} << 40;  // 1 TiB
// The largest ring a snapshot may decompress to unless the caller says more
// (snapshots, source_open.hpp); a snapshot file only claims its size.
inline constexpr std::uint64_t kDefaultMaxSnapshotSize = std::uint64_t{4} << 30;  // 4 GiB

// Where a ring lives and how large it is: what a configuration string says.
struct RingConfig {
    std::string name_or_path;
    unsigned descriptor_shift = kDefaultDescriptorShift;
    unsigned payload_buf_shift = kDefaultPayloadBufShift;
    std::uint64_t context_area_pages = 0;  // in units of kSectionAlignment (2 MiB); not in the string

    // True when the name is a pure file name to be looked up in the ring directory.
    bool is_pure_name() const { return name_or_path.find('/') == std::string::npos; }
};

// Parses a configuration string; the error names the field and what was wrong.
Result<RingConfig> parse_ring_config(std::string_view text);

// Checks a shift against its allowed range; `what` names the field in errors.
Status validate_descriptor_shift(unsigned shift);
Status validate_payload_buf_shift(unsigned shift);

// Full validation of a ring size for a file system with the given page size:
// powers of two, ranges (which keep the layout arithmetic from overflowing),
// and each section a whole number of pages, since sections follow each other
// unpadded (RingLayout). The error names the field, its value and, for a size
// too small for the pages, the smallest shift that fits.
Status validate_ring_size(const RingSize& size, std::uint64_t page_size);

// What a ring carries: set by its creator, checked by readers
// (MappedRing::check_content_type) and by writers joining a shared ring.
struct RingContent {
    RingContent() = default;
    RingContent(std::uint16_t type, const std::array<std::uint8_t, 32>& hash, std::vector<std::byte> blob = {})
        : content_type(type), schema_hash(hash), schema_blob(std::move(blob)) {}

    std::uint16_t content_type = static_cast<std::uint16_t>(ContentType::Test);
    std::array<std::uint8_t, 32> schema_hash{};
    // The ring's schema, embedded where RING01 readers never look
    // (schema_blob.hpp), or empty. Set all three fields at once from a Schema
    // with evring::ring_content(schema) (schema_embed.hpp), which derives the
    // content type and hash from the schema so that they cannot disagree;
    // initialize_ring_file refuses a blob that is malformed, does not fit the
    // header section, or records a hash other than schema_hash.
    std::vector<std::byte> schema_blob;
};

// A ring file's sizes and content: what initialize_ring_file lays out. It
// names no file; RingWriter::create takes a RingSpec, which does.
struct RingParams {
    unsigned descriptor_shift = kDefaultDescriptorShift;
    unsigned payload_buf_shift = kDefaultPayloadBufShift;
    std::uint64_t context_area_pages = 0;  // in units of kSectionAlignment (2 MiB)
    RingContent content;

    RingSize size() const {
        return RingSize{std::uint64_t{1} << descriptor_shift, std::uint64_t{1} << payload_buf_shift,
                        context_area_pages * kSectionAlignment};
    }
};

// Everything RingWriter::create needs, built from both halves at once so that
// neither can be left out: where the ring lives and how large it is (a
// RingConfig, usually parsed from a configuration string, sizes included) and
// what it carries.
//
//     auto config = evring::parse_ring_config("feed:20:28").value();
//     auto writer = evring::RingWriter::create({config, evring::ring_content(schema)});   // schema_embed.hpp
//     auto bare = evring::RingWriter::create({config, {kMyContentType, kMySchemaHash}});
struct RingSpec {
    RingSpec(RingConfig ring_config, RingContent ring_content)
        : config(std::move(ring_config)), content(std::move(ring_content)) {}

    RingConfig config;
    RingContent content;

    // The sizes of `config` with `content`.
    RingParams params() const {
        return RingParams{config.descriptor_shift, config.payload_buf_shift,
                          config.context_area_pages, content};
    }
};

}  // namespace evring
