// Private to the ring writer: the temporary file <name>.<pid> in which a
// ring is built, locked and mapped before it is renamed to its name.
#pragma once

#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "evring/ring/ring_writer.hpp"

namespace evring::detail {

// Closes an fd unless released.
struct FdGuard {
    int fd = -1;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

// A fully initialised, locked and mapped ring in <name>.<pid>, not yet at its name.
struct TempRing {
    int dirfd = -1;
    std::string name;
    int fd = -1;
    std::optional<MappedRing> ring;

    TempRing() = default;
    TempRing(const TempRing&) = delete;
    TempRing& operator=(const TempRing&) = delete;
    ~TempRing() {
        if (fd >= 0) {
            ::unlinkat(dirfd, name.c_str(), 0);
            ::close(fd);
        }
    }
    int release() { return std::exchange(fd, -1); }
};

// Creates <name>.<pid> in `dirfd` (removing a stale one with our pid that
// nobody holds), takes the writer's flock and marker, sets the mode exactly,
// refuses a ring the huge page pool cannot hold, initialises and maps it.
Status make_temp_ring(TempRing& temp, int dirfd, const std::string& name, const RingParams& params,
                      const CreateOptions& options, std::string_view path);

// Moves the temp into place if nothing is at the name: true when done, false
// when something is there.
Result<bool> rename_no_replace(TempRing& temp, int dirfd, const std::string& name,
                               std::string_view path);

}  // namespace evring::detail
