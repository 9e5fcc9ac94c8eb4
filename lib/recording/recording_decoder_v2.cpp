// Version 2 recordings: a walk over independently checksummed blocks that
// reports each damaged part and goes on with the next intact block.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/byte_buffer.hpp"
#include "util/crc32c.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_decoder_v2.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_records.hpp"

namespace evring {

std::unique_ptr<RecordingReader::Decoder> make_decoder_v2() { return std::make_unique<detail::DecoderV2>(); }

namespace detail {
namespace {

// "seqno 5..9 lost (5 records)", with the end record when the block held it.
std::string block_loss(const RecordingBlockHeader& h) {
    const std::string lost = lost_text(h.first_seqno, h.last_seqno);
    const char* records = h.record_count == 1 ? "record" : "records";
    std::string text = lost.empty() ? fmt::format("{} {} lost", h.record_count, records)
                                    : fmt::format("{} ({} {})", lost, h.record_count, records);
    if (h.flags & kBlockHoldsEnd) text += ", the end record among them";
    return text;
}


}  // namespace

std::string DecoderV2::block_named(const RecordingBlockHeader& h, std::uint64_t at) const {
    return fmt::format("block {} at offset {}", h.block_number, at);
}

Status DecoderV2::start() {
    const bool checksum_ok = detail::file_header_crc(header) == header.header_crc;
    const bool flags_ok = (header.flags & ~kRecordingKnownFlags) == 0;
    header_trusted = checksum_ok && flags_ok && header.schema_size <= kMaxRecordingSchemaSize;
    if (header_trusted) {
        series_id_ = header.series_id;
    } else {
        report(DamageKind::BadFileHeader, 0, sizeof header, 0, 0, 0,
               checksum_ok ? fmt::format("file header: impossible values (flags {:#x}, schema of {} bytes); "
                                         "its fields are not trusted", header.flags, header.schema_size)
                           : std::string("file header: checksum mismatch; its fields (content type, schema "
                                         "hash, ring size, start time, file index) are not trusted"));
        expected_known_ = false;
    }
    // Load the first block now, so a schema block is available at once.
    if (auto s = load_next_block(); !s) return s;
    const bool wants_schema = header_trusted && (header.flags & kRecordingHasSchema) != 0;
    if (wants_schema && schema.empty() && !schema_reported_) {
        report(DamageKind::BadSchema, sizeof header, 0, 0, 0, 0,
               fmt::format("the file header announces a schema of {} bytes but block 0 is not an intact "
                           "schema block; the recording's schema is not available", header.schema_size));
        schema_reported_ = true;
    }
    return {};
}

Result<bool> DecoderV2::produce(Record& record) {
    while (cursor_.pos < cursor_.content.size()) {
        cursor_.pos = detail::parse_record(cursor_.content, cursor_.pos, record);
        switch (record.kind) {
        case RecordKind::Event:
        case RecordKind::ExpiredPayload:
        case RecordKind::Gap: return true;
        case RecordKind::End: {
            end_seen_ = true;
            end_ = record.end;
            end_block_offset_ = cursor_.offset;
            end_block_number_ = cursor_.header.block_number;
            // Records after the end record are reported, not replayed.
            for (std::size_t p = cursor_.pos; p < cursor_.content.size(); ++records_after_end_) {
                Record skipped;
                p = detail::parse_record(cursor_.content, p, skipped);
            }
            cursor_.content = {};
            cursor_.pos = 0;
            return true;
        }
        case RecordKind::Damage: break;  // never stored (checked), here for the switch
        }
        // An unknown kind from a newer minor version: skipped by its size.
    }
    cursor_ = {};
    if (end_seen_) {
        if (auto s = after_end(); !s) return std::move(s).error();
        return false;
    }
    if (auto s = load_next_block(); !s) return std::move(s).error();
    return false;
}

Status DecoderV2::load_next_block() {
    if (offset_ + kBlockHeaderSize > file_bytes)
        if (auto s = refresh_size(); !s) return s;
    if (offset_ >= file_bytes) {
        finish(ReadStatus::Truncated,
               fmt::format("{} ends at offset {} without an end record (the recorder did not finish: "
                           "replayed every block up to there)", named(), offset_));
        return {};
    }
    RecordingBlockHeader h;
    auto n = detail::read_at(fd, offset_, &h, sizeof h, named());
    if (!n) return std::move(n).error();
    if (*n < sizeof h) {
        const std::string lost = lost_text(next_uncovered(), 0);
        report(DamageKind::Truncated, offset_, *n, next_uncovered(), 0, 0,
               fmt::format("the file ends inside the block header at offset {} ({} of {} bytes){}", offset_, *n,
                           sizeof h, lost.empty() ? "" : "; " + lost));
        finish(ReadStatus::Truncated,
               fmt::format("{} is cut short inside a block header at offset {} (the recorder did not finish, "
                           "or the file was cut): no end record", named(), offset_));
        return {};
    }
    const std::string problem = detail::block_header_problem(h, series_id_);
    if (!problem.empty()) return resynchronise(offset_, problem);
    return load_block(h, offset_);
}

Status DecoderV2::load_block(const RecordingBlockHeader& h, std::uint64_t at) {
    const std::uint64_t end = at + kBlockHeaderSize + h.stored_size;
    if (end > file_bytes)
        if (auto s = refresh_size(); !s) return s;
    if (end > file_bytes) {
        const std::uint64_t present = file_bytes - at - kBlockHeaderSize;
        report(DamageKind::Truncated, at, file_bytes - at, h.first_seqno, h.last_seqno, h.record_count,
               fmt::format("{} is cut short: {} of its {} stored bytes are in the file; {}", block_named(h, at),
                           present, h.stored_size, block_loss(h)));
        finish(ReadStatus::Truncated,
               fmt::format("{} is cut short inside {} (the recorder did not finish, or the file was cut): "
                           "no end record", named(), block_named(h, at)));
        return {};
    }
    if (series_id_ == 0) series_id_ = h.series_id;  // the file header was damaged: learn it here
    offset_ = end;
    if (expected_known_ && h.block_number != expected_block_) {
        if (h.block_number < expected_block_) {
            // Most likely a copy of a block already read: nothing is lost.
            report(DamageKind::MisplacedBlock, at, kBlockHeaderSize + h.stored_size, 0, 0, 0,
                   fmt::format("{} is out of order (block {} was expected; it holds {} records{}): not replayed",
                               block_named(h, at), expected_block_, h.record_count,
                               h.first_seqno ? fmt::format(", seqno {}..{}", h.first_seqno, h.last_seqno) : ""));
            return {};
        }
        unknown_loss_ = true;  // how many records the missing blocks held is unknown
        const std::uint64_t first = next_uncovered();
        const std::uint64_t last = h.first_seqno > 1 ? h.first_seqno - 1 : 0;
        const bool seqnos_known = first != 0 && last >= first;
        report(DamageKind::MissingBlocks, at, 0, seqnos_known ? first : 0, seqnos_known ? last : 0, 0,
               fmt::format("blocks {}..{} are missing before {}{}", expected_block_, h.block_number - 1,
                           block_named(h, at), seqnos_known ? "; " + lost_text(first, last) : ""));
    }
    expected_block_ = h.block_number + 1;
    expected_known_ = true;
    if (h.content == static_cast<std::uint16_t>(BlockContent::Schema) && at != sizeof(RecordingFileHeader)) {
        report(DamageKind::MisplacedBlock, at, kBlockHeaderSize + h.stored_size, 0, 0, 0,
               fmt::format("a schema block at offset {}, where only records may be: skipped", at));
        return {};
    }
    if (!stored_.reserve_exact(h.stored_size))
        return Error(ENOMEM, fmt::format("{}: cannot allocate {} bytes for {}", named(), h.stored_size,
                                         block_named(h, at)));
    auto n = detail::read_at(fd, at + kBlockHeaderSize, stored_.data(), h.stored_size, named());
    if (!n) return std::move(n).error();
    if (*n < h.stored_size) {  // the file shrank under us
        lose_block(DamageKind::Truncated, h, at, "is cut short (the file shrank while being read)");
        finish(ReadStatus::Truncated, fmt::format("{} shrank while being read", named()));
        return {};
    }
    const std::span<const std::byte> stored{stored_.data(), h.stored_size};
    if (detail::crc32c(stored.data(), stored.size()) != h.stored_crc) {
        lose_block(DamageKind::ChecksumMismatch, h, at, "checksum mismatch");
        return {};
    }
    std::span<const std::byte> content;
    if (std::string why = codec_.decode(h, stored, content); !why.empty()) {
        lose_block(DamageKind::Undecodable, h, at, why);
        return {};
    }
    if (h.content == static_cast<std::uint16_t>(BlockContent::Schema)) {
        take_schema(h, at, content);
        return {};
    }
    if (std::string why = detail::check_block_records(content, h); !why.empty()) {
        lose_block(DamageKind::Undecodable, h, at, why);
        return {};
    }
    ++totals.blocks;
    cover(h.last_seqno);
    cursor_ = Cursor{h, at, content, 0};
    return {};
}

void DecoderV2::take_schema(const RecordingBlockHeader& h, std::uint64_t at, std::span<const std::byte> content) {
    if (header_trusted && ((header.flags & kRecordingHasSchema) == 0 || header.schema_size != content.size())) {
        report(DamageKind::BadSchema, at, kBlockHeaderSize + h.stored_size, 0, 0, 0,
               fmt::format("{} holds a schema of {} bytes but the file header announces {}; the schema is "
                           "not trusted", block_named(h, at), content.size(),
                           (header.flags & kRecordingHasSchema) ? fmt::format("{} bytes", header.schema_size)
                                                                : std::string("none")));
        schema_reported_ = true;
        return;
    }
    schema.assign(content.begin(), content.end());
}

void DecoderV2::lose_block(DamageKind kind, const RecordingBlockHeader& h, std::uint64_t at, std::string_view why) {
    const std::uint64_t bytes = kBlockHeaderSize + h.stored_size;
    if (h.content == static_cast<std::uint16_t>(BlockContent::Schema)) {
        report(DamageKind::BadSchema, at, bytes, 0, 0, 0,
               fmt::format("schema {}: {}; the recording's schema is not available", block_named(h, at), why));
        schema_reported_ = true;
        return;
    }
    report(kind, at, bytes, h.first_seqno, h.last_seqno, h.record_count,
           fmt::format("{}: {}; {}", block_named(h, at), why, block_loss(h)));
    cover(h.last_seqno);
}


}  // namespace detail
}  // namespace evring
