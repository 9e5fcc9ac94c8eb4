// lib/registry/registry_slot.hpp — rewriting and copying a reader registry slot under
// its seqlock (private to the library; tests include it).
//
// The one writer of a slot is the process holding the slot's lock
// (reader_registry_format.hpp); a lister copies the slot at any time. Step
// labels as at the call sites (shared_word.hpp); time runs down:
//
//   owner: rewrite the slot                      lister: copy the slot
//   -----------------------                      ---------------------
//   E1  version = odd (v + 1, or v + 2 when
//         a dead owner left it odd)   relaxed
//   E2  fence(release)                [B]
//   E3  the fields                    relaxed
//   E4  version = odd + 1             [A] release
//                                                e1  v1 = version        [A] acquire
//                                                      odd: being rewritten, retry
//                                                e2  copy every word         relaxed
//                                                e3  fence(acquire)      [B]
//                                                e4  v2 = version            relaxed
//                                                      v2 == v1: a consistent copy
//
//   A: a lister that sees E4's even version at e1 sees every field E3 stored.
//   B: if any word copied at e2 came from a later rewrite (its E3), e4 sees
//      that rewrite's odd version (E1) or a later one, never v1.
//
// Versions only grow, across owners too (a new owner continues from the
// value it finds), so equal versions mean no rewrite overlapped the copy.
// The owner reads its own slot's version with a relaxed load: nobody else
// writes the slot while it holds the lock.
//
// Thread safety: begin/end pairs run on the owner's thread only; copies from
// any thread or process.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "registry/reader_registry_format.hpp"
#include "evring/ring/shared_word.hpp"

namespace evring::detail {

// E1, E2. Returns the odd version to hand to end_slot_write.
inline std::uint64_t begin_slot_write(RegistrySlot& slot) noexcept {
    const std::uint64_t v = shared::load_relaxed(slot.version);  // only we write it
    const std::uint64_t odd = (v & 1) == 0 ? v + 1 : v + 2;
    shared::store_relaxed(slot.version, odd);  // E1
    shared::fence_release();                   // E2, pairs with e3 [B]
    return odd;
}

// E4.
inline void end_slot_write(RegistrySlot& slot, std::uint64_t odd) noexcept {
    shared::store_release(slot.version, odd + 1);  // E4, pairs with e1 [A]
}

// E3 of the progress line: what a reader publishes every so many events.
inline void store_progress(RegistrySlot& slot, std::uint64_t next_seqno, std::uint64_t lost,
                           std::uint64_t abandoned, std::uint64_t heartbeat_ns) noexcept {
    shared::store_relaxed(slot.next_seqno, next_seqno);
    shared::store_relaxed(slot.lost, lost);
    shared::store_relaxed(slot.abandoned, abandoned);
    shared::store_relaxed(slot.heartbeat_ns, heartbeat_ns);
    shared::store_relaxed(slot.updates, shared::load_relaxed(slot.updates) + 1);
}

// e1 alone: the version a copy starts from, or false when odd.
inline bool begin_slot_copy(const RegistrySlot& slot, std::uint64_t& version) noexcept {
    version = shared::load_acquire(slot.version);  // e1, pairs with E4 [A]
    return (version & 1) == 0;
}

// e2..e4: copies every word, then re-checks the version. True: `out` is one
// consistent entry as of `version`.
bool finish_slot_copy(const RegistrySlot& slot, std::uint64_t version, RegistrySlot& out) noexcept;

// Up to `attempts` tries of e1..e4 (yielding between them). False when the
// slot was odd or changing every time (an owner stopped mid-rewrite).
bool copy_slot(const RegistrySlot& slot, RegistrySlot& out, int attempts = 64) noexcept;

// Text packed into a slot's words (E3): at most 8 * words.size() - 1
// characters, each kept when printable ASCII (0x20..0x7e) and replaced by '?'
// otherwise, then NUL padding. Bytes go into words little-endian.
void pack_text(std::span<std::uint64_t> words, std::string_view text) noexcept;

// The text held in copied words (a private copy), sanitised the same way.
// `terminated` is false when no NUL ends it within the field (a damaged entry).
std::string unpack_text(std::span<const std::uint64_t> words, bool& terminated);

// What pack_text keeps of `text` in a field of `bytes` bytes.
std::string sanitise_reader_text(std::string_view text, std::size_t bytes);

}  // namespace evring::detail
