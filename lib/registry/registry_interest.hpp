// lib/registry/registry_interest.hpp — keeping a ring's interest word the union of
// what its live registered readers want (private to the library; tests
// include it). docs/interest.md has the protocol; the steps, labelled as at
// the call sites (shared_word.hpp), time running down:
//
//   registrant (after writing its slot, E1..E4)     writer, per typed event
//   -------------------------------------------     -----------------------
//   I1  take the interest lock (OFD, blocking)      ...commit of an earlier event:
//   I2  union of the live active slots' interest        W8 store slot seqno
//   I3  store it in the ring's word       relaxed       W9 fence (seq_cst, or a
//   I4  release the lock                                    compiler fence in a
//   I5  fence(seq_cst) and membarrier      [D]              process registered
//   I6  from = last_seqno + 1             relaxed           for membarrier)  [D]
//                                                   I7  load the word    relaxed
//                                                       skip or build the event
//                                                   W1  reserve its seqno
//
//   D (Dekker, as the doorbell's D2/D3 with W9): of I3->I6 and W1->I7, not
//   both loads miss the other side's store. So if a writer reserved a seqno
//   >= `from` (its W1 not seen at I6), every event it checks after that
//   reservation's commit (I7 after its W9) sees the word of I3 or a later
//   one. Later words include the registrant too: every recomputation holds
//   the lock (I1..I4), so it reads the registrant's slot, written before
//   its I1, and a leaving reader's recomputation cannot overwrite a newer
//   union with an older one. A dead reader's slot counts until a
//   recomputation finds its lock gone (more published, never less): the
//   interest keeper of every writer process (interest_keeper.hpp) looks
//   for dead readers while the word narrows, so that is within a keeper
//   tick of the death (K1..K4 there). A
//   writer that has reserved nothing >= `from` may still skip on the old
//   word: those events are not ordered after the registration (nothing the
//   registrant reads comes after them from that writer).
//
// Thread safety: free functions; the lock serialises across processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "evring/ring/interest.hpp"
#include "evring/ring/ring.hpp"
#include "registry/registry_file.hpp"

namespace evring::detail {

// The registry's interest lock, held for the object's lifetime.
class InterestLock {
public:
    // Blocks until held; an Error when the descriptor cannot take it (read-only).
    static Result<InterestLock> take(int registry_fd);
    // The same without waiting: nullopt while another description holds it.
    static Result<std::optional<InterestLock>> try_take(int registry_fd);
    InterestLock(InterestLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    InterestLock& operator=(InterestLock&&) = delete;
    ~InterestLock();

private:
    explicit InterestLock(int fd) noexcept : fd_(fd) {}
    int fd_ = -1;
};

// I2: the union of the interest of every active slot whose owner lives (a
// slot without a stable copy counts as wanting everything). `own_slot`: a
// slot locked through `file`'s own description, which the lock probe cannot
// see (OFD locks never conflict with their own description), or
// kNoOwnSlot. `truncated`: the registry faulted under us (the result is
// then kInterestEverything).
inline constexpr std::uint32_t kNoOwnSlot = UINT32_MAX;
std::uint64_t union_of_live_slots(const RegistryFile& file, std::uint32_t own_slot, bool& truncated);

// What a recomputation did.
struct InterestUpdate {
    std::uint64_t word = kInterestEverything;  // the union stored
    std::uint64_t from_seqno = 0;              // I6 (registrants only)
    std::string problem;                       // why the ring's word may not include the union
};

// I1..I4 for the ring at `ring_path` (the instance `file` belongs to),
// whose registry `file` is open read-write. With the registrant's `header`
// (its own mapping of the ring) and slot, also I5 and I6; a leaving reader
// or a reclaimer passes null (it only narrows the word: being late only
// publishes more). A registrant that cannot write the ring has a problem
// only when the word wants less than the union.
InterestUpdate recompute_interest(const RegistryFile& file, std::string_view ring_path,
                                  const RingHeader* header, std::uint32_t own_slot = kNoOwnSlot);

// The ring's interest word as a writer sees it (kInterestEverything on a
// ring whose writers do not honour interest).
std::uint64_t current_interest(const MappedRing& ring) noexcept;

}  // namespace evring::detail
