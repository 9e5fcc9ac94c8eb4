// evring-wakeup-fd: commit to the event-loop descriptor becoming readable
// (issue 35 item 4, issue 31's descriptor; docs/event-loops.md), beside the
// futex doorbell in the same run, and what an idle reader costs.
//
// Latency: a writer process (pinned to cpu 0) publishes events stamped with
// CLOCK_MONOTONIC just before each commit, at a fixed rate; a reader process
// (cpu 1) drains its ring and sleeps between events: on a wait set's
// descriptor (fd_wait_reader.hpp: arm, then poll) or on the doorbell itself
// (Doorbell::wait, every wait on the futex). The sample is the time from the
// stamp to the reader holding the event. The two variants alternate over
// rounds. Idle cost: a reader process waits in epoll on a live ring nobody
// writes to, for a few seconds; its CPU time (getrusage, every thread) over
// the wall time, and the set's thread's sleeps per second.
//
//   evring-wakeup-fd [--events N] [--rate R] [--rounds K] [--idle-seconds S]
//                    [--json FILE] [--fifo] [--shm-dir DIR]
//   defaults: 100000 events per variant at 10000 events/s in 10 rounds; 3 s idle
//
// Keys (--json): wakeup_latency_{fd,futex}_{p50,p99,p999,max}_ns, each
// percentile's range over the rounds as _min/_max, wakeup_latency_ratio_fd_vs_futex_{p50,p99},
// idle_cpu_percent_{fd,doorbell}, idle_set_sleeps_per_s. The keys match
// perf-writer's evring-wakeup harness, which this variant joins as "fd".
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/source/source_open.hpp"
#include "evring/source/wait_set.hpp"
#include "support/bench_ring.hpp"
#include "wakeup_fd/fd_wait_reader.hpp"

namespace {

using namespace evring;

struct Options {
    std::uint64_t events = 100'000;
    double rate = 10'000;
    int rounds = 10;
    double idle_seconds = 3;
    std::string json_path;
    std::string shm_dir = "/dev/shm";
    bool fifo = false;
};

constexpr std::uint16_t kData = 7, kEnd = 8;

std::uint64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void pin(int cpu, bool fifo) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)), &set);
    (void)::sched_setaffinity(0, sizeof set, &set);
    if (fifo) {
        sched_param p{};
        p.sched_priority = 50;
        if (::sched_setscheduler(0, SCHED_FIFO, &p) != 0) bench::die("SCHED_FIFO refused (run as root, or drop --fifo)");
    }
}

void publish(Publisher& publisher, std::uint16_t type) {
    Reservation r = publisher.reserve(8);
    r.descriptor().event_type = type;
    const std::uint64_t stamp = now_ns();
    std::memcpy(r.payload(), &stamp, sizeof stamp);
    publisher.commit(r);
}

// The writer: creates the ring, says so on `created`, waits for the gate,
// then publishes `events` paced events and an end marker.
int run_writer(const std::string& path, std::uint64_t events, double rate, int created, int gate, bool fifo) {
    pin(0, fifo);
    RingWriter owner = bench::create_owned_ring(path, 18, 24);
    Publisher publisher(owner.ring());
    char c = 1;
    if (::write(created, &c, 1) != 1 || ::read(gate, &c, 1) < 0) return 3;
    const double period = 1e9 / rate;
    const std::uint64_t start = now_ns() + 1'000'000;
    for (std::uint64_t i = 0; i < events; ++i) {
        const std::uint64_t due = start + static_cast<std::uint64_t>(double(i) * period);
        const timespec at{static_cast<time_t>(due / 1'000'000'000), static_cast<long>(due % 1'000'000'000)};
        while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
        }
        publish(publisher, kData);
    }
    publish(publisher, kEnd);
    return 0;
}

// The reader: drains the ring, sleeping by `variant` whenever it is empty;
// writes one latency per event to `samples`.
int run_reader(const std::string& variant, const std::string& path, std::uint64_t events, const std::string& samples,
               int ready, bool fifo) {
    pin(1, fifo);
    const MappedRing ring = bench::map_ring(path, Access::ReadOnly);
    Iterator it(ring);
    it.seek(1);
    std::unique_ptr<wakeup::FdWaitReader> fd;
    std::optional<Doorbell> bell;
    if (variant == "fd") {
        fd = std::make_unique<wakeup::FdWaitReader>(path);
    } else {
        bell.emplace(Doorbell::attach(ring));
        if (bell->mode() != Doorbell::Mode::Futex) bench::die("the doorbell polls: " + bell->fallback_reason());
        bell->set_min_sleep_interval(std::chrono::nanoseconds(0));
    }
    std::vector<std::uint64_t> out(events, 0);  // touched now: no page fault in the run
    std::size_t n = 0;
    char c = 1;
    if (::write(ready, &c, 1) != 1) return 3;
    EventDescriptor event{};
    for (;;) {
        const NextResult result = it.try_next(event);
        if (result == NextResult::NotReady) {
            if (fd) fd->sleep(it);
            else (void)bell->wait(it.next_seqno(), std::chrono::seconds(1));
            continue;
        }
        if (result != NextResult::Success) continue;  // never in a good run
        const std::uint64_t held = now_ns();
        std::uint64_t stamp = 0;
        if (copy_payload(ring, event, &stamp, sizeof stamp) != PayloadResult::Ok) continue;
        if (event.event_type == kEnd) break;
        if (n < out.size()) out[n++] = held - stamp;
    }
    std::ofstream file(samples, std::ios::binary);
    file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(n * sizeof out[0]));
    return file ? 0 : 4;
}

int exit_code(pid_t pid) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

template <class F>
pid_t fork_run(F&& body) {
    const pid_t pid = ::fork();
    if (pid < 0) bench::die(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) ::_exit(body());
    return pid;
}

std::vector<std::uint64_t> run_once(const std::string& variant, const Options& o, std::uint64_t events, int round) {
    const std::string stem =
        o.shm_dir + "/evring-wakeup-fd-" + std::to_string(::getpid()) + "-" + variant + "-" + std::to_string(round);
    const std::string path = stem + ".ring", samples = stem + ".samples";
    int created[2], gate[2], ready[2];
    if (::pipe(created) != 0 || ::pipe(gate) != 0 || ::pipe(ready) != 0) bench::die("pipe");
    // Each child closes the gate's write end it inherited: the writer starts
    // when the parent closes the last one (read() returns at end of file).
    const pid_t writer = fork_run([&] {
        ::close(gate[1]);
        return run_writer(path, events, o.rate, created[1], gate[0], o.fifo);
    });
    char c;
    if (::read(created[0], &c, 1) != 1) bench::die("the writer did not start");
    const pid_t reader = fork_run([&] {
        ::close(gate[1]);
        return run_reader(variant, path, events, samples, ready[1], o.fifo);
    });
    if (::read(ready[0], &c, 1) != 1) bench::die("the reader did not start");
    ::close(gate[1]);  // go
    const int w = exit_code(writer), r = exit_code(reader);
    for (int fd : {created[0], created[1], gate[0], ready[0], ready[1]}) ::close(fd);
    ::unlink(path.c_str());
    if (w != 0 || r != 0) bench::die("a " + variant + " peer failed (writer " + std::to_string(w) + ", reader " +
                                     std::to_string(r) + ")");
    std::vector<std::uint64_t> out;
    std::ifstream in(samples, std::ios::binary);
    for (std::uint64_t v; in.read(reinterpret_cast<char*>(&v), sizeof v);) out.push_back(v);
    ::unlink(samples.c_str());
    if (out.size() != events) bench::die("the " + variant + " reader recorded " + std::to_string(out.size()) + " of " +
                                         std::to_string(events) + " events");
    return out;
}

double quantile(const std::vector<std::uint64_t>& sorted, double q) {
    return sorted.empty() ? 0 : double(sorted[static_cast<std::size_t>(q * double(sorted.size() - 1))]);
}

double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// An idle reader for `seconds`: CPU percent of its process (every thread),
// and for "fd" the set's thread's sleeps per second, written to `result`.
int run_idle(const std::string& variant, const std::string& path, double seconds, int result) {
    auto source = open_source(path, {});
    if (!source) bench::die(source.error().message());
    WaitSet set;
    int epfd = -1;
    std::optional<Doorbell> bell;
    const MappedRing* ring = (*source)->ring();
    if (variant == "fd") {
        if (auto added = set.add(**source); !added) bench::die(added.error().message());
        epfd = ::epoll_create1(EPOLL_CLOEXEC);
        epoll_event ev{};
        ev.events = EPOLLIN;
        if (::epoll_ctl(epfd, EPOLL_CTL_ADD, set.fd().value(), &ev) != 0) bench::die("epoll_ctl");
    } else {
        bell.emplace(Doorbell::attach(*ring));
    }
    const double cpu0 = cpu_seconds();
    const std::uint64_t start = now_ns();
    const auto end = start + static_cast<std::uint64_t>(seconds * 1e9);
    while (now_ns() < end) {
        if (epfd >= 0) {
            epoll_event ev{};
            (void)::epoll_wait(epfd, &ev, 1, static_cast<int>((end - now_ns()) / 1'000'000 + 1));
        } else {
            (void)bell->wait((*source)->next_seqno() + 1, std::chrono::milliseconds(100));  // the follow loop's pace
        }
    }
    const double wall = double(now_ns() - start) / 1e9;
    const double figures[2] = {100.0 * (cpu_seconds() - cpu0) / wall, double(set.stats().sleeps) / wall};
    return ::write(result, figures, sizeof figures) == sizeof figures ? 0 : 3;
}

std::pair<double, double> idle_once(const std::string& variant, const Options& o) {
    const std::string path = o.shm_dir + "/evring-wakeup-fd-" + std::to_string(::getpid()) + "-idle.ring";
    int created[2], hold[2], result[2];
    if (::pipe(created) != 0 || ::pipe(hold) != 0 || ::pipe(result) != 0) bench::die("pipe");
    const pid_t writer = fork_run([&] {
        ::close(hold[1]);
        RingWriter owner = bench::create_owned_ring(path, 10, 16);
        char c = 1;
        if (::write(created[1], &c, 1) != 1) return 3;
        while (::read(hold[0], &c, 1) > 0) {
        }
        return 0;
    });
    ::close(hold[0]);
    char c;
    if (::read(created[0], &c, 1) != 1) bench::die("the idle writer did not start");
    const pid_t reader = fork_run([&] { return run_idle(variant, path, o.idle_seconds, result[1]); });
    double figures[2] = {0, 0};
    const bool got = ::read(result[0], figures, sizeof figures) == sizeof figures;
    ::close(hold[1]);
    const int r = exit_code(reader), w = exit_code(writer);
    for (int fd : {created[0], created[1], result[0], result[1]}) ::close(fd);
    if (!got || r != 0 || w != 0) bench::die("the idle " + variant + " run failed");
    return {figures[0], figures[1]};
}

int run(const Options& o) {
    const std::vector<std::string> variants{"fd", "futex"};
    std::map<std::string, std::vector<std::uint64_t>> all;
    std::map<std::string, std::vector<double>> per_round;  // "fd_p50" -> each round's
    const std::uint64_t per = std::max<std::uint64_t>(1, o.events / static_cast<std::uint64_t>(o.rounds));
    for (int round = 0; round < o.rounds; ++round)
        for (std::size_t k = 0; k < variants.size(); ++k) {
            const std::string& v = variants[(k + static_cast<std::size_t>(round)) % variants.size()];
            std::vector<std::uint64_t> s = run_once(v, o, per, round);
            std::sort(s.begin(), s.end());
            per_round[v + "_p50"].push_back(quantile(s, 0.5));
            per_round[v + "_p99"].push_back(quantile(s, 0.99));
            per_round[v + "_p999"].push_back(quantile(s, 0.999));
            all[v].insert(all[v].end(), s.begin(), s.end());
        }
    std::map<std::string, double> keys;
    std::printf("%-6s %10s %10s %10s %12s   (ns, commit to the reader holding the event; %d rounds)\n", "", "p50",
                "p99", "p99.9", "max", o.rounds);
    for (const auto& v : variants) {
        auto& s = all[v];
        std::sort(s.begin(), s.end());
        const double q[3] = {quantile(s, 0.5), quantile(s, 0.99), quantile(s, 0.999)};
        const char* names[3] = {"p50", "p99", "p999"};
        for (int i = 0; i < 3; ++i) {
            const auto& r = per_round[v + "_" + names[i]];
            keys["wakeup_latency_" + v + "_" + names[i] + "_ns"] = q[i];
            keys["wakeup_latency_" + v + "_" + names[i] + "_ns_min"] = *std::min_element(r.begin(), r.end());
            keys["wakeup_latency_" + v + "_" + names[i] + "_ns_max"] = *std::max_element(r.begin(), r.end());
        }
        keys["wakeup_latency_" + v + "_max_ns"] = double(s.back());
        std::printf("%-6s %10.0f %10.0f %10.0f %12.0f\n", v.c_str(), q[0], q[1], q[2], double(s.back()));
    }
    keys["wakeup_latency_ratio_fd_vs_futex_p50"] = keys["wakeup_latency_fd_p50_ns"] / keys["wakeup_latency_futex_p50_ns"];
    keys["wakeup_latency_ratio_fd_vs_futex_p99"] = keys["wakeup_latency_fd_p99_ns"] / keys["wakeup_latency_futex_p99_ns"];
    const auto [fd_cpu, sleeps] = idle_once("fd", o);
    const auto [bell_cpu, unused] = idle_once("doorbell", o);
    (void)unused;
    keys["idle_cpu_percent_fd"] = fd_cpu;
    keys["idle_cpu_percent_doorbell"] = bell_cpu;
    keys["idle_set_sleeps_per_s"] = sleeps;
    std::printf("idle reader over %.1f s: %.4f %% CPU in epoll on a wait set's descriptor (its thread slept %.1f "
                "times/s), %.4f %% in the follow loop's doorbell wait (100 ms slices)\n",
                o.idle_seconds, fd_cpu, sleeps, bell_cpu);
    if (!o.json_path.empty()) {
        std::FILE* f = std::fopen(o.json_path.c_str(), "w");
        if (f == nullptr) bench::die("writing " + o.json_path);
        std::fprintf(f, "{");
        bool first = true;
        for (const auto& [k, v] : keys) {
            std::fprintf(f, "%s\n  \"%s\": %.10g", first ? "" : ",", k.c_str(), v);
            first = false;
        }
        std::fprintf(f, "\n}\n");
        std::fclose(f);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) bench::die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--events") o.events = std::stoull(value());
        else if (a == "--rate") o.rate = std::stod(value());
        else if (a == "--rounds") o.rounds = std::max(1, std::stoi(value()));
        else if (a == "--idle-seconds") o.idle_seconds = std::stod(value());
        else if (a == "--json") o.json_path = value();
        else if (a == "--shm-dir") o.shm_dir = value();
        else if (a == "--fifo") o.fifo = true;
        else {
            std::printf("usage: evring-wakeup-fd [--events N] [--rate R] [--rounds K] [--idle-seconds S] "
                        "[--json FILE] [--fifo] [--shm-dir DIR]\n");
            return a == "-h" || a == "--help" ? 0 : 2;
        }
    }
    return run(o);
}
