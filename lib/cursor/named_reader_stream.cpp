// A named reader of a source that keeps the position itself (DurableSource:
// a nats:// stream, its position a JetStream durable consumer named after
// the reader; docs/named-readers.md, "Streams"). No position file: the
// durable's ack floor is the commit. The lock and the mark are a ring's
// (named_reader.cpp): the mark says which events the previous run wrote
// after its last acknowledgement, so what comes again is counted exactly.
#include <fmt/format.h>

#include "cursor/named_reader.hpp"
#include "cursor/named_reader_mark.hpp"
#include "evring/source/durable_source.hpp"

namespace evring {

Result<Position> NamedReader::resume_durable(EventSource& source, DurableSource& durable, const Position& start,
                                             bool start_given, bool reset, std::vector<std::string>& notices) {
    const SourceIdentity& id = source.identity();
    ring_ = id.path;
    kind_ = id.kind;
    instance_ = id.instance;
    // A ring set's stream: a position per member, all of the set's instance.
    per_member_ = id.members;
    set_ = nullptr;
    members_.clear();
    // A position file under the name is another source's: the name is taken.
    if (committed_.instance != 0 || !committed_.ring.empty()) {
        if (!reset)
            if (auto s = same_source(); !s) return std::move(s).error();
        if (auto s = remove_named_position(dir_, name_); !s) return std::move(s).error();
    }
    auto resumed = durable.durable_open(name_, reset || start_given);
    if (!resumed) return std::move(resumed).error().context(fmt::format("reader '{}'", name_));
    durable_ = &durable;
    committed_ = NamedPosition{};
    committed_.ring = ring_;
    committed_.kind = kind_;
    committed_.instance = instance_;
    committed_.last_seqno = {0};
    handing_ = 0;
    const DurableResume& r = *resumed;
    if (!r.existed)
        return start_over(source, start, notices,
                          fmt::format("no position yet (no {}: a first run, or the consumer or the stream was "
                                      "removed); starting at --from, and the consumer is created there",
                                      r.where));
    if (reset)
        return start_over(source, start, notices,
                          fmt::format("position forgotten (--reset): {} is deleted and created again at --from",
                                      r.where));
    if (start_given)
        return start_over(source, start, notices,
                          fmt::format("an explicit --from starts over: {} (acknowledged up to stream sequence {}) is "
                                      "deleted and created again there",
                                      r.where, r.floor_sequence));
    if (per_member_) return resume_stream_set(r, notices);
    handing_ = r.floor_seqno;
    committed_.last_seqno = {r.floor_seqno};
    const std::string at =
        !r.floor_known      ? fmt::format("stream sequence {}", r.floor_sequence)
        : r.floor_seqno != 0 ? fmt::format("stream sequence {} (seqno {})", r.floor_sequence, r.floor_seqno)
                             : fmt::format("stream sequence {} (before any event)", r.floor_sequence);
    std::string tail;
    if (prior_instance_ == instance_ && r.floor_known) {
        if (prior_written_ > r.floor_seqno) {
            redo_first_ = r.floor_seqno + 1;
            redo_last_ = prior_written_;
            tail = fmt::format("the previous run wrote seqno {}..{} after its last acknowledgement: those events "
                               "come again",
                               redo_first_, redo_last_);
        } else {
            tail = "nothing was written after that acknowledgement";
        }
        if (prior_in_flight_ > std::max(prior_written_, r.floor_seqno))
            tail += fmt::format("; it was stopped while writing up to seqno {}, so events up to it may come again "
                                "too",
                                prior_in_flight_);
    } else {
        tail = fmt::format("the previous consumer had {} messages delivered and not acknowledged; events of them "
                           "written before, if any, come again (no mark of the previous run's output)",
                           r.unacked);
    }
    notices.push_back(fmt::format("reader '{}' resumes after {} of stream '{}' (its {}); {}", name_, at, ring_,
                                  r.where, tail));
    return r.floor_seqno != 0 ? Position::after(r.floor_seqno) : start;
}

// Each member after its own seqno at the ack floor; what the previous run
// wrote after it, per member, from the mark (as resume_set). A member whose
// event at the floor is out of the source's reach (0) counts from seqno 1:
// whatever of it comes now is after the floor, so the count stays exact.
Result<Position> NamedReader::resume_stream_set(const DurableResume& r, std::vector<std::string>& notices) {
    const bool marked = prior_instance_ == instance_;
    std::size_t count = r.floor_members.size();
    if (marked)
        for (std::size_t i = count; i < detail::kMaxMembers; ++i)
            if (member_marks()[i].instance == instance_ && member_marks()[i].written != 0) count = i + 1;
    members_.resize(count);
    ResumeWords words;
    for (std::size_t i = 0; i < count; ++i) {
        MemberState& m = members_[i];
        m.instance = instance_;
        m.synced = true;
        m.last = i < r.floor_members.size() ? r.floor_members[i] : 0;
        if (m.last != 0) words.name(i, m.last);
        if (marked) redo_member(i, words);
    }
    const std::string resumed = words.said == 0 ? std::string("no member's event is in reach of it") : words.resumed_text();
    const std::string tail = words.tail_text(
        marked,
        fmt::format("the previous consumer had {} messages delivered and not acknowledged; events of them written "
                    "before, if any, come again (no mark of the previous run's output)",
                    r.unacked),
        "acknowledgement");
    members_into(committed_);  // what the server holds now
    notices.push_back(fmt::format("reader '{}' resumes ring set stream '{}' after stream sequence {} (its {}): {}; {}",
                                  name_, ring_, r.floor_sequence, r.where, resumed, tail));
    // The source starts after the ack floor whatever it is asked
    // (DurableSource::durable_open); the oldest asks its server nothing.
    return Position::oldest();
}


Status NamedReader::commit_durable() {
    if (per_member_) {
        // The last event handed out, by its member: the source acknowledges
        // every message up to it, of every member.
        if (!set_dirty() || last_member_ >= members_.size() || members_[last_member_].last == 0) return {};
        if (auto s = durable_->durable_commit(members_[last_member_].last, last_member_); !s) return s;
        members_into(committed_);
        return {};
    }
    if (handing_ == 0 || handing_ == committed_.last_seqno[0]) return {};
    if (auto s = durable_->durable_commit(handing_, 0); !s) return s;
    committed_.last_seqno = {handing_};
    return {};
}

}  // namespace evring
