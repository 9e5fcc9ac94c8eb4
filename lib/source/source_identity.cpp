#include "source/source_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "util/device_id.hpp"

namespace evring::detail {

namespace {

void fill_file_identity(const struct statx& st, SourceIdentity& identity) {
    identity.device = device_id(st);
    identity.inode = st.stx_ino;
    std::uint64_t digest = mix64(mix64(0, identity.device), identity.inode);
    // Inode numbers are reused once a file is gone; the birth time (tmpfs has
    // one, hugetlbfs does not) tells a re-created ring apart even then.
    if ((st.stx_mask & STATX_BTIME) != 0)
        digest = mix64(mix64(digest, static_cast<std::uint64_t>(st.stx_btime.tv_sec)), st.stx_btime.tv_nsec);
    identity.instance = digest;
}

}  // namespace

void file_identity(const std::string& path, SourceIdentity& identity) {
    struct statx st {};
    if (::statx(AT_FDCWD, path.c_str(), 0, STATX_INO | STATX_BTIME, &st) != 0) return;
    fill_file_identity(st, identity);
}

void file_identity(int fd, SourceIdentity& identity) {
    struct statx st {};
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &st) != 0) return;
    fill_file_identity(st, identity);
}

void ring_identity(const RingHeader& header, SourceIdentity& identity) {
    identity.content_type = header.content_type;
    identity.schema_hash = header.schema_hash;
    identity.ring_size = header.size;
}

}  // namespace evring::detail
