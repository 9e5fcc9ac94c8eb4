// tools/evring/record_sink.hpp — the follow-loop sink of `evring record`: every
// event, and a gap marker with its reason for every sequence number it did not
// capture, into a RecordingWriter (lib/recording/recording_writer.hpp).
//
// The sink copies each event's descriptor and payload straight into the
// recording's staging buffer (no formatting) and ends a block only when idle
// (at most every 50 ms) or once a second when busy, so it keeps up with fast
// writers; zstd and write(2) run on the recording writer's own thread. Used
// by `evring record` and by its flight-recorder captures (capture/), one sink
// per recording.
//
// Thread safety: one thread (the follow loop's) per sink.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "evring/source/follow.hpp"
#include "recording/recording_writer.hpp"

namespace evring::cli {

// What a recording's file header records about its source.
RingHeader source_header(const SourceIdentity& id);

class RecordSink final : public FollowSink {
public:
    RecordSink(RecordingWriter& writer, std::string output) : writer_(writer), output_(std::move(output)) {}

    void started(const EventSource& source) override;
    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    void notice(std::string_view text) override;
    bool idle() override;

    const Status& status() const { return status_; }
    // The sequence number the recording was asked to start at (--from N):
    // when the ring had already overwritten it, the recording starts with a
    // gap marker for those up to where it really starts, so it says what it
    // lacks as it does for any lap.
    void asked_from(std::uint64_t seqno) { asked_from_ = seqno; }

private:
    using Clock = std::chrono::steady_clock;
    bool flush();
    bool keep(Status status) {
        if (!status) status_ = std::move(status);
        return status_.ok();
    }

    RecordingWriter& writer_;
    std::string output_;
    SourceKind kind_ = SourceKind::Ring;
    bool members_ = false;
    Status status_;
    Clock::time_point last_flush_ = Clock::now();
    bool dirty_ = false;
    std::uint32_t since_clock_check_ = 0;
    std::uint64_t asked_from_ = 0;  // 0: no seqno start asked for, or already accounted for
};

}  // namespace evring::cli
