// lib/registry/registry_open.hpp — opening a reader registry file safely: never
// through a symbolic link, never blocking on a FIFO, only a regular file,
// the header read with pread before anything is mapped (private to the
// library; tests include it).
//
// Thread safety: free functions and plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "evring/error.hpp"
#include "registry/reader_registry_format.hpp"

namespace evring::detail {

// An owned file descriptor (movable; closed on destruction unless released).
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

// A registry path split into its open directory and its file name.
struct RegistryLocation {
    UniqueFd dir;
    std::string name;
    std::string path;
};
Result<RegistryLocation> open_registry_directory(const std::string& path);

// Opens the registry file with `access` (O_RDONLY or O_RDWR), refusing
// anything but a regular file. ENOENT comes back as is.
Result<int> open_registry_file(const RegistryLocation& at, int access);

// The header as read from the file, with what it is judged against.
struct HeaderRead {
    RegistryHeader header{};
    std::size_t bytes_read = 0;
    std::uint64_t file_size = 0;
    std::uint64_t page_size = 0;  // of the file system (the huge page size on hugetlbfs)
};
Result<HeaderRead> read_registry_header(int fd, const std::string& path);

}  // namespace evring::detail
