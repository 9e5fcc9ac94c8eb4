// The ring's interest word as the union of its live registered readers'
// interest. The protocol and its ordering argument: registry_interest.hpp.
#include "registry/registry_interest.hpp"

#include <fcntl.h>

#include <cerrno>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "ring/header_section.hpp"
#include "util/membarrier.hpp"
#include "registry/interest_keeper.hpp"
#include "registry/registry_locks.hpp"
#include "registry/registry_slot.hpp"

namespace evring::detail {

namespace {

struct flock interest_range(short type) {
    struct flock range {};
    range.l_type = type;
    range.l_whence = SEEK_SET;
    range.l_start = kInterestLockOffset;
    range.l_len = 8;
    return range;
}

// A read-write mapping of our own of the ring's header section, for its
// interest word (as a sleeping reader maps the doorbell's): of the ring
// instance `identity` names only, never of a ring re-created at the path.
Result<WritableHeaderSection> map_header_section(std::string_view ring_path, const RingIdentity& identity) {
    return WritableHeaderSection::map(std::string(ring_path),
                                      {.min_size = kHeaderSectionSize,
                                       .identity = RingFileId{identity.device, identity.inode},
                                       .file_role = "registered ring file"},
                                      "store its interest word");
}

// I5's heavy half: a full barrier on every CPU running a writer that only
// uses a compiler fence at W9 (registered for the expedited command, as
// doorbell writers are), else on every CPU (slow: a grace period).
bool interest_membarrier() noexcept {
    return membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0 || membarrier(MEMBARRIER_CMD_GLOBAL) == 0;
}

}  // namespace

Result<InterestLock> InterestLock::take(int registry_fd) {
    struct flock range = interest_range(F_WRLCK);
    while (::fcntl(registry_fd, F_OFD_SETLKW, &range) != 0)  // I1: held only for a scan of the slots
        if (errno != EINTR) return Error::from_errno(errno, "taking a reader registry's interest lock");
    return InterestLock(registry_fd);
}

Result<std::optional<InterestLock>> InterestLock::try_take(int registry_fd) {
    struct flock range = interest_range(F_WRLCK);
    if (::fcntl(registry_fd, F_OFD_SETLK, &range) == 0) return std::optional<InterestLock>(InterestLock(registry_fd));
    if (errno == EAGAIN || errno == EACCES) return std::optional<InterestLock>();  // held elsewhere
    return Error::from_errno(errno, "taking a reader registry's interest lock");
}

InterestLock::~InterestLock() {
    if (fd_ < 0) return;
    struct flock range = interest_range(F_UNLCK);
    ::fcntl(fd_, F_OFD_SETLK, &range);  // I4
}

std::uint64_t union_of_live_slots(const RegistryFile& file, std::uint32_t own_slot, bool& truncated) {
    truncated = false;
    bool any = false;
    std::uint64_t word = kInterestEverything;
    for (std::uint32_t i = 0; i < file.capacity(); ++i) {
        RegistrySlot copy{};
        bool consistent = false;
        if (!guard_sigbus([&] { consistent = copy_slot(file.slot(i), copy); })) {
            truncated = true;
            return kInterestEverything;
        }
        if (consistent && copy.state != kSlotActive) continue;
        if (i != own_slot) {
            auto alive = slot_owner_alive(file.fd(), i);
            if (alive && !*alive) continue;
        }  // a dead reader wants nothing any more
        // Without a stable copy (an owner stopped mid-rewrite) or with a
        // value that does not narrow: everything, the safe side.
        const std::uint64_t wants = consistent ? copy.interest : kInterestEverything;
        word = any ? interest_union(word, wants) : (interest_narrows(wants) ? wants : kInterestEverything);
        any = true;
    }
    // No live registered reader: nobody narrowed the ring, today's default.
    return any ? word : kInterestEverything;
}

InterestUpdate recompute_interest(const RegistryFile& file, std::string_view ring_path, const RingHeader* header,
                                  std::uint32_t own_slot) {
    InterestUpdate update;
    auto lock = InterestLock::take(file.fd());  // I1
    if (!lock) {
        update.problem = lock.error().message() + "; the readers' interest is not applied";
    } else {
        bool truncated = false;
        const std::uint64_t wanted = union_of_live_slots(file, own_slot, truncated);  // I2
        auto section = map_header_section(ring_path, file.header().ring);
        // A ring whose writers do not honour interest (no doorbell feature)
        // publishes everything anyway: nothing to store.
        if (section && (ring_features(*section->extension()) & kRingFeatureDoorbell) != 0) {
            shared::store_relaxed(section->extension()->interest, wanted);  // I3, ordered by I5 [D]
            // K0: writers' keepers sleep on the word while it does not narrow.
            wake_interest_keepers(section->extension()->interest);
            update.word = wanted;
        } else if (!section && header != nullptr) {
            // Not ours to write (permissions, say): only a problem when the
            // word wants less than the readers do.
            const std::uint64_t now = shared::load_relaxed(extension_in(const_cast<RingHeader*>(header))->interest);  // only loaded
            update.word = now;
            if (interest_union(now, wanted) != now)
                update.problem = section.error().message() + "; the readers' interest is not applied";
        }
    }  // I4 (the lock's destructor)
    if (header != nullptr) {
        shared::fence_seq_cst();  // I5, pairs with W9 [D]
        if (!interest_membarrier() && update.problem.empty())
            update.problem = "membarrier failed: a writer may skip events for a moment after registration";
        update.from_seqno = shared::load_relaxed(header->control.last_seqno) + 1;  // I6
    }
    return update;
}

std::uint64_t current_interest(const MappedRing& ring) noexcept {
    return shared::load_relaxed(*interest_word_of(ring));
}

}  // namespace evring::detail
