// Opening rings for reading, writer liveness, and listing a ring directory.
// See files.hpp and ring_locks.hpp for the contracts.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include "evring/files.hpp"
#include "ring_open.hpp"

namespace evring {
namespace {

// A pidfd for the exclusive flock holder, or -1. The pid is read from
// /proc/locks and then confirmed to still hold the lock after the pidfd is
// open, so the pidfd cannot belong to a process that reused a dead writer's pid.
int exclusive_writer_pidfd(int fd) {
    auto before = lock_holders(fd);
    if (!before) return -1;
    pid_t pid = 0;
    for (const LockHolder& h : *before)
        if (h.kind == LockKind::Flock && h.exclusive && h.pid > 0) pid = h.pid;
    if (pid == 0) return -1;
    int pidfd = open_pidfd(pid);
    if (pidfd < 0) return -1;
    auto after = lock_holders(fd);
    bool confirmed = after && std::any_of(after->begin(), after->end(), [&](const LockHolder& h) {
        return h.kind == LockKind::Flock && h.exclusive && h.pid == pid;
    });
    if (!confirmed) {
        ::close(pidfd);
        return -1;
    }
    return pidfd;
}

// "<name>.<digits>" → the digits as a pid, else 0.
pid_t temp_file_pid(std::string_view name) {
    std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return 0;
    std::string_view digits = name.substr(dot + 1);
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return 0;
    return pid;
}

RingFileInfo describe(int dirfd, const std::string& name, const std::string& path,
                      std::string_view proc_locks, bool& skip) {
    RingFileInfo info;
    info.path = path;
    auto opened = detail::open_ring_file_at(dirfd, name, O_RDONLY, path);
    if (!opened) {
        info.error = opened.error().message();
        return info;
    }
    int fd = *opened;
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
        auto holders = parse_proc_locks(proc_locks, st.st_dev, st.st_ino);
        info.writer_pids = flock_holder_pids(holders);
    }
    pid_t temp_pid = temp_file_pid(name);
    if (temp_pid != 0 && std::find(info.writer_pids.begin(), info.writer_pids.end(), temp_pid) !=
                             info.writer_pids.end()) {
        skip = true;  // a live writer's temporary file, not yet a ring
        ::close(fd);
        return info;
    }
    info.writer_alive = any_writer_alive(fd);
    RingHeader header{};
    ssize_t n = ::pread(fd, &header, sizeof header, 0);
    if (n < 0) {
        info.error = Error::from_errno(errno, "reading the header").message();
    } else if (static_cast<std::size_t>(n) < sizeof header) {
        info.error = "file is " + std::to_string(n) + " bytes, too short for a ring header";
    } else if (auto s = validate_header(header, static_cast<std::uint64_t>(st.st_size)); !s) {
        info.error = s.error().message();
    } else {
        info.header = header;
    }
    ::close(fd);
    return info;
}

}  // namespace

Result<RingReader> RingReader::open(std::string_view name_or_path) {
    return open(name_or_path, DirectoryOptions{});
}

Result<RingReader> RingReader::open(std::string_view name_or_path, const DirectoryOptions& directory) {
    auto path = resolve_ring_path(name_or_path, directory);
    if (!path) return std::move(path).error();
    auto split = detail::split_ring_path(*path);
    if (!split) return std::move(split).error();
    auto dirfd = detail::open_ring_directory(*split, *path);
    if (!dirfd) return std::move(dirfd).context("opening ring").error();
    auto opened = detail::open_ring_file_at(*dirfd, split->name, O_RDONLY, *path);
    ::close(*dirfd);
    if (!opened) return std::move(opened).error();

    RingReader reader;
    reader.fd_ = *opened;  // from here on the destructor closes it
    auto ring = MappedRing::map(reader.fd_, Access::ReadOnly, *path);
    if (!ring) return std::move(ring).error();
    reader.ring_.emplace(std::move(ring).value());
    reader.path_ = std::move(path).value();
    reader.writer_pidfd_ = exclusive_writer_pidfd(reader.fd_);
    return reader;
}

RingReader::RingReader(RingReader&& other) noexcept { *this = std::move(other); }

RingReader& RingReader::operator=(RingReader&& other) noexcept {
    if (this != &other) {
        close();
        ring_ = std::move(other.ring_);
        other.ring_.reset();
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        writer_pidfd_ = std::exchange(other.writer_pidfd_, -1);
    }
    return *this;
}

RingReader::~RingReader() { close(); }

void RingReader::close() noexcept {
    ring_.reset();
    if (fd_ >= 0) ::close(fd_);
    if (writer_pidfd_ >= 0) ::close(writer_pidfd_);
    fd_ = -1;
    writer_pidfd_ = -1;
}

std::vector<pid_t> RingReader::writer_pids() const {
    auto holders = lock_holders(fd_);
    if (!holders) return {};
    return flock_holder_pids(*holders);
}

bool RingReader::writer_alive() const { return any_writer_alive(fd_); }

Result<std::vector<RingFileInfo>> list_rings(std::string_view directory) {
    std::string dir(directory);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // "d/" lists as "d/<file>"
    int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return Error::from_errno(errno, "opening ring directory '" + dir + "'");
    // fdopendir takes ownership of its own descriptor; we keep dirfd for openat.
    DIR* stream = ::fdopendir(::dup(dirfd));
    if (stream == nullptr) {
        int err = errno;
        ::close(dirfd);
        return Error::from_errno(err, "listing ring directory '" + dir + "'");
    }
    auto proc_locks = read_text_file("/proc/locks");
    const std::string locks_text = proc_locks ? std::move(proc_locks).value() : std::string();

    std::vector<RingFileInfo> rings;
    while (dirent* entry = ::readdir(stream)) {
        const std::string name = entry->d_name;
        struct stat st {};
        if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        bool skip = false;
        RingFileInfo info = describe(dirfd, name, dir + "/" + name, locks_text, skip);
        if (!skip) rings.push_back(std::move(info));
    }
    ::closedir(stream);
    ::close(dirfd);
    std::sort(rings.begin(), rings.end(),
              [](const RingFileInfo& a, const RingFileInfo& b) { return a.path < b.path; });
    return rings;
}

}  // namespace evring
