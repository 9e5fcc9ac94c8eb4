// Span positions in recordings (span_search.hpp): through the span index of
// a version 3 file (recording_index.hpp), each answer read on its own and
// checked; the rest of a file being written, and a latest, read on from there.
#include <fmt/format.h>

#include "query/span_search.hpp"
#include "source/recording_source.hpp"
#include "evring/source/source_open.hpp"

namespace evring::span_search {

// A recording's span index (recording_index.hpp) names the event, or
// where the unindexed rest of the file starts. A named event is read on
// its own and checked (the right type, the label or id asked for); the
// rest is read from where it starts. nullopt: read from the start (no
// index, an index that lies, or nothing found).
Result<std::optional<Hit>> SpanSearch::from_index() {
    auto* recording = dynamic_cast<RecordingSource*>(&source_);
    if (recording == nullptr) return std::optional<Hit>();
    const std::uint32_t key = span_index_key(span_.name, stage_ ? std::string_view(stage_->name) : "");
    if (ref_.pick == SpanRef::Pick::Id) return from_id_index(*recording, key);
    const IndexQuery query = ref_.pick == SpanRef::Pick::Latest ? IndexQuery::span_latest(key)
                                                                : IndexQuery::span(key, ref_.label);
    auto answer = recording->span_index(query, notice_);
    if (!answer) return std::move(answer).error();
    if (source_.identity().members) return from_set_index(*recording, *answer);
    if (answer->outcome == IndexOutcome::Found && ref_.pick == SpanRef::Pick::Label) {
        auto checked = indexed_event_is_it(*recording, *answer);
        if (!checked) return std::move(checked).error();
        if (*checked) return std::optional<Hit>(Hit{answer->seqno});
        return std::optional<Hit>();
    }
    if (answer->outcome != IndexOutcome::Found && answer->outcome != IndexOutcome::Tail)
        return std::optional<Hit>();
    // Latest reads on from its mark to the end; a label past the index, the tail.
    auto found = scan_from(Position::seqno(answer->seqno));
    if (!found) return std::move(found).error();
    if (answer->outcome == IndexOutcome::Found && !*found) {
        distrust(answer->seqno);
        return std::optional<Hit>();
    }
    return *found;
}

// A ring set recording: a mark's seqno is some member's own, so each of
// its candidates (IndexAnswer::candidates) is read and checked; the one
// that is the event asked for gives the member. Two that are, in one
// block: the index cannot tell which comes first, so a scan decides. The
// unindexed tail of a file being written is read from the start too (its
// seqnos do not say where it begins).
Result<std::optional<Hit>> SpanSearch::from_set_index(RecordingSource& recording, const IndexAnswer& answer) {
    if (answer.outcome != IndexOutcome::Found) return std::optional<Hit>();
    const bool latest = ref_.pick == SpanRef::Pick::Latest;
    const std::vector<IndexedBlock>& candidates = answer.candidates;
    std::optional<Hit> hit;
    std::uint64_t hit_block = 0;
    std::string why;
    for (std::size_t j = 0; j < candidates.size(); ++j) {
        const IndexedBlock& block = candidates[latest ? candidates.size() - 1 - j : j];
        if (hit && block.offset != hit_block) break;
        IndexAnswer one;
        one.outcome = IndexOutcome::Found;
        one.block = block;
        one.seqno = answer.seqno;
        Record record;
        std::vector<std::byte> payload;
        auto read = recording.span_event(one, record, payload, why);
        if (!read) return std::move(read).error();
        if (!*read) continue;
        Held h{record.event, std::move(payload)};
        if (!((stage_ ? marks_stage(h.d) : opens(h.d)) && matches(h))) continue;
        if (hit) return std::optional<Hit>();  // two in one block
        hit = Hit{h.d.seqno, block.member};
        hit_block = block.offset;
    }
    if (!hit) {
        distrust(answer.seqno, why);
        return hit;
    }
    if (!latest) return hit;
    // Latest reads on from its mark to the end.
    auto found = scan_from(Position::member_seqno(hit->member, hit->seqno));
    if (!found) return std::move(found).error();
    if (!*found) distrust(answer.seqno);
    return *found;
}

// An id: a mark keeps 32 bits of it (span_id_digest), so each mark that
// agrees is a candidate, checked newest first; the unindexed tail of a
// file being written goes first (it is newer).
Result<std::optional<Hit>> SpanSearch::from_id_index(RecordingSource& recording, std::uint32_t key) {
    constexpr int kMaxCandidates = 16;
    std::uint64_t below = 0;
    for (int tries = 0; tries < kMaxCandidates; ++tries) {
        auto answer = recording.span_index(IndexQuery::span_id(key, ref_.id, ref_.id.size() == id_size(), below),
                                           notice_);
        if (!answer) return std::move(answer).error();
        if (answer->outcome == IndexOutcome::Tail) {
            auto found = scan_from(Position::seqno(answer->seqno));
            if (!found || *found) return found;
            if (answer->seqno == 0) return std::optional<Hit>();
            below = answer->seqno;
            continue;
        }
        if (answer->outcome != IndexOutcome::Found) return std::optional<Hit>();
        Record record;
        std::vector<std::byte> payload;
        std::string why;
        auto read = recording.span_event(*answer, record, payload, why);
        if (!read) return std::move(read).error();
        if (!*read) {
            distrust(answer->seqno, why);
            return std::optional<Hit>();
        }
        Held h{record.event, std::move(payload)};
        if ((stage_ ? marks_stage(h.d) : opens(h.d)) && matches(h)) return std::optional<Hit>(Hit{h.d.seqno});
        below = answer->seqno;  // another id with the same first bytes: the next older candidate
    }
    if (notice_.empty())
        notice_ = fmt::format("{}: more than {} span marks of recording '{}' agree with that id as far as the "
                              "index keeps it; reading it from the start",
                              ref_.text, kMaxCandidates, source_.identity().path);
    return std::optional<Hit>();
}

// The size of the span's (or stage's) id field in its first event type that has it (0: none).
std::size_t SpanSearch::id_size() const {
    const std::string& path = stage_ ? stage_->id : span_.id;
    if (stage_ != nullptr) return fields_.size_of(stage_->event, path);
    for (const std::uint16_t type : span_.begin)
        if (const std::size_t n = fields_.size_of(type, path); n > 0) return n;
    return 0;
}

// The event a label's mark names, read on its own: is it that instance?
Result<bool> SpanSearch::indexed_event_is_it(RecordingSource& recording, const IndexAnswer& answer) {
    Record record;
    std::vector<std::byte> payload;
    std::string why;
    auto read = recording.span_event(answer, record, payload, why);
    if (!read) return std::move(read).error();
    if (*read) {
        Held h{record.event, std::move(payload)};
        if ((stage_ ? marks_stage(h.d) : opens(h.d)) && matches(h)) return true;
    }
    distrust(answer.seqno, why);
    return false;
}

// Reads a second source from `start` on for the instance's event.
Result<std::optional<Hit>> SpanSearch::scan_from(const Position& start) {
    auto scratch = open_source(source_.identity().location, {});
    if (!scratch) return std::move(scratch).error();
    auto s = (*scratch)->seek(start);
    if (!s) return std::optional<Hit>();  // past the newest event: nothing there
    return scan_forward(**scratch, stage_ == nullptr);
}

void SpanSearch::distrust(std::uint64_t seqno, const std::string& why) {
    if (!notice_.empty()) return;
    notice_ = fmt::format("{}: the index of recording '{}' names seqno {}, which is not that event{} (the "
                          "index is not trusted); reading it from the start",
                          ref_.text, source_.identity().path, seqno, why.empty() ? "" : " (" + why + ")");
}

}  // namespace evring::span_search
