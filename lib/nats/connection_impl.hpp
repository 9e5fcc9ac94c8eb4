// The libnats side of nats::Connection, shared by the publisher and the
// stream reader, and small helpers over libnats' C types.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/nats/nats_connection.hpp"
#include "nats/nats_encoding.hpp"

namespace evring::nats {

// What libnats' callbacks report, from its own threads. Allocated apart
// from the Impl because libnats may call back until the connection's closed
// callback has run; the Impl frees it only after that (or leaks it when
// that never comes, rather than risk a use after free).
struct ConnectionEvents {
    std::atomic<ConnectionState> state{ConnectionState::Connected};
    std::atomic<std::uint64_t> disconnects{0};
    std::atomic<std::uint64_t> reconnects{0};
    std::mutex mutex;
    std::condition_variable changed;
    bool closed = false;           // guarded by mutex
    std::string last_async_error;  // guarded by mutex
    std::chrono::milliseconds wait_min{100}, wait_max{5000};
};

struct Connection::Impl {
    Url url;
    ConnectOptions options;
    natsConnection* connection = nullptr;
    jsCtx* jetstream = nullptr;
    ConnectionEvents* events = nullptr;

    ~Impl();
    // "nats://host:port: " for messages.
    std::string where() const { return url.display(); }
    // True when no message of a subscription unsubscribed before the call
    // can still be in the hands of libnats' reader thread, so destroying it
    // is safe; false when that is not known (the round trip failed): the
    // caller then buries it. See nats_connection.cpp.
    bool settle_unsubscribed() const noexcept;
    // Takes an unsubscribed subscription that could not be settled: it is
    // destroyed once the connection is closed (its reader thread joined).
    void bury(natsSubscription* subscription) const;

private:
    mutable std::mutex graveyard_mutex_;
    mutable std::vector<natsSubscription*> graveyard_;
};

namespace detail {

struct MessageDeleter {
    void operator()(natsMsg* message) const { natsMsg_Destroy(message); }
};
using MessagePtr = std::unique_ptr<natsMsg, MessageDeleter>;

// An error for a failed libnats call: "what: <status text> (<detail>)",
// with the JetStream error code when there is one.
Error nats_error(natsStatus status, std::string_view what, jsErrCode code = static_cast<jsErrCode>(0));

// The header values and body of a received message, for decode_message.
// The views live as long as `message`.
WireMessage wire_view(natsMsg* message);

// Publishes one encoded message with `reply` (nullptr: no reply wanted) and,
// when `expected_last_msg_id` is not empty, the chain header.
natsStatus publish(natsConnection* connection, const OutgoingMessage& message, const char* reply,
                   const std::string& expected_last_msg_id);

// The stream's message at `sequence` (ENOENT when there is none, deleted
// or past the end).
Result<MessagePtr> get_message(const Connection::Impl& connection, std::string_view stream,
                               std::uint64_t sequence);

}  // namespace detail
}  // namespace evring::nats
