// lib/cursor/named_position.hpp — a named reader's durable position (private to the library:
// the CLI is its user): the last event it consumed, with the ring instance it came from.
//
//     auto dir = evring::reader_state_dir();            // $EVRING_STATE_DIR, ...
//     auto saved = evring::load_named_position(*dir, "billing");
//     // ... read, write the output, then:
//     evring::commit_named_position(*dir, position);    // atomic, durable
//
// Contract (the file format and the directory: docs/named-readers.md):
// - One file per name, `NAME.pos`, in a private directory (0700) outside
//   /dev/shm and hugetlbfs, so a position survives the ring's removal and a
//   reboot. Files are 0600 and owned by the user.
// - commit_named_position is atomic under crashes: a temporary file is
//   written and fsynced, renamed over the old one, and the directory fsynced.
//   A reader killed at any point finds the previous or the new position,
//   never a mix, and a committed position is never lost.
// - load_named_position refuses, with one error naming the file and the
//   reason, a file that is damaged (checksum, truncated), foreign (not this
//   format), forged (another name inside, or wrong owner or modes) or from a
//   newer format. nullopt when the name has no position yet.
// - A name is 1 to 64 characters of [A-Za-z0-9_.-], not starting with '.'.
//
// Thread safety: plain values and functions; two processes committing the
// same name is prevented by the reader's lock (NamedReader,
// named_reader.hpp), not by these functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"

namespace evring {

struct NamedPosition {
    std::string name;
    std::string ring;     // the source's path (SourceIdentity::path)
    SourceKind kind = SourceKind::Ring;
    std::uint64_t instance = 0;  // SourceIdentity::instance of the ring read
    // The last sequence number consumed, one per ring set member (one entry
    // for every other source); 0: nothing consumed yet.
    std::vector<std::uint64_t> last_seqno{0};
    // A ring set's (kind RingSet): the ring instance of each member's
    // last_seqno, by member index (0: no such member); empty otherwise.
    std::vector<std::uint64_t> member_instance;
    // The instance was read to its end (its writer exited and every event
    // was consumed): a new instance at the same name lost nothing of it.
    bool instance_ended = false;
    std::uint64_t commit_nanos = 0;  // wall clock of the commit
};

// The directory of named positions: $EVRING_STATE_DIR, else
// $XDG_STATE_HOME/evring/readers, else ~/.local/state/evring/readers.
// Created (0700, with its parents) when `create`; refused when it is not a
// directory, not the user's, or open to others.
Result<std::string> reader_state_dir(bool create = true);

// Fails (EINVAL) unless `name` is a valid reader name (see the contract).
Status check_reader_name(std::string_view name);

// The file of `name` in `dir`.
std::string named_position_path(const std::string& dir, std::string_view name);

Result<std::optional<NamedPosition>> load_named_position(const std::string& dir, std::string_view name);
Status commit_named_position(const std::string& dir, const NamedPosition& position);
// Forgets a name (--reset); no error when it had no position.
Status remove_named_position(const std::string& dir, std::string_view name);

// Every position in `dir`, by name; files that fail to load come back as
// errors in `problems` ("FILE: reason"), so one damaged file hides no other.
std::vector<NamedPosition> list_named_positions(const std::string& dir, std::vector<std::string>& problems);

}  // namespace evring
