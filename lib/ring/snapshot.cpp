#include "util/write_all.hpp"
#include "ring/snapshot.hpp"

#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <vector>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/ring_extension.hpp"
#include "ring/schema_blob.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/snapshot_support.hpp"

namespace evring {
namespace {

using namespace snapshot_detail;

Status write_all(int fd, const void* data, std::size_t size, std::string_view path) {
    return detail::write_all(fd, data, size, snapshot_named(path));
}

// What copy_consistent saw of the live ring, step by step.
struct CopiedRing {
    std::uint64_t oldest = 0;        // the seqno range whose slots were read
    std::uint64_t newest = 0;
    std::uint64_t newest_after = 0;  // last_seqno once the payload bytes were copied
    std::uint64_t window = 0;        // buffer_window_start after the payload copy
    std::uint64_t next_byte = 0;     // next_payload_byte after the payload copy
};

// Step 1: every descriptor in range, read with the seqlock (R1..R4); the
// slots that could not be read consistently stay zero in the copy.
void copy_descriptors(Iterator& it, const MappedRing& ring, DescriptorSlot* slots, CopiedRing& seen,
                      SnapshotStats& stats) {
    seen.newest = it.newest_seqno();  // H, at most kMaxSeqno: the loop ends
    seen.oldest = it.oldest_seqno();
    for (std::uint64_t s = seen.oldest; s <= seen.newest; ++s) {
        EventDescriptor event;
        if (it.read_descriptor(s, event))
            slots[(s - 1) & ring.descriptor_mask()] = std::bit_cast<DescriptorSlot>(event);
        else
            ++stats.dropped_descriptors;
    }
}

// Step 2: the payload bytes (and the context area), then the window. A
// descriptor read as committed had its payload written before its commit
// (W8/R1), so the bytes copied now are at least that new.
void copy_payload_bytes(const MappedRing& ring, std::byte* copy, CopiedRing& seen) {
    const RingLayout& layout = ring.layout();
    detail::racy_copy(copy + layout.payload_offset, ring.payload_buffer(),
                      layout.size.payload_buf_size);  // P1
    if (layout.size.context_area_size > 0)
        detail::racy_copy(copy + layout.context_offset, ring.context_area().data(),
                          layout.size.context_area_size);
    // P2, pairs with W4: bytes we copied while they were rewritten show up as
    // a window raised past them.
    shared::fence_acquire();
    const RingControl& control = ring.header().control;
    seen.window = shared::load_relaxed(control.buffer_window_start);  // P3
    seen.next_byte = shared::load_relaxed(control.next_payload_byte);  // P3
}

// Step 3: a ring's readable events form one range (apart from reservations
// still in flight), so the copy keeps the newest unbroken run of events it
// read: a seqno it failed to read whose slot has since been handed to seqno
// + capacity was overwritten during the copy and ends the run; a failed seqno
// not yet lapped is a reservation in flight and stays a hole. Returns the
// seqno the run starts after.
std::uint64_t lapped_up_to(const MappedRing& ring, const DescriptorSlot* slots, const CopiedRing& seen) {
    const std::uint64_t capacity = ring.layout().size.descriptor_capacity;
    auto slot_holds = [&](std::uint64_t s) { return slots[(s - 1) & ring.descriptor_mask()].words[0] == s; };
    std::uint64_t newest_kept = 0;
    for (std::uint64_t s = seen.newest; s >= seen.oldest && s > 0; --s)
        if (slot_holds(s)) {
            newest_kept = s;
            break;
        }
    for (std::uint64_t s = newest_kept; s > seen.oldest; --s)
        if (!slot_holds(s - 1) && s - 1 + capacity <= seen.newest_after) return s - 1;
    return 0;
}

// True when the event's payload lies in bytes handed out before next_byte
// (overflow-safe: a damaged offset near 2^64 must not wrap past the check).
bool payload_handed_out(const EventDescriptor& event, std::uint64_t buffer_size, std::uint64_t next_byte) {
    return event.payload_size <= buffer_size && event.payload_buf_offset <= next_byte &&
           event.payload_size <= next_byte - event.payload_buf_offset;
}

// Step 4: keep the run, drop the rest, and write control words that describe
// exactly what was kept.
void keep_consistent_run(const MappedRing& ring, std::byte* copy, DescriptorSlot* slots,
                         const CopiedRing& seen, std::uint64_t lapped, SnapshotStats& stats) {
    const std::uint64_t buffer_size = ring.layout().size.payload_buf_size;
    std::uint64_t kept_end = seen.window;
    for (std::uint64_t s = seen.oldest; s <= seen.newest; ++s) {
        DescriptorSlot& slot = slots[(s - 1) & ring.descriptor_mask()];
        if (slot.words[0] != s) continue;
        const auto event = std::bit_cast<EventDescriptor>(slot);
        // Lapped during the copy, or claiming bytes never handed out (corrupt).
        if (s <= lapped || !payload_handed_out(event, buffer_size, seen.next_byte)) {
            slot = DescriptorSlot{};
            ++stats.dropped_descriptors;
            continue;
        }
        ++stats.kept_events;
        if (stats.oldest_seqno == 0) stats.oldest_seqno = s;
        stats.newest_seqno = s;
        if (event.payload_buf_offset < seen.window) ++stats.expired_payloads;
        kept_end = std::max(kept_end, event.payload_buf_offset + event.payload_size);
    }
    auto* header = reinterpret_cast<RingHeader*>(copy);  // private memory: plain stores
    header->control.last_seqno = stats.newest_seqno;
    header->control.next_payload_byte = kept_end;
    header->control.buffer_window_start = seen.window;
}

// Control words no ring reaches (validate_header): the copy would be refused
// when loaded, so the ring is reported as damaged instead.
Status check_copied_control(const CopiedRing& seen, const MappedRing& ring) {
    for (const auto& [name, value] : {std::pair{"buffer_window_start", seen.window},
                                      std::pair{"next_payload_byte", seen.next_byte}})
        if (value > kMaxPayloadOffset)
            return Error(EINVAL, fmt::format("ring '{}' is damaged: its {} {} is beyond {} (2^62)",
                                             ring.path(), name, value, kMaxPayloadOffset));
    return {};
}

// The rest of the header section that is written once at creation and
// immutable afterwards: evring's extension block up to the doorbell line
// (magic and feature bits; the doorbell word and the writer claim change and
// mean nothing in a snapshot, so they stay zero) and the embedded schema blob, so that a snapshot describes
// itself as its ring did. Everything else in the section is zero in a ring
// and stays zero in the copy.
void copy_header_extras(const MappedRing& ring, std::byte* copy) {
    const std::span<const std::byte> section = ring.header_section();
    std::memcpy(copy + kRingExtensionOffset, section.data() + kRingExtensionOffset,
                offsetof(RingExtension, doorbell));
    const std::span<const std::byte> blob = embedded_schema_blob(section);
    if (!blob.empty()) std::memcpy(copy + kEmbeddedSchemaOffset, blob.data(), blob.size());
}

// Says in the copy's extension block which of its oldest seqnos were lapped
// (ring_extension.hpp), so a reader does not take them for holes nobody
// filled. The copy's window is the newest kept event's ring's worth; in it,
// the seqnos up to `lapped` were overwritten during the copy, and those below
// the range read (seen.oldest) had their slots taken by newer reservations
// (still in flight at the newest end, so not kept) before the copy started.
// A copy without an extension block gets one, with no features. Private
// memory: plain stores.
// Returns the seqnos of the copy's window so marked, [first, last] (empty:
// first > last).
std::pair<std::uint64_t, std::uint64_t> note_lapped(std::byte* copy, const CopiedRing& seen,
                                                    std::uint64_t lapped, const SnapshotStats& stats) {
    const auto* header = reinterpret_cast<const RingHeader*>(copy);
    const std::uint64_t capacity = header->size.descriptor_capacity;
    const std::uint64_t window_start =
        stats.newest_seqno >= capacity ? stats.newest_seqno - capacity + 1 : 1;
    if (seen.oldest > window_start) lapped = std::max(lapped, seen.oldest - 1);
    if (stats.kept_events == 0 || lapped < window_start) return {1, 0};
    RingExtension* extension = extension_in(copy);
    if (!has_ring_extension(*extension)) write_ring_extension(copy, 0);
    extension->snapshot_lapped = std::max(extension->snapshot_lapped, lapped);
    return {window_start, lapped};
}

// Step 5: every lapped seqno of the copy's window gets a placeholder in its
// slot: a RECORD_ERROR event with that seqno and no payload, stamped with the
// oldest kept event's time. A RING01 reader that follows only the format
// starts at the window's oldest slot, max(1, last_seqno - capacity + 1);
// finding a zero there it would take the slot for "not written yet", which
// in a snapshot is the end, and read nothing. With the placeholders it reads
// them as events of type 1 (RECORD_ERROR, as evring's abort of an empty
// reservation writes), then the kept events. evring's loader clears them
// again (snapshot_load.cpp) and reads the lapped seqnos as lost to lapping
// (snapshot_lapped). Private memory: plain stores.
void mark_lapped_slots(const MappedRing& ring, std::byte* copy, DescriptorSlot* slots,
                       std::pair<std::uint64_t, std::uint64_t> lapped, const SnapshotStats& stats) {
    if (lapped.first > lapped.second) return;
    const auto* header = reinterpret_cast<const RingHeader*>(copy);
    EventDescriptor oldest{};
    std::memcpy(&oldest, &slots[(stats.oldest_seqno - 1) & ring.descriptor_mask()], sizeof oldest);
    for (std::uint64_t s = lapped.first; s <= lapped.second; ++s) {
        EventDescriptor placeholder{};
        placeholder.seqno = s;
        placeholder.event_type = kRecordErrorEventType;
        placeholder.payload_size = 0;
        placeholder.record_epoch_nanos = oldest.record_epoch_nanos;
        placeholder.payload_buf_offset = header->control.buffer_window_start;  // valid, and empty
        slots[(s - 1) & ring.descriptor_mask()] = std::bit_cast<DescriptorSlot>(placeholder);
    }
}

// Copies `ring` into `copy` (laid out like the file) and fixes the copy up.
Result<SnapshotStats> copy_consistent(const MappedRing& ring, std::byte* copy) {
    const RingLayout& layout = ring.layout();
    SnapshotStats stats;
    stats.ring_bytes = layout.file_size;
    // The immutable part of the header: magic, content type, hash, sizes.
    std::memcpy(copy, &ring.header(), offsetof(RingHeader, control));
    copy_header_extras(ring, copy);
    auto* slots = reinterpret_cast<DescriptorSlot*>(copy + layout.descriptors_offset);
    Iterator it(ring);
    CopiedRing seen;
    copy_descriptors(it, ring, slots, seen, stats);
    copy_payload_bytes(ring, copy, seen);
    if (auto s = check_copied_control(seen, ring); !s) return std::move(s).error();
    seen.newest_after = it.newest_seqno();
    const std::uint64_t lapped = lapped_up_to(ring, slots, seen);
    keep_consistent_run(ring, copy, slots, seen, lapped, stats);
    mark_lapped_slots(ring, copy, slots, note_lapped(copy, seen, lapped, stats), stats);
    return stats;
}

Status compress_to(const std::byte* data, std::uint64_t size, int out_fd, std::string_view out_path,
                   const SnapshotWriteOptions& options, std::uint64_t& written) {
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
    if (!cctx) return Error(ENOMEM, "allocating a zstd compression context");
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, options.compression_level);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setPledgedSrcSize(cctx.get(), size);
    std::vector<char> out_buf(ZSTD_CStreamOutSize());
    std::uint64_t offset = 0;
    for (;;) {
        if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed))
            return Error(ECANCELED, "writing " + snapshot_named(out_path) + ": interrupted");
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - offset));
        const bool last = offset + take == size;
        ZSTD_inBuffer in{data + offset, take, 0};
        bool done = false;
        while (!done) {
            ZSTD_outBuffer out{out_buf.data(), out_buf.size(), 0};
            const std::size_t r =
                ZSTD_compressStream2(cctx.get(), &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
            if (ZSTD_isError(r))
                return Error(EIO, "compressing " + snapshot_named(out_path) + ": " + ZSTD_getErrorName(r));
            if (auto s = write_all(out_fd, out_buf.data(), out.pos, out_path); !s) return s;
            written += out.pos;
            done = last ? r == 0 : in.pos == in.size;
        }
        offset += take;
        if (last) return {};
    }
}

}  // namespace

Result<SnapshotStats> write_snapshot(const MappedRing& ring, int out_fd, std::string_view out_path,
                                     const SnapshotWriteOptions& options) {
    const std::uint64_t size = ring.layout().file_size;
    // Untouched pages of this private copy stay unallocated zeros.
    Mapping copy(::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
                 size);
    if (copy.at == MAP_FAILED)
        return Error::from_errno(errno, fmt::format("allocating {} bytes to copy ring '{}'", size, ring.path()));
    auto copied = copy_consistent(ring, copy.bytes());
    if (!copied) return std::move(copied).error();
    SnapshotStats stats = *copied;
    if (auto s = compress_to(copy.bytes(), size, out_fd, out_path, options, stats.compressed_bytes);
        !s)
        return std::move(s).error();
    return stats;
}

}  // namespace evring
