// Resolution of ring names: libhugetlbfs (loaded lazily, only when it can
// cope with the mount table), our own mountinfo parser, the override and the
// /dev/shm fallback. See ring_directory.hpp for the contract.
#include "evring/ring/ring_directory.hpp"

#include <dlfcn.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "util/mountinfo.hpp"
#include "util/text_file.hpp"

namespace evring {
namespace {

using detail::MountEntry;
using detail::read_text_file;

// libhugetlbfs 2.23 reads /proc/mounts in 2 KiB chunks: a line of 2056 bytes
// makes it print "Line too long when parsing mounts" and stop, while 1854
// bytes still work (measured). We only let it near a table whose longest line
// is well inside that.
constexpr std::size_t kLibhugetlbfsSafeLine = 1536;

bool is_hugetlbfs(const std::string& path) {
    struct statfs fs {};
    return ::statfs(path.c_str(), &fs) == 0 &&
           static_cast<std::uint64_t>(fs.f_type) == HUGETLBFS_MAGIC;
}

std::uint64_t statfs_block_size(const std::string& path) {
    struct statfs fs {};
    if (::statfs(path.c_str(), &fs) != 0) return 0;
    return static_cast<std::uint64_t>(fs.f_bsize);
}

std::string size_text(std::uint64_t bytes) {
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return fmt::format("{}G", bytes >> 30);
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}M", bytes >> 20);
    return fmt::format("{}K", bytes >> 10);
}

// A mount is usable when its event-rings directory exists and can be
// searched (enough for readers; a writer lacking write permission there gets
// a clear EACCES rather than a silent move to /dev/shm), or when we may
// create that directory.
bool usable_mount(const std::string& mount) {
    const std::string rings = mount + "/" + kRingSubdirectory;
    return ::access(rings.c_str(), X_OK) == 0 || ::access(mount.c_str(), W_OK | X_OK) == 0;
}

// What libhugetlbfs said, asked once per process (it caches the mount table
// in its constructor anyway).
struct LibhugetlbfsAnswer {
    std::string path;  // empty when it found nothing or was not asked
    std::string why_not;
};

const LibhugetlbfsAnswer& ask_libhugetlbfs() {
    static LibhugetlbfsAnswer answer;
    static std::once_flag once;
    std::call_once(once, [] {
        auto mounts = read_text_file("/proc/self/mounts");
        if (!mounts) {
            answer.why_not = "cannot read /proc/self/mounts";
            return;
        }
        std::string_view text = *mounts;
        std::size_t longest = 0;
        for (std::size_t at = 0; at < text.size();) {
            std::size_t end = text.find('\n', at);
            if (end == std::string_view::npos) end = text.size();
            longest = std::max(longest, end - at + 1);
            at = end + 1;
        }
        if (longest >= kLibhugetlbfsSafeLine) {
            answer.why_not = "a mount line of " + std::to_string(longest) +
                             " bytes is too long for libhugetlbfs";
            return;
        }
        void* lib = ::dlopen("libhugetlbfs.so.0", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            answer.why_not = "libhugetlbfs.so.0 could not be loaded";
            return;
        }
        // The library stays loaded: it keeps its mount table in static state.
        // Its two functions, as hugetlbfs.h declares them (we need neither the
        // header nor a link-time dependency: it is loaded only when usable).
        using GetHugePageSize = long (*)();
        using FindPathForSize = const char* (*)(long page_size);
        auto page_size_fn = reinterpret_cast<GetHugePageSize>(::dlsym(lib, "gethugepagesize"));
        auto find_fn = reinterpret_cast<FindPathForSize>(::dlsym(lib, "hugetlbfs_find_path_for_size"));
        if (page_size_fn == nullptr || find_fn == nullptr) {
            answer.why_not = "libhugetlbfs lacks hugetlbfs_find_path_for_size";
            return;
        }
        long page_size = page_size_fn();
        if (page_size <= 0) {
            answer.why_not = "libhugetlbfs reports no huge page support";
            return;
        }
        const char* path = find_fn(page_size);
        if (path == nullptr) {
            answer.why_not = "libhugetlbfs found no hugetlbfs mount for " +
                             size_text(static_cast<std::uint64_t>(page_size)) + " pages";
            return;
        }
        answer.path = path;
    });
    return answer;
}

struct MountSearch {
    std::string mount;  // empty when none is usable
    std::string why_not;
};

// Our own answer: the first writable hugetlbfs mount whose page size is the
// default huge page size.
MountSearch search_mountinfo(const DirectoryOptions& options) {
    auto text = read_text_file(options.mountinfo_path);
    if (!text) return {{}, text.error().message()};
    std::optional<std::uint64_t> default_size;
    if (auto meminfo = read_text_file(options.meminfo_path))
        default_size = detail::parse_default_huge_page_size(*meminfo);
    if (!default_size) return {{}, "the kernel reports no default huge page size"};

    std::string unwritable;
    std::string other_sizes;
    for (const MountEntry& entry : detail::parse_mountinfo(*text)) {
        if (entry.fs_type != "hugetlbfs") continue;
        std::uint64_t size = detail::mount_page_size(entry).value_or(statfs_block_size(entry.mount_point));
        if (size != *default_size) {
            other_sizes += " " + entry.mount_point + " (" + size_text(size) + ")";
            continue;
        }
        if (!usable_mount(entry.mount_point)) {
            unwritable += " " + entry.mount_point;
            continue;
        }
        return {entry.mount_point, {}};
    }
    std::string why = "no hugetlbfs mount for the default " + size_text(*default_size) +
                      " page size in " + options.mountinfo_path;
    if (!unwritable.empty())
        why += "; mounted without an event-rings directory and not writable by uid " +
               std::to_string(::getuid()) + ":" + unwritable;
    if (!other_sizes.empty()) why += "; mounts of other page sizes:" + other_sizes;
    return {{}, why};
}

// Creates `path` with mode 0775 exactly when missing; fine when it is a directory.
Status ensure_directory(const std::string& path) {
    if (::mkdir(path.c_str(), 0775) == 0) {
        // mkdir applies the umask; the contract says 0775.
        if (::chmod(path.c_str(), 0775) != 0)
            return Error::from_errno(errno, "setting mode 0775 on ring directory '" + path + "'");
        return {};
    }
    if (errno != EEXIST) return Error::from_errno(errno, "creating ring directory '" + path + "'");
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return Error::from_errno(errno, "examining ring directory '" + path + "'");
    if (!S_ISDIR(st.st_mode)) return Error(ENOTDIR, "ring directory '" + path + "' is not a directory");
    return {};
}

void print_warning_once(const std::string& warning) {
    static std::once_flag once;
    std::call_once(once, [&] { fmt::print(stderr, "{}\n", warning); });
}

}  // namespace

Result<RingDirectory> default_ring_directory() { return default_ring_directory(DirectoryOptions{}); }

Result<RingDirectory> default_ring_directory(const DirectoryOptions& options) {
    std::optional<std::string> override_dir = options.ring_dir_override;
    if (options.read_environment) {
        const char* env = std::getenv(kRingDirEnv);
        override_dir = (env != nullptr && *env != '\0') ? std::optional<std::string>(env)
                                                        : std::nullopt;
    }
    if (override_dir) {
        if (auto s = ensure_directory(*override_dir); !s)
            return std::move(s).context(std::string("using $") + kRingDirEnv).error();
        return RingDirectory{*override_dir, is_hugetlbfs(*override_dir), {}};
    }

    MountSearch found;
    const bool real_table = options.mountinfo_path == DirectoryOptions{}.mountinfo_path;
    if (options.use_libhugetlbfs && real_table) {
        const LibhugetlbfsAnswer& lib = ask_libhugetlbfs();
        if (!lib.path.empty() && is_hugetlbfs(lib.path) &&
            usable_mount(lib.path))
            found.mount = lib.path;
    }
    if (found.mount.empty()) found = search_mountinfo(options);

    std::string why_not = found.why_not;
    if (!found.mount.empty()) {
        std::string dir = found.mount + "/" + kRingSubdirectory;
        auto made = ensure_directory(dir);
        if (made) return RingDirectory{dir, true, {}};
        why_not = made.error().message();
    }

    std::string dir = options.fallback_base + "/" + kRingSubdirectory;
    if (auto s = ensure_directory(dir); !s)
        return std::move(s).context("no usable hugetlbfs mount (" + why_not + ")").error();
    RingDirectory result{dir, false, {}};
    result.warning = "evring: warning: no usable hugetlbfs mount (" + why_not +
                     "); rings named without a '/' live in " + dir +
                     " on normal pages. For huge pages, reserve them "
                     "(echo 64 | sudo tee /proc/sys/vm/nr_hugepages) and mount hugetlbfs "
                     "(sudo mount -t hugetlbfs -o mode=1777 none /dev/hugepages), or set " +
                     kRingDirEnv + "; see docs/hugepages.md";
    if (options.print_warning) print_warning_once(result.warning);
    return result;
}

Result<std::string> resolve_ring_path(std::string_view name_or_path) {
    return resolve_ring_path(name_or_path, DirectoryOptions{});
}

Result<std::string> resolve_ring_path(std::string_view name_or_path,
                                      const DirectoryOptions& options) {
    if (name_or_path.empty()) return Error(EINVAL, "the ring name is empty");
    if (name_or_path.find('/') != std::string_view::npos) return std::string(name_or_path);
    if (name_or_path == "." || name_or_path == "..")
        return Error(EINVAL, std::string("'").append(name_or_path).append("' is not a valid ring name"));
    auto dir = default_ring_directory(options);
    if (!dir) return std::move(dir).context("resolving ring '" + std::string(name_or_path) + "'").error();
    return dir->path + "/" + std::string(name_or_path);
}

}  // namespace evring
