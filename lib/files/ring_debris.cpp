// Finding and removing what killed processes leave in a ring directory. See
// ring_debris.hpp for what counts as debris and why it is safe to remove.
#include "files/ring_debris.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

#include "evring/format.hpp"
#include "registry/reader_registry_format.hpp"
#include "evring/ring/ring.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_locks.hpp"
#include "registry/registry_open.hpp"
#include "files/dead_ring.hpp"
#include "ring/ring_locks.hpp"
#include "ring/ring_open.hpp"

namespace evring {
namespace {

using detail::UniqueFd;

// "<base>.<digits>": the pid, else 0.
pid_t temp_pid(std::string_view name, std::string_view& base) {
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return 0;
    const std::string_view digits = name.substr(dot + 1);
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return 0;
    base = name.substr(0, dot);
    return pid;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// ESRCH only: EPERM means a live process of another user.
bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

enum class Start { Zero, RegistryMagic, Other };

// What the file's first 8 bytes say: never written (zero, or an empty file),
// a registry, or anything else (a ring's magic, someone's data).
Start first_bytes(int fd) {
    std::array<char, 8> bytes{};
    const ssize_t n = ::pread(fd, bytes.data(), bytes.size(), 0);
    if (n < 0) return Start::Other;
    if (std::all_of(bytes.begin(), bytes.begin() + n, [](char c) { return c == 0; })) return Start::Zero;
    if (static_cast<std::size_t>(n) >= kRegistryMagic.size() &&
        std::memcmp(bytes.data(), kRegistryMagic.data(), kRegistryMagic.size()) == 0)
        return Start::RegistryMagic;
    return Start::Other;
}

// The kind of a temporary file by its name and first bytes, if it may be one.
std::optional<DebrisKind> temp_kind(std::string_view base, int fd) {
    const bool registry = ends_with(base, kRegistrySuffix);
    switch (first_bytes(fd)) {
    case Start::Zero:
        return registry ? DebrisKind::TempRegistry : DebrisKind::TempRing;
    case Start::RegistryMagic:
        if (registry) return DebrisKind::TempRegistry;
        return std::nullopt;
    case Start::Other:
        return std::nullopt;
    }
    return std::nullopt;
}

// The identity of the ring at `name` in `dirfd`, or none when nothing there is a ring.
std::optional<RingIdentity> identity_at(int dirfd, const std::string& name) {
    auto opened = detail::open_ring_file_at(dirfd, name, O_RDONLY, name);
    if (!opened) return std::nullopt;
    UniqueFd fd(*opened);
    RingHeader header{};
    struct stat st {};
    if (::pread(fd.get(), &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header) ||
        ::fstat(fd.get(), &st) != 0 || !validate_header(header, static_cast<std::uint64_t>(st.st_size)).ok())
        return std::nullopt;
    auto identity = detail::ring_identity_of(fd.get(), header);
    if (!identity) return std::nullopt;
    return *identity;
}

DebrisEntry entry_of(const std::string& path, DebrisKind kind, const struct stat& st) {
    DebrisEntry d;
    d.path = path;
    d.kind = kind;
    d.size = static_cast<std::uint64_t>(st.st_size);
    d.allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
    return d;
}

std::optional<DebrisEntry> judge_temp(int fd, const std::string& name, const std::string& path,
                                      const struct stat& st) {
    std::string_view base;
    const pid_t pid = temp_pid(name, base);
    if (pid == 0 || !process_gone(pid)) return std::nullopt;
    auto holders = detail::lock_holders(fd);
    if (!holders || !holders->empty()) return std::nullopt;  // someone holds it: not debris
    const auto kind = temp_kind(base, fd);
    if (!kind) return std::nullopt;
    DebrisEntry d = entry_of(path, *kind, st);
    d.pid = pid;
    d.why = fmt::format("left by pid {}, which is gone", pid);
    return d;
}

std::optional<DebrisEntry> judge_registry(int dirfd, int fd, const std::string& name, const std::string& path,
                                          const struct stat& st) {
    const std::string ring_name = name.substr(0, name.size() - kRegistrySuffix.size());
    if (ring_name.empty()) return std::nullopt;
    auto read = detail::read_registry_header(fd, path);
    if (!read) return std::nullopt;
    const std::optional<RingIdentity> ring = identity_at(dirfd, ring_name);
    const detail::RegistryVerdict verdict = detail::judge_registry_header(
        read->header, read->bytes_read, read->file_size, read->page_size, ring.value_or(RingIdentity{}));
    if (verdict.state != RegistryState::OtherRing) return std::nullopt;
    for (std::uint32_t i = 0; i < read->header.capacity; ++i) {  // capacity: validated by the verdict
        auto alive = detail::slot_owner_alive(fd, i);
        if (!alive || *alive) return std::nullopt;  // a reader of the old instance still uses it
    }
    DebrisEntry d = entry_of(path, DebrisKind::OrphanRegistry, st);
    d.why = ring ? fmt::format("ring '{}' was re-created; this is an earlier instance's registry", ring_name)
                 : fmt::format("ring '{}' is gone", ring_name);
    return d;
}

// A complete ring its writers left when they were killed (dead_ring.hpp).
std::optional<DebrisEntry> judge_dead_ring(int fd, const std::string& path, const struct stat& st) {
    if (detail::ring_writers(fd, st) != detail::RingWriters::Killed) return std::nullopt;
    DebrisEntry d = entry_of(path, DebrisKind::DeadRing, st);
    d.why = "its writers were killed: none closed it and none holds it";
    return d;
}

Result<bool> remove_dead_ring(const DebrisEntry& entry) {
    auto at = detail::open_registry_directory(entry.path);  // splits any path into directory and name
    if (!at) return std::move(at).error();
    auto removed = detail::remove_unheld_ring(at->dir.get(), at->name, entry.path, true);
    if (!removed && (removed.error().errno_value() == ENOENT || removed.error().errno_value() == EBUSY))
        return false;  // gone, or a writer took it over meanwhile
    return removed;
}

// Whether `name` is ring_name's: NAME.PID, NAME.readers.PID or NAME.readers.
bool belongs_to(std::string_view name, std::string_view ring_name) {
    if (ring_name.empty()) return true;
    std::string_view base;
    if (temp_pid(name, base) != 0) name = base;
    return name == ring_name || (ends_with(name, kRegistrySuffix) &&
                                 name.substr(0, name.size() - kRegistrySuffix.size()) == ring_name);
}

Result<bool> remove_temp(const DebrisEntry& entry) {
    auto at = detail::open_registry_directory(entry.path);  // splits any path into directory and name
    if (!at) return std::move(at).error();
    auto opened = detail::open_ring_file_at(at->dir.get(), at->name, O_RDONLY, entry.path);
    if (!opened) {
        if (opened.error().errno_value() == ENOENT) return false;
        return std::move(opened).error();
    }
    UniqueFd fd(*opened);
    // Holding LOCK_EX: no writer or registry builder holds it, and none can
    // take it until the file is gone from the name.
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;
    if (!detail::still_at_path(at->dir.get(), at->name, fd.get())) return false;
    std::string_view base;
    const pid_t pid = temp_pid(at->name, base);
    if (pid == 0 || !process_gone(pid) || temp_kind(base, fd.get()) != entry.kind) return false;
    if (::unlinkat(at->dir.get(), at->name.c_str(), 0) != 0) {
        if (errno == ENOENT) return false;
        return Error::from_errno(errno, fmt::format("removing '{}'", entry.path));
    }
    return true;
}

Result<bool> remove_orphan_registry(const DebrisEntry& entry) {
    auto at = detail::open_registry_directory(entry.path);
    if (!at) return std::move(at).error();
    if (!ends_with(at->name, kRegistrySuffix)) return false;
    const std::string ring_name = at->name.substr(0, at->name.size() - kRegistrySuffix.size());
    // The ring at the name now, not when listed: a registry made meanwhile
    // for a new ring there is that ring's and stays.
    const std::optional<RingIdentity> ring = identity_at(at->dir.get(), ring_name);
    return detail::remove_unused_registry(entry.path, ring.value_or(RingIdentity{}),
                                          detail::RegistryOwner::OtherInstance);
}

}  // namespace

const char* to_string(DebrisKind kind) noexcept {
    switch (kind) {
    case DebrisKind::TempRing:
        return "temp-ring";
    case DebrisKind::TempRegistry:
        return "temp-registry";
    case DebrisKind::OrphanRegistry:
        return "orphan-registry";
    case DebrisKind::DeadRing:
        return "dead-ring";
    case DebrisKind::TempSet:
        return "temp-set";
    case DebrisKind::DeadSet:
        return "dead-set";
    }
    return "unknown";
}

Result<std::vector<DebrisEntry>> list_debris(std::string_view directory, std::string_view ring_name,
                                             bool dead_rings) {
    std::string dir(directory);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    UniqueFd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dirfd.get() < 0) return Error::from_errno(errno, "opening ring directory '" + dir + "'");
    DIR* stream = ::fdopendir(::dup(dirfd.get()));
    if (stream == nullptr) return Error::from_errno(errno, "listing ring directory '" + dir + "'");
    std::vector<DebrisEntry> found;
    while (dirent* item = ::readdir(stream)) {
        const std::string name = item->d_name;
        if (!belongs_to(name, ring_name)) continue;
        struct stat st {};
        if (::fstatat(dirfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        UniqueFd fd(::openat(dirfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (fd.get() < 0) continue;  // not ours to judge (permissions)
        const std::string path = dir + "/" + name;
        const bool registry = ends_with(name, kRegistrySuffix);
        std::optional<DebrisEntry> d = registry ? judge_registry(dirfd.get(), fd.get(), name, path, st)
                                                : judge_temp(fd.get(), name, path, st);
        if (!d && !registry && dead_rings) d = judge_dead_ring(fd.get(), path, st);
        if (d) found.push_back(*d);
    }
    ::closedir(stream);
    std::sort(found.begin(), found.end(), [](const DebrisEntry& a, const DebrisEntry& b) { return a.path < b.path; });
    return found;
}

Result<bool> remove_debris(const DebrisEntry& entry) {
    switch (entry.kind) {
    case DebrisKind::OrphanRegistry:
        return remove_orphan_registry(entry);
    case DebrisKind::DeadRing:
        return remove_dead_ring(entry);
    case DebrisKind::TempRing:
    case DebrisKind::TempRegistry:
        return remove_temp(entry);
    case DebrisKind::TempSet:
    case DebrisKind::DeadSet:
        break;
    }
    return Error(EINVAL, fmt::format("'{}' is a ring set's debris: remove it with remove_set_debris", entry.path));
}

void reclaim_debris_of(std::string_view directory, std::string_view ring_name) noexcept {
    try {
        auto found = list_debris(directory, ring_name);
        if (!found) return;
        for (const DebrisEntry& d : *found) (void)remove_debris(d);
    } catch (...) {  // out of memory: `evring gc` can do it later
    }
}

}  // namespace evring
