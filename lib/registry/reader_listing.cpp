// Listing a ring's registered readers, with liveness, lag and reclaim of
// dead readers' slots. See reader_listing.hpp for the contract,
// registry_locks.hpp for the locks and registry_slot.hpp for the seqlock.
//
// Invariants:
// - Every slot is copied under the seqlock (copy_slot) and guarded against a
//   registry truncated under us; only the private copy is examined.
// - A slot is rewritten here only while this description holds the slot's
//   claim byte, which no owner can hold at the same time (its lock covers
//   the whole slot): the one-writer rule of reader_registry_format.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "evring/clock.hpp"
#include "registry/reader_listing.hpp"
#include "evring/ring/ring_reader.hpp"
#include "ring/sigbus_guard.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_interest.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_locks.hpp"
#include "registry/registry_slot.hpp"

namespace evring {
namespace {

constexpr std::uint64_t kMaxPid = std::uint64_t{1} << 22;  // the kernel's PID_MAX_LIMIT
constexpr std::uint64_t kMaxUint32 = std::numeric_limits<std::uint32_t>::max();

// Fills `entry` from a consistent copy; returns what is wrong with it, if
// anything (the first field out of range).
std::string read_entry(const RegistrySlot& copy, ReaderEntry& entry) {
    entry.generation = copy.generation;
    entry.kind = static_cast<std::uint32_t>(copy.kind & kMaxUint32);  // larger: a problem, below
    entry.interest = copy.interest;
    entry.pid = copy.pid;
    entry.pid_namespace = copy.pid_namespace;
    entry.start_ticks = copy.start_ticks;
    entry.uid = static_cast<std::uint32_t>(copy.uid & kMaxUint32);
    entry.next_seqno = copy.next_seqno;
    entry.lost = copy.lost;
    entry.lost_reported = copy.lost;
    entry.abandoned = copy.abandoned;
    entry.updates = copy.updates;
    entry.registered_ns = copy.registered_ns;
    entry.heartbeat_ns = copy.heartbeat_ns;
    entry.heals = (copy.flags & kReaderHeals) != 0;
    bool name_ends = false;
    bool detail_ends = false;
    entry.name = detail::unpack_text(copy.name, name_ends);
    entry.detail = detail::unpack_text(copy.detail, detail_ends);

    if (copy.state != kSlotActive)
        return fmt::format("state is {}, neither free (0) nor active (1)", copy.state);
    if (copy.generation == 0) return "generation is 0 in an active slot";
    if (copy.pid == 0 || copy.pid > kMaxPid)
        return fmt::format("pid is {}, outside 1 to {}", copy.pid, kMaxPid);
    if (copy.uid > kMaxUint32) return fmt::format("uid is {}, larger than 32 bits", copy.uid);
    if (copy.kind > kMaxUint32) return fmt::format("kind is {}, larger than 32 bits", copy.kind);
    if (copy.next_seqno > kMaxSeqno + 1)
        return fmt::format("next_seqno is {}, beyond any ring", copy.next_seqno);
    if (copy.lost > kMaxSeqno) return fmt::format("lost is {}, beyond any ring", copy.lost);
    if (copy.abandoned > kMaxSeqno)
        return fmt::format("abandoned is {}, beyond any ring", copy.abandoned);
    if (!name_ends)
        return fmt::format("name has no terminating NUL within its {} bytes", kReaderNameBytes);
    if (!detail_ends)
        return fmt::format("detail has no terminating NUL within its {} bytes", kReaderDetailBytes);
    if ((copy.flags & ~kReaderHeals) != 0) return fmt::format("flags are {:#x}: unknown bits set", copy.flags);
    return {};
}

// Frees the slot of a dead reader, holding only its claim byte. False when
// someone holds the slot now (a new registrant, another reclaimer).
bool reclaim(const detail::RegistryFile& file, std::uint32_t index) {
    auto locked = detail::try_lock_claim_byte(file.fd(), index);
    if (!locked || !*locked) return false;
    RegistrySlot& slot = file.slot(index);
    const bool written = guard_sigbus([&] {
        const std::uint64_t odd = detail::begin_slot_write(slot);
        shared::store_relaxed(slot.state, kSlotFree);
        detail::end_slot_write(slot, odd);
    });
    detail::unlock_slot(file.fd(), index);
    return written;
}

struct ListingContext {
    const detail::RegistryFile& file;
    const MappedRing& ring;
    const ListingOptions& options;
    std::uint64_t now;
    std::uint64_t stale_after_ns;
    std::uint64_t our_pid_namespace;
};

// One slot: nothing when free, else its entry. `truncated` when the
// registry faulted under us.
std::optional<ReaderEntry> list_slot(const ListingContext& c, ReaderListing& listing,
                                     std::uint32_t index, bool& truncated) {
    RegistrySlot copy{};
    bool consistent = false;
    if (!guard_sigbus([&] { consistent = detail::copy_slot(c.file.slot(index), copy); })) {
        truncated = true;
        return std::nullopt;
    }
    if (consistent && copy.state == kSlotFree) return std::nullopt;
    ReaderEntry entry;
    entry.slot = index;
    entry.consistent = consistent;
    if (consistent) {
        entry.problem = read_entry(copy, entry);
        entry.heartbeat_age_ns = c.now > entry.heartbeat_ns ? c.now - entry.heartbeat_ns : 0;
        entry.pid_in_our_namespace =
            entry.pid_namespace != 0 && entry.pid_namespace == c.our_pid_namespace;
    }
    auto alive = detail::slot_owner_alive(c.file.fd(), index);
    if (alive && *alive) {
        // Without a stable copy there is no heartbeat to trust: its owner
        // stopped in the middle of a rewrite.
        entry.liveness = !consistent || entry.heartbeat_age_ns > c.stale_after_ns
                             ? ReaderLiveness::Stale
                             : ReaderLiveness::Alive;
    } else {
        entry.liveness = ReaderLiveness::Dead;
        if (alive && c.options.reclaim_dead && c.file.writable())
            entry.reclaimed = reclaim(c.file, index);
    }
    if (consistent && entry.problem.empty() && entry.next_seqno != 0) {
        entry.lag = reader_lag(c.ring, listing.head, entry.next_seqno);
        // Lost already, though the reader says so only when it reads again
        // (both below kMaxSeqno: checked by read_entry and reader_lag).
        // A healing reader will read those from the recording.
        entry.lost = entry.lost_reported + (entry.heals ? 0 : entry.lag->overwritten);
    }
    return entry;
}

}  // namespace

const char* to_string(ReaderLiveness liveness) noexcept {
    switch (liveness) {
    case ReaderLiveness::Alive:
        return "alive";
    case ReaderLiveness::Stale:
        return "stale";
    case ReaderLiveness::Dead:
        return "dead";
    }
    return "dead";
}

Result<ReaderListing> list_readers(const RingReader& ring, const ListingOptions& options) {
    return list_readers(ring.path(), ring.fd(), ring.ring(), options);
}

Result<ReaderListing> list_readers(std::string_view ring_path, int ring_fd, const MappedRing& ring,
                                   const ListingOptions& options) {
    ReaderListing listing;
    listing.registry_path =
        options.registry_path.empty() ? reader_registry_path(ring_path) : options.registry_path;
    auto identity = detail::ring_identity_of(ring_fd, ring.header());
    if (!identity)
        return std::move(identity)
            .context(fmt::format("listing the readers of '{}'", ring_path))
            .error();
    auto opened = detail::open_registry(listing.registry_path, *identity, options.reclaim_dead);
    if (!opened) return std::move(opened).error();
    listing.state = opened->verdict.state;
    if (listing.state != RegistryState::Valid && listing.state != RegistryState::Missing)
        listing.problem =
            fmt::format("reader registry '{}': {}", listing.registry_path, opened->verdict.reason);
    listing.listed_at_ns = wall_clock_nanos();
    listing.head = ring_head(ring);
    listing.interest = detail::current_interest(ring);
    if (listing.state != RegistryState::Valid) return listing;
    if (auto s = install_sigbus_handler(); !s) return std::move(s).error();

    const detail::RegistryFile& file = opened->file;
    listing.capacity = file.capacity();
    listing.writable = file.writable();
    const auto stale_after_ns =
        static_cast<std::uint64_t>(std::max<std::int64_t>(options.stale_after.count(), 0));
    const ListingContext context{file,           ring,
                                 options,        listing.listed_at_ns,
                                 stale_after_ns, detail::this_process().pid_namespace};
    for (std::uint32_t i = 0; i < file.capacity(); ++i) {
        bool truncated = false;
        std::optional<ReaderEntry> entry = list_slot(context, listing, i, truncated);
        if (truncated) {
            listing.state = RegistryState::Damaged;
            listing.problem = fmt::format("reader registry '{}' was truncated while being listed",
                                          listing.registry_path);
            listing.readers.clear();
            break;
        }
        if (entry) listing.readers.push_back(std::move(*entry));
    }
    // Reclaimed readers want nothing any more: the ring's word may narrow.
    const bool reclaimed = std::any_of(listing.readers.begin(), listing.readers.end(),
                                       [](const ReaderEntry& r) { return r.reclaimed; });
    if (reclaimed && listing.state == RegistryState::Valid)
        (void)detail::recompute_interest(file, ring_path, nullptr);
    listing.interest = detail::current_interest(ring);
    return listing;
}

}  // namespace evring
