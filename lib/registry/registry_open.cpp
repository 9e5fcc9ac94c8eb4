// Opening reader registry files. See registry_open.hpp.
#include "registry/registry_open.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "evring/ring/ring.hpp"
#include "util/regular_file.hpp"

namespace evring::detail {

void UniqueFd::reset(int fd) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

Result<RegistryLocation> open_registry_directory(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    RegistryLocation at;
    std::string directory = slash == std::string::npos ? "." : path.substr(0, slash);
    if (directory.empty()) directory = "/";
    at.name = slash == std::string::npos ? path : path.substr(slash + 1);
    at.path = path;
    if (at.name.empty() || at.name == "." || at.name == "..")
        return Error(EINVAL,
                     fmt::format("reader registry path '{}' does not end in a file name", path));
    const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return Error::from_errno(
            errno,
            fmt::format("opening the directory '{}' of reader registry '{}'", directory, path));
    at.dir.reset(dir);
    return at;
}

Result<int> open_registry_file(const RegistryLocation& at, int access) {
    // O_NONBLOCK: a FIFO planted at the name opens at once and is refused below.
    const int fd =
        ::openat(at.dir.get(), at.name.c_str(), access | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == ELOOP)
            return Error(
                err, fmt::format("reader registry '{}' is a symbolic link; registries are never "
                                 "opened through one",
                                 at.path));
        if (err == ENOENT)
            return Error(err, fmt::format("reader registry '{}' does not exist", at.path));
        return Error::from_errno(err, fmt::format("opening reader registry '{}' {}", at.path,
                                                  access == O_RDWR ? "to write" : "to read"));
    }
    if (auto s = check_regular_file(fd, fmt::format("reader registry '{}'", at.path)); !s) {
        ::close(fd);
        return std::move(s).error();
    }
    return fd;
}

Result<HeaderRead> read_registry_header(int fd, const std::string& path) {
    HeaderRead read;
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return Error::from_errno(errno, fmt::format("examining reader registry '{}'", path));
    read.file_size = static_cast<std::uint64_t>(st.st_size);
    const ssize_t n = ::pread(fd, &read.header, sizeof read.header, 0);
    if (n < 0) return Error::from_errno(errno, fmt::format("reading reader registry '{}'", path));
    read.bytes_read = static_cast<std::size_t>(n);
    auto backing = backing_pages_of(fd, path);
    if (!backing) return std::move(backing).error();
    read.page_size = backing->page_size;
    return read;
}

}  // namespace evring::detail
