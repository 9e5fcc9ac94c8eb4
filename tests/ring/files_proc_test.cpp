// Parsing what the kernel reports about locks and the huge page pool.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "ring/hugepage_pool.hpp"  // private (lib/)
#include "ring/ring_locks.hpp"     // private (lib/)
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;
using namespace evring::detail;

TEST(ProcLocks, ParsesHoldersOfOneFileAndSkipsWaiters) {
    const dev_t device = makedev(0, 0x1b);
    const std::string text =
        "1: FLOCK  ADVISORY  WRITE 6444 00:1b:141 0 EOF\n"
        "1: -> FLOCK  ADVISORY  WRITE 7000 00:1b:141 0 EOF\n"
        "2: OFDLCK ADVISORY  READ -1 00:1b:141 0 0\n"
        "3: FLOCK  ADVISORY  READ 12 00:1b:142 0 EOF\n"
        "4: FLOCK  ADVISORY  READ 13 08:01:141 0 EOF\n"
        "5: FLOCK  ADVISORY  READ 14 00:1b:141 0 EOF\n"
        "6: POSIX  ADVISORY  WRITE 0 00:1b:141 0 EOF\n";
    auto holders = parse_proc_locks(text, device, 141);
    ASSERT_EQ(holders.size(), 4u);
    EXPECT_EQ(holders[0].kind, LockKind::Flock);
    EXPECT_TRUE(holders[0].exclusive);
    EXPECT_EQ(holders[0].pid, 6444);
    EXPECT_EQ(holders[1].kind, LockKind::Ofd);
    EXPECT_EQ(holders[1].pid, -1);
    EXPECT_EQ(flock_holder_pids(holders), (std::vector<pid_t>{6444, 14}));
}

TEST(HugePagePool, ExplainsAShortageWithTheCommandThatFixesIt) {
    HugePagePool pool;
    pool.page_size = 2 << 20;
    pool.total = 64;
    pool.free = 10;
    pool.reserved = 2;
    std::string message = pool_shortage_message("/dev/hugepages/event-rings/r", 40u << 20, pool);
    EXPECT_NE(message.find("needs 20 pages of 2048 kB"), std::string::npos) << message;
    EXPECT_NE(message.find("8 are free"), std::string::npos) << message;
    EXPECT_NE(message.find("echo 76 | sudo tee /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
              std::string::npos)
        << message;
}

TEST(HugePagePool, ReadsSysfsAndFallsBackToMeminfo) {
    TempDir dir;
    const std::string sysfs = dir.file("hugepages");
    ASSERT_EQ(::mkdir(sysfs.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((sysfs + "/hugepages-2048kB").c_str(), 0755), 0);
    for (auto [file, value] : {std::pair{"nr_hugepages", "30\n"}, {"free_hugepages", "7\n"},
                               {"resv_hugepages", "1\n"}, {"nr_overcommit_hugepages", "5\n"},
                               {"surplus_hugepages", "2\n"}})
        std::ofstream(sysfs + "/hugepages-2048kB/" + file) << value;
    auto pool = read_huge_page_pool(2 << 20, sysfs, dir.file("meminfo"));
    ASSERT_TRUE(pool.ok()) << pool.error().message();
    EXPECT_EQ(pool->total, 30u);
    EXPECT_EQ(pool->available(), 6u + 3u);

    std::ofstream(dir.file("meminfo")) << "HugePages_Total:      12\nHugePages_Free:        4\n"
                                          "HugePages_Rsvd:        1\nHugepagesize:       1048576 kB\n";
    auto from_meminfo = read_huge_page_pool(1 << 30, sysfs, dir.file("meminfo"));
    ASSERT_TRUE(from_meminfo.ok()) << from_meminfo.error().message();
    EXPECT_EQ(from_meminfo->total, 12u);
    EXPECT_EQ(from_meminfo->available(), 3u);
}

}  // namespace
}  // namespace evring
