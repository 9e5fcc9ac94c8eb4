// Writer locks and liveness probes. See ring_locks.hpp for the protocol.
#include "ring/ring_locks.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "util/text_file.hpp"

namespace evring::detail {
namespace {

std::vector<std::string_view> split_whitespace(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t at = 0;
    while (at < line.size()) {
        at = line.find_first_not_of(" \t", at);
        if (at == std::string_view::npos) break;
        std::size_t end = line.find_first_of(" \t", at);
        if (end == std::string_view::npos) end = line.size();
        fields.push_back(line.substr(at, end - at));
        at = end;
    }
    return fields;
}

template <class T>
bool parse_number(std::string_view text, T& value, int base = 10) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    return ec == std::errc() && end == text.data() + text.size();
}

// "maj:min:inode" with the device numbers in hex, as /proc/locks prints them.
bool same_file(std::string_view field, dev_t device, ino_t inode) {
    std::size_t first = field.find(':');
    std::size_t second = field.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) return false;
    unsigned major_number = 0;
    unsigned minor_number = 0;
    unsigned long long inode_number = 0;
    if (!parse_number(field.substr(0, first), major_number, 16) ||
        !parse_number(field.substr(first + 1, second - first - 1), minor_number, 16) ||
        !parse_number(field.substr(second + 1), inode_number))
        return false;
    return major_number == major(device) && minor_number == minor(device) &&
           inode_number == static_cast<unsigned long long>(inode);
}

struct flock marker_range(short type) {
    struct flock range {};
    range.l_type = type;
    range.l_whence = SEEK_SET;
    range.l_start = 0;
    range.l_len = 1;
    return range;
}

}  // namespace

std::vector<LockHolder> parse_proc_locks(std::string_view text, dev_t device, ino_t inode) {
    std::vector<LockHolder> holders;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::vector<std::string_view> f = split_whitespace(text.substr(at, end - at));
        at = end + 1;
        // "id: [->] KIND ADVISORY|MANDATORY READ|WRITE pid maj:min:ino start end";
        // "->" marks a waiter, which holds nothing.
        if (f.size() < 6 || f[1] == "->") continue;
        if (!same_file(f[5], device, inode)) continue;
        LockHolder holder;
        if (f[1] == "FLOCK") holder.kind = LockKind::Flock;
        else if (f[1] == "POSIX") holder.kind = LockKind::Posix;
        else if (f[1] == "OFDLCK") holder.kind = LockKind::Ofd;
        holder.exclusive = f[3] == "WRITE";
        int pid = 0;
        if (parse_number(f[4], pid)) holder.pid = pid;
        holders.push_back(holder);
    }
    return holders;
}

Result<std::vector<LockHolder>> lock_holders(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, "examining a ring file's locks");
    auto text = read_text_file("/proc/locks");
    if (!text) return std::move(text).error();
    return parse_proc_locks(*text, st.st_dev, st.st_ino);
}

std::vector<pid_t> flock_holder_pids(const std::vector<LockHolder>& holders) {
    std::vector<pid_t> pids;
    for (bool exclusive : {true, false}) {
        for (const LockHolder& h : holders) {
            if (h.kind != LockKind::Flock || h.exclusive != exclusive || h.pid <= 0) continue;
            if (std::find(pids.begin(), pids.end(), h.pid) == pids.end()) pids.push_back(h.pid);
        }
    }
    return pids;
}

Status hold_writer_marker(int fd, bool exclusive, std::string_view path) {
    struct flock range = marker_range(exclusive ? F_WRLCK : F_RDLCK);
    if (::fcntl(fd, F_OFD_SETLK, &range) != 0)
        return Error::from_errno(errno, "taking the writer marker lock on '" + std::string(path) + "'");
    return {};
}

Result<bool> writer_marker_present(int fd) {
    // A write-lock query conflicts with every marker, shared or exclusive.
    // F_OFD_GETLK only reports; it takes nothing and works on a read-only fd.
    struct flock query = marker_range(F_WRLCK);
    if (::fcntl(fd, F_OFD_GETLK, &query) != 0)
        return Error::from_errno(errno, "probing a ring file's writer marker");
    return query.l_type != F_UNLCK;
}

Result<bool> exclusive_flock_held(int fd) {
    auto probe = reopen_read_only(fd);
    if (!probe) return std::move(probe).error();
    bool held = false;
    if (::flock(*probe, LOCK_SH | LOCK_NB) == 0) {
        // Closing releases the shared lock at once.
        held = false;
    } else if (errno == EWOULDBLOCK) {
        held = true;
    } else {
        int err = errno;
        ::close(*probe);
        return Error::from_errno(err, "probing a ring file's flock");
    }
    ::close(*probe);
    return held;
}

bool any_writer_alive(int fd) {
    // 1. evring writers always hold the marker: answered without pids and
    //    without taking any lock.
    if (auto marker = writer_marker_present(fd); marker && *marker) return true;
    // 2. A writer without a marker (another implementation) holding LOCK_EX.
    //    Reached only when no evring writer holds the ring, so our brief
    //    LOCK_SH can at most make a zombie-reclaiming writer retry.
    // Shared flock holders without a marker are not counted: /proc/locks
    // cannot tell them from other readers' momentary probes.
    auto held = exclusive_flock_held(fd);
    return held && *held;
}

Result<int> reopen_read_only(int fd) {
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    int probe = ::open(link.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (probe < 0) return Error::from_errno(errno, "reopening a ring file through '" + link + "'");
    return probe;
}

int open_pidfd(pid_t pid) noexcept {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

}  // namespace evring::detail
