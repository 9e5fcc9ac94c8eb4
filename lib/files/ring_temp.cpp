// Building a ring in its temporary file. See ring_temp.hpp.
#include "files/ring_temp.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "ring/hugepage_pool.hpp"
#include "ring/ring_locks.hpp"

namespace evring::detail {
namespace {

Status explain_allocation_failure(Status status, int fd, const RingParams& params,
                                  std::string_view path) {
    if (status.ok() || status.error().errno_value() != ENOSPC) return status;
    auto backing = backing_pages_of(fd, path);
    if (!backing || !backing->hugetlbfs) return status;
    // posix_fallocate may have taken part of the pool before failing: give
    // those pages back so the figures describe the pool without us.
    if (::ftruncate(fd, 0) != 0) return status;
    auto pool = read_huge_page_pool(backing->page_size);
    if (!pool) return status;
    return Error(ENOSPC, pool_shortage_message(path, RingLayout::of(params.size()).file_size, *pool));
}

// On hugetlbfs, refuses a ring larger than the pool's available pages before
// allocating anything: a failing posix_fallocate would first take every free
// page, briefly starving other users of the pool. (The ENOSPC check above
// still covers races and a mount's size= limit.)
Status check_pool_has_room(int fd, const RingParams& params, std::string_view path) {
    auto backing = backing_pages_of(fd, path);
    if (!backing || !backing->hugetlbfs) return {};
    if (!validate_ring_size(params.size(), backing->page_size)) return {};  // initialize explains
    auto pool = read_huge_page_pool(backing->page_size);
    if (!pool) return {};
    const std::uint64_t file_size = RingLayout::of(params.size()).file_size;
    if ((file_size + pool->page_size - 1) / pool->page_size <= pool->available()) return {};
    return Error(ENOSPC, pool_shortage_message(path, file_size, *pool));
}

}  // namespace

Status make_temp_ring(TempRing& temp, int dirfd, const std::string& name, const RingParams& params,
                      const CreateOptions& options, std::string_view path) {
    const bool exclusive = options.mode == WriterProcesses::One;
    temp.dirfd = dirfd;
    temp.name = name + "." + std::to_string(::getpid());
    for (int attempt = 0; attempt < 2; ++attempt) {
        int fd = ::openat(dirfd, temp.name.c_str(),
                          O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, options.file_mode);
        if (fd >= 0) {
            temp.fd = fd;
            break;
        }
        if (errno != EEXIST)
            return Error::from_errno(errno, "creating temporary ring file '" + temp.name + "' for '" +
                                                std::string(path) + "'");
        // A leftover with our pid: stale if nobody holds its lock.
        FdGuard old{::openat(dirfd, temp.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
        if (old.fd < 0 || ::flock(old.fd, LOCK_EX | LOCK_NB) != 0)
            return Error(EBUSY, "temporary ring file '" + temp.name + "' for '" + std::string(path) +
                                    "' is in use by another writer with pid " +
                                    std::to_string(::getpid()) +
                                    " (this process, or one in another pid namespace)");
        ::unlinkat(dirfd, temp.name.c_str(), 0);
    }
    if (temp.fd < 0) return Error(EEXIST, "temporary ring file '" + temp.name + "' keeps reappearing");
    // Nobody else can know this name yet; the lock is for readers' probes and
    // for a later writer deciding whether a leftover temp is stale.
    if (::flock(temp.fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0)
        return Error::from_errno(errno, "locking temporary ring file '" + temp.name + "'");
    if (auto s = hold_writer_marker(temp.fd, exclusive, path); !s) return s;
    // The requested mode exactly, whatever the umask.
    if (::fchmod(temp.fd, options.file_mode) != 0)
        return Error::from_errno(errno, "setting the mode of '" + temp.name + "'");
    if (auto s = check_pool_has_room(temp.fd, params, path); !s) return s;
    if (auto s = explain_allocation_failure(initialize_ring_file(temp.fd, params, path), temp.fd,
                                            params, path);
        !s)
        return s;
    auto ring = MappedRing::map(temp.fd, Access::ReadWrite, std::string(path));
    if (!ring) return std::move(ring).error();
    temp.ring.emplace(std::move(ring).value());
    return {};
}

Result<bool> rename_no_replace(TempRing& temp, int dirfd, const std::string& name,
                               std::string_view path) {
    if (::renameat2(dirfd, temp.name.c_str(), dirfd, name.c_str(), RENAME_NOREPLACE) == 0) return true;
    if (errno == EEXIST) return false;
    if (errno != EINVAL)
        return Error::from_errno(errno, "renaming '" + temp.name + "' to '" + std::string(path) + "'");
    // A file system without RENAME_NOREPLACE: link(2) also never replaces.
    if (::linkat(dirfd, temp.name.c_str(), dirfd, name.c_str(), 0) != 0) {
        if (errno == EEXIST) return false;
        return Error::from_errno(errno, "linking '" + temp.name + "' to '" + std::string(path) + "'");
    }
    ::unlinkat(dirfd, temp.name.c_str(), 0);
    return true;
}

}  // namespace evring::detail
