// lib/util/mountinfo.hpp — parsing the mount table and meminfo (private to the
// library; tests include it). No line-length limit, unlike libhugetlbfs: see
// ring_directory.hpp for why that matters.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evring::detail {

// One line of /proc/self/mountinfo, octal escapes (\040 etc.) decoded.
struct MountEntry {
    std::string mount_point;
    std::string fs_type;
    std::string source;
    std::string mount_options;  // per-mount options (field 6)
    std::string super_options;  // file-system options (last field), e.g. "rw,pagesize=2M"
};

// Parses mountinfo text; lines of any length. Malformed lines are skipped.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// The huge page size named by a hugetlbfs mount's "pagesize=" option, in
// bytes, or nullopt when absent or unreadable.
std::optional<std::uint64_t> mount_page_size(const MountEntry& entry);

// The system's default huge page size ("Hugepagesize:" in meminfo text), in
// bytes, or nullopt.
std::optional<std::uint64_t> parse_default_huge_page_size(std::string_view meminfo_text);

}  // namespace evring::detail
