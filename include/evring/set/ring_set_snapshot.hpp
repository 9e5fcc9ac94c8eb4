// lib/set/ring_set_snapshot.hpp — a ring set frozen in one file.
//
//     evring snapshot demo -o demo.zst      # demo is a ring set
//     evring watch demo.zst --from oldest   # the merged stream, with members
//
// A set snapshot is a sequence of zstd frames (byte table in
// docs/ring-sets.md, "Snapshots of a set"):
//   - a skippable frame (magic 0x184D2A5E) holding "EVSETSN1", the member
//     count and the set's manifest (ring_set_format.hpp), as the set had it;
//   - per member, a skippable frame holding "EVSETMB1", the member's index and
//     the size of the frame that follows, then that member's ring snapshot:
//     exactly the frame snapshot.hpp writes for a ring (`zstd -d` of the file
//     gives the member rings one after the other).
// A single ring's snapshot is unchanged: one zstd frame, first bytes
// 28 b5 2f fd. A set snapshot starts with 5e 2a 4d 18 then "EVSETSN1" at
// byte 8, so no ring snapshot is taken for one, nor one for the other.
//
// Contract:
// - write_set_snapshot writes each member with write_snapshot (its contract
//   holds per member: committed events read consistently, writers never
//   blocked). Members are copied one after another, not at one instant. Each
//   member's compressed frame is staged in a memfd first (its size goes
//   before it, so the file can be read front to back and written into a
//   pipe); memory: one member's compressed frame at a time.
// - load_set_snapshot trusts nothing: every size is checked against the
//   bytes the file really has before anything is read or allocated; the
//   manifest is checked by parse_set_manifest; the member count is at most
//   the manifest's max_members (<= 1024); member indexes must be below
//   max_members and strictly increasing; each member frame must end exactly
//   where its record says, and nothing may follow the last member. Each
//   member is loaded as a snapshot (snapshot.hpp: sparse memory, costing what
//   it decompresses to) and must carry the manifest's content type and schema
//   hash. `max_decompressed_size` bounds the members' rings together. Errors
//   name the file, the member and the field.
//
// Thread safety: plain functions; the loaded rings are immutable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/ring/ring.hpp"
#include "set/ring_set_manifest.hpp"
#include "ring/snapshot.hpp"

namespace evring {

inline constexpr std::uint32_t kSkippableFrameMagic = 0x184D2A5E;  // zstd's range is 0x184D2A50..5F
inline constexpr std::array<char, 8> kSetSnapshotMagic{'E', 'V', 'S', 'E', 'T', 'S', 'N', '1'};
inline constexpr std::array<char, 8> kSetSnapshotMemberMagic{'E', 'V', 'S', 'E', 'T', 'M', 'B', '1'};

// True when the file starts as a set snapshot (skippable frame, "EVSETSN1").
// Only regular files are opened (without blocking).
Result<bool> is_set_snapshot_file(const std::string& path);

struct SetSnapshotMember {
    std::uint32_t index = 0;
    const MappedRing* ring = nullptr;
};

struct SetSnapshotStats {
    std::vector<std::pair<std::uint32_t, SnapshotStats>> members;  // by index
    std::uint64_t compressed_bytes = 0;                            // the whole file
};

// Writes a snapshot of the set whose manifest bytes are `manifest` (as read,
// read_set_manifest_bytes) and whose members are `members` (ascending index)
// to the open file `out_fd`; `out_path` is used in messages.
Result<SetSnapshotStats> write_set_snapshot(std::span<const std::byte> manifest,
                                            std::span<const SetSnapshotMember> members, int out_fd,
                                            std::string_view out_path, const SnapshotWriteOptions& options = {});

struct LoadedSetSnapshot {
    std::vector<std::byte> manifest_bytes;
    RingSetManifest manifest;  // directory: the file's path
    std::vector<std::pair<std::uint32_t, LoadedSnapshot>> members;  // ascending index
    std::uint64_t compressed_size = 0;
};

Result<LoadedSetSnapshot> load_set_snapshot(const std::string& path, const SnapshotLoadOptions& options = {});

}  // namespace evring
