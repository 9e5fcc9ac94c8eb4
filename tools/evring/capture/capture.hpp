// tools/evring/capture/capture.hpp — flight-recorder captures: `evring record
// RING --trigger EXPR --before 10s --after 5s -o DIR` (docs/cli.md, "Captures").
//
// The trigger loop is `evring record`'s follow loop with EXPR as its
// `--where` predicate (lib/query/where.hpp) and no payloads asked for: it
// reads descriptors, and a payload only when EXPR's descriptor tests (type,
// flow tags) leave the answer open, so watching costs little while nothing
// fires. Each event it keeps is a trigger, handed to CaptureSink:
// - a trigger inside the open capture's window moves the window's end to its
//   time + after (one file, not two);
// - otherwise, unless --max-captures were taken or --cooldown has not passed
//   since the last window's end (those triggers are counted, not captured),
//   a new capture starts: a thread (capture_copy.cpp) opens a second source
//   over the same ring (the same file: checked by its instance), positions it
//   at the trigger's time - before through the position resolver, and copies
//   events with their payloads into DIR/capture-NNNN.evrec with the recording
//   sink of `evring record` (lib/sink/record_sink.hpp) until the window closes
//   (capture_window.hpp). The "before" part is still in the ring's memory.
// - The window closes when a trigger past its end is seen, or when the
//   trigger loop is caught up and the wall clock is kCloseGrace past the end
//   (events are stamped before they are committed).
// At most kMaxCopying captures are copied at once; a trigger that would start
// another is counted as skipped. Every thread is joined before run returns.
//
// What a capture says about its "before" window (capture_copy.cpp): its file
// header holds the trigger's time and the window asked for (with the first
// event's time: how much of it the file holds; `evring info` says it). When
// the ring (in a set: a member's ring) no longer held the window's start
// (the copy began at its oldest event and events before it were
// overwritten), the capture starts with a FellBehind gap marker (of that
// member) for the sequence numbers from the first one the trigger loop saw
// after the window's start (its samples, below) to the one before the
// oldest, when those samples reach back that far; and stderr says how much
// of the requested window the capture holds, and which members lost what.
//
// Thread safety: CaptureSink runs on the follow loop's thread; each capture's
// copy runs on its own thread and shares only its CaptureWindow and its
// `finished` flag (release on the copy's side, acquire on the reaper's).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "capture/capture_options.hpp"
#include "capture/capture_window.hpp"
#include "evring/error.hpp"
#include "evring/source/follow.hpp"
#include "recording/recording_writer.hpp"

namespace evring::cli {

inline constexpr std::chrono::milliseconds kCloseGrace{100};
inline constexpr std::size_t kMaxCopying = 4;

// One capture file: its window, and the copy's thread and outcome.
struct Capture {
    Capture(std::uint64_t start, std::uint64_t end) : window(start, end) {}
    std::string path;
    CaptureWindow window;
    std::uint64_t trigger_seqno = 0;
    std::uint64_t trigger_nanos = 0;
    std::atomic<std::uint64_t> triggers{1};  // the trigger thread adds; the copy reads at its end
    // From the trigger loop's samples, per member (index 0 for a single
    // ring): the first seqno stamped at or after the window's start is at
    // least this (0, or no entry: not known).
    std::vector<std::uint64_t> start_seqno_floor;
    std::thread thread;
    std::atomic<bool> finished{false};
    // Written by the copy before `finished`.
    Status status;
    std::string summary;
};

// What every copy needs from the command.
struct CaptureContext {
    std::string location;        // the source's resolved path
    std::uint64_t instance = 0;  // the source's instance: a copy refuses another ring
    RecordingOptions recording;  // schema, span marks, ring set, compression
    std::uint64_t before_nanos = 0;
};

// "1.500 s", for the lines captures print.
std::string capture_seconds(std::uint64_t nanos);

// Per member (index 0 for a single ring; capture_members.cpp): the next
// seqno each member's reader will read, and each member ring's oldest held
// seqno (0: not known).
std::vector<std::uint64_t> member_next_seqnos(const EventSource& source);
std::vector<std::uint64_t> member_oldest_seqnos(const EventSource& source);

// The copy (capture_copy.cpp): runs on the capture's thread.
void copy_capture(Capture& capture, const CaptureContext& context);

class CaptureSink final : public FollowSink {
public:
    CaptureSink(CapturePlan plan, CaptureContext context) : plan_(std::move(plan)), context_(std::move(context)) {}
    ~CaptureSink() override;

    void started(const EventSource& source) override { source_ = &source; }
    bool event(const SourceEvent& event) override;
    void notice(std::string_view text) override;
    bool idle() override;

    // After the follow loop: closes the open window, joins every copy and
    // says what was captured; the first failure, if any.
    Status finish();

private:
    void start_capture(const SourceEvent& event);
    void close_open();
    void reap(bool wait);
    void sample();
    std::vector<std::uint64_t> seqno_floor(std::uint64_t nanos) const;
    bool done() const;

    CapturePlan plan_;
    CaptureContext context_;
    const EventSource* source_ = nullptr;
    std::vector<std::unique_ptr<Capture>> copying_;
    Capture* open_ = nullptr;
    std::uint64_t started_ = 0;       // captures started
    std::uint64_t last_end_ = 0;      // the last closed window's end
    std::uint64_t skipped_ = 0;       // triggers not captured (limits)
    std::uint64_t next_number_ = 1;   // of the next file name
    bool said_busy_ = false;          // a trigger was skipped for kMaxCopying (said once)
    Status status_;
    // (wall clock, the trigger loop's next seqno of each member: index 0
    // for a single ring) when it was caught up, at most one per 10 ms over
    // the last `before` + 1 s.
    std::deque<std::pair<std::uint64_t, std::vector<std::uint64_t>>> samples_;
};

}  // namespace evring::cli
