// evring record: follow a ring and write every event to a recording.
//
// The loop copies each committed event's descriptor and payload straight into
// the recording's staging buffer (no formatting), checks the payload was
// intact after the copy, and only flushes the file when idle (at most every
// 50 ms) or every second when busy, so it keeps up with fast writers.
#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "commands.hpp"
#include "evring/payload.hpp"
#include "follow.hpp"
#include "input.hpp"
#include "position.hpp"

namespace evring::cli {
namespace {

using Clock = std::chrono::steady_clock;

bool position_recording_start(Iterator& it, const Position& from) {
    switch (from.kind) {
    case Position::Kind::Latest:
    case Position::Kind::None: it.reset(); return true;
    case Position::Kind::Oldest: it.seek(it.oldest_seqno()); return true;
    case Position::Kind::Seqno: it.seek(std::max(from.value, it.oldest_seqno())); return true;
    default: return false;
    }
}

// Consecutive sequence numbers that will never be committed, recorded as one
// gap marker.
struct HoleRun {
    std::uint64_t first = 0, count = 0;
    GapReason reason = GapReason::NeverCommitted;

    Status add(RecordingWriter& writer, std::uint64_t seqno, GapReason why) {
        if (count != 0 && (seqno != first + count || why != reason))
            if (auto s = flush(writer); !s) return s;
        if (count == 0) {
            first = seqno;
            reason = why;
        }
        ++count;
        return {};
    }

    Status flush(RecordingWriter& writer) {
        if (count == 0) return {};
        std::fprintf(stderr, "evring: seqno %" PRIu64 "..%" PRIu64 " %s; a gap marker was recorded\n", first,
                     first + count - 1,
                     reason == GapReason::WriterGone ? "were reserved by a writer that exited without committing them"
                                                     : "were never committed");
        const std::uint64_t n = count;
        count = 0;
        return writer.append_gap(first, n, reason);
    }
};

}  // namespace

int run_record(const RecordOptions& options) {
    auto from = parse_from(options.from);
    if (!from || from->kind == Position::Kind::Back || is_time(*from)) {
        report_error(from ? "bad --from '" + options.from + "': record starts at latest, oldest or a sequence number"
                          : from.error().message());
        return kExitUsage;
    }
    auto input = open_input(options.ring, {kDefaultMaxSnapshotSize, false});
    if (!input) {
        report_error(input.error().message());
        return kExitRuntime;
    }
    const MappedRing& ring = *input->ring();
    // The schema work passes the ring's embedded schema as the last member.
    RecordingOptions recording_options{!options.no_compress, options.level, options.rotate_size, {}};
    auto writer = RecordingWriter::create(options.output, ring.header(), recording_options);
    if (!writer) {
        report_error(writer.error().message());
        return kExitRuntime;
    }
    install_stop_handlers();
    Iterator it(ring);
    position_recording_start(it, *from);
    bool live = input->live && input->live->writer_alive();
    const bool writer_seen = live;  // holes left at the end are then the exited writer's
    HoleRun holes;
    std::optional<WriterWatch> watch;
    if (live) watch.emplace(*input->live);
    std::fprintf(stderr, "evring: recording %s from seqno %" PRIu64 " into %s\n", input->path.c_str(),
                 it.next_seqno(), options.output.c_str());

    FollowState follow;
    Clock::time_point last_flush = Clock::now();
    bool dirty = false;
    std::uint64_t since_clock_check = 0;
    std::string ended;
    EventDescriptor event;
    Status status;
    while (ended.empty() && status) {
        if (stop_requested()) {
            ended = "interrupted";
            break;
        }
        switch (it.try_next(event)) {
        case NextResult::Success: {
            follow.made_progress();
            if (!(status = holes.flush(*writer))) break;
            if (!payload_in_bounds(ring, event)) {
                // A size that cannot fit the ring: keep the descriptor only.
                EventDescriptor clipped = event;
                clipped.payload_size = 0;
                (void)writer->begin_event(clipped);
                status = writer->end_event(false);
            } else {
                std::byte* dst = writer->begin_event(event);
                const PayloadResult copied = copy_payload(ring, event, dst, event.payload_size);
                status = writer->end_event(copied == PayloadResult::Ok);
            }
            dirty = true;
            if (options.count != 0 && writer->totals().events + writer->totals().expired >= options.count)
                ended = "reached --count";
            if (++since_clock_check == 4096) {
                since_clock_check = 0;
                if (Clock::now() - last_flush > std::chrono::seconds(1)) {
                    status = writer->flush();
                    last_flush = Clock::now();
                }
            }
            break;
        }
        case NextResult::Gap: {
            if (status) status = holes.flush(*writer);
            const std::uint64_t lost = it.last_gap_lost();
            std::fprintf(stderr, "evring: lost %" PRIu64 " events (seqno %" PRIu64 "..%" PRIu64
                                 "): the recorder fell behind; a gap marker was recorded\n",
                         lost, it.next_seqno() - lost, it.next_seqno() - 1);
            if (status) status = writer->append_gap(it.next_seqno() - lost, lost, GapReason::FellBehind);
            dirty = true;
            break;
        }
        case NextResult::Abandoned:
            // Reserved but never committed: recorded as a gap of one event.
            if (status) status = holes.flush(*writer);
            std::fprintf(stderr, "evring: seqno %" PRIu64 " was never committed (its writer abandoned it)\n",
                         it.last_abandoned_seqno());
            if (status) status = writer->append_gap(it.last_abandoned_seqno(), 1, GapReason::Abandoned);
            dirty = true;
            break;
        case NextResult::NotReady:
            if (dirty && Clock::now() - last_flush > std::chrono::milliseconds(50)) {
                status = writer->flush();
                last_flush = Clock::now();
                dirty = false;
            }
            if (live && watch->writer_gone()) {
                live = false;
                std::fputs("evring: the writer exited\n", stderr);
            }
            if (!live) {
                if (it.next_seqno() > it.newest_seqno()) {
                    ended = "end of the ring";
                } else {
                    // Never committed, and nobody will: a gap marker, not a
                    // seamless replay.
                    status = holes.add(*writer, it.next_seqno(),
                                       writer_seen ? GapReason::WriterGone : GapReason::NeverCommitted);
                    it.seek(it.next_seqno() + 1);
                    dirty = true;
                }
                break;
            }
            wait_for_more(it, follow);
            break;
        }
    }
    if (status) status = holes.flush(*writer);
    if (status) status = writer->finish();
    if (!status) {
        report_error(status.error().message());
        return kExitRuntime;
    }
    const RecordingTotals& t = writer->totals();
    std::fprintf(stderr,
                 "evring: recorded %" PRIu64 " events, %" PRIu64 " expired payloads, %" PRIu64
                 " lost in %" PRIu64 " gaps, in %u file(s) (last: %s); %s\n",
                 t.events, t.expired, t.lost, t.gaps, t.files, writer->current_path().c_str(),
                 ended.c_str());
    return kExitOk;
}

}  // namespace evring::cli
