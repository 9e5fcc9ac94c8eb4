// Building index blocks (recording_index_build.hpp).
#include "recording/recording_index_build.hpp"

#include <algorithm>
#include <cstring>

namespace evring::detail {

void IndexBuilder::start_file(std::uint64_t offset, std::uint32_t block_number, bool members) {
    offset_ = offset;
    members_ = members;
    rows_.clear();
    next_block_ = block_number;
    bytes_since_ = 0;
    previous_index_ = 0;
    summaries_.clear();
    entries_.clear();
    marks_.clear();
}

void IndexBuilder::written(std::uint64_t bytes) noexcept {
    offset_ += bytes;
    bytes_since_ += bytes;
    ++next_block_;
}

void IndexBuilder::add(const RecordingBlockHeader& h, std::uint64_t offset, const BlockIndexInfo& info) {
    entries_.push_back(IndexEntry{offset, h.first_seqno, h.last_seqno, info.min_nanos, info.max_nanos,
                                  h.block_number, info.events});
    marks_.insert(marks_.end(), info.marks.begin(), info.marks.end());
    if (!members_) return;
    const std::size_t first = rows_.size();
    for (MemberSeqnos row : info.members) {
        row.entry = static_cast<std::uint32_t>(entries_.size() - 1);
        rows_.push_back(row);
    }
    std::sort(rows_.begin() + static_cast<std::ptrdiff_t>(first), rows_.end(),
              [](const MemberSeqnos& a, const MemberSeqnos& b) { return a.member < b.member; });
}

bool IndexBuilder::due() const noexcept {
    // Many marks (a span on nearly every event) end an interval early, so an
    // index block stays far below kMaxIndexContent.
    return entries_.size() >= kIndexEveryBlocks || bytes_since_ >= kIndexEveryBytes || marks_.size() >= kMarksPerIndex;
}

std::span<const std::byte> IndexBuilder::build() {
    const IndexHead head{static_cast<std::uint32_t>(summaries_.size()),
                         static_cast<std::uint32_t>(entries_.size()),
                         static_cast<std::uint32_t>(marks_.size()),
                         kIndexMarkIds | (members_ ? kIndexMembers : 0u),
                         previous_index_,
                         static_cast<std::uint32_t>(rows_.size()),
                         0};
    content_.resize(sizeof head + summaries_.size() * sizeof(IndexSummary) + entries_.size() * sizeof(IndexEntry) +
                    marks_.size() * sizeof(SpanMark) + rows_.size() * sizeof(MemberSeqnos));
    std::byte* p = content_.data();
    auto put = [&p](const void* src, std::size_t n) {
        if (n > 0) std::memcpy(p, src, n);
        p += n;
    };
    put(&head, sizeof head);
    put(summaries_.data(), summaries_.size() * sizeof(IndexSummary));
    put(entries_.data(), entries_.size() * sizeof(IndexEntry));
    put(marks_.data(), marks_.size() * sizeof(SpanMark));
    put(rows_.data(), rows_.size() * sizeof(MemberSeqnos));
    // This index block becomes a summary in the next one.
    IndexSummary self{offset_, 0, 0, 0, ~std::uint64_t{0}, 0};
    for (const IndexEntry& e : entries_) {
        if (e.first_seqno != 0 && (self.first_seqno == 0 || e.first_seqno < self.first_seqno))
            self.first_seqno = e.first_seqno;
        self.last_seqno = std::max(self.last_seqno, e.last_seqno);
        self.max_nanos = std::max(self.max_nanos, e.max_nanos);
    }
    for (const SpanMark& m : marks_) {
        self.min_label = std::min(self.min_label, m.label);
        self.max_label = std::max(self.max_label, m.label);
    }
    summaries_.push_back(self);
    previous_index_ = offset_;
    entries_.clear();
    marks_.clear();
    rows_.clear();
    bytes_since_ = 0;
    return content_;
}

}  // namespace evring::detail
