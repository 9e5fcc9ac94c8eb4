// A Seqno or Time answer of a version 3 recording's index, checked against
// the file before it is believed (recording_index.hpp: "an index is never
// trusted").
//
// The index says two things: the wanted event is in block B (or past every
// block it lists: the tail, or, in a finished file that continues, a later
// file), and no block before B holds it. jump() checks the first against B's
// header. This checks the second, by reading:
// - the block the index lists just before B is read whole and checked as
//   the replay checks a block (header, CRC, records), and must hold nothing
//   at or past the position: its sequence numbers end below SEQNO, its
//   events are stamped before TIME;
// - between its end and B there may be only index blocks (and the schema
//   block, at the start of the file): read header by header, so a records
//   block the index leaves out is found as well.
// One block and a few headers: a position still costs O(1) reads.
//
// Sequence numbers rise in file order, so that block ending below SEQNO
// clears every block before it. Times rise in file order for one writer and
// for a set merged by time (up to its late events), so the same holds for
// TIME; where several writers' clocks interleave, a lie about a block
// earlier than the one just before B is not found (docs/recording-format.md,
// "Indexes that lie").
#include <fmt/format.h>

#include <optional>

#include "recording/recording_decoder_v2.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_records.hpp"

namespace evring::detail {
namespace {

// Index blocks (and the schema block) between two records blocks: one in a
// file the writer wrote; more means the index lists too little.
constexpr int kMaxBlocksBetween = 8;

// What in `content` (a records block) a reader asking `query` wants, in words
// ("" when nothing).
std::string what_it_holds(const IndexQuery& query, const RecordingBlockHeader& h,
                          std::span<const std::byte> content) {
    if (query.kind == IndexQuery::Kind::Seqno) {
        if (h.last_seqno >= query.value)
            return fmt::format("it holds seqno {}..{}, reaching seqno {}", h.first_seqno, h.last_seqno, query.value);
        return {};
    }
    Record record;
    for (std::size_t pos = 0; pos < content.size();) {
        pos = parse_record(content, pos, record);
        if (record.kind != RecordKind::Event && record.kind != RecordKind::ExpiredPayload) continue;
        if (record.event.record_epoch_nanos >= query.value)
            return fmt::format("it holds seqno {} stamped {}, at or after the time asked for ({})", record.event.seqno,
                               record.event.record_epoch_nanos, query.value);
    }
    return {};
}

}  // namespace

Result<IndexAnswer> DecoderV2::checked_position(const Newest& newest, const IndexQuery& query, IndexAnswer answer,
                                                std::size_t i, std::size_t j, const Index* in) {
    auto lies = [&](std::string why) {
        answer.outcome = IndexOutcome::Lies;
        answer.why = fmt::format("{}: {}", named(), why);
        return answer;
    };
    const IndexEntry* before = in != nullptr && j > 0 ? &in->entries[j - 1] : nullptr;
    // The first entry of its index block: the last entry of the nearest
    // earlier index block that lists any (each one read is checked against
    // its summary, as any interval).
    std::optional<Index> held;
    IndexEntry earlier{};
    for (std::size_t back = i, reads = 0; before == nullptr && back-- > 0;) {
        if (++reads > kMaxBlocksBetween)
            return lies(fmt::format("more than {} of its index blocks in a row list no block", kMaxBlocksBetween));
        std::string why;
        auto index = interval(newest, back, held, why);
        if (!index) return std::move(index).error();
        if (!*index) return lies(why);
        if ((*index)->entries.empty()) continue;
        earlier = (*index)->entries.back();
        before = &earlier;
    }
    auto problem = nothing_before(before, answer.block.offset, query);
    if (!problem) return std::move(problem).error();
    if (!problem->empty()) return lies(*problem);
    return answer;
}

Result<std::string> DecoderV2::nothing_before(const IndexEntry* before, std::uint64_t target,
                                              const IndexQuery& query) {
    std::uint64_t at = sizeof(RecordingFileHeader);
    if (before != nullptr) {
        const std::string which = fmt::format("block {} at offset {}", before->block_number, before->offset);
        CheckedBlock block;
        std::string why;
        auto intact = read_records_block(
            IndexedBlock{before->offset, before->block_number, before->first_seqno, before->last_seqno}, block, why);
        if (!intact) return std::move(intact).error();
        if (!*intact) return fmt::format("its index lists {}, which is not there ({})", which, why);
        const RecordingBlockHeader& h = block.header;
        if (h.first_seqno != before->first_seqno || h.last_seqno != before->last_seqno)
            return fmt::format("its index gives {} seqno {}..{}, but the block holds {}..{}", which,
                               before->first_seqno, before->last_seqno, h.first_seqno, h.last_seqno);
        if (std::string held = what_it_holds(query, h, block.content); !held.empty())
            return fmt::format("its index puts what is asked for after {}, but {}", which, held);
        at = before->offset + kBlockHeaderSize + h.stored_size;
    }
    for (int between = 0; at < target; ++between) {
        if (between == kMaxBlocksBetween)
            return fmt::format("more than {} blocks lie between offset {} and the block its index names at offset {}",
                               kMaxBlocksBetween, at, target);
        if (file_bytes - at < kBlockHeaderSize) return fmt::format("the file ends inside offset {}'s block header", at);
        RecordingBlockHeader h{};
        auto n = detail::read_at(fd, at, &h, sizeof h, named());
        if (!n) return std::move(n).error();
        const std::string problem =
            *n < sizeof h ? std::string("the file ends there") : detail::block_header_problem(h, series_id_);
        if (!problem.empty())
            return fmt::format("offset {}, between blocks its index lists, holds no intact block header ({})", at,
                               problem);
        const bool schema_block = h.content == static_cast<std::uint16_t>(BlockContent::Schema) &&
                            at == sizeof(RecordingFileHeader);
        if (!schema_block && h.content != static_cast<std::uint16_t>(BlockContent::Index))
            return fmt::format("block {} at offset {} holds records its index does not list", h.block_number, at);
        if (h.stored_size > file_bytes - at - kBlockHeaderSize)
            return fmt::format("block {} at offset {} is cut short", h.block_number, at);
        at += kBlockHeaderSize + h.stored_size;
    }
    if (at != target)
        return fmt::format("the blocks before offset {} end at offset {}, not there", target, at);
    return std::string();
}

}  // namespace evring::detail
