#include "ipc/hugepages.hpp"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace evring::ipc {

namespace {

constexpr std::uint64_t kHugePage = 2u << 20;

std::string find_hugetlbfs_mount() {
    std::ifstream mounts("/proc/mounts");
    std::string line;
    while (std::getline(mounts, line)) {
        std::istringstream words(line);
        std::string device, dir, type, opts;
        words >> device >> dir >> type >> opts;
        // Only the default 2 MiB page size: the ring layout aligns to 2 MiB.
        if (type == "hugetlbfs" && opts.find("pagesize=1G") == std::string::npos) return dir;
    }
    return {};
}

std::uint64_t meminfo(const std::string& key) {
    std::ifstream in("/proc/meminfo");
    std::string name;
    std::uint64_t value = 0;
    while (in >> name) {
        if (name == key + ":") {
            in >> value;
            return value;
        }
        in.ignore(4096, '\n');
    }
    return 0;
}

}  // namespace

HugetlbfsDir prepare_hugetlbfs(const std::string& choice, std::uint64_t bytes) {
    if (choice == "off") return {{}, "disabled with --hugetlbfs off"};
    std::string dir = choice == "auto" ? find_hugetlbfs_mount() : choice;
    const bool root = ::geteuid() == 0;
    if (dir.empty()) {
        if (!root) return {{}, "no hugetlbfs mounted and not root"};
        dir = "/dev/hugepages-evring-bench";
        ::mkdir(dir.c_str(), 0755);
        if (::mount("none", dir.c_str(), "hugetlbfs", 0, nullptr) != 0)
            return {{}, "mount -t hugetlbfs " + dir + " failed"};
    }
    const std::uint64_t needed = (bytes + kHugePage - 1) / kHugePage + 2;
    const std::uint64_t free_pages = meminfo("HugePages_Free");
    if (free_pages < needed) {
        if (!root) return {{}, "only " + std::to_string(free_pages) + " free huge pages, not root"};
        const std::uint64_t total = meminfo("HugePages_Total") + (needed - free_pages);
        std::ofstream("/proc/sys/vm/nr_hugepages") << total << "\n";
        if (meminfo("HugePages_Free") < needed)
            return {{}, "could reserve only " + std::to_string(meminfo("HugePages_Free")) + " of " +
                            std::to_string(needed) + " huge pages"};
    }
    return {dir, {}};
}

}  // namespace evring::ipc
