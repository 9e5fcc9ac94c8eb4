#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "evring/recording.hpp"

namespace evring {
namespace {

constexpr std::size_t kInputChunk = std::size_t{1} << 20;
// An event body is a descriptor plus at most a 32-bit payload size.
constexpr std::uint64_t kMaxBody = sizeof(EventDescriptor) + std::uint64_t{UINT32_MAX};

std::string recording_named(std::string_view path) {
    return "recording '" + std::string(path) + "'";
}

std::string format(const char* fmt, auto... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

std::uint64_t body_size_of(RecordKind kind) {
    switch (kind) {
    case RecordKind::Gap: return sizeof(GapRecord);
    case RecordKind::ExpiredPayload: return sizeof(EventDescriptor);
    case RecordKind::End: return sizeof(EndRecord);
    case RecordKind::Event: break;
    }
    return 0;  // variable or unknown
}

}  // namespace

Result<bool> is_recording_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, "opening '" + path + "'");
    char magic[8] = {};
    ssize_t n = ::pread(fd, magic, sizeof magic, 0);
    int err = errno;
    ::close(fd);
    if (n < 0) return Error::from_errno(err, "reading '" + path + "'");
    return n == 8 && std::memcmp(magic, kRecordingMagic.data(), 8) == 0;
}

struct RecordingReader::State {
    std::string path;
    int fd = -1;
    std::uint64_t file_bytes = 0;
    RecordingFileHeader header{};
    ZSTD_DCtx* dctx = nullptr;
    std::vector<char> input = std::vector<char>(kInputChunk);
    ZSTD_inBuffer in{nullptr, 0, 0};
    bool input_eof = false;
    std::vector<std::byte> buf = std::vector<std::byte>(std::size_t{4} << 20);
    std::size_t pos = 0;
    std::size_t end = 0;
    std::uint64_t records = 0;
    bool ended = false;
    std::string notice;

    ~State() {
        if (fd >= 0) ::close(fd);
        ZSTD_freeDCtx(dctx);
    }

    // Makes at least `need` bytes available from `pos`, unless the file ends
    // first. Returns how many are available.
    Result<std::size_t> available(std::size_t need) {
        if (end - pos >= need) return end - pos;
        std::memmove(buf.data(), buf.data() + pos, end - pos);
        end -= pos;
        pos = 0;
        while (end < need) {
            // Grow as data arrives, not to what a (possibly corrupt) record
            // claims: a huge body_size in a short file costs nothing.
            if (end == buf.size()) buf.resize(std::min(need, buf.size() * 2));
            if (dctx == nullptr) {
                ssize_t n = ::read(fd, buf.data() + end, buf.size() - end);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) return Error::from_errno(errno, "reading " + recording_named(path));
                if (n == 0) break;
                end += static_cast<std::size_t>(n);
                continue;
            }
            if (in.pos == in.size && !input_eof) {
                ssize_t n = ::read(fd, input.data(), input.size());
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) return Error::from_errno(errno, "reading " + recording_named(path));
                if (n == 0) input_eof = true;
                in = ZSTD_inBuffer{input.data(), static_cast<std::size_t>(n), 0};
            }
            ZSTD_outBuffer out{buf.data(), buf.size(), end};
            const std::size_t in_before = in.pos;
            const std::size_t r = ZSTD_decompressStream(dctx, &out, &in);
            if (ZSTD_isError(r))
                return Error(EINVAL, recording_named(path) +
                                         format(": corrupt compressed data after record %" PRIu64
                                                ": %s",
                                                records, ZSTD_getErrorName(r)));
            const bool progressed = out.pos > end || in.pos > in_before;
            end = out.pos;
            if (input_eof && !progressed) break;
        }
        return end - pos;
    }

    Result<ReadStatus> truncated(std::string why) {
        notice = recording_named(path) + " " + why +
                 format(" after %" PRIu64 " complete records (the recorder did not finish: "
                        "replayed up to the last complete record)",
                        records);
        ended = true;
        return ReadStatus::Truncated;
    }
};

Result<RecordingReader> RecordingReader::open(const std::string& path) {
    auto state = std::make_unique<State>();
    state->path = path;
    state->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (state->fd < 0) return Error::from_errno(errno, "opening " + recording_named(path));
    struct stat st {};
    if (::fstat(state->fd, &st) != 0)
        return Error::from_errno(errno, "examining " + recording_named(path));
    state->file_bytes = static_cast<std::uint64_t>(st.st_size);
    RecordingFileHeader& header = state->header;
    ssize_t n = ::read(state->fd, &header, sizeof header);
    if (n < 0) return Error::from_errno(errno, "reading " + recording_named(path));
    if (static_cast<std::size_t>(n) < sizeof header || header.magic != kRecordingMagic)
        return Error(EINVAL, "'" + path + "' is not an evring recording (no EVRECORD header)");
    if (header.version != kRecordingVersion)
        return Error(EINVAL, recording_named(path) +
                                 format(" has format version %u; this evring reads version %u",
                                        unsigned{header.version}, unsigned{kRecordingVersion}));
    if ((header.flags & ~kRecordingZstd) != 0)
        return Error(EINVAL, recording_named(path) +
                                 format(" has unknown flags 0x%x", unsigned{header.flags}));
    if ((header.flags & kRecordingZstd) != 0) {
        state->dctx = ZSTD_createDCtx();
        if (state->dctx == nullptr) return Error(ENOMEM, "allocating a zstd decompression context");
    }
    return RecordingReader(std::move(state));
}

RecordingReader::RecordingReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
RecordingReader::RecordingReader(RecordingReader&&) noexcept = default;
RecordingReader& RecordingReader::operator=(RecordingReader&&) noexcept = default;
RecordingReader::~RecordingReader() = default;

const RecordingFileHeader& RecordingReader::header() const noexcept { return state_->header; }
const std::string& RecordingReader::path() const noexcept { return state_->path; }
std::uint64_t RecordingReader::file_bytes() const noexcept { return state_->file_bytes; }
const std::string& RecordingReader::notice() const noexcept { return state_->notice; }

Result<ReadStatus> RecordingReader::next(Record& record) {
    State& s = *state_;
    if (s.ended) return s.notice.empty() ? ReadStatus::CleanEnd : ReadStatus::Truncated;
    auto have = s.available(sizeof(RecordHeader));
    if (!have) return std::move(have).error();
    if (*have == 0) return s.truncated("ends without an end marker");
    if (*have < sizeof(RecordHeader)) return s.truncated("ends inside a record header");
    RecordHeader head;
    std::memcpy(&head, s.buf.data() + s.pos, sizeof head);
    const auto kind = static_cast<RecordKind>(head.kind);
    const std::uint64_t fixed = body_size_of(kind);
    // No event can carry more than the recorded ring's payload buffer, so a
    // corrupt size cannot make the reader buffer gigabytes of a zstd bomb.
    const std::uint64_t max_body =
        std::min<std::uint64_t>(kMaxBody, sizeof(EventDescriptor) + s.header.ring_size.payload_buf_size);
    const bool bad_size = head.body_size > max_body ||
                          (fixed != 0 && head.body_size != fixed) ||
                          (kind == RecordKind::Event && head.body_size < sizeof(EventDescriptor));
    if (bad_size)
        return Error(EINVAL, recording_named(s.path) +
                                 format(": record %" PRIu64 " (kind %u) has an impossible size of "
                                        "%" PRIu64 " bytes; the file is corrupt",
                                        s.records + 1, unsigned{head.kind}, head.body_size));
    const std::size_t total = sizeof head + static_cast<std::size_t>(head.body_size);
    have = s.available(total);
    if (!have) return std::move(have).error();
    if (*have < total) return s.truncated(format("ends inside record %" PRIu64, s.records + 1));
    const std::byte* body = s.buf.data() + s.pos + sizeof head;
    s.pos += total;
    ++s.records;
    record.kind = kind;
    record.payload = {};
    switch (kind) {
    case RecordKind::Event:
    case RecordKind::ExpiredPayload:
        std::memcpy(&record.event, body, sizeof record.event);
        if (kind == RecordKind::Event) {
            if (head.body_size != sizeof(EventDescriptor) + record.event.payload_size)
                return Error(EINVAL, recording_named(s.path) +
                                         format(": event record %" PRIu64 " (seqno %" PRIu64
                                                ") holds %" PRIu64 " payload bytes but its "
                                                "descriptor says %u; the file is corrupt",
                                                s.records, record.event.seqno,
                                                head.body_size - sizeof(EventDescriptor),
                                                unsigned{record.event.payload_size}));
            record.payload = {body + sizeof(EventDescriptor), record.event.payload_size};
        }
        break;
    case RecordKind::Gap:
        std::memcpy(&record.gap, body, sizeof record.gap);
        break;
    case RecordKind::End:
        std::memcpy(&record.end, body, sizeof record.end);
        s.ended = true;
        break;
    default:
        return next(record);  // a newer minor record kind: skipped by size
    }
    return ReadStatus::Record;
}

}  // namespace evring
