// Resolution of ring names: libhugetlbfs (loaded lazily, only when it can
// cope with the mount table), our own mountinfo parser, the override and the
// /dev/shm fallback. See ring_directory.hpp for the contract.
#include "evring/ring_directory.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <hugetlbfs.h>

namespace evring {
namespace {

// libhugetlbfs 2.23 reads /proc/mounts in 2 KiB chunks: a line of 2056 bytes
// makes it print "Line too long when parsing mounts" and stop, while 1854
// bytes still work (measured). We only let it near a table whose longest line
// is well inside that.
constexpr std::size_t kLibhugetlbfsSafeLine = 1536;

std::string decode_octal_escapes(std::string_view field) {
    std::string out;
    out.reserve(field.size());
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && field.size() - i >= 4) {
            auto digit = [](char c) { return c >= '0' && c <= '7'; };
            if (digit(field[i + 1]) && digit(field[i + 2]) && digit(field[i + 3])) {
                out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                         (field[i + 3] - '0'));
                i += 3;
                continue;
            }
        }
        out += field[i];
    }
    return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t at = 0;
    while (at < line.size()) {
        std::size_t end = line.find(' ', at);
        if (end == std::string_view::npos) end = line.size();
        if (end > at) fields.push_back(line.substr(at, end - at));
        at = end + 1;
    }
    return fields;
}

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
    char buf[32];
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
        std::snprintf(buf, sizeof buf, "%lluG", static_cast<unsigned long long>(bytes >> 30));
    else if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        std::snprintf(buf, sizeof buf, "%lluM", static_cast<unsigned long long>(bytes >> 20));
    else
        std::snprintf(buf, sizeof buf, "%lluK", static_cast<unsigned long long>(bytes >> 10));
    return buf;
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
        auto page_size_fn = reinterpret_cast<decltype(&gethugepagesize)>(
            ::dlsym(lib, "gethugepagesize"));
        auto find_fn = reinterpret_cast<decltype(&hugetlbfs_find_path_for_size)>(
            ::dlsym(lib, "hugetlbfs_find_path_for_size"));
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
        default_size = parse_default_huge_page_size(*meminfo);
    if (!default_size) return {{}, "the kernel reports no default huge page size"};

    std::string unwritable;
    std::string other_sizes;
    for (const MountEntry& entry : parse_mountinfo(*text)) {
        if (entry.fs_type != "hugetlbfs") continue;
        std::uint64_t size = mount_page_size(entry).value_or(statfs_block_size(entry.mount_point));
        if (size != *default_size) {
            other_sizes += " " + entry.mount_point + " (" + size_text(size) + ")";
            continue;
        }
        if (::access(entry.mount_point.c_str(), W_OK | X_OK) != 0) {
            unwritable += " " + entry.mount_point;
            continue;
        }
        return {entry.mount_point, {}};
    }
    std::string why = "no hugetlbfs mount for the default " + size_text(*default_size) +
                      " page size in " + options.mountinfo_path;
    if (!unwritable.empty())
        why += "; mounted but not writable by uid " + std::to_string(::getuid()) + ":" + unwritable;
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
    std::call_once(once, [&] { std::fprintf(stderr, "%s\n", warning.c_str()); });
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, "opening '" + path + "'");
    std::string text;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return Error::from_errno(err, "reading '" + path + "'");
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
    std::vector<MountEntry> entries;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::vector<std::string_view> f = split_spaces(text.substr(at, end - at));
        at = end + 1;
        // id parent major:minor root mount-point mount-options [optional...] - type source super-options
        std::size_t dash = 6;
        while (dash < f.size() && f[dash] != "-") ++dash;
        if (f.size() < 7 || dash + 2 >= f.size()) continue;
        MountEntry entry;
        entry.mount_point = decode_octal_escapes(f[4]);
        entry.mount_options = decode_octal_escapes(f[5]);
        entry.fs_type = decode_octal_escapes(f[dash + 1]);
        entry.source = decode_octal_escapes(f[dash + 2]);
        if (dash + 3 < f.size()) entry.super_options = decode_octal_escapes(f[dash + 3]);
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::optional<std::uint64_t> mount_page_size(const MountEntry& entry) {
    std::string_view options = entry.super_options;
    std::size_t at = options.find("pagesize=");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view value = options.substr(at + 9);
    value = value.substr(0, value.find(','));
    std::uint64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || number == 0) return std::nullopt;
    std::string_view suffix(end, static_cast<std::size_t>(value.data() + value.size() - end));
    if (suffix == "K" || suffix == "k") return number << 10;
    if (suffix == "M" || suffix == "m") return number << 20;
    if (suffix == "G" || suffix == "g") return number << 30;
    if (suffix.empty()) return number;
    return std::nullopt;
}

std::optional<std::uint64_t> parse_default_huge_page_size(std::string_view meminfo_text) {
    std::size_t at = meminfo_text.find("Hugepagesize:");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = meminfo_text.substr(at + 13);
    std::size_t digits = rest.find_first_not_of(' ');
    if (digits == std::string_view::npos) return std::nullopt;
    rest = rest.substr(digits);
    std::uint64_t kib = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
    if (ec != std::errc() || kib == 0) return std::nullopt;
    return kib << 10;
}

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
            ::access(lib.path.c_str(), W_OK | X_OK) == 0)
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
