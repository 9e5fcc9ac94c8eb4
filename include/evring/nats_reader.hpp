// evring/nats_reader.hpp — reading a relayed ring back out of a JetStream stream.
//
//     auto connection = evring::nats::Connection::connect(*url);
//     auto reader = evring::nats::StreamReader::open(*connection, {.stream = "RING",
//                                                    .start = evring::nats::StartAt::oldest()});
//     evring::nats::ReadItem item;
//     for (;;) {
//         switch (reader->next(item)) {
//         case ReadStep::Event:    use(item.event.descriptor, item.event.payload); break;
//         case ReadStep::Gap:      note(item.gap); break;        // exact range and reason
//         case ReadStep::Notice:   log(item.notice); break;      // a ring instance starts, ...
//         case ReadStep::NotReady: reader->wait(100ms); break;   // blocks on the socket
//         case ReadStep::Failed:   fail(reader->error().message());
//         }
//     }
//
// Contract (the shape of evring::EventSource, event_source.hpp, so a stream
// source wraps it directly):
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
//   ring() is the newest announced ring (or the stream's, read at open).
// - Events larger than a message arrive in chunks and are handed out whole;
//   the buffer grows with the chunks that actually arrive, never with a size
//   a message claims. An event whose chunks do not all arrive is a Gap.
// - The schema blob the relay published is kept: schema() (empty when none).
// - NotReady: nothing buffered; wait() blocks on the subscription (no spin).
//   A stream never ends: a live reader keeps waiting.
// - Messages that are not ours are skipped and counted, never fatal: one
//   without the Evring-Ring header (another client's) in stats().foreign,
//   one with it that does not decode in stats().invalid. The first of each
//   kind is a Notice naming its stream sequence and subject. An event lost
//   in an invalid message shows as the hole it leaves: a Gap.
// - Failed is final: the stream was deleted or re-created under the reader;
//   error() says which.
//   A server that goes away is waited for (the consumer is re-created from
//   the next stream sequence when it returns): NotReady meanwhile.
// - Start positions: the oldest message, only new ones, a stream sequence, a
//   time (the server's store time), or a source sequence number (located by
//   bisecting the stream: the first event at or after it).
// - Subject filters: `event_subject` (event_filter() in nats_encoding.hpp
//   builds one) makes the server deliver only those events. nats-server 2.9
//   gives a consumer one filter subject, so control messages (gaps,
//   announcements, schemas) are then read by a second consumer and merged in
//   stream order; sequence holes between filtered events are not gaps.
//
// Thread safety: one thread at a time; the reader must not outlive its Connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/recording_format.hpp"  // GapReason
#include "evring/nats_connection.hpp"
#include "evring/nats_encoding.hpp"

namespace evring::nats {

// The reason given to sequence numbers the stream does not hold: the value
// gap_reason.hpp names LostToDamage (5; evring's gap reasons are one
// vocabulary, and that header arrives with the event source).
inline constexpr GapReason kGapNotInStream = GapReason::LostToDamage;

enum class StartKind : std::uint8_t { Oldest, New, StreamSequence, SourceSeqno, Time };

struct StartAt {
    StartKind kind = StartKind::Oldest;
    std::uint64_t value = 0;  // the stream sequence, source seqno or epoch nanoseconds

    static StartAt oldest() { return {}; }
    static StartAt newest_only() { return {StartKind::New, 0}; }
    static StartAt stream_sequence(std::uint64_t s) { return {StartKind::StreamSequence, s}; }
    static StartAt source_seqno(std::uint64_t s) { return {StartKind::SourceSeqno, s}; }
    static StartAt time(std::uint64_t epoch_nanos) { return {StartKind::Time, epoch_nanos}; }
};

struct ReaderOptions {
    std::string stream;
    std::string prefix;  // the relay's subject prefix; empty: the stream's own (its subject PREFIX.>)
    StartAt start;
    std::string event_subject;  // empty: every event; else a subject (pattern) under PREFIX
    std::size_t max_chunked_event = std::size_t{1} << 30;  // a reassembled event may not exceed it
};

enum class ReadStep : std::uint8_t { Event, Gap, Notice, NotReady, Failed };

struct StreamEvent {
    EventDescriptor descriptor{};
    std::span<const std::byte> payload;  // valid until the next call
    std::uint64_t stream_sequence = 0;   // of its (first) message
    std::int64_t stored_nanos = 0;       // when the server stored it
};

struct StreamGap {
    std::uint64_t first_seqno = 0;
    std::uint64_t count = 0;  // at least 1
    GapReason reason = GapReason::FellBehind;
    std::string_view detail;  // empty for the relay's own gap messages; valid until the next call
    std::uint64_t last_seqno() const noexcept { return first_seqno + (count - 1); }
};

struct ReadItem {
    StreamEvent event;
    StreamGap gap;
    std::string_view notice;  // valid until the next call
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

class StreamReader {
public:
    static Result<StreamReader> open(const Connection& connection, ReaderOptions options);
    StreamReader(StreamReader&&) noexcept;
    StreamReader& operator=(StreamReader&&) noexcept;
    ~StreamReader();

    ReadStep next(ReadItem& item);
    // Blocks until a message arrives or `timeout` passes.
    void wait(std::chrono::nanoseconds timeout);

    const Error& error() const;  // after Failed
    const ReaderOptions& options() const;
    // The ring the stream carries (the newest announcement seen; nullopt when
    // the stream holds none).
    const std::optional<Announcement>& ring() const;
    std::span<const std::byte> schema() const;
    std::uint64_t next_seqno() const;  // the source seqno expected next (0: not known)
    // The newest source sequence number in the stream (0 when it holds no event): for "--from -N".
    Result<std::uint64_t> newest_source_seqno() const;
    ReaderStats stats() const;

    struct Impl;  // lib/nats/reader_impl.hpp

private:
    explicit StreamReader(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace evring::nats
