// lib/set/ring_set_debris.hpp — what killed processes leave of ring sets, a
// whole directory's debris (`evring gc`, `ls --all`; docs/hugepages.md), and
// removing a ring set (`evring rm`).
//
// Beyond a ring directory's own files (ring_debris.hpp):
// - TempSet: NAME.PID.set, the directory a set's creator builds the set in
//   before renaming it to NAME (ring_set.hpp), when the creator died first:
//   its pid is gone here and nobody holds its manifest's lock. It holds the
//   manifest (a huge page on hugetlbfs).
// - DeadSet: NAME/, a set no writer holds (nobody holds its manifest's
//   lock) with a member whose writer was killed (the member's "writers
//   open" word is set: writers_open.hpp) and none held, or with no member
//   ring at all (its writers died before taking one: nothing to read). A set
//   kept on purpose (keep_on_close: its members' words are clear) is not
//   debris. Removing it removes the whole directory.
// - Inside any other set directory: its files' debris as list_debris finds
//   it (a member's temporary file left by a writer killed while creating
//   it, which holds a whole member ring; registries), members whose writer
//   was killed excepted while the set has a writer: its next writer takes
//   them over.
// Removal checks again holding the manifest's flock (LOCK_EX), which every
// set writer holds shared for its lifetime, and that the directory is still
// the one at the name; a writer joining meanwhile finds the name free or
// holds the lock first (then nothing is removed).
//
// Thread safety: free functions; no shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "files/ring_debris.hpp"

namespace evring {

// The debris of `directory` and of the ring sets in it, sorted by path.
Result<std::vector<DebrisEntry>> list_directory_debris(std::string_view directory);

// Removes an entry of list_directory_debris when it is still debris (as
// remove_debris, for every kind).
Result<bool> remove_directory_debris(const DebrisEntry& entry);

// Removes the ring set at `path` (its directory): every member, registry and
// temporary file, the manifest, the directory. Refused with EBUSY, naming
// the pid, when a set writer holds it or a member has a live writer; EINVAL
// when `path` is not a ring set directory.
Status remove_ring_set(const std::string& path);

}  // namespace evring
