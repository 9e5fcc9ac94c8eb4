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
// With no such event listed the answer is NotFound: read from the start.
#include <fmt/format.h>

#include <optional>

#include "recording/recording_decoder_v2.hpp"

namespace evring::detail {

Result<IndexAnswer> DecoderV2::member_seqno_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer) {
    const Index& last = *newest.index;
    const std::size_t k = last.summaries.size();
    const std::uint32_t member = query.key;
    std::optional<IndexedBlock> best;
    std::uint64_t best_seqno = 0;
    // Oldest first, one read per index block, until a block lists the
    // member at or past the seqno: nothing later can be nearer below it.
    bool reached = false;
    for (std::size_t i = 0; i <= k && !reached; ++i) {
        std::string why;
        auto index = interval(newest, i, why);
        if (!index) return std::move(index).error();
        if (!*index) {
            answer.outcome = IndexOutcome::Lies;
            answer.why = fmt::format("{}: {}", named(), why);
            return answer;
        }
        const Index& in = **index;
        if ((in.head.flags & kIndexMembers) == 0) {
            answer.outcome = IndexOutcome::NoIndex;
            answer.why = fmt::format("{}: its index block at offset {} was written before indexes kept sequence "
                                     "numbers per member",
                                     named(), in.offset);
            return answer;
        }
        for (const MemberSeqnos& row : in.rows) {
            if (row.member != member) continue;
            if (row.first_seqno < query.value) {
                const IndexEntry& e = in.entries[row.entry];  // row.entry < entries: read_index checked
                best = IndexedBlock{e.offset, e.block_number, e.first_seqno, e.last_seqno, member};
                best_seqno = row.first_seqno;
            }
            if (row.last_seqno >= query.value) {
                reached = true;
                break;
            }
        }
    }
    if (!best) {
        answer.outcome = IndexOutcome::NotFound;
        answer.block = {};
        return answer;
    }
    answer.outcome = IndexOutcome::Found;
    answer.block = *best;
    answer.seqno = best_seqno;
    return answer;
}

}  // namespace evring::detail
