// lib/recording/recording_format.hpp — the bytes of a recording file (version 3).
//
// Pure data: the structs, constants and limits of docs/recording-format.md,
// which has the byte tables, a worked example and the reasons. Any change to a
// layout here changes kRecordingVersion.
//
// A version 2 file is a file header, an optional schema block, then blocks of
// records until an end record:
//
//   [file header 128][schema block]?[block][block]...[index block]...[block holding the End record]
//
// Version 3 adds index blocks (BlockContent::Index, IndexHead below): every
// kIndexEveryBlocks records blocks (or kIndexEveryBytes stored bytes) and
// once more before the end block, which then holds an IndexRef record
// pointing to that last index. A version 2 file is a version 3 file without
// index blocks; both are read.
//
// Every block is a 64-byte block header (magic, sizes, record count, the
// sequence numbers it covers, a CRC32C of its stored bytes and one of itself)
// and its stored bytes: one zstd frame or the raw records. Blocks are decoded
// independently, so damage costs only the blocks it touches and a reader
// resynchronises on the next intact block header.
//
// Thread safety: constants and plain structs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "evring/format.hpp"

namespace evring {

inline constexpr std::array<char, 8> kRecordingMagic = {'E', 'V', 'R', 'E', 'C', 'O', 'R', 'D'};
inline constexpr std::uint16_t kRecordingVersion = 3;   // written by this evring (indexed)
inline constexpr std::uint16_t kRecordingVersion2 = 2;  // still read (blocks, no index blocks)
inline constexpr std::uint16_t kRecordingVersion1 = 1;  // still read (one zstd stream, no blocks)

// RecordingFileHeader::flags.
inline constexpr std::uint32_t kRecordingZstd = 1;       // v1: the body is zstd; v2: blocks were compressed
inline constexpr std::uint32_t kRecordingHasSchema = 2;  // v2: a schema block follows the file header
// v2: the recording of a ring set: an Event record's descriptor holds its
// member index in `reserved` (bytes 10..11), a Gap record in its last u32.
inline constexpr std::uint32_t kRecordingRingSet = 4;
inline constexpr std::uint32_t kRecordingKnownFlags = kRecordingZstd | kRecordingHasSchema | kRecordingRingSet;

// The opaque schema blob a recording may carry (bytes; evring does not parse it).
inline constexpr std::uint32_t kMaxRecordingSchemaSize = std::uint32_t{1} << 20;

struct RecordingFileHeader {
    std::array<char, 8> magic;         // kRecordingMagic
    std::uint16_t version;             // 1 or 2
    std::uint16_t content_type;        // of the recorded ring
    std::uint32_t flags;               // kRecordingZstd, kRecordingHasSchema
    std::array<std::uint8_t, 32> schema_hash;
    RingSize ring_size;                // of the recorded ring
    std::uint64_t start_epoch_nanos;   // when this file was started
    std::uint32_t file_index;          // 0, then 1, 2, ... for rotated files
    std::uint32_t schema_size;         // v2: bytes of the schema blob (0: none); v1: zero
    std::uint64_t series_id;           // v2: random, the same in every file of a rotated
                                       // recording and in every block header; v1: zero
    // The instance of the ring (or ring set) recorded (SourceIdentity::instance):
    // a reader of that ring heals its lapped gaps only from a recording of the
    // same instance (lib/source/healer.hpp). 0: not known (older recorders, and
    // recordings of anything but a live ring or set). Not checked by readers.
    std::uint64_t origin_instance;
    // A flight-recorder capture (`evring record --trigger`): the trigger's
    // time and the "before" window asked for, both in nanoseconds; 0 in
    // every other recording. With the first event's time they say how much
    // of the window the ring still held. Not checked by readers.
    std::uint64_t capture_trigger_nanos;
    std::uint64_t capture_before_nanos;
    std::uint32_t reserved1;                // zero
    std::uint32_t header_crc;          // v2: CRC32C of bytes 0..123; v1: zero
};
static_assert(sizeof(RecordingFileHeader) == 128);
static_assert(offsetof(RecordingFileHeader, version) == 8);
static_assert(offsetof(RecordingFileHeader, schema_hash) == 16);
static_assert(offsetof(RecordingFileHeader, ring_size) == 48);
static_assert(offsetof(RecordingFileHeader, start_epoch_nanos) == 72);
static_assert(offsetof(RecordingFileHeader, file_index) == 80);
static_assert(offsetof(RecordingFileHeader, schema_size) == 84);
static_assert(offsetof(RecordingFileHeader, series_id) == 88);
static_assert(offsetof(RecordingFileHeader, origin_instance) == 96);
static_assert(offsetof(RecordingFileHeader, capture_trigger_nanos) == 104);
static_assert(offsetof(RecordingFileHeader, capture_before_nanos) == 112);
static_assert(offsetof(RecordingFileHeader, header_crc) == 124);

inline constexpr std::array<char, 8> kBlockMagic = {'E', 'V', 'R', 'B', 'L', 'O', 'C', 'K'};

// RecordingBlockHeader::flags.
inline constexpr std::uint16_t kBlockZstd = 1;      // stored bytes are one zstd frame
inline constexpr std::uint16_t kBlockHoldsEnd = 2;  // the block holds the file's End record

// RecordingBlockHeader::content.
enum class BlockContent : std::uint16_t {
    Records = 1,  // records, each a RecordHeader and its body
    Schema = 2,   // the schema blob; only as block 0
    Index = 3,    // v3: an index of the blocks before it (IndexHead); no records
};

struct RecordingBlockHeader {
    std::array<char, 8> magic;   // kBlockMagic
    std::uint64_t series_id;     // the file header's
    std::uint64_t first_seqno;   // lowest sequence number of its records (events, expired
    std::uint64_t last_seqno;    // payloads, gaps), highest; both 0 when it has none
    std::uint32_t stored_size;   // bytes that follow this header
    std::uint32_t content_size;  // bytes once decoded (== stored_size when raw)
    std::uint32_t record_count;  // records in the block, the End record included
    std::uint32_t block_number;  // 0, 1, 2, ... within its file (the schema block is 0)
    std::uint16_t flags;         // kBlockZstd, kBlockHoldsEnd
    std::uint16_t content;       // a BlockContent
    std::uint32_t reserved;      // zero
    std::uint32_t stored_crc;    // CRC32C of the stored bytes
    std::uint32_t header_crc;    // CRC32C of bytes 0..59 of this header
};
static_assert(sizeof(RecordingBlockHeader) == 64);
static_assert(offsetof(RecordingBlockHeader, first_seqno) == 16);
static_assert(offsetof(RecordingBlockHeader, stored_size) == 32);
static_assert(offsetof(RecordingBlockHeader, record_count) == 40);
static_assert(offsetof(RecordingBlockHeader, flags) == 48);
static_assert(offsetof(RecordingBlockHeader, stored_crc) == 56);
static_assert(offsetof(RecordingBlockHeader, header_crc) == 60);

// Limits of the format. A compressed block decodes to at most
// kMaxCompressedBlockContent bytes (a writer stores bigger blocks raw), so a
// reader never holds more than that for a block the file cannot back byte
// for byte; a raw block is bounded by the bytes really in the file.
inline constexpr std::uint32_t kMaxCompressedBlockContent = std::uint32_t{16} << 20;
inline constexpr std::uint32_t kMaxBlockContent = UINT32_MAX;

enum class RecordKind : std::uint32_t {
    Event = 1,           // EventDescriptor, then payload_size bytes
    Gap = 2,             // GapRecord: sequence numbers not captured, and why
    ExpiredPayload = 3,  // EventDescriptor of an event whose payload was lost
    End = 4,             // EndRecord
    IndexRef = 5,        // v3: IndexRefRecord, just before the End record
    Damage = 16,         // never stored: RecordingReader's report of a damaged part
};

// Precedes every record inside a v2 block.
struct RecordHeader {
    std::uint32_t kind;       // a RecordKind; unknown kinds are skipped by size
    std::uint32_t body_size;  // bytes of the record after this header
};
static_assert(sizeof(RecordHeader) == 8);

// Why sequence numbers were not captured: GapReason, in format.hpp.

struct GapRecord {
    std::uint64_t first_lost_seqno;
    std::uint64_t lost_count;            // at least 1
    std::uint64_t detected_epoch_nanos;
    GapReason reason;                    // v1 files: Unrecorded (their record is 24 bytes)
    std::uint32_t reserved;              // kRecordingRingSet: the ring set member; else zero
};
static_assert(sizeof(GapRecord) == 32);

inline constexpr std::uint64_t kEndContinued = 1;  // EndRecord::flags: next file follows

struct EndRecord {
    std::uint64_t events;            // Event records in this file
    std::uint64_t lost;              // sum of Gap lost counts in this file
    std::uint64_t expired;           // ExpiredPayload records in this file
    std::uint64_t end_epoch_nanos;
    std::uint64_t flags;             // kEndContinued
    std::uint64_t gaps;              // v2: Gap records in this file (v1 files: not recorded, 0)
};
static_assert(sizeof(EndRecord) == 48);

// ---- Version 3: index blocks --------------------------------------------
//
// The content of an index block (raw or one zstd frame, like any block):
//
//   IndexHead | IndexSummary[summaries] | IndexEntry[entries] | SpanMark[marks]
//   | MemberSeqnos[member_rows] (kIndexMembers only)
//
// `entries` are the records blocks written since the previous index block
// (or the file's start), in file order; `summaries` describe every earlier
// index block of the file, in file order, so the newest index block alone
// leads to any block in two reads. `marks` are the span instances (span
// positions, span_seek.hpp) whose opening or stage events are in those
// blocks. Nothing in an index is trusted: a reader checks it against the
// block headers it points to and scans when it does not hold.

// A writer adds an index block after this many records blocks, or once the
// blocks since the last one store this many bytes, whichever comes first.
inline constexpr std::uint32_t kIndexEveryBlocks = 64;
inline constexpr std::uint64_t kIndexEveryBytes = std::uint64_t{8} << 20;
// An index block's content is at most this big (a reader refuses more).
inline constexpr std::uint32_t kMaxIndexContent = std::uint32_t{16} << 20;

// IndexHead::flags. A reader ignores flags it does not know; an index block
// without kIndexMarkIds (written before them) serves no id lookups.
inline constexpr std::uint32_t kIndexMarkIds = 1;  // SpanMark::id_prefix is set
// A ring set recording's index block: MemberSeqnos[member_rows] follow the
// marks, each member's sequence numbers in each listed block (the entries'
// own seqno ranges mix members). Without it a set's index serves times only.
inline constexpr std::uint32_t kIndexMembers = 2;

struct IndexHead {
    std::uint32_t summaries;       // IndexSummary entries
    std::uint32_t entries;         // IndexEntry entries
    std::uint32_t marks;           // SpanMark entries
    std::uint32_t flags;           // kIndexMarkIds (zero in the first version 3 files)
    std::uint64_t previous_index;  // file offset of the previous index block (0: none)
    std::uint32_t member_rows;     // with kIndexMembers: MemberSeqnos entries; else zero
    std::uint32_t reserved1;       // zero
};
static_assert(sizeof(IndexHead) == 32);

// One earlier index block.
struct IndexSummary {
    std::uint64_t offset;       // of that index block
    std::uint64_t first_seqno;  // lowest first_seqno of its entries (0: none)
    std::uint64_t last_seqno;   // highest last_seqno of its entries
    std::uint64_t max_nanos;    // latest event time in its blocks (0: no event)
    std::uint64_t min_label;    // lowest and highest label among its marks;
    std::uint64_t max_label;    // min > max when it has none
};
static_assert(sizeof(IndexSummary) == 48);

// One records block.
struct IndexEntry {
    std::uint64_t offset;        // of its block header
    std::uint64_t first_seqno;   // as in its block header
    std::uint64_t last_seqno;
    std::uint64_t min_nanos;     // earliest and latest event time in it (0, 0: no event)
    std::uint64_t max_nanos;
    std::uint32_t block_number;  // as in its block header
    std::uint32_t events;        // Event and ExpiredPayload records in it
};
static_assert(sizeof(IndexEntry) == 48);

// One span instance's opening (or stage) event.
struct SpanMark {
    std::uint32_t key;        // span_index_key(span, stage), recording_index.hpp
    std::uint32_t id_prefix;  // with kIndexMarkIds: span_id_digest of the event's id field
                              // (its first 2 bytes and a hash; 0 without an id); else zero
    std::uint64_t label;     // the value of the span's (or stage's) label field
    std::uint64_t seqno;     // of the event
};
static_assert(sizeof(SpanMark) == 24);

// With kIndexMembers: one member's Event records in one listed block. Rows are
// sorted by entry, then member; a block without events of a member has no
// row for it.
struct MemberSeqnos {
    std::uint32_t entry;        // index into this index block's IndexEntry array
    std::uint32_t member;       // as the descriptors' `reserved` field
    std::uint64_t first_seqno;  // of that member's first and last event in the block
    std::uint64_t last_seqno;
};
static_assert(sizeof(MemberSeqnos) == 24);

// A v3 file's end block: raw, an IndexRef record and the End record, so it is
// exactly this many bytes at the very end of a finished file.
inline constexpr std::uint64_t kEndBlockSize =
    sizeof(RecordingBlockHeader) + 2 * sizeof(RecordHeader) + 16 + sizeof(EndRecord);

// The body of an IndexRef record.
struct IndexRefRecord {
    std::uint64_t index_offset;  // of the file's last index block
    std::uint64_t reserved;      // zero
};
static_assert(sizeof(IndexRefRecord) == 16);

}  // namespace evring
