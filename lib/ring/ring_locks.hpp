// lib/ring/ring_locks.hpp — the locks that say who writes a ring, and probes that
// tell whether a writer lives (private to the library; tests include it).
//
// Each writer holds two locks on its ring file for its whole lifetime, both
// attached to its open file description (so they survive the rename of the
// temporary file into place and vanish when the writer dies):
//   1. an flock: LOCK_EX for the exclusive writer, LOCK_SH for shared writers.
//      This is what decides ownership (creation, zombie reclaim).
//   2. a "writer marker": an OFD record lock on byte 0 (F_WRLCK for the
//      exclusive writer, F_RDLCK for shared writers). Readers test for it with
//      F_OFD_GETLK, which reports a conflicting lock without taking anything,
//      so a probe can never block or disturb a writer, needs only read
//      permission, and does not depend on pids (it works across pid
//      namespaces, where /proc/locks hides or zeroes foreign pids).
// Pids come from /proc/locks (flock entries carry the locker's pid) and are
// only meaningful inside the reader's pid namespace.
//
// Thread safety: free functions without shared state.
#pragma once

#include <sys/types.h>

#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring::detail {

enum class LockKind { Flock, Posix, Ofd, Other };

// One granted lock on a file, from /proc/locks.
struct LockHolder {
    LockKind kind = LockKind::Other;
    bool exclusive = false;  // WRITE rather than READ
    pid_t pid = 0;           // -1 for OFD locks; 0 when not visible in our pid namespace
};

// The granted (not waiting) locks listed in /proc/locks text for the file
// with this device and inode.
std::vector<LockHolder> parse_proc_locks(std::string_view text, dev_t device, ino_t inode);

// The locks currently held on the file `fd` refers to.
Result<std::vector<LockHolder>> lock_holders(int fd);

// The pids holding an flock on the file: the exclusive holder first, no
// duplicates, no pid that is invisible here (0) or unknown (-1).
std::vector<pid_t> flock_holder_pids(const std::vector<LockHolder>& holders);

// Takes the writer marker (see above) on `fd`, which must be open read-write.
Status hold_writer_marker(int fd, bool exclusive, std::string_view path);

// Whether any evring writer holds its marker on the file (F_OFD_GETLK).
Result<bool> writer_marker_present(int fd);

// Whether an flock conflicting with LOCK_SH (an exclusive writer's) is held:
// tries LOCK_SH|LOCK_NB on a separate open file description of the same file
// and releases it at once. Used for writers that hold no marker.
Result<bool> exclusive_flock_held(int fd);

// The writer-liveness answer used by readers: the marker probe, then (when
// no marker is held) the flock probe.
bool any_writer_alive(int fd);

// A new, read-only open file description of the file `fd` refers to (via
// /proc/self/fd), so locks taken on it are separate from fd's.
Result<int> reopen_read_only(int fd);

// pidfd_open(2) through syscall(2); -1 with errno on failure.
int open_pidfd(pid_t pid) noexcept;

}  // namespace evring::detail
