// lib/files/ring_list.hpp — the rings in a directory, for `evring ls`.
//
// Contract: list_rings(directory) looks at every regular file of the
// directory (symbolic links, directories and other special files are
// skipped, never opened), opens each read-only and non-blocking, and reports
// its header when it is a valid ring, or why it is not; plus the pids
// holding its locks (/proc/locks, this pid namespace only) and whether a
// writer lives (the lock probes of ring_reader.hpp). A live writer's
// temporary file (<name>.<its pid>) is not listed, nor a ring's reader
// registry (<name>.readers, recognised by its magic; reader_registry.hpp). Nothing is mapped and no
// lock is taken. Entries are sorted by path.
//
// Thread safety: a plain function; no shared state.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"

namespace evring {

// One entry of `evring ls`.
struct RingFileInfo {
    std::string path;
    std::optional<RingHeader> header;  // copy of the header, when the file is a valid ring
    std::string error;                 // why it is not, otherwise
    std::vector<pid_t> writer_pids;
    bool writer_alive = false;
};

Result<std::vector<RingFileInfo>> list_rings(std::string_view directory);

}  // namespace evring
