// lib/recording/recording_writer.hpp — writing a recording (the disk side of `evring record`).
//
//     evring::RecordingOptions options;
//     options.schema = schema_bytes;                        // optional, opaque
//     auto writer = evring::RecordingWriter::create("x.evrec", ring.header(), options);
//     std::byte* dst = writer->begin_event(event);          // payload_size bytes
//     copy_into(dst);                                       // may race a ring writer
//     writer->end_event(evring::payload_valid(ring, event));
//     writer->append_gap(first, count, evring::GapReason::FellBehind);
//     writer->flush();                                      // when idle, and once a second
//     writer->finish();                                     // the end record
//
// Contract:
// - Records are staged on the caller's thread and cut into blocks of about
//   256 KiB (recording_format.hpp); a worker thread the writer owns
//   compresses each block (zstd, one frame per block; a block zstd cannot
//   shrink is stored raw), checksums it and writes it with one writev, in
//   order; with options.threads > 1, that many threads compress blocks at
//   once and the worker writes them in order. The caller never waits for
//   zstd or write(2) unless the worker is 32 MiB of blocks behind.
// - flush() ends the current block, if any is staged; once the worker has
//   written it (and what it holds: below), every record appended before the
//   flush is readable from the file. A recorder killed at any moment leaves a file whose every
//   completed block is readable; the reader reports the cut block as
//   truncation and names the sequence numbers it held. finish() and the
//   destructor wait until everything queued is written; only finish() writes
//   the end record (the destructor writes the staged records as a last block).
// - sync() is a flush that waits: it returns once every record appended
//   before it is written and fdatasync'ed. finish() also syncs, and a file
//   closed at rotation is synced before it is closed; nothing else waits for
//   the disk.
// - With options.io Direct, where the filesystem offers direct I/O (a disk's:
//   statx reports its alignment), the worker writes whole alignment units
//   around the page cache, and holds the last, partly filled unit of what it
//   has written until more completes it or a flush writes it through the
//   page cache (recording_appender.hpp). A block is written once its last
//   byte is in the file; every block written is readable, as above.
// - on_block, when set, is told of each records block just before its write
//   begins and once it is written, on the worker thread, in file order: a
//   caller that keeps its own mark of what the file holds (a named recorder,
//   lib/cursor/named_reader.hpp) learns it exactly, also when it is killed.
// - With rotate_bytes set, a file whose bytes counted before compression have
//   reached it is closed at that record boundary with an end record flagged
//   "continued", and recording goes on in `<path>.1`, `<path>.2`, ... (see
//   rotated_path), each with the same schema block and series id.
// - Errors of the worker (a full disk) are reported by the next call.
//
// Thread safety: one thread at a time uses a writer (its worker is internal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "recording/recording_format.hpp"
#include "recording/recording_index.hpp"

namespace evring {

inline constexpr unsigned kMaxRecordingThreads = 64;

// `<base>` for index 0, `<base>.<index>` after.
std::string rotated_path(const std::string& base, std::uint32_t index);

// A records block on its way to the file (RecordingOptions::on_block).
struct BlockProgress {
    struct MemberLast {
        std::uint32_t member;
        std::uint64_t seqno;
    };
    bool written = false;          // false: its write begins; true: it was written
    std::uint64_t last_seqno = 0;  // its last sequence number (an event's or a gap's)
    // A ring set recording: each member's last event in the block (expired ones too).
    std::span<const MemberLast> members;
};

// How a recording's bytes reach its files (RecordingOptions::io;
// recording_appender.hpp).
enum class RecordingIo : std::uint8_t {
    Buffered,        // through the page cache
    Direct,          // direct I/O where the filesystem reports its alignment (a disk's), else buffered
    DirectAnywhere,  // direct I/O wherever the kernel takes O_DIRECT (tmpfs does, and gains nothing: tests)
};

struct RecordingOptions {
    bool compress = true;
    int compression_level = 1;       // zstd's levels; checked by create
    std::uint64_t rotate_bytes = 0;  // 0: never rotate
    // An opaque blob (the ring's schema) written into every file of the
    // recording; at most kMaxRecordingSchemaSize bytes. create copies it.
    std::span<const std::byte> schema;
    // The source is a ring set: events and gaps carry member indexes
    // (kRecordingRingSet; begin_event's descriptor.reserved, append_gap's member).
    bool ring_set = false;
    // Marks the span instances an event opens or stages, for the span index
    // (recording_index.hpp; span_marker(schema), query/recording_span_marks.hpp,
    // reads the schema's labels).
    // Empty: the recording's index has block, sequence number and time
    // entries only. Called on the caller's thread for every kept event of
    // the types below.
    SpanMarker span_marker{};
    // The event types span_marker may mark (span_marked_types(schema) in
    // query/recording_span_marks.hpp); it writes none for any other type,
    // whose events then stay on the inline path. Empty with a span_marker:
    // it may mark any type, and every event goes out of line.
    std::vector<std::uint16_t> span_marked_types{};
    // False: a version 2 file, without index blocks, for a reader that
    // predates version 3 (and for tests of old files).
    bool index = true;
    // The recorded ring's instance (SourceIdentity::instance), written into
    // every file header (RecordingFileHeader::origin_instance) so that a
    // lapped reader of that ring can heal from this recording; 0: unknown.
    std::uint64_t origin_instance = 0;
    // A capture's trigger time and "before" window (RecordingFileHeader's
    // capture_* fields); 0 for any other recording.
    std::uint64_t capture_trigger_nanos = 0;
    std::uint64_t capture_before_nanos = 0;
    // Called on the writer's worker thread around each records block's write
    // (see the contract). It must be quick, must not throw and must not use
    // the writer.
    std::function<void(const BlockProgress&)> on_block{};
    // Threads that compress, 1..kMaxRecordingThreads: the writer's worker
    // and threads - 1 more, each packing whole blocks; the worker still
    // writes them in order (recording_sink.hpp). Without compression, one.
    // (Last: the tests build options positionally.)
    unsigned threads = 1;
    // The page cache, or direct I/O (see RecordingIo and the contract).
    RecordingIo io{};
};

struct RecordingTotals {
    std::uint64_t events = 0;
    std::uint64_t lost = 0;
    std::uint64_t gaps = 0;
    std::uint64_t expired = 0;
    std::uint32_t files = 1;
};

class RecordingWriter {
public:
    // Creates `path` (it must not exist) for a ring with `source`'s header.
    // Errors name the path, or the option and its bound.
    static Result<RecordingWriter> create(const std::string& path, const RingHeader& source,
                                          const RecordingOptions& options);
    RecordingWriter(RecordingWriter&&) noexcept;
    RecordingWriter& operator=(RecordingWriter&&) noexcept;
    ~RecordingWriter();

    // Space for the event's payload_size bytes; valid until end_event.
    // Inline (recording_writer_inline.hpp): the recorder's follow thread
    // calls both for every event.
    std::byte* begin_event(const EventDescriptor& event);
    // Keeps the event, or, when the copied payload was not intact (or the
    // event cannot fit a block: payload_size over 4 GiB less 72 bytes), keeps
    // only its descriptor as an ExpiredPayload record.
    Status end_event(bool payload_intact);
    // True when begin_event and end_event(true) of an event of `payload_size`
    // bytes both stay inline (recording_writer_inline.hpp) and so take no
    // lock, allocate nothing and make no system call: a caller may run them
    // inside a SIGBUS guard, around its copy from a mapped ring
    // (lib/record/record_run_sink.hpp).
    bool stages_inline(const EventDescriptor& event) const noexcept;
    // Whether the inline path is on at all: off with ring sets, a span
    // marker without its types, and after finish (recording_writer_inline.hpp).
    bool inline_path() const noexcept;
    // Where begin_event will put the payload of the next event while
    // stages_inline says so for it. A caller may copy the payload there
    // first, check it, and only then begin the event (begin_event writes the
    // record's header and descriptor before that space, never in it): a copy
    // cut short (a SIGBUS) or found overwritten then leaves the writer as it
    // was.
    std::byte* inline_payload_space() const noexcept;
    // begin_event and end_event(true) in one, for an event whose intact
    // payload the caller has copied to inline_payload_space() while
    // stages_inline said so: writes the record's header and descriptor
    // before it and keeps the event. Inline, no failure.
    void stage_copied_event(const EventDescriptor& event) noexcept;
    // Records that `lost_count` sequence numbers from `first_lost_seqno` were
    // not captured, and why. Refuses a zero count, a range past 2^64 - 1 and
    // an unknown reason.
    Status append_gap(std::uint64_t first_lost_seqno, std::uint64_t lost_count, GapReason reason,
                      std::uint32_t member = 0);
    // Ends the current block (see the contract).
    Status flush();
    // Ends the current block and waits until everything is written and
    // synced (see the contract).
    Status sync();
    // Writes the end record and closes the file. Further calls do nothing.
    Status finish();

    const RecordingTotals& totals() const noexcept { return totals_; }
    // The file currently written, and its size so far before compression.
    const std::string& current_path() const noexcept;
    std::uint64_t current_file_bytes() const noexcept;

private:
    struct State;
    // What the inline begin_event/end_event touch (recording_writer_inline.hpp).
    struct Staging {
        std::byte* next = nullptr;       // where the next record goes; null: every call out of line
        std::byte* limit = nullptr;      // the end of the staging buffer
        std::byte* block_end = nullptr;  // a record that ends at or past it ends the block (or rotates)
        std::byte* open = nullptr;       // the event begun inline, until its end_event
        // Bit t set: events of type t get span marks, out of line (null: none do).
        const std::uint64_t* marked = nullptr;
        // Of the events kept inline since the last settle().
        std::uint64_t min_seqno = UINT64_MAX, max_seqno = 0;
        std::uint64_t min_nanos = UINT64_MAX, max_nanos = 0;
        std::uint32_t events = 0;
    };
    explicit RecordingWriter(std::unique_ptr<State> state);
    std::byte* begin_event_slow(const EventDescriptor& event);
    // The inline path's two halves (recording_writer_inline.hpp), shared by
    // begin_event/end_event and stage_copied_event: an event record's header
    // and descriptor written at `p`, returning where its payload goes; an
    // event kept, counted in Staging.
    static std::byte* put_event_head(std::byte* p, const EventDescriptor& event) noexcept;
    bool marks(std::uint16_t event_type) const noexcept;
    std::uint64_t rotate_at() const noexcept;
    void count_staged(std::uint64_t seqno, std::uint64_t nanos) noexcept;
    Status end_event_slow(bool payload_intact);
    Status end_block();
    Status after_record();
    // Hands what the inline path staged to State, and takes it back.
    void settle() noexcept;
    void rearm() noexcept;
    std::unique_ptr<State> state_;
    RecordingTotals totals_;
    Staging fast_;
};

}  // namespace evring

#include "recording/recording_writer_inline.hpp"
