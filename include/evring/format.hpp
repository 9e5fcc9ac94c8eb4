// evring/format.hpp — the RING01 file format: structs, constants, layout rules;
// and GapReason, the numbers every evring format beyond it (recordings,
// streams) stores for sequence numbers that were not seen.
//
// Pure data, no system calls. Byte-compatible with the RING01 event ring format
// (docs/format.md has the byte tables and the reasons). Every size and offset
// below is pinned with a static_assert; changing any of them is a format change
// and must change kRingMagic.
//
// Cross-process contract: these structs live in shared memory. Fields that
// change after creation (the control words and every descriptor word) are only
// ever accessed through shared_word.hpp. Who writes which word, in which
// order, and which fences pair with which is drawn once, writer and reader
// side by side, in docs/format.md ("The protocol"); the step labels there
// (W1..W11, R1..R4, P1..P3) tag each access in publisher_inline.hpp,
// iterator_inline.hpp and payload.hpp.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

static_assert(std::endian::native == std::endian::little,
              "evring: the RING01 format is little-endian; big-endian hosts are not supported");

namespace evring {

inline constexpr std::array<char, 6> kRingMagic = {'R', 'I', 'N', 'G', '0', '1'};

// The header section is 2 MiB whatever page size backs the file; the
// descriptor array, the payload buffer and the context area follow it back to
// back, unpadded, exactly as every RING01 reader computes them (RingLayout).
inline constexpr std::uint64_t kHeaderSectionSize = std::uint64_t{2} << 20;

// The context area is a whole number of these, and a ring's mapping is
// aligned to one so that hugetlbfs can map into it.
inline constexpr std::uint64_t kSectionAlignment = std::uint64_t{2} << 20;

// Payload space is handed out in multiples of this (older writers used 8).
inline constexpr std::uint64_t kPayloadAlignment = 16;

// Cap on how far buffer_window_start moves at a time (see publisher_inline.hpp).
inline constexpr std::uint64_t kMaxWindowIncrement = std::uint64_t{16} << 20;

// Well-known content types. Other values are free for applications.
enum class ContentType : std::uint16_t {
    None = 0,       // invalid: never a real ring
    Test = 1,       // automated tests and examples
    Execution = 2,  // execution events of the reference system
    Performance = 3,
};

// No ring reaches this many events (2^62 at a billion events a second takes
// 146 years), nor this many payload bytes: a header or descriptor claiming
// more is damaged. The bounds keep sequence and offset arithmetic (s + 1,
// s + capacity, offset + size) from wrapping past 2^64.
inline constexpr std::uint64_t kMaxSeqno = std::uint64_t{1} << 62;
inline constexpr std::uint64_t kMaxPayloadOffset = std::uint64_t{1} << 62;

// Event type 1 is RECORD_ERROR in every content type written by current writers.
inline constexpr std::uint16_t kRecordErrorEventType = 1;

struct RingSize {
    std::uint64_t descriptor_capacity;  // number of descriptors, a power of two
    std::uint64_t payload_buf_size;     // bytes, a power of two
    std::uint64_t context_area_size;    // bytes, a multiple of kSectionAlignment
};
static_assert(sizeof(RingSize) == 24);

// Control words. Writers update them with atomics; readers only load them.
// `last_seqno` and `next_payload_byte` share a line: both are bumped by every
// reservation, so one line ownership transfer covers both. The window start
// has a line of its own because readers load it for every payload and it
// changes rarely; keeping it apart keeps that line shared in readers' caches.
struct RingControl {
    alignas(64) std::uint64_t last_seqno;         // last sequence number handed out
    std::uint64_t next_payload_byte;              // next virtual payload byte to hand out
    alignas(64) std::uint64_t buffer_window_start;  // oldest virtual payload byte still valid
};
static_assert(sizeof(RingControl) == 128);
static_assert(offsetof(RingControl, next_payload_byte) == 8);
static_assert(offsetof(RingControl, buffer_window_start) == 64);

struct RingHeader {
    std::array<char, 6> magic;
    std::uint16_t content_type;
    std::array<std::uint8_t, 32> schema_hash;
    RingSize size;
    RingControl control;
};
static_assert(sizeof(RingHeader) == 192);
static_assert(offsetof(RingHeader, content_type) == 6);
static_assert(offsetof(RingHeader, schema_hash) == 8);
static_assert(offsetof(RingHeader, size) == 40);
static_assert(offsetof(RingHeader, control) == 64);
static_assert(offsetof(RingHeader, control) + offsetof(RingControl, buffer_window_start) == 128);

struct alignas(64) EventDescriptor {
    std::uint64_t seqno;               // 0 while empty or being written
    std::uint16_t event_type;
    std::uint16_t reserved;            // zero
    std::uint32_t payload_size;
    std::uint64_t record_epoch_nanos;  // wall clock, ns since the Unix epoch
    std::uint64_t payload_buf_offset;  // virtual: bytes live at offset mod payload_buf_size
    std::array<std::uint64_t, 4> content_ext;  // flow tags, meaning set by the content type
};
static_assert(sizeof(EventDescriptor) == 64);
static_assert(offsetof(EventDescriptor, event_type) == 8);
static_assert(offsetof(EventDescriptor, payload_size) == 12);
static_assert(offsetof(EventDescriptor, record_epoch_nanos) == 16);
static_assert(offsetof(EventDescriptor, payload_buf_offset) == 24);
static_assert(offsetof(EventDescriptor, content_ext) == 32);

// How a descriptor slot is seen in shared memory: eight 64-bit words, each
// accessed only through shared_word.hpp (word 0 is the seqno). The writer
// builds the words from the staged fields (publisher_inline.hpp says why);
// readers copy the words and convert the private copy to an EventDescriptor
// with std::bit_cast, so no descriptor is ever type-punned in shared memory.
struct alignas(64) DescriptorSlot {
    std::uint64_t words[8];
};
static_assert(sizeof(DescriptorSlot) == sizeof(EventDescriptor));

// Payload of a RECORD_ERROR event; the truncated start of the dropped payload
// may follow it.
enum class RecordErrorKind : std::uint16_t {
    None = 0,
    PayloadOver4GiB = 1,
    PayloadLargerThanRing = 2,
    MissingEvent = 3,
};

struct RecordErrorPayload {
    std::uint16_t error_type;  // a RecordErrorKind
    std::uint16_t dropped_event_type;
    std::uint32_t truncated_payload_size;
    std::uint64_t requested_payload_size;
};
static_assert(sizeof(RecordErrorPayload) == 16);

// Where each section starts in the file; derived from RingSize alone, with no
// padding between sections: the payload buffer starts right after the last
// descriptor, as RING01 readers of other implementations compute it. So each
// section offset is a whole number of the backing file system's pages only
// when the sizes are (validate_ring_size checks it: on 2 MiB huge pages that
// means a descriptor shift of 15 and a payload buffer shift of 21 at least).
struct RingLayout {
    RingSize size;
    std::uint64_t descriptors_offset;
    std::uint64_t payload_offset;
    std::uint64_t context_offset;
    std::uint64_t file_size;

    static constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
        return (value + alignment - 1) & ~(alignment - 1);
    }

    // The caller must have validated `size` (config.hpp: validate_ring_size,
    // which also proves the sums below cannot overflow); this only adds up.
    static constexpr RingLayout of(const RingSize& size) {
        RingLayout layout{};
        layout.size = size;
        layout.descriptors_offset = kHeaderSectionSize;
        layout.payload_offset =
            layout.descriptors_offset + size.descriptor_capacity * sizeof(EventDescriptor);
        layout.context_offset = layout.payload_offset + size.payload_buf_size;
        layout.file_size = layout.context_offset + size.context_area_size;
        return layout;
    }
};

// How far buffer_window_start advances at a time for a given buffer size:
// 1/16 of the buffer (so at most 1/16 is ever declared expired early), capped
// at 16 MiB, and at least the payload alignment.
constexpr std::uint64_t window_increment_for(std::uint64_t payload_buf_size) {
    std::uint64_t increment = payload_buf_size / 16;
    if (increment > kMaxWindowIncrement) increment = kMaxWindowIncrement;
    if (increment < kPayloadAlignment) increment = kPayloadAlignment;
    return increment;
}

// Largest payload one event can carry: a payload must not push the window past
// its own start, so it can be at most the buffer less one window increment.
constexpr std::uint64_t max_payload_size_for(std::uint64_t payload_buf_size) {
    return payload_buf_size - window_increment_for(payload_buf_size);
}

// Why sequence numbers were not seen: one vocabulary for event sources (a
// SourceGap's reason, event_source.hpp, which also describes them), for
// recordings (a Gap record stores it as a u32, docs/recording-format.md) and
// for streams (docs/distributed.md). Values are part of the recording format:
// they never change meaning, new ones are appended.
enum class GapReason : std::uint32_t {
    Unrecorded = 0,      // a version 1 recording, which did not say
    FellBehind = 1,      // the reader (or recorder) was lapped: overwritten before it read them
    Abandoned = 2,       // reserved and never committed while a writer lived (the abandon bound)
    NeverCommitted = 3,  // holes in a ring nobody writes any more, or in a snapshot
    WriterGone = 4,      // reserved by a writer that exited before committing them
    LostToDamage = 5,    // in a damaged part of a recording (or lost by a damaged source)
    RingReplaced = 6,    // events of a ring re-created under the same name, overwritten
                         // before the follower opened it
};
inline constexpr std::uint32_t kMaxGapReason = 6;

}  // namespace evring
