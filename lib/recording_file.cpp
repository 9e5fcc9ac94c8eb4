#include "recording_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace evring::detail {
namespace {

const char* file_type(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

}  // namespace

Result<int> open_regular_file(const std::string& path, std::string_view what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        // A socket cannot be opened at all (ENXIO): say what it is instead.
        const int err = errno;
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            return Error(EINVAL, fmt::format("{} is {}, not a regular file", what, file_type(st.st_mode)));
        return Error::from_errno(err, fmt::format("opening {}", what));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return Error::from_errno(err, fmt::format("examining {}", what));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error(EINVAL, fmt::format("{} is {}, not a regular file", what, file_type(st.st_mode)));
    }
    return fd;
}

Result<std::size_t> read_at(int fd, std::uint64_t offset, void* dst, std::size_t size, std::string_view what) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, static_cast<char*>(dst) + done, size - done,
                                  static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Error::from_errno(errno, fmt::format("reading {} at offset {}", what, offset + done));
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

Result<std::uint64_t> file_size(int fd, std::string_view what) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, fmt::format("examining {}", what));
    return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace evring::detail
