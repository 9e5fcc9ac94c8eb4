// Private to lib/: building a version 3 recording's index blocks
// (recording_format.hpp, "Version 3: index blocks"). The recording sink's
// worker owns one: only it knows where each block lands in the file, since
// only it knows a block's size once compressed.
//
// Thread safety: one thread (the sink's worker).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "recording/recording_format.hpp"

namespace evring::detail {

// What the writer's thread knows of a block it stages, for its index entry.
struct BlockIndexInfo {
    std::uint64_t min_nanos = 0;  // event times (0, 0: no event)
    std::uint64_t max_nanos = 0;
    std::uint32_t events = 0;
    std::vector<SpanMark> marks;
    // A ring set recording: each member's seqnos in the block (MemberSeqnos::entry unset).
    std::vector<MemberSeqnos> members;
    void note_event(std::uint64_t nanos) noexcept {
        if (events++ == 0 || nanos < min_nanos) min_nanos = nanos;
        if (nanos > max_nanos) max_nanos = nanos;
    }
    // A member's seqnos rise in file order, so its first event sets `first_seqno`.
    void note_member(std::uint32_t member, std::uint64_t seqno) {
        for (MemberSeqnos& row : members)
            if (row.member == member) {
                row.last_seqno = seqno;
                return;
            }
        members.push_back(MemberSeqnos{0, member, seqno, seqno});
    }
};

class IndexBuilder {
public:
    static constexpr std::size_t kMarksPerIndex = 65536;
    // A new file: its first block goes at `offset` with number `block_number`;
    // `members`: a ring set recording (kIndexMembers).
    void start_file(std::uint64_t offset, std::uint32_t block_number, bool members = false);
    // The number of the next block and where it goes.
    std::uint32_t next_block_number() const noexcept { return next_block_; }
    std::uint64_t offset() const noexcept { return offset_; }
    // A block of `bytes` (header included) was written at offset().
    void written(std::uint64_t bytes) noexcept;
    // The records block `h` was written at `offset`.
    void add(const RecordingBlockHeader& h, std::uint64_t offset, const BlockIndexInfo& info);
    // An index block is due (kIndexEveryBlocks, kIndexEveryBytes).
    bool due() const noexcept;
    // The content of the index block about to be written at offset(); the
    // interval restarts. Valid until the next call.
    std::span<const std::byte> build();

private:
    std::uint64_t offset_ = 0;
    std::uint32_t next_block_ = 0;
    std::uint64_t bytes_since_ = 0;
    std::uint64_t previous_index_ = 0;
    std::vector<IndexSummary> summaries_;
    std::vector<IndexEntry> entries_;
    std::vector<SpanMark> marks_;
    bool members_ = false;
    std::vector<MemberSeqnos> rows_;
    std::vector<std::byte> content_;
};

}  // namespace evring::detail
