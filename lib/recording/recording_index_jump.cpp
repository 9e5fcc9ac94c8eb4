// Going where a version 3 recording's index points (recording_index.hpp):
// jump() checks the block header at the offset before the replay moves
// there; event_at() reads one event of a block on its own (a span mark's, or
// a ring set member's for MEMBER:SEQNO), checked like any block, so an index
// that names the wrong place costs a scan, never a wrong answer.
#include <fmt/format.h>

#include <cstring>

#include "util/byte_buffer.hpp"
#include "util/crc32c.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_decoder_v2.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_records.hpp"

namespace evring::detail {

Result<bool> DecoderV2::read_records_block(const IndexedBlock& block, CheckedBlock& out, std::string& why) {
    if (auto s = refresh_size(); !s) return std::move(s).error();
    if (block.offset < sizeof(RecordingFileHeader) || block.offset > file_bytes ||
        file_bytes - block.offset < kBlockHeaderSize) {
        why = "that offset is not inside the file";
        return false;
    }
    RecordingBlockHeader& h = out.header;
    auto n = detail::read_at(fd, block.offset, &h, sizeof h, named());
    if (!n) return std::move(n).error();
    why = *n < sizeof h ? std::string("the file ends there") : detail::block_header_problem(h, series_id_);
    if (why.empty() && h.block_number != block.block_number) why = fmt::format("block {} is there", h.block_number);
    if (why.empty() && h.content != static_cast<std::uint16_t>(BlockContent::Records)) why = "it holds no records";
    if (why.empty() && h.stored_size > file_bytes - block.offset - kBlockHeaderSize) why = "the block is cut short";
    if (!why.empty()) return false;
    if (!out.stored.reserve_exact(h.stored_size))
        return Error(ENOMEM, fmt::format("{}: cannot allocate {} bytes for {}", named(), h.stored_size,
                                         block_named(h, block.offset)));
    n = detail::read_at(fd, block.offset + kBlockHeaderSize, out.stored.data(), h.stored_size, named());
    if (!n) return std::move(n).error();
    if (*n < h.stored_size || detail::crc32c(out.stored.data(), h.stored_size) != h.stored_crc) {
        why = "checksum mismatch";
        return false;
    }
    if (why = out.decoder.decode(h, {out.stored.data(), h.stored_size}, out.content); !why.empty()) return false;
    if (why = detail::check_block_records(out.content, h); !why.empty()) return false;
    return true;
}

Result<bool> DecoderV2::event_at(const IndexedBlock& block, std::uint64_t seqno, Record& record,
                                 std::vector<std::byte>& payload, std::string& why) {
    CheckedBlock read;
    auto intact = read_records_block(block, read, why);
    if (!intact || !*intact) return intact;
    const RecordingBlockHeader& h = read.header;
    if (seqno < h.first_seqno || seqno > h.last_seqno) {
        why = fmt::format("the block there holds seqno {}..{}", h.first_seqno, h.last_seqno);
        return false;
    }
    const std::span<const std::byte> content = read.content;
    for (std::size_t pos = 0; pos < content.size();) {
        pos = detail::parse_record(content, pos, record);
        if (record.kind != RecordKind::Event || record.event.seqno != seqno) continue;
        if (block.member != IndexedBlock::kAnyMember && record.event.reserved != block.member) continue;
        payload.assign(record.payload.begin(), record.payload.end());
        record.payload = payload;
        return true;
    }
    why = fmt::format("it holds no event with seqno {}", seqno);
    return false;
}

Result<bool> DecoderV2::jump(const IndexedBlock& block, std::string& why) {
    if (auto s = refresh_size(); !s) return std::move(s).error();
    if (block.offset < sizeof(RecordingFileHeader) || block.offset > file_bytes) {
        why = "that offset is not inside the file";
        return false;
    }
    if (file_bytes - block.offset >= kBlockHeaderSize) {
        RecordingBlockHeader h;
        auto n = detail::read_at(fd, block.offset, &h, sizeof h, named());
        if (!n) return std::move(n).error();
        why = *n < sizeof h ? std::string("the file ends there") : detail::block_header_problem(h, series_id_);
        if (why.empty() && h.block_number != block.block_number)
            why = fmt::format("block {} is there", h.block_number);
        if (why.empty() && h.content == static_cast<std::uint16_t>(BlockContent::Schema)) why = "the schema block is there";
        if (why.empty() && block.first_seqno != 0 &&
            (h.first_seqno != block.first_seqno || h.last_seqno != block.last_seqno))
            why = fmt::format("the block there holds seqno {}..{}, not {}..{}", h.first_seqno, h.last_seqno,
                              block.first_seqno, block.last_seqno);
        if (!why.empty()) return false;
    }
    offset_ = block.offset;
    expected_block_ = block.block_number;
    expected_known_ = true;
    covered_ = block.first_seqno > 0 ? block.first_seqno - 1 : 0;
    cursor_ = {};
    partial_ = true;
    return true;
}

}  // namespace evring::detail
