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

// Earlier index blocks one span query may read (labels that overlap across
// many of them: not an index worth following).
constexpr int kMaxIntervalReads = 16;

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
    if (members && query.kind == IndexQuery::Kind::MemberSeqno) return member_seqno_in(newest, query, answer);
    if (members && (query.kind == IndexQuery::Kind::Seqno || query.kind == IndexQuery::Kind::SpanId)) {
        answer.outcome = IndexOutcome::NoIndex;
        answer.why = query.kind == IndexQuery::Kind::Seqno
                         ? fmt::format("{} records a ring set, whose sequence numbers are per member: its index "
                                       "serves times and MEMBER:SEQNO only", named())
                         : fmt::format("{} records a ring set, whose span marks do not say which member's seqno they "
                                       "hold: its index finds span labels and latest, not ids", named());
        return answer;
    }
    if (!members && query.kind == IndexQuery::Kind::MemberSeqno) {
        answer.outcome = IndexOutcome::NoIndex;
        answer.why = fmt::format("{} records no ring set: it has no members to look up", named());
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
    // A span mark in a ring set recording: its candidates (recording_index.hpp).
    auto found_in_set = [&](const Index& index, std::uint64_t seqno) {
        answer.candidates = mark_candidates(index, seqno);
        if (answer.candidates.empty())
            return lies(fmt::format("a span mark of index block at offset {} names seqno {}, which no member row "
                                    "of its blocks holds", index.offset, seqno));
        answer.outcome = IndexOutcome::Found;
        answer.block = answer.candidates.front();
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
            std::optional<Index> held;
            auto index = interval(newest, i, held, why);
            if (!index) return std::move(index).error();
            if (!*index) return lies(why);
            const std::vector<IndexEntry>& entries = (*index)->entries;
            for (std::size_t j = 0; j < entries.size(); ++j)
                if (reaches(entries[j].last_seqno, entries[j].max_nanos))
                    return checked_position(newest, query, found(entries[j], 0), i, j, *index);
            return lies(fmt::format("index block at offset {} lists no block its summary promises", s.offset));
        }
        return checked_position(newest, query, answer, k + 1, 0, nullptr);  // the tail
    }
    case IndexQuery::Kind::SpanId: {
        const std::uint32_t mask = query.id_mask;
        for (std::size_t step = 0; step <= k; ++step) {
            const std::size_t i = k - step;
            if (i < k && query.value != 0 && last.summaries[i].first_seqno >= query.value) continue;
            std::string why;
            std::optional<Index> held;
            auto read = interval(newest, i, held, why);
            if (!read) return std::move(read).error();
            if (!*read) return lies(why);
            const Index& index = **read;
            if ((index.head.flags & kIndexMarkIds) == 0) {
                answer.outcome = IndexOutcome::NoIndex;
                answer.why = fmt::format("{}: its index was written before span marks carried ids", named());
                return answer;
            }
            for (std::size_t j = index.marks.size(); j-- > 0;) {
                const SpanMark& m = index.marks[j];
                if (m.key != query.key || (query.value != 0 && m.seqno >= query.value) ||
                    ((m.id_prefix ^ query.id) & mask) != 0)
                    continue;
                const IndexEntry* e = block_of(index, m.seqno);
                if (e == nullptr)
                    return lies(fmt::format("a span mark of index block at offset {} names seqno {}, which none "
                                            "of its blocks holds", index.offset, m.seqno));
                return found(*e, m.seqno);
            }
        }
        if (newest.finished) answer.outcome = IndexOutcome::NotFound;
        return answer;
    }
    case IndexQuery::Kind::Back: {
        // Newest first: this index block's entries, then each earlier one's
        // (one read per earlier index block, each checked as it is read).
        std::uint64_t counted = 0;
        for (std::size_t step = 0; step <= k; ++step) {
            const std::size_t i = k - step;
            std::string why;
            std::optional<Index> held;
            auto read = interval(newest, i, held, why);
            if (!read) return std::move(read).error();
            if (!*read) return lies(why);
            const std::vector<IndexEntry>& entries = (*read)->entries;
            for (std::size_t j = entries.size(); j-- > 0;) {
                counted += entries[j].events;
                if (counted >= query.value) {
                    answer.events = counted;
                    return found(entries[j], 0);
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
            std::optional<Index> held;
            auto index = interval(newest, i, held, why);
            if (!index) return std::move(index).error();
            if (!*index) return lies(why);
            const auto& marks = (*index)->marks;
            for (std::size_t j = 0; j < marks.size(); ++j) {
                const SpanMark& m = marks[latest ? marks.size() - 1 - j : j];
                if (m.key != query.key || (!latest && m.label != query.value)) continue;
                if (members) {
                    if (((*index)->head.flags & kIndexMembers) == 0) {
                        answer.outcome = IndexOutcome::NoIndex;
                        answer.why = fmt::format("{}: its index block at offset {} was written before indexes kept "
                                                 "sequence numbers per member", named(), (*index)->offset);
                        return answer;
                    }
                    return found_in_set(**index, m.seqno);
                }
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
    case IndexQuery::Kind::MemberSeqno: break;  // handled above
    }
    return answer;
}

}  // namespace detail
}  // namespace evring
