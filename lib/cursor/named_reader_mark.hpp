// Private to lib/cursor: the bytes of NAME.lock, the mark of what a named
// reader's output has written (named_reader.hpp, "What comes again").
// Written only by the process holding the lock, through a shared mapping
// (plain stores: the page cache keeps them when the process is killed);
// read by the next process to take the lock. A mark that is not ours (a new
// file, another magic) is ignored, never trusted: it only makes a notice
// more precise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cursor/named_position_format.hpp"
#include "cursor/named_reader.hpp"
#include "evring/source/event_source.hpp"

namespace evring {

inline constexpr char kMarkMagic[8] = {'E', 'V', 'R', 'M', 'A', 'R', 'K', '1'};

struct NamedReader::Mark {
    char magic[8];
    std::uint64_t instance;   // the ring (or ring set) instance the seqnos below are of
    std::uint64_t written;    // the output is written up to this event
    std::uint64_t in_flight;  // a write of the output up to this event began
};

// A ring set's members, by index, after the first 64 bytes: the same per
// member, of the member's own ring instance.
struct NamedReader::MemberMark {
    std::uint64_t instance;
    std::uint64_t written;
    std::uint64_t in_flight;
};

// A ring set's resume notice, built member by member (named_reader_set.cpp):
// "member 0 after seqno 9, ...", and what the mark says comes again.
struct NamedReader::ResumeWords {
    std::string resumed, redone, cut;
    std::size_t said = 0, redo = 0;
    void name(std::size_t member, std::uint64_t last);
    std::string resumed_text() const;
    // `unmarked`: the words when the mark is not of this instance;
    // `commit`: what the position was ("commit", "acknowledgement").
    std::string tail_text(bool marked, std::string_view unmarked, std::string_view commit) const;
};

inline constexpr std::size_t kMarkHeader = 64;
// Sparse for a single ring: only a set's reader touches the member pages.
inline constexpr std::size_t kMemberMarkSize = 24;  // sizeof(MemberMark), checked in member_marks()
inline constexpr std::size_t kMarkFileSize = kMarkHeader + kMemberMarkSize * detail::kMaxMembers;

// A commit time as the notices say it: 2026-11-29T17:15:30Z.
std::string utc_text(std::uint64_t nanos);

}  // namespace evring
