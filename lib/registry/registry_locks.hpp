// lib/registry/registry_locks.hpp — the locks that say which reader owns a registry
// slot and whether it lives (private to the library; tests include it).
//
// Each slot's bytes in the registry file carry OFD record locks (fcntl
// F_OFD_SETLK; they belong to an open file description, not to a process or
// thread, and the kernel drops them when the last descriptor of that
// description closes, so when the owner dies, however it dies):
//
//   [slot, slot + 1)            the claim byte
//   [slot + 1, slot + 256)      the life range
//
// - A registered reader holds a write lock on the whole slot (both parts)
//   for its lifetime. Taking it with F_OFD_SETLK is the claim: of two
//   registrants racing for one slot the kernel lets exactly one have it.
// - A lister that frees a dead reader's slot holds a write lock on the claim
//   byte only, for the moment of the rewrite: that excludes registrants and
//   other reclaimers, but not...
// - ...the liveness probe, F_OFD_GETLK on the life range, which takes
//   nothing, needs only read access, and reports only an owner: never a
//   reclaimer, so a lister cannot take a reclaim in progress for a live
//   reader. It asks the lock, not a pid, so it is right across pid
//   namespaces.
// Every registration and every lister opens the file itself, so each has its
// own open file description and their locks conflict even within one process.
//
// Thread safety: free functions without shared state.
#pragma once

#include <cstdint>

#include "evring/error.hpp"

namespace evring::detail {

// Write lock on the whole slot; false when another description holds any
// part of it. `fd` must be open read-write.
Result<bool> try_claim_slot(int fd, std::uint32_t index);

// Write lock on the claim byte only; false when held elsewhere.
Result<bool> try_lock_claim_byte(int fd, std::uint32_t index);

// Releases whatever this description holds on the slot.
void unlock_slot(int fd, std::uint32_t index) noexcept;

// Whether an owner holds the slot's life range (F_OFD_GETLK; read-only fd
// is enough).
Result<bool> slot_owner_alive(int fd, std::uint32_t index);

}  // namespace evring::detail
