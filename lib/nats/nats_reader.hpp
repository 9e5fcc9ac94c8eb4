// lib/nats/nats_reader.hpp — reading a relayed ring back out of a JetStream stream.
//
//     auto connection = evring::nats::Connection::connect(*url);
//     auto reader = evring::nats::StreamReader::open(*connection, {.stream = "RING",
//                                                    .start = evring::nats::StartAt::oldest()});
//     evring::SourceItem item;
//     for (;;) {
//         switch ((*reader)->next(item, evring::PayloadRead::Copy)) {
//         case SourceStep::Event:    use(item.event.descriptor, item.event.payload); break;
//         case SourceStep::Gap:      note(item.gap); break;        // exact range and reason
//         case SourceStep::Notice:   log(item.notice); break;      // a ring instance starts, ...
//         case SourceStep::NotReady: (*reader)->wait(100ms); break;   // blocks on the socket
//         case SourceStep::End:      break;                        // never: a stream never ends
//         case SourceStep::Failed:   fail((*reader)->error().message());
//         }
//     }
//
// A StreamReader is an evring::EventSource (event_source.hpp) like a ring's,
// so the follow loop, `evring watch` and `mirror` read a stream as they read
// a ring; nats_source.hpp opens one from a nats:// URL.
//
// Contract (event_source.hpp's, with these specifics):
// - Events come in the order the relay published them, which is the source
//   ring's sequence order within one ring instance. Every sequence number
//   between two events of one instance is either handed out or covered by
//   exactly one Gap: the relay's gap messages (reason as the relay saw it),
//   or, for numbers the stream does not hold and no gap message explains
//   (deleted from the stream, discarded by its limits, a stream read from
//   after its start), a Gap with reason kGapNotInStream (LostToDamage) and a detail saying so.
//   Streams the relay filtered (--type/--flow) give no such gaps.
// - A copy of an event already handed out (re-published outside the
//   duplicate window) is dropped and counted in stats().duplicates.
// - An announcement (a relay starting on a ring instance) is a Notice; when
//   the instance changes, sequence numbers start over at the announced one.
//   announcement() is the newest announced ring (or the stream's, read at open).
// - Events larger than a message arrive in chunks and are handed out whole;
//   the buffer grows with the chunks that actually arrive, never with a size
//   a message claims. An event whose chunks do not all arrive is a Gap.
// - The schema blob the relay published is kept: schema() (empty when none).
// - NotReady: nothing buffered; wait() blocks on the subscription (no spin).
//   A stream never ends (live() is true): a reader keeps waiting.
// - Messages that are not ours are skipped and counted, never fatal: one
//   without the Evring-Ring header (another client's) in stats().foreign,
//   one with it that does not decode in stats().invalid. The first of each
//   kind is a Notice naming its stream sequence and subject; counters().foreign
//   adds both up. An event lost in an invalid message shows as the hole it
//   leaves: a Gap.
// - Failed is final: the stream was deleted or re-created under the reader,
//   or an event in chunks exceeds max_chunked_event; error() says which.
//   A server that goes away is waited for (the consumer is re-created from
//   the next stream sequence when it returns): NotReady meanwhile.
// - Start positions: open() takes a StartAt: the oldest message, only new
//   ones, a stream sequence, a time (the server's store time), or a source
//   sequence number (located by bisecting the stream: the first event at or
//   after it). seek() starts again at a Position: oldest -> the stream's
//   first message; latest -> the newest event; SEQNO -> the first event at or
//   after it; -N -> N events back from the newest; TIME -> the server's store
//   time (relative times from the wall clock). A relayed ring set's stream
//   (identity().members) takes MEMBER:SEQNO instead of SEQNO: the first
//   event of that member at or after its SEQNO (bisecting the stream on that
//   member's messages, which are in its sequence order), the other members
//   from there on in stream order, each from its first message there. A
//   plain SEQNO on a set's stream, or MEMBER:SEQNO on a ring's, is refused.
//   latest and -N on a set's stream count events of every member back from
//   the newest and start at that event's MEMBER:SEQNO.
// - Identity: kind Stream; path is the connection's URL with the stream,
//   without credentials; content type, schema hash,
//   ring sizes and instance from the stream's newest announcement (the
//   instance is the relay's 16 hex digits read back; 0 without one).
// - narrow(): a single type on a stream of unbatched messages with numeric
//   subjects becomes the consumer's subject filter for the next seek().
// - Subject filters: `event_subject` (event_filter() in nats_encoding.hpp
//   builds one) makes the server deliver only those events. nats-server 2.9
//   gives a consumer one filter subject, so control messages (gaps,
//   announcements, schemas) are then read by a second consumer and merged in
//   stream order; sequence holes between filtered events are not gaps.
// - A named reader (DurableSource, include/evring/source/durable_source.hpp;
//   reader_durable.cpp): one lane, a push consumer durable under the
//   reader's name with AckPolicy All, created at each seek() (an existing one
//   is deleted first: its ack floor is read by durable_open() and the new
//   one starts after it, so what the previous one delivered unacknowledged
//   comes at once rather than after its AckWait). No server-side filter:
//   the follow loop filters. durable_commit() acknowledges what was handed
//   out whole. A ring set's stream resumes every member after its own seqno
//   at the ack floor (one event per message, so the floor's message says
//   one member's; the others are found by looking back from it).
//
// Thread safety: as EventSource (one thread at a time); a reader opened on a
// Connection must not outlive it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/format.hpp"
#include "evring/nats/nats_connection.hpp"
#include "nats/nats_encoding.hpp"
#include "evring/source/durable_source.hpp"

namespace evring::nats {

// The reason given to sequence numbers the stream does not hold: the value
// event_source.hpp names LostToDamage (5; evring's gap reasons are one
// vocabulary, and that header arrives with the event source).
inline constexpr GapReason kGapNotInStream = GapReason::LostToDamage;

enum class StartKind : std::uint8_t { Oldest, New, StreamSequence, SourceSeqno, Time };

struct StartAt {
    StartKind kind = StartKind::Oldest;
    std::uint64_t value = 0;  // the stream sequence, source seqno or epoch nanoseconds
    // SourceSeqno of a relayed ring set: the member whose seqno `value` is
    // (every member counts its own); none for a ring's stream.
    std::optional<std::uint32_t> member;

    static StartAt oldest() { return {}; }
    static StartAt newest_only() { return {StartKind::New, 0, std::nullopt}; }
    static StartAt stream_sequence(std::uint64_t s) { return {StartKind::StreamSequence, s, std::nullopt}; }
    static StartAt source_seqno(std::uint64_t s) { return {StartKind::SourceSeqno, s, std::nullopt}; }
    static StartAt member_seqno(std::uint32_t m, std::uint64_t s) { return {StartKind::SourceSeqno, s, m}; }
    static StartAt time(std::uint64_t epoch_nanos) { return {StartKind::Time, epoch_nanos, std::nullopt}; }
};

struct ReaderOptions {
    std::string stream;
    std::string prefix;  // the relay's subject prefix; empty: the stream's own (its subject PREFIX.>)
    StartAt start;
    std::string event_subject;  // empty: every event; else a subject (pattern) under PREFIX
    std::size_t max_chunked_event = std::size_t{1} << 30;  // a reassembled event may not exceed it
    // A named reader's JetStream durable consumer (reader_durable.cpp); empty:
    // ordered consumers, nothing kept on the server.
    std::string durable;
};

struct ReaderStats {
    std::uint64_t messages = 0;    // stream messages taken in
    std::uint64_t events = 0;      // Event results
    std::uint64_t gaps = 0;        // Gap results
    std::uint64_t lost = 0;        // sequence numbers in them
    std::uint64_t duplicates = 0;  // events dropped as copies
    std::uint64_t announcements = 0;
    std::uint64_t reconnects = 0;  // consumers re-created after an outage
    std::uint64_t foreign = 0;     // messages skipped: not evring's (no Evring-Ring header)
    std::uint64_t invalid = 0;     // messages skipped: evring's header, but they do not decode
};

class StreamReader final : public EventSource, public DurableSource {
public:
    // Subscribes at options.start; the reader must not outlive `connection`.
    static Result<std::unique_ptr<StreamReader>> open(const Connection& connection, ReaderOptions options);
    // The same on a connection of its own (nats_source.hpp opens URLs so),
    // subscribing only on seek() (or at options.start on the first read);
    // `location` is the identity's (default: the URL with the stream).
    static Result<std::unique_ptr<StreamReader>> open(std::unique_ptr<Connection> connection, ReaderOptions options,
                                                      std::string_view location = {});
    ~StreamReader() override;

    // EventSource
    Result<std::string> seek(const Position& start) override;
    void wait(std::chrono::nanoseconds timeout) override;
    bool live() const override { return true; }
    Result<std::uint64_t> now_nanos() override;
    std::uint64_t next_seqno() const override;  // the source seqno expected next (0: not known)
    std::span<const std::byte> schema() const override;
    std::string end_text() const override;
    void narrow(const FlowFilter& filter) override;

    // DurableSource (reader_durable.cpp)
    Result<DurableResume> durable_open(std::string_view name, bool start_over) override;
    Status durable_commit(std::uint64_t last, std::uint32_t member) override;

    const ReaderOptions& options() const;
    // The ring the stream carries (the newest announcement seen; nullopt when
    // the stream holds none).
    const std::optional<Announcement>& announcement() const;
    // The newest source sequence number in the stream (0 when it holds no event): for "--from -N".
    Result<std::uint64_t> newest_source_seqno() const;
    ReaderStats stats() const;

    struct Impl;  // lib/nats/reader_impl.hpp

protected:
    SourceStep read(SourceItem& item, PayloadRead payload) override;
    SourceStep load_payload(SourceEvent& event) override;
    void prepare_wait(WaitArm& arm) override;  // reader_wait.cpp

private:
    StreamReader(std::unique_ptr<Connection> owned, const Connection& connection);
    // Checks the stream and reads its announcement and schema; subscribes nothing.
    static Result<std::unique_ptr<StreamReader>> prepare(std::unique_ptr<Connection> owned,
                                                         const Connection& connection, ReaderOptions options,
                                                         std::string_view location);
    Status subscribe(ReaderOptions options);  // (re)opens impl_ at options.start
    Result<StartAt> start_at(const Position& start) const;

    std::unique_ptr<Connection> owned_;  // when opened on a connection of its own
    const Connection* connection_;
    ReaderOptions options_;  // as opened (start: the first read's without seek())
    // Shared with wait sets' plans (reader_wait.cpp).
    std::shared_ptr<Impl> impl_;
    std::optional<Announcement> announced_;  // the stream's newest at open
    std::vector<std::byte> stored_schema_;
    // The event read() handed out last, for load_payload.
    std::uint64_t last_seqno_ = 0;
    PayloadState last_state_ = PayloadState::NotRead;
    std::span<const std::byte> last_payload_;  // the stream's newest schema message at open
    std::string event_subject_;             // narrow()'s filter for the next seek()
    std::uint64_t foreign_before_ = 0;      // counted by consumers before impl_'s
    // A durable resumed (durable_open()): the next seek() starts here (after
    // its ack floor, or where it was created when nothing was acknowledged),
    // expecting source seqno `resume_seqno_ + 1` of ring instance
    // `resume_instance_` (0, empty: not known); of a ring set's stream, each
    // member's `resume_members_[m] + 1` (0: not known).
    std::optional<StartAt> resume_start_;
    std::uint64_t resume_seqno_ = 0;
    std::vector<std::uint64_t> resume_members_;
    std::string resume_instance_;
};

}  // namespace evring::nats
