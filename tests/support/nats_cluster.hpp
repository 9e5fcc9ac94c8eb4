// Test support: a JetStream cluster of three real nats-servers on 127.0.0.1,
// each with its own random client port and temporary store directory, routed
// to each other.
//
//     test::NatsCluster cluster;
//     EVRING_START_NATS_CLUSTER(cluster);       // skips the test when nats-server is missing
//     connect(cluster.url_list(1));             // node 1 first, then the others
//     cluster.node(1).kill();                   // as a crash would
//
// JetStream in a cluster needs its route ports in the configuration, so
// those are chosen here (a port the kernel hands out, then released: a
// moment's race with other programs, retried once on failure); client ports
// are the servers' own choice as in nats_server.hpp. start() returns once
// JetStream answers on every node and places a stream on all three (every
// node joined the metadata group). The nodes stop and their directories go
// with the object (NatsServer).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "evring/nats/nats_connection.hpp"
#include "support/nats_server.hpp"

namespace evring::test {

#define EVRING_START_NATS_CLUSTER(cluster)                                           \
    do {                                                                             \
        if (::evring::test::NatsServer::find_binary().empty())                       \
            GTEST_SKIP() << "nats-server is not installed (Debian: apt-get install " \
                            "nats-server; scripts/test installs it)";                \
        std::string start_error_;                                                    \
        ASSERT_TRUE((cluster).start(start_error_)) << start_error_;                  \
    } while (0)

class NatsCluster {
public:
    static constexpr std::size_t kNodes = 3;
    static constexpr std::chrono::seconds kReadyTimeout{30};

    NatsCluster() {
        for (auto& node : nodes_) node = std::make_unique<NatsServer>();
    }

    NatsServer& node(std::size_t i) { return *nodes_[i]; }
    static std::string name(std::size_t i) { return "node" + std::to_string(i); }
    // The node whose server_name is `server_name`, or kNodes.
    static std::size_t index_of(std::string_view server_name) {
        for (std::size_t i = 0; i < kNodes; ++i)
            if (server_name == name(i)) return i;
        return kNodes;
    }

    // "nats://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3" with node `first` first.
    std::string url_list(std::size_t first) const {
        std::string url = "nats://";
        for (std::size_t k = 0; k < kNodes; ++k) {
            if (k != 0) url += ",";
            url += "127.0.0.1:" + std::to_string(nodes_[(first + k) % kNodes]->port());
        }
        return url;
    }

    bool start(std::string& error) {
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (start_once(error)) return true;
            for (auto& node : nodes_) node->kill();
        }
        return false;
    }

private:
    bool start_once(std::string& error) {
        std::array<unsigned, kNodes> route_ports{};
        for (auto& port : route_ports)
            if ((port = free_port()) == 0) {
                error = "no free port for a cluster route";
                return false;
            }
        std::string routes;
        for (unsigned port : route_ports)
            routes += (routes.empty() ? "" : ", ") + std::string("nats://127.0.0.1:") + std::to_string(port);
        for (std::size_t i = 0; i < kNodes; ++i) {
            nodes_[i]->set_extra_config("server_name: " + name(i) + "\ncluster {\n  name: evring-test\n  listen: " +
                                        "127.0.0.1:" + std::to_string(route_ports[i]) + "\n  routes: [" + routes +
                                        "]\n}\n");
            if (!nodes_[i]->start(error)) return false;
        }
        for (std::size_t i = 0; i < kNodes; ++i)
            if (!jetstream_answers(*nodes_[i], error)) return false;
        return places_three_replicas(error);
    }

    // JetStream answers before every node has joined its metadata group;
    // until then a stream of three replicas finds "no suitable peers for
    // placement". A probe stream is created (and deleted) once it does.
    bool places_three_replicas(std::string& error) {
        auto url = nats::parse_url(url_list(0));
        if (!url) {
            error = url.error().message();
            return false;
        }
        nats::ConnectOptions options;
        options.request_timeout = std::chrono::milliseconds(2000);
        auto connection = nats::Connection::connect(*url, options);
        if (!connection) {
            error = connection.error().message();
            return false;
        }
        nats::StreamSpec probe;
        probe.name = "EVRING_CLUSTER_PROBE";
        probe.prefix = "evring.cluster-probe";
        probe.replicas = static_cast<int>(kNodes);
        probe.memory_storage = true;
        const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
        for (;;) {
            auto made = connection->ensure_stream(probe);
            if (made) return connection->delete_stream(probe.name).ok();
            if (std::chrono::steady_clock::now() > deadline) {
                error = "the cluster placed no stream of three replicas within " +
                        std::to_string(kReadyTimeout.count()) + " s: " + made.error().message();
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }

    // A port nothing listens on now (the kernel's choice).
    static unsigned free_port() {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return 0;
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        unsigned port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0)
            port = ntohs(address.sin_port);
        ::close(fd);
        return port;
    }

    // JetStream answers a stream query (here: "no such stream") once the
    // cluster elected its metadata leader.
    static bool jetstream_answers(const NatsServer& node, std::string& error) {
        auto url = nats::parse_url(node.url());
        if (!url) {
            error = url.error().message();
            return false;
        }
        nats::ConnectOptions options;
        options.request_timeout = std::chrono::milliseconds(1000);
        const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
        std::string last = "not connected";
        while (std::chrono::steady_clock::now() < deadline) {
            if (auto connection = nats::Connection::connect(*url, options)) {
                auto info = connection->stream_info("EVRING_CLUSTER_PROBE");
                if (!info && info.error().errno_value() == ENOENT) return true;
                last = info ? "the probe stream exists" : info.error().message();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        error = "JetStream did not answer on " + node.url() + " within " + std::to_string(kReadyTimeout.count()) +
                " s: " + last + "; its log:\n" + node.log();
        return false;
    }

    std::array<std::unique_ptr<NatsServer>, kNodes> nodes_;
};

}  // namespace evring::test
