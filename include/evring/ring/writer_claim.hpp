// evring/ring/writer_claim.hpp — the writer claim: how the default publisher of a
// ring that one process owns reserves with plain stores, yet stays safe when
// a second writer appears.
//
// A reservation advances two shared words (W1 last_seqno, W2
// next_payload_byte). With several writers that takes an atomic
// read-modify-write, a locked instruction that waits for the writer's store
// buffer to drain (docs/performance.md). A ring's only writer can use a plain
// load and store instead. The claim lets a publisher do that without its
// caller promising to be alone (WriterSharing::Exclusive does promise):
//
// - Only a publisher of a ring held exclusively by this process's RingWriter
//   (MappedRing::held_exclusively) may claim, and only in a process
//   registered for membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) (doorbell.hpp
//   registers every writer process). At most one publisher holds the claim
//   (`claimed`), and of it only one thread, the first that reserves through
//   it (the claim's owner thread), takes the plain path.
// - Every other writer — a second publisher in any process, another thread
//   reserving through the claimed publisher, a forked child — revokes the
//   claim before its first atomic reservation. Revocation is sticky for the
//   ring's lifetime: from then on every publisher uses the atomics.
//
// The handshake is an asymmetric Dekker: the owner's side costs two plain
// stores and a load per event, the revoker's side a system call, once.
//
//   owner thread, each reserve          revoker, once
//   X1 busy := 1, relaxed               X5 revoked |= 1, seq_cst
//   X2 compiler fence                   X6 membarrier(GLOBAL_EXPEDITED):
//   X3 revoked, relaxed                    a full barrier on every CPU that
//      == 0: W1/W2 plain load + store      runs a registered process's thread
//   X4 busy := 0, release               X7 wait for busy == 0, acquire
//                                          (pairs with X4); then revoked |= 2
//
// (WriterClaim's words, ring_extension.hpp.) X6 and X7 are skipped when no
// claim is held: a claimant's seq_cst fence after setting `claimed` and the
// revoker's after X5 make one of them see the other.
//
// X6 orders each owner thread's X1..X3 against X5: either the owner's X3 runs
// after the barrier and sees revoked != 0 (it takes the atomic path), or
// X1 was made visible by the barrier and the revoker waits at X7 until the
// owner's plain stores of W1/W2 are done and published by X4. After X7 every
// W1/W2 update is an atomic read-modify-write.
//
// Liveness: X7 waits only while the owner thread is inside X1..X4 (a few
// instructions). A dead owner cannot leave `busy` set for long: its ring
// is then held by nobody, the waiter sees that and stops waiting, and a
// RingWriter that joins such a ring voids the dead claim first.
//
// Thread and process safety: claims are made and revoked through the words of
// the ring's extension block (ring_extension.hpp), shared by every process
// that maps the ring, so publishers of different mappings and processes see
// one claim. Writers of other implementations do not know the claim: like
// WriterSharing::Exclusive, the plain path relies on the ring being held
// exclusively (flock LOCK_EX, ring_writer.hpp), which such writers honour.
#pragma once

#include <cstdint>

#include "evring/ring/ring.hpp"
#include "evring/ring/ring_extension.hpp"

namespace evring {

// A per-thread number, never 0 once assigned, unique within the process; a
// forked child's thread gets a new one. Publisher::reserve compares the raw
// variable (0 on a thread that never reserved) with its claim owner's, which
// is never 0, so a thread without a token takes the cold path that assigns
// one. initial-exec: one %fs-relative load even in a shared library;
// constinit: no check for a thread-local initialiser on every reserve.
extern constinit thread_local std::uint64_t t_writer_thread_token [[gnu::tls_model("initial-exec")]];
std::uint64_t assign_writer_thread_token() noexcept;

inline std::uint64_t writer_thread_token() noexcept {
    const std::uint64_t token = t_writer_thread_token;
    return token != 0 ? token : assign_writer_thread_token();
}

// The claim words of a writable ring with evring's extension block; null for
// a ring without one (written by another implementation).
WriterClaim* writer_claim_of(const MappedRing& ring) noexcept;

// Claims the plain path for a new publisher of `ring`: true when this
// publisher now holds the claim. Otherwise revokes any claim another
// publisher holds (X5..X7), so the caller may use atomics from then on.
// May make system calls (membarrier, and sleeps while a claim's owner thread
// is mid-reservation); never from the hot path.
bool claim_or_revoke(const MappedRing& ring) noexcept;

// Revokes the claim of `ring` (X5..X7). Returns once no thread is on the
// plain path. Does nothing when the ring has no claim or it is revoked.
void revoke_writer_claim(const MappedRing& ring) noexcept;

// Gives the claim back (a claiming publisher's destructor), so that the next
// publisher may claim it. Leaves a revoked claim revoked.
void release_writer_claim(const MappedRing& ring) noexcept;

// For a writer joining a ring whose previous writers all died: a claim they
// held is void (nobody can be mid-reservation), so it is revoked without a
// handshake.
void void_dead_writer_claim(const MappedRing& ring) noexcept;

}  // namespace evring
