// A writer with a reader close behind it, in one process: the writer (the
// benchmark thread, on cpu 0) publishes flat out through the default
// publisher; a reader thread on cpu 1 follows with an Iterator and copies every
// payload out, staying `distance` events behind the newest commit (0: it reads
// each event as soon as it is committed).
//
// It measures what a following reader costs the writer: the writer's time per
// event and whether the reader kept up (counter `lost`). docs/performance.md
// ("The A/A control, and 32 rounds of the tail": "A reader a few events
// back") has the figures. Needs two cpus; the
// ring is 2^20 descriptors and 256 MiB on /dev/shm, as in bench/ipc.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/shared_word.hpp"
#include "support/bench_ring.hpp"

namespace {

bool pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct ReaderTally {
    std::uint64_t received = 0;
    std::uint64_t lost = 0;
};

// Follows `ring` from seqno 1 until `stop` is set and nothing is left to read.
// With distance d > 0 it takes event s only once s + d is committed (or the
// writer stopped): the lines of the newest events stay the writer's alone.
ReaderTally follow(const evring::MappedRing& ring, std::uint64_t distance, std::size_t size,
                   const std::atomic<bool>& stop) {
    pin_to(1);
    evring::Iterator it(ring);
    it.seek(1);
    std::vector<std::byte> out(size);
    evring::EventDescriptor event{};
    ReaderTally tally;
    for (;;) {
        if (distance != 0 && !stop.load(std::memory_order_relaxed)) {
            const std::uint64_t ahead = it.next_seqno() + distance;
            const std::uint64_t* word = ring.descriptors()[(ahead - 1) & ring.descriptor_mask()].words;
            // Acquire, like the iterator's R1: only a hint here, try_next
            // below does the real check of the event it reads.
            if (evring::shared::load_acquire(word[0]) < ahead) continue;
        }
        const evring::NextResult result = it.try_next(event);
        if (result == evring::NextResult::NotReady) {
            if (stop.load(std::memory_order_acquire)) break;
            continue;
        }
        if (result != evring::NextResult::Success) continue;
        if (evring::copy_payload(ring, event, out.data(), out.size()) != evring::PayloadResult::Ok)
            ++tally.lost;
        else
            ++tally.received;
    }
    tally.lost += it.total_lost();
    return tally;
}

void BM_WriterWithReaderBehind(benchmark::State& state) {
    const auto size = static_cast<std::size_t>(state.range(0));
    const auto distance = static_cast<std::uint64_t>(state.range(1));
    // The benchmark thread is pinned for this run only: the benchmarks after
    // it in the same process get their old affinity back.
    cpu_set_t before;
    if (pthread_getaffinity_np(pthread_self(), sizeof before, &before) != 0 ||
        sysconf(_SC_NPROCESSORS_ONLN) < 2 || !pin_to(0)) {
        state.SkipWithError("needs cpus 0 and 1");
        return;
    }
    const std::string path = "/dev/shm/evring-bench-pair-" + std::to_string(::getpid());
    evring::RingWriter owner = evring::bench::create_owned_ring(path, 20, 28);
    const evring::MappedRing& ring = owner.ring();
    evring::Publisher publisher(ring);
    std::vector<std::byte> source(size, std::byte{0x5a});
    std::atomic<bool> stop{false};
    ReaderTally tally;
    std::thread reader([&] { tally = follow(ring, distance, size, stop); });
    ::usleep(20'000);  // the reader is polling before the first event
    for (auto _ : state) {
        evring::Reservation r = publisher.reserve(size);
        std::memcpy(r.payload(), source.data(), size);
        publisher.commit(r);
    }
    stop.store(true, std::memory_order_release);
    reader.join();
    ::unlink(path.c_str());
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    state.counters["lost"] = static_cast<double>(tally.lost);
    state.counters["received"] = static_cast<double>(tally.received);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
// 3 M events of 1 KiB lap the 256 MiB buffer eleven times.
BENCHMARK(BM_WriterWithReaderBehind)
    ->ArgNames({"size", "distance"})
    ->ArgsProduct({{64, 1024}, {0, 2, 4}})
    ->Iterations(3'000'000)
    ->UseRealTime();

}  // namespace
