// producer: creates a ring and publishes a synthetic market feed into it.
//
//   producer <ring-config> [--count N] [--rate N] [--keep] [--threads N [--remove]] [--stop-when-ready]
//
// With --threads N, N writer threads each publish --count events (at --rate
// each) into a ring set (ring_set.hpp, docs/ring-sets.md) of N members, one
// per thread, each taken by the thread's first publisher() call. The set is
// kept on exit so that it can be read afterwards (remove its directory, or
// run again, which replaces it), unless --remove: then the set's clean close
// removes it, as a set writer does by default; the members' sizes default to 18:24 (256 Ki
// descriptors, 16 MiB of payload each) when the config gives none. At exit it
// says what each member holds ("producer: member 0 holds seqno 1..N"), before
// the close that may remove the set.
//
// With --stop-when-ready the process stops itself (SIGSTOP) once its ring, or
// its set with every member, is made and before it writes: a test attaches its
// readers, however slow its build, and then lets it go on with SIGCONT.
//
// Creates the ring (failing clearly when a live writer owns it), then writes
// quotes and trades until stopped (Ctrl-C, SIGTERM), until --count events, at
// most --rate events per second when asked. Removes the ring on exit unless
// --keep is given.
//
// The events are those of schemas/demo.toml, through the header the build
// generates from it (demo_schema.hpp): the ring embeds the schema
// (demo::ring_content()), so any reader decodes it by name with no other file,
// and each event goes out through its typed helper (demo::publish_quote,
// demo::publish_trade).
#include <signal.h>
#include <unistd.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <barrier>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "demo_events.hpp"
#include "producer_options.hpp"
#include "evring/set/ring_set.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/typed_publish.hpp"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

std::uint64_t monotonic_nanos() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Paces the loop to `rate` events per second by checking the clock once per
// batch (a sleep per event would cap the rate far below what is asked). A
// producer held up (SIGSTOP, a starved core) for more than kMaxLag does not
// burst to catch up: the schedule restarts, so the rate is an upper bound over
// any window, which the tests that pause a producer rely on.
class Pacer {
public:
    explicit Pacer(std::uint64_t rate) : rate_(rate), anchor_nanos_(monotonic_nanos()) {}
    void wait_for(std::uint64_t events_done) {
        if (rate_ == 0 || events_done % 64 != 0) return;
        const std::uint64_t due = anchor_nanos_ + (events_done - anchor_events_) * 1'000'000'000u / rate_;
        std::uint64_t now = monotonic_nanos();
        if (now > due + kMaxLag) {
            anchor_nanos_ = now;
            anchor_events_ = events_done;
            return;
        }
        for (; now < due; now = monotonic_nanos()) {
            if (due - now > 200'000) {
                timespec pause{0, static_cast<long>(due - now - 100'000)};
                ::nanosleep(&pause, nullptr);
            }
        }
    }

private:
    static constexpr std::uint64_t kMaxLag = 10'000'000;  // 10 ms
    std::uint64_t rate_;
    std::uint64_t anchor_nanos_;
    std::uint64_t anchor_events_ = 0;
};

// Publishes `count` events (0: until stopped) through `publisher`.
std::uint64_t publish_feed(evring::Publisher& publisher, std::uint64_t count, std::uint64_t rate, std::uint64_t seed) {
    Pacer pacer(rate);
    std::uint64_t written = 0;
    std::uint64_t state = 88172645463325252ull ^ seed;  // xorshift: cheap, deterministic prices
    while (!g_stop.load(std::memory_order_relaxed) && (count == 0 || written < count)) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const std::size_t symbol = state % demo::kSymbols.size();
        const std::string_view name = demo::kSymbols[symbol];
        demo::Tick tick{};
        tick.counter = written;
        tick.price = static_cast<std::int64_t>(1'000'000 + state % 50'000);
        tick.quantity = static_cast<std::uint32_t>(1 + (state >> 32) % 1000);
        demo::set_name(tick, name);
        tick.checksum = demo::tick_checksum(tick);
        const demo::Flow flow{.symbol = symbol + 1, .venue = 1 + (state >> 40) % 3};
        if ((state >> 60) == 0) demo::publish_trade(publisher, tick, flow);
        else demo::publish_quote(publisher, tick, flow);
        ++written;
        pacer.wait_for(written);
    }
    return written;
}

// --threads: one member per thread of a ring set.
int run_set(const std::string& config_text, evring::RingConfig config, unsigned threads, std::uint64_t count,
            std::uint64_t rate, bool remove, bool stop_when_ready) {
    if (config_text.find(':') == std::string::npos) {
        config.descriptor_shift = 18;
        config.payload_buf_shift = 24;
    }
    evring::SetCreateOptions options;
    options.keep_on_close = !remove;
    auto set = evring::RingSetWriter::create({config, demo::ring_content(), threads}, options);
    if (!set) {
        std::fprintf(stderr, "producer: %s\n", set.error().message().c_str());
        return 1;
    }
    std::fprintf(stderr, "producer: writing to ring set %s with %u threads (pid %d)\n", set->path().c_str(), threads,
                 ::getpid());
    std::atomic<std::uint64_t> written{0};
    std::atomic<bool> failed{false};
    // Every thread takes its member before any starts writing: a thread that
    // finished and exited would otherwise hand its member to a thread started
    // after it (ring_set.hpp), and the set would have fewer members than threads.
    // The barrier's completion runs once all are taken, before any writes.
    std::barrier members_taken(static_cast<std::ptrdiff_t>(threads), [stop_when_ready]() noexcept {
        if (stop_when_ready) ::raise(SIGSTOP);
    });
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            auto publisher = set->publisher();  // this thread's own member
            members_taken.arrive_and_wait();
            if (!publisher) {
                std::fprintf(stderr, "producer: %s\n", publisher.error().message().c_str());
                failed = true;
                return;
            }
            written += publish_feed(**publisher, count, rate, t);
        });
    for (auto& worker : workers) worker.join();
    // What each member holds (final: every thread has stopped), said before
    // the close, which removes the set unless it is kept: scripts/soak
    // accounts per member, and cannot ask a removed set.
    for (unsigned m = 0; m < threads; ++m)
        if (auto member = evring::RingReader::open(set->path() + "/m" + std::to_string(m)))
            std::fprintf(stderr, "producer: member %u holds seqno 1..%llu\n", m,
                         static_cast<unsigned long long>(member->ring().header().control.last_seqno));
    std::fprintf(stderr, "producer: wrote %llu events\n", static_cast<unsigned long long>(written.load()));
    return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Records a synthetic market feed into an event ring."};
    ProducerOptions args;  // the ring, --count and --rate (producer_options.hpp)
    add_producer_options(app, args);
    bool keep = false;
    unsigned threads = 0;
    app.add_flag("--keep", keep, "leave the ring file in place on exit");
    app.add_option("--threads", threads, "write a ring set with one member per thread, N threads (kept on exit)")
        ->check(CLI::Range(1u, 1024u));
    bool remove = false;
    app.add_flag("--remove", remove,
                 "with --threads: remove the set on exit, as a set writer does by default (keep_on_close false)");
    bool stop_when_ready = false;
    app.add_flag("--stop-when-ready", stop_when_ready,
                 "stop (SIGSTOP) once the ring or set is made, before writing; go on at SIGCONT");
    CLI11_PARSE(app, argc, argv);
    const std::uint64_t count = args.count, rate = args.rate;

    auto config = evring::parse_ring_config(args.ring);
    if (!config) {
        std::fprintf(stderr, "producer: %s\n", config.error().message().c_str());
        return 2;
    }
    if (threads > 0) {
        ::signal(SIGINT, on_signal);
        ::signal(SIGTERM, on_signal);
        return run_set(args.ring, *config, threads, count, rate, remove, stop_when_ready);
    }
    evring::CreateOptions options;
    options.keep_on_close = keep;
    auto writer = evring::RingWriter::create({*config, demo::ring_content()}, options);
    if (!writer) {
        std::fprintf(stderr, "producer: %s\n", writer.error().message().c_str());
        return 1;
    }
    ::signal(SIGINT, on_signal);
    ::signal(SIGTERM, on_signal);
    std::fprintf(stderr, "producer: writing to %s (pid %d)\n", writer->path().c_str(), ::getpid());

    // This process holds the ring exclusively and writes from one thread, so
    // reservations can skip the atomic read-modify-writes (publisher.hpp).
    evring::Publisher publisher(writer->ring(), evring::WriterSharing::Exclusive);
    if (stop_when_ready) ::raise(SIGSTOP);
    const std::uint64_t written = publish_feed(publisher, count, rate, 0);
    std::fprintf(stderr, "producer: wrote %llu events\n", static_cast<unsigned long long>(written));
    return 0;
}
