#include "evring/snapshot.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "evring/iterator.hpp"
#include "evring/payload.hpp"

namespace evring {
namespace {

constexpr std::uint8_t kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
constexpr std::size_t kChunk = std::size_t{1} << 20;

std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

std::string snapshot_named(std::string_view path) {
    return "snapshot '" + std::string(path) + "'";
}

struct FileDescriptor {
    int fd = -1;
    FileDescriptor() = default;
    explicit FileDescriptor(int value) : fd(value) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

struct Mapping {
    void* at = MAP_FAILED;
    std::size_t size = 0;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(void* a, std::size_t s) : at(a), size(s) {}
    ~Mapping() {
        if (at != MAP_FAILED) ::munmap(at, size);
    }
    std::byte* bytes() const { return static_cast<std::byte*>(at); }
};

Status write_all(int fd, const void* data, std::size_t size, std::string_view path) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(errno, "writing " + snapshot_named(path));
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return {};
}

// Pulls decompressed bytes of one zstd frame out of a file, chunk by chunk.
class FrameReader {
public:
    FrameReader(int fd, std::string_view path) : fd_(fd), path_(path), input_(kChunk) {}
    ~FrameReader() { ZSTD_freeDCtx(dctx_); }
    FrameReader(const FrameReader&) = delete;
    FrameReader& operator=(const FrameReader&) = delete;

    // Decompresses into `out` until it is full, the frame ends or the input
    // ends without finishing the frame.
    Status fill(ZSTD_outBuffer& out) {
        if (dctx_ == nullptr) return Error(ENOMEM, "allocating a zstd decompression context");
        while (out.pos < out.size && !frame_done_) {
            if (in_.pos == in_.size && !eof_) {
                ssize_t n = ::read(fd_, input_.data(), input_.size());
                if (n < 0) {
                    if (errno == EINTR) continue;
                    return Error::from_errno(errno, "reading " + snapshot_named(path_));
                }
                if (n == 0) eof_ = true;
                in_ = ZSTD_inBuffer{input_.data(), static_cast<std::size_t>(n), 0};
            }
            const std::size_t out_before = out.pos;
            const std::size_t in_before = in_.pos;
            const std::size_t r = ZSTD_decompressStream(dctx_, &out, &in_);
            if (ZSTD_isError(r))
                return Error(EINVAL, "decompressing " + snapshot_named(path_) + ": " +
                                         ZSTD_getErrorName(r));
            if (r == 0) frame_done_ = true;
            if (eof_ && out.pos == out_before && in_.pos == in_before) break;
        }
        return {};
    }

    bool frame_done() const { return frame_done_; }
    // True when bytes follow the end of the frame.
    bool trailing_input() {
        if (in_.pos < in_.size) return true;
        char byte;
        return ::read(fd_, &byte, 1) == 1;
    }

private:
    int fd_;
    std::string_view path_;
    ZSTD_DCtx* dctx_ = ZSTD_createDCtx();
    std::vector<char> input_;
    ZSTD_inBuffer in_{nullptr, 0, 0};
    bool eof_ = false;
    bool frame_done_ = false;
};

Status check_declared_size(int fd, std::string_view path, std::uint64_t limit) {
    std::uint8_t head[18] = {};  // ZSTD_FRAMEHEADERSIZE_MAX (an experimental constant)
    ssize_t n = ::pread(fd, head, sizeof head, 0);
    if (n < 0) return Error::from_errno(errno, "reading " + snapshot_named(path));
    const unsigned long long declared = ZSTD_getFrameContentSize(head, static_cast<std::size_t>(n));
    if (declared == ZSTD_CONTENTSIZE_ERROR)
        return Error(EINVAL, snapshot_named(path) + " does not start with a valid zstd frame header");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > limit)
        return Error(EFBIG, format(" declares %llu bytes decompressed, above the limit of %" PRIu64
                                   " bytes",
                                   declared, limit)
                                .insert(0, snapshot_named(path)));
    return {};
}

}  // namespace

Result<bool> is_zstd_file(const std::string& path) {
    FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.fd < 0) return Error::from_errno(errno, "opening '" + path + "'");
    std::uint8_t magic[4] = {};
    ssize_t n = ::pread(file.fd, magic, sizeof magic, 0);
    if (n < 0) return Error::from_errno(errno, "reading '" + path + "'");
    return n == 4 && std::memcmp(magic, kZstdMagic, 4) == 0;
}

Status check_missing_tail(const RingHeader& header, std::uint64_t actual_size) {
    const RingLayout layout = RingLayout::of(header.size);
    if (actual_size >= layout.file_size) return {};
    const std::uint64_t buffer_size = header.size.payload_buf_size;
    const std::uint64_t next_byte = header.control.next_payload_byte;
    const std::string missing = format("bytes %" PRIu64 "..%" PRIu64 " are missing", actual_size,
                                       layout.file_size);
    if (header.size.context_area_size > 0)
        return Error(EINVAL, missing + ", which include the context area that may hold data");
    if (next_byte >= buffer_size)
        return Error(EINVAL, missing + format(" and the payload buffer has wrapped (next_payload_"
                                              "byte %" PRIu64 " >= buffer size %" PRIu64
                                              "), so any of them may hold data",
                                              next_byte, buffer_size));
    const std::uint64_t written_end = layout.payload_offset + next_byte;
    if (actual_size < written_end)
        return Error(EINVAL, missing + format(", but bytes up to %" PRIu64
                                              " (payload buffer offset + next_payload_byte) may "
                                              "hold data",
                                              written_end));
    return {};
}

Result<LoadedSnapshot> load_snapshot(const std::string& path, const SnapshotLoadOptions& options) {
    const std::uint64_t limit = options.max_decompressed_size;
    FileDescriptor in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.fd < 0) return Error::from_errno(errno, "opening " + snapshot_named(path));
    struct stat st {};
    if (::fstat(in.fd, &st) != 0) return Error::from_errno(errno, "examining " + snapshot_named(path));
    if (auto s = check_declared_size(in.fd, path, limit); !s) return std::move(s).error();

    FrameReader reader(in.fd, path);
    RingHeader header{};
    ZSTD_outBuffer head_out{&header, sizeof header, 0};
    if (auto s = reader.fill(head_out); !s) return std::move(s).error();
    if (head_out.pos < sizeof header && !reader.frame_done())
        return Error(EINVAL, snapshot_named(path) +
                                 format(" is truncated: its zstd frame ends after %zu "
                                        "decompressed bytes without an end mark",
                                        head_out.pos));
    if (head_out.pos < sizeof header)
        return Error(EINVAL, snapshot_named(path) +
                                 format(" decompresses to only %zu bytes, too short for a ring "
                                        "header",
                                        head_out.pos));
    const RingLayout layout = RingLayout::of(header.size);
    if (auto s = validate_header(header, layout.file_size); !s)
        return std::move(s).context(snapshot_named(path) + " does not hold a ring").error();
    if (layout.file_size > limit)
        return Error(EFBIG, snapshot_named(path) +
                                format(" holds a ring of %" PRIu64 " bytes (from its header), "
                                       "above the limit of %" PRIu64 " bytes",
                                       layout.file_size, limit));

    FileDescriptor memory(::memfd_create("evring-snapshot", MFD_CLOEXEC));
    if (memory.fd < 0) return Error::from_errno(errno, "creating memory for " + snapshot_named(path));
    if (::ftruncate(memory.fd, static_cast<off_t>(layout.file_size)) != 0)
        return Error::from_errno(errno, format("allocating %" PRIu64 " bytes for ", layout.file_size) +
                                            snapshot_named(path));
    std::uint64_t actual = 0;
    {
        Mapping target(::mmap(nullptr, layout.file_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                              memory.fd, 0),
                       layout.file_size);
        if (target.at == MAP_FAILED)
            return Error::from_errno(errno, "mapping memory for " + snapshot_named(path));
        std::memcpy(target.bytes(), &header, sizeof header);
        ZSTD_outBuffer out{target.bytes(), layout.file_size, sizeof header};
        if (auto s = reader.fill(out); !s) return std::move(s).error();
        actual = out.pos;
        if (!reader.frame_done() && out.pos == out.size) {
            std::byte extra[1];
            ZSTD_outBuffer more{extra, sizeof extra, 0};
            if (auto s = reader.fill(more); !s) return std::move(s).error();
            if (more.pos > 0)
                return Error(EINVAL, snapshot_named(path) +
                                         format(" decompresses to more than the %" PRIu64
                                                " bytes its header describes",
                                                layout.file_size));
        }
        if (!reader.frame_done())
            return Error(EINVAL, snapshot_named(path) +
                                     format(" is truncated: its zstd frame ends after %" PRIu64
                                            " decompressed bytes without an end mark",
                                            actual));
        if (reader.trailing_input())
            return Error(EINVAL, snapshot_named(path) +
                                     " has data after its zstd frame; a snapshot is one frame");
        if (actual < layout.file_size) {
            // The control words come from the decompressed header.
            if (auto s = check_missing_tail(header, actual); !s)
                return std::move(s)
                    .context(snapshot_named(path) +
                             format(" decompresses to %" PRIu64 " bytes but its header describes "
                                    "%" PRIu64,
                                    actual, layout.file_size))
                    .error();
        }
    }
    auto ring = MappedRing::map(memory.fd, Access::ReadOnly, path);
    if (!ring) return std::move(ring).error();
    return LoadedSnapshot{std::move(ring).value(), static_cast<std::uint64_t>(st.st_size), actual,
                          layout.file_size - actual};
}

namespace {

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
