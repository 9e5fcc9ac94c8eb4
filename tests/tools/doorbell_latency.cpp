// doorbell_latency — measures what the doorbell costs and buys (docs/reliability.md).
//
//   build-x/tests/tools/doorbell_latency [events] [gap_us]
//
// Four measurements, each with the writer in this process and the reader in a
// forked child, over a ring in /dev/shm:
//  1. wake-up latency (commit to the reader holding the event), median and
//     99th percentile, for a busy-polling reader, a doorbell reader and a
//     reader that polls every 1 ms; the writer commits `events` events (default
//     2000) spaced by a random 0.5..1.5 x `gap_us` (default 500 us), so the
//     sleeping readers are asleep when each event arrives;
//  2. the writer's cost per commit without a doorbell, with it (membarrier
//     path when available) and with the full seq_cst fence, no reader;
//  3. under load (the writer commits flat out for 1 s, one doorbell reader):
//     futex wakes per second (the doorbell epoch counts them exactly) and
//     reader sleeps;
//  4. the CPU time (utime + stime from /proc/<pid>/stat) of a doorbell reader
//     waiting 5 s on an idle ring.
// Timing figures, so this is a tool, not a test.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"

namespace {

using namespace std::chrono_literals;
using evring::NextResult;

std::int64_t now_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void sleep_ns(std::int64_t ns) {
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    ::nanosleep(&ts, nullptr);
}

struct TempRing {
    std::string path;
    evring::MappedRing writer;
    evring::MappedRing reader;
};

evring::MappedRing map(const std::string& path, evring::Access access) {
    const int fd = ::open(path.c_str(), access == evring::Access::ReadWrite ? O_RDWR : O_RDONLY);
    auto ring = evring::MappedRing::map(fd, access, path);
    ::close(fd);
    if (!ring) {
        std::fprintf(stderr, "%s\n", ring.error().message().c_str());
        std::exit(1);
    }
    return std::move(ring).value();
}

TempRing make_ring(bool doorbell) {
    static int made = 0;
    std::string path = "/dev/shm/evring-doorbell-latency-" + std::to_string(::getpid()) + "-" +
                       std::to_string(made++);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    evring::RingParams params;
    params.content.content_type = 1;
    params.descriptor_shift = 16;
    params.payload_buf_shift = 24;
    if (fd < 0 || !evring::initialize_ring_file(fd, params, path).ok()) std::exit(1);
    ::close(fd);
    TempRing ring{path, map(path, evring::Access::ReadWrite), map(path, evring::Access::ReadOnly)};
    if (!doorbell)  // what a ring from another implementation looks like
        std::memset(static_cast<void*>(evring::extension_in(&ring.writer.header())), 0,
                    sizeof(evring::RingExtension));
    return ring;
}

void commit_stamped(evring::Publisher& publisher) {
    auto r = publisher.reserve(8);
    const std::int64_t t = now_ns();
    std::memcpy(r.payload(), &t, 8);
    publisher.commit(r);
}

enum class Mode { Spin, Doorbell, Poll1ms };
const char* name(Mode m) {
    return m == Mode::Spin ? "busy polling" : m == Mode::Doorbell ? "doorbell (futex)" : "timed polling, 1 ms";
}

// Reader child: reads `events` events, storing each latency in `out`.
[[noreturn]] void read_latencies(const evring::MappedRing& ring, Mode mode, int events, std::int64_t* out) {
    evring::Iterator it(ring);
    it.seek(1);
    evring::Doorbell bell = evring::Doorbell::attach(ring);
    evring::EventDescriptor event{};
    for (int n = 0; n < events;) {
        const NextResult r = it.try_next(event);
        if (r == NextResult::Success) {
            std::int64_t t;
            std::memcpy(&t, ring.payload_buffer() + (event.payload_buf_offset & ring.payload_mask()), 8);
            out[n++] = now_ns() - t;
            continue;
        }
        if (r != NextResult::NotReady) std::_Exit(3);
        if (mode == Mode::Doorbell) bell.wait(it.next_seqno(), 100ms);
        if (mode == Mode::Poll1ms) sleep_ns(1'000'000);
    }
    std::_Exit(0);
}

void latency(Mode mode, int events, int gap_us) {
    TempRing ring = make_ring(true);
    auto* shared = static_cast<std::int64_t*>(::mmap(nullptr, sizeof(std::int64_t) * events,
                                                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    const pid_t child = ::fork();
    if (child == 0) read_latencies(ring.reader, mode, events, shared);
    evring::Publisher publisher(ring.writer);
    std::mt19937 rng(1);
    sleep_ns(20'000'000);  // let the reader start and settle
    for (int i = 0; i < events; ++i) {
        sleep_ns(std::int64_t{gap_us} * 500 + static_cast<std::int64_t>(rng() % (static_cast<unsigned>(gap_us) * 1000u)));
        commit_stamped(publisher);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    std::vector<std::int64_t> v(shared, shared + events);
    std::sort(v.begin(), v.end());
    std::printf("  %-22s median %8.1f us   p99 %8.1f us   max %8.1f us  (%d events)\n", name(mode),
                static_cast<double>(v[v.size() / 2]) / 1e3, static_cast<double>(v[v.size() * 99 / 100]) / 1e3,
                static_cast<double>(v.back()) / 1e3, events);
    ::munmap(shared, sizeof(std::int64_t) * events);
    ::unlink(ring.path.c_str());
}

// Rounds of the three variants alternate, so background load hits them alike.
void commit_cost() {
    TempRing off = make_ring(false);
    TempRing on = make_ring(true);
    evring::Publisher plain(off.writer);
    evring::Publisher ringing(on.writer);
    std::uint32_t* word = &evring::extension_in(&on.writer.header())->doorbell;
    constexpr int kEvents = 1'000'000;
    double best[3] = {1e9, 1e9, 1e9};
    for (int round = 0; round < 10; ++round) {
        for (int variant = 0; variant < 3; ++variant) {
            evring::Publisher& publisher = variant == 1 ? ringing : plain;
            const std::int64_t t0 = now_ns();
            for (int i = 0; i < kEvents; ++i) {
                auto r = publisher.reserve(8);
                std::memcpy(r.payload(), &i, sizeof i);
                publisher.commit(r);
                if (variant == 2) evring::ring_doorbell(word, false);  // the full-fence path
            }
            best[variant] = std::min(best[variant], static_cast<double>(now_ns() - t0) / kEvents);
        }
    }
    std::printf("  reserve+commit, no doorbell               %6.1f ns/event\n", best[0]);
    std::printf("  reserve+commit, doorbell (%s)  %6.1f ns/event\n",
                evring::register_doorbell_writer() ? "membarrier   " : "seq_cst fence", best[1]);
    std::printf("  reserve+commit, doorbell (seq_cst fence)  %6.1f ns/event   (best of 10 x %d each, no reader)\n",
                best[2], kEvents);
    ::unlink(off.path.c_str());
    ::unlink(on.path.c_str());
}

void wakes_under_load() {
    TempRing ring = make_ring(true);
    auto* stop = static_cast<int*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    auto* sleeps = reinterpret_cast<std::uint64_t*>(stop + 16);
    const pid_t child = ::fork();
    if (child == 0) {
        evring::Iterator it(ring.reader);
        it.seek(1);
        evring::Doorbell bell = evring::Doorbell::attach(ring.reader);
        evring::EventDescriptor event{};
        while (__atomic_load_n(stop, __ATOMIC_RELAXED) == 0)
            if (it.try_next(event) == NextResult::NotReady) bell.wait(it.next_seqno(), 10ms);
        *sleeps = bell.sleeps();
        std::_Exit(0);
    }
    sleep_ns(20'000'000);
    auto& word = evring::extension_in(&ring.writer.header())->doorbell;
    const std::uint32_t before = __atomic_load_n(&word, __ATOMIC_RELAXED);
    evring::Publisher publisher(ring.writer);
    const std::int64_t t0 = now_ns();
    std::uint64_t events = 0;
    while (now_ns() - t0 < 1'000'000'000) {
        for (int i = 0; i < 64; ++i) commit_stamped(publisher);
        events += 64;
    }
    const std::uint32_t after = __atomic_load_n(&word, __ATOMIC_RELAXED);
    __atomic_store_n(stop, 1, __ATOMIC_RELAXED);
    ::waitpid(child, nullptr, 0);
    std::printf("  writer flat out 1 s: %llu events, %u futex wakes by the writer, %llu reader sleeps\n",
                static_cast<unsigned long long>(events), (after >> 1) - (before >> 1),
                static_cast<unsigned long long>(*sleeps));
    ::unlink(ring.path.c_str());
}

long cpu_ticks(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    std::vector<std::string> fields;
    std::string field;
    for (char c : line.substr(close + 2)) {
        if (c == ' ') {
            fields.push_back(field);
            field.clear();
        } else {
            field += c;
        }
    }
    // Fields after the comm: state is [0], utime is [11], stime is [12].
    return std::stol(fields[11]) + std::stol(fields[12]);
}

void idle_cpu() {
    TempRing ring = make_ring(true);
    const pid_t child = ::fork();
    if (child == 0) {
        evring::Doorbell bell = evring::Doorbell::attach(ring.reader);
        for (;;) bell.wait(1, 100ms);
    }
    sleep_ns(200'000'000);
    const long before = cpu_ticks(child);
    sleep_ns(5'000'000'000);
    const long after = cpu_ticks(child);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    std::printf("  idle doorbell reader (100 ms timeouts), 5 s: %ld clock ticks of CPU (1 tick = %ld ms)\n",
                after - before, 1000 / ::sysconf(_SC_CLK_TCK));
    ::unlink(ring.path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const int events = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int gap_us = argc > 2 ? std::atoi(argv[2]) : 500;
    if (events <= 0 || gap_us <= 0) {
        std::fprintf(stderr, "usage: %s [events > 0] [gap_us > 0]\n", argv[0]);
        return 2;
    }
    std::printf("wake-up latency, commit to reader (writer and reader in separate processes):\n");
    for (Mode mode : {Mode::Spin, Mode::Doorbell, Mode::Poll1ms}) latency(mode, events, gap_us);
    std::printf("writer cost:\n");
    commit_cost();
    std::printf("wake rate under load:\n");
    wakes_under_load();
    std::printf("idle CPU:\n");
    idle_cpu();
    return 0;
}
