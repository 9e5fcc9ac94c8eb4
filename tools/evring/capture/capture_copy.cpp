// The copying side of a capture (capture.hpp): a second source over the same
// ring, positioned at the window's start, copied into the capture's file by
// the recording sink of `evring record` until the window closes.
#include <fmt/format.h>

#include "capture/capture.hpp"
#include "commands.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/escape.hpp"
#include "sink/record_sink.hpp"

namespace evring::cli {
namespace {

// The window around RecordSink: events past the window's end end the copy
// (capture_window.hpp); the first event says how much of the "before" part
// the ring still held.
class WindowSink final : public FollowSink {
public:
    WindowSink(RecordSink& inner, Capture& capture, std::uint64_t before_nanos)
        : inner_(inner), capture_(capture), before_nanos_(before_nanos) {}

    void started(const EventSource& source) override {
        inner_.started(source);
        // A ring whose oldest event is where the time search landed, with
        // events before it overwritten, no longer held the window's start.
        // In a set, each member's ring is asked.
        next_ = member_next_seqnos(source);
        oldest_ = member_oldest_seqnos(source);
        set_ = source.identity().members;
    }

    bool event(const SourceEvent& event) override {
        const std::uint64_t t = event.descriptor.record_epoch_nanos;
        if (!capture_.window.holds(t, stop_flag())) return false;
        if (events_++ == 0) first_event(event);
        last_seqno_ = event.descriptor.seqno;
        return inner_.event(event);
    }
    bool gap(const SourceGap& gap) override { return inner_.gap(gap); }
    void notice(std::string_view text) override { inner_.notice(text); }
    bool idle() override { return inner_.idle() && !capture_.window.closed(); }

    std::string held() const { return held_; }
    std::uint64_t events() const { return events_; }
    std::uint64_t first_seqno() const { return first_seqno_; }
    std::uint64_t last_seqno() const { return last_seqno_; }

private:
    void first_event(const SourceEvent& event) {
        first_seqno_ = event.descriptor.seqno;
        const std::uint64_t t = event.descriptor.record_epoch_nanos;
        const std::uint64_t held = capture_.trigger_nanos > t ? capture_.trigger_nanos - t : 0;
        held_ = fmt::format("events from {} before the trigger ({} asked for)", capture_seconds(held),
                            capture_seconds(before_nanos_));
        std::string lost;
        for (std::uint32_t m = 0; m < oldest_.size() && m < next_.size(); ++m)
            lost += overwritten(m, event);
        held_ += lost.empty() ? "; the ring held the whole window" : lost;
    }

    // "; the ring had overwritten the events before seqno N (seqnos F..N-1,
    // recorded as a gap)" when member `m`'s copy began at its ring's oldest
    // event with events before it overwritten; empty otherwise.
    std::string overwritten(std::uint32_t m, const SourceEvent& first) {
        const std::uint64_t oldest = oldest_[m];
        if (oldest <= 1 || next_[m] == 0 || next_[m] > oldest) return {};
        // A single ring's first event tells: the search landed at the oldest.
        if (!set_ && first.descriptor.seqno != oldest) return {};
        std::string said = set_ ? fmt::format("; member {}'s ring had overwritten the events before seqno {}", m, oldest)
                                : fmt::format("; the ring had overwritten the events before seqno {}", oldest);
        const auto& floors = capture_.start_seqno_floor;
        const std::uint64_t floor = m < floors.size() ? floors[m] : 0;
        if (floor != 0 && floor < oldest) {
            inner_.gap(SourceGap{floor, oldest - floor, GapReason::FellBehind, {}, m});
            said += fmt::format(" (seqnos {}..{}, recorded as a gap)", floor, oldest - 1);
        }
        return said;
    }

    RecordSink& inner_;
    Capture& capture_;
    std::uint64_t before_nanos_;
    bool set_ = false;
    std::vector<std::uint64_t> next_, oldest_;  // per member, from started()
    std::uint64_t events_ = 0, first_seqno_ = 0, last_seqno_ = 0;
    std::string held_ = "no events";
};

Status copy_window(Capture& capture, const CaptureContext& context, std::string& summary) {
    auto source = open_for_command(context.location, {});
    if (!source) return std::move(source).error();
    if ((*source)->identity().instance != context.instance)
        return Error(ESTALE, fmt::format("'{}' is now another ring: the capture was not taken", context.location));
    RecordingOptions recording = context.recording;  // the file says which window it is of
    recording.capture_trigger_nanos = capture.trigger_nanos;
    recording.capture_before_nanos = context.before_nanos;
    auto writer = RecordingWriter::create(capture.path, source_header((*source)->identity()), recording);
    if (!writer) return std::move(writer).error();
    RecordSink sink(*writer, capture.path, report_error);
    WindowSink window(sink, capture, context.before_nanos);
    FollowOptions options;
    options.start = Position{Position::Kind::AbsoluteTime, capture.window.start()};
    options.payloads = PayloadRead::Copy;
    options.stop_flag = &stop_flag();
    auto result = follow(*source, options, window);
    Status status = sink.status();
    if (status) status = writer->finish();
    if (!result) return std::move(result).error();
    if (!status) return status;
    const RecordingTotals& t = writer->totals();
    summary = fmt::format("capture {}: {} events (seqno {}..{}), {} lost in {} gaps; trigger seqno {} ({} trigger(s)); "
                          "holds {}",
                          printable(capture.path), t.events, window.first_seqno(), window.last_seqno(), t.lost, t.gaps,
                          capture.trigger_seqno, capture.triggers.load(), window.held());
    return {};
}

}  // namespace

void copy_capture(Capture& capture, const CaptureContext& context) {
    std::string summary;
    capture.status = copy_window(capture, context, summary);
    capture.summary = capture.status ? summary
                                     : fmt::format("capture {} failed: {}", printable(capture.path),
                                                   capture.status.error().message());
    capture.finished.store(true, std::memory_order_release);  // pairs with reap()'s acquire
}

}  // namespace evring::cli
