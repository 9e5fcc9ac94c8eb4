// Private to lib/: the version 2 recording decoder (recording_decoder_v2.cpp
// walks the blocks; recording_decoder_v2_end.cpp resynchronises after a
// damaged header and checks the end). docs/recording-format.md, "Reading,
// damage and resynchronisation", describes the walk.
//
// Thread safety: one thread at a time (the RecordingReader's).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/byte_buffer.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_decoder.hpp"

namespace evring::detail {

inline constexpr std::uint64_t kBlockHeaderSize = sizeof(RecordingBlockHeader);

class DecoderV2 final : public RecordingReader::Decoder {
public:
    Status start() override;
    Result<IndexAnswer> find(const IndexQuery& query) override;  // recording_index.cpp
    Result<bool> jump(const IndexedBlock& block, std::string& why) override;
    Result<bool> event_at(const IndexedBlock& block, std::uint64_t seqno, Record& record,
                          std::vector<std::byte>& payload, std::string& why) override;  // recording_index.cpp

protected:
    Result<bool> produce(Record& record) override;

private:
    // The block being handed out.
    struct Cursor {
        RecordingBlockHeader header{};
        std::uint64_t offset = 0;
        std::span<const std::byte> content;
        std::size_t pos = 0;
    };

    Status load_next_block();
    Status resynchronise(std::uint64_t at, const std::string& problem);
    Result<bool> find_block(std::uint64_t from, std::uint64_t& found, RecordingBlockHeader& out);
    Status load_block(const RecordingBlockHeader& h, std::uint64_t at);
    void lose_block(DamageKind kind, const RecordingBlockHeader& h, std::uint64_t at, std::string_view why);
    void take_schema(const RecordingBlockHeader& h, std::uint64_t at, std::span<const std::byte> content);
    Status after_end();
    void check_totals();
    std::string block_named(const RecordingBlockHeader& h, std::uint64_t at) const;
    // First sequence number not yet replayed or reported (0: none seen yet).
    std::uint64_t next_uncovered() const { return covered_ == 0 ? 0 : covered_ + 1; }
    void cover(std::uint64_t last) { covered_ = std::max(covered_, last); }

    // An index block, checked (recording_index.cpp).
    struct Index {
        std::uint64_t offset = 0;
        RecordingBlockHeader header{};
        IndexHead head{};
        std::vector<IndexSummary> summaries;
        std::vector<IndexEntry> entries;
        std::vector<SpanMark> marks;
        std::vector<MemberSeqnos> rows;  // kIndexMembers
        std::uint64_t end() const { return offset + kBlockHeaderSize + header.stored_size; }
    };
    struct Newest {
        std::optional<Index> index;  // none: NoIndex, or Lies when `lies`
        bool finished = false;       // the end block was found (the index covers every record)
        bool continued = false;      // its End record says the recording continues
        bool lies = false;
        std::string why;
    };
    Result<Newest> newest_index();
    Result<std::optional<Index>> read_index(std::uint64_t at, std::string& why);
    Result<IndexAnswer> answer_in(const Newest& newest, const IndexQuery& query);
    // answer_in's parts, one per kind of query (recording_index_find.cpp, the
    // span ones recording_index_span.cpp). Each goes on from `answer`, the
    // tail answer_in began with.
    static IndexAnswer tail_answer(const Newest& newest);
    std::string unservable(const IndexQuery& query, bool members) const;
    Result<IndexAnswer> position_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer);
    Result<IndexAnswer> back_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer);
    Result<IndexAnswer> span_id_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer);
    Result<IndexAnswer> span_label_in(const Newest& newest, const IndexQuery& query, bool members,
                                      IndexAnswer answer);
    // A span mark's answer: the block listing its seqno, or in a ring set
    // recording its candidates (IndexAnswer::candidates).
    IndexAnswer mark_in(const Index& index, std::uint64_t seqno, IndexAnswer answer) const;
    IndexAnswer set_mark_in(const Index& index, std::uint64_t seqno, IndexAnswer answer) const;
    IndexAnswer lies(IndexAnswer answer, std::string_view why) const;  // why follows the file's name
    static IndexAnswer found(IndexAnswer answer, const IndexEntry& e, std::uint64_t seqno);
    // Interval i's summary; i == the summaries' count: the newest's own.
    static IndexSummary summary_at(const Newest& newest, std::size_t i);
    // A records block read whole and checked on its own, as the replay would
    // check it (recording_index_jump.cpp); `content` points into `decoder`.
    struct CheckedBlock {
        RecordingBlockHeader header{};
        detail::ByteBuffer stored;
        detail::BlockDecoder decoder;
        std::span<const std::byte> content;
    };
    Result<bool> read_records_block(const IndexedBlock& block, CheckedBlock& out, std::string& why);
    // A Seqno or Time answer, checked against the file before it is believed
    // (recording_index_check.cpp): `answer` as found, in entry `j` of interval
    // `i` (`in`), or the tail (`in` null, `i` the summaries' count + 1).
    Result<IndexAnswer> checked_position(const Newest& newest, const IndexQuery& query, IndexAnswer answer,
                                         std::size_t i, std::size_t j, const Index* in);
    // Why no block before `target` holds what `query` asks for, as far as the
    // index's entry `before` (null: none) and the blocks after it say; "" when
    // that holds.
    Result<std::string> nothing_before(const IndexEntry* before, std::uint64_t target, const IndexQuery& query);
    // MemberSeqno (recording_index_member.cpp); `answer` holds what answer_in found so far.
    Result<IndexAnswer> member_seqno_in(const Newest& newest, const IndexQuery& query, IndexAnswer answer);
    // A span mark's seqno in a ring set recording: the member rows of `index`
    // whose blocks may hold it (recording_index_member.cpp).
    static std::vector<IndexedBlock> mark_candidates(const Index& index, std::uint64_t seqno);
    // Index block (interval) i of the newest's summaries, read into `held`
    // and checked against its summary; i == the summaries' count is the
    // newest itself, not copied. nullptr, with `why`, when it lies.
    Result<const Index*> interval(const Newest& newest, std::size_t i, std::optional<Index>& held, std::string& why);

    bool partial_ = false;         // jump() moved the replay: the end totals are not checked
    std::uint64_t series_id_ = 0;  // 0 until known
    std::uint64_t offset_ = sizeof(RecordingFileHeader);
    std::uint32_t expected_block_ = 0;
    bool expected_known_ = true;
    std::uint64_t covered_ = 0;    // highest seqno replayed or reported lost
    bool unknown_loss_ = false;    // damage whose record count is unknown
    bool schema_reported_ = false;
    Cursor cursor_;
    bool end_seen_ = false;
    EndRecord end_{};
    std::uint64_t end_block_offset_ = 0;
    std::uint32_t end_block_number_ = 0;
    std::uint64_t records_after_end_ = 0;
    std::vector<std::string> end_problems_;
    detail::ByteBuffer stored_;
    detail::BlockDecoder codec_;
};


}  // namespace evring::detail
