// nats:// URLs and connections: what is accepted, and the errors for what is
// not (a malformed URL, a server that is not there, a stream that is missing).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "evring/nats/nats_connection.hpp"
#include "support/nats_relay.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(NatsUrl, AcceptsHostPortStreamCredentialsAndIpv6) {
    auto url = parse_url("nats://127.0.0.1:4333/RING");
    ASSERT_TRUE(url.ok()) << url.error().message();
    EXPECT_EQ(url->host, "127.0.0.1");
    EXPECT_EQ(url->port, 4333);
    EXPECT_EQ(url->stream, "RING");
    EXPECT_EQ(url->server_url(), "nats://127.0.0.1:4333");

    auto plain = parse_url("nats://example.org");
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    EXPECT_EQ(plain->port, kDefaultNatsPort);
    EXPECT_EQ(plain->stream, "");

    auto secret = parse_url("nats://alice:s3cret@[::1]:5000/S");
    ASSERT_TRUE(secret.ok()) << secret.error().message();
    EXPECT_EQ(secret->host, "::1");
    EXPECT_EQ(secret->credentials, "alice:s3cret");
    EXPECT_FALSE(contains(secret->display(), "s3cret")) << secret->display();
}

TEST(NatsUrl, AcceptsAListOfServersOfOneCluster) {
    auto url = parse_url("nats://tok@10.0.0.1:4222,node2,[::1]:4224/RING");
    ASSERT_TRUE(url.ok()) << url.error().message();
    EXPECT_EQ(url->host, "10.0.0.1");
    ASSERT_EQ(url->more_servers.size(), 2u);
    EXPECT_EQ(url->more_servers[0].host, "node2");
    EXPECT_EQ(url->more_servers[0].port, kDefaultNatsPort);
    EXPECT_EQ(url->more_servers[1].host, "::1");
    EXPECT_EQ(url->more_servers[1].port, 4224);
    EXPECT_EQ(url->stream, "RING");
    EXPECT_EQ(url->server_urls(),
              (std::vector<std::string>{"nats://tok@10.0.0.1:4222", "nats://tok@node2:4222", "nats://tok@[::1]:4224"}));
    EXPECT_EQ(url->display(), "nats://10.0.0.1:4222,node2:4222,[::1]:4224/RING");

    for (const char* text : {"nats://a:1,,b/S", "nats://a,/S", "nats://,a/S", "nats://a,b:0/S", "nats://a,b c/S"}) {
        auto bad = parse_url(text);
        EXPECT_FALSE(bad.ok()) << text;
    }
    std::string many = "nats://a";
    for (std::size_t i = 0; i < kMaxServers; ++i) many += ",a";
    auto too_many = parse_url(many);
    ASSERT_FALSE(too_many.ok());
    EXPECT_TRUE(contains(too_many.error().message(), "more than 32 servers")) << too_many.error().message();
}

TEST(NatsUrl, MalformedUrlsAreRefusedNamingTheTextAndTheReason) {
    for (const char* text : {"http://host:4222/S", "nats://", "nats://host:0/S", "nats://host:65536/S",
                             "nats://host:12ab/S", "nats://ho st/S", "nats://host/A.B", "nats://host/A*",
                             "nats://[::1/S", "127.0.0.1:4222"}) {
        auto url = parse_url(text);
        EXPECT_FALSE(url.ok()) << text;
        if (!url.ok()) {
            EXPECT_FALSE(url.error().message().empty()) << text;
        }
    }
    auto masked = parse_url("nats://bob:hunter2@host:99999/S");
    ASSERT_FALSE(masked.ok());
    EXPECT_FALSE(contains(masked.error().message(), "hunter2")) << masked.error().message();
    EXPECT_TRUE(contains(masked.error().message(), "99999")) << masked.error().message();
}

// A port on 127.0.0.1 that nothing listens on: bound, never listened to.
class UnusedPort {
public:
    UnusedPort() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
        socklen_t size = sizeof address;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
        port_ = ntohs(address.sin_port);
    }
    ~UnusedPort() { ::close(fd_); }
    unsigned port() const { return port_; }

private:
    int fd_ = -1;
    unsigned port_ = 0;
};

TEST(NatsConnection, AnUnreachableServerIsAClearErrorWithinTheConnectTimeout) {
    UnusedPort unused;
    auto url = parse_url("nats://127.0.0.1:" + std::to_string(unused.port()) + "/S");
    ASSERT_TRUE(url.ok());
    ConnectOptions options;
    options.connect_timeout = 500ms;
    const auto started = std::chrono::steady_clock::now();
    auto connection = Connection::connect(*url, options);
    ASSERT_FALSE(connection.ok());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
    EXPECT_TRUE(contains(connection.error().message(), "connecting to nats://127.0.0.1:" +
                                                           std::to_string(unused.port())))
        << connection.error().message();
    EXPECT_EQ(connection.error().errno_value(), ECONNREFUSED) << connection.error().message();
}

class NatsConnectionServer : public ::testing::Test {
protected:
    void SetUp() override { EVRING_START_NATS_SERVER(server_); }
    test::NatsServer server_;
};

TEST_F(NatsConnectionServer, AMissingStreamIsCreatedWithTheDocumentedDefaults) {
    auto connection = test::connect_to(server_);
    auto missing = connection.stream_info("NOPE");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().errno_value(), ENOENT);
    EXPECT_TRUE(contains(missing.error().message(), "stream 'NOPE' does not exist")) << missing.error().message();

    StreamSpec spec;
    spec.name = "DEF";
    spec.prefix = "evring.def";
    auto info = connection.ensure_stream(spec);
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_TRUE(info->file_storage);
    EXPECT_EQ(info->duplicate_window_nanos, std::chrono::nanoseconds(30s).count());
    EXPECT_EQ(info->subjects, std::vector<std::string>{"evring.def.>"});
    EXPECT_TRUE(info->limits_retention);
    EXPECT_TRUE(info->allow_direct);
    EXPECT_EQ(connection.message_limit(*info), connection.max_payload());

    spec.name = "NOCREATE";
    spec.create = false;
    auto refused = connection.ensure_stream(spec);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().errno_value(), ENOENT);
}

}  // namespace
}  // namespace evring::nats
