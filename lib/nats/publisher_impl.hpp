// The state behind nats::StreamPublisher.
//
// Invariants (the mutex guards everything below it; the caller's thread and
// libnats' acknowledgement thread both take it):
// - `window` holds the accepted messages not yet confirmed, in the order
//   accepted. Entries sent since the last recovery have increasing send ids
//   from the front; entries not sent yet (send_id 0) are all behind them.
// - `chain` is the Nats-Msg-Id the stream's last message will have once
//   every sent message is stored: the next message is sent with
//   Nats-Expected-Last-Msg-Id = chain, so the stream stores it only right
//   after its predecessor (the first message of an empty stream, or after a
//   message without an id, goes without). Ids, not stream sequences: another
//   client's message stored in between shifts every sequence, and a refused
//   message's successor could then match by chance and be stored after a
//   hole; an id never matches a message it was not chained to.
// - An acknowledgement of send id X confirms X and everything sent before it
//   (the chain). Acknowledgements of sends before `epoch_first_send_id` (the
//   last recovery) are ignored: recovery asked the stream instead.
// - `ack_requests` lists the publications since the last recovery that asked
//   for an acknowledgement and got none yet. When it is empty and the window
//   is not, the last entry is sent again with a reply (a barrier: a duplicate
//   the server acknowledges, see request_barrier()).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "connection_impl.hpp"
#include "nats/nats_publisher.hpp"

namespace evring::nats {

struct PendingMessage {
    OutgoingMessage message;
    std::uint64_t send_id = 0;  // 0: not sent since the last recovery
    std::string chained_to;     // the Nats-Expected-Last-Msg-Id it was last sent with
    bool counted = false;       // its body is in window_bytes
};

// A publication that asked for an acknowledgement, not answered yet.
struct AckRequest {
    std::uint64_t send_id;
    std::chrono::steady_clock::time_point sent_at;
};

// What the server answered to one publication.
struct PublishAck {
    bool ok = false;
    bool transient = false;  // a failure worth recovering from (not final)
    bool duplicate = false;
    std::uint64_t stream_sequence = 0;
    std::string error;  // "<description> [JetStream error N]"
};
PublishAck parse_publish_ack(natsMsg* reply);

struct StreamPublisher::Impl {
    using Clock = std::chrono::steady_clock;

    const Connection::Impl* connection = nullptr;
    const Connection* connection_handle = nullptr;
    PublisherOptions options;
    Encoder encoder;
    std::int64_t stream_created_nanos = 0;
    std::size_t message_limit = 0;
    std::string reply_prefix;  // "<inbox>."
    natsSubscription* ack_subscription = nullptr;
    OutgoingMessage batch;  // the open batch (caller's thread only)

    mutable std::mutex mutex;
    std::condition_variable changed;
    std::deque<PendingMessage> window;
    std::size_t window_bytes = 0;
    std::vector<OutgoingMessage> spare;  // cleared messages kept for their capacity
    std::uint64_t next_send_id = 1;
    std::uint64_t epoch_first_send_id = 1;
    std::string chain;
    std::deque<AckRequest> ack_requests;  // oldest first
    std::uint32_t since_ack_request = 0;
    bool needs_recovery = false;
    std::string recovery_reason;
    std::optional<Error> failure;
    std::uint64_t seen_disconnects = 0;
    Clock::time_point next_recovery{};
    std::chrono::milliseconds backoff{100};
    PublisherStats stats;
    bool subscription_done = false;  // libnats will not call on_ack again

    Impl(const Connection& connection, PublisherOptions options, std::size_t max_body);
    ~Impl();

    // Called on libnats' thread for each acknowledgement.
    void take_ack(std::uint64_t send_id, const PublishAck& ack);

    // Under the lock: Ok when `messages` messages of `bytes` body bytes can
    // be taken now; may run a due recovery (releasing the lock meanwhile).
    PublishStatus ready(std::unique_lock<std::mutex>& lock, std::size_t messages, std::size_t bytes);
    // Under the lock: a new window entry, to be filled, then sent with send().
    PendingMessage& add_entry();
    void send(PendingMessage& entry, bool want_ack);
    void request_barrier();  // see the invariants
    void pop_confirmed(std::uint64_t send_id);  // X and everything sent before it
    void pop_front(std::size_t count);           // the first `count` entries arrived
    void fail(Error error);
    void schedule_recovery(std::string reason);

    // Recovery (lock not held on entry): asks the stream what it holds,
    // drops what arrived and re-sends the rest.
    void recover(std::unique_lock<std::mutex>& lock);
    struct StreamEnd {
        std::string last_id;         // the stream's last message's Nats-Msg-Id ("" when none)
        std::string last_evring_id;  // its newest evring message's, past other clients' ones
    };
    Result<StreamEnd> stream_end(const StreamInfo& info) const;

    // Batching (caller's thread, lock held).
    PublishStatus send_batch(std::unique_lock<std::mutex>& lock);
};

}  // namespace evring::nats
