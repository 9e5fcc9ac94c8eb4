// evring/recording.hpp — recordings: the events of a ring kept on disk.
//
// A recording is a stream of records written while following a live ring:
// every event (descriptor + payload), every gap the recorder suffered (with
// its lost count), every event whose payload was overwritten before it could
// be copied, and an end marker when the recorder stopped cleanly. The byte
// layout is in docs/recording-format.md; change kRecordingVersion with it.
//
//     auto writer = evring::RecordingWriter::create("x.evrec", ring.header(), {});
//     std::byte* dst = writer->begin_event(event);      // payload_size bytes
//     copy_into(dst);                                   // may race a ring writer
//     writer->end_event(evring::payload_valid(ring, event));
//     ...
//     writer->finish();
//
//     auto reader = evring::RecordingReader::open("x.evrec");
//     evring::Record record;
//     while (*reader->next(record) == evring::ReadStatus::Record) use(record);
//
// Contract:
// - The file header (128 bytes) is never compressed, so `info` can read it
//   cheaply. The body is a zstd stream (or raw bytes with compression off).
//   Records are staged in 1 MiB pieces and compressed and written, in order,
//   by a worker thread the writer owns, so the caller never waits for zstd
//   or write(2) unless the worker is about 32 MiB behind.
// - flush() queues a zstd flush behind everything appended so far; once the
//   worker reaches it (at once when it is idle) those records are decodable
//   from the file, so a recorder killed at any moment leaves a file that
//   replays up to its last processed flush; the reader then reports
//   ReadStatus::Truncated with a notice instead of failing. finish() and the
//   destructor wait until everything queued is written (only finish() writes
//   the end marker).
// - With rotate_bytes set, a file whose header and records (counted before
//   compression, so the size on disk is at most that) have reached it is
//   closed at that record boundary with an end marker flagged "continued", and
//   recording goes on in `<path>.1`, `<path>.2`, ... (see rotated_path).
//
// Thread safety: a writer or reader is used from one thread at a time (the
// writer's worker thread is internal to it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "evring/error.hpp"
#include "evring/format.hpp"

namespace evring {

inline constexpr std::array<char, 8> kRecordingMagic = {'E', 'V', 'R', 'E', 'C', 'O', 'R', 'D'};
inline constexpr std::uint16_t kRecordingVersion = 1;
inline constexpr std::uint32_t kRecordingZstd = 1;  // RecordingFileHeader::flags: body is zstd

struct RecordingFileHeader {
    std::array<char, 8> magic;
    std::uint16_t version;
    std::uint16_t content_type;        // of the recorded ring
    std::uint32_t flags;               // kRecordingZstd
    std::array<std::uint8_t, 32> schema_hash;
    RingSize ring_size;                // of the recorded ring
    std::uint64_t start_epoch_nanos;   // when this file was started
    std::uint32_t file_index;          // 0, then 1, 2, ... for rotated files
    std::uint32_t reserved0;
    std::array<std::uint64_t, 5> reserved;  // zero
};
static_assert(sizeof(RecordingFileHeader) == 128);
static_assert(offsetof(RecordingFileHeader, schema_hash) == 16);
static_assert(offsetof(RecordingFileHeader, ring_size) == 48);
static_assert(offsetof(RecordingFileHeader, start_epoch_nanos) == 72);
static_assert(offsetof(RecordingFileHeader, file_index) == 80);

enum class RecordKind : std::uint32_t {
    Event = 1,           // EventDescriptor, then payload_size bytes
    Gap = 2,             // GapRecord
    ExpiredPayload = 3,  // EventDescriptor whose payload was lost
    End = 4,             // EndRecord
};

// Precedes every record in the (decompressed) body.
struct RecordHeader {
    std::uint32_t kind;  // a RecordKind; unknown kinds are skipped by size
    std::uint32_t reserved;
    std::uint64_t body_size;
};
static_assert(sizeof(RecordHeader) == 16);

struct GapRecord {
    std::uint64_t first_lost_seqno;
    std::uint64_t lost_count;
    std::uint64_t detected_epoch_nanos;
};
static_assert(sizeof(GapRecord) == 24);

inline constexpr std::uint64_t kEndContinued = 1;  // EndRecord::flags: next file follows

struct EndRecord {
    std::uint64_t events;            // Event records in this file
    std::uint64_t lost;              // sum of Gap lost counts in this file
    std::uint64_t expired;           // ExpiredPayload records in this file
    std::uint64_t end_epoch_nanos;
    std::uint64_t flags;             // kEndContinued
};
static_assert(sizeof(EndRecord) == 40);

// `<base>` for index 0, `<base>.<index>` after.
std::string rotated_path(const std::string& base, std::uint32_t index);

struct RecordingOptions {
    bool compress = true;
    int compression_level = 1;
    std::uint64_t rotate_bytes = 0;  // 0: never rotate
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
    static Result<RecordingWriter> create(const std::string& path, const RingHeader& source,
                                          const RecordingOptions& options);
    RecordingWriter(RecordingWriter&&) noexcept;
    RecordingWriter& operator=(RecordingWriter&&) noexcept;
    ~RecordingWriter();

    // Space for the event's payload_size bytes; valid until end_event.
    std::byte* begin_event(const EventDescriptor& event);
    // Keeps the event, or, when the copied payload was not intact, turns the
    // record into an ExpiredPayload marker.
    Status end_event(bool payload_intact);
    Status append_gap(std::uint64_t first_lost_seqno, std::uint64_t lost_count);
    // Queues a flush that makes every appended record decodable from the file
    // (see the contract). Errors are the worker's, reported on a later call
    // when they happen after this one returns.
    Status flush();
    // Writes the end marker and closes the file. Further calls do nothing.
    Status finish();

    const RecordingTotals& totals() const noexcept { return totals_; }
    // The file currently written, and its size so far before compression.
    const std::string& current_path() const noexcept;
    std::uint64_t current_file_bytes() const noexcept;

private:
    struct State;
    explicit RecordingWriter(std::unique_ptr<State> state);
    Status after_record();
    std::unique_ptr<State> state_;
    RecordingTotals totals_;
};

struct Record {
    RecordKind kind;
    EventDescriptor event{};             // Event and ExpiredPayload
    std::span<const std::byte> payload;  // Event: valid until the next call to next()
    GapRecord gap{};
    EndRecord end{};
};

enum class ReadStatus {
    Record,     // `record` holds the next record
    CleanEnd,   // the end marker was read (it is also returned as a Record first)
    Truncated,  // the file ends without an end marker; notice() says where
};

class RecordingReader {
public:
    static Result<RecordingReader> open(const std::string& path);
    RecordingReader(RecordingReader&&) noexcept;
    RecordingReader& operator=(RecordingReader&&) noexcept;
    ~RecordingReader();

    const RecordingFileHeader& header() const noexcept;
    const std::string& path() const noexcept;
    std::uint64_t file_bytes() const noexcept;

    // Errors: a record that cannot be valid (sizes out of range) or a
    // corrupt zstd stream; they name the file and the record's position.
    Result<ReadStatus> next(Record& record);
    // After Truncated: where and why the file stopped.
    const std::string& notice() const noexcept;

private:
    struct State;
    explicit RecordingReader(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// True when the file starts with kRecordingMagic.
Result<bool> is_recording_file(const std::string& path);

}  // namespace evring
