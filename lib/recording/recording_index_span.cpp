// Span queries on a version 3 recording's index (recording_index.hpp): the
// index blocks' span marks name an event's seqno, and the block listing that
// seqno is the answer. Part of DecoderV2::answer_in (recording_index_find.cpp).
#include <fmt/format.h>

#include <optional>

#include "recording/recording_decoder_v2.hpp"

namespace evring::detail {
namespace {

// Earlier index blocks one span query may read (labels that overlap across
// many of them: not an index worth following).
constexpr int kMaxIntervalReads = 16;

const IndexEntry* entry_holding(const std::vector<IndexEntry>& entries, std::uint64_t seqno) {
    for (const IndexEntry& e : entries)
        if (e.first_seqno <= seqno && seqno <= e.last_seqno) return &e;
    return nullptr;
}

}  // namespace

// SpanId: the newest mark of the span whose id matches, newest interval
// first; intervals that begin at or past the `below` bound cannot hold one.
Result<IndexAnswer> DecoderV2::span_id_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer) {
    const std::size_t k = newest.index->summaries.size();
    for (std::size_t step = 0; step <= k; ++step) {
        const std::size_t i = k - step;
        if (i < k && query.value != 0 && newest.index->summaries[i].first_seqno >= query.value) continue;
        std::string why;
        std::optional<Index> held;
        auto read = interval(newest, i, held, why);
        if (!read) return std::move(read).error();
        if (!*read) return lies(std::move(answer), why);
        const Index& index = **read;
        if ((index.head.flags & kIndexMarkIds) == 0) {
            answer.outcome = IndexOutcome::NoIndex;
            answer.why = fmt::format("{}: its index was written before span marks carried ids", named());
            return answer;
        }
        for (std::size_t j = index.marks.size(); j-- > 0;) {
            const SpanMark& m = index.marks[j];
            if (m.key != query.key || (query.value != 0 && m.seqno >= query.value) ||
                ((m.id_prefix ^ query.id) & query.id_mask) != 0)
                continue;
            return mark_in(index, m.seqno, std::move(answer));
        }
    }
    if (newest.finished) answer.outcome = IndexOutcome::NotFound;
    return answer;
}

// SpanLabel reads, oldest first, only the intervals whose label range holds
// the label; SpanLatest reads newest first and takes the first mark it meets.
Result<IndexAnswer> DecoderV2::span_label_in(const Newest& newest, const IndexQuery& query, bool members,
                                             IndexAnswer answer) {
    const std::size_t k = newest.index->summaries.size();
    const bool latest = query.kind == IndexQuery::Kind::SpanLatest;
    int reads = 0;
    for (std::size_t step = 0; step <= k; ++step) {
        const std::size_t i = latest ? k - step : step;
        const IndexSummary s = summary_at(newest, i);
        if (s.min_label > s.max_label || (!latest && (query.value < s.min_label || query.value > s.max_label)))
            continue;
        if (i < k && ++reads > kMaxIntervalReads) {
            answer.outcome = IndexOutcome::NoIndex;
            answer.why = fmt::format("{}: the span labels of more than {} index blocks overlap", named(),
                                     kMaxIntervalReads);
            return answer;
        }
        std::string why;
        std::optional<Index> held;
        auto index = interval(newest, i, held, why);
        if (!index) return std::move(index).error();
        if (!*index) return lies(std::move(answer), why);
        const auto& marks = (*index)->marks;
        for (std::size_t j = 0; j < marks.size(); ++j) {
            const SpanMark& m = marks[latest ? marks.size() - 1 - j : j];
            if (m.key != query.key || (!latest && m.label != query.value)) continue;
            return members ? set_mark_in(**index, m.seqno, std::move(answer))
                           : mark_in(**index, m.seqno, std::move(answer));
        }
    }
    if (newest.finished) answer.outcome = IndexOutcome::NotFound;
    return answer;
}

IndexAnswer DecoderV2::mark_in(const Index& index, std::uint64_t seqno, IndexAnswer answer) const {
    const IndexEntry* e = entry_holding(index.entries, seqno);
    if (e == nullptr)
        return lies(std::move(answer), fmt::format("a span mark of index block at offset {} names seqno {}, which "
                                                   "none of its blocks holds", index.offset, seqno));
    return found(std::move(answer), *e, seqno);
}

// A ring set's mark does not say whose seqno it holds, so every member row
// that may hold it is a candidate, and only index blocks that keep member
// rows can name them.
IndexAnswer DecoderV2::set_mark_in(const Index& index, std::uint64_t seqno, IndexAnswer answer) const {
    if ((index.head.flags & kIndexMembers) == 0) {
        answer.outcome = IndexOutcome::NoIndex;
        answer.why = fmt::format("{}: its index block at offset {} was written before indexes kept "
                                 "sequence numbers per member", named(), index.offset);
        return answer;
    }
    answer.candidates = mark_candidates(index, seqno);
    if (answer.candidates.empty())
        return lies(std::move(answer), fmt::format("a span mark of index block at offset {} names seqno {}, which "
                                                   "no member row of its blocks holds", index.offset, seqno));
    answer.outcome = IndexOutcome::Found;
    answer.block = answer.candidates.front();
    answer.seqno = seqno;
    return answer;
}

}  // namespace evring::detail
