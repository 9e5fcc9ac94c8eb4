// Private to lib/recording: RecordingWriter's begin_event and end_event, inline,
// so that the thread following a ring pays a copy and a few compares per
// event (issue 35: within 2x of the reader's copy_payload path;
// scripts/bench-record-counts).
//
// The inline path stages an event record straight into the staging buffer
// (Staging::next) and keeps its block's and file's counts in Staging until
// settle() hands them to State. Every other call settles first and re-arms
// after (recording_writer.cpp), so State is whole whenever code outside this
// header reads it. The path is off (Staging::next null) where a kept event
// needs more than counting: ring sets (member rows and on_block's member
// marks), a span marker whose types are not given, and after finish.
// Rotation keeps it: the record that makes the file reach rotate_bytes ends
// the inline stretch as a block's end does (Staging::block_end, rotate_at),
// and the file rotates after it, as out of line. With them given
// (options.span_marked_types), only events of those types go out of line,
// for their marks (Staging::marked): a block opening or stage of a Monad
// ring, against thousands of other events in its block.
//
// Thread safety: the writer's one caller thread, like every writer call.
#pragma once

#include <cstddef>
#include <cstring>

namespace evring {

inline std::byte* RecordingWriter::put_event_head(std::byte* p, const EventDescriptor& event) noexcept {
    const RecordHeader head{static_cast<std::uint32_t>(RecordKind::Event),
                            static_cast<std::uint32_t>(sizeof event + event.payload_size)};
    std::memcpy(p, &head, sizeof head);
    std::memcpy(p + sizeof head, &event, sizeof event);
    return p + sizeof head + sizeof event;
}

inline void RecordingWriter::count_staged(std::uint64_t seqno, std::uint64_t nanos) noexcept {
    Staging& f = fast_;
    if (seqno < f.min_seqno) f.min_seqno = seqno;
    if (seqno > f.max_seqno) f.max_seqno = seqno;
    if (nanos < f.min_nanos) f.min_nanos = nanos;
    if (nanos > f.max_nanos) f.max_nanos = nanos;
    ++f.events;
    ++totals_.events;
}

inline bool RecordingWriter::marks(std::uint16_t event_type) const noexcept {
    const std::uint64_t* marked = fast_.marked;
    return marked != nullptr && ((marked[event_type >> 6] >> (event_type & 63)) & 1) != 0;
}

inline std::byte* RecordingWriter::begin_event(const EventDescriptor& event) {
    constexpr std::size_t kHead = sizeof(RecordHeader) + sizeof(EventDescriptor);
    Staging& f = fast_;
    std::byte* p = f.next;
    // Fits the buffer, so far below kMaxRecordedPayload: never oversized.
    // A marked type's begin_event_slow leaves `open` null: its end_event
    // writes the marks.
    if (static_cast<std::size_t>(f.limit - p) >= kHead + event.payload_size && !marks(event.event_type)) [[likely]] {
        std::byte* payload = put_event_head(p, event);
        f.open = p;
        f.next = payload + event.payload_size;
        return payload;
    }
    return begin_event_slow(event);
}

inline Status RecordingWriter::end_event(bool payload_intact) {
    Staging& f = fast_;
    if (payload_intact && f.open != nullptr) [[likely]] {
        const std::byte* event = f.open + sizeof(RecordHeader);
        std::uint64_t seqno, nanos;
        std::memcpy(&seqno, event + offsetof(EventDescriptor, seqno), sizeof seqno);
        std::memcpy(&nanos, event + offsetof(EventDescriptor, record_epoch_nanos), sizeof nanos);
        f.open = nullptr;
        count_staged(seqno, nanos);
        if (f.next < f.block_end) [[likely]] return {};
        return end_block();
    }
    return end_event_slow(payload_intact);
}

// An event record that ends before block_end leaves end_event's inline
// return as well: neither call leaves this header. Off (next null): false.
inline bool RecordingWriter::stages_inline(const EventDescriptor& event) const noexcept {
    constexpr std::ptrdiff_t kHead = sizeof(RecordHeader) + sizeof(EventDescriptor);
    const Staging& f = fast_;
    return kHead + static_cast<std::ptrdiff_t>(event.payload_size) < f.block_end - f.next && !marks(event.event_type);
}

inline std::byte* RecordingWriter::inline_payload_space() const noexcept {
    return fast_.next + sizeof(RecordHeader) + sizeof(EventDescriptor);  // as begin_event's return
}

// What begin_event and end_event do inline, without the round trip through
// `open` and the staged bytes: the recorder's direct path calls it for every
// event (lib/record/record_run_sink.cpp). No block ends here: the record
// ends before block_end (stages_inline).
inline void RecordingWriter::stage_copied_event(const EventDescriptor& event) noexcept {
    fast_.next = put_event_head(fast_.next, event) + event.payload_size;
    count_staged(event.seqno, event.record_epoch_nanos);
}

}  // namespace evring
