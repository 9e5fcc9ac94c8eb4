// RecordingSource's positions (recording_source.hpp): oldest, a seqno, a
// time, latest and -N, through the index of a version 3 file
// (recording_source_index.cpp) or, without one, after a pass that counts the
// series (scan); the replay then passes over what is before the start
// (before_start, recording_source.cpp).
#include <fmt/format.h>

#include "source/recording_source.hpp"

namespace evring {

Result<RecordingSource::Scan> RecordingSource::scan() {
    if (scan_) return *scan_;
    auto counter = RecordingSource::open(identity_.path, identity_.location, series_);
    if (!counter) return std::move(counter).error();
    Scan totals;
    SourceItem item;
    for (;;) {
        const SourceStep step = (*counter)->next(item);
        if (step == SourceStep::Failed) return (*counter)->error();
        if (step == SourceStep::End) break;
        if (step != SourceStep::Event) continue;
        ++totals.events;
        if (totals.first_seqno == 0) totals.first_seqno = item.event.descriptor.seqno;
        totals.last_seqno = item.event.descriptor.seqno;
        totals.last_nanos = item.event.descriptor.record_epoch_nanos;
    }
    scan_ = totals;
    return totals;
}

Result<std::uint64_t> RecordingSource::now_nanos() {
    std::string notice;
    return newest_time(notice);
}

Result<std::uint64_t> RecordingSource::newest_time(std::string& notice) {
    if (newest_nanos_) return *newest_nanos_;
    auto last = last_by_index(1, notice);
    if (!last) return std::move(last).error();
    if (*last) return *(newest_nanos_ = (*last)->last_nanos);
    auto totals = scan();
    if (!totals) return std::move(totals).error();
    return *(newest_nanos_ = totals->last_nanos);
}

// As RingSource::seek for a ring nobody writes: an older seqno starts at the
// oldest with a notice, one past the newest event is an error.
Result<std::string> RecordingSource::seek_seqno(std::uint64_t seqno, bool resume) {
    IndexAnswer answer;
    std::string notice;
    auto jumped = seek_by_index(IndexQuery::seqno(seqno), answer, notice);
    if (!jumped) return std::move(jumped).error();
    if (*jumped) {
        min_seqno_ = seqno;
        if (answer.outcome == IndexOutcome::Tail && answer.finished && !answer.continued && seqno > answer.newest_seqno &&
            !(resume && seqno == answer.newest_seqno + 1))
            return Error(ERANGE, fmt::format("seqno {} is beyond the newest event ({}) of {} '{}'", seqno,
                                             answer.newest_seqno, describe(kind()), identity_.path));
        const bool first_block = files_ == 1 && answer.block.block_number == (first_schema_.empty() ? 0u : 1u);
        if (answer.outcome == IndexOutcome::Found && first_block && seqno < answer.block.first_seqno)
            return fmt::format("seqno {} is not in {} '{}'; starting at the oldest, {}", seqno, describe(kind()),
                               identity_.path, answer.block.first_seqno);
        return std::string();
    }
    if (follow_) {  // being written: whatever it holds now is not its end
        min_seqno_ = seqno;
        return notice;
    }
    auto totals = scan();
    if (!totals) return std::move(totals).error();
    if (seqno > totals->last_seqno && !(resume && seqno == totals->last_seqno + 1))
        return Error(ERANGE,
                     fmt::format("seqno {} is beyond the newest event ({}) of {} '{}'", seqno,
                                 totals->last_seqno, describe(kind()), identity_.path));
    min_seqno_ = seqno;
    if (seqno >= totals->first_seqno) return notice;
    return fmt::format("seqno {} is not in {} '{}'; starting at the oldest, {}{}", seqno,
                       describe(kind()), identity_.path, totals->first_seqno, notice.empty() ? "" : "; " + notice);
}

// As a seqno older than the first event: said, then from the oldest. A ring
// set's seqnos are per member: the oldest is not named by one.
std::string RecordingSource::past_oldest(std::uint64_t keep, std::uint64_t held, std::uint64_t oldest) const {
    return fmt::format("-{} is more than the {} events of {} '{}'; starting at the oldest{}", keep, held,
                       describe(kind()), identity_.path,
                       identity_.members || oldest == 0 ? std::string() : fmt::format(", {}", oldest));
}

// The last `keep` events: from the block the index names, passing over the
// ones counted before them; without an index, after a pass that counts them all.
// Fewer than `keep` in the whole series: all of them, and a notice (none
// for an empty one: `latest` is -1).
Result<std::string> RecordingSource::seek_back(std::uint64_t keep) {
    std::string notice;
    auto join = [&notice](std::string more) { return notice.empty() ? more : notice + "; " + more; };
    auto last = last_by_index(keep, notice);
    if (!last) return std::move(last).error();
    if (*last) {
        auto moved = move_to(**last);
        if (!moved) return std::move(moved).error();
        if (*moved) {
            skip_events_ = (*last)->events > keep ? (*last)->events - keep : 0;
            // Fewer than `keep`: last_by_index counted the first file of a series (or the only one).
            if ((*last)->events > 0 && (*last)->events < keep)
                return join(past_oldest(keep, (*last)->events, (*last)->first_seqno));
            return notice;
        }
    }
    auto totals = scan();
    if (!totals) return std::move(totals).error();
    skip_events_ = totals->events > keep ? totals->events - keep : 0;
    if (totals->events > 0 && totals->events < keep) return join(past_oldest(keep, totals->events, totals->first_seqno));
    return notice;
}

Result<std::string> RecordingSource::seek_time(std::uint64_t nanos, std::string notice) {
    min_nanos_ = nanos;
    started_ = false;
    IndexAnswer answer;
    std::string found_notice;
    auto jumped = seek_by_index(IndexQuery::time(nanos), answer, found_notice);
    if (!jumped) return std::move(jumped).error();
    if (notice.empty()) return found_notice;
    return found_notice.empty() ? notice : notice + "; " + found_notice;
}

Result<std::string> RecordingSource::seek_members_after(const std::vector<Position::MemberAfter>& after) {
    member_after_.clear();
    for (const Position::MemberAfter& m : after) member_after_.push_back(m.last);
    return std::string();
}

Result<std::string> RecordingSource::seek(const Position& start) {
    // After reading or another seek, from the start again (the contract).
    if (auto rewound = rewind(); !rewound) return std::move(rewound).error();
    untouched_ = false;
    switch (start.kind) {
    case Position::Kind::Oldest: return std::string();
    case Position::Kind::Span: return unresolved_span(start);
    case Position::Kind::Seqno:
        if (start.resume && !start.members_after.empty() && identity_.members)
            return seek_members_after(start.members_after);
        if (start.member != Position::kAnyMember && identity_.members) return seek_member(start.member, start.value);
        if (identity_.members)  // as on a live set (ring_set_source.cpp)
            return Error(EINVAL, fmt::format("recording '{}' is of a ring set: a sequence number needs its member "
                                             "(MEMBER:SEQNO), since every member counts its own",
                                             identity_.location));
        return seek_seqno(start.value, start.resume);
    case Position::Kind::AbsoluteTime: return seek_time(start.value, {});
    case Position::Kind::RelativeTime: {
        // Back from the newest event's time (the index, or a pass), then as a time.
        std::string notice;
        auto now = newest_time(notice);
        if (!now) return std::move(now).error();
        return seek_time(start.time_at(*now), std::move(notice));
    }
    case Position::Kind::Back: return seek_back(start.value);
    case Position::Kind::None:
    case Position::Kind::Latest: return seek_back(1);
    }
    return std::string();
}

}  // namespace evring
