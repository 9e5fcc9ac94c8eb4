// Removing a reader registry nobody uses, so that registries do not outlive
// their rings (one huge page each on hugetlbfs). See registry_file.hpp.
//
// Who removes (each only a registry nobody uses, by the protocol below):
// - the ring's writer, once it has removed its ring (RingWriter::close,
//   remove_reader_registry): the registry of its instance;
// - a registered reader, at its close, when its ring is no longer at its
//   name (removed or re-created): the registry of its instance, so the last
//   reader of a removed ring takes the registry with it;
// - a later writer of the name and `evring gc`: a registry of an instance
//   no longer at the name, left by processes that were killed.
//
// The protocol (why a registrant is never left in a removed file):
// - A registrant takes LOCK_SH (flock) on the registry it attached, checks
//   the file is still at the name (else it attaches again), claims its slot
//   (the slot's OFD lock, registry_locks.hpp), and only then drops LOCK_SH.
//   From before its check until it dies, it holds either LOCK_SH or its
//   slot's lock.
// - A remover takes LOCK_EX | LOCK_NB on the file and, while holding it,
//   checks the file is still at the name and that no slot has an owner
//   (F_OFD_GETLK on each life range), then unlinks it.
// So a remover that unlinks saw no LOCK_SH holder and no slot owner while it
// held LOCK_EX: every registrant either had not yet taken LOCK_SH (it then
// finds the file gone from the name and attaches again, to a fresh file, or
// gives up when its ring is gone too) or had already given up. A remover
// that finds LOCK_EX taken (a registrant mid-claim, a replacer) leaves the
// file: whoever holds it is alive and will leave by one of the ways above.
// Listers take no flock and are unaffected.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "registry/registry_file.hpp"
#include "registry/registry_locks.hpp"
#include "registry/registry_open.hpp"
#include "ring/ring_open.hpp"

namespace evring::detail {
namespace {

// Whether any of the `capacity` slots has an owner (a live reader).
Result<bool> any_slot_owned(int fd, std::uint32_t capacity) {
    for (std::uint32_t i = 0; i < capacity; ++i) {
        auto alive = slot_owner_alive(fd, i);
        if (!alive) return std::move(alive).error();
        if (*alive) return true;
    }
    return false;
}

}  // namespace

Result<bool> remove_unused_registry(const std::string& path, const RingIdentity& ring, RegistryOwner owner) {
    auto located = open_registry_directory(path);
    if (!located) return std::move(located).error();
    auto opened = open_registry_file(*located, O_RDONLY);
    if (!opened) {
        if (opened.error().errno_value() == ENOENT) return false;
        return std::move(opened).error();
    }
    UniqueFd held(*opened);
    auto read = read_registry_header(held.get(), path);
    if (!read) return std::move(read).error();
    const RegistryVerdict verdict =
        judge_registry_header(read->header, read->bytes_read, read->file_size, read->page_size, ring);
    const RegistryState wanted = owner == RegistryOwner::ThisInstance ? RegistryState::Valid : RegistryState::OtherRing;
    if (verdict.state != wanted) return false;  // another instance's, damaged, not a registry: left alone
    if (::flock(held.get(), LOCK_EX | LOCK_NB) != 0) return false;  // a registrant or replacer at work
    if (!still_at_path(located->dir.get(), located->name, held.get())) return false;
    auto owned = any_slot_owned(held.get(), read->header.capacity);  // capacity: validated above
    if (!owned) return std::move(owned).error();
    if (*owned) return false;
    if (::unlinkat(located->dir.get(), located->name.c_str(), 0) != 0) {
        if (errno == ENOENT) return false;
        return Error::from_errno(errno, fmt::format("removing reader registry '{}'", path));
    }
    return true;
}

Status remove_registry(const std::string& path, const RingIdentity& ring) {
    auto removed = remove_unused_registry(path, ring, RegistryOwner::ThisInstance);
    if (!removed) return std::move(removed).error();
    return {};
}

}  // namespace evring::detail
