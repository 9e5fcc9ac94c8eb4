// lib/ring/snapshot_support.hpp — private helpers shared by snapshot_load.cpp and
// snapshot.cpp (not installed). Plain RAII holders and the snapshot's name.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ring/snapshot.hpp"

namespace evring::snapshot_detail {

inline constexpr std::size_t kChunk = std::size_t{1} << 20;

inline std::string snapshot_named(std::string_view path) {
    return "snapshot '" + std::string(path) + "'";
}

struct FileDescriptor {
    int fd = -1;
    FileDescriptor() = default;
    explicit FileDescriptor(int value) : fd(value) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

struct Mapping {
    void* at = MAP_FAILED;
    std::size_t size = 0;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(void* a, std::size_t s) : at(a), size(s) {}
    ~Mapping() {
        if (at != MAP_FAILED) ::munmap(at, size);
    }
    std::byte* bytes() const { return static_cast<std::byte*>(at); }
};

// Loads the one snapshot frame in bytes [offset, offset + length) of the
// open file `fd` (a member of a set snapshot, ring_set_snapshot.hpp); bytes
// after the frame within the range are an error, as after a snapshot file's.
// `name` becomes the ring's path().
Result<LoadedSnapshot> load_snapshot_range(int fd, std::uint64_t offset, std::uint64_t length, std::string name,
                                           const SnapshotLoadOptions& options);

}  // namespace evring::snapshot_detail
