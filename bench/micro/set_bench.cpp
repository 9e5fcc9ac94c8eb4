// evring-set-bench: ring sets against one shared ring, in the same run.
//
//   evring-set-bench [--quick] [--readers] [--live-rate EVENTS_PER_S] [--json-merge FILE]
//
// Writers (64-byte payloads, reserve + memcpy + commit in a loop for a fixed
// time, aggregate events/s over all threads):
//   set        each thread publishes into its own member (RingSetWriter::publisher:
//              the claimed plain-store path)
//   shared     every thread shares one ring's Publisher (WriterSharing::Shared)
//   exclusive  one thread, WriterSharing::Exclusive (the single-writer ceiling)
// with 1 and 2 threads (--readers leaves them out). Readers: a merged
// RingSetSource over 4 members of N events each against a RingSource over one
// ring of 4N events, descriptors only (next() with PayloadRead::None), events
// per second of the reading thread's CPU time (drain_rate says why), and their
// ratio in the same round. Live: a merged reader following 4 writer threads
// paced to --live-rate events/s in total (default 4 M), counting lost events.
//
// Each figure is the median of 3 rounds (5 without --quick), with the spread
// (min..max) printed beside it. --json-merge adds the keys
// set_writer_events_per_s_{1,2}t, shared_writer_events_per_s_{1,2}t,
// exclusive_writer_events_per_s_1t, set_reader_events_per_s_4m,
// ring_reader_events_per_s, set_reader_ratio_4m (the median of the rounds'
// ratios), set_live_writer_events_per_s_4t and set_reader_live_lost_4m (the
// worst round) to the JSON object in FILE (creating it if needed). Rings live
// in a private directory in /dev/shm (tmpfs).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/set/ring_set.hpp"
#include "set/ring_set_source.hpp"
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

// Runs `threads` threads: each calls `setup(thread_index)` (a set member is
// taken there, outside the timed window), then `body(setup's result, stop)`
// for `seconds`; returns aggregate events/s from the counts they return.
template <class Setup, class Body>
double run_threads(unsigned threads, double seconds, Setup setup, Body body) {
    std::atomic<bool> stop{false};
    std::atomic<unsigned> ready{0};
    std::vector<std::uint64_t> counts(threads);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            auto prepared = setup(t);
            ready.fetch_add(1);
            while (ready.load() < threads) {}
            counts[t] = body(prepared, stop);
        });
    while (ready.load() < threads) {}
    const auto start = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& w : workers) w.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    std::uint64_t total = 0;
    for (auto c : counts) total += c;
    return static_cast<double>(total) / elapsed;
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

double set_writers(const std::string& dir, unsigned threads, double seconds) {
    evring::SetCreateOptions options;
    options.directory = in(dir);
    auto set = evring::RingSetWriter::create({config("wset"), content(), 4}, options);
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

double ring_writers(const std::string& dir, unsigned threads, double seconds, evring::WriterSharing sharing) {
    evring::CreateOptions options;
    options.directory = in(dir);
    auto ring = evring::RingWriter::create({config("wring"), content()}, options);
    if (!ring) die(ring.error().message());
    evring::Publisher shared(ring->ring(), sharing);
    return run_threads(
        threads, seconds, [&](unsigned) { return &shared; },
        [](evring::Publisher* p, std::atomic<bool>& stop) { return publish_loop(*p, stop); });
}

double thread_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
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

// 4 members of `per` events each (threads writing at once, so their times
// interleave), read merged; one ring of 4 * per events read alone.
std::pair<double, double> readers(const std::string& dir, std::uint64_t per) {
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
    auto merged = evring::RingSetSource::open(set->path(), "rset");
    if (!merged) die(merged.error().message());
    const double set_rate = drain_rate(**merged, 4 * per);

    evring::CreateOptions ring_options;
    ring_options.directory = in(dir);
    auto ring = evring::RingWriter::create({config("rring", 20, 26), content()}, ring_options);
    if (!ring) die(ring.error().message());
    evring::Publisher p(ring->ring());
    for (std::uint64_t i = 0; i < 4 * per; ++i) {
        evring::Reservation r = p.reserve(kPayload);
        p.commit(r);
    }
    auto reader = evring::RingReader::open(ring->path());
    if (!reader) die(reader.error().message());
    auto single = evring::RingSource::open_live(std::move(reader).value(), "rring");
    if (!single) die(single.error().message());
    return {set_rate, drain_rate(**single, 4 * per)};
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
        const bool ratio = name.find("ratio") != std::string::npos;
        const double value = name.find("lost") != std::string::npos ? f.max() : f.median();
        std::snprintf(line, sizeof line, ratio ? "\"%s\": %.3f" : "\"%s\": %.0f", name.c_str(), value);
        keys += (keys.empty() ? "" : ", ") + std::string(line);
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
    double live_rate = 4e6;  // aggregate events/s of the live round
    std::string json;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") quick = true;
        else if (arg == "--readers") readers_only = true;
        else if (arg == "--live-rate" && i + 1 < argc) live_rate = std::stod(argv[++i]);
        else if (arg == "--json-merge" && i + 1 < argc) json = argv[++i];
        else die("usage: evring-set-bench [--quick] [--readers] [--live-rate EVENTS_PER_S] [--json-merge FILE]");
    }
    char templ[] = "/dev/shm/evring-set-bench-XXXXXX";
    if (::mkdtemp(templ) == nullptr) die("cannot make a directory in /dev/shm");
    const std::string dir = templ;
    const int rounds = quick ? 3 : 5;
    const double seconds = quick ? 0.2 : 0.5;
    std::map<std::string, Figure> f;
    for (int round = 0; round < rounds; ++round) {
        // Interleaved, so that a noisy moment of a shared machine hits every variant alike.
        if (!readers_only) {
            f["set_writer_events_per_s_1t"].rounds.push_back(set_writers(dir, 1, seconds));
            f["shared_writer_events_per_s_1t"].rounds.push_back(
                ring_writers(dir, 1, seconds, evring::WriterSharing::Shared));
            f["exclusive_writer_events_per_s_1t"].rounds.push_back(
                ring_writers(dir, 1, seconds, evring::WriterSharing::Exclusive));
            f["set_writer_events_per_s_2t"].rounds.push_back(set_writers(dir, 2, seconds));
            f["shared_writer_events_per_s_2t"].rounds.push_back(
                ring_writers(dir, 2, seconds, evring::WriterSharing::Shared));
        }
        const auto [set_rate, ring_rate] = readers(dir, quick ? 50'000 : 100'000);
        f["set_reader_events_per_s_4m"].rounds.push_back(set_rate);
        f["ring_reader_events_per_s"].rounds.push_back(ring_rate);
        // The ratio of the same round: both readers ran back to back.
        f["set_reader_ratio_4m"].rounds.push_back(set_rate / ring_rate);
        const Live live = live_follow(dir, quick ? 50'000 : 200'000, live_rate);
        f["set_reader_live_lost_4m"].rounds.push_back(static_cast<double>(live.lost));
        f["set_live_writer_events_per_s_4t"].rounds.push_back(live.rate);
        if (live.received + live.lost != 4 * (quick ? 50'000u : 200'000u)) die("live follow: events unaccounted for");
    }
    ::rmdir(dir.c_str());
    std::printf("%-36s %14s %14s %14s\n", "figure (64 B, events/s)", "median", "min", "max");
    for (const auto& [name, fig] : f)
        if (name.find("ratio") == std::string::npos && name.find("lost") == std::string::npos)
            std::printf("%-36s %14.0f %14.0f %14.0f\n", name.c_str(), fig.median(), fig.min(), fig.max());
    if (!readers_only) {
        const double set_ratio = f["set_writer_events_per_s_2t"].median() / f["set_writer_events_per_s_1t"].median();
        const double shared_ratio =
            f["shared_writer_events_per_s_2t"].median() / f["shared_writer_events_per_s_1t"].median();
        std::printf("set 2t/1t %.2fx, shared 2t/1t %.2fx (medians)\n", set_ratio, shared_ratio);
    }
    const Figure& ratio = f["set_reader_ratio_4m"];
    std::printf("merged reader (4 members) / single ring: %.2fx (median of %zu same-round ratios, %.2f..%.2f)\n",
                ratio.median(), ratio.rounds.size(), ratio.min(), ratio.max());
    const Figure& lost = f["set_reader_live_lost_4m"];
    std::printf("merged reader following 4 live writers paced to %.1f M events/s in total (reached %.1f M, median): "
                "lost %.0f (max of %zu rounds)\n",
                live_rate / 1e6, f["set_live_writer_events_per_s_4t"].median() / 1e6, lost.max(), lost.rounds.size());
    if (!json.empty()) merge_json(json, f);
    return 0;
}
