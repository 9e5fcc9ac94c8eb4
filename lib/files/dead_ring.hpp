// lib/files/dead_ring.hpp — a ring file's writers: alive, gone having kept it,
// or killed; and removing a ring no writer holds (private to the library:
// ring_debris.cpp's DeadRing, `evring rm`).
//
// Removal takes the ring's flock (LOCK_EX, never waiting) on a descriptor of
// its own, checks that the file is still the one at the name, and unlinks it
// while holding the lock, as a writer reclaiming a zombie does
// (ring_writer.hpp): a live writer holds the flock (so removal fails with
// EBUSY naming it), and a writer reclaiming the ring at that moment either
// holds it first (removal leaves the ring) or finds the name free once
// removal is done. The ring's reader registry then goes through its removal
// protocol (registry_remove.cpp): removed unless a reader still uses it, in
// which case the last reader removes it.
//
// Thread safety: free functions; no shared state.
#pragma once

#include <sys/stat.h>

#include <string>

#include "evring/error.hpp"

namespace evring::detail {

enum class RingWriters {
    NotARing,  // not a valid RING01 ring file
    Live,      // a writer holds it (or someone holds a lock on it right now)
    Kept,      // no writer; the last one closed it keeping the file, or an
               // earlier evring, another implementation or a snapshot made it
    Killed,    // no writer, and none closed it (writers_open.hpp)
};

// What the ring file `fd` (whose fstat is `st`) says, taking no lock.
RingWriters ring_writers(int fd, const struct stat& st);

// Removes the ring `name` in `dirfd` (`path` for messages) when no writer
// holds it, and with `only_killed` only when its writers were killed: true
// when removed; false when it changed meanwhile (left alone); EBUSY naming
// the writer when a live writer holds it; ENOENT when nothing is there;
// EINVAL when it is not a ring.
Result<bool> remove_unheld_ring(int dirfd, const std::string& name, const std::string& path, bool only_killed);

}  // namespace evring::detail
