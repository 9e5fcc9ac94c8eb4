// evring/files.hpp — where rings live, who owns them, whether the writer lives.
//
// (Implemented in lib/ring_directory.cpp, lib/mountinfo.cpp,
// lib/ring_writer.cpp, lib/ring_temp.cpp, lib/ring_reader.cpp,
// lib/ring_open.cpp, lib/ring_locks.cpp, lib/hugepage_pool.cpp. See
// docs/hugepages.md.)
//
// Contract:
// - A pure name (no '/') resolves to <hugetlbfs mount>/event-rings/<name>,
//   the mount being the one for the default huge page size (found with
//   libhugetlbfs, robust to its failures); EVRING_RING_DIR overrides the
//   directory; without a usable hugetlbfs mount, /dev/shm/event-rings is used
//   and one warning says why. A name with '/' is used as written
//   (ring_directory.hpp).
// - Writers create rings atomically (temporary file <name>.<pid> under flock,
//   then renameat2(RENAME_NOREPLACE)); an exclusive writer holds LOCK_EX on the
//   ring for its lifetime, shared writers hold LOCK_SH (ring_locks.hpp). A file
//   whose lock nobody holds is a zombie and is reclaimed by the next writer;
//   of two writers reclaiming one zombie exactly one wins. A file at the name
//   that is not a ring, a directory or a symbolic link is refused, never
//   replaced.
// - Ring files are opened with O_NOFOLLOW and created with
//   CreateOptions::file_mode exactly (the umask does not apply).
// - A writer's destructor removes the file when the file at the path is still
//   the one it wrote (same device and inode), unless keep_on_close; among
//   shared writers the last one to close removes it.
// - Readers open read-only and only probe locks (never hold one), so they
//   cannot disturb a writer.
//
// Thread safety: RingWriter and RingReader are movable values, not shared
// between threads while being moved or destroyed; their const members may be
// called from any thread. Across processes, the locks above are the protocol.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/hugepage_pool.hpp"
#include "evring/ring.hpp"
#include "evring/ring_directory.hpp"
#include "evring/ring_locks.hpp"

namespace evring {

// RingDirectory, default_ring_directory() and resolve_ring_path() are
// declared in ring_directory.hpp.

enum class WriterMode { Exclusive, Shared };

struct CreateOptions {
    WriterMode mode = WriterMode::Exclusive;
    mode_t file_mode = 0664;
    bool keep_on_close = false;  // leave the ring file when the writer closes it
    DirectoryOptions directory;  // how a pure name is resolved
};

// A ring this process writes. Holds the ring's locks while alive; removes the
// file on destruction unless keep_on_close (in shared mode, only the last
// writer to close removes it).
class RingWriter {
public:
    static Result<RingWriter> create(const RingConfig& config, const RingParams& params,
                                     const CreateOptions& options = {});
    RingWriter(RingWriter&&) noexcept;
    RingWriter& operator=(RingWriter&&) noexcept;
    ~RingWriter();

    const MappedRing& ring() const noexcept { return *ring_; }
    const std::string& path() const noexcept { return path_; }
    WriterMode mode() const noexcept { return options_.mode; }
    // True when this writer made the file (rather than joining a shared ring).
    bool created() const noexcept { return created_; }
    // True when a zombie (a ring file nobody held) was replaced or joined.
    bool reclaimed_zombie() const noexcept { return reclaimed_zombie_; }

private:
    RingWriter() = default;
    void close() noexcept;

    std::optional<MappedRing> ring_;
    std::string path_;
    int fd_ = -1;
    CreateOptions options_;
    dev_t device_ = 0;
    ino_t inode_ = 0;
    bool created_ = false;
    bool reclaimed_zombie_ = false;
};

// A ring this process reads.
class RingReader {
public:
    static Result<RingReader> open(std::string_view name_or_path);
    static Result<RingReader> open(std::string_view name_or_path,
                                   const DirectoryOptions& directory);
    RingReader(RingReader&&) noexcept;
    RingReader& operator=(RingReader&&) noexcept;
    ~RingReader();

    const MappedRing& ring() const noexcept { return *ring_; }
    const std::string& path() const noexcept { return path_; }

    // Pids holding an flock on the ring (from /proc/locks), exclusive holder
    // first; empty when the writers' pids are not visible in this pid namespace.
    std::vector<pid_t> writer_pids() const;
    // Whether any writer still holds a lock on the ring file. Answered by the
    // lock itself, so it is right across pid namespaces.
    bool writer_alive() const;
    // A pidfd that becomes readable when the exclusive writer exits, or -1
    // when there is none (shared writers, a zombie, a pid not visible here);
    // the caller then polls writer_alive(). Owned by the reader.
    int writer_exit_fd() const noexcept { return writer_pidfd_; }

private:
    RingReader() = default;
    void close() noexcept;

    std::optional<MappedRing> ring_;
    std::string path_;
    int fd_ = -1;
    int writer_pidfd_ = -1;
};

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
