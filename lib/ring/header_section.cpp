// The read-write mapping of a ring's header section; see header_section.hpp.
#include "ring/header_section.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>

namespace evring::detail {

Result<WritableHeaderSection> WritableHeaderSection::map(const std::string& path, const Expect& expect,
                                                         std::string_view purpose) {
    // O_NONBLOCK: never wait in open() on what the path may name by now (a
    // FIFO, a leased file); such a file fails here or is refused below.
    const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, fmt::format("opening ring '{}' for writing to {}", path, purpose));
    struct stat st {};
    const bool same_file = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                           static_cast<std::uint64_t>(st.st_size) >= expect.min_size &&
                           (!expect.identity || (static_cast<std::uint64_t>(st.st_dev) == expect.identity->device &&
                                                 static_cast<std::uint64_t>(st.st_ino) == expect.identity->inode));
    if (!same_file) {
        ::close(fd);
        return Error(ESTALE, fmt::format("'{}' is not the {} any more", path, expect.file_role));
    }
    void* p = ::mmap(nullptr, kHeaderSectionSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);  // the mapping keeps the file
    if (p == MAP_FAILED)
        return Error::from_errno(err, fmt::format("mapping the header of ring '{}' for writing", path));
    return WritableHeaderSection(p);
}

WritableHeaderSection::WritableHeaderSection(WritableHeaderSection&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)) {}

WritableHeaderSection::~WritableHeaderSection() { unmap(mapping_); }

void* WritableHeaderSection::release() noexcept { return std::exchange(mapping_, nullptr); }

void WritableHeaderSection::unmap(void* mapping) noexcept {
    if (mapping != nullptr) ::munmap(mapping, kHeaderSectionSize);
}

}  // namespace evring::detail
