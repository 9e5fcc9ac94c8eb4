// RecordingSource's last N events of a series through the indexes of its
// files (recording_source.hpp, "-N"): the end blocks lead to the last file,
// each file's index names the block from which it holds the events still
// wanted, newest file first, and those blocks are read to count them (the
// index's count is a claim).
#include <fmt/format.h>

#include <vector>

#include "source/recording_source.hpp"

namespace evring {

Result<std::optional<RecordingSource::Last>> RecordingSource::last_by_index(std::uint64_t n, std::string& notice) {
    const IndexQuery query = IndexQuery::back(n);
    const std::string what = detail::what_is_found(query);
    // Tells why the index is not used (a scan follows), when a person should know.
    auto distrusted = [&](const IndexAnswer& answer) {
        if (!answer.why.empty())
            notice = scan_notice(answer.outcome == IndexOutcome::Lies ? answer.why + " (the index is not trusted)"
                                                                      : answer.why,
                                 what);
        return std::optional<Last>();
    };
    // The end blocks lead from file to file to the series' last one, unread.
    std::vector<std::string> files{reader_->path()};
    std::optional<RecordingReader> reader;
    IndexAnswer answer;
    for (;;) {
        auto opened = RecordingReader::open(files.back());
        if (!opened) return std::move(opened).error();
        reader.emplace(std::move(*opened));
        auto found = reader->find(query);
        if (!found) return std::move(found).error();
        answer = std::move(*found);
        if (answer.outcome == IndexOutcome::NoIndex || answer.outcome == IndexOutcome::Lies) return distrusted(answer);
        if (!(answer.finished && answer.continued && series_)) break;
        const std::string next = next_recording_path(reader->path(), reader->header().file_index);
        auto probe = RecordingReader::open(next);
        // Missing or foreign: the scan goes on past it and says what is wrong.
        if (!probe || (series_id_ != 0 && probe->header().series_id != series_id_)) return std::optional<Last>();
        files.push_back(next);
    }
    // Newest file first: each file's index names the block from which it
    // counts the events still wanted; those blocks are read and counted (the
    // count is a claim). A file holding fewer leads to the one before it,
    // back to the file this source opened.
    Last last;
    for (std::size_t f = files.size(); f-- > 0;) {
        if (f + 1 < files.size()) {
            auto opened = RecordingReader::open(files[f]);
            if (!opened) return std::move(opened).error();
            reader.emplace(std::move(*opened));
            auto found = reader->find(IndexQuery::back(n - last.events));
            if (!found) return std::move(found).error();
            answer = std::move(*found);
            if (answer.outcome == IndexOutcome::NoIndex || answer.outcome == IndexOutcome::Lies) return distrusted(answer);
        }
        auto counted = count_from(*reader, answer, n - last.events, last, what, notice);
        if (!counted) return std::move(counted).error();
        if (!*counted) return std::optional<Last>();
        if (last.events >= n) break;
    }
    // Fewer than n in the whole series: all of them (seek_back says so).
    return std::optional<Last>(std::move(last));
}

// Adds the events of `reader`'s file from the block `answer` names to its
// end to `last`, which then starts there (files come newest first: the
// first event time found is the series' newest). False (with `notice`) when the
// index lies: it named a block later than the file's first, as one from
// which at least `wanted` events follow, and the blocks hold fewer.
Result<bool> RecordingSource::count_from(RecordingReader& reader, const IndexAnswer& answer, std::uint64_t wanted,
                                         Last& last, const std::string& what, std::string& notice) {
    std::string why;
    auto jumped = reader.jump(answer.block, &why);
    if (!jumped) return std::move(jumped).error();
    if (!*jumped) {
        notice = scan_notice(fmt::format("recording '{}': its index names block {} at offset {}, which is not there "
                                         "({}; the index is not trusted)",
                                         reader.path(), answer.block.block_number, answer.block.offset, why),
                             what);
        return false;
    }
    std::uint64_t events = 0, first_seqno = 0, newest_nanos = 0;
    Record record;
    for (;;) {
        auto status = reader.next(record);
        if (!status) return std::move(status).error();
        if (*status != ReadStatus::Record) break;
        if (record.kind != RecordKind::Event && record.kind != RecordKind::ExpiredPayload) continue;
        if (events++ == 0) first_seqno = record.event.seqno;
        newest_nanos = record.event.record_epoch_nanos;
    }
    const std::uint32_t first_block = (reader.header().flags & kRecordingHasSchema) != 0 ? 1 : 0;
    if (events < wanted && answer.block.block_number != first_block) {
        notice = scan_notice(fmt::format("recording '{}': its index counts {} events from block {} on, and the "
                                         "blocks hold {} (the index is not trusted)",
                                         reader.path(), answer.events, answer.block.block_number, events),
                             what);
        return false;
    }
    last.path = reader.path();
    last.block = answer.block;
    last.events += events;
    if (events > 0) last.first_seqno = first_seqno;
    if (last.last_nanos == 0) last.last_nanos = newest_nanos;
    return true;
}

}  // namespace evring
