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
    // Timed like the evring and classic writers: the median of the batches'
    // ns per event (the floor used to report the whole run's mean, which one
    // preempted batch raises and a median does not).
    const std::uint64_t batches = std::max<std::uint64_t>(options.count("batches", 1), 1);
    const bool clock = options.text("clock", "0") == "1";  // floor_publish_stamped
    PageBuffer source(size, std::byte{0x5a});
    std::vector<double> batch_ns;
    wait_for_gate(options);
    const std::uint64_t per_batch = std::max<std::uint64_t>(events / batches, 1);
    std::uint64_t seq = 1, offset = 0;
    const auto publish = [&] {
        if (clock)
            floor_publish_stamped(ring, seq, offset, source.data(), size);
        else
            floor_publish(ring, seq, offset, source.data(), size);
        ++seq;
        offset += stride;
    };
    while (seq <= events) {
        const std::uint64_t batch_start = wall_clock_nanos();
        const std::uint64_t batch_end = std::min(events, seq - 1 + per_batch);
        const std::uint64_t first = seq;
        while (seq <= batch_end) publish();
        batch_ns.push_back(double(wall_clock_nanos() - batch_start) / double(seq - first));
    }
    publish();  // one past the last, so that the reader's last poll finds it
    ResultLine()
        .add("writer_ns_per_event", percentile(batch_ns, 0.5))
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
