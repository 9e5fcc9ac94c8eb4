// Private to lib/: the recording writer's worker thread.
//
// The thread that follows the ring only stages records; the sink's worker
// encodes each staged block (zstd or raw, checksums, recording_block.hpp) and
// writes it with one writev, so the follower never waits for zstd or write(2)
// unless the worker is kMaxQueuedBytes behind.
//
// Thread safety: submit, spare_buffer and drain are called by the writer's
// thread; the worker owns the encoder and every write to a file it was
// handed. They meet only in the members under `mutex_`. Jobs are processed
// in submission order, so blocks reach each file in order.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/byte_buffer.hpp"
#include "evring/error.hpp"
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
    };

    // `on_block`: RecordingOptions::on_block (may be empty).
    RecordingSink(bool compress, int level, std::function<void(const BlockProgress&)> on_block = {});
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
    Status process(Job& job);
    Status write_index(const Job& job);

    void tell(const Job& job, bool written) const;

    std::function<void(const BlockProgress&)> on_block_;
    BlockEncoder encoder_;  // the worker's alone
    IndexBuilder index_;    // the worker's alone
    std::mutex mutex_;
    std::condition_variable work_, room_, idle_;
    std::deque<Job> queue_;
    std::size_t queued_bytes_ = 0;
    std::vector<ByteBuffer> spares_;
    std::optional<Error> error_;
    bool busy_ = false;
    bool stopping_ = false;
    std::thread worker_;  // last: started once everything above exists
};

}  // namespace evring::detail
