// evring/files.hpp — where rings live, who owns them, whether the writer lives.
//
// (Declarations agreed between the core and the tools; implemented in
// lib/files.cpp. See docs/hugepages.md.)
//
// Contract:
// - A pure name (no '/') resolves to <hugetlbfs mount>/event-rings/<name>,
//   the mount being the one for the default huge page size (found with
//   libhugetlbfs, robust to its failures); EVRING_RING_DIR overrides the
//   directory; without a usable hugetlbfs mount, /dev/shm/event-rings is used
//   and one warning says why. A name with '/' is used as written.
// - Writers create rings atomically (temporary file under flock, then
//   renameat2(RENAME_NOREPLACE)); an exclusive writer holds LOCK_EX on the
//   ring for its lifetime, shared writers hold LOCK_SH. A file whose lock
//   nobody holds is a zombie and is reclaimed by the next writer.
// - Readers open read-only and never follow a symbolic link for the ring file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/ring.hpp"

namespace evring {

// The directory pure names resolve in, and how it was chosen.
struct RingDirectory {
    std::string path;
    bool hugetlbfs = false;
    std::string warning;  // non-empty when a fallback was taken, saying why and how to fix it
};

// Finds (and creates, mode 0775) the default ring directory.
Result<RingDirectory> default_ring_directory();

// Resolves a name or path as described above.
Result<std::string> resolve_ring_path(std::string_view name_or_path);

enum class WriterMode { Exclusive, Shared };

struct CreateOptions {
    WriterMode mode = WriterMode::Exclusive;
    mode_t file_mode = 0664;
    bool keep_on_close = false;  // leave the ring file when the writer closes it
};

// A ring this process writes. Holds the ring's lock while alive; removes the
// file on destruction (exclusive mode, unless keep_on_close).
class RingWriter {
public:
    static Result<RingWriter> create(const RingConfig& config, const RingParams& params,
                                     const CreateOptions& options = {});
    RingWriter(RingWriter&&) noexcept;
    RingWriter& operator=(RingWriter&&) noexcept;
    ~RingWriter();

    const MappedRing& ring() const noexcept { return *ring_; }
    const std::string& path() const noexcept { return path_; }

private:
    RingWriter() = default;
    std::optional<MappedRing> ring_;
    std::string path_;
    int fd_ = -1;
    CreateOptions options_;
};

// A ring this process reads.
class RingReader {
public:
    static Result<RingReader> open(std::string_view name_or_path);
    RingReader(RingReader&&) noexcept;
    RingReader& operator=(RingReader&&) noexcept;
    ~RingReader();

    const MappedRing& ring() const noexcept { return *ring_; }
    const std::string& path() const noexcept { return path_; }

    // Pids holding a lock on the ring (from /proc/locks), exclusive holder first.
    std::vector<pid_t> writer_pids() const;
    // Whether any writer still holds a lock on the ring file. Answered by the
    // lock itself, so it is right across pid namespaces.
    bool writer_alive() const;
    // A pidfd that becomes readable when the exclusive writer exits, or -1
    // when there is none (the caller then polls writer_alive()).
    int writer_exit_fd() const noexcept { return writer_pidfd_; }

private:
    RingReader() = default;
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
