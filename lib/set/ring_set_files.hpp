// Private to the ring set writer: the set's directory and manifest on disk
// (creating one atomically, joining one, removing one). See ring_set.hpp.
#pragma once

#include <cstddef>
#include <string>

#include "evring/error.hpp"
#include "evring/set/ring_set.hpp"

namespace evring::detail {

// A set directory this writer holds: LOCK_SH on its manifest, which is
// mapped read-write.
struct OpenedSet {
    int dirfd = -1;
    int manifest_fd = -1;
    void* mapping = nullptr;
    std::size_t mapping_size = 0;
    bool created = false;
};

// Creates the set at `path` (a directory in the ring directory) or joins the
// one there when it matches `spec`; replaces a mismatching one nobody writes.
Result<OpenedSet> create_or_join_set(const std::string& path, const RingSetSpec& spec);

// Removes every file in the set directory `dirfd` (members, temporary
// files, the manifest last), then the directory at `path`. Only for a
// writer holding LOCK_EX on the manifest (no other set writer is alive).
void remove_set_directory(int dirfd, const std::string& path);

}  // namespace evring::detail
