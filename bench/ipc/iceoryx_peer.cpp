// evring-ipc-iceoryx: the iceoryx baseline peer (built only when iceoryx's
// C++ API is installed). Same options and result line as the other peers:
// `evring-ipc-iceoryx role=writer|reader size=.. events=.. rate=.. latency=0|1`.
// The reader busy-polls take(), the way iceoryx's own latency benchmark does;
// its queue keeps the newest 256 samples, so a slow reader loses the oldest,
// counted from gaps in the sequence numbers.
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "ipc/common.hpp"

namespace {

using namespace evring::ipc;
const iox::capro::ServiceDescription kService{"evring", "bench", "events"};

int run_writer(const PeerOptions& options) {
    iox::runtime::PoshRuntime::initRuntime("evring-bench-writer");
    iox::popo::UntypedPublisher publisher(kService);
    while (!publisher.hasSubscribers()) std::this_thread::yield();
    const auto size = static_cast<std::uint32_t>(std::max<std::uint64_t>(options.count("size", 64), sizeof(MessageHead)));
    const std::uint64_t events = options.count("events", 100'000);
    const double rate = options.number("rate", 0);
    const bool stamp = options.text("latency", "0") == "1";
    std::uint64_t failed = 0;
    auto send = [&](std::uint64_t sequence, std::uint64_t sent_ns) {
        publisher.loan(size)
            .and_then([&](void* payload) {
                std::memset(payload, 0x5a, size);
                MessageHead head{sequence, sent_ns};
                std::memcpy(payload, &head, sizeof head);
                publisher.publish(payload);
            })
            .or_else([&](auto&) { ++failed; });
    };
    const std::uint64_t start = evring::wall_clock_nanos();
    std::uint64_t sent = 0;
    while (sent < events) {
        const std::uint64_t allowed =
            rate > 0 ? paced_allowance(rate, evring::wall_clock_nanos() - start, std::min(events, sent + 64)) : events;
        for (; sent < allowed; ++sent) send(sent + 1, stamp ? evring::wall_clock_nanos() : 0);
    }
    const double elapsed = double(evring::wall_clock_nanos() - start);
    send(kEndSequence, 0);
    ResultLine()
        .add("writer_ns_per_event", elapsed / double(events))
        .add("writer_events_per_s", double(events) / elapsed * 1e9)
        .add("events", double(events))
        .add("loan_failures", double(failed))
        .print();
    return 0;
}

int run_reader(const PeerOptions& options) {
    iox::runtime::PoshRuntime::initRuntime("evring-bench-reader");
    iox::popo::SubscriberOptions subscriber_options;
    subscriber_options.queueCapacity = iox::MAX_SUBSCRIBER_QUEUE_CAPACITY;
    iox::popo::UntypedSubscriber subscriber(kService, subscriber_options);
    const bool latency = options.text("latency", "0") == "1";
    std::vector<double> latencies;
    if (latency) latencies.reserve(options.count("events", 100'000) + 16);
    print_ready();
    std::uint64_t received = 0, lost = 0, expected = 1, first_ns = 0, last_progress = evring::wall_clock_nanos();
    bool ended = false;
    while (!ended) {
        subscriber.take()
            .and_then([&](const void* payload) {
                MessageHead head;
                std::memcpy(&head, payload, sizeof head);
                subscriber.release(payload);
                if (head.sequence == kEndSequence) {
                    ended = true;
                    return;
                }
                const std::uint64_t now = evring::wall_clock_nanos();
                last_progress = now;
                if (received++ == 0) first_ns = now;
                if (head.sequence > expected) lost += head.sequence - expected;
                expected = head.sequence + 1;
                if (latency) latencies.push_back(double(static_cast<std::int64_t>(now - head.sent_ns)));
            })
            .or_else([&](auto&) {
                if (evring::wall_clock_nanos() - last_progress > 5'000'000'000u) ended = true;
            });
    }
    const double elapsed = double(evring::wall_clock_nanos() - first_ns);
    ResultLine line;
    line.add("received", double(received))
        .add("lost", double(lost))
        .add("ended", 1)
        .add("reader_events_per_s", received > 1 ? double(received) / elapsed * 1e9 : 0);
    if (latency) {
        line.add("latency_p50_ns", percentile(latencies, 0.50))
            .add("latency_p99_ns", percentile(latencies, 0.99))
            .add("latency_p999_ns", percentile(latencies, 0.999));
    }
    line.print();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // iceoryx logs its runtime registration on stderr; the table is on stdout.
    if (std::freopen("/dev/null", "w", stderr) == nullptr) return 2;
    const PeerOptions options = parse_peer_options(argc, argv, 1);
    return options.text("role") == "writer" ? run_writer(options) : run_reader(options);
}
