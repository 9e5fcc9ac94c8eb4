// lib/registry/interest_keeper.hpp — a writer process's keeper of its rings'
// interest words: a dead reader's interest stops counting within a tick of
// its death (private to the library; tests include it).
//
// Why it exists. The interest word (docs/interest.md) is recomputed by
// whoever changes which registry slots are active: registrants, leaving
// readers, listers that reclaim. A reader killed by SIGKILL leaves nobody to
// recompute, so with no other reader coming or going its narrow interest went
// on suppressing events for good, with no live reader at all. Writers must
// not pay for noticing: their check stays one relaxed load per event (I7,
// publisher_inline.hpp). So every process holding a RingWriter of a ring that
// announces the doorbell runs one keeper thread, which:
//   - while no word of its rings narrows, sleeps on the futex of each word's
//     high half (where the tag is): no wake-up and no system call until a
//     registrant that narrowed a word wakes it (K0 below, after I3);
//   - while some word narrows, looks every kKeeperTick at each narrowing
//     ring's registry (K1..K4): a slot whose owner's lock is gone no longer
//     counts, and the word is recomputed without it. The lock probe is how a
//     death is known at all (registry_locks.hpp), so this is within a tick
//     of the earliest moment it can be known.
//
//   keeper, per tick and narrowing ring          (any registrant, as before)
//   -------------------------------------        -------------------------
//   K1  load the word (relaxed); stop unless     I1 lock, I2 union,
//       it narrows                               I3 store, K0 FUTEX_WAKE,
//   K2  union of the live slots, unlocked (a     I4 unlock
//       hint: stop when it equals the word)
//   K3  I1 tried (never waited for: a registrant stopped while holding the
//       lock must not stop the keeper; Busy, next tick), I2, I3, I4: a
//       leaving reader's recomputation, so never narrower than the union of
//       the live slots, and ordered with every other recomputation by the lock
//   K4  no valid registry of this ring instance (gone, damaged, another
//       instance's, truncated under us), or no right to take the lock:
//       compare-and-swap of the word seen at K1 to "everything". It only
//       widens, so it is safe against any recomputation: the CAS fails when
//       one stored meanwhile, and one storing later stores a true union.
//
// The keeper's mappings and descriptors are its own (each watched ring's
// header section is mapped through a new open file description of the
// ring, never the writer's: a mapping keeps its description, and with it the
// writer's locks, alive), so closing a RingWriter releases the writer's locks
// at once and never waits for a look of the keeper's; it waits at most a
// second for the keeper to take the change in and go back to sleep
// (settled), so no look of the keeper's runs in the writer's time after
// RingWriter::create or close returns. The thread exits when the process holds no
// watched ring, and the next RingWriter starts it again; in a child forked
// without exec, the first watch starts afresh (the parent's thread is not
// there). It blocks every asynchronous signal, so signals go to the
// program's own threads.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "evring/ring/ring.hpp"

namespace evring::detail {

class RegistryFile;

// How often a narrowing ring's registry is looked at.
inline constexpr std::chrono::milliseconds kKeeperTick{100};

// Starts keeping the interest word of `ring`, which this process writes
// (mapped read-write, open as `ring_fd`, at `ring_path`), until
// unwatch_interest(ring_fd), which must come before the descriptor is closed.
// Nothing is kept for a ring whose writers do not honour interest, nor when
// keeping is impossible (the mapping or the thread could not be made: the
// word then narrows until the next recomputation, as before the keeper).
void watch_interest(const std::string& ring_path, int ring_fd, const MappedRing& ring) noexcept;
void unwatch_interest(int ring_fd) noexcept;

// K0: wakes the keepers sleeping on `word` (a ring's interest word, through
// any shared mapping of it). For registrants, after I3.
void wake_interest_keepers(std::uint64_t& word) noexcept;

// What K1..K4 did to one ring's word.
enum class KeeperOutcome {
    Unchanged,   // it does not narrow, or it is the union of the live slots
    Recomputed,  // K3: stored the union of the live slots under the lock
    Widened,     // K4: stored "everything" (or another recomputation won the CAS)
    Busy,        // K3: someone held the interest lock; the next tick tries again
};
// K1..K4 for the word `word` (a mapping of the caller's), whose ring's
// registry is `registry` when it is valid and of this ring instance, else null.
KeeperOutcome keep_interest(const RegistryFile* registry, std::uint64_t& word);

// For tests that need a dead reader's interest to stay until they look:
// false pauses every keeper of this process (the ring is then as without
// one); true resumes them.
void set_interest_keeping(bool on) noexcept;

}  // namespace evring::detail
