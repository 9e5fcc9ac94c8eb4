// The caller's side of RecordingWriter: staging records into blocks, the
// file header and schema block of each file, the totals and rotation. The
// worker side is recording_sink.cpp.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>
#include <zstd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "evring/clock.hpp"
#include "recording/recording_index.hpp"
#include "recording/recording_writer.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_index_build.hpp"
#include "recording/recording_sink.hpp"
#include "util/write_all.hpp"

namespace evring {
namespace {

using detail::BlockMeta;
using detail::ByteBuffer;

// An event whose record cannot fit one block (with what may already be
// staged) keeps only its descriptor.
constexpr std::uint64_t kMaxRecordedPayload = kMaxBlockContent - 2 * detail::kBlockTarget;

std::string recording_named(const std::string& path) { return "recording '" + path + "'"; }

// Random and never 0 (0 means "unknown" to a reader).
std::uint64_t new_series_id() {
    std::uint64_t id = 0;
    if (::getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id))
        id = wall_clock_nanos() ^ (std::uint64_t(::getpid()) << 32);
    return id == 0 ? 1 : id;
}

Status check_options(const RecordingOptions& options) {
    if (options.compress &&
        (options.compression_level < ZSTD_minCLevel() || options.compression_level > ZSTD_maxCLevel()))
        return Error(EINVAL, fmt::format("zstd compression level {} is out of range ({}..{})",
                                         options.compression_level, ZSTD_minCLevel(), ZSTD_maxCLevel()));
    if (options.schema.size() > kMaxRecordingSchemaSize)
        return Error(EINVAL, fmt::format("schema of {} bytes is over the limit of {} bytes",
                                         options.schema.size(), kMaxRecordingSchemaSize));
    return {};
}

}  // namespace

std::string rotated_path(const std::string& base, std::uint32_t index) {
    return index == 0 ? base : base + "." + std::to_string(index);
}

struct RecordingWriter::State {
    std::string base_path;
    std::string path;
    RecordingOptions options;             // options.schema is not kept: see schema_block
    RecordingFileHeader header{};
    std::vector<std::byte> schema_block;  // header + stored bytes, the same in every file
    int fd = -1;                          // the file being written; the sink closes it
    ByteBuffer stage;                     // records of the block being staged
    std::size_t staged = 0;
    std::size_t open_record = 0;          // offset of the record begun by begin_event
    bool open_oversized = false;          // its payload cannot be kept
    BlockMeta block;                      // of the block being staged
    bool block_has_seqno = false;         // block.first/last_seqno are set
    detail::BlockIndexInfo index_info;    // of the block being staged (times, span marks)
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

    ~State() {
        // Without finish(): write what is staged (no end record), then let
        // the sink write out everything queued before the file is closed.
        if (fd >= 0 && staged > 0 && sink) (void)push_block(false);
        sink.reset();
        if (fd >= 0) ::close(fd);
    }

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

    Status open_file(std::uint32_t index) {
        path = rotated_path(base_path, index);
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
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

    // Hands the staged records to the sink as one block.
    Status push_block(bool close_after) {
        if (staged == 0 && !close_after) return {};
        detail::RecordingSink::Job job;
        job.fd = fd;
        job.path = path;
        job.content = std::move(stage);
        job.size = staged;
        job.meta = block;
        job.series_id = header.series_id;
        job.close_after = close_after;
        job.index = std::move(index_info);
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
        raw_bytes += sizeof(RecordingBlockHeader) + staged;
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
    void count_index_entry(std::uint64_t bytes, std::size_t marks, std::size_t rows) {
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
    std::uint64_t file_bytes() const {
        std::uint64_t bytes = raw_bytes + (staged > 0 ? sizeof(RecordingBlockHeader) + staged : 0);
        if (options.index) {
            bytes += index_count.pending() + kEndBlockSize;
            if (staged > 0)
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
    Status close_file(std::uint64_t flags) {
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
};

Result<RecordingWriter> RecordingWriter::create(const std::string& path, const RingHeader& source,
                                                const RecordingOptions& options) {
    if (auto s = check_options(options); !s)
        return std::move(s).error().context("creating " + recording_named(path));
    auto state = std::make_unique<State>();
    state->base_path = path;
    state->options = options;
    state->options.schema = {};
    RecordingFileHeader& header = state->header;
    header.magic = kRecordingMagic;
    header.version = options.index ? kRecordingVersion : kRecordingVersion2;
    header.content_type = source.content_type;
    header.flags = (options.compress ? kRecordingZstd : 0) | (options.schema.empty() ? 0 : kRecordingHasSchema) |
                   (options.ring_set ? kRecordingRingSet : 0);
    header.schema_hash = source.schema_hash;
    header.ring_size = source.size;
    header.schema_size = static_cast<std::uint32_t>(options.schema.size());
    header.series_id = new_series_id();
    if (!options.schema.empty()) {
        detail::BlockEncoder encoder(options.compress, options.compression_level);
        BlockMeta meta;
        meta.content = BlockContent::Schema;
        encoder.encode(options.schema, meta, header.series_id);
        const auto& block_header = encoder.header();
        const auto* h = reinterpret_cast<const std::byte*>(&block_header);
        state->schema_block.assign(h, h + sizeof block_header);
        state->schema_block.insert(state->schema_block.end(), encoder.stored().begin(), encoder.stored().end());
    }
    state->stage = ByteBuffer(2 * detail::kBlockTarget);
    if (auto s = state->open_file(0); !s) return std::move(s).error();
    state->sink = std::make_unique<detail::RecordingSink>(options.compress, options.compression_level);
    return RecordingWriter(std::move(state));
}

RecordingWriter::RecordingWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
RecordingWriter::RecordingWriter(RecordingWriter&&) noexcept = default;
RecordingWriter& RecordingWriter::operator=(RecordingWriter&&) noexcept = default;
RecordingWriter::~RecordingWriter() = default;

const std::string& RecordingWriter::current_path() const noexcept { return state_->path; }
std::uint64_t RecordingWriter::current_file_bytes() const noexcept { return state_->file_bytes(); }

std::byte* RecordingWriter::begin_event(const EventDescriptor& event) {
    State& s = *state_;
    s.open_record = s.staged;
    s.open_oversized = event.payload_size > kMaxRecordedPayload;
    const RecordHeader head{static_cast<std::uint32_t>(RecordKind::Event),
                            static_cast<std::uint32_t>(sizeof event + (s.open_oversized ? 0 : event.payload_size))};
    std::memcpy(s.append(sizeof head), &head, sizeof head);
    std::memcpy(s.append(sizeof event), &event, sizeof event);
    // An oversized payload is still copied by the caller, then dropped.
    return s.append(event.payload_size);
}

Status RecordingWriter::end_event(bool payload_intact) {
    State& s = *state_;
    RecordHeader head;
    std::memcpy(&head, s.stage.data() + s.open_record, sizeof head);
    EventDescriptor event;
    std::memcpy(&event, s.stage.data() + s.open_record + sizeof head, sizeof event);
    if (payload_intact && !s.open_oversized) {
        ++totals_.events;
        ++s.file_totals.events;
        // Event records only: MEMBER:SEQNO reads the event a row names to check it.
        if (s.options.ring_set && s.options.index) s.index_info.note_member(event.reserved, event.seqno);
        if (s.options.span_marker) {
            std::array<SpanMark, kMaxSpanMarksPerEvent> marks{};
            const std::byte* payload = s.stage.data() + s.open_record + sizeof head + sizeof event;
            const std::size_t n = std::min(marks.size(), s.options.span_marker(event, {payload, event.payload_size}, marks));
            s.index_info.marks.insert(s.index_info.marks.end(), marks.begin(), marks.begin() + n);
        }
    } else {
        // Keep the header and descriptor, drop the payload bytes.
        s.staged = s.open_record + sizeof head + sizeof event;
        head = {static_cast<std::uint32_t>(RecordKind::ExpiredPayload), sizeof event};
        std::memcpy(s.stage.data() + s.open_record, &head, sizeof head);
        ++totals_.expired;
        ++s.file_totals.expired;
    }
    s.note_seqnos(event.seqno, event.seqno);
    s.index_info.note_event(event.record_epoch_nanos);
    ++s.block.record_count;
    return after_record();
}

Status RecordingWriter::append_gap(std::uint64_t first_lost_seqno, std::uint64_t lost_count, GapReason reason,
                                   std::uint32_t member) {
    State& s = *state_;
    if (lost_count == 0 || first_lost_seqno > UINT64_MAX - (lost_count - 1) ||
        static_cast<std::uint32_t>(reason) > kMaxGapReason)
        return Error(EINVAL, fmt::format("{}: gap of {} from seqno {} with reason {} cannot be recorded",
                                         recording_named(s.path), lost_count, first_lost_seqno,
                                         static_cast<std::uint32_t>(reason)));
    const GapRecord gap{first_lost_seqno, lost_count, wall_clock_nanos(), reason, member};
    s.append_record(RecordKind::Gap, &gap, sizeof gap);
    s.note_seqnos(first_lost_seqno, first_lost_seqno + (lost_count - 1));
    ++s.block.record_count;
    totals_.lost += lost_count;
    ++totals_.gaps;
    s.file_totals.lost += lost_count;
    ++s.file_totals.gaps;
    return after_record();
}

Status RecordingWriter::after_record() {
    State& s = *state_;
    if (s.staged >= detail::kBlockTarget)
        if (auto st = s.push_block(false); !st) return st;
    if (s.options.rotate_bytes > 0 && s.file_bytes() >= s.options.rotate_bytes) {
        if (auto st = s.close_file(kEndContinued); !st) return st;
        if (auto st = s.open_file(s.header.file_index + 1); !st) return st;
        ++totals_.files;
    }
    return {};
}

Status RecordingWriter::flush() {
    if (state_->fd < 0) return {};
    return state_->push_block(false);
}

Status RecordingWriter::finish() {
    if (state_->fd < 0) return {};
    if (auto s = state_->close_file(0); !s) return s;
    return state_->sink->drain();
}

}  // namespace evring
