// Reader registry files: mapping, judging a header, opening for listers.
// See registry_file.hpp for the invariants.
#include "registry/registry_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "evring/clock.hpp"
#include "evring/ring/ring.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_open.hpp"

namespace evring::detail {
namespace {

std::string printable_bytes(const char* bytes, std::size_t n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i) {
        const char c = bytes[i];
        text.push_back(c >= 0x20 && c <= 0x7e ? c : '.');
    }
    return text;
}

template <class Array>
bool all_zero(const Array& words) {
    return std::all_of(words.begin(), words.end(), [](auto w) { return w == 0; });
}

RegistryVerdict verdict(RegistryState state, std::string reason) {
    return {state, std::move(reason)};
}

RegistryVerdict damaged(std::string reason) {
    return verdict(RegistryState::Damaged, std::move(reason));
}

// The layout fields, once the magic and version are known to be ours.
RegistryVerdict judge_layout(const RegistryHeader& h, std::uint64_t file_size,
                             std::uint64_t page_size) {
    if (h.header_size != kRegistryHeaderSize)
        return damaged(
            fmt::format("header_size is {}, expected {}", h.header_size, kRegistryHeaderSize));
    if (h.slot_size != kRegistrySlotSize)
        return damaged(fmt::format("slot_size is {}, expected {}", h.slot_size, kRegistrySlotSize));
    if (h.capacity == 0 || h.capacity > kRegistryMaxCapacity)
        return damaged(
            fmt::format("capacity is {}, expected 1 to {}", h.capacity, kRegistryMaxCapacity));
    if (h.file_size != file_size)
        return damaged(fmt::format("file_size says {} bytes but the file is {} bytes", h.file_size,
                                   file_size));
    const std::uint64_t expected = registry_file_size(h.capacity, page_size);
    if (file_size != expected)
        return damaged(fmt::format("the file is {} bytes; {} slots on {}-byte pages take {}",
                                   file_size, h.capacity, page_size, expected));
    if (!all_zero(h.reserved0) || !all_zero(h.reserved1) || !all_zero(h.ring.reserved))
        return damaged("reserved header bytes are not zero");
    return {RegistryState::Valid, {}};
}

}  // namespace

RegistryFile::RegistryFile(RegistryFile&& other) noexcept { *this = std::move(other); }

RegistryFile& RegistryFile::operator=(RegistryFile&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, -1);
        map_ = std::exchange(other.map_, nullptr);
        length_ = std::exchange(other.length_, 0);
        header_ = other.header_;
        path_ = std::move(other.path_);
        writable_ = other.writable_;
    }
    return *this;
}

RegistryFile::~RegistryFile() { close(); }

void RegistryFile::close() noexcept {
    if (map_ != nullptr) ::munmap(map_, length_);
    if (fd_ >= 0) ::close(fd_);  // releases every lock taken through this description
    map_ = nullptr;
    fd_ = -1;
}

Result<RegistryFile> RegistryFile::map(int fd, const RegistryHeader& header, bool writable,
                                       std::string path) {
    RegistryFile file;
    file.fd_ = fd;
    file.header_ = header;
    file.path_ = std::move(path);
    file.writable_ = writable;
    // The validated file size: a whole number of the file system's pages,
    // so this is also right on hugetlbfs.
    const auto length = static_cast<std::size_t>(header.file_size);
    void* map =
        ::mmap(nullptr, length, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return Error::from_errno(errno, fmt::format("mapping reader registry '{}'", file.path_));
    file.map_ = map;
    file.length_ = length;
    return file;
}

RegistryVerdict judge_registry_header(const RegistryHeader& h, std::size_t bytes_read,
                                      std::uint64_t file_size, std::uint64_t page_size,
                                      const RingIdentity& ring) {
    if (bytes_read < h.magic.size())
        return verdict(
            RegistryState::NotARegistry,
            fmt::format("it is {} bytes long, too short for a reader registry", file_size));
    if (std::memcmp(h.magic.data(), kRegistryMagic.data(), kRegistryMagic.size()) != 0)
        return verdict(RegistryState::NotARegistry,
                       fmt::format("it starts with '{}', not the reader registry magic '{}'",
                                   printable_bytes(h.magic.data(), h.magic.size()),
                                   printable_bytes(kRegistryMagic.data(), kRegistryMagic.size())));
    if (bytes_read < sizeof h || file_size < sizeof h)
        return damaged(fmt::format("it is truncated: {} bytes, shorter than the {}-byte header",
                                   file_size, sizeof h));
    if (h.version > kRegistryVersion)
        return verdict(
            RegistryState::UnsupportedVersion,
            fmt::format("it is version {}, written by a newer evring (this one reads version {})",
                        h.version, kRegistryVersion));
    if (h.version != kRegistryVersion)
        return damaged(fmt::format("version is {}, expected {}", h.version, kRegistryVersion));
    if (RegistryVerdict layout = judge_layout(h, file_size, page_size);
        layout.state != RegistryState::Valid)
        return layout;
    if (std::string mismatch = identity_mismatch(h.ring, ring); !mismatch.empty())
        return verdict(
            RegistryState::OtherRing,
            "it belongs to another instance of the ring (re-created since?): " + mismatch);
    return {RegistryState::Valid, {}};
}

RegistryHeader fresh_registry_header(const RingIdentity& ring, std::uint32_t capacity,
                                     std::uint64_t page_size) {
    RegistryHeader h{};
    h.magic = kRegistryMagic;
    h.version = kRegistryVersion;
    h.header_size = kRegistryHeaderSize;
    h.slot_size = kRegistrySlotSize;
    h.capacity = capacity;
    h.file_size = registry_file_size(capacity, page_size);
    h.created_ns = wall_clock_nanos();
    h.ring = ring;
    h.ring.reserved = {};
    return h;
}

Result<OpenedRegistry> open_registry(const std::string& path, const RingIdentity& ring,
                                     bool want_write) {
    auto at = open_registry_directory(path);
    if (!at) return std::move(at).error();
    OpenedRegistry opened;
    auto fd = open_registry_file(*at, want_write ? O_RDWR : O_RDONLY);
    if (!fd && want_write &&
        (fd.error().errno_value() == EACCES || fd.error().errno_value() == EROFS ||
         fd.error().errno_value() == EPERM))
        fd = open_registry_file(*at, O_RDONLY);  // list without reclaiming
    if (!fd) {
        const int err = fd.error().errno_value();
        opened.verdict = verdict(err == ENOENT                   ? RegistryState::Missing
                                 : err == EACCES || err == EPERM ? RegistryState::Unreadable
                                                                 : RegistryState::NotARegistry,
                                 fd.error().message());
        if (err == ENOENT) opened.verdict.reason.clear();
        return opened;
    }
    UniqueFd held(*fd);
    auto checked = read_registry_header(held.get(), path);
    if (!checked) {
        opened.verdict = verdict(RegistryState::Unreadable, checked.error().message());
        return opened;
    }
    opened.verdict = judge_registry_header(checked->header, checked->bytes_read, checked->file_size,
                                           checked->page_size, ring);
    if (opened.verdict.state != RegistryState::Valid) return opened;
    const bool writable = (::fcntl(held.get(), F_GETFL) & O_ACCMODE) == O_RDWR;
    auto file =
        RegistryFile::map(held.release(), checked->header, writable, path);  // owns the fd now
    if (!file) {
        opened.verdict = verdict(RegistryState::Unreadable, file.error().message());
        return opened;
    }
    opened.file = std::move(file).value();
    return opened;
}

}  // namespace evring::detail
