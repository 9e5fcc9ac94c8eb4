#include "ring/ring_open.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evring/format.hpp"
#include "evring/ring/ring.hpp"
#include "util/regular_file.hpp"
#include "ring/ring_locks.hpp"

namespace evring::detail {

Result<SplitPath> split_ring_path(std::string_view path) {
    std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return SplitPath{".", std::string(path)};
    SplitPath split{std::string(path.substr(0, slash)), std::string(path.substr(slash + 1))};
    if (split.directory.empty()) split.directory.assign(1, '/');
    if (split.name.empty() || split.name == "." || split.name == "..")
        return Error(EINVAL, "ring path '" + std::string(path) + "' does not end in a file name");
    return split;
}

Result<int> open_ring_directory(const SplitPath& split, std::string_view path) {
    int fd = ::open(split.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        std::string what = "the directory '" + split.directory + "' of ring path '" +
                           std::string(path) + "'";
        if (err == ENOENT) return Error(err, what + " does not exist");
        if (err == ENOTDIR) return Error(err, what + " is not a directory");
        return Error::from_errno(err, "opening " + what);
    }
    return fd;
}

Result<int> open_ring_file_at(int dirfd, const std::string& name, int access_flags,
                              std::string_view path) {
    // O_NONBLOCK: opening a FIFO planted at the name must not hang us.
    int fd = ::openat(dirfd, name.c_str(), access_flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ELOOP)
            return Error(err, "ring path '" + std::string(path) +
                                  "' is a symbolic link; ring files are never opened through one");
        if (err == ENOENT) return Error(err, "ring file '" + std::string(path) + "' does not exist");
        if (err == EISDIR)
            return Error(err, "ring path '" + std::string(path) + "' is a directory, not a ring file");
        return Error::from_errno(err, "opening ring file '" + std::string(path) + "'");
    }
    if (auto s = check_regular_file(fd, "ring path '" + std::string(path) + "'"); !s) {
        ::close(fd);
        return std::move(s).error();
    }
    return fd;
}

bool still_at_path(int dirfd, const std::string& name, int fd) {
    struct stat at_path {};
    struct stat held {};
    if (::fstatat(dirfd, name.c_str(), &at_path, AT_SYMLINK_NOFOLLOW) != 0) return false;
    if (::fstat(fd, &held) != 0) return false;
    return at_path.st_dev == held.st_dev && at_path.st_ino == held.st_ino;
}

Status check_is_ring(int fd, std::string_view path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return Error::from_errno(errno, "examining ring file '" + std::string(path) + "'");
    RingHeader header{};
    ssize_t n = ::pread(fd, &header, sizeof header, 0);
    if (n < 0) return Error::from_errno(errno, "reading the header of '" + std::string(path) + "'");
    Status valid = static_cast<std::size_t>(n) < sizeof header
                       ? Status(Error(EINVAL, "file is " + std::to_string(n) +
                                                  " bytes, too short for a ring header"))
                       : validate_header(header, static_cast<std::uint64_t>(st.st_size));
    if (!valid)
        return std::move(valid).context(std::string("'").append(path).append("' is not an event ring")).error();
    return {};
}

Error held_by_live_writer(int fd, std::string_view path) {
    std::string message = "ring '" + std::string(path) + "' is in use by a live writer";
    auto holders = lock_holders(fd);
    std::vector<pid_t> pids;
    bool shared = false;
    if (holders) {
        pids = flock_holder_pids(*holders);
        for (const LockHolder& h : *holders)
            if (h.kind == LockKind::Flock && !h.exclusive) shared = true;
    }
    if (pids.empty()) {
        message += " (its pid is not visible in this pid namespace)";
    } else {
        message += pids.size() == 1 ? " (pid " : " (pids ";
        for (std::size_t i = 0; i < pids.size(); ++i)
            message += (i == 0 ? "" : ", ") + std::to_string(pids[i]);
        message += shared ? ", shared writers)" : ")";
    }
    return Error(EBUSY, message);
}

}  // namespace evring::detail
