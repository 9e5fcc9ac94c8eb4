// lib/set/ring_set_format.hpp — the ring set manifest, byte by byte.
//
// A ring set NAME is a directory NAME/ in the ring directory holding a
// manifest file `manifest` and member rings `m0`, `m1`, ... (plain RING01
// ring files). docs/ring-sets.md explains the layout and why.
//
// The manifest is mapped shared by every writer and reader of the set:
//
//   offset  size  field
//   0       8     magic "EVRSET01"
//   8       4     header_size (= 256)
//   12      4     max_members (1 .. kMaxSetMembers)
//   16      8     set_id: random, chosen by the creator (the set's identity)
//   24      8     created_nanos: creation time, ns since the Unix epoch
//   32      2     content_type (of every member)
//   34      2     reserved, 0
//   36      4     member_descriptor_shift \ the members' sizes, for
//   40      4     member_payload_buf_shift / writers that join
//   44      4     schema_size: bytes of the embedded schema blob (0: none)
//   48      32    schema_hash (of every member)
//   128     8     generation: +1 (release) after every member entry change
//   256     64*N  member entries (N = max_members), then the schema blob
//                 (schema_blob.hpp) at 256 + 64*N
//
// A member entry (64 bytes):
//   0   4   state: 0 empty, 1 present (a ring file exists at its name)
//   4   4   index: the entry's own index (a lie is refused)
//   8   8   ring_created_nanos: when its current ring file was taken
//   16  4   pid of the process that took it (informational)
//   20  12  reserved, 0
//   32  32  name, NUL-padded: "m<index>"; [A-Za-z0-9._-], no "..", no '/'
//
// Who writes what: the header is written once by the creator, before the
// directory is renamed into place (never changed after). Entry i is written
// only by the process holding member i's ring file lock (the flock that makes
// it the member's writer), so entries never have two writers. `generation` is
// advanced with an atomic fetch-add (release) after an entry changes; readers
// load it (acquire), copy the entries, and load it again: equal values mean
// the copy is consistent, and an unchanged generation means nothing needs to
// be rescanned (one load per poll).
//
// Thread safety: plain data; see above for who writes which word.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace evring {

inline constexpr std::array<char, 8> kSetMagic{'E', 'V', 'R', 'S', 'E', 'T', '0', '1'};
inline constexpr std::uint32_t kSetHeaderSize = 256;
inline constexpr std::uint32_t kSetMemberEntrySize = 64;
// Large enough for one member per thread of a big machine; small enough that
// a manifest claiming more is refused rather than believed.
inline constexpr std::uint32_t kMaxSetMembers = 1024;
// The manifest's file name inside the set's directory.
inline constexpr const char* kSetManifestName = "manifest";

struct SetManifestHeader {
    std::array<char, 8> magic;
    std::uint32_t header_size;
    std::uint32_t max_members;
    std::uint64_t set_id;
    std::uint64_t created_nanos;
    std::uint16_t content_type;
    std::uint16_t reserved0;
    std::uint32_t member_descriptor_shift;
    std::uint32_t member_payload_buf_shift;
    std::uint32_t schema_size;
    std::array<std::uint8_t, 32> schema_hash;
    std::array<std::uint8_t, 48> reserved1;
    alignas(64) std::uint64_t generation;
    std::array<std::uint8_t, 120> reserved2;
};
static_assert(sizeof(SetManifestHeader) == kSetHeaderSize);
static_assert(offsetof(SetManifestHeader, max_members) == 12);
static_assert(offsetof(SetManifestHeader, set_id) == 16);
static_assert(offsetof(SetManifestHeader, content_type) == 32);
static_assert(offsetof(SetManifestHeader, member_descriptor_shift) == 36);
static_assert(offsetof(SetManifestHeader, schema_size) == 44);
static_assert(offsetof(SetManifestHeader, schema_hash) == 48);
static_assert(offsetof(SetManifestHeader, generation) == 128);

enum class SetMemberState : std::uint32_t { Empty = 0, Present = 1 };

struct SetMemberEntry {
    std::uint32_t state;
    std::uint32_t index;
    std::uint64_t ring_created_nanos;
    std::uint32_t pid;
    std::array<std::uint8_t, 12> reserved;
    std::array<char, 32> name;
};
static_assert(sizeof(SetMemberEntry) == kSetMemberEntrySize);
static_assert(offsetof(SetMemberEntry, ring_created_nanos) == 8);
static_assert(offsetof(SetMemberEntry, pid) == 16);
static_assert(offsetof(SetMemberEntry, name) == 32);

// Where the schema blob starts in a manifest of `max_members` members.
constexpr std::uint64_t set_schema_offset(std::uint32_t max_members) noexcept {
    return kSetHeaderSize + std::uint64_t{kSetMemberEntrySize} * max_members;
}

}  // namespace evring
