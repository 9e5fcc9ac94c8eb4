// RecordingReader: opens a recording as untrusted input and hands it to the
// decoder of its version (recording_decoder_v1.cpp, recording_decoder_v2.cpp).
#include <fmt/format.h>

#include <cstring>

#include "recording/recording_reader.hpp"
#include "recording/recording_decoder.hpp"
#include "recording/recording_file.hpp"

namespace evring {

std::string_view describe(DamageKind kind) noexcept {
    switch (kind) {
    case DamageKind::BadFileHeader: return "damaged file header";
    case DamageKind::BadSchema: return "damaged schema";
    case DamageKind::BadBlockHeader: return "damaged block header";
    case DamageKind::ChecksumMismatch: return "checksum mismatch";
    case DamageKind::Undecodable: return "undecodable block";
    case DamageKind::MissingBlocks: return "missing blocks";
    case DamageKind::MisplacedBlock: return "misplaced block";
    case DamageKind::Truncated: return "truncated";
    case DamageKind::TrailingData: return "data after the end record";
    case DamageKind::TotalsMismatch: return "end totals disagree";
    }
    return "damage";
}

namespace {

using detail::recording_named;

Result<std::unique_ptr<RecordingReader::Decoder>> open_decoder(const std::string& path, bool follow) {
    auto fd = detail::open_regular_file(path, recording_named(path));
    if (!fd) return std::move(fd).error();
    RecordingFileHeader header{};
    auto n = detail::read_at(*fd, 0, &header, sizeof header, recording_named(path));
    auto size = detail::file_size(*fd, recording_named(path));
    const bool magic = n && *n >= sizeof header.magic && header.magic == kRecordingMagic;
    std::unique_ptr<RecordingReader::Decoder> decoder;
    if (n && size && magic && *n == sizeof header) {
        if (header.version == kRecordingVersion || header.version == kRecordingVersion2) decoder = make_decoder_v2();
        if (header.version == kRecordingVersion1) decoder = make_decoder_v1();
    }
    if (!decoder) {
        ::close(*fd);
        if (!n) return std::move(n).error();
        if (!size) return std::move(size).error();
        if (!magic) return Error(EINVAL, fmt::format("'{}' is not an evring recording (no EVRECORD header)", path));
        if (*n < sizeof header)
            return Error(EINVAL, fmt::format("{} is cut short inside its file header ({} of {} bytes)",
                                             recording_named(path), *n, sizeof header));
        return Error(EINVAL, fmt::format("{} has format version {}; this evring reads versions {} to {}",
                                         recording_named(path), header.version, kRecordingVersion1,
                                         kRecordingVersion));
    }
    decoder->path = path;
    decoder->fd = *fd;
    decoder->file_bytes = *size;
    decoder->header = header;
    decoder->follow = follow;
    if (auto s = decoder->start(); !s) return std::move(s).error();
    return decoder;
}

}  // namespace

Result<RecordingReader> RecordingReader::open(const std::string& path, bool follow) {
    auto decoder = open_decoder(path, follow);
    if (!decoder) return std::move(decoder).error();
    return RecordingReader(std::move(*decoder));
}

RecordingReader::RecordingReader(std::unique_ptr<Decoder> decoder) : decoder_(std::move(decoder)) {}
RecordingReader::RecordingReader(RecordingReader&&) noexcept = default;
RecordingReader& RecordingReader::operator=(RecordingReader&&) noexcept = default;
RecordingReader::~RecordingReader() = default;

const RecordingFileHeader& RecordingReader::header() const noexcept { return decoder_->header; }
bool RecordingReader::header_trusted() const noexcept { return decoder_->header_trusted; }
const std::string& RecordingReader::path() const noexcept { return decoder_->path; }
std::uint64_t RecordingReader::file_bytes() const noexcept { return decoder_->file_bytes; }
std::span<const std::byte> RecordingReader::schema() const noexcept { return decoder_->schema; }
const std::string& RecordingReader::notice() const noexcept { return decoder_->notice; }
const ReplayTotals& RecordingReader::totals() const noexcept { return decoder_->totals; }

Result<ReadStatus> RecordingReader::next(Record& record) { return decoder_->next(record); }
Result<IndexAnswer> RecordingReader::find(const IndexQuery& query) { return decoder_->find(query); }
Result<bool> RecordingReader::jump(const IndexedBlock& block, std::string* why) {
    std::string reason;
    auto jumped = decoder_->jump(block, reason);
    if (why != nullptr) *why = std::move(reason);
    return jumped;
}

Result<bool> RecordingReader::event_at(const IndexedBlock& block, std::uint64_t seqno, Record& record,
                                       std::vector<std::byte>& payload, std::string* why) {
    std::string reason;
    auto found = decoder_->event_at(block, seqno, record, payload, reason);
    if (why != nullptr) *why = std::move(reason);
    return found;
}

Result<bool> is_recording_file(const std::string& path) {
    auto fd = detail::open_regular_file(path, "'" + path + "'");
    if (!fd) return std::move(fd).error();
    char magic[8] = {};
    auto n = detail::read_at(*fd, 0, magic, sizeof magic, "'" + path + "'");
    ::close(*fd);
    if (!n) return std::move(n).error();
    return *n == sizeof magic && std::memcmp(magic, kRecordingMagic.data(), sizeof magic) == 0;
}

}  // namespace evring
