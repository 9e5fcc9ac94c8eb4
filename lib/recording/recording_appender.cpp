// A recording file's appends, direct or buffered (recording_appender.hpp).
#include "recording/recording_appender.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "recording/recording_file.hpp"

namespace evring::detail {
namespace {

constexpr std::size_t kMinUnit = 4096;

std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

FileAppender::~FileAppender() { std::free(buffer_); }

Status FileAppender::start(int fd, std::uint64_t offset, const std::string& path, RecordingIo io) {
    fd_ = fd;
    path_ = path;
    unit_offset_ = offset;
    held_ = 0;
    written_ = offset;
    direct_ = choose_direct(io);
    if (!direct_) return {};
    if (auto s = rebase(); !s) return s;
    if (auto s = set_direct(true); !s) direct_ = false;  // the kernel does not take O_DIRECT here: buffered
    return {};
}

// Direct: the filesystem says how to align (tmpfs says nothing: there is no
// device to go around to). DirectAnywhere: wherever fcntl takes O_DIRECT, in
// units of at least a page.
bool FileAppender::choose_direct(RecordingIo io) {
    unit_ = kMinUnit;
    if (io == RecordingIo::Buffered) return false;
    struct statx sx {};
    const bool reported = ::statx(fd_, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
                          (sx.stx_mask & STATX_DIOALIGN) != 0 && sx.stx_dio_offset_align != 0;
    if (reported) unit_ = std::max<std::size_t>({kMinUnit, sx.stx_dio_offset_align, sx.stx_dio_mem_align});
    return reported || io == RecordingIo::DirectAnywhere;
}

Status FileAppender::set_direct(bool on) {
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) != 0)
        return Error::from_errno(errno, (on ? "direct I/O on " : "buffered I/O on ") + recording_named(path_));
    return {};
}

Status FileAppender::reserve(std::size_t bytes) {
    if (bytes <= capacity_) return {};
    const std::size_t capacity = round_up(std::max(bytes, 2 * capacity_), unit_);
    void* grown = std::aligned_alloc(unit_, capacity);
    if (grown == nullptr) return Error(ENOMEM, "no memory for the direct writes of " + recording_named(path_));
    if (held_ > 0) std::memcpy(grown, buffer_, held_);
    std::free(buffer_);
    buffer_ = static_cast<std::byte*>(grown);
    capacity_ = capacity;
    return {};
}

// The unit written_ falls in starts before it: its first bytes are in the
// file (the header, or what went through the page cache), and the next
// direct write must carry them. Read through the page cache (O_DIRECT off,
// as it is when start calls this): a direct read would need the alignment.
Status FileAppender::rebase() {
    unit_offset_ = written_ / unit_ * unit_;
    held_ = 0;
    const auto head = static_cast<std::size_t>(written_ - unit_offset_);
    if (auto s = reserve(unit_); !s) return s;
    auto read = read_at(fd_, unit_offset_, buffer_, head, recording_named(path_));
    if (!read) return std::move(read).error();
    if (*read < head) return Error(EIO, "reading back the start of " + recording_named(path_) + ": the file is shorter");
    held_ = head;
    return {};
}

Status FileAppender::append(std::span<const std::byte> head, std::span<const std::byte> body) {
    if (!direct_ || body.size() > kMaxDirectBody) {
        if (direct_) {
            // Around the buffer: what it holds first, then this, then a new unit.
            if (auto s = settle(); !s) return s;
            if (auto s = set_direct(false); !s) return s;
            Status status = write_buffered(head, body, written_);
            if (status) written_ += head.size() + body.size();
            if (status) status = rebase();
            if (auto s = set_direct(true); !s && status) return s;
            return status;
        }
        if (auto s = write_buffered(head, body, unit_offset_); !s) return s;
        unit_offset_ += head.size() + body.size();
        written_ = unit_offset_;
        return {};
    }
    if (auto s = reserve(round_up(held_ + head.size() + body.size(), unit_)); !s) return s;
    std::memcpy(buffer_ + held_, head.data(), head.size());
    held_ += head.size();
    if (!body.empty()) std::memcpy(buffer_ + held_, body.data(), body.size());
    held_ += body.size();
    const std::size_t whole = held_ / unit_ * unit_;
    return whole > 0 ? write_units(whole) : Status{};
}

Status FileAppender::write_units(std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes) {
        const ssize_t n = ::pwrite(fd_, buffer_ + done, bytes - done, static_cast<off_t>(unit_offset_ + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL) return turn_buffered();  // the filesystem refuses these alignments
        if (n <= 0) return Error::from_errno(n < 0 ? errno : EIO, "writing " + recording_named(path_));
        done += static_cast<std::size_t>(n);
        if (done % unit_ != 0) return turn_buffered();  // a short write mid-unit: go on buffered
    }
    std::memmove(buffer_, buffer_ + bytes, held_ - bytes);
    unit_offset_ += bytes;
    held_ -= bytes;
    written_ = std::max(written_, unit_offset_);
    return {};
}

// Everything held, through the page cache, and no direct I/O from now on.
Status FileAppender::turn_buffered() {
    if (auto s = set_direct(false); !s) return s;
    direct_ = false;
    if (auto s = write_buffered({buffer_, held_}, {}, unit_offset_); !s) return s;
    unit_offset_ += held_;
    held_ = 0;
    written_ = unit_offset_;
    return {};
}

Status FileAppender::settle() {
    if (!direct_ || written_ >= end()) return {};
    // The unit's start is rewritten with the bytes it already has.
    if (auto s = set_direct(false); !s) return s;
    Status status = write_buffered({buffer_, held_}, {}, unit_offset_);
    if (status) written_ = end();
    if (auto s = set_direct(true); !s && status) return s;
    return status;
}

void FileAppender::stop() noexcept {
    fd_ = -1;
    held_ = 0;
    direct_ = false;
}

// One pwritev of `head` and `body` at `at`, retrying short writes.
Status FileAppender::write_buffered(std::span<const std::byte> head, std::span<const std::byte> body,
                                    std::uint64_t at) {
    iovec iov[2] = {{const_cast<std::byte*>(head.data()), head.size()},
                    {const_cast<std::byte*>(body.data()), body.size()}};
    int first = 0;
    while (first < 2 && iov[first].iov_len == 0) ++first;
    while (first < 2) {
        const ssize_t n = ::pwritev(fd_, iov + first, 2 - first, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Error::from_errno(n < 0 ? errno : EIO, "writing " + recording_named(path_));
        at += static_cast<std::uint64_t>(n);
        auto left = static_cast<std::size_t>(n);
        while (first < 2 && left >= iov[first].iov_len) left -= iov[first++].iov_len;
        if (first < 2) {
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
            iov[first].iov_len -= left;
        }
    }
    return {};
}

}  // namespace evring::detail
