// Private to lib/recording: the state of a RecordingWriter (recording_writer.hpp),
// shared by its two halves: recording_writer.cpp stages records into blocks
// (the caller's thread), recording_writer_file.cpp handles each file (its
// header and schema block, the blocks handed to the sink, the index blocks
// counted for rotation, the end block). The worker side is recording_sink.cpp.
//
// Thread safety: the caller's thread only; the sink owns what it was handed.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "recording/recording_block.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_index_build.hpp"
#include "recording/recording_sink.hpp"
#include "recording/recording_writer.hpp"

namespace evring {

struct RecordingWriter::State {
    std::string base_path;
    std::string path;
    RecordingOptions options;             // options.schema is not kept: see schema_block
    RecordingFileHeader header{};
    std::vector<std::byte> schema_block;  // header + stored bytes, the same in every file
    int fd = -1;                          // the file being written; the sink closes it
    detail::ByteBuffer stage;             // records of the block being staged
    std::size_t staged = 0;               // stale while the inline path stages (see settle)
    bool inline_staging = false;          // the options allow recording_writer_inline.hpp's path
    std::vector<std::uint64_t> marked_types;  // options.span_marked_types as bits (Staging::marked)
    std::size_t open_record = 0;          // offset of the record begun by begin_event
    bool open_oversized = false;          // its payload cannot be kept
    detail::BlockMeta block;              // of the block being staged
    bool block_has_seqno = false;         // block.first/last_seqno are set
    detail::BlockIndexInfo index_info;    // of the block being staged (times, span marks)
    std::vector<BlockProgress::MemberLast> member_last;  // of the block being staged (options.on_block, sets)
    bool file_started = false;            // the sink was told where this file's blocks go
    std::uint64_t raw_bytes = 0;          // bytes of this file so far, before compression
    RecordingTotals file_totals;          // for this file's end record
    // The index blocks of this file, counted for rotation as the sink adds
    // them (recording_index_build.cpp) but by bytes before compression, which
    // reach kIndexEveryBytes no later than the stored bytes the sink counts:
    // more, smaller index blocks than the sink writes, so an upper bound of
    // their size on disk, and deterministic.
    struct IndexCount {
        std::uint64_t summaries = 0, entries = 0, marks = 0, rows = 0, bytes_since = 0;
        // The index block due next (the file's last one, at the latest).
        std::uint64_t pending() const {
            return sizeof(RecordingBlockHeader) + sizeof(IndexHead) + summaries * sizeof(IndexSummary) +
                   entries * sizeof(IndexEntry) + marks * sizeof(SpanMark) + rows * sizeof(MemberSeqnos);
        }
    } index_count;
    std::unique_ptr<detail::RecordingSink> sink;

    ~State();

    // The file side (recording_writer_file.cpp).
    // Creates file `index` of the series and writes its header and schema block.
    Status open_file(std::uint32_t index);
    // Hands the staged records to the sink as one block; with `settle`
    // (flush, sync), also when none are staged, so that the sink writes
    // what it holds.
    Status push_block(bool close_after, bool settle = false);
    // A records block of `bytes` (header included), `marks` span marks and
    // `rows` member rows was handed to the sink: its index entry, and an
    // index block when one is due.
    void count_index_entry(std::uint64_t bytes, std::size_t marks, std::size_t rows);
    // The size of the file so far, before compression (rotation counts it).
    std::uint64_t file_bytes(std::size_t staged_now) const;
    // Ends the file: the staged records, the last index block and the end block.
    Status close_file(std::uint64_t flags);

    std::byte* append(std::size_t size) {
        if (!stage.reserve(staged + size, staged)) throw std::bad_alloc();
        std::byte* p = stage.data() + staged;
        staged += size;
        return p;
    }

    void append_record(RecordKind kind, const void* body, std::uint32_t size) {
        const RecordHeader head{static_cast<std::uint32_t>(kind), size};
        std::memcpy(append(sizeof head), &head, sizeof head);
        std::memcpy(append(size), body, size);
    }

    void note_member_last(std::uint32_t member, std::uint64_t seqno) {
        for (BlockProgress::MemberLast& m : member_last)
            if (m.member == member) {
                m.seqno = seqno;
                return;
            }
        member_last.push_back({member, seqno});
    }

    void note_seqnos(std::uint64_t first, std::uint64_t last) {
        if (!block_has_seqno) {
            block.first_seqno = first;
            block.last_seqno = last;
            block_has_seqno = true;
        } else {
            block.first_seqno = std::min(block.first_seqno, first);
            block.last_seqno = std::max(block.last_seqno, last);
        }
    }
};

}  // namespace evring
