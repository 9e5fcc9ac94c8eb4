// Private helpers shared by the ring writer and reader: opening a ring file
// safely (never through a symbolic link, never blocking on a FIFO), and
// describing who holds a ring.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "evring/error.hpp"

namespace evring::detail {

// A ring path split into its directory and its last component.
struct SplitPath {
    std::string directory;
    std::string name;
};
Result<SplitPath> split_ring_path(std::string_view path);

// Opens the directory that holds a ring (error names the ring path).
Result<int> open_ring_directory(const SplitPath& split, std::string_view path);

// Opens `name` in `dirfd` with O_NOFOLLOW and checks it is a regular file;
// a symbolic link, directory or other non-regular file is refused with a
// message naming `path`. ENOENT is returned as is (errno_value() == ENOENT).
Result<int> open_ring_file_at(int dirfd, const std::string& name, int access_flags,
                              std::string_view path);

// Whether `name` in `dirfd` is (still) the file with this device and inode.
bool still_at_path(int dirfd, const std::string& name, int fd);

// Checks that `fd` holds a complete ring header for its size.
Status check_is_ring(int fd, std::string_view path);

// EBUSY error: "ring 'p' is in use by a live writer (pid N)".
Error held_by_live_writer(int fd, std::string_view path);

}  // namespace evring::detail
