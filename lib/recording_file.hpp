// Private to lib/: opening and reading a recording file as untrusted input.
//
// Thread safety: plain functions over a file descriptor the caller owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "evring/error.hpp"

namespace evring::detail {

// Opens `path` read-only without blocking (a FIFO would block open(2)) and
// checks with fstat that it is a regular file; anything else is an error
// naming the path and what it is ("a FIFO", "a directory", ...).
Result<int> open_regular_file(const std::string& path, std::string_view what);

// Reads up to `size` bytes at `offset`, fewer only at the end of the file.
Result<std::size_t> read_at(int fd, std::uint64_t offset, void* dst, std::size_t size, std::string_view what);

// The file's current size.
Result<std::uint64_t> file_size(int fd, std::string_view what);

}  // namespace evring::detail
