// evring/source/event_source.hpp — one interface over everything that yields events.
//
// How to read any source (a live ring, a snapshot, a recording, and through
// source_open.hpp's scheme table a remote stream):
//
//     auto source = evring::open_source("demo", {});           // source_open.hpp
//     if (!source) fail(source.error().message());
//     (*source)->seek(evring::Position::oldest());
//     evring::SourceItem item;
//     for (;;) {
//         switch ((*source)->next(item, evring::PayloadRead::Copy)) {
//         case evring::SourceStep::Event:    use(item.event); break;
//         case evring::SourceStep::Gap:      note(item.gap); break;       // exact range, reason
//         case evring::SourceStep::Notice:   log(item.notice); break;
//         case evring::SourceStep::NotReady: (*source)->wait(100ms); break; // the doorbell
//         case evring::SourceStep::End:      return;
//         case evring::SourceStep::Failed:   fail((*source)->error().message());
//         }
//     }
//
// follow.hpp wraps exactly this loop with filters, positions, a stop flag and
// re-opening by name; commands, exporters, relays and bindings use it.
//
// Contract:
// - Events come in sequence order. Every sequence number between two events
//   that was not handed out is accounted for by exactly one Gap with its
//   reason (GapReason, below): lapped (FellBehind), Abandoned, NeverCommitted
//   and WriterGone holes, LostToDamage, RingReplaced. A gap's range is exact;
//   a loss whose range is not known (a damaged recording losing "seqno N and
//   after") comes as a Notice instead.
// - Notice: something a person should be told that is not a gap (the writer
//   exited, a recording continues in its next file, damage that lost no
//   known sequence number). Text only; it names the file.
// - NotReady: nothing to read now (a live ring caught up). wait(timeout)
//   sleeps until something may be ready: the ring's doorbell (doorbell.hpp),
//   never a spin. Sources that cannot block return at once.
// - End: nothing more will come (a snapshot or recording read to its end, a
//   ring whose writer exited, read to its newest event). Repeats.
// - Failed: the source cannot go on (a ring file truncated under the reader:
//   reads run under the SIGBUS guard, sigbus_guard.hpp; an I/O error);
//   error() says why, naming the file. Repeats.
// - Payloads: with PayloadRead::Copy an event comes with its payload bytes
//   (valid until the next call on the source) and a PayloadState: Ok, Expired
//   (overwritten before it could be read; no bytes), Invalid (the descriptor's
//   size cannot fit the ring; no bytes). With PayloadRead::None the state is
//   NotRead and descriptors are all that is touched. Ring sources also expose
//   ring() for zero-copy peeks (payload.hpp: peek, then payload_valid).
// - counters() count what next() and next_batch() handed out; for a ring,
//   lost, gaps and abandoned equal Iterator::total_lost(), the number of Gap
//   results and Iterator::total_abandoned() over the same reads.
//
// Thread safety: a source is used by one thread at a time. Sources over one
// ring in any number of threads or processes are independent.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/source/position.hpp"

namespace evring {

class FlowFilter;
class MappedRing;
class WaitArm;
namespace detail {
class Healer;
}

// Why sequence numbers were not seen: GapReason, in format.hpp (recordings
// and streams store it too). describe() gives "the recorder fell behind the
// writer (lapped)" and so on; unknown values (a newer writer's) read "an
// unknown reason".
std::string_view describe(GapReason reason) noexcept;

enum class SourceKind : std::uint8_t { Ring, Snapshot, Recording, Stream, RingSet };

// Words for a person: "ring file", "snapshot", "recording", "stream", "ring set".
std::string_view describe(SourceKind kind) noexcept;
// The token: "ring", "snapshot", "recording", "stream", "ring-set" (`info
// --json`'s "kind", Python's Reader.kind).
const char* to_string(SourceKind kind) noexcept;

// What a source is. Fixed once opened.
struct SourceIdentity {
    SourceKind kind = SourceKind::Ring;
    std::string location;  // as given to open_source
    std::string path;      // the file (or URL) it resolved to
    std::uint16_t content_type = 0;
    std::array<std::uint8_t, 32> schema_hash{};
    RingSize ring_size{};  // of the ring (for a recording or stream: the ring it came from)
    // The ring instance: equal for every source over the same ring as long as
    // its file exists (also across processes and restarts), different for a
    // ring re-created under the same name. Rings: a digest of the file's
    // device, inode and birth time; snapshots: a digest of their header and
    // newest event; recordings: the series id (the same in every rotated file).
    std::uint64_t instance = 0;
    // The file's device and inode (0, 0 when it is not a file).
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    // Events and gaps carry ring set member indexes (SourceEvent::member): a
    // ring set, or a recording of one.
    bool members = false;
};

enum class SourceStep : std::uint8_t { Event, Gap, Notice, NotReady, End, Failed };

enum class PayloadRead : std::uint8_t { None, Copy };

enum class PayloadState : std::uint8_t {
    NotRead,  // PayloadRead::None
    Ok,       // `payload` holds the bytes, read intact
    Expired,  // overwritten before (or while) it was read
    Invalid,  // the descriptor's payload_size cannot fit the ring
};

struct SourceEvent {
    EventDescriptor descriptor{};
    PayloadState payload_state = PayloadState::NotRead;
    std::span<const std::byte> payload;  // Ok only; valid until the next call
    // The ring set member the event came from (ring_set_source.hpp); 0 for
    // every other source.
    std::uint32_t member = 0;
};

struct SourceGap {
    std::uint64_t first_seqno = 0;
    std::uint64_t count = 0;  // at least 1
    GapReason reason = GapReason::FellBehind;
    // The source's own words when it has more to say (a recording's damage
    // report naming the file, offset and reason); empty otherwise. Valid until
    // the next call.
    std::string_view detail;
    // The ring set member whose sequence numbers these are; 0 otherwise.
    std::uint32_t member = 0;
    std::uint64_t last_seqno() const noexcept { return first_seqno + (count - 1); }
};

struct SourceItem {
    SourceEvent event;        // Event
    SourceGap gap;            // Gap
    std::string_view notice;  // Notice; valid until the next call
};

struct SourceCounters {
    std::uint64_t events = 0;           // Event results
    std::uint64_t lost = 0;             // seqnos lost to lapping: FellBehind (and v1 Unrecorded) gaps
    std::uint64_t gaps = 0;             // how many such gaps
    std::uint64_t abandoned = 0;        // seqnos of Abandoned gaps
    std::uint64_t never_committed = 0;  // seqnos of NeverCommitted and WriterGone gaps
    std::uint64_t damaged = 0;          // seqnos of LostToDamage gaps
    std::uint64_t replaced = 0;         // seqnos of RingReplaced gaps
    std::uint64_t damage_reports = 0;   // damaged parts of the input (recordings)
    std::uint64_t records_lost_to_damage = 0;  // records known lost in them (a lower bound)
    // Input that is not this source's, passed over: a stream's messages that
    // are not evring's or do not decode (a Notice reports the first).
    std::uint64_t foreign = 0;
    // Payloads handed out (Ok, Expired or Invalid): with PayloadRead::Copy,
    // and by read_payload(). A ring source copies each one.
    std::uint64_t payloads = 0;
    // Events handed out after one stamped later: a source merged by time (a
    // ring set) that had to let an event through out of time order. Zero
    // for every other source.
    std::uint64_t late = 0;
    // Events handed out from a recording in place of a lapped (FellBehind)
    // gap: a healing source's (source_open.hpp, HealOptions). Included in
    // `events`; the sequence numbers they fill are not in `lost`.
    std::uint64_t healed = 0;
    void count_gap(const SourceGap& gap) noexcept;
};

// What next_batch did.
struct Batch {
    std::size_t events = 0;       // descriptors written to the front of `out`
    std::uint64_t gaps = 0;       // gaps passed over while filling (every reason)
    std::uint64_t skipped = 0;    // sequence numbers in them
    // Why it stopped: Event when `out` is full; NotReady, End or Failed as for
    // next(); Notice when a notice is waiting (the next call to next() returns it).
    SourceStep stopped = SourceStep::Event;
};

class EventSource {
public:
    EventSource();  // out of line: the healer is an incomplete type here
    EventSource(const EventSource&) = delete;
    EventSource& operator=(const EventSource&) = delete;
    virtual ~EventSource();

    // The next item (see the contract).
    SourceStep next(SourceItem& item, PayloadRead payload = PayloadRead::None) {
        if (pending_ || healing_) return next_held(item, payload);
        const SourceStep step = read(item, payload);
        if (step == SourceStep::Event) {
            ++counters_.events;
            if (item.event.payload_state != PayloadState::NotRead) ++counters_.payloads;
        } else if (step == SourceStep::Gap) {
            if (healer_) return heal(item, payload);
            counters_.count_gap(item.gap);
        }
        return step;
    }
    // The payload of the event the last next() returned, read with
    // PayloadRead::None: the follow loop reads descriptors, and payloads
    // only of the events its filters keep (event_predicate.hpp). Sets the
    // event's payload_state and payload as next() with Copy would have (a
    // ring's payload may since have been overwritten: Expired). Returns
    // Event, or Failed as next() would. An event that is not the last one
    // read comes back Expired.
    SourceStep read_payload(SourceEvent& event) {
        const SourceStep step = healer_ ? load_payload_healed(event) : load_payload(event);
        if (step == SourceStep::Event && event.payload_state != PayloadState::NotRead) ++counters_.payloads;
        return step;
    }
    // Descriptors only, many at a time, without a virtual call per event:
    // fills `out` with the next events, passing over gaps (counted in the
    // result and in counters()), and stops early at anything else.
    Batch next_batch(std::span<EventDescriptor> out);

    // Positions the source (position.hpp). Returns a notice for the user when
    // the start moved ("seqno 5 is no longer in the ring; starting at the
    // oldest, 900"), empty otherwise; an error when the position cannot be
    // reached (past the end of a snapshot or recording). Call before reading.
    virtual Result<std::string> seek(const Position& start) = 0;
    // A stop position as a sequence number or time bound.
    virtual Result<StopAt> resolve_stop(const Position& stop);

    // Sleeps until something may be ready, at most `timeout` (see the contract).
    virtual void wait(std::chrono::nanoseconds timeout) = 0;
    // What a wait set (wait_set.hpp) sleeps on until next() may have
    // something: ready when a notice is held, else prepare_wait's answer.
    void arm_wait(WaitArm& arm);
    // True while a writer is known to be alive (a live ring); the source may
    // then still produce events after NotReady.
    virtual bool live() const = 0;
    // "Now" for relative times: the wall clock for a live ring, the newest
    // event's time otherwise.
    virtual Result<std::uint64_t> now_nanos() = 0;
    // The sequence number the next event should have (0 when not known).
    virtual std::uint64_t next_seqno() const = 0;

    const SourceIdentity& identity() const noexcept { return identity_; }
    SourceKind kind() const noexcept { return identity_.kind; }
    // The ring behind a ring or snapshot source, for zero-copy payload peeks
    // (payload.hpp); nullptr for other sources.
    virtual const MappedRing* ring() const { return nullptr; }
    // The schema blob the source carries: a ring's or snapshot's embedded
    // schema, a recording's schema block; empty when it has none. Opaque,
    // unverified bytes: schema_resolve.hpp turns them into a trusted Schema.
    virtual std::span<const std::byte> schema() const { return {}; }
    // Why the source ended, in words: "end of the snapshot", "end of the
    // truncated recording", ...
    virtual std::string end_text() const;
    // True once the source met damaged input (everything readable is still
    // handed out; the notices say what was lost).
    virtual bool damaged() const { return counters_.damage_reports > 0; }
    // The failure after SourceStep::Failed.
    const Error& error() const noexcept { return error_; }

    // A hint that only events `filter` would keep are wanted: a remote source
    // may filter on its server. Callers still filter; the default ignores it.
    virtual void narrow(const FlowFilter& filter);

    const SourceCounters& counters() const noexcept { return counters_; }

    // Healing (source_open.hpp's HealOptions, lib/source/healer.hpp): from
    // now on, a FellBehind gap is read from a recording of this source's
    // instance, where it holds the events; what it lacks stays a gap. Set by
    // open_source; one healer per source.
    void heal_with(std::unique_ptr<detail::Healer> healer);
    bool heals() const noexcept { return healer_ != nullptr; }

protected:
    virtual SourceStep read(SourceItem& item, PayloadRead payload) = 0;
    // read_payload(): the default says Expired (nothing kept to read).
    virtual SourceStep load_payload(SourceEvent& event);
    // The batch loop; the default calls read() per event. Implementations
    // count what they hand out in counters_.
    virtual Batch read_batch(std::span<EventDescriptor> out);
    // arm_wait's answer (wait_set.hpp); the default looks at a live source
    // every 100 ms and finds any other ready.
    virtual void prepare_wait(WaitArm& arm);
    // Keeps a Notice for the next call to next() (batch readers stop at one).
    void hold(const SourceItem& item);
    SourceStep fail(Error error);
    // A seek abandons the gap a healer is handing out: what comes next is
    // the new position's. Healing sources call it first in seek().
    void seeking() noexcept;
    // While a healer hands out a gap, what comes next is in the recording,
    // which grows as its recorder flushes, with nothing to wake a sleeper: a
    // live source's own wake-up (its doorbell) would return at once, the ring
    // being ahead. Healing sources call it first in wait(): it sleeps at most
    // `timeout` and kHealPoll, and says whether it did (wait() then returns).
    bool wait_for_recording(std::chrono::nanoseconds timeout);
    static constexpr std::chrono::milliseconds kHealPoll{10};

    SourceIdentity identity_;
    SourceCounters counters_;
    Error error_{0, {}};

private:
    SourceStep take_pending(SourceItem& item);
    // A held notice, or the healer's turn (event_source.cpp).
    SourceStep next_held(SourceItem& item, PayloadRead payload);
    // A gap read() returned while a healer is set: healed or handed out.
    SourceStep heal(SourceItem& item, PayloadRead payload);
    SourceStep load_payload_healed(SourceEvent& event);
    Batch batch_loop(std::span<EventDescriptor> out, bool through_next);

    std::optional<std::string> pending_;
    std::string held_text_;
    std::unique_ptr<detail::Healer> healer_;
    bool healing_ = false;  // the healer hands out the gap it took
};

}  // namespace evring
