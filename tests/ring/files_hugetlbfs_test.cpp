// Rings on a real hugetlbfs mount: backing pages and the full-pool error.
// Skipped, with the reason, when no writable hugetlbfs mount exists (the
// test script mounts one as root; see docs/hugepages.md).
#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "ring/hugepage_pool.hpp"  // private (lib/)
#include "support/temp_ring.hpp"

namespace evring {
namespace {

// <mount>/event-rings for the default huge page size, or "" with `why`.
std::string hugetlbfs_ring_directory(std::string& why) {
    DirectoryOptions options;
    options.read_environment = false;
    options.print_warning = false;
    auto dir = default_ring_directory(options);
    if (!dir) {
        why = dir.error().message();
        return {};
    }
    if (!dir->hugetlbfs) {
        why = dir->warning;
        return {};
    }
    return dir->path;
}

// The decimal number that ends just before `marker` in `text` (0 if none).
std::uint64_t number_before(const std::string& text, const std::string& marker) {
    std::size_t end = text.find(marker);
    if (end == std::string::npos) return 0;
    std::size_t begin = end;
    while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
    return begin == end ? 0 : std::stoull(text.substr(begin, end - begin));
}

std::size_t files_named_like(const std::string& dir, const std::string& prefix) {
    std::size_t count = 0;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (std::string(e->d_name).rfind(prefix, 0) == 0) ++count;
        ::closedir(d);
    }
    return count;
}

TEST(HugetlbfsRing, IsBackedByHugePages) {
    std::string why;
    const std::string dir = hugetlbfs_ring_directory(why);
    if (dir.empty()) GTEST_SKIP() << "no usable hugetlbfs mount: " << why;
    const std::string name = "files-test-backing-" + std::to_string(::getpid());
    CreateOptions options;
    options.directory.read_environment = false;
    options.directory.print_warning = false;
    auto writer = RingWriter::create(test::small_spec(name, 15, 21), options);
    if (!writer && writer.error().errno_value() == ENOSPC)
        GTEST_SKIP() << "huge page pool too small: " << writer.error().message();
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    EXPECT_EQ(writer->path(), dir + "/" + name);
    EXPECT_TRUE(writer->ring().backing().hugetlbfs);
    auto reader = RingReader::open(name, options.directory);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_TRUE(reader->ring().backing().hugetlbfs);
    EXPECT_EQ(reader->ring().backing().page_size, writer->ring().backing().page_size);
    EXPECT_GE(reader->ring().backing().page_size, std::uint64_t{2} << 20);
}

TEST(HugetlbfsRing, TooLargeForThePoolFailsWithPagesNeededAndFree) {
    std::string why;
    const std::string dir = hugetlbfs_ring_directory(why);
    if (dir.empty()) GTEST_SKIP() << "no usable hugetlbfs mount: " << why;
    std::uint64_t page = 0;
    {
        auto probe = RingWriter::create(
            test::small_spec(dir + "/files-test-probe-" + std::to_string(::getpid()), 15, 21));
        if (!probe) GTEST_SKIP() << "cannot create even a small ring: " << probe.error().message();
        page = probe->ring().backing().page_size;
    }
    auto pool = detail::read_huge_page_pool(page);
    ASSERT_TRUE(pool.ok()) << pool.error().message();
    // The smallest payload buffer that cannot fit in what is available.
    unsigned shift = 21;
    while ((std::uint64_t{1} << shift) <= (pool->available() + 1) * page) ++shift;
    if (shift > kMaxPayloadBufShift) GTEST_SKIP() << "the huge page pool is too large to exhaust";
    const std::string name = "files-test-pool-" + std::to_string(::getpid());
    const RingSpec spec = test::small_spec(dir + "/" + name, 15, shift);
    const std::uint64_t file_size = RingLayout::of(spec.params().size()).file_size;
    const std::uint64_t needed = (file_size + page - 1) / page;

    auto writer = RingWriter::create(spec);
    ASSERT_FALSE(writer.ok()) << "a " << file_size << "-byte ring fit in " << pool->available()
                              << " free huge pages";
    const std::string& message = writer.error().message();
    EXPECT_EQ(writer.error().errno_value(), ENOSPC) << message;
    EXPECT_NE(message.find("needs " + std::to_string(needed) + " pages"), std::string::npos) << message;
    // The free count is read when the error happens (other processes may use
    // the pool too); it must exclude the pages the failed attempt took, and
    // the command must reserve exactly the missing pages.
    const std::uint64_t free_now = number_before(message, " are free (");
    const std::uint64_t total = number_before(message, " in the pool");
    const std::uint64_t target = number_before(message, " | sudo tee");
    if (pool->available() >= 8) {
        EXPECT_GT(free_now, 0u) << message;
    }
    EXPECT_EQ(target, total + needed - free_now) << message;
    EXPECT_NE(message.find("nr_hugepages"), std::string::npos) << message;
    EXPECT_EQ(files_named_like(dir, name), 0u) << "the temporary file was left behind";
}

TEST(HugetlbfsRing, MountSizeLimitIsReportedWhenThePoolHasRoom) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount hugetlbfs in a private mount namespace";
    std::string why;
    if (hugetlbfs_ring_directory(why).empty()) GTEST_SKIP() << "no usable hugetlbfs mount: " << why;
    auto pool = detail::read_huge_page_pool(std::uint64_t{2} << 20);
    if (!pool || pool->available() < 4) GTEST_SKIP() << "needs 4 free 2 MiB huge pages";
    test::TempDir dir;
    const std::string limited = dir.file("limited");
    ASSERT_EQ(::mkdir(limited.c_str(), 0755), 0);
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::unshare(CLONE_NEWNS) != 0) ::_exit(90);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(91);
        if (::mount("none", limited.c_str(), "hugetlbfs", 0, "pagesize=2M,size=4M") != 0) ::_exit(92);
        // Three 2 MiB pages (header, descriptors, payload) on a 2-page mount.
        auto writer = RingWriter::create(test::small_spec(limited + "/ring", 15, 21));
        std::string text = writer.ok() ? "created" : std::to_string(writer.error().errno_value()) + " " +
                                                         writer.error().message();
        if (::write(out[1], text.data(), text.size()) < 0) ::_exit(93);
        ::_exit(0);
    }
    ::close(out[1]);
    std::string text;
    char buf[1024];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "child setup step failed (90-93)";
    EXPECT_EQ(text.rfind(std::to_string(ENOSPC) + " ", 0), 0u) << text;
    EXPECT_NE(text.find("needed, "), std::string::npos) << text;
    EXPECT_NE(text.find("check its size= option"), std::string::npos) << text;
}

}  // namespace
}  // namespace evring
