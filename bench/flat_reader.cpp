// evring-flat-reader: the control for scripts/bench-record. It follows a ring
// that bench/flat_writer.cpp fills flat out, with the reader's copy path alone
// (Iterator::try_next + copy_payload into one buffer, nothing kept), so the
// recorder's rate and losses can be set beside those of the cheapest reader
// this format allows, in the same round on the same machine. A recorder cannot
// keep up with a writer that this reader cannot keep up with.
//
//   evring-flat-reader NAME COUNT READY_FILE
//
// Waits (at most 30 s) for the ring NAME to exist, opens it, reads from its
// first event, creates READY_FILE, and stops once it has passed seqno COUNT
// (read or lost) or the writer is gone. Prints one JSON object: read, lost (in gaps), expired
// (payloads overwritten while copied), end_s (wall clock).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/ring_reader.hpp"

namespace {

double seconds_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: evring-flat-reader NAME COUNT READY_FILE\n");
        return 2;
    }
    const std::uint64_t count = std::strtoull(argv[2], nullptr, 10);
    const double give_up = seconds_now() + 30;
    auto reader = evring::RingReader::open(argv[1]);
    while (!reader && seconds_now() < give_up) {
        const timespec pause{0, 1'000'000};
        ::nanosleep(&pause, nullptr);
        reader = evring::RingReader::open(argv[1]);
    }
    if (!reader) {
        std::fprintf(stderr, "evring-flat-reader: %s\n", reader.error().message().c_str());
        return 1;
    }
    const evring::MappedRing& ring = reader->ring();
    evring::Iterator it(ring);
    it.seek(1);
    const int ready = ::open(argv[3], O_CREAT | O_WRONLY, 0644);
    if (ready < 0) {
        std::perror(argv[3]);
        return 1;
    }
    ::close(ready);
    alignas(64) std::byte buffer[4096];
    std::uint64_t read = 0, expired = 0;
    evring::EventDescriptor event{};
    std::uint64_t idle = 0;
    while (it.next_seqno() <= count) {
        const evring::NextResult r = it.try_next(event);
        if (r != evring::NextResult::Success) {
            // A writer that died short of COUNT ends the read, not the bench.
            if (r == evring::NextResult::NotReady && ++idle % (1u << 24) == 0 && !reader->writer_alive()) break;
            continue;
        }
        if (evring::copy_payload(ring, event, buffer, sizeof buffer) == evring::PayloadResult::Ok)
            ++read;
        else
            ++expired;
    }
    std::printf("{\"read\":%llu,\"lost\":%llu,\"expired\":%llu,\"end_s\":%.6f}\n",
                static_cast<unsigned long long>(read), static_cast<unsigned long long>(it.total_lost()),
                static_cast<unsigned long long>(expired), seconds_now());
    return 0;
}
