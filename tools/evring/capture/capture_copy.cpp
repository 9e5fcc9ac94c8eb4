// The copying side of a capture (capture.hpp): a second source over the same
// ring, positioned at the window's start, copied into the capture's file by
// the recording sink of `evring record` until the window closes.
#include <fmt/format.h>

#include "capture/capture.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/ring.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/escape.hpp"
#include "record_sink.hpp"

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
        if (const MappedRing* ring = source.ring()) {
            ring_ = true;
            const std::uint64_t oldest = Iterator(*ring).oldest_seqno();
            truncated_ = oldest > 1 && source.next_seqno() <= oldest;
            oldest_ = oldest;
        }
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
        if (!ring_) return;  // a ring set: members are not checked one by one
        if (!truncated_ || event.descriptor.seqno != oldest_) {
            held_ += "; the ring held the whole window";
            return;
        }
        held_ += fmt::format("; the ring had overwritten the events before seqno {}", oldest_);
        const std::uint64_t floor = capture_.start_seqno_floor;
        if (floor != 0 && floor < oldest_) {
            SourceGap lost{floor, oldest_ - floor, GapReason::FellBehind, {}, event.member};
            held_ += fmt::format(" (seqnos {}..{}, recorded as a gap)", floor, oldest_ - 1);
            inner_.gap(lost);
        }
    }

    RecordSink& inner_;
    Capture& capture_;
    std::uint64_t before_nanos_;
    bool ring_ = false;
    bool truncated_ = false;
    std::uint64_t oldest_ = 0;
    std::uint64_t events_ = 0, first_seqno_ = 0, last_seqno_ = 0;
    std::string held_ = "no events";
};

Status copy_window(Capture& capture, const CaptureContext& context, std::string& summary) {
    auto source = open_for_command(context.location, {});
    if (!source) return std::move(source).error();
    if ((*source)->identity().instance != context.instance)
        return Error(ESTALE, fmt::format("'{}' is now another ring: the capture was not taken", context.location));
    auto writer = RecordingWriter::create(capture.path, source_header((*source)->identity()), context.recording);
    if (!writer) return std::move(writer).error();
    RecordSink sink(*writer, capture.path);
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
