// Test support for the NATS relay: connecting to a test server, publisher
// options for a test ring, publishing synthetic events, and reading back
// every message a stream holds (decoded) to check what was stored.
#pragma once

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/nats/nats_connection.hpp"
#include "nats/nats_publisher.hpp"
#include "nats/stream_inspect.hpp"
#include "support/nats_server.hpp"
#include "support/nats_wire.hpp"

namespace evring::test {

inline nats::Connection connect_to(const NatsServer& server, nats::ConnectOptions options = {}) {
    options.reconnect_wait_min = std::chrono::milliseconds(20);
    options.reconnect_wait_max = std::chrono::milliseconds(200);
    auto url = nats::parse_url(server.url());
    EXPECT_TRUE(url.ok());
    auto connection = nats::Connection::connect(*url, options);
    if (!connection) {
        ADD_FAILURE() << connection.error().message();
        std::abort();
    }
    return std::move(connection).value();
}

inline nats::PublisherOptions publisher_options(const std::string& stream, nats::RingIdentity ring) {
    nats::PublisherOptions options;
    options.ring = std::move(ring);
    options.subjects.prefix = "evring." + stream;
    options.stream.name = stream;
    options.stream.duplicate_window = std::chrono::seconds(60);
    options.ack_timeout = std::chrono::milliseconds(2000);
    return options;
}

inline nats::StreamPublisher open_publisher(const nats::Connection& connection, nats::PublisherOptions options) {
    auto publisher = nats::StreamPublisher::open(connection, std::move(options));
    if (!publisher) {
        ADD_FAILURE() << publisher.error().message();
        std::abort();
    }
    return std::move(publisher).value();
}

// Publishes, waiting while the window is full or the server is away (at
// most `timeout` in all). False when it could not.
template <class Publish>
bool publish_waiting(nats::StreamPublisher& publisher, Publish publish,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        nats::PublishStatus status = publish();
        if (status == nats::PublishStatus::Ok) return true;
        if (status == nats::PublishStatus::Failed) {
            ADD_FAILURE() << publisher.failure()->message();
            return false;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "still " << nats::describe(status) << " after " << timeout.count() << " ms";
            return false;
        }
        publisher.wait_ready(std::chrono::milliseconds(50));
    }
}

inline bool publish_test_event(nats::StreamPublisher& publisher, std::uint64_t seqno, std::size_t payload_size,
                               std::uint16_t type = 3) {
    const EventDescriptor event = test_event(seqno, type, static_cast<std::uint32_t>(payload_size));
    const std::vector<std::byte> payload = test_payload(seqno, payload_size);
    return publish_waiting(publisher, [&] { return publisher.publish_event(event, payload); });
}

// Another client's message on `subject`, stored before it returns; with
// `ring_header`, one that claims to be evring's (Evring-Ring: ring_header).
inline void publish_foreign(const nats::Connection& connection, const std::string& subject, std::string_view data,
                            const char* ring_header = nullptr) {
    natsMsg* message = nullptr;
    ASSERT_EQ(natsMsg_Create(&message, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size())), NATS_OK);
    if (ring_header != nullptr) {
        ASSERT_EQ(natsMsgHeader_Set(message, nats::kRingHeader, ring_header), NATS_OK);
    }
    jsPubAck* ack = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    const natsStatus s = js_PublishMsg(&ack, connection.impl().jetstream, message, nullptr, &code);
    natsMsg_Destroy(message);
    jsPubAck_Destroy(ack);
    ASSERT_EQ(s, NATS_OK) << natsStatus_GetText(s) << " (JetStream error " << code << ")";
}

// Every message the stream holds, decoded, in stream order; with
// `evring_only`, the messages that are not valid evring ones are left out.
inline std::vector<nats::detail::FetchedMessage> stored_messages(const nats::Connection& connection,
                                                                 const std::string& stream, bool evring_only = false) {
    std::vector<nats::detail::FetchedMessage> messages;
    auto info = connection.stream_info(stream);
    EXPECT_TRUE(info.ok()) << info.error().message();
    if (!info || info->messages == 0) return messages;
    for (std::uint64_t seq = info->first_sequence; seq <= info->last_sequence; ++seq) {
        auto fetched = nats::detail::fetch_message(connection.impl(), stream, seq);
        if (!fetched) continue;  // deleted
        if (evring_only && !fetched->valid()) continue;
        EXPECT_TRUE(fetched->valid()) << "message " << seq << ": " << fetched->decoding.error().message();
        messages.push_back(std::move(fetched).value());
    }
    return messages;
}

// The event sequence numbers of the stored event messages (chunks counted once).
inline std::vector<std::uint64_t> stored_event_seqnos(const std::vector<nats::detail::FetchedMessage>& messages) {
    std::vector<std::uint64_t> seqnos;
    for (const auto& m : messages) {
        if (m.decoded.kind == nats::MessageKind::Event && m.decoded.chunk == 0) seqnos.push_back(m.decoded.event.seqno);
        if (m.decoded.kind == nats::MessageKind::Batch) {
            nats::BatchCursor cursor(m.decoded);
            EventDescriptor event;
            std::span<const std::byte> payload;
            while (cursor.next(event, payload)) seqnos.push_back(event.seqno);
        }
    }
    return seqnos;
}

inline std::vector<std::uint64_t> iota_seqnos(std::uint64_t first, std::uint64_t last) {
    std::vector<std::uint64_t> seqnos;
    for (std::uint64_t s = first; s <= last; ++s) seqnos.push_back(s);
    return seqnos;
}

}  // namespace evring::test
