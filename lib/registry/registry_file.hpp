// lib/registry/registry_file.hpp — opening, judging, creating and replacing reader
// registry files (private to the library; tests include it).
//
// Invariants:
// - The header is read once with pread into a private copy, judged against
//   the file's real size, the file system's page size and the ring's
//   identity, and only that copy is used afterwards (capacity, sizes): a
//   file changed under us can never make us index outside the mapping.
// - A file appears at a registry's name only by rename of a complete
//   temporary file, so a header that fails validation is real damage, not a
//   registry half-built.
// - A registry is replaced only by a process holding LOCK_EX (flock) on it
//   while it is still the file at the name, so two replacers cannot both
//   replace it; the loser then opens the winner's registry. Files that are
//   not registries, or of a newer version, are never replaced.
//
// Thread safety: a RegistryFile is a movable value owned by one thread at a
// time; its slots are shared memory (registry_slot.hpp).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "evring/error.hpp"
#include "registry/reader_registry.hpp"
#include "registry/reader_registry_format.hpp"

namespace evring::detail {

// An open, mapped registry with its validated header copy.
class RegistryFile {
public:
    RegistryFile() = default;
    RegistryFile(RegistryFile&& other) noexcept;
    RegistryFile& operator=(RegistryFile&& other) noexcept;
    RegistryFile(const RegistryFile&) = delete;
    RegistryFile& operator=(const RegistryFile&) = delete;
    ~RegistryFile();

    // Maps `fd` (which it takes over) with the validated `header`.
    static Result<RegistryFile> map(int fd, const RegistryHeader& header, bool writable,
                                    std::string path);

    bool is_open() const noexcept { return fd_ >= 0; }
    int fd() const noexcept { return fd_; }
    bool writable() const noexcept { return writable_; }
    const RegistryHeader& header() const noexcept { return header_; }
    std::uint32_t capacity() const noexcept { return header_.capacity; }
    const std::string& path() const noexcept { return path_; }
    // The start of the mapping (the header). Written only while the file is
    // a temporary nobody else can see.
    std::byte* base() const noexcept { return static_cast<std::byte*>(map_); }
    // `index` < capacity(). Writable only through a read-write mapping.
    RegistrySlot& slot(std::uint32_t index) const noexcept {
        return *reinterpret_cast<RegistrySlot*>(static_cast<std::byte*>(map_) +
                                                registry_slot_offset(index));
    }

private:
    void close() noexcept;

    int fd_ = -1;
    void* map_ = nullptr;
    std::size_t length_ = 0;
    RegistryHeader header_{};
    std::string path_;
    bool writable_ = false;
};

// What a header copy says about its file. `reason` explains any state but
// Valid, naming the field and its value.
struct RegistryVerdict {
    RegistryState state = RegistryState::Missing;
    std::string reason;
};

// Judges `header`, of which `bytes_read` bytes came from a file of
// `file_size` bytes on a file system with `page_size` pages, against `ring`.
RegistryVerdict judge_registry_header(const RegistryHeader& header, std::size_t bytes_read,
                                      std::uint64_t file_size, std::uint64_t page_size,
                                      const RingIdentity& ring);

// A header for a fresh registry of `ring` with `capacity` slots.
RegistryHeader fresh_registry_header(const RingIdentity& ring, std::uint32_t capacity,
                                     std::uint64_t page_size);

// For listers: the registry at `path`, never created or replaced. With
// `want_write` it is opened read-write when permitted (to reclaim dead
// slots), else read-only. `file` is open and mapped only when the state is
// Valid. An Error only for failures that are not about the file itself
// (its directory cannot be opened).
struct OpenedRegistry {
    RegistryVerdict verdict;
    RegistryFile file;
};
Result<OpenedRegistry> open_registry(const std::string& path, const RingIdentity& ring,
                                     bool want_write);

// How to make a registry, when we are the ones to make it.
struct RegistryMaking {
    std::uint32_t capacity = kRegistryDefaultCapacity;
    mode_t mode = 0664;
};

// For registrants and writers: the registry of `ring` at `path`, read-write:
// opened when valid, created when missing, replaced when damaged or of
// another ring instance. `notice` is set when an old file was replaced
// (saying why). Fails for a file that must not be touched, a registry we
// cannot write, a directory we cannot create files in, and a full huge page
// pool, each with a message naming the path and the reason.
Result<RegistryFile> attach_registry(const std::string& path, const RingIdentity& ring,
                                     const RegistryMaking& making, std::string& notice);

// Which registries remove_unused_registry may remove.
enum class RegistryOwner {
    ThisInstance,   // a valid registry of `ring` (its writer or reader is closing)
    OtherInstance,  // a valid registry of another ring instance (`ring` is the one at the name now, or zero)
};

// Removes the registry at `path` when it is `owner`'s and no reader uses it
// (the protocol is in registry_remove.cpp): true when removed; false when
// missing, in use, or not one to remove (left alone).
Result<bool> remove_unused_registry(const std::string& path, const RingIdentity& ring, RegistryOwner owner);

// remove_unused_registry(path, ring, ThisInstance), for the writer's API.
Status remove_registry(const std::string& path, const RingIdentity& ring);

}  // namespace evring::detail
