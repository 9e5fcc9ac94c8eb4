// Finding (or, as root, preparing) a hugetlbfs mount with enough free huge
// pages for one benchmark ring.
#pragma once

#include <cstdint>
#include <string>

namespace evring::ipc {

struct HugetlbfsDir {
    std::string dir;      // empty when skipped
    std::string skipped;  // the reason, when dir is empty
};

// `choice`: "off", "auto" (find a mount; as root mount one and reserve pages
// when needed) or a directory to use as is. `bytes` is the ring file size.
HugetlbfsDir prepare_hugetlbfs(const std::string& choice, std::uint64_t bytes);

}  // namespace evring::ipc
