// Ring instance and process identities for the reader registry. See
// registry_identity.hpp.
#include "registry/registry_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <string_view>

#include "evring/ring/ring.hpp"
#include "util/text_file.hpp"

namespace evring::detail {

Result<RingIdentity> ring_identity_of(int ring_fd, const RingHeader& header) {
    struct stat st {};
    if (::fstat(ring_fd, &st) != 0) return Error::from_errno(errno, "examining the ring file");
    RingIdentity identity{};
    identity.device = static_cast<std::uint64_t>(st.st_dev);
    identity.inode = static_cast<std::uint64_t>(st.st_ino);
    // The birth time tells a re-created ring from the old one where the file
    // system reuses inode numbers (ext4); tmpfs records it too. hugetlbfs
    // does not, but numbers its inodes from an ever-growing counter.
    struct statx sx {};
    if (::statx(ring_fd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) == 0 &&
        (sx.stx_mask & STATX_BTIME) != 0) {
        identity.birth_sec = sx.stx_btime.tv_sec;
        identity.birth_nsec = sx.stx_btime.tv_nsec;
    }
    identity.content_type = header.content_type;
    identity.size = header.size;
    identity.schema_hash = header.schema_hash;
    return identity;
}

std::string identity_mismatch(const RingIdentity& registry, const RingIdentity& ring) {
    auto differs = [](std::string_view field, auto in_registry, auto in_ring) {
        return fmt::format("ring {} is {} in the registry, {} for the ring", field, in_registry,
                           in_ring);
    };
    if (registry.device != ring.device) return differs("device", registry.device, ring.device);
    if (registry.inode != ring.inode) return differs("inode", registry.inode, ring.inode);
    if (registry.birth_sec != ring.birth_sec || registry.birth_nsec != ring.birth_nsec)
        return fmt::format("ring birth time is {}.{:09} in the registry, {}.{:09} for the ring",
                           registry.birth_sec, registry.birth_nsec, ring.birth_sec,
                           ring.birth_nsec);
    if (registry.content_type != ring.content_type)
        return differs("content type", registry.content_type, ring.content_type);
    if (registry.size.descriptor_capacity != ring.size.descriptor_capacity)
        return differs("descriptor capacity", registry.size.descriptor_capacity,
                       ring.size.descriptor_capacity);
    if (registry.size.payload_buf_size != ring.size.payload_buf_size)
        return differs("payload buffer size", registry.size.payload_buf_size,
                       ring.size.payload_buf_size);
    if (registry.size.context_area_size != ring.size.context_area_size)
        return differs("context area size", registry.size.context_area_size,
                       ring.size.context_area_size);
    if (registry.schema_hash != ring.schema_hash)
        return differs("schema hash", hex_string(registry.schema_hash),
                       hex_string(ring.schema_hash));
    return {};
}

std::uint64_t start_ticks_from_stat(const std::string& stat_text) {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
    // count fields from the last ')'. starttime is field 22; after ')' come
    // fields 3, 4, ... separated by single spaces.
    const std::size_t close = stat_text.rfind(')');
    if (close == std::string::npos) return 0;
    std::string_view rest = std::string_view(stat_text).substr(close + 1);
    int field = 2;
    std::size_t at = 0;
    while (at < rest.size()) {
        while (at < rest.size() && rest[at] == ' ') ++at;
        std::size_t end = rest.find(' ', at);
        if (end == std::string_view::npos) end = rest.size();
        if (++field == 22) {
            std::uint64_t ticks = 0;
            auto [ptr, ec] = std::from_chars(rest.data() + at, rest.data() + end, ticks);
            return ec == std::errc() && ptr == rest.data() + end ? ticks : 0;
        }
        at = end;
    }
    return 0;
}

ProcessIdentity this_process() {
    ProcessIdentity self;
    self.pid = static_cast<std::uint64_t>(::getpid());
    self.uid = static_cast<std::uint32_t>(::getuid());
    struct stat ns {};
    if (::stat("/proc/self/ns/pid", &ns) == 0)
        self.pid_namespace = static_cast<std::uint64_t>(ns.st_ino);
    if (auto stat_text = read_text_file("/proc/self/stat"))
        self.start_ticks = start_ticks_from_stat(*stat_text);
    return self;
}

}  // namespace evring::detail
