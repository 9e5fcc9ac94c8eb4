// Looking positions up in a version 3 recording's index (recording_index.hpp):
// the newest index block's summaries lead to the earlier index block that
// lists the wanted block (recording_index.cpp reads and checks them).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "recording/recording_decoder_v2.hpp"

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

std::uint32_t span_id_digest(std::span<const std::uint8_t> id) noexcept {
    std::uint32_t h = 2166136261u;  // FNV-1a, folded to 16 bits
    for (const std::uint8_t b : id) {
        h ^= b;
        h *= 16777619u;
    }
    const std::uint32_t first = (id.size() > 0 ? id[0] : 0u) | (id.size() > 1 ? std::uint32_t{id[1]} << 8 : 0u);
    return first | (((h >> 16) ^ (h & 0xffff)) << 16);
}

IndexQuery IndexQuery::span_id(std::uint32_t key, std::span<const std::uint8_t> prefix, bool whole,
                               std::uint64_t below) noexcept {
    IndexQuery q{Kind::SpanId, below, key};
    q.id = span_id_digest(prefix);
    q.id_mask = prefix.size() >= 2 ? 0xffffu : prefix.size() == 1 ? 0xffu : 0u;
    if (whole) q.id_mask |= 0xffff0000u;
    return q;
}

namespace detail {
namespace {

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

}  // namespace

Result<const DecoderV2::Index*> DecoderV2::interval(const Newest& newest, std::size_t i, std::optional<Index>& held,
                                                    std::string& why) {
    const Index& last = *newest.index;
    if (i == last.summaries.size()) return &last;  // already read and checked: not copied
    const IndexSummary& summary = last.summaries[i];
    auto index = read_index(summary.offset, why);
    if (!index) return std::move(index).error();
    if (!*index) return nullptr;
    if ((*index)->summaries.size() != i ||
        !same(summary_of(summary.offset, (*index)->entries, (*index)->marks), summary)) {
        why = fmt::format("index {} disagrees with its summary in index block {}",
                          block_named((*index)->header, summary.offset), last.header.block_number);
        return nullptr;
    }
    held = std::move(*index);
    return &*held;
}

Result<IndexAnswer> DecoderV2::find(const IndexQuery& query) {
    auto newest = newest_index();
    if (!newest) return std::move(newest).error();
    return answer_in(*newest, query);
}

// The answer every query starts from: the tail (what follows the newest
// index block), with the newest sequence number and time the index lists.
IndexAnswer DecoderV2::tail_answer(const Newest& newest) {
    IndexAnswer answer;
    answer.finished = newest.finished;
    answer.continued = newest.continued;
    const Index& last = *newest.index;
    for (const IndexSummary& s : last.summaries) {
        answer.newest_seqno = std::max(answer.newest_seqno, s.last_seqno);
        answer.newest_nanos = std::max(answer.newest_nanos, s.max_nanos);
    }
    const IndexSummary own = summary_at(newest, last.summaries.size());
    answer.newest_seqno = std::max(answer.newest_seqno, own.last_seqno);
    answer.newest_nanos = std::max(answer.newest_nanos, own.max_nanos);
    answer.block = IndexedBlock{last.end(), last.header.block_number + 1, 0, 0};
    answer.outcome = IndexOutcome::Tail;
    return answer;
}

// A ring set's sequence numbers are per member, and its span marks do not say
// whose seqno they hold, so some queries have no answer in one kind of file;
// "" when this file's index can serve `query`.
std::string DecoderV2::unservable(const IndexQuery& query, bool members) const {
    if (members && query.kind == IndexQuery::Kind::Seqno)
        return fmt::format("{} records a ring set, whose sequence numbers are per member: its index "
                           "serves times and MEMBER:SEQNO only", named());
    if (members && query.kind == IndexQuery::Kind::SpanId)
        return fmt::format("{} records a ring set, whose span marks do not say which member's seqno they "
                           "hold: its index finds span labels and latest, not ids", named());
    if (!members && query.kind == IndexQuery::Kind::MemberSeqno)
        return fmt::format("{} records no ring set: it has no members to look up", named());
    return {};
}

IndexAnswer DecoderV2::lies(IndexAnswer answer, std::string_view why) const {
    answer.outcome = IndexOutcome::Lies;
    answer.why = fmt::format("{}: {}", named(), why);
    return answer;
}

IndexAnswer DecoderV2::found(IndexAnswer answer, const IndexEntry& e, std::uint64_t seqno) {
    answer.outcome = IndexOutcome::Found;
    answer.block = IndexedBlock{e.offset, e.block_number, e.first_seqno, e.last_seqno};
    answer.seqno = seqno;
    return answer;
}

IndexSummary DecoderV2::summary_at(const Newest& newest, std::size_t i) {
    const Index& last = *newest.index;
    return i < last.summaries.size() ? last.summaries[i] : summary_of(last.offset, last.entries, last.marks);
}

Result<IndexAnswer> DecoderV2::answer_in(const Newest& newest, const IndexQuery& query) {
    if (!newest.index) {
        IndexAnswer answer;
        answer.finished = newest.finished;
        answer.continued = newest.continued;
        answer.outcome = newest.lies ? IndexOutcome::Lies : IndexOutcome::NoIndex;
        answer.why = newest.why;
        return answer;
    }
    IndexAnswer answer = tail_answer(newest);
    const bool members = (header.flags & kRecordingRingSet) != 0;
    if (members && query.kind == IndexQuery::Kind::MemberSeqno) return member_seqno_in(newest, query, answer);
    if (std::string why = unservable(query, members); !why.empty()) {
        answer.outcome = IndexOutcome::NoIndex;
        answer.why = std::move(why);
        return answer;
    }
    switch (query.kind) {
    case IndexQuery::Kind::Seqno:
    case IndexQuery::Kind::Time: return position_in(newest, query, std::move(answer));
    case IndexQuery::Kind::SpanId: return span_id_in(newest, query, std::move(answer));
    case IndexQuery::Kind::Back: return back_in(newest, query, std::move(answer));
    case IndexQuery::Kind::SpanLabel:
    case IndexQuery::Kind::SpanLatest: return span_label_in(newest, query, members, std::move(answer));
    case IndexQuery::Kind::MemberSeqno: break;  // answered above
    }
    return answer;
}

// Seqno and Time: the first block reaching the value, in the first interval
// whose summary reaches it; believed only once checked against the file.
Result<IndexAnswer> DecoderV2::position_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer) {
    const std::size_t k = newest.index->summaries.size();
    const bool by_seqno = query.kind == IndexQuery::Kind::Seqno;
    auto reaches = [&](std::uint64_t last_seqno, std::uint64_t max_nanos) {
        return by_seqno ? last_seqno >= query.value : max_nanos >= query.value;
    };
    for (std::size_t i = 0; i <= k; ++i) {
        const IndexSummary s = summary_at(newest, i);
        if (!reaches(s.last_seqno, s.max_nanos)) continue;
        std::string why;
        std::optional<Index> held;
        auto index = interval(newest, i, held, why);
        if (!index) return std::move(index).error();
        if (!*index) return lies(std::move(answer), why);
        const std::vector<IndexEntry>& entries = (*index)->entries;
        for (std::size_t j = 0; j < entries.size(); ++j)
            if (reaches(entries[j].last_seqno, entries[j].max_nanos))
                return checked_position(newest, query, found(std::move(answer), entries[j], 0), i, j, *index);
        return lies(std::move(answer),
                    fmt::format("index block at offset {} lists no block its summary promises", s.offset));
    }
    return checked_position(newest, query, std::move(answer), k + 1, 0, nullptr);  // the tail
}

// Back: counts events newest first, this index block's entries then each
// earlier one's (one read per earlier index block, each checked as it is
// read), to the block where the count reaches the value.
Result<IndexAnswer> DecoderV2::back_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer) {
    const std::size_t k = newest.index->summaries.size();
    std::uint64_t counted = 0;
    for (std::size_t step = 0; step <= k; ++step) {
        std::string why;
        std::optional<Index> held;
        auto read = interval(newest, k - step, held, why);
        if (!read) return std::move(read).error();
        if (!*read) return lies(std::move(answer), why);
        const std::vector<IndexEntry>& entries = (*read)->entries;
        for (std::size_t j = entries.size(); j-- > 0;) {
            counted += entries[j].events;
            if (counted >= query.value) {
                answer.events = counted;
                return found(std::move(answer), entries[j], 0);
            }
        }
        if (!entries.empty()) {
            answer.events = counted;
            answer.outcome = IndexOutcome::Found;
            answer.block = IndexedBlock{entries.front().offset, entries.front().block_number,
                                        entries.front().first_seqno, entries.front().last_seqno};
        }
    }
    return answer;  // the file's first indexed block, or the tail when nothing is indexed
}

}  // namespace detail
}  // namespace evring
