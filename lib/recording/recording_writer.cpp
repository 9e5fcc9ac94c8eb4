// The caller's side of RecordingWriter: creating it, staging records into
// blocks, the totals and rotation. Each file's header, blocks and end block
// are recording_writer_file.cpp; the worker side is recording_sink.cpp.
#include <sys/random.h>
#include <unistd.h>
#include <zstd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>
#include <cstring>
#include <vector>

#include "evring/clock.hpp"
#include "recording/recording_index.hpp"
#include "recording/recording_writer_state.hpp"

namespace evring {
namespace {

using detail::BlockMeta;
using detail::recording_named;

// An event whose record cannot fit one block (with what may already be
// staged) keeps only its descriptor.
constexpr std::uint64_t kMaxRecordedPayload = kMaxBlockContent - 2 * detail::kBlockTarget;

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
    if (options.threads < 1 || options.threads > kMaxRecordingThreads)
        return Error(EINVAL, fmt::format("{} compression threads: out of range (1..{})", options.threads,
                                         kMaxRecordingThreads));
    if (options.io > RecordingIo::DirectAnywhere)
        return Error(EINVAL, fmt::format("recording I/O mode {} is not one of buffered, direct and direct anywhere",
                                         static_cast<unsigned>(options.io)));
    if (options.schema.size() > kMaxRecordingSchemaSize)
        return Error(EINVAL, fmt::format("schema of {} bytes is over the limit of {} bytes",
                                         options.schema.size(), kMaxRecordingSchemaSize));
    return {};
}

}  // namespace

std::string rotated_path(const std::string& base, std::uint32_t index) {
    return index == 0 ? base : base + "." + std::to_string(index);
}

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
    header.origin_instance = options.origin_instance;
    header.capture_trigger_nanos = options.capture_trigger_nanos;
    header.capture_before_nanos = options.capture_before_nanos;
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
    state->stage = detail::ByteBuffer(2 * detail::kBlockTarget);
    if (auto s = state->open_file(0); !s) return std::move(s).error();
    state->sink = std::make_unique<detail::RecordingSink>(options.compress, options.compression_level, options.on_block,
                                                          options.threads, options.io);
    // What the inline path cannot do (recording_writer_inline.hpp), and
    // which types it leaves to the span marker.
    state->inline_staging = (!options.span_marker || !options.span_marked_types.empty()) && !options.ring_set;
    if (options.span_marker && state->inline_staging) {
        state->marked_types.assign(std::size_t{1} << 10, 0);  // a bit per uint16 type
        for (const std::uint16_t type : options.span_marked_types)
            state->marked_types[type >> 6] |= std::uint64_t{1} << (type & 63);
    }
    return RecordingWriter(std::move(state));
}

RecordingWriter::RecordingWriter(std::unique_ptr<State> state) : state_(std::move(state)) { rearm(); }
RecordingWriter::RecordingWriter(RecordingWriter&& other) noexcept
    : state_(std::move(other.state_)), totals_(other.totals_), fast_(std::exchange(other.fast_, {})) {}
RecordingWriter& RecordingWriter::operator=(RecordingWriter&& other) noexcept {
    if (this != &other) {
        if (state_) settle();  // the State about to go writes its staged records
        state_ = std::move(other.state_);
        totals_ = other.totals_;
        fast_ = std::exchange(other.fast_, {});
    }
    return *this;
}
RecordingWriter::~RecordingWriter() {
    if (state_) settle();  // State's destructor writes the staged records
}

const std::string& RecordingWriter::current_path() const noexcept { return state_->path; }
std::uint64_t RecordingWriter::current_file_bytes() const noexcept {
    const State& s = *state_;
    return s.file_bytes(fast_.next != nullptr ? static_cast<std::size_t>(fast_.next - s.stage.data()) : s.staged);
}

// The inline path's counts into State (see recording_writer_inline.hpp).
void RecordingWriter::settle() noexcept {
    Staging& f = fast_;
    if (f.next == nullptr) return;
    State& s = *state_;
    s.staged = static_cast<std::size_t>(f.next - s.stage.data());
    if (f.open != nullptr) {
        s.open_record = static_cast<std::size_t>(f.open - s.stage.data());
        s.open_oversized = false;  // it fit the buffer
        f.open = nullptr;
    }
    if (f.events > 0) {
        // Inline records are kept events: one record, one event each.
        s.note_seqnos(f.min_seqno, f.max_seqno);
        detail::BlockIndexInfo& info = s.index_info;
        if (info.events == 0 || f.min_nanos < info.min_nanos) info.min_nanos = f.min_nanos;
        info.max_nanos = std::max(info.max_nanos, f.max_nanos);
        info.events += f.events;
        s.block.record_count += f.events;
        s.file_totals.events += f.events;
        f.min_seqno = f.min_nanos = UINT64_MAX;
        f.max_seqno = f.max_nanos = 0;
        f.events = 0;
    }
}

// Points the inline path at State's staging buffer again (after any call
// that may have replaced, grown or closed it), or turns it off.
void RecordingWriter::rearm() noexcept {
    State& s = *state_;
    std::byte* data = s.stage.data();
    if (!s.inline_staging || s.fd < 0 || data == nullptr || s.stage.capacity() < detail::kBlockTarget) {
        fast_.next = fast_.limit = fast_.block_end = nullptr;
        return;
    }
    fast_.next = data + s.staged;
    fast_.limit = data + s.stage.capacity();
    fast_.block_end = data + std::min<std::uint64_t>(detail::kBlockTarget, rotate_at());
    fast_.marked = s.marked_types.empty() ? nullptr : s.marked_types.data();
}

bool RecordingWriter::inline_path() const noexcept { return state_->inline_staging; }

// How many staged bytes make the file reach rotate_bytes (after_record's
// test), so that the inline path ends there as at a block's end; none when
// it does not rotate. Between two calls out of line, file_bytes grows with
// the staged bytes alone: the records' own; the index's pending bytes and
// marks change only out of line (a mark's event goes out of line), and ring
// sets, whose member rows grow per event, never take the inline path.
std::uint64_t RecordingWriter::rotate_at() const noexcept {
    const State& s = *state_;
    if (s.options.rotate_bytes == 0) return UINT64_MAX;
    const std::uint64_t fixed = s.file_bytes(1) - 1;  // file_bytes(n) = fixed + n for n > 0
    return s.options.rotate_bytes > fixed ? std::max<std::uint64_t>(s.options.rotate_bytes - fixed, s.staged)
                                          : s.staged;  // already reached: the next record rotates
}

// The inline path's record reached the block's end.
Status RecordingWriter::end_block() {
    settle();
    Status status = after_record();
    rearm();
    return status;
}

std::byte* RecordingWriter::begin_event_slow(const EventDescriptor& event) {
    settle();
    State& s = *state_;
    s.open_record = s.staged;
    s.open_oversized = event.payload_size > kMaxRecordedPayload;
    const RecordHeader head{static_cast<std::uint32_t>(RecordKind::Event),
                            static_cast<std::uint32_t>(sizeof event + (s.open_oversized ? 0 : event.payload_size))};
    std::memcpy(s.append(sizeof head), &head, sizeof head);
    std::memcpy(s.append(sizeof event), &event, sizeof event);
    // An oversized payload is still copied by the caller, then dropped.
    std::byte* payload = s.append(event.payload_size);
    rearm();
    return payload;
}

Status RecordingWriter::end_event_slow(bool payload_intact) {
    settle();
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
    if (s.options.on_block && s.options.ring_set) s.note_member_last(event.reserved, event.seqno);
    s.index_info.note_event(event.record_epoch_nanos);
    ++s.block.record_count;
    Status status = after_record();
    rearm();
    return status;
}

Status RecordingWriter::append_gap(std::uint64_t first_lost_seqno, std::uint64_t lost_count, GapReason reason,
                                   std::uint32_t member) {
    settle();
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
    Status status = after_record();
    rearm();
    return status;
}

Status RecordingWriter::after_record() {
    State& s = *state_;
    if (s.staged >= detail::kBlockTarget)
        if (auto st = s.push_block(false); !st) return st;
    if (s.options.rotate_bytes > 0 && s.file_bytes(s.staged) >= s.options.rotate_bytes) {
        if (auto st = s.close_file(kEndContinued); !st) return st;
        if (auto st = s.open_file(s.header.file_index + 1); !st) return st;
        ++totals_.files;
    }
    return {};
}

Status RecordingWriter::flush() {
    if (state_->fd < 0) return {};
    settle();
    Status status = state_->push_block(false, true);
    rearm();
    return status;
}

Status RecordingWriter::sync() {
    State& s = *state_;
    if (s.fd < 0) return {};  // finished, and so synced
    settle();
    Status pushed = s.push_block(false, true);
    rearm();
    if (!pushed) return pushed;
    if (auto st = s.sink->drain(); !st) return st;
    if (::fdatasync(s.fd) != 0) return Error::from_errno(errno, "syncing " + recording_named(s.path));
    return {};
}

Status RecordingWriter::finish() {
    if (state_->fd < 0) return {};
    settle();
    Status closed = state_->close_file(0);
    rearm();  // off: the file is closed (or its close failed)
    if (!closed) return closed;
    return state_->sink->drain();
}

}  // namespace evring
