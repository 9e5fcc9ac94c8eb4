// A named reader of a ring set (named_reader.hpp): a position, a mark and a
// count of what comes again per member, each member by its own sequence
// numbers and ring instance.
#include <fmt/format.h>

#include <algorithm>

#include "cursor/named_reader_mark.hpp"
#include "evring/clock.hpp"
#include "evring/ring/shared_word.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace evring {
namespace {

// At most this many members are named one by one in a notice.
constexpr std::size_t kNamedInNotice = 8;

std::string more(std::size_t said, std::size_t total) {
    return said < total ? fmt::format(", and {} more", total - said) : std::string();
}

}  // namespace

void NamedReader::ResumeWords::name(std::size_t member, std::uint64_t last) {
    if (said++ < kNamedInNotice) resumed += fmt::format("{}member {} after seqno {}", said > 1 ? ", " : "", member, last);
}

std::string NamedReader::ResumeWords::resumed_text() const {
    return resumed + more(std::min(said, kNamedInNotice), said);
}

std::string NamedReader::ResumeWords::tail_text(bool marked, std::string_view unmarked,
                                                std::string_view commit) const {
    std::string tail;
    if (!marked)
        tail = std::string(unmarked);
    else if (redo == 0)
        tail = fmt::format("nothing was written after that {}", commit);
    else
        tail = fmt::format("the previous run wrote {}{} after that {}: those events come again", redone,
                           more(std::min(redo, kNamedInNotice), redo), commit);
    if (!cut.empty())
        tail += fmt::format("; it was stopped while writing ({}), so events up to those may come again too", cut);
    return tail;
}

// Member i resumes after members_[i].last: what the previous run (marked,
// of this instance) wrote of it after that comes again.
void NamedReader::redo_member(std::size_t i, ResumeWords& words) noexcept {
    MemberState& m = members_[i];
    const MemberMark was = member_marks()[i];
    if (was.instance != m.instance) return;
    if (was.written > m.last) {
        m.redo_first = m.last + 1;
        m.redo_last = was.written;
        if (words.redo++ < kNamedInNotice)
            words.redone += fmt::format("{}member {} seqno {}..{}", words.redo > 1 ? ", " : "", i, m.redo_first,
                                        m.redo_last);
    }
    if (was.in_flight > std::max(was.written, m.last))
        words.cut += fmt::format("{}member {} up to seqno {}", words.cut.empty() ? "" : ", ", i, was.in_flight);
}

NamedReader::MemberMark* NamedReader::member_marks() const noexcept {
    static_assert(sizeof(MemberMark) == kMemberMarkSize && sizeof(Mark) <= kMarkHeader);
    return reinterpret_cast<MemberMark*>(reinterpret_cast<char*>(mark_) + kMarkHeader);
}

Result<Position> NamedReader::resume_set(const EventSource& source, const Position& start, bool start_given,
                                         bool reset, std::vector<std::string>& notices) {
    const SourceIdentity& id = source.identity();
    set_ = dynamic_cast<const RingSetSource*>(&source);  // null for a recording of a set
    per_member_ = true;
    ring_ = id.path;
    kind_ = id.kind;
    instance_ = id.instance;
    members_.clear();
    if (id.instance == 0 || id.path.empty())
        return Error(EINVAL, fmt::format("named reader: '{}' has no instance identity to resume by", id.location));
    if (reset) return start_over(source, start, notices, "position forgotten (--reset); starting at --from");
    if (committed_.instance == 0) return start_over(source, start, notices, "no position yet; starting at --from");
    if (auto s = same_source(); !s) return std::move(s).error();
    if (start_given)
        return start_over(source, start, notices,
                          "an explicit --from starts over (every member's position is replaced at the next commit)");
    if (committed_.instance != instance_)
        return start_over(source, Position::oldest(), notices,
                          fmt::format("'{}' is a new {} (another at that name); starting at its oldest "
                                      "events. How far the members of the set read before went after its last "
                                      "commit is not known (it is gone)",
                                      ring_, set_ != nullptr ? "ring set" : describe(kind_)));
    const std::size_t count = committed_.last_seqno.size();
    std::vector<Position::MemberAfter> after(count);
    members_.resize(count);
    const bool marked = prior_instance_ == instance_;
    ResumeWords words;
    for (std::size_t i = 0; i < count; ++i) {
        MemberState& m = members_[i];
        m.last = committed_.last_seqno[i];
        // A recording's members are all of its one instance (the series).
        m.instance = set_ == nullptr ? instance_
                     : i < committed_.member_instance.size() ? committed_.member_instance[i] : 0;
        after[i] = {m.last, m.instance};
        if (m.instance == 0) continue;
        words.name(i, m.last);
        if (marked) redo_member(i, words);
    }
    const std::string resumed = words.said == 0 ? std::string("no member had consumed anything") : words.resumed_text();
    const std::string tail =
        words.tail_text(marked, "events written after that commit, if any, come again (no mark of the previous run's "
                                "output)",
                        "commit");
    notices.push_back(fmt::format("reader '{}' resumes {} '{}' (committed {}): {}; {}", name_,
                                  set_ != nullptr ? "ring set" : "ring set recording", ring_,
                                  utc_text(committed_.commit_nanos), resumed, tail));
    return Position::after_members(std::move(after));
}

void NamedReader::handing_member(std::uint64_t seqno, std::uint32_t member) noexcept {
    if (set_ != nullptr && set_->member_version() != set_version_) sync_members();
    if (member >= members_.size()) {
        if (set_ != nullptr || member >= detail::kMaxMembers) return;  // past kMaxMembers: not kept
        add_recorded_members(member);
    }
    MemberState& m = members_[member];
    last_member_ = member;
    m.last = seqno;
    if (seqno >= m.redo_first && seqno <= m.redo_last) ++redelivered_;
}

// A recording of a set: its members appear with their first events, all of
// the recording's instance. Their marks start at nothing written.
void NamedReader::add_recorded_members(std::uint32_t member) noexcept {
    const std::size_t first = members_.size();
    members_.resize(member + 1);
    for (std::size_t i = first; i < members_.size(); ++i) {
        members_[i].instance = instance_;
        members_[i].synced = true;
        if (mark_ == nullptr) continue;
        MemberMark& mark = member_marks()[i];
        shared::store_relaxed(mark.instance, instance_);
        shared::store_relaxed(mark.written, 0);
        shared::store_relaxed(mark.in_flight, 0);
    }
}

// Each member's ring instance, as the set source reads it now. A member
// opened again (re-created under its name) was read to its end first, so
// every event of its old ring was handed out before its serial changes: its
// position starts over at 0 of the new ring. A member that is not the
// instance resumed was started at its oldest (seek_members_after).
void NamedReader::sync_members() noexcept {
    set_version_ = set_->member_version();
    for (const std::uint32_t index : set_->members()) {
        if (index >= detail::kMaxMembers) continue;
        if (index >= members_.size()) members_.resize(index + 1);
        std::uint64_t serial = 0;
        const RingSource* ring = set_->member_source(index, &serial);
        MemberState& m = members_[index];
        if (ring == nullptr || (m.synced && m.serial == serial)) continue;
        const std::uint64_t instance = ring->identity().instance;
        if (m.synced || m.instance != instance) m = MemberState{};
        m.instance = instance;
        m.serial = serial;
        m.synced = true;
        // Before any event of this ring is handed out: an output written by
        // another thread (output_written) marks only seqnos.
        if (mark_ != nullptr) {
            MemberMark& mark = member_marks()[index];
            shared::store_relaxed(mark.instance, instance);
            shared::store_relaxed(mark.written, m.last);
            shared::store_relaxed(mark.in_flight, m.last);
        }
    }
}

// O(members) per write of the output: a write is a buffer of many events.
void NamedReader::mark_members(bool written) noexcept {
    MemberMark* marks = member_marks();
    for (std::size_t i = 0; i < members_.size(); ++i) {
        shared::store_relaxed(marks[i].instance, members_[i].instance);  // M1/M2's words (output_writing)
        shared::store_relaxed(written ? marks[i].written : marks[i].in_flight, members_[i].last);
    }
}

bool NamedReader::set_dirty() const noexcept {
    if (instance_ != committed_.instance || members_.size() != committed_.last_seqno.size()) return true;
    for (std::size_t i = 0; i < members_.size(); ++i)
        if (i >= committed_.member_instance.size() || members_[i].last != committed_.last_seqno[i] ||
            members_[i].instance != committed_.member_instance[i])
            return true;
    return false;
}

// Every member's last event handed out, and its instance, as a position holds them.
void NamedReader::members_into(NamedPosition& p) const {
    p.last_seqno.clear();
    p.member_instance.clear();
    for (const MemberState& m : members_) {
        p.last_seqno.push_back(m.last);
        p.member_instance.push_back(m.instance);
    }
}

Status NamedReader::commit_set(bool ended) {
    const bool consumed = std::any_of(members_.begin(), members_.end(), [](const auto& m) { return m.last != 0; });
    // Nothing consumed: the position stays as it was (a first run stays one;
    // an explicit --from that read nothing keeps the old position), as for a ring.
    if (!consumed) return {};
    NamedPosition p;
    p.name = name_;
    p.ring = ring_;
    p.kind = kind_;
    p.instance = instance_;
    members_into(p);
    if (p.last_seqno.empty()) {
        p.last_seqno = {0};
        p.member_instance = {0};
    }
    p.instance_ended = ended;
    p.commit_nanos = wall_clock_nanos();
    if (auto s = commit_named_position(dir_, p); !s) return s;
    committed_ = std::move(p);
    return {};
}

std::string NamedReader::set_redelivered_words() const {
    std::string ranges;
    std::size_t redo = 0;
    for (std::size_t i = 0; i < members_.size(); ++i) {
        const MemberState& m = members_[i];
        if (m.redo_last < m.redo_first) continue;
        if (redo++ < kNamedInNotice)
            ranges += fmt::format("{}member {} seqno {}..{}", redo > 1 ? ", " : "", i, m.redo_first, m.redo_last);
    }
    if (redo == 0) return std::string();
    return fmt::format("reader '{}': {} events written again that the previous run had written after its last "
                       "commit ({}{})",
                       name_, redelivered_, ranges, more(std::min(redo, kNamedInNotice), redo));
}

}  // namespace evring
