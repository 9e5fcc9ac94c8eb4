// evring/ring/ring_directory.hpp — where a ring name lives.
//
// Contract:
// - A pure name (no '/') resolves to <dir>/<name>. <dir> is, in order:
//   $EVRING_RING_DIR when set (created when missing); else
//   <hugetlbfs mount>/event-rings for the mount of the system's default huge
//   page size (one whose event-rings directory exists, or that this user may
//   write); else /dev/shm/event-rings, with a warning saying why and how to
//   mount hugetlbfs. The event-rings directory is created (mode 0775) when
//   missing. A name with '/' is returned as written.
// - The hugetlbfs mount is found with libhugetlbfs
//   (hugetlbfs_find_path_for_size, gethugepagesize), which is loaded with
//   dlopen only after our own scan of the mount table shows that every line is
//   short enough for it: libhugetlbfs reads mount lines into a fixed buffer
//   (about 2 KiB) and, on a longer line (overlay mounts in Kubernetes pods),
//   prints an error and finds nothing. Loading it lazily also keeps its
//   load-time constructor from printing before main(). When libhugetlbfs is
//   unusable, our own /proc/self/mountinfo parser (no line-length limit,
//   lib/util/mountinfo.hpp) gives the answer.
// - The fallback warning is printed to stderr at most once per process; it
//   is also returned in RingDirectory::warning every time.
//
// Thread safety: all functions may be called from any thread. The process-wide
// state is the libhugetlbfs answer (computed once) and the "warning printed"
// flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "evring/error.hpp"

namespace evring {

// The environment variable that overrides the ring directory.
inline constexpr const char* kRingDirEnv = "EVRING_RING_DIR";
// The subdirectory of a hugetlbfs mount (or of /dev/shm) that holds rings.
inline constexpr const char* kRingSubdirectory = "event-rings";

// The directory pure names resolve in, and how it was chosen.
struct RingDirectory {
    std::string path;
    bool hugetlbfs = false;
    std::string warning;  // non-empty when a fallback was taken, saying why and how to fix it
};

// What the resolver looks at; the defaults are the real system. Tests point
// these at synthetic files and directories.
struct DirectoryOptions {
    std::string mountinfo_path = "/proc/self/mountinfo";
    std::string meminfo_path = "/proc/meminfo";
    std::string fallback_base = "/dev/shm";
    // Consult libhugetlbfs. Only done when mountinfo_path is the real one,
    // since libhugetlbfs always reads the real mount table.
    bool use_libhugetlbfs = true;
    // Read EVRING_RING_DIR. When false, `ring_dir_override` is used instead.
    bool read_environment = true;
    std::optional<std::string> ring_dir_override;
    // Print the fallback warning to stderr (once per process).
    bool print_warning = true;
};

// Finds (and creates, mode 0775) the default ring directory.
Result<RingDirectory> default_ring_directory();
Result<RingDirectory> default_ring_directory(const DirectoryOptions& options);

// Resolves a name or path as described above.
Result<std::string> resolve_ring_path(std::string_view name_or_path);
Result<std::string> resolve_ring_path(std::string_view name_or_path,
                                      const DirectoryOptions& options);

}  // namespace evring
