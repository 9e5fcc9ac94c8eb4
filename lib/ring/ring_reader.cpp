// Opening rings for reading, and writer liveness. See ring_reader.hpp and
// ring_locks.hpp for the contracts.
#include "evring/ring/ring_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "ring/ring_locks.hpp"
#include "ring/ring_open.hpp"

namespace evring {
namespace {

using detail::LockHolder;
using detail::LockKind;

// A pidfd for the exclusive flock holder, or -1. The pid is read from
// /proc/locks and then confirmed to still hold the lock after the pidfd is
// open, so the pidfd cannot belong to a process that reused a dead writer's pid.
int exclusive_writer_pidfd(int fd) {
    auto before = detail::lock_holders(fd);
    if (!before) return -1;
    pid_t pid = 0;
    for (const LockHolder& h : *before)
        if (h.kind == LockKind::Flock && h.exclusive && h.pid > 0) pid = h.pid;
    if (pid == 0) return -1;
    int pidfd = detail::open_pidfd(pid);
    if (pidfd < 0) return -1;
    auto after = detail::lock_holders(fd);
    bool confirmed = after && std::any_of(after->begin(), after->end(), [&](const LockHolder& h) {
        return h.kind == LockKind::Flock && h.exclusive && h.pid == pid;
    });
    if (!confirmed) {
        ::close(pidfd);
        return -1;
    }
    return pidfd;
}

}  // namespace

Result<RingReader> RingReader::open(std::string_view name_or_path) {
    return open(name_or_path, DirectoryOptions{});
}

Result<RingReader> RingReader::open(std::string_view name_or_path, const DirectoryOptions& directory) {
    auto path = resolve_ring_path(name_or_path, directory);
    if (!path) return std::move(path).error();
    auto split = detail::split_ring_path(*path);
    if (!split) return std::move(split).error();
    auto dirfd = detail::open_ring_directory(*split, *path);
    if (!dirfd) return std::move(dirfd).context("opening ring").error();
    auto opened = detail::open_ring_file_at(*dirfd, split->name, O_RDONLY, *path);
    ::close(*dirfd);
    if (!opened) return std::move(opened).error();

    RingReader reader;
    reader.fd_ = *opened;  // from here on the destructor closes it
    auto ring = MappedRing::map(reader.fd_, Access::ReadOnly, *path);
    if (!ring) return std::move(ring).error();
    reader.ring_.emplace(std::move(ring).value());
    reader.path_ = std::move(path).value();
    reader.writer_pidfd_ = exclusive_writer_pidfd(reader.fd_);
    return reader;
}

RingReader::RingReader(RingReader&& other) noexcept { *this = std::move(other); }

RingReader& RingReader::operator=(RingReader&& other) noexcept {
    if (this != &other) {
        close();
        ring_ = std::move(other.ring_);
        other.ring_.reset();
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        writer_pidfd_ = std::exchange(other.writer_pidfd_, -1);
    }
    return *this;
}

RingReader::~RingReader() { close(); }

void RingReader::close() noexcept {
    ring_.reset();
    if (fd_ >= 0) ::close(fd_);
    if (writer_pidfd_ >= 0) ::close(writer_pidfd_);
    fd_ = -1;
    writer_pidfd_ = -1;
}

std::vector<pid_t> RingReader::writer_pids() const {
    auto holders = detail::lock_holders(fd_);
    if (!holders) return {};
    return detail::flock_holder_pids(*holders);
}

bool RingReader::writer_alive() const { return detail::any_writer_alive(fd_); }

}  // namespace evring
