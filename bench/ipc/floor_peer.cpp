// The floor the harness compares evring with: the same ring file and the same
// pinning, but nothing of a protocol (floor_ring.hpp has the two steps). What
// is left is the cost of moving the cache lines between cores.
#include <vector>

#include "ipc/floor_ring.hpp"
#include "ipc/peers.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

int run_floor_writer(const PeerOptions& options) {
    const MappedRing ring = bench::map_ring(options.text("path"), Access::ReadWrite);
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::size_t stride = (size + 15) & ~std::size_t{15};
    const std::uint64_t events = options.count("events", 1'000'000);
    PageBuffer source(size, std::byte{0x5a});
    wait_for_gate(options);
    const std::uint64_t start = wall_clock_nanos();
    std::uint64_t offset = 0;
    for (std::uint64_t seq = 1; seq <= events + 1; ++seq, offset += stride) {
        floor_publish(ring, seq, offset, source.data(), size);
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
    print_ready();
    std::uint64_t expected = 1, received = 0, lost = 0, first_ns = 0, not_ready = 0;
    while (expected <= events) {
        const FloorPoll poll = floor_poll(ring, expected, lost, buffer.data(), size);
        not_ready += poll == FloorPoll::NotReady;
        if (poll != FloorPoll::Ok) continue;
        if (received++ == 0) first_ns = wall_clock_nanos();
    }
    const double elapsed = double(wall_clock_nanos() - first_ns);
    ResultLine()
        .add("received", double(received))
        .add("lost", double(lost))
        .add("reader_events_per_s", received > 1 ? double(received) / elapsed * 1e9 : 0)
        .add("not_ready_per_event", received > 0 ? double(not_ready) / double(received) : 0)
        .print();
    return 0;
}

}  // namespace evring::ipc
