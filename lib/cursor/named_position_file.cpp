// Loading and committing named positions (named_position.hpp). A commit is
// write-temp, fsync, rename, fsync-directory: after a crash at any point the
// name holds the old position or the new one, whole.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>

#include "cursor/named_position_format.hpp"
#include "cursor/named_position.hpp"
#include "util/regular_file.hpp"
#include "util/write_all.hpp"

namespace evring {
namespace {

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const noexcept { return fd_; }

private:
    int fd_;
};

// Ours and private: a position someone else could write is a forged one.
Status check_owner(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, fmt::format("examining '{}'", path));
    if (st.st_uid != ::geteuid())
        return Error(EPERM, fmt::format("named reader position '{}' belongs to uid {}, not to this user ({}): "
                                        "refused as forged",
                                        path, st.st_uid, ::geteuid()));
    if ((st.st_mode & 077) != 0)
        return Error(EPERM, fmt::format("named reader position '{}' has mode {:04o}, open to others: refused "
                                        "(positions are 0600)",
                                        path, st.st_mode & 07777));
    if (static_cast<std::uint64_t>(st.st_size) > detail::kMaxNamedFile)
        return Error(EBADMSG, fmt::format("named reader position '{}' is {} bytes, more than any position file ({}): "
                                         "a foreign file",
                                         path, st.st_size, detail::kMaxNamedFile));
    return {};
}

Result<std::vector<std::byte>> read_small(int fd, const std::string& path) {
    std::vector<std::byte> bytes(detail::kMaxNamedFile + 1);
    std::size_t used = 0;
    while (used < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + used, bytes.size() - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Error::from_errno(errno, fmt::format("reading '{}'", path));
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
    }
    bytes.resize(used);
    return bytes;
}

}  // namespace

Result<std::optional<NamedPosition>> load_named_position(const std::string& dir, std::string_view name) {
    if (auto s = check_reader_name(name); !s) return std::move(s).error();
    const std::string path = named_position_path(dir, name);
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return std::optional<NamedPosition>();
    auto fd = detail::open_regular_file(path, fmt::format("named reader position '{}'", path));
    if (!fd) return std::move(fd).error();
    Fd file(*fd);
    if (auto s = check_owner(file.get(), path); !s) return std::move(s).error();
    auto bytes = read_small(file.get(), path);
    if (!bytes) return std::move(bytes).error();
    auto decoded = detail::decode_named_position(path, name, *bytes);
    if (!decoded) return std::move(decoded).error();
    return std::optional<NamedPosition>(std::move(*decoded));
}

Status commit_named_position(const std::string& dir, const NamedPosition& position) {
    if (auto s = check_reader_name(position.name); !s) return s;
    if (position.ring.empty() || position.ring.size() > detail::kMaxRingBytes || position.last_seqno.empty() ||
        position.last_seqno.size() > detail::kMaxMembers)
        return Error(EINVAL, fmt::format("reader '{}': a position needs a ring path of 1 to {} bytes and 1 to {} "
                                         "members",
                                         position.name, detail::kMaxRingBytes, detail::kMaxMembers));
    const std::string path = named_position_path(dir, position.name);
    // Unique per process: two writers of one name are kept apart by the
    // reader's lock, and a stale temporary file of a killed reader is
    // replaced by O_TRUNC.
    const std::string temp = fmt::format("{}/.{}.{}.tmp", dir, position.name, ::getpid());
    const auto bytes = detail::encode_named_position(position);
    {
        Fd file(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (file.get() < 0) return Error::from_errno(errno, fmt::format("creating '{}'", temp));
        if (auto s = detail::write_all(file.get(), bytes.data(), bytes.size(), fmt::format("'{}'", temp)); !s) {
            ::unlink(temp.c_str());
            return s;
        }
        // The data must be on disk before the rename makes it the position.
        if (::fsync(file.get()) != 0) {
            const int err = errno;
            ::unlink(temp.c_str());
            return Error::from_errno(err, fmt::format("syncing '{}'", temp));
        }
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return Error::from_errno(err, fmt::format("renaming '{}' to '{}'", temp, path));
    }
    // The rename is durable once the directory is.
    Fd directory(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (directory.get() < 0 || ::fsync(directory.get()) != 0)
        return Error::from_errno(errno, fmt::format("syncing the directory '{}'", dir));
    return {};
}

Status remove_named_position(const std::string& dir, std::string_view name) {
    if (auto s = check_reader_name(name); !s) return s;
    const std::string path = named_position_path(dir, name);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        return Error::from_errno(errno, fmt::format("removing '{}'", path));
    return {};
}

std::vector<NamedPosition> list_named_positions(const std::string& dir, std::vector<std::string>& problems) {
    std::vector<NamedPosition> found;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return found;
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(d)) {
        const std::string_view file = entry->d_name;
        if (file.size() <= 4 || file.substr(file.size() - 4) != ".pos" || file[0] == '.') continue;
        names.emplace_back(file.substr(0, file.size() - 4));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
        auto loaded = load_named_position(dir, name);
        if (!loaded) problems.push_back(loaded.error().message());
        else if (*loaded) found.push_back(std::move(**loaded));
    }
    return found;
}

}  // namespace evring
