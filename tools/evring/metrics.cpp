// evring metrics: the Prometheus exposition of rings once on stdout, or served
// by a small HTTP/1.0 server.
//
// The server is one thread and one connection at a time, each bounded: the
// request (at most 8 KiB) must arrive within 2 s and the answer leave within
// 5 s, or the connection is closed. GET /metrics (a query string is ignored)
// gets the exposition, computed at the request; any other path 404, any
// other method 405. Ctrl-C or SIGTERM stop it between connections (the poll
// on the listening socket wakes every 200 ms to look).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.hpp"
#include "escape.hpp"
#include "metrics_text.hpp"
#include "ops_cmd.hpp"
#include "stop.hpp"
#include "values.hpp"

namespace evring::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxRequest = 8192;
constexpr auto kReadTimeout = std::chrono::seconds(2);
constexpr auto kWriteTimeout = std::chrono::seconds(5);

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

Result<int> listen_on(const std::string& address) {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0)
        return Error(EINVAL, fmt::format("bad --listen '{}': expected HOST:PORT (127.0.0.1:9464)", printable(address)));
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
        return Error(EINVAL, fmt::format("bad --listen '{}': host '{}': {}", printable(address), printable(host),
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
        return Error(e, fmt::format("cannot listen on {}: {}{}", printable(address), std::strerror(e),
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

int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(left);
}

// The request head (up to the blank line), or empty on a timeout, a close or an oversized request.
std::string read_request(int fd) {
    const auto deadline = Clock::now() + kReadTimeout;
    std::string request;
    char buffer[2048];
    while (request.find("\r\n\r\n") == std::string::npos && request.find("\n\n") == std::string::npos) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return {};
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) return request;  // HTTP/0.9-style clients close after the request line
        request.append(buffer, static_cast<std::size_t>(n));
        if (request.size() > kMaxRequest) return {};
    }
    return request;
}

void write_all(int fd, const std::string& data) {
    const auto deadline = Clock::now() + kWriteTimeout;
    std::size_t sent = 0;
    while (sent < data.size()) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return;
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;
        sent += static_cast<std::size_t>(n);
    }
}

std::string response(int status, const char* reason, const char* type, const std::string& body) {
    return fmt::format("HTTP/1.0 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                       status, reason, type, body.size(), body);
}

void serve_one(int client, std::vector<MetricsTarget>& targets) {
    const std::string request = read_request(client);
    const auto line_end = request.find_first_of("\r\n");
    const std::string line = request.substr(0, line_end);
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
    if (line.empty() || sp1 == std::string::npos) {
        write_all(client, response(400, "Bad Request", "text/plain", "bad request\n"));
        return;
    }
    const std::string method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp1 - 1);
    target = target.substr(0, target.find('?'));
    if (method != "GET" && method != "HEAD") {
        write_all(client, response(405, "Method Not Allowed", "text/plain", "only GET\n"));
    } else if (target != "/metrics") {
        write_all(client, response(404, "Not Found", "text/plain", "not found: try /metrics\n"));
    } else {
        std::string reply = response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", render_metrics(targets));
        if (method == "HEAD") reply.resize(reply.find("\r\n\r\n") + 4);
        write_all(client, reply);
    }
}

int serve(const std::string& address, std::vector<MetricsTarget>& targets) {
    auto listening = listen_on(address);
    if (!listening)
        return listening.error().errno_value() == EINVAL ? usage_error(listening.error()) : runtime_error(listening.error());
    Fd server(*listening);
    install_stop_handlers();
    fmt::print(stderr, "evring: serving metrics on http://{}:{}/metrics\n",
               printable(address.substr(0, address.rfind(':'))), port_of(server.get()));
    std::fflush(stderr);
    while (!stop_requested()) {
        pollfd p{server.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, 200);
        if (ready <= 0) continue;  // a timeout, or a signal: look at the stop flag
        Fd client(::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (client.get() < 0) continue;  // the client went away already
        serve_one(client.get(), targets);
        ::shutdown(client.get(), SHUT_WR);
    }
    return kExitOk;
}

}  // namespace

int run_metrics(const MetricsOptions& options) {
    std::vector<MetricsTarget> targets;
    for (const std::string& ring : options.rings) targets.push_back({ring, nullptr, {}});
    if (!options.listen.empty()) return serve(options.listen, targets);
    const std::string text = render_metrics(targets);
    std::fputs(text.c_str(), stdout);
    int code = kExitOk;
    for (const MetricsTarget& t : targets)
        if (!t.view) {
            report_error(t.error);
            code = kExitRuntime;
        }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return kExitRuntime;
    return code;
}

}  // namespace evring::cli
