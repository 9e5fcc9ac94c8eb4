// lib/sink/record_sink.hpp — the follow-loop sink that records: every event,
// and a gap marker with its reason for every sequence number it did not
// capture, into a RecordingWriter (lib/recording/recording_writer.hpp).
//
// The sink copies each event's descriptor and payload straight into the
// recording's staging buffer (no formatting) and ends a block only when idle
// (at most every 50 ms) or once a second when busy, so it keeps up with fast
// writers; zstd and write(2) run on the recording writer's own thread. Used
// by the record pipeline (lib/record/record_source.hpp: `evring record`, the
// C ABI's evring_source_record, Python's evring.record) and by the CLI's
// flight-recorder captures, one sink per recording.
//
// What it tells a person (where it starts, each gap with its reason) goes to
// `report`, one line each without a prefix; a null report keeps quiet. A
// `keep_going` check, when set, is asked at most every 50 ms (when idle, and
// between events while they flow); false ends the loop (stopped() then says
// it was a stop, not a failure): how a binding's caller interrupts a
// recording (a C stop flag, Python's Ctrl-C).
//
// Thread safety: one thread (the follow loop's) per sink.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "evring/source/follow.hpp"
#include "recording/recording_writer.hpp"

namespace evring {

// What a recording's file header records about its source.
RingHeader source_header(const SourceIdentity& id);

class RecordSink final : public FollowSink {
public:
    using Report = std::function<void(std::string_view)>;
    RecordSink(RecordingWriter& writer, std::string output, Report report = {})
        : writer_(writer), output_(std::move(output)), report_(std::move(report)) {}
    void keep_going(std::function<bool()> check) { keep_going_ = std::move(check); }

    void started(const EventSource& source) override;
    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    void notice(std::string_view text) override;
    bool idle() override;

    // For a loop that stages events into the writer itself, without a call
    // to event() for each (lib/record/record_run_sink.hpp): `events` were
    // kept since its last call; does what event() does after staging them
    // (the caller's keep_going check and the once-a-second flush, counted
    // in events). False stops the loop, as from event().
    bool kept(std::uint32_t events);
    RecordingWriter& writer() noexcept { return writer_; }

    const Status& status() const { return status_; }
    // keep_going said stop (the loop ended by the sink, with status() ok).
    bool stopped() const { return stopped_; }
    // The sequence number the recording was asked to start at (--from N):
    // when the ring had already overwritten it, the recording starts with a
    // gap marker for those up to where it really starts, so it says what it
    // lacks as it does for any lap.
    void asked_from(std::uint64_t seqno) { asked_from_ = seqno; }

private:
    using Clock = std::chrono::steady_clock;
    bool flush();
    bool may_go_on(Clock::time_point now);
    void say(std::string_view line) const {
        if (report_) report_(line);
    }
    bool keep(Status status) {
        if (!status) status_ = std::move(status);
        return status_.ok();
    }

    RecordingWriter& writer_;
    std::string output_;
    Report report_;
    std::function<bool()> keep_going_;
    Clock::time_point last_check_ = Clock::now();
    bool stopped_ = false;
    SourceKind kind_ = SourceKind::Ring;
    bool members_ = false;
    Status status_;
    Clock::time_point last_flush_ = Clock::now();
    bool dirty_ = false;
    std::uint32_t since_clock_check_ = 0;
    std::uint64_t asked_from_ = 0;  // 0: no seqno start asked for, or already accounted for
};

}  // namespace evring
