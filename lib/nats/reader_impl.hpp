// The state behind nats::StreamReader.
//
// A reader has one or two lanes: ordered push consumers that libnats keeps
// in order (re-creating them after an outage from the next stream sequence).
// With an event subject filter, the event lane carries the filtered events
// and the control lane `PREFIX._evring.>`; their messages are merged by stream
// sequence. A lane's head may be handed out while the other lane is empty
// only when the other lane is known complete up to it: `confirmed_through`
// is a stream sequence such that every message of the lane at or below it
// has been received. It is learnt by asking the stream for the lane's last
// message (a message get): if the lane has received it, the lane is complete
// up to whatever stream sequence any lane had received before the question.
//
// Only the caller's thread touches any of this (sync subscriptions).
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "connection_impl.hpp"
#include "nats/nats_reader.hpp"

namespace evring::nats {

struct ReceivedMessage {
    detail::MessagePtr message;
    std::uint64_t sequence = 0;
    std::int64_t time_nanos = 0;
};

struct ReaderLane {
    std::string filter;
    natsSubscription* subscription = nullptr;
    std::deque<ReceivedMessage> buffered;
    std::uint64_t last_received = 0;      // stream sequence of the newest message received
    std::uint64_t confirmed_through = 0;  // see the file comment
};

// A message a durable lane took in, not acknowledged yet: acknowledged
// (with every one before it: AckPolicy All) once every event it carries is
// handed out (reader_durable.cpp).
struct Unacked {
    std::uint64_t sequence = 0;
    std::uint64_t last_seqno = 0;  // its last event's source seqno; 0: it carries none
    std::uint32_t member = 0;      // its events' ring set member (a set's stream: one event a message)
    std::uint64_t epoch = 0;       // counts ring instances seen: seqnos of an older one are all read
    std::string reply;             // the server's acknowledgement subject
};

struct StreamReader::Impl {
    const Connection::Impl* connection = nullptr;
    const Connection* connection_handle = nullptr;
    ReaderOptions options;
    std::int64_t stream_created_nanos = 0;
    std::deque<ReaderLane> lanes;  // [0] events (or everything), [1] control (a deque: lanes never move)
    std::uint64_t max_received = 0;
    // A durable lane's messages not acknowledged yet, in stream order; and
    // the ring instances seen (Unacked::epoch).
    std::deque<Unacked> unacked;
    std::uint64_t epoch = 0;
    std::uint64_t acked_through = 0;  // the durable's ack floor, as a stream sequence
    std::uint64_t taken_through = 0;  // the newest stream sequence taken into `current`
    std::uint64_t reconnects_seen = 0;
    bool recovering = false;          // the durable lane is to be created again (reader_durable.cpp)
    int recover_failures = 0;
    bool recovered = false;           // to be said in a notice
    // Unsubscribed; destroyed with the Impl (a wait set may still look), once
    // close_subscriptions has made sure libnats holds none of them.
    std::vector<natsSubscription*> retired;
    bool subscriptions_closed = false;
    Error error{0, {}};
    bool failed = false;

    // The message being handed out (a batch's events one at a time).
    ReceivedMessage current;
    WireMessage wire;
    DecodedMessage decoded;
    std::optional<BatchCursor> batch;
    bool have_current = false;

    // Where the source's sequence numbers are.
    std::string instance;
    std::uint64_t expected = 0;  // the next source seqno (0: not known yet), of `member`
    // A ring set's stream: every member counts its own sequence numbers.
    // `expected` is the current member's; the others wait here (0: not known
    // yet). At most kMaxMember + 1 entries, whatever a stream claims.
    std::vector<std::uint64_t> member_expected;
    std::uint32_t member = 0;
    std::uint64_t start_floor = 0;  // a source seqno start: what is below it is not wanted
    bool filtered = false;       // holes between events are not losses
    std::optional<Announcement> ring;

    // Reassembly of chunked events and schemas.
    EventDescriptor chunked_event{};
    std::uint32_t chunks_seen = 0, chunk_count = 0;
    std::vector<std::byte> assembly;
    std::vector<std::byte> schema_assembly;
    std::uint32_t schema_chunks_seen = 0;
    std::vector<std::byte> schema;

    std::string text;  // notices and gap details handed out
    std::chrono::steady_clock::time_point idle_since{};
    ReaderStats stats;

    ~Impl();
    // Unsubscribes every lane (into `retired`) and settles them with the
    // connection (Connection::Impl::settle_unsubscribed): called while the
    // connection is alive, before the Impl is let go of.
    void close_subscriptions() noexcept;
    // The next item (the EventSource's read(), payloads always copied).
    SourceStep next(SourceItem& item);
    void wait(std::chrono::nanoseconds timeout);
    SourceStep fail(Error e);
    // Takes what a subscription holds into its lane (at most a bound),
    // waiting at most `wait_millis` for the first message.
    Status receive(ReaderLane& lane, std::int64_t wait_millis);
    Status drain();  // every lane, without waiting
    // The next message in stream order, or nullopt when none can be handed out yet.
    Result<bool> take_next();
    Status confirm(ReaderLane& lane);
    SourceStep check_stream();  // NotReady while the stream is as it was
    // Handing out items from `current`.
    SourceStep process(SourceItem& item);
    // process's parts, one per kind of message (the chunked ones in reader_chunks.cpp).
    void meet_instance();
    SourceStep announcement_item(SourceItem& item);
    void take_schema_chunk();
    SourceStep gap_item(SourceItem& item);
    SourceStep batch_item(SourceItem& item);
    SourceStep chunk_item(SourceItem& item);
    SourceStep assembled_item(SourceItem& item);
    SourceStep event_item(const EventDescriptor& event, std::span<const std::byte> payload, SourceItem& item,
                        bool& consumed);
    bool skip_foreign(const Error& why, SourceItem& item);
    SourceStep hole(std::uint64_t first, std::uint64_t count, std::string detail, SourceItem& item);
    // Makes `member`'s sequence numbers the current ones (none: member 0).
    void select_member(std::optional<std::uint32_t> member);
    void forget_members();
    // A durable lane: notes the message just decoded (or skipped) as unacked.
    void note_unacked();
    // Acknowledges what is handed out whole up to the event `last` of `of_member`.
    Status acknowledge(std::uint64_t last, std::uint32_t of_member);
    // A durable lane after a sign of lost deliveries (an outage, a sequence
    // mismatch, missed heartbeats): the consumer is created again after the
    // ack floor and what was taken already is dropped as it comes again.
    // NotReady while the server cannot be reached.
    Status recover_durable(ReaderLane& lane);
    // A message the durable lane delivers again: its entry in `unacked` gets the new reply.
    void redelivered(const ReceivedMessage& received);
};

// Where a consumer starts delivering (reader_open.cpp): the ordered lanes' and the durable's.
void set_consumer_start(jsConsumerConfig& config, const StartAt& start, std::uint64_t start_sequence);

// A durable lane (reader_durable.cpp): (re)creates the consumer
// options.durable at `start_sequence` (as subscribe() reads
// options.start) and binds `lane` to it.
// Returns the new consumer's ack floor (a stream sequence).
Result<std::uint64_t> subscribe_durable(const Connection::Impl& connection, const ReaderOptions& options,
                                        std::uint64_t start_sequence, ReaderLane& lane);

// A reader's consumers on `connection`, subscribed at options.start;
// `ring` is the stream's newest announcement (read by the caller).
Result<std::unique_ptr<StreamReader::Impl>> open_impl(const Connection& connection, ReaderOptions options,
                                                      std::optional<Announcement> ring);

// The relay's subject prefix of a stream (its one subject PREFIX.>).
Result<std::string> stream_prefix(const StreamInfo& info);
// The newest source sequence number in the stream (0 when it holds no event).
Result<std::uint64_t> newest_source_seqno(const Connection& connection, const std::string& stream);

// A ring set's stream: the event `back` events before its newest, as
// StartAt::member_seqno; the oldest in reach when there are fewer; nullopt
// when it holds no event.
Result<std::optional<StartAt>> set_event_back(const Connection& connection, const std::string& stream,
                                              std::uint64_t back);

// Stream sequence to start at for the first event at or after source seqno
// `seqno` (of `member`'s events, in a ring set's stream).
Result<std::uint64_t> locate_source_seqno(const Connection::Impl& connection, const StreamInfo& info,
                                          std::uint64_t seqno, std::optional<std::uint32_t> member = std::nullopt);

}  // namespace evring::nats
