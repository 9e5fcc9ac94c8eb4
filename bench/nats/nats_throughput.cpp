// evring-nats-bench — events per second through a NATS JetStream stream on
// loopback: a publisher (this process) and a stream reader (a child process).
//
//   evring-nats-bench [--url nats://127.0.0.1:PORT] [--events N] [--size BYTES]
//                     [--batch EVENTS_PER_MESSAGE] [--memory]
//
// Without --url it starts its own `nats-server -js` on a free port with a
// temporary store (removed afterwards). The stream is created fresh. The
// reader is started first and waits; the figures are
//   publish   N / (time to publish everything and have it acknowledged)
//   end-to-end N / (from the first publication to the reader's last event)
// docs/distributed.md records the figures measured this way.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nats/nats_publisher.hpp"
#include "nats/nats_reader.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace nats = evring::nats;

struct Settings {
    std::string url;
    std::uint64_t events = 1'000'000;
    std::size_t size = 64;
    std::uint32_t batch = 1;
    bool memory = false;
};

[[noreturn]] void die(const std::string& message) {
    fmt::print(stderr, "evring-nats-bench: {}\n", message);
    std::exit(1);
}

std::int64_t now_nanos() { return Clock::now().time_since_epoch().count(); }

unsigned free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t size = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
    ::close(fd);
    return ntohs(address.sin_port);
}

// A nats-server of our own, killed and cleaned up on exit.
struct OwnServer {
    pid_t pid = 0;
    std::string dir;
    ~OwnServer() {
        if (pid > 0) {
            ::kill(pid, SIGTERM);
            ::waitpid(pid, nullptr, 0);
        }
        if (!dir.empty()) std::filesystem::remove_all(dir);
    }
    std::string start() {
        char templ[] = "/tmp/evring-nats-bench-XXXXXX";
        if (::mkdtemp(templ) == nullptr) die("mkdtemp failed");
        dir = templ;
        const std::string port = std::to_string(free_port());
        pid = ::fork();
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            ::execlp("nats-server", "nats-server", "-js", "-a", "127.0.0.1", "-p", port.c_str(), "-sd", dir.c_str(),
                     nullptr);
            ::_exit(127);
        }
        return "nats://127.0.0.1:" + port;
    }
};

nats::Connection connect(const std::string& text) {
    auto url = nats::parse_url(text);
    if (!url) die(url.error().message());
    for (int attempt = 0;; ++attempt) {  // an own server may still be starting
        auto connection = nats::Connection::connect(*url);
        if (connection) return std::move(connection).value();
        if (attempt == 100) die(connection.error().message());
        std::this_thread::sleep_for(50ms);
    }
}

// The reader process: reads `events` events, writes the time of the last
// one (or -1) to `out`.
int run_reader(const Settings& settings, int ready, int out) {
    auto connection = connect(settings.url);
    nats::ReaderOptions options;
    options.stream = "BENCH";
    auto opened = nats::StreamReader::open(connection, options);
    if (!opened) die(opened.error().message());
    std::unique_ptr<nats::StreamReader> reader = std::move(opened).value();
    char byte = 1;
    if (::write(ready, &byte, 1) != 1) return 1;
    std::uint64_t seen = 0, checksum = 0;
    evring::SourceItem item;
    const auto deadline = Clock::now() + 600s;
    while (seen < settings.events && Clock::now() < deadline) {
        switch (reader->next(item, evring::PayloadRead::Copy)) {
        case evring::SourceStep::Event:
            ++seen;
            checksum += item.event.descriptor.seqno + item.event.payload.size();
            break;
        case evring::SourceStep::NotReady: reader->wait(100ms); break;
        case evring::SourceStep::Failed: die(reader->error().message());
        default: break;
        }
    }
    std::int64_t done = seen == settings.events ? now_nanos() : -1;
    if (::write(out, &done, sizeof done) != sizeof done) return 1;
    return checksum == 0 && settings.events > 0 ? 1 : 0;
}

Settings parse(int argc, char** argv) {
    Settings s;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die(fmt::format("{} needs a value", arg));
            return argv[++i];
        };
        if (arg == "--url") s.url = value();
        else if (arg == "--events") s.events = std::stoull(value());
        else if (arg == "--size") s.size = std::stoull(value());
        else if (arg == "--batch") s.batch = static_cast<std::uint32_t>(std::stoul(value()));
        else if (arg == "--memory") s.memory = true;
        else die(fmt::format("unknown argument '{}' (see the top of bench/nats/nats_throughput.cpp)", arg));
    }
    if (s.events == 0 || s.batch == 0) die("--events and --batch must be positive");
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    Settings settings = parse(argc, argv);
    OwnServer own;
    if (settings.url.empty()) settings.url = own.start();

    {  // a fresh stream
        auto connection = connect(settings.url);
        (void)connection.delete_stream("BENCH");
        nats::StreamSpec spec;
        spec.name = "BENCH";
        spec.prefix = "bench";
        spec.memory_storage = settings.memory;
        if (auto s = connection.ensure_stream(spec); !s) die(s.error().message());
    }
    int ready[2], result[2];
    if (::pipe(ready) != 0 || ::pipe(result) != 0) die("pipe failed");
    pid_t child = ::fork();
    if (child == 0) ::_exit(run_reader(settings, ready[1], result[1]));
    char byte = 0;
    if (::read(ready[0], &byte, 1) != 1) die("the reader did not start");

    auto connection = connect(settings.url);
    nats::PublisherOptions options;
    options.ring.name = "bench";
    options.ring.instance = "bench-1";
    options.subjects.prefix = "bench";
    options.stream.name = "BENCH";
    options.events_per_message = settings.batch;
    auto publisher = nats::StreamPublisher::open(connection, options);
    if (!publisher) die(publisher.error().message());
    std::vector<std::byte> payload(settings.size, std::byte{0x5a});
    evring::EventDescriptor event{};
    event.event_type = 1;
    event.payload_size = static_cast<std::uint32_t>(settings.size);

    const std::int64_t started = now_nanos();
    if (publisher->announce_ring(1) != nats::PublishStatus::Ok) die("announcing failed");
    for (std::uint64_t s = 1; s <= settings.events; ++s) {
        event.seqno = s;
        event.record_epoch_nanos = static_cast<std::uint64_t>(started) + s;
        for (;;) {
            nats::PublishStatus status = publisher->publish_event(event, payload);
            if (status == nats::PublishStatus::Ok) break;
            if (status == nats::PublishStatus::Failed) die(publisher->failure()->message());
            publisher->wait_ready(100ms);
        }
    }
    if (auto s = publisher->flush(60s); !s) die(s.error().message());
    const std::int64_t published = now_nanos();
    std::int64_t last_read = -1;
    if (::read(result[0], &last_read, sizeof last_read) != sizeof last_read || last_read < 0)
        die("the reader did not receive every event");
    int status = 0;
    ::waitpid(child, &status, 0);

    const double n = static_cast<double>(settings.events);
    const double publish_seconds = static_cast<double>(published - started) / 1e9;
    const double end_to_end_seconds = static_cast<double>(last_read - started) / 1e9;
    const auto stats = publisher->stats();
    fmt::print("events {} size {} B batch {} storage {}: publish {:.0f} ev/s, end-to-end {:.0f} ev/s "
               "({:.1f} MB/s of payload), {} messages, {} recoveries\n",
               settings.events, settings.size, settings.batch, settings.memory ? "memory" : "file",
               n / publish_seconds, n / end_to_end_seconds,
               n * static_cast<double>(settings.size) / end_to_end_seconds / 1e6, stats.messages_sent,
               stats.recoveries);
    return 0;
}
