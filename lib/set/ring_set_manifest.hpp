// lib/set/ring_set_manifest.hpp — reading a ring set's manifest.
//
// A ring set is a directory holding a manifest and member rings
// (ring_set_format.hpp, docs/ring-sets.md). This is the reader's view of the
// manifest: a checked copy, never a mapping.
//
// Contract:
// - parse_set_manifest checks every value before using it: the magic, the
//   header size, 1 <= max_members <= kMaxSetMembers, the member sizes, the
//   schema's size and that it lies within the bytes given. It allocates only
//   for what it checked: at most kMaxSetMembers entries, whatever the file
//   claims. Errors name the file and the field.
// - A member entry that lies (a state other than 0 or 1, an index other than
//   its own, a name that is empty, too long, not NUL-terminated, holds '/',
//   is "." or holds "..", or a character outside [A-Za-z0-9._-]) is skipped
//   with a warning naming the entry; the intact members are still listed.
//   A member's file is named by its index, m<index>, whatever the entry's
//   name says: an entry naming another file (another member's) is listed
//   under its own file's name, with a warning.
// - read_set_manifest reads the file with pread (no mapping, so a manifest
//   truncated under the reader is an error, not SIGBUS) and never reads more
//   than the largest valid manifest. A manifest that is not a regular file
//   (a FIFO, a device, a socket, a directory, a symbolic link) is refused
//   before it is opened, with an error naming it and what it is: nothing
//   waits on a FIFO.
// - is_ring_set_directory: true for a directory holding an entry named
//   `manifest` (its type and contents are checked when it is read).
//
// Thread safety: pure functions and plain values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "set/ring_set_format.hpp"

namespace evring {

struct RingSetMemberInfo {
    std::uint32_t index = 0;
    std::string name;          // "m3"
    std::string path;          // directory + "/" + name
    std::uint64_t ring_created_nanos = 0;
    std::uint32_t pid = 0;
};

struct RingSetManifest {
    std::string directory;  // the set's directory
    std::uint64_t set_id = 0;
    std::uint64_t created_nanos = 0;
    std::uint16_t content_type = 0;
    std::array<std::uint8_t, 32> schema_hash{};
    std::uint32_t max_members = 0;
    std::uint32_t member_descriptor_shift = 0;
    std::uint32_t member_payload_buf_shift = 0;
    std::uint64_t generation = 0;
    std::vector<std::byte> schema_blob;       // empty when the set has none
    std::vector<RingSetMemberInfo> members;   // present entries, by index
    std::vector<std::string> warnings;        // entries skipped, and why
};

// The most bytes a valid manifest can need: read_set_manifest's read limit.
std::uint64_t max_set_manifest_size() noexcept;

// Checks and copies a manifest's bytes; `directory` is the set's directory,
// used for member paths and in messages.
Result<RingSetManifest> parse_set_manifest(std::span<const std::byte> bytes, std::string_view directory);

// Reads and parses <directory>/manifest.
Result<RingSetManifest> read_set_manifest(std::string_view directory);

// The manifest's bytes as read_set_manifest reads them (unchecked; at most
// max_set_manifest_size()).
Result<std::vector<std::byte>> read_set_manifest_bytes(std::string_view directory);
// Opens <directory>/manifest read-only (O_NONBLOCK, O_NOFOLLOW, close-on-exec)
// after checking it is a regular file; the caller closes it.
Result<int> open_set_manifest(std::string_view directory);
// The same from a manifest already open (`directory` is for messages): a
// reader re-reads its own set's manifest this way, never whatever a set
// re-created under the name holds by then.
Result<std::vector<std::byte>> read_set_manifest_bytes(int fd, std::string_view directory);

// The bytes a parsed manifest occupies: header, member table and schema
// (a manifest file on hugetlbfs is a whole page; the rest is zeros).
std::uint64_t set_manifest_used_size(const RingSetManifest& manifest) noexcept;

// The generation word alone (one pread of 8 bytes), for readers that poll.
Result<std::uint64_t> read_set_generation(int manifest_fd);

bool is_ring_set_directory(std::string_view path);

// Checks a member name as parse_set_manifest does; the error says why.
Status check_member_name(std::string_view name);

}  // namespace evring
