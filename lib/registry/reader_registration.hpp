// lib/registry/reader_registration.hpp — a reader that can be seen: announcing
// itself in its ring's reader registry and publishing how far it has read.
//
// How to register a reader:
//
//     auto ring = evring::RingReader::open("feed").value();
//     auto seen = evring::ReaderRegistration::attach(ring, {"risk-engine"});
//     evring::Iterator it(ring.ring());
//     for (;;) {
//         switch (it.try_next(event)) {
//         case evring::NextResult::Success:
//             seen.on_event(it, event);         // publishes every so many events
//             handle(event);
//             break;
//         case evring::NextResult::NotReady:
//             seen.on_idle(it);                 // publishes the position, keeps the heartbeat
//             bell.wait(it.next_seqno(), 100ms);
//             break;
//         default: break;                       // Gap, Abandoned: counted by the iterator
//         }
//     }
//
// Contract:
// - Opt-in, and never in the reader's way. attach() never fails: when the
//   reader cannot be registered (no write permission on the registry or its
//   directory, a read-only file system, a full registry, a file in the way,
//   a full huge page pool, a ring removed or re-created since the reader
//   opened it) the registration is inert: registered() is false,
//   every call below does nothing, warning() says why, and that reason is
//   printed once per registry path per process on stderr (unless
//   print_warning is false). register_reader() is the same with the reason
//   as an Error. The ring file is never written, locked or changed.
// - A registered reader owns one slot of the registry (see
//   reader_registry.hpp for where it lives and how it is created) for its
//   lifetime: it holds an OFD write lock on the slot's bytes, which the kernel
//   drops when the process dies however it dies, so listers recognise a dead
//   reader without pids (right across pid namespaces) and reclaim its slot.
//   Destruction marks the slot free and releases the lock. A slot freed by a
//   dead reader is taken by the next registrant when no slot is free.
// - Nothing is left behind: a reader closing after its ring was removed or
//   re-created removes the registry of its ring instance when no other
//   reader uses it (the ring's writer does the same when it removes its
//   ring; the protocol that keeps this race-free is in
//   lib/registry/registry_remove.cpp).
// - The hot path. on_event() costs a decrement and two compares per event;
//   every `update_every_events` events, or when the event's timestamp is
//   `update_every` past the last publication's, it publishes (update()).
//   update() is a seqlock rewrite of one cache line of the slot: a handful of
//   stores, one read of the wall clock (evring's TSC clock, clock.hpp) for
//   the heartbeat, no system call, no allocation. Measured: well under 1 ns
//   per event amortised (bench/micro/registry_bench.cpp, docs/operations.md).
// - on_idle() is for the moment the reader finds nothing to read: it
//   publishes the position when it changed since the last publication, and
//   otherwise refreshes the heartbeat at most every `update_every` of wall
//   time. A reader that sleeps calls it each time it wakes, so listers see it
//   alive (a heartbeat older than their stale bound marks it stopped or
//   wedged; see reader_listing.hpp).
// - Interest (docs/interest.md): the registration says what the reader
//   wants (RegistrationOptions::interest; everything by default), and
//   registering and unregistering recompute the ring's interest word, the
//   union of every live registered reader's, so writers skip what nobody
//   wants. That writes one word in the ring's header section (a mapping of
//   our own, as the doorbell's); when that is not permitted the reader is
//   still registered and interest_problem() says so.
// - The slot's file is shared with other readers who could truncate it;
//   attach() installs evring's SIGBUS handler (sigbus_guard.hpp, which passes
//   any other SIGBUS on) and every write to the slot is guarded, so a
//   truncated registry unregisters the reader instead of killing it.
// - A registration belongs to the process that made it: a child forked
//   without exec must not use it (its destructor there does nothing; the
//   child shares the lock until it exits or closes the descriptor, which is
//   close-on-exec).
//
// Thread safety: a ReaderRegistration is used by one thread (the one that
// owns the Iterator); any number of registrations may exist in one process,
// each with its own slot and its own open file description.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/ring/interest.hpp"
#include "evring/ring/iterator.hpp"
#include "registry/reader_registry.hpp"
#include "evring/ring/ring.hpp"

namespace evring {

class RingReader;
namespace detail {
class RegistryFile;
}

// What a reader says about itself. Both texts are stored with every byte
// outside printable ASCII replaced by '?' and cut to fit their fields
// (kReaderNameBytes - 1 and kReaderDetailBytes - 1 characters).
struct ReaderInfo {
    std::string name;  // e.g. "watch", "risk-engine"
    // What kind of program it is: a number the client picks, stored and
    // listed as given, never read by the library (0: not said).
    // evring's own programs use reader_kinds.hpp.
    std::uint32_t kind = 0;
    std::string
        detail;  // what it does with the events: "-> /data/feed.evrec", "nats://h:4222 FEED"
    // It heals its lapped gaps from a recording (RegistrySlot::flags' kReaderHeals).
    bool heals = false;
};

struct RegistrationOptions {
    RegistryFileOptions registry;  // where the registry is, and how to create it when we are first
    // Publish every this many events (at least 1)...
    std::uint32_t update_every_events = 1024;
    // ...or when an event's timestamp is this far past the last publication's;
    // and the heartbeat's period while idle.
    std::chrono::nanoseconds update_every = std::chrono::milliseconds(100);
    // Print why a reader is not registered (once per registry path per process).
    bool print_warning = true;
    // What the reader wants (interest.hpp, schema_interest.hpp):
    // kInterestEverything, or a word from interest_word/interest_from_keywords.
    // Writers skip events no registered reader wants (docs/interest.md).
    std::uint64_t interest = kInterestEverything;
};

class ReaderRegistration {
public:
    // Inert: registered() is false.
    ReaderRegistration() noexcept;
    ReaderRegistration(ReaderRegistration&& other) noexcept;
    ReaderRegistration& operator=(ReaderRegistration&& other) noexcept;
    ReaderRegistration(const ReaderRegistration&) = delete;
    ReaderRegistration& operator=(const ReaderRegistration&) = delete;
    ~ReaderRegistration();

    // Registers a reader of `ring`, or returns an inert registration saying why not.
    static ReaderRegistration attach(const RingReader& ring, const ReaderInfo& info,
                                     const RegistrationOptions& options = {});
    // The same for a ring mapped by other means: its path, an open descriptor
    // of the ring file (which identifies the ring instance; not kept) and its mapping.
    static ReaderRegistration attach(std::string_view ring_path, int ring_fd,
                                     const MappedRing& ring, const ReaderInfo& info,
                                     const RegistrationOptions& options = {});
    // Like attach, with the reason as an Error and nothing printed.
    static Result<ReaderRegistration> register_reader(std::string_view ring_path, int ring_fd,
                                                      const MappedRing& ring,
                                                      const ReaderInfo& info,
                                                      const RegistrationOptions& options = {});

    bool registered() const noexcept { return slot_ != nullptr; }
    // Why the reader is not (or no longer) registered; empty while registered.
    std::string warning() const;
    // Set when registering replaced a damaged registry or one of an earlier
    // ring instance (says which and why).
    const std::string& notice() const noexcept { return notice_; }
    const std::string& registry_path() const noexcept { return registry_path_; }
    std::uint32_t slot() const noexcept { return index_; }
    // Interest (docs/interest.md). What this reader registered, and the
    // ring's interest word as its registration left it (the union with
    // every other live registered reader's).
    std::uint64_t interest() const noexcept { return interest_; }
    std::uint64_t ring_interest() const noexcept { return ring_interest_; }
    // Every event a writer checks after committing an event numbered
    // interest_from() or later is checked against a word that includes this
    // reader's interest: a reader that starts at or before it misses nothing
    // it wants from then on. 0 when not registered.
    std::uint64_t interest_from() const noexcept { return interest_from_; }
    // Why the ring's word may not include this reader's interest (the ring
    // file is not writable by us, say); empty when it does.
    const std::string& interest_problem() const noexcept { return interest_problem_; }

    // Per event, after try_next returned Success (see the contract).
    void on_event(const Iterator& it, const EventDescriptor& event) noexcept {
        if (--countdown_ != 0 && event.record_epoch_nanos < due_event_ns_) return;
        publish_for_event(event.record_epoch_nanos, it.next_seqno(), it.total_lost(),
                          it.total_abandoned());
    }
    // When try_next found nothing to read (see the contract).
    void on_idle(const Iterator& it) noexcept {
        on_idle(it.next_seqno(), it.total_lost(), it.total_abandoned());
    }
    // The same two for a reader without an Iterator (one reading through an
    // event source, say): the event's timestamp, then the reader's position
    // and counts after it.
    void on_event(std::uint64_t event_ns, std::uint64_t next_seqno, std::uint64_t lost,
                  std::uint64_t abandoned) noexcept {
        if (--countdown_ != 0 && event_ns < due_event_ns_) return;
        publish_for_event(event_ns, next_seqno, lost, abandoned);
    }
    void on_idle(std::uint64_t next_seqno, std::uint64_t lost, std::uint64_t abandoned) noexcept;
    // Publishes the position and counts now.
    void update(std::uint64_t next_seqno, std::uint64_t lost, std::uint64_t abandoned) noexcept;
    void update(const Iterator& it) noexcept {
        update(it.next_seqno(), it.total_lost(), it.total_abandoned());
    }
    // Publishes the last position again with a fresh heartbeat.
    void heartbeat() noexcept;
    // Replaces the detail text (a relay saying it is reconnecting, say).
    void set_detail(std::string_view detail) noexcept;
    // Replaces the kind and the detail together (a reader handle that
    // records for a while is listed as a recorder meanwhile), in place.
    void describe(std::uint32_t kind, std::string_view detail) noexcept;
    // Says in the slot whether the reader heals its lapped gaps (a reader
    // told to heal after it registered: evring_source_heal), in place.
    void set_heals(bool heals) noexcept;
    // Frees the slot now (the destructor does the same).
    void unregister() noexcept;

private:
    void publish_for_event(std::uint64_t event_ns, std::uint64_t next_seqno, std::uint64_t lost,
                           std::uint64_t abandoned) noexcept;
    void lose_registry() noexcept;
    void reset_pacing() noexcept;

    // Hot fields first.
    RegistrySlot* slot_ = nullptr;  // null: not registered
    std::uint32_t countdown_ = 0;
    std::uint32_t every_events_ = 0;
    std::uint64_t due_event_ns_ = 0;  // an event at or past this publishes
    std::uint64_t every_ns_ = 0;
    // The last publication.
    std::uint64_t published_next_ = 0;
    std::uint64_t published_lost_ = 0;
    std::uint64_t published_abandoned_ = 0;
    std::uint64_t published_at_ns_ = 0;
    bool truncated_ = false;  // the registry was truncated under us
    pid_t owner_pid_ = 0;
    std::uint32_t index_ = 0;
    std::uint64_t interest_ = kInterestEverything;
    std::uint64_t ring_interest_ = kInterestEverything;
    std::uint64_t interest_from_ = 0;
    std::unique_ptr<detail::RegistryFile> file_;
    std::string registry_path_;
    std::string ring_path_;  // to see, at unregister(), whether the ring is gone
    std::string warning_;
    std::string notice_;
    std::string interest_problem_;
};

}  // namespace evring
