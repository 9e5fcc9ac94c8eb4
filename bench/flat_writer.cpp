// evring-flat-writer: writes COUNT 64 B events into a new ring as fast as one
// thread can, for scripts/bench-record (issue 35 item 2: does `evring record`
// keep up with a writer running flat out?).
//
//   evring-flat-writer <ring-config> COUNT [START_FILE [HOLD_FILE]]
//
// The ring (e.g. NAME:20:28) is created as an application creates it and
// removed on exit; a reader that has it open reads on to its end. With
// START_FILE, the first event waits (at most 30 s) until that file exists,
// so a reader can open the ring first and miss nothing. With HOLD_FILE, the
// ring is kept after the last event until that file exists (at most 600 s),
// for readers that start after the writing (scripts/bench-record-counts). Each
// payload is like an execution event's (a counter, a timestamp and small
// fields, as tests/tools/recording_throughput's "fields"), so compression
// sees what it would in a real recording. Prints one JSON object when done:
// events, start_s (wall clock), elapsed_s, events_per_s.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "evring/config.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"

namespace {

constexpr std::uint32_t kSize = 64;
constexpr std::uint16_t kEventType = 7;

// The wall clock: scripts/bench-record compares it with `date +%s.%N`.
double seconds_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

bool wait_for_file(const char* path, double seconds) {
    const double give_up = seconds_now() + seconds;
    while (::access(path, F_OK) != 0) {
        if (seconds_now() > give_up) return false;
        const timespec pause{0, 1'000'000};
        ::nanosleep(&pause, nullptr);
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3 || argc > 5) {
        std::fprintf(stderr, "usage: evring-flat-writer <ring-config> COUNT [START_FILE [HOLD_FILE]]\n");
        return 2;
    }
    const std::uint64_t count = std::strtoull(argv[2], nullptr, 10);
    auto config = evring::parse_ring_config(argv[1]);
    if (!config || count == 0) {
        std::fprintf(stderr, "evring-flat-writer: %s\n", config ? "COUNT must be positive" : config.error().message().c_str());
        return 2;
    }
    evring::RingContent content;
    content.content_type = static_cast<std::uint16_t>(evring::ContentType::Performance);
    auto writer = evring::RingWriter::create({*config, content}, {});
    if (!writer) {
        std::fprintf(stderr, "evring-flat-writer: %s\n", writer.error().message().c_str());
        return 1;
    }
    evring::Publisher publisher(writer->ring(), evring::WriterSharing::Exclusive);
    if (argc >= 4 && !wait_for_file(argv[3], 30)) {
        std::fprintf(stderr, "evring-flat-writer: %s did not appear within 30 s\n", argv[3]);
        return 1;
    }
    const double start = seconds_now();
    for (std::uint64_t n = 1; n <= count; ++n) {
        const std::uint64_t fields[8] = {n, n * 21000, 1'700'000'000'000'000'000 + n * 997, n % 300, 0, 0, 0, 0};
        evring::Reservation r = publisher.reserve(kSize);
        r.descriptor().event_type = kEventType;
        r.descriptor().content_ext[0] = n % 64;
        std::memcpy(r.payload(), fields, kSize);
        publisher.commit(r);
    }
    const double elapsed = seconds_now() - start;
    std::printf("{\"events\":%llu,\"start_s\":%.6f,\"elapsed_s\":%.4f,\"events_per_s\":%.0f}\n",
                static_cast<unsigned long long>(count), start, elapsed, static_cast<double>(count) / elapsed);
    std::fflush(stdout);
    if (argc == 5 && !wait_for_file(argv[4], 600)) {
        std::fprintf(stderr, "evring-flat-writer: %s did not appear within 600 s\n", argv[4]);
        return 1;
    }
    return 0;
}
