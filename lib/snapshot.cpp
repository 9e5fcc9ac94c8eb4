#include "write_all.hpp"
#include "evring/snapshot.hpp"

#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <vector>

#include "evring/iterator.hpp"
#include "evring/payload.hpp"
#include "snapshot_support.hpp"

namespace evring {
namespace {

using namespace snapshot_detail;

Status write_all(int fd, const void* data, std::size_t size, std::string_view path) {
    return detail::write_all(fd, data, size, snapshot_named(path));
}

// Pulls decompressed bytes of one zstd frame out of a file, chunk by chunk.

// Copies `ring` into `copy` (laid out like the file) and fixes the copy up.
SnapshotStats copy_consistent(const MappedRing& ring, std::byte* copy) {
    const RingLayout& layout = ring.layout();
    SnapshotStats stats;
    stats.ring_bytes = layout.file_size;
    // The immutable part of the header: magic, content type, hash, sizes.
    std::memcpy(copy, &ring.header(), offsetof(RingHeader, control));

    Iterator it(ring);
    const std::uint64_t newest = it.newest_seqno();
    const std::uint64_t oldest = it.oldest_seqno();
    auto* slots = reinterpret_cast<DescriptorSlot*>(copy + layout.descriptors_offset);
    for (std::uint64_t s = oldest; s <= newest; ++s) {
        EventDescriptor event;
        if (it.read_descriptor(s, event))
            slots[(s - 1) & ring.descriptor_mask()] = std::bit_cast<DescriptorSlot>(event);
        else
            ++stats.dropped_descriptors;
    }
    // Payload bytes after the descriptors: a descriptor read as committed has
    // its payload bytes written before its commit (release/acquire).
    detail::racy_copy(copy + layout.payload_offset, ring.payload_buffer(), layout.size.payload_buf_size);
    if (layout.size.context_area_size > 0)
        detail::racy_copy(copy + layout.context_offset, ring.context_area().data(),
                          layout.size.context_area_size);
    // Pairs with writers' release fences: payload bytes we copied that were
    // being rewritten show up as a window raised past them.
    std::atomic_thread_fence(std::memory_order_acquire);
    auto& control = ring.header().control;
    // Relaxed loads: ordered by the fence above.
    const std::uint64_t window =
        std::atomic_ref<std::uint64_t>(control.buffer_window_start).load(std::memory_order_relaxed);
    const std::uint64_t next_byte =
        std::atomic_ref<std::uint64_t>(control.next_payload_byte).load(std::memory_order_relaxed);

    // A ring's readable events form one range (apart from reservations still
    // in flight), so the copy keeps the newest unbroken run of events it read:
    // a seqno it failed to read whose slot has since been handed to seqno +
    // capacity was overwritten during the copy and ends the run; a failed
    // seqno not yet lapped is a reservation in flight and stays a hole.
    const std::uint64_t newest_after = it.newest_seqno();
    const std::uint64_t capacity = layout.size.descriptor_capacity;
    auto slot_holds = [&](std::uint64_t s) {
        return slots[(s - 1) & ring.descriptor_mask()].words[0] == s;
    };
    std::uint64_t newest_kept = 0;
    for (std::uint64_t s = newest; s >= oldest && s > 0; --s)
        if (slot_holds(s)) {
            newest_kept = s;
            break;
        }
    std::uint64_t lapped_up_to = 0;  // kept events are > this
    for (std::uint64_t s = newest_kept; s > oldest; --s)
        if (!slot_holds(s - 1) && s - 1 + capacity <= newest_after) {
            lapped_up_to = s - 1;
            break;
        }
    std::uint64_t kept_end = window;
    for (std::uint64_t s = oldest; s <= newest; ++s) {
        DescriptorSlot& slot = slots[(s - 1) & ring.descriptor_mask()];
        if (slot.words[0] != s) continue;
        if (s <= lapped_up_to) {
            slot = DescriptorSlot{};
            ++stats.dropped_descriptors;
            continue;
        }
        const auto event = std::bit_cast<EventDescriptor>(slot);
        const std::uint64_t end = event.payload_buf_offset + event.payload_size;
        if (event.payload_size > layout.size.payload_buf_size || end > next_byte) {
            slot = DescriptorSlot{};  // claims bytes never handed out: corrupt
            ++stats.dropped_descriptors;
            continue;
        }
        ++stats.kept_events;
        if (stats.oldest_seqno == 0) stats.oldest_seqno = s;
        stats.newest_seqno = s;
        if (event.payload_buf_offset < window) ++stats.expired_payloads;
        kept_end = std::max(kept_end, end);
    }
    auto* header = reinterpret_cast<RingHeader*>(copy);
    header->control.last_seqno = stats.newest_seqno;
    header->control.next_payload_byte = kept_end;
    header->control.buffer_window_start = window;
    return stats;
}

Status compress_to(const std::byte* data, std::uint64_t size, int out_fd, std::string_view out_path,
                   int level, std::uint64_t& written) {
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
    if (!cctx) return Error(ENOMEM, "allocating a zstd compression context");
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setPledgedSrcSize(cctx.get(), size);
    std::vector<char> out_buf(ZSTD_CStreamOutSize());
    std::uint64_t offset = 0;
    for (;;) {
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
        return Error::from_errno(errno, format("allocating %" PRIu64 " bytes to copy ring '", size) +
                                            ring.path() + "'");
    SnapshotStats stats = copy_consistent(ring, copy.bytes());
    if (auto s = compress_to(copy.bytes(), size, out_fd, out_path, options.compression_level,
                             stats.compressed_bytes);
        !s)
        return std::move(s).error();
    return stats;
}

}  // namespace evring
