// evring-set-bench: ring sets against one shared ring, in the same run.
//
//   evring-set-bench [--quick] [--readers | --writers] [--pin] [--small-rings]
//                    [--rounds N] [--writer-rounds N] [--repeats N] [--members N]...
//                    [--live-rate EVENTS_PER_S] [--json-merge FILE]
//
// Writers (64-byte payloads, reserve + memcpy + commit in a loop for a fixed
// time, aggregate events/s over all threads):
//   set          each thread publishes into its own member (RingSetWriter::publisher:
//                the claimed plain-store path)
//   shared       every thread shares one ring's Publisher (WriterSharing::Shared)
//   exclusive    one thread on its own Exclusive ring (the single-writer ceiling)
//   independent  the control for the set's scaling: 2 threads (_2t), or 2
//                processes (_2p), each writing its own Exclusive ring, sharing
//                nothing the library owns. If the control scales as the set
//                does, the machine, not the set, is the limit.
// with 1 and 2 threads (--readers leaves them out). Each round opens with a
// scaling block: the set's 1- and 2-writer windows and the control's
// (exclusive, independent 2t) back to back, in an order rotated per round;
// then the Shared ring's and the processes'. Each writer figure also prints
// why it is what it is: the writers' CPU share (their CPU time over elapsed
// × writers: below 1, something else had the core), events per second of
// their own CPU time (drops if writers slow each other down), page faults and
// involuntary switches in the window. --pin runs thread (or process) t on
// CPU t; --small-rings writes rings that fit a core's L2.
//
// Readers: a merged RingSetSource over 4 members of N events each against a
// RingSource over one ring of 4N events, descriptors only (next() with
// PayloadRead::None), events per second of the reading thread's CPU time
// (drain_rate says why). Each merged drain is followed by a drain of the
// single ring: the pair's ratio is a same-run ratio. Live: a merged
// reader following 4 writer threads paced to --live-rate events/s in total
// (default 4 M), counting lost events. --writers leaves the readers out.
// --members N (repeatable): the merge's cost in the number of members, N
// members whose times interleave finely (interleaved_readers) against one
// ring, keys set_reader_events_per_s_interleaved_Nm and
// set_reader_ratio_interleaved_Nm. A round drains each set --repeats times
// (3 with --quick, else 5) per merge strategy, in an order rotated per round
// and repetition: as readers get it (MergeOrder::Auto; the keys above), and
// with the scan and the tree forced (set_reader_events_per_s_{4m,
// interleaved_Nm}_{scan,tree}, and set_reader_scan_tree_ratio_{4m,
// interleaved_Nm}, scan over tree in the same repetition).
//
// Each writer figure is the median of --rounds rounds (3 with --quick, else
// 5; the writers' --writer-rounds, default the same), each reader figure
// the median of every drain (or pair) of every round, with the spread
// (min..max) printed beside it. --json-merge adds the keys
// set_writer_events_per_s_{1,2}t, shared_writer_events_per_s_{1,2}t,
// exclusive_writer_events_per_s_1t, independent_writer_events_per_s_{2t,2p},
// the medians of same-round ratios set_writer_ratio_2t,
// independent_writer_ratio_{2t,2p} (over exclusive 1t),
// set_writer_ratio_over_control_2t (the set's 2t/1t over the control's),
// set_writer_cpu_ratio_2t and independent_writer_cpu_ratio_2t (2 × the
// 2-writer events per CPU-second over the 1-writer's), shared_writer_ratio_2t,
// set_reader_events_per_s_4m, ring_reader_events_per_s, set_reader_ratio_4m
// and set_reader_ratio_interleaved_Nm (the medians of the same-run pairs'
// ratios), each writer and reader ratio's spread as KEY_min and KEY_max,
// set_live_writer_events_per_s_4t and set_reader_live_lost_4m (the worst
// round), and set_bench_load (the 1-minute load average at the start) to
// the JSON object in FILE
// (creating it if needed). Rings live in a private directory in /dev/shm
// (tmpfs).
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/set/ring_set.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "evring/ring/ring_writer.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kPayload = 64;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "evring-set-bench: %s\n", what.c_str());
    std::exit(2);
}

evring::DirectoryOptions in(const std::string& dir) {
    evring::DirectoryOptions d;
    d.read_environment = false;
    d.ring_dir_override = dir;
    d.print_warning = false;
    return d;
}

evring::RingConfig config(const std::string& name, unsigned descriptor_shift = 18, unsigned payload_shift = 24) {
    evring::RingConfig c;
    c.name_or_path = name;
    c.descriptor_shift = descriptor_shift;
    c.payload_buf_shift = payload_shift;
    return c;
}

evring::RingContent content() {
    evring::RingContent c;
    c.content_type = static_cast<std::uint16_t>(evring::ContentType::Performance);
    return c;
}

// --small-rings: writer rings of 4096 descriptors and 256 KiB of payload
// (512 KiB in all, within a core's L2) instead of 16 MiB + 16 MiB: takes the
// memory traffic of two writers (each streams 128 bytes per event, about
// 10 GB/s at 80 M events/s) out of the comparison.
bool g_small_rings = false;

evring::RingConfig writer_config(const std::string& name) {
    return g_small_rings ? config(name, 12, 18) : config(name);
}

bool g_pin = false;  // --pin: thread (or process) t runs on CPU t mod the CPU count

void pin_to(unsigned t) {
    if (!g_pin) return;
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t % cpus, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity failed");
}

double thread_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What one timed window of writers did: the aggregate rate, and why it is
// what it is. cpu_share is the writers' CPU time over (elapsed × writers):
// below 1, the writers were not running (another thread or process had the
// core); per_cpu_rate is events per second of the writers' own CPU time: it
// drops when the writers slow each other down (a shared cache line, a lock).
// Faults and switches are counted per writer over the window (RUSAGE_THREAD).
struct Run {
    double rate = 0;
    double cpu_share = 0;
    double per_cpu_rate = 0;
    double faults = 0;           // minor + major page faults, all writers
    double involuntary = 0;      // involuntary context switches, all writers
};

struct Usage {
    std::uint64_t events = 0;
    double cpu = 0;
    long faults = 0;
    long involuntary = 0;
};

template <class Body>
Usage measured(Body body) {
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    const double cpu0 = thread_cpu_seconds();
    Usage u;
    u.events = body();
    u.cpu = thread_cpu_seconds() - cpu0;
    ::getrusage(RUSAGE_THREAD, &after);
    u.faults = (after.ru_minflt - before.ru_minflt) + (after.ru_majflt - before.ru_majflt);
    u.involuntary = after.ru_nivcsw - before.ru_nivcsw;
    return u;
}

Run summarize(const std::vector<Usage>& usage, double elapsed) {
    Run run;
    std::uint64_t total = 0;
    double cpu = 0;
    for (const auto& u : usage) {
        total += u.events;
        cpu += u.cpu;
        run.faults += static_cast<double>(u.faults);
        run.involuntary += static_cast<double>(u.involuntary);
    }
    run.rate = static_cast<double>(total) / elapsed;
    run.cpu_share = cpu / (elapsed * static_cast<double>(usage.size()));
    run.per_cpu_rate = cpu > 0 ? static_cast<double>(total) / cpu : 0;
    return run;
}

// Runs `threads` threads: each calls `setup(thread_index)` (a set member is
// taken there, outside the timed window), then `body(setup's result, stop)`
// for `seconds`; returns aggregate events/s from the counts they return.
// Waiting threads (and the timing thread) sleep rather than spin: on two
// cores a spinning waiter takes the core a writer needs.
template <class Setup, class Body>
Run run_threads(unsigned threads, double seconds, Setup setup, Body body) {
    std::atomic<bool> stop{false};
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::vector<Usage> usage(threads);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            pin_to(t);
            auto prepared = setup(t);
            ready.fetch_add(1);
            ready.notify_all();
            go.wait(false);
            usage[t] = measured([&] { return body(prepared, stop); });
        });
    for (unsigned seen = ready.load(); seen < threads; seen = ready.load()) ready.wait(seen);
    const auto start = Clock::now();
    go = true;
    go.notify_all();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& w : workers) w.join();
    return summarize(usage, std::chrono::duration<double>(Clock::now() - start).count());
}

std::uint64_t publish_loop(evring::Publisher& p, std::atomic<bool>& stop) {
    alignas(64) static std::byte source[kPayload];
    std::uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 256; ++i) {
            evring::Reservation r = p.reserve(kPayload);
            r.descriptor().event_type = 7;
            std::memcpy(r.payload(), source, kPayload);
            p.commit(r);
        }
        n += 256;
    }
    return n;
}

Run set_writers(const std::string& dir, unsigned threads, double seconds) {
    evring::SetCreateOptions options;
    options.directory = in(dir);
    auto set = evring::RingSetWriter::create({writer_config("wset"), content(), 4}, options);
    if (!set) die(set.error().message());
    return run_threads(
        threads, seconds,
        [&](unsigned) {
            auto p = set->publisher();
            if (!p) die(p.error().message());
            return *p;
        },
        [](evring::Publisher* p, std::atomic<bool>& stop) { return publish_loop(*p, stop); });
}

Run ring_writers(const std::string& dir, unsigned threads, double seconds, evring::WriterSharing sharing) {
    evring::CreateOptions options;
    options.directory = in(dir);
    auto ring = evring::RingWriter::create({writer_config("wring"), content()}, options);
    if (!ring) die(ring.error().message());
    evring::Publisher shared(ring->ring(), sharing);
    return run_threads(
        threads, seconds, [&](unsigned) { return &shared; },
        [](evring::Publisher* p, std::atomic<bool>& stop) { return publish_loop(*p, stop); });
}

// The control for the set's scaling: `threads` threads each writing its own
// independent Exclusive ring (no set, nothing shared by the library). What
// the set's writers cannot beat: if this scales as the set does, the machine
// is the limit.
Run independent_writers(const std::string& dir, unsigned threads, double seconds) {
    struct Own {
        std::unique_ptr<evring::RingWriter> ring;
        std::unique_ptr<evring::Publisher> publisher;
    };
    return run_threads(
        threads, seconds,
        [&](unsigned t) {
            evring::CreateOptions options;
            options.directory = in(dir);
            auto ring = evring::RingWriter::create({writer_config("wown" + std::to_string(t)), content()}, options);
            if (!ring) die(ring.error().message());
            Own own;
            own.ring = std::make_unique<evring::RingWriter>(std::move(ring).value());
            own.publisher = std::make_unique<evring::Publisher>(own.ring->ring(), evring::WriterSharing::Exclusive);
            return own;
        },
        [](Own& own, std::atomic<bool>& stop) { return publish_loop(*own.publisher, stop); });
}

// The same control with `processes` processes instead of threads: nothing
// shared at all, not even the address space. Each child creates its ring,
// says so, waits for the start byte, writes until SIGUSR1 and reports its
// Usage through a pipe.
std::atomic<bool> g_child_stop{false};

Run independent_processes(const std::string& dir, unsigned processes, double seconds) {
    int ready[2], go[2], report[2];
    if (::pipe(ready) != 0 || ::pipe(go) != 0 || ::pipe(report) != 0) die("pipe failed");
    std::vector<pid_t> children;
    for (unsigned t = 0; t < processes; ++t) {
        const pid_t pid = ::fork();
        if (pid < 0) die("fork failed");
        if (pid == 0) {
            struct sigaction sa{};
            sa.sa_handler = [](int) { g_child_stop.store(true, std::memory_order_relaxed); };
            ::sigaction(SIGUSR1, &sa, nullptr);
            pin_to(t);
            bool reported = false;
            {
                evring::CreateOptions options;
                options.directory = in(dir);
                auto ring = evring::RingWriter::create({writer_config("wproc" + std::to_string(t)), content()}, options);
                if (!ring) die(ring.error().message());
                evring::Publisher p(ring->ring(), evring::WriterSharing::Exclusive);
                char byte = 'r';
                if (::write(ready[1], &byte, 1) == 1 && ::read(go[0], &byte, 1) == 1) {
                    const Usage u = measured([&] { return publish_loop(p, g_child_stop); });
                    reported = ::write(report[1], &u, sizeof u) == static_cast<ssize_t>(sizeof u);
                }
            }  // the ring file is removed here
            ::_exit(reported ? 0 : 3);
        }
        children.push_back(pid);
    }
    for (unsigned t = 0; t < processes; ++t) {
        char byte;
        if (::read(ready[0], &byte, 1) != 1) die("a writer process failed to start");
    }
    const std::string start_bytes(processes, 'g');
    const auto start = Clock::now();
    if (::write(go[1], start_bytes.data(), processes) != static_cast<ssize_t>(processes)) die("write failed");
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    for (pid_t pid : children) ::kill(pid, SIGUSR1);
    std::vector<Usage> usage(processes);
    for (auto& u : usage)
        if (::read(report[0], &u, sizeof u) != static_cast<ssize_t>(sizeof u)) die("a writer process failed");
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
    for (int fd : {ready[0], ready[1], go[0], go[1], report[0], report[1]}) ::close(fd);
    return summarize(usage, elapsed);
}

// Events per second of the reading thread's CPU time: on a machine shared
// with other builds a reader is often preempted for milliseconds mid-drain
// (a drain of 200,000 events lasts 2 to 20 ms), and wall time would measure
// the scheduler, not the reader. Both readers drain without waiting, so
// their CPU time is their busy time.
double drain_rate(evring::EventSource& source, std::uint64_t expected) {
    if (!source.seek(evring::Position::oldest())) die("seek failed");
    evring::SourceItem item;
    std::uint64_t n = 0;
    const double start = thread_cpu_seconds();
    for (;;) {
        const evring::SourceStep step = source.next(item);
        if (step == evring::SourceStep::Event) ++n;
        else if (step != evring::SourceStep::Gap && step != evring::SourceStep::Notice) break;
    }
    const double elapsed = thread_cpu_seconds() - start;
    if (n != expected)
        die(std::string(evring::describe(source.kind())) + ": read " + std::to_string(n) + " events, expected " +
            std::to_string(expected) + ", lost " + std::to_string(source.counters().lost));
    return static_cast<double>(n) / elapsed;
}

using MergeOrder = evring::RingSetSourceOptions::MergeOrder;
// The merge's strategies: Auto (what readers get), then Scan and Tree forced.
constexpr std::array<MergeOrder, 3> kOrders{MergeOrder::Auto, MergeOrder::Scan, MergeOrder::Tree};

// Every drain of one round, per kOrders: the merged reader's events per
// reading CPU-second, and the same over the single ring's drained right
// after it (a same-run pair: this machine's speed swings by 2x from one
// second to the next, a pair's two drains share their moment).
struct Drains {
    std::array<std::vector<double>, 3> merged;
    std::array<std::vector<double>, 3> ratio;
    std::vector<double> single;
};

// `repeats` times: the set at `path` drained merged once per strategy, in an
// order rotated by round and repetition (no strategy always first, on a cold
// cache or a noisy moment), each drain followed by one of `single`.
Drains drain_pairs(const std::string& path, const std::string& name, evring::EventSource& single,
                   std::uint64_t expected, int round, int repeats) {
    Drains out;
    for (int r = 0; r < repeats; ++r)
        for (std::size_t k = 0; k < kOrders.size(); ++k) {
            const std::size_t i = (k + static_cast<std::size_t>(round + r)) % kOrders.size();
            evring::RingSetSourceOptions options;
            options.merge_order = kOrders[i];
            auto merged = evring::RingSetSource::open(path, name, options);
            if (!merged) die(merged.error().message());
            const double rate = drain_rate(**merged, expected);
            const double alone = drain_rate(single, expected);
            out.merged[i].push_back(rate);
            out.ratio[i].push_back(rate / alone);
            out.single.push_back(alone);
        }
    return out;
}

// One ring of `events` events, written by this thread, read alone.
struct SingleRing {
    std::unique_ptr<evring::RingWriter> ring;
    std::unique_ptr<evring::RingSource> source;
};
SingleRing single_ring(const std::string& dir, const std::string& name, std::uint64_t events) {
    evring::CreateOptions ring_options;
    ring_options.directory = in(dir);
    auto ring = evring::RingWriter::create({config(name, 20, 26), content()}, ring_options);
    if (!ring) die(ring.error().message());
    SingleRing out;
    out.ring = std::make_unique<evring::RingWriter>(std::move(ring).value());
    evring::Publisher p(out.ring->ring());
    for (std::uint64_t i = 0; i < events; ++i) {
        evring::Reservation r = p.reserve(kPayload);
        p.commit(r);
    }
    auto reader = evring::RingReader::open(out.ring->path());
    if (!reader) die(reader.error().message());
    auto source = evring::RingSource::open_live(std::move(reader).value(), name);
    if (!source) die(source.error().message());
    out.source = std::move(source).value();
    return out;
}

// 4 members of `per` events each (threads writing at once, so their times
// interleave), read merged; one ring of 4 * per events read alone.
Drains readers(const std::string& dir, std::uint64_t per, int round, int repeats) {
    evring::SetCreateOptions options;
    options.directory = in(dir);
    auto set = evring::RingSetWriter::create({config("rset"), content(), 4}, options);
    if (!set) die(set.error().message());
    std::vector<std::thread> writers;
    // Every thread takes its member before any writes: a thread that finished
    // first would hand its member to a later one (ring_set.hpp, thread exit),
    // which would then lap it.
    std::atomic<int> taken{0};
    for (int t = 0; t < 4; ++t)
        writers.emplace_back([&] {
            auto p = set->publisher();
            if (!p) die(p.error().message());
            taken.fetch_add(1);
            while (taken.load() < 4) std::this_thread::yield();
            for (std::uint64_t i = 0; i < per; ++i) {
                evring::Reservation r = (*p)->reserve(kPayload);
                (*p)->commit(r);
            }
        });
    for (auto& w : writers) w.join();
    SingleRing single = single_ring(dir, "rring", 4 * per);
    return drain_pairs(set->path(), "rset", *single.source, 4 * per, round, repeats);
}

// The merge's cost in the number of members: `members` members of `per`
// events each whose times interleave finely (one thread writes them round
// robin, so no member has a burst the merge could release without looking
// at the others: every event is a pick among all members), read merged,
// against one ring of members × per events. Each member is held by a thread
// of its own for the whole write (a member is released when its thread
// exits), and the writing thread's first reserve claims each member's plain
// path.
Drains interleaved_readers(const std::string& dir, unsigned members, std::uint64_t per, int round, int repeats) {
    evring::SetCreateOptions options;
    options.directory = in(dir);
    const std::string name = "iset" + std::to_string(members);
    auto set = evring::RingSetWriter::create({config(name, 14, 20), content(), members}, options);
    if (!set) die(set.error().message());
    std::vector<evring::Publisher*> publishers(members);
    std::atomic<unsigned> taken{0};
    std::atomic<bool> written{false};
    std::vector<std::thread> holders;
    for (unsigned t = 0; t < members; ++t)
        holders.emplace_back([&, t] {
            auto p = set->publisher();
            if (!p) die(p.error().message());
            publishers[t] = *p;
            taken.fetch_add(1);
            taken.notify_all();
            written.wait(false);
        });
    for (unsigned seen = taken.load(); seen < members; seen = taken.load()) taken.wait(seen);
    for (std::uint64_t i = 0; i < per; ++i)
        for (evring::Publisher* p : publishers) {
            evring::Reservation r = p->reserve(kPayload);
            p->commit(r);
        }
    SingleRing single = single_ring(dir, "iring", members * per);
    Drains out = drain_pairs(set->path(), name, *single.source, members * per, round, repeats);
    written = true;
    written.notify_all();
    for (auto& h : holders) h.join();
    return out;
}

// A merged reader following 4 live writers, each paced to `rate` / 4
// events/s (bursts of 256 every 256 / (rate / 4) seconds) for `per` events,
// with members of 65536 descriptors: a reader falling behind by more than
// that (65 ms at 1 M events/s per member: room for the scheduler of a busy
// machine, not for a reader slower than the writers) is lapped and loses
// events. Returns the events lost (gaps of every reason), the events
// received and the writers' achieved aggregate rate (wall time).
struct Live {
    std::uint64_t lost = 0;
    std::uint64_t received = 0;
    double rate = 0;
};
Live live_follow(const std::string& dir, std::uint64_t per, double rate) {
    evring::SetCreateOptions options;
    options.directory = in(dir);
    auto set = evring::RingSetWriter::create({config("lset", 16, 24), content(), 4}, options);
    if (!set) die(set.error().message());
    std::atomic<int> taken{0};
    std::atomic<bool> go{false};
    std::atomic<int> done{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t)
        writers.emplace_back([&] {
            auto p = set->publisher();
            if (!p) die(p.error().message());
            taken.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            const auto burst = std::chrono::duration<double>(256.0 / (rate / 4));
            auto next = Clock::now();
            for (std::uint64_t i = 0; i < per; i += 256) {
                for (std::uint64_t k = i; k < std::min(per, i + 256); ++k) {
                    evring::Reservation r = (*p)->reserve(kPayload);
                    (*p)->commit(r);
                }
                next += std::chrono::duration_cast<Clock::duration>(burst);
                std::this_thread::sleep_until(next);
            }
            done.fetch_add(1);
        });
    while (taken.load() < 4) std::this_thread::yield();
    auto merged = evring::RingSetSource::open(set->path(), "lset");
    if (!merged) die(merged.error().message());
    if (!(*merged)->seek(evring::Position::oldest())) die("seek failed");
    go = true;  // every member exists and the reader is at its first event
    const auto start = Clock::now();
    double elapsed = 0;
    evring::SourceItem item;
    std::uint64_t events = 0, lost = 0;
    for (;;) {
        const evring::SourceStep step = (*merged)->next(item);
        if (step == evring::SourceStep::Event) ++events;
        else if (step == evring::SourceStep::Gap) lost += item.gap.count;
        else if (step == evring::SourceStep::NotReady) {
            if (done.load() == 4 && elapsed == 0) elapsed = std::chrono::duration<double>(Clock::now() - start).count();
            if (done.load() == 4 && events + lost >= 4 * per) break;
            (*merged)->wait(std::chrono::milliseconds(1));
        } else if (step != evring::SourceStep::Notice) {
            break;
        }
    }
    for (auto& w : writers) w.join();
    if (elapsed == 0) elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    return {lost, events, static_cast<double>(4 * per) / elapsed};
}

struct Figure {
    std::vector<double> rounds;
    double median() const {
        auto r = rounds;
        std::sort(r.begin(), r.end());
        return r[r.size() / 2];
    }
    double min() const { return *std::min_element(rounds.begin(), rounds.end()); }
    double max() const { return *std::max_element(rounds.begin(), rounds.end()); }
};

// Every figure of a run by key, and per writer figure why it is what it is:
// cpu_share, per_cpu_rate, faults, involuntary (Run).
struct Figures {
    std::map<std::string, Figure> f;
    std::map<std::string, std::array<Figure, 4>> why;

    void writers(const std::string& name, const Run& run) {
        f[name].rounds.push_back(run.rate);
        auto& w = why[name];
        w[0].rounds.push_back(run.cpu_share);
        w[1].rounds.push_back(run.per_cpu_rate);
        w[2].rounds.push_back(run.faults);
        w[3].rounds.push_back(run.involuntary);
    }
};

// The scaling block of one round: the set and the control (threads on rings
// of their own, Exclusive) with 1 and 2 writer threads, back to back, in an
// order rotated by the round: a noisy second of a shared machine then falls
// on a different window each round, never on the same side of every ratio.
struct Scaling {
    Run set1, set2, own1, own2;
};

Scaling scaling_block(const std::string& dir, double seconds, int round) {
    Scaling s;
    const std::array<std::function<void()>, 4> windows{
        [&] { s.set1 = set_writers(dir, 1, seconds); }, [&] { s.set2 = set_writers(dir, 2, seconds); },
        [&] { s.own1 = independent_writers(dir, 1, seconds); }, [&] { s.own2 = independent_writers(dir, 2, seconds); }};
    for (std::size_t k = 0; k < windows.size(); ++k) windows[(k + static_cast<std::size_t>(round)) % windows.size()]();
    return s;
}

// One round of writer figures: the scaling block, then the Shared ring and
// the control in processes. Ratios are the round's own: a figure's median
// over another's mixes rounds of different noise.
void writer_round(const std::string& dir, double seconds, int round, Figures& out) {
    const Scaling s = scaling_block(dir, seconds, round);
    out.writers("set_writer_events_per_s_1t", s.set1);
    out.writers("set_writer_events_per_s_2t", s.set2);
    out.writers("exclusive_writer_events_per_s_1t", s.own1);  // one thread, its own Exclusive ring
    out.writers("independent_writer_events_per_s_2t", s.own2);
    const Run shared1 = ring_writers(dir, 1, seconds, evring::WriterSharing::Shared);
    const Run shared2 = ring_writers(dir, 2, seconds, evring::WriterSharing::Shared);
    const Run procs = independent_processes(dir, 2, seconds);
    out.writers("shared_writer_events_per_s_1t", shared1);
    out.writers("shared_writer_events_per_s_2t", shared2);
    out.writers("independent_writer_events_per_s_2p", procs);
    const auto ratio = [&](const char* key, double value) { out.f[key].rounds.push_back(value); };
    ratio("set_writer_ratio_2t", s.set2.rate / s.set1.rate);
    ratio("independent_writer_ratio_2t", s.own2.rate / s.own1.rate);
    // The set's scaling over the control's in the same round: 1 when the
    // set scales as two threads sharing nothing do.
    ratio("set_writer_ratio_over_control_2t", (s.set2.rate / s.set1.rate) / (s.own2.rate / s.own1.rate));
    // Scaling in the writers' own CPU time: what 2 writers would give over 1
    // if each had a core to itself (cpu share 1). Near 2 means the writers
    // do not slow each other down at all.
    ratio("set_writer_cpu_ratio_2t", 2 * s.set2.per_cpu_rate / s.set1.per_cpu_rate);
    ratio("independent_writer_cpu_ratio_2t", 2 * s.own2.per_cpu_rate / s.own1.per_cpu_rate);
    ratio("independent_writer_ratio_2p", procs.rate / s.own1.rate);
    ratio("shared_writer_ratio_2t", shared2.rate / shared1.rate);
}

// The 1-minute load average (/proc/loadavg): how busy the machine was.
double load_average() {
    double load = -1;
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = -1;
        std::fclose(f);
    }
    return load;
}

// Ratio keys whose spread goes into the JSON too (KEY_min, KEY_max): the
// writers' and the merged reader's.
bool spread_key(const std::string& name) {
    return name.find("ratio") != std::string::npos &&
           (name.find("writer") != std::string::npos || name.find("set_reader") != std::string::npos);
}

void merge_json(const std::string& path, const std::map<std::string, Figure>& figures) {
    std::string text;
    if (std::ifstream in(path); in) {
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    std::string keys;
    for (const auto& [name, f] : figures) {
        char line[160];
        // Ratios keep three decimals; rates are whole events/s; losses are
        // the worst round's.
        const bool ratio = name.find("ratio") != std::string::npos || name.find("load") != std::string::npos;
        const double value = name.find("lost") != std::string::npos ? f.max() : f.median();
        std::snprintf(line, sizeof line, ratio ? "\"%s\": %.3f" : "\"%s\": %.0f", name.c_str(), value);
        keys += (keys.empty() ? "" : ", ") + std::string(line);
        if (spread_key(name)) {
            std::snprintf(line, sizeof line, "\"%s_min\": %.3f, \"%s_max\": %.3f", name.c_str(), f.min(), name.c_str(),
                          f.max());
            keys += ", " + std::string(line);
        }
    }
    if (text.size() >= 2 && text.back() == '}') {
        text.pop_back();
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
        text += (text.back() == '{' ? "" : ", ") + keys + "}\n";
    } else {
        text = "{" + keys + "}\n";
    }
    std::ofstream(path, std::ios::trunc) << text;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    bool readers_only = false;
    bool writers_only = false;
    std::vector<unsigned> interleaved;  // --members N (repeatable): the merge over N interleaved members
    int rounds = 0;
    int writer_rounds = 0;  // --writer-rounds: the writers' rounds, when not --rounds
    int repeats = 0;        // --repeats: pairs of drains per merge order and round
    double live_rate = 4e6;  // aggregate events/s of the live round
    std::string json;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") quick = true;
        else if (arg == "--readers") readers_only = true;
        else if (arg == "--writers") writers_only = true;
        else if (arg == "--pin") g_pin = true;
        else if (arg == "--small-rings") g_small_rings = true;
        else if (arg == "--members" && i + 1 < argc) interleaved.push_back(static_cast<unsigned>(std::stoul(argv[++i])));
        else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::stoi(argv[++i]));
        else if (arg == "--writer-rounds" && i + 1 < argc) writer_rounds = std::max(1, std::stoi(argv[++i]));
        else if (arg == "--repeats" && i + 1 < argc) repeats = std::max(1, std::stoi(argv[++i]));
        else if (arg == "--live-rate" && i + 1 < argc) live_rate = std::stod(argv[++i]);
        else if (arg == "--json-merge" && i + 1 < argc) json = argv[++i];
        else die("usage: evring-set-bench [--quick] [--readers | --writers] [--pin] [--rounds N] [--writer-rounds N] [--repeats N] [--members N]... [--small-rings] "
                 "[--live-rate EVENTS_PER_S] [--json-merge FILE]");
    }
    char templ[] = "/dev/shm/evring-set-bench-XXXXXX";
    if (::mkdtemp(templ) == nullptr) die("cannot make a directory in /dev/shm");
    const std::string dir = templ;
    if (rounds == 0) rounds = quick ? 3 : 5;
    if (repeats == 0) repeats = quick ? 3 : 5;
    const double seconds = quick ? 0.2 : 0.5;
    Figures figures;
    auto& f = figures.f;
    const auto& why = figures.why;
    // Every drain of a round as a sample: the merged reader (Auto) and its
    // ratio over the single ring drained next to it, the forced strategies'
    // rates and scan / tree of the same repetition (above 1: the scan is
    // faster).
    const auto add = [&](const std::string& key, const std::vector<double>& samples) {
        auto& r = f[key].rounds;
        r.insert(r.end(), samples.begin(), samples.end());
    };
    const auto orders = [&](const std::string& suffix, const Drains& d) {
        add("set_reader_events_per_s" + suffix, d.merged[0]);
        add("set_reader_ratio" + suffix, d.ratio[0]);
        add("set_reader_events_per_s" + suffix + "_scan", d.merged[1]);
        add("set_reader_events_per_s" + suffix + "_tree", d.merged[2]);
        for (std::size_t i = 0; i < d.merged[1].size(); ++i)
            f["set_reader_scan_tree_ratio" + suffix].rounds.push_back(d.merged[1][i] / d.merged[2][i]);
    };
    if (writer_rounds == 0) writer_rounds = rounds;
    // set_bench_load: the load average before the bench's own threads ran
    // (the one at the end counts them too; it is only printed).
    const double load_before = load_average();
    f["set_bench_load"].rounds.push_back(load_before);
    for (int round = 0; round < std::max(rounds, writer_rounds); ++round) {
        if (!readers_only && round < writer_rounds) writer_round(dir, seconds, round, figures);
        if (writers_only || round >= rounds) continue;
        for (unsigned n : interleaved) {
            // 16384-descriptor members: the whole set stays unread-intact.
            const Drains d =
                interleaved_readers(dir, n, std::min<std::uint64_t>(16384, 1'000'000 / n), round, repeats);
            orders("_interleaved_" + std::to_string(n) + "m", d);
        }
        const Drains d = readers(dir, quick ? 50'000 : 100'000, round, repeats);
        add("ring_reader_events_per_s", d.single);
        orders("_4m", d);
        const Live live = live_follow(dir, quick ? 50'000 : 200'000, live_rate);
        f["set_reader_live_lost_4m"].rounds.push_back(static_cast<double>(live.lost));
        f["set_live_writer_events_per_s_4t"].rounds.push_back(live.rate);
        if (live.received + live.lost != 4 * (quick ? 50'000u : 200'000u)) die("live follow: events unaccounted for");
    }
    ::rmdir(dir.c_str());
    std::printf("load average (1 min) %.2f at the start, %.2f at the end, the bench's own threads included (two "
                "writers need both cores: a load above about 0.5 at the start means they shared them)\n\n",
                load_before, load_average());
    std::printf("%-36s %14s %14s %14s\n", "figure (64 B, events/s)", "median", "min", "max");
    for (const auto& [name, fig] : f)
        if (name.find("ratio") == std::string::npos && name.find("lost") == std::string::npos &&
            name.find("load") == std::string::npos)
            std::printf("%-36s %14.0f %14.0f %14.0f\n", name.c_str(), fig.median(), fig.min(), fig.max());
    if (!readers_only) {
        std::printf("\n%-36s %10s %16s %10s %12s  (medians; why a rate is what it is)\n", "writers", "cpu share",
                    "events/cpu-s", "faults", "involuntary");
        for (const auto& [name, w] : why)
            std::printf("%-36s %10.2f %16.0f %10.0f %12.0f\n", name.c_str(), w[0].median(), w[1].median(),
                        w[2].median(), w[3].median());
        const auto ratio_line = [&](const char* what, const char* key) {
            const Figure& r = f[key];
            std::printf("%s %.2fx (median of %zu same-round ratios, %.2f..%.2f)\n", what, r.median(), r.rounds.size(),
                        r.min(), r.max());
        };
        std::printf("\n");
        ratio_line("set 2t/1t", "set_writer_ratio_2t");
        ratio_line("set 2t/1t in the writers' CPU time (2 x events per CPU-second):", "set_writer_cpu_ratio_2t");
        ratio_line("control, 2 threads on own Exclusive rings / 1:", "independent_writer_ratio_2t");
        ratio_line("control 2t/1t in the writers' CPU time:", "independent_writer_cpu_ratio_2t");
        ratio_line("set 2t/1t over control 2t/1t:", "set_writer_ratio_over_control_2t");
        ratio_line("control, 2 processes on own Exclusive rings / 1:", "independent_writer_ratio_2p");
        ratio_line("shared 2t/1t", "shared_writer_ratio_2t");
    }
    for (unsigned n : interleaved) {
        const Figure& r = f["set_reader_ratio_interleaved_" + std::to_string(n) + "m"];
        const Figure& e = f["set_reader_events_per_s_interleaved_" + std::to_string(n) + "m"];
        std::printf("merged reader, %u interleaved members / single ring: %.2fx (median of %zu same-run pairs, "
                    "%.2f..%.2f); %.1f ns per merged event\n",
                    n, r.median(), r.rounds.size(), r.min(), r.max(), 1e9 / e.median());
    }
    for (const auto& [name, r] : f)
        if (name.find("scan_tree_ratio") != std::string::npos)
            std::printf("%s: merge by scan / by tree, events/s %.2fx (median of %zu same-run pairs, %.2f..%.2f)\n",
                        name.c_str(), r.median(), r.rounds.size(), r.min(), r.max());
    if (!writers_only) {
        const Figure& ratio = f["set_reader_ratio_4m"];
        std::printf("merged reader (4 members) / single ring: %.2fx (median of %zu same-run pairs, %.2f..%.2f)\n",
                    ratio.median(), ratio.rounds.size(), ratio.min(), ratio.max());
        const Figure& lost = f["set_reader_live_lost_4m"];
        std::printf("merged reader following 4 live writers paced to %.1f M events/s in total (reached %.1f M, "
                    "median): lost %.0f (max of %zu rounds)\n",
                    live_rate / 1e6, f["set_live_writer_events_per_s_4t"].median() / 1e6, lost.max(),
                    lost.rounds.size());
    }
    if (!json.empty()) merge_json(json, f);
    return 0;
}
