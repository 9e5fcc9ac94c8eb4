// Opening regular files only. See regular_file.hpp.
#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace evring::detail {

std::string_view file_type_name(mode_t mode) noexcept {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "an unknown kind of file";
}

Status check_regular_file(int fd, std::string_view what) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, fmt::format("examining {}", what));
    if (S_ISREG(st.st_mode)) return {};
    return Error(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                 fmt::format("{} is {}, not a regular file", what, file_type_name(st.st_mode)));
}

Result<int> open_regular_file(const std::string& path, std::string_view what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        // A socket cannot be opened at all (ENXIO): say what it is instead.
        const int err = errno;
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            return Error(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                         fmt::format("{} is {}, not a regular file", what, file_type_name(st.st_mode)));
        return Error::from_errno(err, fmt::format("opening {}", what));
    }
    if (auto s = check_regular_file(fd, what); !s) {
        ::close(fd);
        return std::move(s).error();
    }
    return fd;
}

}  // namespace evring::detail
