// evring watch on a recording: replay its records with the same positions,
// filters and formats as a ring.
#include <cinttypes>
#include <cstdio>

#include "commands.hpp"
#include "follow.hpp"
#include "output.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

struct Totals {
    std::uint64_t events = 0;  // Event and ExpiredPayload records
    std::uint64_t last_nanos = 0;
};

// A first pass for --from latest / -N / relative times.
Result<Totals> count_events(const std::string& path) {
    auto reader = RecordingReader::open(path);
    if (!reader) return std::move(reader).error();
    Totals totals;
    Record record;
    for (;;) {
        auto status = reader->next(record);
        if (!status) return std::move(status).error();
        if (*status != ReadStatus::Record) return totals;
        if (record.kind == RecordKind::Event || record.kind == RecordKind::ExpiredPayload) {
            ++totals.events;
            totals.last_nanos = record.event.record_epoch_nanos;
        }
    }
}

bool needs_totals(const Position& p) {
    return p.kind == Position::Kind::Latest || p.kind == Position::Kind::Back ||
           p.kind == Position::Kind::RelativeTime || p.kind == Position::Kind::None;
}

}  // namespace

int watch_recording(Input& input, const WatchPlan& plan) {
    Totals totals;
    if (needs_totals(plan.from) || plan.until.kind == Position::Kind::RelativeTime) {
        auto counted = count_events(input.path);
        if (!counted) {
            report_error(counted.error().message());
            return kExitRuntime;
        }
        totals = *counted;
    }
    // Events before `skip_events` (by index), seqno or time are not shown.
    std::uint64_t skip_events = 0, min_seqno = 0, min_nanos = 0;
    switch (plan.from.kind) {
    case Position::Kind::None:
    case Position::Kind::Latest: skip_events = totals.events == 0 ? 0 : totals.events - 1; break;
    case Position::Kind::Back: skip_events = totals.events > plan.from.value ? totals.events - plan.from.value : 0; break;
    case Position::Kind::Oldest: break;
    case Position::Kind::Seqno: min_seqno = plan.from.value; break;
    case Position::Kind::AbsoluteTime:
    case Position::Kind::RelativeTime: min_nanos = resolve_time(plan.from, totals.last_nanos); break;
    }
    const std::uint64_t until_seqno = plan.until.kind == Position::Kind::Seqno ? plan.until.value : UINT64_MAX;
    const std::uint64_t until_nanos = is_time(plan.until) ? resolve_time(plan.until, totals.last_nanos) : UINT64_MAX;

    RecordingReader& reader = *input.recording;
    OutputBuffer out(1);
    WatchSummary summary;
    std::uint64_t index = 0;
    bool started = false;  // a time start shows everything after the first match
    std::string ended;
    Record record;
    while (ended.empty() && !out.failed()) {
        if (stop_requested()) {
            ended = "interrupted";
            break;
        }
        auto status = reader.next(record);
        if (!status) {
            out.flush();
            report_error(status.error().message());
            return kExitRuntime;
        }
        if (*status == ReadStatus::CleanEnd) {
            ended = "end of the recording";
            break;
        }
        if (*status == ReadStatus::Truncated || *status == ReadStatus::DamagedEnd) {
            out.flush();
            std::fprintf(stderr, "evring: %s\n", reader.notice().c_str());
            ended = *status == ReadStatus::Truncated ? "end of the truncated recording"
                                                     : "end of the recording (damaged at its end)";
            break;
        }
        if (record.kind == RecordKind::Gap) {
            out.flush();
            std::fprintf(stderr,
                         "evring: the recording lost %" PRIu64 " events (seqno %" PRIu64 "..%" PRIu64 "): %s\n",
                         record.gap.lost_count, record.gap.first_lost_seqno,
                         record.gap.first_lost_seqno + record.gap.lost_count - 1,
                         std::string(describe(record.gap.reason)).c_str());
            // Counted as `watch` on the ring would: lapped as lost, the rest as never committed.
            if (record.gap.reason == GapReason::FellBehind || record.gap.reason == GapReason::Unrecorded) {
                summary.lost += record.gap.lost_count;
                ++summary.gaps;
            } else {
                summary.missing += record.gap.lost_count;
            }
            continue;
        }
        if (record.kind == RecordKind::Damage) {
            out.flush();
            std::fprintf(stderr, "evring: %s\n", record.damage.message.c_str());
            continue;
        }
        if (record.kind == RecordKind::End) {
            if (record.end.flags & kEndContinued)
                std::fprintf(stderr, "evring: the recording continues in %s\n",
                             next_recording_path(input.path, reader.header().file_index).c_str());
            continue;
        }
        const EventDescriptor& event = record.event;
        ++summary.read;
        if (index++ < skip_events || event.seqno < min_seqno) continue;
        if (!started && event.record_epoch_nanos < min_nanos) continue;
        started = true;
        if (event.seqno > until_seqno || event.record_epoch_nanos > until_nanos) {
            ended = "reached --until";
            break;
        }
        if (!plan.filter.matches(event)) continue;
        PayloadView payload{PayloadView::State::Ok, record.payload};
        if (record.kind == RecordKind::ExpiredPayload) {
            payload = {PayloadView::State::Expired, {}};
            ++summary.expired;
            out.flush();
            std::fprintf(stderr, "evring: seqno %" PRIu64 ": payload expired before it was recorded\n",
                         event.seqno);
        }
        print_event(out, plan.format, event, payload);
        ++summary.printed;
        if (plan.count != 0 && summary.printed >= plan.count) ended = "reached --count";
    }
    out.flush();
    if (out.failed()) return output_failure(out.error());
    if (reader.totals().damage_reports > 0)
        ended += " (" + std::to_string(reader.totals().damage_reports) + " damaged part(s), at least " +
                 std::to_string(reader.totals().lost_to_damage) + " records lost to damage)";
    print_summary(summary, ended);
    return kExitOk;
}

}  // namespace evring::cli
