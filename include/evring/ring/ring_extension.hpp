// evring/ring/ring_extension.hpp — evring's extension block inside a RING01 header section.
//
// The RING01 header section is 2 MiB long, but only its first 192 bytes are
// the RING01 header; every RING01 writer zeroes the rest, and RING01 readers
// never look at it. evring keeps a small, magic-tagged block there, at the
// fixed file offset kRingExtensionOffset (4096: its own base page, far from
// the header's lines), so that rings stay byte-compatible with other
// implementations:
//
//   offset 4096  line 0: magic "EVRGEXT1", feature flags, a snapshot's
//                        lapped seqno (zero in a ring), zero padding
//   offset 4160  line 1: the doorbell word (32-bit futex word, see doorbell.hpp)
//   offset 4224  line 2: the writer claim (writer_claim.hpp): which publisher
//                        may reserve with plain stores, and its handshake
//   offset 4288  line 3: the interest word (interest.hpp): the union of what
//                        the ring's live registered readers want; zero (no
//                        reader narrowed it, or an older evring made the
//                        ring) means everything
//
// Each mutable word has a cache line of its own, so the doorbell line is
// shared (read-only) in every writer's cache until a reader goes to sleep,
// and the claim line, which only writers touch, stays in the claiming
// writer's cache.
//
// A feature flag is a promise made at creation by whoever initialised the
// file: kRingFeatureDoorbell means "writers of this ring ring the doorbell
// after every commit". A ring with no block (a real snapshot, a ring written
// by another implementation) has zero here: no magic, no features, and its
// readers fall back to timed polling.
//
// Thread/process safety: line 0 is written once by initialize_ring_file
// before the magic of the RING01 header, and only read afterwards. The
// doorbell, claim and interest words are only accessed through
// shared_word.hpp (doorbell.hpp, writer_claim.hpp, lib/registry/registry_interest.cpp).
// The interest word is written by registered readers (through a read-write
// mapping of their own, as the doorbell's sleepers do), one at a time under
// the registry's interest lock, and loaded relaxed by writers before every
// typed event (docs/interest.md). Writers honour it only on rings that
// announce kRingFeatureDoorbell: the ordering argument needs the doorbell's
// fence after every commit.
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

// WriterClaim::revoked: a writer revoked the claim (set first: the claim's
// owner thread leaves the plain path when it sees any bit), and then no
// thread is on the plain path any more (set once the handshake is done).
inline constexpr std::uint32_t kClaimRevoking = 1;
inline constexpr std::uint32_t kClaimRevokedDrained = 2;

// The writer claim's words (writer_claim.hpp has the protocol).
struct alignas(64) WriterClaim {
    std::uint32_t claimed;  // 1 while a publisher holds the claim
    std::uint32_t busy;     // 1 while the claim's owner thread reserves with plain stores
    std::uint32_t revoked;  // kClaimRevoking | kClaimRevokedDrained bits; never cleared while the ring lives
    std::array<std::uint32_t, 13> reserved;
};
static_assert(sizeof(WriterClaim) == 64);

struct RingExtension {
    alignas(64) std::array<char, 8> magic;  // kRingExtensionMagic
    std::uint64_t features;                 // kRingFeature* bits
    // Zero in a ring. In a snapshot: the seqnos up to this one were
    // overwritten by a writer while the snapshot was copied (snapshot.cpp
    // drops them, leaving a RECORD_ERROR placeholder in the slots of the
    // snapshot's window for other RING01 readers; evring's loader clears
    // those), so readers report them as lapped, not as never committed.
    std::uint64_t snapshot_lapped;
    std::array<std::uint64_t, 5> reserved0;
    // Doorbell state: bit 0 = "a reader may be asleep", bits 1..31 = wake epoch.
    alignas(64) std::uint32_t doorbell;
    std::array<std::uint32_t, 15> reserved1;
    WriterClaim claim;
    // The interest word (interest.hpp); its own line, which writers only read.
    alignas(64) std::uint64_t interest;
    std::array<std::uint64_t, 7> reserved3;
};
static_assert(sizeof(RingExtension) == 256);
static_assert(offsetof(RingExtension, features) == 8);
static_assert(offsetof(RingExtension, snapshot_lapped) == 16);
static_assert(offsetof(RingExtension, doorbell) == 64);
static_assert(offsetof(RingExtension, claim) == 128);
static_assert(offsetof(RingExtension, interest) == 192);
static_assert(offsetof(WriterClaim, busy) == 4 && offsetof(WriterClaim, revoked) == 8);
static_assert(kRingExtensionOffset + sizeof(RingExtension) <= kHeaderSectionSize,
              "the extension block must lie inside the RING01 header section");
static_assert(kRingExtensionOffset >= sizeof(RingHeader));

// The extension block of a mapped header section (the section starts at
// `header_section`, which is the RingHeader's address).
inline RingExtension* extension_in(void* header_section) noexcept {
    return reinterpret_cast<RingExtension*>(static_cast<std::byte*>(header_section) +
                                            kRingExtensionOffset);
}

// True when the ring carries evring's extension block (its magic).
inline bool has_ring_extension(const RingExtension& extension) noexcept {
    return std::memcmp(extension.magic.data(), kRingExtensionMagic.data(), kRingExtensionMagic.size()) == 0;
}

// The feature bits announced by the ring, or 0 when it has no extension block.
inline std::uint64_t ring_features(const RingExtension& extension) noexcept {
    return has_ring_extension(extension) ? extension.features : 0;
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
