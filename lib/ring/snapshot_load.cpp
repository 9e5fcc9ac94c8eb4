// Loading snapshots, from a file or from memory: one implementation, fed by
// a CompressedInput. See snapshot.hpp for the contract.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>
#include <vector>

#include "evring/config.hpp"
#include "evring/ring/ring_extension.hpp"
#include "ring/snapshot.hpp"
#include "util/regular_file.hpp"
#include "ring/snapshot_support.hpp"

namespace evring {
namespace {

using namespace snapshot_detail;

constexpr std::uint8_t kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

// Where the compressed bytes come from: an open regular file, read in
// chunks, or a caller's buffer, used in place.
class CompressedInput {
public:
    // Bytes [offset, offset + length) of the file (a set snapshot's member).
    static CompressedInput file(int fd, std::uint64_t offset = 0, std::uint64_t length = UINT64_MAX) {
        return CompressedInput(fd, {}, offset, length);
    }
    static CompressedInput memory(std::span<const std::byte> bytes) { return CompressedInput(-1, bytes, 0, 0); }

    // Up to `n` bytes from the start, without consuming anything.
    Result<std::size_t> peek(void* out, std::size_t n, std::string_view name) const {
        if (fd_ < 0) {
            const std::size_t k = std::min(n, memory_.size());
            if (k > 0) std::memcpy(out, memory_.data(), k);  // an empty span's data() may be null
            return k;
        }
        const ssize_t got = ::pread(fd_, out, std::min<std::uint64_t>(n, remaining_), static_cast<off_t>(offset_));
        if (got < 0) return Error::from_errno(errno, fmt::format("reading {}", name));
        return static_cast<std::size_t>(got);
    }

    // The next bytes to decompress; empty at the end of the input.
    Result<std::span<const std::byte>> next(std::string_view name) {
        if (fd_ < 0) return std::exchange(memory_, {});
        if (chunk_.empty()) chunk_.resize(kChunk);
        for (;;) {
            const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_.size(), remaining_));
            const ssize_t got = ::pread(fd_, chunk_.data(), want, static_cast<off_t>(offset_));
            if (got >= 0) {
                offset_ += static_cast<std::uint64_t>(got);
                remaining_ -= static_cast<std::uint64_t>(got);
                return std::span<const std::byte>(chunk_.data(), static_cast<std::size_t>(got));
            }
            if (errno != EINTR) return Error::from_errno(errno, fmt::format("reading {}", name));
        }
    }

private:
    CompressedInput(int fd, std::span<const std::byte> memory, std::uint64_t offset, std::uint64_t length)
        : fd_(fd), memory_(memory), offset_(offset), remaining_(length) {}

    int fd_;
    std::span<const std::byte> memory_;
    std::uint64_t offset_;     // file: the next byte to read
    std::uint64_t remaining_;  // file: bytes left in the range
    std::vector<std::byte> chunk_;
};

// Pulls the decompressed bytes of one zstd frame out of a CompressedInput.
class FrameReader {
public:
    FrameReader(CompressedInput& input, std::string_view name, std::uint64_t limit)
        : input_(input), name_(name), limit_(limit) {
        // zstd sizes its window from the frame header: never more than the
        // limit allows (a 300-byte frame may declare a 2 GiB window).
        if (dctx_ != nullptr)
            ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, window_log_for(limit));
    }
    ~FrameReader() { ZSTD_freeDCtx(dctx_); }
    FrameReader(const FrameReader&) = delete;
    FrameReader& operator=(const FrameReader&) = delete;

    // Decompresses into `out` until it is full, the frame ends or the input
    // ends without finishing the frame.
    Status fill(ZSTD_outBuffer& out) {
        if (dctx_ == nullptr) return Error(ENOMEM, "allocating a zstd decompression context");
        while (out.pos < out.size && !frame_done_) {
            if (in_.pos == in_.size && !eof_) {
                auto chunk = input_.next(name_);
                if (!chunk) return std::move(chunk).error();
                eof_ = chunk->empty();
                in_ = ZSTD_inBuffer{chunk->data(), chunk->size(), 0};
            }
            const std::size_t out_before = out.pos;
            const std::size_t in_before = in_.pos;
            const std::size_t r = ZSTD_decompressStream(dctx_, &out, &in_);
            if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
                return Error(EFBIG, fmt::format("decompressing {}: its zstd frame asks for a window "
                                                "larger than the limit of {} bytes",
                                                name_, limit_));
            if (ZSTD_isError(r))
                return Error(EINVAL, fmt::format("decompressing {}: {}", name_, ZSTD_getErrorName(r)));
            if (r == 0) frame_done_ = true;
            if (eof_ && out.pos == out_before && in_.pos == in_before) break;
        }
        return {};
    }

    bool frame_done() const { return frame_done_; }

    // True when bytes follow the end of the frame.
    Result<bool> trailing_input() {
        if (in_.pos < in_.size) return true;
        if (eof_) return false;
        auto chunk = input_.next(name_);
        if (!chunk) return std::move(chunk).error();
        return !chunk->empty();
    }

private:
    static int window_log_for(std::uint64_t limit) {
        const int log = limit <= 1 ? 0 : static_cast<int>(std::bit_width(limit - 1));  // ceil(log2(limit))
        return std::clamp(log, 10, 31);  // zstd's absolute bounds on 64-bit hosts
    }

    CompressedInput& input_;
    std::string_view name_;
    std::uint64_t limit_;
    ZSTD_DCtx* dctx_ = ZSTD_createDCtx();
    ZSTD_inBuffer in_{nullptr, 0, 0};
    bool eof_ = false;
    bool frame_done_ = false;
};

// Refuses a frame whose header declares more decompressed bytes than the limit.
Status check_declared_size(const CompressedInput& input, std::string_view name, std::uint64_t limit) {
    std::uint8_t head[18] = {};  // ZSTD_FRAMEHEADERSIZE_MAX (an experimental constant)
    auto got = input.peek(head, sizeof head, name);
    if (!got) return std::move(got).error();
    const unsigned long long declared = ZSTD_getFrameContentSize(head, *got);
    if (declared == ZSTD_CONTENTSIZE_ERROR)
        return Error(EINVAL, fmt::format("{} does not start with a valid zstd frame header", name));
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > limit)
        return Error(EFBIG, fmt::format("{} declares {} bytes decompressed, above the limit of {} bytes",
                                        name, declared, limit));
    return {};
}

// A snapshot's control words were copied at rest, so they must agree: the
// window never passes the next byte to hand out.
Status check_snapshot_control(const RingHeader& header) {
    const RingControl& c = header.control;
    if (c.buffer_window_start > c.next_payload_byte)
        return Error(EINVAL, fmt::format("buffer_window_start {} is beyond next_payload_byte {}",
                                         c.buffer_window_start, c.next_payload_byte));
    return {};
}

// The decompressed RING01 header, checked, and the ring's layout.
Result<RingLayout> read_ring_header(FrameReader& reader, RingHeader& header, std::string_view name,
                                    std::uint64_t limit) {
    ZSTD_outBuffer out{&header, sizeof header, 0};
    if (auto s = reader.fill(out); !s) return std::move(s).error();
    if (out.pos < sizeof header && !reader.frame_done())
        return Error(EINVAL, fmt::format("{} is truncated: its zstd frame ends after {} decompressed "
                                         "bytes without an end mark",
                                         name, out.pos));
    if (out.pos < sizeof header)
        return Error(EINVAL, fmt::format("{} decompresses to only {} bytes, too short for a ring header",
                                         name, out.pos));
    // Sizes first (overflow-safe), then the layout they give.
    if (auto s = validate_header(header); !s)
        return std::move(s).context(fmt::format("{} does not hold a ring", name)).error();
    const RingLayout layout = RingLayout::of(header.size);
    if (layout.file_size > limit)
        return Error(EFBIG, fmt::format("{} holds a ring of {} bytes (from its header), above the limit "
                                        "of {} bytes",
                                        name, layout.file_size, limit));
    if (auto s = check_snapshot_control(header); !s)
        return std::move(s).context(fmt::format("{} does not hold a consistent ring", name)).error();
    return layout;
}

// Copies `bytes`, which belong at `offset` of the ring, into `target`, page by
// page, leaving out the pages that are all zero: the memfd behind `target` is
// sparse and already reads as zero there, and a page never touched costs
// neither a page fault nor memory. Most of a ring is zero (the never-written
// part of the payload buffer, descriptor slots not yet used), so a snapshot
// costs what its events occupy.
void copy_nonzero_pages(std::byte* target, std::uint64_t offset, std::span<const std::byte> bytes) {
    static constexpr std::uint64_t kPage = 4096;
    // All zero: the first byte is, and each byte equals the next (libc's
    // vectorised memcmp; a loop here is what the profile showed).
    auto all_zero = [](const std::byte* p, std::uint64_t n) { return p[0] == std::byte{0} && std::memcmp(p, p + 1, n - 1) == 0; };
    std::uint64_t at = 0;
    while (at < bytes.size()) {
        const std::uint64_t page_end = ((offset + at) / kPage + 1) * kPage;
        const std::uint64_t n = std::min<std::uint64_t>(page_end - (offset + at), bytes.size() - at);
        if (!all_zero(bytes.data() + at, n)) std::memcpy(target + offset + at, bytes.data() + at, n);
        at += n;
    }
}

// Decompresses the rest of the frame into `target` (the header is already
// there); returns how many bytes the frame held. zstd writes into a bounce
// buffer that stays in cache, and only its non-zero pages reach `target`.
Result<std::uint64_t> decompress_body(FrameReader& reader, std::byte* target, std::uint64_t size,
                                      std::string_view name) {
    static constexpr std::uint64_t kBounce = std::uint64_t{1} << 20;
    std::vector<std::byte> bounce(kBounce);
    std::uint64_t pos = sizeof(RingHeader);
    while (pos < size && !reader.frame_done()) {
        // Chunks end on multiples of kBounce, so later ones start page-aligned.
        const std::uint64_t want = std::min(kBounce - pos % kBounce, size - pos);
        ZSTD_outBuffer chunk{bounce.data(), static_cast<std::size_t>(want), 0};
        if (auto s = reader.fill(chunk); !s) return std::move(s).error();
        copy_nonzero_pages(target, pos, std::span<const std::byte>(bounce.data(), chunk.pos));
        pos += chunk.pos;
        if (chunk.pos < want) break;  // the frame or the input ended
    }
    const std::uint64_t actual = pos;
    if (!reader.frame_done() && pos == size) {
        std::byte extra[1];
        ZSTD_outBuffer more{extra, sizeof extra, 0};
        if (auto s = reader.fill(more); !s) return std::move(s).error();
        if (more.pos > 0)
            return Error(EINVAL, fmt::format("{} decompresses to more than the {} bytes its header describes",
                                             name, size));
    }
    if (!reader.frame_done())
        return Error(EINVAL, fmt::format("{} is truncated: its zstd frame ends after {} decompressed "
                                         "bytes without an end mark",
                                         name, actual));
    auto trailing = reader.trailing_input();
    if (!trailing) return std::move(trailing).error();
    if (*trailing)
        return Error(EINVAL, fmt::format("{} has data after its zstd frame; a snapshot is one frame", name));
    return actual;
}

// evring's snapshots hold a RECORD_ERROR placeholder in the slot of every
// lapped seqno of their window (snapshot.cpp, step 5), for readers that know
// only RING01. evring reads those seqnos as lost to lapping
// (snapshot_lapped, ring_source.cpp) instead: their slots are cleared as the
// snapshot is loaded, so they read as the holes they are. At most one
// window's worth of slots, each only when it holds its own seqno.
void clear_lapped_placeholders(std::byte* ring, const RingHeader& header, const RingLayout& layout) {
    const auto* extension = reinterpret_cast<const RingExtension*>(ring + kRingExtensionOffset);
    if (!has_ring_extension(*extension) || extension->snapshot_lapped == 0) return;
    const std::uint64_t capacity = header.size.descriptor_capacity;
    const std::uint64_t last = header.control.last_seqno;
    const std::uint64_t lapped = std::min(extension->snapshot_lapped, last);
    auto* slots = reinterpret_cast<DescriptorSlot*>(ring + layout.descriptors_offset);
    for (std::uint64_t s = last >= capacity ? last - capacity + 1 : 1; s <= lapped; ++s) {
        DescriptorSlot& slot = slots[(s - 1) & (capacity - 1)];
        if (slot.words[0] == s) slot = DescriptorSlot{};
    }
}

// `path` becomes the ring's path(); errors call it "snapshot '<path>'".
Result<LoadedSnapshot> load(CompressedInput& input, std::uint64_t compressed_size, std::string path,
                            const SnapshotLoadOptions& options) {
    const std::string name = snapshot_named(path);
    const std::uint64_t limit = options.max_decompressed_size;
    if (auto s = check_declared_size(input, name, limit); !s) return std::move(s).error();
    FrameReader reader(input, name, limit);
    RingHeader header{};
    auto layout = read_ring_header(reader, header, name, limit);
    if (!layout) return std::move(layout).error();
    const std::uint64_t file_size = layout->file_size;

    FileDescriptor memory(::memfd_create("evring-snapshot", MFD_CLOEXEC));
    if (memory.fd < 0) return Error::from_errno(errno, fmt::format("creating memory for {}", name));
    // A sparse file: pages are only allocated as bytes are written.
    if (::ftruncate(memory.fd, static_cast<off_t>(file_size)) != 0)
        return Error::from_errno(errno, fmt::format("allocating {} bytes for {}", file_size, name));
    std::uint64_t actual = 0;
    {
        Mapping target(::mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, memory.fd, 0),
                       file_size);
        if (target.at == MAP_FAILED)
            return Error::from_errno(errno, fmt::format("mapping memory for {}", name));
        std::memcpy(target.bytes(), &header, sizeof header);
        auto body = decompress_body(reader, target.bytes(), file_size, name);
        if (!body) return std::move(body).error();
        actual = *body;
        clear_lapped_placeholders(target.bytes(), header, *layout);
    }
    if (actual < file_size) {
        if (auto s = check_missing_tail(header, actual); !s)
            return std::move(s)
                .context(fmt::format("{} decompresses to {} bytes but its header describes {}", name,
                                     actual, file_size))
                .error();
    }
    // Not pre-faulted: the missing tail (zeros) costs no memory until read.
    auto ring = MappedRing::map(memory.fd, Access::ReadOnly, std::move(path), MapOptions{false});
    if (!ring) return std::move(ring).error();
    return LoadedSnapshot{std::move(ring).value(), compressed_size, actual, file_size - actual};
}

}  // namespace

Result<bool> is_zstd_file(const std::string& path) {
    auto opened = detail::open_regular_file(path, fmt::format("'{}'", path));
    if (!opened) return std::move(opened).error();
    FileDescriptor file(*opened);
    std::uint8_t magic[4] = {};
    const ssize_t n = ::pread(file.fd, magic, sizeof magic, 0);
    if (n < 0) return Error::from_errno(errno, fmt::format("reading '{}'", path));
    return n == 4 && std::memcmp(magic, kZstdMagic, 4) == 0;
}

bool is_zstd_frame(std::span<const std::byte> bytes) noexcept {
    return bytes.size() >= 4 && std::memcmp(bytes.data(), kZstdMagic, 4) == 0;
}

Status check_missing_tail(const RingHeader& header, std::uint64_t actual_size) {
    // The layout arithmetic below needs sizes that are valid (and add up).
    if (auto s = validate_ring_size(header.size, 4096); !s) return s;
    const RingLayout layout = RingLayout::of(header.size);
    if (actual_size >= layout.file_size) return {};
    const std::uint64_t buffer_size = header.size.payload_buf_size;
    const std::uint64_t next_byte = header.control.next_payload_byte;
    const std::string missing =
        fmt::format("bytes {}..{} are missing", actual_size, layout.file_size);
    if (header.size.context_area_size > 0)
        return Error(EINVAL, missing + ", which include the context area that may hold data");
    if (next_byte >= buffer_size)
        return Error(EINVAL, missing + fmt::format(" and the payload buffer has wrapped (next_payload_"
                                                   "byte {} >= buffer size {}), so any of them may hold data",
                                                   next_byte, buffer_size));
    const std::uint64_t written_end = layout.payload_offset + next_byte;
    if (actual_size < written_end)
        return Error(EINVAL, missing + fmt::format(", but bytes up to {} (payload buffer offset + "
                                                   "next_payload_byte) may hold data",
                                                   written_end));
    return {};
}

Result<LoadedSnapshot> load_snapshot(const std::string& path, const SnapshotLoadOptions& options) {
    const std::string name = snapshot_named(path);
    auto opened = detail::open_regular_file(path, name);
    if (!opened) return std::move(opened).error();
    FileDescriptor file(*opened);
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) return Error::from_errno(errno, fmt::format("examining {}", name));
    CompressedInput input = CompressedInput::file(file.fd);
    auto loaded = load(input, static_cast<std::uint64_t>(st.st_size), path, options);
    if (!loaded) return std::move(loaded).error();
    return loaded;
}

Result<LoadedSnapshot> snapshot_detail::load_snapshot_range(int fd, std::uint64_t offset, std::uint64_t length,
                                                            std::string name, const SnapshotLoadOptions& options) {
    CompressedInput input = CompressedInput::file(fd, offset, length);
    return load(input, length, std::move(name), options);
}

Result<LoadedSnapshot> load_snapshot(std::span<const std::byte> compressed, std::string name,
                                     const SnapshotLoadOptions& options) {
    CompressedInput input = CompressedInput::memory(compressed);
    return load(input, compressed.size(), std::move(name), options);
}

}  // namespace evring
