// Private to lib/: opening and reading a recording file as untrusted input.
//
// Thread safety: plain functions over a file descriptor the caller owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "evring/error.hpp"
#include "util/regular_file.hpp"

namespace evring::detail {

// Files are opened with open_regular_file (regular_file.hpp).

// How errors name a recording file: "recording 'PATH'".
inline std::string recording_named(const std::string& path) { return "recording '" + path + "'"; }

// Reads up to `size` bytes at `offset`, fewer only at the end of the file.
Result<std::size_t> read_at(int fd, std::uint64_t offset, void* dst, std::size_t size, std::string_view what);

// The file's current size.
Result<std::uint64_t> file_size(int fd, std::string_view what);

}  // namespace evring::detail
