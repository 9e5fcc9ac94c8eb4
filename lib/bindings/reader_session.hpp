// lib/bindings/reader_session.hpp — one reader session for the C ABI and the
// Python package alike: reading through the handle's filter, being seen in
// the ring's reader registry, counting, positioning.
//
// A session is the evring_source handle (handles.hpp). Both bindings read
// through these functions and nothing else, so a C reader and a Python
// reader behave the same:
// - Registration (reader_registration.hpp): a reader of a live ring
//   announces itself in the ring's reader registry unless told not to, so
//   `evring readers RING` lists it with its lag. Never in the reader's way:
//   when it cannot register it reads anyway, and the reason is a notice.
//   Snapshots, recordings and ring sets are not registered (nobody falls
//   behind a file; a set's members have their own registries, and a set
//   reader does not appear in them yet).
// - The position published is the source's: every event read (the filter's
//   dropped ones too) moves it, paced as ReaderRegistration::on_event says
//   (every 1024 events or 100 ms of event time); finding nothing to read
//   publishes it (on_idle); so do a seek and every batch.
// - Batches: descriptors many at a time, and each event's ring set member
//   (the member column). A source whose events carry members (a ring set, a
//   recording of one) is read event by event; others through
//   EventSource::next_batch.
//
// Thread safety: as evring.h (a handle is used by one thread at a time).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "evring/source/event_source.hpp"
#include "registry/reader_registration.hpp"
#include "handles.hpp"

namespace evring::bindings {

// Registers the handle's reader when its source is a live ring (see above).
// Returns what the user should be told: why it could not register, or a
// registry it replaced; "" otherwise.
std::string register_reader(evring_source& handle, const ReaderInfo& info);

// The next item, passing over events the handle's filter drops, with the
// registry's bookkeeping; a notice kept for later (hold_notice) comes first.
SourceStep next_item(evring_source& handle, SourceItem& item, PayloadRead payload);

// Keeps `text` to be handed out as the next Notice.
void hold_notice(evring_source& handle, std::string text);

// Up to out.size() descriptors into `out` (64-byte aligned, as
// EventSource::next_batch wants) and, when `members` is not empty (it is as
// long as `out`), each one's member. Gaps are passed over and counted; it
// stops early at a notice (next_item hands it out), when nothing is ready,
// at the end, or on failure.
Batch next_descriptors(evring_source& handle, std::span<EventDescriptor> out, std::span<std::uint32_t> members);

// Publishes the position now (after a seek, say). Nothing when unregistered.
void publish_position(evring_source& handle) noexcept;

// What the source counted, plus a ring set's late events.
struct SessionCounters {
    SourceCounters source;
    std::uint64_t late_events = 0;
};
SessionCounters counters_of(const evring_source& handle);

// A ring set's member count now (0 for other sources).
std::uint32_t member_count(const evring_source& handle);

}  // namespace evring::bindings
