// MEMBER:SEQNO in a ring set recording's index (recording_index.hpp,
// IndexQuery::MemberSeqno). A set's events are merged by time, so an index
// entry's seqno range mixes members; index blocks written with kIndexMembers
// list each member's seqnos per block (MemberSeqnos), checked by read_index.
//
// The answer is the block holding the member's newest listed event below the
// wanted seqno, and that event's seqno: the caller reads that event to check
// it (a lying row costs a scan), then reads on from the block start. A
// member's seqnos rise in file order, so from there the first event of the
// member at or past the seqno is the one a scan from the start would find.
// With no such event listed the answer is NotFound: read from the start
// (exact, though a member that joined late is then reached by a scan: an
// index cannot prove it lists the member's first event).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "recording/recording_decoder_v2.hpp"

namespace evring::detail {

namespace {

// What one index block lists of a member, against the seqno asked for.
struct Listed {
    bool reaches = false;                  // a row at or past the seqno
    const MemberSeqnos* below = nullptr;   // the newest row starting below it, before any that reaches
};

Listed listed(const std::vector<MemberSeqnos>& rows, std::uint32_t member, std::uint64_t seqno) {
    Listed out;
    for (const MemberSeqnos& row : rows) {
        if (row.member != member) continue;
        if (row.first_seqno < seqno) out.below = &row;
        if (row.last_seqno >= seqno) {
            out.reaches = true;
            break;
        }
    }
    return out;
}

}  // namespace

Result<IndexAnswer> DecoderV2::member_seqno_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer) {
    const std::size_t k = newest.index->summaries.size();
    const std::uint32_t member = query.key;
    std::optional<Index> held;  // the index block (interval) read last, unless the newest
    const Index* in = nullptr;
    // Reads and checks interval i into `in`; false: `answer` says why not.
    auto load = [&](std::size_t i) -> Result<bool> {
        std::string why;
        auto index = interval(newest, i, held, why);
        if (!index) return std::move(index).error();
        if (!*index) {
            answer.outcome = IndexOutcome::Lies;
            answer.why = fmt::format("{}: {}", named(), why);
            return false;
        }
        if (((*index)->head.flags & kIndexMembers) == 0) {
            answer.outcome = IndexOutcome::NoIndex;
            answer.why = fmt::format("{}: its index block at offset {} was written before indexes kept sequence "
                                     "numbers per member",
                                     named(), (*index)->offset);
            return false;
        }
        in = *index;
        return true;
    };
    // A member's seqnos rise in file order, so "lists the member at or past
    // the seqno" turns true once: a binary search over the index blocks, one
    // read per step. A block without the member counts as not reaching; a
    // lie only moves the start earlier or later, and the event it leads to
    // is checked by the caller, so neither costs a wrong answer.
    std::size_t lo = 0, hi = k + 1;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        auto ok = load(mid);
        if (!ok) return std::move(ok).error();
        if (!*ok) return answer;
        if (listed(in->rows, member, query.value).reaches) hi = mid;
        else lo = mid + 1;
    }
    // From there back to the newest row of the member starting below the
    // seqno (one read, or more while the member has no events listed).
    // Nothing at or past the seqno listed: Tail (a series goes on with its
    // next file's index, RecordingSource::seek_member).
    const bool reached = lo <= k;
    for (std::size_t i = std::min(lo, k) + 1; i-- > 0;) {
        auto ok = load(i);
        if (!ok) return std::move(ok).error();
        if (!*ok) return answer;
        const Listed found = listed(in->rows, member, query.value);
        if (found.below == nullptr) continue;
        const IndexEntry& e = in->entries[found.below->entry];  // row.entry < entries: read_index checked
        answer.outcome = reached ? IndexOutcome::Found : IndexOutcome::Tail;
        answer.block = IndexedBlock{e.offset, e.block_number, e.first_seqno, e.last_seqno, member};
        answer.seqno = found.below->first_seqno;
        return answer;
    }
    answer.outcome = reached ? IndexOutcome::NotFound : IndexOutcome::Tail;
    answer.block = {};
    answer.seqno = 0;
    return answer;
}

// Rows are sorted by entry then member (read_index checks), and entries in
// file order: the candidates come in file order, as far as the index knows it
// (two members' events in one block: not which comes first).
std::vector<IndexedBlock> DecoderV2::mark_candidates(const Index& index, std::uint64_t seqno) {
    std::vector<IndexedBlock> out;
    for (const MemberSeqnos& row : index.rows) {
        if (seqno < row.first_seqno || seqno > row.last_seqno) continue;
        const IndexEntry& e = index.entries[row.entry];  // row.entry < entries: read_index checked
        out.push_back(IndexedBlock{e.offset, e.block_number, e.first_seqno, e.last_seqno, row.member});
    }
    return out;
}

}  // namespace evring::detail
