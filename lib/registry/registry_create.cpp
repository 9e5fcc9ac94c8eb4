// Creating and replacing reader registries. See registry_file.hpp for the
// invariants and reader_registry.hpp for the contract.
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "evring/ring/ring.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_open.hpp"
#include "ring/ring_open.hpp"

namespace evring::detail {
namespace {

// A replacer that finds another one at work, or a registry that changes
// under it, tries again; each round is short, so this bounds it to ~1 s.
constexpr int kAttempts = 1000;
constexpr auto kRetryPause = std::chrono::milliseconds(1);

// A complete registry in <name>.<pid>, locked (LOCK_EX: `evring ls` skips a
// live process's temporary file, and a later process can tell a leftover),
// mapped, not yet at its name. Removed on destruction unless placed.
struct TempRegistry {
    int dirfd = -1;
    std::string name;
    RegistryFile file;
    bool placed = false;

    ~TempRegistry() {
        if (file.is_open() && !placed) ::unlinkat(dirfd, name.c_str(), 0);
    }
};

// Opens <name>.<pid> exclusively, removing a leftover of a dead process that
// had our pid (one that nobody holds locked).
Result<int> create_temp_file(const RegistryLocation& at, const std::string& temp_name,
                             mode_t mode) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int fd = ::openat(at.dir.get(), temp_name.c_str(),
                                O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0) return fd;
        if (errno != EEXIST)
            return Error::from_errno(
                errno, fmt::format("creating reader registry '{}' (as '{}')", at.path, temp_name));
        UniqueFd old(::openat(at.dir.get(), temp_name.c_str(),
                              O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (old.get() < 0 || ::flock(old.get(), LOCK_EX | LOCK_NB) != 0)
            return Error(EBUSY,
                         fmt::format("temporary reader registry '{}' is in use by another process "
                                     "with pid {} (in another pid namespace)",
                                     temp_name, ::getpid()));
        ::unlinkat(at.dir.get(), temp_name.c_str(), 0);
    }
    return Error(EEXIST,
                 fmt::format("temporary reader registry '{}' keeps reappearing", temp_name));
}

Status allocate(int fd, std::uint64_t size, const std::string& path, const BackingPages& backing) {
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
        return Error::from_errno(
            errno, fmt::format("sizing reader registry '{}' to {} bytes", path, size));
    // Allocated now, so a full huge page pool fails here and never as a
    // SIGBUS when a slot is first written.
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size)); err != 0) {
        if (err == ENOSPC && backing.hugetlbfs)
            return Error(
                err, fmt::format("creating reader registry '{}': no free {}-byte huge page for it "
                                 "(the pool is used up; see docs/hugepages.md)",
                                 path, backing.page_size));
        return Error::from_errno(err, fmt::format("allocating reader registry '{}'", path));
    }
    return {};
}

Status build_temp(TempRegistry& temp, const RegistryLocation& at, const RingIdentity& ring,
                  const RegistryMaking& making) {
    temp.dirfd = at.dir.get();
    temp.name = at.name + "." + std::to_string(::getpid());
    auto created = create_temp_file(at, temp.name, making.mode);
    if (!created) return std::move(created).error();
    UniqueFd fd(*created);
    // From here on a failure must remove the file: give it to `temp` once mapped,
    // and unlink by hand before that.
    auto fail = [&](Error error) {
        ::unlinkat(at.dir.get(), temp.name.c_str(), 0);
        return Status(std::move(error));
    };
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
        return fail(Error::from_errno(
            errno, fmt::format("locking temporary reader registry '{}'", temp.name)));
    if (::fchmod(fd.get(), making.mode) != 0)  // the mode exactly, whatever the umask
        return fail(Error::from_errno(errno, fmt::format("setting the mode of '{}'", temp.name)));
    auto backing = backing_pages_of(fd.get(), at.path);
    if (!backing) return fail(std::move(backing).error());
    const RegistryHeader header = fresh_registry_header(ring, making.capacity, backing->page_size);
    if (auto s = allocate(fd.get(), header.file_size, at.path, *backing); !s)
        return fail(std::move(s).error());
    auto file = RegistryFile::map(fd.release(), header, /*writable=*/true, at.path);
    if (!file) return fail(std::move(file).error());
    temp.file = std::move(file).value();
    // Nobody else can see this file yet: plain stores are enough. The slots
    // are zero (kSlotFree) from the allocation. hugetlbfs has no write(2),
    // so the header goes through the mapping on every file system alike.
    std::memcpy(temp.file.base(), &header, sizeof header);
    return {};
}

// Moves the temp to the name if nothing is there: true when placed.
Result<bool> place_new(TempRegistry& temp, const RegistryLocation& at) {
    if (::renameat2(at.dir.get(), temp.name.c_str(), at.dir.get(), at.name.c_str(),
                    RENAME_NOREPLACE) == 0)
        return temp.placed = true;
    if (errno == EEXIST) return false;
    if (errno != EINVAL)
        return Error::from_errno(errno, fmt::format("renaming '{}' to '{}'", temp.name, at.path));
    // A file system without RENAME_NOREPLACE: link(2) never replaces either.
    if (::linkat(at.dir.get(), temp.name.c_str(), at.dir.get(), at.name.c_str(), 0) != 0) {
        if (errno == EEXIST) return false;
        return Error::from_errno(errno, fmt::format("linking '{}' to '{}'", temp.name, at.path));
    }
    ::unlinkat(at.dir.get(), temp.name.c_str(), 0);
    return temp.placed = true;
}

// The placed registry, its creation lock released.
RegistryFile finish(TempRegistry& temp) {
    ::flock(temp.file.fd(), LOCK_UN);
    return std::move(temp.file);
}

bool may_replace(RegistryState state) {
    return state == RegistryState::Damaged || state == RegistryState::OtherRing;
}

}  // namespace

Result<RegistryFile> attach_registry(const std::string& path, const RingIdentity& ring,
                                     const RegistryMaking& making, std::string& notice) {
    auto located = open_registry_directory(path);
    if (!located) return std::move(located).error();
    const RegistryLocation& at = *located;
    // Threads of one process share the temporary name <name>.<pid>.
    static std::mutex creating;
    std::lock_guard<std::mutex> one_at_a_time(creating);
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        auto opened = open_registry_file(at, O_RDWR);
        if (!opened && opened.error().errno_value() == ENOENT) {
            TempRegistry temp;
            if (auto s = build_temp(temp, at, ring, making); !s) return std::move(s).error();
            auto placed = place_new(temp, at);
            if (!placed) return std::move(placed).error();
            if (*placed) return finish(temp);
            continue;  // another process created it first: use theirs
        }
        if (!opened) return std::move(opened).error();
        UniqueFd held(*opened);
        auto read = read_registry_header(held.get(), path);
        if (!read) return std::move(read).error();
        const RegistryVerdict verdict = judge_registry_header(
            read->header, read->bytes_read, read->file_size, read->page_size, ring);
        if (verdict.state == RegistryState::Valid)
            return RegistryFile::map(held.release(), read->header, /*writable=*/true, path);
        if (!may_replace(verdict.state))
            return Error(
                EEXIST,
                fmt::format("'{}' is in the way of the reader registry and is left alone: {}", path,
                            verdict.reason));
        // Damaged, or another ring instance's: replace it, holding its flock
        // while it is still the file at the name.
        if (::flock(held.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK)
                return Error::from_errno(errno, fmt::format("locking reader registry '{}'", path));
            std::this_thread::sleep_for(kRetryPause);  // another replacer is at work
            continue;
        }
        if (!still_at_path(at.dir.get(), at.name, held.get())) continue;
        TempRegistry temp;
        if (auto s = build_temp(temp, at, ring, making); !s) return std::move(s).error();
        if (::renameat(at.dir.get(), temp.name.c_str(), at.dir.get(), at.name.c_str()) != 0)
            return Error::from_errno(errno, fmt::format("replacing reader registry '{}'", path));
        temp.placed = true;
        notice = fmt::format("replaced reader registry '{}': {}", path, verdict.reason);
        return finish(temp);  // `held` closes after the rename: the old file's lock goes last
    }
    return Error(EAGAIN,
                 fmt::format("reader registry '{}' kept changing while being opened", path));
}

}  // namespace evring::detail
