// A ring set's directory and manifest on disk (ring_set_files.hpp).
//
// Invariants: see ring_set.cpp. Creation builds <name>.<pid>.set with
// a complete, locked manifest and renames it to <name> with RENAME_NOREPLACE;
// a joiner locks the manifest (LOCK_SH) and then checks that both the
// directory and the manifest are still the ones at the name.
#include "set/ring_set_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "evring/ring/ring.hpp"
#include "set/ring_set_format.hpp"
#include "set/ring_set_manifest.hpp"
#include "ring/schema_blob.hpp"
#include "ring/ring_open.hpp"
#include "files/ring_temp.hpp"

namespace evring::detail {
namespace {

constexpr int kAttempts = 1000;  // ~1 s of 1 ms pauses for transient states
constexpr auto kPause = std::chrono::milliseconds(1);

bool same_file(int fd, int dirfd, const char* name) {
    struct stat a {}, b {};
    return ::fstat(fd, &a) == 0 && ::fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

std::uint64_t wall_nanos() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

Result<std::size_t> manifest_size_on(int fd, std::uint64_t needed, std::string_view path) {
    auto backing = backing_pages_of(fd, path);
    if (!backing) return std::move(backing).error();
    const std::uint64_t page = backing->page_size;
    return static_cast<std::size_t>((needed + page - 1) / page * page);
}

void write_header(void* mapping, const RingSetSpec& spec) {
    SetManifestHeader h{};
    h.magic = kSetMagic;
    h.header_size = kSetHeaderSize;
    h.max_members = spec.max_members;
    if (::getrandom(&h.set_id, sizeof h.set_id, 0) != sizeof h.set_id) h.set_id = wall_nanos() ^ ::getpid();
    h.created_nanos = wall_nanos();
    h.content_type = spec.content.content_type;
    h.member_descriptor_shift = spec.config.descriptor_shift;
    h.member_payload_buf_shift = spec.config.payload_buf_shift;
    h.schema_size = static_cast<std::uint32_t>(spec.content.schema_blob.size());
    h.schema_hash = spec.content.schema_hash;
    std::memcpy(mapping, &h, sizeof h);
    if (!spec.content.schema_blob.empty())
        std::memcpy(static_cast<std::byte*>(mapping) + set_schema_offset(spec.max_members),
                    spec.content.schema_blob.data(), spec.content.schema_blob.size());
}

// Builds <name>.<pid>.set and renames it to <name>: the OpenedSet when it was
// placed, nullopt when something was at the name already.
Result<std::optional<OpenedSet>> create_set(int parentfd, const std::string& name, const RingSetSpec& spec,
                                            const std::string& path) {
    if (!spec.content.schema_blob.empty())
        if (auto s = check_schema_blob_for_ring(spec.content.schema_blob, spec.content.schema_hash); !s)
            return std::move(s).error();
    const std::string temp = fmt::format("{}.{}.set", name, ::getpid());
    if (int stale = ::openat(parentfd, temp.c_str(), O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC); stale >= 0) {
        remove_set_directory(stale, fmt::format("{}.{}.set", path, ::getpid()));
        ::close(stale);
    }
    if (::mkdirat(parentfd, temp.c_str(), 0775) != 0)
        return Error::from_errno(errno, fmt::format("making the directory for ring set '{}'", path));
    const std::string temp_path = fmt::format("{}.{}.set", path, ::getpid());
    OpenedSet set;
    auto fail = [&](Error error) -> Result<std::optional<OpenedSet>> {
        if (set.mapping != nullptr) ::munmap(set.mapping, set.mapping_size);
        if (set.manifest_fd >= 0) ::close(set.manifest_fd);
        if (set.dirfd >= 0) {
            remove_set_directory(set.dirfd, temp_path);
            ::close(set.dirfd);
        }
        return error;
    };
    set.dirfd = ::openat(parentfd, temp.c_str(), O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
    if (set.dirfd < 0) return fail(Error::from_errno(errno, "opening " + temp_path));
    ::fchmod(set.dirfd, 0775);
    set.manifest_fd = ::openat(set.dirfd, kSetManifestName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0664);
    if (set.manifest_fd < 0) return fail(Error::from_errno(errno, "creating the manifest in " + temp_path));
    ::fchmod(set.manifest_fd, 0664);
    if (::flock(set.manifest_fd, LOCK_SH) != 0) return fail(Error::from_errno(errno, "locking the manifest"));
    auto size = manifest_size_on(set.manifest_fd, set_schema_offset(spec.max_members) + spec.content.schema_blob.size(),
                                 temp_path);
    if (!size) return fail(std::move(size).error());
    if (::ftruncate(set.manifest_fd, static_cast<off_t>(*size)) != 0)
        return fail(Error::from_errno(errno, "sizing the manifest of " + temp_path));
    void* mapping = ::mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_SHARED, set.manifest_fd, 0);
    if (mapping == MAP_FAILED) return fail(Error::from_errno(errno, "mapping the manifest of " + temp_path));
    set.mapping = mapping;
    set.mapping_size = *size;
    write_header(mapping, spec);
    if (::renameat2(parentfd, temp.c_str(), parentfd, name.c_str(), RENAME_NOREPLACE) != 0) {
        const int error = errno;
        if (error == EEXIST || error == ENOTEMPTY) {
            (void)fail(Error(error, ""));
            return std::optional<OpenedSet>();
        }
        return fail(Error::from_errno(error, fmt::format("placing ring set '{}'", path)));
    }
    set.created = true;
    return std::optional<OpenedSet>(set);
}

Status check_matches(const RingSetManifest& m, const RingSetSpec& spec, const std::string& path) {
    const bool same = m.content_type == spec.content.content_type && m.schema_hash == spec.content.schema_hash &&
                      m.max_members == spec.max_members &&
                      m.member_descriptor_shift == spec.config.descriptor_shift &&
                      m.member_payload_buf_shift == spec.config.payload_buf_shift &&
                      (spec.content.schema_blob.empty() || m.schema_blob == spec.content.schema_blob);
    if (same) return {};
    return Error(EPROTO, fmt::format("ring set '{}' exists with content type {}, {} members of sizes {}:{} and "
                                     "schema {}; this writer asked for content type {}, {} members of sizes {}:{} "
                                     "and schema {}",
                                     path, m.content_type, m.max_members, m.member_descriptor_shift,
                                     m.member_payload_buf_shift, hex_string(m.schema_hash).substr(0, 16),
                                     spec.content.content_type, spec.max_members, spec.config.descriptor_shift,
                                     spec.config.payload_buf_shift, hex_string(spec.content.schema_hash).substr(0, 16)));
}

// One attempt at joining the set directory `dirfd` found at the name: the
// OpenedSet, nullopt to try again, or an error.
Result<std::optional<OpenedSet>> join_set(int parentfd, const std::string& name, int dirfd, const RingSetSpec& spec,
                                          const std::string& path) {
    const int fd = ::openat(dirfd, kSetManifestName, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return std::optional<OpenedSet>();  // being created or removed
        return Error::from_errno(errno, fmt::format("opening the manifest of ring set '{}'", path));
    }
    auto close_fd = [fd] { ::close(fd); };
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {  // the last writer is removing it
        close_fd();
        return std::optional<OpenedSet>();
    }
    if (!same_file(dirfd, parentfd, name.c_str()) || !same_file(fd, dirfd, kSetManifestName)) {
        close_fd();
        return std::optional<OpenedSet>();
    }
    auto manifest = read_set_manifest(path);
    if (!manifest) {
        close_fd();
        return std::move(manifest).error();
    }
    if (auto s = check_matches(*manifest, spec, path); !s) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {  // nobody writes it: replace it
            remove_set_directory(dirfd, path);
            close_fd();
            return std::optional<OpenedSet>();
        }
        close_fd();
        return std::move(s).error();
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        close_fd();
        return Error::from_errno(errno, "examining the manifest of " + path);
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size < set_schema_offset(manifest->max_members)) {
        close_fd();
        return Error(EPROTO, "ring set '" + path + "': its manifest is truncated");
    }
    void* mapping = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) {
        const int error = errno;
        close_fd();
        return Error::from_errno(error, "mapping the manifest of " + path);
    }
    OpenedSet set;
    set.dirfd = ::dup(dirfd);
    set.manifest_fd = fd;
    set.mapping = mapping;
    set.mapping_size = size;
    return std::optional<OpenedSet>(set);
}

}  // namespace

Result<OpenedSet> create_or_join_set(const std::string& path, const RingSetSpec& spec) {
    auto split = split_ring_path(path);
    if (!split) return std::move(split).error();
    auto parent = open_ring_directory(*split, path);
    if (!parent) return std::move(parent).error();
    FdGuard parentfd{*parent};
    // Threads of one process share the temporary name <name>.<pid>.set.
    static std::mutex creating;
    std::lock_guard<std::mutex> one_at_a_time(creating);
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        const int dirfd = ::openat(parentfd.fd, split->name.c_str(), O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
        if (dirfd < 0) {
            if (errno == ENOTDIR || errno == ELOOP)
                return Error(EEXIST, fmt::format("'{}' exists and is not a ring set directory (a ring of that name?)",
                                                 path));
            if (errno != ENOENT) return Error::from_errno(errno, "opening " + path);
            auto created = create_set(parentfd.fd, split->name, spec, path);
            if (!created) return std::move(created).error();
            if (*created) return **created;
            continue;
        }
        FdGuard dir{dirfd};
        auto joined = join_set(parentfd.fd, split->name, dir.fd, spec, path);
        if (!joined) return std::move(joined).error();
        if (*joined) return **joined;
        std::this_thread::sleep_for(kPause);
    }
    return Error(EBUSY, fmt::format("'{}' stayed a directory without a usable manifest for a second: not a ring set, "
                                    "or one being removed",
                                    path));
}

void remove_set_directory(int dirfd, const std::string& path) {
    const int listing = ::dup(dirfd);
    if (listing < 0) return;
    DIR* dir = ::fdopendir(listing);
    if (dir == nullptr) {
        ::close(listing);
        return;
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != ".." && name != kSetManifestName) names.push_back(name);
    }
    ::closedir(dir);
    for (const auto& name : names) ::unlinkat(dirfd, name.c_str(), 0);
    ::unlinkat(dirfd, kSetManifestName, 0);
    ::rmdir(path.c_str());
}

}  // namespace evring::detail
