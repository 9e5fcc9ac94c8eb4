// Rings no writer holds: judging why (killed or kept) and removing one. See
// dead_ring.hpp for the removal protocol and writers_open.hpp for the word.
#include "files/dead_ring.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "evring/format.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/ring_extension.hpp"
#include "registry/reader_registry.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_open.hpp"
#include "ring/ring_locks.hpp"
#include "ring/ring_open.hpp"
#include "ring/writers_open.hpp"

namespace evring::detail {
namespace {

// A reader's momentary liveness probe (LOCK_SH|LOCK_NB, ring_locks.hpp) can
// make our LOCK_EX|LOCK_NB fail: try a little while before calling the ring held.
constexpr int kLockAttempts = 50;
constexpr auto kLockPause = std::chrono::milliseconds(2);

struct RingFacts {
    bool ring = false;
    bool writers_open = false;
    RingHeader header{};
};

RingFacts read_facts(int fd, const struct stat& st) {
    RingFacts facts;
    if (::pread(fd, &facts.header, sizeof facts.header, 0) != static_cast<ssize_t>(sizeof facts.header) ||
        !validate_header(facts.header, static_cast<std::uint64_t>(st.st_size)).ok())
        return facts;
    facts.ring = true;
    RingExtension extension{};
    if (::pread(fd, &extension, sizeof extension, kRingExtensionOffset) == static_cast<ssize_t>(sizeof extension) &&
        has_ring_extension(extension))
        facts.writers_open = writers_open_word(extension) != 0;
    return facts;
}

// A writer's marker is held (or the probe failed: take it as held).
bool marker_held(int fd) {
    auto present = writer_marker_present(fd);
    return !present || *present;
}

}  // namespace

RingWriters ring_writers(int fd, const struct stat& st) {
    const RingFacts facts = read_facts(fd, st);
    if (!facts.ring) return RingWriters::NotARing;
    auto holders = lock_holders(fd);
    if (!holders || !holders->empty()) return RingWriters::Live;
    return facts.writers_open ? RingWriters::Killed : RingWriters::Kept;
}

Result<bool> remove_unheld_ring(int dirfd, const std::string& name, const std::string& path, bool only_killed) {
    auto opened = open_ring_file_at(dirfd, name, O_RDONLY, path);
    if (!opened) return std::move(opened).error();
    UniqueFd fd(*opened);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Error::from_errno(errno, fmt::format("examining '{}'", path));
    const RingFacts facts = read_facts(fd.get(), st);
    if (!facts.ring) {
        if (auto s = check_is_ring(fd.get(), path); !s) return std::move(s).error();
        return Error(EINVAL, fmt::format("'{}' is not a ring", path));
    }
    bool locked = false;
    for (int attempt = 0; attempt < kLockAttempts && !locked; ++attempt) {
        locked = ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
        if (!locked) {
            if (marker_held(fd.get())) return held_by_live_writer(fd.get(), path);
            std::this_thread::sleep_for(kLockPause);
        }
    }
    if (!locked) return held_by_live_writer(fd.get(), path);
    // Holding LOCK_EX: no writer holds the ring, and none can take it until
    // the name is free. Judge again: it may have changed since we looked.
    if (!still_at_path(dirfd, name, fd.get())) return false;
    if (marker_held(fd.get())) return false;
    const RingFacts now = read_facts(fd.get(), st);
    if (!now.ring || (only_killed && !now.writers_open)) return false;
    auto identity = ring_identity_of(fd.get(), now.header);
    if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
        if (errno == ENOENT) return false;
        return Error::from_errno(errno, fmt::format("removing '{}'", path));
    }
    if (identity)
        (void)remove_unused_registry(reader_registry_path(path), *identity, RegistryOwner::ThisInstance);
    return true;
}

}  // namespace evring::detail
