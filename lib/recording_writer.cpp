#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "write_all.hpp"
#include "evring/clock.hpp"
#include "evring/recording.hpp"

namespace evring {
namespace {

// Staged bytes are handed to the compressor (and the file) in pieces this big.
constexpr std::size_t kStageLimit = std::size_t{1} << 20;

std::string recording_named(std::string_view path) {
    return "recording '" + std::string(path) + "'";
}

Status write_all(int fd, const void* data, std::size_t size, std::string_view path) {
    return detail::write_all(fd, data, size, recording_named(path));
}

}  // namespace

std::string rotated_path(const std::string& base, std::uint32_t index) {
    return index == 0 ? base : base + "." + std::to_string(index);
}

// Compression and file writes run on a worker thread, so the thread that
// follows the ring only copies records into a staging buffer and never waits
// for zstd or write(2) (unless the worker is a whole queue behind).
//
// Thread safety: the front (the caller's thread) owns the staging buffer,
// the totals and the decision to rotate; the worker owns the zstd context and
// every write to an open file. They meet only in `queue`, `spare`, `error`
// (under `mutex`).
// Jobs are processed in order, so records reach each file in order.
class Sink {
public:
    struct Job {
        int fd = -1;
        std::string path;
        std::vector<std::byte> bytes;
        ZSTD_EndDirective mode = ZSTD_e_continue;
        bool close_after = false;
    };

    Sink(bool compress, int level) : compress_(compress), level_(level) {
        worker_ = std::thread([this] { run(); });
    }
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;
    // Processes every queued job, then stops.
    ~Sink() { stop(); }

    // Queues a job; waits while the queue is full. Returns the worker's
    // first error, if any.
    Status submit(Job job) {
        std::unique_lock lock(mutex_);
        room_.wait(lock, [&] { return queue_.size() < kMaxQueued || error_; });
        if (error_) return *error_;
        queue_.push_back(std::move(job));
        work_.notify_one();
        return {};
    }

    // An empty buffer to stage into (recycled from processed jobs).
    std::vector<std::byte> spare_buffer() {
        std::lock_guard lock(mutex_);
        if (spare_.empty()) return std::vector<std::byte>(2 * kStageLimit);
        std::vector<std::byte> buffer = std::move(spare_.back());
        spare_.pop_back();
        return buffer;
    }

    // Waits until every queued job is processed; returns the first error.
    Status drain() {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
        if (error_) return *error_;
        return {};
    }

    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            work_.notify_one();
        }
        if (worker_.joinable()) worker_.join();
    }

private:
    static constexpr std::size_t kMaxQueued = 32;  // about 32 MiB of records

    void run() {
        std::vector<char> compressed(ZSTD_CStreamOutSize());
        std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(nullptr, ZSTD_freeCCtx);
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mutex_);
                work_.wait(lock, [&] { return !queue_.empty() || stopping_; });
                if (queue_.empty()) return;  // stopping, and nothing left
                job = std::move(queue_.front());
                queue_.pop_front();
                busy_ = true;
            }
            Status status = process(job, compressed, cctx);
            std::lock_guard lock(mutex_);
            if (!status && !error_) error_ = std::move(status).error();
            job.bytes.clear();
            spare_.push_back(std::move(job.bytes));
            busy_ = false;
            room_.notify_one();
            idle_.notify_all();
        }
    }

    Status process(Job& job, std::vector<char>& compressed,
                   std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)>& cctx) {
        Status status = write_job(job, compressed, cctx);
        if (job.close_after && ::close(job.fd) != 0 && status)
            status = Error::from_errno(errno, "closing " + recording_named(job.path));
        return status;
    }

    Status write_job(Job& job, std::vector<char>& compressed,
                     std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)>& cctx) {
        if (!compress_) {
            return write_all(job.fd, job.bytes.data(), job.bytes.size(), job.path);
        }
        if (!cctx) {
            cctx.reset(ZSTD_createCCtx());
            if (!cctx) return Error(ENOMEM, "allocating a zstd compression context");
            ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level_);
            ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
        }
        ZSTD_inBuffer in{job.bytes.data(), job.bytes.size(), 0};
        for (;;) {
            ZSTD_outBuffer out{compressed.data(), compressed.size(), 0};
            const std::size_t left = ZSTD_compressStream2(cctx.get(), &out, &in, job.mode);
            if (ZSTD_isError(left))
                return Error(EIO, "compressing " + recording_named(job.path) + ": " +
                                      ZSTD_getErrorName(left));
            if (auto s = write_all(job.fd, compressed.data(), out.pos, job.path); !s) return s;
            const bool done = job.mode == ZSTD_e_continue ? in.pos == in.size : left == 0;
            if (done) return {};
        }
    }

    const bool compress_;
    const int level_;
    std::mutex mutex_;
    std::condition_variable work_, room_, idle_;
    std::deque<Job> queue_;
    std::vector<std::vector<std::byte>> spare_;
    std::optional<Error> error_;
    bool busy_ = false;
    bool stopping_ = false;
    std::thread worker_;
};

struct RecordingWriter::State {
    std::string base_path;
    std::string path;
    RecordingOptions options;
    RecordingFileHeader header{};
    int fd = -1;                      // the file being written; the sink closes it
    std::vector<std::byte> stage;     // uncompressed records not yet handed on
    std::size_t staged = 0;
    std::size_t open_record = 0;      // offset of the record begun by begin_event
    std::uint64_t raw_bytes = 0;      // header and record bytes of this file, before compression
    RecordingTotals file_totals;      // for this file's end marker
    std::unique_ptr<Sink> sink;

    ~State() {
        sink.reset();  // writes out everything queued
        if (fd >= 0) ::close(fd);
    }

    std::byte* append(std::size_t size) {
        if (stage.size() < staged + size) stage.resize((staged + size) * 2);
        std::byte* at = stage.data() + staged;
        staged += size;
        return at;
    }

    void append_record(RecordKind kind, const void* body, std::size_t size) {
        RecordHeader record{static_cast<std::uint32_t>(kind), 0, size};
        std::memcpy(append(sizeof record), &record, sizeof record);
        std::memcpy(append(size), body, size);
    }

    Status open_file(std::uint32_t index) {
        path = rotated_path(base_path, index);
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return Error::from_errno(errno, "creating " + recording_named(path));
        header.file_index = index;
        header.start_epoch_nanos = wall_clock_nanos();
        raw_bytes = sizeof header;
        file_totals = {};
        // The sink has not seen this descriptor yet: writing here is safe.
        return write_all(fd, &header, sizeof header, path);
    }

    // Hands the staged bytes to the sink: compressed (ending the frame when
    // `mode` is ZSTD_e_end) or raw, then closed when `close_after`.
    Status push(ZSTD_EndDirective mode, bool close_after = false) {
        Sink::Job job{fd, path, std::move(stage), mode, close_after};
        job.bytes.resize(staged);
        raw_bytes += staged;
        stage = sink->spare_buffer();
        staged = 0;
        if (close_after) fd = -1;
        return sink->submit(std::move(job));
    }

    // Before compression: deterministic, and an upper bound of the size on disk.
    std::uint64_t file_bytes() const { return raw_bytes + staged; }

    Status close_file(std::uint64_t flags) {
        EndRecord end{file_totals.events, file_totals.lost, file_totals.expired, wall_clock_nanos(),
                      flags};
        append_record(RecordKind::End, &end, sizeof end);
        return push(ZSTD_e_end, true);
    }
};

Result<RecordingWriter> RecordingWriter::create(const std::string& path, const RingHeader& source,
                                                const RecordingOptions& options) {
    auto state = std::make_unique<State>();
    state->base_path = path;
    state->options = options;
    RecordingFileHeader& header = state->header;
    header.magic = kRecordingMagic;
    header.version = kRecordingVersion;
    header.content_type = source.content_type;
    header.flags = options.compress ? kRecordingZstd : 0;
    header.schema_hash = source.schema_hash;
    header.ring_size = source.size;
    state->stage.resize(2 * kStageLimit);
    if (auto s = state->open_file(0); !s) return std::move(s).error();
    state->sink = std::make_unique<Sink>(options.compress, options.compression_level);
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
    RecordHeader record{static_cast<std::uint32_t>(RecordKind::Event), 0,
                        sizeof(EventDescriptor) + std::uint64_t{event.payload_size}};
    std::memcpy(s.append(sizeof record), &record, sizeof record);
    std::memcpy(s.append(sizeof event), &event, sizeof event);
    return s.append(event.payload_size);
}

Status RecordingWriter::end_event(bool payload_intact) {
    State& s = *state_;
    if (payload_intact) {
        ++totals_.events;
        ++s.file_totals.events;
    } else {
        // Keep the header and descriptor, drop the payload bytes.
        s.staged = s.open_record + sizeof(RecordHeader) + sizeof(EventDescriptor);
        RecordHeader record{static_cast<std::uint32_t>(RecordKind::ExpiredPayload), 0,
                            sizeof(EventDescriptor)};
        std::memcpy(s.stage.data() + s.open_record, &record, sizeof record);
        ++totals_.expired;
        ++s.file_totals.expired;
    }
    return after_record();
}

Status RecordingWriter::append_gap(std::uint64_t first_lost_seqno, std::uint64_t lost_count) {
    GapRecord gap{first_lost_seqno, lost_count, wall_clock_nanos()};
    state_->append_record(RecordKind::Gap, &gap, sizeof gap);
    totals_.lost += lost_count;
    ++totals_.gaps;
    state_->file_totals.lost += lost_count;
    ++state_->file_totals.gaps;
    return after_record();
}

Status RecordingWriter::after_record() {
    State& s = *state_;
    if (s.staged >= kStageLimit)
        if (auto st = s.push(ZSTD_e_continue); !st) return st;
    if (s.options.rotate_bytes > 0 && s.file_bytes() >= s.options.rotate_bytes) {
        if (auto st = s.close_file(kEndContinued); !st) return st;
        if (auto st = s.open_file(s.header.file_index + 1); !st) return st;
        ++totals_.files;
    }
    return {};
}

Status RecordingWriter::flush() {
    if (state_->fd < 0) return {};
    return state_->push(ZSTD_e_flush);
}

Status RecordingWriter::finish() {
    if (state_->fd < 0) return {};
    if (auto s = state_->close_file(0); !s) return s;
    return state_->sink->drain();
}

}  // namespace evring
