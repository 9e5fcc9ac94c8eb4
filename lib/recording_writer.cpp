#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <vector>

#include "evring/clock.hpp"
#include "evring/recording.hpp"

namespace evring {
namespace {

// Staged bytes are handed to the compressor (and the file) in pieces this big.
constexpr std::size_t kStageLimit = std::size_t{1} << 20;

std::string recording_named(std::string_view path) {
    return "recording '" + std::string(path) + "'";
}

Status write_all(int fd, const void* data, std::size_t size, std::string_view path) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(errno, "writing " + recording_named(path));
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return {};
}

}  // namespace

std::string rotated_path(const std::string& base, std::uint32_t index) {
    return index == 0 ? base : base + "." + std::to_string(index);
}

struct RecordingWriter::State {
    std::string base_path;
    std::string path;
    RecordingOptions options;
    RecordingFileHeader header{};
    int fd = -1;
    ZSTD_CCtx* cctx = nullptr;
    std::vector<std::byte> stage;     // uncompressed records not yet handed on
    std::size_t staged = 0;
    std::size_t open_record = 0;      // offset of the record begun by begin_event
    std::vector<char> compressed;
    std::uint64_t file_bytes = 0;
    RecordingTotals file_totals;      // for this file's end marker

    ~State() {
        if (fd >= 0) ::close(fd);
        ZSTD_freeCCtx(cctx);
    }

    std::byte* append(std::size_t size) {
        if (stage.size() < staged + size) stage.resize((staged + size) * 2);
        std::byte* at = stage.data() + staged;
        staged += size;
        return at;
    }

    void append_record(RecordKind kind, const void* body, std::size_t size) {
        RecordHeader record{static_cast<std::uint32_t>(kind), 0, size};
        std::memcpy(append(sizeof record), &record, sizeof record);
        std::memcpy(append(size), body, size);
    }

    Status open_file(std::uint32_t index) {
        path = rotated_path(base_path, index);
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return Error::from_errno(errno, "creating " + recording_named(path));
        header.file_index = index;
        header.start_epoch_nanos = wall_clock_nanos();
        file_bytes = 0;
        file_totals = {};
        if (options.compress) {
            if (cctx == nullptr) cctx = ZSTD_createCCtx();
            if (cctx == nullptr) return Error(ENOMEM, "allocating a zstd compression context");
            ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, options.compression_level);
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
        }
        if (auto s = write_all(fd, &header, sizeof header, path); !s) return s;
        file_bytes += sizeof header;
        return {};
    }

    // Hands `staged` bytes on: compressed (ending the frame when `mode` is
    // ZSTD_e_end) or raw.
    Status push(ZSTD_EndDirective mode) {
        if (!options.compress) {
            if (auto s = write_all(fd, stage.data(), staged, path); !s) return s;
            file_bytes += staged;
            staged = 0;
            return {};
        }
        if (compressed.empty()) compressed.resize(ZSTD_CStreamOutSize());
        ZSTD_inBuffer in{stage.data(), staged, 0};
        for (;;) {
            ZSTD_outBuffer out{compressed.data(), compressed.size(), 0};
            const std::size_t left = ZSTD_compressStream2(cctx, &out, &in, mode);
            if (ZSTD_isError(left))
                return Error(EIO, "compressing " + recording_named(path) + ": " +
                                      ZSTD_getErrorName(left));
            if (auto s = write_all(fd, compressed.data(), out.pos, path); !s) return s;
            file_bytes += out.pos;
            const bool done = mode == ZSTD_e_continue ? in.pos == in.size : left == 0;
            if (done) break;
        }
        staged = 0;
        return {};
    }

    Status close_file(std::uint64_t flags) {
        EndRecord end{file_totals.events, file_totals.lost, file_totals.expired, wall_clock_nanos(),
                      flags};
        append_record(RecordKind::End, &end, sizeof end);
        if (auto s = push(ZSTD_e_end); !s) return s;
        if (::close(fd) != 0) {
            fd = -1;
            return Error::from_errno(errno, "closing " + recording_named(path));
        }
        fd = -1;
        return {};
    }
};

Result<RecordingWriter> RecordingWriter::create(const std::string& path, const RingHeader& source,
                                                const RecordingOptions& options) {
    auto state = std::make_unique<State>();
    state->base_path = path;
    state->options = options;
    RecordingFileHeader& header = state->header;
    header.magic = kRecordingMagic;
    header.version = kRecordingVersion;
    header.content_type = source.content_type;
    header.flags = options.compress ? kRecordingZstd : 0;
    header.schema_hash = source.schema_hash;
    header.ring_size = source.size;
    state->stage.resize(2 * kStageLimit);
    if (auto s = state->open_file(0); !s) return std::move(s).error();
    return RecordingWriter(std::move(state));
}

RecordingWriter::RecordingWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
RecordingWriter::RecordingWriter(RecordingWriter&&) noexcept = default;
RecordingWriter& RecordingWriter::operator=(RecordingWriter&&) noexcept = default;
RecordingWriter::~RecordingWriter() = default;

const std::string& RecordingWriter::current_path() const noexcept { return state_->path; }
std::uint64_t RecordingWriter::current_file_bytes() const noexcept { return state_->file_bytes; }

std::byte* RecordingWriter::begin_event(const EventDescriptor& event) {
    State& s = *state_;
    s.open_record = s.staged;
    RecordHeader record{static_cast<std::uint32_t>(RecordKind::Event), 0,
                        sizeof(EventDescriptor) + std::uint64_t{event.payload_size}};
    std::memcpy(s.append(sizeof record), &record, sizeof record);
    std::memcpy(s.append(sizeof event), &event, sizeof event);
    return s.append(event.payload_size);
}

Status RecordingWriter::end_event(bool payload_intact) {
    State& s = *state_;
    if (payload_intact) {
        ++totals_.events;
        ++s.file_totals.events;
    } else {
        // Keep the header and descriptor, drop the payload bytes.
        s.staged = s.open_record + sizeof(RecordHeader) + sizeof(EventDescriptor);
        RecordHeader record{static_cast<std::uint32_t>(RecordKind::ExpiredPayload), 0,
                            sizeof(EventDescriptor)};
        std::memcpy(s.stage.data() + s.open_record, &record, sizeof record);
        ++totals_.expired;
        ++s.file_totals.expired;
    }
    return after_record();
}

Status RecordingWriter::append_gap(std::uint64_t first_lost_seqno, std::uint64_t lost_count) {
    GapRecord gap{first_lost_seqno, lost_count, wall_clock_nanos()};
    state_->append_record(RecordKind::Gap, &gap, sizeof gap);
    totals_.lost += lost_count;
    ++totals_.gaps;
    state_->file_totals.lost += lost_count;
    ++state_->file_totals.gaps;
    return after_record();
}

Status RecordingWriter::after_record() {
    State& s = *state_;
    if (s.staged >= kStageLimit)
        if (auto st = s.push(ZSTD_e_continue); !st) return st;
    // Compressed: what reached the file; raw: what will reach it.
    const std::uint64_t size = s.file_bytes + (s.options.compress ? 0 : s.staged);
    if (s.options.rotate_bytes > 0 && size >= s.options.rotate_bytes) {
        if (auto st = s.close_file(kEndContinued); !st) return st;
        if (auto st = s.open_file(s.header.file_index + 1); !st) return st;
        ++totals_.files;
    }
    return {};
}

Status RecordingWriter::flush() {
    if (state_->fd < 0) return {};
    return state_->push(ZSTD_e_flush);
}

Status RecordingWriter::finish() {
    if (state_->fd < 0) return {};
    return state_->close_file(0);
}

}  // namespace evring
