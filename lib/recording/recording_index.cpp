// Reading a version 3 recording's index blocks (recording_index.hpp): the end
// block names the last index block (a file still being written is searched
// backward from its end for its newest one). Every index block read is
// checked before it is believed, and jump() checks the block header it lands
// on, so an index that lies costs a scan, never a wrong start. The lookups
// themselves: recording_index_find.cpp and recording_index_span.cpp; jump()
// and event_at(): recording_index_jump.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "util/byte_buffer.hpp"
#include "util/crc32c.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_decoder_v2.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_records.hpp"

namespace evring {

namespace detail {
namespace {

constexpr std::size_t kSearchChunk = std::size_t{1} << 20;

template <class T>
void take(std::span<const std::byte>& from, std::vector<T>& out, std::uint32_t n) {
    out.resize(n);
    if (n > 0) std::memcpy(out.data(), from.data(), std::size_t{n} * sizeof(T));
    from = from.subspan(std::size_t{n} * sizeof(T));
}

// Why the parts of an index block at `at` do not hang together, or "".
std::string inconsistency(std::uint64_t at, const std::vector<IndexSummary>& summaries,
                          const std::vector<IndexEntry>& entries, const IndexHead& head, bool seqnos_ordered) {
    std::uint64_t floor = sizeof(RecordingFileHeader);
    std::uint64_t last_seqno = 0;
    for (std::size_t i = 0; i < summaries.size(); ++i) {
        const IndexSummary& s = summaries[i];
        if (s.offset < floor || s.offset >= at) return fmt::format("summary {} names offset {}", i, s.offset);
        if (s.first_seqno > s.last_seqno) return fmt::format("summary {} has seqno {}..{}", i, s.first_seqno, s.last_seqno);
        if (seqnos_ordered && s.first_seqno != 0 && s.first_seqno <= last_seqno)
            return fmt::format("summary {} goes back to seqno {}", i, s.first_seqno);
        floor = s.offset + 1;
        last_seqno = std::max(last_seqno, s.last_seqno);
    }
    if (head.previous_index != (summaries.empty() ? 0 : summaries.back().offset))
        return fmt::format("it names offset {} as the previous index block", head.previous_index);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const IndexEntry& e = entries[i];
        if (e.offset < floor || e.offset + sizeof(RecordingBlockHeader) > at)
            return fmt::format("entry {} names offset {}", i, e.offset);
        if (e.first_seqno > e.last_seqno) return fmt::format("entry {} has seqno {}..{}", i, e.first_seqno, e.last_seqno);
        if (seqnos_ordered && e.first_seqno != 0 && e.first_seqno <= last_seqno)
            return fmt::format("entry {} goes back to seqno {}", i, e.first_seqno);
        if (e.min_nanos > e.max_nanos) return fmt::format("entry {} has times {}..{}", i, e.min_nanos, e.max_nanos);
        floor = e.offset + sizeof(RecordingBlockHeader);
        last_seqno = std::max(last_seqno, e.last_seqno);
    }
    return {};
}

// Why the member rows of an index block are not sorted by entry, then member,
// or do not fit inside their entries' seqno ranges, or "".
std::string rows_inconsistency(const std::vector<MemberSeqnos>& rows, const std::vector<IndexEntry>& entries) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const MemberSeqnos& r = rows[i];
        if (r.entry >= entries.size()) return fmt::format("member row {} names entry {}", i, r.entry);
        if (i > 0 && (r.entry < rows[i - 1].entry || (r.entry == rows[i - 1].entry && r.member <= rows[i - 1].member)))
            return fmt::format("member row {} is out of order", i);
        const IndexEntry& e = entries[r.entry];
        if (r.first_seqno > r.last_seqno || r.first_seqno < e.first_seqno || r.last_seqno > e.last_seqno)
            return fmt::format("member row {} has seqno {}..{} outside its block's {}..{}", i, r.first_seqno,
                               r.last_seqno, e.first_seqno, e.last_seqno);
    }
    return {};
}

}  // namespace

Result<std::optional<DecoderV2::Index>> DecoderV2::read_index(std::uint64_t at, std::string& why) {
    RecordingBlockHeader h{};
    if (at < sizeof(RecordingFileHeader) || at > file_bytes || file_bytes - at < kBlockHeaderSize) {
        why = fmt::format("offset {} is not inside the file", at);
        return std::optional<Index>();
    }
    auto n = detail::read_at(fd, at, &h, sizeof h, named());
    if (!n) return std::move(n).error();
    if (const std::string problem = detail::block_header_problem(h, series_id_); !problem.empty() || *n < sizeof h) {
        why = fmt::format("offset {} holds no intact block header ({})", at, problem);
        return std::optional<Index>();
    }
    if (h.content != static_cast<std::uint16_t>(BlockContent::Index)) {
        why = fmt::format("{} is not an index block", block_named(h, at));
        return std::optional<Index>();
    }
    // A compressed index is at most kMaxIndexContent (block_header_problem)
    // and stores less; a raw one stores its content: nothing bigger is read.
    if (h.stored_size > kMaxIndexContent || h.stored_size > file_bytes - at - kBlockHeaderSize) {
        why = fmt::format("index {} stores {} bytes, more than the file or the format allows", block_named(h, at),
                          h.stored_size);
        return std::optional<Index>();
    }
    detail::ByteBuffer stored;
    if (!stored.reserve_exact(h.stored_size))
        return Error(ENOMEM, fmt::format("{}: cannot allocate {} bytes for index {}", named(), h.stored_size,
                                         block_named(h, at)));
    n = detail::read_at(fd, at + kBlockHeaderSize, stored.data(), h.stored_size, named());
    if (!n) return std::move(n).error();
    if (*n < h.stored_size || detail::crc32c(stored.data(), h.stored_size) != h.stored_crc) {
        why = fmt::format("index {}: checksum mismatch", block_named(h, at));
        return std::optional<Index>();
    }
    detail::BlockDecoder decoder;
    std::span<const std::byte> content;
    if (std::string problem = decoder.decode(h, {stored.data(), h.stored_size}, content); !problem.empty()) {
        why = fmt::format("index {}: {}", block_named(h, at), problem);
        return std::optional<Index>();
    }
    Index index;
    index.offset = at;
    index.header = h;
    if (content.size() < sizeof(IndexHead)) {
        why = fmt::format("index {} holds {} bytes, too few for its head", block_named(h, at), content.size());
        return std::optional<Index>();
    }
    std::memcpy(&index.head, content.data(), sizeof index.head);
    content = content.subspan(sizeof index.head);
    const IndexHead& head = index.head;
    // Counted in 64 bits and compared with the bytes really decoded before anything is allocated.
    const std::uint32_t rows = (head.flags & kIndexMembers) != 0 ? head.member_rows : 0;
    const std::uint64_t expected = std::uint64_t{head.summaries} * sizeof(IndexSummary) +
                                   std::uint64_t{head.entries} * sizeof(IndexEntry) +
                                   std::uint64_t{head.marks} * sizeof(SpanMark) +
                                   std::uint64_t{rows} * sizeof(MemberSeqnos);
    if (expected != content.size()) {
        why = fmt::format("index {} counts {} summaries, {} entries and {} marks{} in {} bytes", block_named(h, at),
                          head.summaries, head.entries, head.marks,
                          rows == 0 ? std::string() : fmt::format(" (and {} member rows)", rows), content.size());
        return std::optional<Index>();
    }
    take(content, index.summaries, head.summaries);
    take(content, index.entries, head.entries);
    take(content, index.marks, head.marks);
    take(content, index.rows, rows);
    if (std::string problem = rows_inconsistency(index.rows, index.entries); !problem.empty()) {
        why = fmt::format("index {}: {}", block_named(h, at), problem);
        return std::optional<Index>();
    }
    const bool ordered = (header.flags & kRecordingRingSet) == 0;  // a ring set's seqnos are per member
    if (std::string problem = inconsistency(at, index.summaries, index.entries, head, ordered); !problem.empty()) {
        why = fmt::format("index {}: {}", block_named(h, at), problem);
        return std::optional<Index>();
    }
    return std::optional<Index>(std::move(index));
}

Result<DecoderV2::Newest> DecoderV2::newest_index() {
    Newest out;
    if (header.version < kRecordingVersion) {
        out.why = fmt::format("{} is a version {} recording, written before recordings had indexes", named(),
                              header.version);
        return out;
    }
    if (auto s = refresh_size(); !s) return std::move(s).error();
    // A finished file ends with its end block: an IndexRef record, then End.
    if (file_bytes >= sizeof(RecordingFileHeader) + kEndBlockSize) {
        std::array<std::byte, kEndBlockSize> end{};
        const std::uint64_t at = file_bytes - kEndBlockSize;
        auto n = detail::read_at(fd, at, end.data(), end.size(), named());
        if (!n) return std::move(n).error();
        RecordingBlockHeader h;
        std::memcpy(&h, end.data(), sizeof h);
        RecordHeader ref_head, end_head;
        IndexRefRecord ref;
        EndRecord end_record;
        std::byte* p = end.data() + sizeof h;
        std::memcpy(&ref_head, p, sizeof ref_head);
        std::memcpy(&ref, p + sizeof ref_head, sizeof ref);
        std::memcpy(&end_head, p + sizeof ref_head + sizeof ref, sizeof end_head);
        std::memcpy(&end_record, p + 2 * sizeof ref_head + sizeof ref, sizeof end_record);
        const bool end_block = *n == end.size() && detail::block_header_problem(h, series_id_).empty() &&
                               (h.flags & kBlockHoldsEnd) && !(h.flags & kBlockZstd) &&
                               h.stored_size == kEndBlockSize - sizeof h && h.record_count == 2 &&
                               detail::crc32c(p, h.stored_size) == h.stored_crc &&
                               ref_head.kind == static_cast<std::uint32_t>(RecordKind::IndexRef) &&
                               ref_head.body_size == sizeof ref &&
                               end_head.kind == static_cast<std::uint32_t>(RecordKind::End) &&
                               end_head.body_size == sizeof end_record;
        if (end_block) {
            out.finished = true;
            out.continued = (end_record.flags & kEndContinued) != 0;
            std::string why;
            auto index = read_index(ref.index_offset, why);
            if (!index) return std::move(index).error();
            if (*index && (*index)->end() != at)
                why = fmt::format("index block {} at offset {} is not the block before the end block",
                                  (*index)->header.block_number, ref.index_offset);
            if (!*index || !why.empty()) {
                out.lies = true;
                out.why = fmt::format("{}: the end block names an index block at offset {}, but {}", named(),
                                      ref.index_offset, why);
                return out;
            }
            out.index = std::move(*index);
            return out;
        }
    }
    // Being written, or cut short: the newest index block near the end.
    const std::uint64_t floor = file_bytes > sizeof(RecordingFileHeader) + kIndexSearchBytes
                                    ? file_bytes - kIndexSearchBytes
                                    : sizeof(RecordingFileHeader);
    detail::ByteBuffer chunk(kSearchChunk + kBlockHeaderSize);
    if (chunk.capacity() < kSearchChunk + kBlockHeaderSize)
        return Error(ENOMEM, fmt::format("{}: cannot allocate {} bytes", named(), kSearchChunk));
    std::string last_why;
    for (std::uint64_t top = file_bytes; top > floor;) {
        const std::uint64_t from = top - floor > kSearchChunk ? top - kSearchChunk : floor;
        // Overlap the chunk above by a header less a byte: a header across the boundary is seen whole.
        const std::uint64_t to = std::min(file_bytes, top + kBlockHeaderSize - 1);
        auto n = detail::read_at(fd, from, chunk.data(), static_cast<std::size_t>(to - from), named());
        if (!n) return std::move(n).error();
        for (std::size_t i = *n >= kBlockHeaderSize ? *n - kBlockHeaderSize + 1 : 0; i-- > 0;) {
            if (std::memcmp(chunk.data() + i, kBlockMagic.data(), kBlockMagic.size()) != 0) continue;
            RecordingBlockHeader h;
            std::memcpy(&h, chunk.data() + i, sizeof h);
            if (h.content != static_cast<std::uint16_t>(BlockContent::Index) ||
                !detail::block_header_problem(h, series_id_).empty())
                continue;
            auto index = read_index(from + i, last_why);
            if (!index) return std::move(index).error();
            if (*index) {
                out.index = std::move(*index);
                return out;
            }
        }
        top = from;
    }
    if (file_bytes - sizeof(RecordingFileHeader) > kIndexSearchBytes || !last_why.empty())
        out.why = fmt::format("{} has no end block and no intact index block in its last {} MiB{}", named(),
                              (file_bytes - floor) >> 20, last_why.empty() ? "" : " (" + last_why + ")");
    return out;
}

}  // namespace detail
}  // namespace evring
