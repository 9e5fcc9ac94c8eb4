// RecordingSource through the indexes of version 3 files (recording_source.hpp,
// recording_index.hpp): sequence numbers, times and span instances found in a
// few reads, across the files of a rotated series; a scan, said once, where
// a file has no index or its index lies.
#include <fmt/format.h>

#include "source/recording_source.hpp"

namespace evring {
namespace {

std::string what_is_found(const IndexQuery& query) {
    switch (query.kind) {
    case IndexQuery::Kind::Seqno: return fmt::format("finding seqno {}", query.value);
    case IndexQuery::Kind::Time: return "finding a time";
    case IndexQuery::Kind::SpanLabel:
    case IndexQuery::Kind::SpanLatest: return "finding a span position";
    }
    return "finding a position";
}

}  // namespace

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
    file_index_ = next->header().file_index;
    reader_.emplace(std::move(*next));
    ++files_;
    status_.reset();
    continued_ = false;
    phase_ = Phase::Reading;
    return true;
}

Result<bool> RecordingSource::seek_by_index(const IndexQuery& query, IndexAnswer& answer, std::string& notice) {
    const std::string what = what_is_found(query);
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

Result<IndexAnswer> RecordingSource::span_index(const IndexQuery& query, std::string& notice) {
    const bool latest = query.kind == IndexQuery::Kind::SpanLatest;
    auto reader = RecordingReader::open(reader_->path());
    if (!reader) return std::move(reader).error();
    std::optional<IndexAnswer> newest;  // latest: the newest mark in the files so far
    for (std::uint32_t file = reader->header().file_index;;) {
        auto found = reader->find(query);
        if (!found) return std::move(found).error();
        IndexAnswer answer = std::move(*found);
        switch (answer.outcome) {
        case IndexOutcome::Found:
            if (!latest) return answer;
            newest = answer;
            break;
        case IndexOutcome::NotFound: break;
        case IndexOutcome::Tail:
            answer.seqno = answer.newest_seqno + 1;  // the rest is scanned from there
            if (latest && newest) return *newest;
            return answer;
        case IndexOutcome::NoIndex:
        case IndexOutcome::Lies:
            if (!answer.why.empty())
                notice = scan_notice(answer.outcome == IndexOutcome::Lies ? answer.why + " (the index is not trusted)"
                                                                          : answer.why,
                                     what_is_found(query));
            return answer;
        }
        if (!(answer.finished && answer.continued && series_)) return newest ? *newest : answer;
        auto next = RecordingReader::open(next_recording_path(reader->path(), file));
        if (!next || (series_id_ != 0 && next->header().series_id != series_id_)) {
            answer.outcome = IndexOutcome::NotFound;  // scanned, with the series' own reports
            return newest ? *newest : answer;
        }
        file = next->header().file_index;
        reader = std::move(next);
    }
}

}  // namespace evring
