// evring metrics: the Prometheus exposition of rings once on stdout, or served
// over HTTP by libmicrohttpd (docs/operations.md says why that server).
//
// The server answers many connections at once: libmicrohttpd's threads
// (kThreads) each poll their share of the connections (epoll), so a client
// that connects and says nothing costs one idle connection, never another
// scraper's time. How long a request may take and which connection makes
// room at the cap is ours (metrics_guard.hpp): libmicrohttpd only bounds idle
// time, and at its own limit it stops accepting. A request head larger than
// the connection's memory is refused (431 or 414). GET /metrics (a query
// string is ignored) gets the exposition, computed at the request under one
// mutex (the targets are one-thread objects); any other path 404, any other
// method 405. Ctrl-C or SIGTERM stop it within 200 ms: every libmicrohttpd
// thread has an inter-thread channel (MHD_USE_ITC) that wakes it for the stop,
// also when it is not polling the listening socket.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output/escape.hpp"
#include "ops/metrics_guard.hpp"
#include "ops/metrics_text.hpp"
#include "ops/ops_cmd.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"
#include "util/text_escape.hpp"

namespace evring::cli {
namespace {

// docs/operations.md says why these values (the cap and the request's
// bound: metrics_guard.hpp).
constexpr unsigned kThreads = 2;                  // a slow scrape does not hold up the next
constexpr std::size_t kConnectionMemory = 16384;  // request head and read buffer per connection
// libmicrohttpd's own limits, backstops only. It splits its connection
// limit between its threads, and a thread at its share stops accepting
// (what the guard exists to avoid): so each thread's share is our whole cap,
// plus room for connections shut down but not yet closed. Its idle timeout
// is no longer than our request bound.
constexpr unsigned kLibraryConnectionLimit = kThreads * (static_cast<unsigned>(kMaxConnections) + 32);
constexpr unsigned kIdleTimeoutSeconds = static_cast<unsigned>(kRequestTime.count());

Result<int> listen_on(const std::string& address) {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0)
        return Error(EINVAL, fmt::format("bad --listen '{}': expected HOST:PORT (127.0.0.1:9464)", printable(shortened(address))));
    std::string host = address.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    auto port = parse_int_in("--listen port", address.substr(colon + 1), 0, 65535);
    if (!port) return std::move(port).error();
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(*port);
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
        return Error(EINVAL, fmt::format("bad --listen '{}': host '{}': {}", printable(shortened(address)), printable(shortened(host)),
                                         ::gai_strerror(rc)));
    int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
    if (fd < 0) {
        ::freeaddrinfo(found);
        return Error(errno, "cannot make a socket");
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // restarts reuse TIME_WAIT ports, not live ones
    const int bound = ::bind(fd, found->ai_addr, found->ai_addrlen);
    const int bind_errno = errno;
    ::freeaddrinfo(found);
    if (bound != 0 || ::listen(fd, 16) != 0) {
        const int e = bound != 0 ? bind_errno : errno;
        ::close(fd);
        return Error(e, fmt::format("cannot listen on {}: {}{}", printable(shortened(address)), std::strerror(e),
                                    e == EADDRINUSE ? " (another process has that port; choose another)" : ""));
    }
    return fd;
}

int port_of(int fd) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return -1;
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
    return -1;
}

// The state the server's threads share: the targets, one scrape at a time
// (RingView is one-thread; a scrape renders in well under a millisecond per
// ring, so scrapers wait on each other only that long).
struct Exporter {
    std::mutex rendering;
    std::vector<MetricsTarget>* targets = nullptr;
    ConnectionGuard guard;
};

// libmicrohttpd's callbacks, on its threads: they feed the guard.
MHD_Result admit(void* cls, const sockaddr*, socklen_t) {
    return static_cast<Exporter*>(cls)->guard.admit() ? MHD_YES : MHD_NO;
}

void connection_changed(void* cls, MHD_Connection* connection, void**, MHD_ConnectionNotificationCode code) {
    ConnectionGuard& guard = static_cast<Exporter*>(cls)->guard;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        guard.closed(connection);
        return;
    }
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info != nullptr) guard.started(connection, info->connect_fd);
}

void request_done(void* cls, MHD_Connection* connection, void**, MHD_RequestTerminationCode) {
    static_cast<Exporter*>(cls)->guard.answered(connection);
}

MHD_Result reply(MHD_Connection* connection, unsigned status, const char* type, const std::string& body) {
    MHD_Response* response =
        MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;  // out of memory: libmicrohttpd closes the connection
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    const MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}

// libmicrohttpd's request handler, on one of its threads. Requests carry no
// body we want: the answer is queued at the first call, and for HEAD
// libmicrohttpd sends the headers only.
MHD_Result handle(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                  const char*, std::size_t*, void**) {
    auto* exporter = static_cast<Exporter*>(cls);
    exporter->guard.answering(connection);
    if (std::strcmp(method, MHD_HTTP_METHOD_GET) != 0 && std::strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET\n");
    if (std::strcmp(url, "/metrics") != 0)  // url comes without its query string
        return reply(connection, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics\n");
    // No exception may cross libmicrohttpd's C frames.
    try {
        std::string text;
        {
            std::lock_guard<std::mutex> one_scrape(exporter->rendering);
            text = render_metrics(*exporter->targets);
        }
        return reply(connection, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text);
    } catch (const std::exception& e) {
        return reply(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
                     std::string("cannot render the metrics: ") + e.what() + "\n");
    }
}

int serve(const std::string& address, std::vector<MetricsTarget>& targets) {
    auto listening = listen_on(address);
    if (!listening)
        return listening.error().errno_value() == EINVAL ? usage_error(listening.error()) : runtime_error(listening.error());
    const int fd = *listening;
    const int port = port_of(fd);
    // The pool's threads share the socket: each accepts without blocking.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    Exporter exporter;
    exporter.targets = &targets;
    install_stop_handlers();  // process-wide: whichever thread takes the signal sets the flag
    MHD_Daemon* daemon = MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, &admit, &exporter, &handle, &exporter,
        MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(fd),
        MHD_OPTION_THREAD_POOL_SIZE, kThreads,
        MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutSeconds,
        MHD_OPTION_CONNECTION_LIMIT, kLibraryConnectionLimit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory,
        MHD_OPTION_NOTIFY_CONNECTION, &connection_changed, &exporter,
        MHD_OPTION_NOTIFY_COMPLETED, &request_done, &exporter,
        MHD_OPTION_END);
    if (daemon == nullptr) {
        ::close(fd);
        return runtime_error(Error(EIO, fmt::format("cannot start the HTTP server on {}", printable(shortened(address)))));
    }
    fmt::print(stderr, "evring: serving metrics on http://{}:{}/metrics\n",
               printable(address.substr(0, address.rfind(':'))), port);
    std::fflush(stderr);
    // A signal or 200 ms: look at the flag, and end requests past their bound.
    while (!stop_requested()) {
        ::poll(nullptr, 0, 200);
        exporter.guard.sweep();
    }
    MHD_stop_daemon(daemon);  // closes the listening socket; waits for its threads
    return kExitOk;
}

}  // namespace

int run_metrics(const MetricsOptions& options) {
    std::vector<MetricsTarget> targets;
    for (const std::string& ring : options.rings) targets.push_back({ring, nullptr, {}, nullptr});
    if (!options.listen.empty()) return serve(options.listen, targets);
    const std::string text = render_metrics(targets);
    std::fputs(text.c_str(), stdout);
    int code = kExitOk;
    for (const MetricsTarget& t : targets)
        if (!t.view && !t.set) {
            report_error(t.error);
            code = kExitRuntime;
        }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return kExitRuntime;
    return code;
}

Command add_metrics(CLI::App& app) {
    auto o = std::make_shared<MetricsOptions>();
    auto* c = app.add_subcommand("metrics", "Prometheus metrics of rings, once or served over HTTP");
    c->add_option("RING", o->rings, "Ring names or paths")->required();
    c->add_option("--listen", o->listen, "Serve GET /metrics on this address")->type_name("HOST:PORT");
    return {c, [o] { return run_metrics(*o); }};
}

}  // namespace evring::cli
