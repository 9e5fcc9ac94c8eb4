// lib/util/text_file.hpp — reading small text files such as /proc/locks (private
// to the library).
#pragma once

#include <string>

#include "evring/error.hpp"

namespace evring::detail {

// Reads a whole (small, possibly /proc) file. The error names the path.
Result<std::string> read_text_file(const std::string& path);

}  // namespace evring::detail
