// Positions through a version 3 recording's index blocks (recording_index.hpp):
// the end block names the last index block (a file still being written is
// searched backward from its end for its newest one); that block's summaries
// lead to the earlier index block that lists the wanted block. Every index
// block read is checked before it is believed, and jump() checks the block
// header it lands on, so an index that lies costs a scan, never a wrong start.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "byte_buffer.hpp"
#include "crc32c.hpp"
#include "recording_block.hpp"
#include "recording_decoder_v2.hpp"
#include "recording_file.hpp"

namespace evring {

std::uint32_t span_index_key(std::string_view span, std::string_view stage) noexcept {
    std::uint32_t h = 2166136261u;  // FNV-1a
    auto mix = [&h](std::string_view text) {
        for (const char c : text) {
            h ^= static_cast<unsigned char>(c);
            h *= 16777619u;
        }
    };
    mix(span);
    if (!stage.empty()) {
        mix(".");
        mix(stage);
    }
    return h;
}

namespace detail {
namespace {

constexpr std::size_t kSearchChunk = std::size_t{1} << 20;
// Earlier index blocks one span query may read (labels that overlap across
// many of them: not an index worth following).
constexpr int kMaxIntervalReads = 16;

template <class T>
void take(std::span<const std::byte>& from, std::vector<T>& out, std::uint32_t n) {
    out.resize(n);
    if (n > 0) std::memcpy(out.data(), from.data(), std::size_t{n} * sizeof(T));
    from = from.subspan(std::size_t{n} * sizeof(T));
}

// The summary an index block's own content makes (as IndexBuilder::build).
IndexSummary summary_of(std::uint64_t offset, const std::vector<IndexEntry>& entries,
                        const std::vector<SpanMark>& marks) {
    IndexSummary s{offset, 0, 0, 0, ~std::uint64_t{0}, 0};
    for (const IndexEntry& e : entries) {
        if (e.first_seqno != 0 && (s.first_seqno == 0 || e.first_seqno < s.first_seqno)) s.first_seqno = e.first_seqno;
        s.last_seqno = std::max(s.last_seqno, e.last_seqno);
        s.max_nanos = std::max(s.max_nanos, e.max_nanos);
    }
    for (const SpanMark& m : marks) {
        s.min_label = std::min(s.min_label, m.label);
        s.max_label = std::max(s.max_label, m.label);
    }
    return s;
}

bool same(const IndexSummary& a, const IndexSummary& b) {
    return a.offset == b.offset && a.first_seqno == b.first_seqno && a.last_seqno == b.last_seqno &&
           a.max_nanos == b.max_nanos && a.min_label == b.min_label && a.max_label == b.max_label;
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
    const std::uint64_t expected = std::uint64_t{head.summaries} * sizeof(IndexSummary) +
                                   std::uint64_t{head.entries} * sizeof(IndexEntry) +
                                   std::uint64_t{head.marks} * sizeof(SpanMark);
    if (expected != content.size()) {
        why = fmt::format("index {} counts {} summaries, {} entries and {} marks in {} bytes", block_named(h, at),
                          head.summaries, head.entries, head.marks, content.size());
        return std::optional<Index>();
    }
    take(content, index.summaries, head.summaries);
    take(content, index.entries, head.entries);
    take(content, index.marks, head.marks);
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

Result<std::optional<DecoderV2::Index>> DecoderV2::interval(const Newest& newest, std::size_t i, std::string& why) {
    const Index& last = *newest.index;
    if (i == last.summaries.size()) return std::optional<Index>(last);
    const IndexSummary& summary = last.summaries[i];
    auto index = read_index(summary.offset, why);
    if (!index || !*index) return index;
    if ((*index)->summaries.size() != i ||
        !same(summary_of(summary.offset, (*index)->entries, (*index)->marks), summary)) {
        why = fmt::format("index {} disagrees with its summary in index block {}",
                          block_named((*index)->header, summary.offset), last.header.block_number);
        return std::optional<Index>();
    }
    return index;
}

Result<IndexAnswer> DecoderV2::find(const IndexQuery& query) {
    auto newest = newest_index();
    if (!newest) return std::move(newest).error();
    return answer_in(*newest, query);
}

Result<IndexAnswer> DecoderV2::answer_in(const Newest& newest, const IndexQuery& query) {
    IndexAnswer answer;
    answer.finished = newest.finished;
    answer.continued = newest.continued;
    if (!newest.index) {
        answer.outcome = newest.lies ? IndexOutcome::Lies : IndexOutcome::NoIndex;
        answer.why = newest.why;
        return answer;
    }
    const Index& last = *newest.index;
    const std::size_t k = last.summaries.size();
    for (const IndexSummary& s : last.summaries) {
        answer.newest_seqno = std::max(answer.newest_seqno, s.last_seqno);
        answer.newest_nanos = std::max(answer.newest_nanos, s.max_nanos);
    }
    const IndexSummary own = summary_of(last.offset, last.entries, last.marks);
    answer.newest_seqno = std::max(answer.newest_seqno, own.last_seqno);
    answer.newest_nanos = std::max(answer.newest_nanos, own.max_nanos);
    answer.block = IndexedBlock{last.end(), last.header.block_number + 1, 0, 0};
    answer.outcome = IndexOutcome::Tail;
    const bool members = (header.flags & kRecordingRingSet) != 0;
    if (members && query.kind != IndexQuery::Kind::Time) {
        answer.outcome = IndexOutcome::NoIndex;
        answer.why = fmt::format("{} records a ring set, whose sequence numbers are per member: its index "
                                 "serves times only", named());
        return answer;
    }
    auto lies = [&](std::string why) {
        answer.outcome = IndexOutcome::Lies;
        answer.why = fmt::format("{}: {}", named(), why);
        return answer;
    };
    // The block of interval `index` holding `seqno` (span marks).
    auto block_of = [&](const Index& index, std::uint64_t seqno) -> const IndexEntry* {
        for (const IndexEntry& e : index.entries)
            if (e.first_seqno <= seqno && seqno <= e.last_seqno) return &e;
        return nullptr;
    };
    auto found = [&](const IndexEntry& e, std::uint64_t seqno) {
        answer.outcome = IndexOutcome::Found;
        answer.block = IndexedBlock{e.offset, e.block_number, e.first_seqno, e.last_seqno};
        answer.seqno = seqno;
        return answer;
    };
    switch (query.kind) {
    case IndexQuery::Kind::Seqno:
    case IndexQuery::Kind::Time: {
        const bool by_seqno = query.kind == IndexQuery::Kind::Seqno;
        auto reaches = [&](std::uint64_t last_seqno, std::uint64_t max_nanos) {
            return by_seqno ? last_seqno >= query.value : max_nanos >= query.value;
        };
        for (std::size_t i = 0; i <= k; ++i) {
            const IndexSummary& s = i < k ? last.summaries[i] : own;
            if (!reaches(s.last_seqno, s.max_nanos)) continue;
            std::string why;
            auto index = interval(newest, i, why);
            if (!index) return std::move(index).error();
            if (!*index) return lies(why);
            for (const IndexEntry& e : (*index)->entries)
                if (reaches(e.last_seqno, e.max_nanos)) return found(e, 0);
            return lies(fmt::format("index block at offset {} lists no block its summary promises", s.offset));
        }
        return answer;  // the tail
    }
    case IndexQuery::Kind::SpanLabel:
    case IndexQuery::Kind::SpanLatest: {
        const bool latest = query.kind == IndexQuery::Kind::SpanLatest;
        int reads = 0;
        for (std::size_t step = 0; step <= k; ++step) {
            const std::size_t i = latest ? k - step : step;
            const IndexSummary& s = i < k ? last.summaries[i] : own;
            if (s.min_label > s.max_label || (!latest && (query.value < s.min_label || query.value > s.max_label)))
                continue;
            if (i < k && ++reads > kMaxIntervalReads) {
                answer.outcome = IndexOutcome::NoIndex;
                answer.why = fmt::format("{}: the span labels of more than {} index blocks overlap", named(),
                                         kMaxIntervalReads);
                return answer;
            }
            std::string why;
            auto index = interval(newest, i, why);
            if (!index) return std::move(index).error();
            if (!*index) return lies(why);
            const auto& marks = (*index)->marks;
            for (std::size_t j = 0; j < marks.size(); ++j) {
                const SpanMark& m = marks[latest ? marks.size() - 1 - j : j];
                if (m.key != query.key || (!latest && m.label != query.value)) continue;
                const IndexEntry* e = block_of(**index, m.seqno);
                if (e == nullptr)
                    return lies(fmt::format("a span mark of index block at offset {} names seqno {}, which none "
                                            "of its blocks holds", (*index)->offset, m.seqno));
                return found(*e, m.seqno);
            }
        }
        if (newest.finished) answer.outcome = IndexOutcome::NotFound;
        return answer;
    }
    }
    return answer;
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

}  // namespace detail
}  // namespace evring
