// lib/source/ring_source.hpp — a ring file or a snapshot as an event source.
//
// The EventSource (event_source.hpp) over a mapped ring: a live ring file
// opened with RingReader, or a snapshot loaded into memory. open_source
// (source_open.hpp) makes these; the accessors here are for callers that
// need what only a ring has (the writer's pids, a snapshot's sizes).
//
// Contract, beyond event_source.hpp:
// - Every read of the mapping (descriptors, payloads, the header's control
//   words, the doorbell's re-check) runs under the SIGBUS guard
//   (sigbus_guard.hpp, whose handler open() installs): a ring file truncated
//   or replaced under the reader makes next() return Failed with an error
//   naming the file and the offset, never a signal.
// - Live ring: after NotReady, wait() sleeps on the ring's doorbell
//   (doorbell.hpp; timed polling for rings whose writers do not ring it).
//   The writer's exit is noticed on the NotReady path (its pidfd, else the
//   ring's lock at most every 100 ms) and reported once as a Notice; from then
//   on the ring is read to its newest reservation.
// - A ring nobody writes (a snapshot, a ring whose writer exited or was gone
//   when it was opened): a sequence number that is not committed is a hole
//   nobody will fill. A run of them comes as one Gap: WriterGone when this
//   source saw a writer alive, NeverCommitted otherwise. The run is bounded
//   by the ring's capacity, so a damaged last_seqno cannot make it loop.
//   The oldest seqnos a snapshot says a writer lapped while it was copied
//   come as one FellBehind Gap whose detail says so.
// - Positions: --from SEQNO below the oldest starts at the oldest with a
//   notice; past the newest event of a ring nobody writes is an error. Times
//   are found by binary search on record_epoch_nanos that steps over holes
//   and then moves back while any of the 256 events before its answer is at
//   or after the target (several writers stamp events a little out of
//   sequence order; the real execution rings stay within that bound).
//
// Thread safety: as event_source.hpp (one thread at a time).
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>

#include "evring/source/event_source.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"

namespace evring {

class RingReader;
struct LoadedSnapshot;

class RingSource final : public EventSource {
public:
    // `location` is what the user gave (kept in identity().location).
    static Result<std::unique_ptr<RingSource>> open_live(RingReader reader, std::string location);
    static Result<std::unique_ptr<RingSource>> open_snapshot(LoadedSnapshot snapshot, std::string location);
    ~RingSource() override;

    Result<std::string> seek(const Position& start) override;
    void wait(std::chrono::nanoseconds timeout) override;
    bool live() const override { return live_; }
    Result<std::uint64_t> now_nanos() override;
    std::uint64_t next_seqno() const override { return it_->next_seqno(); }
    const MappedRing* ring() const override;
    // The schema blob embedded in the ring's header section (schema_blob.hpp),
    // copied at open; empty when the ring has none. Not verified: see
    // schema_embed.hpp and schema_resolve.hpp.
    std::span<const std::byte> schema() const override;
    std::string end_text() const override;

    // The live ring's reader (writer pids, liveness); nullptr for a snapshot.
    const RingReader* reader() const noexcept;
    // The snapshot's sizes; nullptr for a live ring.
    const LoadedSnapshot* snapshot() const noexcept;
    // A member of a healing ring set: a seqno start the ring has overwritten
    // stays where it was asked, as on a healing ring, so that the set's
    // healer reads the events up to the oldest from the set's recording.
    void keep_overwritten_starts(bool keep) noexcept { keep_overwritten_starts_ = keep; }
    // The iterator's abandon bound (iterator.hpp).
    void set_abandon_after(std::chrono::nanoseconds bound) noexcept { it_->set_abandon_after(bound); }

    // A run of descriptors for a merge that holds several events of each of
    // its sources (ring_set_source.hpp). Fills `out` from the front with the
    // next events, as next(item, PayloadRead::None) would hand them out one
    // by one, sets `filled`, and counts them (and a gap) in counters() as
    // handed out. Returns Event when `out` is full, or when at least one
    // event was read and the ring has nothing more ready now (no liveness
    // check is paid then); otherwise the item that stopped the run, with
    // `item` filled as next() fills it: a Gap or Notice comes after the
    // `filled` events, and Failed after them too. One SIGBUS guard per run.
    // Not to be mixed with next_batch (whose held Notice it would pass over).
    SourceStep read_run(std::span<EventDescriptor> out, std::size_t& filled, SourceItem& item);
    // The payload of an event read_run handed out, read now as next() with
    // PayloadRead::Copy reads it: sets payload and payload_state (Expired when
    // the writer overwrote it meanwhile). Event, or Failed (the file was cut
    // short under the reader; error() says where). The bytes stay valid until
    // the next call on this source that reads a payload.
    SourceStep fill_payload(SourceEvent& event);

    // The first sequence number whose event is at or after `target_nanos`
    // (newest + 1 when there is none); see the contract. Guarded.
    Result<std::uint64_t> seek_time(std::uint64_t target_nanos);

    struct State;  // lib/

protected:
    SourceStep read(SourceItem& item, PayloadRead payload) override;
    SourceStep load_payload(SourceEvent& event) override;
    Batch read_batch(std::span<EventDescriptor> out) override;
    void prepare_wait(WaitArm& arm) override;  // ring_source_wait.cpp

private:
    explicit RingSource(std::unique_ptr<State> state);
    void start();
    void copy_schema_blob();
    SourceStep copy_payload_of(SourceEvent& event);
    SourceStep with_payload(SourceEvent& event, PayloadResult copied);
    SourceStep not_ready(SourceItem& item);
    SourceStep hole_or_end(SourceItem& item);
    bool writer_gone();
    // A snapshot's seqnos lapped while it was copied (0: none; ring_extension.hpp).
    std::uint64_t snapshot_lapped() const;

    std::unique_ptr<State> state_;
    Iterator* it_ = nullptr;  // lives in state_
    bool live_ = false;
    bool keep_overwritten_starts_ = false;
    bool writer_seen_ = false;
    bool ended_ = false;
    bool writer_left_ = false;  // writer_gone() said so
    std::chrono::steady_clock::time_point next_writer_check_{};
    std::string notice_;
};

}  // namespace evring
