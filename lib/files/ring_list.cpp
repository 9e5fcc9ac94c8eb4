// Listing a ring directory. See ring_list.hpp for the contract.
#include "files/ring_list.hpp"

#include "registry/reader_registry_format.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <charconv>

#include "evring/ring/ring.hpp"
#include "ring/ring_locks.hpp"
#include "ring/ring_open.hpp"
#include "util/text_file.hpp"

namespace evring {
namespace {

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
        auto holders = detail::parse_proc_locks(proc_locks, st.st_dev, st.st_ino);
        info.writer_pids = detail::flock_holder_pids(holders);
    }
    pid_t temp_pid = temp_file_pid(name);
    if (temp_pid != 0 && std::find(info.writer_pids.begin(), info.writer_pids.end(), temp_pid) !=
                             info.writer_pids.end()) {
        skip = true;  // a live writer's temporary file, not yet a ring
        ::close(fd);
        return info;
    }
    info.writer_alive = detail::any_writer_alive(fd);
    RingHeader header{};
    ssize_t n = ::pread(fd, &header, sizeof header, 0);
    if (n >= static_cast<ssize_t>(kRegistryMagic.size()) &&
        std::memcmp(&header, kRegistryMagic.data(), kRegistryMagic.size()) == 0) {
        skip = true;  // a ring's reader registry (P.readers): `evring readers P` shows it
    } else if (n < 0) {
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
    auto proc_locks = detail::read_text_file("/proc/locks");
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
