// lib/cursor/named_reader.hpp — a named reader in a follow loop: where it
// resumes, what it commits, and what a restart delivers again
// (docs/named-readers.md). The CLI's --name uses it.
//
//     auto reader = evring::NamedReader::open("billing");         // locks the name
//     auto start = (*reader)->resume(*source, from, from_given, reset, notices);
//     evring::CommitSink committing(printer, **reader, [&] { return out.flush(); });
//     options.start = *start;
//     auto result = evring::follow(source, options, committing);
//     out.flush();
//     (*reader)->commit(result->end == FollowEnd::End);
//
// Contract:
// - open() takes the name's lock (flock on NAME.lock in the state
//   directory): a second process with the same name is refused while the
//   first runs; the lock goes with the process, SIGKILL included.
// - resume() decides the start, through the one position resolver
//   (Position::after, resolved by the source's seek): the event after the
//   saved position when it is of this ring instance; the oldest event of a
//   new instance at the same path; `start` on the first run, with an
//   explicit start, or with `reset`. A name saved for another ring (path or
//   kind) is refused. The notices say which, and for a new instance how the
//   old one ended.
// - The position is the last event handed to the output, committed only
//   after the output is written (flush, then commit). Nothing is committed
//   until an event was consumed.
// - What comes again: NAME.lock also holds a mark, written around every
//   write of the output (before: the last event handed out; after: written).
//   The stores go to a shared mapping, so they survive SIGKILL of the
//   process (not a crash of the machine). A restart reads them: the events
//   after the commit up to the written mark were written by the killed run
//   and come again; redelivered() counts those this run handed out. A kill
//   between the two stores leaves a range that may or may not have been
//   written, and the notice says so.
// - A ring set (named_reader_set.cpp) keeps all of this per member: the
//   position holds each member's last event and ring instance, resume()
//   starts each member after its own (Position::after_members), and the
//   mark holds each member's written and begun-writing seqnos, so the count
//   of what comes again is per (member, seqno). A member re-created under
//   the reader (RingSetSource::member_version changes) starts over at 0.
// - A source that keeps positions itself (DurableSource: a nats:// stream,
//   whose position is a JetStream durable consumer named after the reader;
//   named_reader_stream.cpp) has no position file: resume() asks the source
//   (its ack floor), commit() has the source acknowledge what was handed
//   out. The lock and the mark are kept as for a ring; a ring set's stream
//   keeps them per member, as a set does, each member resumed after its own
//   seqno at the ack floor.
//
// - An output written by another thread (evring record's worker) marks
//   what it wrote itself, block by block (output_writing/output_written),
//   and the caller commits only what that thread has written and synced.
//
// Thread safety: one thread (the follow loop's), except output_writing and
// output_written (see there).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cursor/named_position.hpp"
#include "evring/source/follow.hpp"

namespace evring {

class RingSetSource;
class DurableSource;
struct DurableResume;

class NamedReader {
public:
    static Result<std::unique_ptr<NamedReader>> open(std::string_view name);
    NamedReader(const NamedReader&) = delete;
    NamedReader& operator=(const NamedReader&) = delete;
    ~NamedReader();

    Result<Position> resume(EventSource& source, const Position& start, bool start_given, bool reset,
                            std::vector<std::string>& notices);

    // The follow loop is reading `source` (again after follow_name switched).
    void started(const EventSource& source);
    // An event is handed to the output (before it is written); `member`:
    // its ring set member (SourceEvent::member).
    void handing(std::uint64_t seqno, std::uint32_t member = 0) noexcept {
        if (per_member_) return handing_member(seqno, member);
        handing_ = seqno;
        if (seqno >= redo_first_ && seqno <= redo_last_) ++redelivered_;
    }
    // The events first..last of a ring (one after another, no gap among
    // them) handed to the output at once: as handing() for each of them.
    void handing_run(std::uint64_t first, std::uint64_t last) noexcept {
        if (per_member_) {
            for (std::uint64_t s = first; s <= last; ++s) handing_member(s, 0);
            return;
        }
        handing_ = last;
        const std::uint64_t from = std::max(first, redo_first_), to = std::min(last, redo_last_);
        if (from <= to) redelivered_ += to - from + 1;
    }
    // Around each write of the output.
    void writing() noexcept;
    void written() noexcept;
    // The output is written by a thread of its own (a recording's worker,
    // RecordingOptions::on_block), which says what each write holds: events
    // up to `seqno` begin to be written, or were; the member_ forms for a
    // ring set's reader. They touch nothing but the mark's words (M1/M2 in
    // named_reader.cpp), so they may run on that thread while the follow
    // loop hands events out; writing() and written() are then not used.
    void output_writing(std::uint64_t seqno) noexcept;
    void output_written(std::uint64_t seqno) noexcept;
    void output_member_writing(std::uint32_t member, std::uint64_t seqno) noexcept;
    void output_member_written(std::uint32_t member, std::uint64_t seqno) noexcept;
    // Makes the last event handed out the committed position. `ended`: the
    // source was read to its end.
    Status commit(bool ended = false);
    bool dirty() const noexcept {
        if (per_member_) return set_dirty();
        return handing_ != committed_.last_seqno[0] || instance_ != committed_.instance;
    }

    // Events of the previous run's output handed out again by this run.
    std::uint64_t redelivered() const noexcept { return redelivered_; }
    // The summary's words ("3 events written again ..."), empty when none could have been.
    std::string redelivered_words() const;
    // For a binding's caller (evring_source_get_named_info): the last event
    // handed out, the last committed (0: none), and the previous run's
    // uncommitted tail that comes again (first > last: none known).
    std::uint64_t last_handed() const noexcept { return handing_; }
    std::uint64_t last_committed() const noexcept { return committed_.last_seqno.empty() ? 0 : committed_.last_seqno[0]; }
    std::uint64_t redelivery_first() const noexcept { return redo_first_; }
    std::uint64_t redelivery_last() const noexcept { return redo_last_; }
    const std::string& name() const noexcept { return name_; }
    const std::string& file() const noexcept { return file_; }

private:
    struct Mark;
    struct MemberMark;
    struct ResumeWords;  // a set's resume notice, member by member (named_reader_mark.hpp)
    // A ring set member as this reader knows it (named_reader_set.cpp).
    struct MemberState {
        std::uint64_t instance = 0;  // the ring instance `last` is of
        std::uint64_t last = 0;      // the last event handed out
        std::uint64_t serial = 0;    // RingSetSource::member_source's
        bool synced = false;         // serial and instance are of the source read (a snapshot's serials are all 0)
        std::uint64_t redo_first = 1, redo_last = 0;
    };
    NamedReader() = default;
    // A saved position is of this source's path and kind (else the error).
    Status same_source() const;
    // Ring sets (named_reader_set.cpp).
    Result<Position> resume_set(const EventSource& source, const Position& start, bool start_given, bool reset,
                                std::vector<std::string>& notices);
    void handing_member(std::uint64_t seqno, std::uint32_t member) noexcept;
    void redo_member(std::size_t member, ResumeWords& words) noexcept;
    void sync_members() noexcept;
    void add_recorded_members(std::uint32_t member) noexcept;
    void mark_members(bool written) noexcept;
    bool set_dirty() const noexcept;
    Status commit_set(bool ended);
    void members_into(NamedPosition& p) const;
    std::string set_redelivered_words() const;
    MemberMark* member_marks() const noexcept;
    // A source that keeps the position itself (named_reader_stream.cpp).
    Result<Position> resume_durable(EventSource& source, DurableSource& durable, const Position& start,
                                    bool start_given, bool reset, std::vector<std::string>& notices);
    Result<Position> resume_stream_set(const DurableResume& resumed, std::vector<std::string>& notices);
    Status commit_durable();
    Result<Position> start_over(const EventSource& source, const Position& start, std::vector<std::string>& notices,
                                std::string why);

    std::string name_, dir_, file_;
    int lock_fd_ = -1;
    Mark* mark_ = nullptr;
    std::uint64_t prior_written_ = 0, prior_in_flight_ = 0, prior_instance_ = 0;
    NamedPosition committed_;  // as last committed (or loaded)
    std::optional<Error> refused_;  // the saved position could not be trusted (open)
    std::string ring_;
    SourceKind kind_ = SourceKind::Ring;
    std::uint64_t instance_ = 0;
    std::uint64_t handing_ = 0;
    std::uint64_t redo_first_ = 1, redo_last_ = 0;  // seqnos the previous run wrote after its commit
    std::uint64_t redelivered_ = 0;
    // A ring set's reader (live, snapshot or recording): a position per member.
    bool per_member_ = false;
    // A live set or snapshot: its source (null for every other) and its members by index.
    const RingSetSource* set_ = nullptr;
    std::uint64_t set_version_ = 0;
    std::vector<MemberState> members_;
    std::uint32_t last_member_ = 0;  // the member of the last event handed out
    // A source that keeps the position itself (null for every other).
    DurableSource* durable_ = nullptr;
};

// A FollowSink that hands everything to `inner` and commits the named
// reader's position: flush (the caller's function: true when the output is
// written), then commit, at most every `interval` while events flow, and
// when caught up. The caller commits once more at the end, after its final
// flush. A failed commit stops the loop; error() says why. kAtEnd: no commit
// while the loop runs (a command whose output is written at the end: digest,
// stats).
class CommitSink final : public FollowSink {
public:
    static constexpr std::chrono::nanoseconds kAtEnd = std::chrono::nanoseconds::max();
    CommitSink(FollowSink& inner, NamedReader& reader, std::function<bool()> flush,
               std::chrono::nanoseconds interval = std::chrono::milliseconds(100))
        : inner_(inner), reader_(reader), flush_(std::move(flush)), interval_(interval) {}

    void started(const EventSource& source) override;
    bool event(const SourceEvent& event) override;
    // The ring's events first..last went to the output at once, past the
    // inner sink (a recorder's direct path: lib/record/record_run_sink.hpp):
    // as event() for each. False: a commit failed (error()) or its flush did.
    bool taken(std::uint64_t first, std::uint64_t last);
    bool gap(const SourceGap& gap) override { return inner_.gap(gap); }
    void notice(std::string_view text) override { inner_.notice(text); }
    bool idle() override;
    void replaced(const EventSource& old_source, const EventSource& new_source) override {
        inner_.replaced(old_source, new_source);
    }
    const std::optional<Error>& error() const noexcept { return error_; }

private:
    bool commit_if_due();

    FollowSink& inner_;
    NamedReader& reader_;
    std::function<bool()> flush_;
    std::chrono::nanoseconds interval_;
    std::chrono::steady_clock::time_point next_commit_ = std::chrono::steady_clock::now();
    std::uint32_t since_check_ = 0;
    std::optional<Error> error_;
};

}  // namespace evring
