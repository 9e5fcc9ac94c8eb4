// Baseline transports for the harness, driven exactly like the evring peers:
// a pipe, a unix stream socket, a POSIX message queue and a Boost.Interprocess
// message_queue. The writer sends fixed-size messages (flat out or paced);
// the reader blocks in the transport's receive call as a normal user would.
#include <fcntl.h>
#include <mqueue.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include <boost/interprocess/ipc/message_queue.hpp>

#include "ipc/peers.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

namespace {

class Transport {
public:
    virtual ~Transport() = default;
    virtual void send(const void* data, std::size_t size) = 0;
    virtual void receive(void* data, std::size_t size) = 0;
};

// Pipes and stream sockets: the fd was inherited from the orchestrator.
class FdTransport : public Transport {
public:
    explicit FdTransport(int fd) : fd_(fd) {}
    void send(const void* data, std::size_t size) override {
        const auto* p = static_cast<const char*>(data);
        while (size > 0) {
            const ssize_t n = ::write(fd_, p, size);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) bench::die(std::string("write: ") + std::strerror(errno));
            p += n;
            size -= static_cast<std::size_t>(n);
        }
    }
    void receive(void* data, std::size_t size) override {
        auto* p = static_cast<char*>(data);
        while (size > 0) {
            const ssize_t n = ::read(fd_, p, size);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) bench::die(std::string("read: ") + (n == 0 ? "end of file" : std::strerror(errno)));
            p += n;
            size -= static_cast<std::size_t>(n);
        }
    }

private:
    int fd_;
};

class PosixMqTransport : public Transport {
public:
    explicit PosixMqTransport(const std::string& name) : mq_(::mq_open(name.c_str(), O_RDWR)) {
        if (mq_ == static_cast<mqd_t>(-1)) bench::die("mq_open " + name + ": " + std::strerror(errno));
    }
    ~PosixMqTransport() override { ::mq_close(mq_); }
    void send(const void* data, std::size_t size) override {
        while (::mq_send(mq_, static_cast<const char*>(data), size, 0) != 0)
            if (errno != EINTR) bench::die(std::string("mq_send: ") + std::strerror(errno));
    }
    void receive(void* data, std::size_t size) override {
        unsigned priority = 0;
        for (;;) {
            const ssize_t n = ::mq_receive(mq_, static_cast<char*>(data), 8192, &priority);
            if (n >= 0 && static_cast<std::size_t>(n) == size) return;
            if (n < 0 && errno == EINTR) continue;
            bench::die(std::string("mq_receive: ") + std::strerror(errno));
        }
    }

private:
    mqd_t mq_;
};

class BoostMqTransport : public Transport {
public:
    explicit BoostMqTransport(const std::string& name)
        : queue_(boost::interprocess::open_only, name.c_str()) {}
    void send(const void* data, std::size_t size) override { queue_.send(data, size, 0); }
    void receive(void* data, std::size_t size) override {
        std::size_t got = 0;
        unsigned priority = 0;
        queue_.receive(data, size, got, priority);
        if (got != size) bench::die("boost message_queue: short message");
    }

private:
    boost::interprocess::message_queue queue_;
};

std::unique_ptr<Transport> open_transport(const PeerOptions& options) {
    const std::string kind = options.text("transport");
    if (kind == "pipe" || kind == "unix")
        return std::make_unique<FdTransport>(static_cast<int>(options.count("fd")));
    if (kind == "posixmq") return std::make_unique<PosixMqTransport>(options.text("name"));
    if (kind == "boostmq") return std::make_unique<BoostMqTransport>(options.text("name"));
    bench::die("unknown transport " + kind);
}

int run_writer(Transport& transport, const PeerOptions& options) {
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::uint64_t events = options.count("events", 100'000);
    const double rate = options.number("rate", 0);
    const bool stamp = options.text("latency", "0") == "1";
    std::vector<std::byte> message(size, std::byte{0x5a});
    const std::uint64_t start = wall_clock_nanos();
    std::uint64_t sent = 0;
    while (sent < events) {
        const std::uint64_t allowed =
            rate > 0 ? paced_allowance(rate, wall_clock_nanos() - start, std::min(events, sent + 64)) : events;
        for (; sent < allowed; ++sent) {
            MessageHead head{sent + 1, stamp ? monotonic_nanos() : 0};
            std::memcpy(message.data(), &head, sizeof head);
            transport.send(message.data(), size);
        }
    }
    const double elapsed = double(wall_clock_nanos() - start);
    MessageHead end{kEndSequence, 0};
    std::memcpy(message.data(), &end, sizeof end);
    transport.send(message.data(), size);
    ResultLine()
        .add("writer_ns_per_event", elapsed / double(events))
        .add("writer_events_per_s", double(events) / elapsed * 1e9)
        .add("events", double(events))
        .print();
    return 0;
}

int run_reader(Transport& transport, const PeerOptions& options) {
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const bool latency = options.text("latency", "0") == "1";
    std::vector<std::byte> message(std::max<std::size_t>(size, 8192));
    std::vector<double> latencies;
    if (latency) latencies.reserve(options.count("events", 100'000) + 16);
    print_ready();
    std::uint64_t received = 0, first_ns = 0, lost = 0, expected = 1;
    for (;;) {
        transport.receive(message.data(), size);
        MessageHead head;
        std::memcpy(&head, message.data(), sizeof head);
        if (head.sequence == kEndSequence) break;
        const std::uint64_t now = monotonic_nanos();
        if (received++ == 0) first_ns = now;
        if (head.sequence != expected) lost += head.sequence - expected;  // cannot happen: checked
        expected = head.sequence + 1;
        if (latency) latencies.push_back(double(static_cast<std::int64_t>(now - head.sent_ns)));
    }
    const double elapsed = double(monotonic_nanos() - first_ns);
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

int run_baseline_peer(const PeerOptions& options) {
    std::unique_ptr<Transport> transport = open_transport(options);
    return options.text("role") == "writer" ? run_writer(*transport, options)
                                            : run_reader(*transport, options);
}

}  // namespace evring::ipc
