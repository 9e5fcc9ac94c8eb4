// A relay says what an acknowledged event is still exposed to
// (relay_durability.hpp, docs/distributed.md "What 'nothing lost' holds
// under"): the text for each kind of stream, then run_relay against a real
// `nats-server -js` on a file stream it creates, a memory stream, and a file
// stream with the operator's word that the server syncs every write.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "nats/nats_relay.hpp"
#include "nats/relay_durability.hpp"
#include "support/nats_relay.hpp"
#include "support/nats_server.hpp"
#include "support/relay_thread.hpp"
#include "support/temp_ring.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::RelayThread;

StreamInfo stream_of(bool file, int replicas) {
    StreamInfo info;
    info.name = "S";
    info.file_storage = file;
    info.replicas = replicas;
    return info;
}

TEST(DurabilityWarning, SaysWhatAnAcknowledgedEventIsExposedTo) {
    const auto memory = durability_warning(stream_of(false, 1), true);
    ASSERT_TRUE(memory.has_value()) << "no operator's word saves a memory stream from a restart";
    EXPECT_NE(memory->find("stream 'S' keeps its messages in memory: a restart of nats-server loses all of them"),
              std::string::npos)
        << *memory;
    const auto one = durability_warning(stream_of(true, 1), false);
    ASSERT_TRUE(one.has_value());
    EXPECT_NE(one->find("acknowledges a message before it syncs it to disk"), std::string::npos) << *one;
    EXPECT_NE(one->find("lost if its server's host crashes or loses power"), std::string::npos) << *one;
    EXPECT_NE(one->find("sync_interval: always"), std::string::npos) << *one;
    const auto three = durability_warning(stream_of(true, 3), false);
    ASSERT_TRUE(three.has_value());
    EXPECT_NE(three->find("hosts holding a majority of its 3 replicas"), std::string::npos) << *three;
    EXPECT_FALSE(durability_warning(stream_of(true, 1), true).has_value()) << "the server syncs every write";
    EXPECT_FALSE(durability_warning(stream_of(true, 3), true).has_value());
}

class RelayDurability : public ::testing::Test {
protected:
    void SetUp() override {
        EVRING_START_NATS_SERVER(server_);
        CreateOptions create;
        create.keep_on_close = true;
        auto made = RingWriter::create(test::small_spec(path_, 10, 20), create);
        ASSERT_TRUE(made.ok()) << made.error().message();
        writer_.emplace(std::move(made).value());
        Publisher publisher(writer_->ring());
        for (int i = 0; i < 10; ++i) {
            Reservation r = publisher.reserve(8);
            r.descriptor().event_type = 3;
            publisher.commit(r);
        }
    }

    RelayOptions relay_options(const std::string& stream) const {
        RelayOptions options;
        options.source = path_;
        auto url = parse_url(server_.url());
        EXPECT_TRUE(url.ok());
        if (url) options.url = *url;
        options.stream = stream;
        options.register_reader = false;
        options.flush_timeout = 200ms;
        return options;
    }

    // Relays until the stream holds the ten events; its log.
    std::string relay_log(const RelayOptions& options) {
        auto connection = test::connect_to(server_);
        RelayThread relay(options);
        const bool relayed = eventually(
            [&] {
                auto info = connection.stream_info(options.stream);
                return (info && info->messages >= 2) || relay.finished();  // announcement and a batch
            },
            20s);
        EXPECT_TRUE(relayed) << relay.log();
        EXPECT_FALSE(relay.finished()) << relay.log();
        return relay.log();
    }

    test::NatsServer server_;
    test::TempDir dir_;
    std::string path_ = dir_.file("ring");
    std::optional<RingWriter> writer_;
};

TEST_F(RelayDurability, AFileStreamItCreatesGetsTheSyncWarningOnce) {
    const std::string log = relay_log(relay_options("FILED"));
    const std::string warning = "stream 'FILED': nats-server acknowledges a message before it syncs it to disk";
    const auto first = log.find(warning);
    ASSERT_NE(first, std::string::npos) << log;
    EXPECT_EQ(log.find(warning, first + 1), std::string::npos) << "said more than once:\n" << log;
    EXPECT_NE(log.find("its server's host crashes or loses power"), std::string::npos) << log;
}

TEST_F(RelayDurability, AMemoryStreamIsSaidToLoseEverythingOnARestart) {
    auto connection = test::connect_to(server_);
    StreamSpec spec;
    spec.name = "INMEM";
    spec.prefix = default_prefix("INMEM");
    spec.memory_storage = true;
    auto made = connection.ensure_stream(spec);
    ASSERT_TRUE(made.ok()) << made.error().message();
    ASSERT_FALSE(made->file_storage) << "the server made a file stream";
    RelayOptions options = relay_options("INMEM");
    options.server_syncs_writes = true;  // no sync helps what is only in memory
    const std::string log = relay_log(options);
    EXPECT_NE(log.find("stream 'INMEM' keeps its messages in memory: a restart of nats-server loses all of them"),
              std::string::npos)
        << log;
}

TEST_F(RelayDurability, TheOperatorsWordThatTheServerSyncsSilencesIt) {
    RelayOptions options = relay_options("SYNCED");
    options.server_syncs_writes = true;
    const std::string log = relay_log(options);
    EXPECT_EQ(log.find("syncs it to disk"), std::string::npos) << log;
    EXPECT_EQ(log.find("in memory"), std::string::npos) << log;
}

}  // namespace
}  // namespace evring::nats
