// evring/config.hpp — ring configuration strings and size rules.
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

#include <cstdint>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/format.hpp"

namespace evring {

inline constexpr unsigned kDefaultDescriptorShift = 20;   // 1 Mi descriptors, 64 MiB
inline constexpr unsigned kDefaultPayloadBufShift = 28;   // 256 MiB
inline constexpr unsigned kMinDescriptorShift = 6;        // 64 descriptors: 4 KiB
inline constexpr unsigned kMaxDescriptorShift = 32;
inline constexpr unsigned kMinPayloadBufShift = 12;       // 4 KiB
inline constexpr unsigned kMaxPayloadBufShift = 40;       // 1 TiB

struct RingConfig {
    std::string name_or_path;
    unsigned descriptor_shift = kDefaultDescriptorShift;
    unsigned payload_buf_shift = kDefaultPayloadBufShift;

    // True when the name is a pure file name to be looked up in the ring directory.
    bool is_pure_name() const { return name_or_path.find('/') == std::string::npos; }
};

// Parses a configuration string; the error names the field and what was wrong.
Result<RingConfig> parse_ring_config(std::string_view text);

// Checks a shift against its allowed range; `what` names the field in errors.
Status validate_descriptor_shift(unsigned shift);
Status validate_payload_buf_shift(unsigned shift);

// Full validation of a ring size for a file system with the given page size:
// powers of two, ranges, and each section a whole number of pages.
Status validate_ring_size(const RingSize& size, std::uint64_t page_size);

// What a writer needs to create a ring.
struct RingParams {
    std::uint16_t content_type = static_cast<std::uint16_t>(ContentType::Test);
    std::array<std::uint8_t, 32> schema_hash{};
    unsigned descriptor_shift = kDefaultDescriptorShift;
    unsigned payload_buf_shift = kDefaultPayloadBufShift;
    std::uint64_t context_area_pages = 0;  // in units of kSectionAlignment (2 MiB)

    RingSize size() const {
        return RingSize{std::uint64_t{1} << descriptor_shift,
                        std::uint64_t{1} << payload_buf_shift,
                        context_area_pages * kSectionAlignment};
    }
};

// The parameters for creating the ring a configuration string describes:
// its shifts, with the content type and schema hash the writer records.
inline RingParams ring_params_for(const RingConfig& config, std::uint16_t content_type,
                                  const std::array<std::uint8_t, 32>& schema_hash) {
    RingParams params;
    params.content_type = content_type;
    params.schema_hash = schema_hash;
    params.descriptor_shift = config.descriptor_shift;
    params.payload_buf_shift = config.payload_buf_shift;
    return params;
}

}  // namespace evring
