// lib/files/ring_debris.hpp — what killed processes leave in a ring directory,
// and removing it (`evring ls --all`, `evring gc`; docs/hugepages.md).
//
//     for (const evring::DebrisEntry& d : evring::list_debris("/dev/hugepages").value())
//         if (evring::remove_debris(d).value_or(false)) freed += d.allocated;
//
// Creating and removing rings leaves nothing behind (ring_writer.hpp,
// reader_registration.hpp). What a SIGKILL can leave, and how it is known:
// - TempRing: NAME.PID, the file a writer builds a ring in before renaming
//   it to NAME, when the writer died first. Full size (fallocated) before
//   the header is written, so it can hold the whole ring's huge pages.
// - TempRegistry: NAME.readers.PID, the same for a reader registry.
//   A temporary file is debris only when all of these hold: its name ends in
//   '.' and a pid; that pid is not a live process here (kill(pid, 0) says
//   ESRCH); nobody holds a lock on the file; and its first 8 bytes are zero
//   (not yet written) or a registry's magic. A file whose magic says it is a
//   complete ring is a ring (maybe a zombie, which its next writer reclaims),
//   never debris: a writer killed between writing its magic and renaming
//   leaves a ring named NAME.PID, which `ls` shows and only a person removes.
// - OrphanRegistry: NAME.readers, a valid reader registry of a ring instance
//   that is no longer at NAME (the ring was removed or re-created), with no
//   live reader in any slot.
// - DeadRing: NAME, a complete ring whose writers were killed: its "writers
//   open" word is set (writers_open.hpp: none closed it) and nobody holds a
//   lock on it. A ring its writer closed keeping it (keep_on_close,
//   `producer --keep`), a snapshot, a ring of another implementation or of
//   an earlier evring are never debris. Its registry goes with it.
// - TempSet, DeadSet: a ring set's (lib/set/ring_set_debris.hpp lists and
//   removes those, and the debris inside set directories).
// A creator in another pid namespace whose pid is free here is protected by
// its lock from the moment after it creates the file; only that instant is
// unguarded, and only across pid namespaces.
//
// remove_debris checks again before it unlinks, holding the file's flock
// (LOCK_EX) and verifying it is still the file at the name, so a file that
// became live meanwhile is left; registries go through the registry's
// removal protocol (lib/registry/registry_remove.cpp). Removing a file from hugetlbfs
// gives its huge pages back to the pool at once (nothing else maps it).
//
// Thread safety: free functions; no shared state.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring {

enum class DebrisKind { TempRing, TempRegistry, OrphanRegistry, DeadRing, TempSet, DeadSet };
// "temp-ring", "temp-registry", "orphan-registry", "dead-ring", "temp-set",
// "dead-set": stable, for --json.
const char* to_string(DebrisKind kind) noexcept;

struct DebrisEntry {
    std::string path;
    DebrisKind kind = DebrisKind::TempRing;
    std::uint64_t size = 0;       // st_size
    std::uint64_t allocated = 0;  // st_blocks * 512: what it holds (huge pages on hugetlbfs)
    pid_t pid = 0;                // a temporary file's creator; 0 for a registry
    std::string why;              // "its creator, pid 123, is gone", "ring 'x' is gone", ...
};

// The debris in `directory` (regular files only; nothing is locked or
// changed), sorted by path. With `ring_name`, only that name's: NAME.PID,
// NAME.readers.PID and NAME.readers (and NAME when dead). `dead_rings`
// false leaves out DeadRing (the members of a ring set that still has a
// writer: its next writer takes them over).
Result<std::vector<DebrisEntry>> list_debris(std::string_view directory, std::string_view ring_name = {},
                                             bool dead_rings = true);

// Removes `entry` (a ring file's kind: not TempSet or DeadSet) when it is
// still debris: true when removed, false when it is gone or no longer debris
// (left alone).
Result<bool> remove_debris(const DebrisEntry& entry);

// For a writer that has just created ring `ring_name` in `directory`:
// removes that name's debris, quietly (best effort).
void reclaim_debris_of(std::string_view directory, std::string_view ring_name) noexcept;

}  // namespace evring
