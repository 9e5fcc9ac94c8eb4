// lib/ring/writers_open.hpp — whether a ring's writers closed it, or were
// killed (private to the library; gc and its tests include it).
//
// The extension block's line 3 (ring_extension.hpp) holds, after the interest
// word, one word of evring's own: "writers open", file offset 4296
// (RingExtension::reserved3[0]). Every evring writer sets it to 1 when it
// creates or joins the ring, and the last writer to close clears it when it
// keeps the file (keep_on_close); a last writer that does not keep the file
// removes it. It is 0 in a ring so kept, in a snapshot (which copies only
// line 0 of the block), and in rings of earlier evring versions and other
// implementations. So a ring at its name with the word set that no writer
// holds (no flock, no writer marker: ring_locks.hpp) was left by writers that
// were killed, whatever they meant to do on close, and `evring gc` removes
// it (ring_debris.hpp); a ring its writers closed keeping it stays for its
// readers.
//
// Accesses: writers store it (shared_word.hpp, relaxed: it is read only by
// processes that then also probe the locks, and a writer holds its locks
// before it stores 1 and until after it stores 0) through their mapping at
// creation, joining and closing, never per event; gc reads it with pread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evring/ring/ring_extension.hpp"

namespace evring::detail {

inline constexpr std::uint64_t kWritersOpenOffset =
    kRingExtensionOffset + offsetof(RingExtension, reserved3);
static_assert(kWritersOpenOffset == 4296);

inline std::uint64_t& writers_open_word(RingExtension& extension) noexcept { return extension.reserved3[0]; }

}  // namespace evring::detail
