// Where ring names resolve: mountinfo parsing, the hugetlbfs mount, the
// EVRING_RING_DIR override and the /dev/shm fallback.
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <cstdlib>
#include <functional>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "evring/ring/ring_directory.hpp"
#include "util/mountinfo.hpp"   // private (lib/)
#include "util/text_file.hpp"   // private (lib/)
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;
using namespace evring::detail;

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::string mountinfo_line(const std::string& mount_point, const std::string& type,
                           const std::string& super_options) {
    return "99 24 0:39 / " + mount_point + " rw,relatime shared:5 - " + type + " none " +
           super_options + "\n";
}

// Options that look only at synthetic files in `dir`.
DirectoryOptions synthetic_options(const TempDir& dir, const std::string& mountinfo) {
    write_file(dir.file("mountinfo"), mountinfo);
    write_file(dir.file("meminfo"), "MemTotal: 100 kB\nHugepagesize:       2048 kB\n");
    DirectoryOptions options;
    options.mountinfo_path = dir.file("mountinfo");
    options.meminfo_path = dir.file("meminfo");
    options.fallback_base = dir.file("shm");
    ::mkdir(options.fallback_base.c_str(), 0755);
    options.read_environment = false;
    options.print_warning = false;
    return options;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
}

TEST(ParseMountinfo, FindsEntriesAfterAVeryLongLine) {
    // Kubernetes overlay mounts carry lowerdir lists far longer than
    // libhugetlbfs's 2 KiB line buffer.
    std::string lowerdirs = "lowerdir=";
    for (int i = 0; i < 4000; ++i) lowerdirs += "/var/lib/containerd/snapshots/" + std::to_string(i) + "/fs:";
    std::string text = mountinfo_line("/", "overlay", "rw," + lowerdirs) +
                       mountinfo_line("/dev/hugepages", "hugetlbfs", "rw,pagesize=2M");
    ASSERT_GT(text.size(), 100000u);
    auto entries = parse_mountinfo(text);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].fs_type, "overlay");
    EXPECT_EQ(entries[0].super_options.size(), 3 + lowerdirs.size());
    EXPECT_EQ(entries[1].mount_point, "/dev/hugepages");
    EXPECT_EQ(entries[1].fs_type, "hugetlbfs");
    EXPECT_EQ(mount_page_size(entries[1]), std::uint64_t{2} << 20);
}

TEST(ParseMountinfo, DecodesOctalEscapesAndSkipsMalformedLines) {
    std::string text = "garbage line\n" + mountinfo_line("/mnt/huge\\040pages", "hugetlbfs", "rw") +
                       "1 2 3 4 5 6 7\n" +  // no " - " separator
                       "36 35 98:0 /mnt1 /mnt2 rw,noatime - ext3 /dev/root rw,errors=continue";
    auto entries = parse_mountinfo(text);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].mount_point, "/mnt/huge pages");
    EXPECT_EQ(mount_page_size(entries[0]), std::nullopt);
    EXPECT_EQ(entries[1].mount_point, "/mnt2");
    EXPECT_EQ(entries[1].source, "/dev/root");
    EXPECT_EQ(entries[1].super_options, "rw,errors=continue");
}

TEST(MountPageSize, ReadsEachSuffix) {
    MountEntry entry;
    entry.super_options = "rw,pagesize=1G,size=4G";
    EXPECT_EQ(mount_page_size(entry), std::uint64_t{1} << 30);
    entry.super_options = "rw,pagesize=64K";
    EXPECT_EQ(mount_page_size(entry), std::uint64_t{64} << 10);
    entry.super_options = "rw,pagesize=lots";
    EXPECT_EQ(mount_page_size(entry), std::nullopt);
}

TEST(DefaultHugePageSize, ComesFromMeminfo) {
    EXPECT_EQ(parse_default_huge_page_size("HugePages_Total: 3\nHugepagesize:    1048576 kB\n"),
              std::uint64_t{1} << 30);
    EXPECT_EQ(parse_default_huge_page_size("MemTotal: 5 kB\n"), std::nullopt);
}

TEST(DefaultRingDirectory, UsesHugetlbfsMountFoundPastALongLine) {
    TempDir dir;
    std::string mount = dir.file("huge");
    ASSERT_EQ(::mkdir(mount.c_str(), 0755), 0);
    std::string long_line = mountinfo_line("/", "overlay", "rw,lowerdir=" + std::string(50000, 'x'));
    auto options = synthetic_options(dir, long_line + mountinfo_line(mount, "hugetlbfs", "rw,pagesize=2M"));
    auto found = default_ring_directory(options);
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_EQ(found->path, mount + "/event-rings");
    EXPECT_TRUE(found->hugetlbfs);
    EXPECT_TRUE(found->warning.empty()) << found->warning;
}

TEST(DefaultRingDirectory, CreatesEventRingsWithMode0775WhateverTheUmask) {
    TempDir dir;
    std::string mount = dir.file("huge");
    ASSERT_EQ(::mkdir(mount.c_str(), 0755), 0);
    auto options = synthetic_options(dir, mountinfo_line(mount, "hugetlbfs", "rw,pagesize=2M"));
    mode_t old_umask = ::umask(077);
    auto found = default_ring_directory(options);
    ::umask(old_umask);
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_EQ(mode_of(mount + "/event-rings"), 0775u);
}

TEST(DefaultRingDirectory, FallsBackToShmWithAWarningWhenNoHugetlbfsIsMounted) {
    TempDir dir;
    auto options = synthetic_options(dir, mountinfo_line("/", "ext4", "rw"));
    auto found = default_ring_directory(options);
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_EQ(found->path, options.fallback_base + "/event-rings");
    EXPECT_FALSE(found->hugetlbfs);
    EXPECT_NE(found->warning.find("no hugetlbfs mount for the default 2M page size"), std::string::npos)
        << found->warning;
    EXPECT_NE(found->warning.find("mount -t hugetlbfs"), std::string::npos) << found->warning;
    EXPECT_NE(found->warning.find("nr_hugepages"), std::string::npos) << found->warning;
}

TEST(DefaultRingDirectory, IgnoresMountsOfAnotherPageSizeAndSaysSo) {
    TempDir dir;
    std::string mount = dir.file("huge1g");
    ASSERT_EQ(::mkdir(mount.c_str(), 0755), 0);
    auto options = synthetic_options(dir, mountinfo_line(mount, "hugetlbfs", "rw,pagesize=1024M"));
    auto found = default_ring_directory(options);
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_FALSE(found->hugetlbfs);
    EXPECT_NE(found->warning.find(mount + " (1G)"), std::string::npos) << found->warning;
}

// Runs `body` as user nobody in a child; returns its exit code.
int as_nobody(const std::function<int()>& body) {
    pid_t child = ::fork();
    if (child == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(90);
        ::_exit(body());
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

TEST(DefaultRingDirectory, ReaderWithoutWritePermissionUsesAnExistingEventRingsDirectory) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to an unprivileged user";
    TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    const std::string with_rings = dir.file("with-rings");
    const std::string bare = dir.file("bare");
    for (const std::string& d : {with_rings, with_rings + "/event-rings", bare})
        ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
    auto options = synthetic_options(dir, mountinfo_line(with_rings, "hugetlbfs", "rw,pagesize=2M"));
    ASSERT_EQ(::chmod(options.fallback_base.c_str(), 0777), 0);
    EXPECT_EQ(as_nobody([&] {
                  auto found = default_ring_directory(options);
                  return found.ok() && found->path == with_rings + "/event-rings" ? 0 : 1;
              }),
              0);
    auto bare_options = synthetic_options(dir, mountinfo_line(bare, "hugetlbfs", "rw,pagesize=2M"));
    EXPECT_EQ(as_nobody([&] {
                  auto found = default_ring_directory(bare_options);
                  return found.ok() && !found->hugetlbfs &&
                                 found->warning.find("not writable by uid 65534: " + bare) !=
                                     std::string::npos
                             ? 0
                             : 1;
              }),
              0);
}

TEST(DefaultRingDirectory, FallbackWarningIsPrintedOncePerProcess) {
    TempDir dir;
    auto options = synthetic_options(dir, "");
    options.print_warning = true;
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::dup2(out[1], 2);
        bool ok = default_ring_directory(options).ok() && default_ring_directory(options).ok();
        ::_exit(ok ? 0 : 1);
    }
    ::close(out[1]);
    std::string printed;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) printed.append(buf, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_EQ(WEXITSTATUS(status), 0);
    std::size_t first = printed.find("no usable hugetlbfs mount");
    ASSERT_NE(first, std::string::npos) << printed;
    EXPECT_EQ(printed.find("no usable hugetlbfs mount", first + 1), std::string::npos) << printed;
}

TEST(DefaultRingDirectory, EnvironmentOverridesTheDirectory) {
    TempDir dir;
    std::string override_dir = dir.file("mine");
    ASSERT_EQ(::setenv(kRingDirEnv, override_dir.c_str(), 1), 0);
    DirectoryOptions options;
    options.print_warning = false;
    auto found = default_ring_directory(options);
    auto resolved = resolve_ring_path("ring-a", options);
    ::unsetenv(kRingDirEnv);
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_EQ(found->path, override_dir);
    EXPECT_TRUE(found->warning.empty());
    struct stat st {};
    EXPECT_EQ(::stat(override_dir.c_str(), &st), 0);  // created when missing
    ASSERT_TRUE(resolved.ok()) << resolved.error().message();
    EXPECT_EQ(*resolved, override_dir + "/ring-a");
}

TEST(ResolveRingPath, UsesNamesWithASlashAsWritten) {
    auto resolved = resolve_ring_path("/nowhere/at/all/ring");
    ASSERT_TRUE(resolved.ok());
    EXPECT_EQ(*resolved, "/nowhere/at/all/ring");
    EXPECT_EQ(resolve_ring_path("./ring").value(), "./ring");
}

TEST(ResolveRingPath, RejectsEmptyAndDotNames) {
    EXPECT_FALSE(resolve_ring_path("").ok());
    auto dot = resolve_ring_path("..");
    ASSERT_FALSE(dot.ok());
    EXPECT_NE(dot.error().message().find("'..' is not a valid ring name"), std::string::npos);
}

// The first writable hugetlbfs mount of the default page size, or "".
std::string real_hugetlbfs_mount() {
    auto mountinfo = read_text_file("/proc/self/mountinfo");
    auto meminfo = read_text_file("/proc/meminfo");
    if (!mountinfo || !meminfo) return {};
    auto default_size = parse_default_huge_page_size(*meminfo);
    for (const MountEntry& e : parse_mountinfo(*mountinfo))
        if (e.fs_type == "hugetlbfs" && mount_page_size(e).value_or(0) == default_size.value_or(1) &&
            ::access(e.mount_point.c_str(), W_OK) == 0)
            return e.mount_point;
    return {};
}

TEST(DefaultRingDirectory, UsesTheRealHugetlbfsMount) {
    const std::string mount = real_hugetlbfs_mount();
    if (mount.empty()) GTEST_SKIP() << "no writable hugetlbfs mount for the default huge page size";
    DirectoryOptions options;
    options.read_environment = false;  // ignore any EVRING_RING_DIR of the caller
    auto found = default_ring_directory(options);
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_EQ(found->path, mount + "/event-rings");
    EXPECT_TRUE(found->hugetlbfs);
    EXPECT_TRUE(found->warning.empty()) << found->warning;
    struct statfs fs {};
    ASSERT_EQ(::statfs(found->path.c_str(), &fs), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(fs.f_type), HUGETLBFS_MAGIC);
}

constexpr const char* kLongMountChildEnv = "EVRING_FILES_TEST_LONG_MOUNT_CHILD";

// When this binary is re-executed by the next test (inside a mount namespace
// holding a mount line too long for libhugetlbfs), it resolves the ring
// directory before gtest starts and exits: 0 when the expected directory was
// found without loading libhugetlbfs, 1 otherwise.
const bool kLongMountChildRan = [] {
    const char* expected = std::getenv(kLongMountChildEnv);
    if (expected == nullptr) return false;
    DirectoryOptions options;
    options.read_environment = false;
    auto found = default_ring_directory(options);
    // "<0|1>:<path>": whether a hugetlbfs mount is expected, and the directory.
    const bool want_hugetlbfs = expected[0] == '1';
    const bool right = found.ok() && found->path == expected + 2 && found->hugetlbfs == want_hugetlbfs &&
                       ::dlopen("libhugetlbfs.so.0", RTLD_NOW | RTLD_NOLOAD) == nullptr;
    ::_exit(right ? 0 : 1);
}();

TEST(DefaultRingDirectory, StaysQuietWithAMountLineTooLongForLibhugetlbfs) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a mount namespace";
    // With a hugetlbfs mount the child must find it; without one, fall back.
    const std::string mount = real_hugetlbfs_mount();
    const std::string expected =
        mount.empty() ? "0:/dev/shm/event-rings" : "1:" + mount + "/event-rings";
    TempDir dir;
    std::string long_path = dir.path();
    for (int i = 0; i < 10; ++i) long_path += "/" + std::string(200, static_cast<char>('a' + i));
    int err[2];
    ASSERT_EQ(::pipe(err), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::unshare(CLONE_NEWNS) != 0) ::_exit(90);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(91);
        std::string made;
        for (std::size_t at = 1; at != std::string::npos; at = long_path.find('/', at + 1)) {
            made = long_path.substr(0, long_path.find('/', at + 1));
            ::mkdir(made.c_str(), 0755);
        }
        if (::mount("none", long_path.c_str(), "tmpfs", 0, nullptr) != 0) ::_exit(92);
        ::setenv(kLongMountChildEnv, expected.c_str(), 1);
        int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(err[1], 2);
        ::execl("/proc/self/exe", "files_directory_test", nullptr);
        ::_exit(93);
    }
    ::close(err[1]);
    std::string printed;
    char buf[4096];
    for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) printed.append(buf, static_cast<std::size_t>(n));
    ::close(err[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "the child failed (90-93: a setup step; 1: wrong directory or libhugetlbfs loaded)";
    if (mount.empty()) {
        // Only our own fallback warning may appear, never libhugetlbfs's.
        EXPECT_EQ(printed.find("libhugetlbfs"), std::string::npos) << printed;
    } else {
        EXPECT_EQ(printed, "") << "nothing may be printed on stderr";
    }
}

}  // namespace
}  // namespace evring
