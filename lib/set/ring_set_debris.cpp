// Ring sets' debris and removing a ring set. See ring_set_debris.hpp for
// what counts as debris and the removal protocol.
#include "set/ring_set_debris.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>

#include "registry/registry_open.hpp"
#include "files/dead_ring.hpp"
#include "ring/ring_locks.hpp"
#include "ring/ring_open.hpp"
#include "set/ring_set_files.hpp"
#include "set/ring_set_format.hpp"
#include "set/ring_set_manifest.hpp"

namespace evring {
namespace {

using detail::UniqueFd;

constexpr std::string_view kTempSetSuffix = ".set";

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The pid of "<name>.<pid>.set", else 0.
pid_t temp_set_pid(std::string_view name) {
    if (!ends_with(name, kTempSetSuffix)) return 0;
    name.remove_suffix(kTempSetSuffix.size());
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return 0;
    const std::string_view digits = name.substr(dot + 1);
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    return ec == std::errc() && end == digits.data() + digits.size() && pid > 0 ? pid : 0;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// A member's file name: "m" and digits (ring_set_format.hpp names them so).
bool member_name(std::string_view name) {
    return name.size() > 1 && name[0] == 'm' &&
           std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The regular files of the directory `dirfd`, by name. The listing's
// descriptor is a dup of `dirfd`, sharing its position: it is read from the
// start and left at the start, so the next listing (remove_set_directory's)
// sees every name too.
std::vector<std::string> files_in(int dirfd) {
    std::vector<std::string> names;
    const int listing = ::dup(dirfd);
    if (listing < 0) return names;
    DIR* dir = ::fdopendir(listing);
    if (dir == nullptr) {
        ::close(listing);
        return names;
    }
    ::rewinddir(dir);
    while (const dirent* entry = ::readdir(dir)) {
        struct stat st {};
        if (::fstatat(dirfd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            names.emplace_back(entry->d_name);
    }
    ::rewinddir(dir);
    ::closedir(dir);
    return names;
}

// What the files of a set directory hold (huge pages on hugetlbfs).
void add_sizes(int dirfd, DebrisEntry& d) {
    for (const std::string& name : files_in(dirfd)) {
        struct stat st {};
        if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        d.size += static_cast<std::uint64_t>(st.st_size);
        d.allocated += static_cast<std::uint64_t>(st.st_blocks) * 512;
    }
}

Result<int> open_manifest(int dirfd, const std::string& path) {
    const int fd = ::openat(dirfd, kSetManifestName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, fmt::format("opening the manifest of ring set '{}'", path));
    return fd;
}

bool manifest_held(int manifest_fd) {
    auto holders = detail::lock_holders(manifest_fd);
    return !holders || !holders->empty();
}

enum class Members { Live, Kept, Killed, None };

// The members' writers: Live when any is held, Killed when none is and one
// was left by killed writers, None when there is no member ring at all (the
// set's writers died before taking one: nothing in it to read), else Kept.
Members members_of(int dirfd) {
    bool killed = false;
    bool any = false;
    for (const std::string& name : files_in(dirfd)) {
        if (!member_name(name)) continue;
        any = true;
        UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat st {};
        if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) continue;
        switch (detail::ring_writers(fd.get(), st)) {
        case detail::RingWriters::Live:
            return Members::Live;
        case detail::RingWriters::Killed:
            killed = true;
            break;
        default:
            break;
        }
    }
    if (killed) return Members::Killed;
    return any ? Members::Kept : Members::None;
}

// A set no writer holds is debris when its members' writers were killed, or
// when it has no member at all.
bool dead_members(int dirfd) {
    const Members members = members_of(dirfd);
    return members == Members::Killed || members == Members::None;
}

// The set directory `name` in `parentfd`, opened, with its manifest.
struct OpenedDir {
    UniqueFd dir;
    UniqueFd manifest;
};

Result<OpenedDir> open_set_dir(int parentfd, const std::string& name, const std::string& path) {
    OpenedDir opened;
    opened.dir = UniqueFd(::openat(parentfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (opened.dir.get() < 0) return Error::from_errno(errno, fmt::format("opening ring set '{}'", path));
    auto manifest = open_manifest(opened.dir.get(), path);
    if (!manifest) return std::move(manifest).error();
    opened.manifest = UniqueFd(*manifest);
    return opened;
}

bool same_dir(int parentfd, const std::string& name, int dirfd) {
    struct stat a {}, b {};
    return ::fstat(dirfd, &a) == 0 && ::fstatat(parentfd, name.c_str(), &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The debris of one subdirectory `name` of `parentfd`, if any.
void judge_subdirectory(int parentfd, const std::string& name, const std::string& path,
                        std::vector<DebrisEntry>& found) {
    const pid_t pid = temp_set_pid(name);
    auto opened = open_set_dir(parentfd, name, path);
    if (!opened) return;  // not a set (no manifest), or not ours to judge
    const bool held = manifest_held(opened->manifest.get());
    if (pid != 0 && process_gone(pid) && !held) {
        DebrisEntry d{path, DebrisKind::TempSet, 0, 0, pid, fmt::format("left by pid {}, which is gone", pid)};
        add_sizes(opened->dir.get(), d);
        found.push_back(std::move(d));
        return;
    }
    if (pid != 0 || !is_ring_set_directory(path)) return;
    if (!held && dead_members(opened->dir.get())) {
        DebrisEntry d{path, DebrisKind::DeadSet, 0, 0, 0,
                      members_of(opened->dir.get()) == Members::None
                          ? "no writer holds it, and it has no member ring"
                          : "no writer holds it, and its members' writers were killed"};
        add_sizes(opened->dir.get(), d);
        found.push_back(std::move(d));
        return;
    }
    // A set with a writer, or kept: only its files' own debris.
    auto inside = list_debris(path, {}, false);
    if (inside) found.insert(found.end(), inside->begin(), inside->end());
}

// Splits a path into its parent directory (opened) and last component.
struct Located {
    UniqueFd parent;
    std::string name;
};

Result<Located> locate(const std::string& path) {
    auto split = detail::split_ring_path(path);
    if (!split) return std::move(split).error();
    auto parent = detail::open_ring_directory(*split, path);
    if (!parent) return std::move(parent).error();
    return Located{UniqueFd(*parent), split->name};
}

Result<bool> remove_set_debris(const DebrisEntry& entry) {
    auto at = locate(entry.path);
    if (!at) return std::move(at).error();
    auto opened = open_set_dir(at->parent.get(), at->name, entry.path);
    if (!opened) {
        if (opened.error().errno_value() == ENOENT) return false;  // gone meanwhile
        return std::move(opened).error();
    }
    // Holding LOCK_EX on the manifest: no set writer holds or joins it.
    if (::flock(opened->manifest.get(), LOCK_EX | LOCK_NB) != 0) return false;
    if (!same_dir(at->parent.get(), at->name, opened->dir.get())) return false;
    const bool still = entry.kind == DebrisKind::TempSet
                           ? temp_set_pid(at->name) != 0 && process_gone(temp_set_pid(at->name))
                           : dead_members(opened->dir.get());
    if (!still) return false;
    detail::remove_set_directory(opened->dir.get(), entry.path);
    return true;
}

}  // namespace

Result<std::vector<DebrisEntry>> list_directory_debris(std::string_view directory) {
    auto found = list_debris(directory);
    if (!found) return found;
    std::string dir(directory);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    UniqueFd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dirfd.get() < 0) return Error::from_errno(errno, "opening ring directory '" + dir + "'");
    DIR* stream = ::fdopendir(::dup(dirfd.get()));
    if (stream == nullptr) return Error::from_errno(errno, "listing ring directory '" + dir + "'");
    std::vector<std::string> subdirectories;
    while (const dirent* item = ::readdir(stream)) {
        const std::string name = item->d_name;
        struct stat st {};
        if (name == "." || name == ".." ||
            ::fstatat(dirfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        subdirectories.push_back(name);
    }
    ::closedir(stream);
    for (const std::string& name : subdirectories) judge_subdirectory(dirfd.get(), name, dir + "/" + name, *found);
    std::sort(found->begin(), found->end(), [](const DebrisEntry& a, const DebrisEntry& b) { return a.path < b.path; });
    return found;
}

Result<bool> remove_directory_debris(const DebrisEntry& entry) {
    if (entry.kind == DebrisKind::TempSet || entry.kind == DebrisKind::DeadSet) return remove_set_debris(entry);
    return remove_debris(entry);
}

Status remove_ring_set(const std::string& path) {
    auto at = locate(path);
    if (!at) return std::move(at).error();
    if (!is_ring_set_directory(path))
        return Error(EINVAL, fmt::format("'{}' is not a ring set (a directory holding a manifest)", path));
    auto opened = open_set_dir(at->parent.get(), at->name, path);
    if (!opened) return std::move(opened).error();
    if (::flock(opened->manifest.get(), LOCK_EX | LOCK_NB) != 0) {
        auto holders = detail::lock_holders(opened->manifest.get());
        const std::vector<pid_t> pids = holders ? detail::flock_holder_pids(*holders) : std::vector<pid_t>{};
        return Error(EBUSY, pids.empty() ? fmt::format("ring set '{}' has a live writer (its pid is not visible in "
                                                       "this pid namespace): not removed", path)
                                         : fmt::format("ring set '{}' has a live writer (pid {}): not removed",
                                                       path, pids.front()));
    }
    for (const std::string& name : files_in(opened->dir.get())) {
        if (!member_name(name)) continue;
        UniqueFd fd(::openat(opened->dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat st {};
        if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 &&
            detail::ring_writers(fd.get(), st) == detail::RingWriters::Live &&
            detail::any_writer_alive(fd.get()))
            return detail::held_by_live_writer(fd.get(), path + "/" + name);
    }
    if (!same_dir(at->parent.get(), at->name, opened->dir.get()))
        return Error(EAGAIN, fmt::format("ring set '{}' was replaced while being removed: not removed", path));
    detail::remove_set_directory(opened->dir.get(), path);
    struct stat st {};
    if (::fstatat(at->parent.get(), at->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return Error(EACCES, fmt::format("ring set '{}': not every file could be removed", path));
    return {};
}

}  // namespace evring
