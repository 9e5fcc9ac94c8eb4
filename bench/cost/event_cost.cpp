// evring-event-cost: one process that writes WRITE events of SIZE bytes into
// a fresh ring with one peer's writer (evring's default publisher, the
// classic RING01 peer, or the floor), and then reads the first READ of them
// back with the same peer's reader. scripts/bench-counts runs it under
// cachegrind twice with different counts of one side (the other's fixed) and
// takes the difference, so set-up, start-up, the other side and exit cancel
// out and what is left is the per-event cost of one side:
// instructions, and (with the simulated caches the script pins) the cache
// lines each side writes and reads (docs/performance.md, "Deterministic
// counts").
//
//   evring-event-cost PEER SIZE WRITE READ DIR
//     PEER   evring | classic | floor | floor_clock | evring_lapped | evring_batch16[_events]; READ <= WRITE;
//            DIR for the ring file
//
// evring_batch16: evring's default publisher publishing batches of 16 events
// of one type whose payloads lie back to back (an array of structs: the
// array form of Publisher::publish_batch, typed publish_many's path), each
// with its own flow tag; WRITE a multiple of 16; read back as evring's.
// evring_batch16_events: the same through publish_batch of BatchEvents (each
// event's payload wherever the caller has it).
//
// evring_lapped: evring's writer past its first lap, as a writer runs for
// most of its life (every reservation then overwrites older bytes, which the
// window must cover): a ring with a 1 MiB payload buffer that the publisher
// fills once before the caches are evicted; the measured events lap it again
// (READ must be 0). Only its instruction count means anything: the lines it
// writes are not new.
//
// Per event the writer does what the harness's writer does apart from its
// latency stamp: evring reserve + set type and flow tag + memcpy + commit
// (Publisher on a ring the process created with RingWriter::create, as an
// application does); classic publish_classic; floor floor_publish;
// floor_clock floor_publish_stamped (the floor plus one wall-clock read per
// event, the clock's control). The reader: evring Iterator::try_next +
// copy_payload on a read-only mapping of the ring; classic poll_classic; floor and
// floor_clock floor_poll. The ring is never lapped
// (WRITE fits), so every shared line a side touches is touched for the
// first time in its phase (the caches are evicted before each phase). Exits
// 1 if the reader did not get every event it was to read.
#include <time.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "evring/clock.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "ipc/classic_ring.hpp"
#include "ipc/floor_ring.hpp"
#include "support/bench_ring.hpp"

namespace {

using namespace evring;
using namespace evring::ipc;

// Smaller than the default ring (2^20, 256 MiB) only to start faster under
// valgrind; large enough for the event counts the script uses.
constexpr unsigned kDescriptorShift = 17;
constexpr unsigned kPayloadShift = 26;
constexpr std::size_t kEvictBytes = 32u << 20;  // 4x the LL the script simulates
constexpr unsigned kLappedPayloadShift = 20;

// Writes kEvictBytes of private memory never touched before, so that no line
// of the ring is left in any simulated cache when the next phase starts. Fresh
// memory every time (kept until exit): re-using a buffer would make its misses
// depend on what the phase before left in the cache, which the difference of
// two runs would then count as the phase's own.
void evict_caches() {
    static std::vector<std::vector<std::uint64_t>> kept;
    std::vector<std::uint64_t>& junk = kept.emplace_back(kEvictBytes / 8);
    for (std::size_t i = 0; i < junk.size(); i += 8) junk[i] = i;
}

// Each peer's loops are functions of their own, never inlined into main:
// inlined, their register allocation moved with whatever else main held, and
// an unrelated change to the program moved a peer's count by 1-3 instructions.
[[gnu::noinline]] std::uint64_t write_evring(Publisher& publisher, const std::byte* source, std::size_t size, std::uint64_t events) {
    for (std::uint64_t seq = 1; seq <= events; ++seq) {
        Reservation r = publisher.reserve(size);
        r.descriptor().event_type = kDataEvent;
        r.descriptor().content_ext[0] = seq;
        std::memcpy(r.payload(), source, size);
        publisher.commit(r);
    }
    return events;
}

// Batches of kBatch events (Publisher::publish_batch): per batch the flow
// tag of each event is set, as write_evring sets one per event, and the
// batch is published in one call.
constexpr std::size_t kBatch = 16;
[[gnu::noinline]] std::uint64_t write_evring_batch(Publisher& publisher, const std::byte* source, std::size_t size,
                                                   std::uint64_t events) {
    BatchEvent batch[kBatch];
    for (BatchEvent& e : batch) e = {source, {}, static_cast<std::uint32_t>(size), kDataEvent};
    for (std::uint64_t seq = 1; seq + kBatch - 1 <= events; seq += kBatch) {
        for (std::size_t i = 0; i < kBatch; ++i) batch[i].content_ext[0] = seq + i;
        if (publisher.publish_batch(batch) == 0) return seq - 1;
    }
    return events - events % kBatch;
}

// The same through the batch of one type whose payloads lie back to back
// (an array of structs: typed_publish.hpp's publish_many), each event's flow
// tag set per batch.
[[gnu::noinline]] std::uint64_t write_evring_batch_array(Publisher& publisher, const std::byte* source,
                                                         std::size_t size, std::uint64_t events) {
    std::vector<std::byte> payloads(size * kBatch);
    for (std::size_t i = 0; i < kBatch; ++i) std::memcpy(payloads.data() + i * size, source, size);
    std::array<std::uint64_t, 4> flows[kBatch] = {};
    for (std::uint64_t seq = 1; seq + kBatch - 1 <= events; seq += kBatch) {
        for (std::size_t i = 0; i < kBatch; ++i) flows[i][0] = seq + i;
        if (publisher.publish_batch(kDataEvent, payloads.data(), static_cast<std::uint32_t>(size), kBatch, flows) == 0)
            return seq - 1;
    }
    return events - events % kBatch;
}

[[gnu::noinline]] std::uint64_t read_evring(const std::string& path, std::byte* buffer, std::size_t buffer_size,
                          std::uint64_t events) {
    // Mapped as the floor's reader maps it, not with RingReader::open: that
    // reads /proc/locks (the writer's pid), whose length is other processes'
    // business, and moved the difference of two runs by up to 10
    // instructions per event. Iterator and copy_payload do the same either way.
    const MappedRing ring = bench::map_ring(path, Access::ReadOnly);
    Iterator it(ring);
    it.seek(1);
    EventDescriptor event{};
    std::uint64_t ok = 0;
    for (std::uint64_t i = 0; i < events; ++i) {
        if (it.try_next(event) != NextResult::Success) break;
        if (copy_payload(ring, event, buffer, buffer_size) == PayloadResult::Ok) ++ok;
    }
    return ok;
}

[[gnu::noinline]] std::uint64_t write_classic(ClassicRing& ring, const std::byte* source, std::size_t size,
                                                std::uint64_t events) {
    for (std::uint64_t seq = 1; seq <= events; ++seq) publish_classic(ring, source, size, kDataEvent, seq);
    return events;
}

// floor_publish, or floor_publish_stamped (the clock's control).
[[gnu::noinline]] std::uint64_t write_floor(const MappedRing& ring, const std::byte* source, std::size_t size,
                                              std::uint64_t events, bool stamped) {
    const std::size_t stride = (size + 15) & ~std::size_t{15};
    if (stamped) {
        for (std::uint64_t seq = 1; seq <= events; ++seq)
            floor_publish_stamped(ring, seq, (seq - 1) * stride, source, size);
    } else {
        for (std::uint64_t seq = 1; seq <= events; ++seq) floor_publish(ring, seq, (seq - 1) * stride, source, size);
    }
    return events;
}

[[gnu::noinline]] std::uint64_t read_classic(const std::string& path, std::byte* buffer, std::size_t buffer_size,
                           std::uint64_t events) {
    ClassicRing ring;
    map_classic(path, false, ring);
    std::uint64_t expected = 1, lost = 0, ok = 0;
    for (std::uint64_t i = 0; i < events; ++i)
        if (poll_classic(ring, expected, lost, buffer, buffer_size) == ClassicPoll::Ok) ++ok;
    return ok;
}

[[gnu::noinline]] std::uint64_t read_floor(const std::string& path, std::byte* buffer, std::size_t size, std::uint64_t events) {
    const MappedRing ring = bench::map_ring(path, Access::ReadOnly);
    std::uint64_t expected = 1, lost = 0, ok = 0;
    for (std::uint64_t i = 0; i < events; ++i)
        if (floor_poll(ring, expected, lost, buffer, size) == FloorPoll::Ok) ++ok;
    return ok;
}

// The clock calibrates over its first 3 ms and re-anchors at 12 and 48 ms
// (clock.hpp), whenever a call notices it is due: time-dependent work that
// would not cancel between two runs. One call per step, with sleeps between,
// takes the process past all of it with the same instructions every time;
// what remains is a re-anchor every 50 ms of the measured loop's real time.
void settle_clock() {
    for (int ms : {5, 10, 40, 10}) {
        (void)wall_clock_nanos();
        const timespec pause{0, ms * 1'000'000L};
        ::nanosleep(&pause, nullptr);
    }
    (void)wall_clock_nanos();
}

int usage(const char* why) {
    std::fprintf(stderr, "evring-event-cost: %s\nusage: evring-event-cost evring|classic|floor|floor_clock|evring_lapped|evring_batch16[_events] SIZE WRITE READ DIR\n",
                 why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) return usage("expected 5 arguments");
    const std::string peer = argv[1];
    const std::size_t size = std::strtoull(argv[2], nullptr, 10);
    const std::uint64_t events = std::strtoull(argv[3], nullptr, 10);
    const std::uint64_t to_read = std::strtoull(argv[4], nullptr, 10);
    if (peer != "evring" && peer != "classic" && peer != "floor" && peer != "floor_clock" && peer != "evring_lapped" &&
        peer != "evring_batch16" && peer != "evring_batch16_events")
        return usage(("unknown peer " + peer).c_str());
    if (peer.starts_with("evring_batch16") && events % kBatch != 0) return usage("evring_batch16: WRITE must be a multiple of 16");
    const bool lapped = peer == "evring_lapped";
    const std::size_t stride = (size + 15) & ~std::size_t{15};
    const std::uint64_t prefill = lapped ? (std::uint64_t{1} << kLappedPayloadShift) / stride + 1 : 0;
    if (size < 16 || size > (1u << 20) || events == 0 || events + prefill >= (1u << kDescriptorShift) ||
        (!lapped && events * stride >= (std::uint64_t{1} << kPayloadShift)) || to_read > events ||
        (lapped && (to_read != 0 || size > 4096)))
        return usage("SIZE must be 16 B..1 MiB, WRITE must fit the ring without lapping it, READ <= WRITE "
                     "(evring_lapped: SIZE at most 4 KiB, READ 0)");
    const std::string path = std::string(argv[5]) + "/evring-event-cost-" + std::to_string(::getpid());

    PageBuffer source(size + 16, std::byte{0x5a});
    PageBuffer buffer(std::max<std::size_t>(size, 1u << 16));
    RingWriter owner = bench::create_owned_ring(path, kDescriptorShift, lapped ? kLappedPayloadShift : kPayloadShift);
    // Kept mapped until exit: memory mapped later would otherwise be given
    // its addresses, and so the lines the writer left in the simulated cache.
    ClassicRing classic;
    settle_clock();
    std::uint64_t written = 0;
    std::optional<Publisher> lapping;
    if (lapped) {
        lapping.emplace(owner.ring());
        write_evring(*lapping, source.data(), size, prefill);  // the first lap, not measured
    }
    evict_caches();
    if (lapped) {
        written = write_evring(*lapping, source.data(), size, events);
    } else if (peer == "evring") {
        Publisher publisher(owner.ring());  // the default: claims the ring it owns
        written = write_evring(publisher, source.data(), size, events);
    } else if (peer == "evring_batch16") {
        Publisher publisher(owner.ring());
        written = write_evring_batch_array(publisher, source.data(), size, events);
    } else if (peer == "evring_batch16_events") {
        Publisher publisher(owner.ring());
        written = write_evring_batch(publisher, source.data(), size, events);
    } else if (peer == "classic") {
        map_classic(path, true, classic);
        written = write_classic(classic, source.data(), size, events);
    } else {
        written = write_floor(owner.ring(), source.data(), size, events, peer == "floor_clock");
    }
    evict_caches();
    std::uint64_t read = 0;
    if (to_read > 0) {
        if (peer == "evring" || peer.starts_with("evring_batch16")) read = read_evring(path, buffer.data(), buffer.size(), to_read);
        if (peer == "classic") read = read_classic(path, buffer.data(), buffer.size(), to_read);
        if (peer == "floor" || peer == "floor_clock") read = read_floor(path, buffer.data(), size, to_read);
    }
    std::printf("peer %s size %zu written %llu read %llu clock %s checksum %d\n", peer.c_str(), size,
                static_cast<unsigned long long>(written), static_cast<unsigned long long>(read),
                to_string(wall_clock_source()), static_cast<int>(buffer.data()[size - 1]));
    return read != to_read || written != events ? 1 : 0;
}
