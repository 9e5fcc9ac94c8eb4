// The floor the harness compares evring with: the same ring file and the same
// pinning, but the writer only stores the payload and then the sequence number
// (release) into the slot, with no clock, no atomic read-modify-write, no
// seqlock; the reader waits for the sequence number (acquire) and copies the
// payload. What is left is the cost of moving the cache lines between cores.
// Not a usable protocol: a lapped reader is only detected, not made safe.
#include <cstring>
#include <vector>

#include "evring/shared_word.hpp"
#include "ipc/peers.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

int run_floor_writer(const PeerOptions& options) {
    const MappedRing ring = bench::map_ring(options.text("path"), Access::ReadWrite);
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::size_t stride = (size + 15) & ~std::size_t{15};
    const std::uint64_t events = options.count("events", 1'000'000);
    PageBuffer source(size, std::byte{0x5a});
    DescriptorSlot* slots = ring.descriptors();
    std::byte* payload = ring.payload_buffer();
    wait_for_gate(options);
    const std::uint64_t start = wall_clock_nanos();
    std::uint64_t offset = 0;
    for (std::uint64_t seq = 1; seq <= events + 1; ++seq, offset += stride) {
        std::memcpy(payload + (offset & ring.payload_mask()), source.data(), size);
        std::uint64_t* words = slots[(seq - 1) & ring.descriptor_mask()].words;
        // Relaxed: the release store of word 0 publishes it.
        shared::store_relaxed(words[3], offset);
        // Release: publishes the payload and word 3 (the floor's only ordering).
        shared::store_release(words[0], seq);
    }
    const double elapsed = double(wall_clock_nanos() - start);
    ResultLine()
        .add("writer_ns_per_event", elapsed / double(events + 1))
        .add("events", double(events))
        .print();
    return 0;
}

int run_floor_reader(const PeerOptions& options) {
    const MappedRing ring = bench::map_ring(options.text("path"), Access::ReadOnly);
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::uint64_t events = options.count("events", 1'000'000);
    PageBuffer buffer(size);
    const DescriptorSlot* slots = ring.descriptors();
    print_ready();
    std::uint64_t expected = 1, received = 0, lost = 0, first_ns = 0;
    while (expected <= events) {
        const std::uint64_t* words = slots[(expected - 1) & ring.descriptor_mask()].words;
        // Acquire: pairs with the writer's release store of word 0.
        const std::uint64_t seq = shared::load_acquire(words[0]);
        if (seq < expected) continue;
        if (seq > expected) {  // lapped: skip to what is there now
            lost += seq - expected;
            expected = seq;
            continue;
        }
        // Relaxed: ordered by the acquire load above.
        const std::uint64_t offset = shared::load_relaxed(words[3]);
        std::memcpy(buffer.data(), ring.payload_buffer() + (offset & ring.payload_mask()), size);
        if (received++ == 0) first_ns = wall_clock_nanos();
        ++expected;
    }
    const double elapsed = double(wall_clock_nanos() - first_ns);
    ResultLine()
        .add("received", double(received))
        .add("lost", double(lost))
        .add("reader_events_per_s", received > 1 ? double(received) / elapsed * 1e9 : 0)
        .print();
    return 0;
}

}  // namespace evring::ipc
