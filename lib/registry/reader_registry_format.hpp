// lib/registry/reader_registry_format.hpp — the reader registry file: structs,
// constants, layout.
//
// Pure data, no system calls. A ring's reader registry is a small file next
// to the ring, `<ring path>.readers`, in which readers that choose to
// announce themselves each own one slot (docs/operations.md has the byte
// tables, where the file lives and why). The ring file itself is never
// touched: it stays read-only to readers and byte-for-byte what RING01
// readers of other implementations expect.
//
//   offset 0                 RegistryHeader (256 bytes): written once, before
//                            the file is renamed into place, then only read
//   offset 256 + 256 * i     RegistrySlot i (256 bytes, four cache lines)
//   ...                      zero up to file_size, a whole number of the
//                            file system's pages (2 MiB on hugetlbfs)
//
// Every size and offset below is pinned with a static_assert; changing any of
// them is a format change and must change kRegistryVersion.
//
// Interest (docs/interest.md): each slot says what its reader wants, and
// whoever changes which slots are active (a registrant, a leaving reader, a
// lister reclaiming a dead one) then recomputes the union of the active
// slots' interest into the ring's interest word, holding the interest lock:
// an OFD write lock on the header bytes [kInterestLockOffset, +8), so
// recomputations never interleave (lib/registry/registry_interest.cpp).
//
// Cross-process contract (the invariants every user of a slot relies on):
// - One writer per slot: only the process holding the OFD write lock that
//   covers a slot's byte range writes that slot (lib/registry/registry_locks.cpp). The
//   registered reader holds it for its lifetime; the kernel drops it when the
//   process dies, however it dies, which is how a dead reader is recognised.
// - Every slot word is accessed only through shared_word.hpp. The slot's
//   owner rewrites it under a seqlock (`version` odd while rewriting), so a
//   lister never accepts a torn entry; the steps are E1..E4 (owner) and
//   e1..e4 (lister), drawn in lib/registry/registry_slot.hpp.
// - Nothing read from the file is trusted: the header is copied once and
//   validated (lib/registry/registry_file.cpp), entries are copied and validated
//   field by field (lib/registry/reader_listing.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "evring/format.hpp"

namespace evring {

inline constexpr std::array<char, 8> kRegistryMagic = {'E', 'V', 'R', 'G', 'R', 'E', 'G', 'S'};
inline constexpr std::uint32_t kRegistryVersion = 1;
// The registry of the ring at path P is the file P + kRegistrySuffix.
inline constexpr std::string_view kRegistrySuffix = ".readers";

inline constexpr std::uint32_t kRegistryHeaderSize = 256;
// The interest lock's bytes: the header's last reserved word (never written).
inline constexpr std::uint32_t kInterestLockOffset = kRegistryHeaderSize - 8;
inline constexpr std::uint32_t kRegistrySlotSize = 256;
inline constexpr std::uint32_t kRegistryDefaultCapacity = 128;
// Bounds the file (1 MiB of slots) and the work of one listing.
inline constexpr std::uint32_t kRegistryMaxCapacity = 4096;

// Text fields, NUL-terminated inside their bytes (so at most size - 1 characters).
inline constexpr std::size_t kReaderNameBytes = 48;
inline constexpr std::size_t kReaderDetailBytes = 80;

// Slot states. A slot whose state is Active but whose lock nobody holds
// belongs to a dead reader.
inline constexpr std::uint64_t kSlotFree = 0;
inline constexpr std::uint64_t kSlotActive = 1;

// Which ring file, and which instance of it, a registry belongs to. A ring
// re-created under the same name is a new file: a new inode (or, where the
// file system reuses inode numbers, a new birth time), so its readers never
// inherit the old instance's entries. The content type, sizes and schema hash
// are checked as well, so a registry of another ring is recognised even where
// neither the inode number nor a birth time tells them apart.
struct RingIdentity {
    std::uint64_t device;      // st_dev of the ring file
    std::uint64_t inode;       // st_ino
    std::int64_t birth_sec;    // statx btime, or 0 and 0 where the file
    std::uint64_t birth_nsec;  //   system does not record one (hugetlbfs)
    std::uint16_t content_type;
    std::array<std::uint16_t, 3> reserved;  // zero
    RingSize size;
    std::array<std::uint8_t, 32> schema_hash;
};
static_assert(sizeof(RingIdentity) == 96);
static_assert(offsetof(RingIdentity, content_type) == 32);
static_assert(offsetof(RingIdentity, size) == 40);
static_assert(offsetof(RingIdentity, schema_hash) == 64);

// Written once by the registry's creator before the file appears at its name;
// read (copied, then validated) by everyone else.
struct RegistryHeader {
    std::array<char, 8> magic;               // kRegistryMagic
    std::uint32_t version;                   // kRegistryVersion
    std::uint32_t header_size;               // kRegistryHeaderSize
    std::uint32_t slot_size;                 // kRegistrySlotSize
    std::uint32_t capacity;                  // slots, 1..kRegistryMaxCapacity
    std::uint64_t file_size;                 // header + slots, rounded up to the file system's page
    std::uint64_t created_ns;                // wall clock when created (informational)
    std::array<std::uint64_t, 3> reserved0;  // zero
    RingIdentity ring;                       // the ring instance this registry belongs to
    std::array<std::uint64_t, 12> reserved1;  // zero
};
static_assert(sizeof(RegistryHeader) == kRegistryHeaderSize);
static_assert(offsetof(RegistryHeader, version) == 8);
static_assert(offsetof(RegistryHeader, header_size) == 12);
static_assert(offsetof(RegistryHeader, slot_size) == 16);
static_assert(offsetof(RegistryHeader, capacity) == 20);
static_assert(offsetof(RegistryHeader, file_size) == 24);
static_assert(offsetof(RegistryHeader, created_ns) == 32);
static_assert(offsetof(RegistryHeader, ring) == 64);

// RegistrySlot::flags. kReaderHeals: the reader heals its lapped gaps from
// a recording (docs/healing.md), so the events overwritten ahead of it are
// not lost yet: a lister does not count them as lost (reader_listing.hpp).
inline constexpr std::uint64_t kReaderHeals = 1;

// One reader's entry. Line 0 is what the reader rewrites every so many
// events (its progress and heartbeat); lines 1..3 are written when the slot
// is claimed. Every word is a 64-bit shared word (shared_word.hpp), text
// included (little-endian bytes packed into words), so no access is ever a
// plain load or store of shared memory.
struct alignas(64) RegistrySlot {
    // line 0: the seqlock and the progress
    std::uint64_t version;       // even: stable; odd: the owner is rewriting the slot
    std::uint64_t state;         // kSlotFree or kSlotActive
    std::uint64_t next_seqno;    // the sequence number the reader will read next
    std::uint64_t lost;          // events it lost by falling behind (Gaps)
    std::uint64_t abandoned;     // reservations it skipped as abandoned
    std::uint64_t heartbeat_ns;  // wall clock (ns since the epoch) of the last update
    std::uint64_t updates;       // updates published since the slot was claimed
    // kReaderHeals, or 0; other bits zero (a lister calls them a problem).
    std::uint64_t flags;
    // line 1: who the reader is
    alignas(64) std::uint64_t generation;  // how many times this slot was claimed
    std::uint64_t registered_ns;           // wall clock when claimed
    std::uint64_t pid;                     // in the reader's own pid namespace
    std::uint64_t pid_namespace;           // inode of its /proc/self/ns/pid (0: unknown)
    std::uint64_t start_ticks;  // its start time, clock ticks after boot (/proc/self/stat)
    std::uint64_t uid;
    std::uint64_t kind;  // ReaderInfo::kind, a number the client picks (reader_kinds.hpp); < 2^32
    // What the reader wants (interest.hpp): kInterestEverything (0, what
    // readers that predate interest left here) or a narrowing word.
    std::uint64_t interest;
    // lines 2..3: what it says about itself
    alignas(64) std::array<std::uint64_t, kReaderNameBytes / 8> name;
    std::array<std::uint64_t, kReaderDetailBytes / 8> detail;
};
static_assert(sizeof(RegistrySlot) == kRegistrySlotSize);
static_assert(offsetof(RegistrySlot, next_seqno) == 16);
static_assert(offsetof(RegistrySlot, heartbeat_ns) == 40);
static_assert(offsetof(RegistrySlot, generation) == 64);
static_assert(offsetof(RegistrySlot, pid) == 80);
static_assert(offsetof(RegistrySlot, kind) == 112);
static_assert(offsetof(RegistrySlot, interest) == 120);
static_assert(offsetof(RegistrySlot, name) == 128);
static_assert(offsetof(RegistrySlot, detail) == 176);
static_assert(kReaderNameBytes % 8 == 0 && kReaderDetailBytes % 8 == 0);

// Where slot `index` starts in the file.
constexpr std::uint64_t registry_slot_offset(std::uint32_t index) {
    return kRegistryHeaderSize + std::uint64_t{index} * kRegistrySlotSize;
}

// Header and `capacity` slots, rounded up to whole pages of `page_size`
// (a power of two).
constexpr std::uint64_t registry_file_size(std::uint32_t capacity, std::uint64_t page_size) {
    const std::uint64_t used = registry_slot_offset(capacity);
    return (used + page_size - 1) & ~(page_size - 1);
}

}  // namespace evring
