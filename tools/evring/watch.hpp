// tools/evring/watch.hpp — what `evring watch` does with what the follow loop
// hands it (evring/source/follow.hpp): events to stdout in the chosen format,
// everything else to stderr.
//
// Stderr, never stdout, carries everything that is not an event: one line per
// gap ("evring: lost N events (seqno A..B): the reader fell behind the
// writer"), per expired payload, per notice (the writer exited, a ring
// replaced, a recording's damage), and a final summary line.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "output/event_format.hpp"
#include "evring/source/follow.hpp"
#include "output/output.hpp"

namespace evring::cli {

class WatchSink final : public FollowSink {
public:
    WatchSink(EventPrinter& printer, OutputBuffer& out) : printer_(printer), out_(out) {}

    void started(const EventSource& source) override {
        kind_ = source.kind();
        members_shown_ = source.identity().members;
    }
    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    void notice(std::string_view text) override;
    bool idle() override;

    std::uint64_t printed() const noexcept { return printed_; }
    std::uint64_t expired() const noexcept { return expired_; }

private:
    void say(const std::string& line);  // flushes stdout first, to keep a terminal in order

    EventPrinter& printer_;
    OutputBuffer& out_;
    SourceKind kind_ = SourceKind::Ring;
    bool members_shown_ = false;  // a ring set or its recording: show members
    std::uint64_t printed_ = 0;
    std::uint64_t expired_ = 0;
};

// "evring: 3 events printed (3 read), 0 lost in 0 gaps, 0 expired payloads,
// 0 never-committed seqnos; reached --count" on stderr.
void print_summary(const WatchSink& sink, const FollowResult& result, const std::string& ended);

// " (N events out of time order: ...)": what watch's and record's summaries
// add when a merged source (a ring set) let events through late.
std::string late_words(std::uint64_t late);

// Exit code for a failed stdout: a closed pipe is a normal way to stop.
int output_failure(int error);

// The words for why following ended ("reached --count", "end of the ring").
std::string ended_words(const FollowResult& result);

}  // namespace evring::cli
