// Reading the huge page pool and explaining a shortage. See hugepage_pool.hpp.
#include "ring/hugepage_pool.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <charconv>

#include "util/text_file.hpp"

namespace evring::detail {
namespace {

bool read_count(const std::string& path, std::uint64_t& value) {
    auto text = read_text_file(path);
    if (!text) return false;
    std::string_view t = *text;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    return ec == std::errc() && end != t.data();
}

std::uint64_t pages_for(std::uint64_t bytes, std::uint64_t page_size) {
    return (bytes + page_size - 1) / page_size;
}

}  // namespace

std::uint64_t HugePagePool::available() const noexcept {
    std::uint64_t unreserved = free > reserved ? free - reserved : 0;
    std::uint64_t extra = overcommit > surplus ? overcommit - surplus : 0;
    return unreserved + extra;
}

bool meminfo_value(std::string_view text, std::string_view key, std::uint64_t& value) {
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (line.size() <= key.size() || line.substr(0, key.size()) != key ||
            line[key.size()] != ':')
            continue;
        std::string_view rest = line.substr(key.size() + 1);
        std::size_t digits = rest.find_first_not_of(' ');
        if (digits == std::string_view::npos) return false;
        rest = rest.substr(digits);
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        return ec == std::errc() && p != rest.data();
    }
    return false;
}

Result<HugePagePool> read_huge_page_pool(std::uint64_t page_size, const std::string& sysfs_dir,
                                         const std::string& meminfo_path) {
    HugePagePool pool;
    pool.page_size = page_size;
    std::string dir = sysfs_dir + "/hugepages-" + std::to_string(page_size >> 10) + "kB";
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (!read_count(dir + "/nr_hugepages", pool.total) ||
            !read_count(dir + "/free_hugepages", pool.free))
            return Error(EIO, "cannot read the huge page pool counters in '" + dir + "'");
        // These two are optional: older kernels lack them for non-default sizes.
        (void)read_count(dir + "/resv_hugepages", pool.reserved);
        (void)read_count(dir + "/nr_overcommit_hugepages", pool.overcommit);
        (void)read_count(dir + "/surplus_hugepages", pool.surplus);
        return pool;
    }
    auto text = read_text_file(meminfo_path);
    if (!text) return std::move(text).error();
    std::uint64_t default_kib = 0;
    if (!meminfo_value(*text, "Hugepagesize", default_kib) || default_kib << 10 != page_size)
        return Error(ENOENT, "no huge page pool for " + std::to_string(page_size >> 10) +
                                 " kB pages in '" + sysfs_dir + "' or '" + meminfo_path + "'");
    if (!meminfo_value(*text, "HugePages_Total", pool.total) ||
        !meminfo_value(*text, "HugePages_Free", pool.free))
        return Error(EIO, "cannot read HugePages_Total/HugePages_Free in '" + meminfo_path + "'");
    (void)meminfo_value(*text, "HugePages_Rsvd", pool.reserved);
    (void)meminfo_value(*text, "HugePages_Surp", pool.surplus);
    return pool;
}

std::string pool_shortage_message(std::string_view path, std::uint64_t file_size,
                                  const HugePagePool& pool) {
    const std::uint64_t needed = pages_for(file_size, pool.page_size);
    const std::uint64_t available = pool.available();
    const std::uint64_t kib = pool.page_size >> 10;
    if (needed <= available) {
        // The pool has room, so the mount's own size= limit (or a race with
        // another allocation) is what stopped us.
        return fmt::format("the huge page pool has room for ring '{}' ({} pages of {} kB needed, {} "
                           "available), but the hugetlbfs mount refused: check its size= option or "
                           "concurrent users of the pool",
                           path, needed, kib, available);
    }
    const std::uint64_t target = pool.total + (needed - available);
    return fmt::format("not enough huge pages for ring '{}': it needs {} pages of {} kB ({} bytes), {} "
                       "are free ({} in the pool, {} reserved); reserve more with: echo {} | sudo tee "
                       "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
                       path, needed, kib, file_size, available, pool.total, pool.reserved, target, kib);
}

}  // namespace evring::detail
