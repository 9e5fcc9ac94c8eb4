// run_relay (nats_relay.hpp) against a real nats-server, as `evring relay`
// runs it: a relay of a live ring, seen in the ring's reader registry.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "evring/clock.hpp"
#include "nats/nats_relay.hpp"
#include "evring/ring/publisher.hpp"
#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "nats/nats_reader.hpp"
#include "evring/nats/nats_source.hpp"
#include "support/nats_relay.hpp"
#include "support/nats_server.hpp"
#include "support/relay_thread.hpp"
#include "support/temp_ring.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;

using test::eventually;
using test::RelayThread;

class NatsRelay : public ::testing::Test {
protected:
    void SetUp() override {
        EVRING_START_NATS_SERVER(server_);
        CreateOptions create;
        create.keep_on_close = true;
        auto made = RingWriter::create(test::small_spec(path_, 10, 20), create);
        ASSERT_TRUE(made.ok()) << made.error().message();
        writer_.emplace(std::move(made).value());
        publisher_.emplace(writer_->ring());
        auto reader = RingReader::open(path_);
        ASSERT_TRUE(reader.ok()) << reader.error().message();
        reader_.emplace(std::move(reader).value());
    }

    RelayOptions relay_options(const std::string& stream) const {
        RelayOptions options;
        options.source = path_;
        auto url = parse_url(server_.url());
        EXPECT_TRUE(url.ok());
        if (url) options.url = *url;
        options.connect.reconnect_wait_min = 20ms;
        options.connect.reconnect_wait_max = 200ms;
        options.stream = stream;
        options.events_per_message = 1;  // each event its own message: no batch absorbs one
        options.flush_timeout = 200ms;   // the server may be gone when the test stops the relay
        return options;
    }

    void publish(int count) {
        for (int i = 0; i < count; ++i) {
            Reservation r = publisher_->reserve(8);
            const std::uint64_t seqno = r.seqno();
            std::memcpy(r.payload(), &seqno, 8);
            r.descriptor().event_type = 3;
            publisher_->commit(r);
        }
    }

    // The relay's entry in the ring's registry (stale after 1 s without a heartbeat).
    std::optional<ReaderEntry> relay_entry() const {
        ListingOptions options;
        options.stale_after = 1s;
        options.reclaim_dead = false;
        auto listing = list_readers(*reader_, options);
        if (!listing) return std::nullopt;
        for (const auto& entry : listing->readers)
            if (entry.kind == reader_kinds::kRelay) return entry;
        return std::nullopt;
    }

    test::NatsServer server_;
    test::TempDir dir_;
    std::string path_ = dir_.file("ring");
    std::optional<RingWriter> writer_;
    std::optional<Publisher> publisher_;
    std::optional<RingReader> reader_;
};

TEST_F(NatsRelay, AnotherClientsMessagesNeitherStopARelayNorKeepItFromStartingAgain) {
    auto connection = test::connect_to(server_);
    auto stored = [&] {
        if (!connection.stream_info("STRAY")) return std::vector<std::uint64_t>();  // not created yet
        return test::stored_event_seqnos(test::stored_messages(connection, "STRAY", true));
    };
    publish(100);
    {
        RelayThread relay(relay_options("STRAY"));
        ASSERT_TRUE(eventually([&] { return stored().size() == 100; }, 20s)) << relay.log();
    }
    // The stream's newest messages are another client's: a relay starts again past them.
    test::publish_foreign(connection, "evring.STRAY.orders", "{\"id\":1}");
    test::publish_foreign(connection, "evring.STRAY._evring.ring", "junk", "1 not-a-ring-header");
    publish(100);
    RelayThread relay(relay_options("STRAY"));
    ASSERT_TRUE(eventually([&] { return stored().size() == 200; }, 20s)) << relay.log();
    EXPECT_TRUE(relay.logged("stream 'STRAY' ends with 2 messages that are not evring's; passed over")) << relay.log();
    EXPECT_TRUE(relay.logged("resuming '")) << relay.log();
    // One published while it relays: the relay chains its messages past it.
    test::publish_foreign(connection, "evring.STRAY.orders", "{\"id\":2}");
    publish(100);
    ASSERT_TRUE(eventually([&] { return stored().size() == 300; }, 20s)) << relay.log();
    EXPECT_EQ(stored(), test::iota_seqnos(1, 300));
    EXPECT_FALSE(relay.finished()) << relay.log();

    ReaderOptions options;
    options.stream = "STRAY";
    auto reader = StreamReader::open(connection, options);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    std::vector<std::uint64_t> seqnos;
    SourceItem item;
    ASSERT_TRUE(eventually(
        [&] {
            for (;;) {
                const SourceStep step = (*reader)->next(item);
                if (step == SourceStep::Event) seqnos.push_back(item.event.descriptor.seqno);
                if (step == SourceStep::NotReady || step == SourceStep::Failed) break;
            }
            return seqnos.size() >= 300;
        },
        20s));
    EXPECT_EQ(seqnos, test::iota_seqnos(1, 300));
    EXPECT_EQ((*reader)->stats().foreign, 2u);
    EXPECT_EQ((*reader)->stats().invalid, 1u);

    // The newest message on the announcement subject is not one: the source still finds the ring.
    auto source = open_stream_source(server_.url() + "/STRAY");
    ASSERT_TRUE(source.ok()) << source.error().message();
    EXPECT_EQ((*source)->identity().path, server_.url() + "/STRAY");
    EXPECT_NE((*source)->identity().instance, 0u);
}

TEST_F(NatsRelay, ARelayWaitingOutAServerOutageKeepsItsHeartbeatAndIsListedAlive) {
    RelayThread relay(relay_options("BEAT"));
    publish(1);
    ASSERT_TRUE(eventually([&] { return relay.logged("relaying '"); }, 20s)) << relay.log();
    ASSERT_TRUE(eventually(
        [&] {
            auto entry = relay_entry();
            return entry && entry->liveness == ReaderLiveness::Alive && entry->next_seqno >= 2;
        },
        20s))
        << "the relay is not listed alive";

    server_.kill();
    // Events keep coming until the relay finds the server gone...
    ASSERT_TRUE(eventually(
        [&] {
            publish(1);
            return relay.logged("is unavailable");
        },
        30s))
        << relay.log();
    // ...and more: the first of them it cannot publish holds it in the
    // publisher's wait, where the follow loop calls neither event() nor
    // idle() until the server is back. What it published last is the
    // position of an event taken by now.
    publish(10);
    const std::uint64_t waiting_since = wall_clock_nanos();
    const std::uint64_t two_seconds = 2'000'000'000;
    std::optional<ReaderEntry> entry;
    EXPECT_TRUE(eventually(
        [&] {
            entry = relay_entry();
            return entry && entry->heartbeat_ns > waiting_since + two_seconds;
        },
        15s))
        << "the heartbeat stopped while the relay waited for the server: "
        << (entry ? to_string(entry->liveness) : "not listed") << ", heartbeat "
        << (entry ? (static_cast<std::int64_t>(entry->heartbeat_ns) -
                     static_cast<std::int64_t>(waiting_since)) /
                        1'000'000
                  : 0)
        << " ms after the wait began\n"
        << relay.log();
    ASSERT_TRUE(entry.has_value());
    EXPECT_EQ(entry->liveness, ReaderLiveness::Alive);
    EXPECT_FALSE(relay.logged("is back")) << "the server was never restarted";
}

}  // namespace
}  // namespace evring::nats
