// lib/ring/snapshot_support.hpp — private helpers shared by snapshot_load.cpp and
// snapshot.cpp (not installed). Plain RAII holders and the snapshot's name.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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


}  // namespace evring::snapshot_detail
