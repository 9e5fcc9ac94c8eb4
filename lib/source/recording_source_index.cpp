// RecordingSource through the indexes of version 3 files (recording_source.hpp,
// recording_index.hpp): sequence numbers, times and span instances found in a
// few reads, across the files of a rotated series; a scan, said once, where
// a file has no index or its index lies.
#include <fmt/format.h>

#include "source/recording_source.hpp"

namespace evring {

std::string detail::what_is_found(const IndexQuery& query) {
    switch (query.kind) {
    case IndexQuery::Kind::Seqno: return fmt::format("finding seqno {}", query.value);
    case IndexQuery::Kind::Time: return "finding a time";
    case IndexQuery::Kind::SpanLabel:
    case IndexQuery::Kind::SpanLatest:
    case IndexQuery::Kind::SpanId: return "finding a span position";
    case IndexQuery::Kind::MemberSeqno: return fmt::format("finding {}:{}", query.key, query.value);
    case IndexQuery::Kind::Back:
        return query.value == 1 ? std::string("finding the newest event")
                                : fmt::format("finding the last {} events", query.value);
    }
    return "finding a position";
}

std::string RecordingSource::scan_notice(const std::string& why, std::string_view what) {
    if (told_slow_) return {};
    told_slow_ = true;
    return fmt::format("{}; {} reads it from the start", why, what);
}

// Goes on with the next file of the series for a position past this one.
// Nothing was read yet, so nothing is skipped that a person must be told of.
bool RecordingSource::open_next_for_seek() {
    auto next = RecordingReader::open(next_recording_path(reader_->path(), file_index_), follow_);
    if (!next || (series_id_ != 0 && next->header().series_id != series_id_)) return false;
    const std::uint32_t index = next->header().file_index;  // before `next` is moved from
    adopt_next_file(std::move(*next), index);
    return true;
}

Result<bool> RecordingSource::seek_by_index(const IndexQuery& query, IndexAnswer& answer, std::string& notice) {
    const std::string what = detail::what_is_found(query);
    for (;;) {
        auto found = reader_->find(query);
        if (!found) return std::move(found).error();
        answer = std::move(*found);
        switch (answer.outcome) {
        case IndexOutcome::Found:
        case IndexOutcome::Tail: {
            // Past the end of a file that continues: the next file's index.
            if (answer.outcome == IndexOutcome::Tail && answer.finished && answer.continued && series_) {
                if (open_next_for_seek()) continue;
                return false;
            }
            std::string why;
            auto jumped = reader_->jump(answer.block, &why);
            if (!jumped) return std::move(jumped).error();
            if (*jumped) {
                account(answer.block.first_seqno > 0 ? answer.block.first_seqno - 1 : answer.newest_seqno);
                return true;
            }
            notice = scan_notice(fmt::format("recording '{}': its index names block {} at offset {}, which is not "
                                             "there ({}; the index is not trusted)",
                                             reader_->path(), answer.block.block_number, answer.block.offset, why),
                                 what);
            return false;
        }
        case IndexOutcome::NotFound: return false;
        case IndexOutcome::NoIndex:
            if (!answer.why.empty()) notice = scan_notice(answer.why, what);
            return false;
        case IndexOutcome::Lies:
            notice = scan_notice(answer.why + " (the index is not trusted)", what);
            return false;
        }
        return false;
    }
}

Result<bool> RecordingSource::move_to(const Last& last) {
    if (last.path == reader_->path()) {
        auto jumped = reader_->jump(last.block);
        if (!jumped) return std::move(jumped).error();
        if (*jumped && last.block.first_seqno > 0) account(last.block.first_seqno - 1);
        return *jumped;
    }
    // Another file of the series: the source moves only once the jump there holds.
    auto next = RecordingReader::open(last.path, follow_);
    if (!next) return std::move(next).error();
    if (series_id_ != 0 && next->header().series_id != series_id_) return false;
    auto jumped = next->jump(last.block);
    if (!jumped) return std::move(jumped).error();
    if (!*jumped) return false;
    const std::uint32_t index = next->header().file_index;  // before `next` is moved from
    adopt_next_file(std::move(*next), index);
    if (last.block.first_seqno > 0) account(last.block.first_seqno - 1);
    return true;
}

Result<IndexAnswer> RecordingSource::span_index(const IndexQuery& query, std::string& notice) {
    // The newest mark of the series (latest, and an id: its newest candidate).
    const bool latest = query.kind == IndexQuery::Kind::SpanLatest || query.kind == IndexQuery::Kind::SpanId;
    const bool by_id = query.kind == IndexQuery::Kind::SpanId;
    // The source's own reader for its file (find() reads the index with
    // pread, the replay does not move); later files of the series are opened.
    RecordingReader* current = &*reader_;
    std::optional<RecordingReader> later;
    span_reader_ = nullptr;
    std::optional<IndexAnswer> newest;  // latest: the newest mark in the files so far
    for (;;) {
        auto found = current->find(query);
        if (!found) return std::move(found).error();
        IndexAnswer answer = std::move(*found);
        switch (answer.outcome) {
        case IndexOutcome::Found:
            if (later) {  // kept, to read the event from (span_event)
                span_file_ = std::move(later);
                later.reset();
                current = &*span_file_;
            }
            span_reader_ = current;
            if (!latest) return answer;
            newest = answer;
            break;
        case IndexOutcome::NotFound: break;
        case IndexOutcome::Tail:
            answer.seqno = answer.newest_seqno + 1;  // the rest is scanned from there
            // An id asked for below the tail: the tail is not wanted.
            if (by_id && query.value != 0 && query.value <= answer.seqno) {
                answer.outcome = IndexOutcome::NotFound;
                return newest ? *newest : answer;
            }
            if (latest && newest && !by_id) return *newest;
            return answer;
        case IndexOutcome::NoIndex:
        case IndexOutcome::Lies:
            if (!answer.why.empty())
                notice = scan_notice(answer.outcome == IndexOutcome::Lies ? answer.why + " (the index is not trusted)"
                                                                          : answer.why,
                                     detail::what_is_found(query));
            return answer;
        }
        if (!(answer.finished && answer.continued && series_)) return newest ? *newest : answer;
        auto next = RecordingReader::open(next_recording_path(current->path(), current->header().file_index));
        if (!next || (series_id_ != 0 && next->header().series_id != series_id_)) {
            answer.outcome = IndexOutcome::NotFound;  // scanned, with the series' own reports
            return newest ? *newest : answer;
        }
        later.emplace(std::move(*next));
        current = &*later;
    }
}

// A ring set recording's MEMBER:SEQNO: the merged stream from where that
// member's event (or its first one past it) is. The index names the block of
// the member's newest event below it (checked by reading that event); from
// there, before_start passes over the rest. A file whose index keeps no
// seqnos per member is read from the start (said once).
Result<std::string> RecordingSource::seek_member(std::uint32_t member, std::uint64_t seqno) {
    start_member_ = member;
    member_seqno_ = seqno;
    started_ = false;
    const IndexQuery query = IndexQuery::member_seqno(member, seqno);
    const std::string what = detail::what_is_found(query);
    IndexAnswer answer;
    for (;;) {
        auto found = reader_->find(query);
        if (!found) return std::move(found).error();
        answer = std::move(*found);
        // Nothing of the member at or past the seqno in a file that continues:
        // the next file's index (every event of the member before it is below).
        if (answer.outcome == IndexOutcome::Tail && answer.finished && answer.continued && series_ &&
            open_next_for_seek())
            continue;
        break;
    }
    switch (answer.outcome) {
    case IndexOutcome::NotFound: return std::string();  // no event of the member below it: from the start
    case IndexOutcome::NoIndex: return answer.why.empty() ? std::string() : scan_notice(answer.why, what);
    case IndexOutcome::Lies: return scan_notice(answer.why + " (the index is not trusted)", what);
    case IndexOutcome::Tail:
        if (answer.seqno == 0 && answer.block.offset == 0) return std::string();
        break;
    case IndexOutcome::Found: break;
    }
    Record record;
    std::vector<std::byte> payload;
    std::string why;
    auto there = reader_->event_at(answer.block, answer.seqno, record, payload, &why);
    if (!there) return std::move(there).error();
    if (*there) {
        auto jumped = reader_->jump(answer.block, &why);
        if (!jumped) return std::move(jumped).error();
        if (*jumped) return std::string();
    }
    return scan_notice(fmt::format("recording '{}': its index names block {} at offset {} as holding {}:{}, which "
                                   "it does not ({}; the index is not trusted)",
                                   identity_.path, answer.block.block_number, answer.block.offset, member,
                                   answer.seqno, why),
                       what);
}

Result<bool> RecordingSource::span_event(const IndexAnswer& answer, Record& record, std::vector<std::byte>& payload,
                                         std::string& why) {
    if (span_reader_ == nullptr || answer.outcome != IndexOutcome::Found) {
        why = "no span index answer to read";
        return false;
    }
    return span_reader_->event_at(answer.block, answer.seqno, record, payload, &why);
}

}  // namespace evring
