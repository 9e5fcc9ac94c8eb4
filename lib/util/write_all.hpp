// Private to lib/: writing a whole buffer to a file descriptor.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "evring/error.hpp"

namespace evring::detail {

// Writes all `size` bytes, retrying short writes and EINTR. On failure the
// error reads "writing <what>: <strerror>".
inline Status write_all(int fd, const void* data, std::size_t size, const std::string& what) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(errno, "writing " + what);
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return {};
}

}  // namespace evring::detail
