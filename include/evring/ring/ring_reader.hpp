// evring/ring/ring_reader.hpp — opening a ring file to read it, and asking whether
// its writer lives.
//
// Contract:
// - open() resolves a pure name like the writer does (ring_directory.hpp),
//   opens the file read-only with O_NOFOLLOW and O_NONBLOCK (a FIFO, device,
//   socket or directory planted at the name is refused with a clear error,
//   never waited on), checks it is a regular file holding a valid RING01
//   header for its size, and maps it (ring.hpp).
// - A reader never takes a lock: it only probes them (F_OFD_GETLK for the
//   writer marker, a momentary LOCK_SH|LOCK_NB on a separate open file
//   description for writers of other implementations), so it cannot disturb
//   or block a writer, and needs only read permission.
// - writer_pids() reads /proc/locks: pids are only meaningful within this
//   pid namespace. writer_alive() is answered by the locks themselves and is
//   right across pid namespaces.
//
// Thread safety: a RingReader is a movable value, not shared between threads
// while being moved or destroyed; its const members may be called from any
// thread. Reading events goes through an Iterator (iterator.hpp), one per
// thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/ring_directory.hpp"

namespace evring {

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
    // The open ring file (read-only), which identifies this ring instance
    // (the reader registry binds itself to it). Owned by the reader.
    int fd() const noexcept { return fd_; }

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

}  // namespace evring
