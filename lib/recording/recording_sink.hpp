// Private to lib/: the recording writer's worker thread.
//
// The thread that follows the ring only stages records; the sink's worker
// encodes each staged block (zstd or raw, checksums, recording_block.hpp) and
// appends it to the file (recording_appender.hpp: direct I/O or one writev),
// so the follower never waits for zstd or write(2) unless the worker is
// kMaxQueuedBytes behind. A block is told written (on_block) once the
// appender has put its last byte in the file; a job marked `settle` (a
// flush), a file's last job and the sink's stop have the appender write
// what it holds.
//
// With more than one compressing thread (RecordingOptions::threads), the
// records blocks are packed (compressed and checksummed, the costly part)
// by whichever thread takes them first, the worker included, and the worker
// alone seals (numbers, header checksum) and writes them, in submission order.
//
// Thread safety: submit, spare_buffer and drain are called by the writer's
// thread; the worker owns the encoder, the index and every write to a file it
// was handed; each packer owns its encoder. They meet only in the members
// under `mutex_`. Jobs are processed in submission order, so blocks reach
// each file in order. A job's Pack state is changed only under `mutex_`:
// Waiting -> Packing by the one thread that then packs it with the mutex
// released, Packing -> Packed by that thread. While Packing, only that
// thread touches the job's content and packed bytes, and nobody moves the
// job: the worker pops only the front job, and only once it is not Packing;
// std::deque's push_back and pop_front keep references to the other jobs
// valid.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/byte_buffer.hpp"
#include "evring/error.hpp"
#include "recording/recording_appender.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_index_build.hpp"
#include "recording/recording_writer.hpp"

namespace evring::detail {

class RecordingSink {
public:
    struct Job {
        int fd = -1;
        std::string path;     // for error messages
        ByteBuffer content;   // the block's records (or schema)
        std::size_t size = 0;
        BlockMeta meta;
        std::uint64_t series_id = 0;
        bool close_after = false;  // the file is complete: close fd after this block
        bool settle = false;       // a flush: after this job every byte appended is in the file
        BlockIndexInfo index;      // a records block: its index entry's times and marks
        // The first block of a file: where it goes and its number (the sink
        // numbers blocks, since it inserts index blocks).
        bool file_start = false;
        std::uint64_t start_offset = 0;
        std::uint32_t start_block = 0;
        bool members = false;  // with file_start: a ring set recording (per-member index rows)
        // The end block: an index block goes before it, and the sink writes
        // that block's offset into the IndexRef record the content starts with.
        bool end_block = false;
        bool indexed = true;  // false: a version 2 file, no index blocks
        std::vector<BlockProgress::MemberLast> member_last;  // for on_block (ring sets)
        // Set by submit and the compressing threads (see Thread safety).
        enum class Pack : std::uint8_t { No, Waiting, Packing, Packed };
        Pack pack = Pack::No;
        PackedBlock packed;
    };

    // `on_block`: RecordingOptions::on_block (may be empty). `threads`: how
    // many threads compress (the worker and threads - 1 packers).
    RecordingSink(bool compress, int level, std::function<void(const BlockProgress&)> on_block = {},
                  unsigned threads = 1, RecordingIo io = RecordingIo::Buffered);
    RecordingSink(const RecordingSink&) = delete;
    RecordingSink& operator=(const RecordingSink&) = delete;
    // Processes every queued job, then stops.
    ~RecordingSink();

    // Queues a job; waits while kMaxQueuedBytes are queued. Returns the
    // worker's first error, if any (then the job is dropped).
    Status submit(Job job);
    // An empty buffer to stage into (recycled from written blocks).
    ByteBuffer spare_buffer();
    // Waits until every queued job is processed; returns the first error.
    Status drain();

private:
    static constexpr std::size_t kMaxQueuedBytes = std::size_t{32} << 20;
    static constexpr std::size_t kMaxSpares = 4;

    void run();
    void pack_loop(BlockEncoder& encoder);
    // The first job no thread has taken to pack, or null. Under mutex_.
    Job* first_waiting();
    // Packs `job` (Waiting, made Packing by the caller) with the lock released.
    void pack(Job& job, BlockEncoder& encoder, std::unique_lock<std::mutex>& lock);
    Status process(Job& job);
    Status write_block(Job& job);
    Status write_index(const Job& job);
    Status end_file(const Job& job, Status status);

    void tell_begun(const Job& job) const;
    // Tells on_block of the blocks whose last byte is now in the file.
    void tell_written();

    // A records block appended and not yet wholly in the file (on_block's).
    struct Unwritten {
        std::uint64_t end = 0;  // the file offset after its last byte
        std::uint64_t last_seqno = 0;
        std::vector<BlockProgress::MemberLast> members;
    };

    std::function<void(const BlockProgress&)> on_block_;
    RecordingIo io_;
    FileAppender out_;                // the worker's alone
    std::deque<Unwritten> unwritten_;  // the worker's alone
    BlockEncoder encoder_;  // the worker's alone
    IndexBuilder index_;    // the worker's alone
    std::vector<std::unique_ptr<BlockEncoder>> packer_encoders_;  // one per packer
    std::mutex mutex_;
    std::condition_variable work_, room_, idle_, packed_;
    std::deque<Job> queue_;
    std::size_t queued_bytes_ = 0;
    std::vector<ByteBuffer> spares_;
    std::vector<ByteBuffer> packed_spares_;  // for PackedBlock::bytes
    std::optional<Error> error_;
    bool busy_ = false;
    bool stopping_ = false;
    std::vector<std::thread> packers_;  // started once everything above exists
    std::thread worker_;                // last: started once everything above exists
};

}  // namespace evring::detail
