#include "recording/recording_sink.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recording/recording_file.hpp"

namespace evring::detail {

RecordingSink::RecordingSink(bool compress, int level, std::function<void(const BlockProgress&)> on_block,
                             unsigned threads, RecordingIo io)
    : on_block_(std::move(on_block)), io_(io), encoder_(compress, level) {
    // Without compression there is nothing worth moving to another thread.
    const unsigned packers = compress && threads > 1 ? threads - 1 : 0;
    for (unsigned i = 0; i < packers; ++i) packer_encoders_.push_back(std::make_unique<BlockEncoder>(compress, level));
    for (unsigned i = 0; i < packers; ++i)
        packers_.emplace_back([this, encoder = packer_encoders_[i].get()] { pack_loop(*encoder); });
    worker_ = std::thread([this] { run(); });
}

RecordingSink::~RecordingSink() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        work_.notify_all();
    }
    if (worker_.joinable()) worker_.join();
    // The worker packed whatever no packer took; the packers now find nothing.
    for (std::thread& packer : packers_) packer.join();
}

Status RecordingSink::submit(Job job) {
    std::unique_lock lock(mutex_);
    // An empty queue always takes a job, however big, so a huge event cannot
    // wait forever.
    room_.wait(lock, [&] { return queue_.empty() || queued_bytes_ + job.size <= kMaxQueuedBytes || error_; });
    if (error_) return *error_;
    // Records blocks only: an end block's content is completed by the worker
    // (its IndexRef) and is stored raw.
    if (!packers_.empty() && job.meta.content == BlockContent::Records && !job.end_block && !job.meta.raw &&
        job.size > 0) {
        job.pack = Job::Pack::Waiting;
        if (!packed_spares_.empty()) {
            job.packed.bytes = std::move(packed_spares_.back());
            packed_spares_.pop_back();
        }
    }
    queued_bytes_ += job.size;
    queue_.push_back(std::move(job));
    work_.notify_all();  // the worker and the packers wait on it
    return {};
}

RecordingSink::Job* RecordingSink::first_waiting() {
    for (Job& job : queue_)
        if (job.pack == Job::Pack::Waiting) return &job;
    return nullptr;
}

void RecordingSink::pack(Job& job, BlockEncoder& encoder, std::unique_lock<std::mutex>& lock) {
    job.pack = Job::Pack::Packing;
    lock.unlock();
    // Packing: this thread alone touches the job, and nobody moves it (see
    // Thread safety in the header).
    encoder.pack({job.content.data(), job.size}, job.packed);
    lock.lock();
    job.pack = Job::Pack::Packed;
    packed_.notify_all();
}

void RecordingSink::pack_loop(BlockEncoder& encoder) {
    std::unique_lock lock(mutex_);
    for (;;) {
        Job* job = first_waiting();
        if (job != nullptr) {
            pack(*job, encoder, lock);
            continue;
        }
        if (stopping_) return;
        work_.wait(lock);
    }
}

ByteBuffer RecordingSink::spare_buffer() {
    std::lock_guard lock(mutex_);
    if (spares_.empty()) return ByteBuffer(2 * kBlockTarget);
    ByteBuffer buffer = std::move(spares_.back());
    spares_.pop_back();
    return buffer;
}

Status RecordingSink::drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
    if (error_) return *error_;
    return {};
}

void RecordingSink::run() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            work_.wait(lock, [&] { return !queue_.empty() || stopping_; });
            if (queue_.empty()) {
                // Stopping, and nothing left: a file left open (no finish) keeps
                // what is held; its owner closes it after this.
                lock.unlock();
                if (out_.started() && out_.settle()) tell_written();
                return;
            }
            // The front job packed: by this thread when nobody took it; while
            // a packer has it, this thread packs later jobs or waits.
            Job& front = queue_.front();
            while (front.pack == Job::Pack::Waiting || front.pack == Job::Pack::Packing) {
                if (front.pack == Job::Pack::Waiting) pack(front, encoder_, lock);
                else if (Job* later = first_waiting()) pack(*later, encoder_, lock);
                else packed_.wait(lock);
            }
            job = std::move(queue_.front());
            queue_.pop_front();
            busy_ = true;
        }
        Status status = process(job);
        std::lock_guard lock(mutex_);
        if (!status && !error_) error_ = std::move(status).error();
        queued_bytes_ -= job.size;
        // Keep a few ordinary buffers for staging; give back a huge one.
        if (spares_.size() < kMaxSpares && job.content.capacity() <= 4 * kBlockTarget)
            spares_.push_back(std::move(job.content));
        if (job.pack == Job::Pack::Packed && packed_spares_.size() < kMaxSpares + packers_.size() &&
            job.packed.bytes.capacity() <= 4 * kBlockTarget)
            packed_spares_.push_back(std::move(job.packed.bytes));
        busy_ = false;
        room_.notify_one();
        idle_.notify_all();
    }
}

Status RecordingSink::process(Job& job) {
    Status status;
    {
        std::lock_guard lock(mutex_);
        if (error_) status = *error_;  // after a failed write, later blocks would leave a hole
    }
    if (job.file_start) {
        index_.start_file(job.start_offset, job.start_block, job.members);
        if (status) status = out_.start(job.fd, job.start_offset, job.path, io_);
    }
    // A flush with nothing staged comes as a job without a block.
    if (status && (job.size > 0 || job.close_after)) status = write_block(job);
    if (status && (job.settle || job.close_after)) {
        status = out_.settle();
        if (status) tell_written();
    }
    return job.close_after ? end_file(job, std::move(status)) : status;
}

Status RecordingSink::write_block(Job& job) {
    Status status;
    if (job.end_block) {
        // The file's last index block, then the end block pointing to it.
        const std::uint64_t index_offset = index_.offset();
        status = write_index(job);
        const IndexRefRecord ref{index_offset, 0};
        if (job.size >= sizeof(RecordHeader) + sizeof ref)
            std::memcpy(job.content.data() + sizeof(RecordHeader), &ref, sizeof ref);
    }
    if (!status) return status;
    job.meta.block_number = index_.next_block_number();
    if (job.pack == Job::Pack::Packed) encoder_.seal({job.content.data(), job.size}, job.packed, job.meta, job.series_id);
    else encoder_.encode({job.content.data(), job.size}, job.meta, job.series_id);
    const std::uint64_t at = index_.offset();
    tell_begun(job);
    const RecordingBlockHeader& header = encoder_.header();
    status = out_.append({reinterpret_cast<const std::byte*>(&header), sizeof header}, encoder_.stored());
    if (!status) return status;
    if (on_block_ && job.meta.content == BlockContent::Records && job.meta.last_seqno != 0) {
        unwritten_.push_back({out_.end(), job.meta.last_seqno, std::move(job.member_last)});
        tell_written();
    }
    if (job.indexed && job.meta.content == BlockContent::Records && !job.end_block) {
        index_.add(header, at, job.index);
        index_.written(sizeof(RecordingBlockHeader) + encoder_.stored().size());
        if (index_.due()) status = write_index(job);
    } else {
        index_.written(sizeof(RecordingBlockHeader) + encoder_.stored().size());
    }
    return status;
}

// A finished file is durable before it is closed (the contract's sync).
Status RecordingSink::end_file(const Job& job, Status status) {
    out_.stop();
    unwritten_.clear();  // settled and told, or, after a failed write, never in the file
    if (status && ::fdatasync(job.fd) != 0) status = Error::from_errno(errno, "syncing " + recording_named(job.path));
    if (::close(job.fd) != 0 && status) status = Error::from_errno(errno, "closing " + recording_named(job.path));
    return status;
}

// Records blocks that hold a sequence number only (not the schema, index
// or end blocks), as their write begins; tell_written tells of them again
// once their last byte is in the file.
void RecordingSink::tell_begun(const Job& job) const {
    if (!on_block_ || job.meta.content != BlockContent::Records || job.meta.last_seqno == 0) return;
    on_block_(BlockProgress{false, job.meta.last_seqno, job.member_last});
}

void RecordingSink::tell_written() {
    while (!unwritten_.empty() && unwritten_.front().end <= out_.written()) {
        const Unwritten& block = unwritten_.front();
        on_block_(BlockProgress{true, block.last_seqno, block.members});
        unwritten_.pop_front();
    }
}

Status RecordingSink::write_index(const Job& job) {
    BlockMeta meta;
    meta.content = BlockContent::Index;
    meta.block_number = index_.next_block_number();
    encoder_.encode(index_.build(), meta, job.series_id);
    const RecordingBlockHeader& header = encoder_.header();
    Status status = out_.append({reinterpret_cast<const std::byte*>(&header), sizeof header}, encoder_.stored());
    index_.written(sizeof(RecordingBlockHeader) + encoder_.stored().size());
    return status;
}

}  // namespace evring::detail
