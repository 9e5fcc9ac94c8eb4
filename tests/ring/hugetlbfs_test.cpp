// A ring on a real hugetlbfs mount is backed by huge pages. The test command
// (scripts/test) reserves pages and mounts hugetlbfs as root; elsewhere this
// test is skipped with the reason.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

// The first hugetlbfs mount point for 2 MiB pages in /proc/self/mounts.
std::string find_hugetlbfs_mount() {
    std::ifstream mounts("/proc/self/mounts");
    std::string line;
    while (std::getline(mounts, line)) {
        std::istringstream fields(line);
        std::string device, dir, type, options;
        fields >> device >> dir >> type >> options;
        if (type == "hugetlbfs" && options.find("pagesize=1024M") == std::string::npos &&
            ::access(dir.c_str(), W_OK) == 0)
            return dir;
    }
    return {};
}

std::uint64_t meminfo(const char* key) {
    std::ifstream in("/proc/meminfo");
    std::string name;
    std::uint64_t value = 0;
    while (in >> name >> value) {
        if (name == key) return value;
        in.ignore(256, '\n');
    }
    return 0;
}

// KernelPageSize (kB) of the mapping containing `address`, from /proc/self/smaps.
std::uint64_t kernel_page_size_kb(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    const auto target = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long lo = 0, hi = 0;
        char perms[8] = {};
        // A mapping's first line: "lo-hi perms offset dev inode path".
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3) {
            inside = target >= lo && target < hi;
            continue;
        }
        unsigned long kb = 0;
        if (inside && std::sscanf(line.c_str(), "KernelPageSize: %lu kB", &kb) == 1) return kb;
    }
    return 0;
}

TEST(Hugetlbfs, RingIsBackedByHugePages) {
    const std::string mount = find_hugetlbfs_mount();
    if (mount.empty())
        GTEST_SKIP() << "no writable hugetlbfs mount (scripts/test mounts one when run as root)";
    const std::uint64_t free_before = meminfo("HugePages_Free:");
    // 2^15 descriptors (2 MiB) and a 2 MiB payload buffer: 3 huge pages.
    const RingParams params = test::small_params(15, 21);
    if (free_before < 3)
        GTEST_SKIP() << "only " << free_before << " free huge pages; need 3 (echo N > /proc/sys/vm/nr_hugepages)";
    const std::string path = mount + "/evring-hugetlbfs-test-" + std::to_string(::getpid());
    int fd = test::create_ring_file(path, params);
    ASSERT_GE(fd, 0);
    ::close(fd);
    EXPECT_EQ(meminfo("HugePages_Free:"), free_before - 3) << "storage is allocated up front";
    {
        MappedRing writer = test::map_path(path, Access::ReadWrite);
        MappedRing reader = test::map_path(path, Access::ReadOnly);
        EXPECT_TRUE(writer.backing().hugetlbfs);
        EXPECT_EQ(writer.backing().page_size, 2u << 20);
        EXPECT_EQ(kernel_page_size_kb(writer.descriptors()), 2048u);
        EXPECT_EQ(kernel_page_size_kb(reader.payload_buffer()), 2048u);
        EXPECT_EQ(kernel_page_size_kb(reader.payload_buffer() + (2u << 20)), 2048u)
            << "the second view of the payload buffer too";

        Publisher publisher(writer);
        Iterator it(reader);
        for (std::uint64_t i = 0; i < 1000; ++i) {
            Reservation r = publisher.reserve(8);
            std::memcpy(r.payload(), &i, 8);
            publisher.commit(r);
        }
        it.seek(1);
        EventDescriptor event{};
        for (std::uint64_t i = 0; i < 1000; ++i) {
            ASSERT_EQ(it.try_next(event), NextResult::Success);
            std::uint64_t value = 0;
            ASSERT_EQ(copy_payload(reader, event, &value, 8), PayloadResult::Ok);
            EXPECT_EQ(value, i);
        }
    }
    ::unlink(path.c_str());
}

TEST(Hugetlbfs, SizesThatAreNotWholeHugePagesAreRejected) {
    const std::string mount = find_hugetlbfs_mount();
    if (mount.empty())
        GTEST_SKIP() << "no writable hugetlbfs mount (scripts/test mounts one when run as root)";
    const std::string path = mount + "/evring-hugetlbfs-bad-" + std::to_string(::getpid());
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
    ASSERT_GE(fd, 0);
    auto status = initialize_ring_file(fd, test::small_params(8, 16), path);
    ::close(fd);
    ::unlink(path.c_str());
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message().find("2097152-byte pages"), std::string::npos)
        << status.error().message();
    EXPECT_NE(status.error().message().find("descriptor shift of at least 15"), std::string::npos)
        << status.error().message();
}

}  // namespace
}  // namespace evring
