#include "evring/snapshot.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cinttypes>
#include <cstring>
#include <vector>

#include "snapshot_support.hpp"

namespace evring {
namespace {

using namespace snapshot_detail;

constexpr std::uint8_t kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

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

}  // namespace evring
