// How `evring watch` shows events, gaps and notices (watch.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "commands.hpp"
#include "heal_option.hpp"
#include "output/escape.hpp"
#include "watch.hpp"

namespace evring::cli {

void WatchSink::say(const std::string& line) {
    out_.flush();
    fmt::print(stderr, "evring: {}\n", printable(line));
}

bool WatchSink::event(const SourceEvent& event) {
    const EventDescriptor& d = event.descriptor;
    if (members_shown_) printer_.set_member(event.member);
    PayloadView payload;
    switch (event.payload_state) {
    case PayloadState::NotRead: break;
    case PayloadState::Ok: payload = {PayloadView::State::Ok, event.payload}; break;
    case PayloadState::Expired:
        payload.state = PayloadView::State::Expired;
        ++expired_;
        say(kind_ == SourceKind::Recording
                ? fmt::format("seqno {}: payload expired before it was recorded", d.seqno)
                : fmt::format("seqno {}: payload expired (overwritten before it was read)", d.seqno));
        break;
    case PayloadState::Invalid:
        payload.state = PayloadView::State::Expired;
        ++expired_;
        say(fmt::format("seqno {}: payload size {} does not fit the ring; not shown", d.seqno, d.payload_size));
        break;
    }
    printer_.print(out_, d, payload);
    ++printed_;
    return !out_.failed();
}

bool WatchSink::gap(const SourceGap& gap) {
    const std::string seqno = members_shown_ ? fmt::format("member {} seqno", gap.member) : "seqno";
    const std::string range = gap.count == 1 ? fmt::format("{} {}", seqno, gap.first_seqno)
                                             : fmt::format("{} {}..{}", seqno, gap.first_seqno, gap.last_seqno());
    if (!gap.detail.empty()) {
        say(std::string(gap.detail));
    } else if (kind_ == SourceKind::Recording) {
        say(fmt::format("the recording lost {} events ({}): {}", gap.count, range, describe(gap.reason)));
    } else {
        switch (gap.reason) {
        case GapReason::FellBehind:
        case GapReason::Unrecorded:
            say(fmt::format("lost {} events ({}): the reader fell behind the writer", gap.count, range));
            break;
        case GapReason::Abandoned:
            say(fmt::format("{} was never committed (its writer abandoned it); skipping it", range));
            break;
        case GapReason::NeverCommitted:
            say(fmt::format("{} {} never committed; skipping {}", range, gap.count == 1 ? "was" : "were",
                            gap.count == 1 ? "it" : "them"));
            break;
        case GapReason::WriterGone:
            say(fmt::format("{} {} never committed (reserved by a writer that exited); skipping {}", range,
                            gap.count == 1 ? "was" : "were", gap.count == 1 ? "it" : "them"));
            break;
        case GapReason::RingReplaced:
            say(fmt::format("{} events of the new ring ({}) were overwritten before it could be opened",
                            gap.count, range));
            break;
        case GapReason::LostToDamage:
            say(fmt::format("lost {} events ({}): {}", gap.count, range, describe(gap.reason)));
            break;
        }
    }
    return !out_.failed();
}

void WatchSink::notice(std::string_view text) { say(std::string(text)); }

bool WatchSink::idle() {
    out_.flush();
    return !out_.failed();
}

std::string ended_words(const FollowResult& result) {
    switch (result.end) {
    case FollowEnd::Count: return "reached --count";
    case FollowEnd::Stop: return result.range_passed ? "the --where range of span labels has passed" : "reached --until";
    case FollowEnd::Stopped: return "interrupted";
    case FollowEnd::Sink: return "the output failed";
    case FollowEnd::End: break;
    }
    return result.why;
}

std::string late_words(std::uint64_t late) {
    return fmt::format(" ({} {} out of time order: stamped earlier than one shown before {})", late,
                       late == 1 ? "event" : "events", late == 1 ? "it" : "them");
}

void print_summary(const WatchSink& sink, const FollowResult& result, const std::string& ended) {
    const SourceCounters& c = result.counters;
    std::string extra;
    // The seqnos of LostToDamage gaps are exact; the record count (from intact
    // block headers) is a lower bound and may be 0 where only seqnos are known.
    if (c.damage_reports > 0 || c.damaged > 0)
        extra += fmt::format(
            " ({} damaged part(s), {} seqnos lost to damage{})", c.damage_reports, c.damaged,
            c.records_lost_to_damage > 0
                ? fmt::format(", at least {} records in damaged blocks", c.records_lost_to_damage)
                : std::string());
    if (c.foreign > 0) extra += fmt::format(" ({} messages not evring's skipped)", c.foreign);
    if (c.late > 0) extra += late_words(c.late);
    extra += healed_words(c.healed, "reader");
    if (result.rings > 1)
        extra += fmt::format(" ({} rings followed under the name, {} events of new rings overwritten before "
                             "they were opened)", result.rings, c.replaced);
    fmt::print(stderr,
               "evring: {} events printed ({} read), {} lost in {} gaps, {} expired payloads, {} never-committed "
               "seqnos; {}{}\n",
               sink.printed(), c.events, c.lost, c.gaps, sink.expired(), c.abandoned + c.never_committed,
               printable(ended), extra);
}

int output_failure(int error) {
    if (error == EPIPE) return kExitOk;
    report_error(fmt::format("writing the output: {}", std::strerror(error)));
    return kExitRuntime;
}

}  // namespace evring::cli
