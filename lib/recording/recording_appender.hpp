// Private to lib/recording: how the recording sink's worker puts a file's
// blocks after what the file holds, through the page cache or around it.
//
// Direct I/O (O_DIRECT, RecordingIo::Direct) hands whole alignment units
// from an aligned buffer to the device: no page is allocated, charged,
// copied into and later written back by a kernel thread for the recording,
// and a long recording does not push everything else out of the page cache.
// It costs the recorder's core less per byte (scripts/file_write_cost.py
// --direct), but each write waits for the device, so a burst faster than the
// disk loses events that the page cache would have taken in: buffered stays
// the default (docs/recording-format.md, "The page cache's share", has both
// measured).
//
// The unit an append leaves partly filled stays in the buffer (held) until a
// later append completes it; settle() writes it through the page cache, as a
// flush must make every record readable. The next direct write rewrites that
// unit whole, and the kernel writes back and drops its cached copy first, so
// the file only ever shows the bytes appended, and never past them.
//
// written() is what a reader can read: every byte before it is in the file.
// The sink tells on_block that a block is written only once written() has
// passed its last byte (recording_sink.cpp).
//
// Buffered (RecordingIo::Buffered, the default, or a filesystem without
// direct I/O, such as tmpfs, under Direct), an append is one writev and
// nothing is held. A direct write the filesystem refuses (EINVAL) turns the
// file buffered for good, the held bytes written through the page cache.
//
// Thread safety: one thread (the sink's worker) uses an appender.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "evring/error.hpp"
#include "recording/recording_writer.hpp"

namespace evring::detail {

class FileAppender {
public:
    FileAppender() = default;
    FileAppender(const FileAppender&) = delete;
    FileAppender& operator=(const FileAppender&) = delete;
    ~FileAppender();

    // Appends to `fd` (opened read-write), whose first `offset` bytes the
    // caller wrote; `path` names it in errors. Direct I/O under Direct when
    // the filesystem reports its alignment (statx STATX_DIOALIGN); under
    // DirectAnywhere wherever the kernel takes O_DIRECT.
    Status start(int fd, std::uint64_t offset, const std::string& path, RecordingIo io);
    // `head` then `body`, after everything appended before.
    Status append(std::span<const std::byte> head, std::span<const std::byte> body);
    // Writes the held bytes through the page cache: written() == end().
    Status settle();
    // Forgets the file (the caller closes it); held bytes are not written.
    void stop() noexcept;

    bool started() const noexcept { return fd_ >= 0; }
    bool direct() const noexcept { return direct_; }
    std::uint64_t written() const noexcept { return written_; }
    std::uint64_t end() const noexcept { return unit_offset_ + held_; }

    // Bodies above this go through the page cache (after the held bytes), so
    // that a huge event's block is never copied into the aligned buffer.
    static constexpr std::size_t kMaxDirectBody = std::size_t{4} << 20;

private:
    bool choose_direct(RecordingIo io);
    Status set_direct(bool on);
    Status reserve(std::size_t bytes);
    // Reads the start of the unit `written_` falls in back into the buffer.
    Status rebase();
    // The buffer's first `bytes` (whole units) at unit_offset_, direct.
    Status write_units(std::size_t bytes);
    Status write_buffered(std::span<const std::byte> head, std::span<const std::byte> body, std::uint64_t at);
    Status turn_buffered();

    int fd_ = -1;
    std::string path_;
    bool direct_ = false;
    std::size_t unit_ = 4096;
    std::byte* buffer_ = nullptr;  // unit_-aligned
    std::size_t capacity_ = 0;
    std::uint64_t unit_offset_ = 0;  // the file offset of buffer_[0], a multiple of unit_
    std::size_t held_ = 0;           // bytes in buffer_, all appended; less than unit_ between calls
    std::uint64_t written_ = 0;
};

}  // namespace evring::detail
