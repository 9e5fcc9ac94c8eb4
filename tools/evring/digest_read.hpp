// tools/evring/digest_read.hpp — how `evring digest` and `evring diff` read a
// source: one set of options (the selection, the blanked descriptor words, a
// schema file), one way to open a source and resolve them against it, and one
// way to blank a descriptor. Both commands go through it, so a diff of two
// sources compares exactly the events whose digests would differ.
//
// open_compared() opens a location, resolves its schema, --type, --flow and
// --where against it, checks --member and --blank-flow, and sets the follow
// options the read uses (payloads copied; a stream read up to its newest event
// now, as a live ring is read up to its end). On failure it reports the error
// on stderr (report_error) and returns the exit code (2 usage, 1 runtime).
//
// Thread safety: one thread opens; the ComparedSource may then be read by
// another thread (its source, schema and predicate travel together).
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_selection.hpp"
#include "heal_option.hpp"
#include "read/reading.hpp"
#include "evring/format.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/follow.hpp"

namespace CLI {
class App;
}

namespace evring::cli {

// The descriptor words left out of a comparison, and the reserved word
// (always zero).
struct Blanking {
    bool time = false;    // record_epoch_nanos (Monad's digest -T)
    bool offset = false;  // payload_buf_offset (-P)
    bool seqno = false;   // a ring `evring mirror` numbered from 1
    std::array<bool, 4> flow{};

    void apply(EventDescriptor& d) const noexcept {
        d.reserved = 0;
        if (time) d.record_epoch_nanos = 0;
        if (offset) d.payload_buf_offset = 0;
        if (seqno) d.seqno = 0;
        for (std::size_t i = 0; i < 4; ++i)
            if (flow[i]) d.content_ext[i] = 0;
    }
};

struct ComparedReadOptions {
    EventSelection select{"oldest"};  // --from, --until, --count, --type, --flow, --where, --member
    bool blank_time = false;
    bool blank_offset = false;
    bool blank_seqno = false;
    std::vector<std::string> blank_flows;  // -C: flow tags by name or index, or all
    std::string schema_file;
    HealOption heal;  // --heal, --heal-from, --heal-wait (digest's alone: `with_name`)

    // The options in the order --help lists them (--name, digest's alone,
    // goes between the filters and --member: `with_name`).
    void add_to(CLI::App& command, bool with_name);
};

struct ComparedSource {
    // The read pipeline's (read/reading.hpp): the source, its schema, its
    // follow options with --where and the span labels compiled for it.
    std::unique_ptr<Reading> reading;
    const Schema* schema = nullptr;  // reading's
    Blanking blank;
    bool stream = false;  // read up to follow.stop while idle (its messages are fetched)
};

// 0 with `out` ready to follow, or the exit code of the reported error.
int open_compared(const std::string& location, ComparedReadOptions& options, ComparedSource& out);

// The follow sink of a compared read (the follow loop passes over members not
// read, --member): it counts gaps, blanks each descriptor and hands
// the event on to take() (digest hashes it, diff queues it). A stream is read
// up to its stop position, so it waits while idle (messages being fetched);
// anything else is read up to its end.
class ComparedSink : public FollowSink {
public:
    explicit ComparedSink(const ComparedSource& read) : blank_(read.blank), keep_waiting_(read.stream) {}

    bool event(const SourceEvent& e) final {
        EventDescriptor blanked = e.descriptor;
        blank_.apply(blanked);
        ++events_;
        return take(e, blanked);
    }
    bool gap(const SourceGap& g) final {
        ++gaps_;
        gap_seqnos_ += g.count;
        return true;
    }
    bool idle() override { return keep_waiting_; }

    std::uint64_t events() const { return events_; }
    std::uint64_t gaps() const { return gaps_; }
    std::uint64_t gap_seqnos() const { return gap_seqnos_; }

protected:
    // An event of a member read, with its descriptor blanked; false stops the read.
    virtual bool take(const SourceEvent& e, const EventDescriptor& blanked) = 0;

private:
    Blanking blank_;
    bool keep_waiting_;
    std::uint64_t events_ = 0, gaps_ = 0, gap_seqnos_ = 0;
};

}  // namespace evring::cli
