// lib/ring/hugepage_pool.hpp — the huge page pool, for explaining a full pool
// (private to the library; tests include it).
//
// Contract: when allocating a ring on hugetlbfs fails with ENOSPC, the writer
// reads the pool of the mount's page size (from
// /sys/kernel/mm/hugepages/hugepages-<kB>kB, or /proc/meminfo for the default
// size) and reports how many pages the ring needs, how many are free, and the
// command that reserves enough.
//
// Thread safety: pure functions and plain reads of sysfs/procfs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "evring/error.hpp"

namespace evring::detail {

struct HugePagePool {
    std::uint64_t page_size = 0;   // bytes
    std::uint64_t total = 0;       // nr_hugepages
    std::uint64_t free = 0;        // free_hugepages (includes reserved ones)
    std::uint64_t reserved = 0;    // resv_hugepages: promised to mappings, not yet faulted
    std::uint64_t overcommit = 0;  // nr_overcommit_hugepages
    std::uint64_t surplus = 0;     // surplus_hugepages

    // Pages a new file can still get: free minus reserved, plus unused overcommit.
    std::uint64_t available() const noexcept;
};

// Reads the pool for `page_size` from `sysfs_dir` (normally
// /sys/kernel/mm/hugepages), falling back to `meminfo_path` when the sysfs
// directory is missing.
Result<HugePagePool> read_huge_page_pool(std::uint64_t page_size,
                                         const std::string& sysfs_dir = "/sys/kernel/mm/hugepages",
                                         const std::string& meminfo_path = "/proc/meminfo");

// The message for a ring of `file_size` bytes that did not fit in `pool`:
// pages needed, pages free, and the command reserving enough.
std::string pool_shortage_message(std::string_view path, std::uint64_t file_size,
                                  const HugePagePool& pool);

// Finds "Key:   123 [kB]" in meminfo text and stores the number in `value`;
// false when the key is missing or not followed by a number.
bool meminfo_value(std::string_view text, std::string_view key, std::uint64_t& value);

}  // namespace evring::detail
