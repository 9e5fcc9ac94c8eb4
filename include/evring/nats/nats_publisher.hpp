// lib/nats/nats_publisher.hpp — the relay's sink: ring events into a JetStream stream.
//
// The follow loop (the event source's) drives it; it never reads a ring:
//
//     auto publisher = evring::nats::StreamPublisher::open(connection, options);
//     auto resume = publisher->resume_point();            // where the stream left off
//     std::uint64_t next = ...;                           // resume->next_seqno, or --from
//     if (resume->state != ResumeState::ThisInstance) {
//         publisher->announce_ring(next);
//         if (schema) publisher->publish_schema(*schema);
//     }
//     for (each event, gap) {
//         while ((status = publisher->publish_event(event, payload)) != PublishStatus::Ok) {
//             if (status == PublishStatus::Failed) die(publisher->failure()->message());
//             publisher->wait_ready(100ms);               // window full, or an outage:
//         }                                               // the ring position is kept
//         ...
//         publisher->send_pending();                      // before sleeping on the doorbell
//     }
//     publisher->flush(5s);
//
// Contract:
// - Delivery: every message accepted (PublishStatus::Ok) is stored in the
//   stream exactly once and in the order accepted, unless failure() reports
//   a permanent error. Each message carries Nats-Expected-Last-Msg-Id (its
//   predecessor's Nats-Msg-Id), so the stream stores it only directly after
//   its predecessor: a message lost on the way (a connection cut, a leader
//   change) makes every later one be refused too, and the publisher then asks
//   the stream what it holds and re-publishes the rest in order (with their
//   Nats-Msg-Id, so a copy that did arrive is recognised as a duplicate).
//   Another client's messages stored in between break the chain the same
//   way and are chained past. docs/distributed.md argues it.
// - Back-pressure: at most max_unacked_messages messages and
//   max_unacked_bytes body bytes wait for acknowledgement (a single larger
//   event is let through alone). A full window makes publish_*() return
//   WindowFull without taking anything; nothing is ever buffered without bound.
// - Acknowledgements are asked for every ack_every messages (and by
//   send_pending(), flush() and wait_ready() for the last one); one
//   acknowledgement confirms every message before it.
// - Outages: when the connection is lost, a publish is refused or an
//   acknowledgement does not come within ack_timeout, publish_*() return
//   Outage without taking anything, and the unacknowledged messages are kept.
//   wait_ready(), publish_*(), send_pending() and flush() try to recover with
//   exponential back-off (100 ms doubling to 5 s): once connected, the stream's
//   last message says what arrived, and the rest is re-published.
// - Failed is final: the stream was deleted or re-created under the
//   publisher, or the server refused a message for good (failure() says which).
// - Events larger than message_limit() are chunked (docs/distributed.md).
// - With events_per_message > 1, events are batched: up to that many
//   consecutive events per message (within message_limit()). A batch is sent
//   when full, before any other kind of message, and by send_pending() and
//   flush(); until then its events are accepted but not yet in the window.
//
// Thread safety: one thread at a time calls a publisher; acknowledgements
// are taken in on libnats' threads (lib/nats/publisher_impl.hpp). The
// publisher must not outlive its Connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/nats/nats_connection.hpp"
#include "nats/nats_encoding.hpp"
#include "recording/recording_format.hpp"

namespace evring::nats {

struct PublisherOptions {
    RingIdentity ring;       // the ring relayed first (switch_ring() changes it)
    SubjectLayout subjects;  // subjects.prefix must be the stream's prefix
    StreamSpec stream;       // created when missing (stream.prefix is set from subjects)
    // Relay into a stream holding another ring's events (the stream's readers
    // then see an announcement and the new ring's events after the old ones).
    bool allow_other_ring = false;
    // The caller relays only some events (--type, --flow): announced, so
    // readers do not count the others as lost.
    bool filtered = false;
    std::uint32_t events_per_message = 1;  // > 1: batch messages
    // A ring set: the announcement says so (kAnnounceMembers) and events and
    // gaps are published with their member (never batched: a batch has one
    // run of sequence numbers).
    bool members = false;
    std::size_t max_unacked_messages = 4096;
    std::size_t max_unacked_bytes = std::size_t{64} << 20;
    std::uint32_t ack_every = 64;
    std::chrono::milliseconds ack_timeout{5000};
};

enum class PublishStatus : std::uint8_t {
    Ok,          // taken (publish_*) / ready to take more (wait_ready)
    WindowFull,  // not taken: the unacknowledged window is full
    Outage,      // not taken: the server or JetStream is unavailable; recovering
    Failed,      // not taken, and nothing will be: failure() says why
};
std::string_view describe(PublishStatus status) noexcept;

enum class ResumeState : std::uint8_t {
    Empty,          // the stream holds no evring message
    ThisInstance,   // it ends with this ring instance: resume at next_seqno
    OtherInstance,  // it ends with another instance (of this ring, or another
                    // ring when allowed): announce, then start anywhere
};

struct ResumePoint {
    ResumeState state = ResumeState::Empty;
    std::uint64_t next_seqno = 0;       // ThisInstance: first sequence number not in the stream
    std::uint64_t last_stream_sequence = 0;
    std::optional<Announcement> latest_announcement;  // the stream's newest, if any
    // ThisInstance of a ring set: the member of the last event or gap (its
    // sequence number is next_seqno - 1); none after an announcement.
    std::optional<std::uint32_t> member;
    bool last_was_event = false;  // ThisInstance: the last message is a whole event
    // Messages at the stream's end passed over because they are not evring's
    // or do not decode (another client published into the stream).
    std::uint64_t skipped = 0;
};

struct PublisherStats {
    std::uint64_t events = 0;            // accepted
    std::uint64_t gaps = 0;              // gap messages accepted
    std::uint64_t lost_in_gaps = 0;      // sequence numbers they cover
    std::uint64_t messages_sent = 0;     // publications, re-publications included
    std::uint64_t messages_confirmed = 0;
    std::uint64_t republished = 0;       // messages sent again after an outage
    std::uint64_t recoveries = 0;        // times the stream was asked what it holds
    std::uint64_t chunked_events = 0;
    std::uint64_t bytes_sent = 0;        // bodies
    std::size_t window_messages = 0;     // unacknowledged now
    std::size_t window_bytes = 0;
};

class StreamPublisher {
public:
    // Connects the publisher to the stream (creating it when missing, see
    // Connection::ensure_stream) and checks that it may relay there: the
    // stream holds only evring messages, of this ring (or allow_other_ring),
    // with the same subject layout and batching.
    static Result<StreamPublisher> open(const Connection& connection, PublisherOptions options);
    StreamPublisher(StreamPublisher&&) noexcept;
    StreamPublisher& operator=(StreamPublisher&&) noexcept;
    ~StreamPublisher();  // does not flush

    // Asks the stream where this ring instance's messages end (setup call).
    Result<ResumePoint> resume_point();

    PublishStatus announce_ring(std::uint64_t first_seqno);
    // A new ring instance (a new writer re-created the ring): announces it.
    PublishStatus switch_ring(RingIdentity ring, std::uint64_t first_seqno);
    PublishStatus publish_schema(std::span<const std::byte> blob);
    // `member`: the ring set member (PublisherOptions::members).
    PublishStatus publish_event(const EventDescriptor& event, std::span<const std::byte> payload,
                                std::optional<std::uint32_t> member = std::nullopt);
    PublishStatus publish_gap(std::uint64_t first_seqno, std::uint64_t count, GapReason reason,
                              std::optional<std::uint32_t> member = std::nullopt);

    // Sends a partial batch and asks for the last message's acknowledgement,
    // without blocking: call it when no event is coming for a while.
    PublishStatus send_pending();
    // Blocks (at most `timeout`) until a message can be taken: Ok, or the
    // state at the deadline.
    PublishStatus wait_ready(std::chrono::milliseconds timeout);
    // Sends everything and waits (at most `timeout`) until it is acknowledged.
    Status flush(std::chrono::milliseconds timeout);

    const Error* failure() const;  // set once Failed
    PublisherStats stats() const;
    std::size_t message_limit() const;  // bytes per message, headers included
    const RingIdentity& ring() const;

    struct Impl;  // lib/nats/publisher_impl.hpp

private:
    explicit StreamPublisher(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace evring::nats
