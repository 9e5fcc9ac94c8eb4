// The floor's two steps (bench/ipc/floor_peer.cpp runs them in their own
// processes; bench/cost/event_cost.cpp counts their instructions under
// cachegrind): the writer stores the payload and then the sequence number
// (release) into the slot, with no clock, no atomic read-modify-write, no
// seqlock; the reader waits for the sequence number (acquire) and copies the
// payload. Not a usable protocol: a lapped reader is only detected, not made
// safe.
#pragma once

#include <cstring>

#include "evring/clock.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/shared_word.hpp"

namespace evring::ipc {

inline void floor_publish(const MappedRing& ring, std::uint64_t seq, std::uint64_t offset, const std::byte* source,
                          std::size_t size) noexcept {
    std::memcpy(ring.payload_buffer() + (offset & ring.payload_mask()), source, size);
    std::uint64_t* words = ring.descriptors()[(seq - 1) & ring.descriptor_mask()].words;
    // Relaxed: the release store of word 0 publishes it.
    shared::store_relaxed(words[3], offset);
    // Release: publishes the payload and word 3 (the floor's only ordering).
    shared::store_release(words[0], seq);
}

// The control for the clock (issue 25): the floor plus what RING01 asks of
// every writer and the floor leaves out, one wall-clock read per event
// stored in the slot's record_epoch_nanos word, with evring's own clock
// (clock.hpp: rdtsc scaled by an anchor). evring's writer over this one is
// evring's cost with the clock priced in on both sides.
inline void floor_publish_stamped(const MappedRing& ring, std::uint64_t seq, std::uint64_t offset,
                                  const std::byte* source, std::size_t size) noexcept {
    const std::uint64_t now = wall_clock_nanos();
    std::memcpy(ring.payload_buffer() + (offset & ring.payload_mask()), source, size);
    std::uint64_t* words = ring.descriptors()[(seq - 1) & ring.descriptor_mask()].words;
    // Relaxed: the release store of word 0 publishes them.
    shared::store_relaxed(words[2], now);
    shared::store_relaxed(words[3], offset);
    // Release: publishes the payload and words 2..3.
    shared::store_release(words[0], seq);
}

enum class FloorPoll { Ok, NotReady, Lapped };

// One poll for event `expected`: on Ok the payload is in `buffer` and
// `expected` has advanced; when lapped, `expected` jumps to what the slot
// holds and `lost` counts the skipped events.
inline FloorPoll floor_poll(const MappedRing& ring, std::uint64_t& expected, std::uint64_t& lost, std::byte* buffer,
                            std::size_t size) noexcept {
    const std::uint64_t* words = ring.descriptors()[(expected - 1) & ring.descriptor_mask()].words;
    // Acquire: pairs with the writer's release store of word 0.
    const std::uint64_t seq = shared::load_acquire(words[0]);
    if (seq < expected) return FloorPoll::NotReady;
    if (seq > expected) {
        lost += seq - expected;
        expected = seq;
        return FloorPoll::Lapped;
    }
    // Relaxed: ordered by the acquire load above.
    const std::uint64_t offset = shared::load_relaxed(words[3]);
    std::memcpy(buffer, ring.payload_buffer() + (offset & ring.payload_mask()), size);
    ++expected;
    return FloorPoll::Ok;
}

}  // namespace evring::ipc
