// lib/registry/reader_listing.hpp — who reads a ring, whether each reader lives,
// and how far behind it is: what `evring readers`, `info`, `top` and
// `metrics` show.
//
// How to list a ring's readers:
//
//     auto ring = evring::RingReader::open("feed").value();
//     auto listing = evring::list_readers(ring).value();
//     for (const evring::ReaderEntry& r : listing.readers)
//         print(r.name, to_string(r.liveness), r.lag ? r.lag->events : 0);
//
// Contract:
// - list_readers never creates, replaces or damages a registry. A missing
//   registry lists nothing (state Missing); a damaged one, one of another
//   ring instance, one of a newer version, a file that is not a registry and
//   one it may not read list nothing and say why (state and problem): no
//   value from such a file is shown.
// - Every active slot is copied under its seqlock (never a torn entry) and
//   validated field by field; an entry with a value out of range keeps its
//   slot in the listing with `problem` naming the field, and its values are
//   not used to compute a lag.
// - Liveness is proven by the slot's lock, not by pids (registry_locks):
//   Dead when no process holds it (the reader exited without freeing its
//   slot: killed, crashed); otherwise Stale when its heartbeat is older than
//   stale_after (a stopped or wedged process) and Alive when fresh. An entry
//   whose owner was rewriting it on every attempt is listed with
//   consistent = false (its owner stopped mid-update, or is dead).
// - Reclaiming: with reclaim_dead (the default) and write permission on the
//   registry, dead entries are listed once more, marked reclaimed, and their
//   slots freed; without write permission they are listed as Dead and left
//   for the next registrant. A reclaim holds only the slot's claim byte, so a
//   concurrent registrant simply takes another slot and a concurrent lister
//   never mistakes the reclaimer for a live reader.
// - Lag is computed against the ring as it is at the listing: events from
//   sequence numbers, bytes from the payload offsets and time from the
//   descriptors' timestamps, each only when the descriptors it needs are
//   still in the ring. The ring is only read.
// - pid is the reader's pid in its own pid namespace; pid_in_our_namespace
//   says whether it means anything to the caller.
//
// Thread safety: free functions and plain values; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/ring/interest.hpp"
#include "evring/format.hpp"
#include "registry/reader_registration.hpp"
#include "registry/reader_registry.hpp"
#include "evring/ring/ring.hpp"

namespace evring {

class RingReader;

enum class ReaderLiveness {
    Alive,  // its process holds the slot and its heartbeat is fresh
    Stale,  // its process holds the slot but has not published for stale_after
    Dead,   // no process holds the slot
};
// "alive", "stale", "dead": stable, for --json.
const char* to_string(ReaderLiveness liveness) noexcept;

// Where the ring's head is, read once and shared by every entry's lag.
struct RingHead {
    std::uint64_t newest_seqno = 0;  // last sequence number handed to a writer (0: none)
    std::uint64_t oldest_seqno = 1;  // oldest still in the ring
    // The newest committed event, when there is one.
    std::optional<EventDescriptor> newest_committed;
};
RingHead ring_head(const MappedRing& ring) noexcept;

// How far a reader whose next sequence number is `next_seqno` is behind.
struct ReaderLag {
    // Events published that it has not read: newest_seqno - next_seqno + 1,
    // 0 when caught up (or ahead).
    std::uint64_t events = 0;
    // Payload bytes of those events (from its next event's payload offset to
    // the end of the newest committed event's payload), when its next event
    // is still in the ring.
    std::optional<std::uint64_t> bytes;
    // The newest committed event's timestamp minus that of its next event,
    // when its next event is still in the ring: how much older the event it
    // is about to read is than the newest one.
    std::optional<std::uint64_t> nanos;
    bool lapped = false;  // its next event left the ring: it will report a gap
    // Lapped: how many events from its next one have left the ring (the
    // ring's oldest seqno minus its next). They are lost already; the reader
    // itself counts them only when it reads again.
    std::uint64_t overwritten = 0;
    bool ahead = false;  // it claims a position past the newest event (another instance, or damage)
};
ReaderLag reader_lag(const MappedRing& ring, const RingHead& head,
                     std::uint64_t next_seqno) noexcept;

struct ReaderEntry {
    std::uint32_t slot = 0;
    std::uint64_t generation = 0;  // how many times the slot was claimed
    ReaderLiveness liveness = ReaderLiveness::Dead;
    bool consistent = true;  // false: no stable copy (fields below other than slot are zero)
    bool reclaimed = false;  // this listing freed the slot of this dead reader
    std::string problem;     // non-empty: a field failed validation (names it)

    std::string name;
    std::uint32_t kind = 0;  // as stored: its client's number (reader_kinds.hpp names evring's)
    std::string detail;
    std::uint64_t interest = kInterestEverything;  // what it registered wanting (interest.hpp)
    std::uint64_t pid = 0;
    std::uint64_t pid_namespace = 0;
    bool pid_in_our_namespace = false;
    std::uint64_t start_ticks = 0;
    std::uint32_t uid = 0;

    std::uint64_t next_seqno = 0;  // 0: it has not published a position yet
    // Events it lost by falling behind: what it published (lost_reported)
    // plus, while it is lapped, those already overwritten ahead of it
    // (lag->overwritten), so a loss shows while it happens, not only once
    // the reader reads again. Counted from its last published position: a
    // reader that read on past it (up to update_every_events) before it
    // stopped is counted those events too many until it publishes again.
    // A healing reader (heals) is not counted those: it reads them from the
    // recording (docs/healing.md); what the recording lacks it publishes.
    std::uint64_t lost = 0;
    std::uint64_t lost_reported = 0;
    bool heals = false;  // it heals lapped gaps from a recording
    std::uint64_t abandoned = 0;
    std::uint64_t updates = 0;
    std::uint64_t registered_ns = 0;     // wall clock
    std::uint64_t heartbeat_ns = 0;      // wall clock
    std::uint64_t heartbeat_age_ns = 0;  // at the listing (0 when the heartbeat is in the future)
    // Absent when it has no position yet, or the entry is not consistent or has a problem.
    std::optional<ReaderLag> lag;
};

struct ReaderListing {
    std::string registry_path;
    RegistryState state = RegistryState::Missing;
    std::string problem;  // why, when state is neither Valid nor Missing
    std::uint32_t capacity = 0;
    bool writable = false;           // the lister could reclaim
    std::uint64_t listed_at_ns = 0;  // wall clock
    RingHead head;
    // The ring's interest word (interest.hpp): what writers publish. A
    // listing that reclaimed dead readers recomputed it first.
    std::uint64_t interest = kInterestEverything;
    std::vector<ReaderEntry> readers;  // active slots (dead ones included), by slot
};

struct ListingOptions {
    std::string registry_path;  // empty: reader_registry_path(ring path)
    std::chrono::nanoseconds stale_after = std::chrono::seconds(5);
    bool reclaim_dead = true;
};

Result<ReaderListing> list_readers(const RingReader& ring, const ListingOptions& options = {});
// The same for a ring mapped by other means (see ReaderRegistration::attach).
Result<ReaderListing> list_readers(std::string_view ring_path, int ring_fd, const MappedRing& ring,
                                   const ListingOptions& options = {});

}  // namespace evring
