// Version 2 recordings: resynchronising after a damaged block header, and
// what follows the end record (trailing data, the end record's totals).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/byte_buffer.hpp"
#include "util/crc32c.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_decoder_v2.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_records.hpp"

namespace evring::detail {
namespace {

constexpr std::size_t kScanChunk = std::size_t{1} << 20;

}  // namespace

Status DecoderV2::resynchronise(std::uint64_t at, const std::string& problem) {
    std::uint64_t found = 0;
    RecordingBlockHeader next{};
    auto located = find_block(at + 1, found, next);
    if (!located) return std::move(located).error();
    const std::uint64_t first = next_uncovered();
    unknown_loss_ = true;
    expected_known_ = false;
    if (!*located) {
        report(DamageKind::BadBlockHeader, at, file_bytes - at, first, 0, 0,
               fmt::format("no intact block from offset {} to the end of the file ({} bytes; at offset {}: {}){}",
                           at, file_bytes - at, at, problem, first ? "; " + lost_text(first, 0) : ""));
        finish(ReadStatus::Truncated,
               fmt::format("{} has no readable end record: the bytes from offset {} on are damaged", named(), at));
        return {};
    }
    const std::uint64_t last = next.first_seqno > 1 ? next.first_seqno - 1 : 0;
    const bool known = first != 0 && last >= first;
    report(DamageKind::BadBlockHeader, at, found - at, known ? first : 0, known ? last : 0, 0,
           fmt::format("bytes {}..{} are not an intact block (at offset {}: {}); resumed at {}{}", at, found - 1, at,
                       problem, block_named(next, found),
                       known ? "; " + lost_text(first, last)
                             : first == 0 && next.first_seqno > 1 ? fmt::format("; records before seqno {} lost", next.first_seqno)
                                                                  : std::string()));
    if (known) cover(last);
    offset_ = found;
    return {};
}

// Scans forward from `from` for a block header that passes every check.
Result<bool> DecoderV2::find_block(std::uint64_t from, std::uint64_t& found, RecordingBlockHeader& out) {
    if (from + kBlockHeaderSize > file_bytes) return false;
    const auto chunk_size = static_cast<std::size_t>(std::min<std::uint64_t>(kScanChunk, file_bytes - from));
    detail::ByteBuffer chunk(chunk_size);
    if (chunk.capacity() < chunk_size) return Error(ENOMEM, fmt::format("{}: cannot allocate {} bytes", named(), chunk_size));
    for (std::uint64_t pos = from; pos + kBlockHeaderSize <= file_bytes;) {
        auto n = detail::read_at(fd, pos, chunk.data(), chunk_size, named());
        if (!n) return std::move(n).error();
        if (*n < kBlockHeaderSize) return false;
        const std::byte* begin = chunk.data();
        const std::byte* end = begin + *n;
        for (const std::byte* p = begin; end - p >= static_cast<std::ptrdiff_t>(kBlockHeaderSize); ++p) {
            p = static_cast<const std::byte*>(std::memchr(p, kBlockMagic[0], static_cast<std::size_t>(end - p)));
            if (p == nullptr || end - p < static_cast<std::ptrdiff_t>(kBlockHeaderSize)) break;
            if (std::memcmp(p, kBlockMagic.data(), kBlockMagic.size()) != 0) continue;
            std::memcpy(&out, p, sizeof out);
            if (detail::block_header_problem(out, series_id_).empty()) {
                found = pos + static_cast<std::uint64_t>(p - begin);
                return true;
            }
        }
        // The next chunk overlaps this one by a header less a byte, so a
        // header across the boundary is seen whole.
        pos += *n - (kBlockHeaderSize - 1);
    }
    return false;
}

Status DecoderV2::after_end() {
    if (auto s = refresh_size(); !s) return s;
    if (records_after_end_ > 0) {
        report(DamageKind::TrailingData, end_block_offset_, 0, 0, 0, 0,
               fmt::format("{} record(s) follow the end record in block {} at offset {}; not replayed",
                           records_after_end_, end_block_number_, end_block_offset_));
        end_problems_.push_back(fmt::format("{} record(s) after the end record", records_after_end_));
    }
    if (offset_ < file_bytes) {
        std::string what = "bytes that are not a block of this recording";
        RecordingBlockHeader h;
        auto n = detail::read_at(fd, offset_, &h, sizeof h, named());
        if (!n) return std::move(n).error();
        if (*n == sizeof h && detail::block_header_problem(h, series_id_).empty())
            what = fmt::format("starting with an intact block {} ({} records{})", h.block_number, h.record_count,
                               h.first_seqno ? fmt::format(", seqno {}..{}", h.first_seqno, h.last_seqno) : "");
        report(DamageKind::TrailingData, offset_, file_bytes - offset_, 0, 0, 0,
               fmt::format("{} bytes follow the end record's block (from offset {}), {}; not replayed",
                           file_bytes - offset_, offset_, what));
        end_problems_.push_back(fmt::format("{} bytes after the end record", file_bytes - offset_));
    }
    check_totals();
    if (end_problems_.empty()) {
        finish(ReadStatus::CleanEnd, {});
        return {};
    }
    std::string why = named() + " ends with an end record, but:";
    for (const std::string& p : end_problems_) why += " " + p + ";";
    why.pop_back();
    finish(ReadStatus::DamagedEnd, std::move(why));
    return {};
}

void DecoderV2::check_totals() {
    const ReplayTotals& t = totals;
    const std::uint64_t replayed = t.events + t.expired + t.gaps;
    const std::uint64_t claimed = end_.events + end_.expired + end_.gaps;
    bool agree;
    if (!lost_records_to_damage())
        agree = t.events == end_.events && t.expired == end_.expired && t.gaps == end_.gaps && t.lost == end_.lost;
    else
        agree = t.events <= end_.events && t.expired <= end_.expired && t.gaps <= end_.gaps &&
                (unknown_loss_ || replayed + t.lost_to_damage == claimed);
    if (agree) return;
    report(DamageKind::TotalsMismatch, end_block_offset_, 0, 0, 0, 0,
           fmt::format("the end record (block {} at offset {}) counts {} events, {} expired payloads and {} gaps "
                       "({} seqnos); the replay found {} events, {} expired payloads and {} gaps ({} seqnos){}",
                       end_block_number_, end_block_offset_, end_.events, end_.expired, end_.gaps, end_.lost,
                       t.events, t.expired, t.gaps, t.lost,
                       lost_records_to_damage() ? fmt::format(", and {} records were lost to damage", t.lost_to_damage)
                                                : ""));
    end_problems_.push_back(fmt::format("its totals ({} events) disagree with the replay ({} events)", end_.events,
                                        t.events));
}


}  // namespace evring::detail
