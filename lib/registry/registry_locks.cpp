// Registry slot locks. See registry_locks.hpp for the protocol.
#include "registry/registry_locks.hpp"

#include <fcntl.h>

#include <fmt/format.h>

#include "registry/reader_registry_format.hpp"

namespace evring::detail {
namespace {

enum class Part { WholeSlot, ClaimByte, LifeRange };

struct flock range_of(std::uint32_t index, Part part, short type) {
    struct flock range {};
    range.l_type = type;
    range.l_whence = SEEK_SET;
    const auto slot = static_cast<off_t>(registry_slot_offset(index));
    switch (part) {
    case Part::WholeSlot:
        range.l_start = slot;
        range.l_len = kRegistrySlotSize;
        break;
    case Part::ClaimByte:
        range.l_start = slot;
        range.l_len = 1;
        break;
    case Part::LifeRange:
        range.l_start = slot + 1;
        range.l_len = kRegistrySlotSize - 1;
        break;
    }
    return range;
}

Result<bool> try_write_lock(int fd, std::uint32_t index, Part part) {
    struct flock range = range_of(index, part, F_WRLCK);
    if (::fcntl(fd, F_OFD_SETLK, &range) == 0) return true;
    if (errno == EAGAIN || errno == EACCES) return false;  // held by another description
    return Error::from_errno(errno, fmt::format("locking slot {} of a reader registry", index));
}

}  // namespace

Result<bool> try_claim_slot(int fd, std::uint32_t index) {
    return try_write_lock(fd, index, Part::WholeSlot);
}

Result<bool> try_lock_claim_byte(int fd, std::uint32_t index) {
    return try_write_lock(fd, index, Part::ClaimByte);
}

void unlock_slot(int fd, std::uint32_t index) noexcept {
    struct flock range = range_of(index, Part::WholeSlot, F_UNLCK);
    ::fcntl(fd, F_OFD_SETLK, &range);
}

Result<bool> slot_owner_alive(int fd, std::uint32_t index) {
    // A write-lock query conflicts with any lock on the range; F_OFD_GETLK
    // only reports, and works on a read-only descriptor.
    struct flock query = range_of(index, Part::LifeRange, F_WRLCK);
    if (::fcntl(fd, F_OFD_GETLK, &query) != 0)
        return Error::from_errno(errno, fmt::format("probing slot {} of a reader registry", index));
    return query.l_type != F_UNLCK;
}

}  // namespace evring::detail
