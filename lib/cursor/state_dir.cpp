// Where named positions live (named_position.hpp): a private directory that
// survives the ring's removal and a reboot.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>

#include "cursor/named_position.hpp"
#include "util/text_escape.hpp"

namespace evring {
namespace {

// mkdir -p with 0700 for what it creates.
Status make_dirs(const std::string& path) {
    for (std::size_t at = 1; at <= path.size(); ++at) {
        if (at != path.size() && path[at] != '/') continue;
        const std::string part = path.substr(0, at);
        if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
            return Error::from_errno(errno, fmt::format("creating the reader state directory '{}'", part));
    }
    return {};
}

// The directory is where positions are trusted from: it must be ours and
// closed to others, or anyone could plant a position.
Status check_private_dir(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return Error::from_errno(errno, fmt::format("reader state directory '{}'", path));
    if (!S_ISDIR(st.st_mode))
        return Error(ENOTDIR, fmt::format("reader state directory '{}' is not a directory", path));
    if (st.st_uid != ::geteuid())
        return Error(EPERM, fmt::format("reader state directory '{}' belongs to uid {}, not to this user ({})", path,
                                        st.st_uid, ::geteuid()));
    if ((st.st_mode & 077) != 0)
        return Error(EPERM, fmt::format("reader state directory '{}' has mode {:04o}: others may read or plant "
                                        "positions there; chmod 700 it",
                                        path, st.st_mode & 07777));
    return {};
}

}  // namespace

Result<std::string> reader_state_dir(bool create) {
    std::string dir;
    if (const char* own = std::getenv("EVRING_STATE_DIR"); own != nullptr && *own != '\0') {
        dir = own;
    } else if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
        dir = std::string(xdg) + "/evring/readers";
    } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
        dir = std::string(home) + "/.local/state/evring/readers";
    } else {
        return Error(ENOENT, "no place for named reader positions: set EVRING_STATE_DIR, XDG_STATE_HOME or HOME");
    }
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (create) {
        const mode_t old = ::umask(077);
        auto made = make_dirs(dir);
        ::umask(old);
        if (!made) return std::move(made).error();
    }
    if (auto s = check_private_dir(dir); !s) return std::move(s).error();
    return dir;
}

Status check_reader_name(std::string_view name) {
    if (name.empty() || name.size() > 64)
        return Error(EINVAL, fmt::format("bad reader name '{}': a reader name is 1 to 64 characters", shortened(name)));
    if (name[0] == '.')
        return Error(EINVAL, fmt::format("bad reader name '{}': a reader name may not start with '.'", shortened(name)));
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '.';
        if (!ok)
            return Error(EINVAL, fmt::format("bad reader name '{}': a reader name is letters, digits, '_', '-' and '.'",
                                             shortened(name)));
    }
    return {};
}

std::string named_position_path(const std::string& dir, std::string_view name) {
    return fmt::format("{}/{}.pos", dir, name);
}

}  // namespace evring
