#include "recording/recording_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace evring::detail {

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
