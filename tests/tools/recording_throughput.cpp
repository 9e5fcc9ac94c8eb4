// recording_throughput — does the recording writer keep up? (docs/recording-format.md)
//
//   build/tests/tools/recording_throughput [events] [dir] [threads]
//
// Appends `events` events (default 2,000,000) to a RecordingWriter in `dir`
// (default /dev/shm), the way `evring record` does: begin_event, copy the
// payload, end_event, and a flush() every 4096 events (the busy recorder
// flushes once a second; this is far more often, so it is the harder case).
// `threads`: RecordingOptions::threads (compressing threads, default 1). Four workloads: 64 B and 512 B payloads, each with payloads like real events
// (a counter, a timestamp and small fields: zstd shrinks them) and with random
// bytes (zstd cannot), compressed and raw. For each it prints:
//   - front ns/event: the caller's time per event (what the thread following
//     the ring pays), measured from the first append to the last one;
//   - total events/s: events over the time until finish() returned, i.e. until
//     the worker thread had compressed and written everything;
//   - MB/s of record bytes, and the file size.
// Timing figures, so this is a tool, not a test.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "recording/recording.hpp"

namespace {

using Clock = std::chrono::steady_clock;

evring::RingHeader source_header() {
    evring::RingHeader header{};
    header.magic = evring::kRingMagic;
    header.content_type = 1;
    header.size = evring::RingSize{1u << 20, 1u << 28, 0};
    return header;
}

struct Workload {
    const char* name;
    std::uint32_t payload_size;
    bool random;
};

std::uint64_t xorshift(std::uint64_t& x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

void fill(std::byte* dst, std::uint32_t size, std::uint64_t seqno, bool random, std::uint64_t& rng) {
    if (random) {
        for (std::uint32_t i = 0; i + 8 <= size; i += 8) {
            const std::uint64_t v = xorshift(rng);
            std::memcpy(dst + i, &v, 8);
        }
        return;
    }
    // Like an execution event: a few counters and small fields, zero padding.
    std::memset(dst, 0, size);
    const std::uint64_t fields[4] = {seqno, seqno * 21000, 1'700'000'000'000'000'000 + seqno * 997,
                                     seqno % 300};
    for (std::uint32_t i = 0; i + 32 <= size; i += 64) std::memcpy(dst + i, fields, 32);
}

void run(const Workload& w, bool compress, std::uint64_t events, const std::string& dir, unsigned threads) {
    const std::string path = dir + "/evring-throughput-" + std::to_string(::getpid()) + ".evrec";
    ::unlink(path.c_str());
    evring::RecordingOptions options;
    options.compress = compress;
    options.threads = threads;
    auto writer = evring::RecordingWriter::create(path, source_header(), options);
    if (!writer) {
        std::fprintf(stderr, "%s\n", writer.error().message().c_str());
        std::exit(1);
    }
    evring::EventDescriptor event{};
    event.event_type = 3;
    event.payload_size = w.payload_size;
    std::uint64_t rng = 88172645463325252u;
    const Clock::time_point start = Clock::now();
    for (std::uint64_t seqno = 1; seqno <= events; ++seqno) {
        event.seqno = seqno;
        event.record_epoch_nanos = 1'700'000'000'000'000'000 + seqno * 1000;
        event.payload_buf_offset = seqno * w.payload_size;
        fill(writer->begin_event(event), w.payload_size, seqno, w.random, rng);
        if (!writer->end_event(true)) std::exit(1);
        if (seqno % 4096 == 0 && !writer->flush()) std::exit(1);
    }
    const Clock::time_point appended = Clock::now();
    if (auto s = writer->finish(); !s) {
        std::fprintf(stderr, "%s\n", s.error().message().c_str());
        std::exit(1);
    }
    const Clock::time_point finished = Clock::now();
    struct stat st {};
    ::stat(path.c_str(), &st);
    ::unlink(path.c_str());
    const double front_ns = std::chrono::duration<double, std::nano>(appended - start).count() / double(events);
    const double total_s = std::chrono::duration<double>(finished - start).count();
    const double record_bytes = double(events) * (64.0 + w.payload_size);
    std::printf("%-14s %-4s  front %7.1f ns/event  total %6.2f M events/s  %7.1f MB/s  file %6.1f MB\n",
                w.name, compress ? "zstd" : "raw", front_ns, double(events) / total_s / 1e6,
                record_bytes / total_s / 1e6, double(st.st_size) / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
    const std::uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
    const std::string dir = argc > 2 ? argv[2] : "/dev/shm";
    const unsigned threads = argc > 3 ? static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)) : 1;
    const Workload workloads[] = {
        {"64 B fields", 64, false},
        {"64 B random", 64, true},
        {"512 B fields", 512, false},
        {"512 B random", 512, true},
    };
    std::printf("%" PRIu64 " events per run, files in %s, %u compressing thread(s)\n", events, dir.c_str(), threads);
    for (const Workload& w : workloads)
        for (bool compress : {true, false}) run(w, compress, events, dir, threads);
    return 0;
}
