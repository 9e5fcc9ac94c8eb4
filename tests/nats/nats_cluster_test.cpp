// The relay on a JetStream cluster of three real nats-servers: the stream it
// creates has three replicas, and when the server that leads the stream (the
// one the relay is connected to) is killed mid-relay, the relay reconnects to
// another node and catches up from the ring, while a reader on a third node
// receives every event exactly once, in order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nats/nats_reader.hpp"
#include "nats/nats_relay.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/nats_cluster.hpp"
#include "support/nats_relay.hpp"
#include "support/relay_thread.hpp"
#include "support/temp_ring.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::NatsCluster;
using test::RelayThread;

// Few enough to take seconds, not minutes, on a loaded machine; the ring
// holds them all, so the relay always catches up from it.
constexpr std::uint64_t kBeforeKill = 3000;
constexpr std::uint64_t kEvents = 12000;

Connection connect_list(const std::string& urls) {
    auto url = parse_url(urls);
    EXPECT_TRUE(url.ok()) << url.error().message();
    ConnectOptions options;
    options.reconnect_wait_min = 20ms;
    options.reconnect_wait_max = 500ms;
    options.request_timeout = 2000ms;
    auto connection = Connection::connect(*url, options);
    if (!connection) {
        ADD_FAILURE() << connection.error().message();
        std::abort();
    }
    return std::move(connection).value();
}

// The newest source seqno the stream holds (0 when none, or not answered now).
std::uint64_t newest_seqno(const Connection& connection, const std::string& stream) {
    auto info = connection.stream_info(stream);
    if (!info || info->messages == 0) return 0;
    auto last = detail::fetch_message(connection.impl(), stream, info->last_sequence);
    return last && last->valid() ? last->decoded.last_seqno() : 0;
}

// Reads the stream on a thread of its own until `wanted` events came (or
// the deadline), keeping every item in order.
class ReaderThread {
public:
    ReaderThread(const Connection& connection, std::string stream, std::uint64_t wanted) {
        ReaderOptions options;
        options.stream = std::move(stream);
        auto reader = StreamReader::open(connection, options);
        if (!reader) {
            ADD_FAILURE() << reader.error().message();
            return;
        }
        reader_ = std::move(reader).value();
        thread_ = std::thread([this, wanted] { run(wanted); });
    }
    ~ReaderThread() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    void join() {
        if (thread_.joinable()) thread_.join();
    }

    std::vector<std::uint64_t> seqnos;
    std::vector<std::string> others;  // gaps and failures, in words
    std::optional<ReaderStats> stats;

private:
    void run(std::uint64_t wanted) {
        const auto deadline = std::chrono::steady_clock::now() + 90s;
        SourceItem item;
        while (!stop_ && seqnos.size() < wanted && std::chrono::steady_clock::now() < deadline) {
            switch (reader_->next(item)) {
            case SourceStep::Event: seqnos.push_back(item.event.descriptor.seqno); break;
            case SourceStep::Gap:
                others.push_back("gap " + std::to_string(item.gap.first_seqno) + "+" + std::to_string(item.gap.count));
                break;
            case SourceStep::Notice: break;
            case SourceStep::End: others.push_back("end"); return;
            case SourceStep::NotReady: reader_->wait(50ms); break;
            case SourceStep::Failed: others.push_back("failed: " + reader_->error().message()); return;
            }
        }
        stats = reader_->stats();
    }

    std::unique_ptr<StreamReader> reader_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

TEST(NatsCluster, ARelayWhoseServerLeadsTheStreamAndIsKilledMidRelayLosesAndRepeatsNothing) {
    NatsCluster cluster;
    EVRING_START_NATS_CLUSTER(cluster);
    test::TempDir dir;
    const std::string path = dir.file("ring");
    auto made = RingWriter::create(test::small_spec(path, 15, 22));
    ASSERT_TRUE(made.ok()) << made.error().message();
    Publisher publisher(made->ring());
    std::uint64_t published = 0;
    auto publish_up_to = [&](std::uint64_t last) {
        for (; published < last; ++published) {
            Reservation r = publisher.reserve(8);
            const std::uint64_t seqno = r.seqno();
            std::memcpy(r.payload(), &seqno, 8);
            r.descriptor().event_type = 3;
            publisher.commit(r);
        }
    };
    auto relay_options = [&](std::size_t first_node) {
        RelayOptions options;
        options.source = path;
        auto url = parse_url(cluster.url_list(first_node));
        EXPECT_TRUE(url.ok());
        if (url) options.url = *url;
        options.connect.reconnect_wait_min = 20ms;
        options.connect.reconnect_wait_max = 500ms;
        options.connect.request_timeout = 2000ms;
        options.stream = "CLU";
        options.stream_spec.replicas = 3;
        options.events_per_message = 8;
        options.register_reader = false;
        options.flush_timeout = 2000ms;
        return options;
    };

    // A first relay creates the stream with three replicas.
    publish_up_to(100);
    auto observer = connect_list(cluster.url_list(0));
    {
        RelayThread relay(relay_options(0));
        ASSERT_TRUE(eventually([&] { return newest_seqno(observer, "CLU") == 100; }, 30s)) << relay.log();
    }
    auto info = observer.stream_info("CLU");
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_EQ(info->replicas, 3);
    const std::size_t leader = NatsCluster::index_of(info->leader);
    ASSERT_LT(leader, NatsCluster::kNodes) << "stream leader '" << info->leader << "'";
    const std::size_t reader_node = (leader + 1) % NatsCluster::kNodes;

    // A reader on another node; the relay again, connected to the leader first.
    auto reader_connection = connect_list(cluster.node(reader_node).url());
    ReaderThread reader(reader_connection, "CLU", kEvents);
    auto watcher = connect_list(cluster.node(reader_node).url());
    RelayThread relay(relay_options(leader));
    publish_up_to(kBeforeKill);
    ASSERT_TRUE(eventually([&] { return newest_seqno(watcher, "CLU") >= kBeforeKill / 2; }, 30s)) << relay.log();
    cluster.node(leader).kill();
    publish_up_to(kEvents);  // while the relay finds its server gone
    EXPECT_TRUE(eventually([&] { return newest_seqno(watcher, "CLU") == kEvents; }, 60s))
        << "the stream reached seqno " << newest_seqno(watcher, "CLU") << "\n"
        << relay.log();
    reader.join();

    EXPECT_EQ(reader.seqnos, test::iota_seqnos(1, kEvents));
    EXPECT_TRUE(reader.others.empty()) << reader.others.front();
    ASSERT_TRUE(reader.stats.has_value());
    EXPECT_EQ(reader.stats->duplicates, 0u);
    EXPECT_EQ(test::stored_event_seqnos(test::stored_messages(watcher, "CLU")), test::iota_seqnos(1, kEvents));
    EXPECT_FALSE(relay.finished()) << relay.log();
    auto after = watcher.stream_info("CLU");
    ASSERT_TRUE(after.ok()) << after.error().message();
    EXPECT_NE(after->leader, NatsCluster::name(leader));
    if (std::getenv("EVRING_TEST_VERBOSE") != nullptr) std::fprintf(stderr, "%s", relay.log().c_str());
}

}  // namespace
}  // namespace evring::nats
