// RingSource: a live ring or a snapshot as an event source (ring_source.hpp).
// Positions are resolved in ring_source_seek.cpp.
#include "source/ring_source.hpp"

#include <poll.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "evring/clock.hpp"
#include "evring/ring/doorbell.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_reader.hpp"
#include "ring/schema_blob.hpp"
#include "ring/sigbus_guard.hpp"
#include "ring/snapshot.hpp"
#include "source/ring_source_state.hpp"
#include "source/source_identity.hpp"

namespace evring {

RingSource::RingSource(std::unique_ptr<State> state) : state_(std::move(state)) {}
RingSource::~RingSource() = default;

Result<std::unique_ptr<RingSource>> RingSource::open_live(RingReader reader, std::string location) {
    if (auto s = install_sigbus_handler(); !s) return std::move(s).error();
    auto state = std::make_unique<State>();
    state->reader = std::make_shared<RingReader>(std::move(reader));
    state->ring = &state->reader->ring();
    std::unique_ptr<RingSource> source(new RingSource(std::move(state)));
    source->identity_.kind = SourceKind::Ring;
    source->identity_.location = std::move(location);
    source->identity_.path = source->state_->reader->path();
    // The file the reader opened, not the one at the path by now: a writer
    // re-creating the ring in between would give this source the new ring's
    // identity, and a follower of the name would never move to it.
    detail::file_identity(source->state_->reader->fd(), source->identity_);
    source->start();
    // The doorbell maps the header section on its own; attached now, while
    // the file was just checked whole (attaching reads it outside any guard).
    source->state_->doorbell.emplace(Doorbell::attach(*source->state_->ring));
    source->live_ = source->state_->reader->writer_alive();
    source->writer_seen_ = source->live_;
    return source;
}

Result<std::unique_ptr<RingSource>> RingSource::open_snapshot(LoadedSnapshot snapshot, std::string location) {
    if (auto s = install_sigbus_handler(); !s) return std::move(s).error();
    auto state = std::make_unique<State>();
    state->snapshot.emplace(std::move(snapshot));
    state->ring = &state->snapshot->ring;
    std::unique_ptr<RingSource> source(new RingSource(std::move(state)));
    source->identity_.kind = SourceKind::Snapshot;
    source->identity_.location = std::move(location);
    source->identity_.path = source->state_->ring->path();
    detail::file_identity(source->identity_.path, source->identity_);
    source->start();
    // A snapshot is the same events wherever its file is: identified by its
    // contents (the header and its newest event), not by the file.
    const RingHeader& h = source->state_->ring->header();
    std::uint64_t digest = detail::mix64(h.content_type, h.size.descriptor_capacity);
    for (std::uint8_t b : h.schema_hash) digest = detail::mix64(digest, b);
    digest = detail::mix64(digest, h.control.last_seqno);
    EventDescriptor newest{};
    if (source->it_->read_descriptor(source->it_->newest_seqno(), newest))
        digest = detail::mix64(digest, newest.record_epoch_nanos);
    source->identity_.instance = digest;
    return source;
}

void RingSource::start() {
    detail::ring_identity(state_->ring->header(), identity_);
    state_->it.emplace(*state_->ring);
    it_ = &*state_->it;
    // Callers of an event source wait (EventSource::wait) when nothing is
    // ready, so every poll may look for abandoned reservations.
    it_->set_poll_style(PollStyle::Sleeping);
    copy_schema_blob();
}

// The embedded schema is written once before the ring's magic (schema_blob.hpp),
// so one copy at open is the ring's for good. Read under the guard: the file
// may be cut short under us like any other part of the mapping; then the
// source has no schema and its next read reports the truncation.
void RingSource::copy_schema_blob() {
    std::span<const std::byte> found;
    if (!state_->guard([&] { found = embedded_schema_blob(state_->ring->header_section()); }, "the embedded schema"))
        return;
    if (found.empty()) return;  // no schema: nothing to copy (and no memcpy from null)
    state_->schema_blob.resize(found.size());  // bounded by the 2 MiB header section
    if (!state_->guard([&] { std::memcpy(state_->schema_blob.data(), found.data(), found.size()); },
                       "the embedded schema"))
        state_->schema_blob.clear();
}

std::span<const std::byte> RingSource::schema() const { return state_->schema_blob; }

const MappedRing* RingSource::ring() const { return state_->ring; }
const RingReader* RingSource::reader() const noexcept { return state_->reader ? &*state_->reader : nullptr; }
const LoadedSnapshot* RingSource::snapshot() const noexcept {
    return state_->snapshot ? &*state_->snapshot : nullptr;
}

std::string RingSource::end_text() const {
    return state_->snapshot ? "end of the snapshot" : "end of the ring";
}

SourceStep RingSource::read(SourceItem& item, PayloadRead payload) {
    NextResult result = NextResult::NotReady;
    SourceEvent& event = item.event;
    // The descriptor and, when asked for, its payload under one guard: a
    // guard is a sigsetjmp, and readers that copy (record, watch) pay it per
    // event. A payload larger than the scratch buffer is copied after the
    // buffer grows (copy_payload_of), outside: nothing may allocate inside.
    const char* doing = "reading a descriptor";
    std::optional<PayloadResult> copied;
    if (!state_->guard(
            [&] {
                result = it_->try_next(event.descriptor);
                if (result != NextResult::Success || payload != PayloadRead::Copy) return;
                const EventDescriptor& d = event.descriptor;
                if (!payload_in_bounds(*state_->ring, d)) {
                    copied = PayloadResult::Invalid;
                } else if (d.payload_size <= state_->scratch.size()) {
                    doing = "copying a payload";
                    copied = copy_payload(*state_->ring, d, state_->scratch.data(), d.payload_size);
                }
            },
            doing))
        return fail(std::move(state_->fault));
    switch (result) {
    case NextResult::Success:
        if (copied) return with_payload(event, *copied);
        if (payload == PayloadRead::Copy) return copy_payload_of(item.event);
        event.payload_state = PayloadState::NotRead;
        event.payload = {};
        return SourceStep::Event;
    case NextResult::Gap: {
        const std::uint64_t lost = it_->last_gap_lost();
        item.gap = SourceGap{it_->next_seqno() - lost, lost, GapReason::FellBehind, {}};
        return SourceStep::Gap;
    }
    case NextResult::Abandoned:
        item.gap = SourceGap{it_->last_abandoned_seqno(), 1, GapReason::Abandoned, {}};
        return SourceStep::Gap;
    case NextResult::NotReady: break;
    }
    return not_ready(item);
}

SourceStep RingSource::fill_payload(SourceEvent& event) { return copy_payload_of(event); }

// By the descriptor alone: the payload is in the ring until overwritten
// (Expired then), whenever it is asked for.
SourceStep RingSource::load_payload(SourceEvent& event) { return copy_payload_of(event); }

SourceStep RingSource::copy_payload_of(SourceEvent& event) {
    const EventDescriptor& d = event.descriptor;
    if (!payload_in_bounds(*state_->ring, d)) return with_payload(event, PayloadResult::Invalid);
    // Sized outside the guard: nothing may allocate inside one.
    if (state_->scratch.size() < d.payload_size) state_->scratch.resize(d.payload_size);
    PayloadResult copied = PayloadResult::Invalid;
    if (!state_->guard([&] { copied = copy_payload(*state_->ring, d, state_->scratch.data(), d.payload_size); },
                       "copying a payload"))
        return fail(std::move(state_->fault));
    return with_payload(event, copied);
}

// What a copy into the scratch buffer gave, as the event's payload.
SourceStep RingSource::with_payload(SourceEvent& event, PayloadResult copied) {
    event.payload = {};
    switch (copied) {
    case PayloadResult::Ok:
        event.payload_state = PayloadState::Ok;
        event.payload = {state_->scratch.data(), event.descriptor.payload_size};
        break;
    case PayloadResult::Expired: event.payload_state = PayloadState::Expired; break;
    case PayloadResult::Invalid: event.payload_state = PayloadState::Invalid; break;
    }
    return SourceStep::Event;
}

SourceStep RingSource::not_ready(SourceItem& item) {
    if (live_) {
        if (!writer_gone()) return SourceStep::NotReady;
        live_ = false;  // read what is left, then end
        notice_ = fmt::format("{} '{}': the writer exited", describe(kind()), identity_.path);
        item.notice = notice_;
        return SourceStep::Notice;
    }
    return hole_or_end(item);
}

// A ring nobody writes: the expected sequence number is a hole nobody will
// fill, or the end.
SourceStep RingSource::hole_or_end(SourceItem& item) {
    const std::uint64_t first = it_->next_seqno();
    const std::uint64_t capacity = state_->ring->layout().size.descriptor_capacity;
    std::uint64_t newest = 0, run = 0;
    EventDescriptor probe{};
    const bool whole = state_->guard(
        [&] {
            newest = it_->newest_seqno();
            // Bounded by the capacity: only that many slots can hold a hole.
            while (first + run <= newest && run < capacity && !it_->read_descriptor(first + run, probe)) ++run;
        },
        "looking for the next committed event");
    if (!whole) return fail(std::move(state_->fault));
    if (first > newest) {
        ended_ = true;
        return SourceStep::End;
    }
    if (run == 0) return SourceStep::NotReady;  // committed meanwhile: read it next time
    it_->seek(first + run);
    item.gap = SourceGap{first, run, writer_seen_ ? GapReason::WriterGone : GapReason::NeverCommitted, {}};
    // A snapshot says which of its oldest seqnos a writer lapped while it
    // was copied (ring_extension.hpp): those are lost to lapping, not holes.
    if (const std::uint64_t lapped = snapshot_lapped(); first <= lapped) {
        item.gap.count = std::min(run, lapped - first + 1);
        it_->seek(first + item.gap.count);
        item.gap.reason = GapReason::FellBehind;
        notice_ = fmt::format(
            "{} {} overwritten by the writer while snapshot '{}' was taken (lapped); skipping {}",
            item.gap.count == 1 ? fmt::format("seqno {}", first)
                                : fmt::format("seqno {}..{}", first, item.gap.last_seqno()),
            item.gap.count == 1 ? "was" : "were", identity_.path,
            item.gap.count == 1 ? "it" : "them");
        item.gap.detail = notice_;
    }
    return SourceStep::Gap;
}

std::uint64_t RingSource::snapshot_lapped() const {
    if (!state_->snapshot) return 0;
    const std::span<const std::byte> section = state_->ring->header_section();
    const auto* extension =
        reinterpret_cast<const RingExtension*>(section.data() + kRingExtensionOffset);
    return has_ring_extension(*extension) ? extension->snapshot_lapped
                                          : 0;  // private memory: no guard needed
}

bool RingSource::writer_gone() {
    // Once seen gone, gone: a wait set's look (prepare_wait) may be the one
    // that saw it, and the next read must then report it, not wait out the
    // probe's interval.
    if (writer_left_) return true;
    const RingReader& reader = *state_->reader;
    if (const int pidfd = reader.writer_exit_fd(); pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        return writer_left_ = ::poll(&p, 1, 0) > 0;
    }
    // The lock probe costs a few system calls: at most every 100 ms.
    const auto now = std::chrono::steady_clock::now();
    if (now < next_writer_check_) return false;
    next_writer_check_ = now + std::chrono::milliseconds(100);
    return writer_left_ = !reader.writer_alive();
}

void RingSource::wait(std::chrono::nanoseconds timeout) {
    if (wait_for_recording(timeout)) return;
    if (!live_ || !state_->doorbell) return;
    const std::uint64_t next = it_->next_seqno();
    // The doorbell re-checks the expected slot before sleeping: a read of the mapping.
    if (!state_->guard([&] { (void)state_->doorbell->wait(next, timeout); }, "waiting on the doorbell")) {
        // Reported by the next read, which faults the same way.
        live_ = false;
    }
}

Result<std::uint64_t> RingSource::now_nanos() {
    if (live_) return wall_clock_nanos();
    std::uint64_t nanos = 0;
    bool found = false;
    if (!state_->guard(
            [&] {
                EventDescriptor newest{};
                const std::uint64_t last = it_->newest_seqno();
                for (std::uint64_t s = last; s >= 1 && s + 64 > last && !found; --s)
                    if (it_->read_descriptor(s, newest)) {
                        nanos = newest.record_epoch_nanos;
                        found = true;
                    }
            },
            "finding the newest event"))
        return std::move(state_->fault);
    return found ? nanos : wall_clock_nanos();
}

}  // namespace evring
