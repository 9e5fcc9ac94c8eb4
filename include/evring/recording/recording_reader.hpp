// lib/recording/recording_reader.hpp — replaying a recording, damage included.
//
//     auto reader = evring::RecordingReader::open("x.evrec");
//     evring::Record record;
//     for (;;) {
//         auto status = reader->next(record);           // an error only for I/O failures
//         if (!status || *status != evring::ReadStatus::Record) break;
//         switch (record.kind) { case evring::RecordKind::Event: ... }
//     }
//     // *status: CleanEnd, Truncated or DamagedEnd; reader->notice() says why.
//
// Contract:
// - Reads versions 1 and 2 (recording_format.hpp). Only regular files are
//   opened (O_NONBLOCK, then fstat): a FIFO, device, directory or socket gets
//   an error naming the path.
// - Every record comes back in file order. Damage does not stop a replay:
//   the reader returns a RecordKind::Damage record saying where (file offset),
//   why, and which sequence numbers were lost, then resumes at the next intact
//   block (version 2; a damaged version 1 stream ends there). The damaged
//   bytes are never handed out as events.
// - The end: CleanEnd when the end record was read, its totals agree with the
//   replay and nothing follows it; Truncated when the file ends without a
//   readable end record (a recorder killed or a file cut; the notice names
//   what was lost); DamagedEnd when the end record was read but its totals
//   disagree with what was replayed, or records or bytes follow it (also
//   reported as Damage records first). Further calls repeat the status.
// - No allocation follows a size the file merely claims: a raw block is read
//   only as far as the file really holds, a compressed one decodes to at most
//   kMaxCompressedBlockContent bytes and no more than its stored bytes can
//   expand to; version 1 records are bounded the same way (64 MiB when
//   compressed). Every step moves forward through the file, so a replay ends.
//
// Thread safety: one thread at a time uses a reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "recording/recording_format.hpp"
#include "recording/recording_index.hpp"

namespace evring {

enum class DamageKind : std::uint8_t {
    BadFileHeader,     // the file header's checksum fails: its fields are not trusted
    BadSchema,         // the schema block is damaged or missing: no schema
    BadBlockHeader,    // no valid block header where one should be: skipped to the next one
    ChecksumMismatch,  // a block's stored bytes fail their checksum
    Undecodable,       // a block (or a v1 stream) that cannot be decoded: zstd error,
                       // decompression bomb, malformed or impossible records
    MissingBlocks,     // block numbers jump: blocks were removed
    MisplacedBlock,    // a block out of order (a copy of one already read?): skipped, nothing lost
    Truncated,         // the file ends inside a block or record
    TrailingData,      // records or bytes after the end record
    TotalsMismatch,    // the end record's totals disagree with the replay
};

std::string_view describe(DamageKind kind) noexcept;

struct DamageReport {
    DamageKind kind{};
    std::uint64_t file_offset = 0;       // where the damaged part starts
    std::uint64_t bytes = 0;             // its length in the file (0 for totals)
    std::uint64_t first_lost_seqno = 0;  // 0: no sequence number is known to be lost
    std::uint64_t last_lost_seqno = 0;   // 0: unknown (everything from first_lost_seqno on)
    std::uint64_t lost_records = 0;      // records known lost (from intact block headers)
    std::string message;                 // names the file, the offset, the reason, the loss
};

struct Record {
    RecordKind kind{};
    EventDescriptor event{};             // Event and ExpiredPayload
    std::span<const std::byte> payload;  // Event: valid until the next call to next()
    GapRecord gap{};
    EndRecord end{};
    DamageReport damage;                 // Damage
};

enum class ReadStatus {
    Record,      // `record` holds the next record
    CleanEnd,    // the end record was read and checks out (it came as a Record first)
    Truncated,   // the file ends without a readable end record; notice() says where
    DamagedEnd,  // the end record was read, but something at the end is wrong; notice()
    NotYet,      // follow(true) only: the file ends here for now (being written); call
                 // next() again later
};

// What a reader has replayed so far from its file.
struct ReplayTotals {
    std::uint64_t events = 0;
    std::uint64_t expired = 0;
    std::uint64_t gaps = 0;
    std::uint64_t lost = 0;             // sum of Gap lost counts
    std::uint64_t blocks = 0;           // intact v2 blocks read
    std::uint64_t damage_reports = 0;   // Damage records returned
    std::uint64_t damaged_bytes = 0;    // bytes of the file in damaged parts
    std::uint64_t lost_to_damage = 0;   // records known lost to damage (a lower bound)
};

class RecordingReader {
public:
    // With `follow`, a recording being written (version 2 and 3): where the
    // file ends without an end record (after its last complete block, or
    // inside a block still being written), next() returns NotYet instead of
    // Truncated and reads on from there when called again.
    static Result<RecordingReader> open(const std::string& path, bool follow = false);
    RecordingReader(RecordingReader&&) noexcept;
    RecordingReader& operator=(RecordingReader&&) noexcept;
    ~RecordingReader();

    const RecordingFileHeader& header() const noexcept;
    // False when a v2 file header fails its checksum (reported as Damage).
    bool header_trusted() const noexcept;
    const std::string& path() const noexcept;
    std::uint64_t file_bytes() const noexcept;
    // The opaque schema blob of a v2 recording; empty when it has none or
    // when its block is damaged (reported as Damage by next()).
    std::span<const std::byte> schema() const noexcept;

    // The next record or the end (see the contract). Errors: read(2) failures
    // and allocation failures, naming the file.
    Result<ReadStatus> next(Record& record);
    // After an end status: what happened at the end ("" after CleanEnd).
    const std::string& notice() const noexcept;
    const ReplayTotals& totals() const noexcept;

    // The index (recording_index.hpp): where to jump for `query`. Errors:
    // read(2) and allocation failures only; an index that does not hold is
    // IndexOutcome::Lies.
    Result<IndexAnswer> find(const IndexQuery& query);
    // Before the first next(): continues the replay at `block` instead of
    // the start, after checking that the block header there is the one the
    // index names (false, nothing moved, when it is not; `why` says what is
    // there instead). The end record's totals are then not checked against
    // the replay.
    Result<bool> jump(const IndexedBlock& block, std::string* why = nullptr);

    struct Decoder;  // one per format version (lib/)

private:
    explicit RecordingReader(std::unique_ptr<Decoder> decoder);
    std::unique_ptr<Decoder> decoder_;
};

// True when `path` is a regular file that starts with kRecordingMagic; an
// error for a path that is not a regular file (never blocks on a FIFO).
Result<bool> is_recording_file(const std::string& path);

}  // namespace evring
