// evring watch on a ring file or snapshot: position, follow, filter, print.
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "commands.hpp"
#include "evring/clock.hpp"
#include "evring/payload.hpp"
#include "follow.hpp"
#include "output.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

// Relative times count back from now on a live ring and from the newest
// event of a ring nobody writes any more.
std::uint64_t time_base(const Iterator& it, bool live) {
    if (live) return wall_clock_nanos();
    EventDescriptor newest;
    for (std::uint64_t s = it.newest_seqno(); s >= 1 && s + 64 > it.newest_seqno(); --s)
        if (it.read_descriptor(s, newest)) return newest.record_epoch_nanos;
    return wall_clock_nanos();
}

// Positions `it` for --from; false (after reporting) when impossible.
bool position_start(Iterator& it, const Input& input, const Position& from, bool live) {
    const std::uint64_t newest = it.newest_seqno();
    const std::uint64_t oldest = it.oldest_seqno();
    switch (from.kind) {
    case Position::Kind::Latest:
    case Position::Kind::None:
        it.reset();
        return true;
    case Position::Kind::Oldest:
        it.seek(oldest);
        return true;
    case Position::Kind::Back:
        it.seek(std::max(oldest, newest >= from.value ? newest - from.value + 1 : 1));
        return true;
    case Position::Kind::Seqno:
        if (from.value < oldest) {
            std::fprintf(stderr,
                         "evring: --from %" PRIu64 ": that event is no longer in the ring; "
                         "starting at the oldest, %" PRIu64 "\n",
                         from.value, oldest);
            it.seek(oldest);
            return true;
        }
        if (!live && from.value > newest) {
            report_error("--from " + std::to_string(from.value) + ": beyond the newest event (" +
                         std::to_string(newest) + ") of " + std::string(kind_name(input.kind)) + " " +
                         input.path);
            return false;
        }
        it.seek(from.value);
        return true;
    case Position::Kind::AbsoluteTime:
    case Position::Kind::RelativeTime: {
        const std::uint64_t target = resolve_time(from, time_base(it, live));
        it.seek(seek_time(it, target));
        return true;
    }
    }
    return true;
}

class RingWatcher {
public:
    RingWatcher(Input& input, const WatchPlan& plan)
        : input_(input), plan_(plan), ring_(*input.ring()), it_(ring_), out_(1) {}

    int run() {
        live_ = input_.live && input_.live->writer_alive();
        if (!position_start(it_, input_, plan_.from, live_)) return kExitRuntime;
        if (is_time(plan_.until)) until_nanos_ = resolve_time(plan_.until, time_base(it_, live_));
        if (plan_.until.kind == Position::Kind::Seqno) until_seqno_ = plan_.until.value;
        std::optional<WriterWatch> writer;
        if (live_) writer.emplace(*input_.live);
        FollowState follow;
        std::string ended;
        EventDescriptor event;
        while (ended.empty()) {
            if (stop_requested()) {
                ended = "interrupted";
                break;
            }
            switch (it_.try_next(event)) {
            case NextResult::Success:
                follow.made_progress();
                ended = handle(event);
                break;
            case NextResult::Gap:
                on_gap();
                break;
            case NextResult::Abandoned:
                out_.flush();
                std::fprintf(stderr, "evring: seqno %" PRIu64 " was never committed (its writer abandoned it); skipping it\n",
                             it_.last_abandoned_seqno());
                ++summary_.missing;
                break;
            case NextResult::NotReady:
                out_.flush();
                if (live_ && writer->writer_gone()) {
                    live_ = false;  // read what is left, then stop
                    std::fputs("evring: the writer exited\n", stderr);
                }
                if (!live_) {
                    ended = skip_hole_or_end();
                    break;
                }
                // Nothing new and the --until time has passed: no later event can match.
                if (until_nanos_ != UINT64_MAX && wall_clock_nanos() > until_nanos_) {
                    ended = "reached --until";
                    break;
                }
                wait_for_more(it_, follow);
                break;
            }
            if (out_.failed()) break;
        }
        out_.flush();
        if (out_.failed()) return output_failure(out_.error());
        print_summary(summary_, ended);
        return kExitOk;
    }

private:
    // Returns why to stop, or "" to go on.
    std::string handle(const EventDescriptor& event) {
        ++summary_.read;
        if (event.seqno > until_seqno_) return "reached --until";
        if (event.record_epoch_nanos > until_nanos_) return "reached --until";
        if (!plan_.filter.matches(event)) return {};
        PayloadView payload;
        if (format_reads_payloads(plan_.format)) {
            if (scratch_.size() < event.payload_size) scratch_.resize(event.payload_size);
            switch (copy_payload(ring_, event, scratch_.data(), scratch_.size())) {
            case PayloadResult::Ok:
                payload = {PayloadView::State::Ok, {scratch_.data(), event.payload_size}};
                break;
            case PayloadResult::Expired:
                payload.state = PayloadView::State::Expired;
                ++summary_.expired;
                std::fprintf(stderr, "evring: seqno %" PRIu64 ": payload expired (overwritten before it was read)\n",
                             event.seqno);
                break;
            case PayloadResult::Invalid:
                payload.state = PayloadView::State::Expired;
                ++summary_.expired;
                std::fprintf(stderr, "evring: seqno %" PRIu64 ": payload size %u does not fit the ring; not shown\n",
                             event.seqno, unsigned{event.payload_size});
                break;
            }
        }
        print_event(out_, plan_.format, event, payload);
        ++summary_.printed;
        if (plan_.count != 0 && summary_.printed >= plan_.count) return "reached --count";
        return {};
    }

    void on_gap() {
        const std::uint64_t lost = it_.last_gap_lost();
        const std::uint64_t first = it_.next_seqno() - lost;
        out_.flush();  // keep stdout and stderr in order for a terminal
        std::fprintf(stderr,
                     "evring: lost %" PRIu64 " events (seqno %" PRIu64 "..%" PRIu64
                     "): the reader fell behind the writer\n",
                     lost, first, it_.next_seqno() - 1);
        summary_.lost += lost;
        ++summary_.gaps;
    }

    // A ring nobody writes: a not-ready seqno below the newest was never
    // committed; skip it. Returns "" to go on, or why to stop.
    std::string skip_hole_or_end() {
        const std::uint64_t next = it_.next_seqno();
        if (next > it_.newest_seqno()) return input_.live ? "end of the ring" : "end of the snapshot";
        std::fprintf(stderr, "evring: seqno %" PRIu64 " was never committed; skipping it\n", next);
        ++summary_.missing;
        it_.seek(next + 1);
        return {};
    }

    Input& input_;
    const WatchPlan& plan_;
    const MappedRing& ring_;
    Iterator it_;
    OutputBuffer out_;
    std::vector<std::byte> scratch_ = std::vector<std::byte>(4096);
    WatchSummary summary_;
    bool live_ = false;
    std::uint64_t until_seqno_ = UINT64_MAX;
    std::uint64_t until_nanos_ = UINT64_MAX;
};

}  // namespace

int watch_ring(Input& input, const WatchPlan& plan) { return RingWatcher(input, plan).run(); }

}  // namespace evring::cli
