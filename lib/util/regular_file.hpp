// lib/util/regular_file.hpp — opening a file only when it is a regular file
// (private to the library).
//
// Every file evring reads as a ring, a snapshot or a recording is untrusted:
// a FIFO planted under a ring's name would make a plain open(2) or read(2)
// wait forever, and a device or socket is never a ring. So files are opened
// with O_NONBLOCK (a FIFO opens at once), checked with fstat, and refused
// with a message naming what they are before anything is read.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "evring/error.hpp"

namespace evring::detail {

// "a FIFO", "a directory", "a character device", "a block device",
// "a socket", "a symbolic link", or "not a regular file".
std::string_view file_type_name(mode_t mode) noexcept;

// Fails (EINVAL, EISDIR for a directory) unless `fd` is a regular file; the
// message reads "<what> is <a FIFO>, not a regular file".
Status check_regular_file(int fd, std::string_view what);

// Opens `path` read-only, close-on-exec and non-blocking, and checks it is a
// regular file. `what` names the file in errors ("snapshot 'x.zst'").
Result<int> open_regular_file(const std::string& path, std::string_view what);

}  // namespace evring::detail
