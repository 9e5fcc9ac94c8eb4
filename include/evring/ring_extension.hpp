// evring/ring_extension.hpp — evring's extension block inside a RING01 header section.
//
// The RING01 header section is 2 MiB long, but only its first 192 bytes are
// the RING01 header; every RING01 writer zeroes the rest, and RING01 readers
// never look at it. evring keeps a small, magic-tagged block there, at the
// fixed file offset kRingExtensionOffset (4096: its own base page, far from
// the header's lines), so that rings stay byte-compatible with other
// implementations:
//
//   offset 4096  line 0: magic "EVRGEXT1", feature flags, zero padding
//   offset 4160  line 1: the doorbell word (32-bit futex word, see doorbell.hpp)
//   offset 4224  line 2: reserved, zero
//
// Each mutable word has a cache line of its own, so the doorbell line is
// shared (read-only) in every writer's cache until a reader goes to sleep.
//
// A feature flag is a promise made at creation by whoever initialised the
// file: kRingFeatureDoorbell means "writers of this ring ring the doorbell
// after every commit". A ring with no block (a real snapshot, a ring written
// by another implementation) has zero here: no magic, no features, and its
// readers fall back to timed polling.
//
// Thread/process safety: line 0 is written once by initialize_ring_file
// before the magic of the RING01 header, and only read afterwards. The
// doorbell word is only accessed through shared_word.hpp (doorbell.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "evring/format.hpp"

namespace evring {

inline constexpr std::uint64_t kRingExtensionOffset = 4096;
inline constexpr std::array<char, 8> kRingExtensionMagic = {'E', 'V', 'R', 'G', 'E', 'X', 'T', '1'};

// Writers of the ring wake sleeping readers after every commit (doorbell.hpp).
inline constexpr std::uint64_t kRingFeatureDoorbell = 1;

struct RingExtension {
    alignas(64) std::array<char, 8> magic;  // kRingExtensionMagic
    std::uint64_t features;                 // kRingFeature* bits
    std::array<std::uint64_t, 6> reserved0;
    // Doorbell state: bit 0 = "a reader may be asleep", bits 1..31 = wake epoch.
    alignas(64) std::uint32_t doorbell;
    std::array<std::uint32_t, 15> reserved1;
    alignas(64) std::array<std::uint64_t, 8> reserved2;
};
static_assert(sizeof(RingExtension) == 192);
static_assert(offsetof(RingExtension, features) == 8);
static_assert(offsetof(RingExtension, doorbell) == 64);
static_assert(kRingExtensionOffset + sizeof(RingExtension) <= kHeaderSectionSize,
              "the extension block must lie inside the RING01 header section");
static_assert(kRingExtensionOffset >= sizeof(RingHeader));

// The extension block of a mapped header section (the section starts at
// `header_section`, which is the RingHeader's address).
inline RingExtension* extension_in(void* header_section) noexcept {
    return reinterpret_cast<RingExtension*>(static_cast<std::byte*>(header_section) +
                                            kRingExtensionOffset);
}

// The feature bits announced by the ring, or 0 when it has no extension block.
inline std::uint64_t ring_features(const RingExtension& extension) noexcept {
    if (std::memcmp(extension.magic.data(), kRingExtensionMagic.data(), kRingExtensionMagic.size()) != 0)
        return 0;
    return extension.features;
}

// Writes an extension block announcing `features` (used by initialize_ring_file
// on a zeroed header section).
inline void write_ring_extension(void* header_section, std::uint64_t features) noexcept {
    RingExtension* extension = extension_in(header_section);
    std::memset(static_cast<void*>(extension), 0, sizeof *extension);
    extension->features = features;
    std::memcpy(extension->magic.data(), kRingExtensionMagic.data(), kRingExtensionMagic.size());
}

}  // namespace evring
