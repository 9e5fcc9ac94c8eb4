// Each file of a recording (recording_writer_state.hpp): its header and
// schema block, the staged records handed to the sink as blocks, the index
// blocks counted for rotation, and the end block that closes it.
#include <fcntl.h>
#include <unistd.h>

#include "evring/clock.hpp"
#include "recording/recording_writer_state.hpp"
#include "util/write_all.hpp"

namespace evring {

using detail::recording_named;

RecordingWriter::State::~State() {
    // Without finish(): write what is staged (no end record), then let
    // the sink write out everything queued before the file is closed.
    if (fd >= 0 && staged > 0 && sink) (void)push_block(false);
    sink.reset();
    if (fd >= 0) ::close(fd);
}

Status RecordingWriter::State::open_file(std::uint32_t index) {
    path = rotated_path(base_path, index);
    // Read-write: with direct I/O the sink reads back the header's last
    // alignment unit (recording_appender.hpp).
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return Error::from_errno(errno, "creating " + recording_named(path));
    header.file_index = index;
    header.start_epoch_nanos = wall_clock_nanos();
    header.header_crc = detail::file_header_crc(header);
    raw_bytes = sizeof header + (schema_block.empty() ? 0 : sizeof(RecordingBlockHeader) + header.schema_size);
    index_count = {};
    file_started = false;
    file_totals = {};
    // The sink has not seen this descriptor yet: writing here is safe.
    if (auto s = detail::write_all(fd, &header, sizeof header, recording_named(path)); !s) return s;
    return detail::write_all(fd, schema_block.data(), schema_block.size(), recording_named(path));
}

// Hands the staged records to the sink as one block; with `settle` (a
// flush), also when none are staged, for what the sink holds.
Status RecordingWriter::State::push_block(bool close_after, bool settle) {
    if (staged == 0 && !close_after && !settle) return {};
    detail::RecordingSink::Job job;
    job.fd = fd;
    job.path = path;
    job.content = std::move(stage);
    job.size = staged;
    job.meta = block;
    job.series_id = header.series_id;
    job.close_after = close_after;
    job.settle = settle;
    job.index = std::move(index_info);
    job.member_last = std::move(member_last);
    member_last.clear();
    job.end_block = block.holds_end && options.index;
    job.indexed = options.index;
    if (!file_started) {
        // The sink numbers the blocks and knows their offsets (it inserts index blocks).
        job.file_start = true;
        job.start_offset = sizeof header + schema_block.size();
        job.start_block = schema_block.empty() ? 0 : 1;
        job.members = options.ring_set;
        file_started = true;
    }
    if (staged > 0 || close_after) raw_bytes += sizeof(RecordingBlockHeader) + staged;
    if (job.indexed && !job.end_block && staged > 0)
        count_index_entry(sizeof(RecordingBlockHeader) + staged, job.index.marks.size(), job.index.members.size());
    stage = sink->spare_buffer();
    staged = 0;
    block = {};
    index_info = {};
    block_has_seqno = false;
    if (close_after) fd = -1;
    return sink->submit(std::move(job));
}

// A records block of `bytes` (header included) and `marks` span marks was
// handed to the sink: its index entry, and an index block when one is due.
void RecordingWriter::State::count_index_entry(std::uint64_t bytes, std::size_t marks, std::size_t rows) {
    IndexCount& c = index_count;
    ++c.entries;
    c.marks += marks;
    c.rows += rows;
    c.bytes_since += bytes;
    if (c.entries >= kIndexEveryBlocks || c.bytes_since >= kIndexEveryBytes ||
        c.marks >= detail::IndexBuilder::kMarksPerIndex) {
        const std::uint64_t index_bytes = c.pending();
        raw_bytes += index_bytes;
        ++c.summaries;
        c.entries = c.marks = c.rows = 0;
        c.bytes_since = index_bytes;  // as the sink: an index block counts toward the next interval
    }
}

// Before compression: deterministic, and an upper bound of the size on
// disk. A version 3 file counts its index blocks, the one still due with
// the entry of the block being staged, and its end block.
// `staged_now`: the bytes staged (State::staged, or the inline path's when
// it has not settled).
std::uint64_t RecordingWriter::State::file_bytes(std::size_t staged_now) const {
    std::uint64_t bytes = raw_bytes + (staged_now > 0 ? sizeof(RecordingBlockHeader) + staged_now : 0);
    if (options.index) {
        bytes += index_count.pending() + kEndBlockSize;
        if (staged_now > 0)
            bytes += sizeof(IndexEntry) + index_info.marks.size() * sizeof(SpanMark) +
                     index_info.members.size() * sizeof(MemberSeqnos);
    }
    return bytes;
}

// The staged records as a block; the sink then writes the file's last
// index block and the end block: an IndexRef record (the sink fills in
// the index block's offset) and the End record, raw, so a reader finds
// it exactly kEndBlockSize bytes before the end of the file.
// (Version 2: the End record ends the last records block.)
Status RecordingWriter::State::close_file(std::uint64_t flags) {
    const EndRecord end{file_totals.events, file_totals.lost, file_totals.expired,
                        wall_clock_nanos(), flags, file_totals.gaps};
    if (options.index) {
        if (auto s = push_block(false); !s) return s;
        const IndexRefRecord ref{0, 0};
        append_record(RecordKind::IndexRef, &ref, sizeof ref);
        block.record_count = 1;
        block.raw = true;
    }
    append_record(RecordKind::End, &end, sizeof end);
    ++block.record_count;
    block.holds_end = true;
    return push_block(true);
}

}  // namespace evring
