// lib/bindings/reader_session.hpp — one reader session for the C ABI and the
// Python package alike: reading through the handle's filter, being seen in
// the ring's reader registry, counting, positioning.
//
// A session is the evring_source handle (handles.hpp). Both bindings read
// through these functions and nothing else, so a C reader and a Python
// reader behave the same:
// - Registration (reader_registration.hpp), as the CLI's readers do it
//   (RegisteringSink): a reader of a live ring announces itself in the
//   ring's reader registry unless told not to, so `evring readers RING`
//   lists it with its lag; a live ring set's merged reader announces itself
//   in every member's registry. Never in the reader's way: when it cannot
//   register it reads anyway, and the reason is a notice. Snapshots and
//   recordings are not registered (nobody falls behind a file).
// - Interest (docs/interest.md): a registering reader may say which events
//   it wants (keywords of the source's schema, a level); it registers that
//   with the ring, or with every member of a set, and writers' typed
//   publishes skip what no registered reader wants. Without it the reader
//   wants everything.
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
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "read/interest_request.hpp"
#include "registry/reader_registration.hpp"
#include "handles.hpp"

namespace evring::bindings {

// What a reader asks for (read/interest_request.hpp): comma-separated
// keywords of the source's schema and a level (0..15); neither: everything.
using evring::InterestRequest;

// The word `request` asks for, kInterestEverything when it asks for nothing,
// resolved as the CLI's --keywords and --level are (resolve_interest). An
// Error when it names keywords the schema lacks, a level above 15, or asks
// anything of a source that is not a live ring or ring set, or of a reader
// that does not register (`registering` false).
Result<std::uint64_t> interest_for(const evring_source& handle, const InterestRequest& request, bool registering);

// Registers the handle's reader when its source is a live ring or ring set
// (see above), wanting `interest`. Returns what the user should be told: why
// it could not register, or a registry it replaced; "" otherwise.
std::string register_reader(evring_source& handle, const ReaderInfo& info,
                            std::uint64_t interest = kInterestEverything);

// Whether the reader is listed in a registry (a ring set's: in any member's).
bool registered(const evring_source& handle) noexcept;

// The next item, passing over events the handle's filter drops, with the
// registry's bookkeeping; a notice kept for later (hold_notice) comes first.
SourceStep next_item(evring_source& handle, SourceItem& item, PayloadRead payload);

// Sets the handle's where filter (an empty expression removes it), compiled
// against its schema exactly as the CLI's --where is (where.hpp): a span's
// label (`block == 15000009`) is looked up in a second source opened at the
// handle's location (span_seek.hpp's resolve_span), so the handle's own read
// position does not move, whenever the filter is set. Errors (EINVAL) say
// what is wrong with the expression, or that the source has no schema
// (that one names `caller`: "evring_source_set_where").
Status set_where(evring_source& handle, std::string_view expression, std::string_view caller);

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
